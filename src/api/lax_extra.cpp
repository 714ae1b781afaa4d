// jitx::lax functions composed from other ops: nextafter and reduce_precision (bit arithmetic on the float's
// unsigned integer image, as XLA's emitters do), associative_scan (JAX's parallel prefix) and cumlogsumexp.
// They live in the api layer because reduce_precision's derivative rule is a custom_jvp.
#include <string>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_control.h"
#include "jitx/numpy.h"

namespace jitx::lax {
using detail::ApiScope;

namespace {
/// The unsigned integer dtype of a float dtype's width.
DType bits_type(DType d) {
  switch (dtype_bits(d)) {
    case 16: return DType::uint16;
    case 32: return DType::uint32;
    default: return DType::uint64;
  }
}
/// A strongly-typed unsigned constant of dtype u holding the bit pattern v (made through the signed type of the
/// same width, since Array::scalar_int takes an int64).
Array ucst(uint64_t v, DType u) {
  switch (dtype_bits(u)) {
    case 16: return bitcast_convert_type(Array::scalar_int(static_cast<int16_t>(v), DType::int16), u);
    case 32: return bitcast_convert_type(Array::scalar_int(static_cast<int32_t>(v), DType::int32), u);
    default: return bitcast_convert_type(Array::scalar_int(static_cast<int64_t>(v), DType::int64), u);
  }
}
/// (exponent bits, explicit mantissa bits) of a float dtype.
std::pair<int, int> float_layout(DType d) {
  switch (d) {
    case DType::float16: return {5, 10};
    case DType::bfloat16: return {8, 7};
    case DType::float32: return {8, 23};
    default: return {11, 52};
  }
}
void check_float(const Array& x, const char* op) {
  if (!is_floating(x.dtype()))
    detail::throw_error<TypeError>(op, "needs a floating-point operand, got {}", x.aval().str());
}

Array reduce_precision_impl(const Array& x, int exponent_bits, int mantissa_bits) {
  DType u = bits_type(x.dtype());
  auto [src_exp, src_mant] = float_layout(x.dtype());
  int nbits = dtype_bits(x.dtype());
  Array xi = bitcast_convert_type(x, u);
  if (mantissa_bits < src_mant) {
    // Round to nearest even at the last kept mantissa bit, then truncate (XLA's EmitReducePrecisionIR).
    int shift = src_mant - mantissa_bits;
    uint64_t last = uint64_t{1} << shift;
    Array last_bit = jnp::right_shift(jnp::bitwise_and(xi, ucst(last, u)), ucst(shift, u));
    Array bias = jnp::add(last_bit, ucst((last >> 1) - 1, u));
    xi = jnp::bitwise_and(jnp::add(xi, bias), ucst(~(last - 1), u));
  }
  if (exponent_bits < src_exp) {
    uint64_t sign_mask = uint64_t{1} << (nbits - 1);
    uint64_t exp_mask = ((uint64_t{1} << src_exp) - 1) << src_mant;
    uint64_t bias = (uint64_t{1} << (src_exp - 1)) - 1;
    uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    Array e = jnp::bitwise_and(xi, ucst(exp_mask, u));
    Array overflows = jnp::greater(e, ucst((bias + reduced_bias) << src_mant, u));
    Array underflows = jnp::less_equal(e, ucst((bias - reduced_bias) << src_mant, u));
    Array signed_zero = jnp::bitwise_and(xi, ucst(sign_mask, u));
    Array signed_inf = jnp::bitwise_or(signed_zero, ucst(exp_mask, u));
    xi = jnp::where(overflows, signed_inf, jnp::where(underflows, signed_zero, xi));
  }
  Array r = bitcast_convert_type(xi, x.dtype());
  // The exponent handling turns NaNs into infinities; keep them NaN (JAX on CPU does so even with no mantissa bit).
  r = jnp::where(jnp::isnan(x), x, r);
  return r;
}

/// JAX's logaddexp, written out here: min - max rather than -|a - b|, so that ties give 1/2 to each side (max and
/// min split their tangent evenly; the kink of abs gave all of it to one side), as jnp::logaddexp.
Array logaddexp2(const Array& a, const Array& b) {
  Array amax = jnp::maximum(a, b);
  Array delta = jnp::subtract(a, b);
  return jnp::where(jnp::isnan(delta), jnp::add(a, b),
                    jnp::add(amax, jnp::log1p(jnp::exp(jnp::subtract(jnp::minimum(a, b), amax)))));
}

/// JAX's _interleave: a's entries at the even positions of the result, b's at the odd ones (zero padding added).
Array interleave(const Array& a, const Array& b, int64_t axis) {
  bool same = a.shape()[axis] == b.shape()[axis];
  std::vector<std::array<int64_t, 3>> pa(a.ndim(), {0, 0, 0}), pb(b.ndim(), {0, 0, 0});
  pa[axis] = {0, same ? 1 : 0, 1};
  pb[axis] = {1, same ? 0 : 1, 1};
  Array za = Array::scalar_int(0, a.dtype()), zb = Array::scalar_int(0, b.dtype());
  Array x = pad(a, za, pa), y = pad(b, zb, pb);
  return a.dtype() == DType::bool_ ? bitwise_or(x, y) : add(x, y);
}

using Leaves = std::vector<Array>;

Leaves scan_rec(const detail::AssociativeFn& combine, const Leaves& elems, int64_t axis) {
  int64_t n = elems[0].shape()[axis];
  if (n < 2) return elems;
  auto slices = [&](const Leaves& xs, int64_t start, int64_t limit, int64_t stride) {
    Leaves r;
    for (const auto& x : xs) r.push_back(slice_in_dim(x, start, limit, stride, axis));
    return r;
  };
  Leaves reduced = combine(slices(elems, 0, n - 1, 2), slices(elems, 1, n, 2));
  Leaves odd = scan_rec(combine, reduced, axis);
  Leaves even;
  if (n % 2 == 0) {
    Leaves trimmed;
    for (const auto& o : odd) trimmed.push_back(slice_in_dim(o, 0, o.shape()[axis] - 1, 1, axis));
    even = combine(trimmed, slices(elems, 2, n, 2));
  } else {
    even = combine(odd, slices(elems, 2, n, 2));
  }
  Leaves out;
  for (size_t i = 0; i < elems.size(); ++i) {
    Array e = concatenate({slice_in_dim(elems[i], 0, 1, 1, axis), even[i]}, axis);
    out.push_back(interleave(e, odd[i], axis));
  }
  return out;
}
}  // namespace

Array nextafter(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  check_float(x1, "nextafter");
  if (x1.dtype() != x2.dtype() || (x1.shape() != x2.shape() && x1.ndim() != 0 && x2.ndim() != 0))
    detail::throw_error<TypeError>("nextafter", "needs operands of one float dtype and shape, got {} and {}",
                                   x1.aval().str(), x2.aval().str());
  Shape shape = x1.ndim() != 0 ? x1.shape() : x2.shape();
  Array x = jnp::broadcast_to(x1, shape), y = jnp::broadcast_to(x2, shape);
  DType u = bits_type(x.dtype());
  int nbits = dtype_bits(x.dtype());
  Array xi = bitcast_convert_type(x, u), yi = bitcast_convert_type(y, u);
  Array zero = Array::scalar(0.0, x.dtype());
  // Away from zero (the magnitude grows) exactly when y lies beyond x on x's side of zero.
  Array away = jnp::equal(lt(x, y), gt(x, zero));
  Array stepped = jnp::where(away, jnp::add(xi, ucst(1, u)), jnp::subtract(xi, ucst(1, u)));
  Array tiny = jnp::bitwise_or(jnp::bitwise_and(yi, ucst(uint64_t{1} << (nbits - 1), u)), ucst(1, u));
  Array r = jnp::where(eq(x, zero), tiny, stepped);
  r = jnp::where(eq(x, y), yi, r);
  r = jnp::where(jnp::logical_or(jnp::isnan(x), jnp::isnan(y)), bitcast_convert_type(add(x, y), u), r);
  return bitcast_convert_type(r, x.dtype());
}

Array reduce_precision(const Array& x, int exponent_bits, int mantissa_bits, Loc loc) {
  ApiScope s(loc);
  check_float(x, "reduce_precision");
  if (exponent_bits < 1 || mantissa_bits < 0)
    detail::throw_error<TypeError>("reduce_precision", "needs exponent_bits >= 1 and mantissa_bits >= 0, got {} "
                                    "and {}", exponent_bits, mantissa_bits);
  // Derivative 1 (straight through). JAX also rounds the tangent (cotangent) with reduce_precision; that rule is
  // not expressible as a transposable composite here, so tangents that are not representable in the reduced
  // format differ from JAX's (see the README).
  auto f = custom_jvp([=](const Array& v) { return reduce_precision_impl(v, exponent_bits, mantissa_bits); },
                      [=](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                        return std::make_pair(reduce_precision_impl(std::get<0>(p), exponent_bits, mantissa_bits),
                                              std::get<0>(t));
                      });
  return f(x);
}

Array cumlogsumexp(const Array& x, int64_t axis, bool reverse, Loc loc) {
  ApiScope s(loc);
  check_float(x, "cumlogsumexp");
  if (axis < 0)
    detail::throw_error<ShapeError>("cumlogsumexp", "got axis {}: lax operations do not allow negative axes, as "
                                                    "JAX's", axis);
  axis = detail::canonical_axis(axis, x.ndim(), "cumlogsumexp");
  // As JAX lowers it on CPU: an associative scan of logaddexp.
  detail::AssociativeFn fn = [](const Leaves& a, const Leaves& b) { return Leaves{logaddexp2(a[0], b[0])}; };
  return detail::associative_scan_flat(fn, {x}, reverse, axis, "cumlogsumexp")[0];
}

}  // namespace jitx::lax

namespace jitx::detail {

std::vector<Array> associative_scan_flat(const AssociativeFn& fn, std::vector<Array> elems, bool reverse,
                                         int64_t axis, const std::string& op) {
  if (elems.empty()) return elems;
  if (elems[0].ndim() == 0)
    throw_error<ShapeError>(op, "needs arrays with at least one axis to scan over, got {}", elems[0].aval().str());
  int64_t ax = canonical_axis(axis, elems[0].ndim(), op);
  int64_t n = elems[0].shape()[ax];
  for (const auto& e : elems) {
    if (e.ndim() <= ax || e.shape()[ax] != n)
      throw_error<ShapeError>(op, "needs every leaf to have the same length {} along axis {}, got {}", n, axis,
                              e.aval().str());
  }
  if (reverse)
    for (auto& e : elems) e = lax::rev(e, {ax});
  AssociativeFn combine = [&](const std::vector<Array>& a, const std::vector<Array>& b) {
    auto c = fn(a, b);
    if (c.size() != a.size())
      throw_error<TypeError>(op, "fn must return as many leaves as elems has ({}), got {}", a.size(), c.size());
    for (size_t i = 0; i < c.size(); ++i)
      if (c[i].shape() != a[i].shape() || c[i].dtype() != a[i].dtype())
        throw_error<TypeError>(op, "fn must keep each leaf's shape and dtype: leaf {} is {}, fn gave {}", i,
                               a[i].aval().str(), c[i].aval().str());
    return c;
  };
  auto out = lax::scan_rec(combine, elems, ax);
  if (reverse)
    for (auto& e : out) e = lax::rev(e, {ax});
  return out;
}

}  // namespace jitx::detail
