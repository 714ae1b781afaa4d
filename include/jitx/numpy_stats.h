// jitx::numpy statistics and math: quantiles, averages, covariance, NaN-aware reductions, elementwise math, 1-D
// numerics (interp, trapezoid, convolve), counting (bincount, digitize, histogram) and log/geometric ranges, with
// JAX's names, argument order, defaults and result dtypes. Include "jitx/numpy.h" too.
#pragma once
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "jitx/numpy.h"

namespace jitx::numpy {

// Statistics (src/ops/numpy_stats.cpp). Axes are as in sum: empty means all axes (JAX's axis=None, over the
// flattened array); a repeated or out-of-range axis is a ShapeError naming the function.

/// The q-th quantiles of a over axes, q a float scalar or 1-D array in [0, 1] (values outside are clamped; an
/// integer q is a TypeError, as JAX's). method: "linear", "lower", "higher", "nearest" (the lower one at a tie),
/// "midpoint", "inverted_cdf" (the first sorted value whose cumulative weight reaches q times the total). Integer
/// and bool inputs are computed as floats (int64 as float64); "linear" interpolates in q's dtype and rounds to a's
/// once. Result shape: q's shape, then the reduced shape (reduced axes kept as 1 with keepdims). A NaN in a slice
/// makes its quantiles NaN; an empty reduced axis is a ShapeError (JAX fails there too). weights (inverted_cdf
/// only, as JAX): a's shape, or the reduced axes' sizes (in the order of axes); a is promoted with them to an
/// inexact dtype; a negative or NaN weight makes its slice NaN. inverted_cdf takes q in a's dtype (JAX refuses a
/// q of another float dtype there).
Array quantile(const Array& a, const Array& q, Axes axes = {}, std::string_view method = "linear",
               bool keepdims = false, std::optional<Array> weights = std::nullopt, Loc loc = Loc::current());
/// quantile ignoring NaNs (an all-NaN slice gives NaN; with weights, NaN values weigh nothing).
Array nanquantile(const Array& a, const Array& q, Axes axes = {}, std::string_view method = "linear",
                  bool keepdims = false, std::optional<Array> weights = std::nullopt, Loc loc = Loc::current());
/// quantile(a, q / 100): q in [0, 100], integers accepted (promoted to float first, as JAX's).
Array percentile(const Array& a, const Array& q, Axes axes = {}, std::string_view method = "linear",
                 bool keepdims = false, std::optional<Array> weights = std::nullopt, Loc loc = Loc::current());
Array nanpercentile(const Array& a, const Array& q, Axes axes = {}, std::string_view method = "linear",
                    bool keepdims = false, std::optional<Array> weights = std::nullopt, Loc loc = Loc::current());
/// quantile(a, 0.5, axes, "midpoint"), as JAX computes the median.
Array median(const Array& a, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array nanmedian(const Array& a, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());

/// The weighted mean over axes (JAX's average with returned=False). weights: a's shape, or, with axes given, the
/// sizes of those axes in the order the axes are listed; a and weights are promoted to one float dtype.
Array average(const Array& a, Axes axes = {}, const std::optional<Array>& weights = std::nullopt, bool keepdims = false,
              Loc loc = Loc::current());
/// JAX's average with returned=True: (average, sum of weights), the sum broadcast to the average's shape.
std::pair<Array, Array> average_returned(const Array& a, Axes axes = {},
                                         const std::optional<Array>& weights = std::nullopt, bool keepdims = false,
                                         Loc loc = Loc::current());
/// The number of nonzero elements over axes (NaN counts as nonzero), int64 (JAX x64's default int).
Array count_nonzero(const Array& a, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
/// max - min over axes in a's dtype (integers wrap, as JAX's; bool is a TypeError; an empty axis a ShapeError).
Array ptp(const Array& a, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());

/// The covariance matrix of the variables in m's rows (rowvar = false: its columns), y's variables appended.
/// ddof defaults to 1 (0 with bias); fweights (integer) and aweights weight the observations. Integers compute
/// as floats; a single variable gives a 0-d result; no observations give NaN.
Array cov(const Array& m, const std::optional<Array>& y = std::nullopt, bool rowvar = true, bool bias = false,
          std::optional<int64_t> ddof = std::nullopt, const std::optional<Array>& fweights = std::nullopt,
          const std::optional<Array>& aweights = std::nullopt, Loc loc = Loc::current());
/// Pearson correlation coefficients: cov normalised by the standard deviations, clipped to [-1, 1].
Array corrcoef(const Array& x, const std::optional<Array>& y = std::nullopt, bool rowvar = true,
               Loc loc = Loc::current());

/// var/std ignoring NaNs (N - ddof of the non-NaN count; NaN where that is <= 0). Integers compute as floats,
/// float16/bfloat16 in float32 rounded once.
Array nanvar(const Array& x, Axes axes = {}, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current());
Array nanstd(const Array& x, Axes axes = {}, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current());
/// prod treating NaNs as 1 (the dtype as prod's: narrow ints accumulate in int64).
Array nanprod(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
/// cumsum/cumprod treating NaNs as 0/1, along axis (flattened when nullopt); the dtype as cumsum's.
Array nancumsum(const Array& x, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
Array nancumprod(const Array& x, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
/// argmax/argmin ignoring NaNs; -1 for an all-NaN slice (int64, as argmax).
Array nanargmax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
                Loc loc = Loc::current());
Array nanargmin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
                Loc loc = Loc::current());
/// The array API's cumulative sum/product: x must be at least 1-D, and axis may be omitted only for 1-D x; ints
/// narrower than 64 bits and bool accumulate in int64 (unsigned: uint64). include_initial prepends the identity.
Array cumulative_sum(const Array& x, std::optional<int64_t> axis = std::nullopt, bool include_initial = false,
                     Loc loc = Loc::current());
Array cumulative_prod(const Array& x, std::optional<int64_t> axis = std::nullopt, bool include_initial = false,
                      Loc loc = Loc::current());

// Elementwise math (src/ops/numpy_stats_math.cpp): broadcasting, JAX's promotion, integers and bool computed as
// floats (int64 as float64) where JAX promotes to inexact; weak inputs give weak results where JAX's do.
/// sqrt(x1^2 + x2^2) without overflow or underflow; inf if either is inf (even with a NaN).
Array hypot(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// |x1| with the sign bit of x2 (-0.0 and -NaN count as negative).
Array copysign(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// 0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, NaN where x1 is NaN.
Array heaviside(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// x1 ** x2 in the promoted float dtype (JAX does not go to float64 as NumPy does).
Array float_power(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// x1 * 2 ** x2; x2 must be an integer or bool array (a float x2 is a TypeError, as JAX's).
Array ldexp(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// Greatest common divisor / least common multiple of integers (non-negative results; a float or bool argument
/// is a TypeError).
Array gcd(const Array& x1, const Array& x2, Loc loc = Loc::current());
Array lcm(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// Whether the sign bit is set (-0.0 and -NaN included; x < 0 for integers, false for bool).
Array signbit(const Array& x, Loc loc = Loc::current());
/// sin(pi x) / (pi x), 1 at 0 (derivative 0 there).
Array sinc(const Array& x, Loc loc = Loc::current());
/// Degrees to radians and back (radians and degrees are their aliases).
Array deg2rad(const Array& x, Loc loc = Loc::current());
Array rad2deg(const Array& x, Loc loc = Loc::current());
Array radians(const Array& x, Loc loc = Loc::current());
Array degrees(const Array& x, Loc loc = Loc::current());

// 1-D numerics and counting (src/ops/numpy_stats_math.cpp)
/// p[0] x^(n-1) + ... + p[n-1] by Horner's rule (a scan over p's first axis; p's other axes broadcast with x).
/// p and x are promoted together without going to float (integers stay integers).
Array polyval(const Array& p, const Array& x, Loc loc = Loc::current());
/// jnp.polyfit: the coefficients (highest power first; (deg + 1,) or (deg + 1, K) for a 2-D y) of the degree-deg
/// polynomial fitting (x, y) in the least-squares sense, weighted by w (applied to the unsquared residuals). As
/// JAX: a Vandermonde matrix with unit-norm columns solved by linalg::lstsq; rcond defaults to len(x) * eps of x's
/// dtype (so an integer x needs an rcond, as in JAX).
Array polyfit(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond = std::nullopt,
              const std::optional<Array>& w = std::nullopt, Loc loc = Loc::current());
/// jnp.polyfit(full=True): the coefficients, the squared residuals (lstsq's), the scaled Vandermonde matrix's rank
/// and singular values, and rcond (a weak float64 scalar).
struct PolyfitFull {
  Array c, residuals, rank, s, rcond;
};
PolyfitFull polyfit_full(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond = std::nullopt,
                         const std::optional<Array>& w = std::nullopt, Loc loc = Loc::current());
/// jnp.polyfit(cov=True): (coefficients, covariance) with the covariance scaled by residuals / (len(x) - deg - 1)
/// ((deg + 1, deg + 1), or (deg + 1, deg + 1, K) for a 2-D y); unscaled = true is JAX's cov="unscaled".
std::pair<Array, Array> polyfit_cov(const Array& x, const Array& y, int64_t deg,
                                    std::optional<double> rcond = std::nullopt,
                                    const std::optional<Array>& w = std::nullopt, bool unscaled = false,
                                    Loc loc = Loc::current());
/// A bound of interp: {} for fp's end value, a value, or "extrapolate" (the end segment's line).
using InterpBound = std::variant<std::monostate, Array, std::string>;
/// Linear interpolation of the points (xp, fp) (xp increasing, both 1-D of one size) at x. Outside xp: left /
/// right; with period, x and xp are taken modulo period (xp need not be sorted) and left/right are not used.
Array interp(const Array& x, const Array& xp, const Array& fp, const InterpBound& left = {},
             const InterpBound& right = {}, const std::optional<Array>& period = std::nullopt,
             Loc loc = Loc::current());
/// The trapezoidal rule along axis, with sample points x (1-D, or y's shape) or a spacing dx.
Array trapezoid(const Array& y, const std::optional<Array>& x = std::nullopt, const Array& dx = 1.0, int64_t axis = -1,
                Loc loc = Loc::current());
/// 1-D convolution / cross-correlation, mode "full", "same" or "valid" (inputs promoted to one float dtype).
Array convolve(const Array& a, const Array& v, std::string_view mode = "full", Loc loc = Loc::current());
Array correlate(const Array& a, const Array& v, std::string_view mode = "valid", Loc loc = Loc::current());
/// Counts (or summed weights) of each value of the non-negative 1-D integer array x (negatives count as 0).
/// The size is length, else max(minlength, max(x) + 1), which needs a concrete x (under jit: pass length).
Array bincount(const Array& x, const std::optional<Array>& weights = std::nullopt, int64_t minlength = 0,
               std::optional<int64_t> length = std::nullopt, Loc loc = Loc::current());
/// The bin index of each x among the monotonic 1-D bins (int32): right = false gives bins[i-1] <= x < bins[i]
/// for increasing bins.
Array digitize(const Array& x, const Array& bins, bool right = false, Loc loc = Loc::current());
/// histogram's bin edges: bins + 1 evenly spaced edges over range (default: a's min and max, widened by 0.5
/// each way when they are equal), in a's float dtype.
Array histogram_bin_edges(const Array& a, int64_t bins = 10,
                          std::optional<std::pair<double, double>> range = std::nullopt, Loc loc = Loc::current());
/// The given 1-D edges in a's float dtype.
Array histogram_bin_edges(const Array& a, const Array& bins, Loc loc = Loc::current());
/// (hist, bin_edges) of the flattened a: each bin holds the values in [edge i, edge i+1), the last one its right
/// edge too; weights (a's shape) are summed instead of counted; density divides by the total and the bin widths.
std::pair<Array, Array> histogram(const Array& a, int64_t bins = 10,
                                  std::optional<std::pair<double, double>> range = std::nullopt,
                                  const std::optional<Array>& weights = std::nullopt, bool density = false,
                                  Loc loc = Loc::current());
std::pair<Array, Array> histogram(const Array& a, const Array& bins, const std::optional<Array>& weights = std::nullopt,
                                  bool density = false, Loc loc = Loc::current());
/// One dimension's bins for histogramdd/histogram2d: a count (evenly spaced over the range) or 1-D edges.
using HistogramBins = std::variant<int64_t, Array>;
/// (hist, edges per dimension) of the N points of sample (N x D): as histogram per dimension, the point counted in
/// the bin of every coordinate; range gives each dimension's (min, max) (empty: the data's). Without weights the
/// counts are integers (int64, JAX's bincount); with weights (N,) the weights' sums; density divides by the total
/// and the bins' volumes.
std::pair<Array, std::vector<Array>> histogramdd(const Array& sample, int64_t bins = 10,
                                                 const std::vector<std::pair<double, double>>& range = {},
                                                 const std::optional<Array>& weights = std::nullopt,
                                                 bool density = false, Loc loc = Loc::current());
std::pair<Array, std::vector<Array>> histogramdd(const Array& sample, const std::vector<HistogramBins>& bins,
                                                 const std::vector<std::pair<double, double>>& range = {},
                                                 const std::optional<Array>& weights = std::nullopt,
                                                 bool density = false, Loc loc = Loc::current());
/// (hist, x_edges, y_edges) of the points (x[i], y[i]): histogramdd of the stacked columns. bins: one count, a
/// count or edges per dimension ({10, edges}), or one array of edges for both (as JAX: a 0-d, 1- or 2-element
/// array is read as counts).
std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y, int64_t bins = 10,
                                            const std::vector<std::pair<double, double>>& range = {},
                                            const std::optional<Array>& weights = std::nullopt, bool density = false,
                                            Loc loc = Loc::current());
std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y, const Array& bins,
                                            const std::vector<std::pair<double, double>>& range = {},
                                            const std::optional<Array>& weights = std::nullopt, bool density = false,
                                            Loc loc = Loc::current());
std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y, const std::vector<HistogramBins>& bins,
                                            const std::vector<std::pair<double, double>>& range = {},
                                            const std::optional<Array>& weights = std::nullopt, bool density = false,
                                            Loc loc = Loc::current());
/// Whether each element of element occurs in test_elements (element's shape; invert negates). assume_unique is
/// accepted for JAX's signature and changes nothing.
Array isin(const Array& element, const Array& test_elements, bool assume_unique = false, bool invert = false,
           Loc loc = Loc::current());
/// base ** linspace(start, stop, num, endpoint), computed in dtype's float type then converted to dtype. The
/// default dtype is float32, as linspace's (a documented jitx choice); axis may be 0 or -1 (the result is 1-D).
Array logspace(double start, double stop, int64_t num = 50, bool endpoint = true, double base = 10.0,
               DType dtype = DType::float32, int64_t axis = 0, Loc loc = Loc::current());
/// Numbers spaced evenly on a log scale from start to stop (both of one sign; NaN otherwise, as JAX's).
Array geomspace(double start, double stop, int64_t num = 50, bool endpoint = true, DType dtype = DType::float32,
                int64_t axis = 0, Loc loc = Loc::current());

// One integer axis where JAX takes `axis: int | Sequence[int]`: jnp::median(x, -1). (Templates, so that `{}` and
// `{0, 1}` still mean the axis lists.)
// clang-format off
#define JITX_JNP_STATS_INT_AXIS(name)                                                   \
  template <std::integral I>                                                            \
  Array name(const Array& a, I axis, bool keepdims = false, Loc loc = Loc::current()) { \
    return name(a, Axes{static_cast<int64_t>(axis)}, keepdims, loc);                    \
  }
JITX_JNP_STATS_INT_AXIS(median) JITX_JNP_STATS_INT_AXIS(nanmedian) JITX_JNP_STATS_INT_AXIS(count_nonzero)
JITX_JNP_STATS_INT_AXIS(ptp) JITX_JNP_STATS_INT_AXIS(nanprod)
#undef JITX_JNP_STATS_INT_AXIS
#define JITX_JNP_QUANTILE_INT_AXIS(name)                                                    \
  template <std::integral I>                                                                \
  Array name(const Array& a, const Array& q, I axis, std::string_view method = "linear",    \
             bool keepdims = false, std::optional<Array> weights = std::nullopt,            \
             Loc loc = Loc::current()) {                                                    \
    return name(a, q, Axes{static_cast<int64_t>(axis)}, method, keepdims, weights, loc);   \
  }
JITX_JNP_QUANTILE_INT_AXIS(quantile) JITX_JNP_QUANTILE_INT_AXIS(nanquantile)
JITX_JNP_QUANTILE_INT_AXIS(percentile) JITX_JNP_QUANTILE_INT_AXIS(nanpercentile)
#undef JITX_JNP_QUANTILE_INT_AXIS
template <std::integral I>
Array nanvar(const Array& x, I axis, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) {
  return nanvar(x, Axes{static_cast<int64_t>(axis)}, keepdims, ddof, loc);
}
template <std::integral I>
Array nanstd(const Array& x, I axis, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) {
  return nanstd(x, Axes{static_cast<int64_t>(axis)}, keepdims, ddof, loc);
}
template <std::integral I>
Array average(const Array& a, I axis, const std::optional<Array>& weights = std::nullopt, bool keepdims = false,
              Loc loc = Loc::current()) {
  return average(a, Axes{static_cast<int64_t>(axis)}, weights, keepdims, loc);
}
// clang-format on

}  // namespace jitx::numpy
