// A stack of transformer-style layers (matmul, gelu, layer norm) over stacked weights: lax::scan vs a C++ loop.
// The scan traces and compiles one layer whatever the depth; the C++ loop unrolls into depth copies of it.
#include <chrono>
#include <cstdio>
#include <random>

#include "jitx/jitx.h"

using namespace jitx;

struct Layers {
  Array w1, w2;  // [depth, d, 4d], [depth, 4d, d]
};
JITX_PYTREE(Layers, w1, w2)

/// One residual MLP block: layer_norm(x + gelu(x W1) W2).
Array block(const Array& x, const Array& w1, const Array& w2) {
  return nn::layer_norm(x + jnp::matmul(nn::gelu(jnp::matmul(x, w1)), w2));
}

Array stack_scan(Array x, Layers p) {
  return lax::scan(
             [](Array h, const std::pair<Array, Array>& w) {
               return std::make_pair(block(h, w.first, w.second), std::tuple<>{});
             },
             x, std::make_pair(p.w1, p.w2))
      .first;
}

Array stack_unrolled(Array x, Layers p) {
  for (int64_t l = 0; l < p.w1.dim(0); ++l) x = block(x, p.w1[l], p.w2[l]);
  return x;
}

int64_t instruction_count(const std::string& hlo) {
  int64_t n = 0;
  for (size_t at = hlo.find("\n  "); at != std::string::npos; at = hlo.find("\n  ", at + 1)) ++n;
  return n;
}

template <class F>
void report(const char* name, F f, const Array& x, const Layers& p) {
  auto t0 = std::chrono::steady_clock::now();
  auto compiled = jit(f).lower(x, p).compile();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  Array y = compiled(x, p);
  std::printf("  %-9s %5lld HLO instructions, compiled in %8.2f ms, y[0,0] = %+.6f\n", name,
              static_cast<long long>(instruction_count(compiled.as_text())), ms, y.to_vector<float>()[0]);
}

int main() {
  const int64_t batch = 8, d = 32;
  std::mt19937 rng(0);
  std::normal_distribution<float> n(0.0f, 0.1f);
  auto random = [&](Shape s) {
    std::vector<float> v(static_cast<size_t>(s[0] * s[1] * (s.size() > 2 ? s[2] : 1)));
    for (auto& e : v) e = n(rng);
    return array(v, s);
  };
  Array x = random({batch, d});
  for (int64_t depth : {4, 16, 48}) {
    Layers p{random({depth, d, 4 * d}), random({depth, 4 * d, d})};
    std::printf("depth %lld:\n", static_cast<long long>(depth));
    report("scan", stack_scan, x, p);
    report("unrolled", stack_unrolled, x, p);
  }
  return 0;
}
