// jitx benchmarks: the article's MLP block and memory-bound workloads, jitx (jit and eager) beside
// hand-written Eigen, plus the machine's limits (STREAM triad, Eigen GEMM). Prints JSON lines.
//   jitx_bench [--smoke] [--quick] [--only <workload>]
#include <unistd.h>

#include <Eigen/Dense>
#include <cstring>
#include <iostream>
#include <random>
#include <thread>

#include "harness.h"
#include "jitx/jitx.h"

using namespace jitx;
using bench::Result;

namespace {
bool g_smoke = false, g_quick = false;
std::string g_only;
double g_min_time = 0.3;

void emit(const Result& r) { std::cout << bench::json(r) << std::endl; }

std::vector<float> randn(size_t n, float scale, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

bool want(const std::string& w) { return g_only.empty() || g_only == w; }

// --- the machine's limits ---------------------------------------------------------------------------
void probe_triad(int64_t n) {
  std::vector<float> a(n), b(n, 1.5f), c(n, 2.5f);
  float s = 0.5f;
  auto st = bench::measure([&] {
    for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    asm volatile("" : : "r"(a.data()) : "memory");
  }, g_min_time);
  emit({"probe_triad", std::to_string(n), "f32", "stream-triad", st, 3.0 * 4 * static_cast<double>(n), 2.0 * n, -1,
        "one thread, a = b + s*c"});
}

void probe_gemm(int64_t n) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  auto st = bench::measure([&] { c.noalias() = a * b; }, g_min_time);
  emit({"probe_gemm", std::to_string(n), "f32", "eigen-gemm", st, 3.0 * 4 * n * n, 2.0 * n * n * n, -1, ""});
}

// --- workloads ------------------------------------------------------------------------------------------
Array mlp_block(Array x, Array w, Array b) {
  Array h = nn::gelu(jnp::matmul(x, w) + b);
  Array mu = jnp::mean(h, {-1}, true);
  Array var = jnp::mean(jnp::square(h - mu), {-1}, true);
  return (h - mu) * lax::rsqrt(var + 1e-5);
}

template <class F, class... A>
void run_jitx(const std::string& workload, const std::string& size, DType dt, double bytes, double flops, F f,
              const A&... args) {
  // Compile time (trace + lower + optimise + compile) is reported apart from run time.
  auto t0 = bench::Clock::now();
  auto compiled = jit(f, {.name = workload}).lower(args...).compile();
  double compile_ms = bench::seconds_since(t0) * 1e3;
  auto st = bench::measure([&] { compiled(args...).block_until_ready(); }, g_min_time);
  emit({workload, size, std::string(dtype_name(dt)), "jitx", st, bytes, flops, compile_ms, ""});
  if (!g_smoke) {
    auto se = bench::measure([&] { f(args...).block_until_ready(); }, g_min_time, 3, 1);
    emit({workload, size, std::string(dtype_name(dt)), "jitx-eager", se, bytes, flops, -1, "op by op"});
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
  run_jitx("mlp_block", size, dt, bytes, flops, mlp_block, x, w, b);
  if (dt == float32) {
    // Eigen as a C++ user would write it: expression templates fuse what they can at compile time.
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Mat ex = Eigen::Map<Mat>(randn(M * K, 1.0f, 1).data(), M, K);
    Mat ew = Eigen::Map<Mat>(randn(K * N, 1.0f / std::sqrt(float(K)), 2).data(), K, N);
    Eigen::RowVectorXf eb = Eigen::Map<Eigen::RowVectorXf>(randn(N, 0.1f, 3).data(), N);
    Mat h(M, N), out(M, N);
    const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
    auto st = bench::measure([&] {
      h.noalias() = ex * ew;
      h.rowwise() += eb;
      h = h.unaryExpr([k](float v) { return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v))); });
      Eigen::VectorXf mu = h.rowwise().mean();
      out = h.colwise() - mu;
      Eigen::VectorXf var = out.array().square().rowwise().mean();
      out.array().colwise() *= (var.array() + 1e-5f).rsqrt();
    }, g_min_time);
    emit({"mlp_block", size, "f32", "eigen", st, bytes, flops, -1, "hand-written Eigen"});
  }
}

void bench_elementwise(int64_t n, DType dt) {
  Array x = array(randn(n, 1.0f, 4), {n}, dt);
  double bytes = 2.0 * static_cast<double>(dtype_size(dt)) * n;
  run_jitx("gelu_chain", std::to_string(n), dt, bytes, 0, [](Array v) { return nn::gelu(v); }, x);
  if (dt == float32) {
    Eigen::ArrayXf ex = Eigen::Map<Eigen::ArrayXf>(randn(n, 1.0f, 4).data(), n), ey(n);
    const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
    auto st = bench::measure([&] { ey = 0.5f * ex * (1.0f + (k * (ex + 0.044715f * ex.cube())).tanh()); }, g_min_time);
    emit({"gelu_chain", std::to_string(n), "f32", "eigen", st, bytes, 0, -1, ""});
  }
}

void bench_rows(int64_t rows, int64_t cols) {
  std::string size = fmt::format("{}x{}", rows, cols);
  Array x = array(randn(rows * cols, 1.0f, 5), {rows, cols});
  double bytes = 2.0 * 4 * rows * cols;
  run_jitx("softmax", size, float32, bytes, 0, [](Array v) { return nn::softmax(v, -1); }, x);
  run_jitx("layer_norm", size, float32, bytes, 0, [](Array v) { return nn::layer_norm(v); }, x);
  run_jitx("column_sum", size, float32, 4.0 * rows * cols + 4.0 * cols, 0, [](Array v) { return jnp::sum(v, {0}); }, x);
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat ex = Eigen::Map<Mat>(randn(rows * cols, 1.0f, 5).data(), rows, cols), ey(rows, cols);
  auto st = bench::measure([&] {
    Eigen::VectorXf m = ex.rowwise().maxCoeff();
    ey = (ex.colwise() - m).array().exp();
    Eigen::VectorXf s = ey.rowwise().sum();
    ey.array().colwise() /= s.array();
  }, g_min_time);
  emit({"softmax", size, "f32", "eigen", st, bytes, 0, -1, ""});
  auto sl = bench::measure([&] {
    Eigen::VectorXf mu = ex.rowwise().mean();
    ey = ex.colwise() - mu;
    Eigen::VectorXf var = ey.array().square().rowwise().mean();
    ey.array().colwise() *= (var.array() + 1e-5f).rsqrt();
  }, g_min_time);
  emit({"layer_norm", size, "f32", "eigen", sl, bytes, 0, -1, ""});
  Eigen::RowVectorXf cs(cols);
  auto sc = bench::measure([&] { cs = ex.colwise().sum(); }, g_min_time);
  emit({"column_sum", size, "f32", "eigen", sc, 4.0 * rows * cols + 4.0 * cols, 0, -1, ""});
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

void pending(const std::string& workload, const std::string& why) {
  emit({workload, "-", "-", "jitx", {}, 0, 0, -1, "pending: " + why});
}
}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--smoke") g_smoke = true;
    else if (a == "--quick") g_quick = true;
    else if (a == "--only" && i + 1 < argc) g_only = argv[++i];
    else {
      std::fprintf(stderr, "usage: jitx_bench [--smoke] [--quick] [--only <workload>]\n");
      return 2;
    }
  }
  if (g_smoke) g_min_time = 0;  // one timed call each: a check that everything runs, not a measurement
  std::fprintf(stderr, "[jitx_bench] platform=%s threads=%u mode=%s\n",
               config().platform.empty() ? "default" : config().platform.c_str(), std::thread::hardware_concurrency(),
               g_smoke ? "smoke" : g_quick ? "quick" : "full");
  if (want("probe_triad")) probe_triad(g_smoke ? 1 << 12 : g_quick ? 1 << 22 : 1 << 26);
  if (want("probe_gemm")) probe_gemm(g_smoke ? 32 : g_quick ? 256 : 1024);
  if (want("mlp_block")) {
    if (g_smoke) {
      bench_mlp(8, 16, 16, float32);
      bench_mlp(8, 16, 16, bfloat16);
    } else if (g_quick) {
      bench_mlp(64, 128, 128, float32);
    } else {
      for (DType dt : {float32, bfloat16}) {
        bench_mlp(2048, 1024, 1024, dt);
        bench_mlp(4096, 4096, 4096, dt);
      }
    }
  }
  if (want("gelu_chain")) bench_elementwise(g_smoke ? 256 : g_quick ? 1 << 16 : 1 << 24, float32);
  if (want("rows")) {
    if (g_smoke) bench_rows(8, 32);
    else if (g_quick) bench_rows(64, 256);
    else bench_rows(4096, 4096);
  }
  if (want("dispatch")) bench_dispatch();
  if (want("train_step")) pending("train_step", "needs autodiff (issue 6)");
  if (want("scan_layers")) pending("scan_layers", "needs lax::scan (issue 5)");
  return 0;
}
