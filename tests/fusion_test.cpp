// The fusion pass: HLO text in, run, verify, check structure and numbers, limits and must-not-change cases.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "hlo/ir/attributes.h"
#include "hlo/passes/fusion.h"
#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;

using namespace jitx::hlo::testing;

// === fusion ===================================================================================================

TEST_CASE("fusion: an elementwise chain with a broadcast becomes one kLoop fusion", "[fusion]") {
  auto r = run_pass<Fusion>(R"(HloModule loop
ENTRY %main (x: f32[4,8], b: f32[8]) -> f32[4,8] {
  %x = f32[4,8] parameter(0)
  %b = f32[8] parameter(1)
  %bb = f32[4,8] broadcast(%b), broadcast_dimensions={1}
  %a = f32[4,8] add(%x, %bb)
  %e = f32[4,8] exponential(%a)
  %t = f32[8,4] transpose(%e), permutation={1,0}
  ROOT %n = f32[8,4] negate(%t)
}
)");
  CHECK(r.changed);
  check_lines(r.text, R"(
    %fused_computation
    broadcast(
    add(
    exponential(
    transpose(
    ROOT
    negate(
    ENTRY %main
    ROOT %fusion
    fusion(%x, %b), kind=kLoop, calls=%fused_computation)");
  CHECK(fusions(*r.module).size() == 1);
  CHECK(r.module->entry->instructions.size() == 3);  // x, b, the fusion
}

TEST_CASE("fusion: a reduce takes the elementwise work feeding it (kInput)", "[fusion]") {
  auto r = run_pass<Fusion>(R"(HloModule input
ENTRY %main (x: f32[6,5], y: f32[6,5]) -> f32[5] {
  %x = f32[6,5] parameter(0)
  %y = f32[6,5] parameter(1)
  %m = f32[6,5] multiply(%x, %y)
  %z = f32[] constant(0)
  ROOT %r = f32[5] reduce(%m, %z), dimensions={0}, reducer=add
}
)");
  CHECK(r.changed);
  check_lines(r.text, R"(
    multiply(
    ROOT %reduce
    ROOT %fusion
    kind=kInput)");
}

TEST_CASE("fusion: sibling reductions over one input become a multi-output kInput fusion", "[fusion]") {
  auto r = run_pass<Fusion>(R"(HloModule siblings
ENTRY %main (x: f32[4,16]) -> (f32[4], f32[4]) {
  %x = f32[4,16] parameter(0)
  %z = f32[] constant(0)
  %s = f32[4] reduce(%x, %z), dimensions={1}, reducer=add
  %sq = f32[4,16] multiply(%x, %x)
  %s2 = f32[4] reduce(%sq, %z), dimensions={1}, reducer=add
  ROOT %t = (f32[4], f32[4]) tuple(%s, %s2)
}
)");
  auto fs = fusions(*r.module);
  REQUIRE(fs.size() == 1);
  CHECK(fusion_kind_of(*fs[0]) == FusionKind::kInput);
  CHECK(fs[0]->shape.is_tuple);
  CHECK(fused_count(*fs[0], Opcode::kReduce) == 2);
  CHECK(fs[0]->operands.size() == 1);  // x is read once
  CHECK(count_of(r.text, "get-tuple-element(%fusion") == 2);
  CHECK(count_of(r.text, "kind=kInput") == 1);
}

TEST_CASE("fusion: a dot takes its bias and activation epilogue (kOutput)", "[fusion]") {
  auto r = run_pass<Fusion>(R"(HloModule output
ENTRY %main (x: f32[4,3], w: f32[3,5], b: f32[5]) -> f32[4,5] {
  %x = f32[4,3] parameter(0)
  %w = f32[3,5] parameter(1)
  %b = f32[5] parameter(2)
  %d = f32[4,5] dot(%x, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %bb = f32[4,5] broadcast(%b), broadcast_dimensions={1}
  %a = f32[4,5] add(%d, %bb)
  %th = f32[4,5] tanh(%a)
  %h = f32[4,5] multiply(%a, %th)
  ROOT %n = f32[4,5] negate(%h)
}
)");
  auto fs = fusions(*r.module);
  REQUIRE(fs.size() == 1);
  CHECK(fusion_kind_of(*fs[0]) == FusionKind::kOutput);
  CHECK(fused_count(*fs[0], Opcode::kDot) == 1);
  CHECK(fused_count(*fs[0], Opcode::kBroadcastInDim) == 1);
  CHECK(fs[0]->called[0]->root->opcode == Opcode::kNegate);
  CHECK(fs[0] == r.module->entry->root);
}

TEST_CASE("fusion: an epilogue value read elsewhere ends the dot's output fusion", "[fusion]") {
  // %a is also returned: the dot's output fusion may only end at %a (one output), and the rest is a loop fusion.
  auto r = run_pass<Fusion>(R"(HloModule output_split
ENTRY %main (x: f32[4,3], w: f32[3,5], b: f32[4,5]) -> (f32[4,5], f32[4,5]) {
  %x = f32[4,3] parameter(0)
  %w = f32[3,5] parameter(1)
  %b = f32[4,5] parameter(2)
  %d = f32[4,5] dot(%x, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %a = f32[4,5] add(%d, %b)
  %e = f32[4,5] exponential(%a)
  %n = f32[4,5] negate(%e)
  ROOT %t = (f32[4,5], f32[4,5]) tuple(%a, %n)
}
)");
  auto fs = fusions(*r.module);
  REQUIRE(fs.size() == 2);
  CHECK(fusion_kind_of(*fs[0]) == FusionKind::kOutput);
  CHECK(fs[0]->called[0]->root->opcode == Opcode::kAdd);
  CHECK(fusion_kind_of(*fs[1]) == FusionKind::kLoop);
}

TEST_CASE("fusion: layer norm becomes one kRow fusion", "[fusion]") {
  auto r = run_pass<Fusion>(R"(HloModule layer_norm
ENTRY %main (h: f32[4,8]) -> f32[4,8] {
  %h = f32[4,8] parameter(0)
  %z = f32[] constant(0)
  %n = f32[] constant(8)
  %s = f32[4] reduce(%h, %z), dimensions={1}, reducer=add
  %nb = f32[4] broadcast(%n), broadcast_dimensions={}
  %mu = f32[4] divide(%s, %nb)
  %mu1 = f32[4,1] reshape(%mu)
  %mub = f32[4,8] broadcast(%mu1), broadcast_dimensions={0,1}
  %d = f32[4,8] subtract(%h, %mub)
  %sq = f32[4,8] multiply(%d, %d)
  %s2 = f32[4] reduce(%sq, %z), dimensions={1}, reducer=add
  %var = f32[4] divide(%s2, %nb)
  %eps = f32[] constant(1e-05)
  %epsb = f32[4] broadcast(%eps), broadcast_dimensions={}
  %ve = f32[4] add(%var, %epsb)
  %rs = f32[4] rsqrt(%ve)
  %rsb = f32[4,8] broadcast(%rs), broadcast_dimensions={0}
  ROOT %out = f32[4,8] multiply(%d, %rsb)
}
)");
  auto fs = fusions(*r.module);
  REQUIRE(fs.size() == 1);
  CHECK(fusion_kind_of(*fs[0]) == FusionKind::kRow);
  CHECK(fused_count(*fs[0], Opcode::kReduce) == 2);
  CHECK(fused_count(*fs[0], Opcode::kRsqrt) == 1);
  CHECK(fs[0]->operands.size() == 1);  // h is read once per row
  CHECK(r.module->entry->instructions.size() == 2);
}

TEST_CASE("fusion: a costly producer with several consumers is not duplicated", "[fusion]") {
  // %e (exp of tanh) feeds two reductions along different dimensions and a returned value: it stays one kernel
  // whose result is read, never recomputed inside each consumer.
  auto r = run_pass<Fusion>(R"(HloModule limits
ENTRY %main (x: f32[6,5]) -> (f32[5], f32[6], f32[6,5]) {
  %x = f32[6,5] parameter(0)
  %t = f32[6,5] tanh(%x)
  %e = f32[6,5] exponential(%t)
  %z = f32[] constant(0)
  %a = f32[6,5] add(%e, %x)
  %r0 = f32[5] reduce(%a, %z), dimensions={0}, reducer=add
  %m = f32[6,5] multiply(%e, %e)
  %r1 = f32[6] reduce(%m, %z), dimensions={1}, reducer=max
  %n = f32[6,5] negate(%e)
  ROOT %out = (f32[5], f32[6], f32[6,5]) tuple(%r0, %r1, %n)
}
)");
  size_t exps = 0, tanhs = 0;
  for (auto& c : r.module->computations)
    for (auto& i : c->instructions) {
      exps += i->opcode == Opcode::kExp;
      tanhs += i->opcode == Opcode::kTanh;
    }
  CHECK(exps == 1);
  CHECK(tanhs == 1);
  // The tanh/exp chain is its own loop fusion; both reductions take their elementwise work.
  size_t loops = 0, inputs = 0;
  for (auto* f : fusions(*r.module)) {
    loops += fusion_kind_of(*f) == FusionKind::kLoop;
    inputs += fusion_kind_of(*f) == FusionKind::kInput;
  }
  CHECK(loops == 1);
  CHECK(inputs == 2);
}

TEST_CASE("fusion: cheap producers are duplicated, expensive ones stay out from behind broadcasts", "[fusion]") {
  auto r = run_pass<Fusion>(R"(HloModule dup
ENTRY %main (x: f32[4,8], v: f32[8]) -> (f32[4,8], f32[8,4]) {
  %x = f32[4,8] parameter(0)
  %v = f32[8] parameter(1)
  %ev = f32[8] exponential(%v)
  %bb = f32[4,8] broadcast(%ev), broadcast_dimensions={1}
  %a = f32[4,8] add(%x, %bb)
  %t = f32[8,4] transpose(%bb), permutation={1,0}
  %s = f32[8,4] sine(%t)
  ROOT %out = (f32[4,8], f32[8,4]) tuple(%a, %s)
}
)");
  // The broadcast is cheap: each loop fusion gets a copy. exp(v) would be recomputed for every element behind
  // the broadcast, so it stays a kernel of its own ([8] elements, computed once).
  CHECK(fusions(*r.module).size() == 2);
  size_t bcasts = 0;
  for (auto* f : fusions(*r.module)) bcasts += fused_count(*f, Opcode::kBroadcastInDim);
  CHECK(bcasts == 2);
  CHECK(count_of(r.text, "exponential(%v)") == 1);
}

TEST_CASE("fusion: caps on parameters and instructions", "[fusion]") {
  const char* text = R"(HloModule caps
ENTRY %main (a: f32[4], b: f32[4], c: f32[4], d: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  %c = f32[4] parameter(2)
  %d = f32[4] parameter(3)
  %x = f32[4] add(%a, %b)
  %y = f32[4] add(%x, %c)
  ROOT %z = f32[4] add(%y, %d)
}
)";
  auto all = run_pass<Fusion>(text);
  CHECK(fusions(*all.module).size() == 1);
  auto capped = run_pass<Fusion>(text, Fusion(Fusion::Options{.max_parameters = 3, .max_instructions = 256}));
  for (auto* f : fusions(*capped.module)) CHECK(f->operands.size() <= 3);
  CHECK(count_of(capped.text, "add(%a, %b)") == 1);  // %x did not fit: it stays outside
  auto small = run_pass<Fusion>(text, Fusion(Fusion::Options{.max_parameters = 32, .max_instructions = 2}));
  for (auto* f : fusions(*small.module)) CHECK(f->called[0]->instructions.size() <= 2 + f->operands.size());
}

TEST_CASE("fusion: must not change", "[fusion]") {
  // Single ops, ops that stay alone, and an already fused module.
  check_unchanged<Fusion>(R"(HloModule single
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %e = f32[4] exponential(%x)
}
)");
  check_unchanged<Fusion>(R"(HloModule alone
ENTRY %main (x: f32[4,3], w: f32[3,5], k: s32[6]) -> (f32[4,5], s32[6]) {
  %x = f32[4,3] parameter(0)
  %w = f32[3,5] parameter(1)
  %k = s32[6] parameter(2)
  %d = f32[4,5] dot(%x, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %s = s32[6] sort(%k), dimension=0, is_stable=true, num_keys=1
  ROOT %t = (f32[4,5], s32[6]) tuple(%d, %s)
}
)");
  auto once = run_pass<Fusion>(R"(HloModule twice
ENTRY %main (x: f32[4,8]) -> f32[4] {
  %x = f32[4,8] parameter(0)
  %e = f32[4,8] exponential(%x)
  %z = f32[] constant(0)
  ROOT %r = f32[4] reduce(%e, %z), dimensions={1}, reducer=add
}
)");
  check_unchanged<Fusion>(once.text);
}

TEST_CASE("fusion: a sort between producer and consumer is never fused around", "[fusion]") {
  // %a feeds the sort and %n; %n also reads the sort's result: fusing %a into %n's fusion is fine, but the sort
  // must stay outside and nothing may form a cycle through it.
  auto r = run_pass<Fusion>(R"(HloModule cycle
ENTRY %main (x: f32[6]) -> f32[6] {
  %x = f32[6] parameter(0)
  %a = f32[6] exponential(%x)
  %s = f32[6] sort(%a), dimension=0, is_stable=true, num_keys=1
  %m = f32[6] multiply(%a, %s)
  ROOT %n = f32[6] negate(%m)
}
)");
  CHECK(count_of(r.text, " sort(") == 1);
  CHECK(fusions(*r.module).size() == 1);
  CHECK(count_of(r.text, "exponential(") == 1);
}

// Regression: the Threefry rounds of jitx::random. A cheap producer (a reshape of a slice) was duplicated
// into several fusions, which then read the slice from outside; a later fusion grown from the reshape took
// the slice inside itself and removed it while those fusions still read it.
TEST_CASE("fusion: a value read by an earlier fusion is not taken inside a later one", "[fusion]") {
  std::ifstream f(std::string(JITX_TEST_DATA_DIR) + "/fusion_regression_threefry.hlo");
  REQUIRE(f.good());
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto r = run_pass<Fusion>(text);
  CHECK(r.changed);
  CHECK(fusions(*r.module).size() >= 5);  // the scalar rounds share one multi-output loop kernel
}

// === multi-output loop fusion ===================================================================================

TEST_CASE("fusion: Adam's moment and parameter updates become one multi-output kLoop fusion", "[fusion]") {
  // m' and v' are outputs and also read by the parameter update: without multi-output fusion they are three
  // kernels (m', v', then p' reading both back).
  auto r = run_pass<Fusion>(R"(HloModule adam
ENTRY %main (p: f32[64], m: f32[64], v: f32[64], g: f32[64]) -> (f32[64], f32[64], f32[64]) {
  %p = f32[64] parameter(0)
  %m = f32[64] parameter(1)
  %v = f32[64] parameter(2)
  %g = f32[64] parameter(3)
  %b1 = f32[] constant(0.9)
  %bb1 = f32[64] broadcast(%b1), broadcast_dimensions={}
  %c1 = f32[] constant(0.1)
  %bc1 = f32[64] broadcast(%c1), broadcast_dimensions={}
  %m1 = f32[64] multiply(%bb1, %m)
  %g1 = f32[64] multiply(%bc1, %g)
  %mn = f32[64] add(%m1, %g1)
  %b2 = f32[] constant(0.999)
  %bb2 = f32[64] broadcast(%b2), broadcast_dimensions={}
  %c2 = f32[] constant(0.001)
  %bc2 = f32[64] broadcast(%c2), broadcast_dimensions={}
  %v1 = f32[64] multiply(%bb2, %v)
  %gg = f32[64] multiply(%g, %g)
  %g2 = f32[64] multiply(%bc2, %gg)
  %vn = f32[64] add(%v1, %g2)
  %sq = f32[64] sqrt(%vn)
  %eps = f32[] constant(1e-08)
  %be = f32[64] broadcast(%eps), broadcast_dimensions={}
  %den = f32[64] add(%sq, %be)
  %q = f32[64] divide(%mn, %den)
  %lr = f32[] constant(0.01)
  %bl = f32[64] broadcast(%lr), broadcast_dimensions={}
  %u = f32[64] multiply(%bl, %q)
  %pn = f32[64] subtract(%p, %u)
  ROOT %t = (f32[64], f32[64], f32[64]) tuple(%pn, %mn, %vn)
}
)");
  auto fs = fusions(*r.module);
  REQUIRE(fs.size() == 1);
  CHECK(fusion_kind_of(*fs[0]) == FusionKind::kLoop);
  REQUIRE(fs[0]->shape.is_tuple);
  CHECK(fs[0]->shape.tuple_shapes.size() == 3);
  CHECK(fs[0]->operands.size() == 4);  // p, m, v, g, each read once
  CHECK(fused_count(*fs[0], Opcode::kSqrt) == 1);
  CHECK(fused_count(*fs[0], Opcode::kDivide) == 1);
  CHECK(count_of(r.text, "get-tuple-element(%fusion") == 3);
  CHECK(r.text.find("rule: multi-output loop fusion") == std::string::npos);  // trace lines are not in the text
}

TEST_CASE("fusion: a lone consumer of a shared loop fusion's root takes it in", "[fusion]") {
  // %e feeds a reduction and a negate (returned): the negate takes the tanh/exp chain in and writes %e too, so the
  // chain is computed once and %e is not read back; the reduction still reads %e.
  auto r = run_pass<Fusion>(R"(HloModule lone
ENTRY %main (x: f32[6,5]) -> (f32[6], f32[6,5]) {
  %x = f32[6,5] parameter(0)
  %t = f32[6,5] tanh(%x)
  %e = f32[6,5] exponential(%t)
  %z = f32[] constant(0)
  %r = f32[6] reduce(%e, %z), dimensions={1}, reducer=add
  %n = f32[6,5] negate(%e)
  ROOT %out = (f32[6], f32[6,5]) tuple(%r, %n)
}
)");
  auto fs = fusions(*r.module);
  REQUIRE(fs.size() == 1);
  CHECK(fusion_kind_of(*fs[0]) == FusionKind::kLoop);
  REQUIRE(fs[0]->shape.is_tuple);
  CHECK(fs[0]->shape.tuple_shapes.size() == 2);
  CHECK(fused_count(*fs[0], Opcode::kExp) == 1);
  CHECK(fused_count(*fs[0], Opcode::kNegate) == 1);
}

TEST_CASE("fusion: multi-output loop fusion never forms a cycle or recomputes at other indices", "[fusion]") {
  SECTION("a path through an outside instruction keeps the two apart") {
    // %c reads %e directly and through a reduce of %e: one kernel for both would wait on itself.
    auto r = run_pass<Fusion>(R"(HloModule cycle
ENTRY %main (x: f32[6,5]) -> (f32[6,5], f32[6,5]) {
  %x = f32[6,5] parameter(0)
  %t = f32[6,5] tanh(%x)
  %e = f32[6,5] exponential(%t)
  %z = f32[] constant(0)
  %r = f32[6] reduce(%e, %z), dimensions={1}, reducer=add
  %rb = f32[6,5] broadcast(%r), broadcast_dimensions={0}
  %s = f32[6,5] sort(%rb), dimension=1, is_stable=true, num_keys=1
  %a = f32[6,5] add(%e, %s)
  %c = f32[6,5] multiply(%a, %x)
  ROOT %out = (f32[6,5], f32[6,5]) tuple(%e, %c)
}
)");
    for (auto* f : fusions(*r.module)) CHECK(fused_count(*f, Opcode::kExp) + fused_count(*f, Opcode::kAdd) < 2);
  }
  SECTION("a group with members on both sides of the producer counts as one kernel") {
    // %k2's group takes %g2's (an early output) and reads %a2 through a transpose. %c2's group reads %a2 and %g2:
    // taking %a2's group in would make the kernel read %g2 from a kernel that reads %a2 from it. (Walking only
    // instructions after %a2's group missed %g2, which comes before it: a cycle in the gamma sampler's loop.)
    auto r = run_pass<Fusion>(R"(HloModule spans
ENTRY %main (x: f32[5,5]) -> (f32[5,5], f32[5,5], f32[5,5], f32[5,5]) {
  %x = f32[5,5] parameter(0)
  %g1 = f32[5,5] sine(%x)
  %g2 = f32[5,5] cosine(%g1)
  %a = f32[5,5] exponential(%x)
  %a2 = f32[5,5] tanh(%a)
  %r = f32[5,5] reverse(%g2), dimensions={0}
  %c1 = f32[5,5] add(%a2, %r)
  %c2 = f32[5,5] multiply(%c1, %x)
  %t = f32[5,5] transpose(%a2), permutation={1,0}
  %k1 = f32[5,5] multiply(%g2, %t)
  %k2 = f32[5,5] negate(%k1)
  ROOT %out = (f32[5,5], f32[5,5], f32[5,5], f32[5,5]) tuple(%a2, %g2, %c2, %k2)
}
)");
    auto fs = fusions(*r.module);
    CHECK(fs.size() == 3);  // {g, k} (two outputs), {a}, {r, c}
    for (auto* f : fs) CHECK(fused_count(*f, Opcode::kTanh) + fused_count(*f, Opcode::kAdd) < 2);
  }
  SECTION("a root read at another index (a transpose) is not taken in") {
    auto r = run_pass<Fusion>(R"(HloModule transposed
ENTRY %main (x: f32[5,5]) -> (f32[5,5], f32[5,5]) {
  %x = f32[5,5] parameter(0)
  %t = f32[5,5] tanh(%x)
  %e = f32[5,5] exponential(%t)
  %tr = f32[5,5] transpose(%e), permutation={1,0}
  %c = f32[5,5] multiply(%tr, %x)
  %d = f32[5,5] add(%c, %x)
  ROOT %out = (f32[5,5], f32[5,5]) tuple(%e, %d)
}
)");
    size_t exps = 0;
    for (auto& c : r.module->computations)
      for (auto& i : c->instructions) exps += i->opcode == Opcode::kExp;
    CHECK(exps == 1);
    for (auto* f : fusions(*r.module)) CHECK(!f->shape.is_tuple);
  }
  SECTION("outputs of different dims stay apart") {
    auto r = run_pass<Fusion>(R"(HloModule dims
ENTRY %main (x: f32[6,5], y: f32[2,6,5]) -> (f32[6,5], f32[2,6,5]) {
  %x = f32[6,5] parameter(0)
  %y = f32[2,6,5] parameter(1)
  %t = f32[6,5] tanh(%x)
  %e = f32[6,5] exponential(%t)
  %b = f32[2,6,5] broadcast(%e), broadcast_dimensions={1,2}
  %c = f32[2,6,5] multiply(%b, %y)
  %d = f32[2,6,5] add(%c, %y)
  ROOT %out = (f32[6,5], f32[2,6,5]) tuple(%e, %d)
}
)");
    for (auto* f : fusions(*r.module)) CHECK(!f->shape.is_tuple);
  }
}
