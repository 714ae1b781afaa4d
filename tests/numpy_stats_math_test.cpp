// jnp's math (numpy_stats.h, numpy_stats_math.cpp: hypot, copysign, heaviside, float_power, ldexp, gcd/lcm, signbit,
// sinc, deg2rad/rad2deg, polyval, interp, trapezoid, convolve/correlate, bincount, digitize, histogram, isin,
// logspace/geomspace) against JAX 0.10.2 with x64. The inputs are random (fixed seed) and written here with JAX's
// results on them (dtype, weak type, shape, values); each case runs eagerly and under jit, gradients are jax.grad of
// sum(f(x) * w) for the random w written next to them, and what JAX refuses is refused with a jitx error of the
// matching kind. Tolerances: tolerances.h's row of the result dtype (f64 1e-12; f32 2e-6 for ops, 1e-5 for sums and
// gradients through sums; f16 2e-3; bf16 1.6e-2 relative); integer and bool results are exact.
#include "jitx/numpy_stats.h"

#include "numpy_stats_test_util.h"

// The cases are data, JAX's results written out (by a script run against JAX 0.10.2): kept packed.
// clang-format off
TEST_CASE("jnp::hypot, copysign, heaviside, float_power: values, dtypes, weak types, as JAX", "[jnp]") {
  Array x = make({0, -0.0, INFINITY, NAN, -1.4057269, -2.3251126, 1.7161511}, {7}, DType::float32);
  Array y = make({0.11965268, 2.6175847, NAN, -1.8256778, 0, -INFINITY, 1.693255}, {7}, DType::float32);
  Array yi = make({-3, -4, -9, 6, -6, -1, 6}, {7}, DType::int32);
  both("hypot f32, f32", [](A a) { return jnp::hypot(a[0], a[1]); }, {x, y, yi},
       {DType::float32, {7}, {0.11965268, 2.6175847, INFINITY, NAN, 1.4057269, INFINITY, 2.4108684}}, Bound::kOp);
  both("hypot f32, int32", [](A a) { return jnp::hypot(a[0], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {3, 4, INFINITY, NAN, 6.1624727, 2.531037, 6.2406073}}, Bound::kOp);
  both("hypot int32, int32: float32", [](A a) { return jnp::hypot(a[2], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {4.2426405, 5.656854, 12.7279215, 8.485281, 8.485281, 1.4142135, 8.485281}}, Bound::kOp);
  both("hypot weak, weak: weak float64", [](A) { return jnp::hypot(Array(2.5), Array(-3)); }, {x, y, yi},
       {DType::float64, {}, {3.905124837953327}, true}, Bound::kOp);
  both("hypot int64, weak: float64", [](A a) { return jnp::hypot(a[2].astype(DType::int64), 2.0); }, {x, y, yi},
       {DType::float64, {7}, {3.6055512754639896, 4.47213595499958, 9.219544457292889, 6.324555320336759,
         6.324555320336759, 2.23606797749979, 6.324555320336759}}, Bound::kOp);
  both("hypot weak, int64 0-d", [](A) { return jnp::hypot(2.0, jnp::array(int64_t{3})); }, {x, y, yi},
       {DType::float64, {}, {3.6055512754639896}, true}, Bound::kOp);
  both("copysign f32, f32", [](A a) { return jnp::copysign(a[0], a[1]); }, {x, y, yi},
       {DType::float32, {7}, {0, 0, INFINITY, -NAN, 1.4057269, -2.3251126, 1.7161511}}, Bound::kOp);
  both("copysign f32, int32", [](A a) { return jnp::copysign(a[0], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {-0.0, -0.0, -INFINITY, NAN, -1.4057269, -2.3251126, 1.7161511}}, Bound::kOp);
  both("copysign int32, int32: float32", [](A a) { return jnp::copysign(a[2], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {-3, -4, -9, 6, -6, -1, 6}}, Bound::kOp);
  both("copysign weak, weak: weak float64", [](A) { return jnp::copysign(Array(2.5), Array(-3)); }, {x, y, yi},
       {DType::float64, {}, {-2.5}, true}, Bound::kOp);
  both("copysign int64, weak: float64", [](A a) { return jnp::copysign(a[2].astype(DType::int64), 2.0); }, {x, y, yi},
       {DType::float64, {7}, {3.0, 4.0, 9.0, 6.0, 6.0, 1.0, 6.0}, true}, Bound::kOp);
  both("copysign weak, int64 0-d", [](A) { return jnp::copysign(2.0, jnp::array(int64_t{3})); }, {x, y, yi},
       {DType::float64, {}, {2.0}, true}, Bound::kOp);
  both("heaviside f32, f32", [](A a) { return jnp::heaviside(a[0], a[1]); }, {x, y, yi},
       {DType::float32, {7}, {0.11965268, 2.6175847, 1, NAN, 0, 0, 1}}, Bound::kOp);
  both("heaviside f32, int32", [](A a) { return jnp::heaviside(a[0], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {-3, -4, 1, NAN, 0, 0, 1}}, Bound::kOp);
  both("heaviside int32, int32: float32", [](A a) { return jnp::heaviside(a[2], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {0, 0, 0, 1, 0, 0, 1}}, Bound::kOp);
  both("heaviside weak, weak: weak float64", [](A) { return jnp::heaviside(Array(2.5), Array(-3)); }, {x, y, yi},
       {DType::float64, {}, {1.0}, true}, Bound::kOp);
  both("heaviside int64, weak: float64", [](A a) { return jnp::heaviside(a[2].astype(DType::int64), 2.0); },
       {x, y, yi}, {DType::float64, {7}, {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0}}, Bound::kOp);
  both("heaviside weak, int64 0-d", [](A) { return jnp::heaviside(2.0, jnp::array(int64_t{3})); }, {x, y, yi},
       {DType::float64, {}, {1.0}, true}, Bound::kOp);
  both("float_power f32, f32", [](A a) { return jnp::float_power(a[0], a[1]); }, {x, y, yi},
       {DType::float32, {7}, {0, 0, NAN, NAN, 1, 0, 2.4955273}}, Bound::kOp);
  both("float_power f32, int32", [](A a) { return jnp::float_power(a[0], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {INFINITY, INFINITY, 0, NAN, 0.12959678, -0.4300867, 25.546604}}, Bound::kOp);
  both("float_power int32, int32: float32", [](A a) { return jnp::float_power(a[2], a[2]); }, {x, y, yi},
       {DType::float32, {7}, {-0.037037037, 0.00390625, -2.5811748e-09, 46656, 2.143347e-05, -1, 46656}}, Bound::kOp);
  both("float_power weak, weak: weak float64", [](A) { return jnp::float_power(Array(2.5), Array(-3)); }, {x, y, yi},
       {DType::float64, {}, {0.064}, true}, Bound::kOp);
  both("float_power int64, weak: float64", [](A a) { return jnp::float_power(a[2].astype(DType::int64), 2.0); },
       {x, y, yi}, {DType::float64, {7}, {9.0, 16.0, 81.0, 36.0, 36.0, 1.0, 36.0}, true}, Bound::kOp);
  both("float_power weak, int64 0-d", [](A) { return jnp::float_power(2.0, jnp::array(int64_t{3})); }, {x, y, yi},
       {DType::float64, {}, {8.0}, true}, Bound::kOp);
  both("hypot of huge and tiny values",
       [](A) { return jnp::hypot(jnp::array<double>({3e300, 1e-300}), jnp::array<double>({4e300, 1e-300})); },
       {x, y, yi}, {DType::float64, {2}, {5e+300, 1.4142135623730952e-300}}, Bound::kOp);
  both("float_power of float16",
       [](A a) { return jnp::float_power(a[0].astype(DType::float16), a[1].astype(DType::float16)); }, {x, y, yi},
       {DType::float16, {7}, {0, 0, NAN, NAN, 1, 0, 2.4941406}}, Bound::kOp);
  // JAX: TypeError: or got incompatible shapes for broadcasting: (2,), (3,).
  refuses<ShapeError>("hypot of (2,) and (3,)", [](A) { return jnp::hypot(jnp::ones({2}), jnp::ones({3})); },
                      {x, y, yi});
}

TEST_CASE("jnp::hypot, copysign, heaviside, float_power, sinc, deg2rad: gradients, as JAX", "[jnp]") {
  Array x = make({0.566495845179368, -2.058758360946561, 2.602791087309485, 0.8779811946379623, -2.231372109747359},
                 {5}, DType::float64);
  Array y = make({0.0, 2.3877436485541903, -0.9260819839371957, 2.3129026731295905, -1.3296303966122867}, {5},
                 DType::float64);
  Array w0 = make({0.38695803465428424, -0.8908243326220133, -0.3562655216942803, -0.4099189877836389,
                   0.8462990769177652}, {5}, DType::float64);
  grad_both("grad of hypot in x1", [](A a) { return jnp::hypot(a[0], a[1]); }, {x, y}, 0, w0,
            {DType::float64, {5}, {0.38695803465428424, 0.58171263794254, -0.33565233851215304,
              -0.14547702777658067, -0.7270135285084298}}, Bound::kSum);
  Array w2 = make({-0.7053081172301201, -0.5582343478468588, -0.0653383951405846, 0.9812709013603009,
                   0.09269036316141555}, {5}, DType::float64);
  grad_both("grad of hypot in x2", [](A a) { return jnp::hypot(a[0], a[1]); }, {x, y}, 1, w2,
            {DType::float64, {5}, {-0.0, -0.4227808479124465, 0.021902539397590834, 0.9173972805122637,
              -0.04744736987944118}}, Bound::kSum);
  Array w4 = make({-0.8818585994374579, 0.003373217959283359, -0.016551332745678993, -0.8559725595044636,
                   -0.13469600902105294}, {5}, DType::float64);
  grad_both("grad of copysign in x1", [](A a) { return jnp::copysign(a[0], a[1]); }, {x, y}, 0, w4,
            {DType::float64, {5}, {-0.8818585994374579, -0.003373217959283359, 0.016551332745678993,
              -0.8559725595044636, -0.13469600902105294}}, Bound::kSum);
  Array w6 = make({0.06232358317929876, -0.27156580497086735, -0.36896817866684817, 0.5552014915172465,
                   0.27176954104116446}, {5}, DType::float64);
  grad_both("grad of heaviside in x2", [](A a) { return jnp::heaviside(a[0], a[1]); }, {x, y}, 1, w6,
            {DType::float64, {5}, {0.0, 0.0, 0.0, 0.0, 0.0}}, Bound::kSum);
  Array w8 = make({0.3821803282418721, 0.7516569983208401, 0.3476825511357282, -0.031197614520608985,
                   -0.25158769672316583}, {5}, DType::float64);
  grad_both("grad of float_power in x1", [](A a) { return jnp::float_power(jnp::abs(a[0]), a[1]); }, {x, y}, 0, w8,
            {DType::float64, {5}, {0.0, -4.888901332172888, -0.05101080285999514, -0.06082474990886898,
              -0.05156753908633294}}, Bound::kSum);
  Array w10 = make({-0.38482179402332983, -0.9313518883852299, -0.908195126045124, 0.3984498959151781,
                    0.32568186047433434}, {5}, DType::float64);
  grad_both("grad of float_power in x2", [](A a) { return jnp::float_power(jnp::abs(a[0]), a[1]); }, {x, y}, 1, w10,
            {DType::float64, {5}, {0.21868865822439265, -3.771570512091257, -0.35823794383610474,
              -0.03837410810774362, 0.0899145200950328}}, Bound::kSum);
  Array w12 = make({-0.339683526134023, -0.06251224990784476, 0.8961572207322228, 0.8840602287929216,
                    -0.6779403655317318}, {5}, DType::float64);
  grad_both("grad of sinc (0 at 0)", [](A a) { return jnp::sinc(a[1]); }, {x, y}, 1, w12,
            {DType::float64, {5}, {0.0, -0.005767383083100287, 1.0182583699849344, 0.16817785027392917,
              -0.1550635178751658}}, Bound::kSum);
  Array w14 = make({0.5127460088138704, -0.8157467376906438, 0.560788774620766, 0.002430565221263059,
                    -0.23864139684359054}, {5}, DType::float64);
  grad_both("grad of rad2deg", [](A a) { return jnp::rad2deg(a[0]); }, {x, y}, 0, w14,
            {DType::float64, {5}, {29.378182267212487, -46.73884522123932, 32.13082998408303, 0.13926112900965437,
              -13.673144856244344}}, Bound::kSum);
  // JAX: jax.grad(jax.grad(jnp.sinc))(0.0) == -pi^2 / 3 (its Maclaurin terms' custom JVP).
  auto sinc2 = grad(grad([](const Array& v) { return jnp::sinc(v); }));
  CHECK(sinc2(Array(0.0)).item<double>() == Approx(-3.2898681336964524).epsilon(1e-15));
  CHECK(jit(sinc2)(Array(0.0)).item<double>() == Approx(-3.2898681336964524).epsilon(1e-15));
}

TEST_CASE("jnp::ldexp: overflow by one, subnormals, special values, dtypes, as JAX", "[jnp]") {
  Array x = make({1.0, 0.75, -3.0, 0.0, INFINITY, NAN, 1e-310, 1.5, -0.0, 2.5}, {10}, DType::float64);
  Array e = make({3, -2, 1025, 4, 2, 1, 10, -1070, 7, -1080}, {10}, DType::int32);
  Array xf = make({1.3574052, 0.33393493, 1.7858487, 1.9688189, -1.2533215, 1.2966356}, {6}, DType::float32);
  Array ef = make({97, 128, -79, -113, 0, 139}, {6}, DType::int32);
  both("float64", [](A a) { return jnp::ldexp(a[0], a[1]); }, {x, e, xf, ef},
       {DType::float64, {10}, {8.0, 0.1875, -INFINITY, 0.0, INFINITY, NAN, 1e-310, 0.0, -0.0, 0.0}}, Bound::kOp);
  both("float32", [](A a) { return jnp::ldexp(a[2], a[3]); }, {x, e, xf, ef},
       {DType::float32, {6}, {2.1508944e+29, 1.1363217e+38, 2.954439e-24, 1.8959036e-34, -1.2533215, INFINITY}},
       Bound::kOp);
  both("float16 (an exponent past float16's range)", [](A a) { return jnp::ldexp(a[2].astype(DType::float16), a[3]); },
       {x, e, xf, ef}, {DType::float16, {6}, {INFINITY, INFINITY, 0, 0, -1.2529297, INFINITY}}, Bound::kOp);
  both("bfloat16", [](A a) { return jnp::ldexp(a[2].astype(DType::bfloat16), jnp::floor_divide(a[3], 2)); },
       {x, e, xf, ef},
       {DType::bfloat16, {6}, {3.8263005e+14, 6.1609243e+18, 1.6271429e-12, 1.3660947e-17, -1.25, 7.655399e+20}},
       Bound::kOp);
  both("int32 mantissas: float32", [](A a) { return jnp::ldexp(a[3], a[3] % 7); }, {x, e, xf, ef},
       {DType::float32, {6}, {6208, 512, -2528, -7232, 0, 8896}}, Bound::kOp);
  both("weak ints: float64", [](A) { return jnp::ldexp(Array(int64_t{3}), Array(int64_t{4})); }, {x, e, xf, ef},
       {DType::float64, {}, {48.0}}, Bound::kOp);
  both("bool exponent", [](A a) { return jnp::ldexp(a[2], a[3] > 0); }, {x, e, xf, ef},
       {DType::float32, {6}, {2.7148104, 0.66786987, 1.7858487, 1.9688189, -1.2533215, 2.5932713}}, Bound::kOp);
  Array w7 = make({-0.12164008, 0.55066085, -0.14742734, 0.9653955, -0.630839, -0.2977874}, {6}, DType::float32);
  grad_both("grad in x1", [](A a) { return jnp::ldexp(a[2], a[3] % 9); }, {x, e, xf, ef}, 2, w7,
            {DType::float32, {6}, {-15.56993, 2.2026434, -0.58970934, 15.446328, -0.630839, -4.7645984}}, Bound::kOp);
  // JAX: ValueError: ldexp not supported for input types (dtype('float32'), dtype('float32'))
  refuses<TypeError>("a float exponent", [](A a) { return jnp::ldexp(a[2], a[2]); }, {x, e, xf, ef});
  // JAX: ValueError: ldexp not supported for input types (dtype('float32'), dtype('float64'))
  refuses<TypeError>("a weak float exponent", [](A a) { return jnp::ldexp(a[2], 2.0); }, {x, e, xf, ef});
}

TEST_CASE("jnp::gcd and lcm: signs, zeros, promotion, as JAX", "[jnp]") {
  Array a = make({0, 53, -48, 23, -59, -33, 5, 31, 3}, {9}, DType::int32);
  Array b = make({0, 0, -23, -25, -5, -58, -23, -46, 37}, {9}, DType::int32);
  both("gcd int32", [](A a) { return jnp::gcd(a[0], a[1]); }, {a, b},
       {DType::int32, {9}, {0, 53, 1, 1, 1, 1, 1, 1, 1}}, Bound::kOp);
  both("lcm int32", [](A a) { return jnp::lcm(a[0], a[1]); }, {a, b},
       {DType::int32, {9}, {0, 0, 1104, 575, 295, 1914, 115, 1426, 111}}, Bound::kOp);
  both("gcd int8, weak int: int8", [](A a) { return jnp::gcd(a[0].astype(DType::int8), 12); }, {a, b},
       {DType::int8, {9}, {12, 1, 12, 1, 1, 3, 1, 1, 3}}, Bound::kOp);
  both("lcm uint8, int8: int16",
       [](A a) { return jnp::lcm(jnp::abs(a[0]).astype(DType::uint8), a[1].astype(DType::int8)); }, {a, b},
       {DType::int16, {9}, {0, 0, 1104, 575, 295, 1914, 115, 1426, 111}}, Bound::kOp);
  both("gcd of weak ints: weak int64", [](A) { return jnp::gcd(Array(int64_t{84}), Array(int64_t{-36})); }, {a, b},
       {DType::int64, {}, {12}, true}, Bound::kOp);
  both("gcd broadcast (3, 1) with (9,)", [](A a) { return jnp::gcd(jnp::array({{4}, {6}, {35}}), a[1]); }, {a, b},
       {DType::int32, {3, 9}, {4, 4, 1, 1, 1, 2, 1, 2, 1, 6, 6, 1, 1, 1, 2, 1, 2, 1, 35, 35, 1, 5, 5, 1, 1, 1, 1}},
       Bound::kOp);
  // JAX: ValueError: Arguments to jax.numpy.gcd must be integers.
  refuses<TypeError>("gcd of floats", [](A a) { return jnp::gcd(a[0].astype(DType::float32), a[1]); }, {a, b});
  // JAX: ValueError: Arguments to jax.numpy.lcm must be integers.
  refuses<TypeError>("lcm of bools", [](A a) { return jnp::lcm(a[0] > 0, a[1] > 0); }, {a, b});
}

TEST_CASE("jnp::signbit, sinc, deg2rad, rad2deg, radians, degrees: values and dtypes, as JAX", "[jnp]") {
  Array x = make({-0.0, 0, NAN, -NAN, -INFINITY, 1e-30, -2.5, 3}, {8}, DType::float32);
  both("signbit f32", [](A a) { return jnp::signbit(a[0]); }, {x}, {DType::bool_, {8}, {1, 0, 0, 1, 1, 0, 1, 0}},
       Bound::kOp);
  both("signbit int32", [](A) { return jnp::signbit(jnp::array({-3, 0, 2})); }, {x}, {DType::bool_, {3}, {1, 0, 0}},
       Bound::kOp);
  both("signbit weak", [](A) { return jnp::signbit(Array(0.25)); }, {x}, {DType::bool_, {}, {0}}, Bound::kOp);
  both("signbit int64 + weak", [](A) { return jnp::signbit(jnp::array<int64_t>({-3, 2}) + 0.5); }, {x},
       {DType::bool_, {2}, {1, 0}}, Bound::kOp);
  both("sinc f32", [](A a) { return jnp::sinc(a[0]); }, {x},
       {DType::float32, {8}, {1, 1, NAN, -NAN, -NAN, 1, 0.12732396, -2.5305382e-09}}, Bound::kOp);
  both("sinc int32", [](A) { return jnp::sinc(jnp::array({-3, 0, 2})); }, {x},
       {DType::float32, {3}, {-2.5305382e-09, 1, 2.7827534e-08}}, Bound::kOp);
  both("sinc weak", [](A) { return jnp::sinc(Array(0.25)); }, {x}, {DType::float64, {}, {0.9003163161571061}, true},
       Bound::kOp);
  both("sinc int64 + weak", [](A) { return jnp::sinc(jnp::array<int64_t>({-3, 2}) + 0.5); }, {x},
       {DType::float64, {2}, {0.12732395447351627, 0.12732395447351627}}, Bound::kOp);
  both("deg2rad f32", [](A a) { return jnp::deg2rad(a[0]); }, {x},
       {DType::float32, {8}, {-0.0, 0, NAN, -NAN, -INFINITY, 1.7453292e-32, -0.04363323, 0.05235988}}, Bound::kOp);
  both("deg2rad int32", [](A) { return jnp::deg2rad(jnp::array({-3, 0, 2})); }, {x},
       {DType::float32, {3}, {-0.05235988, 0, 0.034906585}}, Bound::kOp);
  both("deg2rad weak", [](A) { return jnp::deg2rad(Array(0.25)); }, {x},
       {DType::float64, {}, {0.004363323129985824}, true}, Bound::kOp);
  both("deg2rad int64 + weak", [](A) { return jnp::deg2rad(jnp::array<int64_t>({-3, 2}) + 0.5); }, {x},
       {DType::float64, {2}, {-0.04363323129985824, 0.04363323129985824}}, Bound::kOp);
  both("rad2deg f32", [](A a) { return jnp::rad2deg(a[0]); }, {x},
       {DType::float32, {8}, {-0.0, 0, NAN, -NAN, -INFINITY, 5.729578e-29, -143.23946, 171.88734}}, Bound::kOp);
  both("rad2deg int32", [](A) { return jnp::rad2deg(jnp::array({-3, 0, 2})); }, {x},
       {DType::float32, {3}, {-171.88734, 0, 114.59156}}, Bound::kOp);
  both("rad2deg weak", [](A) { return jnp::rad2deg(Array(0.25)); }, {x},
       {DType::float64, {}, {14.32394487827058}, true}, Bound::kOp);
  both("rad2deg int64 + weak", [](A) { return jnp::rad2deg(jnp::array<int64_t>({-3, 2}) + 0.5); }, {x},
       {DType::float64, {2}, {-143.2394487827058, 143.2394487827058}}, Bound::kOp);
  both("radians f32", [](A a) { return jnp::radians(a[0]); }, {x},
       {DType::float32, {8}, {-0.0, 0, NAN, -NAN, -INFINITY, 1.7453292e-32, -0.04363323, 0.05235988}}, Bound::kOp);
  both("radians int32", [](A) { return jnp::radians(jnp::array({-3, 0, 2})); }, {x},
       {DType::float32, {3}, {-0.05235988, 0, 0.034906585}}, Bound::kOp);
  both("radians weak", [](A) { return jnp::radians(Array(0.25)); }, {x},
       {DType::float64, {}, {0.004363323129985824}, true}, Bound::kOp);
  both("radians int64 + weak", [](A) { return jnp::radians(jnp::array<int64_t>({-3, 2}) + 0.5); }, {x},
       {DType::float64, {2}, {-0.04363323129985824, 0.04363323129985824}}, Bound::kOp);
  both("degrees f32", [](A a) { return jnp::degrees(a[0]); }, {x},
       {DType::float32, {8}, {-0.0, 0, NAN, -NAN, -INFINITY, 5.729578e-29, -143.23946, 171.88734}}, Bound::kOp);
  both("degrees int32", [](A) { return jnp::degrees(jnp::array({-3, 0, 2})); }, {x},
       {DType::float32, {3}, {-171.88734, 0, 114.59156}}, Bound::kOp);
  both("degrees weak", [](A) { return jnp::degrees(Array(0.25)); }, {x},
       {DType::float64, {}, {14.32394487827058}, true}, Bound::kOp);
  both("degrees int64 + weak", [](A) { return jnp::degrees(jnp::array<int64_t>({-3, 2}) + 0.5); }, {x},
       {DType::float64, {2}, {-143.2394487827058, 143.2394487827058}}, Bound::kOp);
  both("signbit bool", [](A a) { return jnp::signbit(a[0] > 0.0f); }, {x},
       {DType::bool_, {8}, {0, 0, 0, 0, 0, 0, 0, 0}}, Bound::kOp);
  both("signbit f16", [](A a) { return jnp::signbit(a[0].astype(DType::float16)); }, {x},
       {DType::bool_, {8}, {1, 0, 0, 1, 1, 0, 1, 0}}, Bound::kOp);
  both("signbit bf16", [](A a) { return jnp::signbit(a[0].astype(DType::bfloat16)); }, {x},
       {DType::bool_, {8}, {1, 0, 0, 1, 1, 0, 1, 0}}, Bound::kOp);
  both("signbit f64", [](A a) { return jnp::signbit(a[0].astype(DType::float64)); }, {x},
       {DType::bool_, {8}, {1, 0, 0, 1, 1, 0, 1, 0}}, Bound::kOp);
  both("sinc bool", [](A a) { return jnp::sinc(a[0] > 0.0f); }, {x},
       {DType::float32, {8}, {1, 1, 1, 1, 1, -2.7827534e-08, 1, -2.7827534e-08}}, Bound::kOp);
  both("sinc f16", [](A a) { return jnp::sinc(a[0].astype(DType::float16)); }, {x},
       {DType::float16, {8}, {1, 1, NAN, -NAN, -NAN, 1, 0.12731934, 0.0003080368}}, Bound::kOp);
  both("sinc bf16", [](A a) { return jnp::sinc(a[0].astype(DType::bfloat16)); }, {x},
       {DType::bfloat16, {8}, {1, 1, NAN, -NAN, -NAN, 1, 0.12792969, -0.0013427734}}, Bound::kOp);
  both("sinc f64", [](A a) { return jnp::sinc(a[0].astype(DType::float64)); }, {x},
       {DType::float64, {8}, {1.0, 1.0, NAN, -NAN, -NAN, 1.0, 0.12732395447351627, 3.8981718325193755e-17}},
       Bound::kOp);
  both("deg2rad bool", [](A a) { return jnp::deg2rad(a[0] > 0.0f); }, {x},
       {DType::float32, {8}, {0, 0, 0, 0, 0, 0.017453292, 0, 0.017453292}}, Bound::kOp);
  both("deg2rad f16", [](A a) { return jnp::deg2rad(a[0].astype(DType::float16)); }, {x},
       {DType::float16, {8}, {-0.0, 0, NAN, -NAN, -INFINITY, 0, -0.043640137, 0.052368164}}, Bound::kOp);
  both("deg2rad bf16", [](A a) { return jnp::deg2rad(a[0].astype(DType::bfloat16)); }, {x},
       {DType::bfloat16, {8}, {-0.0, 0, NAN, -NAN, -INFINITY, 1.7429666e-32, -0.043701172, 0.052246094}}, Bound::kOp);
  both("deg2rad f64", [](A a) { return jnp::deg2rad(a[0].astype(DType::float64)); }, {x},
       {DType::float64, {8}, {-0.0, 0.0, NAN, -NAN, -INFINITY, 1.7453292575289027e-32, -0.04363323129985824,
         0.05235987755982989}}, Bound::kOp);
}

TEST_CASE("jnp::polyval: Horner's rule over p's first axis, integer and broadcast cases, as JAX", "[jnp]") {
  Array p = make({-1.8621546, 2.999228, 0.5199654, 2.0106032}, {4}, DType::float32);
  Array x = make({-1.4057269, -2.3251126, 1.7161511, 0.11965268, 2.6175847, 0.8669217}, {2, 3}, DType::float32);
  Array p2 = make({-1.8256778, 0.049902774, 1.0640272, 1.693255, -1.2819486, 1.7493432, -0.47133642, 2.0819445,
                   0.56649584}, {3, 3}, DType::float32);
  Array pi = make({1, -3, -4}, {3}, DType::int32);
  both("f32", [](A a) { return jnp::polyval(a[0], a[1]); }, {p, x, p2, pi},
       {DType::float32, {2, 3}, {12.379069, 40.423004, 2.324184, 2.1125677, -9.476192, 3.502188}}, Bound::kSum);
  both("2-d p broadcasts with x", [](A a) { return jnp::polyval(a[2], a[1]); }, {p, x, p2, pi},
       {DType::float32, {2, 3}, {-6.4592543, 5.3324013, 6.7023787, -0.29487172, -0.9317431, 2.8827126}}, Bound::kSum);
  both("int32 stays int32", [](A a) { return jnp::polyval(a[3], a[3]); }, {p, x, p2, pi},
       {DType::int32, {3}, {-6, 14, 24}}, Bound::kOp);
  both("int32 p at a weak x: float32", [](A a) { return jnp::polyval(a[3], 1.5); }, {p, x, p2, pi},
       {DType::float64, {}, {-6.25}}, Bound::kOp);
  both("empty p: zeros", [](A a) { return jnp::polyval(jnp::zeros({0}), a[1]); }, {p, x, p2, pi},
       {DType::float32, {2, 3}, {0, 0, 0, 0, 0, 0}}, Bound::kOp);
  Array w5 = make({0.2926604, -0.7437907, 0.84438115, 0.79591453, -0.308694, 0.77096754}, {2, 3}, DType::float32);
  grad_both("grad in p", [](A a) { return jnp::polyval(a[0], a[1]); }, {p, x, p2, pi}, 0, w5,
            {DType::float32, {4}, {7.771473, -2.480152, 2.7226512, 1.6514388}}, Bound::kSum);
  Array w7 = make({-0.44321012, 0.38695803, -0.8908243, -0.35626552, -0.409919, 0.84629905}, {2, 3}, DType::float32);
  grad_both("grad in x", [](A a) { return jnp::polyval(a[0], a[1]); }, {p, x, p2, pi}, 1, w7,
            {DType::float32, {2, 3}, {8.399479, -16.882349, 5.0232596, -0.41245452, 9.041018, 1.2877556}},
            Bound::kSum);
  // JAX: IndexError: tuple index out of range
  refuses<ShapeError>("0-d p", [](A a) { return jnp::polyval(jnp::array(2.0f), a[1]); }, {p, x, p2, pi});
  // JAX: ValueError: Incompatible shapes for broadcasting: shapes=[(3,), (2, 2)]
  refuses<ShapeError>("p (3, 3) against x (2, 2)", [](A a) { return jnp::polyval(a[2], jnp::ones({2, 2})); },
                      {p, x, p2, pi});
}

TEST_CASE("jnp::interp: bounds, extrapolation, period, repeated points, as JAX", "[jnp]") {
  Array x = make({0.9770456, -1.0190506, -0.18753675, 2.6884716, 2.6521807, -2.033821, 1.538238, -2.44724}, {8},
                 DType::float32);
  Array xp = make({-0.7379364, 0.5435391, 0.69536513, 0.69536513, 1.110403, 1.503314}, {6}, DType::float32);
  Array fp = make({-0.093592845, -0.75476307, -1.1544654, -2.7940557, -2.7245853, 1.1953497}, {6}, DType::float32);
  both("default bounds", [](A a) { return jnp::interp(a[0], a[1], a[2]); }, {x, xp, fp},
       {DType::float32, {8}, {-2.746907, -0.093592845, -0.3775685, 1.1953497, 1.1953497, -0.093592845, 1.1953497,
         -0.093592845}}, Bound::kOp);
  both("left, right values", [](A a) { return jnp::interp(a[0], a[1], a[2], Array(-9.0), Array(9.0)); }, {x, xp, fp},
       {DType::float32, {8}, {-2.746907, -9, -0.3775685, 9, 9, -9, 9, -9}}, Bound::kOp);
  both("a float64 right value", [](A a) { return jnp::interp(a[0], a[1], a[2], {}, jnp::array<double>({7.5})); },
       {x, xp, fp}, {DType::float64, {8}, {-2.7469069957733154, -0.09359284490346909, -0.3775685131549835, 7.5, 7.5,
         -0.09359284490346909, 7.5, -0.09359284490346909}}, Bound::kOp);
  both("extrapolate both", [](A a) { return jnp::interp(a[0], a[1], a[2], "extrapolate", "extrapolate"); },
       {x, xp, fp},
       {DType::float32, {8}, {-2.746907, 0.05144649, -0.3775685, 13.019249, 12.6571865, 0.57501173, 1.5437744,
         0.788313}}, Bound::kOp);
  both("period 2.5", [](A a) { return jnp::interp(a[0], a[1], a[2], {}, {}, Array(2.5)); }, {x, xp, fp},
       {DType::float32, {8}, {-2.746907, 0.97222584, -0.37756854, -0.57156795, -0.5528438, -0.7148495, 1.0213782,
         -0.50154823}}, Bound::kOp);
  both("a negative period", [](A a) { return jnp::interp(a[0], a[1], a[2], {}, {}, jnp::array(-3.0f)); }, {x, xp, fp},
       {DType::float32, {8}, {-2.746907, 0.38395593, -0.37756857, -0.3135957, -0.29487166, -2.748726, 1.1360217,
         -0.779038}}, Bound::kOp);
  both("x of int32, fp of float64",
       [](A a) { return jnp::interp(jnp::array({-2, 0, 1}), a[1], a[2].astype(DType::float64)); }, {x, xp, fp},
       {DType::float64, {3}, {-0.09359284490346909, -0.4743270537722828, -2.743064905188021}}, Bound::kOp);
  both("x 2-d", [](A a) { return jnp::interp(a[0].reshape({2, 4}), a[1], a[2]); }, {x, xp, fp},
       {DType::float32, {2, 4}, {-2.746907, -0.093592845, -0.3775685, 1.1953497, 1.1953497, -0.093592845,
         1.1953497, -0.093592845}}, Bound::kOp);
  both("one point", [](A a) { return jnp::interp(a[0], jnp::array({0.5f}), jnp::array({4.0f})); }, {x, xp, fp},
       {DType::float32, {8}, {4, 4, 4, 4, 4, 4, 4, 4}}, Bound::kOp);
  Array w9 = make({0.56078875, 0.0024305652, -0.2386414, 0.4524684, 0.111311644, 0.5952829, 0.65627295,
                   -0.41777384}, {8}, DType::float32);
  grad_both("grad in x", [](A a) { return jnp::interp(a[0], a[1], a[2]); }, {x, xp, fp}, 0, w9,
            {DType::float32, {8}, {0.09386668, -0.0, 0.12312571, 0, 0, -0.0, 0, -0.0}}, Bound::kSum);
  Array w11 = make({0.43221188, -0.5638217, 0.004905289, -0.35473806, -0.12164008, 0.55066085, -0.14742734,
                    0.9653955}, {8}, DType::float32);
  grad_both("grad in xp", [](A a) { return jnp::interp(a[0], a[1], a[2]); }, {x, xp, fp}, 1, w11,
            {DType::float32, {6}, {0.0014438423, 0.0010870147, 0, -0.023245458, -0.049099598, 0}}, Bound::kSum);
  Array w13 = make({-0.630839, -0.2977874, -0.7973982, -0.97024727, 0.08990952, 0.055641394, -0.12053545,
                    -0.40341693}, {8}, DType::float32);
  grad_both("grad in fp", [](A a) { return jnp::interp(a[0], a[1], a[2], "extrapolate"); }, {x, xp, fp}, 2, w13,
            {DType::float32, {6}, {-1.6476328, 0.20467174, 0, -0.20269725, -0.42814174, -1.0008732}}, Bound::kSum);
  // JAX: ValueError: xp and fp must be one-dimensional arrays of equal size
  refuses<ShapeError>("xp and fp of different sizes", [](A a) { return jnp::interp(a[0], a[1], a[0]); }, {x, xp, fp});
  // JAX: ValueError: xp and fp must be one-dimensional arrays of equal size
  refuses<ShapeError>("2-d xp", [](A a) { return jnp::interp(a[0], jnp::ones({2, 2}), jnp::ones({2, 2})); },
                      {x, xp, fp});
  // JAX: ValueError: the only valid string value of `left` is 'extrapolate', but got: 'nearest'
  refuses<TypeError>("left 'nearest'", [](A a) { return jnp::interp(a[0], a[1], a[2], "nearest"); }, {x, xp, fp});
  // JAX: ValueError: period must be a scalar; got JitTracer(float64[2])
  refuses<ShapeError>("a 1-d period", [](A a) { return jnp::interp(a[0], a[1], a[2], {}, {}, jnp::ones({2})); },
                      {x, xp, fp});
  // JAX: TypeError: Slice size at index 0 in gather op is out of range, must be within [0, 0 + 1), got 1.
  refuses<ShapeError>("empty xp", [](A a) { return jnp::interp(a[0], jnp::zeros({0}), jnp::zeros({0})); },
                      {x, xp, fp});
}

TEST_CASE("jnp::trapezoid: dx, 1-d and n-d sample points, axes, as JAX", "[jnp]") {
  Array y = make({-2.854463, -2.2553632, 0.3711095, -1.6460491, -1.529359, 1.869727, 0.8698831, -0.53709805,
                  1.1815213, 0.37733415, -2.343705, 2.2079625, 0.09287996, -0.93971395, -0.054376885}, {3, 5},
                 DType::float32);
  Array xs = make({0.4189054, 1.5788742, 1.6032103, 2.2513285, 2.4145112}, {5}, DType::float32);
  Array x2 = make({0.5522685501465978, 2.7102127497322948, 2.742259475449057, 3.0635600463458954,
                   3.4123472658003937, 0.8439943297591301, 1.1152318326063213, 1.2357154170286364,
                   1.5139725879903034, 3.7874296310693265, 0.23092305591601603, 2.2669271639259696,
                   2.3999573216509047, 3.2988647167174023, 3.3463505177478683}, {3, 5}, DType::float64);
  both("dx 1", [](A a) { return jnp::trapezoid(a[0]); }, {y, xs, x2},
       {DType::float32, {3}, {-5.7222137, 2.6378372, 0.16208756}}, Bound::kSum);
  both("dx 0.25, axis 0", [](A a) { return jnp::trapezoid(a[0], std::nullopt, 0.25, 0); }, {y, xs, x2},
       {DType::float32, {5}, {-0.18233931, 0.21154568, -0.07627583, -0.027840078, -0.10363345}}, Bound::kSum);
  both("dx a float64 array per row",
       [](A a) { return jnp::trapezoid(a[0], std::nullopt, jnp::array<double>({0.5, 1.0, 2.0}).reshape({3, 1})); },
       {y, xs, x2}, {DType::float64, {3}, {-2.8611068725585938, 2.6378371715545654, 0.3241751194000244}}, Bound::kSum,
       DType::float32);
  both("1-d x", [](A a) { return jnp::trapezoid(a[0], a[1]); }, {y, xs, x2},
       {DType::float32, {3}, {-3.658789, 1.9290009, -0.4062652}}, Bound::kSum);
  both("2-d x of float64", [](A a) { return jnp::trapezoid(a[0], a[2]); }, {y, xs, x2},
       {DType::float64, {3}, {-6.302142427308712, 2.2532432140974072, -0.38936062079895495}}, Bound::kSum);
  both("2-d x along axis 0", [](A a) { return jnp::trapezoid(a[0], a[2], 1.0, 0); }, {y, xs, x2},
       {DType::float64, {5}, {0.0016546735885340604, 2.8772773880072555, -0.1335541157548229, 0.5757132719543582,
         -0.28727695151482036}}, Bound::kSum);
  both("int32 y", [](A) { return jnp::trapezoid(jnp::array({1, 4, 9})); }, {y, xs, x2}, {DType::float32, {}, {9}},
       Bound::kOp);
  both("one sample: 0", [](A) { return jnp::trapezoid(jnp::array({3.0f})); }, {y, xs, x2}, {DType::float32, {}, {0}},
       Bound::kOp);
  both("an empty axis with empty x: 0", [](A) { return jnp::trapezoid(jnp::zeros({2, 0}), jnp::zeros({0})); },
       {y, xs, x2}, {DType::float32, {2}, {0, 0}}, Bound::kOp);
  Array w9 = make({-0.47254512, 0.09555732, -0.019995289}, {3}, DType::float32);
  grad_both("grad in y", [](A a) { return jnp::trapezoid(a[0], a[1]); }, {y, xs, x2}, 0, w9,
            {DType::float32, {3, 5}, {-0.2740688, -0.27981874, -0.15888248, -0.19168814, -0.038555603, 0.055421755,
              0.0565845, 0.03212896, 0.038762867, 0.007796652, -0.011596956, -0.01184026, -0.0067229588,
              -0.008111098, -0.0016314429}}, Bound::kSum);
  Array w11 = make({0.37825808, 0.36750337, 0.27521938}, {3}, DType::float32);
  grad_both("grad in x", [](A a) { return jnp::trapezoid(a[0], a[1]); }, {y, xs, x2}, 1, w11,
            {DType::float32, {5}, {0.48168796, -0.5030889, 0.26064774, 0.21166931, -0.45091614}}, Bound::kSum);
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>("axis 2", [](A a) { return jnp::trapezoid(a[0], std::nullopt, 1.0, 2); }, {y, xs, x2});
  // JAX: ValueError: axis -1 is out of bounds for array of dimension 0
  refuses<ShapeError>("0-d y", [](A) { return jnp::trapezoid(jnp::array(1.0f)); }, {y, xs, x2});
  // JAX: IndexError: index is out of bounds for axis 0 with size 0
  refuses<ShapeError>("an empty axis", [](A) { return jnp::trapezoid(jnp::zeros({0})); }, {y, xs, x2});
}

TEST_CASE("jnp::convolve and correlate: modes, operand order, dtypes, as JAX", "[jnp]") {
  Array a = make({-1.3336086, -2.593559, 1.1490273, -0.94435817, 0.43691352, -1.2730476, -0.44905105}, {7},
                 DType::float32);
  Array v = make({0.035785414, -1.823149, -1.2305422}, {3}, DType::float32);
  Array v4 = make({-2.5938892, 0.08523917, -1.3538313, 1.8548743}, {4}, DType::float32);
  both("convolve full", [](A a) { return jnp::convolve(a[0], a[1], "full"); }, {a, v, v4},
       {DType::float32, {9}, {-0.047723737, 2.3385556, 6.410625, 1.0628415, 0.3234142, 0.31995755, 1.7672452,
         2.3852258, 0.55257624}}, Bound::kSum);
  both("convolve full, shorter first", [](A a) { return jnp::convolve(a[2], a[0], "full"); }, {a, v, v4},
       {DType::float32, {10}, {3.459233, 6.6137295, -1.3960415, 3.5850677, -7.5801163, 6.7491894, -1.2868978,
         2.4956346, -1.7534038, -0.83293325}}, Bound::kSum);
  both("correlate full", [](A a) { return jnp::correlate(a[0], a[2], "full"); }, {a, v, v4},
       {DType::float32, {10}, {-2.4736762, -3.0052447, 5.5288672, -0.06909466, 8.9142685, -6.0137963, 3.377361,
         -0.6338794, 3.2638676, 1.1647887}}, Bound::kSum);
  both("correlate full, shorter first", [](A a) { return jnp::correlate(a[1], a[0], "full"); }, {a, v, v4},
       {DType::float32, {9}, {-0.016069477, 0.7731304, 2.8891666, 0.736186, 1.2251835, -1.025587, 3.2667942,
         5.622851, 1.6410617}}, Bound::kSum);
  both("convolve same", [](A a) { return jnp::convolve(a[0], a[1], "same"); }, {a, v, v4},
       {DType::float32, {7}, {2.3385556, 6.410625, 1.0628415, 0.3234142, 0.31995755, 1.7672452, 2.3852258}},
       Bound::kSum);
  both("convolve same, shorter first", [](A a) { return jnp::convolve(a[2], a[0], "same"); }, {a, v, v4},
       {DType::float32, {7}, {6.6137295, -1.3960415, 3.5850677, -7.5801163, 6.7491894, -1.2868978, 2.4956346}},
       Bound::kSum);
  both("correlate same", [](A a) { return jnp::correlate(a[0], a[2], "same"); }, {a, v, v4},
       {DType::float32, {7}, {-3.0052447, 5.5288672, -0.06909466, 8.9142685, -6.0137963, 3.377361, -0.6338794}},
       Bound::kSum);
  both("correlate same, shorter first", [](A a) { return jnp::correlate(a[1], a[0], "same"); }, {a, v, v4},
       {DType::float32, {7}, {0.7731304, 2.8891666, 0.736186, 1.2251835, -1.025587, 3.2667942, 5.622851}},
       Bound::kSum);
  both("convolve valid", [](A a) { return jnp::convolve(a[0], a[1], "valid"); }, {a, v, v4},
       {DType::float32, {5}, {6.410625, 1.0628415, 0.3234142, 0.31995755, 1.7672452}}, Bound::kSum);
  both("convolve valid, shorter first", [](A a) { return jnp::convolve(a[2], a[0], "valid"); }, {a, v, v4},
       {DType::float32, {4}, {3.5850677, -7.5801163, 6.7491894, -1.2868978}}, Bound::kSum);
  both("correlate valid", [](A a) { return jnp::correlate(a[0], a[2], "valid"); }, {a, v, v4},
       {DType::float32, {4}, {-0.06909466, 8.9142685, -6.0137963, 3.377361}}, Bound::kSum);
  both("correlate valid, shorter first", [](A a) { return jnp::correlate(a[1], a[0], "valid"); }, {a, v, v4},
       {DType::float32, {5}, {2.8891666, 0.736186, 1.2251835, -1.025587, 3.2667942}}, Bound::kSum);
  both("convolve int32: float32", [](A) { return jnp::convolve(jnp::array({1, 2, 3}), jnp::array({0, 1})); },
       {a, v, v4}, {DType::float32, {4}, {0, 1, 2, 3}}, Bound::kOp);
  both("correlate f32 with f64", [](A a) { return jnp::correlate(a[0], a[1].astype(DType::float64)); }, {a, v, v4},
       {DType::float64, {5}, {3.2667940996709177, -1.0255870406438756, 1.2251835239537066, 0.7361860506712712,
         2.8891667476676437}}, Bound::kSum);
  Array w14 = make({0.2100833, 0.6962295, 0.9392144, 0.16390531, 0.81981206, -0.4747526, 0.7817998}, {7},
                   DType::float32);
  grad_both("grad of convolve", [](A a) { return jnp::convolve(a[0], a[2], "same"); }, {a, v, v4}, 0, w14,
            {DType::float32, {7}, {0.8174547, -1.4531009, -0.4271363, -4.4127407, 1.7376032, -3.2253942, 1.2980957}},
            Bound::kSum);
  Array w16 = make({-0.07506118, -0.03006091, -0.74142027, -0.7606702, -0.36169693, 0.5712674, -0.96401066,
                    0.86062783, -0.7951664}, {9}, DType::float32);
  grad_both("grad of correlate", [](A a) { return jnp::correlate(a[1], a[0], "full"); }, {a, v, v4}, 0, w16,
            {DType::float32, {7}, {-0.62506443, 0.7189391, 0.13180676, -0.07076215, 1.8053664, 2.2866807,
              0.96446836}}, Bound::kSum);
  // JAX: ValueError: convolve() only support 1-dimensional inputs.
  refuses<ShapeError>("2-d input", [](A a) { return jnp::convolve(a[0].reshape({7, 1}), a[1]); }, {a, v, v4});
  // JAX: ValueError: correlate: inputs cannot be empty, got shapes (7,) and (0,).
  refuses<ShapeError>("empty input", [](A a) { return jnp::correlate(a[0], jnp::zeros({0})); }, {a, v, v4});
  // JAX: ValueError: mode must be one of ['full', 'same', 'valid']
  refuses<TypeError>("mode 'circular'", [](A a) { return jnp::convolve(a[0], a[1], "circular"); }, {a, v, v4});
}

TEST_CASE("jnp::bincount: weights, minlength, length, dtypes, as JAX", "[jnp]") {
  Array x = make({2, 0, 3, 6, 1, 3, 6, 5, 0, 1, 6, -1}, {12}, DType::int32);
  Array w = make({1.7161511, 0.11965268, 2.6175847, 0.8669217, -1.8256778, 0.049902774, 1.0640272, 1.693255,
                  -1.2819486, 1.7493432, -0.47133642, 2.0819445}, {12}, DType::float32);
  eager("counts", [](A a) { return jnp::bincount(a[0]); }, {x, w}, {DType::int64, {7}, {3, 2, 1, 2, 0, 1, 3}},
       Bound::kOp);
  eager("float32 weights", [](A a) { return jnp::bincount(a[0], a[1]); }, {x, w},
       {DType::float32, {7}, {0.9196485, -0.076334596, 1.7161511, 2.6674874, 0, 1.693255, 1.4596126}}, Bound::kSum);
  eager("uint8 weights", [](A a) { return jnp::bincount(a[0], jnp::abs(a[0]).astype(DType::uint8)); }, {x, w},
       {DType::uint8, {7}, {1, 2, 2, 6, 0, 5, 18}}, Bound::kOp);
  eager("minlength 10", [](A a) { return jnp::bincount(a[0], std::nullopt, 10); }, {x, w},
       {DType::int64, {10}, {3, 2, 1, 2, 0, 1, 3, 0, 0, 0}}, Bound::kOp);
  both("length 4 drops the rest", [](A a) { return jnp::bincount(a[0], a[1], 0, 4); }, {x, w},
       {DType::float32, {4}, {0.9196485, -0.076334596, 1.7161511, 2.6674874}}, Bound::kSum);
  eager("bool x", [](A a) { return jnp::bincount(a[0] > 2); }, {x, w}, {DType::int64, {2}, {6, 6}}, Bound::kOp);
  eager("int8 x, negative minlength", [](A a) { return jnp::bincount(a[0].astype(DType::int8), std::nullopt, -3); },
       {x, w}, {DType::int64, {7}, {3, 2, 1, 2, 0, 1, 3}}, Bound::kOp);
  eager("empty x", [](A) { return jnp::bincount(jnp::zeros({0}, DType::int32)); }, {x, w}, {DType::int64, {0}, {}},
       Bound::kOp);
  Array w8 = make({0.18883196, -0.6862528, 0.86759704, 0.2926604, -0.7437907, 0.84438115, 0.79591453, -0.308694}, {8},
                  DType::float32);
  grad_both("grad in weights", [](A a) { return jnp::bincount(a[0], a[1], 0, 8); }, {x, w}, 1, w8,
            {DType::float32, {12}, {0.86759704, 0.18883196, 0.2926604, 0.79591453, -0.6862528, 0.2926604,
              0.79591453, 0.84438115, 0.18883196, -0.6862528, 0.79591453, 0.18883196}}, Bound::kSum);
  // JAX: TypeError: x argument to bincount must have an integer type; got float32
  refuses<TypeError>("float x", [](A a) { return jnp::bincount(a[1]); }, {x, w});
  // JAX: ValueError: only 1-dimensional input supported.
  refuses<ShapeError>("2-d x", [](A a) { return jnp::bincount(a[0].reshape({3, 4})); }, {x, w});
  // JAX: ValueError: type of weights must match type of x. Got typeof(x)=i32[12]({}) and typeof(weights)=f64[3]
  refuses<ShapeError>("weights of another shape", [](A a) { return jnp::bincount(a[0], jnp::ones({3}), 0, 8); },
                      {x, w});
  // JAX: TypeError: add does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes o
  refuses<TypeError>("bool weights", [](A a) { return jnp::bincount(a[0], a[0] > 0, 0, 8); }, {x, w});
  // JAX: TypeError: broadcast_in_dim shape must have every element be nonnegative, got (-1,).
  refuses<ShapeError>("length -1", [](A a) { return jnp::bincount(a[0], std::nullopt, 0, -1); }, {x, w});
  // JAX: ConcretizationTypeError (the size depends on x's values) unless length is given.
  CHECK_THROWS_AS(jit([](const Array& v) { return jnp::bincount(v); })(x), TracerError);
}

TEST_CASE("jnp::digitize: increasing and decreasing bins, right, as JAX", "[jnp]") {
  Array x = make({1, NAN, 2.467395, -0.72706085, 0.6093362, 0.47520253, 3.6157477, -0.2632703, 0.10441413}, {9},
                 DType::float32);
  Array bins = make({-0.5, 0, 1, 2.5}, {4}, DType::float32);
  both("increasing", [](A a) { return jnp::digitize(a[0], a[1]); }, {x, bins},
       {DType::int32, {9}, {3, 4, 3, 0, 2, 2, 4, 1, 2}}, Bound::kOp);
  both("increasing, right", [](A a) { return jnp::digitize(a[0], a[1], true); }, {x, bins},
       {DType::int32, {9}, {2, 4, 3, 0, 2, 2, 4, 1, 2}}, Bound::kOp);
  both("decreasing", [](A a) { return jnp::digitize(a[0], jnp::flip(a[1])); }, {x, bins},
       {DType::int32, {9}, {1, 0, 1, 4, 2, 2, 0, 3, 2}}, Bound::kOp);
  both("decreasing, right", [](A a) { return jnp::digitize(a[0], jnp::flip(a[1]), true); }, {x, bins},
       {DType::int32, {9}, {2, 0, 1, 4, 2, 2, 0, 3, 2}}, Bound::kOp);
  both("int32 x, float bins, 2-d x", [](A a) { return jnp::digitize(jnp::array({{-1, 0}, {2, 3}}), a[1]); }, {x, bins},
       {DType::int32, {2, 2}, {0, 2, 3, 4}}, Bound::kOp);
  both("empty bins: zeros", [](A a) { return jnp::digitize(a[0], jnp::zeros({0})); }, {x, bins},
       {DType::int32, {9}, {0, 0, 0, 0, 0, 0, 0, 0, 0}}, Bound::kOp);
  // JAX: ValueError: digitize: bins must be a 1-dimensional array; got bins=JitTracer(float32[2,2])
  refuses<ShapeError>("2-d bins", [](A a) { return jnp::digitize(a[0], a[1].reshape({2, 2})); }, {x, bins});
}

TEST_CASE("jnp::histogram and histogram_bin_edges: counts, edges, weights, density, as JAX", "[jnp]") {
  Array a = make({NAN, 4.9344482, 1.8244163, -1.586505, 1.5118062, 1.4420704, -1.495904, 5, 1.7181325, 0.54951966,
                  0.20861137, 3.443205, 2.4511933, 2.8376312, 4.1307993, 2.716889, 1.3908083, 0.61944306}, {3, 6},
                 DType::float32);
  Array w = make({0.6151782, 0.068648115, 0.09180488, 1.3984499, 1.3256818, 0.66031647, 0.9374877, 1.8961573,
                  1.8840603, 0.32205963, 1.512746, 0.18425326, 1.5607888, 1.0024306, 0.7613586, 1.4524684,
                  1.1113117, 1.5952829}, {3, 6}, DType::float32);
  Array edges = make({-1, 0, 0.5, 3, 5}, {5}, DType::float32);
  both("5 bins over a's range (a NaN: NaN edges, no counts)", [](A a) { return jnp::histogram(a[0], 5).first; },
       {a, w, edges}, {DType::float32, {5}, {0, 0, 0, 0, 0}}, Bound::kOp);
  both("its edges", [](A a) { return jnp::histogram(a[0], 5).second; }, {a, w, edges},
       {DType::float32, {6}, {NAN, NAN, NAN, NAN, NAN, NAN}}, Bound::kOp);
  both("4 bins over (-1, 5)", [](A a) { return jnp::histogram(a[0], 4, std::make_pair(-1.0, 5.0)).first; },
       {a, w, edges}, {DType::float32, {4}, {1, 7, 4, 3}}, Bound::kOp);
  both("its edges", [](A a) { return jnp::histogram(a[0], 4, std::make_pair(-1.0, 5.0)).second; }, {a, w, edges},
       {DType::float32, {5}, {-1, 0.5, 2, 3.5, 5}}, Bound::kOp);
  both("given edges, weights", [](A a) { return jnp::histogram(a[0], a[2], a[1]).first; }, {a, w, edges},
       {DType::float32, {4}, {0, 1.512746, 11.006205, 2.910417}}, Bound::kSum);
  both("given edges, density", [](A a) { return jnp::histogram(a[0], a[2], std::nullopt, true).first; }, {a, w, edges},
       {DType::float32, {4}, {0, 0.13333334, 0.26666668, 0.13333334}}, Bound::kSum);
  both("weights and density over a range",
       [](A a) { return jnp::histogram(a[0], 3, std::make_pair(0.0, 3.0), a[1], true).first; }, {a, w, edges},
       {DType::float32, {3}, {0.27399167, 0.40523964, 0.3207687}}, Bound::kSum);
  both("float64 weights", [](A a) { return jnp::histogram(a[0], a[2], a[1].astype(DType::float64)).first; },
       {a, w, edges}, {DType::float64, {4}, {0.0, 1.512745976448059, 11.006205335259438, 2.9104172587394714}},
       Bound::kSum);
  both("int32 input, equal values", [](A) { return jnp::histogram(jnp::array({2, 2, 2}), 2).second; }, {a, w, edges},
       {DType::float32, {3}, {1.5, 2, 2.5}}, Bound::kOp);
  both("bins 0", [](A a) { return jnp::histogram(a[2], 0).second; }, {a, w, edges}, {DType::float32, {1}, {-1}},
       Bound::kOp);
  both("histogram_bin_edges", [](A a) { return jnp::histogram_bin_edges(a[2], 6); }, {a, w, edges},
       {DType::float32, {7}, {-1, 5.9604645e-08, 1.0000001, 2, 3.0000002, 4, 5}}, Bound::kOp);
  both("histogram_bin_edges of int edges", [](A a) { return jnp::histogram_bin_edges(a[0], jnp::array({1, 2, 4})); },
       {a, w, edges}, {DType::float32, {3}, {1, 2, 4}}, Bound::kOp);
  Array w12 = make({0.65627295, -0.41777384, 0.43221188, -0.5638217}, {4}, DType::float32);
  grad_both("grad in weights", [](A a) { return jnp::histogram(a[0], a[2], a[1]).first; }, {a, w, edges}, 1, w12,
            {DType::float32, {3, 6}, {0, -0.5638217, 0.43221188, 0, 0.43221188, 0.43221188, 0, -0.5638217,
              0.43221188, 0.43221188, -0.41777384, -0.5638217, 0.43221188, 0.43221188, -0.5638217, 0.43221188,
              0.43221188, 0.43221188}}, Bound::kSum);
  // JAX: ValueError: weights should have the same shape as a.
  refuses<ShapeError>("weights of another shape",
                      [](A a) { return jnp::histogram(a[0], 3, std::nullopt, a[2]).first; }, {a, w, edges});
  // JAX: TypeError: Only integer scalar arrays can be converted to a scalar index.
  refuses<ShapeError>("2-d edges", [](A a) { return jnp::histogram(a[0], a[1]).first; }, {a, w, edges});
  // JAX: IndexError: index is out of bounds for axis 0 with size 0
  refuses<ShapeError>("bins -1", [](A a) { return jnp::histogram(a[2], -1).first; }, {a, w, edges});
  // JAX: ValueError: zero-size array to reduction operation min which has no identity
  refuses<ShapeError>("an empty a without range", [](A) { return jnp::histogram(jnp::zeros({0}), 3).first; },
                      {a, w, edges});
}

TEST_CASE("jnp::isin: element's shape, invert, promotion, empty operands, as JAX", "[jnp]") {
  Array el = make({0, 4, 8, 2, 6, 3, 5, 6, 1, 3, 3, 8}, {3, 4}, DType::int32);
  Array te = make({4, 1, 6, 3, 8}, {5}, DType::int32);
  both("int32", [](A a) { return jnp::isin(a[0], a[1]); }, {el, te},
       {DType::bool_, {3, 4}, {0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1}}, Bound::kOp);
  both("invert", [](A a) { return jnp::isin(a[0], a[1], false, true); }, {el, te},
       {DType::bool_, {3, 4}, {1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0}}, Bound::kOp);
  both("floats against ints", [](A a) { return jnp::isin(jnp::array({1.0f, 1.5f, 3.0f}), a[1]); }, {el, te},
       {DType::bool_, {3}, {1, 0, 1}}, Bound::kOp);
  both("NaN is in nothing",
       [](A) { return jnp::isin(jnp::array<float>({NAN, 2.0f}), jnp::array<float>({NAN, 2.0f})); }, {el, te},
       {DType::bool_, {2}, {0, 1}}, Bound::kOp);
  both("empty test_elements", [](A a) { return jnp::isin(a[0], jnp::zeros({0})); }, {el, te},
       {DType::bool_, {3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, Bound::kOp);
  both("empty test_elements, invert", [](A a) { return jnp::isin(a[0], jnp::zeros({0}), false, true); }, {el, te},
       {DType::bool_, {3, 4}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}, Bound::kOp);
  both("0-d element", [](A a) { return jnp::isin(jnp::array(3), a[1]); }, {el, te}, {DType::bool_, {}, {1}},
       Bound::kOp);
}

TEST_CASE("jnp::logspace and geomspace: dtypes, endpoint, bases, signs, as JAX", "[jnp]") {
  both("logspace f32", [](A) { return jnp::logspace(0.0, 2.0, 5); }, {},
       {DType::float32, {5}, {1, 3.1622777, 10, 31.622776, 100}}, Bound::kOp);
  both("logspace f64, base 2, no endpoint", [](A) { return jnp::logspace(-1.0, 3.5, 7, false, 2.0, DType::float64); },
       {}, {DType::float64, {7}, {0.5, 0.7807091821557101, 1.2190136542044754, 1.9033903060212392, 2.971988578273897,
         4.640517544640652, 7.245789314111254}}, Bound::kOp);
  both("logspace f32, base 2", [](A) { return jnp::logspace(-1.0, 3.5, 7, true, 2.0); }, {},
       {DType::float32, {7}, {0.5, 0.8408964, 1.4142137, 2.3784144, 4.0000005, 6.7271724, 11.313708}}, Bound::kOp);
  both("logspace int32 (truncated)", [](A) { return jnp::logspace(0.0, 2.0, 5, true, 10.0, DType::int32); }, {},
       {DType::int32, {5}, {1, 3, 10, 31, 100}}, Bound::kOp);
  both("logspace negative base", [](A) { return jnp::logspace(0.0, 4.0, 5, true, -2.0, DType::float64); }, {},
       {DType::float64, {5}, {1.0, -2.0, 4.0, -8.0, 16.0}}, Bound::kOp);
  both("logspace f16", [](A) { return jnp::logspace(-1.0, 1.0, 4, true, 10.0, DType::float16); }, {},
       {DType::float16, {4}, {0.099975586, 0.46362305, 2.1523438, 10}}, Bound::kOp);
  both("logspace num 1", [](A) { return jnp::logspace(1.5, 2.0, 1, true, 10.0, DType::float64); }, {},
       {DType::float64, {1}, {31.622776601683793}}, Bound::kOp);
  both("logspace num 0, axis -1", [](A) { return jnp::logspace(1.5, 2.0, 0, true, 10.0, DType::float32, -1); }, {},
       {DType::float32, {0}, {}}, Bound::kOp);
  both("geomspace f64", [](A) { return jnp::geomspace(1.0, 1000.0, 4, true, DType::float64); }, {},
       {DType::float64, {4}, {1.0, 9.999999999999995, 99.9999999999999, 1000.0}}, Bound::kOp);
  both("geomspace f32, negative", [](A) { return jnp::geomspace(-2.0, -1024.0, 6); }, {},
       {DType::float32, {6}, {-2, -6.9644046, -24.25147, -84.44853, -294.0668, -1023.99994}}, Bound::kOp);
  both("geomspace f64, no endpoint", [](A) { return jnp::geomspace(0.5, 40.0, 5, false, DType::float64); }, {},
       {DType::float64, {5}, {0.5, 1.201124433981431, 2.8853998118144273, 6.931448431551464, 16.651064148037467}},
       Bound::kOp);
  both("geomspace signs differ: NaN", [](A) { return jnp::geomspace(-1.0, 1000.0, 3, true, DType::float64); }, {},
       {DType::float64, {3}, {NAN, NAN, NAN}}, Bound::kOp);
  both("geomspace from 0: NaN", [](A) { return jnp::geomspace(0.0, 10.0, 3, true, DType::float64); }, {},
       {DType::float64, {3}, {-NAN, -NAN, -NAN}}, Bound::kOp);
  both("geomspace int32", [](A) { return jnp::geomspace(1.0, 1000.0, 4, true, DType::int32); }, {},
       {DType::int32, {4}, {1, 10, 100, 1000}}, Bound::kOp);
  both("logspace bool", [](A) { return jnp::logspace(-2.0, 1.0, 3, true, 10.0, DType::bool_); }, {},
       {DType::bool_, {3}, {1, 1, 1}}, Bound::kOp);
  both("logspace uint8", [](A) { return jnp::logspace(-2.0, 1.0, 3, true, 10.0, DType::uint8); }, {},
       {DType::uint8, {3}, {0, 0, 10}}, Bound::kOp);
  both("geomspace int8 saturates", [](A) { return jnp::geomspace(1.0, 300.0, 3, true, DType::int8); }, {},
       {DType::int8, {3}, {1, 17, 127}}, Bound::kOp);
  // JAX: ValueError: Number of samples, -1, must be non-negative.
  refuses<ShapeError>("logspace num -1", [](A) { return jnp::logspace(0.0, 1.0, -1); }, {});
  // JAX: IndexError: list assignment index out of range
  refuses<ShapeError>("logspace axis 1", [](A) { return jnp::logspace(0.0, 1.0, 3, true, 10.0, DType::float32, 1); },
                      {});
  // JAX: ValueError: axis -2 is out of bounds for array of dimension 1
  refuses<ShapeError>("geomspace axis -2", [](A) { return jnp::geomspace(1.0, 2.0, 3, true, DType::float32, -2); },
                      {});
}
// clang-format on
