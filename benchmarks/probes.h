// The machine's compute limits, for the report's "% of peak" column: an FMA loop on every hardware thread (AVX2,
// and AVX-512 where the CPU has it) and the core clock (a chain of dependent integer adds, one per cycle).
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace bench {

/// Seconds for `iters` rounds of 12 independent FMA chains of 8-lane (AVX2) vectors: 12 * 16 flops a round.
/// Twelve chains cover two FMA ports times a 4-6 cycle latency.
__attribute__((target("avx2,fma"))) inline float fma_loop_avx2(int64_t iters) {
  __m256 a[12], x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], x, y);
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
  return _mm256_cvtss_f32(s);
}
/// The same with 16-lane (AVX-512) vectors: 12 * 32 flops a round.
__attribute__((target("avx512f"))) inline float fma_loop_avx512(int64_t iters) {
  __m512 a[12], x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], x, y);
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

/// GFLOP/s of `loop` run at once on `threads` threads (each `iters` rounds of `flops_per_iter`), the best of `reps`
/// runs (a shared machine's other processes only ever slow it down).
template <class Loop>
double fma_rate(Loop loop, int threads, int64_t iters, double flops_per_iter, int reps) {
  double best = 0;
  std::atomic<float> sink{0};
  for (int r = 0; r < reps; ++r) {
    std::atomic<int> ready{0};
    std::vector<std::thread> ts;
    std::vector<double> secs(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < threads) {
        }
        auto s = std::chrono::steady_clock::now();
        float v = loop(iters);
        secs[static_cast<size_t>(t)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
        sink.store(v);
      });
    for (auto& t : ts) t.join();
    double slowest = *std::max_element(secs.begin(), secs.end());
    best = std::max(best, threads * iters * flops_per_iter / slowest / 1e9);
  }
  return best;
}

/// The core clock in GHz: a chain of dependent multiplies (3 cycles each on every current x86 core: AMD Zen and
/// Intel alike), the best of `reps` runs. (A chain of immediate adds is not a clock: Intel's Golden Cove renamer
/// folds them, and such a chain read 18 GHz on a Xeon here.)
inline double clock_ghz(int reps) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    uint64_t x = 1, one = 1, n = 10'000'000;
    auto s = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < n; ++i)
      asm volatile("imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                   "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0"
                   : "+r"(x)
                   : "r"(one));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
    best = std::max(best, 3.0 * 8.0 * static_cast<double>(n) / secs / 1e9);
  }
  return best;
}

}  // namespace bench
