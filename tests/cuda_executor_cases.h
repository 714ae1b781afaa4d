// The CUDA executable's checks, shared by the fake driver's plumbing test (tests/cuda_fake_test.cpp, kernels computed
// on the host) and the GPU run (tests/cuda_gpu_test.cpp, "[gpu]"): jit calls, eager ops, control flow and gradients on
// arrays committed to a CUDA device run there and match the same calls on the cpu.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "jitx/cuda.h"
#include "jitx/jitx.h"

namespace jitx::testing {

inline void check_close(const Array& got, const Array& want, double tol) {
  INFO("got dtype " << dtype_name(got.dtype()) << ", want " << dtype_name(want.dtype()));
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  int64_t bad = 0;
  for (size_t i = 0; i < w.size(); ++i) bad += !(std::abs(g[i] - w[i]) <= tol * (1 + std::abs(w[i])));
  CHECK(bad == 0);
}

inline void check_executor_on(const Device& dev) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  auto randn = [&](std::vector<int64_t> dims) {
    std::vector<float> v(static_cast<size_t>(detail::num_elements(dims)));
    for (auto& e : v) e = nd(rng);
    return array(v, dims);
  };
  Array x = randn({16, 32}), w = randn({32, 24}), b = randn({24}), y = randn({16, 24});
  Array xc = device_put(x, dev), wc = device_put(w, dev), bc = device_put(b, dev), yc = device_put(y, dev);
  const double f32 = 2e-5;  // the evaluator (double, rounded per op) against the cpu's f32 kernels

  {  // the MLP block, softmax and a multi-output function
    auto mlp = [](Array a, Array ww, Array bb) { return nn::relu(jnp::matmul(a, ww) + bb); };
    Array got = jit(mlp)(xc, wc, bc);
    CHECK(device_of(got) == dev);
    check_close(got, jit(mlp)(x, w, b), f32);
    auto sm = [](Array a) { return nn::softmax(a * 3.0f, -1); };
    check_close(jit(sm)(xc), jit(sm)(x), f32);
    auto two = [](Array a) { return std::make_tuple(jnp::sum(a, {0}), jnp::tanh(a) * 2.0f, jnp::max(a)); };
    auto [g0, g1, g2] = jit(two)(xc);
    auto [w0, w1, w2] = jit(two)(x);
    check_close(g0, w0, f32);
    check_close(g1, w1, f32);
    check_close(g2, w2, 0);
  }
  {  // empty arrays: no launch, no matmul, the right shapes (and a sum over nothing is 0)
    Array e = zeros({0, 32}), ec = device_put(e, dev);
    auto f = [](Array a, Array ww) { return std::make_tuple(jnp::tanh(jnp::matmul(a, ww)), jnp::sum(a, {0})); };
    auto [r0, r1] = jit(f)(ec, wc);
    auto [h0, h1] = jit(f)(e, w);
    check_close(r0, h0, 0);
    check_close(r1, h1, 0);
    CHECK(r0.shape() == Shape{0, 24});
  }
  {  // dots: batched, transposed operands, bf16 (f32 and bf16 results), f64
    Array a3 = randn({4, 16, 8}), b3 = randn({4, 8, 12});
    auto bmm = [](Array p, Array q) { return jnp::matmul(p, q); };
    check_close(jit(bmm)(device_put(a3, dev), device_put(b3, dev)), jit(bmm)(a3, b3), f32);
    auto tn = [](Array p, Array q) { return jnp::matmul(jnp::transpose(p), q) * 0.5f; };  // [32,16] @ [16,24]
    check_close(jit(tn)(xc, yc), jit(tn)(x, y), f32);
    auto nt = [](Array p, Array q) { return jnp::matmul(p, jnp::transpose(q)); };  // [16,32] @ [32,16]
    check_close(jit(nt)(xc, xc), jit(nt)(x, x), f32);
    auto half = [](Array p, Array q) { return jnp::matmul(p.astype(bfloat16), q.astype(bfloat16)); };
    check_close(jit(half)(xc, wc), jit(half)(x, w), 1e-2);
    auto wide = [](Array p, Array q) {
      return lax::dot_general(p.astype(bfloat16), q.astype(bfloat16), {{1}, {0}, {}, {}}, float32);
    };
    check_close(jit(wide)(xc, wc), jit(wide)(x, w), 1e-3);
    auto dbl = [](Array p, Array q) { return jnp::matmul(p.astype(float64), q.astype(float64)) + 1.0; };
    check_close(jit(dbl)(xc, wc), jit(dbl)(x, w), 1e-12);
  }
  {  // control flow: fori_loop, while_loop and cond bodies run as the device's kernels
    auto loop = [](Array a) {
      return lax::fori_loop(
          0, 5, [](Array i, Array c) { return c * 0.5f + jnp::sin(c) + i.astype(float32); }, a);
    };
    check_close(jit(loop)(xc), jit(loop)(x), 1e-4);
    auto wl = [](Array a) {
      auto out = lax::while_loop([](const std::vector<Array>& s) { return s[1] < 7; },
                                 [](const std::vector<Array>& s) {
                                   return std::vector<Array>{s[0] * 1.5f - 0.25f, s[1] + 2};
                                 },
                                 std::vector<Array>{a, Array(0)});
      return out[0];
    };
    check_close(jit(wl)(xc), jit(wl)(x), f32);
    auto cf = [](Array a) {
      return lax::cond(
          jnp::sum(a) > 0.0f, [](Array v) { return v * 2.0f; }, [](Array v) { return jnp::exp(v); }, a);
    };
    check_close(jit(cf)(xc), jit(cf)(x), f32);
    check_close(jit(cf)(-xc - 10.0f), jit(cf)(-x - 10.0f), f32);
    auto sc = [](Array a) {
      auto [carry, ys] =
          lax::scan([](const Array& c, const Array& row) { return std::make_pair(c * 0.9f + row, jnp::tanh(c)); },
                    jnp::zeros({32}), a);
      return std::make_tuple(carry, ys);
    };
    auto [c0, y0] = jit(sc)(xc);
    auto [c1, y1] = jit(sc)(x);
    check_close(c0, c1, 1e-4);
    check_close(y0, y1, 1e-4);
  }
  {  // grad, integer ops, eager ops and host arrays mixed in
    auto loss = [](Array a, Array ww, Array t) {
      Array h = jnp::tanh(jnp::matmul(a, ww));
      return jnp::mean(jnp::square(h - t));
    };
    auto g = jit(grad(loss, argnums<0, 1>));
    auto [gc0, gc1] = g(xc, wc, yc);
    auto [gh0, gh1] = g(x, w, y);
    CHECK(device_of(gc0) == dev);
    check_close(gc0, gh0, 1e-4);
    check_close(gc1, gh1, 1e-4);
    Array i = array(std::vector<int32_t>{5, -7, 12, 2147483647, -3, 0});
    Array ic = device_put(i, dev);
    auto ints = [](Array v) { return (v * 3) % 7 + jnp::abs(v) / 2; };
    check_close(jit(ints)(ic), jit(ints)(i), 0);
    Array e = jnp::exp(xc) + xc * 2.0f;  // eager: each op runs on the device
    CHECK(device_of(e) == dev);
    check_close(e, jnp::exp(x) + x * 2.0f, f32);
    check_close(jnp::sum(xc, {1}), jnp::sum(x, {1}), f32);
    Array host = randn({16, 32});  // uncommitted: copied to the device for the call
    check_close(jit([](Array a, Array h) { return a * h; })(xc, host), x * host, 0);
    // What has no device kernel yet (a sort, a gather) runs on the host between the device's kernels.
    auto srt = [](Array a) { return lax::slice(jnp::sort(jnp::exp(a), 1), {0, 0}, {8, 32}) * 2.0f; };
    check_close(jit(srt)(xc), jit(srt)(x), f32);
    Array idx = array(std::vector<int32_t>{3, 0, 15, 7});
    auto take = [](Array a, Array i) { return jnp::take(jnp::tanh(a), i, 0) + 1.0f; };
    check_close(jit(take)(xc, idx), jit(take)(x, idx), f32);
    Array back = device_put(e, default_device());
    CHECK(device_of(back) == default_device());
    check_close(back, jnp::exp(x) + x * 2.0f, f32);
  }
}

}  // namespace jitx::testing
