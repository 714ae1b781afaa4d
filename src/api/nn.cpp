// jitx::nn: activations and normalisations written with jnp/lax ops.
#include "jitx/nn.h"

#include <cmath>
#include <limits>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"

namespace jitx::nn {
using detail::ApiScope;

namespace {
/// A constant in x's float dtype: C++ double literals become weak f32 scalars, which would round
/// constants such as sqrt(2/pi) to single precision in an f64 computation.
Array constant(double v, const Array& x) { return Array::scalar(v, is_floating(x.dtype()) ? x.dtype() : DType::float32); }
}  // namespace

Array relu(const Array& x, Loc loc) {
  ApiScope s(loc);
  return jnp::maximum(x, Array(0));
}

Array gelu(const Array& x, bool approximate, Loc loc) {
  ApiScope s(loc);
  if (approximate) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Array inner = (x + constant(0.044715, x) * (x * x * x)) * constant(std::sqrt(2.0 / M_PI), x);
    return 0.5 * x * (1.0 + jnp::tanh(inner));
  }
  return 0.5 * x * (1.0 + lax::erf(x * constant(1.0 / std::sqrt(2.0), x)));
}

Array sigmoid(const Array& x, Loc loc) {
  ApiScope s(loc);
  return lax::logistic(x);
}

Array silu(const Array& x, Loc loc) {
  ApiScope s(loc);
  return x * lax::logistic(x);
}

Array softplus(const Array& x, Loc loc) {
  ApiScope s(loc);
  // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), stable for large |x|.
  return jnp::maximum(x, Array(0)) + jnp::log1p(jnp::exp(-jnp::abs(x)));
}

namespace {
/// jnp.max(x, axes, keepdims=True, initial=-inf), as JAX's logsumexp and softmax take it: -inf over an empty axis
/// (where max alone has no identity and throws).
Array max_or_neg_inf(const Array& x, const std::vector<int64_t>& axes) {
  Shape kept = x.shape();
  bool empty = false;
  for (int64_t a : axes) {
    int64_t d = detail::canonical_axis(a, x.ndim(), "max");
    empty = empty || kept[d] == 0;
    kept[d] = 1;
  }
  if (!empty) return jnp::max(x, axes, true);
  return lax::full(kept, Array::scalar(-std::numeric_limits<double>::infinity(), x.dtype()));
}
}  // namespace

Array logsumexp(const Array& x, std::vector<int64_t> axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  // Shift by the maximum (held constant for differentiation, as JAX does); rows whose maximum is not finite
  // (all -inf, or containing +inf/NaN) shift by 0 so that log(sum(exp(x))) gives -inf, +inf or NaN, not NaN
  // from inf - inf.
  Array m = stop_gradient(max_or_neg_inf(x, axes));
  m = jnp::where(jnp::isfinite(m), m, Array(0));
  Array r = jnp::log(jnp::sum(jnp::exp(x - m), axes, true)) + m;
  return keepdims ? r : jnp::squeeze(r, axes);
}

Array softmax(const Array& x, int64_t axis, Loc loc) {
  ApiScope s(loc);
  Array m = max_or_neg_inf(x, {axis});
  Array e = jnp::exp(x - m);
  return e / jnp::sum(e, {axis}, true);
}

Array log_softmax(const Array& x, int64_t axis, Loc loc) {
  ApiScope s(loc);
  Array shifted = x - max_or_neg_inf(x, {axis});
  return shifted - jnp::log(jnp::sum(jnp::exp(shifted), {axis}, true));
}

Array one_hot(const Array& x, int64_t num_classes, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (!is_integer(x.dtype()))
    detail::throw_error<TypeError>("one_hot", "needs integer class indices, got {}", dtype_name(x.dtype()));
  if (num_classes < 0)
    detail::throw_error<ShapeError>("one_hot", "num_classes must be non-negative, got {}", num_classes);
  Shape shape = x.shape();
  shape.push_back(num_classes);
  Array classes = lax::broadcasted_iota(x.dtype(), shape, x.ndim());
  Array idx = jnp::expand_dims(x, {-1});
  return jnp::astype(jnp::equal(idx, classes), dtype);
}

Array layer_norm(const Array& x, std::optional<Array> scale, std::optional<Array> offset, double eps, Loc loc) {
  ApiScope s(loc);
  Array mu = jnp::mean(x, {-1}, true);
  Array c = x - mu;
  Array var = jnp::mean(c * c, {-1}, true);
  Array y = c * lax::rsqrt(var + constant(eps, x));
  if (scale) y = y * *scale;
  if (offset) y = y + *offset;
  return y;
}

}  // namespace jitx::nn
