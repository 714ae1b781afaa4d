// jitx::numpy reductions with JAX's where= and initial= arguments, composed from the plain reductions and
// jnp.where (so grad, vmap and jit apply unchanged).
#include <array>
#include <cmath>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "core/trace.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;

namespace {
/// The where mask broadcast to x's shape (bool; it must broadcast to exactly that shape).
Array where_mask(const Array& x, const Array& w, std::string_view op) {
  if (!w.valid()) throw_error<TypeError>(op, "where must be a bool array, got an empty (default-constructed) Array");
  if (!is_bool(w.dtype()))
    throw_error<TypeError>(op, "where must be a bool array, got {} (as jnp.{}: where must be None or a boolean array)",
                           w.aval().str(), op);
  Shape b = broadcast_shapes({x.shape(), w.shape()}, op);
  if (b != x.shape())
    throw_error<ShapeError>(op, "where of shape {} does not broadcast to the input's shape {}", shape_str(w.shape()),
                            shape_str(x.shape()));
  return broadcast_to(w, x.shape());
}

/// The axes reduced (canonical, for the empty-axis check of max/min).
std::vector<int64_t> reduced_axes(const Array& x, const Axes& axes, std::string_view op) {
  std::vector<int64_t> out;
  if (axes.empty())
    for (int64_t i = 0; i < x.ndim(); ++i) out.push_back(i);
  for (auto a : axes) out.push_back(detail::canonical_axis(a, x.ndim(), op));
  return out;
}

Array scalar_initial(const Array& init, DType d, std::string_view op) {
  if (!init.valid()) throw_error<TypeError>(op, "initial is an empty (default-constructed) Array");
  if (init.ndim() != 0)
    throw_error<ShapeError>(op, "initial must be a scalar, got shape {}", shape_str(init.shape()));
  return astype(init, d);
}

void no_initial(const ReduceOptions& o, std::string_view op) {
  if (o.initial) throw_error<TypeError>(op, "takes no initial (only where), as jnp.{}", op);
}

/// sum/prod/max/min: where() fills the unselected elements with fill (the identity, or initial for max/min),
/// the plain reduction runs, and initial is combined with the result.
template <class Reduce, class Combine>
Array reduce_with(const Array& x, const Axes& axes, bool keepdims, const ReduceOptions& o, std::string_view op,
                  const Array& fill, Reduce reduce, Combine combine) {
  Array in = x;
  if (o.where) in = where(where_mask(x, *o.where, op), x, astype(fill, x.dtype()));
  Array r = reduce(in, axes, keepdims);
  if (o.initial) r = combine(scalar_initial(*o.initial, r.dtype(), op), r);
  return r;
}

/// max/min: JAX needs initial with where, and (without initial) a non-empty axis.
Array extremum(const Array& x, const Axes& axes, bool keepdims, const ReduceOptions& o, bool is_max) {
  std::string_view op = is_max ? "max" : "min";
  if (o.where && !o.initial)
    throw_error<TypeError>(op, "has no identity, so a where mask needs initial (as jnp.{}: 'reduction operation {} "
                               "does not have an identity, so to use a where mask one has to specify initial')",
                           op, op);
  if (!o.initial) return is_max ? max(x, axes, keepdims) : min(x, axes, keepdims);
  Array init = scalar_initial(*o.initial, x.dtype(), op);
  Array in = o.where ? where(where_mask(x, *o.where, op), x, init) : x;
  // An empty axis reduces to initial: pad every reduced axis with one initial element, so the reduction is never
  // empty and initial takes part exactly once.
  bool empty = false;
  for (auto a : reduced_axes(x, axes, op)) empty = empty || x.shape()[a] == 0;
  if (empty) {
    std::vector<std::array<int64_t, 3>> cfg(x.ndim(), {0, 0, 0});
    for (auto a : reduced_axes(x, axes, op)) cfg[a] = {0, 1, 0};
    in = lax::pad(in, init, cfg);
  }
  Array r = is_max ? max(in, axes, keepdims) : min(in, axes, keepdims);
  return is_max ? maximum(init, r) : minimum(init, r);
}

/// mean with a mask: (sum of the selected elements) / (their count), in float (16-bit floats in float32).
Array masked_mean(const Array& x, const Axes& axes, bool keepdims, const Array& m, DType* out_dtype) {
  // JAX's to_inexact_dtype: 64-bit ints give the default float (float64), other ints and bool float32.
  DType fd = is_floating(x.dtype())             ? x.dtype()
             : dtype_bits(x.dtype()) == 64 ? detail::default_float_dtype()
                                           : DType::float32;
  DType cd = (fd == DType::float16 || fd == DType::bfloat16) ? DType::float32 : fd;
  Array c = astype(x, cd);
  Array total = sum(where(m, c, zeros_like(c)), axes, keepdims);
  Array count = sum(astype(m, cd), axes, keepdims);
  *out_dtype = fd;
  return divide(total, count);
}
}  // namespace

Array sum(const Array& x, Axes axes, bool keepdims, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  return reduce_with(x, axes, keepdims, o, "sum", Array(0),
                     [](const Array& a, const Axes& ax, bool k) { return sum(a, ax, k); },
                     [](const Array& i, const Array& r) { return add(i, r); });
}
Array prod(const Array& x, Axes axes, bool keepdims, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  return reduce_with(x, axes, keepdims, o, "prod", Array(1),
                     [](const Array& a, const Axes& ax, bool k) { return prod(a, ax, k); },
                     [](const Array& i, const Array& r) { return multiply(i, r); });
}
Array max(const Array& x, Axes axes, bool keepdims, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  return extremum(x, axes, keepdims, o, true);
}
Array min(const Array& x, Axes axes, bool keepdims, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  return extremum(x, axes, keepdims, o, false);
}
Array all(const Array& x, Axes axes, bool keepdims, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  no_initial(o, "all");
  if (!o.where) return all(x, axes, keepdims);
  Array b = astype(x, DType::bool_);
  return all(where(where_mask(x, *o.where, "all"), b, Array(true)), axes, keepdims);
}
Array any(const Array& x, Axes axes, bool keepdims, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  no_initial(o, "any");
  if (!o.where) return any(x, axes, keepdims);
  Array b = astype(x, DType::bool_);
  return any(where(where_mask(x, *o.where, "any"), b, Array(false)), axes, keepdims);
}
Array mean(const Array& x, Axes axes, bool keepdims, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  no_initial(o, "mean");
  if (!o.where) return mean(x, axes, keepdims);
  DType fd;
  Array r = masked_mean(x, axes, keepdims, where_mask(x, *o.where, "mean"), &fd);
  return astype(r, fd);
}
Array var(const Array& x, Axes axes, bool keepdims, int64_t ddof, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  no_initial(o, "var");
  if (!o.where) return var(x, axes, keepdims, ddof);
  Array m = where_mask(x, *o.where, "var");
  DType fd;
  Array mu = masked_mean(x, axes, true, m, &fd);
  Array c = subtract(astype(x, mu.dtype()), mu);
  Array ss = sum(where(m, multiply(c, c), zeros_like(c)), axes, keepdims);
  Array n = subtract(sum(astype(m, ss.dtype()), axes, keepdims), astype(Array(static_cast<double>(ddof)), ss.dtype()));
  Array r = divide(ss, n);
  // As JAX: NaN where fewer than ddof + 1 elements are selected.
  r = where(greater(n, zeros_like(n)), r, full_like(r, NAN));
  return astype(r, fd);
}
Array std(const Array& x, Axes axes, bool keepdims, int64_t ddof, const ReduceOptions& o, Loc loc) {
  ApiScope s(loc);
  no_initial(o, "std");
  if (!o.where) return std(x, axes, keepdims, ddof);
  return sqrt(var(x, axes, keepdims, ddof, o));
}

}  // namespace jitx::numpy
