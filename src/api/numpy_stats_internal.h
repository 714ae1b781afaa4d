// Helpers shared by jnp's math sources (numpy_stats_math.cpp, numpy_histogram.cpp): JAX's promotion of two operands
// to one inexact dtype, constants of an operand's dtype, and slices along an axis. Names are unique across src/api
// (a named namespace), so that sources sharing a unity build unit never clash.
#pragma once
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy::stats_internal {
using stats_util::stats_check_valid;
using stats_util::stats_inexact_of;

/// A constant of x's dtype (JAX's _lax_const): weak only for a weak 0-d x (JAX's weak scalar), so that a weak
/// array of another shape (an int64 array promoted with a C++ double) turns strong through it, as in JAX.
inline Array like(double v, const Array& x) {
  return detail::convert_weak(Array(v), x.dtype(), x.weak_type() && x.ndim() == 0);
}

/// JAX's promoted dtype and weak type of two operands (lattice_result_type: an integer array next to a weak float
/// gives a weak float), read from promote_and_broadcast on 0-d stand-ins.
inline std::pair<DType, bool> promoted(const Array& x, const Array& y, std::string_view op) {
  Array a = detail::convert_weak(Array(0), x.dtype(), x.weak_type());
  Array b = detail::convert_weak(Array(0), y.dtype(), y.weak_type());
  Array r = promote_and_broadcast(a, b, op).first;
  return {r.dtype(), r.weak_type()};
}

/// JAX's promote_dtypes_inexact for two operands: one float dtype, weak as JAX's lattice makes it; with
/// check_shapes (promote_args_inexact) the shapes must broadcast together.
inline std::pair<Array, Array> promote_inexact(const Array& x, const Array& y, std::string_view op,
                                               bool check_shapes = true) {
  stats_check_valid(op, x);
  stats_check_valid(op, y);
  if (check_shapes) broadcast_shapes({x.shape(), y.shape()}, op);
  auto [pd, weak] = promoted(x, y, op);
  DType d = stats_inexact_of(pd);
  return {detail::convert_weak(x, d, weak), detail::convert_weak(y, d, weak)};
}

/// x[start:stop] along axis (static bounds already in range).
inline Array slice_along(const Array& x, int64_t axis, int64_t start, int64_t stop) {
  return lax::slice_in_dim(x, start, stop, 1, axis);
}
/// x[..., i, ...] along axis, that axis removed.
inline Array index_along(const Array& x, int64_t axis, int64_t i) {
  Shape s = x.shape();
  s.erase(s.begin() + axis);
  return lax::reshape(slice_along(x, axis, i, i + 1), s);
}
/// x[1:] - x[:-1] along axis.
inline Array diff_along(const Array& x, int64_t axis) {
  int64_t n = x.shape()[axis];
  if (n == 0) return x;
  return subtract(slice_along(x, axis, 1, n), slice_along(x, axis, 0, n - 1));
}
/// x with axis `from` moved to the last position.
inline Array axis_to_last(const Array& x, int64_t from, std::string_view op) {
  int64_t a = detail::canonical_axis(from, x.ndim(), op);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != a) perm.push_back(i);
  perm.push_back(a);
  return lax::transpose(x, perm);
}

/// The element i of a 1-D x, negative i counting from the end.
inline Array elem(const Array& x, int64_t i) { return index_along(x, 0, i < 0 ? i + x.shape()[0] : i); }

}  // namespace jitx::numpy::stats_internal
