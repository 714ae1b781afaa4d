// Helpers shared by jax.scipy's sources (scipy_special.cpp, scipy_stats.cpp): JAX's promote_args_inexact. Names
// are unique across src/api, so that sources sharing a unity build unit never clash.
#pragma once
#include <functional>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "jitx/numpy.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"

namespace jitx::scipy_util {

/// The arguments after JAX's promote_args_inexact: one inexact dtype (integers and bool promoted: int64 to
/// float64, others to float32), broadcast to one shape, strong; `weak` records whether every input was weakly
/// typed (scipy_finish makes the result weak again, so that it defers to a strong operand as JAX's does).
struct ScipyPromoted {
  std::vector<Array> v;
  bool weak = true;
  DType dtype = DType::float32;
};
inline ScipyPromoted scipy_promote(std::string_view op, std::initializer_list<std::reference_wrapper<const Array>> in) {
  ScipyPromoted p;
  std::vector<Array> xs;
  std::vector<Shape> shapes;
  int pos = 0;
  for (const Array& a : in) {
    if (!a.valid()) detail::throw_error<TypeError>(op, "argument {} is an empty (default-constructed) Array", pos);
    xs.push_back(a);
    shapes.push_back(a.shape());
    p.weak = p.weak && a.weak_type();
    ++pos;
  }
  p.dtype = numpy::stats_util::stats_inexact_of(numpy::result_type(xs));
  Shape sh = numpy::broadcast_shapes(shapes, op);
  for (const Array& a : xs) p.v.push_back(numpy::broadcast_to(detail::convert_weak(a, p.dtype, false), sh));
  return p;
}
inline Array scipy_finish(const ScipyPromoted& p, const Array& r) {
  return p.weak ? detail::convert_weak(r, r.dtype(), true) : r;
}
/// A strong scalar of dtype d.
inline Array scipy_cst(double v, DType d) { return Array::scalar(v, d); }

/// The one inexact dtype JAX's promote_dtypes_inexact gives two arrays of any shapes (0-d stand-ins promoted).
inline DType inexact_common(const Array& a, const Array& b, std::string_view op) {
  Array za = numpy::zeros({}, a.dtype()), zb = numpy::zeros({}, b.dtype());
  return scipy_promote(op, {za, zb}).v[0].dtype();
}

/// jnp.polyval as JAX's special functions use it: Horner's rule from 0 (0 * x + p[0], ...), the coefficients
/// rounded to x's dtype (numpy arrays of x's dtype in JAX).
inline Array horner(const std::vector<double>& p, const Array& x) {
  Array y = jitx::zeros_like(x);
  for (double c : p) y = y * x + Array::scalar(c, x.dtype());
  return y;
}

}  // namespace jitx::scipy_util
