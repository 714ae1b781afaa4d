// jitx::nn: activations and normalisations, as jax.nn.
#pragma once
#include <concepts>
#include <optional>
#include <utility>
#include <vector>

#include "jitx/array.h"

namespace jitx::nn {

Array relu(const Array& x, Loc loc = Loc::current());
/// GELU; approximate=true is the tanh form (JAX's default, computed as the equal x logistic(2u)), false the exact
/// erf form (as JAX: 0.5 x erfc(-x / sqrt(2))).
Array gelu(const Array& x, bool approximate = true, Loc loc = Loc::current());
Array silu(const Array& x, Loc loc = Loc::current());
Array sigmoid(const Array& x, Loc loc = Loc::current());
Array softplus(const Array& x, Loc loc = Loc::current());
Array softmax(const Array& x, int64_t axis = -1, Loc loc = Loc::current());
Array log_softmax(const Array& x, int64_t axis = -1, Loc loc = Loc::current());
/// Over several axes, as jax.nn.softmax(x, axis=(0, 1)). Empty axes means every axis (JAX's axis=None), as in
/// logsumexp and jnp's reductions: JAX's axis=() (no axis: all ones) has no spelling here.
Array softmax(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
Array log_softmax(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
/// log(sum(exp(x))) over `axes`, stably; empty axes (the default) means every axis, as jax.nn.logsumexp's axis=None.
Array logsumexp(const Array& x, std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current());
/// One integer axis: nn::logsumexp(x, 0).
template <std::integral I>
Array logsumexp(const Array& x, I axis, bool keepdims = false, Loc loc = Loc::current()) {
  return logsumexp(x, std::vector<int64_t>{static_cast<int64_t>(axis)}, keepdims, loc);
}
/// min(max(x, 0), 6); derivative 1 strictly inside (0, 6), 0 at both kinks (JAX's rule).
Array relu6(const Array& x, Loc loc = Loc::current());
/// x for x > 0, alpha * expm1(x) otherwise.
Array elu(const Array& x, double alpha = 1.0, Loc loc = Loc::current());
/// x for x >= 0, negative_slope * x otherwise (derivative 1 at 0, as JAX).
Array leaky_relu(const Array& x, double negative_slope = 0.01, Loc loc = Loc::current());
/// -softplus(-x).
Array log_sigmoid(const Array& x, Loc loc = Loc::current());
/// JAX's other name for silu.
Array swish(const Array& x, Loc loc = Loc::current());
/// max(x, 0) + alpha * expm1(min(x, 0) / alpha).
Array celu(const Array& x, double alpha = 1.0, Loc loc = Loc::current());
/// scale * elu(x, alpha) with JAX's constants.
Array selu(const Array& x, Loc loc = Loc::current());
/// x clipped to [-1, 1].
Array hard_tanh(const Array& x, Loc loc = Loc::current());
/// relu6(x + 3) / 6.
Array hard_sigmoid(const Array& x, Loc loc = Loc::current());
/// x * hard_sigmoid(x); hard_swish is its other name.
Array hard_silu(const Array& x, Loc loc = Loc::current());
Array hard_swish(const Array& x, Loc loc = Loc::current());
/// x * tanh(softplus(x)).
Array mish(const Array& x, Loc loc = Loc::current());
/// (x + sqrt(x^2 + b)) / 2.
Array squareplus(const Array& x, double b = 4, Loc loc = Loc::current());
/// x / (|x| + 1).
Array soft_sign(const Array& x, Loc loc = Loc::current());
/// 0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between.
Array sparse_plus(const Array& x, Loc loc = Loc::current());
/// clip((x + 1) / 2, 0, 1).
Array sparse_sigmoid(const Array& x, Loc loc = Loc::current());
/// The first half of x along axis times the sigmoid of the second half (the axis' size must be even).
Array glu(const Array& x, int64_t axis = -1, Loc loc = Loc::current());
/// (x - mean) / sqrt(variance + epsilon) over axes, mean and variance computed from x unless given (the variance
/// as JAX's default algorithm "fast": mean(x^2) - mean^2, clipped at 0; integers are converted to float first).
/// Empty axes means every axis, as softmax's.
Array standardize(const Array& x, std::vector<int64_t> axes = {-1}, std::optional<Array> mean = std::nullopt,
                  std::optional<Array> variance = std::nullopt, double epsilon = 1e-5, Loc loc = Loc::current());
template <std::integral I>
Array standardize(const Array& x, I axis, std::optional<Array> mean = std::nullopt,
                  std::optional<Array> variance = std::nullopt, double epsilon = 1e-5, Loc loc = Loc::current()) {
  return standardize(x, std::vector<int64_t>{static_cast<int64_t>(axis)}, std::move(mean), std::move(variance),
                     epsilon, loc);
}
/// x == class for classes 0..num_classes-1 (integer or float x, as JAX; bool is a TypeError).
Array one_hot(const Array& x, int64_t num_classes, DType dtype = DType::float32, Loc loc = Loc::current());
/// (x - mean) / sqrt(var + eps) over the last axis, times scale plus offset when given.
Array layer_norm(const Array& x, std::optional<Array> scale = std::nullopt, std::optional<Array> offset = std::nullopt,
                 double eps = 1e-5, Loc loc = Loc::current());

/// log(1 - exp(-x)) for x > 0, computed stably (log(-expm1(-x)) below log 2, log1p(-exp(-x)) above); its derivative
/// 1 / expm1(x) (JAX's custom rule).
Array log1mexp(const Array& x, Loc loc = Loc::current());
/// log(mean(exp(x))) over axes (empty: all), as logsumexp(x) - log(n); jax.nn.logmeanexp without `where`.
Array logmeanexp(const Array& x, std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current());
/// jax.nn.dot_product_attention's keyword arguments: scale (default 1 / sqrt(head dim)); is_causal (query t sees keys
/// s <= t); query_seq_lengths / key_value_seq_lengths (int32 [B]: padding beyond them is masked, padded query rows
/// give zeros); local_window_size (left, right): query t sees keys s with t - left <= s <= t + right.
struct AttentionOptions {
  std::optional<double> scale;
  bool is_causal = false;
  std::optional<Array> query_seq_lengths, key_value_seq_lengths;
  std::optional<std::pair<int64_t, int64_t>> local_window_size;
};
/// Scaled dot-product attention, as jax.nn.dot_product_attention (implementation "xla"): query [B, T, N, H], key and
/// value [B, S, K, H] (N a multiple of K: grouped-query attention; 3-d inputs get a leading batch of 1), bias and
/// boolean mask broadcastable to [B, N, T, S]. Logits in float32 (or wider: query's dtype promoted with float32),
/// softmax in float32, the weighted sum in key's dtype; masked logits are -0.7 * the largest float32. Returns
/// [B, T, N, H] (query's shape). return_residual and the cuDNN implementation are not built.
Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            std::optional<Array> bias = std::nullopt, std::optional<Array> mask = std::nullopt,
                            const AttentionOptions& options = {}, Loc loc = Loc::current());

}  // namespace jitx::nn
