// More of jnp's surface (numpy_more.h) against JAX 0.10.2 with x64: every case below is JAX's result written out
// (dtype, shape, values; a script evaluated the same expressions in JAX), run eagerly and under jit, compared with
// tolerances.h's row of the result dtype (Bound::kOp: f64 1e-12, f32 2e-6, f16 2e-3 relative; integers, bools and
// the exactly representable results exact). Then independent references on random inputs: std::trunc, nearbyint,
// modf, frexp (subnormals included), Python's divmod rule, std::popcount, a double-precision log2(2^x + 2^y), and
// polynomial values at random points (p'(t) by finite differences, the antiderivative's derivative = p).
#include <bit>
#include <cmath>

#include "jitx/numpy_more.h"
#include "numpy_stats_test_util.h"

// clang-format off
TEST_CASE("numpy_more: JAX's values, dtypes and edge cases", "[jnp][numpy_more]") {
  const Array xf = make({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, 3.7, -3.7, INFINITY, -INFINITY, NAN}, {12},
    DType::float32);
  const Array yf = make({2.0, -2.0, 0.5, NAN, 1.0, -1.0, 0.0, -0.3, 7.0, 1.0, INFINITY, 2.0}, {12}, DType::float32);
  const Array xd = make({0.75, -8.0, 1e+300, 3.0, 0.1, -0.0, 6.5, -2.25}, {8}, DType::float64);
  const Array yd = make({0.5, 3.0, -1e+300, -2.0, 0.03, 5.0, -0.0, 0.75}, {8}, DType::float64);
  const Array xi = make({-7.0, -1.0, 0.0, 3.0, 8.0, 255.0, 100.0, -128.0}, {8}, DType::int32);
  const Array yi = make({2.0, -3.0, 5.0, -2.0, 3.0, 16.0, 7.0, 5.0}, {8}, DType::int32);
  const Array xh = make({0.75, -8.0, 3.0, 0.1, -2.5, 65504.0, 6e-05, 1.5}, {8}, DType::float16);
  const Array p3 = make({3.0, -2.0, 0.5}, {3}, DType::float32);
  const Array p5 = make({1.0, 0.0, -4.0, 2.0, 7.0}, {5}, DType::int32);
  const Array m23 = make({1.0, 2.0, 3.0, 4.0, -5.0, 6.5}, {2, 3}, DType::float32);
  const Array v3 = make({0.5, -1.0, 2.0}, {3}, DType::float32);
  const Array v2 = make({3.0, -0.25}, {2}, DType::float32);
  const Array yi3 = make({2.0, 0.0, 2.0, 1.0, 0.0, 1.0, 1.0, 2.0}, {8}, DType::int32);
  both("trunc f32", [](A a) { return jnp::trunc(a[0]); }, {xf},
       {DType::float32, {12}, {-2.0, -1.0, -0.0, 0.0, 1.0, 2.0, -0.0, 3.0, -3.0, INFINITY, -INFINITY, NAN}},
        Bound::kOp);
  both("trunc int32", [](A a) { return jnp::trunc(a[0]); }, {xi},
       {DType::int32, {8}, {-7.0, -1.0, 0.0, 3.0, 8.0, 255.0, 100.0, -128.0}}, Bound::kOp);
  both("rint f32 (ties to even)", [](A a) { return jnp::rint(a[0]); }, {xf},
       {DType::float32, {12}, {-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, -0.0, 4.0, -4.0, INFINITY, -INFINITY, NAN}},
        Bound::kOp);
  both("rint int32: float64", [](A a) { return jnp::rint(a[0]); }, {xi},
       {DType::float64, {8}, {-7.0, -1.0, 0.0, 3.0, 8.0, 255.0, 100.0, -128.0}}, Bound::kOp);
  both("fabs int32: float32", [](A a) { return jnp::fabs(a[0]); }, {xi},
       {DType::float32, {8}, {7.0, 1.0, 0.0, 3.0, 8.0, 255.0, 100.0, 128.0}}, Bound::kOp);
  both("fabs f32", [](A a) { return jnp::fabs(a[0]); }, {xf},
       {DType::float32, {12}, {2.5, 1.5, 0.5, 0.5, 1.5, 2.5, 0.0, 3.700000047683716, 3.700000047683716, INFINITY,
        INFINITY, NAN}}, Bound::kOp);
  both("fmax f32", [](A a) { return jnp::fmax(a[0], a[1]); }, {xf, yf},
       {DType::float32, {12}, {2.0, -1.5, 0.5, 0.5, 1.5, 2.5, 0.0, 3.700000047683716, 7.0, INFINITY, INFINITY, 2.0}},
        Bound::kOp);
  both("fmin f32", [](A a) { return jnp::fmin(a[0], a[1]); }, {xf, yf},
       {DType::float32, {12}, {-2.5, -2.0, -0.5, 0.5, 1.0, -1.0, 0.0, -0.30000001192092896, -3.700000047683716, 1.0,
        -INFINITY, 2.0}}, Bound::kOp);
  both("fmax int32", [](A a) { return jnp::fmax(a[0], a[1]); }, {xi, yi},
       {DType::int32, {8}, {2.0, -1.0, 5.0, 3.0, 8.0, 255.0, 100.0, 5.0}}, Bound::kOp);
  both("logaddexp2 f32", [](A a) { return jnp::logaddexp2(a[0], a[1]); }, {xf, yf},
       {DType::float32, {12}, {2.062390089035034, -0.7284466028213501, 1.0849624872207642, NAN, 2.2715532779693604,
        2.6221933364868164, 1.0, 3.7874629497528076, 7.000866889953613, INFINITY, INFINITY, NAN}}, Bound::kOp);
  both("logaddexp2 f64", [](A a) { return jnp::logaddexp2(a[0], a[1]); }, {xd, yd},
       {DType::float64, {8}, {1.630408450476996, 3.0007042690112464, 1e+300, 3.0443941193584534, 1.0654245110092015,
        5.044394119358453, 6.515852266995639, 0.9199250014423124}}, Bound::kOp);
  both("logaddexp2 int32: float32", [](A a) { return jnp::logaddexp2(a[0], a[1]); }, {xi, yi},
       {DType::float32, {8}, {2.002815008163452, -0.678071916103363, 5.044394016265869, 3.044394016265869,
        8.044394493103027, 255.0, 100.0, 5.0}}, Bound::kOp);
  both("isposinf", [](A a) { return jnp::isposinf(a[0]); }, {xf},
       {DType::bool_, {12}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0}}, Bound::kOp);
  both("isneginf", [](A a) { return jnp::isneginf(a[0]); }, {xf},
       {DType::bool_, {12}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0}}, Bound::kOp);
  both("isposinf int32", [](A a) { return jnp::isposinf(a[0]); }, {xi},
       {DType::bool_, {8}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}, Bound::kOp);
  both("modf f32: fraction", [](A a) { return jnp::modf(a[0]).first; }, {xf},
       {DType::float32, {12}, {-0.5, -0.5, -0.5, 0.5, 0.5, 0.5, 0.0, 0.7000000476837158, -0.7000000476837158, NAN,
        NAN, NAN}}, Bound::kOp);
  both("modf f32: whole", [](A a) { return jnp::modf(a[0]).second; }, {xf},
       {DType::float32, {12}, {-2.0, -1.0, -0.0, 0.0, 1.0, 2.0, -0.0, 3.0, -3.0, INFINITY, -INFINITY, NAN}},
        Bound::kOp);
  both("modf int32: float32", [](A a) { return jnp::modf(a[0]).first; }, {xi},
       {DType::float32, {8}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}, Bound::kOp);
  both("frexp f32: mantissa", [](A a) { return jnp::frexp(a[0]).first; }, {xf},
       {DType::float32, {12}, {-0.625, -0.75, -0.5, 0.5, 0.75, 0.625, -0.0, 0.925000011920929, -0.925000011920929,
        INFINITY, -INFINITY, NAN}}, Bound::kOp);
  both("frexp f32: exponent", [](A a) { return jnp::frexp(a[0]).second; }, {xf},
       {DType::int32, {12}, {2.0, 1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 2.0, 2.0, 0.0, 0.0, 0.0}}, Bound::kOp);
  both("frexp f64: mantissa", [](A a) { return jnp::frexp(a[0]).first; }, {xd},
       {DType::float64, {8}, {0.75, -0.5, 0.7466108948025751, 0.75, 0.8, -0.0, 0.8125, -0.5625}}, Bound::kOp);
  both("frexp f64: exponent", [](A a) { return jnp::frexp(a[0]).second; }, {xd},
       {DType::int32, {8}, {0.0, 4.0, 997.0, 2.0, -3.0, 0.0, 3.0, 2.0}}, Bound::kOp);
  both("frexp f16: mantissa", [](A a) { return jnp::frexp(a[0]).first; }, {xh},
       {DType::float16, {8}, {0.75, -0.5, 0.75, 0.7998046875, -0.625, 0.99951171875, 0.9833984375, 0.75}}, Bound::kOp);
  both("frexp f16: exponent", [](A a) { return jnp::frexp(a[0]).second; }, {xh},
       {DType::int32, {8}, {0.0, 4.0, 2.0, -3.0, 2.0, 16.0, -14.0, 1.0}}, Bound::kOp);
  both("frexp int32: exponent", [](A a) { return jnp::frexp(a[0]).second; }, {xi},
       {DType::int32, {8}, {3.0, 1.0, 0.0, 2.0, 4.0, 8.0, 7.0, 8.0}}, Bound::kOp);
  both("divmod f32: quotient", [](A a) { return jnp::divmod(a[0], a[1]).first; }, {xf, yf},
       {DType::float32, {12}, {-2.0, -0.0, -1.0, NAN, 1.0, -3.0, NAN, -13.0, -1.0, NAN, NAN, NAN}}, Bound::kOp);
  both("divmod f32: remainder", [](A a) { return jnp::divmod(a[0], a[1]).second; }, {xf, yf},
       {DType::float32, {12}, {1.5, -1.5, -0.0, NAN, 0.5, -0.5, NAN, -0.2000001072883606, 3.299999952316284, NAN,
        NAN, NAN}}, Bound::kOp);
  both("divmod f64: quotient", [](A a) { return jnp::divmod(a[0], a[1]).first; }, {xd, yd},
       {DType::float64, {8}, {1.0, -3.0, -1.0, -2.0, 3.0, 0.0, -INFINITY, -3.0}}, Bound::kOp);
  both("divmod f64: remainder", [](A a) { return jnp::divmod(a[0], a[1]).second; }, {xd, yd},
       {DType::float64, {8}, {0.25, 1.0, 0.0, -1.0, 0.010000000000000009, -0.0, NAN, -0.0}}, Bound::kOp);
  both("divmod int32: quotient", [](A a) { return jnp::divmod(a[0], a[1]).first; }, {xi, yi},
       {DType::int32, {8}, {-4.0, 0.0, 0.0, -2.0, 2.0, 15.0, 14.0, -26.0}}, Bound::kOp);
  both("divmod int32: remainder", [](A a) { return jnp::divmod(a[0], a[1]).second; }, {xi, yi},
       {DType::int32, {8}, {1.0, -1.0, 0.0, -1.0, 2.0, 15.0, 2.0, 2.0}}, Bound::kOp);
  both("bitwise_count int32", [](A a) { return jnp::bitwise_count(a[0]); }, {xi},
       {DType::uint8, {8}, {3.0, 1.0, 0.0, 2.0, 1.0, 8.0, 3.0, 1.0}}, Bound::kOp);
  both("bitwise_invert", [](A a) { return jnp::bitwise_invert(a[0]); }, {xi},
       {DType::int32, {8}, {6.0, 0.0, -1.0, -4.0, -9.0, -256.0, -101.0, 127.0}}, Bound::kOp);
  both("bitwise_left_shift", [](A a) { return jnp::bitwise_left_shift(a[0], jnp::abs(a[1])); }, {xi, yi},
       {DType::int32, {8}, {-28.0, -8.0, 0.0, 12.0, 64.0, 16711680.0, 12800.0, -4096.0}}, Bound::kOp);
  both("bitwise_right_shift", [](A a) { return jnp::bitwise_right_shift(a[0], jnp::abs(a[1])); }, {xi, yi},
       {DType::int32, {8}, {-2.0, -1.0, 0.0, 0.0, 1.0, 0.0, 0.0, -4.0}}, Bound::kOp);
  both("amax axis 1", [](A a) { return jnp::amax(a[0], 1); }, {m23},
       {DType::float32, {2}, {3.0, 6.5}}, Bound::kOp);
  both("amin keepdims", [](A a) { return jnp::amin(a[0], {0}, true); }, {m23},
       {DType::float32, {1, 3}, {1.0, -5.0, 3.0}}, Bound::kOp);
  both("array_equal, same", [](A a) { return jnp::array_equal(a[0], a[0]); }, {xd},
       {DType::bool_, {}, {1.0}}, Bound::kOp);
  both("array_equal, NaNs", [](A a) { return jnp::array_equal(a[0], a[0]); }, {xf},
       {DType::bool_, {}, {0.0}}, Bound::kOp);
  both("array_equal, equal_nan", [](A a) { return jnp::array_equal(a[0], a[0], true); }, {xf},
       {DType::bool_, {}, {1.0}}, Bound::kOp);
  both("array_equal, shapes differ", [](A a) { return jnp::array_equal(a[0], a[1]); }, {p3, p5},
       {DType::bool_, {}, {0.0}}, Bound::kOp);
  both("array_equiv, broadcast", [](A a) { return jnp::array_equiv(a[0], jnp::stack({a[0], a[0]})); }, {v3},
       {DType::bool_, {}, {1.0}}, Bound::kOp);
  both("concat", [](A a) { return jnp::concat({a[0], a[1]}); }, {v3, v2},
       {DType::float32, {5}, {0.5, -1.0, 2.0, 3.0, -0.25}}, Bound::kOp);
  both("permute_dims", [](A a) { return jnp::permute_dims(a[0], {1, 0}); }, {m23},
       {DType::float32, {3, 2}, {1.0, 4.0, 2.0, -5.0, 3.0, 6.5}}, Bound::kOp);
  both("rollaxis", [](A a) { return jnp::rollaxis(jnp::reshape(a[0], {2, 3, 1}), 2); }, {m23},
       {DType::float32, {1, 2, 3}, {1.0, 2.0, 3.0, 4.0, -5.0, 6.5}}, Bound::kOp);
  both("rollaxis start 3", [](A a) { return jnp::rollaxis(jnp::reshape(a[0], {2, 3, 1}), 0, 3); }, {m23},
       {DType::float32, {3, 1, 2}, {1.0, 4.0, 2.0, -5.0, 3.0, 6.5}}, Bound::kOp);
  both("unstack axis 1", [](A a) { return jnp::unstack(a[0], 1)[2]; }, {m23},
       {DType::float32, {2}, {3.0, 6.5}}, Bound::kOp);
  both("broadcast_arrays", [](A a) { return jnp::broadcast_arrays({a[0], a[1]})[0]; }, {v3, m23},
       {DType::float32, {2, 3}, {0.5, -1.0, 2.0, 0.5, -1.0, 2.0}}, Bound::kOp);
  both("ediff1d", [](A a) { return jnp::ediff1d(a[0]); }, {m23},
       {DType::float32, {5}, {1.0, 1.0, 1.0, -9.0, 11.5}}, Bound::kOp);
  both("ediff1d with ends", [](A a) { return jnp::ediff1d(a[0], jnp::array<double>({9.5, 8}), Array(-1)); }, {p5},
       {DType::int32, {7}, {-1.0, -1.0, -4.0, 6.0, 5.0, 9.0, 8.0}}, Bound::kOp);
  both("lexsort", [](A a) { return jnp::lexsort({a[0], a[1]}); }, {xi, yi3},
       {DType::int64, {8}, {1.0, 4.0, 3.0, 6.0, 5.0, 7.0, 0.0, 2.0}}, Bound::kOp);
  both("lexsort 2-D axis 0", [](A a) { return jnp::lexsort({a[0]}, 0); }, {m23},
       {DType::int64, {2, 3}, {0.0, 1.0, 0.0, 1.0, 0.0, 1.0}}, Bound::kOp);
  both("matvec", [](A a) { return jnp::matvec(a[0], a[1]); }, {m23, v3},
       {DType::float32, {2}, {4.5, 20.0}}, Bound::kOp);
  both("vecmat", [](A a) { return jnp::vecmat(a[0], a[1]); }, {v2, m23},
       {DType::float32, {3}, {2.0, 7.25, 7.375}}, Bound::kOp);
  both("polyadd", [](A a) { return jnp::polyadd(a[0], a[1]); }, {p3, p5},
       {DType::float32, {5}, {1.0, 0.0, -1.0, 0.0, 7.5}}, Bound::kOp);
  both("polysub", [](A a) { return jnp::polysub(a[0], a[1]); }, {p3, p5},
       {DType::float32, {5}, {-1.0, -0.0, 7.0, -4.0, -6.5}}, Bound::kOp);
  both("polyadd int32", [](A a) { return jnp::polyadd(a[0], a[0]); }, {p5},
       {DType::int32, {5}, {2.0, 0.0, -8.0, 4.0, 14.0}}, Bound::kOp);
  both("polymul", [](A a) { return jnp::polymul(a[0], a[1]); }, {p3, p5},
       {DType::float32, {7}, {3.0, -2.0, -11.5, 14.0, 15.0, -13.0, 3.5}}, Bound::kOp);
  both("polymul int32: float32", [](A a) { return jnp::polymul(a[0], a[0]); }, {p5},
       {DType::float32, {9}, {1.0, 0.0, -8.0, 4.0, 30.0, -16.0, -52.0, 28.0, 49.0}}, Bound::kOp);
  both("polyder", [](A a) { return jnp::polyder(a[0]); }, {p5},
       {DType::float32, {4}, {4.0, 0.0, -8.0, 2.0}}, Bound::kOp);
  both("polyder m=3", [](A a) { return jnp::polyder(a[0], 3); }, {p5},
       {DType::float32, {2}, {24.0, 0.0}}, Bound::kOp);
  both("polyder m=7", [](A a) { return jnp::polyder(a[0], 7); }, {p5},
       {DType::float32, {0}, {}}, Bound::kOp);
  both("polyint", [](A a) { return jnp::polyint(a[0]); }, {p3},
       {DType::float32, {4}, {1.0, -1.0, 0.5, 0.0}}, Bound::kOp);
  both("polyint m=2, k", [](A a) { return jnp::polyint(a[0], 2, jnp::array<float>({1.5, -2})); }, {p3},
       {DType::float32, {5}, {0.25, -0.3333333432674408, 0.25, 1.5, -2.0}}, Bound::kOp);
  both("polyint m=3, scalar k", [](A a) { return jnp::polyint(a[0], 3, Array(2.0f)); }, {p5},
       {DType::float32, {8}, {0.004761904943734407, 0.0, -0.06666667014360428, 0.0833333358168602,
        1.1666666269302368, 1.0, 2.0, 2.0}}, Bound::kOp);
  both("bartlett 5", [](A a) { return jnp::bartlett(5); }, {},
       {DType::float64, {5}, {0.0, 0.5, 1.0, 0.5, 0.0}}, Bound::kOp);
  both("blackman 6", [](A a) { return jnp::blackman(6); }, {},
       {DType::float64, {6}, {-1.3877787807814457e-17, 0.20077014326253045, 0.8492298567374694, 0.8492298567374695,
        0.20077014326253056, -1.3877787807814457e-17}}, Bound::kOp);
  both("hamming 7", [](A a) { return jnp::hamming(7); }, {},
       {DType::float64, {7}, {0.08000000000000002, 0.30999999999999994, 0.7699999999999999, 1.0, 0.7700000000000002,
        0.31000000000000033, 0.08000000000000002}}, Bound::kOp);
  both("hanning 4", [](A a) { return jnp::hanning(4); }, {},
       {DType::float64, {4}, {0.0, 0.7499999999999999, 0.7500000000000002, 0.0}}, Bound::kOp);
  both("hanning 1", [](A a) { return jnp::hanning(1); }, {},
       {DType::float64, {1}, {1.0}}, Bound::kOp);
  both("bartlett 0", [](A a) { return jnp::bartlett(0); }, {},
       {DType::float64, {0}, {}}, Bound::kOp);
}
// clang-format on

TEST_CASE("numpy_more: independent references on random inputs", "[jnp][numpy_more]") {
  std::mt19937& g = rng();
  std::uniform_real_distribution<double> wide(-1e6, 1e6), small(-8, 8);
  std::vector<double> v;
  for (int i = 0; i < 200; ++i) v.push_back(i % 2 ? wide(g) : small(g));
  for (double h : {0.5, -0.5, 1.5, 2.5, -2.5, 1e-310, -3e-320, 4e-300, 0.0, -0.0}) v.push_back(h);  // ties, subnormals
  Array x = make(v, {static_cast<int64_t>(v.size())}, DType::float64);
  std::vector<double> tr = jnp::trunc(x).to_vector<double>(), ri = jnp::rint(x).to_vector<double>();
  auto [fr, wh] = jnp::modf(x);
  auto [mant, ex] = jnp::frexp(x);
  std::vector<double> frv = fr.to_vector<double>(), whv = wh.to_vector<double>(), mv = mant.to_vector<double>();
  std::vector<int32_t> ev = ex.to_vector<int32_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    INFO("x = " << v[i]);
    CHECK(tr[i] == std::trunc(v[i]));
    CHECK(ri[i] == std::nearbyint(v[i]));  // the default rounding mode: ties to even
    double whole;
    double frac = std::modf(v[i], &whole);
    CHECK(frv[i] == frac);
    CHECK(whv[i] == whole);
    int e = 0;
    double m = std::frexp(v[i], &e);
    CHECK(mv[i] == m);
    CHECK(ev[i] == e);
  }
  // divmod: q * y + r == x (to rounding), r with y's sign and |r| < |y|, q an integer; integers exactly Python's.
  std::vector<double> xs, ys;
  for (int i = 0; i < 100; ++i) {
    xs.push_back(small(g) * 10);
    double y = small(g);
    ys.push_back(y == 0 ? 1 : y);
  }
  auto [q, r] = jnp::divmod(make(xs, DType::float64), make(ys, DType::float64));
  std::vector<double> qv = q.to_vector<double>(), rv = r.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO(xs[i] << " divmod " << ys[i]);
    CHECK(qv[i] == std::floor(qv[i]));
    CHECK(std::abs(qv[i] * ys[i] + rv[i] - xs[i]) <= 1e-12 * (std::abs(xs[i]) + 1));
    CHECK((rv[i] == 0 || std::signbit(rv[i]) == std::signbit(ys[i])));
    CHECK(std::abs(rv[i]) < std::abs(ys[i]));
  }
  std::uniform_int_distribution<int64_t> ints(-1000, 1000);
  std::vector<int64_t> a, b;
  for (int i = 0; i < 100; ++i) {
    a.push_back(ints(g));
    int64_t d = ints(g) / 10;
    b.push_back(d == 0 ? 3 : d);
  }
  auto [qi, ri2] = jnp::divmod(make_int(a, DType::int64), make_int(b, DType::int64));
  std::vector<int64_t> qiv = qi.to_vector<int64_t>(), riv = ri2.to_vector<int64_t>();
  std::vector<int32_t> a32(a.begin(), a.end());
  std::vector<uint8_t> pc = jnp::bitwise_count(array<int32_t>(a32)).to_vector<uint8_t>();
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t fq = a[i] / b[i] - ((a[i] % b[i] != 0) && ((a[i] < 0) != (b[i] < 0)) ? 1 : 0);
    CHECK(qiv[i] == fq);
    CHECK(riv[i] == a[i] - fq * b[i]);
    CHECK(pc[i] == std::popcount(static_cast<uint32_t>(a32[i] < 0 ? -a32[i] : a32[i])));
  }
  // logaddexp2 against log2(2^x + 2^y) in long double.
  std::vector<double> la = uniform(50, -60, 60), lb = uniform(50, -60, 60);
  std::vector<double> lg = jnp::logaddexp2(make(la, DType::float64), make(lb, DType::float64)).to_vector<double>();
  for (size_t i = 0; i < la.size(); ++i) {
    long double ea = std::exp2(static_cast<long double>(la[i])), eb = std::exp2(static_cast<long double>(lb[i]));
    long double want = std::log2(ea + eb);
    CHECK(std::abs(lg[i] - static_cast<double>(want)) <= 1e-13 * std::abs(static_cast<double>(want)) + 1e-14);
  }
  // Polynomials: values at random points (Horner in double), derivatives by central differences, and the
  // antiderivative's derivative is the polynomial again.
  auto horner = [](const std::vector<double>& p, double t) {
    double acc = 0;
    for (double c : p) acc = acc * t + c;
    return acc;
  };
  std::vector<double> p = uniform(6, -2, 2), pq = uniform(3, -2, 2);
  Array P = make(p, DType::float64), Q = make(pq, DType::float64);
  std::vector<double> prod = jnp::polymul(P, Q).to_vector<double>(), sum = jnp::polyadd(P, Q).to_vector<double>();
  std::vector<double> der = jnp::polyder(P).to_vector<double>(), integ = jnp::polyint(P, 1,
    Array(0.7)).to_vector<double>();
  CHECK(jnp::polyder(jnp::polyint(P, 2)).shape() == Shape{7});
  for (double t : uniform(8, -1.5, 1.5)) {
    INFO("t = " << t);
    CHECK(horner(prod, t) == Approx(horner(p, t) * horner(pq, t)).epsilon(1e-12).margin(1e-12));
    CHECK(horner(sum, t) == Approx(horner(p, t) + horner(pq, t)).epsilon(1e-12).margin(1e-12));
    double hstep = 1e-5;
    CHECK(horner(der, t) == Approx((horner(p, t + hstep) - horner(p,
      t - hstep)) / (2 * hstep)).epsilon(1e-7).margin(1e-7));
    CHECK((horner(integ, t + hstep) - horner(integ, t - hstep)) / (2 * hstep) ==
          Approx(horner(p, t)).epsilon(1e-7).margin(1e-7));
  }
  CHECK(horner(integ, 0) == 0.7);  // the integration constant is the value at 0
  // Windows against their closed forms in double.
  std::vector<double> hm = jnp::hamming(9).to_vector<double>(), bl = jnp::blackman(9).to_vector<double>();
  for (int n = 0; n < 9; ++n) {
    CHECK(hm[n] == Approx(0.54 - 0.46 * std::cos(2 * M_PI * n / 8)).epsilon(1e-14).margin(1e-15));
    CHECK(bl[n] == Approx(0.42 - 0.5 * std::cos(2 * M_PI * n / 8) + 0.08 * std::cos(4 * M_PI * n / 8)).margin(1e-15));
  }
}

TEST_CASE("numpy_more: bad arguments name the function", "[jnp][numpy_more]") {
  using Catch::Matchers::Contains;
  Array m = jnp::ones({2, 3}), v = jnp::ones({3});
  CHECK_THROWS_WITH(jnp::array_equiv(v, jnp::ones({2})), Contains("array_equiv"));
  CHECK_THROWS_WITH(jnp::rollaxis(m, 0, 4), Contains("[rollaxis]") && Contains("start=4"));
  CHECK_THROWS_WITH(jnp::rollaxis(m, 2), Contains("rollaxis"));
  CHECK_THROWS_WITH(jnp::permute_dims(m, {0}), Contains("[permute_dims]"));
  CHECK_THROWS_WITH(jnp::unstack(Array(1.0f)), Contains("[unstack]"));
  CHECK_THROWS_WITH(jnp::lexsort({v, m}), Contains("[lexsort]") && Contains("one shape"));
  CHECK_THROWS_AS(jnp::lexsort({}), TypeError);
  CHECK_THROWS_WITH(jnp::matvec(v, v), Contains("[matvec]"));
  CHECK_THROWS_WITH(jnp::vecmat(v, v), Contains("[vecmat]"));
  CHECK_THROWS_WITH(jnp::diag_indices_from(m), Contains("[diag_indices_from]") && Contains("equal"));
  CHECK_THROWS_WITH(jnp::tril_indices_from(v), Contains("[tril_indices_from]"));
  CHECK_THROWS_WITH(jnp::polyder(v, -1), Contains("[polyder]"));
  CHECK_THROWS_WITH(jnp::polyint(v, 2, jnp::ones({3})), Contains("[polyint]") && Contains("k must be"));
  CHECK_THROWS_WITH(jnp::polyadd(m, v), Contains("[polyadd]") && Contains("1-D"));
  CHECK_THROWS_WITH(jnp::bitwise_count(v), Contains("[bitwise_count]"));
  CHECK_THROWS_AS(jit([](Array a) { return jnp::polymul(a, a, true); })(v), TracerError);
  CHECK_THROWS_AS(jnp::trunc(Array()), TypeError);
}

// clang-format off
TEST_CASE("numpy_more: selection, filling, bits and polynomial division, as JAX", "[jnp][numpy_more]") {
  const Array xi = make({-7.0, -1.0, 0.0, 3.0, 8.0, 255.0, 100.0, -128.0}, {8}, DType::int32);
  const Array p3 = make({3.0, -2.0, 0.5}, {3}, DType::float32);
  const Array p5 = make({1.0, 0.0, -4.0, 2.0, 7.0}, {5}, DType::int32);
  const Array m23 = make({1.0, 2.0, 3.0, 4.0, -5.0, 6.5}, {2, 3}, DType::float32);
  const Array m34 = make({0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0}, {3, 4}, DType::int32);
  const Array ph = make({0.0, 0.7, 1.5, 3.2, 6.1, 0.2, -3.0, -6.4, 2.0}, {9}, DType::float64);
  const Array c5 = make({1.0, 0.0, 1.0, 1.0, 0.0}, {5}, DType::bool_);
  const Array ai = make({0.0, 2.0, 1.0, 1.0, 1.0, 0.0}, {2, 3}, DType::int32);
  const Array q8 = make({5.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0}, {8}, DType::float32);
  const Array u3 = make({7.0, 0.0, 255.0, 128.0, 1.0, 3.0}, {2, 3}, DType::uint8);
  const Array m23T = make({1.0, 4.0, 2.0, -5.0, 3.0, 6.5}, {3, 2}, DType::float32);
  both("resize (2,3) -> (4,2)", [](A a) { return jnp::resize(a[0], {4, 2}); }, {m23},
       {DType::float32, {4, 2}, {1.0, 2.0, 3.0, 4.0, -5.0, 6.5, 1.0, 2.0}}, Bound::kOp);
  both("resize (2,3) -> (2,)", [](A a) { return jnp::resize(a[0], {2}); }, {m23},
       {DType::float32, {2}, {1.0, 2.0}}, Bound::kOp);
  both("resize empty", [](A a) { return jnp::resize(a[0], {0, 3}); }, {m23},
       {DType::float32, {0, 3}, {}}, Bound::kOp);
  eager("trim_zeros 2-D", [](A a) { return jnp::trim_zeros(a[0]); }, {m34},
       {DType::int32, {2, 3}, {3.0, 0.0, 1.0, 0.0, 2.0, 0.0}}, Bound::kOp);
  eager("trim_zeros axis 1, front", [](A a) { return jnp::trim_zeros(a[0], "f", {1}); }, {m34},
       {DType::int32, {3, 3}, {0.0, 0.0, 0.0, 3.0, 0.0, 1.0, 0.0, 2.0, 0.0}}, Bound::kOp);
  eager("trim_zeros 1-D back", [](A) { return jnp::trim_zeros(jnp::array<int64_t>({0, 0, 4, 0, 5, 0, 0}), "b"); }, {p5},
       {DType::int64, {5}, {0.0, 0.0, 4.0, 0.0, 5.0}}, Bound::kOp);
  eager("compress", [](A a) { return jnp::compress(a[0], a[1]); }, {c5, q8},
       {DType::float32, {3}, {5.0, 4.0, 1.0}}, Bound::kOp);
  eager("compress axis 1", [](A a) { return jnp::compress(jnp::array<bool>({false, true, true}), a[0], 1); }, {m23},
       {DType::float32, {2, 2}, {2.0, 3.0, -5.0, 6.5}}, Bound::kOp);
  both("compress size 4, fill", [](A a) { return jnp::compress(a[0], a[1], std::nullopt, 4, Array(-1)); }, {c5, q8},
       {DType::float32, {4}, {5.0, 4.0, 1.0, -1.0}}, Bound::kOp);
  both("compress axis 0 size 2", [](A a) { return jnp::compress(jnp::array<bool>({false, true}), a[0], 0, 2); }, {m23},
       {DType::float32, {2, 3}, {4.0, -5.0, 6.5, 0.0, 0.0, 0.0}}, Bound::kOp);
  eager("extract", [](A a) { return jnp::extract(jnp::greater(a[0], Array(2.0f)), a[0]); }, {m23},
       {DType::float32, {3}, {3.0, 4.0, 6.5}}, Bound::kOp);
  both("extract size 6", [](A a) { return jnp::extract(jnp::greater(a[0], Array(2.0f)), a[0], 6, Array(7.5f)); }, {m23},
       {DType::float32, {6}, {3.0, 4.0, 6.5, 7.5, 7.5, 7.5}}, Bound::kOp);
  eager("choose", [](A a) { return jnp::choose(a[0], {a[1], jnp::negative(a[1]), jnp::multiply(a[1],
    Array(10.0f))}); }, {ai, m23},
       {DType::float32, {2, 3}, {1.0, 20.0, -3.0, -4.0, 5.0, 6.5}}, Bound::kOp);
  both("choose wrap", [](A a) { return jnp::choose(jnp::add(a[0], Array(2)), {a[1], jnp::negative(a[1])}, "wrap"); },
    {ai, m23},
       {DType::float32, {2, 3}, {1.0, 2.0, -3.0, -4.0, 5.0, 6.5}}, Bound::kOp);
  both("choose clip, broadcast", [](A a) { return jnp::choose(jnp::multiply(a[0], Array(3)), {a[1], Array(0.5f)},
    "clip"); }, {ai, m23},
       {DType::float32, {2, 3}, {1.0, 0.5, 0.5, 0.5, 0.5, 6.5}}, Bound::kOp);
  both("fill_diagonal", [](A a) { return jnp::fill_diagonal(a[0], Array(9.0f)); }, {m23},
       {DType::float32, {2, 3}, {9.0, 2.0, 3.0, 4.0, 9.0, 6.5}}, Bound::kOp);
  both("fill_diagonal values", [](A a) { return jnp::fill_diagonal(jnp::reshape(a[0], {3, 2}), jnp::array<float>({7,
    8})); }, {m23},
       {DType::float32, {3, 2}, {7.0, 2.0, 3.0, 8.0, -5.0, 6.5}}, Bound::kOp);
  both("put", [](A a) { return jnp::put(a[0], jnp::array<int32_t>({-1, 10, 2}), jnp::array<float>({50, 60}),
    "clip"); }, {m23},
       {DType::float32, {2, 3}, {50.0, 2.0, 50.0, 4.0, -5.0, 60.0}}, Bound::kOp);
  both("put wrap", [](A a) { return jnp::put(a[0], jnp::array<int32_t>({-1, 10, 2}), jnp::array<float>({50, 60}),
    "wrap"); }, {m23},
       {DType::float32, {2, 3}, {1.0, 2.0, 50.0, 4.0, 60.0, 50.0}}, Bound::kOp);
  both("put_along_axis", [](A a) { return jnp::put_along_axis(a[0], jnp::array<int32_t>({0, -1, 2, 1}, {2, 2}),
    jnp::array<float>({9, 8}), 1); }, {m23},
       {DType::float32, {2, 3}, {9.0, 2.0, 8.0, 4.0, 8.0, 9.0}}, Bound::kOp);
  both("put_along_axis out of range dropped", [](A a) { return jnp::put_along_axis(a[0], jnp::array<int32_t>({5, 1},
    {2, 1}), Array(7.0f), 1); }, {m23},
       {DType::float32, {2, 3}, {1.0, 2.0, 3.0, 4.0, 7.0, 6.5}}, Bound::kOp);
  both("put_along_axis flattened", [](A a) { return jnp::put_along_axis(a[0], jnp::array<int32_t>({4, -2}),
    Array(7.0f), std::nullopt); }, {m23},
       {DType::float32, {2, 3}, {1.0, 2.0, 3.0, 4.0, 7.0, 6.5}}, Bound::kOp);
  both("unwrap", [](A a) { return jnp::unwrap(a[0]); }, {ph},
       {DType::float64, {9}, {0.0, 0.7, 1.5, 3.2, 6.1, 6.483185307179586, 9.566370614359172, 12.449555921538758,
         14.566370614359172}}, Bound::kOp);
  both("unwrap discont 4", [](A a) { return jnp::unwrap(a[0], Array(4.0)); }, {ph},
       {DType::float64, {9}, {0.0, 0.7, 1.5, 3.2, 6.1, 6.483185307179586, 3.2831853071795862, -0.11681469282041412,
         2.0}}, Bound::kOp);
  both("unwrap period 4", [](A a) { return jnp::unwrap(a[0], std::nullopt, -1, Array(4.0)); }, {ph},
       {DType::float64, {9}, {0.0, 0.7, 1.5, 3.2, 2.0999999999999996, 0.2, 1.0, 1.5999999999999996, 2.0}}, Bound::kOp);
  both("unwrap int32 period 6", [](A a) { return jnp::unwrap(a[0], std::nullopt, -1, Array(6)); }, {xi},
       {DType::int32, {8}, {-7.0, -7.0, -6.0, -3.0, -4.0, -3.0, -2.0, -2.0}}, Bound::kOp);
  both("argpartition kth 3", [](A a) { return jnp::argpartition(a[0], 3); }, {q8},
       {DType::int32, {8}, {1.0, 3.0, 6.0, 2.0, 0.0, 4.0, 5.0, 7.0}}, Bound::kOp);
  both("argpartition axis 0", [](A a) { return jnp::argpartition(a[0], 1, 0); }, {m23T},
       {DType::int32, {3, 2}, {0.0, 1.0, 1.0, 0.0, 2.0, 2.0}}, Bound::kOp);
  both("packbits", [](A a) { return jnp::packbits(a[0]); }, {c5},
       {DType::uint8, {1}, {176.0}}, Bound::kOp);
  both("packbits axis 1 little", [](A a) { return jnp::packbits(a[0], 1, "little"); }, {m34},
       {DType::uint8, {3, 1}, {0.0, 10.0, 4.0}}, Bound::kOp);
  both("unpackbits", [](A a) { return jnp::unpackbits(a[0]); }, {u3},
       {DType::uint8, {48}, {0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
         1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
         0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0}}, Bound::kOp);
  both("unpackbits axis 1 count 5 little", [](A a) { return jnp::unpackbits(a[0], 1, 5, "little"); }, {u3},
       {DType::uint8, {2, 5}, {1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}, Bound::kOp);
  both("unpackbits count 30", [](A a) { return jnp::unpackbits(a[0], 0, 30); }, {u3},
       {DType::uint8, {30, 3}, {0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0,
         1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
         0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
         0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
         0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}, Bound::kOp);
  both("poly", [](A a) { return jnp::poly(a[0]); }, {p3},
       {DType::float32, {4}, {1.0, -1.5, -5.5, 3.0}}, Bound::kOp);
  both("poly int32: float32", [](A a) { return jnp::poly(a[0]); }, {p5},
       {DType::float32, {6}, {1.0, -6.0, -17.0, 78.0, -56.0, 0.0}}, Bound::kOp);
  both("polydiv: quotient", [](A a) { return jnp::polydiv(a[0], a[1]).first; }, {p5, p3},
       {DType::float32, {3}, {0.3333333432674408, 0.222222238779068, -1.2407407760620117}}, Bound::kOp);
  both("polydiv: remainder", [](A a) { return jnp::polydiv(a[0], a[1]).second; }, {p5, p3},
       {DType::float32, {5}, {0.0, -5.960464477539063e-08, 2.384185791015625e-07, -0.592592716217041,
         7.620370388031006}}, Bound::kOp);
}
// clang-format on
