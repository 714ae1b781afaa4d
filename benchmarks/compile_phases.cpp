// Where the article's MLP block's compile time goes: jit(mlp_block).lower(x, w, b).compile() at the benchmark's
// sizes in f32 and bf16, each compiled several times (a fresh jit each time, so nothing is cached), printing the
// median wall time, the median process CPU time (all threads: the CPU backend compiles kernels on one thread per
// core) and the median of every phase Compiled::compile_phases() lists.
//   compile_phases [--reps N] [--sizes MxKxN,...] [--dtype f32|bf16]
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "harness.h"
#include "jitx/jitx.h"

using namespace jitx;
using bench::randn;

namespace {
Array mlp_block(Array x, Array w, Array b) {  // as in jitx_bench.cpp
  Array h = nn::gelu(jnp::matmul(x, w) + b);
  Array mu = jnp::mean(h, {-1}, true);
  Array var = jnp::mean(jnp::square(h - mu), {-1}, true);
  return (h - mu) * lax::rsqrt(var + 1e-5);
}

double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::vector<std::array<int64_t, 3>> sizes{{256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024},
                                            {2048, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}};
  std::vector<DType> dtypes{float32, bfloat16};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--reps") {
      reps = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--sizes") {
      sizes.clear();
      int64_t m, k, n;
      int used = 0;
      for (const char* p = v.c_str(); std::sscanf(p, "%ldx%ldx%ld%n", &m, &k, &n, &used) == 3;
           p += used + (p[used] == ',')) {
        sizes.push_back({m, k, n});
        if (p[used] != ',') break;
      }
    } else if (a == "--dtype") {
      dtypes = {v == "bf16" ? bfloat16 : float32};
    } else {
      std::fprintf(stderr, "usage: compile_phases [--reps N] [--sizes MxKxN,...] [--dtype f32|bf16]\n");
      return 2;
    }
  }
  for (DType dt : dtypes) {
    for (auto [m, k, n] : sizes) {
      Array x = array(randn(m * k, 1.0f, 1), {m, k}, dt);
      Array w = array(randn(k * n, 1.0f / std::sqrt(float(k)), 2), {k, n}, dt);
      Array b = array(randn(n, 0.1f, 3), {n}, dt);
      std::vector<double> wall, cpu;
      std::vector<std::string> order;
      std::map<std::string, std::vector<double>> phases;
      for (int r = 0; r < reps; ++r) {
        auto t0 = bench::Clock::now();
        double c0 = cpu_ms();
        auto compiled = jit(mlp_block, {.name = "mlp_block"}).lower(x, w, b).compile();
        cpu.push_back(cpu_ms() - c0);
        wall.push_back(bench::seconds_since(t0) * 1e3);
        std::map<std::string, double> sum;  // a pass that runs twice counts once, with both times
        for (auto& p : compiled.compile_phases()) {
          if (r == 0 && !sum.count(p.name)) order.push_back(p.name);
          sum[p.name] += p.ms;
        }
        for (auto& [name, ms] : sum) phases[name].push_back(ms);
      }
      std::printf("%-4s %-15s compile %6.1f ms (cpu %6.1f ms):", std::string(dtype_name(dt)).c_str(),
                  fmt::format("{}x{}x{}", m, k, n).c_str(), median(wall), median(cpu));
      double hlo = 0;
      for (auto& name : order) {
        if (name.rfind("hlo.", 0) == 0) {
          hlo += median(phases[name]);
          continue;
        }
        if (name == "plan") std::printf(" hlo %.1f", hlo);
        std::printf(" %s %.1f", name.c_str(), median(phases[name]));
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}
