// Layout assignment, the scheduling pass, the whole pipeline, and the XLA article's MLP block at full size.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>
#include <unordered_set>

#include "core/trace.h"
#include "hlo/analysis/buffer_assignment.h"
#include "hlo/analysis/cost_analysis.h"
#include "hlo/passes/fusion.h"
#include "hlo/passes/layout_assignment.h"
#include "hlo/passes/pipeline.h"
#include "hlo/passes/scheduling.h"
#include "hlo_test_util.h"
#include "jitx/jitx.h"
#include "lowering/lower.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;

namespace {
constexpr double kMiB = 1024.0 * 1024.0;

std::shared_ptr<Module> lower_fn(const std::function<Array(const std::vector<Array>&)>& f,
                                 const std::vector<ShapedArray>& avals) {
  auto cj = detail::trace_to_jaxpr("block", avals, [&](const std::vector<Array>& a) { return std::vector<Array>{f(a)}; });
  return detail::lower_jaxpr(cj, "jit_block");
}

Array block(const std::vector<Array>& a) {
  Array h = nn::gelu(jnp::matmul(a[0], a[1]) + a[2]);
  Array mu = jnp::mean(h, {-1}, true);
  Array var = jnp::mean(jnp::square(h - mu), {-1}, true);
  return (h - mu) * lax::rsqrt(var + 1e-5);
}

/// A top-level instruction that runs as a kernel (not a parameter, constant, bitcast or tuple plumbing).
bool is_kernel(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple: case Opcode::kGetTupleElement:
    case Opcode::kReshape: case Opcode::kBitcastConvert:
      return false;
    default:
      return !is_layout_bitcast(i);
  }
}
bool contains_dot(const Instruction& i) {
  if (i.opcode == Opcode::kDot) return true;
  if (i.opcode != Opcode::kFusion) return false;
  for (auto& f : i.called[0]->instructions)
    if (f->opcode == Opcode::kDot) return true;
  return false;
}

/// The kernels after the dot: every kernel that depends on the one holding the dot; plus the dot's epilogue
/// when it is fused into the dot's kernel (it is work after the dot too).
struct Tail {
  const Instruction* dot_kernel = nullptr;
  std::vector<const Instruction*> kernels;
  bool epilogue_in_dot = false;
  double bytes = 0;  // memory traffic of the tail
  size_t count() const { return kernels.size() + (epilogue_in_dot ? 1 : 0); }
};

Tail tail_of(const Module& m) {
  Tail t;
  std::unordered_set<const Instruction*> after;
  for (auto& up : m.entry->instructions) {
    const Instruction* i = up.get();
    if (!t.dot_kernel && is_kernel(*i) && contains_dot(*i)) {
      t.dot_kernel = i;
      after.insert(i);
      continue;
    }
    bool dep = false;
    for (auto* o : i->operands) dep = dep || after.count(o);
    if (!dep) continue;
    after.insert(i);
    if (is_kernel(*i)) t.kernels.push_back(i);
  }
  REQUIRE(t.dot_kernel);
  auto cost = analyze_cost(m);
  std::unordered_set<std::string> names;
  for (auto* k : t.kernels) names.insert(k->name);
  for (auto& ic : cost.per_instruction) {
    if (names.count(ic.name)) t.bytes += ic.bytes_accessed;
    if (ic.name == t.dot_kernel->name && t.dot_kernel->opcode == Opcode::kFusion) {
      // The epilogue's share: what the fused kernel moves beyond a bare dot (its operands and its result).
      const Instruction* dot = nullptr;
      for (auto& f : t.dot_kernel->called[0]->instructions)
        if (f->opcode == Opcode::kDot) dot = f.get();
      double bare = 0;
      for (auto* o : dot->operands) bare += static_cast<double>(o->shape.byte_size());
      bare += static_cast<double>(dot->shape.byte_size());
      t.bytes += std::max(0.0, ic.bytes_accessed - bare);
      t.epilogue_in_dot = t.dot_kernel->called[0]->instructions.size() > 1 + t.dot_kernel->operands.size();
    }
  }
  return t;
}
}  // namespace

// === layout assignment ==========================================================================================

TEST_CASE("layout: a transpose feeding a minor-dimension reduce becomes a layout change; a copy for the rest",
          "[fusion]") {
  auto r = run_pass<LayoutAssignment>(R"(HloModule transpose_reduce
ENTRY %main (x: f32[4,6]) -> (f32[4], f32[6,4]) {
  %x = f32[4,6] parameter(0)
  %t = f32[6,4] transpose(%x), permutation={1,0}
  %z = f32[] constant(0)
  %r = f32[4] reduce(%t, %z), dimensions={0}, reducer=add
  %n = f32[6,4] negate(%t)
  ROOT %out = (f32[4], f32[6,4]) tuple(%r, %n)
}
)");
  CHECK(r.changed);
  check_lines(r.text, R"(
    %t = f32[6,4]{0,1} transpose(%x), permutation={1,0}
    %copy
    = f32[6,4]{1,0} copy(%t)
    reduce(%t, %z)
    negate(%copy
    ROOT %out = (f32[4]{0}, f32[6,4]{1,0}) tuple()");
  const Instruction* t = r.module->entry->find("t");
  CHECK(is_layout_bitcast(*t));
  // Buffer assignment and cost analysis see the transpose as free now.
  auto ba = assign_buffers(*r.module);
  CHECK(ba.value_of.at(t) == ba.value_of.at(r.module->entry->parameters[0]));
}

TEST_CASE("layout: consumers that disagree share one copy; a returned transpose stays row-major", "[fusion]") {
  auto r = run_pass<LayoutAssignment>(R"(HloModule transpose_dot
ENTRY %main (x: f32[4,6], w: f32[4,3]) -> (f32[6,4], f32[6,3], f32[6,4]) {
  %x = f32[4,6] parameter(0)
  %w = f32[4,3] parameter(1)
  %t = f32[6,4] transpose(%x), permutation={1,0}
  %d = f32[6,3] dot(%t, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %e = f32[6,4] exponential(%t)
  ROOT %out = (f32[6,4], f32[6,3], f32[6,4]) tuple(%t, %d, %e)
}
)");
  CHECK(is_layout_bitcast(*r.module->entry->find("t")));
  CHECK(count_of(r.text, " copy(") == 1);
  check_lines(r.text, R"(
    dot(%t, %w)
    exponential(%copy
    ROOT %out = (f32[6,4]{1,0}, f32[6,3]{1,0}, f32[6,4]{1,0}) tuple(%copy)");
  auto root = run_pass<LayoutAssignment>(R"(HloModule transpose_root
ENTRY %main (x: f32[4,6]) -> f32[6,4] {
  %x = f32[4,6] parameter(0)
  %z = f32[] constant(0)
  ROOT %t = f32[6,4] transpose(%x), permutation={1,0}
  %r = f32[4] reduce(%t, %z), dimensions={0}, reducer=add
}
)");
  CHECK(root.module->entry->root->opcode == Opcode::kCopy);
  for (auto& c : {r.module.get(), root.module.get()}) {
    for (auto* p : c->entry->parameters) CHECK(p->shape.layout.empty());
    CHECK(c->entry->root->shape.layout.empty());
  }
}

TEST_CASE("layout: a loop fusion feeding a GEMM writes the operand layout the GEMM reads fastest", "[fusion]") {
  // A fusion whose result is a function of a transposed operand: the GEMM's preferred [K, N] order (column-major
  // [N, K]) is also the operand's memory order.
  auto r = run_pass<LayoutAssignment>(R"(HloModule gemm_operand
%fused_computation (param_0: f32[3,5]) -> f32[5,3] {
  %param_0 = f32[3,5] parameter(0)
  %t = f32[5,3] transpose(%param_0), permutation={1,0}
  %e = f32[5,3] exponential(%t)
  ROOT %n = f32[5,3] negate(%e)
}

ENTRY %main (x: f32[4,3], w: f32[3,5]) -> f32[4,5] {
  %x = f32[4,3] parameter(0)
  %w = f32[3,5] parameter(1)
  %f = f32[5,3] fusion(%w), kind=kLoop, calls=%fused_computation
  ROOT %d = f32[4,5] dot(%x, %f), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={1}
}
)");
  check_lines(r.text, R"(
    ROOT %n = f32[5,3]{0,1} negate(%e)
    %f = f32[5,3]{0,1} fusion(%w), kind=kLoop)");
  // The lhs likewise: gelu(x.T)-like [M, K] fusions of a [K, M] array are written column-major (the GEMM reads a
  // transposed lhs without a copy), so the fusion reads and writes in the same order.
  auto l = run_pass<LayoutAssignment>(R"(HloModule gemm_lhs
%fused_computation (param_0: f32[3,4]) -> f32[4,3] {
  %param_0 = f32[3,4] parameter(0)
  %t = f32[4,3] transpose(%param_0), permutation={1,0}
  ROOT %e = f32[4,3] exponential(%t)
}

ENTRY %main (x: f32[3,4], w: f32[3,5]) -> f32[4,5] {
  %x = f32[3,4] parameter(0)
  %w = f32[3,5] parameter(1)
  %f = f32[4,3] fusion(%x), kind=kLoop, calls=%fused_computation
  ROOT %d = f32[4,5] dot(%f, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)");
  check_lines(l.text, R"(
    %f = f32[4,3]{0,1} fusion(%x), kind=kLoop)");
}

TEST_CASE("layout: a loop fusion feeding a GEMM keeps the order it reads its operand in", "[fusion]") {
  // exp(w) read row-major and fed as a [N, K] rhs: writing it column-major would stride through w, and the GEMM
  // takes [N, K] as a transposed [K, N] without a copy.
  check_unchanged<LayoutAssignment>(R"(HloModule gemm_operand_row_major
%fused_computation (param_0: f32[5,3]) -> f32[5,3] {
  %param_0 = f32[5,3] parameter(0)
  %e = f32[5,3] exponential(%param_0)
  ROOT %n = f32[5,3] negate(%e)
}

ENTRY %main (x: f32[4,3], w: f32[5,3]) -> f32[4,5] {
  %x = f32[4,3] parameter(0)
  %w = f32[5,3] parameter(1)
  %f = f32[5,3] fusion(%w), kind=kLoop, calls=%fused_computation
  ROOT %d = f32[4,5] dot(%x, %f), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={1}
}
)");
}

TEST_CASE("layout: must not change", "[fusion]") {
  // Transposes whose consumers all want row-major (elementwise, reshape, the result) keep moving data.
  check_unchanged<LayoutAssignment>(R"(HloModule keep
ENTRY %main (x: f32[4,6]) -> f32[24] {
  %x = f32[4,6] parameter(0)
  %t = f32[6,4] transpose(%x), permutation={1,0}
  %n = f32[6,4] negate(%t)
  ROOT %r = f32[24] reshape(%n)
}
)");
  check_unchanged<LayoutAssignment>(R"(HloModule no_transpose
ENTRY %main (x: f32[4,6]) -> f32[4] {
  %x = f32[4,6] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[4] reduce(%x, %z), dimensions={1}, reducer=add
}
)");
}

// === scheduling =================================================================================================

TEST_CASE("scheduling: the pass reports peak bytes and never raises them", "[fusion]") {
  const char* text = R"(HloModule wide
ENTRY %main (x: f32[1024]) -> f32[] {
  %x = f32[1024] parameter(0)
  %a = f32[1024] exponential(%x)
  %b = f32[1024] sine(%x)
  %c = f32[1024] cosine(%x)
  %z = f32[] constant(0)
  %ra = f32[] reduce(%a, %z), dimensions={0}, reducer=add
  %rb = f32[] reduce(%b, %z), dimensions={0}, reducer=add
  %rc = f32[] reduce(%c, %z), dimensions={0}, reducer=add
  %s = f32[] add(%ra, %rb)
  ROOT %t = f32[] add(%s, %rc)
}
)";
  auto r = run_pass<Scheduling>(text);
  CHECK(r.changed);
  std::vector<std::string> lines;
  set_log_sink([&](const std::string& s) { lines.push_back(s); });
  set_pass_trace(true);
  auto m = parse(text);
  Scheduling s;
  s.run(*m);
  set_pass_trace(false);
  set_log_sink(nullptr);
  CHECK(s.peak_after < s.peak_before);
  CHECK(s.peak_before >= 3 * 4096);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Matchers::Contains(fmt::format("[hlo schedule] peak live bytes {} -> {}", s.peak_before,
                                                             s.peak_after)));
  check_unchanged<Scheduling>(print_hlo(*m));  // already the best order
}

// === the pipeline ===============================================================================================

TEST_CASE("pipeline: fusion, layout and scheduling keep the interpreter's numbers", "[fusion]") {
  auto m = lower_fn(
      [](const std::vector<Array>& a) {
        Array y = jnp::matmul(jnp::transpose(a[0]), a[1]);  // dot with a transposed operand
        Array s = nn::softmax(jnp::tanh(y) * 2.0, -1);      // a row fusion around max and sum
        Array t = jnp::sum(jnp::transpose(a[1]), {0});       // a reduce of a transpose
        return s + jnp::reshape(jnp::sum(s * s, {1}), {-1, 1}) + jnp::sum(t);
      },
      {{{6, 5}, float32}, {{6, 7}, float32}});
  auto opt = m->clone();
  PipelineOptions po;
  po.verify = true;
  CHECK(optimize(*opt, po));
  check_same_values(*m, *opt);
  std::string text = print_hlo(*opt);
  INFO(text);
  CHECK(count_of(text, "fusion(") >= 2);
  for (auto* p : opt->entry->parameters) CHECK(p->shape.layout.empty());
  CHECK(opt->entry->root->shape.layout.empty());
  REQUIRE(print_hlo(*parse_hlo(text)) == text);
}

TEST_CASE("pipeline: the article's MLP block at bf16[8192,4096] (module only, no execution)", "[fusion]") {
  const int64_t M = 8192, K = 4096, N = 4096;
  auto lowered = lower_fn(block, {{{M, K}, bfloat16}, {{K, N}, bfloat16}, {{N}, bfloat16}});
  auto opt = lowered->clone();
  PipelineOptions po;
  po.verify = true;
  optimize(*opt, po);
  std::string text = print_hlo(*opt);
  INFO(text);

  Tail before = tail_of(*lowered), after = tail_of(*opt);
  auto ba_before = assign_buffers(*lowered), ba_after = assign_buffers(*opt);
  WARN(fmt::format("MLP block tail after the dot: {} kernels, {:.2f} MiB unfused; {} kernels, {:.2f} MiB fused; "
                   "temp {:.1f} MiB fused vs {:.1f} MiB of unfused intermediates ({:.1f} MiB packed unfused)",
                   before.count(), before.bytes / kMiB, after.count(), after.bytes / kMiB,
                   ba_after.temp_size / kMiB, ba_before.temp_values_total / kMiB, ba_before.temp_size / kMiB));
  WARN(analyze_cost(*opt).str());
  // Fusion: bias + GELU in the dot's epilogue, layer norm in one row kernel.
  CHECK(count_of(text, "kind=kOutput") == 1);
  CHECK(count_of(text, "kind=kRow") == 1);
  CHECK(after.count() <= 3);
  CHECK(before.count() > 10);
  // Memory traffic of the tail: the article's 128-192 MiB, not over a gigabyte as op-by-op.
  CHECK(after.bytes >= 128 * kMiB);
  CHECK(after.bytes <= 192 * kMiB);
  CHECK(before.bytes > 1024 * kMiB);
  // Buffers: the temp arena is below the sum of the unfused intermediates.
  CHECK(ba_after.temp_size < ba_before.temp_values_total);
  CHECK(ba_after.argument_size == (M * K + K * N + N) * 2);
  CHECK(ba_after.output_size == M * N * 2);
}

TEST_CASE("jit: Compiled analyses describe the optimised module; the fused block gives eager's numbers", "[fusion]") {
  const int64_t M = 8, K = 16, N = 32;
  std::vector<float> xs(M * K), ws(K * N), bs(N);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.37f * static_cast<float>(i));
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = 0.25f * std::cos(0.11f * static_cast<float>(i));
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = 0.01f * static_cast<float>(i);
  Array x = array(xs, {M, K}), w = array(ws, {K, N}), b = array(bs, {N});
  auto f = [](Array x, Array w, Array b) { return block({x, w, b}); };
  auto compiled = jit(f, {.name = "block"}).lower(x, w, b).compile();
  std::string text = compiled.as_text();
  INFO(text);
  CHECK(count_of(text, "kind=kOutput") == 1);
  CHECK(count_of(text, "kind=kRow") == 1);
  CHECK_THAT(compiled.cost_analysis_text(), Catch::Matchers::Contains("fusion(kRow)"));
  // bytes accessed: x, w, b read once, the dot's result written and read once, the output written once.
  double expect = 4.0 * (M * K + K * N + N) + 4.0 * M * N * 3;
  CHECK(compiled.cost_analysis().at("bytes accessed") == expect);
  auto mem = compiled.memory_analysis();
  CHECK(mem.temp_size_in_bytes <= 4 * M * N + 64);
  auto got = compiled(x, w, b).to_vector<float>();
  auto want = f(x, w, b).to_vector<float>();
  REQUIRE(got.size() == want.size());
  const jitx::testing::Tol t = jitx::testing::tol(DType::float32, jitx::testing::Bound::kSum);  // a dot and row sums, reassociated
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(t.rtol).margin(t.atol));
}

TEST_CASE("dumps: JITX_DUMP_TO writes the optimised HLO and its buffer assignment", "[fusion]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / fmt::format("jitx_fusion_dump_{}", ::getpid());
  fs::remove_all(dir);
  std::string saved = config().dump_to;
  config().dump_to = dir.string();
  Array x = array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto f = [](Array x) { return jnp::exp(x) * 2.0 - jnp::sum(x, {1}, true); };
  auto out = jit(f, {.name = "dumped"})(x);
  out.block_until_ready();
  config().dump_to = saved;
  std::string ba_text, hlo_text;
  for (auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path());
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (e.path().string().ends_with(".buffer_assignment.txt")) ba_text = s;
    if (e.path().string().ends_with(".after_optimizations.hlo")) hlo_text = s;
  }
  fs::remove_all(dir);
  CHECK_THAT(ba_text, Catch::Matchers::StartsWith("BufferAssignment: arguments 24 B, outputs 24 B"));
  CHECK_THAT(hlo_text, Catch::Matchers::Contains("fusion("));
}
