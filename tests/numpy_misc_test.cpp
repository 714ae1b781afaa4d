// jnp's everyday remainder (numpy_misc.h) and jax.random's key helpers: JAX 0.10.2's values for its documented
// examples, double-precision references on random inputs (gradient), invariants (partition), and the errors.
#include "jitx/numpy_misc.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "jitx/jitx.h"
#include "test_util.h"

namespace {
using namespace jitx;
using namespace jitx::testing;
namespace jnp = jitx::numpy;

std::vector<double> vals(const Array& a) { return a.astype(DType::float64).to_vector<double>(); }

TEST_CASE("jnp aliases and real-array complex helpers: absolute, around, positive, copy, conj, real, imag", "[jnp]") {
  Array x = make({-1.5, 2.25, -0.0, 3.5}, DType::float32);
  CHECK(vals(jnp::absolute(x)) == std::vector<double>{1.5, 2.25, 0, 3.5});
  CHECK(vals(jnp::around(make({1.25, -2.5, 0.5, 3.75}, DType::float64), 1)) ==
        std::vector<double>{1.2, -2.5, 0.5, 3.8});
  CHECK(vals(jnp::positive(x)) == vals(x));
  Array xi = jnp::array({1, -2, 3});
  CHECK(jnp::conj(xi).dtype() == DType::int32);
  CHECK(jnp::conjugate(x).to_vector<float>() == x.to_vector<float>());
  CHECK(jnp::real(x).to_vector<float>() == x.to_vector<float>());
  Array im = jnp::imag(xi);
  CHECK(im.dtype() == DType::int32);
  CHECK(im.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0});
  CHECK(jnp::isreal(x).to_vector<bool>() == std::vector<bool>{true, true, true, true});
  CHECK(jnp::iscomplex(xi).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK(jnp::isrealobj(x));
  CHECK_FALSE(jnp::iscomplexobj(x));
  CHECK(jnp::isscalar(Array(1.0f)));
  CHECK_FALSE(jnp::isscalar(x));
  // copy is a new buffer: donating it leaves the original readable.
  Array c = jnp::copy(x);
  auto consume = jit([](const Array& v) { return v * 2.0f; }, JitOptions{}.set_donate_argnums({0}));
  CHECK(vals(consume(c)) == std::vector<double>{-3, 4.5, -0.0, 7});
  CHECK(vals(x) == std::vector<double>{-1.5, 2.25, -0.0, 3.5});
  CHECK(std::signbit(jnp::copy(x).to_vector<float>()[2]));  // -0.0 kept
  CHECK(jnp::copy(jnp::array({true, false})).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK_THROWS_AS(jnp::absolute(Array()), TypeError);
}

TEST_CASE("jnp::partition: JAX's arrangement (two top_k's), the kth element in place, every axis", "[jnp]") {
  Array x = jnp::array({6, 8, 4, 3, 1, 9, 7, 5, 2, 3});
  CHECK(jnp::partition(x, 4).to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 3, 4, 9, 8, 7, 6, 5});
  CHECK(jnp::partition(x.astype(DType::uint8), 4).astype(DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{1, 2, 3, 3, 4, 9, 8, 7, 6, 5});
  CHECK(jnp::partition(jnp::array({0, 5, 0, 2}).astype(DType::uint8), 1).astype(DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{0, 0, 5, 2});
  auto v = uniform(35, -5, 5);
  Array m = make(v, {5, 7}, DType::float64);
  for (int64_t axis : {0, 1, -1})
    for (int64_t k : {0, 2, -1}) {
      Array p = jnp::partition(m, k, axis);
      REQUIRE(p.shape() == m.shape());
      int64_t ax = axis < 0 ? 1 : axis, n = m.dim(ax), kk = k < 0 ? k + n : k;
      auto pv = vals(p);
      for (int64_t r = 0; r < m.dim(1 - ax); ++r) {
        auto at = [&](const std::vector<double>& w, int64_t i) {
          return ax == 1 ? w[static_cast<size_t>(r * 7 + i)] : w[static_cast<size_t>(i * 7 + r)];
        };
        std::vector<double> line;
        for (int64_t i = 0; i < n; ++i) line.push_back(at(v, i));
        std::sort(line.begin(), line.end());
        INFO("axis " << axis << " kth " << k << " line " << r);
        CHECK(at(pv, kk) == line[static_cast<size_t>(kk)]);
        for (int64_t i = 0; i < kk; ++i) CHECK(at(pv, i) == line[static_cast<size_t>(i)]);  // ascending below
        for (int64_t i = kk + 1; i < n; ++i) CHECK(at(pv, i) == line[static_cast<size_t>(n - 1 - (i - kk - 1))]);
      }
    }
  CHECK_THROWS_AS(jnp::partition(x, 10), ShapeError);
  CHECK_THROWS_AS(jnp::partition(Array(1.0f), 0), ShapeError);
}

TEST_CASE("jnp::gradient: central differences, edges, scalar and coordinate spacings, against double loops", "[jnp]") {
  auto fv = uniform(24, -2, 2);
  Array f = make(fv, {4, 6}, DType::float64);
  auto g = jnp::gradient(f);
  REQUIRE(g.size() == 2);
  auto g0 = vals(g[0]), g1 = vals(g[1]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) {
      auto at = [&](int a, int b) { return fv[static_cast<size_t>(a * 6 + b)]; };
      double d0 = i == 0 ? at(1, j) - at(0, j) : i == 3 ? at(3, j) - at(2, j) : (at(i + 1, j) - at(i - 1, j)) / 2;
      double d1 = j == 0 ? at(i, 1) - at(i, 0) : j == 5 ? at(i, 5) - at(i, 4) : (at(i, j + 1) - at(i, j - 1)) / 2;
      CHECK(g0[static_cast<size_t>(i * 6 + j)] == Approx(d0).margin(1e-15));
      CHECK(g1[static_cast<size_t>(i * 6 + j)] == Approx(d1).margin(1e-15));
    }
  // Non-uniform coordinates along axis 1: the second-order formula on uneven steps.
  std::vector<double> xs = {0, 0.5, 1.5, 1.75, 3, 4.5};
  auto gx = vals(jnp::gradient(f, 1, make(xs, DType::float64)));
  for (int i = 0; i < 4; ++i)
    for (int j = 1; j < 5; ++j) {
      double h1 = xs[j] - xs[j - 1], h2 = xs[j + 1] - xs[j];
      double a = fv[i * 6 + j - 1], b = fv[i * 6 + j], c = fv[i * 6 + j + 1];
      double want = -h2 / (h1 * (h1 + h2)) * a + (h2 - h1) / (h1 * h2) * b + h1 / (h2 * (h1 + h2)) * c;
      CHECK(gx[static_cast<size_t>(i * 6 + j)] == Approx(want).epsilon(1e-12));
    }
  // A scalar step divides; int input promotes to float32; sin's samples approach cos.
  CHECK(vals(jnp::gradient(jnp::array({1, 4, 9, 16}), 0, Array(2.0)))[1] == 2.0);
  CHECK(jnp::gradient(jnp::array({1, 4, 9, 16}), 0).dtype() == DType::float32);             // as JAX's
  CHECK(jnp::gradient(jnp::array({1, 4, 9, 16}), 0, Array(2.0)).dtype() == DType::float64);  // a weak step
  CHECK(jnp::gradient(make({1, 4, 9, 16}, DType::float32), 0, Array(2.0)).dtype() == DType::float32);
  Array t = jnp::linspace(0.0, 3.0, 301, true, DType::float64);
  auto dsin = vals(jnp::gradient(jnp::sin(t), 0, Array(0.01)));
  CHECK(dsin[150] == Approx(std::cos(1.5)).margin(1e-4));
  CHECK_THROWS_WITH(jnp::gradient(jnp::ones({1, 3})), Catch::Contains("at least 2 elements are required"));
  CHECK_THROWS_AS(jnp::gradient(f, 1, jnp::ones({5})), ShapeError);
  CHECK_THROWS_AS(jnp::gradient(f, {Array(1.0), Array(2.0), Array(3.0)}), TypeError);
}

TEST_CASE("jnp::spacing, ix_, fromfunction, mask_indices: JAX's values", "[jnp]") {
  auto s32 = vals(jnp::spacing(make({0.0, -0.0, 1.0, -1.0, INFINITY}, DType::float32)));
  CHECK(s32[0] == std::ldexp(1.0, -149));
  CHECK(s32[1] == -std::ldexp(1.0, -149));
  CHECK(s32[2] == std::ldexp(1.0, -23));
  CHECK(s32[3] == -std::ldexp(1.0, -23));
  CHECK(std::isnan(s32[4]));
  auto s16 = vals(jnp::spacing(make({0.0, 1.0, -1.0}, DType::float16)));  // toward +inf for float16, as JAX
  CHECK(s16 == std::vector<double>{std::ldexp(1.0, -24), std::ldexp(1.0, -10), std::ldexp(1.0, -11)});
  CHECK(jnp::spacing(Array(1.0)).item<double>() == std::ldexp(1.0, -52));
  auto mesh = jnp::ix_({jnp::array({0, 2}), jnp::array({1, 3})});
  CHECK(mesh[0].shape() == Shape{2, 1});
  CHECK(mesh[1].shape() == Shape{1, 2});
  CHECK_THROWS_AS(jnp::ix_({jnp::ones({2, 2})}), ShapeError);
  CHECK_THROWS_AS(jnp::ix_({jnp::array({true, false})}), TypeError);
  // A multiplication table; f sees scalars (as under JAX's vmaps).
  Array table = jnp::fromfunction(
      [](const Array& i, const Array& j) {
        REQUIRE(i.ndim() == 0);
        return i * j;
      },
      {3, 6}, DType::int32);
  CHECK(table.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 0, 2, 4, 6, 8, 10});
  auto [sum, prod] =
      jnp::fromfunction([](const Array& x, const Array& y) { return std::make_pair(x + y, x * y); }, {3, 5});
  CHECK(sum.dtype() == DType::float32);
  CHECK(vals(prod)[14] == 8);
  Array rows = jnp::fromfunction([](const Array& x) { return (x + 1.0f) * jnp::arange(3.0, DType::float32); }, {2});
  CHECK(rows.shape() == Shape{2, 3});
  CHECK(vals(rows) == std::vector<double>{0, 1, 2, 0, 2, 4});
  CHECK_THROWS_AS(jnp::fromfunction([](const Array& x) { return x; }, {2, 3}), TypeError);
  auto [r, c] = jnp::mask_indices(3, [](const Array& m, int64_t k) { return jnp::triu(m, k); });
  CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 1, 1, 2});
  CHECK(c.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 1, 2, 2});
  auto [r1, c1] = jnp::mask_indices(
      3, [](const Array& m, int64_t k) { return jnp::tril(m, k); }, -1);
  CHECK(r1.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 2});
}

TEST_CASE("jnp::finfo, iinfo, can_cast, isdtype: as numpy/ml_dtypes and JAX report them", "[jnp]") {
  auto f32 = jnp::finfo(DType::float32);
  CHECK(f32.eps == std::ldexp(1.0, -23));
  CHECK(f32.max == static_cast<double>(FLT_MAX));
  CHECK(f32.tiny == std::ldexp(1.0, -126));
  CHECK(f32.smallest_subnormal == std::ldexp(1.0, -149));
  auto bf = jnp::finfo(DType::bfloat16);
  CHECK(bf.eps == 0.0078125);
  CHECK(bf.max == Approx(3.38953e38).epsilon(1e-5));
  CHECK(bf.resolution == Approx(0.0100098).epsilon(1e-5));
  CHECK(jnp::finfo(DType::float16).max == 65504);
  CHECK(jnp::finfo(DType::float64).nmant == 52);
  CHECK_THROWS_AS(jnp::finfo(DType::int32), TypeError);
  CHECK(jnp::iinfo(DType::int8).min == -128);
  CHECK(jnp::iinfo(DType::uint64).max == UINT64_MAX);
  CHECK(jnp::iinfo(DType::int64).max == uint64_t{INT64_MAX});
  CHECK_THROWS_AS(jnp::iinfo(DType::float32), TypeError);
  CHECK(jnp::can_cast(DType::int16, DType::float32));
  CHECK_FALSE(jnp::can_cast(DType::int32, DType::float32));
  CHECK(jnp::can_cast(DType::int64, DType::float64));
  CHECK(jnp::can_cast(DType::uint8, DType::bfloat16));
  CHECK_FALSE(jnp::can_cast(DType::float16, DType::bfloat16));
  CHECK(jnp::can_cast(DType::float64, DType::float16, "same_kind"));
  CHECK_FALSE(jnp::can_cast(DType::float32, DType::int32, "same_kind"));
  CHECK(jnp::can_cast(DType::float32, DType::int32, "unsafe"));
  CHECK_THROWS_AS(jnp::can_cast(DType::float32, DType::int32, "sometimes"), TypeError);
  CHECK(jnp::isdtype(DType::uint16, "integral"));
  CHECK_FALSE(jnp::isdtype(DType::uint16, "signed integer"));
  CHECK(jnp::isdtype(DType::bfloat16, "real floating"));
  CHECK_FALSE(jnp::isdtype(DType::bool_, "numeric"));
  CHECK_THROWS_AS(jnp::isdtype(DType::bool_, "stringy"), TypeError);
}

TEST_CASE("random::key_data, wrap_key_data, clone: raw threefry2x32 words, checked", "[random]") {
  Array k = random::PRNGKey(3);
  CHECK(random::key_data(k).to_vector<uint32_t>() == std::vector<uint32_t>{0, 3});
  CHECK(random::clone(k).to_vector<uint32_t>() == k.to_vector<uint32_t>());
  Array w = random::wrap_key_data(jnp::array({0, 3}).astype(DType::uint32));
  CHECK(random::uniform(w).item<float>() == random::uniform(k).item<float>());
  CHECK_THROWS_WITH(random::wrap_key_data(jnp::array({0, 3, 4}).astype(DType::uint32)),
                    Catch::Contains("expected key_data.shape to end with (2,)"));
  CHECK_THROWS_WITH(random::key_data(jnp::array({0, 3})), Catch::Contains("expected key_data.dtype = uint32"));
  CHECK_THROWS_AS(random::wrap_key_data(k, "rbg"), TypeError);
}

}  // namespace
