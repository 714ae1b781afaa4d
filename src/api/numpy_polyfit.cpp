// jnp.polyfit (numpy_stats.h): the least-squares fit of a polynomial, as JAX's jax/_src/numpy/polynomial.py
// computes it: a Vandermonde matrix (weighted, its columns scaled to unit norm), linalg::lstsq, the scale undone;
// polyfit_full returns lstsq's residuals, rank and singular values with rcond, polyfit_cov the covariance.
#include <cmath>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_shape.h"
#include "jitx/numpy_stats.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using jitx::detail::ApiScope;
using jitx::detail::shape_str;
using jitx::detail::throw_error;

namespace {

double dtype_eps(DType d) {
  switch (d) {
    case DType::float64:
      return std::ldexp(1.0, -52);
    case DType::float32:
      return std::ldexp(1.0, -23);
    case DType::float16:
      return std::ldexp(1.0, -10);
    case DType::bfloat16:
      return std::ldexp(1.0, -7);
    default:
      return 0;
  }
}

struct Fit {
  Array c, resids, rank, s, lhs, scale;
  double rcond = 0;
};

Fit fit(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond, const std::optional<Array>& w,
        std::string_view op) {
  if (!x.valid() || !y.valid())
    throw_error<TypeError>(op, "got an empty (default-constructed) Array for {}", x.valid() ? "y" : "x");
  if (deg < 0) throw_error<ShapeError>(op, "expected deg >= 0, got {}", deg);
  if (x.ndim() != 1) throw_error<TypeError>(op, "expected 1D vector for x, got shape {}", shape_str(x.shape()));
  if (x.size() == 0) throw_error<TypeError>(op, "expected non-empty vector for x");
  if (y.ndim() < 1 || y.ndim() > 2)
    throw_error<TypeError>(op, "expected 1D or 2D array for y, got shape {}", shape_str(y.shape()));
  if (x.shape()[0] != y.shape()[0])
    throw_error<TypeError>(op, "expected x and y to have same length, got {} and {}", x.shape()[0], y.shape()[0]);
  const int64_t order = deg + 1;
  Fit f;
  if (rcond) {
    f.rcond = *rcond;
  } else {
    if (!is_floating(x.dtype()))
      throw_error<TypeError>(op,
                             "the default rcond (len(x) * eps) needs an inexact x, got {} (as JAX's finfo: "
                             "data type not inexact); pass rcond",
                             dtype_name(x.dtype()));
    f.rcond = static_cast<double>(x.shape()[0]) * dtype_eps(x.dtype());
  }
  Array lhs = vander(x, order);
  Array rhs = y;
  if (w) {
    if (!w->valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array for w");
    Array wa = stats_util::stats_inexact(*w);
    if (wa.ndim() != 1)
      throw_error<TypeError>(op, "expected a 1-d array for weights, got shape {}", shape_str(wa.shape()));
    if (wa.shape()[0] != y.shape()[0])
      throw_error<TypeError>(op, "expected w and y to have the same length, got {} and {}", wa.shape()[0],
                             y.shape()[0]);
    Array wcol = expand_dims(wa, 1);
    lhs = multiply(lhs, wcol);
    rhs = multiply(rhs, rhs.ndim() == 2 ? wcol : wa);
  }
  f.scale = sqrt(sum(multiply(lhs, lhs), Axes{0}));
  lhs = divide(lhs, expand_dims(f.scale, 0));
  auto r = linalg::lstsq(lhs, rhs, f.rcond);
  f.c = r.x.ndim() > 1 ? transpose(divide(transpose(r.x), expand_dims(f.scale, 0))) : divide(r.x, f.scale);
  f.resids = r.residuals;
  f.rank = r.rank;
  f.s = r.s;
  f.lhs = lhs;
  return f;
}

}  // namespace

Array polyfit(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond, const std::optional<Array>& w,
              Loc loc) {
  ApiScope s(loc);
  return fit(x, y, deg, rcond, w, "polyfit").c;
}

PolyfitFull polyfit_full(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond,
                         const std::optional<Array>& w, Loc loc) {
  ApiScope s(loc);
  Fit f = fit(x, y, deg, rcond, w, "polyfit");
  return {f.c, f.resids, f.rank, f.s, Array(f.rcond)};
}

std::pair<Array, Array> polyfit_cov(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond,
                                    const std::optional<Array>& w, bool unscaled, Loc loc) {
  ApiScope s(loc);
  Fit f = fit(x, y, deg, rcond, w, "polyfit");
  const int64_t order = deg + 1, n = x.shape()[0];
  Array vbase = linalg::inv(dot(transpose(f.lhs), f.lhs));
  vbase = divide(vbase, linalg::outer(f.scale, f.scale));
  Array fac;
  if (unscaled) {
    fac = Array(1.0);
  } else {
    if (n <= order)
      throw_error<ShapeError>("polyfit",
                              "the number of data points must exceed order to scale the covariance "
                              "matrix: {} points, order {}",
                              n, order);
    fac = divide(f.resids, Array(n - order));
  }
  if (y.ndim() == 1) return {f.c, multiply(vbase, expand_dims(atleast_1d(fac), 0))};
  return {f.c, multiply(expand_dims(vbase, 2), lax::reshape(atleast_1d(fac), {1, 1, atleast_1d(fac).size()}))};
}

}  // namespace jitx::numpy
