// jitx::numpy: tril/triu, roll, tile, repeat, outer, pad, fmod, logaddexp and the NaN-aware functions,
// all composed from existing jnp/lax functions so that grad, vmap and jit apply to them unchanged.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "core/trace.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "ops/convert.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;

namespace {
Array lit(double v, DType d) { return astype(Array(v), d); }

/// JAX's promote_dtypes_inexact on one promoted operand: 64-bit ints become the default float (float64), other
/// ints and bool float32; a weak input stays weak.
Array to_inexact(const Array& v) {
  if (is_floating(v.dtype())) return v;
  DType d = dtype_bits(v.dtype()) == 64 ? detail::default_float_dtype() : DType::float32;
  return detail::convert_weak(v, d, v.weak_type());
}

Array tri_mask(const Array& x, int64_t k, bool lower, std::string_view op) {
  if (x.ndim() < 2) throw_error<ShapeError>(op, "needs an array of at least 2 dimensions, got shape {}",
                                            shape_str(x.shape()));
  Shape s = x.shape();
  int64_t r = x.ndim();
  Array rows = lax::broadcasted_iota(DType::int64, s, r - 2), cols = lax::broadcasted_iota(DType::int64, s, r - 1);
  Array d = lax::sub(cols, rows);
  Array keep = lower ? lax::le(d, Array::scalar_int(k, DType::int64)) : lax::ge(d, Array::scalar_int(k, DType::int64));
  return where(keep, x, zeros_like(x));
}

/// Host-computed gather along one axis: out[..., j, ...] = x[..., idx[j], ...].
Array take_static(const Array& x, const std::vector<int64_t>& idx, int64_t axis) {
  return take(x, array(idx, Shape{static_cast<int64_t>(idx.size())}, DType::int64), axis, "clip");
}

int64_t pmod(int64_t a, int64_t n) { return ((a % n) + n) % n; }
}  // namespace

Array tril(const Array& x, int64_t k, Loc loc) {
  ApiScope s(loc);
  return tri_mask(x, k, true, "tril");
}
Array triu(const Array& x, int64_t k, Loc loc) {
  ApiScope s(loc);
  return tri_mask(x, k, false, "triu");
}

Array roll(const Array& x, std::vector<int64_t> shifts, std::vector<int64_t> axes, Loc loc) {
  ApiScope s(loc);
  if (axes.empty()) {
    if (shifts.size() != 1) throw_error<ShapeError>("roll", "without axis, shift must be one number, got {}",
                                                    shifts.size());
    return reshape(roll(ravel(x), shifts, {0}), x.shape());
  }
  // Shifts and axes broadcast together, as NumPy's and JAX's (one axis rolled by each of several shifts).
  if (shifts.size() == 1 && axes.size() > 1) shifts.resize(axes.size(), shifts[0]);
  if (axes.size() == 1 && shifts.size() > 1) axes.resize(shifts.size(), axes[0]);
  if (shifts.size() != axes.size())
    throw_error<ShapeError>("roll", "got {} shifts for {} axes", shifts.size(), axes.size());
  Array out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = detail::canonical_axis(axes[i], x.ndim(), "roll");
    int64_t n = x.shape()[a];
    if (n == 0) continue;
    int64_t sh = pmod(shifts[i], n);
    if (sh == 0) continue;
    out = lax::concatenate({lax::slice_in_dim(out, n - sh, n, 1, a), lax::slice_in_dim(out, 0, n - sh, 1, a)}, a);
  }
  return out;
}
Array roll(const Array& x, int64_t shift, std::optional<int64_t> axis, Loc loc) {
  if (!axis) return roll(x, std::vector<int64_t>{shift}, std::vector<int64_t>{}, loc);
  return roll(x, std::vector<int64_t>{shift}, std::vector<int64_t>{*axis}, loc);
}

Array tile(const Array& x, std::vector<int64_t> reps, Loc loc) {
  ApiScope s(loc);
  for (auto r : reps)
    if (r < 0) throw_error<ShapeError>("tile", "repetitions must be >= 0, got {}", shape_str(reps));
  size_t rank = std::max<size_t>(reps.size(), x.ndim());
  reps.insert(reps.begin(), rank - reps.size(), 1);
  Shape xs = x.shape();
  xs.insert(xs.begin(), rank - xs.size(), 1);
  Array y = lax::reshape(x, xs);
  Shape big, out;
  std::vector<int64_t> bd;
  for (size_t i = 0; i < rank; ++i) {
    big.push_back(reps[i]);
    big.push_back(xs[i]);
    bd.push_back(static_cast<int64_t>(2 * i + 1));
    int64_t n;
    if (__builtin_mul_overflow(reps[i], xs[i], &n))
      throw_error<ShapeError>("tile", "reps {} times size {} on axis {} overflows int64", reps[i], xs[i], i);
    out.push_back(n);
  }
  return lax::reshape(lax::broadcast_in_dim(y, big, bd), out);
}

Array repeat(const Array& x, int64_t repeats, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  if (repeats < 0) throw_error<ShapeError>("repeat", "repeats must be >= 0, got {}", repeats);
  // JAX: a 0-d x is repeated as a 1-d one, whatever axis says.
  Array y = axis && x.ndim() > 0 ? x : ravel(x);
  int64_t a = detail::canonical_axis(x.ndim() > 0 ? axis.value_or(0) : 0, y.ndim(), "repeat");
  Shape big = y.shape(), out = y.shape();
  big.insert(big.begin() + a + 1, repeats);
  if (__builtin_mul_overflow(out[a], repeats, &out[a]))
    throw_error<ShapeError>("repeat", "repeats {} times size {} on axis {} overflows int64", repeats, y.shape()[a], a);
  std::vector<int64_t> bd;
  for (int64_t i = 0; i < y.ndim(); ++i) bd.push_back(i <= a ? i : i + 1);
  return lax::reshape(lax::broadcast_in_dim(y, big, bd), out);
}
Array repeat(const Array& x, const std::vector<int64_t>& repeats, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  // JAX: a 0-d x is repeated as a 1-d one, whatever axis says.
  Array y = axis && x.ndim() > 0 ? x : ravel(x);
  int64_t a = detail::canonical_axis(x.ndim() > 0 ? axis.value_or(0) : 0, y.ndim(), "repeat");
  int64_t n = y.shape()[a];
  if (repeats.size() == 1) return repeat(y, repeats[0], a, loc);
  if (static_cast<int64_t>(repeats.size()) != n)
    throw_error<ShapeError>("repeat", "got {} repeats for an axis of length {}", repeats.size(), n);
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (repeats[i] < 0) throw_error<ShapeError>("repeat", "repeats must be >= 0, got {}", repeats[i]);
    if (repeats[i] > INT64_MAX / 4 - total)
      throw_error<ShapeError>("repeat", "the repeats add up to more elements than an axis can hold");
    total += repeats[i];
  }
  Shape out_shape = y.shape();
  out_shape[a] = total;
  detail::checked_num_elements(out_shape, y.dtype(), "repeat");
  std::vector<int64_t> idx;
  try {
    idx.reserve(static_cast<size_t>(total));  // the gather's index, one entry per output position
  } catch (const std::exception&) {
    throw_error<RuntimeError>("repeat", "cannot allocate the index of {} repeated positions", total);
  }
  for (int64_t i = 0; i < n; ++i) idx.insert(idx.end(), repeats[i], i);
  return take_static(y, idx, a);
}

Array outer(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  return multiply(expand_dims(ravel(a), {1}), expand_dims(ravel(b), {0}));
}

namespace {
/// JAX's lax.integer_pow: x^n by binary exponentiation (n's bits from the lowest, squaring x between them), 1 / x^-n
/// for a negative n; integers wrap as their multiplications do.
Array integer_pow(Array x, int64_t n) {
  if (n == 0) return full_like(x, 1.0);
  bool reciprocal = n < 0;
  uint64_t m = reciprocal ? uint64_t{0} - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  std::optional<Array> acc;
  while (m > 0) {
    if (m & 1) acc = acc ? lax::mul(*acc, x) : x;
    m >>= 1;
    if (m > 0) x = lax::mul(x, x);
  }
  return reciprocal ? lax::div(full_like(*acc, 1.0), *acc) : *acc;
}
}  // namespace

Array power(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  if (!x.valid() || !y.valid()) throw_error<TypeError>("power", "got an empty (default-constructed) Array");
  // A concrete integer (or bool) exponent of one element, as a C++ integer is: JAX's operator.index path,
  // lax.integer_pow in x's own type (bool as int32), exact for every exponent (3^64 wraps as int32 multiplication
  // does), and no negative exponent for integers.
  if (!y.is_tracer() && y.ndim() == 0 && (is_integer(y.dtype()) || is_bool(y.dtype()))) {
    int64_t n = is_unsigned_integer(y.dtype()) ? static_cast<int64_t>(y.item<uint64_t>()) : y.item<int64_t>();
    Array b = is_bool(x.dtype()) ? lax::convert_element_type(x, DType::int32) : x;
    if (!is_floating(b.dtype()) && n < 0)
      throw_error<TypeError>("power", "integers cannot be raised to negative powers: got {} ** {}",
                             dtype_name(x.dtype()), n);
    return integer_pow(b, n);
  }
  auto [a, b] = promote_numeric(x, y, "power");
  if (is_floating(a.dtype()) && !is_floating(y.dtype())) {
    // An integer exponent, differentiated as JAX's lax.pow with one: 0 where y = 0 (not 0 * x^-1, NaN at x = 0;
    // pow sees exponent 1 there, so no NaN reaches the derivative through the discarded branch).
    Array y0 = lax::eq(b, lax::convert_element_type(Array(0), b.dtype()));
    Array one = lax::convert_element_type(Array(1), a.dtype());
    return jnp::where(y0, one, lax::pow(a, jnp::where(y0, one, b)));
  }
  if (is_floating(a.dtype())) return lax::pow(a, b);
  // Integers: JAX's binary exponentiation over the exponent's low 6 bits only (pow(-7, INT32_MIN) = 1); pow(0, y)
  // is 0 for y != 0 and 1 for y = 0. (lax::pow refuses integers, as JAX's.)
  Array zero = lax::convert_element_type(Array(0), b.dtype()), one = lax::convert_element_type(Array(1), b.dtype());
  Array acc = jnp::where(lax::bitwise_and(lax::eq(a, zero), lax::ne(b, zero)), zero, one);
  for (int bit = 0; bit < 6; ++bit, a = lax::mul(a, a), b = lax::shift_right_logical(b, one))
    acc = jnp::where(lax::ne(lax::bitwise_and(b, one), zero), lax::mul(acc, a), acc);
  return acc;
}

Array fmod(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  // bools run in int32, as jnp.fmod does (promoted together first: a bool next to an int8 is int8).
  auto [a, b] = promote_numeric(x, y, "fmod");
  // Integer division by zero: JAX divides by 1 there (fmod(x, 0) = 0), not XLA's rem (which gives x); only where
  // the result type is an integer one (bool % bool stays XLA's rem, fmod(True, False) = 1, as in JAX).
  if (!is_floating(b.dtype()) && !(is_bool(x.dtype()) && is_bool(y.dtype()))) {
    // The literals take b's weak type, so that fmod of weak ints stays weak (fmod(7, 3) + int8 is int8).
    Array zero = detail::convert_weak(Array(0), b.dtype(), b.weak_type());
    Array one = detail::convert_weak(Array(1), b.dtype(), b.weak_type());
    b = where(lax::eq(b, zero), one, b);
  }
  return lax::rem(a, b);
}

Array logaddexp(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a0, b0] = promote_and_broadcast(x, y, "logaddexp");
  Array a = to_inexact(a0);
  Array b = to_inexact(b0);
  Array amax = lax::max(a, b);
  Array delta = lax::sub(a, b);
  // min - max rather than -|a - b|: the same value, and at a tie its derivative is 0 (max and min split their
  // tangent evenly there), so the derivative is 1/2 for each operand, as JAX's rule gives (-|a - b|'s kink gave
  // all of it to one side).
  // (inf, inf) and (-inf, -inf) make delta NaN: x + y gives the right infinity (and NaN stays NaN).
  return lax::select(lax::ne(delta, delta), lax::add(a, b),
                     lax::add(amax, lax::log1p(lax::exp(lax::sub(lax::min(a, b), amax)))));
}

Array nan_to_num(const Array& x, double nan, std::optional<double> posinf, std::optional<double> neginf, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return x;
  double big = x.dtype() == DType::float64   ? DBL_MAX
               : x.dtype() == DType::float32 ? double(FLT_MAX)
               : x.dtype() == DType::float16 ? 65504.0
                                             : 3.3895313892515355e38;
  DType d = x.dtype();
  Array out = where(isnan(x), lit(nan, d), x);
  out = where(lax::eq(x, lit(INFINITY, d)), lit(posinf.value_or(big), d), out);
  return where(lax::eq(x, lit(-INFINITY, d)), lit(neginf.value_or(-big), d), out);
}

Array nansum(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return sum(x, axes, keepdims);
  return sum(where(isnan(x), zeros_like(x), x), axes, keepdims);
}
Array nanmean(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return mean(x, axes, keepdims);
  Array ok = logical_not(isnan(x));
  Array total = sum(where(ok, x, zeros_like(x)), axes, keepdims);
  Array count = astype(sum(ok, axes, keepdims), total.dtype());
  return divide(total, count);  // an all-NaN slice gives 0/0 = NaN, as in JAX
}
Array nanmax(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return max(x, axes, keepdims);
  Array nanm = isnan(x);
  Array r = max(where(nanm, lit(-INFINITY, x.dtype()), x), axes, keepdims);
  return where(all(nanm, axes, keepdims), lit(NAN, x.dtype()), r);
}
Array nanmin(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return min(x, axes, keepdims);
  Array nanm = isnan(x);
  Array r = min(where(nanm, lit(INFINITY, x.dtype()), x), axes, keepdims);
  return where(all(nanm, axes, keepdims), lit(NAN, x.dtype()), r);
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Loc loc) {
  ApiScope s(loc);
  auto [x0, y0] = promote_and_broadcast(a, b, "isclose");
  // As JAX: integers and bools are compared as floats (int32 through float32), the tolerances in that dtype, and
  // x == y counts as close whatever the tolerances (infinities are close only to themselves).
  Array x = to_inexact(x0), y = to_inexact(y0);
  DType d = x.dtype();
  Array in_range = lax::le(lax::abs(lax::sub(x, y)), lax::add(lit(atol, d), lax::mul(lit(rtol, d), lax::abs(y))));
  Array out = logical_or(lax::eq(x, y), logical_and(isfinite(y), in_range));
  if (equal_nan) out = logical_or(out, logical_and(isnan(x), isnan(y)));
  return out;
}
Array allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Loc loc) {
  ApiScope s(loc);
  return all(isclose(a, b, rtol, atol, equal_nan, loc));
}

Array searchsorted(const Array& a, const Array& v, std::string_view side, Loc loc) {
  ApiScope s(loc);
  if (a.ndim() != 1) throw_error<ShapeError>("searchsorted", "a must be 1-D, got shape {}", shape_str(a.shape()));
  if (side != "left" && side != "right")
    throw_error<TypeError>("searchsorted", "side must be 'left' or 'right', got '{}'", side);
  DType d = result_type({a, v});
  Array sa = astype(a, d), sv = astype(v, d);
  Shape vs = sv.shape();
  int64_t n = a.shape()[0];
  // A total order with NaNs last (as JAX's sort): lt(p, q) = p < q, or p is a number and q is NaN.
  auto lt = [](const Array& p, const Array& q) {
    return logical_or(less(p, q), logical_and(logical_not(isnan(p)), isnan(q)));
  };
  // JAX's default method: a binary search per value, bit_width(n) steps of one gather and one compare (a table of
  // every value against every element, as before, needed n * size(v) memory: 320 GB for 200k of each).
  DType it = n < (int64_t{1} << 31) ? DType::int32 : DType::int64;
  Array lo = zeros(vs, it), hi = full(vs, static_cast<double>(n), it);
  for (int64_t m = n; m > 0; m >>= 1) {
    Array mid = lax::shift_right_logical(add(lo, hi), Array::scalar_int(1, it));
    Array am = take(sa, mid, 0, "clip");
    Array right = side == "left" ? lt(am, sv) : logical_not(lt(sv, am));  // the answer is past mid
    Array active = less(lo, hi);
    lo = where(logical_and(active, right), add(mid, Array::scalar_int(1, it)), lo);
    hi = where(logical_and(active, logical_not(right)), mid, hi);
  }
  return astype(lo, DType::int32);
}

std::vector<Array> nonzero(const Array& x, std::optional<int64_t> size, int64_t fill_value, Loc loc) {
  ApiScope s(loc);
  if (!x.valid()) throw_error<TypeError>("nonzero", "got an empty (default-constructed) Array");
  if (x.ndim() == 0)
    throw_error<ShapeError>("nonzero", "is not defined for 0-d arrays (as JAX); use argwhere, or reshape to 1-d");
  if (size && *size < 0) throw_error<ShapeError>("nonzero", "size must be >= 0, got {}", *size);
  Array m = astype(ravel(not_equal(x, zeros_like(x))), DType::int32);
  if (!size) {
    if (x.is_tracer())
      throw_error<TracerError>("nonzero", "the output size depends on the values: pass a static size= under jit "
                                          "(JAX's ConcretizationTypeError)");
    size = sum(m).item<int64_t>();
  }
  int64_t n = m.shape()[0], k = *size;
  // An empty x gives zeros whatever fill_value is (JAX's arr.size == 0 case).
  if (n == 0) return std::vector<Array>(static_cast<size_t>(x.ndim()), zeros({k}, DType::int64));
  // Element i goes to slot cumsum(m)[i] - 1 when it is nonzero; others go to slot k, which the update drops.
  Array slot = where(astype(m, DType::bool_), subtract(cumsum(m), 1), Array::scalar_int(k, DType::int32));
  Array flat = at(full({k}, double(fill_value), DType::int64), slot).set(lax::iota(DType::int64, n));
  std::vector<Array> out;
  int64_t stride = 1;
  for (int64_t d = x.ndim() - 1; d >= 0; --d) {
    Array idx = remainder(floor_divide(flat, Array::scalar_int(stride, DType::int64)),
                          Array::scalar_int(x.shape()[d], DType::int64));
    out.insert(out.begin(), idx);
    stride *= x.shape()[d];
  }
  if (x.ndim() > 0 && k > 0) {  // fill slots hold fill_value in every coordinate, as JAX
    Array valid = less(lax::iota(DType::int32, k), sum(m));
    for (auto& o : out) o = where(valid, o, Array::scalar_int(fill_value, DType::int64));
  }
  return out;
}

Array argwhere(const Array& x, std::optional<int64_t> size, int64_t fill_value, Loc loc) {
  ApiScope s(loc);
  if (!x.valid()) throw_error<TypeError>("argwhere", "got an empty (default-constructed) Array");
  if (size && *size < 0) throw_error<ShapeError>("argwhere", "size must be >= 0, got {}", *size);
  if (x.is_tracer() && !size)
    throw_error<TracerError>("argwhere", "the output size depends on the values: pass a static size= under jit "
                                         "(JAX's ConcretizationTypeError)");
  std::vector<Array> idx = nonzero(x.ndim() == 0 ? reshape(x, {1}) : x, size, fill_value);
  if (x.ndim() == 0) return zeros({idx[0].shape()[0], 0}, DType::int64);  // (count, 0), as JAX
  for (auto& i : idx) i = expand_dims(i, {1});
  return concatenate(idx, 1);
}

Array flatnonzero(const Array& x, std::optional<int64_t> size, int64_t fill_value, Loc loc) {
  ApiScope s(loc);
  if (!x.valid()) throw_error<TypeError>("flatnonzero", "got an empty (default-constructed) Array");
  if (size && *size < 0) throw_error<ShapeError>("flatnonzero", "size must be >= 0, got {}", *size);
  if (x.is_tracer() && !size)
    throw_error<TracerError>("flatnonzero", "the output size depends on the values: pass a static size= under jit "
                                            "(JAX's ConcretizationTypeError)");
  return nonzero(ravel(x), size, fill_value)[0];
}

std::vector<Array> where(const Array& cond, const NonzeroOptions& o, Loc loc) {
  ApiScope s(loc);
  if (!cond.valid()) throw_error<TypeError>("where", "got an empty (default-constructed) Array");
  if (o.size && *o.size < 0) throw_error<ShapeError>("where", "size must be >= 0, got {}", *o.size);
  if (cond.ndim() == 0) throw_error<ShapeError>("where", "one-argument where is not defined for 0-d arrays (as JAX)");
  if (cond.is_tracer() && !o.size)
    throw_error<TracerError>("where", "one-argument where: the output size depends on the values: pass a static "
                                      "size= under jit (JAX's ConcretizationTypeError)");
  return nonzero(cond, o.size, o.fill_value);
}

}  // namespace jitx::numpy
