// jnp::quantile's inverted_cdf method and weights (and nanquantile's, percentile's) against JAX 0.10.2 with x64 on
// fixed inputs (JAX's results written out), and against a double-precision weighted-CDF loop on random inputs.
// Exact: inverted_cdf picks one of the inputs, so results are compared exactly (tolerance 0 through Bound::kOp's
// row would also pass; values here are the inputs' own). Inputs:
//   A = f32 [[0.3,-1.2,2.5,0.7],[1.1,0.4,-0.6,3.2],[2.2,2.2,-0.1,0.9]];  W4 = f32 [1,3,0.5,2];  Q3 = f32 [.1,.5,.9]
//   W34 = i32 [[1,2,3,4],[4,3,2,1],[0,1,0,1]];  An = A with A[1,2] = NaN
#include <algorithm>
#include <cmath>
#include <numeric>

#include "jitx/numpy_stats.h"
#include "numpy_stats_test_util.h"

namespace {
Array qa() { return array<float>({0.3, -1.2, 2.5, 0.7, 1.1, 0.4, -0.6, 3.2, 2.2, 2.2, -0.1, 0.9}, {3, 4}); }
Array qan() { return array<float>({0.3, -1.2, 2.5, 0.7, 1.1, 0.4, NAN, 3.2, 2.2, 2.2, -0.1, 0.9}, {3, 4}); }
Array w4() { return array<float>({1, 3, 0.5, 2}); }
Array w34() { return array<int32_t>({1, 2, 3, 4, 4, 3, 2, 1, 0, 1, 0, 1}, {3, 4}); }
Array q3() { return array<float>({0.1, 0.5, 0.9}); }
constexpr const char* kIcdf = "inverted_cdf";
}  // namespace

// clang-format off
TEST_CASE("jnp::quantile inverted_cdf with and without weights, as JAX", "[jnp][quantile]") {
  std::vector<Array> in{qa(), w4(), w34(), q3(), qan()};
  both("weights along axis 1", [](A a) { return jnp::quantile(a[0], a[3], {1}, kIcdf, false, a[1]); }, in,
       {DType::float32, {3, 3}, {-1.2, 0.4, 0.9, 0.3, 0.4, 2.2, 0.7, 3.2, 2.2}}, Bound::kOp);
  both("weights of a's shape (int32)", [](A a) { return jnp::quantile(a[0], a[3], {1}, kIcdf, false, a[2]); }, in,
       {DType::float32, {3, 3}, {-1.2, -0.6, 0.9, 0.7, 0.4, 0.9, 2.5, 1.1, 2.2}}, Bound::kOp);
  both("all axes", [](A a) { return jnp::quantile(a[0], a[3], {}, kIcdf, false, a[2]); }, in,
       {DType::float32, {3}, {-0.6, 0.7, 2.5}}, Bound::kOp);
  both("all axes, keepdims", [](A a) { return jnp::quantile(a[0], a[3], {}, kIcdf, true, a[2]); }, in,
       {DType::float32, {3, 1, 1}, {-0.6, 0.7, 2.5}}, Bound::kOp);
  both("f64 weights along axis 0, keepdims: f64", [](A a) {
         return jnp::quantile(a[0], Array(0.4), {0}, kIcdf, true, jnp::array<double>({2, 1, 1})); }, in,
       {DType::float64, {1, 4}, {0.30000001192092896, -1.2000000476837158, -0.10000000149011612, 0.699999988079071}},
       Bound::kOp);
  both("no weights", [](A a) { return jnp::quantile(a[0], a[3], {1}, kIcdf); }, in,
       {DType::float32, {3, 3}, {-1.2, -0.6, -0.1, 0.3, 0.4, 0.9, 2.5, 3.2, 2.2}}, Bound::kOp);
  both("a NaN makes its slice NaN", [](A a) { return jnp::quantile(a[4], a[3], {1}, kIcdf, false, a[1]); }, in,
       {DType::float32, {3, 3}, {-1.2, NAN, 0.9, 0.3, NAN, 2.2, 0.7, NAN, 2.2}}, Bound::kOp);
  both("nanquantile: NaNs weigh nothing", [](A a) { return jnp::nanquantile(a[4], a[3], {1}, kIcdf, false, a[1]); },
       in, {DType::float32, {3, 3}, {-1.2, 0.4, 0.9, 0.3, 0.4, 2.2, 0.7, 3.2, 2.2}}, Bound::kOp);
  both("nanquantile without weights", [](A a) { return jnp::nanquantile(a[4], a[3], {1}, kIcdf); }, in,
       {DType::float32, {3, 3}, {-1.2, 0.4, -0.1, 0.3, 1.1, 0.9, 2.5, 3.2, 2.2}}, Bound::kOp);
  both("nanquantile of an all-NaN slice", [](A) {
         return jnp::nanquantile(jnp::array<double>({NAN, NAN, 1, 2}, {2, 2}), Array(0.5), {1}, kIcdf); }, in,
       {DType::float64, {2}, {NAN, 1}}, Bound::kOp);
  both("a negative weight: NaN", [](A a) {
         return jnp::quantile(a[0], Array(0.5), {1}, kIcdf, false, jnp::array<double>({1, -1, 1, 1})); }, in,
       {DType::float64, {3}, {NAN, NAN, NAN}}, Bound::kOp);
  both("a NaN weight: NaN", [](A a) {
         return jnp::quantile(a[0], Array(0.5), {1}, kIcdf, false, jnp::array<double>({1, NAN, 1, 1})); }, in,
       {DType::float64, {3}, {NAN, NAN, NAN}}, Bound::kOp);
  both("zero weights: the smallest", [](A a) {
         return jnp::quantile(a[0], Array(0.5), {1}, kIcdf, false, jnp::zeros({4}, DType::float64)); }, in,
       {DType::float64, {3}, {-1.2000000476837158, -0.6000000238418579, -0.10000000149011612}}, Bound::kOp);
  both("int64 input and weights: f64", [](A) {
         return jnp::quantile(jnp::array<int64_t>({3, 1, 4, 1, 5, 9, 2, 6}), Array(0.3), {}, kIcdf, false,
                              jnp::arange(int64_t{8})); }, in, {DType::float64, {}, {2}}, Bound::kOp);
  both("bf16 input, f32 weights: f32", [](A a) {
         return jnp::quantile(a[0].astype(DType::bfloat16), a[3], {1}, kIcdf, false, a[1]); }, in,
       {DType::float32, {3, 3}, {-1.203125, 0.400390625, 0.8984375, 0.30078125, 0.400390625, 2.203125, 0.69921875,
         3.203125, 2.203125}}, Bound::kOp);
  both("percentile", [](A a) {
         return jnp::percentile(a[0], jnp::array<float>({10, 50, 90}), {1}, kIcdf, false, a[1]); }, in,
       {DType::float32, {3, 3}, {-1.2, 0.4, 0.9, 0.3, 0.4, 2.2, 0.7, 3.2, 2.2}}, Bound::kOp);
  both("weights for axes (1, 0), transposed", [](A a) {
         return jnp::quantile(a[0], Array(0.5), {1, 0}, kIcdf, false, jnp::ones({4, 3}, DType::float64)); }, in,
       {DType::float64, {}, {0.699999988079071}}, Bound::kOp);
  both("q outside [0, 1] clamps; a NaN q reads the smallest", [](A a) {
         return jnp::quantile(a[0], jnp::array<float>({-0.5, 1.5, NAN}), {1}, kIcdf); }, in,
       {DType::float32, {3, 3}, {-1.2, -0.6, -0.1, 2.5, 3.2, 2.2, -1.2, -0.6, -0.1}}, Bound::kOp);
  // JAX: NotImplementedError: linear doesn't support weights. Only method 'inverted_cdf' supports weights.
  refuses<TypeError>("weights with linear", [](A a) { return jnp::quantile(a[0], a[3], {1}, "linear", false, a[1]); },
                     in);
  // JAX: ValueError: Shape of weights must be consistent with shape of a along specified axis.
  refuses<ShapeError>("weights of shape (3,) for axis 1", [](A a) {
    return jnp::quantile(a[0], a[3], {1}, kIcdf, false, jnp::ones({3})); }, in);
  // JAX: ValueError: Weights shape must match 'a' shape when axis is None.
  refuses<ShapeError>("weights of shape (4,), no axes", [](A a) {
    return jnp::quantile(a[0], a[3], {}, kIcdf, false, a[1]); }, in);
}
// clang-format on

TEST_CASE("jnp::quantile inverted_cdf: a weighted CDF in double on random inputs, and its gradient",
          "[jnp][quantile]") {
  std::mt19937& g = rng();
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t rows = 2 + trial % 3, n = 5 + 3 * trial;
    std::vector<double> xv = uniform(static_cast<size_t>(rows * n), -3, 3);
    std::vector<double> wv = uniform(static_cast<size_t>(n), 0, 2);
    if (trial % 2) wv[static_cast<size_t>(trial)] = 0;  // a zero weight somewhere
    std::vector<double> qv = uniform(4, 0, 1);
    Array x = make(xv, {rows, n}, DType::float64), w = make(wv, {n}, DType::float64), q = make(qv, {4}, DType::float64);
    // Reference: per row, sort (value, weight) by value; the first value whose running weight reaches q * total.
    std::vector<double> want;
    for (double qq : qv)
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<int64_t> order(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return xv[r * n + a] < xv[r * n + b]; });
        double total = std::accumulate(wv.begin(), wv.end(), 0.0), run = 0;
        size_t k = 0;
        for (; k + 1 < order.size(); ++k) {
          run += wv[static_cast<size_t>(order[k])];
          if (!(run < qq * total)) break;
        }
        want.push_back(xv[r * n + order[k]]);
      }
    INFO("trial " << trial << ": " << rows << "x" << n);
    for (bool jitted : {false, true}) {
      auto f = [](Array a, Array qq, Array ww) { return jnp::quantile(a, qq, {1}, "inverted_cdf", false, ww); };
      Array got = jitted ? jit(f)(x, q, w) : f(x, q, w);
      CHECK(got.shape() == Shape{4, rows});
      CHECK(got.to_vector<double>() == want);
    }
    // The derivative in a: each result is one input element, so d sum(results) / da counts how often each is picked.
    Array ga = grad([&](Array a) { return jnp::sum(jnp::quantile(a, q, {1}, "inverted_cdf", false, w)); })(x);
    std::vector<double> picks(static_cast<size_t>(rows * n), 0.0);
    for (size_t i = 0; i < want.size(); ++i) {
      int64_t r = static_cast<int64_t>(i) % rows;
      for (int64_t c = 0; c < n; ++c)
        if (xv[r * n + c] == want[i]) picks[r * n + c] += 1;
    }
    CHECK(ga.to_vector<double>() == picks);
  }
}
