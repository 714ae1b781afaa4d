// The CUDA executable's checks, shared by the fake driver's plumbing test (tests/cuda_fake_test.cpp, kernels computed
// on the host) and the GPU run (tests/cuda_gpu_test.cpp, "[gpu]"): jit calls, eager ops, control flow and gradients on
// arrays committed to a CUDA device run there and match the same calls on the cpu.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <type_traits>
#include <utility>
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
    // cuBLASLt's epilogues where it is there (bias; GELU and bias; ReLU and bias above), f32 and bf16
    auto gelu_mlp = [](Array a, Array ww, Array bb) { return nn::gelu(jnp::matmul(a, ww) + bb); };
    check_close(jit(gelu_mlp)(xc, wc, bc), jit(gelu_mlp)(x, w, b), f32);
    auto affine = [](Array a, Array ww, Array bb) { return jnp::matmul(a, ww) + bb; };
    check_close(jit(affine)(xc, wc, bc), jit(affine)(x, w, b), f32);
    auto h = [](const Array& a) { return a.astype(DType::bfloat16); };
    check_close(jit(gelu_mlp)(h(xc), h(wc), h(bc)), jit(gelu_mlp)(h(x), h(w), h(b)), 2e-2);
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
    // A sort (a block per line, bitonic) and a take (a gather) are kernels too.
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

// Every kind of kernel the backend emits, each against the same jitted call on the cpu, on random inputs: rows
// reduced by a warp (short rows, several rows per block, a row count that leaves warps idle) and by a block (1024
// columns and more, not a multiple of the block), column and middle reductions (a loop per output element),
// multi-output fusions, every data-movement op, integer/bool/bf16/f64 elementwise ops and conversions, f32 math
// at its edges, and a loop kernel whose grid-stride loop goes round more than once (more elements than threads).
inline void check_kernel_kinds_on(const Device& dev) {
  std::mt19937 rng(11);
  std::normal_distribution<double> nd;
  auto randn = [&](std::vector<int64_t> dims, DType dt = DType::float32) {
    std::vector<double> v(static_cast<size_t>(detail::num_elements(dims)));
    for (auto& e : v) e = nd(rng);
    return array(v, dims).astype(dt);
  };
  auto randi = [&](std::vector<int64_t> dims, int lo, int hi, DType dt = DType::int32) {
    std::uniform_int_distribution<int> u(lo, hi);
    std::vector<int32_t> v(static_cast<size_t>(detail::num_elements(dims)));
    for (auto& e : v) e = u(rng);
    return array(v, dims).astype(dt);
  };
  auto on = [&](const Array& a) { return device_put(a, dev); };
  const double f32 = 2e-5, f64 = 1e-13, bf16 = 1e-2;
  auto same = [&](auto f, std::vector<Array> args, double tol) {
    std::vector<Array> dargs;
    for (auto& a : args) dargs.push_back(on(a));
    auto call = [&](std::vector<Array>& as) {
      auto jf = jit(f);
      if constexpr (std::is_invocable_v<decltype(f), Array>)
        return jf(as.at(0));
      else if constexpr (std::is_invocable_v<decltype(f), Array, Array>)
        return jf(as.at(0), as.at(1));
      else
        return jf(as.at(0), as.at(1), as.at(2));
    };
    Array got = call(dargs);
    CHECK(device_of(got) == dev);
    check_close(got, call(args), tol);
  };
  {  // row kernels: a block per row (>= 1024 columns), a warp per row (shorter)
    same([](Array a) { return nn::softmax(a, -1); }, {randn({6, 2500})}, f32);
    same([](Array a) { return nn::standardize(a, -1); }, {randn({5, 1024})}, 1e-4);
    same([](Array a) { return nn::logsumexp(a, -1); }, {randn({3, 4097}, DType::float64)}, f64);
    same([](Array a) { return jnp::sum(a, {1}); }, {randi({4, 3000}, -1000, 1000)}, 0);
    same([](Array a) { return jnp::max(a, {1}); }, {randn({3, 1500}, DType::bfloat16)}, 0);
    same([](Array a) { return jnp::var(a, {1}); }, {randn({37, 50})}, 1e-4);
    same([](Array a) { return jnp::min(a * 2.0, {-1}); }, {randn({9, 3, 33}, DType::float64)}, 0);
    same([](Array a) { return jnp::sum(a, {1}); }, {randn({64, 700}, DType::bfloat16)}, bf16);
    same([](Array a) { return a - jnp::mean(a, {1}, true) * jnp::max(a, {1}, true); }, {randn({20, 1100})}, 1e-4);
  }
  {  // loop kernels with reductions inside: columns, middle dims, everything
    same([](Array a) { return jnp::max(a, {0}); }, {randn({300, 7})}, 0);
    same([](Array a, Array b) { return jnp::var(a, {0}) + jnp::mean(a * b, {0}); },
         {randn({600, 50}), randn({600, 50})}, 1e-5);
    same([](Array a) { return jnp::sum(a, {1}); }, {randn({4, 5, 6})}, f32);
    same([](Array a) { return jnp::sum(a, {0, 2}); }, {randn({40, 3, 30}, DType::float64)}, f64);
    same([](Array a) { return jnp::prod(a, {0}) + jnp::sum(a); }, {randi({5, 9}, -3, 3, DType::int64)}, 0);
    same([](Array a) { return jnp::any(a > 1.5, {0}); }, {randn({50, 4})}, 0);
    auto multi = [](Array a) {
      Array m = jnp::mean(a, {1}, true);
      return std::make_tuple(jnp::squeeze(m, {1}), jnp::tanh(a - m), jnp::sum(jnp::square(a), {1}));
    };
    Array xm = randn({33, 65});
    auto [a0, a1, a2] = jit(multi)(on(xm));
    auto [b0, b1, b2] = jit(multi)(xm);
    check_close(a0, b0, f32);
    check_close(a1, b1, f32);
    check_close(a2, b2, 1e-4);
  }
  {  // data movement
    Array x3 = randn({3, 4, 5});
    same([](Array a) { return jnp::transpose(a, {2, 0, 1}) + 1.0f; }, {x3}, 0);
    same([](Array a) { return jnp::flip(a, {0, 2}) * 2.0f; }, {x3}, 0);
    same([](Array a) { return lax::pad(a, Array(-1.5f), {{1, 2, 1}, {0, -1, 0}, {2, 0, 2}}); }, {x3}, 0);
    same([](Array a, Array b) { return jnp::concatenate({a, b * 2.0f, a}, 1); }, {x3, randn({3, 2, 5})}, 0);
    same([](Array a) { return lax::slice(a, {1, 0, 1}, {3, 4, 5}, {1, 3, 2}); }, {x3}, 0);
    Array at = array(std::vector<int32_t>{1, 7, -2});  // clamped into range, as XLA does
    same([](Array a, Array i) { return lax::dynamic_slice(a, {i[0], i[1], i[2]}, {2, 2, 3}); }, {x3, at}, 0);
    same(
        [](Array a, Array u, Array i) {
          return lax::dynamic_update_slice(a, u, {i[0], i[1], i[2]});
        },
        {x3, randn({2, 3, 2}), at}, 0);
    same(
        [](Array a) {
          return a * lax::broadcasted_iota(DType::float32, {3, 4, 5}, 2) + jnp::reshape(a, {5, 4, 3}).T();
        },
        {x3}, f32);
    same([](Array a, Array b) { return jnp::where(a > b, jnp::clip(a, -0.5f, 0.5f), b); }, {x3, randn({3, 4, 5})}, 0);
    // an embedding lookup (a gather) and its gradient (a scatter-add over duplicate ids)
    Array ids = array(std::vector<int32_t>{3, 0, 7, 3, 3, 9, 0, 1});
    auto emb_grad = [](Array table, Array i) {
      return grad([i](Array t) { return jnp::sum(jnp::tanh(jnp::take(t, i, 0)) * 1.5f); })(table);
    };
    same(emb_grad, {randn({10, 6}), ids}, 1e-5);
    same([](Array a) { return jnp::argmax(a, 1) + jnp::argmin(a, 0); }, {randn({12, 12})}, 0);
    same(
        [](Array a) {
          auto [v, i] = lax::top_k(a, 4);
          return v * i.astype(DType::float32);
        },
        {randn({9, 50})}, 0);
    // a convolution and both of its gradients (the transposed convolutions: lhs dilation, batch groups)
    auto conv_grads = [](Array img, Array k) {
      auto loss = [](Array a, Array kk) {
        auto dn = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
        return jnp::sum(jnp::tanh(lax::conv_general_dilated(a, kk, {2, 2}, {{1, 1}, {1, 1}}, {}, {}, dn)));
      };
      auto [ga, gk] = grad(loss, argnums<0, 1>)(img, k);
      return jnp::sum(ga * ga) + jnp::sum(gk);
    };
    same(conv_grads, {randn({2, 7, 7, 3}), randn({3, 3, 3, 4})}, 1e-4);
    // reduce-windows: a cumulative sum and a 2x2 max pool
    same([](Array a) { return jnp::cumsum(a, 1); }, {randn({6, 70})}, 1e-5);
    same([](Array a) { return lax::reduce_window_max(a, {{2, 2}, {2, 2}, {{0, 0}, {0, 0}}}); }, {randn({8, 10})}, 0);
  }
  {  // integer, bool, bf16 and f64 elementwise ops and conversions
    Array i = randi({257}, -100000, 100000), j = randi({257}, -50, 50);
    same([](Array a, Array b) { return jnp::floor_divide(a, jnp::where(b == 0, 7, b)) + jnp::remainder(a, 13); },
         {i, j}, 0);
    same([](Array a, Array b) { return a / jnp::where(b == 0, -3, b) + a % jnp::where(b == 0, 5, b); },
         {i.astype(DType::int64), j.astype(DType::int64)}, 0);
    same(
        [](Array a, Array b) {
          Array u = a.astype(DType::uint32);
          return lax::shift_right_logical(u, (b & 31).astype(DType::uint32)) ^ lax::population_count(u) |
                 jnp::left_shift(u, 3);
        },
        {i, j}, 0);
    same([](Array a) { return jnp::right_shift(lax::bitcast_convert_type(a, DType::int32), 3); }, {randn({64})}, 0);
    same([](Array a) { return (a.astype(DType::int8) * 3).astype(DType::float32); }, {randi({100}, -40, 40)}, 0);
    same([](Array a) { return jnp::logical_xor(a > 0.0f, a < 0.5f) & (a != 0.25f); }, {randn({70})}, 0);
    same([](Array a) { return lax::integer_pow(a, 3) - jnp::power(a, 2); }, {randi({50}, -20, 20)}, 0);
    same([](Array a, Array b) { return (a * b + jnp::exp(a)).astype(DType::float32); },
         {randn({90}, DType::bfloat16), randn({90}, DType::bfloat16)}, bf16);
    same([](Array a) { return a.astype(DType::bfloat16).astype(DType::float16).astype(DType::float32); },
         {randn({128})}, 0);
    same(
        [](Array a, Array b) {
          return jnp::exp(a) + jnp::log1p(jnp::abs(a)) + jnp::tanh(b) + lax::erf(a) + jnp::sin(b) + jnp::arctan2(a, b);
        },
        {randn({77}, DType::float64), randn({77}, DType::float64)}, f64);
  }
  {  // f32 math at its edges: infinities, NaN, overflow and underflow, subnormal results
    float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    Array e = array(std::vector<float>{-inf, inf, nan, 100.0f, -100.0f, 88.7f, -87.5f, -103.0f, 1e-30f, -0.0f, 0.0f,
                                       3.5f, -7.25f, 1e30f, -1e30f, 20.0f});
    auto fs = [](Array a) {
      return std::make_tuple(jnp::exp(a), jnp::log(a), jnp::tanh(a), nn::sigmoid(a), jnp::sqrt(a), jnp::expm1(a),
                             nn::gelu(a, false), jnp::sin(a));
    };
    auto [d0, d1, d2, d3, d4, d5, d6, d7] = jit(fs)(on(e));
    auto [h0, h1, h2, h3, h4, h5, h6, h7] = jit(fs)(e);
    for (auto [g, w] : {std::pair{d0, h0}, {d1, h1}, {d2, h2}, {d3, h3}, {d4, h4}, {d5, h5}, {d6, h6}, {d7, h7}}) {
      std::vector<float> gv = g.to_vector<float>(), wv = w.to_vector<float>();
      for (size_t k = 0; k < gv.size(); ++k) {
        INFO("element " << k << ": got " << gv[k] << ", want " << wv[k]);
        CHECK((std::isnan(gv[k]) ? std::isnan(wv[k])
                                 : gv[k] == wv[k] || std::abs(gv[k] - wv[k]) <= 2e-6 * (1 + std::abs(wv[k]))));
      }
    }
  }
  {  // more elements than the grid's threads (65536 blocks of 256): the grid-stride loop goes round twice
    std::vector<uint8_t> big(256 * 65536 + 1000);
    for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<uint8_t>(k * 2654435761u >> 13);
    Array b = array(big);
    auto f = [](Array a) { return a * 3 + 1; };
    Array got = jit(f)(on(b));
    std::vector<uint8_t> g = got.to_vector<uint8_t>();
    int64_t bad = 0;
    for (size_t k = 0; k < big.size(); ++k) bad += g[k] != static_cast<uint8_t>(big[k] * 3 + 1);
    CHECK(bad == 0);
  }
}

// Dots of every form against the same calls on the cpu: plain, batched, transposed operands, batch and contracting
// dims anywhere (einsum), several contracting dims, sizes off the 16-element tile, integer dots (s8 operands with an
// s32 result), bf16 and f64, an output fusion (dot, bias, GELU) and a dot inside a loop. Where cuBLASLt is missing
// (or for forms it has no matmul for: integers, dims out of order) they run as generated tiled kernels.
inline void check_dots_on(const Device& dev) {
  std::mt19937 rng(13);
  std::normal_distribution<double> nd;
  auto randn = [&](std::vector<int64_t> dims, DType dt = DType::float32) {
    std::vector<double> v(static_cast<size_t>(detail::num_elements(dims)));
    for (auto& e : v) e = nd(rng);
    return array(v, dims).astype(dt);
  };
  auto randi = [&](std::vector<int64_t> dims, int lo, int hi, DType dt) {
    std::uniform_int_distribution<int> u(lo, hi);
    std::vector<int32_t> v(static_cast<size_t>(detail::num_elements(dims)));
    for (auto& e : v) e = u(rng);
    return array(v, dims).astype(dt);
  };
  auto on = [&](const Array& a) { return device_put(a, dev); };
  auto same2 = [&](auto f, const Array& a, const Array& b, double tol) {
    Array got = jit(f)(on(a), on(b));
    CHECK(device_of(got) == dev);
    check_close(got, jit(f)(a, b), tol);
  };
  const double f32 = 1e-5;
  same2([](Array a, Array b) { return jnp::matmul(a, b); }, randn({37, 50}), randn({50, 21}), f32);
  same2([](Array a, Array b) { return jnp::matmul(a, b); }, randn({3, 17, 40}), randn({3, 40, 33}), f32);
  same2([](Array a, Array b) { return jnp::matmul(a.T(), b.T()); }, randn({20, 31}), randn({9, 20}), f32);
  same2([](Array a, Array b) { return jnp::einsum("bik,jbk->jbi", {a, b}); }, randn({4, 18, 7}), randn({5, 4, 7}), f32);
  same2(
      [](Array a, Array b) {
        return jnp::einsum("ijkl,kjm->mil", {a, b});
      },
      randn({6, 5, 4, 3}), randn({4, 5, 19}), f32);
  same2(
      [](Array a, Array b) {
        return lax::dot_general(a, b, {{1}, {0}, {}, {}}, DType::int32);
      },
      randi({25, 40}, -128, 127, DType::int8), randi({40, 17}, -128, 127, DType::int8), 0);
  same2([](Array a, Array b) { return jnp::matmul(a, b); }, randi({8, 300}, -1000, 1000, DType::int32),
        randi({300, 5}, -1000, 1000, DType::int32), 0);
  same2([](Array a, Array b) { return jnp::matmul(a, b); }, randn({33, 64}, DType::bfloat16),
        randn({64, 48}, DType::bfloat16), 1e-2);
  same2(
      [](Array a, Array b) {
        return lax::dot_general(a, b, {{1}, {0}, {}, {}}, DType::float32);
      },
      randn({33, 64}, DType::bfloat16), randn({64, 48}, DType::bfloat16), 1e-5);
  same2([](Array a, Array b) { return jnp::matmul(a, b); }, randn({19, 45}, DType::float64),
        randn({45, 16}, DType::float64), 1e-12);
  same2([](Array a, Array b) { return jnp::dot(a, b); }, randn({77}), randn({77}), f32);
  same2([](Array a, Array b) { return jnp::matmul(a, b); }, randn({1, 1}), randn({1, 300}), f32);
  Array x = randn({24, 64}), w = randn({64, 40}), bias = randn({40});
  auto mlp = [](Array a, Array ww, Array bb) { return nn::gelu(jnp::matmul(a, ww) + bb); };
  check_close(jit(mlp)(on(x), on(w), on(bias)), jit(mlp)(x, w, bias), f32);
  auto loop = [](Array a, Array ww) {
    return lax::fori_loop(
        0, 3, [ww](Array, Array c) { return jnp::tanh(jnp::matmul(c, ww)); }, a);
  };
  Array sq = randn({64, 64}) * 0.2f;
  same2(loop, x, sq, 1e-5);
}

// A small decoder layer's training step on the device against the same step on the cpu: token embedding (a gather)
// and its gradient (a scatter-add), causal self-attention (batched dots, a masked softmax), layer norm, a GELU MLP
// (dots with their epilogues), a log-softmax loss over the vocabulary with one_hot targets, grad of every
// parameter and an SGD update: every kind of kernel in one program, as a user's training loop runs it.
inline void check_training_step_on(const Device& dev) {
  std::mt19937 rng(17);
  std::normal_distribution<float> nd;
  auto randn = [&](std::vector<int64_t> dims, float scale) {
    std::vector<float> v(static_cast<size_t>(detail::num_elements(dims)));
    for (auto& e : v) e = nd(rng) * scale;
    return array(v, dims);
  };
  const int64_t B = 2, T = 8, D = 16, V = 11;
  std::vector<int32_t> tok(B * T), tgt(B * T);
  std::uniform_int_distribution<int32_t> u(0, V - 1);
  for (auto& t : tok) t = u(rng);
  for (auto& t : tgt) t = u(rng);
  Array tokens = array(tok, {B, T}), targets = array(tgt, {B, T});
  std::vector<Array> params{randn({V, D}, 0.5f),     randn({D, D}, 0.3f),     randn({D, D}, 0.3f),
                            randn({D, D}, 0.3f),     randn({D, 2 * D}, 0.3f), randn({2 * D}, 0.1f),
                            randn({2 * D, D}, 0.3f), randn({D, V}, 0.3f)};
  auto step = [](std::vector<Array> p, Array toks, Array tg) {
    auto loss = [toks, tg](std::vector<Array> q) {
      Array x = jnp::take(q[0], toks, 0);  // [B, T, D]
      Array h = nn::layer_norm(x);
      Array qh = jnp::matmul(h, q[1]), kh = jnp::matmul(h, q[2]), vh = jnp::matmul(h, q[3]);
      Array scores = jnp::matmul(qh, jnp::swapaxes(kh, 1, 2)) * 0.25f;  // [B, T, T]
      Array causal = jnp::tril(jnp::ones({8, 8})) > 0.0f;
      Array attn = nn::softmax(jnp::where(causal, scores, Array(-1e9f)), -1);
      x = x + jnp::matmul(attn, vh);
      Array m = nn::gelu(jnp::matmul(nn::layer_norm(x), q[4]) + q[5]);
      x = x + jnp::matmul(m, q[6]);
      Array logp = nn::log_softmax(jnp::matmul(x, q[7]), -1);
      return -jnp::mean(jnp::sum(logp * nn::one_hot(tg, 11), {-1}));
    };
    auto [l, g] = value_and_grad(loss)(p);
    std::vector<Array> out{l};
    for (size_t k = 0; k < p.size(); ++k) out.push_back(p[k] - g[k] * 0.1f);
    return out;
  };
  auto f = jit(step);
  std::vector<Array> on;
  for (auto& p : params) on.push_back(device_put(p, dev));
  std::vector<Array> got = f(on, device_put(tokens, dev), device_put(targets, dev));
  std::vector<Array> want = f(params, tokens, targets);
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("output " << k << " (0: the loss, then the updated parameters)");
    CHECK(device_of(got[k]) == dev);
    check_close(got[k], want[k], 1e-4);
  }
}

}  // namespace jitx::testing
