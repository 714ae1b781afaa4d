// jitx::nn: activations and normalisations written with jnp/lax ops.
#include "jitx/nn.h"

#include <cmath>
#include <limits>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "ops/convert.h"

namespace jitx::nn {
using detail::ApiScope;

namespace {
/// A constant in x's float dtype: C++ double literals become weak f32 scalars, which would round
/// constants such as sqrt(2/pi) to single precision in an f64 computation. For integer and bool x it is in the
/// default float (float64), as JAX's Python float literals meet an int array: elu, celu, selu, leaky_relu, relu6,
/// hard_sigmoid/silu, sparse_plus/sigmoid of ints give float64 in JAX x64.
/// The constant is weak, as a Python literal is: it never decides the result's dtype or strength (relu6 of a weak
/// scalar stays weak, so relu6(2.0) + f32 is f32).
Array constant(double v, const Array& x) {
  DType d = is_floating(x.dtype()) ? x.dtype() : detail::default_float_dtype();
  return detail::convert_weak(Array::scalar(v, d), d, true);
}

/// JAX's promote_args_inexact: bools and ints of up to 32 bits become float32, 64-bit ints the default float.
Array nn_inexact(const Array& x) {
  if (is_floating(x.dtype())) return x;
  return jnp::astype(x, dtype_bits(x.dtype()) == 64 ? detail::default_float_dtype() : DType::float32);
}

/// nn_inexact keeping a weak type weak (JAX: softplus and mish of a bool, which meets a Python int, or of a weak int
/// are weak floats).
Array nn_inexact_weak(const Array& x) {
  Array v = nn_inexact(x);
  return x.weak_type() && !v.weak_type() ? detail::convert_weak(v, v.dtype(), true) : v;
}

/// A bool array as it meets a Python int literal in JAX: the default int (relu(bool) and hard_tanh(bool) are
/// int64 in JAX x64; softplus, mish and soft_sign of bool go through it to float64).
Array bool_to_int(const Array& x) {
  return is_bool(x.dtype()) ? detail::convert_weak(x, detail::default_int_dtype(), true) : x;  // weak, as JAX's
}
}  // namespace

Array relu(const Array& x, Loc loc) {
  ApiScope s(loc);
  // JAX's rule: the derivative is 0 at x = 0 (not max's 1/2 for a tie), so relu'(x) = [x > 0].
  // The rule's output is relu's own (as JAX's defjvps computes it), so that differentiating the rule applies it again.
  static const auto f = custom_jvp([](const Array& v) { return jnp::maximum(v, Array(0)); },
                                   [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                                     const Array& v = std::get<0>(p);
                                     return std::make_pair(relu(v), jnp::where(v > 0, std::get<0>(t), Array(0)));
                                   });
  return f(bool_to_int(x));
}

Array gelu(const Array& x_in, bool approximate, Loc loc) {
  ApiScope s(loc);
  Array x = nn_inexact(x_in);
  // JAX builds gelu's constants as arrays of x's dtype, so its result is strong even for a weak x.
  if (x.weak_type()) x = detail::convert_weak(x, x.dtype(), false);
  if (approximate && (x.dtype() == DType::float16 || x.dtype() == DType::bfloat16)) {
    // f16/bf16: computed in f32 and rounded once. JAX's tanh form rounds each of its ops to the half type (and its
    // tail cancels); this is closer to the true value, and one vectorised kernel where the per-op form (the
    // logistic expanded as XLA's) cost the bf16 MLP block's epilogue as much as its GEMM.
    return jnp::astype(gelu(jnp::astype(x, DType::float32), true, loc), x.dtype());
  }
  if (approximate) {
    // JAX's 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as x logistic(2u) (equal in real arithmetic:
    // 1 + tanh(u) = 2 logistic(2u)), which is what jit's simplifier makes of the tanh form too: eager and jit run
    // the same ops, and the tail keeps its relative accuracy (1 + tanh(u) cancels for u < 0; in f32 it is 0 from
    // x = -10 on, and its derivative 1 - tanh^2 loses everything there).
    Array inner = (x + constant(0.044715, x) * (x * x * x)) * constant(2 * std::sqrt(2.0 / M_PI), x);
    return x * lax::logistic(inner);
  }
  // JAX's form: 0.5 x erfc(-x / sqrt(2)) keeps the tail's relative accuracy, where 1 + erf(x / sqrt(2)) cancels.
  return 0.5 * x * lax::erfc(-x * constant(std::sqrt(0.5), x));
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
  // JAX's softplus is logaddexp(x, 0), whose rule gives exp(x - softplus(x)) = logistic(x): 1/2 at x = 0, where
  // differentiating max(x, 0) + log1p(exp(-|x|)) through max and abs gave 1/2 - 1/2 = 0. Infinities count as 0
  // in the exponent (JAX's _replace_inf), so softplus'(inf) = 1. The rule's output is softplus's own, so that its
  // derivative (the second derivative) applies the rule again: softplus''(0) = 1/4.
  auto value = [](const Array& v) { return jnp::maximum(v, Array(0)) + jnp::log1p(jnp::exp(-jnp::abs(v))); };
  static const auto f = custom_jvp(value, [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& v = std::get<0>(p);
    Array out = softplus(v);
    auto finite = [](const Array& a) { return jnp::where(a == INFINITY, Array(0), a); };
    return std::make_pair(out, std::get<0>(t) * jnp::exp(finite(v) - finite(out)));
  });
  return f(nn_inexact_weak(bool_to_int(x)));
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
  // Integers become floats first, as JAX's promote_args_inexact (x - max in int32 would wrap).
  Array xf = nn_inexact(x);
  if (axes.empty())  // every axis (JAX's axis=None)
    for (int64_t a = 0; a < xf.ndim(); ++a) axes.push_back(a);
  Array m = stop_gradient(max_or_neg_inf(xf, axes));
  m = jnp::where(jnp::isfinite(m), m, Array(0));
  Array r = jnp::log(jnp::sum(jnp::exp(xf - m), axes, true)) + m;
  return keepdims ? r : jnp::squeeze(r, axes);
}

Array softmax(const Array& x, std::vector<int64_t> axes, Loc loc) {
  ApiScope s(loc);
  Array m = max_or_neg_inf(x, axes);
  Array e = jnp::exp(x - m);
  Array total = jnp::sum(e, axes, true);
  // JAX's e / sum is compiled by XLA as e * (1 / sum) (its simplifier's rule for a division by a broadcast, which
  // jitx's applies under jit too): written so, eager calls agree with it. bf16 keeps the division: XLA's reciprocal
  // is f32 there, and the algebraic simplifier gives the same under jit.
  if (e.dtype() == DType::bfloat16) return e / total;
  Array inv = 1.0 / total;
  return e * inv;
}
Array softmax(const Array& x, int64_t axis, Loc loc) { return softmax(x, std::vector<int64_t>{axis}, loc); }

Array log_softmax(const Array& x, std::vector<int64_t> axes, Loc loc) {
  ApiScope s(loc);
  Array shifted = x - max_or_neg_inf(x, axes);
  return shifted - jnp::log(jnp::sum(jnp::exp(shifted), axes, true));
}
Array log_softmax(const Array& x, int64_t axis, Loc loc) { return log_softmax(x, std::vector<int64_t>{axis}, loc); }

Array one_hot(const Array& x, int64_t num_classes, DType dtype, Loc loc) {
  ApiScope s(loc);
  // JAX compares float class indices too (x == class, so 2.5 and NaN match none; deprecated in JAX, not refused).
  if (is_bool(x.dtype()))
    detail::throw_error<TypeError>("one_hot", "needs integer (or float) class indices, got {}", dtype_name(x.dtype()));
  if (num_classes < 0)
    detail::throw_error<ShapeError>("one_hot", "num_classes must be non-negative, got {}", num_classes);
  Shape shape = x.shape();
  shape.push_back(num_classes);
  Array classes = lax::broadcasted_iota(x.dtype(), shape, x.ndim());
  Array idx = jnp::expand_dims(x, {-1});
  return jnp::astype(jnp::equal(idx, classes), dtype);
}

namespace {
/// JAX's standardize default (algorithm="fast", as flax's LayerNorm): mean(x^2) - mean^2, clipped at 0 (it can
/// cancel to a negative number). A row holding inf (or a square that overflows) gives NaN, as JAX's.
Array fast_variance(const Array& x, const Array& mean, const std::vector<int64_t>& axes) {
  Array v = jnp::mean(x * x, axes, true) - mean * mean;
  return jnp::maximum(v, constant(0, v));
}
}  // namespace

Array layer_norm(const Array& x_in, std::optional<Array> scale, std::optional<Array> offset, double eps, Loc loc) {
  ApiScope s(loc);
  Array x = nn_inexact(x_in);  // ints: float32 (64-bit ints the default float), as JAX's standardize
  Array mu = jnp::mean(x, {-1}, true);
  Array y = (x - mu) * lax::rsqrt(fast_variance(x, mu, {-1}) + constant(eps, x));
  if (scale) y = y * *scale;
  if (offset) y = y + *offset;
  return y;
}

Array log1mexp(const Array& x, Loc loc) {
  ApiScope s(loc);
  static const auto f = custom_jvp(
      [](const Array& v) {
        Array small = jnp::log(jnp::negative(jnp::expm1(jnp::negative(v))));
        Array large = jnp::log1p(jnp::negative(jnp::exp(jnp::negative(v))));
        return jnp::where(jnp::less(v, constant(std::log(2.0), v)), small, large);
      },
      [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
        const Array& v = std::get<0>(p);
        return std::make_pair(log1mexp(v), jnp::divide(std::get<0>(t), jnp::expm1(v)));
      });
  return f(x);
}

Array logmeanexp(const Array& x, std::vector<int64_t> axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  Array lse = logsumexp(x, axes, keepdims);
  int64_t n = 1;
  if (axes.empty()) {
    n = x.size();
  } else {
    for (int64_t a : axes) n *= x.shape()[static_cast<size_t>(detail::canonical_axis(a, x.ndim(), "logmeanexp"))];
  }
  return jnp::subtract(lse, jnp::log(Array::scalar(static_cast<double>(n), lse.dtype())));
}

Array relu6(const Array& x, Loc loc) {
  ApiScope s(loc);
  // JAX's rule: the derivative is [0 < x < 6] (0 at both kinks, where min/max would give 1/2).
  static const auto f =
      custom_jvp([](const Array& v) { return jnp::minimum(jnp::maximum(v, Array(0)), constant(6, v)); },
                 [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                   const Array& v = std::get<0>(p);
                   Array inside = jnp::logical_and(v > 0, v < constant(6, v));
                   return std::make_pair(relu6(v), jnp::where(inside, std::get<0>(t), Array(0)));
                 });
  return f(x);
}

Array elu(const Array& x, double alpha, Loc loc) {
  ApiScope s(loc);
  // expm1 of a clamped x, so the unused branch cannot overflow (nor give NaN derivatives for large x).
  // (JAX's 0. literal: ints become float64 here, before expm1.)
  Array safe = jnp::where(x > 0, constant(0, x), x);
  return jnp::where(x > 0, x, constant(alpha, x) * jnp::expm1(safe));
}

Array leaky_relu(const Array& x, double negative_slope, Loc loc) {
  ApiScope s(loc);
  return jnp::where(x >= 0, x, constant(negative_slope, x) * x);
}

Array log_sigmoid(const Array& x, Loc loc) {
  ApiScope s(loc);
  return -softplus(-x);
}

Array swish(const Array& x, Loc loc) {
  ApiScope s(loc);  // an error raised by silu also names swish
  return silu(x, loc);
}

Array celu(const Array& x, double alpha, Loc loc) {
  ApiScope s(loc);
  return jnp::maximum(x, Array(0)) + constant(alpha, x) * jnp::expm1(jnp::minimum(x, Array(0)) / constant(alpha, x));
}

Array selu(const Array& x, Loc loc) {
  ApiScope s(loc);
  return constant(1.0507009873554804934193349852946, x) * elu(x, 1.6732632423543772848170429916717);
}

Array hard_tanh(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (is_floating(x.dtype())) return jnp::where(x > 1, constant(1, x), jnp::where(x < -1, constant(-1, x), x));
  Array v = bool_to_int(x);  // ints keep their dtype, as in JAX; a weak one (a bool's) stays weak
  auto k = [&](int64_t c) { return detail::convert_weak(Array::scalar_int(c, v.dtype()), v.dtype(), v.weak_type()); };
  return jnp::where(v > 1, k(1), jnp::where(v < -1, k(-1), v));
}

Array hard_sigmoid(const Array& x, Loc loc) {
  ApiScope s(loc);
  return relu6(x + constant(3, x)) / constant(6, x);
}

Array hard_silu(const Array& x, Loc loc) {
  ApiScope s(loc);
  return x * hard_sigmoid(x);
}
Array hard_swish(const Array& x, Loc loc) {
  ApiScope s(loc);  // an error raised by hard_silu also names hard_swish
  return hard_silu(x, loc);
}

Array mish(const Array& x, Loc loc) {
  ApiScope s(loc);
  Array v = nn_inexact_weak(bool_to_int(x));
  return v * jnp::tanh(softplus(v));
}

Array squareplus(const Array& x, double b, Loc loc) {
  ApiScope s(loc);
  // x * x stays in an int dtype (and wraps), as JAX's does; its constants are float32 for ints (JAX: float32).
  // (64-bit ints: float64, JAX's promote_args_inexact.)
  auto k = [&x](double v) {
    DType d = is_floating(x.dtype())        ? x.dtype()
              : dtype_bits(x.dtype()) == 64 ? detail::default_float_dtype()
                                            : DType::float32;
    return Array::scalar(v, d);
  };
  return (x + jnp::sqrt(x * x + k(b))) / k(2);
}

Array soft_sign(const Array& x, Loc loc) {
  ApiScope s(loc);
  // For ints |x| + 1 stays in the int dtype (and wraps at the minimum, as JAX's does) before the true division.
  Array v = bool_to_int(x);
  return v / (jnp::abs(v) + (is_floating(v.dtype()) ? constant(1, v) : Array(1)));
}

Array sparse_plus(const Array& x, Loc loc) {
  ApiScope s(loc);
  Array mid = (x + constant(1, x)) * (x + constant(1, x)) / constant(4, x);
  // The bounds in the float dtype: an int -1 would wrap in an unsigned x (uint8: x <= 255 everywhere).
  return jnp::where(x <= constant(-1, x), constant(0, x), jnp::where(x >= constant(1, x), x, mid));
}

Array sparse_sigmoid(const Array& x, Loc loc) {
  ApiScope s(loc);
  return constant(0.5, x) * jnp::clip(x + constant(1, x), constant(0, x), constant(2, x));
}

Array glu(const Array& x, int64_t axis, Loc loc) {
  ApiScope s(loc);
  int64_t ax = detail::canonical_axis(axis, x.ndim(), "glu");
  int64_t n = x.shape()[ax];
  if (n % 2 != 0)
    detail::throw_error<ShapeError>("glu", "axis {} must have an even size, got {}", axis, x.aval().str());
  Array a = lax::slice_in_dim(x, 0, n / 2, 1, ax), b = lax::slice_in_dim(x, n / 2, n, 1, ax);
  return a * lax::logistic(b);
}

Array standardize(const Array& x_in, std::vector<int64_t> axes, std::optional<Array> mean,
                  std::optional<Array> variance, double epsilon, Loc loc) {
  ApiScope s(loc);
  Array x = nn_inexact(x_in);  // JAX's promote_args_inexact: int32 -> float32 (before: float64 via epsilon)
  Array m = mean ? *mean : jnp::mean(x, axes, true);
  Array v = variance ? *variance : fast_variance(x, m, axes);
  return (x - m) * lax::rsqrt(v + constant(epsilon, x));
}

}  // namespace jitx::nn
