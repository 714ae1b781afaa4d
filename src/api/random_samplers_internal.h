// Helpers shared by random_samplers.cpp and random_gamma.cpp.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "jitx/array.h"

namespace jitx::random::internal {

/// uniform(key, shape, d, lo, hi) with scalar bounds.
Array unit_uniform(const Array& key, const Shape& shape, DType d, double lo, double hi, std::string_view op);
Array exponential_impl(const Array& key, const Shape& shape, DType d);
/// A float parameter's sampling dtype: float32 for a weak scalar (a C++ number), else its own.
DType float_param_dtype(const Array& p);
/// split(key, n) as n keys.
std::vector<Array> split_n(const Array& key, int64_t n);
/// shape, or the broadcast of the parameters' shapes.
Shape param_shape(std::optional<Shape> shape, std::vector<Shape> shapes, std::string_view op);

}  // namespace jitx::random::internal
