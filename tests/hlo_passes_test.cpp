// HLO IR utilities, the text parser and the optimisation passes: text in, pass, verify, check, same numbers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "hlo/passes/algebraic_simplifier.h"
#include "hlo/passes/constant_folding.h"
#include "hlo/passes/cse.h"
#include "hlo/passes/dce.h"
#include "hlo/passes/pipeline.h"
#include "jitx/jitx.h"
#include "tolerances.h"

using namespace jitx;
using namespace jitx::hlo;
using Catch::Matchers::Contains;
using detail::Literal;

namespace {

std::unique_ptr<Module> parse(std::string_view text) {
  auto m = parse_hlo(text);
  verify(*m);
  return m;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// --- the oracle: the interpreter on random inputs ------------------------------------------------------
Literal random_literal(const hlo::Shape& s, std::mt19937& rng) {
  Literal l = Literal::make(s.dtype, s.dims);
  std::uniform_real_distribution<double> f(-4.0, 4.0);
  std::uniform_int_distribution<int64_t> i(-50, 50), u(0, 100), b(0, 1);
  for (int64_t k = 0; k < l.size(); ++k) {
    if (is_floating(s.dtype)) l.set_f64(k, f(rng));
    else if (is_bool(s.dtype)) l.set_i64(k, b(rng));
    else if (is_unsigned_integer(s.dtype)) l.set_u64(k, static_cast<uint64_t>(u(rng)));
    else l.set_i64(k, i(rng));
  }
  return l;
}

void check_same(const evaluator::Value& a, const evaluator::Value& b) {
  REQUIRE(a.is_tuple == b.is_tuple);
  if (a.is_tuple) {
    REQUIRE(a.tuple.size() == b.tuple.size());
    for (size_t k = 0; k < a.tuple.size(); ++k) check_same(a.tuple[k], b.tuple[k]);
    return;
  }
  const Literal &x = a.array, &y = b.array;
  REQUIRE(x.dtype == y.dtype);
  REQUIRE(x.dims == y.dims);
  for (int64_t k = 0; k < x.size(); ++k) {
    if (is_floating(x.dtype)) {
      double p = x.get_f64(k), q = y.get_f64(k);
      if (std::isnan(p) && std::isnan(q)) continue;
      INFO("element " << k << ": " << p << " vs " << q);
      REQUIRE(std::fabs(p - q) <= jitx::testing::kRewriteRtol * std::max({1.0, std::fabs(p), std::fabs(q)}));
    } else {
      INFO("element " << k);
      REQUIRE(x.get_u64(k) == y.get_u64(k));  // integers: exactly
    }
  }
}

/// The interpreter gives the same numbers for both modules on a few fixed-seed random inputs.
void check_same_values(const Module& before, const Module& after) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Literal> args;
    for (auto* p : before.entry->parameters) args.push_back(random_literal(p->shape, rng));
    check_same(evaluator::evaluate(before, args), evaluator::evaluate(after, args));
  }
}

struct Result {
  std::unique_ptr<Module> module;
  bool changed = false;
  std::string text;
};

/// Parses text, runs the passes in order (verifying after each), checks the numbers against the input module.
Result run(std::string_view text, std::vector<std::unique_ptr<HloPass>> passes) {
  auto before = parse(text);
  Result r;
  r.module = before->clone();
  PipelineOptions opts;
  opts.verify = true;
  r.changed = run_passes(*r.module, passes, opts);
  r.text = print_hlo(*r.module);
  INFO(r.text);
  check_same_values(*before, *r.module);
  // Whatever a pass writes must read back as itself.
  REQUIRE(print_hlo(*parse_hlo(r.text)) == r.text);
  return r;
}

template <class... P>
std::vector<std::unique_ptr<HloPass>> passes() {
  std::vector<std::unique_ptr<HloPass>> v;
  (v.push_back(std::make_unique<P>()), ...);
  return v;
}

/// The simplifier followed by DCE, so the text shows only what is left.
Result simplify(std::string_view text) { return run(text, passes<AlgebraicSimplifier, DeadCodeElimination>()); }

/// A pass that must leave the module exactly as it was.
template <class P>
void check_unchanged(std::string_view text) {
  auto m = parse(text);
  std::string before = print_hlo(*m);
  P pass;
  INFO(before);
  CHECK_FALSE(pass.run(*m));
  verify(*m);
  CHECK(print_hlo(*m) == before);
}

}  // namespace

// === IR utilities and the parser ============================================================================

TEST_CASE("parser: round trip print -> parse -> print on every opcode", "[hlo]") {
  Module m("every_op");
  auto* c = m.add_computation("main");
  m.entry = c;
  hlo::Shape s(DType::float32, {2, 3});
  auto* p0 = c->add_parameter(0, s);
  auto* p1 = c->add_parameter(1, s);
  auto* p2 = c->add_parameter(2, s);
  auto* callee = m.add_computation("callee");
  callee->add_parameter(0, s);
  std::vector<Instruction*> all;
  for (int k = 0; k < static_cast<int>(Opcode::kNumOpcodes); ++k) {
    Opcode op = static_cast<Opcode>(k);
    if (op == Opcode::kParameter) continue;
    if (op == Opcode::kConstant) {
      auto lit = Literal::make(DType::float32, {2, 3});
      for (int64_t e = 0; e < 6; ++e) lit.set_f64(e, 0.1 * e - 0.25);
      all.push_back(c->add_constant(lit));
      continue;
    }
    int arity = opcode_arity(op);
    std::vector<Instruction*> ops;
    std::vector<Instruction*> pool = {p0, p1, p2};
    for (int a = 0; a < (arity < 0 ? 3 : arity); ++a) ops.push_back(pool[a]);
    detail::Params attrs{{"dimensions", std::vector<int64_t>{1, 0}}, {"index", int64_t{k}}};
    if (k % 3 == 0) attrs.set("direction", std::string("GE"));
    if (k % 4 == 0) attrs.set("comment", std::string("needs \"quotes\", commas"));
    if (k % 5 == 0) attrs.set("scale", 1.0 * k);
    if (k % 6 == 0) attrs.set("flag", true);
    if (k % 7 == 0) attrs.set("type", DType::bfloat16);
    if (k % 8 == 0) attrs.set("word", std::string("f32"));  // a string spelled like a dtype
    hlo::Shape out = s;
    if (k % 2) out.layout = {0, 1};
    auto* i = c->add(op, out, ops, attrs);
    if (op == Opcode::kCall || op == Opcode::kFusion || op == Opcode::kWhile) i->called = {callee, callee};
    all.push_back(i);
  }
  std::vector<hlo::Shape> shapes;
  for (auto* i : all) shapes.push_back(i->shape);
  c->add(Opcode::kTuple, hlo::Shape::tuple(shapes), all);
  std::string text = print_hlo(m);
  auto back = parse_hlo(text);
  REQUIRE(print_hlo(*back) == text);
  REQUIRE(back->entry->instructions.size() == c->instructions.size());
  for (size_t k = 0; k < c->instructions.size(); ++k) {
    const Instruction &a = *c->instructions[k], &b = *back->entry->instructions[k];
    CHECK(a.opcode == b.opcode);
    CHECK(a.attrs == b.attrs);
    CHECK(a.shape.layout == b.shape.layout);
    CHECK(a.called.size() == b.called.size());
  }
  CHECK_THAT(text, Contains("word=\"f32\""));
  CHECK_THAT(text, Contains("direction=GE"));
  CHECK_THAT(text, Contains("scale=5.0"));
  CHECK_THAT(text, Contains(fmt::format("calls=%{}, %{}", callee->name, callee->name)));
}

TEST_CASE("parser: constants of every dtype round-trip exactly, all values printed", "[hlo]") {
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dt = static_cast<DType>(d);
    Module m("consts");
    auto* c = m.add_computation("main");
    m.entry = c;
    Literal big = Literal::make(dt, {5, 7});  // 35 values: more than the old 16-value cut-off
    std::mt19937 rng(7);
    for (int64_t k = 0; k < big.size(); ++k) big.set_f64(k, std::uniform_real_distribution<double>(-100, 100)(rng) / 3);
    if (is_floating(dt)) {
      big.set_f64(0, INFINITY);
      big.set_f64(1, -INFINITY);
      big.set_f64(2, NAN);
      big.set_f64(3, -0.0);
      big.set_f64(4, dt == DType::float64 ? 4.9e-324 : dt == DType::float32 ? 1.4e-45 : 1e-7);  // subnormal
      uint64_t payload = dt == DType::float64 ? 0xfff0000000000123ULL : dt == DType::float32 ? 0xff800123 : 0xff81;
      std::memcpy(static_cast<char*>(big.data()) + 5 * dtype_size(dt), &payload, dtype_size(dt));  // a -NaN with payload
    }
    if (dt == DType::int64) big.set_i64(0, std::numeric_limits<int64_t>::min());
    if (dt == DType::uint64) big.set_u64(0, std::numeric_limits<uint64_t>::max());
    auto* k1 = c->add_constant(big);
    Literal scalar = Literal::make(dt, {});
    scalar.set_f64(0, 1);
    auto* k2 = c->add_constant(scalar);
    auto* k3 = c->add_constant(Literal::make(dt, {2, 0}));  // no values
    c->add(Opcode::kTuple, hlo::Shape::tuple({k1->shape, k2->shape, k3->shape}), {k1, k2, k3});
    std::string text = print_hlo(m);
    INFO(text);
    CHECK(text.find("...") == std::string::npos);
    auto back = parse(text);
    REQUIRE(print_hlo(*back) == text);
    const Literal& again = *back->entry->instructions[0]->literal;
    REQUIRE(again.nbytes() == big.nbytes());
    CHECK(std::memcmp(again.data(), big.data(), big.nbytes()) == 0);
  }
}

TEST_CASE("parser: modules with called computations, tuples and layouts", "[hlo]") {
  const char* text = R"(HloModule calls, entry_computation_layout={(f32[2,3]{0,1}, (s32[]{}, pred[4]{0}))->f32[2,3]{1,0}}

%body.1 (Arg_0.2: f32[2,3]) -> f32[2,3] {
  %Arg_0.2 = f32[2,3]{1,0} parameter(0)
  ROOT %negate.3 = f32[2,3]{1,0} negate(%Arg_0.2)
}

ENTRY %main.0 (Arg_0.4: f32[2,3], Arg_1.5: (s32[], pred[4])) -> f32[2,3] {
  %Arg_0.4 = f32[2,3]{0,1} parameter(0)
  %Arg_1.5 = (s32[]{}, pred[4]{0}) parameter(1)
  %get-tuple-element.6 = pred[4]{0} get-tuple-element(%Arg_1.5), index=1
  ROOT %call.7 = f32[2,3]{1,0} call(%Arg_0.4), calls=%body.1
}
)";
  auto m = parse(text);
  CHECK(print_hlo(*m) == text);
  CHECK(m->entry->root->called.at(0) == m->computations[0].get());
  CHECK(m->entry->parameters[0]->shape.layout == std::vector<int64_t>{0, 1});
  CHECK(m->entry->parameters[1]->shape.tuple_shapes.at(1).dims == std::vector<int64_t>{4});
  // Names made by passes never collide with names read from text.
  CHECK(m->unique_name("add") == "add.8");
}

TEST_CASE("parser: malformed text throws CompileError naming the line", "[hlo]") {
  auto fails_with = [](const char* text, const char* what) {
    try {
      parse_hlo(text);
      FAIL("no error for: " << text);
    } catch (const CompileError& e) {
      CHECK_THAT(std::string(e.what()), Contains(what));
    }
  };
  fails_with("HloModule m\nENTRY %e () -> f32[] {\n  ROOT %x = f32[] frobnicate()\n}\n", "unknown opcode 'frobnicate'");
  fails_with("HloModule m\nENTRY %e () -> f32[] {\n  ROOT %x = f32[] negate(%y)\n}\n", "line 3: operand %y is not defined");
  fails_with("HloModule m\nENTRY %e () -> f32[2] {\n  ROOT %x = f32[2] constant({1, 2, 3})\n}\n", "more than 2 values");
  fails_with("HloModule m\n%e () -> f32[] {\n  ROOT %x = f32[] constant(1)\n}\n", "no ENTRY");
  fails_with("HloModule m\nENTRY %e () -> f32[] {\n  %x = f32[] constant(1)\n}\n", "no ROOT");
}

static const char* kSmall = R"(HloModule small

ENTRY %main (p: f32[4], q: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %q = f32[4] parameter(1)
  %a = f32[4] add(%p, %q)
  %dead = f32[4] multiply(%a, %a)
  %b = f32[4] negate(%a)
  ROOT %c = f32[4] subtract(%b, %q)
}
)";

TEST_CASE("IR: clone is deep and independent", "[hlo]") {
  auto m = parse(kSmall);
  auto c = m->clone();
  verify(*c);
  CHECK(print_hlo(*c) == print_hlo(*m));
  CHECK(c->fingerprint() == m->fingerprint());
  for (size_t k = 0; k < m->entry->instructions.size(); ++k) {
    CHECK(c->entry->instructions[k].get() != m->entry->instructions[k].get());
    CHECK(c->entry->instructions[k]->parent == c->entry);
    for (auto* o : c->entry->instructions[k]->operands) CHECK(o->parent == c->entry);
  }
  c->entry->find("c")->opcode = Opcode::kAdd;
  CHECK(m->entry->find("c")->opcode == Opcode::kSubtract);
  CHECK(c->unique_name("x") == m->unique_name("x"));  // the name counter is copied too
}

TEST_CASE("IR: replace_all_uses, insert_before, remove, dead-code removal, topological sort", "[hlo]") {
  auto m = parse(kSmall);
  Computation* c = m->entry;
  Instruction *p = c->find("p"), *a = c->find("a"), *b = c->find("b");
  // insert_before keeps the order valid and leaves the root alone.
  Instruction* n = c->insert_before(a, Opcode::kNegate, a->shape, {p});
  CHECK(c->root->name == "c");
  CHECK(c->replace_all_uses(a, n));
  CHECK(a->users().size() == 0);
  verify(*m);
  CHECK(c->remove_dead_instructions() == 2);  // %a and %dead
  CHECK(c->find("a") == nullptr);
  CHECK(c->find("dead") == nullptr);
  verify(*m);
  CHECK_THROWS(c->remove_instruction(c->root));
  CHECK_THROWS(c->remove_instruction(p));
  // A root replaced by another instruction moves the root.
  CHECK(c->replace_all_uses(c->root, b));
  CHECK(c->root == b);
  c->remove_instruction(c->find("c"));
  verify(*m);
  // Reordering: put the root first, sort it back.
  std::rotate(c->instructions.begin(), c->instructions.end() - 1, c->instructions.end());
  CHECK_THROWS_AS(verify(*m), CompileError);
  c->sort_topologically();
  verify(*m);
}

TEST_CASE("IR: fingerprint ignores names, sees structure and constant values", "[hlo]") {
  auto a = parse(R"(HloModule one
ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %k = f32[3] constant({1, 2, 3})
  ROOT %m = f32[3] multiply(%x, %k)
}
)");
  auto b = parse(R"(HloModule two
ENTRY %entry.7 (y.1: f32[3]) -> f32[3] {
  %y.1 = f32[3] parameter(0)
  %c.2 = f32[3] constant({1, 2, 3})
  ROOT %mul.3 = f32[3] multiply(%y.1, %c.2)
}
)");
  auto c = parse(R"(HloModule one
ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %k = f32[3] constant({1, 2, 4})
  ROOT %m = f32[3] multiply(%x, %k)
}
)");
  CHECK(a->fingerprint().size() == 32);
  CHECK(a->fingerprint() == b->fingerprint());
  CHECK(a->fingerprint() != c->fingerprint());
}

// === DCE and CSE ===============================================================================================

TEST_CASE("dce: removes dead instructions and uncalled computations, keeps parameters", "[hlo]") {
  auto r = run(R"(HloModule dce

%unused (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%a)
}

%used (a.1: f32[4]) -> f32[4] {
  %a.1 = f32[4] parameter(0)
  ROOT %n.1 = f32[4] abs(%a.1)
}

ENTRY %main (p: f32[4], unused_param: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %unused_param = f32[4] parameter(1)
  %dead1 = f32[4] exponential(%p)
  %dead2 = f32[4] add(%dead1, %p)
  ROOT %call = f32[4] call(%p), calls=%used
}
)", passes<DeadCodeElimination>());
  CHECK(r.changed);
  CHECK(r.text.find("dead1") == std::string::npos);
  CHECK(r.text.find("dead2") == std::string::npos);
  CHECK(r.text.find("%unused ") == std::string::npos);
  CHECK_THAT(r.text, Contains("%used"));
  CHECK_THAT(r.text, Contains("%unused_param = f32[4]{0} parameter(1)"));
  check_unchanged<DeadCodeElimination>(R"(HloModule live
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %e = f32[4] exponential(%p)
  ROOT %a = f32[4] add(%e, %p)
}
)");
}

TEST_CASE("cse: merges equal instructions and equal constants", "[hlo]") {
  auto r = run(R"(HloModule cse
ENTRY %main (p: f32[4]) -> (f32[4], f32[4], f32[4]) {
  %p = f32[4] parameter(0)
  %k1 = f32[] constant(2)
  %k2 = f32[] constant(2)
  %b1 = f32[4] broadcast(%k1), broadcast_dimensions={}
  %b2 = f32[4] broadcast(%k2), broadcast_dimensions={}
  %m1 = f32[4] multiply(%p, %b1)
  %m2 = f32[4] multiply(%p, %b2)
  %e1 = f32[4] exponential(%m1)
  %e2 = f32[4] exponential(%m2)
  %s = f32[4] sine(%p)
  ROOT %t = (f32[4], f32[4], f32[4]) tuple(%e1, %e2, %s)
}
)", passes<CommonSubexpressionElimination, DeadCodeElimination>());
  CHECK(r.changed);
  CHECK_THAT(r.text, Contains("tuple(%e1, %e1, %s)"));
  CHECK(count_of(r.text, " exponential(") == 1);
  CHECK(count_of(r.text, " constant(") == 1);
  // Different constants, attributes, operand order or shapes stay apart.
  check_unchanged<CommonSubexpressionElimination>(R"(HloModule apart
ENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[4], pred[4], pred[4], f32[], f32[]) {
  %p = f32[4] parameter(0)
  %q = f32[4] parameter(1)
  %a1 = f32[4] add(%p, %q)
  %a2 = f32[4] add(%q, %p)
  %c1 = pred[4] compare(%p, %q), direction=LT
  %c2 = pred[4] compare(%p, %q), direction=GT
  %k1 = f32[] constant(1)
  %k2 = f32[] constant(-1)
  ROOT %t = (f32[4], f32[4], pred[4], pred[4], f32[], f32[]) tuple(%a1, %a2, %c1, %c2, %k1, %k2)
}
)");
}

// === the algebraic simplifier ===============================================================================

TEST_CASE("algsimp: additive and multiplicative identities", "[hlo]") {
  SECTION("A + 0 => A and 0 + A => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %z = f32[] constant(0)
  %bz = f32[4] broadcast(%z), broadcast_dimensions={}
  %a = f32[4] add(%p, %bz)
  %b = f32[4] add(%bz, %a)
  ROOT %n = f32[4] negate(%b)
}
)");
    CHECK_THAT(r.text, Contains("ROOT %n = f32[4]{0} negate(%p)"));
    CHECK(count_of(r.text, "add(") == 0);
  }
  SECTION("A - 0 => A, A * 1 => A, 1 * A => A on integers and floats") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s32[2,3], q: f32[3]) -> (s32[2,3], f32[3]) {
  %p = s32[2,3] parameter(0)
  %q = f32[3] parameter(1)
  %zero = s32[2,3] constant({{0, 0, 0}, {0, 0, 0}})
  %one = s32[] constant(1)
  %bone = s32[2,3] broadcast(%one), broadcast_dimensions={}
  %s = s32[2,3] subtract(%p, %zero)
  %m = s32[2,3] multiply(%bone, %s)
  %fone = f32[3] constant({1, 1, 1})
  %fm = f32[3] multiply(%q, %fone)
  ROOT %t = (s32[2,3], f32[3]) tuple(%m, %fm)
}
)");
    CHECK_THAT(r.text, Contains("tuple(%p, %q)"));
  }
  SECTION("A * 0 => 0 for integers") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s32[4]) -> s32[4] {
  %p = s32[4] parameter(0)
  %z = s32[] constant(0)
  %bz = s32[4] broadcast(%z), broadcast_dimensions={}
  %m = s32[4] multiply(%p, %bz)
  ROOT %a = s32[4] subtract(%m, %p)
}
)");
    CHECK_THAT(r.text, Contains("ROOT %a = s32[4]{0} subtract(%bz, %p)"));
  }
  SECTION("must not change: A * 0 for floats, A - (-0), A + 1") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[4]) -> (f32[4], f32[4], f32[4]) {
  %p = f32[4] parameter(0)
  %z = f32[] constant(0)
  %bz = f32[4] broadcast(%z), broadcast_dimensions={}
  %nz = f32[] constant(-0)
  %bnz = f32[4] broadcast(%nz), broadcast_dimensions={}
  %one = f32[] constant(1)
  %b1 = f32[4] broadcast(%one), broadcast_dimensions={}
  %m = f32[4] multiply(%p, %bz)
  %s = f32[4] subtract(%p, %bnz)
  %a = f32[4] add(%p, %b1)
  ROOT %t = (f32[4], f32[4], f32[4]) tuple(%m, %s, %a)
}
)");
  }
}

TEST_CASE("algsimp: negation, division, power, convert", "[hlo]") {
  SECTION("--A => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s8[5]) -> s8[5] {
  %p = s8[5] parameter(0)
  %n1 = s8[5] negate(%p)
  %n2 = s8[5] negate(%n1)
  ROOT %a = s8[5] abs(%n2)
}
)");
    CHECK_THAT(r.text, Contains("abs(%p)"));
  }
  SECTION("A / c => A * (1/c) for a power of two") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[2,2], q: bf16[3]) -> (f32[2,2], bf16[3]) {
  %p = f32[2,2] parameter(0)
  %q = bf16[3] parameter(1)
  %c = f32[] constant(0.25)
  %bc = f32[2,2] broadcast(%c), broadcast_dimensions={}
  %d = f32[2,2] divide(%p, %bc)
  %c2 = bf16[3] constant({-8, -8, -8})
  %d2 = bf16[3] divide(%q, %c2)
  ROOT %t = (f32[2,2], bf16[3]) tuple(%d, %d2)
}
)");
    CHECK(count_of(r.text, "divide(") == 0);
    CHECK(count_of(r.text, "multiply(") == 2);
    CHECK_THAT(r.text, Contains("f32[]{} constant(4)"));
    CHECK_THAT(r.text, Contains("bf16[]{} constant(-0.125)"));
  }
  SECTION("must not change: A / 3, A / 0, integer division") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[2], q: s32[2]) -> (f32[2], f32[2], s32[2]) {
  %p = f32[2] parameter(0)
  %q = s32[2] parameter(1)
  %three = f32[2] constant({3, 3})
  %zero = f32[2] constant({0, 0})
  %two = s32[2] constant({2, 2})
  %d1 = f32[2] divide(%p, %three)
  %d2 = f32[2] divide(%p, %zero)
  %d3 = s32[2] divide(%q, %two)
  ROOT %t = (f32[2], f32[2], s32[2]) tuple(%d1, %d2, %d3)
}
)");
  }
  SECTION("pow(A, 2) => A * A and pow(A, 1) => A; convert to the same type") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: s32[3]) -> (f32[3], s32[3], f32[3]) {
  %p = f32[3] parameter(0)
  %q = s32[3] parameter(1)
  %two = f32[3] constant({2, 2, 2})
  %pw = f32[3] power(%p, %two)
  %one = s32[] constant(1)
  %b1 = s32[3] broadcast(%one), broadcast_dimensions={}
  %pw1 = s32[3] power(%q, %b1)
  %cv = f32[3] convert(%p)
  ROOT %t = (f32[3], s32[3], f32[3]) tuple(%pw, %pw1, %cv)
}
)");
    CHECK_THAT(r.text, Contains("multiply(%p, %p)"));
    CHECK(count_of(r.text, "power(") == 0);
    CHECK(count_of(r.text, "convert(") == 0);
    CHECK_THAT(r.text, Contains(", %q, %p)"));
  }
  SECTION("must not change: exp(log(A)), pow(A, 3), convert to another type") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[3]) -> (f32[3], f32[3], s32[3]) {
  %p = f32[3] parameter(0)
  %l = f32[3] log(%p)
  %e = f32[3] exponential(%l)
  %three = f32[3] constant({3, 3, 3})
  %pw = f32[3] power(%p, %three)
  %cv = s32[3] convert(%p)
  ROOT %t = (f32[3], f32[3], s32[3]) tuple(%e, %pw, %cv)
}
)");
  }
}

TEST_CASE("algsimp: reshape, transpose and broadcast chains", "[hlo]") {
  SECTION("reshape(reshape(A)) => reshape(A), reshape(A) => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[2,6]) -> (f32[3,4], f32[2,6]) {
  %p = f32[2,6] parameter(0)
  %r1 = f32[12] reshape(%p)
  %r2 = f32[3,4] reshape(%r1)
  %r3 = f32[12] reshape(%p)
  %r4 = f32[2,6] reshape(%r3)
  ROOT %t = (f32[3,4], f32[2,6]) tuple(%r2, %r4)
}
)");
    CHECK(count_of(r.text, "reshape(") == 1);
    CHECK_THAT(r.text, Contains("f32[3,4]{1,0} reshape(%p)"));
    CHECK_THAT(r.text, Contains(", %p)"));
  }
  SECTION("transpose(transpose(A)) composed or removed") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[2,3,4]) -> (f32[4,2,3], f32[2,3,4]) {
  %p = f32[2,3,4] parameter(0)
  %t1 = f32[3,4,2] transpose(%p), permutation={1,2,0}
  %t2 = f32[4,2,3] transpose(%t1), permutation={1,2,0}
  %t3 = f32[3,2,4] transpose(%p), permutation={1,0,2}
  %t4 = f32[2,3,4] transpose(%t3), permutation={1,0,2}
  ROOT %t = (f32[4,2,3], f32[2,3,4]) tuple(%t2, %t4)
}
)");
    CHECK(count_of(r.text, "transpose(") == 1);
    CHECK_THAT(r.text, Contains("f32[4,2,3]{2,1,0} transpose(%p), permutation={2,0,1}"));
    CHECK_THAT(r.text, Contains(", %p)"));
  }
  SECTION("broadcast(broadcast(A)) => broadcast(A), including a size-1 dimension") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3,1]) -> f32[2,3,5,4] {
  %p = f32[3,1] parameter(0)
  %b1 = f32[3,4] broadcast(%p), broadcast_dimensions={0,1}
  ROOT %b2 = f32[2,3,5,4] broadcast(%b1), broadcast_dimensions={1,3}
}
)");
    CHECK(count_of(r.text, "broadcast(") == 1);
    CHECK_THAT(r.text, Contains("broadcast(%p), broadcast_dimensions={1,3}"));
  }
  SECTION("must not change: a reshape that changes the shape, a real transpose") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[2,6]) -> (f32[12], f32[6,2]) {
  %p = f32[2,6] parameter(0)
  %r = f32[12] reshape(%p)
  %t = f32[6,2] transpose(%p), permutation={1,0}
  ROOT %tu = (f32[12], f32[6,2]) tuple(%r, %t)
}
)");
  }
}

TEST_CASE("algsimp: slices", "[hlo]") {
  SECTION("slice(slice(A)) => slice(A) with strides") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s32[20,6]) -> s32[3,2] {
  %p = s32[20,6] parameter(0)
  %s1 = s32[9,6] slice(%p), start_indices={2,0}, limit_indices={19,6}, strides={2,1}
  ROOT %s2 = s32[3,2] slice(%s1), start_indices={1,1}, limit_indices={8,5}, strides={3,2}
}
)");
    CHECK(count_of(r.text, "slice(") == 1);
    CHECK_THAT(r.text, Contains("slice(%p), limit_indices={17,4}, start_indices={4,1}, strides={6,2}"));
  }
  SECTION("full-range slice => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[4,1]) -> f32[4,1] {
  %p = f32[4,1] parameter(0)
  %s = f32[4,1] slice(%p), start_indices={0,0}, limit_indices={4,1}, strides={1,3}
  ROOT %n = f32[4,1] negate(%s)
}
)");
    CHECK_THAT(r.text, Contains("negate(%p)"));
  }
  SECTION("must not change: a slice that drops elements") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[4]) -> f32[3] {
  %p = f32[4] parameter(0)
  ROOT %s = f32[3] slice(%p), start_indices={1}, limit_indices={4}, strides={1}
}
)");
  }
}

TEST_CASE("algsimp: reduce of a broadcast", "[hlo]") {
  SECTION("add over broadcast dims => multiply by the count") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: s32[3]) -> (f32[3], s32[3,2]) {
  %p = f32[3] parameter(0)
  %q = s32[3] parameter(1)
  %b = f32[4,3,5] broadcast(%p), broadcast_dimensions={1}
  %z = f32[] constant(0)
  %r = f32[3] reduce(%b, %z), dimensions={0,2}, reducer=add
  %bq = s32[3,7,2] broadcast(%q), broadcast_dimensions={0}
  %zi = s32[] constant(0)
  %ri = s32[3,2] reduce(%bq, %zi), dimensions={1}, reducer=add
  ROOT %t = (f32[3], s32[3,2]) tuple(%r, %ri)
}
)");
    CHECK(count_of(r.text, "reduce(") == 0);
    CHECK_THAT(r.text, Contains("f32[]{} constant(20)"));
    CHECK_THAT(r.text, Contains("s32[]{} constant(7)"));
    CHECK_THAT(r.text, Contains("s32[3,2]{1,0} broadcast(%q), broadcast_dimensions={0}"));
  }
  SECTION("max and min over broadcast dims => the operand") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: s32[3]) -> (f32[3], s32[3]) {
  %p = f32[3] parameter(0)
  %q = s32[3] parameter(1)
  %b = f32[3,5] broadcast(%p), broadcast_dimensions={0}
  %ninf = f32[] constant(-inf)
  %r = f32[3] reduce(%b, %ninf), dimensions={1}, reducer=max
  %bq = s32[6,3] broadcast(%q), broadcast_dimensions={1}
  %big = s32[] constant(2147483647)
  %ri = s32[3] reduce(%bq, %big), dimensions={0}, reducer=min
  ROOT %t = (f32[3], s32[3]) tuple(%r, %ri)
}
)");
    CHECK_THAT(r.text, Contains("tuple(%p, %q)"));
  }
  SECTION("must not change: reducing a dim that carries data, a non-identity init, mul") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[3]) -> (f32[4], f32[3], f32[3]) {
  %p = f32[3] parameter(0)
  %b = f32[4,3] broadcast(%p), broadcast_dimensions={1}
  %z = f32[] constant(0)
  %one = f32[] constant(1)
  %r1 = f32[4] reduce(%b, %z), dimensions={1}, reducer=add
  %r2 = f32[3] reduce(%b, %one), dimensions={0}, reducer=add
  %r3 = f32[3] reduce(%b, %one), dimensions={0}, reducer=mul
  ROOT %t = (f32[4], f32[3], f32[3]) tuple(%r1, %r2, %r3)
}
)");
  }
}

TEST_CASE("algsimp: dot with a transposed operand", "[hlo]") {
  SECTION("x @ w.T folds the transpose into the dimension numbers") {
    auto r = simplify(R"(HloModule m
ENTRY %main (x: f32[4,3], w: f32[5,3]) -> f32[4,5] {
  %x = f32[4,3] parameter(0)
  %w = f32[5,3] parameter(1)
  %wt = f32[3,5] transpose(%w), permutation={1,0}
  ROOT %d = f32[4,5] dot(%x, %wt), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)");
    CHECK(count_of(r.text, "transpose(") == 0);
    CHECK_THAT(r.text, Contains("dot(%x, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, "
                                "rhs_batch_dimensions={}, rhs_contracting_dimensions={1}"));
  }
  SECTION("batched lhs transpose") {
    auto r = simplify(R"(HloModule m
ENTRY %main (a: f32[3,2,4], b: f32[2,3,5]) -> f32[2,4,5] {
  %a = f32[3,2,4] parameter(0)
  %b = f32[2,3,5] parameter(1)
  %at = f32[2,4,3] transpose(%a), permutation={1,2,0}
  ROOT %d = f32[2,4,5] dot(%at, %b), lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, rhs_contracting_dimensions={1}
}
)");
    CHECK_THAT(r.text, Contains("dot(%a, %b), lhs_batch_dimensions={1}, lhs_contracting_dimensions={0}"));
  }
  SECTION("must not change: a transpose that reorders the free dims") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (a: f32[4,2,3], b: f32[3,5]) -> f32[2,4,5] {
  %a = f32[4,2,3] parameter(0)
  %b = f32[3,5] parameter(1)
  %at = f32[2,4,3] transpose(%a), permutation={1,0,2}
  ROOT %d = f32[2,4,5] dot(%at, %b), lhs_batch_dimensions={}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)");
  }
}

TEST_CASE("algsimp: a transposed dot becomes the dot with its operands swapped", "[hlo]") {
  SECTION("transpose(dot(g, x)) => dot(x, g) (a weight gradient)") {
    auto r = simplify(R"(HloModule m
ENTRY %main (g: f32[6,4], x: f32[6,5]) -> f32[5,4] {
  %g = f32[6,4] parameter(0)
  %x = f32[6,5] parameter(1)
  %d = f32[4,5] dot(%g, %x), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  ROOT %t = f32[5,4] transpose(%d), permutation={1,0}
}
)");
    CHECK(count_of(r.text, "transpose(") == 0);
    CHECK_THAT(r.text, Contains("f32[5,4]{1,0} dot(%x, %g), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, "
                                "rhs_batch_dimensions={}, rhs_contracting_dimensions={0}"));
  }
  SECTION("free dimension blocks of several dimensions swap as blocks") {
    auto r = simplify(R"(HloModule m
ENTRY %main (a: f32[2,3,4], b: f32[4,5]) -> f32[5,2,3] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[4,5] parameter(1)
  %d = f32[2,3,5] dot(%a, %b), lhs_batch_dimensions={}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  ROOT %t = f32[5,2,3] transpose(%d), permutation={2,0,1}
}
)");
    CHECK(count_of(r.text, "transpose(") == 0);
    CHECK_THAT(r.text, Contains("f32[5,2,3]{2,1,0} dot(%b, %a), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, "
                                "rhs_batch_dimensions={}, rhs_contracting_dimensions={2}"));
  }
  SECTION("must not change: the dot has another user, a batch dimension, or the permutation mixes the blocks") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (g: f32[6,4], x: f32[6,5]) -> (f32[5,4], f32[4,5]) {
  %g = f32[6,4] parameter(0)
  %x = f32[6,5] parameter(1)
  %d = f32[4,5] dot(%g, %x), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %t = f32[5,4] transpose(%d), permutation={1,0}
  ROOT %r = (f32[5,4], f32[4,5]) tuple(%t, %d)
}
)");
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (a: f32[2,3,4], b: f32[2,4,5]) -> f32[2,5,3] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[2,4,5] parameter(1)
  %d = f32[2,3,5] dot(%a, %b), lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, rhs_contracting_dimensions={1}
  ROOT %t = f32[2,5,3] transpose(%d), permutation={0,2,1}
}
)");
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (a: f32[2,3,4], b: f32[4,5]) -> f32[3,5,2] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[4,5] parameter(1)
  %d = f32[2,3,5] dot(%a, %b), lhs_batch_dimensions={}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  ROOT %t = f32[3,5,2] transpose(%d), permutation={1,2,0}
}
)");
  }
}

TEST_CASE("algsimp: select with a constant predicate", "[hlo]") {
  auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: f32[3], c: pred[3]) -> (f32[3], f32[3], f32[3]) {
  %p = f32[3] parameter(0)
  %q = f32[3] parameter(1)
  %c = pred[3] parameter(2)
  %t = pred[] constant(true)
  %f = pred[3] constant({false, false, false})
  %s1 = f32[3] select(%t, %p, %q)
  %s2 = f32[3] select(%f, %p, %q)
  %s3 = f32[3] select(%c, %p, %q)
  ROOT %tu = (f32[3], f32[3], f32[3]) tuple(%s1, %s2, %s3)
}
)");
  CHECK_THAT(r.text, Contains("tuple(%p, %q, %s3)"));
  check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[2], q: f32[2]) -> f32[2] {
  %p = f32[2] parameter(0)
  %q = f32[2] parameter(1)
  %mixed = pred[2] constant({true, false})
  ROOT %s = f32[2] select(%mixed, %p, %q)
}
)");
}

TEST_CASE("algsimp: 1 + tanh(y) becomes 2 logistic(2y); power-of-two scalings fold", "[hlo]") {
  SECTION("GELU's tail 0.5 x (1 + tanh(u)) becomes x * logistic(2u), the 2 folded into u's constant") {
    auto r = simplify(R"(HloModule m
ENTRY %main (x: f32[64]) -> f32[64] {
  %x = f32[64] parameter(0)
  %k = f32[] constant(0.797884583)
  %kb = f32[64] broadcast(%k), broadcast_dimensions={}
  %u = f32[64] multiply(%x, %kb)
  %t = f32[64] tanh(%u)
  %one = f32[] constant(1)
  %ob = f32[64] broadcast(%one), broadcast_dimensions={}
  %s = f32[64] add(%ob, %t)
  %half = f32[] constant(0.5)
  %hb = f32[64] broadcast(%half), broadcast_dimensions={}
  %hx = f32[64] multiply(%hb, %x)
  ROOT %g = f32[64] multiply(%hx, %s)
}
)");
    CHECK(count_of(r.text, "tanh(") == 0);
    CHECK(count_of(r.text, " logistic(") == 1);
    CHECK(count_of(r.text, " multiply(") == 2);  // x * 2k and x * logistic: the 0.5 and the 2s are gone
    CHECK_THAT(r.text, Contains("constant(1.595769"));
  }
  SECTION("tanh(y) + 1 with other scalings keeps the factor 2") {
    auto r = simplify(R"(HloModule m
ENTRY %main (y: f32[8], z: f32[8]) -> f32[8] {
  %y = f32[8] parameter(0)
  %z = f32[8] parameter(1)
  %t = f32[8] tanh(%y)
  %one = f32[8] constant({1, 1, 1, 1, 1, 1, 1, 1})
  %s = f32[8] add(%t, %one)
  ROOT %m = f32[8] multiply(%s, %z)
}
)");
    CHECK(count_of(r.text, "tanh(") == 0);
    CHECK(count_of(r.text, " logistic(") == 1);
  }
  SECTION("a tanh read elsewhere stays (the rewrite would compute both)") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (y: f32[8]) -> (f32[8], f32[8]) {
  %y = f32[8] parameter(0)
  %t = f32[8] tanh(%y)
  %one = f32[] constant(1)
  %ob = f32[8] broadcast(%one), broadcast_dimensions={}
  %s = f32[8] add(%ob, %t)
  ROOT %r = (f32[8], f32[8]) tuple(%s, %t)
}
)");
  }
  SECTION("(A c1) c2 folds only when c2 is a power of two; (c1 A)(c2 B) only when c1 c2 = 1") {
    auto r = simplify(R"(HloModule m
ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], f32[4], f32[4], f32[4]) {
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  %c3 = f32[] constant(3)
  %c3b = f32[4] broadcast(%c3), broadcast_dimensions={}
  %c4 = f32[] constant(4)
  %c4b = f32[4] broadcast(%c4), broadcast_dimensions={}
  %c7 = f32[] constant(7)
  %c7b = f32[4] broadcast(%c7), broadcast_dimensions={}
  %c025 = f32[] constant(0.25)
  %c025b = f32[4] broadcast(%c025), broadcast_dimensions={}
  %a3 = f32[4] multiply(%a, %c3b)
  %folds = f32[4] multiply(%a3, %c4b)
  %keeps = f32[4] multiply(%a3, %c7b)
  %a4 = f32[4] multiply(%c4b, %a)
  %b025 = f32[4] multiply(%b, %c025b)
  %cancels = f32[4] multiply(%a4, %b025)
  %a7 = f32[4] multiply(%c7b, %a)
  %stays = f32[4] multiply(%a7, %b025)
  ROOT %r = (f32[4], f32[4], f32[4], f32[4]) tuple(%folds, %keeps, %cancels, %stays)
}
)");
    CHECK_THAT(r.text, Contains("constant(12)"));
    CHECK_THAT(r.text, Contains("multiply(%a, %b)"));
    CHECK_THAT(r.text, Contains("multiply(%a3, %c7b)"));
    CHECK_THAT(r.text, Contains("multiply(%a7, %b025)"));
  }
}

// === constant folding ==========================================================================================

TEST_CASE("constant folding: small all-constant instructions become constants", "[hlo]") {
  auto r = run(R"(HloModule m
ENTRY %main (p: f32[3]) -> f32[3] {
  %p = f32[3] parameter(0)
  %a = f32[3] constant({1, 2, 3})
  %b = f32[3] constant({0.5, 0.25, 4})
  %m = f32[3] multiply(%a, %b)
  %e = f32[3] negate(%m)
  ROOT %r = f32[3] add(%p, %e)
}
)", passes<ConstantFolding, DeadCodeElimination>());
  CHECK(r.changed);
  CHECK_THAT(r.text, Contains("f32[3]{0} constant({-0.5, -0.5, -12})"));
  CHECK(count_of(r.text, "multiply(") == 0);
  SECTION("must not change: broadcasts, iotas, results over the size cap, non-constant operands") {
    check_unchanged<ConstantFolding>(R"(HloModule m
ENTRY %main (p: f32[3]) -> (f32[2000], s32[4], f32[2000], f32[3]) {
  %p = f32[3] parameter(0)
  %k = f32[] constant(1)
  %b = f32[2000] broadcast(%k), broadcast_dimensions={}
  %i = s32[4] iota(), iota_dimension=0
  %e = f32[2000] exponential(%b)
  %n = f32[3] negate(%p)
  ROOT %t = (f32[2000], s32[4], f32[2000], f32[3]) tuple(%b, %i, %e, %n)
}
)");
  }
}

// === pipeline, dumps, traces, jit ================================================================================

namespace {
/// A deliberately broken pass: points the root at an instruction of another shape.
class BreakingPass : public HloPass {
 public:
  std::string_view name() const override { return "breaker"; }
  bool run(Module& m) override {
    auto* c = m.entry;
    auto* k = c->insert_constant_before(c->root, Literal::make(DType::int32, {7}));
    c->root->operands[0] = k;
    return true;
  }
};
}  // namespace

TEST_CASE("pipeline: the verifier runs after every pass and names the one that broke the module", "[hlo]") {
  auto m = parse(kSmall);
  std::vector<std::unique_ptr<HloPass>> ps;
  ps.push_back(std::make_unique<DeadCodeElimination>());
  ps.push_back(std::make_unique<BreakingPass>());
  PipelineOptions opts;
  opts.verify = true;
  try {
    run_passes(*m, ps, opts);
    FAIL("the broken module was not caught");
  } catch (const CompileError& e) {
    CHECK_THAT(std::string(e.what()), Contains("after pass 1 (breaker)"));
  }
}

TEST_CASE("pipeline: per-pass dumps and rule-labelled trace lines", "[hlo]") {
  auto dir = std::filesystem::temp_directory_path() / "jitx_hlo_pass_dumps";
  std::filesystem::remove_all(dir);
  auto m = parse(R"(HloModule m
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %one = f32[] constant(1)
  %b1 = f32[4] broadcast(%one), broadcast_dimensions={}
  %a = f32[4] multiply(%p, %b1)
  ROOT %n = f32[4] negate(%a)
}
)");
  std::vector<std::string> lines;
  set_log_sink([&](const std::string& s) { lines.push_back(s); });
  set_pass_trace(true);
  PipelineOptions opts;
  opts.verify = true;
  opts.dump_prefix = (dir / "m.0000.pass").string();
  optimize(*m, opts);
  set_pass_trace(false);
  set_log_sink(nullptr);
  auto first = dir / "m.0000.pass.00.algsimp.hlo";
  REQUIRE(std::filesystem::exists(first));
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  CHECK(files == optimization_passes().size());
  std::ifstream f(first);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Contains("negate(%p)"));
  CHECK(print_hlo(*parse(text)) == text);  // a dump is valid HLO text
  bool found = false;
  for (auto& l : lines) found = found || l == "[hlo algsimp] %a: A * 1 => A (now %p)";
  CHECK(found);
  std::filesystem::remove_all(dir);
}

TEST_CASE("jit: Lowered keeps the lowered module, Compiled prints and runs the optimised one", "[hlo]") {
  auto f = jit([](Array x) { return numpy::transpose(numpy::transpose(x)) * 1.0 + 0.0; });
  Array x = array<float>({1.5f, -2.0f, 3.25f, 4.0f}).reshape({2, 2});
  auto lowered = f.lower(x);
  CHECK_THAT(lowered.as_text(), Contains("stablehlo.transpose"));
  auto compiled = lowered.compile();
  std::string text = compiled.as_text();
  INFO(text);
  CHECK(count_of(text, "transpose(") == 0);
  CHECK(count_of(text, "multiply(") == 0);
  CHECK(count_of(text, "add(") == 0);
  CHECK(print_hlo(*parse(text)) == text);
  CHECK(compiled(x).to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.25f, 4.0f});
  CHECK(f(x).to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.25f, 4.0f});
}

TEST_CASE("jit: the optimised MLP block (gelu, layer norm) computes what the eager ops do", "[hlo]") {
  auto block = [](Array x, Array w, Array b) {
    Array h = nn::gelu(numpy::matmul(x, w) + b);
    Array mu = numpy::mean(h, {-1}, true);
    Array d = h - mu;
    Array var = numpy::mean(d * d, {-1}, true);
    return d * lax::rsqrt(var + 1e-5);
  };
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1, 1);
  auto values = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& e : v) e = u(rng);
    return v;
  };
  Array x = array<float>(values(8 * 16)).reshape({8, 16});
  Array w = array<float>(values(16 * 16)).reshape({16, 16});
  Array b = array<float>(values(16));
  auto eager = block(x, w, b).to_vector<float>();
  auto compiled = jit(block).lower(x, w, b).compile();
  INFO(compiled.as_text());
  auto got = compiled(x, w, b).to_vector<float>();
  REQUIRE(got.size() == eager.size());
  const jitx::testing::Tol t = jitx::testing::tol(DType::float32, jitx::testing::Bound::kSum);  // a dot and row sums, reassociated
  for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == Approx(eager[k]).epsilon(t.rtol).margin(t.atol));
}
