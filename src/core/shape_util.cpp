// Shape helpers: canonical axes and abstract values as text.
#include "core/shape_util.h"

#include <limits>
#include <vector>

#include "core/errors.h"

namespace jitx::detail {

int64_t canonical_axis(int64_t axis, int64_t rank, std::string_view op) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1) || (rank == 0))
    throw_error<ShapeError>(op, "axis {} is out of bounds for an array of rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

int64_t checked_num_elements(std::span<const int64_t> dims, DType dtype, std::string_view op) {
  if (!is_valid_dtype(dtype))
    throw_error<TypeError>(op, "got DType({}), which is not a jitx dtype", static_cast<int>(dtype));
  std::vector<int64_t> shape(dims.begin(), dims.end());
  // The product of the non-zero dimensions must fit too: strides and the sizes of sub-shapes are products of
  // some dimensions, so (0, 2^62, 4), which JAX accepts, would overflow them (a documented difference).
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0) throw_error<ShapeError>(op, "shape {} has a negative dimension", shape_str(shape));
    zero = zero || d == 0;
  }
  for (int64_t d : dims) {
    if (d == 0) continue;
    if (n > std::numeric_limits<int64_t>::max() / d)
      throw_error<ShapeError>(op, "shape {} has more elements than int64 can count{}", shape_str(shape),
                              zero ? " (its non-zero dimensions' product, from which strides are computed)" : "");
    n *= d;
  }
  // Sizes in bytes must fit too (and leave room for rounding up to an allocation's size class).
  int64_t item = static_cast<int64_t>(dtype_size(dtype));
  if (n > (std::numeric_limits<int64_t>::max() >> 2) / item)
    throw_error<ShapeError>(op, "shape {} of {} is {} elements, too large to address in bytes", shape_str(shape),
                            dtype_name(dtype), zero ? 0 : n);
  return zero ? 0 : n;
}

void check_avals(std::span<const ShapedArray> avals, std::string_view op) {
  for (auto& a : avals) checked_num_elements(a.shape, a.dtype, op);
}

std::string avals_str(std::span<const ShapedArray> avals) {
  std::vector<std::string> s;
  for (auto& a : avals) s.push_back(a.str());
  return fmt::format("{}", fmt::join(s, ", "));
}

}  // namespace jitx::detail
