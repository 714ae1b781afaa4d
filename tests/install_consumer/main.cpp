// Uses the installed jitx: jit a function and check its result.
#include <jitx/jitx.h>

#include <cstdio>

int main() {
  auto f = jitx::jit([](jitx::Array x) { return jitx::jnp::sum(x * x); });
  float r = f(jitx::array<float>({1, 2, 3})).item<float>();
  std::printf("consumer: %g\n", r);
  return r == 14.0f ? 0 : 1;
}
