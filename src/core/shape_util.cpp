// Shape helpers: canonical axes and abstract values as text.
#include "core/shape_util.h"

#include "core/errors.h"

namespace jitx::detail {

int64_t canonical_axis(int64_t axis, int64_t rank, std::string_view op) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1) || (rank == 0))
    throw_error<ShapeError>(op, "axis {} is out of bounds for an array of rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::string avals_str(std::span<const ShapedArray> avals) {
  std::vector<std::string> s;
  for (auto& a : avals) s.push_back(a.str());
  return fmt::format("{}", fmt::join(s, ", "));
}

}  // namespace jitx::detail
