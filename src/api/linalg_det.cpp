// jnp.linalg.det as JAX defines it: the closed forms for 2x2 and 3x3 matrices; for other sizes sign * exp(log|det|)
// from slogdet, with JAX's JVP rule (its _det_jvp), trace(cofactor_solve(a, da)), which stays finite at singular
// matrices: it is the adjugate's at rank n - 1 and 0 below (det * trace(a^-1 da) would be 0 * inf there). It lives
// in the api layer because the rule is a custom_jvp.
#include <tuple>

#include "core/errors.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_linalg.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "ops/linalg_util.h"

namespace jitx::numpy::linalg {
using namespace jitx::detail::linalg_util;

namespace {
/// JAX's closed forms for 2x2 and 3x3 determinants, term for term in its order: their gradient is the cofactor
/// matrix everywhere, singular matrices included.
Array det_small(const Array& a) {
  int64_t nd = a.ndim(), n = a.shape().back();
  Shape batch(a.shape().begin(), a.shape().end() - 2);
  auto at = [&](int64_t i, int64_t j) {
    std::vector<int64_t> start(static_cast<size_t>(nd), 0), limit = a.shape();
    start[nd - 2] = i, start[nd - 1] = j, limit[nd - 2] = i + 1, limit[nd - 1] = j + 1;
    return lax::reshape(lax::slice(a, start, limit), batch);
  };
  if (n == 2) return at(0, 0) * at(1, 1) - at(0, 1) * at(1, 0);
  return at(0, 0) * at(1, 1) * at(2, 2) + at(0, 1) * at(1, 2) * at(2, 0) + at(0, 2) * at(1, 0) * at(2, 1) -
         at(0, 2) * at(1, 1) * at(2, 0) - at(0, 0) * at(1, 2) * at(2, 1) - at(0, 1) * at(1, 0) * at(2, 2);
}

/// JAX's _cofactor_solve for n >= 2: (det a, x) with x = det(a) a^-1 b where a is invertible, the adjugate times b
/// where a has rank n - 1, and 0 where its rank is lower. From a's LU (pivoted, so that a rank n - 1 matrix has
/// its zero pivot last): partial_det = the running products of U's diagonal (with the permutation's sign), U's
/// last diagonal element replaced by 1 / partial_det[n - 2]; a solve with that U that overflows marks rank < n - 1.
std::pair<Array, Array> cofactor_solve(const Array& a, const Array& b) {
  int64_t nd = a.ndim(), n = a.shape().back();
  DType dt = a.dtype();
  auto f = lax::linalg::lu(a);
  Array partial = numpy::cumprod(diagonal(f.lu), nd - 2) * numpy::expand_dims(pivot_sign(f.pivots, dt), {nd - 2});
  auto last = [&](const Array& v, int64_t k) {  // v[..., k] of a (..., n) array, as (...)
    return numpy::squeeze(lax::slice_in_dim(v, k, k + 1, 1, nd - 2), {nd - 2});
  };
  Array corner = numpy::logical_and(lax::broadcasted_iota(DType::int32, {n, n}, 0) == static_cast<int32_t>(n - 1),
                                    lax::broadcasted_iota(DType::int32, {n, n}, 1) == static_cast<int32_t>(n - 1));
  Array inv_pd = numpy::expand_dims(1.0 / last(partial, n - 2), {nd - 2, nd - 1});  // (..., 1, 1)
  Array lu = numpy::where(corner, numpy::broadcast_to(inv_pd, a.shape()), f.lu);
  // Rank below n - 1: the solve with U overflows (a zero pivot before the last); x is 0 there.
  Shape ones_shape(a.shape().begin(), a.shape().end() - 1);
  ones_shape.push_back(1);
  Array d = lax::linalg::triangular_solve(lu, numpy::ones(ones_shape, dt), true, false, false, false, false);
  Array bad = numpy::any(numpy::logical_not(numpy::isfinite(d)), {nd - 2, nd - 1}, true);  // (..., 1, 1)
  Array zeros = numpy::zeros_like(b);
  Array x = numpy::where(bad, zeros, b);
  x = numpy::matmul(permutation_matrix(f.permutation, dt), x);
  x = lax::linalg::triangular_solve(lu, x, true, true, false, false, true);
  Array det = last(partial, n - 1);
  Array head = lax::slice_in_dim(x, 0, n - 1, 1, nd - 2) * numpy::expand_dims(det, {nd - 2, nd - 1});
  x = numpy::concatenate({head, lax::slice_in_dim(x, n - 1, n, 1, nd - 2)}, nd - 2);
  x = lax::linalg::triangular_solve(lu, x, true, false, false, false, false);
  return {det, numpy::where(bad, zeros, x)};
}

/// det for n != 2, 3: sign * exp(log|det|) (JAX's _det), differentiated by JAX's rule.
Array det_lu(const Array& a) {
  auto value = [](const Array& m) {
    auto r = slogdet(m);
    return r.sign * numpy::exp(r.logabsdet);
  };
  static const auto f = custom_jvp(value, [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& x = std::get<0>(p);
    const Array& g = std::get<0>(t);
    int64_t n = x.shape().back(), nd = x.ndim();
    if (n == 0) return std::make_pair(numpy::ones(Shape(x.shape().begin(), x.shape().end() - 2), x.dtype()),
                                      numpy::zeros(Shape(x.shape().begin(), x.shape().end() - 2), x.dtype()));
    if (n == 1) {  // det = a[..., 0, 0]: its tangent is g's
      Shape batch(x.shape().begin(), x.shape().end() - 2);
      return std::make_pair(lax::reshape(x, batch), lax::reshape(g, batch));
    }
    auto [y, z] = cofactor_solve(x, g);
    return std::make_pair(y, numpy::sum(diagonal(z), {nd - 2}));
  });
  return f(a);
}
}  // namespace

Array det(const Array& a0, Loc loc) {
  detail::ApiScope scope(loc);
  Array a = inexact("jnp.linalg.det", a0, true);
  check_square("jnp.linalg.det", a);
  int64_t n = a.shape().back();
  if (n == 2 || n == 3) return det_small(a);  // float16/bfloat16 too, as JAX's closed forms
  inexact("jnp.linalg.det", a);  // other sizes go through LU: float32/float64 only (as JAX on CPU)
  return det_lu(a);
}

}  // namespace jitx::numpy::linalg
