// jnp's statistics (numpy_stats.h: quantiles, average, count_nonzero, ptp, cov/corrcoef, the NaN-aware reductions,
// cumulative_sum/prod) against JAX 0.10.2 with x64, and the whole pack under vmap. The inputs are random (fixed
// seed) and written here with JAX's results on them (dtype, weak type, shape, values); each case runs eagerly and
// under jit, gradients are jax.grad of sum(f(x) * w) for the random w written next to them, and what JAX refuses is
// refused with a jitx error of the matching kind (JAX's ValueError: ShapeError for shapes and axes, TypeError for
// other arguments). Tolerances: tolerances.h's row of the result dtype (f64 1e-12; f32 2e-6 for ops, 1e-5 for sums
// and gradients through sums; f16 2e-3; bf16 1.6e-2 relative); integer and bool results are exact.
#include "jitx/numpy_stats.h"


#include "numpy_stats_test_util.h"

// The cases are data, JAX's results written out (by a script run against JAX 0.10.2): kept packed.
// clang-format off
TEST_CASE("jnp::quantile: each method along an axis, q's shape first, as JAX", "[jnp]") {
  Array x = make({-1.8621546, 2.999228, 0.5199654, 2.0106032, -1.4057269, -2.3251126, 1.7161511, 0.11965268,
                  2.6175847, 0.8669217, -1.8256778, 0.049902774, 1.0640272, 1.693255, -1.2819486}, {3, 5},
                 DType::float32);
  Array q = make({0.1, 0.5, 0.93}, {3}, DType::float32);
  both("linear, axis 1", [](A a) { return jnp::quantile(a[0], a[1], {1}, "linear"); }, {x, q},
       {DType::float32, {3, 3}, {-1.6795835, -1.3472065, -1.6081861, 0.5199654, 0.8669217, 0.049902774, 2.722413,
         2.3651834, 1.5170712}}, Bound::kOp);
  both("lower, axis 1", [](A a) { return jnp::quantile(a[0], a[1], {1}, "lower"); }, {x, q},
       {DType::float32, {3, 3}, {-1.8621546, -2.3251126, -1.8256778, 0.5199654, 0.8669217, 0.049902774, 2.0106032,
         1.7161511, 1.0640272}}, Bound::kOp);
  both("higher, axis 1", [](A a) { return jnp::quantile(a[0], a[1], {1}, "higher"); }, {x, q},
       {DType::float32, {3, 3}, {-1.4057269, 0.11965268, -1.2819486, 0.5199654, 0.8669217, 0.049902774, 2.999228,
         2.6175847, 1.693255}}, Bound::kOp);
  both("nearest, axis 1", [](A a) { return jnp::quantile(a[0], a[1], {1}, "nearest"); }, {x, q},
       {DType::float32, {3, 3}, {-1.8621546, -2.3251126, -1.8256778, 0.5199654, 0.8669217, 0.049902774, 2.999228,
         2.6175847, 1.693255}}, Bound::kOp);
  both("midpoint, axis 1", [](A a) { return jnp::quantile(a[0], a[1], {1}, "midpoint"); }, {x, q},
       {DType::float32, {3, 3}, {-1.6339407, -1.1027299, -1.5538132, 0.5199654, 0.8669217, 0.049902774, 2.5049157,
         2.166868, 1.3786411}}, Bound::kOp);
  both("linear, axis -2, keepdims", [](A a) { return jnp::quantile(a[0], a[1], -2, "linear", true); }, {x, q},
       {DType::float32, {3, 1, 5}, {-2.232521, 0.38315243, 0.19971523, 1.7567246, -1.3809712, -1.8621546,
         1.7161511, 0.5199654, 2.0106032, -1.2819486, -1.8307846, 2.8195972, 0.98785853, 2.5326073, 0.5660799}},
       Bound::kOp);
  both("nearest, all axes, keepdims", [](A a) { return jnp::quantile(a[0], a[1], {}, "nearest", true); }, {x, q},
       {DType::float32, {3, 1, 1}, {-1.8621546, 0.5199654, 2.6175847}}, Bound::kOp);
  both("a weak (C++ double) q: interpolated in float64, rounded once",
       [](A a) { return jnp::quantile(a[0], 0.37, {0, 1}); }, {x, q}, {DType::float32, {}, {0.06245776}}, Bound::kOp);
  both("a float16 q: interpolated in float16",
       [](A a) { return jnp::quantile(a[0], a[1].astype(DType::float16), {1}); }, {x, q},
       {DType::float32, {3, 3}, {-1.6796875, -1.3466797, -1.6083984, 0.52001953, 0.8666992, 0.04989624, 2.7226562,
         2.3652344, 1.5175781}}, Bound::kOp);
  both("q outside [0, 1] and NaN", [](A a) { return jnp::quantile(a[0], jnp::array<float>({-0.5f, 1.5f, NAN}), {1}); },
       {x, q},
       {DType::float32, {3, 3}, {-1.8621546, -2.3251126, -1.8256778, 2.999228, 2.6175847, 1.693255, NAN, NAN, NAN}},
       Bound::kOp);
  both("q NaN and +-inf, lower: NaN reads the minimum",
       [](A a) { return jnp::nanquantile(a[0], jnp::array<float>({NAN, INFINITY, -INFINITY}), {1}, "lower"); }, {x, q},
       {DType::float32, {3, 3}, {-1.8621546, -2.3251126, -1.8256778, 2.999228, 2.6175847, 1.693255, -1.8621546,
         -2.3251126, -1.8256778}}, Bound::kOp);
  both("q NaN and +-inf, nearest: NaN reads the minimum",
       [](A a) { return jnp::nanquantile(a[0], jnp::array<float>({NAN, INFINITY, -INFINITY}), {1}, "nearest"); },
       {x, q}, {DType::float32, {3, 3}, {-1.8621546, -2.3251126, -1.8256778, 2.999228, 2.6175847, 1.693255, -1.8621546,
         -2.3251126, -1.8256778}}, Bound::kOp);
  both("q NaN and +-inf, midpoint: NaN reads the minimum",
       [](A a) { return jnp::nanquantile(a[0], jnp::array<float>({NAN, INFINITY, -INFINITY}), {1}, "midpoint"); },
       {x, q}, {DType::float32, {3, 3}, {-1.8621546, -2.3251126, -1.8256778, 2.999228, 2.6175847, 1.693255, -1.8621546,
         -2.3251126, -1.8256778}}, Bound::kOp);
  Array w13 = make({0.5831144, -0.15711214, 0.69398147, 0.18883196, -0.6862528, 0.86759704, 0.2926604, -0.7437907,
                    0.84438115}, {3, 3}, DType::float32);
  grad_both("grad in a, linear", [](A a) { return jnp::quantile(a[0], a[1], {1}); }, {x, q}, 0, w13,
            {DType::float32, {3, 5}, {0.34986866, 0.21071549, 0.18883196, 0.0819449, 0.23324576, -0.09426729,
              -0.20826137, -0.06284486, -0.5355293, -0.6862528, 0.4163889, 0.86759704, 0.2364267, 0.60795444,
              0.2775926}}, Bound::kSum);
  Array w15 = make({0.79591453, -0.308694, 0.77096754, -0.44321012, 0.38695803, -0.8908243, -0.35626552, -0.409919,
                    0.84629905}, {3, 3}, DType::float32);
  grad_both("grad in q, linear", [](A a) { return jnp::quantile(a[0], a[1], {1}); }, {x, q}, 1, w15,
            {DType::float32, {3}, {0.111162186, 0, -0.7568507}}, Bound::kSum);
  // JAX: TypeError: floor does not accept dtype int64. Accepted dtypes are subtypes of floating.
  refuses<TypeError>("an integer q", [](A a) { return jnp::quantile(a[0], 1); }, {x, q});
  // JAX: ValueError: q must be have rank <= 1, got shape (2, 2)
  refuses<ShapeError>("a 2-d q", [](A a) { return jnp::quantile(a[0], jnp::ones({2, 2})); }, {x, q});
  // JAX: ValueError: method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'
  refuses<TypeError>("method 'cubic'", [](A a) { return jnp::quantile(a[0], a[1], {1}, "cubic"); }, {x, q});
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>("axis 2 of rank 2", [](A a) { return jnp::quantile(a[0], a[1], {2}); }, {x, q});
  // JAX: ValueError: repeated axis
  refuses<ShapeError>("axes (1, -1)", [](A a) { return jnp::quantile(a[0], a[1], {1, -1}); }, {x, q});
  // JAX: TypeError: Slice size at index 1 in gather op is out of range, must be within [0, 0 + 1), got 1.
  refuses<ShapeError>("an empty axis", [](A a) { return jnp::quantile(jnp::zeros({3, 0}), a[1], {1}); }, {x, q});
}

TEST_CASE("jnp::quantile, median: integers as floats, NaN slices, 0-d input, as JAX", "[jnp]") {
  Array xi = make({-1, -7, -5, -5, 7, -1, 8, 9}, {2, 4}, DType::int32);
  Array xl = make({-5, 1, 7, -8, -2}, {5}, DType::int64);
  Array xn = make({0.5, NAN, -1.0, 2.0, 1.0, 4.0, 3.0, -2.0}, {2, 4}, DType::float64);
  both("int32 input gives float32", [](A a) { return jnp::quantile(a[0], 0.3, {1}); }, {xi, xl, xn},
       {DType::float32, {2}, {-5.2, 6.2}}, Bound::kOp);
  both("int64 input gives float64", [](A a) { return jnp::median(a[1]); }, {xi, xl, xn}, {DType::float64, {}, {-2.0}},
       Bound::kOp);
  both("a NaN makes its slice NaN", [](A a) { return jnp::median(a[2], {1}); }, {xi, xl, xn},
       {DType::float64, {2}, {NAN, 2.0}}, Bound::kOp);
  both("bool input", [](A a) { return jnp::median(a[0] > 0); }, {xi, xl, xn}, {DType::float32, {}, {0}}, Bound::kOp);
  both("0-d input, keepdims: shape (1,)", [](A) { return jnp::median(jnp::array(2.5f), {}, true); }, {xi, xl, xn},
       {DType::float32, {1}, {2.5}}, Bound::kOp);
  both("median of a weak scalar: strong", [](A) { return jnp::median(Array(2.5)); }, {xi, xl, xn},
       {DType::float64, {}, {2.5}}, Bound::kOp);
  both("average of a weak scalar: strong", [](A) { return jnp::average(Array(2.5)); }, {xi, xl, xn},
       {DType::float64, {}, {2.5}}, Bound::kOp);
  both("ptp of a weak scalar: strong", [](A) { return jnp::ptp(Array(2.5)); }, {xi, xl, xn},
       {DType::float64, {}, {0.0}}, Bound::kOp);
  both("count_nonzero of a weak scalar: strong", [](A) { return jnp::count_nonzero(Array(2.5)); }, {xi, xl, xn},
       {DType::int64, {}, {1}}, Bound::kOp);
  both("nanprod of a weak scalar: strong", [](A) { return jnp::nanprod(Array(2.5)); }, {xi, xl, xn},
       {DType::float64, {}, {2.5}}, Bound::kOp);
  both("nanmedian of a weak scalar: strong", [](A) { return jnp::nanmedian(Array(2.5)); }, {xi, xl, xn},
       {DType::float64, {}, {2.5}}, Bound::kOp);
  both("float16 input", [](A a) { return jnp::median(a[2].astype(DType::float16), 0); }, {xi, xl, xn},
       {DType::float16, {4}, {0.75, NAN, 1, 0}}, Bound::kOp);
}

TEST_CASE("jnp::nanquantile, nanmedian, nanpercentile skip NaNs (an all-NaN row gives NaN), as JAX", "[jnp]") {
  Array x = make({-0.0496539982370372, -2.567917678513391, NAN, 0.18697074953789627, -0.8146974149126018,
                  -1.1069045360005445, 1.6656044745517393, 0.8153086231234932, 1.1465409847256165,
                  2.2549709949625205, 1.0430476534071849, -0.09359284356182673, -0.7547630901694973, NAN,
                  -2.79405566515569, -2.724585378135372, 1.1953496877455345, 0.977045581423003, NAN, NAN, NAN, NAN,
                  NAN, NAN}, {4, 6}, DType::float64);
  both("nanmedian axis 1", [](A a) { return jnp::nanmedian(a[0], 1); }, {x},
       {DType::float64, {4}, {-0.8146974149126018, 1.0947943190664007, -0.7547630901694973, NAN}}, Bound::kOp);
  both("nanmedian axis 0, keepdims", [](A a) { return jnp::nanmedian(a[0], 0, true); }, {x},
       {DType::float64, {1, 6}, {-0.0496539982370372, -0.8763045276949488, -0.8237573402150367,
         0.18697074953789627, 1.0430476534071849, -0.09359284356182673}}, Bound::kOp);
  both("nanmedian all", [](A a) { return jnp::nanmedian(a[0]); }, {x}, {DType::float64, {}, {0.06865837565042954}},
       Bound::kOp);
  both("nanquantile linear", [](A a) { return jnp::nanquantile(a[0], jnp::array({0.2, 0.75}), {1}, "linear"); }, {x},
       {DType::float64, {2, 4}, {-1.3991071645031137, 0.8153086231234932, -2.7384794355394355, NAN,
         -0.0496539982370372, 1.5358386020952086, 0.977045581423003, NAN}}, Bound::kOp);
  both("nanquantile lower", [](A a) { return jnp::nanquantile(a[0], jnp::array({0.2, 0.75}), {1}, "lower"); }, {x},
       {DType::float64, {2, 4}, {-2.567917678513391, 0.8153086231234932, -2.79405566515569, NAN,
         -0.0496539982370372, 1.1465409847256165, 0.977045581423003, NAN}}, Bound::kOp);
  both("nanquantile higher", [](A a) { return jnp::nanquantile(a[0], jnp::array({0.2, 0.75}), {1}, "higher"); }, {x},
       {DType::float64, {2, 4}, {-1.1069045360005445, 0.8153086231234932, -2.724585378135372, NAN,
         -0.0496539982370372, 1.6656044745517393, 0.977045581423003, NAN}}, Bound::kOp);
  both("nanquantile nearest", [](A a) { return jnp::nanquantile(a[0], jnp::array({0.2, 0.75}), {1}, "nearest"); }, {x},
       {DType::float64, {2, 4}, {-1.1069045360005445, 0.8153086231234932, -2.724585378135372, NAN,
         -0.0496539982370372, 1.6656044745517393, 0.977045581423003, NAN}}, Bound::kOp);
  both("nanquantile midpoint", [](A a) { return jnp::nanquantile(a[0], jnp::array({0.2, 0.75}), {1}, "midpoint"); },
       {x}, {DType::float64, {2, 4}, {-1.8374111072569677, 0.8153086231234932, -2.759320521645531, NAN,
         -0.0496539982370372, 1.406072729638678, 0.977045581423003, NAN}}, Bound::kOp);
  both("nanpercentile of int q", [](A a) { return jnp::nanpercentile(a[0], jnp::array({30, 99}), {-1}); }, {x},
       {DType::float64, {2, 4}, {-1.0484631061553955, 0.9291781187057495, -2.3306210041046143, NAN,
         0.1775057166814804, 2.2255024909973145, 1.1866174936294556, NAN}}, Bound::kOp);
  Array w9 = make({-0.8157467376906438, 0.560788774620766, 0.002430565221263059, -0.23864139684359054}, {4},
                  DType::float64);
  grad_both("grad of nanmedian", [](A a) { return jnp::nanmedian(a[0], {1}); }, {x}, 0, w9,
            {DType::float64, {4, 6}, {0.0, 0.0, 0.0, 0.0, -0.8157467376906438, 0.0, 0.0, 0.0, 0.280394387310383,
              0.0, 0.280394387310383, 0.0, 0.002430565221263059, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
              0.0}}, Bound::kSum);
}

TEST_CASE("jnp::percentile, median: JAX's values and gradients", "[jnp]") {
  Array x = make({1.3574052, 0.33393493, 1.7858487, 1.9688189, -1.2533215, 1.2966356, -1.691465, 0.014715867,
                  -1.0642141, -0.36492023, 1.6519827, -0.44228202, 2.8961866, -1.8925169, -0.89336216, -2.3921947,
                  -2.9107418, 0.26972854, 0.16692418, -0.36160633}, {4, 5}, DType::float32);
  both("percentile of int q", [](A a) { return jnp::percentile(a[0], jnp::array({0, 30, 50, 100}), {0}); }, {x},
       {DType::float32, {4, 5}, {-2.3921947, -2.9107418, 0.014715867, -1.8925169, -1.2533215, 0.9277525,
         -1.8133928, 0.24422728, -1.1470444, -0.9293581, 1.3270204, -1.0668736, 1.0277886, -0.44864497, -0.6291412,
         1.6519827, 0.33393493, 2.8961866, 1.9688189, -0.36160633}}, Bound::kOp);
  both("percentile of a weak q, midpoint", [](A a) { return jnp::percentile(a[0], 42.0, {}, "midpoint"); }, {x},
       {DType::float32, {}, {-0.4036011}}, Bound::kOp);
  both("median axis (0, 1)", [](A a) { return jnp::median(a[0], {0, 1}); }, {x}, {DType::float32, {}, {-0.17344522}},
       Bound::kOp);
  both("median axis -1", [](A a) { return jnp::median(a[0], -1); }, {x},
       {DType::float32, {4}, {1.3574052, -0.36492023, -0.44228202, -0.36160633}}, Bound::kOp);
  Array w4 = make({-0.40341693, -0.9514877, -0.7517878, 0.12370316}, {4}, DType::float32);
  grad_both("grad of median", [](A a) { return jnp::median(a[0], {1}); }, {x}, 0, w4,
            {DType::float32, {4, 5}, {-0.40341693, 0, 0, 0, 0, 0, 0, 0, 0, -0.9514877, 0, -0.7517878, 0, 0, 0, 0,
              0, 0, 0, 0.12370316}}, Bound::kSum);
  Array w6 = make({-0.54868305, -0.5097863, 0.6232424, 0.28996104, -0.17903268}, {5}, DType::float32);
  grad_both("grad of median with ties (JAX's stable sort picks which tie)",
            [](A a) { return jnp::median(jnp::round(a[0]), {0}); }, {x}, 0, w6,
            {DType::float32, {4, 5}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, Bound::kSum);
  Array w8 = make({0.39384043, 0.12577805, -0.781235, 0.73598754, 0.030959984, -0.313238, -0.018125629,
                   -0.21056287, 0.1256643, -0.7905473}, {2, 5}, DType::float32);
  grad_both("grad of percentile", [](A a) { return jnp::percentile(a[0], jnp::array({10.0f, 80.0f}), {0}); }, {x}, 0,
            w8, {DType::float32, {4, 5}, {-0.18794285, -0.007250249, -0.12633775, 0.0502657, 0.02167199, 0.11815212,
              0.037733413, -0.5468645, 0.22079626, -0.4743285, -0.12529515, -0.01087538, -0.08422512, 0.5151913,
              0.009287994, 0.27568832, 0.08804464, -0.23437048, 0.075398594, -0.31621882}}, Bound::kSum);
}

TEST_CASE("jnp::average: weights of a's shape or along the axes, returned, as JAX", "[jnp]") {
  Array x = make({-0.59518456, 0.6217666, 1.0653192, -2.1715972, 1.1133893, 1.59534, 2.118521, -1.3271523,
                  -0.7290411, -1.7340086, 2.6811445, -1.1464269}, {3, 4}, DType::float32);
  Array w = make({1.6669607, 1.6895165, 0.20968845, 1.2399797, 1.1767904, 0.60108215, 1.1407795, 1.0310044,
                  1.4093451, 1.3991282, 1.3114585, 0.6276906}, {3, 4}, DType::float32);
  Array wt = make({0.22870632222919987, 1.4138586630796028, 0.7509532433983852, 1.1883559468966813,
                   0.6468682737361936, 0.90780049572562, 1.0613320476896695, 0.47266948155158006,
                   0.6603282948344489, 0.22860171909842636, 1.0769924049012012, 0.6212867446168814}, {4, 3},
                  DType::float64);
  Array wi = make({3, 1, 4, 4}, {4}, DType::int32);
  both("no weights", [](A a) { return jnp::average(a[0]); }, {x, w, wt, wi}, {DType::float32, {}, {0.12433916}},
       Bound::kOp);
  both("no weights, axis 1, keepdims", [](A a) { return jnp::average(a[0], 1, std::nullopt, true); }, {x, w, wt, wi},
       {DType::float32, {3, 1}, {-0.26992399, 0.87502456, -0.23208302}}, Bound::kOp);
  both("weights of a's shape, axis 0", [](A a) { return jnp::average(a[0], 0, a[1]); }, {x, w, wt, wi},
       {DType::float32, {4}, {-0.16679475, -0.11293109, 2.3127463, -1.6492497}}, Bound::kOp);
  both("float64 weights along axes (1, 0)", [](A a) { return jnp::average(a[0], {1, 0}, a[2]); }, {x, w, wt, wi},
       {DType::float64, {}, {0.25402786926766374}}, Bound::kOp);
  both("int32 weights along axis 1", [](A a) { return jnp::average(a[0], 1, a[3]); }, {x, w, wt, wi},
       {DType::float32, {3}, {-0.46574163, 0.6750819, 0.18481152}}, Bound::kOp);
  both("returned: the weight sum, no weights", [](A a) { return jnp::average_returned(a[0], {1}).second; },
       {x, w, wt, wi}, {DType::float32, {3}, {4, 4, 4}}, Bound::kOp);
  both("returned: the weight sum broadcast", [](A a) { return jnp::average_returned(a[0], {1}, a[3]).second; },
       {x, w, wt, wi}, {DType::float32, {3}, {12, 12, 12}}, Bound::kOp);
  both("returned: the average", [](A a) { return jnp::average_returned(a[0], {0}, a[1], true).first; }, {x, w, wt, wi},
       {DType::float32, {1, 4}, {-0.16679475, -0.11293109, 2.3127463, -1.6492497}}, Bound::kOp);
  both("int32 input", [](A a) { return jnp::average(a[3]); }, {x, w, wt, wi}, {DType::float32, {}, {3}}, Bound::kOp);
  Array w9 = make({0.6962295, 0.9392144, 0.16390531}, {3}, DType::float32);
  grad_both("grad in a", [](A a) { return jnp::average(a[0], 1, a[3]); }, {x, w, wt, wi}, 0, w9,
            {DType::float32, {3, 4}, {0.17405738, 0.058019128, 0.23207651, 0.23207651, 0.23480362, 0.07826787,
              0.3130715, 0.3130715, 0.040976327, 0.013658776, 0.054635104, 0.054635104}}, Bound::kSum);
  Array w11 = make({0.81981206, -0.4747526, 0.7817998, -0.07506118}, {4}, DType::float32);
  grad_both("grad in weights", [](A a) { return jnp::average(a[0], 0, a[1]); }, {x, w, wt, wi}, 1, w11,
            {DType::float32, {3, 4}, {-0.08257494, -0.09453265, -0.36636555, 0.013526194, 0.24676383, -0.21980114,
              -0.057043374, -0.008340709, -0.10837667, 0.20858204, 0.10819751, -0.013020592}}, Bound::kSum);
  // JAX: ValueError: Axis must be specified when shapes of a and weights differ.
  refuses<ShapeError>("weights of another shape without axes", [](A a) { return jnp::average(a[0], {}, a[3]); },
                      {x, w, wt, wi});
  // JAX: ValueError: Shape of weights must be consistent with shape of a along specified axis.
  refuses<ShapeError>("weights along the wrong axis", [](A a) { return jnp::average(a[0], 0, a[3]); }, {x, w, wt, wi});
  // JAX: ValueError: Shape of weights must be consistent with shape of a along specified axis.
  refuses<ShapeError>("axes (0, 1) for weights laid (1, 0)", [](A a) { return jnp::average(a[0], {0, 1}, a[2]); },
                      {x, w, wt, wi});
}

TEST_CASE("jnp::count_nonzero and ptp: dtypes, NaN, wrapping, as JAX", "[jnp]") {
  Array x = make({0, -1.5, NAN, 0, 2, 0, -0.0, 3}, {2, 4}, DType::float32);
  Array u = make({3, 200, 17, 90}, {4}, DType::uint8);
  Array i8 = make({-100, 100, 5, 7, -7, 0}, {2, 3}, DType::int8);
  both("count_nonzero (NaN counts)", [](A a) { return jnp::count_nonzero(a[0]); }, {x, u, i8}, {DType::int64, {}, {4}},
       Bound::kOp);
  both("count_nonzero axis 1 keepdims", [](A a) { return jnp::count_nonzero(a[0], 1, true); }, {x, u, i8},
       {DType::int64, {2, 1}, {2, 2}}, Bound::kOp);
  both("count_nonzero of bool", [](A a) { return jnp::count_nonzero(a[2] > 0, {0}); }, {x, u, i8},
       {DType::int64, {3}, {1, 1, 1}}, Bound::kOp);
  both("ptp of uint8", [](A a) { return jnp::ptp(a[1]); }, {x, u, i8}, {DType::uint8, {}, {197}}, Bound::kOp);
  both("ptp of int8 wraps", [](A a) { return jnp::ptp(a[2], 1); }, {x, u, i8}, {DType::int8, {2}, {-56, 14}},
       Bound::kOp);
  both("ptp with NaN, keepdims", [](A a) { return jnp::ptp(a[0], {0}, true); }, {x, u, i8},
       {DType::float32, {1, 4}, {2, 1.5, NAN, 3}}, Bound::kOp);
  // JAX: TypeError: sub does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes o
  refuses<TypeError>("ptp of bool", [](A a) { return jnp::ptp(a[2] > 0); }, {x, u, i8});
  // JAX: ValueError: zero-size array to reduction operation max which has no identity
  refuses<ShapeError>("ptp over an empty axis", [](A) { return jnp::ptp(jnp::zeros({0, 2}), 0); }, {x, u, i8});
}

TEST_CASE("jnp::cov and corrcoef: rowvar, bias, ddof, y, fweights and aweights, as JAX", "[jnp]") {
  Array m = make({-1.8621546, 2.999228, 0.5199654, 2.0106032, -1.4057269, -2.3251126, 1.7161511, 0.11965268,
                  2.6175847, 0.8669217, -1.8256778, 0.049902774, 1.0640272, 1.693255, -1.2819486, 1.7493432,
                  -0.47133642, 2.0819445}, {3, 6}, DType::float32);
  Array y = make({0.56649584, -2.0587583, 2.602791, 0.8779812, -2.231372, 2.5331435}, {6}, DType::float32);
  Array fw = make({1, 3, 1, 1, 1, 3}, {6}, DType::int32);
  Array aw = make({0.62895036, 1.4176102, 0.20371689, 0.71154773, 0.66057694, 1.8539841}, {6}, DType::float32);
  Array mi = make({-1, -7, -5, -5, 7, -1, 8, 9, -5, 1}, {2, 5}, DType::int32);
  both("cov", [](A a) { return jnp::cov(a[0]); }, {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {4.8314853, 0.55098504, 0.36409703, 0.55098504, 2.3608859, -0.34050018, 0.36409703,
         -0.34050018, 1.8725697}}, Bound::kSum);
  both("rowvar false", [](A a) { return jnp::cov(a[0], std::nullopt, false); }, {m, y, fw, aw, mi},
       {DType::float32, {6, 6}, {3.6320128, -2.525283, 0.796029, -0.9053974, 0.058047608, 3.344873, -2.525283,
         2.0789573, -1.6372193, 0.8371827, 0.35336435, -1.5661513, 0.796029, -1.6372193, 3.8088768, -0.8948787,
         -1.307648, -1.813879, -0.9053974, 0.8371827, -0.8948787, 0.3591553, 0.23854515, -0.34575525, 0.058047608,
         0.35336435, -1.307648, 0.23854515, 0.48061413, 0.9787668, 3.344873, -1.5661513, -1.813879, -0.34575525,
         0.9787668, 4.8653407}}, Bound::kSum);
  both("bias", [](A a) { return jnp::cov(a[0], std::nullopt, true, true); }, {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {4.026238, 0.4591542, 0.3034142, 0.4591542, 1.9674048, -0.28375015, 0.3034142,
         -0.28375015, 1.5604748}}, Bound::kSum);
  both("ddof 3", [](A a) { return jnp::cov(a[0], std::nullopt, true, false, 3); }, {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {8.052476, 0.9183084, 0.6068284, 0.9183084, 3.9348097, -0.5675003, 0.6068284,
         -0.5675003, 3.1209495}}, Bound::kSum);
  both("with y", [](A a) { return jnp::cov(a[0], a[1]); }, {m, y, fw, aw, mi},
       {DType::float32, {4, 4}, {4.8314853, 0.55098504, 0.36409703, -1.3679951, 0.55098504, 2.3608859, -0.34050018,
         2.2294407, 0.36409703, -0.34050018, 1.8725697, -0.040818416, -1.3679951, 2.2294407, -0.040818416,
         4.525276}}, Bound::kSum);
  both("one variable: 0-d", [](A a) { return jnp::cov(a[1]); }, {m, y, fw, aw, mi}, {DType::float32, {}, {4.525276}},
       Bound::kSum);
  both("fweights", [](A a) { return jnp::cov(a[0], std::nullopt, true, false, std::nullopt, a[2]); },
       {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {5.866222, 0.3004669, 0.072595455, 0.3004669, 1.3804141, -0.33813274, 0.072595455,
         -0.33813274, 1.3691338}}, Bound::kSum);
  both("aweights", [](A a) { return jnp::cov(a[0], std::nullopt, true, false, std::nullopt, std::nullopt, a[3]); },
       {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {6.8849034, 0.38832578, 0.15287949, 0.38832572, 1.349422, 0.19095184, 0.15287952,
         0.19095181, 1.1631054}}, Bound::kSum);
  both("both weights, ddof 2", [](A a) { return jnp::cov(a[0], std::nullopt, true, false, 2, a[2], a[3]); },
       {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {8.234688, 0.24199887, -0.27876714, 0.2419989, 0.6379597, 0.057537045, -0.27876714,
         0.057537027, 0.6598539}}, Bound::kSum);
  both("both weights, bias", [](A a) { return jnp::cov(a[0], std::nullopt, true, true, std::nullopt, a[2], a[3]); },
       {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {6.214594, 0.18263286, -0.21038133, 0.18263288, 0.4814585, 0.043422334,
         -0.21038133, 0.04342232, 0.49798167}}, Bound::kSum);
  both("int32 input", [](A a) { return jnp::cov(a[4]); }, {m, y, fw, aw, mi},
       {DType::float32, {2, 2}, {31.199999, -10.4, -10.4, 35.8}}, Bound::kSum);
  both("no observations: NaN", [](A) { return jnp::cov(jnp::zeros({2, 0})); }, {m, y, fw, aw, mi},
       {DType::float32, {2, 2}, {NAN, NAN, NAN, NAN}}, Bound::kOp);
  both("no variables", [](A) { return jnp::cov(jnp::zeros({0, 3})); }, {m, y, fw, aw, mi},
       {DType::float64, {0, 0}, {}}, Bound::kOp);
  both("corrcoef", [](A a) { return jnp::corrcoef(a[0]); }, {m, y, fw, aw, mi},
       {DType::float32, {3, 3}, {1, 0.16314055, 0.121048056, 0.16314057, 1, -0.1619425, 0.12104804, -0.16194248,
         0.9999999}}, Bound::kSum);
  both("corrcoef with y, rowvar false", [](A a) { return jnp::corrcoef(a[0], a[0], false); }, {m, y, fw, aw, mi},
       {DType::float32, {12, 12}, {1, -0.9189959, 0.21402118, -0.79272836, 0.043935183, 0.7956999, 1, -0.9189959,
         0.21402118, -0.79272836, 0.043935183, 0.7956999, -0.9189959, 1, -0.581816, 0.9688494, 0.35350993,
         -0.4924411, -0.9189959, 1, -0.581816, 0.9688494, 0.35350993, -0.4924411, 0.21402118, -0.581816, 1,
         -0.76511127, -0.96648276, -0.42136002, 0.21402118, -0.581816, 1, -0.76511127, -0.96648276, -0.42136002,
         -0.7927284, 0.9688494, -0.76511127, 1, 0.57415766, -0.2615598, -0.7927284, 0.9688494, -0.76511127, 1,
         0.57415766, -0.2615598, 0.043935183, 0.3535099, -0.9664828, 0.57415766, 0.9999999, 0.6400654, 0.043935183,
         0.3535099, -0.9664828, 0.57415766, 0.9999999, 0.6400654, 0.79569995, -0.49244115, -0.42136, -0.2615598,
         0.6400653, 1, 0.79569995, -0.49244115, -0.42136, -0.2615598, 0.6400653, 1, 1, -0.9189959, 0.21402118,
         -0.79272836, 0.043935183, 0.7956999, 1, -0.9189959, 0.21402118, -0.79272836, 0.043935183, 0.7956999,
         -0.9189959, 1, -0.581816, 0.9688494, 0.35350993, -0.4924411, -0.9189959, 1, -0.581816, 0.9688494,
         0.35350993, -0.4924411, 0.21402118, -0.581816, 1, -0.76511127, -0.96648276, -0.42136002, 0.21402118,
         -0.581816, 1, -0.76511127, -0.96648276, -0.42136002, -0.7927284, 0.9688494, -0.76511127, 1, 0.57415766,
         -0.2615598, -0.7927284, 0.9688494, -0.76511127, 1, 0.57415766, -0.2615598, 0.043935183, 0.3535099,
         -0.9664828, 0.57415766, 0.9999999, 0.6400654, 0.043935183, 0.3535099, -0.9664828, 0.57415766, 0.9999999,
         0.6400654, 0.79569995, -0.49244115, -0.42136, -0.2615598, 0.6400653, 1, 0.79569995, -0.49244115, -0.42136,
         -0.2615598, 0.6400653, 1}}, Bound::kSum);
  both("corrcoef of one variable", [](A a) { return jnp::corrcoef(a[1]); }, {m, y, fw, aw, mi},
       {DType::float32, {}, {1}}, Bound::kSum);
  both("corrcoef of int32", [](A a) { return jnp::corrcoef(a[4]); }, {m, y, fw, aw, mi},
       {DType::float32, {2, 2}, {1, -0.31118205, -0.31118205, 0.9999999}}, Bound::kSum);
  Array w17 = make({-0.8818586, 0.003373218, -0.016551333, -0.8559726, -0.134696, 0.06232358, -0.2715658,
                    -0.3689682, 0.5552015}, {3, 3}, DType::float32);
  grad_both("grad of cov", [](A a) { return jnp::cov(a[0]); }, {m, y, fw, aw, mi}, 0, w17,
            {DType::float32, {3, 6}, {0.44636992, -1.0324745, -0.41243657, -0.8143998, 0.97779316, 0.8351478,
              0.23927198, -0.54226345, -0.07161848, -0.41738483, 0.44643226, 0.3455625, 0.09500683, 0.052528083,
              -0.61853874, 0.07612295, -0.05505201, 0.4499329}}, Bound::kSum);
  Array w19 = make({0.27176955, 0.38218033, 0.751657, 0.34768257, -0.031197615, -0.2515877, -0.3848218, -0.9313519,
                    -0.90819514}, {3, 3}, DType::float32);
  grad_both("grad of cov in aweights",
            [](A a) { return jnp::cov(a[0], std::nullopt, true, false, std::nullopt, a[2], a[3]); },
            {m, y, fw, aw, mi}, 3, w19,
            {DType::float32, {6}, {-0.1404438, 0.35823384, -0.04862703, 0.07764975, -0.6871222, -0.005907333}},
            Bound::kSum);
  Array w21 = make({0.3984499, 0.32568187, -0.33968353, -0.06251225, 0.8961572, 0.8840602, -0.67794037, 0.51274604,
                    -0.8157467}, {3, 3}, DType::float32);
  grad_both("grad of corrcoef", [](A a) { return jnp::corrcoef(a[0]); }, {m, y, fw, aw, mi}, 0, w21,
            {DType::float32, {3, 6}, {-0.006079546, -0.057387117, 0.17461997, -0.052820675, 0.044128552,
              -0.10246118, 0.022914516, 0.15749173, -0.23766403, 0.16113849, -0.22895642, 0.1250757, 0.2844465,
              -0.23313236, 0.15548898, -0.06485932, -0.27431488, 0.13237107}}, Bound::kSum);
  // JAX: ValueError: m has more than 2 dimensions
  refuses<ShapeError>("3-d m", [](A) { return jnp::cov(jnp::ones({2, 2, 2})); }, {m, y, fw, aw, mi});
  both("y of 3 more variables", [](A a) { return jnp::cov(a[0], a[0] * 2.0f); }, {m, y, fw, aw, mi},
       {DType::float32, {6, 6}, {4.8314853, 0.55098504, 0.36409703, 9.662971, 1.1019701, 0.72819406, 0.55098504,
         2.3608859, -0.34050018, 1.1019701, 4.7217717, -0.68100035, 0.36409703, -0.34050018, 1.8725697, 0.72819406,
         -0.68100035, 3.7451394, 9.662971, 1.1019701, 0.72819406, 19.325941, 2.2039402, 1.4563881, 1.1019701,
         4.7217717, -0.68100035, 2.2039402, 9.443543, -1.3620007, 0.72819406, -0.68100035, 3.7451394, 1.4563881,
         -1.3620007, 7.4902787}}, Bound::kSum);
  // JAX: ValueError: Incompatible shapes for broadcasting: shapes=[(3, 6), (2, 2, 6)]
  refuses<ShapeError>("y of another rank that does not broadcast with m",
                      [](A a) { return jnp::cov(a[0], jnp::ones({2, 2, 6})); }, {m, y, fw, aw, mi});
  // JAX: TypeError: Cannot concatenate arrays with shapes that differ in dimensions other than the one being c
  refuses<ShapeError>("y of other observations", [](A a) { return jnp::cov(a[0], jnp::ones({2, 5})); },
                      {m, y, fw, aw, mi});
  // JAX: TypeError: fweights must be integer.
  refuses<TypeError>("float fweights",
                     [](A a) { return jnp::cov(a[0], std::nullopt, true, false, std::nullopt, a[3]); },
                     {m, y, fw, aw, mi});
  // JAX: RuntimeError: incompatible numbers of samples and fweights
  refuses<ShapeError>("fweights for 2 observations of 6",
                      [](A a) { return jnp::cov(a[0], std::nullopt, true, false, std::nullopt, jnp::array({1, 2})); },
                      {m, y, fw, aw, mi});
  // JAX: RuntimeError: cannot handle multidimensional aweights
  refuses<ShapeError>("2-d aweights", [](A a) { return jnp::cov(a[0], {}, true, false, {}, {}, jnp::ones({2, 6})); },
                      {m, y, fw, aw, mi});
}

TEST_CASE("jnp::nanvar, nanstd, nanprod: NaNs skipped, dtypes, ddof, as JAX", "[jnp]") {
  Array x = make({1.682366323862298, NAN, -0.7159241905307718, 1.3574051428008893, 0.33393494234044896,
                  1.7858487418067783, 1.9688188695790192, -1.2533215141566774, NAN, NAN, NAN, NAN}, {3, 4},
                 DType::float64);
  Array h = make({1.5, NAN, 2.25, 0.5, -1, NAN}, {2, 3}, DType::float16);
  Array i8 = make({1, 0, 1, 2, -3, -1}, {2, 3}, DType::int8);
  both("nanvar all", [](A a) { return jnp::nanvar(a[0]); }, {x, h, i8}, {DType::float64, {}, {1.4472730442350994}},
       Bound::kSum);
  both("nanvar axis 1 (an all-NaN row: NaN)", [](A a) { return jnp::nanvar(a[0], 1); }, {x, h, i8},
       {DType::float64, {3}, {1.1284546316753457, 1.6845315475128728, NAN}}, Bound::kSum);
  both("nanvar axis 0, ddof 1, keepdims", [](A a) { return jnp::nanvar(a[0], 0, true, 1); }, {x, h, i8},
       {DType::float64, {1, 4}, {0.9091335953364611, NAN, 3.6039226494038425, 3.407946838674416}}, Bound::kSum);
  both("nanvar ddof past the count: NaN", [](A a) { return jnp::nanvar(a[0], {1}, false, 3); }, {x, h, i8},
       {DType::float64, {3}, {NAN, 6.738126190051491, NAN}}, Bound::kSum);
  both("nanstd axis -1", [](A a) { return jnp::nanstd(a[0], -1); }, {x, h, i8},
       {DType::float64, {3}, {1.0622874524700674, 1.2978950448756914, NAN}}, Bound::kSum);
  both("nanstd of float16", [](A a) { return jnp::nanstd(a[1], 1); }, {x, h, i8}, {DType::float16, {2}, {0.375, 0.75}},
       Bound::kSum);
  both("nanvar of int8", [](A a) { return jnp::nanvar(a[2]); }, {x, h, i8}, {DType::float32, {}, {2.6666667}},
       Bound::kSum);
  both("nanstd of a weak scalar", [](A) { return jnp::nanstd(Array(3.0)); }, {x, h, i8}, {DType::float64, {}, {0.0}},
       Bound::kOp);
  both("nanprod axis 1", [](A a) { return jnp::nanprod(a[0], 1); }, {x, h, i8},
       {DType::float64, {3}, {-1.6349222107622732, -1.4715492277918494, 1.0}}, Bound::kSum);
  both("nanprod of float16", [](A a) { return jnp::nanprod(a[1], {0}, true); }, {x, h, i8},
       {DType::float16, {1, 3}, {0.75, -1, 2.25}}, Bound::kSum);
  both("nanprod of int8: int64", [](A a) { return jnp::nanprod(a[2], 0); }, {x, h, i8},
       {DType::int64, {3}, {2, 0, -1}}, Bound::kOp);
  Array w11 = make({0.965395534147546, -0.6308389685655647, -0.29778739497078366}, {3}, DType::float64);
  grad_both("grad of nanvar", [](A a) { return jnp::nanvar(a[0], 1); }, {x, h, i8}, 0, w11,
            {DType::float64, {3, 4}, {0.5842255611447748, 0.0, -0.9593070736442187, 0.37508151249944405,
              0.11824613352742105, -0.33971576832330364, -0.39742811166437864, 0.6188977464602612, 0.0, 0.0, 0.0,
              0.0}}, Bound::kSum);
  Array w13 = make({-0.7973982240328332, -0.9702472394829345, 0.0899095163829069, 0.055641392600288775}, {4},
                   DType::float64);
  grad_both("grad of nanstd", [](A a) { return jnp::nanstd(a[0], 0, false, 1); }, {x, h, i8}, 0, w13,
            {DType::float64, {3, 4}, {-0.5638456915197262, 0.0, -0.06357562872755645, 0.03934440602232717,
              0.5638456915197262, 0.0, 0.06357562872755645, -0.03934440602232717, 0.0, 0.0, 0.0, 0.0}}, Bound::kSum);
  Array w15 = make({-0.12053544503570857, -0.40341694591946453, -0.9514877016382499}, {3}, DType::float64);
  grad_both("grad of nanprod", [](A a) { return jnp::nanprod(a[0], 1); }, {x, h, i8}, 0, w15,
            {DType::float64, {3, 4}, {0.11713624641545371, 0.0, -0.2752610945118285, 0.14517852486278793,
              1.7777351812458912, 0.33241779180320113, 0.30152489110025166, -0.47365970227151355, 0.0, 0.0, 0.0,
              0.0}}, Bound::kSum);
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>("nanvar axis 2", [](A a) { return jnp::nanvar(a[0], 2); }, {x, h, i8});
}

TEST_CASE("jnp::nancumsum, nancumprod, nanargmax, nanargmin: flattening, dtypes, all-NaN slices, as JAX", "[jnp]") {
  Array x = make({NAN, 0.3711095, -1.6460491, -1.529359, 1.869727, NAN}, {2, 3}, DType::float32);
  Array xa = make({NAN, NAN, 1.0, NAN}, {2, 2}, DType::float64);
  Array i8 = make({-2, -6, 16, 11, -7, 3}, {2, 3}, DType::int8);
  both("nancumsum flattened", [](A a) { return jnp::nancumsum(a[0]); }, {x, xa, i8},
       {DType::float32, {6}, {0, 0.3711095, -1.2749397, -2.8042986, -0.9345716, -0.9345716}}, Bound::kSum);
  both("nancumsum axis -1", [](A a) { return jnp::nancumsum(a[0], -1); }, {x, xa, i8},
       {DType::float32, {2, 3}, {0, 0.3711095, -1.2749397, -1.529359, 0.34036803, 0.34036803}}, Bound::kSum);
  both("nancumprod axis 0", [](A a) { return jnp::nancumprod(a[0], 0); }, {x, xa, i8},
       {DType::float32, {2, 3}, {1, 0.3711095, -1.6460491, -1.529359, 0.6938734, -1.6460491}}, Bound::kSum);
  both("nancumsum of int8 stays int8", [](A a) { return jnp::nancumsum(a[2], 1); }, {x, xa, i8},
       {DType::int8, {2, 3}, {-2, -8, 8, 11, 4, 7}}, Bound::kOp);
  both("nancumsum of bool: int64", [](A a) { return jnp::nancumsum(a[2] > 0, 1); }, {x, xa, i8},
       {DType::int64, {2, 3}, {0, 0, 1, 1, 1, 2}}, Bound::kOp);
  both("nancumprod of a weak scalar along axis 0", [](A) { return jnp::nancumprod(Array(2.5), 0); }, {x, xa, i8},
       {DType::float64, {1}, {2.5}}, Bound::kOp);
  both("nanargmax flattened", [](A a) { return jnp::nanargmax(a[0]); }, {x, xa, i8}, {DType::int64, {}, {4}},
       Bound::kOp);
  both("nanargmax axis 1 keepdims", [](A a) { return jnp::nanargmax(a[0], 1, true); }, {x, xa, i8},
       {DType::int64, {2, 1}, {1, 1}}, Bound::kOp);
  both("nanargmin axis 0", [](A a) { return jnp::nanargmin(a[0], 0); }, {x, xa, i8}, {DType::int64, {3}, {1, 0, 0}},
       Bound::kOp);
  both("nanargmax of an all-NaN row: -1", [](A a) { return jnp::nanargmax(a[1], 1); }, {x, xa, i8},
       {DType::int64, {2}, {-1, 0}}, Bound::kOp);
  both("nanargmin of an all-NaN column: -1", [](A a) { return jnp::nanargmin(a[1], -2); }, {x, xa, i8},
       {DType::int64, {2}, {1, -1}}, Bound::kOp);
  both("nanargmin of int8", [](A a) { return jnp::nanargmin(a[2], 1); }, {x, xa, i8}, {DType::int64, {2}, {1, 1}},
       Bound::kOp);
  Array w12 = make({-0.781235, 0.73598754, 0.030959984, -0.313238, -0.018125629, -0.21056287}, {2, 3}, DType::float32);
  grad_both("grad of nancumsum", [](A a) { return jnp::nancumsum(a[0], 1); }, {x, xa, i8}, 0, w12,
            {DType::float32, {2, 3}, {0, 0.7669475, 0.030959984, -0.5419265, -0.2286885, 0}}, Bound::kSum);
  Array w14 = make({0.1256643, -0.7905473, -0.19839485, 0.20725554, 0.35510638, -0.72386575}, {2, 3}, DType::float32);
  grad_both("grad of nancumprod", [](A a) { return jnp::nancumprod(a[0], 0); }, {x, xa, i8}, 0, w14,
            {DType::float32, {2, 3}, {0, -0.12659532, -0.9222606, 0.20725554, 0.13178335, 0}}, Bound::kSum);
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>("nancumsum axis 2", [](A a) { return jnp::nancumsum(a[0], 2); }, {x, xa, i8});
  // JAX: ValueError: axis 0 is out of bounds for array of dimension 0
  refuses<ShapeError>("nancumprod of a 0-d array along axis 0", [](A) { return jnp::nancumprod(jnp::array(2.5f), 0); },
                      {x, xa, i8});
  // JAX: IndexError: tuple index out of range
  refuses<ShapeError>("nanargmax axis -3", [](A a) { return jnp::nanargmax(a[0], -3); }, {x, xa, i8});
  // JAX: ValueError: attempt to get argmax of an empty sequence
  refuses<ShapeError>("nanargmax of an empty array", [](A) { return jnp::nanargmax(jnp::zeros({0})); }, {x, xa, i8});
}

TEST_CASE("jnp::cumulative_sum and cumulative_prod: dtypes, include_initial and axis rules, as JAX", "[jnp]") {
  Array x = make({1.1133893, 1.59534, 2.118521, -1.3271523, -0.7290411, -1.7340086}, {2, 3}, DType::float32);
  Array i8 = make({-7, 17, 13, -8}, {4}, DType::int8);
  Array u8 = make({11, 164, 133, 167}, {4}, DType::uint8);
  both("sum of a 1-d array", [](A a) { return jnp::cumulative_sum(a[1]); }, {x, i8, u8},
       {DType::int64, {4}, {-7, 10, 23, 15}}, Bound::kOp);
  both("sum of uint8: uint64, include_initial", [](A a) { return jnp::cumulative_sum(a[2], std::nullopt, true); },
       {x, i8, u8}, {DType::uint64, {5}, {0, 11, 175, 308, 475}}, Bound::kOp);
  both("sum of bool: int64", [](A a) { return jnp::cumulative_sum(a[1] > 0); }, {x, i8, u8},
       {DType::int64, {4}, {0, 1, 2, 2}}, Bound::kOp);
  both("sum axis -1, include_initial", [](A a) { return jnp::cumulative_sum(a[0], -1, true); }, {x, i8, u8},
       {DType::float32, {2, 4}, {0, 1.1133893, 2.7087293, 4.8272505, 0, -1.3271523, -2.0561934, -3.790202}},
       Bound::kSum);
  both("prod of int8 stays int8, include_initial", [](A a) { return jnp::cumulative_prod(a[1], 0, true); },
       {x, i8, u8}, {DType::int8, {5}, {1, -7, -119, -11, 88}}, Bound::kOp);
  both("prod axis 0", [](A a) { return jnp::cumulative_prod(a[0], 0); }, {x, i8, u8},
       {DType::float32, {2, 3}, {1.1133893, 1.59534, 2.118521, -1.477637, -1.1630684, -3.6735334}}, Bound::kSum);
  Array w6 = make({-0.8845385, 0.19997866, 0.13346358, -0.47254512, 0.09555732, -0.019995289, 0.37825808,
                   0.36750337}, {2, 4}, DType::float32);
  grad_both("grad of cumulative_sum", [](A a) { return jnp::cumulative_sum(a[0], 1, true); }, {x, i8, u8}, 0, w6,
            {DType::float32, {2, 3}, {-0.13910288, -0.33908153, -0.47254512, 0.7257662, 0.74576145, 0.36750337}},
            Bound::kSum);
  // JAX: ValueError: The input array has rank 2, however axis was not set to an explicit value. The axis argume
  refuses<ShapeError>("a 2-d array without axis", [](A a) { return jnp::cumulative_sum(a[0]); }, {x, i8, u8});
  // JAX: ValueError: The input must be non-scalar to take a cumulative product, however a scalar value or scala
  refuses<ShapeError>("a 0-d array", [](A) { return jnp::cumulative_prod(jnp::array(1.0f)); }, {x, i8, u8});
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>("axis 2", [](A a) { return jnp::cumulative_sum(a[0], 2); }, {x, i8, u8});
}

namespace {
/// vmap(f) over the first axis of x, eagerly and under jit, against f on each slice, stacked (vmap adds no
/// rounding of its own: the same ops run on a batch).
void vmapped(const std::string& what, const std::function<Array(const Array&)>& f, const Array& x, Bound b) {
  INFO(what);
  std::vector<Array> rows;
  for (int64_t i = 0; i < x.shape()[0]; ++i) rows.push_back(f(jnp::squeeze(jnp::slice_axis(x, 0, i, i + 1), {0})));
  Array want = jnp::stack(rows);
  std::vector<double> wv = want.astype(DType::float64).to_vector<double>();
  for (const Array& got : {vmap(f)(x), jit(vmap(f))(x)}) {
    REQUIRE(got.dtype() == want.dtype());
    REQUIRE(got.shape() == want.shape());
    std::vector<double> gv = got.astype(DType::float64).to_vector<double>();
    Tol t = tol(want.dtype(), b);
    for (size_t i = 0; i < gv.size(); ++i)
      if (!std::isnan(wv[i]) || !std::isnan(gv[i]))
        CHECK(std::fabs(gv[i] - wv[i]) <= t.atol + t.rtol * std::fabs(wv[i]));
  }
}
}  // namespace

TEST_CASE("jnp statistics and math under vmap: each batched call equals the per-example calls", "[jnp][vmap]") {
  Array x = make(uniform(60, -2, 2), {3, 4, 5}, DType::float32);
  Array xn = jnp::where(x > 1.5f, Array(NAN), x);
  vmapped("median", [](const Array& r) { return jnp::median(r, 0); }, x, Bound::kOp);
  vmapped("nanquantile", [](const Array& r) { return jnp::nanquantile(r, jnp::array({0.2f, 0.9f}), {1}); }, xn,
          Bound::kOp);
  vmapped("percentile, nearest", [](const Array& r) { return jnp::percentile(r, 40, {}, "nearest"); }, x, Bound::kOp);
  vmapped("nanvar", [](const Array& r) { return jnp::nanvar(r, 1, false, 1); }, xn, Bound::kSum);
  vmapped("average", [](const Array& r) { return jnp::average(r, 1, jnp::arange(1.0f, 6.0f)); }, x, Bound::kSum);
  vmapped("cov", [](const Array& r) { return jnp::cov(r); }, x, Bound::kSum);
  vmapped("corrcoef", [](const Array& r) { return jnp::corrcoef(r, std::nullopt, false); }, x, Bound::kSum);
  vmapped("nanargmax", [](const Array& r) { return jnp::nanargmax(r, 1); }, xn, Bound::kOp);
  vmapped("cumulative_sum", [](const Array& r) { return jnp::cumulative_sum(r, 0, true); }, x, Bound::kSum);
  Array xp = jnp::array({-1.5f, -0.5f, 0.0f, 1.0f, 1.75f}), fp = jnp::array({2.0f, -1.0f, 0.5f, 3.0f, 1.0f});
  vmapped("interp in x", [xp, fp](const Array& r) { return jnp::interp(r, xp, fp); }, x, Bound::kOp);
  vmapped("interp in fp, period", [xp](const Array& r) { return jnp::interp(xp * 1.3f, xp, r, {}, {}, Array(3.0)); },
          jnp::reshape(x, {12, 5}), Bound::kOp);
  vmapped("trapezoid", [xp](const Array& r) { return jnp::trapezoid(r, xp); }, x, Bound::kSum);
  vmapped("polyval in p", [xp](const Array& r) { return jnp::polyval(r, xp); }, x, Bound::kSum);
  vmapped("polyval in x", [](const Array& r) { return jnp::polyval(jnp::array({1.5f, -2.0f, 0.5f}), r); }, x,
          Bound::kSum);
  vmapped("convolve", [fp](const Array& r) { return jnp::convolve(fp, r, "same"); }, jnp::reshape(x, {12, 5}),
          Bound::kSum);
  vmapped("sinc", [](const Array& r) { return jnp::sinc(r); }, jnp::where(x > 1.0f, Array(0.0f), x), Bound::kOp);
  vmapped("hypot", [fp](const Array& r) { return jnp::hypot(r, fp); }, x, Bound::kOp);
  vmapped("digitize", [xp](const Array& r) { return jnp::digitize(r, xp, true); }, x, Bound::kOp);
  vmapped("isin", [](const Array& r) { return jnp::isin(r, jnp::array({0, 2, 5})); }, jnp::floor(x * 3.0f),
          Bound::kOp);
  vmapped("histogram with edges", [xp](const Array& r) { return jnp::histogram(r, xp).first; }, x, Bound::kSum);
  Array xi = (jnp::floor(x * 4.0f)).astype(DType::int32);
  vmapped("ldexp", [](const Array& r) { return jnp::ldexp(jnp::array({0.75f, -3.0f, 1.5f, 5.0f, -0.25f}), r); }, xi,
          Bound::kOp);
  vmapped("gcd (a while_loop)", [](const Array& r) { return jnp::gcd(r, jnp::array({4, 6, 9, 0, -12})); },
          xi * 7, Bound::kOp);
  vmapped("lcm", [](const Array& r) { return jnp::lcm(r, jnp::array({4, 6, 9, 0, -12})); }, xi, Bound::kOp);
  vmapped("bincount with length", [](const Array& r) { return jnp::bincount(r, std::nullopt, 0, 6); },
          jnp::reshape(xi + 3, {12, 5}), Bound::kOp);
}
// clang-format on
