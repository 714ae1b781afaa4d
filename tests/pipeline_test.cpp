// The HLO pipeline: the verifier after every pass, per-pass dumps and rule-labelled trace lines, fusion, layout and
// scheduling keeping the interpreter's numbers, the XLA article's MLP block at full size (module only), and what
// jit's Lowered and Compiled show of it (the optimised module, its analyses, JITX_DUMP_TO).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>
#include <unordered_set>

#include "core/trace.h"
#include "hlo/analysis/buffer_assignment.h"
#include "hlo/analysis/cost_analysis.h"
#include "hlo/passes/dce.h"
#include "hlo/passes/pipeline.h"
#include "hlo_test_util.h"
#include "jitx/jitx.h"
#include "lowering/lower.h"
#include "tolerances.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;
using Catch::Matchers::Contains;
using detail::Literal;

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
  REQUIRE(std::filesystem::exists(dir / "m.0000.pass.00.simplify-fp-conversions.hlo"));
  auto first = dir / "m.0000.pass.01.algsimp.hlo";
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
  const jitx::testing::Tol t =
      jitx::testing::tol(DType::float32, jitx::testing::Bound::kSum);  // a dot and row sums, reassociated
  for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == Approx(eager[k]).epsilon(t.rtol).margin(t.atol));
}

namespace {
constexpr double kMiB = 1024.0 * 1024.0;

std::shared_ptr<Module> lower_fn(const std::function<Array(const std::vector<Array>&)>& f,
                                 const std::vector<ShapedArray>& avals) {
  auto cj =
      detail::trace_to_jaxpr("block", avals, [&](const std::vector<Array>& a) { return std::vector<Array>{f(a)}; });
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

TEST_CASE("jit: Compiled analyses describe the optimised module, the fused block gives eager's numbers", "[fusion]") {
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
  const jitx::testing::Tol t =
      jitx::testing::tol(DType::float32, jitx::testing::Bound::kSum);  // a dot and row sums, reassociated
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
