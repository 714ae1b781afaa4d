// Regression tests for the second round of tools/conformance.py's findings against JAX 0.10.2 (x64): linalg's
// dtype rules (int32 -> float32, int64 -> float64) and float16 where JAX takes it, triangular_solve of a vector,
// lax's bool checks (JAX refuses bool in cumsum/reduce_sum/scatter_add..., takes it in clamp/top_k/conv), pad's
// statistics and ramps of integers and bools, repeat of a 0-d array, one_hot of float indices, standardize's "fast"
// variance. The expected values were printed by JAX in the venv (/work/venv-jax). Each runs eagerly and under jit;
// run the file under each JITX_PLATFORM.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
Array bools(const std::vector<int64_t>& v, Shape s = {}) {
  return make_int(v, s.empty() ? Shape{static_cast<int64_t>(v.size())} : s, DType::bool_);
}
}  // namespace

TEST_CASE("conformance: linalg of integers is float32 (int64: float64), as JAX's to_inexact_dtype",
          "[conformance_fixes]") {
  Array a32 = make_int({2, 1, 1, 3}, {2, 2}, DType::int32);
  both_close([](const std::vector<Array>& v) { return jnp::linalg::det(v[0]); }, {a32}, {5}, DType::float32, "det");
  both_close([](const std::vector<Array>& v) { return jnp::linalg::slogdet(v[0]).logabsdet; },
             {make_int({2, 1, 1, 3}, {2, 2}, DType::int8)}, {std::log(5.0)}, DType::float32, "slogdet int8");
  both_close([](const std::vector<Array>& v) { return jnp::linalg::norm(v[0]); }, {make_int({3, 4}, DType::int32)},
             {5}, DType::float32, "norm int32");
  both_close([](const std::vector<Array>& v) { return jnp::linalg::norm(v[0], 1.0); },
             {bools({1, 0, 1})}, {2}, DType::float32, "norm bool");
  both_close([](const std::vector<Array>& v) { return jnp::linalg::inv(v[0]); },
             {make_int({2, 0, 0, 4}, {2, 2}, DType::int64)}, {0.5, 0, 0, 0.25}, DType::float64, "inv int64");
  both_close([](const std::vector<Array>& v) { return jnp::linalg::solve(v[0], v[1]); },
             {a32, make_int({3, 4}, DType::int32)}, {1, 1}, DType::float32, "solve int32");
  both_close([](const std::vector<Array>& v) { return jnp::linalg::svdvals(v[0]); },
             {make_int({3, 0, 0, 4}, {2, 2}, DType::uint8)}, {4, 3}, DType::float32, "svdvals uint8");
}

TEST_CASE("conformance: det and triangular_solve take float16/bfloat16 where JAX does", "[conformance_fixes]") {
  both_close([](const std::vector<Array>& v) { return jnp::linalg::det(v[0]); },
             {make({1, 2, 3, 4}, {2, 2}, DType::float16)}, {-2}, DType::float16, "det f16 2x2");
  both_close([](const std::vector<Array>& v) { return jnp::linalg::det(v[0]); },
             {make({2, 1, 0, 1, 3, 1, 0, 1, 4}, {3, 3}, DType::bfloat16)}, {18}, DType::bfloat16, "det bf16 3x3");
  // n >= 4 goes through LU, which JAX (LAPACK) and jitx only have for float32/float64.
  CHECK_THROWS_AS(jnp::linalg::det(jnp::eye(4, -1, 0, DType::float16)), TypeError);
  both_close([](const std::vector<Array>& v) { return lax::linalg::triangular_solve(v[0], v[1], true, true); },
             {make({2, 0, 1, 4}, {2, 2}, DType::float16), make({2, 5}, {2, 1}, DType::float16)}, {1, 1},
             DType::float16, "triangular_solve f16");
}

TEST_CASE("conformance: triangular_solve of a vector b, as JAX's", "[conformance_fixes]") {
  Array a = make({3, 0, 0, 1, 7, 0, 2, 5, 11}, {3, 3}, DType::float64);
  Array b = make({1, 2, 3}, DType::float64);
  // JAX: left_side solves a x = b (forward substitution); otherwise x a = b.
  both_close([](const std::vector<Array>& v) { return lax::linalg::triangular_solve(v[0], v[1], true, true); },
             {a, b}, {1.0 / 3, (2 - 1.0 / 3) / 7, (3 - 2.0 / 3 - 5 * (2 - 1.0 / 3) / 7) / 11}, DType::float64, "left");
  both_close([](const std::vector<Array>& v) { return lax::linalg::triangular_solve(v[0], v[1], false, true); },
             {a, b}, {0.12121212121212122, 0.09090909090909091, 0.2727272727272727}, DType::float64, "right");
  for (Array r : eager_and_jit([](const std::vector<Array>& v) { return lax::linalg::triangular_solve(v[0], v[1]); },
                               {jnp::zeros({0, 0}), jnp::zeros({0})}))
    CHECK(r.shape() == Shape{0});
}

TEST_CASE("conformance: lax refuses bool where JAX does, and takes it in clamp, top_k and conv",
          "[conformance_fixes]") {
  Array t = bools({1, 0, 1});
  CHECK_THROWS_AS(lax::cumsum(t, 0), TypeError);
  CHECK_THROWS_AS(lax::cumprod(t, 0), TypeError);
  CHECK_THROWS_AS(lax::cummax(t, 0), TypeError);
  CHECK_THROWS_AS(lax::cummin(t, 0), TypeError);
  CHECK_THROWS_AS(lax::reduce_sum(t, {0}), TypeError);
  CHECK_THROWS_AS(lax::reduce_prod(t, {0}), TypeError);
  lax::WindowConfig w;
  w.window_dimensions = {2};
  CHECK_THROWS_AS(lax::reduce_window_sum(t, w), TypeError);
  lax::ScatterDimensionNumbers dn;
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  Array idx = make_int({1}, {1, 1}, DType::int32), upd = bools({1});
  CHECK_THROWS_AS(lax::scatter_add(t, idx, upd, dn), TypeError);
  CHECK_THROWS_AS(lax::scatter_mul(t, idx, upd, dn), TypeError);
  // jnp's sums of bools still work (they convert first), and einsum sums bools with OR, as JAX's.
  CHECK(jnp::sum(t).item<int64_t>() == 2);
  both_exact([](const std::vector<Array>& v) { return jnp::einsum("ij->i", {v[0]}); },
             {bools({1, 0, 0, 0}, {2, 2})}, {1, 0}, DType::bool_, "einsum bool");
  // Accepted: the order False < True.
  both_exact([](const std::vector<Array>& v) { return lax::clamp(v[1], v[0], v[1]); },
             {t, make_int({1}, Shape{}, DType::bool_)},
             {1, 1, 1}, DType::bool_, "clamp");
  both_exact([](const std::vector<Array>& v) { return lax::top_k(v[0], 2).first; }, {bools({0, 1, 0, 1})}, {1, 1},
             DType::bool_, "top_k values");
  both_exact([](const std::vector<Array>& v) { return lax::top_k(v[0], 2).second; }, {bools({0, 1, 0, 1})}, {1, 3},
             DType::int32, "top_k indices");
  // XLA's pred convolution: the OR over the window of lhs AND rhs.
  both_exact([](const std::vector<Array>& v) { return lax::conv_general_dilated(v[0], v[1], {1, 1}, {}); },
             {bools({1, 0, 0, 0, 0, 0, 0, 0, 1}, {1, 1, 3, 3}), bools({0, 1, 1, 0}, {1, 1, 2, 2})}, {0, 0, 0, 0},
             DType::bool_, "conv bool (no overlap)");
  both_exact([](const std::vector<Array>& v) { return lax::conv_general_dilated(v[0], v[1], {1, 1}, {}); },
             {bools({1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 1, 3, 3}), bools({0, 0, 0, 1}, {1, 1, 2, 2})}, {1, 0, 0, 1},
             DType::bool_, "conv bool");
}

TEST_CASE("conformance: pad's mean/median/linear_ramp of integers and bools, as JAX's", "[conformance_fixes]") {
  auto pad = [](std::string m, int64_t w) {
    return [m, w](const std::vector<Array>& v) { return jnp::pad(v[0], w, m); };
  };
  // JAX rounds an integer mean or median half to even; a bool's statistic is true when nonzero.
  both_exact(pad("mean", 2), {make_int({1, 2, 2, 8}, DType::int32)}, {3, 3, 1, 2, 2, 8, 3, 3}, DType::int32, "mean");
  both_exact(pad("mean", 2), {make_int({-1, -2, -2, -8}, DType::int32)}, {-3, -3, -1, -2, -2, -8, -3, -3},
             DType::int32, "mean negative");
  both_exact(pad("mean", 2), {bools({1, 0, 0})}, {1, 1, 1, 0, 0, 1, 1}, DType::bool_, "mean bool");
  both_exact(pad("median", 2), {bools({1, 0})}, {1, 1, 1, 0, 1, 1}, DType::bool_, "median bool");
  both_exact(pad("median", 2), {make_int({-1, -2, -4, -3}, DType::int32)}, {-2, -2, -1, -2, -4, -3, -2, -2},
             DType::int32, "median half to even");
  // linear_ramp: jnp.linspace(0, edge, 3, endpoint=False) in float32, floored for integers.
  both_exact(pad("linear_ramp", 3), {make_int({-415, 5, 9}, DType::int32)}, {0, -139, -277, -415, 5, 9, 6, 3, 0},
             DType::int32, "linear_ramp");
  both_exact(pad("linear_ramp", 3), {bools({1, 0})}, {0, 1, 1, 1, 0, 0, 0, 0}, DType::bool_, "linear_ramp bool");
  // The mean of an empty axis: NaN (0 in an integer dtype).
  both_close(pad("mean", 2), {jnp::zeros({0})}, {kNan, kNan, kNan, kNan}, DType::float32, "mean of empty");
  both_exact(pad("mean", 2), {jnp::zeros({0}, DType::int32)}, {0, 0, 0, 0}, DType::int32, "mean of empty int32");
}

TEST_CASE("conformance: repeat of a 0-d array is 1-d whatever the axis, as JAX's", "[conformance_fixes]") {
  Fn rep = [](const std::vector<Array>& v) { return jnp::repeat(v[0], 2, 0); };
  for (Array r : eager_and_jit(rep, {make({3}, {}, DType::float32)})) {
    CHECK(r.shape() == Shape{2});
    CHECK(r.to_vector<double>() == std::vector<double>{3, 3});
  }
  both_close([](const std::vector<Array>& v) { return jnp::repeat(v[0], std::vector<int64_t>{3}, -1); },
             {make({1.5}, {}, DType::float64)}, {1.5, 1.5, 1.5}, DType::float64, "repeat vector of repeats");
}

TEST_CASE("conformance: one_hot of float class indices compares them, as JAX's", "[conformance_fixes]") {
  Array x = make({0, 2, 2.5, kNan, -1, 4}, DType::float32);
  std::vector<int64_t> want(30, 0);
  want[0] = want[7] = want[29] = 1;  // 0 -> class 0, 2 -> class 2, 4 -> class 4; 2.5, NaN, -1 match none
  both_exact([](const std::vector<Array>& v) { return jnp::astype(nn::one_hot(v[0], 5), DType::int32); }, {x}, want,
             DType::int32, "one_hot f32");
  CHECK_THROWS_AS(nn::one_hot(bools({1, 0}), 3), TypeError);  // JAX: iota does not accept bool
}

TEST_CASE("conformance: standardize/layer_norm use JAX's fast variance (a row with inf gives NaN)",
          "[conformance_fixes]") {
  Fn st = [](const std::vector<Array>& v) { return nn::standardize(v[0]); };
  Fn ln = [](const std::vector<Array>& v) { return nn::layer_norm(v[0]); };
  // JAX: mean(x^2) - mean^2 = inf - inf for the 1e30 row (its square overflows f32) and for inf: NaN everywhere.
  for (const Fn& f : {st, ln}) {
    both_close(f, {make({-7.25, 1e30, 0.9999, 1e-7}, DType::float32)}, {kNan, kNan, kNan, kNan}, DType::float32,
               "1e30 row");
    both_close(f, {make({1, 2, 3, INFINITY}, DType::float32)}, {kNan, kNan, kNan, kNan}, DType::float32, "inf row");
    both_close(f, {make({1, 2, 3, 4}, DType::float32)}, {-1.3416355, -0.4472118, 0.4472118, 1.3416355},
               DType::float32, "ordinary row");
  }
}
