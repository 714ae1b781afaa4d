// Uses jitx from another project (installed, add_subdirectory, or a plain command line): jit a function, take one
// optimiser step (optim.h comes with jitx.h), share host memory through DLPack (host.h, dlpack.h) and check the
// results.
#include <jitx/jitx.h>

#include <cstdio>

int main() {
  auto f = jitx::jit([](jitx::Array x) { return jitx::jnp::sum(x * x); });
  float r = f(jitx::array<float>({1, 2, 3})).item<float>();
  jitx::Array w = jitx::array<float>({1, 2});
  auto [w2, state] = jitx::optim::sgd_update(w, jitx::array<float>({1, 1}), jitx::optim::sgd_init(w),
                                             jitx::full({}, 0.5));
  float w0 = w2.to_vector<float>()[0];
  alignas(64) static float buf[4] = {1, 2, 3, 4};
  DLManagedTensor* t = jitx::to_dlpack(jitx::from_host(buf, {4}, jitx::float32, nullptr));
  bool shared = t->dl_tensor.data == buf;
  t->deleter(t);
  std::printf("consumer: %g %g %d\n", r, w0, int(shared));
  return r == 14.0f && w0 == 0.5f && shared ? 0 : 1;
}
