// jitx/lax_extra.h against JAX 0.10.2 (x64): the values, dtypes and shapes written here are JAX's for the same
// inputs; each runs eagerly and under jit.
#include "jitx/lax_extra.h"
#include "test_util.h"

using namespace jitx;

namespace {
std::vector<double> doubles(const Array& a) { return a.astype(DType::float64).to_vector<double>(); }
Array x234() { return jnp::arange(24.0, DType::float64).reshape({2, 3, 4}) * 0.5 - 3.0; }
/// f's result eagerly and under jit (the same values expected).
template <class F>
std::vector<Array> both(const F& f, const std::vector<Array>& args) {
  auto j = jit([f](std::vector<Array> a) { return f(a); });
  return {f(args), j(args)};
}
}  // namespace

TEST_CASE("lax: index_in_dim, dynamic_*_in_dim and dynamic_update_index_in_dim as JAX", "[lax][jax_parity]") {
  using A = std::vector<Array>;
  for (const Array& r : both([](const A& a) { return lax::index_in_dim(a[0], -1, 1, false); }, {x234()})) {
    CHECK(r.shape() == Shape{2, 4});
    CHECK(doubles(r) == std::vector<double>{1, 1.5, 2, 2.5, 7, 7.5, 8, 8.5});
  }
  const std::vector<double> sl = {-2, -1.5, 0, 0.5, 2, 2.5, 4, 4.5, 6, 6.5, 8, 8.5};
  for (int64_t start : {2, 5})  // 5 is clamped to 2, as dynamic_slice clamps
    for (const Array& r :
         both([](const A& a) { return lax::dynamic_slice_in_dim(a[0], a[1], 2, -1); }, {x234(), Array(start)}))
      CHECK(doubles(r) == sl);
  for (const Array& r :
       both([](const A& a) { return lax::dynamic_index_in_dim(a[0], a[1], 2, false); }, {x234(), Array(int64_t{3})}))
    CHECK(doubles(r) == std::vector<double>{-1.5, 0.5, 2.5, 4.5, 6.5, 8.5});
  for (const Array& r : both([](const A& a) { return lax::dynamic_update_index_in_dim(a[0], a[1], a[2], 1); },
                             {x234(), jnp::ones({2, 4}, DType::float64), Array(1)}))
    CHECK(doubles(r) == std::vector<double>{-3, -2.5, -2, -1.5, 1, 1, 1, 1, 1, 1.5, 2, 2.5,
                                            3,  3.5,  4,  4.5,  1, 1, 1, 1, 7, 7.5, 8, 8.5});
  for (const Array& r : both([](const A& a) { return lax::dynamic_update_slice_in_dim(a[0], a[1], a[2], 0); },
                             {x234(), jnp::zeros({1, 3, 4}, DType::float64), Array(9)}))
    CHECK(doubles(r)[12] == 0.0);  // the start is clamped to 1: the second block is overwritten
  // Their gradients flow through dynamic_slice's.
  Array g =
      grad([](const Array& x) { return jnp::sum(lax::dynamic_slice_in_dim(x, Array(1), 2, 2) * x.sum()); })(x234());
  CHECK(g.shape() == Shape{2, 3, 4});
  CHECK_THROWS_AS(lax::index_in_dim(x234(), 3, 1), ShapeError);
}

TEST_CASE("lax: squeeze, expand_dims, collapse and split as JAX", "[lax][jax_parity]") {
  CHECK(lax::squeeze(jnp::ones({1, 3, 1}), {0, -1}).shape() == Shape{3});
  CHECK(lax::expand_dims(jnp::ones({2, 3}), {0, -1}).shape() == Shape{1, 2, 3, 1});
  CHECK(lax::collapse(x234(), 1).shape() == Shape{2, 12});
  CHECK(lax::collapse(x234(), 0, 2).shape() == Shape{6, 4});
  CHECK(lax::collapse(x234(), -2).shape() == Shape{2, 12});
  CHECK(doubles(lax::collapse(x234(), 0)) == doubles(x234()));
  CHECK_THROWS_AS(lax::collapse(x234(), 2, 1), ShapeError);  // JAX: Invalid dimension range passed to collapse
  CHECK_THROWS_AS(lax::squeeze(jnp::ones({2, 3}), {0}), ShapeError);
  auto parts = lax::split(x234(), {1, 3}, 2);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].shape() == Shape{2, 3, 1});
  CHECK(parts[1].shape() == Shape{2, 3, 3});
  CHECK(doubles(parts[0]) == std::vector<double>{-3, -1, 1, 3, 5, 7});
  CHECK_THROWS_AS(lax::split(x234(), {1, 2}, 2), ShapeError);
}

TEST_CASE("lax: integer_pow multiplies in JAX's order (bit for bit), square, clz and full_like", "[lax][jax_parity]") {
  Array v = jnp::array({1.5f, -0.7f, 2.3f, 0.9f});
  // JAX 0.10.2: lax.integer_pow(v, k) for k = 3, 7, -2 (float32)
  const std::vector<std::pair<int64_t, std::vector<float>>> want = {
      {3, {3.375f, -0.34299999475479126f, 12.166999816894531f, 0.7289999127388f}},
      {7, {17.0859375f, -0.08235429227352142f, 340.4825439453125f, 0.47829678654670715f}},
      {-2, {0.4444444477558136f, 2.040816307067871f, 0.18903592228889465f, 1.2345679998397827f}}};
  for (auto& [k, w] : want) {
    int64_t e = k;
    for (const Array& r : {lax::integer_pow(v, e), jit([e](const Array& x) { return lax::integer_pow(x, e); })(v)}) {
      CHECK(r.dtype() == DType::float32);
      CHECK(r.to_vector<float>() == w);
    }
  }
  CHECK(lax::integer_pow(v, 0).to_vector<float>() == std::vector<float>{1, 1, 1, 1});
  CHECK(lax::integer_pow(jnp::array({3, -2, 5}), 5).to_vector<int32_t>() == std::vector<int32_t>{243, -32, 3125});
  CHECK_THROWS_AS(lax::integer_pow(jnp::array({3, 2}), -1), TypeError);
  // d/dx x^3 = 3 x^2
  CHECK(grad([](const Array& x) { return jnp::sum(lax::integer_pow(x, 3)); })(v).to_vector<float>() ==
        std::vector<float>{6.75f, 1.469999909f, 15.86999989f, 2.429999828f});
  CHECK(lax::square(v).to_vector<float>() == (v * v).to_vector<float>());
  CHECK_THROWS_AS(lax::square(jnp::array({true})), TypeError);
  CHECK(lax::clz(jnp::array({0, 1, 255, -1, 1 << 20})).to_vector<int32_t>() == std::vector<int32_t>{32, 31, 24, 0, 11});
  CHECK(lax::clz(jnp::array({0, 1, 200}).astype(DType::uint8)).to_vector<uint8_t>() == std::vector<uint8_t>{8, 7, 0});
  Array c64 = jit([](const Array& x) { return lax::clz(x); })(jnp::array({int64_t{1}, int64_t{1} << 40}));
  CHECK(c64.dtype() == DType::int64);
  CHECK(c64.to_vector<int64_t>() == std::vector<int64_t>{63, 23});
  CHECK_THROWS_AS(lax::clz(v), TypeError);
  Array f = lax::full_like(x234(), Array(2.5), DType::int32, Shape{2});
  CHECK(f.dtype() == DType::int32);
  CHECK(f.to_vector<int32_t>() == std::vector<int32_t>{2, 2});
  CHECK(lax::full_like(Array(1.0f), Array(3)).dtype() == DType::float32);
}

TEST_CASE("lax: sort_key_val, batch_matmul and map as JAX", "[lax][jax_parity]") {
  auto [k, v] = lax::sort_key_val(jnp::array({3., 1., 2., 1.}), jnp::array({10, 20, 30, 40}));
  CHECK(doubles(k) == std::vector<double>{1, 1, 2, 3});
  CHECK(v.to_vector<int32_t>() == std::vector<int32_t>{20, 40, 30, 10});  // stable: 20 before 40
  Array a = jnp::arange(24.0f).reshape({2, 3, 4}), b = jnp::arange(40.0f).reshape({2, 4, 5});
  CHECK(lax::batch_matmul(a, b).to_vector<float>() == jnp::matmul(a, b).to_vector<float>());
  CHECK_THROWS_AS(lax::batch_matmul(a, jnp::ones({3, 4, 5})), ShapeError);
  auto row_sums = [](const Array& x) { return lax::map([](const Array& r) { return jnp::sum(r) * 2.0; }, x); };
  for (const Array& r : {row_sums(x234()), jit(row_sums)(x234())}) CHECK(doubles(r) == std::vector<double>{-6, 138});
  // A pytree of slices: pairs of rows.
  auto both_rows = lax::map([](const std::pair<Array, Array>& p) { return p.first - p.second; },
                            std::make_pair(jnp::ones({3, 2}), jnp::arange(6.0f).reshape({3, 2})));
  CHECK(both_rows.to_vector<float>() == std::vector<float>{1, 0, -1, -2, -3, -4});
}

TEST_CASE("lax: string padding, conv, conv_with_general_padding and conv_transpose as JAX", "[lax][jax_parity][conv]") {
  auto p = lax::padtype_to_pads({7, 5}, {3, 2}, {2, 1}, "SAME");
  CHECK(p == std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {0, 1}});
  p = lax::padtype_to_pads({7, 5}, {3, 2}, {2, 1}, "same_lower");
  CHECK(p == std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 0}});
  CHECK_THROWS_AS(lax::padtype_to_pads({7}, {3}, {1}, "FULL"), TypeError);
  Array x = jnp::arange(12.0, DType::float64).reshape({1, 1, 3, 4});
  Array w = jnp::arange(6.0, DType::float64).reshape({1, 1, 2, 3}) - 2.0;
  // JAX: lax.conv(x, w, (2, 2), "SAME") and lax.conv(x, w, (1, 1), "same_lower")
  CHECK(doubles(lax::conv(x, w, {2, 2}, "SAME")) == std::vector<double>{31, 13, -25, -31});
  CHECK(doubles(lax::conv(x, w, {1, 1}, "same_lower")) ==
        std::vector<double>{3, 8, 14, 8, 23, 31, 34, 13, 39, 43, 46, 13});
  CHECK_THROWS_AS(lax::conv_general_dilated(x, w, {1, 1}, "SAME", {2, 1}), ShapeError);  // JAX refuses it too
  Array lt = jnp::arange(36.0, DType::float64).reshape({2, 3, 3, 2}) * 0.1;
  Array kt = jnp::arange(72.0, DType::float64).reshape({3, 3, 2, 4}) * 0.05 - 0.5;
  Array kt2 = jnp::arange(72.0, DType::float64).reshape({3, 3, 4, 2}) * 0.05 - 0.5;
  using Pads = std::vector<std::pair<int64_t, int64_t>>;
  struct Case {
    std::function<Array(const Array&, const Array&)> f;
    Array k;
    Shape shape;
    double sum;
  };
  // JAX 0.10.2: lax.conv_transpose(lt, kt, (2, 2), "SAME"/"VALID"), with transpose_kernel, with explicit pads.
  const std::vector<Case> cases = {
      {[](const Array& a, const Array& b) {
         return lax::conv_transpose(a, b, {2, 2}, "SAME");
       },
       kt,
       {2, 6, 6, 4},
       2612.48},
      {[](const Array& a, const Array& b) {
         return lax::conv_transpose(a, b, {2, 2}, "VALID");
       },
       kt,
       {2, 7, 7, 4},
       2898.18},
      {[](const Array& a, const Array& b) {
         return lax::conv_transpose(a, b, {2, 1}, "SAME", {}, std::nullopt, true);
       },
       kt2,
       {2, 6, 3, 4},
       1578.3200000000002},
      {[](const Array& a, const Array& b) {
         return lax::conv_transpose(a, b, {2, 2}, Pads{{1, 2}, {0, 1}});
       },
       kt,
       {2, 6, 4, 4},
       1707.6800000000005},
  };
  for (const auto& c : cases)
    for (const Array& r : {c.f(lt, c.k), jit(c.f)(lt, c.k)}) {
      CHECK(r.shape() == c.shape);
      CHECK(jnp::sum(r).item<double>() == Approx(c.sum).epsilon(1e-12));
    }
  Array first = lax::slice_in_dim(cases[0].f(lt, kt).reshape({-1}), 0, 6);
  const std::vector<double> want_first = {0.29, 0.295, 0.3, 0.305, 0.25, 0.255};
  for (size_t i = 0; i < want_first.size(); ++i) CHECK(doubles(first)[i] == Approx(want_first[i]).epsilon(1e-12));
}
