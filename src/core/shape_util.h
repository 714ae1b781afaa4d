// Shape helpers every layer's shape rules use: axes, and abstract values as text.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/jaxpr.h"

namespace jitx::detail {

/// `axis` in [-rank, rank) made non-negative; ShapeError naming `op` otherwise (rank 0 has no axis).
int64_t canonical_axis(int64_t axis, int64_t rank, std::string_view op);
/// The number of elements of an array of these dimensions and dtype. ShapeError naming `op` when a dimension is
/// negative or the element count or the size in bytes does not fit in int64; TypeError for an invalid dtype.
int64_t checked_num_elements(std::span<const int64_t> dims, DType dtype, std::string_view op);
/// checked_num_elements for every output type of an op (abstract evaluation's results).
void check_avals(std::span<const ShapedArray> avals, std::string_view op);
/// "f32[8,4], i32[]".
std::string avals_str(std::span<const ShapedArray> avals);

}  // namespace jitx::detail
