// jitx benchmarks: a plain matmul (jitx's GEMM beside Eigen's tensor contraction), the article's MLP block,
// memory-bound workloads, a training step (MLP forward +
// backward + Adam) and a stack of layers as lax::scan vs unrolled, jitx (jit and eager) beside
// hand-written Eigen, realistic models (a transformer training step and its inference, a small CNN training
// step), plus the machine's limits (STREAM triad, Eigen GEMM). Prints JSON lines;
// benchmarks/jax_bench.py is the JAX peer.
//   jitx_bench [--smoke] [--quick] [--only <workload>] [--size <MxKxN>] [--dtype f32|bf16] [--max-call-s <seconds>]
// --size and --dtype keep only the matmul / MLP block sizes and dtypes named (a workload's run at one size).
// Full mode sweeps sizes from small to large; a system whose next call is predicted (from the
// previous size) to exceed --max-call-s (default 2 s) is reported as skipped there instead of
// stalling the run.
#include <unistd.h>

#define EIGEN_USE_THREADS
#include <Eigen/Dense>
#include <unsupported/Eigen/CXX11/Tensor>
#include <array>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <thread>

#include "harness.h"
#include "bench_state.h"
#include "probes.h"
#include "jitx/jitx.h"
#include "jitx/optim.h"

using namespace jitx;
using bench::Result;

/// The training-step workload's parameters and batch (pytrees must be declared at namespace scope).
struct MlpParams {
  Array w1, b1, w2, b2, w3, b3;
};
JITX_PYTREE(MlpParams, w1, b1, w2, b2, w3, b3)
struct MlpBatch {
  Array x, y;  // f32[B, D], i32[B]
};
JITX_PYTREE(MlpBatch, x, y)
/// Stacked weights of the scan-over-layers workload: [depth, d, 4d] and [depth, 4d, d].
struct LayerStack {
  Array w1, w2;
};
JITX_PYTREE(LayerStack, w1, w2)
namespace jbench {
bool g_smoke = false, g_quick = false;
std::string g_only;
double g_min_time = 0.3;
namespace {
bench::Budget g_budget;

std::string budget_key(const Result& r) { return r.workload + "|" + r.system + "|" + r.dtype; }
double work_of(const Result& r) { return r.flops > 0 ? r.flops : r.bytes; }

}  // namespace

void emit(const Result& r) {
  if (r.stats.reps > 0) g_budget.record(budget_key(r), work_of(r), r.stats.median_ms);
  std::cout << bench::json(r) << std::endl;
}

/// True (and a "skipped" line out, carrying r's compile time if it has one) when this system's call
/// at this size is predicted to take too long.
bool skipped(const Result& r) {
  if (!g_budget.too_slow(budget_key(r), work_of(r))) return false;
  Result s = r;
  s.note = fmt::format("skipped: ~{:.0f} s per call predicted from the previous size",
                       g_budget.predict(budget_key(r), work_of(r)));
  std::cout << bench::json(s) << std::endl;
  return true;
}

}  // namespace jbench

namespace {
using namespace jbench;
using bench::randn;

bool want(const std::string& w) { return g_only.empty() || g_only == w; }
std::string g_size, g_dtype;  // --size / --dtype: the matmul and MLP block sizes and dtypes to run ("" all)
bool want_gemm(int64_t m, int64_t k, int64_t n, DType dt) {
  return (g_size.empty() || g_size == fmt::format("{}x{}x{}", m, k, n)) &&
         (g_dtype.empty() || g_dtype == dtype_name(dt));
}

// --- the machine's limits
// ---------------------------------------------------------------------------
/// STREAM's triad a = b + s*c over [lo, hi).
void triad_part(float* a, const float* b, const float* c, int64_t lo, int64_t hi) {
  const float s = 0.5f;
  for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
  asm volatile("" : : "r"(a) : "memory");
}

/// The triad on every hardware thread, each on its own contiguous slice, which it also first-touches (as STREAM's
/// OpenMP loops do). Bytes count the three arrays (not the write-allocate read of a), as STREAM counts them.
struct AllCoreTriad {
  int64_t n;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::unique_ptr<float[]> a{new float[n]}, b{new float[n]}, c{new float[n]};  // touched by their threads
  explicit AllCoreTriad(int64_t size) : n(size) {
    in_parallel([&](int64_t lo, int64_t hi) {
      std::fill(a.get() + lo, a.get() + hi, 0.0f);
      std::fill(b.get() + lo, b.get() + hi, 1.5f);
      std::fill(c.get() + lo, c.get() + hi, 2.5f);
    });
  }
  template <class F>
  void in_parallel(F&& part) {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { part(n * t / threads, n * (t + 1) / threads); });
    for (auto& t : ts) t.join();
  }
  void run() { in_parallel([&](int64_t lo, int64_t hi) { triad_part(a.get(), b.get(), c.get(), lo, hi); }); }
  double bytes() const { return 3.0 * 4 * static_cast<double>(n); }
};

/// STREAM's triad as STREAM measures a machine: with one thread and with every hardware thread. The all-thread
/// rate is the bandwidth limit the memory-bound workloads are compared with, since jitx and JAX use every core;
/// the one-thread rate is reported beside it.
void probe_triad(int64_t n) {
  const double bytes = 3.0 * 4 * static_cast<double>(n);
  {
    std::vector<float> a(n), b(n, 1.5f), c(n, 2.5f);
    auto st = bench::measure([&] { triad_part(a.data(), b.data(), c.data(), 0, n); }, g_min_time);
    emit({"probe_triad", std::to_string(n), "f32", "stream-triad", st, bytes, 2.0 * n, -1,
          "one thread, a = b + s*c"});
  }
  AllCoreTriad all(n);
  auto st = bench::measure([&] { all.run(); }, g_min_time);
  emit({"probe_triad", std::to_string(n), "f32", "stream-triad-all", st, all.bytes(), 2.0 * n, -1,
        fmt::format("{} threads, a = b + s*c", all.threads)});
}

void probe_gemm(int64_t n) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  auto st = bench::measure([&] { c.noalias() = a * b; }, g_min_time);
  emit({"probe_gemm", std::to_string(n), "f32", "eigen-gemm", st, 3.0 * 4 * n * n, 2.0 * n * n * n,
        -1, ""});
}

/// The machine's FMA peak: an FMA loop (12 independent chains) on every hardware thread at once, AVX2 and (where
/// the CPU has it) AVX-512, and on one thread; and the clock. Each is the best of several runs. A rate is emitted
/// as flops done in 1000 ms (median_ms = 1000), so rate() reads GFLOP/s off it.
void probe_peak() {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int reps = g_smoke ? 1 : 7;
  int64_t iters = g_smoke ? 1000 : 4'000'000;
  auto put = [&](const std::string& sys, double gflops, const std::string& note) {
    bench::Stats st{1000, 1000, 1000, 1000, 1, 1000};
    emit({"probe_peak", std::to_string(threads), "f32", sys, st, 0, gflops * 1e9, -1, note});
  };
  double ghz = bench::clock_ghz(reps);
  put("clock", ghz, fmt::format("core clock {:.2f} GHz (dependent integer multiplies, 3 cycles each)", ghz));
  double one = bench::fma_rate(bench::fma_loop_avx2, 1, iters, 12 * 16, reps);
  put("fma-avx2-1", one, fmt::format("AVX2 FMA loop, 1 thread: {:.1f} flop/cycle", one / ghz));
  double all = bench::fma_rate(bench::fma_loop_avx2, threads, iters, 12 * 16, reps);
  put("fma-avx2-all", all, fmt::format("AVX2 FMA loop, {} threads: {:.1f} flop/cycle/thread", threads,
                                       all / ghz / threads));
  if (__builtin_cpu_supports("avx512f")) {
    double w = bench::fma_rate(bench::fma_loop_avx512, threads, iters / 2, 12 * 32, reps);
    put("fma-avx512-all", w, fmt::format("AVX-512 FMA loop, {} threads: {:.1f} flop/cycle/thread", threads,
                                         w / ghz / threads));
  }
}

/// Runs f with Eigen's products on t threads (OpenMP; 1 when built without it).
template <class F>
void with_eigen_threads(int t, F&& f) {
  Eigen::setNbThreads(t);
  f();
  Eigen::setNbThreads(1);
}

/// The Eigen peer as the better (by median) of its 1-thread and all-thread runs, each measured interleaved with
/// jitx (st[1], st[2]); emitted as system "eigen" with the thread count in its note.
void emit_eigen_best(Result r, const std::vector<bench::Stats>& st, const std::string& what) {
  int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool one = st[1].median_ms <= st[2].median_ms;
  r.system = "eigen";
  r.stats = st[one ? 1 : 2];
  r.note = fmt::format("{}, {} thread(s) (better of 1: {:.4f} ms and {}: {:.4f} ms, medians)", what, one ? 1 : all,
                       st[1].median_ms, all, st[2].median_ms);
  emit(r);
}

// --- workloads
// ------------------------------------------------------------------------------------------
Array mlp_block(Array x, Array w, Array b) {
  Array h = nn::gelu(jnp::matmul(x, w) + b);
  Array mu = jnp::mean(h, {-1}, true);
  Array var = jnp::mean(jnp::square(h - mu), {-1}, true);
  return (h - mu) * lax::rsqrt(var + 1e-5);
}

template <class F, class... A>
void run_jitx(const std::string& workload, const std::string& size, DType dt, double bytes,
              double flops, F f, const A&... args) {
  std::string dn(dtype_name(dt));
  Result r{workload, size, dn, "jitx", {}, bytes, flops, -1, ""};
  if (!skipped(r)) {
    // Compile time (trace + lower + optimise + compile) is reported apart from run time.
    auto t0 = bench::Clock::now();
    auto compiled = jit(f, {.name = workload}).lower(args...).compile();
    r.compile_ms = bench::seconds_since(t0) * 1e3;
    r.stats = bench::measure([&] { block_until_ready(compiled(args...)); }, g_min_time);
    emit(r);
  }
  Result e{workload, size, dn, "jitx-eager", {}, bytes, flops, -1, "op by op"};
  if (!g_smoke && !skipped(e)) {
    e.stats = bench::measure([&] { block_until_ready(f(args...)); }, g_min_time, 3, 1);
    emit(e);
  }
}

void bench_mlp(int64_t M, int64_t K, int64_t N, DType dt) {
  std::string size = fmt::format("{}x{}x{}", M, K, N);
  Array x = array(randn(M * K, 1.0f, 1), {M, K}, dt);
  Array w = array(randn(K * N, 1.0f / std::sqrt(float(K)), 2), {K, N}, dt);
  Array b = array(randn(N, 0.1f, 3), {N}, dt);
  double es = static_cast<double>(dtype_size(dt));
  double bytes = es * (M * K + K * N + N + M * N);
  double flops = 2.0 * M * N * K;
  std::string dn(dtype_name(dt));
  Result r{"mlp_block", size, dn, "jitx", {}, bytes, flops, -1, ""};
  if (skipped(r)) return;
  auto t0 = bench::Clock::now();
  auto block = jit(mlp_block, {.name = "mlp_block"}).lower(x, w, b).compile();
  r.compile_ms = bench::seconds_since(t0) * 1e3;
  auto dot = jit([](Array a, Array c) { return jnp::matmul(a, c); }, {.name = "mlp_dot"}).lower(x, w).compile();
  // Eigen as a C++ user would write it: expression templates fuse what they can at compile time; bf16 inputs are
  // widened to f32 and the output rounded back (timed).
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Mat16 = Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat ex = Eigen::Map<Mat>(randn(M * K, 1.0f, 1).data(), M, K);
  Mat ew = Eigen::Map<Mat>(randn(K * N, 1.0f / std::sqrt(float(K)), 2).data(), K, N);
  Eigen::RowVectorXf eb = Eigen::Map<Eigen::RowVectorXf>(randn(N, 0.1f, 3).data(), N);
  Mat16 ex16 = ex.cast<Eigen::bfloat16>(), ew16 = ew.cast<Eigen::bfloat16>(), out16(M, N);
  Mat h(M, N), out(M, N);
  const float kc = std::sqrt(2.0f / static_cast<float>(M_PI));
  auto eigen = [&] {
    if (dt != float32) {
      ex = ex16.cast<float>();
      ew = ew16.cast<float>();
    }
    h.noalias() = ex * ew;
    h.rowwise() += eb;
    h = h.unaryExpr([kc](float v) { return 0.5f * v * (1.0f + std::tanh(kc * (v + 0.044715f * v * v * v))); });
    Eigen::VectorXf mu = h.rowwise().mean();
    out = h.colwise() - mu;
    Eigen::VectorXf var = out.array().square().rowwise().mean();
    out.array().colwise() *= (var.array() + 1e-5f).rsqrt();
    if (dt != float32) out16 = out.cast<Eigen::bfloat16>();
  };
  int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The block, Eigen on 1 and all threads, x @ w alone and the block op by op (eager), in interleaved rounds (see
  // measure_interleaved): ratios of a few percent need them.
  std::vector<std::function<void()>> fns{[&] { block_until_ready(block(x, w, b)); },
                                         [&] { with_eigen_threads(1, eigen); },
                                         [&] { with_eigen_threads(all, eigen); },
                                         [&] { block_until_ready(dot(x, w)); }};
  if (!g_smoke) fns.push_back([&] { block_until_ready(mlp_block(x, w, b)); });
  auto st = bench::measure_interleaved(fns, g_min_time, 31);
  r.stats = st[0];
  r.note = fmt::format("min {:.4f} / median {:.4f} / max {:.4f} ms over {} interleaved calls", st[0].min_ms,
                       st[0].median_ms, st[0].max_ms, st[0].reps);
  emit(r);
  emit_eigen_best(r, st, "hand-written Eigen");
  emit({"mlp_block", size, dn, "jitx-dot", st[3], bytes, flops, -1, "x @ w alone, interleaved with the block"});
  if (!g_smoke) emit({"mlp_block", size, dn, "jitx-eager", st[4], bytes, flops, -1, "op by op, interleaved"});
}

/// x @ w alone: jitx (its own GEMM for f32/bf16) beside Eigen's Matrix product on 1 and on all threads, the
/// better reported, all three interleaved; 31 rounds at least, so min/median/max show whether a size is bimodal.
// The matmul and MLP block sizes (M x K x N), smallest work first: squares and the 2048x1024x1024 and
// 4096^3; the MLP block's report line divides it by the matmul of the same size.
constexpr std::array<std::array<int64_t, 3>, 8> kGemmSizes{
    {{64, 64, 64}, {128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 1024, 1024},
     {2048, 2048, 2048}, {4096, 4096, 4096}}};

void bench_matmul(int64_t m, int64_t k, int64_t n, DType dt) {
  std::string size = fmt::format("{}x{}x{}", m, k, n);
  std::vector<float> xv = randn(m * k, 1.0f, 31), wv = randn(k * n, 1.0f / std::sqrt(float(k)), 32);
  Array x = array(xv, {m, k}, dt), w = array(wv, {k, n}, dt);
  double es = static_cast<double>(dtype_size(dt));
  double bytes = es * (double(m) * k + double(k) * n + double(m) * n), flops = 2.0 * m * k * n;
  std::string dn(dtype_name(dt));
  Result r{"matmul", size, dn, "jitx", {}, bytes, flops, -1, ""};
  if (skipped(r)) return;
  auto f = [](Array a, Array b) { return jnp::matmul(a, b); };
  auto t0 = bench::Clock::now();
  auto compiled = jit(f, {.name = "matmul"}).lower(x, w).compile();
  r.compile_ms = bench::seconds_since(t0) * 1e3;
  // Eigen's ordinary Matrix product (faster than its tensor contraction), on 1 and on all threads; for bf16 it
  // gets f32 copies and its product is rounded back (the conversions timed), as a user without bf16 GEMMs would.
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Mat16 = Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat a = Eigen::Map<Mat>(xv.data(), m, k), b = Eigen::Map<Mat>(wv.data(), k, n), c(m, n);
  Mat16 a16 = a.cast<Eigen::bfloat16>(), b16 = b.cast<Eigen::bfloat16>(), c16(m, n);
  auto eigen = [&] {
    if (dt == float32) {
      c.noalias() = a * b;
    } else {
      a = a16.cast<float>();
      b = b16.cast<float>();
      c.noalias() = a * b;
      c16 = c.cast<Eigen::bfloat16>();
    }
  };
  int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto st = bench::measure_interleaved({[&] { block_until_ready(compiled(x, w)); },
                                        [&] { with_eigen_threads(1, eigen); },
                                        [&] { with_eigen_threads(all, eigen); }},
                                       g_min_time, 31);
  r.stats = st[0];
  r.note = fmt::format("min {:.4f} / median {:.4f} / max {:.4f} ms over {} interleaved calls", st[0].min_ms,
                       st[0].median_ms, st[0].max_ms, st[0].reps);
  emit(r);
  emit_eigen_best(r, st, "Eigen Matrix product");
  Result e{"matmul", size, dn, "jitx-eager", {}, bytes, flops, -1, "op by op"};
  if (!g_smoke && !skipped(e)) {
    e.stats = bench::measure([&] { block_until_ready(f(x, w)); }, g_min_time, 3, 1);
    emit(e);
  }
}

void bench_elementwise(int64_t n, DType dt) {
  Array x = array(randn(n, 1.0f, 4), {n}, dt);
  double bytes = 2.0 * static_cast<double>(dtype_size(dt)) * n;
  run_jitx(
      "gelu_chain", std::to_string(n), dt, bytes, 0, [](Array v) { return nn::gelu(v); }, x);
  if (dt == float32) {
    Eigen::ArrayXf ex = Eigen::Map<Eigen::ArrayXf>(randn(n, 1.0f, 4).data(), n), ey(n);
    const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
    auto st = bench::measure(
        [&] { ey = 0.5f * ex * (1.0f + (k * (ex + 0.044715f * ex.cube())).tanh()); }, g_min_time);
    emit({"gelu_chain", std::to_string(n), "f32", "eigen", st, bytes, 0, -1, ""});
  }
}

void bench_rows(int64_t rows, int64_t cols) {
  std::string size = fmt::format("{}x{}", rows, cols);
  Array x = array(randn(rows * cols, 1.0f, 5), {rows, cols});
  double bytes = 2.0 * 4 * rows * cols;
  run_jitx(
      "softmax", size, float32, bytes, 0, [](Array v) { return nn::softmax(v, -1); }, x);
  run_jitx(
      "layer_norm", size, float32, bytes, 0, [](Array v) { return nn::layer_norm(v); }, x);
  run_jitx(
      "column_sum", size, float32, 4.0 * rows * cols + 4.0 * cols, 0,
      [](Array v) { return jnp::sum(v, {0}); }, x);
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat ex = Eigen::Map<Mat>(randn(rows * cols, 1.0f, 5).data(), rows, cols), ey(rows, cols);
  auto st = bench::measure(
      [&] {
        Eigen::VectorXf m = ex.rowwise().maxCoeff();
        ey = (ex.colwise() - m).array().exp();
        Eigen::VectorXf s = ey.rowwise().sum();
        ey.array().colwise() /= s.array();
      },
      g_min_time);
  emit({"softmax", size, "f32", "eigen", st, bytes, 0, -1, ""});
  auto sl = bench::measure(
      [&] {
        Eigen::VectorXf mu = ex.rowwise().mean();
        ey = ex.colwise() - mu;
        Eigen::VectorXf var = ey.array().square().rowwise().mean();
        ey.array().colwise() *= (var.array() + 1e-5f).rsqrt();
      },
      g_min_time);
  emit({"layer_norm", size, "f32", "eigen", sl, bytes, 0, -1, ""});
  Eigen::RowVectorXf cs(cols);
  auto sc = bench::measure([&] { cs = ex.colwise().sum(); }, g_min_time);
  emit({"column_sum", size, "f32", "eigen", sc, 4.0 * rows * cols + 4.0 * cols, 0, -1, ""});
}

/// The memory-bound bar: the GELU tail on 64 MiB, layer norm and softmax on 4096^2 f32 (softmax also on
/// 1024^2) at >= 80% of the triad, and
/// a cheap elementwise chain of two inputs, max(0.5 a + b, a), one loop fusion over two arrays of n floats (what the
/// unit tests once timed in a hidden case, GB/s on cpu and the interpreter: `JITX_PLATFORM=interpreter jitx_bench
/// --only bandwidth_bar` gives the interpreter's). The triad of this VM moves by up to 40% between minutes (25-43
/// GB/s in the runs so far), so the probe at the start of a run says little about the bandwidth minutes later: here
/// each workload is measured in interleaved rounds with a triad on all cores (arrays of n floats, each thread
/// first-touching its slice), and the report compares the two medians.
void bench_bandwidth_bar(int64_t n, int64_t rows) {
  AllCoreTriad triad(n);
  // Bytes: every input read once and the output (as large as one input) written once.
  auto one = [&](const char* name, const std::string& size, auto f, const auto&... xs) {
    auto compiled = jit(f, {.name = name}).lower(xs...).compile();
    auto st = bench::measure_interleaved({[&] { block_until_ready(compiled(xs...)); }, [&] { triad.run(); }},
                                         g_min_time);
    double elements = static_cast<double>((xs.size() + ...));
    double bytes = 4.0 * (elements + elements / sizeof...(xs));
    emit({"bandwidth_bar", size, "f32", "jitx", st[0], bytes, 0, -1, name});
    emit({"bandwidth_bar", size, "f32", "stream-triad-all", st[1], triad.bytes(), 2.0 * n, -1,
          fmt::format("{} threads, interleaved with {}", triad.threads, name)});
  };
  one("gelu", std::to_string(n), [](Array v) { return nn::gelu(v); }, array(randn(n, 1.0f, 4), {n}));
  int64_t cols = n / rows;
  one("layer_norm", fmt::format("{}x{}", rows, cols), [](Array v) { return nn::layer_norm(v); },
      array(randn(n, 1.0f, 5), {rows, cols}));
  one("elementwise_chain", std::to_string(n), [](Array a, Array b) { return jnp::maximum(a * 0.5f + b, a); },
      array(randn(n, 1.0f, 6), {n}), array(randn(n, 1.0f, 7), {n}));
  // Issue 20's softmax bar (4096^2 and 1024^2 at >= 80% of the interleaved triad).
  one("softmax", fmt::format("{}x{}", rows, cols), [](Array v) { return nn::softmax(v); },
      array(randn(n, 1.0f, 8), {rows, cols}));
  one("softmax", fmt::format("{}x{}", rows / 4, cols / 4), [](Array v) { return nn::softmax(v); },
      array(randn(n / 16, 1.0f, 9), {rows / 4, cols / 4}));
}

void bench_dispatch() {
  // A cached jitted call on three tiny arrays, with block_until_ready, and the enqueue alone.
  Array a = array<float>({1, 2, 3}), b = array<float>({4, 5, 6}), c = array<float>({7, 8, 9});
  auto f = jit([](Array x, Array y, Array z) { return x * y + z; }, {.name = "dispatch"});
  f(a, b, c).block_until_ready();
  auto st = bench::measure([&] { f(a, b, c).block_until_ready(); }, g_min_time, 100, 10);
  emit({"dispatch", "3x3", "f32", "jitx", st, 0, 0, -1, "call + block_until_ready"});
  Array last;
  auto se = bench::measure([&] { last = f(a, b, c); }, g_min_time, 100, 10);
  last.block_until_ready();
  emit({"dispatch_enqueue", "3x3", "f32", "jitx", se, 0, 0, -1, "enqueue only"});
}

// --- a training step: MLP forward + backward + Adam, parameters and optimiser state donated
// ----------------
using MlpOpt = optim::AdamState<MlpParams>;

Array mlp_loss(const MlpParams& p, const MlpBatch& b) {
  Array h = nn::gelu(jnp::matmul(b.x, p.w1) + p.b1);
  h = nn::gelu(jnp::matmul(h, p.w2) + p.b2);
  Array logp = nn::log_softmax(jnp::matmul(h, p.w3) + p.b3);
  return -jnp::mean(jnp::sum(logp * nn::one_hot(b.y, kTrainClasses), {-1}));
}

std::tuple<MlpParams, MlpOpt, Array> mlp_train_step(const MlpParams& p, const MlpOpt& s,
                                                    const MlpBatch& b) {
  auto [loss, g] = value_and_grad(mlp_loss)(p, b);
  auto [np, ns] = optim::adam_update(p, g, s, Array(1e-3f));
  return {np, ns, loss};
}

/// The same training step written by hand with Eigen, as a C++ user would: row-major matrices, expression
/// templates for the elementwise parts (one fused loop per statement), the backward pass derived by hand and Adam
/// (b1 0.9, b2 0.999, eps 1e-8, bias-corrected, lr 1e-3) as jitx::optim::adam_update. The GEMMs run on all cores
/// through Eigen's own parallel product (OpenMP, Eigen::setNbThreads); the elementwise statements on one.
struct EigenMlp {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Row = Eigen::RowVectorXf;
  static constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2 / pi)
  static constexpr float kB1 = 0.9f, kB2 = 0.999f, kEps = 1e-8f, kLr = 1e-3f;

  Mat w[3];
  Row b[3];
  Mat mw[3], vw[3];  // Adam's moments
  Row mb[3], vb[3];
  float count = 0;
  // Activations and gradients, allocated once (a user would keep them across steps too).
  Mat z1, h1, z2, h2, z3, dz, dh, gw[3];
  Row gb[3];

  static Mat from(const Array& a) { return Eigen::Map<const Mat>(a.to_vector<float>().data(), a.dim(0), a.dim(1)); }
  static Row row(const Array& a) { return Eigen::Map<const Row>(a.to_vector<float>().data(), a.dim(0)); }

  explicit EigenMlp(const MlpParams& p) {
    w[0] = from(p.w1), w[1] = from(p.w2), w[2] = from(p.w3);
    b[0] = row(p.b1), b[1] = row(p.b2), b[2] = row(p.b3);
    for (int l = 0; l < 3; ++l) {
      mw[l] = vw[l] = Mat::Zero(w[l].rows(), w[l].cols());
      mb[l] = vb[l] = Row::Zero(b[l].size());
    }
  }

  static auto gelu(const Mat& z) {
    return (0.5f * z.array() * (1.0f + (kGeluK * (z.array() + 0.044715f * z.array().cube())).tanh())).matrix();
  }
  // d gelu / dz, times the incoming gradient.
  static void gelu_backward(Mat& d, const Mat& z) {
    auto x = z.array();
    auto t = (kGeluK * (x + 0.044715f * x.cube())).tanh();
    d.array() *= 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t.square()) * kGeluK * (1.0f + 3 * 0.044715f * x.square());
  }

  template <class M, class G>
  void adam(M& p, M& m, M& v, const G& g, float c1, float c2) {
    m = kB1 * m + (1 - kB1) * g;
    v = kB2 * v + (1 - kB2) * g.cwiseProduct(g);
    p.array() -= kLr * (m.array() / c1) / ((v.array() / c2).sqrt() + kEps);
  }

  /// One step on a batch x [B, D] with labels y; returns the loss (before the update).
  float step(const Mat& x, const std::vector<int32_t>& y) {
    const int64_t B = x.rows();
    z1.noalias() = x * w[0];
    z1.rowwise() += b[0];
    h1 = gelu(z1);
    z2.noalias() = h1 * w[1];
    z2.rowwise() += b[1];
    h2 = gelu(z2);
    z3.noalias() = h2 * w[2];
    z3.rowwise() += b[2];
    // log_softmax per row; loss = -mean(logp[i, y_i]); dz3 = (softmax - one_hot) / B.
    Eigen::VectorXf mx = z3.rowwise().maxCoeff();
    dz = (z3.colwise() - mx).array().exp().matrix();
    Eigen::VectorXf sum = dz.rowwise().sum();
    float loss = 0;
    for (int64_t i = 0; i < B; ++i) loss -= z3(i, y[i]) - mx(i) - std::log(sum(i));
    loss /= static_cast<float>(B);
    dz.array().colwise() /= sum.array() * static_cast<float>(B);
    for (int64_t i = 0; i < B; ++i) dz(i, y[i]) -= 1.0f / static_cast<float>(B);
    // Backward through the three layers.
    gw[2].noalias() = h2.transpose() * dz;
    gb[2] = dz.colwise().sum();
    dh.noalias() = dz * w[2].transpose();
    gelu_backward(dh, z2);
    gw[1].noalias() = h1.transpose() * dh;
    gb[1] = dh.colwise().sum();
    dz.noalias() = dh * w[1].transpose();
    gelu_backward(dz, z1);
    gw[0].noalias() = x.transpose() * dz;
    gb[0] = dz.colwise().sum();
    // Adam.
    count += 1;
    float c1 = 1 - std::pow(kB1, count), c2 = 1 - std::pow(kB2, count);
    for (int l = 0; l < 3; ++l) {
      adam(w[l], mw[l], vw[l], gw[l], c1, c2);
      adam(b[l], mb[l], vb[l], gb[l], c1, c2);
    }
    return loss;
  }
};

/// ||a - b|| / ||b|| over the floats of a matrix and a jitx array of the same shape.
template <class M>
double rel_err(const M& a, const Array& b) {
  std::vector<float> bv = b.to_vector<float>();
  double num = 0, den = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(bv.size()); ++i) {
    double d = static_cast<double>(a.data()[i]) - bv[i];
    num += d * d;
    den += static_cast<double>(bv[i]) * bv[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

/// Batch B of D features, two hidden layers of width H (= D), 10 classes.
void bench_train_step(int64_t B, int64_t H) {
  std::string size = fmt::format("{}x{}", B, H);
  const int64_t D = H, C = kTrainClasses;
  auto init = [&] {
    auto dense = [](int64_t in, int64_t out, uint32_t seed) {
      return array(randn(in * out, std::sqrt(2.0f / static_cast<float>(in + out)), seed),
                   {in, out});
    };
    return MlpParams{dense(D, H, 11), zeros({H}),      dense(H, H, 12),
                     zeros({H}),      dense(H, C, 13), zeros({C})};
  };
  std::vector<int32_t> labels(B);
  for (int64_t i = 0; i < B; ++i) labels[i] = static_cast<int32_t>((i * 7) % C);
  MlpBatch batch{array(randn(B * D, 1.0f, 14), {B, D}), array(labels, {B})};
  double fwd = 2.0 * B * (D * H + H * H + H * C);
  double n_params = static_cast<double>(D * H + H + H * H + H + H * C + C);
  // Forward, backward (twice the forward's flops) and Adam's elementwise update; bytes: parameters,
  // gradients and both moments read, three written back, and the batch.
  double flops = 3.0 * fwd + 12.0 * n_params, bytes = 4.0 * (7.0 * n_params + B * D + B);
  Result r{"train_step", size, "f32", "jitx", {}, bytes, flops, -1, "donated params + Adam state"};
  if (!skipped(r)) {
    MlpParams p = init();
    MlpOpt s = optim::adam_init(p);
    run_train_step(r, jit(mlp_train_step, {.donate_argnums = {0, 1}, .name = "train_step"}), p, s, batch);
  }
  Result e{"train_step", size, "f32",
           "jitx-eager", {},   bytes,
           flops,        -1,   "op by op (grad traced every call)"};
  if (!g_smoke && !skipped(e)) {
    MlpParams p = init();
    MlpOpt s = optim::adam_init(p);
    Array loss;
    e.stats = bench::measure(
        [&] {
          std::tie(p, s, loss) = mlp_train_step(p, s, batch);
          block_until_ready(std::make_tuple(p, s, loss));
        },
        g_min_time, 3, 1);
    emit(e);
  }
  Result eg{"train_step", size, "f32", "eigen", {}, bytes, flops, -1, ""};
  if (!skipped(eg)) {
    // The check first: one Eigen step against jitx's jitted step from the same parameters and batch. Both compute
    // in f32 with different summation orders (and tanh/exp approximations): the loss and Adam's moments (the
    // gradients) agree to ~1e-5 relative, a wrong derivative would be off by far more. Adam's first step moves
    // each parameter by about lr * sign(g), so a gradient within rounding of zero may flip its sign: the updated
    // parameters are compared by norm, with a looser bound.
    MlpParams p = init();
    MlpOpt s = optim::adam_init(p);
    EigenMlp em(p);
    EigenMlp::Mat ex = EigenMlp::from(batch.x);
    Eigen::setNbThreads(static_cast<int>(std::thread::hardware_concurrency()));
    int threads = Eigen::nbThreads();  // 1 when built without OpenMP
    float eloss = em.step(ex, labels);
    auto [np, ns, jloss] = jit(mlp_train_step, {.name = "train_step_check"})(p, s, batch);
    const auto& [cnt, mu, nu] = ns;
    double err = std::fabs(eloss - jloss.item<float>()) / std::fabs(jloss.item<float>()), perr = 0;
    const MlpParams* jm[] = {&mu, &nu};
    for (int k = 0; k < 2; ++k) {
      const auto& ew = k == 0 ? em.mw : em.vw;
      const auto& eb = k == 0 ? em.mb : em.vb;
      err = std::max({err, rel_err(ew[0], jm[k]->w1), rel_err(ew[1], jm[k]->w2), rel_err(ew[2], jm[k]->w3),
                      rel_err(eb[0], jm[k]->b1), rel_err(eb[1], jm[k]->b2), rel_err(eb[2], jm[k]->b3)});
    }
    perr = std::max({rel_err(em.w[0], np.w1), rel_err(em.w[1], np.w2), rel_err(em.w[2], np.w3),
                     rel_err(em.b[0], np.b1), rel_err(em.b[1], np.b2), rel_err(em.b[2], np.b3)});
    if (!(err < 1e-4) || !(perr < 1e-3)) {
      std::fprintf(stderr,
                   "[jitx_bench] train_step %s: the Eigen step differs from jitx's: loss/moments relative error %g, "
                   "parameters %g\n",
                   size.c_str(), err, perr);
      std::exit(1);
    }
    eg.note = fmt::format("hand-written Eigen, GEMMs on {} threads (OpenMP, Eigen::setNbThreads); its loss and "
                          "gradients match jitx's step to {:.1e}", threads, err);
    eg.stats = bench::measure([&] { em.step(ex, labels); }, g_min_time);
    Eigen::setNbThreads(1);  // the other Eigen peers and the GEMM probe stay on one thread
    emit(eg);
  }
}

// --- a stack of residual MLP layers: lax::scan over stacked weights vs the unrolled C++ loop
// ------------------
Array stack_block(const Array& x, const Array& w1, const Array& w2) {
  return nn::layer_norm(x + jnp::matmul(nn::gelu(jnp::matmul(x, w1)), w2));
}
Array stack_scan(Array x, LayerStack p) {
  return lax::scan(
             [](const Array& h, const std::pair<Array, Array>& w) {
               return std::make_pair(stack_block(h, w.first, w.second), std::tuple<>{});
             },
             x, std::make_pair(p.w1, p.w2))
      .first;
}
Array stack_unrolled(Array x, LayerStack p) {
  for (int64_t l = 0; l < p.w1.dim(0); ++l) x = stack_block(x, p.w1[l], p.w2[l]);
  return x;
}

/// Both versions at one depth: compile time grows with depth only when unrolled. Eager runs the
/// unrolled version op by op (an eager scan would retrace its body every call).
void bench_layers(int64_t depth, int64_t batch, int64_t d) {
  std::string size = fmt::format("depth {} {}x{}", depth, batch, d);
  Array x = array(randn(batch * d, 1.0f, 21), {batch, d});
  float scale = 1.0f / std::sqrt(static_cast<float>(d));
  LayerStack p{array(randn(depth * d * 4 * d, scale, 22), {depth, d, 4 * d}),
               array(randn(depth * 4 * d * d, scale / 2, 23), {depth, 4 * d, d})};
  double flops = depth * 2.0 * (2.0 * batch * d * 4 * d);
  double bytes = 4.0 * (depth * 8.0 * d * d + 2.0 * batch * d);
  for (auto [workload, fn] :
       {std::pair{"scan_layers", &stack_scan}, std::pair{"unrolled_layers", &stack_unrolled}}) {
    // Compile time is this workload's point: it is measured at every depth, even where running is
    // skipped.
    Result r{workload, size, "f32", "jitx", {}, bytes, flops, -1, ""};
    auto t0 = bench::Clock::now();
    auto compiled = jit(fn, {.name = workload}).lower(x, p).compile();
    r.compile_ms = bench::seconds_since(t0) * 1e3;
    if (!skipped(r)) {
      r.stats = bench::measure([&] { compiled(x, p).block_until_ready(); }, g_min_time);
      emit(r);
    }
  }
  Result e{"unrolled_layers", size, "f32", "jitx-eager", {}, bytes, flops, -1, "op by op"};
  if (!g_smoke && !skipped(e)) {
    e.stats = bench::measure([&] { stack_unrolled(x, p).block_until_ready(); }, g_min_time, 3, 1);
    emit(e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // OpenMP (Eigen's peer) spins ~300,000 pauses (milliseconds here) after each parallel region by default; measured
  // interleaved with jitx, its workers would still hold the cores when jitx's block of calls starts. 20,000 (under
  // a millisecond) still keeps them awake across back-to-back calls. libgomp reads it at load, hence the re-exec.
  if (!std::getenv("GOMP_SPINCOUNT")) {
    setenv("GOMP_SPINCOUNT", "20000", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: carry on with the default
  }
  double max_call_s = 2.0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--smoke")
      g_smoke = true;
    else if (a == "--quick")
      g_quick = true;
    else if (a == "--only" && i + 1 < argc)
      g_only = argv[++i];
    else if (a == "--size" && i + 1 < argc)
      g_size = argv[++i];
    else if (a == "--dtype" && i + 1 < argc)
      g_dtype = argv[++i];
    else if (a == "--max-call-s" && i + 1 < argc)
      max_call_s = std::stod(argv[++i]);
    else {
      std::fprintf(
          stderr,
          "usage: jitx_bench [--smoke] [--quick] [--only <workload>] [--size <MxKxN>] [--dtype f32|bf16] "
          "[--max-call-s <seconds>]\n");
      return 2;
    }
  }
  Eigen::setNbThreads(1);  // Eigen peers are single-threaded unless they say otherwise (train_step)
  if (g_smoke)
    g_min_time = 0;  // one timed call each: a check that everything runs, not a measurement
  g_budget.set_max_call_s(g_smoke ? 0 : max_call_s);
  bench::g_stop_after_s = g_smoke ? 0 : 5 * max_call_s;
  std::fprintf(stderr, "[jitx_bench] platform=%s threads=%u mode=%s\n", default_platform().c_str(),
               std::thread::hardware_concurrency(),
               g_smoke   ? "smoke"
               : g_quick ? "quick"
                         : "full");
  const bool full = !g_smoke && !g_quick;
  if (want("probe_triad")) probe_triad(g_smoke ? 1 << 12 : g_quick ? 1 << 22 : 1 << 26);
  if (want("probe_peak")) probe_peak();
  if (want("probe_gemm")) probe_gemm(g_smoke ? 32 : g_quick ? 256 : 1024);
  if (want("matmul")) {
    if (g_smoke) {
      bench_matmul(16, 16, 16, float32);
      bench_matmul(16, 16, 16, bfloat16);
    } else if (g_quick) {
      bench_matmul(256, 256, 256, float32);
    } else {
      for (DType dt : {float32, bfloat16})
        for (auto [m, k, n] : kGemmSizes)
          if (want_gemm(m, k, n, dt)) bench_matmul(m, k, n, dt);
    }
  }
  if (want("mlp_block")) {
    if (g_smoke) {
      bench_mlp(8, 16, 16, float32);
      bench_mlp(8, 16, 16, bfloat16);
    } else if (g_quick) {
      bench_mlp(64, 128, 128, float32);
    } else {
      for (DType dt : {float32, bfloat16})
        for (auto [m, k, n] : kGemmSizes)
          if (want_gemm(m, k, n, dt)) bench_mlp(m, k, n, dt);
    }
  }
  if (want("gelu_chain")) {
    if (full)
      for (int64_t n : {1 << 16, 1 << 20, 1 << 24}) bench_elementwise(n, float32);
    else
      bench_elementwise(g_smoke ? 256 : 1 << 16, float32);
  }
  if (want("rows")) {
    if (g_smoke)
      bench_rows(8, 32);
    else if (g_quick)
      bench_rows(64, 256);
    else
      for (int64_t n : {256, 1024, 4096}) bench_rows(n, n);
  }
  if (want("bandwidth_bar"))
    bench_bandwidth_bar(g_smoke ? 1 << 12 : g_quick ? 1 << 20 : 1 << 24, g_smoke ? 16 : g_quick ? 1024 : 4096);
  if (want("dispatch")) bench_dispatch();
  if (want("train_step")) {
    if (g_smoke)
      bench_train_step(8, 16);
    else if (g_quick)
      bench_train_step(64, 128);
    else
      for (auto [b, h] : {std::pair{64, 256}, std::pair{256, 512}, std::pair{1024, 1024}})
        bench_train_step(b, h);
  }
  if (want("scan_layers")) {
    if (g_smoke)
      bench_layers(2, 4, 8);
    else if (g_quick)
      bench_layers(8, 32, 64);
    else
      for (int64_t depth : {4, 16, 64}) bench_layers(depth, 64, 128);
  }
  // The transformer at d 256, 4 heads, 4 layers, sequence 128, vocabulary 256 (smoke: a tiny one); the step at
  // batch 16, inference at batch 1. Quick mode runs the full sizes too (the measurement cuts slow calls to 3).
  const TfConfig tf = g_smoke ? TfConfig{16, 8, 16, 2, 2, 2} : TfConfig{256, 128, 256, 4, 4, 16};
  if (want("transformer_step")) bench_transformer_step(tf);
  if (want("cnn_step")) bench_cnn_step(g_smoke ? CnnConfig{2, 8, 3, 4, 8} : CnnConfig{64, 32, 3, 32, 64});
  if (want("transformer_infer")) {
    TfConfig one = tf;
    one.batch = 1;
    bench_transformer_infer(one);
  }
  return 0;
}
