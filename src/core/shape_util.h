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
/// "f32[8,4], i32[]".
std::string avals_str(std::span<const ShapedArray> avals);

}  // namespace jitx::detail
