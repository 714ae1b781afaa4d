// The CUDA backend's kernels run on a GPU against the interpreter on random inputs: elementwise primitives, loop,
// row (warp and block), column and whole-array reductions, multi-output fusions; plus the memory-bound benchmarks
// (GELU chain, softmax, layer norm against the device's copy bandwidth). Each case skips, printing why, where
// there is no CUDA driver or device (tools/gpu_check.sh runs them on a GPU machine: "[gpu]").
#include <catch2/catch.hpp>

#ifdef JITX_HAS_CUDA
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "backend_test_util.h"
#include "backends/cuda/cublaslt.h"
#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_runtime.h"
#include "cuda_executor_cases.h"
#include "jitx/cuda.h"
#include "jitx/jitx.h"

using namespace jitx;
using namespace jitx::testing;
using detail::Literal;

namespace {
bool gpu_present() { return cuda_unavailable_reason().empty(); }
bool have_gpu() {
  if (gpu_present()) return true;
  WARN("skipped the GPU runs (the modules are still parsed and verified): " << cuda_unavailable_reason());
  return false;
}

// The module's instruction `name` (whose operands are the entry's parameters) on the GPU against the interpreter.
void check_on_gpu(const std::string& text, const std::string& name = "r", double lo = -3, double hi = 3) {
  INFO(text);
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  const hlo::Instruction* inst = m->entry->find(name);
  REQUIRE(inst);
  if (!gpu_present()) return;
  std::vector<Literal> args;
  for (auto* p : m->entry->parameters) args.push_back(random_literal(p->shape, lo, hi));
  std::vector<Literal> operands;
  for (auto* o : inst->operands) {
    REQUIRE(o->opcode == hlo::Opcode::kParameter);
    operands.push_back(args.at(static_cast<size_t>(o->parameter_number)));
  }
  std::vector<hlo::Shape> outs;
  if (inst->shape.is_tuple)
    outs = inst->shape.tuple_shapes;
  else
    outs.push_back(inst->shape);
  cuda::LoadedKernel probe(cuda::compile_kernel(*inst, cuda::GpuTarget::sm80()));
  cuda::LoadedKernel k(cuda::compile_kernel(*inst, cuda::target_for(probe.compute_capability())));
  std::vector<Literal> got = k.run(operands, outs);
  std::vector<Literal> want = run(interp(), m, args);  // the entry's outputs: the instruction's, flattened
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) compare(got[i], want[i], text);
}

// A module whose instruction %r is a fusion of `body` over one parameter; outs: its output shapes (a tuple when
// several), which the entry returns as a flat tuple.
std::string fusion_module(DType d, const std::vector<int64_t>& in, const std::string& body,
                          const std::vector<std::string>& outs, const std::string& kind) {
  auto s = shape_text(d, in);
  std::string fs = outs.size() == 1 ? outs[0] : fmt::format("({})", fmt::join(outs, ", "));
  std::string flat = fmt::format("({})", fmt::join(outs, ", ")), gtes, names;
  if (outs.size() == 1) names = "%r";
  for (size_t i = 0; outs.size() > 1 && i < outs.size(); ++i) {
    gtes += fmt::format("  %g{0} = {1} get-tuple-element(%r), index={0}\n", i, outs[i]);
    names += fmt::format("{}%g{}", i ? ", " : "", i);
  }
  return fmt::format(
      "HloModule m\n\n%fused (a: {0}) -> {1} {{\n  %a = {0} parameter(0)\n{2}}}\n\n"
      "ENTRY %main (a: {0}) -> {3} {{\n  %a = {0} parameter(0)\n"
      "  %r = {1} fusion(%a), kind={4}, calls=%fused\n{5}  ROOT %t = {3} tuple({6})\n}}\n",
      s, fs, body, flat, kind, gtes, names);
}
}  // namespace

TEST_CASE("cuda gpu: elementwise primitives against the interpreter", "[cuda][gpu]") {
  have_gpu();
  struct U {
    const char* op;
    double lo, hi;
  };
  const std::vector<U> ops{{"abs", -3, 3},
                           {"floor", -3, 3},
                           {"round-nearest-even", -3, 3},
                           {"exponential", -10, 10},
                           {"exponential-minus-one", -3, 3},
                           {"log", 0.01, 100},
                           {"log-plus-one", -0.9, 10},
                           {"sqrt", 0, 9},
                           {"rsqrt", 0.1, 9},
                           {"cbrt", -8, 8},
                           {"tanh", -5, 5},
                           {"logistic", -10, 10},
                           {"sine", -20, 20},
                           {"cosine", -20, 20},
                           {"tan", -1.5, 1.5},
                           {"erf", -4, 4},
                           {"erfc", -3, 3},
                           {"lgamma", 0.1, 8},
                           {"atan", -5, 5},
                           {"sinh", -4, 4},
                           {"asinh", -5, 5},
                           {"atanh", -0.99, 0.99}};
  for (DType d : kFloats) {
    auto s = shape_text(d, {300, 33});
    for (auto& u : ops) check_on_gpu(one_op(s, u.op, {s}), "r", u.lo, u.hi);
    for (const char* op : {"add", "multiply", "divide", "remainder", "maximum", "atan2"})
      check_on_gpu(one_op(s, op, {s, s}));
    check_on_gpu(one_op(s, "power", {s, s}), "r", 0.1, 3);
  }
  for (DType d : kInts) {
    auto s = shape_text(d, {5, 41});
    for (const char* op : {"add", "multiply", "divide", "remainder", "maximum", "shift-left", "and"})
      check_on_gpu(one_op(s, op, {s, s}), "r", is_unsigned_integer(d) ? 0 : -70, 70);
  }
}

TEST_CASE("cuda gpu: reductions (row by warp and by block, column, middle, whole) and softmax", "[cuda][gpu]") {
  have_gpu();
  auto reduce = [](DType d, const std::vector<int64_t>& in, const std::vector<int64_t>& out, const std::string& dims,
                   const std::string& r) {
    return fmt::format(
        "HloModule m\n\nENTRY %main (p: {0}) -> ({1}) {{\n  %p = {0} parameter(0)\n  %z = {2} constant({4})\n"
        "  %r = {1} reduce(%p, %z), dimensions={{{3}}}, reducer={5}\n  ROOT %t = ({1}) tuple(%r)\n}}\n",
        shape_text(d, in), shape_text(d, out), shape_text(d, {}), dims, r == "mul" ? "1" : "0", r);
  };
  for (DType d : {DType::float32, DType::float64, DType::bfloat16, DType::int32})
    for (const char* r : {"add", "max", "min"}) {
      check_on_gpu(reduce(d, {6, 700}, {6}, "1", r));
      check_on_gpu(reduce(d, {6, 5000}, {6}, "1", r));
      check_on_gpu(reduce(d, {700, 6}, {6}, "0", r));
      check_on_gpu(reduce(d, {5, 40, 7}, {5, 7}, "1", r));
      check_on_gpu(reduce(d, {5, 40, 7}, {}, "0,1,2", r));
    }
  for (DType d : {DType::float32, DType::bfloat16, DType::float16})
    for (int64_t n : {int64_t{100}, int64_t{4000}}) check_on_gpu(softmax_module(d, 37, n), "f");
}

TEST_CASE("cuda gpu: multi-output loop and row fusions", "[cuda][gpu]") {
  have_gpu();
  check_on_gpu(fusion_module(DType::float32, {64, 300},
                             "  %e = f32[64,300] exponential(%a)\n  %t = f32[64,300] tanh(%a)\n"
                             "  ROOT %o = (f32[64,300], f32[64,300]) tuple(%e, %t)\n",
                             {"f32[64,300]", "f32[64,300]"}, "kLoop"));
  check_on_gpu(fusion_module(DType::float32, {64, 300},
                             "  %z = f32[] constant(0)\n  %s = f32[64] reduce(%a, %z), dimensions={1}, reducer=add\n"
                             "  %sb = f32[64,300] broadcast(%s), broadcast_dimensions={0}\n"
                             "  %c = f32[64,300] subtract(%a, %sb)\n  ROOT %o = (f32[64], f32[64,300]) tuple(%s, %c)\n",
                             {"f32[64]", "f32[64,300]"}, "kRow"));
}

TEST_CASE("cuda gpu: memory-bound kernels against the copy bandwidth", "[cuda][gpu][bench]") {
  // 64 MiB of f32 in: GELU (tanh form) elementwise, softmax and layer norm over rows of 4096.
  const int64_t rows = 4096, cols = 4096;
  const std::string s = fmt::format("f32[{},{}]", rows, cols), v = fmt::format("f32[{}]", rows);
  const std::string gelu = fmt::format(
      "  %c = f32[] constant(0.7978845608)\n  %k = f32[] constant(0.044715)\n  %h = f32[] constant(0.5)\n"
      "  %one = f32[] constant(1)\n  %cb = {0} broadcast(%c), broadcast_dimensions={{}}\n"
      "  %kb = {0} broadcast(%k), broadcast_dimensions={{}}\n  %hb = {0} broadcast(%h), broadcast_dimensions={{}}\n"
      "  %ob = {0} broadcast(%one), broadcast_dimensions={{}}\n  %x2 = {0} multiply(%a, %a)\n"
      "  %x3 = {0} multiply(%x2, %a)\n  %kx3 = {0} multiply(%kb, %x3)\n  %in = {0} add(%a, %kx3)\n"
      "  %u = {0} multiply(%cb, %in)\n  %t = {0} tanh(%u)\n  %p1 = {0} add(%t, %ob)\n  %ha = {0} multiply(%hb, %a)\n"
      "  ROOT %y = {0} multiply(%ha, %p1)\n",
      s);
  const std::string norm = fmt::format(
      "  %z = f32[] constant(0)\n  %n = f32[] constant({2})\n  %eps = f32[] constant(1e-5)\n"
      "  %s = {1} reduce(%a, %z), dimensions={{1}}, reducer=add\n  %nb = {1} broadcast(%n), broadcast_dimensions={{}}\n"
      "  %m = {1} divide(%s, %nb)\n  %mb = {0} broadcast(%m), broadcast_dimensions={{0}}\n  %c = {0} subtract(%a, "
      "%mb)\n"
      "  %c2 = {0} multiply(%c, %c)\n  %q = {1} reduce(%c2, %z), dimensions={{1}}, reducer=add\n"
      "  %var = {1} divide(%q, %nb)\n  %eb = {1} broadcast(%eps), broadcast_dimensions={{}}\n"
      "  %ve = {1} add(%var, %eb)\n"
      "  %r = {1} rsqrt(%ve)\n  %rb = {0} broadcast(%r), broadcast_dimensions={{0}}\n"
      "  ROOT %y = {0} multiply(%c, %rb)\n",
      s, v, cols);
  struct K {
    const char* name;
    std::string text, inst;
  };
  std::vector<K> ks{{"gelu", fusion_module(DType::float32, {rows, cols}, gelu, {s}, "kLoop"), "r"},
                    {"softmax", softmax_module(DType::float32, rows, cols), "f"},
                    {"layer_norm", fusion_module(DType::float32, {rows, cols}, norm, {s}, "kRow"), "r"}};
  const int64_t bytes = rows * cols * 4;
  for (auto& k : ks) {  // the modules parse, verify and compile here too
    auto m = hlo::parse_hlo(k.text);
    hlo::verify(*m);
    REQUIRE(m->entry->find(k.inst));
    CHECK(cuda::compile_kernel(*m->entry->find(k.inst), cuda::GpuTarget::sm90()).plan.kind ==
          (std::string(k.name) == "gelu" ? cuda::KernelKind::kLoop : cuda::KernelKind::kRowReduction));
  }
  if (!have_gpu()) return;
  double copy = cuda::copy_time_ms(bytes, 20);
  double copy_gbs = 2.0 * static_cast<double>(bytes) / copy / 1e6;
  std::string table = fmt::format("\n| kernel (64 MiB f32) | ms | GB/s | of copy ({:.0f} GB/s) |\n", copy_gbs);
  for (auto& k : ks) {
    auto m = hlo::parse_hlo(k.text);
    const hlo::Instruction* inst = m->entry->find(k.inst);
    REQUIRE(inst);
    cuda::LoadedKernel probe(cuda::compile_kernel(*inst, cuda::GpuTarget::sm80()));
    cuda::LoadedKernel lk(cuda::compile_kernel(*inst, cuda::target_for(probe.compute_capability())));
    std::vector<Literal> in{random_literal(m->entry->parameters[0]->shape, -3, 3)};
    double ms = lk.time_ms(in, {inst->shape}, 20);
    double gbs = 2.0 * static_cast<double>(bytes) / ms / 1e6;
    table += fmt::format("| {} | {:.3f} | {:.0f} | {:.0f}% |\n", k.name, ms, gbs, 100 * gbs / copy_gbs);
    CHECK(ms > 0);
  }
  fmt::print("{}\n", table);  // the numbers, printed on stdout (speed is measured, never asserted)
  std::fflush(stdout);
}

// The jit-level numbers on the device (printed, never asserted): the article's MLP block in bf16
// (gelu(x @ w + b), x[8192,4096], w[4096,4096]) against its dot alone plus one pass over the output at the copy
// bandwidth, and dispatch (a cached call on tiny arrays: enqueue, and the round trip with block_until_ready).
TEST_CASE("cuda gpu: the MLP block in bf16 and dispatch through jit on cuda:0", "[cuda][gpu][bench]") {
  if (!have_gpu()) return;
  std::vector<Device> ds = devices("cuda");
  REQUIRE(!ds.empty());
  auto time_ms = [](auto&& call, int reps) {
    call();
    std::vector<double> ts;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      call();
      ts.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  };
  const int64_t m = 8192, k = 4096, n = 4096;
  Array keys = random::split(random::PRNGKey(0));
  Array k1 = keys[0], k2 = keys[1];
  Array x = device_put(random::normal(k1, {m, k}, bfloat16), ds[0]);
  Array w = device_put((random::normal(k2, {k, n}) * 0.02f).astype(bfloat16), ds[0]);
  Array b = device_put(jnp::zeros({n}, bfloat16), ds[0]);
  auto dot = jit([](Array p, Array q) { return jnp::matmul(p, q); });
  auto block = jit([](Array p, Array q, Array c) { return nn::gelu(jnp::matmul(p, q) + c); });
  double dot_ms = time_ms([&] { dot(x, w).block_until_ready(); }, 10);
  double block_ms = time_ms([&] { block(x, w, b).block_until_ready(); }, 10);
  double pass_ms = cuda::copy_time_ms(m * n * 2, 10);  // one read and one write of the bf16 output
  double tflops = 2.0 * m * n * k / dot_ms / 1e9;
  Array t = device_put(array<float>({1, 2, 3}), ds[0]);
  auto tiny = jit([](Array p, Array q, Array r) { return p * q + r; });
  double round_ms = time_ms([&] { tiny(t, t, t).block_until_ready(); }, 200);
  double enqueue_ms = time_ms([&] { (void)tiny(t, t, t); }, 200);
  fmt::print(
      "\n| jitx on cuda:0 (jit) | ms | note |\n|---|---|---|\n"
      "| dot bf16 8192x4096x4096 | {:.3f} | {:.0f} TFLOP/s |\n"
      "| MLP block gelu(x @ w + b) bf16 | {:.3f} | {:.2f}x of dot + one output pass ({:.3f} ms) |\n"
      "| dispatch: enqueue | {:.4f} | tiny f32[3] call |\n| dispatch: round trip | {:.4f} | with "
      "block_until_ready |\n\n",
      dot_ms, tflops, block_ms, block_ms / (dot_ms + pass_ms), pass_ms, enqueue_ms, round_ms);
  std::fflush(stdout);
  CHECK(block_ms > 0);
}

// The asynchronous runtime on the real driver (never run yet: tools/gpu_check.sh runs it on the H200): copies
// through pinned staging on the transfer stream, a generated kernel on the compute stream after a cross-stream
// wait, values back; then the public API's device_put to cuda:0 and back.
TEST_CASE("cuda gpu: the runtime's streams, events and copies, and device_put to cuda:0 and back", "[cuda][gpu]") {
  if (!have_gpu()) return;
  const cuda::Driver& d = cuda::driver("cuda gpu test");
  cuda::GpuDevice dev(d, 0);
  hlo::Shape shape(DType::float32, {1 << 20});
  Literal x = random_literal(shape, -3, 3), y = random_literal(shape, -3, 3);
  auto a = dev.put(x), b = dev.put(y);
  Literal xb = dev.fetch(a);
  CHECK(std::memcmp(xb.data(), x.data(), x.nbytes()) == 0);
  auto m = hlo::parse_hlo(
      "HloModule m\n\nENTRY %main (a: f32[1048576], b: f32[1048576]) -> f32[1048576] {\n"
      "  %a = f32[1048576] parameter(0)\n  %b = f32[1048576] parameter(1)\n"
      "  ROOT %r = f32[1048576] add(%a, %b)\n}\n");
  cuda::GpuKernel k =
      cuda::compile_kernel(*m->entry->find("r"), cuda::target_for(dev.compute_capability()), true, "jitx_kernel_add");
  std::vector<std::shared_ptr<cuda::GpuArray>> in = {a, b};
  auto out = dev.launch(k, in, {shape});
  auto out2 = dev.launch(k, in, {shape});
  CHECK(dev.modules_loaded() == 1);
  Literal r = dev.fetch(out[0]), r2 = dev.fetch(out2[0]);
  int64_t bad = 0;
  for (int64_t i = 0; i < detail::num_elements(shape.dims); ++i) {
    float want = static_cast<float>(x.get_f64(i)) + static_cast<float>(y.get_f64(i));
    bad += static_cast<float>(r.get_f64(i)) != want || static_cast<float>(r2.get_f64(i)) != want;
  }
  CHECK(bad == 0);
  dev.synchronize();
  std::vector<Device> ds = devices("cuda");
  REQUIRE_FALSE(ds.empty());
  std::vector<float> xv(4096);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i) * 0.5f - 7.0f;
  Array xc = device_put(array(xv), ds[0]);
  CHECK(device_of(xc) == ds[0]);
  CHECK(xc.to_vector<float>() == xv);
  CHECK(device_put(xc, default_device()).to_vector<float>() == xv);
}

TEST_CASE("cuda gpu: jit calls, eager ops, control flow and grad on cuda:0 arrays run there and match the cpu",
          "[cuda][gpu]") {
  if (!have_gpu()) return;
  std::vector<Device> ds = devices("cuda");
  REQUIRE(!ds.empty());
  std::string why;
  if (!cuda::Blas::get(&why)) WARN("no cuBLASLt (dots run on the host): " << why);
  jitx::testing::check_executor_on(ds[0]);
  jitx::testing::check_kernel_kinds_on(ds[0]);
  jitx::testing::check_dots_on(ds[0]);
  jitx::testing::check_training_step_on(ds[0]);  // cuBLASLt's where it has the dot, generated kernels for the rest
}

#else
TEST_CASE("cuda gpu: the backend is absent without the CUDA toolkit", "[cuda][gpu]") {
  WARN("skipped: jitx was configured without the CUDA toolkit, so the CUDA backend is not built");
}
#endif
