// jnp's padding, rolling, tiling, NaN-aware reductions, isclose, fmod, logaddexp and negative-step slices:
// values against JAX-generated numbers or loops in the test, eager and jit, gradients against finite differences.
#include <cmath>
#include <map>

#include "jitx/numpy_extra.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
const DType f64 = DType::float64;
Array x23() { return make({1, 2, 4, 3, -1, 5}, {2, 3}, f64); }

}  // namespace

TEST_CASE("jnp::pad in every mode matches JAX", "[numpy_extra]") {
  // import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as jnp
  // x = jnp.array([[1.,2.,4.],[3.,-1.,5.]]); jnp.pad(x, ((1,2),(4,1)), mode=m).ravel()
  std::map<std::string, std::vector<double>> ref = {
      {"edge", {1, 1, 1, 1, 1, 2, 4, 4, 1, 1, 1, 1, 1, 2, 4, 4, 3, 3, 3, 3, 3, -1, 5, 5,
                3, 3, 3, 3, 3, -1, 5, 5, 3, 3, 3, 3, 3, -1, 5, 5}},
      {"wrap", {5, 3, -1, 5, 3, -1, 5, 3, 4, 1, 2, 4, 1, 2, 4, 1, 5, 3, -1, 5, 3, -1, 5, 3,
                4, 1, 2, 4, 1, 2, 4, 1, 5, 3, -1, 5, 3, -1, 5, 3}},
      {"reflect", {3, -1, 5, -1, 3, -1, 5, -1, 1, 2, 4, 2, 1, 2, 4, 2, 3, -1, 5, -1, 3, -1, 5, -1,
                   1, 2, 4, 2, 1, 2, 4, 2, 3, -1, 5, -1, 3, -1, 5, -1}},
      {"symmetric", {4, 4, 2, 1, 1, 2, 4, 4, 4, 4, 2, 1, 1, 2, 4, 4, 5, 5, -1, 3, 3, -1, 5, 5,
                     5, 5, -1, 3, 3, -1, 5, 5, 4, 4, 2, 1, 1, 2, 4, 4}},
      {"maximum", {5, 5, 5, 5, 3, 2, 5, 5, 4, 4, 4, 4, 1, 2, 4, 4, 5, 5, 5, 5, 3, -1, 5, 5,
                   5, 5, 5, 5, 3, 2, 5, 5, 5, 5, 5, 5, 3, 2, 5, 5}},
      {"minimum", {-1, -1, -1, -1, 1, -1, 4, -1, 1, 1, 1, 1, 1, 2, 4, 1, -1, -1, -1, -1, 3, -1, 5, -1,
                   -1, -1, -1, -1, 1, -1, 4, -1, -1, -1, -1, -1, 1, -1, 4, -1}},
  };
  const double m = 7.0 / 3;
  ref["mean"] = {m, m, m, m, 2, 0.5, 4.5, m, m, m, m, m, 1, 2, 4, m, m, m, m, m, 3, -1, 5, m,
                 m, m, m, m, 2, 0.5, 4.5, m, m, m, m, m, 2, 0.5, 4.5, m};
  for (auto& [mode, r] : ref) {
    std::string md = mode;
    both_close([md](auto& v) { return jnp::pad(v[0], {{1, 2}, {4, 1}}, md); }, {x23()}, r, f64, "pad " + md);
  }
  // jnp.pad(x, 1, constant_values=7.)
  both_close([](auto& v) { return jnp::pad(v[0], 1, "constant", 7.0); }, {x23()},
             {7, 7, 7, 7, 7, 7, 1, 2, 4, 7, 7, 3, -1, 5, 7, 7, 7, 7, 7, 7}, f64, "pad constant");
  // jnp.pad(jnp.array([1.,4.]), (3,2), mode='linear_ramp', end_values=10.)
  both_close([](auto& v) { return jnp::pad(v[0], {{3, 2}}, "linear_ramp", 0, 10.0); }, {make({1, 4}, f64)},
             {10, 7, 4, 1, 4, 7, 10}, f64, "pad linear_ramp");
  // reflect with a pad wider than the axis: the periodic extension NumPy's iterative reflection gives
  // np.pad([1.,2.,3.], (5,5), mode='reflect')
  both_close([](auto& v) { return jnp::pad(v[0], {{5, 5}}, "reflect"); }, {make({1, 2, 3}, f64)},
             {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2}, f64, "pad reflect wide");
  CHECK_THROWS_AS(jnp::pad(x23(), 1, "bogus"), TypeError);
  CHECK_THROWS_AS(jnp::pad(x23(), {{1, 1}, {1, 1}, {1, 1}}), ShapeError);
  for (std::string md : {"constant", "edge", "wrap", "reflect", "symmetric", "mean", "maximum", "median"})
    check_grad_fd([md](const Array& v) { return jnp::pad(v, {{2, 1}, {1, 3}}, md); }, uniform(6, -2, 2), {2, 3},
                  "grad pad " + md);
}

TEST_CASE("jnp::roll, tile, repeat, outer, tril, triu against loops", "[numpy_extra]") {
  auto xv = uniform(12, -3, 3);
  Array x = make(xv, {3, 4}, f64);
  std::vector<double> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) r.push_back(xv[((i + 2) % 3) * 4 + (j + 3) % 4]);  // shift (1, -3) = (1, 1 mod 4)
  both_close([](auto& v) { return jnp::roll(v[0], {1, -3}, {0, 1}); }, {x}, r, f64, "roll 2-d");
  r.clear();
  for (int k = 0; k < 12; ++k) r.push_back(xv[(k + 12 - 5) % 12]);
  both_close([](auto& v) { return jnp::roll(v[0], 5); }, {x}, r, f64, "roll flattened");
  r.clear();
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < 3; ++i)
      for (int b = 0; b < 3; ++b)
        for (int j = 0; j < 4; ++j) r.push_back(xv[i * 4 + j]);
  both_close([](auto& v) { return jnp::tile(v[0], {2, 1, 3}); }, {x}, r, f64, "tile");
  r.clear();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int c = 0; c < 2; ++c) r.push_back(xv[i * 4 + j]);
  both_close([](auto& v) { return jnp::repeat(v[0], 2, 1); }, {x}, r, f64, "repeat axis 1");
  r.clear();
  std::vector<int64_t> reps = {0, 2, 1};
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < reps[i]; ++c)
      for (int j = 0; j < 4; ++j) r.push_back(xv[i * 4 + j]);
  both_close([reps](auto& v) { return jnp::repeat(v[0], reps, 0); }, {x}, r, f64, "repeat per element");
  r.clear();
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 3; ++j) r.push_back(xv[i] * xv[j]);
  both_close([](auto& v) { return jnp::outer(v[0], jnp::slice_axis(jnp::ravel(v[0]), 0, 0, 3)); }, {x}, r, f64,
             "outer");
  auto bv = uniform(24, -1, 1);
  Array b = make(bv, {2, 3, 4}, f64);
  std::vector<double> lo, up;
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        double v = bv[n * 12 + i * 4 + j];
        lo.push_back(j - i <= 1 ? v : 0);
        up.push_back(j - i >= -1 ? v : 0);
      }
  both_close([](auto& v) { return jnp::tril(v[0], 1); }, {b}, lo, f64, "tril batched");
  both_close([](auto& v) { return jnp::triu(v[0], -1); }, {b}, up, f64, "triu batched");
  CHECK_THROWS_AS(jnp::tril(make({1, 2}, f64)), ShapeError);
  CHECK_THROWS_AS(jnp::roll(x, {1, 2, 3}, {0, 1}), ShapeError);  // ({1, 2} with {0} broadcasts, as JAX's)
  check_grad_fd([](const Array& v) { return jnp::roll(v, {2}, {1}); }, xv, {3, 4}, "grad roll");
  check_grad_fd([](const Array& v) { return jnp::tile(v, {2, 2}); }, xv, {3, 4}, "grad tile");
  check_grad_fd([](const Array& v) { return jnp::repeat(v, std::vector<int64_t>{1, 0, 3}, 0); }, xv, {3, 4},
                "grad repeat");
  // vmap of roll over the leading axis equals rolling each row
  Array vr = vmap([](const Array& v) { return jnp::roll(v, 1); })(x);
  std::vector<double> rr;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) rr.push_back(xv[i * 4 + (j + 3) % 4]);
  check_close(vr, rr, f64, "vmap roll");
}

TEST_CASE("jnp::fmod, logaddexp, nan_to_num, isclose match JAX", "[numpy_extra]") {
  // jnp.fmod(jnp.array([-7,7,-7,7]), jnp.array([3,-3,-3,3])) -> [-1, 1, -1, 1]; floats [-7.5,7.5]%[2,-2] -> [-1.5,1.5]
  both_exact([](auto& v) { return jnp::fmod(v[0], v[1]); },
             {make_int({-7, 7, -7, 7}, DType::int32), make_int({3, -3, -3, 3}, DType::int32)}, {-1, 1, -1, 1},
             DType::int32, "fmod int");
  both_close([](auto& v) { return jnp::fmod(v[0], v[1]); }, {make({-7.5, 7.5}, f64), make({2, -2}, f64)},
             {-1.5, 1.5}, f64, "fmod float");
  // jnp.logaddexp([1,-inf,inf,inf,-inf,1e4,nan], [2,-inf,inf,-inf,3,-1e4,1])
  const double inf = INFINITY;
  both_close([](auto& v) { return jnp::logaddexp(v[0], v[1]); },
             {make({1, -inf, inf, inf, -inf, 1e4, NAN}, f64), make({2, -inf, inf, -inf, 3, -1e4, 1}, f64)},
             {2.3132616875182226, -inf, inf, inf, 3.0, 10000.0, NAN}, f64, "logaddexp");
  check_grad_fd([](const Array& v) { return jnp::logaddexp(v, jnp::multiply(v, 0.5)); }, uniform(5, -3, 3), {5},
                "grad logaddexp");
  // jnp.nan_to_num(jnp.array([nan, inf, -inf, 1.], dtype=jnp.float32))
  both_close([](auto& v) { return jnp::nan_to_num(v[0]); }, {make({NAN, inf, -inf, 1}, DType::float32)},
             {0.0, 3.4028234663852886e+38, -3.4028234663852886e+38, 1.0}, DType::float32, "nan_to_num");
  both_close([](auto& v) { return jnp::nan_to_num(v[0], 1.0, 2.0, -2.0); }, {make({NAN, inf, -inf, 5}, f64)},
             {1, 2, -2, 5}, f64, "nan_to_num args");
  // jnp.isclose([inf,inf,1,nan,1], [inf,-inf,1+1e-6,nan,1.1]) -> [T,F,T,F,F]; equal_nan makes the NaN pair close
  Array a = make({inf, inf, 1, NAN, 1}, f64), bb = make({inf, -inf, 1 + 1e-6, NAN, 1.1}, f64);
  both_exact([](auto& v) { return jnp::isclose(v[0], v[1]); }, {a, bb}, {1, 0, 1, 0, 0}, DType::bool_, "isclose");
  both_exact([](auto& v) { return jnp::isclose(v[0], v[1], 1e-5, 1e-8, true); }, {a, bb}, {1, 0, 1, 1, 0},
             DType::bool_, "isclose equal_nan");
  CHECK_FALSE(bool(jnp::allclose(a, bb)));
  CHECK(bool(jnp::allclose(make({1, 2}, f64), make({1, 2 + 1e-7}, f64))));
}

TEST_CASE("jnp nan reductions: all-NaN slices as JAX", "[numpy_extra]") {
  Array x = make({1, NAN, 3, NAN, NAN, NAN}, {2, 3}, f64);
  both_close([](auto& v) { return jnp::nansum(v[0], {1}); }, {x}, {4, 0}, f64, "nansum");
  both_close([](auto& v) { return jnp::nanmean(v[0], {1}); }, {x}, {2, NAN}, f64, "nanmean");
  both_close([](auto& v) { return jnp::nanmax(v[0], {1}); }, {x}, {3, NAN}, f64, "nanmax");
  both_close([](auto& v) { return jnp::nanmin(v[0], {1}, true); }, {x}, {1, NAN}, f64, "nanmin keepdims");
  CHECK(jnp::nanmin(x, {1}, true).shape() == Shape{2, 1});
  both_close([](auto& v) { return jnp::nanmax(v[0]); }, {x}, {3}, f64, "nanmax all");
  // d nanmean / dx: 1/count at the non-NaN entries, 0 at the NaNs
  auto g = grad([](Array v) { return jnp::nanmean(v); })(make({1, NAN, 3, 4}, f64)).to_vector<double>();
  CHECK(g[0] == Approx(1.0 / 3));
  CHECK(g[1] == 0.0);
  CHECK(g[3] == Approx(1.0 / 3));
}

TEST_CASE("slices with negative steps, with gradients", "[numpy_extra]") {
  auto xv = uniform(8, -2, 2);
  Array x = make(xv, f64);
  both_close([](auto& v) { return jnp::slice_axis(v[0], 0, 5, 0, -2); }, {x}, {xv[5], xv[3], xv[1]}, f64,
             "x[5:0:-2]");
  both_close([](auto& v) { return jnp::slice_axis(v[0], 0, std::nullopt, std::nullopt, -1); }, {x},
             {xv[7], xv[6], xv[5], xv[4], xv[3], xv[2], xv[1], xv[0]}, f64, "x[::-1]");
  both_close([](auto& v) { return jnp::slice_axis(v[0], 0, -2, std::nullopt, -3); }, {x}, {xv[6], xv[3], xv[0]},
             f64, "x[-2::-3]");
  both_close([](auto& v) { return jnp::slice_axis(v[0], 0, 2, 5, -1); }, {x}, {}, f64, "x[2:5:-1] empty");
  Array m = make(xv, {2, 4}, f64);
  both_close([](auto& v) { return jnp::slice_axis(v[0], 1, std::nullopt, std::nullopt, -1); }, {m},
             {xv[3], xv[2], xv[1], xv[0], xv[7], xv[6], xv[5], xv[4]}, f64, "x[:, ::-1]");
  CHECK_THROWS_AS(jnp::slice_axis(x, 0, 0, 5, 0), ShapeError);
  check_grad_fd([](const Array& v) { return jnp::slice_axis(v, 0, 6, 0, -2); }, xv, {8}, "grad x[6:0:-2]");
}

TEST_CASE("jnp::searchsorted, NaNs last, against a loop", "[numpy_extra]") {
  std::vector<double> a = {-1, 0, 0, 2, 5, NAN};
  std::vector<double> q = {-2, 0, 1, 2, 5, 7, NAN, -INFINITY};
  auto less_nanlast = [](double p, double r) { return p < r || (!std::isnan(p) && std::isnan(r)); };
  for (std::string side : {"left", "right"}) {
    std::vector<int64_t> ref;
    for (double v : q) {
      int64_t c = 0;
      for (double x : a) c += side == "left" ? less_nanlast(x, v) : !less_nanlast(v, x);
      ref.push_back(c);
    }
    both_exact([side](auto& v) { return jnp::searchsorted(v[0], v[1], side); },
               {make(a, DType::float64), make(q, {2, 4}, DType::float64)}, ref, DType::int32, "searchsorted " + side);
  }
  // JAX agrees with the loop: left [0 1 3 3 4 5 5 0], right [0 3 3 4 5 5 6 0]
  // jnp.searchsorted(jnp.array([1,2,2,3]), jnp.array([2,0,4]), side='right') -> [3, 0, 4]
  both_exact([](auto& v) { return jnp::searchsorted(v[0], v[1], "right"); },
             {make_int({1, 2, 2, 3}, DType::int32), make_int({2, 0, 4}, DType::int32)}, {3, 0, 4}, DType::int32,
             "searchsorted int");
  CHECK_THROWS_AS(jnp::searchsorted(make({1, 2}, DType::float64), 1.0, "middle"), TypeError);
}

TEST_CASE("jnp::nonzero with and without a static size", "[numpy_extra]") {
  Array x = make({0, 3, 0, -1, 2, 0}, {2, 3}, DType::float64);
  // jnp.nonzero(x) -> ([0, 1, 1], [1, 0, 1]); jnp.nonzero(x, size=5, fill_value=-1) -> ([0,1,1,-1,-1], [1,0,1,-1,-1])
  auto r = jnp::nonzero(x);
  CHECK(r[0].dtype() == DType::int64);
  REQUIRE(r.size() == 2);
  check_exact(r[0], {0, 1, 1}, DType::int64, "nonzero rows");
  check_exact(r[1], {1, 0, 1}, DType::int64, "nonzero cols");
  auto j = jit([](Array v) { return jnp::nonzero(v, 5, -1)[1]; })(x);
  check_exact(j, {1, 0, 1, -1, -1}, DType::int64, "nonzero size=5 (jit)");
  check_exact(jnp::nonzero(x, 2)[0], {0, 1}, DType::int64, "nonzero size=2 truncates");
  CHECK_THROWS_AS(jit([](Array v) { return jnp::nonzero(v)[0]; })(x), TracerError);
}

// Found by UBSan (tools/sanitize.sh asan): these sizes overflowed int64 (undefined behaviour) before any check.
TEST_CASE("tile, repeat and pad whose result size overflows int64 are ShapeErrors", "[numpy_extra]") {
  Array x = ones({2, 3});
  int64_t huge = int64_t{1} << 62;
  CHECK_THROWS_AS(jnp::tile(x, {huge, 1}), ShapeError);
  CHECK_THROWS_WITH(jnp::tile(x, {huge, 1}), Catch::Contains("tile") && Catch::Contains("overflows"));
  CHECK_THROWS_AS(jnp::repeat(x, huge, 0), ShapeError);
  CHECK_THROWS_WITH(jnp::repeat(x, huge, 0), Catch::Contains("repeat") && Catch::Contains("overflows"));
  CHECK_THROWS_AS(lax::pad(x, Array(0.f), {{huge, huge, 0}, {0, 0, 0}}), ShapeError);
  CHECK(jnp::tile(x, {2, 1}).shape() == Shape{4, 3});  // and ordinary sizes still work
}
