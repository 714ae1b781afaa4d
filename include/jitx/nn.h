// jitx::nn: activations and normalisations, as jax.nn.
#pragma once
#include <optional>
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
Array logsumexp(const Array& x, std::vector<int64_t> axes = {-1}, bool keepdims = false, Loc loc = Loc::current());
Array one_hot(const Array& x, int64_t num_classes, DType dtype = DType::float32, Loc loc = Loc::current());
/// (x - mean) / sqrt(var + eps) over the last axis, times scale plus offset when given.
Array layer_norm(const Array& x, std::optional<Array> scale = std::nullopt, std::optional<Array> offset = std::nullopt,
                 double eps = 1e-5, Loc loc = Loc::current());

}  // namespace jitx::nn
