// The MLP block of the XLA article: gelu(x @ w + b) then layer normalisation, stage by stage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>

#include "jitx/jitx.h"

using namespace jitx;

Array block(Array x, Array w, Array b) {
  Array h = nn::gelu(jnp::matmul(x, w) + b);
  Array mu = jnp::mean(h, {-1}, true);
  Array var = jnp::mean(jnp::square(h - mu), {-1}, true);
  return (h - mu) * lax::rsqrt(var + 1e-5);
}

int main() {
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const int64_t M = 64, K = 128, N = 128;
  std::mt19937 gen(0);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  auto randn = [&](int64_t n, float scale) {
    std::vector<float> v(n);
    for (auto& e : v) e = dist(gen) * scale;
    return v;
  };
  Array x = array(randn(M * K, 1.0f), {M, K});
  Array w = array(randn(K * N, 1.0f / 11.3f), {K, N});
  Array b = array(randn(N, 0.1f), {N});

  std::cout << "== jaxpr ==\n" << make_jaxpr(block)(x, w, b) << "\n\n";

  auto jblock = jit(block, {.name = "block"});
  auto t0 = clock::now();
  auto lowered = jblock.lower(x, w, b);
  auto t1 = clock::now();
  std::cout << "== StableHLO (jit(block).lower(x, w, b).as_text()) ==\n" << lowered.as_text() << "\n";
  auto compiled = lowered.compile();
  auto t2 = clock::now();
  std::string hlo = compiled.as_text();
  std::cout << "== optimised HLO (compiled.as_text()) ==\n" << hlo << "\n";
  // The kernels XLA-style fusion made: bias + GELU in the dot's epilogue (kOutput), layer norm row by row (kRow).
  for (const char* kind : {"kLoop", "kInput", "kOutput", "kRow"}) {
    std::string needle = std::string("kind=") + kind;
    size_t n = 0;
    for (size_t p = hlo.find(needle); p != std::string::npos; p = hlo.find(needle, p + 1)) ++n;
    std::cout << "fusions of kind " << kind << ": " << n << "\n";
  }
  std::cout << "\n";
  std::cout << "== cost_analysis() ==\n" << compiled.cost_analysis_text() << "\n";
  std::cout << "== memory_analysis() ==\n" << compiled.memory_analysis().str() << "\n\n";

  Array out = compiled(x, w, b);
  out.block_until_ready();
  auto row = out[0].to_vector<float>();
  std::printf("== result ==\nshape (%lld, %lld), first row starts [%.5f, %.5f, %.5f, %.5f]\n", (long long)M,
              (long long)N, row[0], row[1], row[2], row[3]);
  double mean = 0, sq = 0;
  for (float v : row) mean += v;
  mean /= N;
  for (float v : row) sq += (v - mean) * (v - mean);
  std::printf("row 0 after layer norm: mean %.2e, variance %.5f (expected ~0 and ~1)\n\n", mean, sq / N);

  std::vector<double> times;
  for (int i = 0; i < 20; ++i) {
    auto s = clock::now();
    jblock(x, w, b).block_until_ready();
    times.push_back(ms(clock::now() - s));
  }
  std::sort(times.begin(), times.end());
  std::printf("== timing (platform: %s) ==\ntrace+lower %.2f ms, compile %.2f ms (reported apart)\n",
              default_platform().c_str(), ms(t1 - t0), ms(t2 - t1));
  std::printf("run: median %.3f ms, min %.3f ms over %zu calls (block_until_ready)\n", times[times.size() / 2],
              times.front(), times.size());
  return 0;
}
