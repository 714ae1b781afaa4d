// The MLP block of the XLA article: gelu(x @ w + b) then layer normalisation.
#include <cstdio>
#include <iostream>

#include "jitx/jitx.h"

using namespace jitx;

Array block(Array x, Array w, Array b) {
  Array h = nn::gelu(jnp::matmul(x, w) + b);
  Array mu = jnp::mean(h, {-1}, true);
  Array var = jnp::mean(jnp::square(h - mu), {-1}, true);
  return (h - mu) * lax::rsqrt(var + 1e-5);
}

int main() {
  const int64_t M = 8, K = 16, N = 16;
  std::vector<float> xs(M * K), ws(K * N), bs(N);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>((i * 37 % 17) - 8) / 8.0f;
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<float>((i * 11 % 13) - 6) / 13.0f;
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<float>(i) / 16.0f;
  Array x = array(xs, {M, K}), w = array(ws, {K, N}), b = array(bs, {N});

  std::cout << "== jaxpr ==\n" << make_jaxpr(block)(x, w, b) << "\n\n";
  auto jblock = jit(block, {.name = "block"});
  auto lowered = jblock.lower(x, w, b);
  std::cout << "== StableHLO ==\n" << lowered.as_text() << "\n";
  auto compiled = lowered.compile();
  std::cout << "== HLO ==\n" << compiled.as_text() << "\n";
  Array out = jblock(x, w, b);
  out.block_until_ready();
  std::cout << "== result (first row) ==\n" << out[0] << "\n";
  return 0;
}
