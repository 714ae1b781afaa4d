// jnp.linalg.pinv with JAX's derivative (Golub and Pereyra's formula, as JAX's _pinv_jvp): differentiating through
// the SVD divides by differences of singular values, NaN wherever two are equal (the identity among them). In the
// api layer, since custom_jvp (transforms) sits above ops.
#include <algorithm>
#include <limits>
#include <utility>

#include "core/errors.h"
#include "jitx/autodiff.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "ops/linalg_util.h"

namespace jitx::numpy::linalg {
using detail::ApiScope;
using namespace jitx::detail::linalg_util;

namespace {
/// V diag(1/s) U^T, singular values at most r times the largest dropped.
Array pinv_value(const Array& a, double r) {
  auto f = svd(a, false, true);
  int64_t ax = f.S.ndim() - 1;
  Array cutoff = r * numpy::max(f.S, {ax}, true);
  Array s_inv = numpy::where(f.S > cutoff, 1.0 / numpy::where(f.S > cutoff, f.S, 1.0), 0.0);
  Array v = numpy::swapaxes(f.Vh, -1, -2), ut = numpy::swapaxes(f.U, -1, -2);
  return numpy::matmul(v * numpy::expand_dims(s_inv, {ax}), ut);
}
Array pinv_mT(const Array& x) { return numpy::swapaxes(x, -1, -2); }
}  // namespace

Array pinv(const Array& a0, std::optional<double> rtol, Loc loc) {
  ApiScope scope(loc);
  constexpr const char* op = "jnp.linalg.pinv";
  Array a = inexact_or_empty_half(op, a0);
  check_matrix(op, a);
  int64_t m = a.shape()[a.ndim() - 2], n = a.shape().back();
  double eps = a.dtype() == DType::float32 ? std::numeric_limits<float>::epsilon()
                                           : std::numeric_limits<double>::epsilon();
  double r = rtol ? *rtol : 10.0 * static_cast<double>(std::max(m, n)) * eps;
  if (m == 0 || n == 0) {  // the pseudo-inverse of an empty matrix is the empty (n x m) one
    Shape s = a.shape();
    std::swap(s[s.size() - 1], s[s.size() - 2]);
    return numpy::zeros(s, a.dtype());
  }
  auto f = custom_jvp([r](const Array& x) { return pinv_value(x, r); },
                      [r, m, n](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
                        const Array& x = std::get<0>(primals);
                        const Array& dx = std::get<0>(tangents);
                        Array p = pinv_value(x, r);
                        Array dp;
                        if (m >= n) {
                          Array s = numpy::matmul(numpy::matmul(p, pinv_mT(p)), pinv_mT(dx));
                          Array t = numpy::matmul(numpy::matmul(pinv_mT(dx), pinv_mT(p)), p);
                          dp = -numpy::matmul(numpy::matmul(p, dx), p) + s -
                               numpy::matmul(numpy::matmul(s, x), p) + t - numpy::matmul(numpy::matmul(p, x), t);
                        } else {
                          Array s = numpy::matmul(p, numpy::matmul(pinv_mT(p), pinv_mT(dx)));
                          Array t = numpy::matmul(pinv_mT(dx), numpy::matmul(pinv_mT(p), p));
                          dp = -numpy::matmul(p, numpy::matmul(dx, p)) + s -
                               numpy::matmul(s, numpy::matmul(x, p)) + t - numpy::matmul(p, numpy::matmul(x, t));
                        }
                        return std::make_pair(p, dp);
                      });
  return f(a);
}

}  // namespace jitx::numpy::linalg
