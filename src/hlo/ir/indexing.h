// Gather, scatter, sort and top-k index math as StableHLO defines it, shared by the reference evaluator and the
// CPU backend's library ops: which operand element each result element comes from, and the order sort makes.
// The callers own the element loops (and how they copy, combine or parallelise); this says where.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "hlo/ir/attributes.h"
#include "jitx/dtype.h"

namespace jitx::hlo {

/// Element i of an index array as int64; uint64 values above INT64_MAX saturate, so they stay out of range.
int64_t read_index(const void* data, DType d, int64_t i);

/// A gather's result, or a scatter's updates, as batch positions times a window. The batch positions are the
/// axes that are not offset_dims (update_window_dims), walked row-major; each has a start in the operand, read
/// from the index array, and a window (the offset / update window axes) laid over the operand from there with
/// fixed strides. Built once per call from the dimension numbers and the dims (row-major); locate() is per
/// batch position and the window walk is the caller's.
class WindowIndexing {
 public:
  static WindowIndexing gather(const GatherDimensionNumbers& dn, const std::vector<int64_t>& operand_dims,
                               const std::vector<int64_t>& index_dims, const std::vector<int64_t>& result_dims);
  static WindowIndexing scatter(const ScatterDimensionNumbers& dn, const std::vector<int64_t>& operand_dims,
                                const std::vector<int64_t>& index_dims, const std::vector<int64_t>& update_dims);

  std::vector<int64_t> batch_dims;              // extents of the batch positions
  std::vector<int64_t> window_dims;             // extents of the window
  std::vector<int64_t> window_strides;          // per window axis: stride in the result (updates)
  std::vector<int64_t> window_operand_strides;  // per window axis: stride in the operand

  /// Working space for locate(), one per thread.
  struct Cursor {
    std::vector<int64_t> index_pos, start;
  };
  Cursor cursor() const {
    return Cursor{std::vector<int64_t>(index_strides_.size()), std::vector<int64_t>(limit_.size())};
  }

  /// For batch position `batch` (a multi-index over batch_dims): sets `base` to the linear offset of its window's
  /// first element in the result (updates) and returns the linear offset in the operand of the element the window
  /// starts at. A gather's start indices are clamped so the slice lies inside the operand; a scatter window that
  /// does not fit returns -1 (XLA drops the whole window).
  int64_t locate(const int64_t* batch, const void* indices, DType index_dtype, int64_t& base, Cursor& c) const;

 private:
  /// The space (gather's result, scatter's updates) and its window axes; the operand axes with no window axis
  /// (collapsed, inserted); slice_sizes for gather (its starts clamp by them), null for scatter.
  WindowIndexing(bool clamp, const std::vector<int64_t>& space_dims, const std::vector<int64_t>& window_axes,
                 const std::vector<int64_t>& operand_dims, const std::vector<int64_t>& dropped_axes,
                 const std::vector<int64_t>* slice_sizes, const std::vector<int64_t>& index_dims,
                 int64_t index_vector_dim, const std::vector<int64_t>& index_map,
                 const std::vector<int64_t>& operand_batching_axes, const std::vector<int64_t>& index_batching_axes);

  bool clamp_ = true;                   // gather clamps; scatter drops what does not fit
  std::vector<int64_t> batch_strides_;  // per batch axis: stride in the result (updates)
  std::vector<int64_t> index_batch_;    // per batch axis: the index array's axis it walks
  std::vector<int64_t> index_strides_;  // row-major strides of the index array
  int64_t index_vector_dim_ = 0;
  std::vector<int64_t> index_map_;  // index component j -> operand axis
  std::vector<std::pair<int64_t, int64_t>> batching_;  // (operand axis, index array axis) pairs
  std::vector<int64_t> operand_strides_, limit_;       // limit: the largest start on each operand axis
};

/// Calls f(a, b) for each multi-index m over dims in row-major order, where a = m . strides_a, b = m . strides_b
/// (dims with no axes: once, at 0, 0; an empty extent: never).
template <class F>
void for_each_offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides_a,
                     const std::vector<int64_t>& strides_b, F&& f) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (auto d : dims)
    if (d == 0) return;
  int64_t small[8] = {};  // the multi-index; windows rarely have more axes, and then they are long
  std::vector<int64_t> big(rank > 8 ? dims.size() : 0, 0);
  int64_t* m = rank > 8 ? big.data() : small;
  int64_t a = 0, b = 0;
  while (true) {
    f(a, b);
    int64_t k = rank - 1;
    for (; k >= 0; --k) {
      a += strides_a[k];
      b += strides_b[k];
      if (++m[k] < dims[k]) break;
      a -= dims[k] * strides_a[k];
      b -= dims[k] * strides_b[k];
      m[k] = 0;
    }
    if (k < 0) return;
  }
}

/// An order-preserving key: key(a) < key(b) iff a sorts before b. Floats: -0.0 == 0.0, every NaN equal and after
/// +inf; signed and unsigned integers (and bool) by value.
uint64_t sort_key(const void* data, DType d, int64_t i);

/// The lines a sort along axis `dim` of `dims` (row-major) orders: line l holds elements base(l) + t * stride.
struct SortLines {
  SortLines(const std::vector<int64_t>& dims, int64_t dim);
  int64_t count = 0, n = 0, stride = 1;
  int64_t base(int64_t l) const { return (l / stride) * stride * n + l % stride; }
};

/// Working space for sort_line and top_k_line, one per thread.
struct SortScratch {
  std::vector<uint64_t> keys;
  std::vector<std::pair<uint64_t, int64_t>> pairs;
};

/// The stable ascending order of one line (n elements from base, stride apart), lexicographic over the keys
/// arrays (the sort's first num_keys operands, with their dtypes): perm[t] is the line position of the t-th.
void sort_line(std::span<const void* const> keys, std::span<const DType> dtypes, int64_t base, int64_t stride,
               int64_t n, int64_t* perm, SortScratch& s);

/// top_k of one row (n contiguous elements from base): the positions of its k largest, largest first, ties to
/// the lower position, NaN above everything.
void top_k_line(const void* data, DType d, int64_t base, int64_t n, int64_t k, int64_t* pos, SortScratch& s);

}  // namespace jitx::hlo
