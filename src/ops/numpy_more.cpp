// More of jnp's surface (see jitx/numpy_more.h), each composed from jnp/lax ops the way JAX composes it, so that
// results, dtypes and edge values are JAX's and jit, grad and vmap apply unchanged.
#include "jitx/numpy_more.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_extra.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/numpy_stats.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::throw_error;
using stats_util::stats_check_valid;
using stats_util::stats_inexact;

namespace {
Array more_lit(double v, DType d) { return Array::scalar(v, d); }
bool more_int_or_bool(DType d) { return !is_floating(d); }

// (exponent bits, mantissa bits, minimum exponent) of a float dtype (numpy's finfo nexp, nmant, minexp).
struct FrexpInfo {
  int nexp, nmant, minexp;
  DType bits;
};
FrexpInfo frexp_info(DType d) {
  switch (d) {
    case DType::float16:
      return {5, 10, -14, DType::int16};
    case DType::bfloat16:
      return {8, 7, -126, DType::int16};
    case DType::float32:
      return {8, 23, -126, DType::int32};
    default:
      return {11, 52, -1022, DType::int64};
  }
}

// Two 1-D coefficient arrays promoted together (inexact: as polymul).
std::pair<Array, Array> more_poly_pair(const char* op, const Array& a, const Array& b, bool inexact) {
  stats_check_valid(op, a);
  stats_check_valid(op, b);
  if (a.ndim() != 1 || b.ndim() != 1)
    throw_error<ShapeError>(op, "coefficients must be 1-D arrays, got shapes {} and {}", a.aval().str(),
                            b.aval().str());
  DType d = result_type({a, b});
  if (inexact) d = stats_util::stats_inexact_of(d);
  return {astype(a, d), astype(b, d)};
}

// The leading zeros of a concrete 1-D array dropped (jnp.trim_zeros(trim='f')).
Array more_trim_leading(const char* op, const Array& a) {
  if (a.is_tracer())
    throw_error<TracerError>(op, "trim_leading_zeros needs concrete coefficients (their count depends on the values)");
  std::vector<double> v = astype(a, DType::float64).to_vector<double>();
  int64_t k = 0;
  while (k < static_cast<int64_t>(v.size()) && v[static_cast<size_t>(k)] == 0) ++k;
  return lax::slice_in_dim(a, k, a.shape()[0]);
}

// A window of M points from f(n, M - 1), n = 0, 1, ..., M - 1 in the default float dtype (M <= 1: M ones).
Array make_window(int64_t M, const std::function<Array(const Array& n, double m1)>& f) {
  const DType d = detail::default_float_dtype();
  if (M <= 1) return lax::full({std::max<int64_t>(M, 0)}, more_lit(1, d));
  return f(lax::iota(d, M), static_cast<double>(M - 1));
}
}  // namespace

// --- elementwise ---
Array trunc(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("trunc", x);
  if (more_int_or_bool(x.dtype())) return x;
  return where(lax::lt(x, detail::convert_weak(Array(0), x.dtype(), x.weak_type())), ceil(x), floor(x));
}
Array rint(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("rint", x);
  if (more_int_or_bool(x.dtype())) return astype(x, detail::default_float_dtype());
  return lax::round(x, lax::RoundingMethod::TO_NEAREST_EVEN);
}
Array fabs(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("fabs", x);
  return lax::abs(stats_inexact(x));
}
Array fmax(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("fmax", x);
  stats_check_valid("fmax", y);
  return where(logical_or(greater(x, y), isnan(y)), x, y);
}
Array fmin(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("fmin", x);
  stats_check_valid("fmin", y);
  return where(logical_or(less(x, y), isnan(y)), x, y);
}
Array logaddexp2(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("logaddexp2", x);
  stats_check_valid("logaddexp2", y);
  auto [a, b] = promote_and_broadcast(stats_inexact(x), stats_inexact(y), "logaddexp2");
  Array amax = lax::max(a, b);
  Array delta = lax::sub(a, b);
  Array inv_ln2 = detail::convert_weak(Array(1.0 / std::numbers::ln2), a.dtype(), false);
  Array tail = lax::add(amax, lax::mul(inv_ln2, lax::log1p(lax::exp2(lax::neg(lax::abs(delta))))));
  return where(isnan(delta), lax::add(a, b), tail);  // NaNs, or infinities of one sign
}
Array isposinf(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("isposinf", x);
  if (!is_floating(x.dtype())) return lax::full(x.shape(), Array(false));
  return lax::eq(x, more_lit(INFINITY, x.dtype()));
}
Array isneginf(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("isneginf", x);
  if (!is_floating(x.dtype())) return lax::full(x.shape(), Array(false));
  return lax::eq(x, more_lit(-INFINITY, x.dtype()));
}
std::pair<Array, Array> modf(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("modf", x);
  Array f = stats_inexact(x);
  Array whole = where(lax::ge(f, more_lit(0, f.dtype())), floor(f), ceil(f));
  return {subtract(f, whole), whole};
}
std::pair<Array, Array> frexp(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("frexp", x);
  Array f = stats_util::stats_strong(stats_inexact(x));
  const DType d = f.dtype();
  const FrexpInfo fi = frexp_info(d);
  const DType it = fi.bits;
  const int64_t mask = (int64_t{1} << fi.nexp) - 1, bias = 1 - fi.minexp;
  auto c = [&](int64_t v) { return Array::scalar_int(v, it); };
  // Subnormals scaled up by 2^nmant first (their exponent corrected by -nmant).
  Array tiny = lax::lt(lax::abs(f), more_lit(std::ldexp(1.0, fi.minexp), d));
  Array scaled = where(tiny, multiply(f, more_lit(std::ldexp(1.0, fi.nmant), d)), f);
  Array e = where(tiny, c(-fi.nmant), c(0));
  Array bits = lax::bitcast_convert_type(scaled, it);
  e = lax::add(e, lax::sub(lax::bitwise_and(lax::shift_right_arithmetic(bits, c(fi.nmant)), c(mask)), c(bias - 1)));
  bits = lax::bitwise_and(bits, c(~(mask << fi.nmant)));
  bits = lax::bitwise_or(bits, c((bias - 1) << fi.nmant));
  Array mant = lax::bitcast_convert_type(bits, d);
  Array special = logical_or(logical_or(isinf(f), isnan(f)), lax::eq(f, more_lit(0, d)));
  return {where(special, f, mant), astype(where(special, c(0), e), DType::int32)};
}
std::pair<Array, Array> divmod(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("divmod", x);
  stats_check_valid("divmod", y);
  auto [a, b] = promote_numeric(x, y, "divmod");
  if (!is_floating(a.dtype())) return {floor_divide(a, b), remainder(a, b)};
  // CPython's float_divmod: the quotient of x - mod, corrected where mod's sign is not y's.
  const DType d = a.dtype();
  Array mod = lax::rem(a, b);
  Array zero = more_lit(0, d);
  Array div = lax::div(where(lax::eq(b, zero), a, lax::sub(a, mod)), b);
  Array fix = logical_and(lax::ne(mod, zero), lax::ne(lax::sign(b), lax::sign(mod)));
  mod = where(fix, lax::add(mod, b), mod);
  div = where(fix, lax::sub(div, more_lit(1, d)), div);
  return {lax::round(div), mod};
}
Array bitwise_count(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("bitwise_count", x);
  if (is_floating(x.dtype()))
    throw_error<TypeError>("bitwise_count", "takes integers or bools, got {}", x.aval().str());
  Array v = x.dtype() == DType::bool_ ? astype(x, DType::int32) : x;
  return astype(lax::population_count(abs(v)), DType::uint8);
}
Array bitwise_invert(const Array& x, Loc loc) {
  ApiScope s(loc);
  return bitwise_not(x);
}
Array bitwise_left_shift(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  return left_shift(x, y);
}
Array bitwise_right_shift(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  return right_shift(x, y);
}

// --- reductions and comparisons ---
Array amax(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return max(x, axes, keepdims);
}
Array amin(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return min(x, axes, keepdims);
}
Array array_equal(const Array& a, const Array& b, bool equal_nan, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("array_equal", a);
  stats_check_valid("array_equal", b);
  if (a.shape() != b.shape()) return Array(false);
  Array eq = equal(a, b);
  if (equal_nan) eq = logical_or(eq, logical_and(isnan(a), isnan(b)));
  return all(eq);
}
Array array_equiv(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("array_equiv", a);
  stats_check_valid("array_equiv", b);
  broadcast_shapes({a.shape(), b.shape()}, "array_equiv");  // as JAX: shapes that do not broadcast are an error
  return all(equal(a, b));
}

// --- shapes ---
Array concat(const std::vector<Array>& xs, int64_t axis, Loc loc) {
  ApiScope s(loc);
  return concatenate(xs, axis);
}
Array permute_dims(const Array& x, Axes axes, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("permute_dims", x);
  if (static_cast<int64_t>(axes.size()) != x.ndim())
    throw_error<ShapeError>("permute_dims", "axes must name each of x's {} axes once, got {} of them for {}", x.ndim(),
                            axes.size(), x.aval().str());
  return transpose(x, axes);
}
Array rollaxis(const Array& x, int64_t axis, int64_t start, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("rollaxis", x);
  const int64_t n = x.ndim();
  int64_t ax = detail::canonical_axis(axis, n, "rollaxis");
  if (start < -n || start > n)
    throw_error<ShapeError>("rollaxis", "start={} must satisfy {} <= start <= {} for {}", start, -n, n, x.aval().str());
  if (start < 0) start += n;
  if (start > ax) --start;
  return moveaxis(x, ax, start);
}
std::vector<Array> unstack(const Array& x, int64_t axis, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("unstack", x);
  if (x.ndim() == 0) throw_error<ShapeError>("unstack", "needs an array of rank >= 1, got {}", x.aval().str());
  int64_t ax = detail::canonical_axis(axis, x.ndim(), "unstack");
  std::vector<Array> out;
  for (int64_t i = 0; i < x.shape()[static_cast<size_t>(ax)]; ++i)
    out.push_back(squeeze(lax::slice_in_dim(x, i, i + 1, 1, ax), {ax}));
  return out;
}
std::vector<Array> broadcast_arrays(const std::vector<Array>& xs, Loc loc) {
  ApiScope s(loc);
  std::vector<Shape> shapes;
  for (const Array& x : xs) {
    stats_check_valid("broadcast_arrays", x);
    shapes.push_back(x.shape());
  }
  Shape to = broadcast_shapes(shapes, "broadcast_arrays");
  std::vector<Array> out;
  for (const Array& x : xs) out.push_back(x.shape() == to ? x : broadcast_to(x, to));
  return out;
}
Array ediff1d(const Array& x, std::optional<Array> to_end, std::optional<Array> to_begin, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("ediff1d", x);
  Array a = ravel(x);
  const int64_t n = a.shape()[0];
  Array r = n > 0 ? lax::sub(lax::slice_in_dim(a, 1, n), lax::slice_in_dim(a, 0, n - 1)) : a;
  if (to_begin) r = concatenate({ravel(astype(*to_begin, a.dtype())), r}, 0);
  if (to_end) r = concatenate({r, ravel(astype(*to_end, a.dtype()))}, 0);
  return r;
}
Array lexsort(const std::vector<Array>& keys, int64_t axis, Loc loc) {
  ApiScope s(loc);
  if (keys.empty()) throw_error<TypeError>("lexsort", "needs at least one key");
  for (const Array& k : keys) {
    stats_check_valid("lexsort", k, "a key that is an");
    if (k.shape() != keys[0].shape())
      throw_error<ShapeError>("lexsort", "all keys must have one shape, got {} and {}", keys[0].aval().str(),
                              k.aval().str());
  }
  const DType it = detail::default_int_dtype();
  if (keys[0].ndim() == 0) return Array::scalar_int(0, it);
  int64_t ax = detail::canonical_axis(axis, keys[0].ndim(), "lexsort");
  std::vector<Array> ops(keys.rbegin(), keys.rend());  // the last key first
  ops.push_back(lax::broadcasted_iota(it, keys[0].shape(), ax));
  return lax::sort(ops, ax, true, static_cast<int64_t>(keys.size())).back();
}
Array matvec(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("matvec", x1);
  stats_check_valid("matvec", x2);
  if (x1.ndim() < 2 || x2.ndim() < 1)
    throw_error<ShapeError>("matvec", "takes a matrix (..., m, n) and a vector (..., n), got {} and {}",
                            x1.aval().str(), x2.aval().str());
  return squeeze(matmul(x1, expand_dims(x2, {-1})), {-1});
}
Array vecmat(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("vecmat", x1);
  stats_check_valid("vecmat", x2);
  if (x1.ndim() < 1 || x2.ndim() < 2)
    throw_error<ShapeError>("vecmat", "takes a vector (..., n) and a matrix (..., n, m), got {} and {}",
                            x1.aval().str(), x2.aval().str());
  return squeeze(matmul(expand_dims(x1, {-2}), x2), {-2});
}
std::vector<Array> diag_indices_from(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("diag_indices_from", x);
  if (x.ndim() < 2) throw_error<ShapeError>("diag_indices_from", "needs an array of rank >= 2, got {}", x.aval().str());
  for (int64_t d : x.shape())
    if (d != x.shape()[0])
      throw_error<ShapeError>("diag_indices_from", "all dimensions must be equal, got {}", x.aval().str());
  return diag_indices(x.shape()[0], x.ndim());
}
std::pair<Array, Array> tril_indices_from(const Array& x, int64_t k, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("tril_indices_from", x);
  if (x.ndim() != 2) throw_error<ShapeError>("tril_indices_from", "takes a 2-D array, got {}", x.aval().str());
  return tril_indices(x.shape()[0], k, x.shape()[1]);
}
std::pair<Array, Array> triu_indices_from(const Array& x, int64_t k, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("triu_indices_from", x);
  if (x.ndim() != 2) throw_error<ShapeError>("triu_indices_from", "takes a 2-D array, got {}", x.aval().str());
  return triu_indices(x.shape()[0], k, x.shape()[1]);
}

// --- polynomials ---
Array polyadd(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  auto [p, q] = more_poly_pair("polyadd", a, b, false);
  if (q.shape()[0] > p.shape()[0]) std::swap(p, q);  // p the longer; q added to its last coefficients
  const int64_t pad = p.shape()[0] - q.shape()[0];
  if (pad > 0) q = concatenate({zeros({pad}, q.dtype()), q}, 0);
  return add(p, q);
}
Array polysub(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  auto [p, q] = more_poly_pair("polysub", a, b, false);
  return polyadd(p, negative(q));
}
Array polymul(const Array& a, const Array& b, bool trim, Loc loc) {
  ApiScope s(loc);
  auto [p, q] = more_poly_pair("polymul", a, b, true);
  if (trim && (p.shape()[0] > 1 || q.shape()[0] > 1)) {
    p = more_trim_leading("polymul", p);
    q = more_trim_leading("polymul", q);
  }
  if (p.shape()[0] == 0) p = zeros({1}, q.dtype());
  if (q.shape()[0] == 0) q = zeros({1}, p.dtype());
  return convolve(p, q, "full");
}
Array polyder(const Array& p, int64_t m, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("polyder", p);
  if (p.ndim() != 1) throw_error<ShapeError>("polyder", "coefficients must be 1-D, got {}", p.aval().str());
  if (m < 0) throw_error<ShapeError>("polyder", "the order of the derivative must be >= 0, got {}", m);
  Array f = stats_inexact(p);
  if (m == 0) return f;
  const int64_t n = f.shape()[0];
  const DType d = f.dtype();
  if (m >= n) return zeros({0}, d);  // every coefficient differentiated away
  // coeff[j] = prod_{i < m} (m + j - i) for j in [0, n - m): the falling factorials, highest power last.
  Array grid = subtract(expand_dims(arange(static_cast<double>(m), static_cast<double>(std::max(n, m)), 1.0, d), {0}),
                        expand_dims(arange(static_cast<double>(m), d), {1}));
  Array coeff = prod(grid, {0});
  return multiply(lax::slice_in_dim(f, 0, std::max<int64_t>(n - m, 0)), flip(coeff));
}
Array polyint(const Array& p, int64_t m, std::optional<Array> k, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("polyint", p);
  if (p.ndim() != 1) throw_error<ShapeError>("polyint", "coefficients must be 1-D, got {}", p.aval().str());
  if (m < 0) throw_error<ShapeError>("polyint", "the order of the integral must be >= 0, got {}", m);
  Array kk = k ? *k : Array(0);
  stats_check_valid("polyint", kk, "a k that is an");
  DType d = stats_util::stats_inexact_of(result_type({p, kk}));
  Array f = astype(p, d);
  kk = astype(atleast_1d(kk), d);
  if (kk.ndim() != 1 || (kk.shape()[0] != 1 && kk.shape()[0] != m))
    throw_error<ShapeError>("polyint", "k must be a scalar or a 1-D array of length 1 or m={}, got {}", m,
                            k ? k->aval().str() : "");
  if (kk.shape()[0] == 1 && m != 1) kk = lax::full({m}, reshape(kk, {}));
  if (m == 0) return f;
  const int64_t n = f.shape()[0];
  // The coefficients' divisors come from an m x (n + m) grid (as JAX's): bound it.
  if (m > (int64_t{1} << 24) / std::max<int64_t>(n + m, 1))
    throw_error<ShapeError>("polyint", "an integral of order m={} of {} coefficients is too large", m, n);
  Array grid = subtract(expand_dims(arange(static_cast<double>(n + m), d), {0}),
                        expand_dims(arange(static_cast<double>(m), d), {1}));
  Array coeff = flip(prod(maximum(more_lit(1, d), grid), {0}));
  return divide(concatenate({f, kk}, 0), coeff);
}

// --- window functions ---
Array bartlett(int64_t M, Loc loc) {
  ApiScope s(loc);
  return make_window(M, [&](const Array& n, double m1) {
    return subtract(Array(1.0),
                    divide(abs(subtract(add(multiply(Array(2.0), n), Array(1.0)), Array(m1 + 1))), Array(m1)));
  });
}
Array blackman(int64_t M, Loc loc) {
  ApiScope s(loc);
  return make_window(M, [&](const Array& n, double m1) {
    Array a = cos(divide(multiply(Array(2 * std::numbers::pi), n), Array(m1)));
    Array b = cos(divide(multiply(Array(4 * std::numbers::pi), n), Array(m1)));
    return add(subtract(Array(0.42), multiply(Array(0.5), a)), multiply(Array(0.08), b));
  });
}
Array hamming(int64_t M, Loc loc) {
  ApiScope s(loc);
  return make_window(M, [&](const Array& n, double m1) {
    return subtract(Array(0.54),
                    multiply(Array(0.46), cos(divide(multiply(Array(2 * std::numbers::pi), n), Array(m1)))));
  });
}
Array hanning(int64_t M, Loc loc) {
  ApiScope s(loc);
  return make_window(M, [&](const Array& n, double m1) {
    return multiply(Array(0.5), subtract(Array(1.0), cos(divide(multiply(Array(2 * std::numbers::pi), n), Array(m1)))));
  });
}

}  // namespace jitx::numpy

// --- selection, filling and reshaping ---
namespace jitx::numpy {
namespace {
// v (flattened) repeated to n elements.
Array more_tile_to_size(const Array& v, int64_t n) {
  Array r = ravel(v);
  const int64_t k = r.shape()[0];
  if (k == n) return r;
  if (k == 0) throw_error<ShapeError>("tile_to_size", "cannot repeat an empty array to {} elements", n);
  return lax::slice_in_dim(tile(r, {(n + k - 1) / k}), 0, n);
}
Array more_concrete(const char* op, const Array& x, const char* why) {
  if (x.is_tracer()) throw_error<TracerError>(op, "{} (JAX's ConcretizationTypeError)", why);
  return x;
}
}  // namespace

Array resize(const Array& a, Shape new_shape, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("resize", a);
  for (int64_t d : new_shape)
    if (d < 0) throw_error<ShapeError>("resize", "all of new_shape must be >= 0, got {}", detail::shape_str(new_shape));
  Array flat = ravel(a);
  int64_t n = 1;
  for (int64_t d : new_shape)
    if (d != 0 && n > (int64_t{1} << 62) / d)
      throw_error<ShapeError>("resize", "new_shape {} has too many elements", detail::shape_str(new_shape));
    else
      n *= d;
  if (flat.shape()[0] == 0 || n == 0) return zeros(new_shape, a.dtype());
  return reshape(more_tile_to_size(flat, n), new_shape);
}

Array trim_zeros(const Array& filt, std::string_view trim, Axes axes, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("trim_zeros", filt);
  more_concrete("trim_zeros", filt, "how many zeros to trim depends on the values");
  const bool front = trim.find_first_of("fF") != std::string_view::npos;
  const bool back = trim.find_first_of("bB") != std::string_view::npos;
  if (filt.ndim() == 0) throw_error<ShapeError>("trim_zeros", "needs an array of rank >= 1, got {}", filt.aval().str());
  std::vector<int64_t> ax;
  if (axes.empty())
    for (int64_t i = 0; i < filt.ndim(); ++i) ax.push_back(i);
  else
    for (int64_t a : axes) ax.push_back(detail::canonical_axis(a, filt.ndim(), "trim_zeros"));
  if (!front && !back) return filt;
  Array out = filt;
  Array nz = not_equal(filt, Array(0));
  for (int64_t a : ax) {
    Axes others;
    for (int64_t i = 0; i < filt.ndim(); ++i)
      if (i != a) others.push_back(i);
    std::vector<uint8_t> mask = astype(others.empty() ? nz : any(nz, others), DType::uint8).to_vector<uint8_t>();
    int64_t lo = 0, hi = static_cast<int64_t>(mask.size());
    bool anyset = std::any_of(mask.begin(), mask.end(), [](uint8_t m) { return m != 0; });
    if (!anyset) {
      lo = hi = 0;
    } else {
      if (front)
        while (!mask[static_cast<size_t>(lo)]) ++lo;
      if (back)
        while (!mask[static_cast<size_t>(hi - 1)]) --hi;
    }
    out = lax::slice_in_dim(out, lo, hi, 1, a);
  }
  return out;
}

Array compress(const Array& condition, const Array& a, std::optional<int64_t> axis, std::optional<int64_t> size,
               const Array& fill_value, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("compress", condition, "a condition that is an");
  stats_check_valid("compress", a);
  stats_check_valid("compress", fill_value, "a fill_value that is an");
  Array cond = astype(condition, DType::bool_);
  if (cond.ndim() != 1) throw_error<ShapeError>("compress", "condition must be 1-D, got {}", condition.aval().str());
  int64_t ax = 0;
  Array arr = a;
  if (!axis) {
    arr = ravel(a);
  } else {
    ax = detail::canonical_axis(*axis, a.ndim(), "compress");
    arr = moveaxis(a, ax, 0);
  }
  const int64_t n = arr.shape()[0], c = cond.shape()[0];
  Array extra = lax::slice_in_dim(cond, std::min(n, c), c);
  cond = lax::slice_in_dim(cond, 0, std::min(n, c));
  arr = lax::slice_in_dim(arr, 0, std::min(n, c));
  Array result;
  if (!size) {
    more_concrete("compress", condition, "the number of slices kept depends on the condition: pass a size=");
    more_concrete("compress", a, "the number of slices kept depends on the condition: pass a size=");
    if (any(extra).item<bool>())
      throw_error<ShapeError>("compress", "condition has true entries past a's {} slices along the axis", n);
    result = take(arr, flatnonzero(cond), 0, "clip");
  } else {
    if (*size < 0 || *size > arr.shape()[0])
      throw_error<ShapeError>("compress", "size must be in [0, {}] (a's slices along the axis), got {}", arr.shape()[0],
                              *size);
    Shape mshape(static_cast<size_t>(arr.ndim()), 1);
    mshape[0] = cond.shape()[0];
    Array filled = where(reshape(cond, mshape), arr, astype(fill_value, arr.dtype()));
    // The kept slices first, in order (a stable sort of the condition, descending), then the filled ones.
    Array order =
        lax::sort({astype(logical_not(cond), DType::int32), lax::iota(DType::int32, cond.shape()[0])}, 0, true, 1)[1];
    result = lax::slice_in_dim(take(filled, order, 0, "clip"), 0, *size);
  }
  return ax == 0 ? result : moveaxis(result, 0, ax);
}

Array extract(const Array& condition, const Array& arr, std::optional<int64_t> size, const Array& fill_value, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("extract", condition, "a condition that is an");
  stats_check_valid("extract", arr);
  return compress(ravel(condition), ravel(arr), std::nullopt, size, fill_value);
}

Array choose(const Array& a, const std::vector<Array>& choices, std::string_view mode, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("choose", a);
  if (!is_integer(a.dtype())) throw_error<TypeError>("choose", "a must be an integer array, got {}", a.aval().str());
  if (choices.empty()) throw_error<ShapeError>("choose", "needs at least one choice");
  for (const Array& c : choices) stats_check_valid("choose", c, "a choice that is an");
  const int64_t n = static_cast<int64_t>(choices.size());
  Array idx;
  if (mode == "raise") {
    more_concrete("choose", a, "mode='raise' checks the indices' values: use mode='wrap' or 'clip' under jit");
    if (any(logical_or(less(a, Array(0)), greater_equal(a, Array::scalar_int(n, a.dtype())))).item<bool>())
      throw_error<ShapeError>("choose", "an entry of a is outside [0, {}) (the number of choices)", n);
    idx = a;
  } else if (mode == "wrap") {
    idx = remainder(a, Array::scalar_int(n, a.dtype()));
  } else if (mode == "clip") {
    idx = clip(a, Array::scalar_int(0, a.dtype()), Array::scalar_int(n - 1, a.dtype()));
  } else {
    throw_error<TypeError>("choose", "mode must be 'raise', 'wrap' or 'clip', got '{}'", mode);
  }
  std::vector<Array> all{idx};
  all.insert(all.end(), choices.begin(), choices.end());
  std::vector<Array> b = broadcast_arrays(all);
  Array stacked = stack(std::vector<Array>(b.begin() + 1, b.end()), 0);  // promoted to one dtype, as jnp.array
  return squeeze(take_along_axis(stacked, expand_dims(b[0], {0}), 0), {0});
}

Array fill_diagonal(const Array& a, const Array& val, bool wrap, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("fill_diagonal", a);
  stats_check_valid("fill_diagonal", val, "a val that is an");
  if (wrap) throw_error<TypeError>("fill_diagonal", "wrap=true is not implemented (as in JAX)");
  if (a.ndim() < 2) throw_error<ShapeError>("fill_diagonal", "a must be at least 2-d, got {}", a.aval().str());
  if (a.ndim() > 2)
    for (int64_t d : a.shape())
      if (d != a.shape()[0])
        throw_error<ShapeError>("fill_diagonal", "all dimensions of a must be equal, got {}", a.aval().str());
  const int64_t n = *std::min_element(a.shape().begin(), a.shape().end());
  std::vector<Array> idx = diag_indices(n, a.ndim());
  if (n == 0) return a;
  return at(a, idx).set(val.ndim() == 0 ? val : more_tile_to_size(val, n));
}

Array put(const Array& a, const Array& ind, const Array& v, std::string_view mode, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("put", a);
  stats_check_valid("put", ind, "indices that are an");
  stats_check_valid("put", v, "values that are an");
  if (!is_integer(ind.dtype())) throw_error<TypeError>("put", "indices must be integers, got {}", ind.aval().str());
  Array i = ravel(ind), vals = ravel(v);
  if (a.size() == 0 || i.size() == 0 || vals.size() == 0) return a;
  vals = more_tile_to_size(vals, i.shape()[0]);
  const Array size = Array::scalar_int(a.size(), i.dtype());
  if (mode == "clip")
    i = clip(i, Array::scalar_int(0, i.dtype()), Array::scalar_int(a.size() - 1, i.dtype()));
  else if (mode == "wrap")
    i = remainder(i, size);
  else if (!mode.empty())
    throw_error<TypeError>("put", "mode must be '' (JAX's None), 'clip' or 'wrap', got '{}'", mode);
  return at(a, unravel_index(i, a.shape())).set(vals);
}

Array put_along_axis(const Array& arr, const Array& indices, const Array& values, std::optional<int64_t> axis,
                     Loc loc) {
  ApiScope s(loc);
  stats_check_valid("put_along_axis", arr);
  stats_check_valid("put_along_axis", indices, "indices that are an");
  stats_check_valid("put_along_axis", values, "values that are an");
  Array a = axis ? arr : ravel(arr);
  if (a.ndim() != indices.ndim())
    throw_error<ShapeError>("put_along_axis", "arr and indices must have one rank, got {} and {}", a.aval().str(),
                            indices.aval().str());
  if (!is_integer(indices.dtype()))
    throw_error<TypeError>("put_along_axis", "indices must be integers, got {}", indices.aval().str());
  const int64_t ax = axis ? detail::canonical_axis(*axis, a.ndim(), "put_along_axis") : 0;
  Array vals = broadcast_to(values, indices.shape());
  std::vector<Array> idx;
  for (int64_t d = 0; d < a.ndim(); ++d)
    idx.push_back(d == ax ? indices : lax::broadcasted_iota(indices.dtype(), indices.shape(), d));
  Array r = at(a, idx).set(vals);
  return axis ? r : reshape(r, arr.shape());
}

Array unwrap(const Array& p, std::optional<Array> discont, int64_t axis, const Array& period, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("unwrap", p);
  stats_check_valid("unwrap", period, "a period that is an");
  if (p.ndim() == 0) throw_error<ShapeError>("unwrap", "needs an array of rank >= 1, got {}", p.aval().str());
  const DType dt = result_type({p, period});  // JAX's promote_dtypes(p, period)
  Array x = astype(p, dt), per = astype(period, dt);
  const int64_t ax = detail::canonical_axis(axis, x.ndim(), "unwrap");
  if (x.shape()[static_cast<size_t>(ax)] == 0) return x;
  Array interval = is_integer(per.dtype()) ? floor_divide(per, Array::scalar_int(2, per.dtype()))
                                           : divide(per, Array::scalar(2, per.dtype()));
  Array disc = discont ? *discont : divide(per, Array(2));
  Array dd = diff(x, 1, ax);
  Array ddmod = subtract(remainder(add(dd, interval), per), interval);
  ddmod = where(logical_and(equal(ddmod, negative(interval)), greater(dd, Array(0))), interval, ddmod);
  Array correct = where(less(abs(dd), disc), Array(0), subtract(ddmod, dd));
  const int64_t n = x.shape()[static_cast<size_t>(ax)];
  return concatenate({lax::slice_in_dim(x, 0, 1, 1, ax), add(lax::slice_in_dim(x, 1, n, 1, ax), cumsum(correct, ax))},
                     ax);
}

Array argpartition(const Array& a, int64_t kth, int64_t axis, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("argpartition", a);
  if (a.ndim() == 0) throw_error<ShapeError>("argpartition", "needs an array of rank >= 1, got {}", a.aval().str());
  const int64_t ax = detail::canonical_axis(axis, a.ndim(), "argpartition");
  const int64_t n = a.shape()[static_cast<size_t>(ax)];
  const int64_t k = detail::canonical_axis(kth, n, "argpartition");
  Array x = swapaxes(a, ax, -1);
  // The kth + 1 smallest through top_k of the negation (unsigned: of -(x + 1), so that 0 does not stay 0).
  Array neg = is_unsigned_integer(x.dtype()) ? negative(add(x, Array::scalar_int(1, x.dtype()))) : negative(x);
  if (x.dtype() == DType::bool_) neg = negative(astype(x, DType::int32));
  Array bottom = lax::top_k(neg, k + 1).second;
  // The others in index order: top_k of a proxy that is 0 at the chosen positions and 1 elsewhere.
  Array pos = lax::broadcasted_iota(
      DType::int32,
      [&] {
        Shape sh = x.shape();
        sh.insert(sh.end() - 1, k + 1);
        return sh;
      }(),
      x.ndim());
  Array chosen = any(equal(pos, expand_dims(bottom, {-1})), {x.ndim() - 1});
  Array proxy = where(chosen, Array(0.0f), Array(1.0f));
  Array top = lax::top_k(proxy, n - k - 1).second;
  return swapaxes(concatenate({bottom, top}, x.ndim() - 1), ax, -1);
}

Array packbits(const Array& a, std::optional<int64_t> axis, std::string_view bitorder, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("packbits", a);
  if (is_floating(a.dtype()))
    throw_error<TypeError>("packbits", "takes an integer or bool array, got {}", a.aval().str());
  if (bitorder != "big" && bitorder != "little")
    throw_error<TypeError>("packbits", "bitorder must be 'big' or 'little', got '{}'", bitorder);
  Array bits = astype(not_equal(a, Array::scalar_int(0, a.dtype())), DType::uint8);
  int64_t ax = 0;
  if (!axis)
    bits = ravel(bits);
  else
    ax = detail::canonical_axis(*axis, a.ndim(), "packbits");
  bits = swapaxes(bits, ax, -1);
  const int64_t n = bits.shape().back();
  if (n % 8) {
    std::vector<std::pair<int64_t, int64_t>> widths(static_cast<size_t>(bits.ndim()), {0, 0});
    widths.back().second = 8 - n % 8;
    bits = pad(bits, widths);
  }
  Shape sh = bits.shape();
  sh.back() /= 8;
  sh.push_back(8);
  Array shifts = arange(8.0, DType::uint8);
  if (bitorder == "big") shifts = flip(shifts);
  Array packed = astype(sum(left_shift(reshape(bits, sh), shifts), {-1}), DType::uint8);
  return swapaxes(packed, ax, -1);
}

Array unpackbits(const Array& a, std::optional<int64_t> axis, std::optional<int64_t> count, std::string_view bitorder,
                 Loc loc) {
  ApiScope s(loc);
  stats_check_valid("unpackbits", a);
  if (a.dtype() != DType::uint8) throw_error<TypeError>("unpackbits", "takes a uint8 array, got {}", a.aval().str());
  if (bitorder != "big" && bitorder != "little")
    throw_error<TypeError>("unpackbits", "bitorder must be 'big' or 'little', got '{}'", bitorder);
  Array x = axis ? a : ravel(a);
  const int64_t ax = axis ? detail::canonical_axis(*axis, a.ndim(), "unpackbits") : 0;
  x = swapaxes(x, ax, -1);
  Array masks = left_shift(Array::scalar_int(1, DType::uint8), arange(8.0, DType::uint8));
  if (bitorder == "big") masks = flip(masks);
  Array bits =
      astype(greater(bitwise_and(expand_dims(x, {-1}), masks), Array::scalar_int(0, DType::uint8)), DType::uint8);
  Shape sh = x.shape();
  sh.back() *= 8;
  bits = reshape(bits, sh);
  if (count) {
    const int64_t have = sh.back();
    if (*count > have) {
      std::vector<std::pair<int64_t, int64_t>> widths(static_cast<size_t>(bits.ndim()), {0, 0});
      widths.back().second = *count - have;
      bits = pad(bits, widths);
    } else {
      bits = lax::slice_in_dim(bits, 0, *count < 0 ? std::max<int64_t>(have + *count, 0) : *count, 1, bits.ndim() - 1);
    }
  }
  return swapaxes(bits, ax, -1);
}

Array poly(const Array& seq_of_zeros, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("poly", seq_of_zeros);
  Array z = atleast_1d(stats_inexact(seq_of_zeros));
  if (z.ndim() == 2 && z.shape()[0] == z.shape()[1] && z.shape()[0] != 0)
    throw_error<TypeError>("poly",
                           "the characteristic polynomial of a matrix needs its (complex) "
                           "eigenvalues: jitx has no complex dtypes; pass the roots");
  if (z.ndim() != 1)
    throw_error<ShapeError>("poly", "takes a 1-D array of roots (or a square matrix), got {}", z.aval().str());
  const DType d = z.dtype();
  if (z.shape()[0] == 0) return Array::scalar(1, d);
  Array c = ones({1}, d);
  for (int64_t k = 0; k < z.shape()[0]; ++k)
    c = convolve(c, concatenate({ones({1}, d), negative(lax::slice_in_dim(z, k, k + 1))}, 0), "full");
  return c;
}

std::pair<Array, Array> polydiv(const Array& u, const Array& v, Loc loc) {
  ApiScope s(loc);
  auto [uu, vv] = more_poly_pair("polydiv", u, v, true);
  const int64_t m = uu.shape()[0] - 1, n = vv.shape()[0] - 1;
  if (n < 0) throw_error<ShapeError>("polydiv", "the divisor has no coefficients");
  const DType d = uu.dtype();
  Array scale = divide(Array::scalar(1, d), lax::slice_in_dim(vv, 0, 1));
  Array q = zeros({std::max<int64_t>(m - n + 1, 1)}, d);
  for (int64_t k = 0; k <= m - n; ++k) {
    Array dk = multiply(scale, lax::slice_in_dim(uu, k, k + 1));
    q = at(q, Array::scalar_int(k, DType::int64)).set(reshape(dk, {}));
    Array upd = add(lax::slice_in_dim(uu, k, k + n + 1), multiply(negative(dk), vv));
    uu = lax::dynamic_update_slice(uu, upd, {Array::scalar_int(k, DType::int64)});
  }
  return {q, uu};
}

}  // namespace jitx::numpy
