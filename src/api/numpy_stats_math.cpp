// jitx::numpy math: hypot, copysign, ldexp, gcd/lcm, sinc and the other elementwise functions, polyval, interp,
// trapezoid, convolve/correlate, bincount, digitize and isin, composed from
// existing jnp/lax functions (as JAX composes them) so that grad, vmap and jit apply unchanged.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <tuple>
#include <utility>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_stats.h"
#include "ops/convert.h"
#include "api/numpy_stats_internal.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
using stats_util::stats_check_valid;
using stats_util::stats_inexact;
using stats_util::stats_inexact_of;
using stats_util::stats_lit;

using namespace stats_internal;


// --- elementwise ---------------------------------------------------------------------------------------------

Array hypot(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  auto [p, q] = promote_inexact(x1, x2, "hypot");
  p = abs(p);
  q = abs(q);
  Array inf = like(INFINITY, p);
  Array any_inf = logical_or(equal(p, inf), equal(q, inf));
  Array big = maximum(p, q), small = minimum(p, q);
  Array zero = equal(big, like(0, big));
  // big * sqrt(1 + (small / big)^2): no overflow or underflow; the where keeps 0/0 out of the derivative.
  Array ratio = divide(small, where(zero, like(1, big), big));
  Array r = where(zero, big, multiply(big, sqrt(add(like(1, big), square(ratio)))));
  return where(any_inf, like(INFINITY, r), r);
}

Array copysign(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_inexact(x1, x2, "copysign");
  return where(signbit(b), negative(abs(a)), abs(a));
}

Array heaviside(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_inexact(x1, x2, "heaviside");
  Array zero = like(0, a);
  return where(less(a, zero), zero, where(greater(a, zero), like(1, a), where(isnan(a), a, b)));
}

Array float_power(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_inexact(x1, x2, "float_power");
  return power(a, b);
}

namespace {
/// The signed integer dtype of x's width.
DType int_of_width(DType d) {
  switch (dtype_bits(d)) {
    case 16:
      return DType::int16;
    case 32:
      return DType::int32;
    default:
      return DType::int64;
  }
}

struct FloatInfo {
  int nmant, nexp, minexp;
};
FloatInfo float_info(DType d) {
  switch (d) {
    case DType::float16:
      return {10, 5, -14};
    case DType::bfloat16:
      return {7, 8, -126};
    case DType::float32:
      return {23, 8, -126};
    default:
      return {52, 11, -1022};
  }
}

/// JAX's frexp on the bits: (mantissa in [0.5, 1), int32 exponent); 0, inf and NaN keep x with exponent 0.
/// Subnormals are scaled by 2^nmant first. The bit operations have no derivative; the mantissa carries x's
/// tangent times 2^-e (JAX's custom JVP of frexp) through a stop_gradient-corrected term.
std::pair<Array, Array> frexp_bits(const Array& x) {
  DType d = x.dtype(), it = int_of_width(d);
  FloatInfo fi = float_info(d);
  int64_t mask = (int64_t{1} << fi.nexp) - 1, bias = 1 - fi.minexp;
  double tiny = std::ldexp(1.0, fi.minexp);
  Array xs = stop_gradient(x);
  Array sub = less(abs(xs), stats_lit(tiny, d));
  Array scaled = where(sub, multiply(xs, stats_lit(std::ldexp(1.0, fi.nmant), d)), xs);
  Array bits = lax::bitcast_convert_type(scaled, it);
  Array e = where(sub, Array::scalar_int(-fi.nmant, it), Array::scalar_int(0, it));
  Array shifted = lax::shift_right_arithmetic(bits, Array::scalar_int(fi.nmant, it));
  e = add(e, subtract(bitwise_and(shifted, Array::scalar_int(mask, it)), Array::scalar_int(bias - 1, it)));
  Array mbits = bitwise_and(bits, Array::scalar_int(~(mask << fi.nmant), it));
  mbits = bitwise_or(mbits, Array::scalar_int((bias - 1) << fi.nmant, it));
  Array m = lax::bitcast_convert_type(mbits, d);
  Array special = logical_or(logical_or(isinf(xs), isnan(xs)), equal(xs, stats_lit(0, d)));
  e = where(special, Array::scalar_int(0, it), e);
  m = where(special, xs, m);
  Array e32 = lax::convert_element_type(e, DType::int32);
  // m + (x - stop_gradient(x)) * 2^-e: the value is m, the derivative 2^-e (as JAX's rule; 1 where x is special,
  // 0 where 2^-e overflows, for subnormal x, so that 0 * inf does not make the value NaN).
  Array scale = where(special, stats_lit(1, d), power(stats_lit(2, d), negative(astype(e32, d))));
  scale = where(isfinite(scale), scale, stats_lit(0, d));
  return {add(m, multiply(subtract(x, xs), scale)), e32};
}
}  // namespace

Array ldexp(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("ldexp", x1);
  stats_check_valid("ldexp", x2);
  if (is_floating(x2.dtype()))
    throw_error<TypeError>("ldexp", "the exponent x2 must be an integer or bool array, got {} (with x1 {})",
                           dtype_name(x2.dtype()), dtype_name(x1.dtype()));
  broadcast_shapes({x1.shape(), x2.shape()}, "ldexp");
  Array a = stats_inexact(x1);
  DType d = a.dtype();
  Array n = lax::convert_element_type(x2, d);
  auto [m, e0] = frexp_bits(detail::convert_weak(a, d, false));
  // The exponent as a float of x1's dtype (JAX's; a huge x2 becomes inf there, and the result inf or 0).
  Array e = add(astype(e0, d), n);
  // The exponent may overflow by one with a finite result: move one factor of 2 into the mantissa.
  Array pos = greater(e, stats_lit(0, d));
  m = where(pos, multiply(m, stats_lit(2, d)), m);
  e = where(pos, subtract(e, stats_lit(1, d)), e);
  Array r = multiply(m, power(stats_lit(2, d), e));
  return where(logical_or(isinf(a), equal(a, stats_lit(0, d))), a, r);
}

namespace {
/// Both operands promoted to one integer dtype (JAX's promote_dtypes; bool and floats refused by name).
std::pair<Array, Array> promote_integers(const Array& x1, const Array& x2, std::string_view op) {
  stats_check_valid(op, x1);
  stats_check_valid(op, x2);
  auto [d, weak] = promoted(x1, x2, op);
  if (!is_integer(d))
    throw_error<TypeError>(op, "arguments must be integers, got {} and {}", dtype_name(x1.dtype()),
                           dtype_name(x2.dtype()));
  Shape s = broadcast_shapes({x1.shape(), x2.shape()}, op);
  return {broadcast_to(detail::convert_weak(x1, d, weak), s), broadcast_to(detail::convert_weak(x2, d, weak), s)};
}

/// Euclid's algorithm on |x1|, |x2| for every element at once (JAX's while_loop). Euclid needs at most ~93 steps
/// for 64-bit values; the bound only matters for the minimum signed integer, whose |x| stays negative and on
/// which JAX's loop never ends.
Array gcd_loop(const Array& a, const Array& b) {
  constexpr int32_t kMaxSteps = 128;
  Array zero = like(0, a), one = like(1, a);
  auto cond = [](const std::tuple<Array, Array, Array>& c) {
    const auto& [x, y, i] = c;
    return logical_and(any(not_equal(y, like(0, y))), less(i, Array::scalar_int(kMaxSteps, DType::int32)));
  };
  auto body = [zero, one](const std::tuple<Array, Array, Array>& c) {
    const auto& [x, y, i] = c;
    Array nz = not_equal(y, zero);
    Array nx = where(nz, y, x);
    Array ny = where(nz, lax::rem(x, where(nz, y, one)), zero);
    Array swap = less(nx, ny);
    return std::make_tuple(where(swap, ny, nx), where(swap, nx, ny), add(i, Array::scalar_int(1, DType::int32)));
  };
  auto out = lax::while_loop(cond, body, std::make_tuple(abs(a), abs(b), Array::scalar_int(0, DType::int32)));
  return std::get<0>(out);
}
}  // namespace

Array gcd(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_integers(x1, x2, "gcd");
  return gcd_loop(a, b);
}

Array lcm(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_integers(x1, x2, "lcm");
  a = abs(a);
  b = abs(b);
  Array d = gcd_loop(a, b);
  Array zero = equal(d, like(0, d));
  return where(zero, like(0, d), multiply(a, floor_divide(b, where(zero, like(1, d), d))));
}

Array signbit(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("signbit", x);
  DType d = x.dtype();
  if (is_bool(d)) return zeros(x.shape(), DType::bool_);
  if (!is_floating(d)) return lax::lt(x, detail::convert_weak(Array(0), d, x.weak_type()));
  // The sign bit, read from the bits: -0.0 and -NaN count as negative.
  DType it = int_of_width(d);
  return lax::lt(lax::bitcast_convert_type(x, it), Array::scalar_int(0, it));
}

namespace {
/// The k-th derivative of sin(x)/x at 0, times x * 0 so that it has x's shape (JAX's _sinc_maclaurin): a custom
/// JVP whose tangent is the (k+1)-th term, so every order of derivative of sinc at 0 is JAX's.
Array sinc_maclaurin(int k, const Array& x) {
  auto f = [k](const Array& v) {
    Array zero = multiply(v, like(0, v));
    if (k % 2) return zero;
    return add(zero, like((k / 2 % 2 ? -1.0 : 1.0) / (k + 1), v));
  };
  auto rule = [k](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    return std::make_pair(sinc_maclaurin(k, std::get<0>(p)),
                          multiply(sinc_maclaurin(k + 1, std::get<0>(p)), std::get<0>(t)));
  };
  return custom_jvp(f, rule)(x);
}
}  // namespace

Array sinc(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("sinc", x);
  Array v = stats_inexact(x);
  Array at_zero = equal(v, like(0, v));
  Array pi_x = multiply(like(M_PI, v), v);
  Array safe = where(at_zero, like(1, v), pi_x);
  return where(at_zero, sinc_maclaurin(0, pi_x), divide(sin(safe), safe));
}

Array deg2rad(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("deg2rad", x);
  Array v = stats_inexact(x);
  return multiply(v, like(M_PI / 180, v));
}
Array rad2deg(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("rad2deg", x);
  Array v = stats_inexact(x);
  return multiply(v, like(180 / M_PI, v));
}
Array radians(const Array& x, Loc loc) {
  ApiScope s(loc);
  return deg2rad(x);
}
Array degrees(const Array& x, Loc loc) {
  ApiScope s(loc);
  return rad2deg(x);
}

// --- polynomials, interpolation, integration, convolution ---------------------------------------------------

Array polyval(const Array& p, const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("polyval", p);
  stats_check_valid("polyval", x);
  if (p.ndim() == 0) throw_error<ShapeError>("polyval", "p must be at least 1-D (the coefficients), got a 0-d array");
  // promote_dtypes, not to float: integer coefficients and points stay integers.
  auto [d, weak] = promoted(p, x, "polyval");
  Array pc = detail::convert_weak(p, d, weak), xc = detail::convert_weak(x, d, weak);
  Shape tail(p.shape().begin() + 1, p.shape().end());
  Array y = zeros(broadcast_shapes({tail, x.shape()}, "polyval"), d);
  if (p.shape()[0] == 0) return y;
  // Horner's rule as a scan over the coefficients (JAX's), so a long p is one loop, not a chain of ops.
  auto [out, ys] = lax::scan(
      [xc](const Array& acc, const Array& c) { return std::make_pair(add(multiply(acc, xc), c), std::tuple<>{}); }, y,
      pc);
  return out;
}

namespace {
/// np.spacing(np.finfo(d).eps): below this |xp[i] - xp[i-1]| counts as a repeated point.
double interp_epsilon(DType d) {
  switch (d) {
    case DType::float16:
      return std::ldexp(1.0, -20);
    case DType::bfloat16:
      return std::ldexp(1.0, -14);
    case DType::float32:
      return std::ldexp(1.0, -46);
    default:
      return std::ldexp(1.0, -104);
  }
}

/// left/right of interp: whether to extrapolate, and the value to use otherwise (nullopt: fp's end value).
std::pair<bool, std::optional<Array>> interp_bound(const InterpBound& b, const char* name) {
  if (auto* str = std::get_if<std::string>(&b)) {
    if (*str != "extrapolate")
      throw_error<TypeError>("interp", "the only valid string value of {} is 'extrapolate', got '{}'", name, *str);
    return {true, std::nullopt};
  }
  if (auto* a = std::get_if<Array>(&b)) {
    stats_check_valid("interp", *a, name);
    return {false, *a};
  }
  return {false, std::nullopt};
}
}  // namespace

Array interp(const Array& x, const Array& xp, const Array& fp, const InterpBound& left, const InterpBound& right,
             const std::optional<Array>& period, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("interp", x);
  stats_check_valid("interp", xp);
  stats_check_valid("interp", fp);
  if (xp.ndim() != 1 || xp.shape() != fp.shape())
    throw_error<ShapeError>("interp", "xp and fp must be 1-D arrays of one size, got shapes {} and {}",
                            shape_str(xp.shape()), shape_str(fp.shape()));
  if (xp.shape()[0] == 0) throw_error<ShapeError>("interp", "xp and fp are empty: there is nothing to interpolate");
  auto [extrapolate_left, left_value] = interp_bound(left, "left");
  auto [extrapolate_right, right_value] = interp_bound(right, "right");
  auto [pd, weak] = promoted(x, xp, "interp");
  DType d = stats_inexact_of(pd);
  Array xv = detail::convert_weak(x, d, weak), xpv = detail::convert_weak(xp, d, weak), fpv = stats_inexact(fp);
  if (period) {
    stats_check_valid("interp", *period, "a period that is an");
    if (period->ndim() != 0)
      throw_error<ShapeError>("interp", "period must be a scalar, got shape {}", shape_str(period->shape()));
    Array per = abs(*period);
    xv = remainder(xv, per);
    xpv = remainder(xpv, per);
    std::vector<Array> kv = lax::sort({xpv, fpv}, 0, true, 1);
    int64_t n = xp.shape()[0];
    xpv = concatenate({subtract(slice_along(kv[0], 0, n - 1, n), per), kv[0], add(slice_along(kv[0], 0, 0, 1), per)});
    fpv = concatenate({slice_along(kv[1], 0, n - 1, n), kv[1], slice_along(kv[1], 0, 0, 1)});
  }
  int64_t n = xpv.shape()[0];
  // i in [1, n - 1] (JAX's clip: 0 when n is 1, where i - 1 = -1 reads the last point, as its indexing does).
  Array i = clip(searchsorted(xpv, xv, "right"), Array(1), Array(n - 1));
  Array im1 = subtract(i, Array(1));
  im1 = where(less(im1, Array(0)), add(im1, Array(n)), im1);
  auto at = [](const Array& v, const Array& idx) { return take(v, idx, 0, "clip"); };
  Array f0 = at(fpv, im1), x0 = at(xpv, im1);
  Array df = subtract(at(fpv, i), f0), dx = subtract(at(xpv, i), x0), delta = subtract(xv, x0);
  // A repeated point (dx ~ 0) takes f0, with the where keeping 0/0 out of the derivative.
  Array dx0 = less_equal(abs(dx), stats_lit(interp_epsilon(xpv.dtype()), xpv.dtype()));
  Array f = where(dx0, f0, add(f0, multiply(divide(delta, where(dx0, Array(1), dx)), df)));
  if (!extrapolate_left && !period) f = where(less(xv, elem(xpv, 0)), left_value ? *left_value : elem(fpv, 0), f);
  if (!extrapolate_right && !period)
    f = where(greater(xv, elem(xpv, -1)), right_value ? *right_value : elem(fpv, -1), f);
  return f;
}

Array trapezoid(const Array& y, const std::optional<Array>& x, const Array& dx, int64_t axis, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("trapezoid", y);
  Array yv, d;
  if (!x) {
    stats_check_valid("trapezoid", dx, "a dx that is an");
    yv = stats_inexact(y);
    d = dx;
    if (d.ndim() > 0) {
      if (d.ndim() < yv.ndim()) {
        Shape s1(static_cast<size_t>(yv.ndim() - d.ndim()), 1);
        s1.insert(s1.end(), d.shape().begin(), d.shape().end());
        d = lax::reshape(d, s1);
      }
      d = axis_to_last(d, axis, "trapezoid");
    }
  } else {
    auto [a, b] = promote_inexact(y, *x, "trapezoid", false);
    yv = a;
    d = b.ndim() == 1
            ? diff_along(b, 0)
            : axis_to_last(diff_along(b, detail::canonical_axis(axis, b.ndim(), "trapezoid")), axis, "trapezoid");
  }
  yv = axis_to_last(yv, axis, "trapezoid");
  int64_t last = yv.ndim() - 1, n = yv.shape()[last];
  if (d.ndim() == 0 || d.shape().back() == 1) {
    // A constant spacing: dx * (sum(y) - (y[0] + y[-1]) / 2), which needs a sample (JAX's y[..., 0] fails).
    if (n == 0)
      throw_error<ShapeError>("trapezoid", "cannot integrate over the empty axis {} of shape {}", axis,
                              shape_str(y.shape()));
    Array dr = d.ndim() == 0 ? d : index_along(d, d.ndim() - 1, 0);
    Array ends = add(index_along(yv, last, 0), index_along(yv, last, n - 1));
    return multiply(dr, subtract(sum(yv, {last}), multiply(Array(0.5), ends)));
  }
  // Varying spacings: sum(dx * (y[1:] + y[:-1])) / 2 (0 for an empty axis, as JAX's).
  Array mids = n == 0 ? yv : add(slice_along(yv, last, 1, n), slice_along(yv, last, 0, n - 1));
  return multiply(Array(0.5), sum(multiply(d, mids), {last}));
}

namespace {
/// JAX's _conv: 1-D inputs promoted to one float dtype, the longer one slid over by conv_general_dilated.
Array conv_1d(const Array& a, const Array& v, std::string_view mode, bool correlate, std::string_view op) {
  stats_check_valid(op, a);
  stats_check_valid(op, v);
  if (a.ndim() != 1 || v.ndim() != 1)
    throw_error<ShapeError>(op, "supports only 1-D inputs, got shapes {} and {}", shape_str(a.shape()),
                            shape_str(v.shape()));
  auto [x, y] = promote_inexact(a, v, op, false);
  if (x.shape()[0] == 0 || y.shape()[0] == 0)
    throw_error<ShapeError>(op, "inputs cannot be empty, got shapes {} and {}", shape_str(a.shape()),
                            shape_str(v.shape()));
  if (mode != "full" && mode != "same" && mode != "valid")
    throw_error<TypeError>(op, "mode must be 'full', 'same' or 'valid', got '{}'", mode);
  bool reverse_out = false;
  if (x.shape()[0] < y.shape()[0]) {
    std::swap(x, y);
    reverse_out = correlate;  // correlate(a, v) is correlate(v, a) reversed
  }
  if (!correlate) y = flip(y);
  int64_t m = y.shape()[0];
  std::pair<int64_t, int64_t> pad = mode == "valid"  ? std::pair<int64_t, int64_t>{0, 0}
                                    : mode == "same" ? std::pair<int64_t, int64_t>{m / 2, m - m / 2 - 1}
                                                     : std::pair<int64_t, int64_t>{m - 1, m - 1};
  Array r = lax::conv_general_dilated(lax::reshape(x, {1, 1, x.shape()[0]}), lax::reshape(y, {1, 1, m}), {1}, {pad});
  r = lax::reshape(r, {r.shape()[2]});
  return reverse_out ? flip(r) : r;
}
}  // namespace

Array convolve(const Array& a, const Array& v, std::string_view mode, Loc loc) {
  ApiScope s(loc);
  return conv_1d(a, v, mode, false, "convolve");
}
Array correlate(const Array& a, const Array& v, std::string_view mode, Loc loc) {
  ApiScope s(loc);
  return conv_1d(a, v, mode, true, "correlate");
}

// --- counting and ranges ---------------------------------------------------------------------------------------

Array bincount(const Array& x, const std::optional<Array>& weights, int64_t minlength, std::optional<int64_t> length,
               Loc loc) {
  ApiScope s(loc);
  stats_check_valid("bincount", x);
  Array xi = is_bool(x.dtype()) ? astype(x, DType::int32) : x;
  if (!is_integer(xi.dtype()))
    throw_error<TypeError>("bincount", "x must have an integer type, got {}", dtype_name(x.dtype()));
  if (xi.ndim() != 1) throw_error<ShapeError>("bincount", "x must be 1-D, got shape {}", shape_str(x.shape()));
  if (!length) {
    if (xi.is_tracer())
      throw_error<TracerError>("bincount",
                               "the output size depends on x's values: pass a static length= under "
                               "jit (JAX's ConcretizationTypeError)");
    int64_t top = 0;
    if (xi.size() > 0) {
      Array mx = max(xi);
      bool too_big = is_unsigned_integer(mx.dtype()) ? mx.item<uint64_t>() >= uint64_t{INT64_MAX}
                                                     : mx.item<int64_t>() == INT64_MAX;
      if (too_big) throw_error<ShapeError>("bincount", "max(x) is too large for an array of counts");
      top = std::max<int64_t>(mx.item<int64_t>(), 0) + 1;
    }
    length = std::max(minlength, top);
  }
  if (*length < 0) throw_error<ShapeError>("bincount", "length must be >= 0, got {}", *length);
  Array w = ones(xi.shape(), DType::int64);
  if (weights) {
    stats_check_valid("bincount", *weights, "weights that are an");
    if (weights->shape() != xi.shape())
      throw_error<ShapeError>("bincount", "weights must have x's shape {}, got {}", shape_str(xi.shape()),
                              shape_str(weights->shape()));
    if (is_bool(weights->dtype())) throw_error<TypeError>("bincount", "bool weights cannot be added (as JAX's add)");
    w = *weights;
  }
  // Negative values count as 0, values past the end are dropped (JAX's clip and mode='drop').
  return at(zeros({*length}, w.dtype()), clip(xi, Array(0), std::nullopt)).add(w);
}

Array digitize(const Array& x, const Array& bins, bool right, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("digitize", x);
  stats_check_valid("digitize", bins, "bins that are an");
  if (bins.ndim() != 1) throw_error<ShapeError>("digitize", "bins must be 1-D, got shape {}", shape_str(bins.shape()));
  int64_t n = bins.shape()[0];
  if (n == 0) return zeros(x.shape(), DType::int32);
  std::string_view side = right ? "left" : "right";
  // Increasing bins search directly; decreasing ones search the reversed bins and count from the end.
  Array increasing = greater_equal(elem(bins, -1), elem(bins, 0));
  return where(increasing, searchsorted(bins, x, side),
               subtract(Array(static_cast<int32_t>(n)), searchsorted(flip(bins), x, side)));
}

Array isin(const Array& element, const Array& test_elements, bool /*assume_unique*/, bool invert, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("isin", element);
  stats_check_valid("isin", test_elements, "test_elements that are an");
  DType d = result_type({element, test_elements});
  Array a = ravel(astype(element, d)), b = ravel(astype(test_elements, d));
  if (a.size() == 0 || b.size() == 0) return full(element.shape(), invert ? 1.0 : 0.0, DType::bool_);
  // JAX's compare_all: every element against every test element.
  Array eq = equal(expand_dims(a, {1}), expand_dims(b, {0}));
  Array r = invert ? logical_not(any(eq, {1})) : any(eq, {1});
  return reshape(r, element.shape());
}

}  // namespace jitx::numpy
