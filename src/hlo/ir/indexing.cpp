// Gather/scatter start and window index math, and sort's keys and orders (StableHLO semantics).
#include "hlo/ir/indexing.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/errors.h"

namespace jitx::hlo {
namespace {
using Ints = std::vector<int64_t>;

bool contains(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Ints row_major(const Ints& dims) {
  Ints s(dims.size(), 1);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * dims[k + 1];
  return s;
}

/// The index array's axes other than index_vector_dim, in order: they pair with the batch axes.
Ints index_batch_axes(int64_t rank, int64_t ivd) {
  Ints out;
  for (int64_t d = 0; d < rank; ++d)
    if (d != ivd) out.push_back(d);
  return out;
}

template <class T>
T load(const void* p, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// Ascending uint64 order = sort order: signed values offset by 2^63, doubles by their sign-magnitude bits.
inline uint64_t signed_key(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
// Branch-free: keys of random signs would mispredict half the time (top-k's key pass ran 3x slower).
inline uint64_t float_key(double v) {
  v += 0.0;  // -0.0 -> +0.0, everything else unchanged
  uint64_t b;
  std::memcpy(&b, &v, 8);
  uint64_t flip = static_cast<uint64_t>(static_cast<int64_t>(b) >> 63) | (uint64_t{1} << 63);  // ~b if negative
  return std::isnan(v) ? ~uint64_t{0} : b ^ flip;
}

// IEEE 754 total order (XLA's TopK order): -NaN first, -0.0 below +0.0, +NaN last.
inline uint64_t total_key(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b ^ (static_cast<uint64_t>(static_cast<int64_t>(b) >> 63) | (uint64_t{1} << 63));
}

/// f(i) -> key for elements of dtype d, the dtype dispatched once; `total` orders floats by total_key.
template <class F>
void with_key_of(DType d, F&& f, bool total = false) {
  if (total && is_floating(d)) {
    switch (d) {
      case DType::float16:
        return f([](const void* p, int64_t i) { return total_key(half_to_float(load<uint16_t>(p, i))); });
      case DType::bfloat16:
        return f([](const void* p, int64_t i) { return total_key(bfloat16_to_float(load<uint16_t>(p, i))); });
      case DType::float32: return f([](const void* p, int64_t i) { return total_key(load<float>(p, i)); });
      default: return f([](const void* p, int64_t i) { return total_key(load<double>(p, i)); });
    }
  }
  switch (d) {
    case DType::bool_:
    case DType::uint8: return f([](const void* p, int64_t i) { return uint64_t{load<uint8_t>(p, i)}; });
    case DType::uint16: return f([](const void* p, int64_t i) { return uint64_t{load<uint16_t>(p, i)}; });
    case DType::uint32: return f([](const void* p, int64_t i) { return uint64_t{load<uint32_t>(p, i)}; });
    case DType::uint64: return f([](const void* p, int64_t i) { return load<uint64_t>(p, i); });
    case DType::int8: return f([](const void* p, int64_t i) { return signed_key(load<int8_t>(p, i)); });
    case DType::int16: return f([](const void* p, int64_t i) { return signed_key(load<int16_t>(p, i)); });
    case DType::int32: return f([](const void* p, int64_t i) { return signed_key(load<int32_t>(p, i)); });
    case DType::int64: return f([](const void* p, int64_t i) { return signed_key(load<int64_t>(p, i)); });
    case DType::float16:
      return f([](const void* p, int64_t i) { return float_key(half_to_float(load<uint16_t>(p, i))); });
    case DType::bfloat16:
      return f([](const void* p, int64_t i) { return float_key(bfloat16_to_float(load<uint16_t>(p, i))); });
    case DType::float32: return f([](const void* p, int64_t i) { return float_key(load<float>(p, i)); });
    case DType::float64: return f([](const void* p, int64_t i) { return float_key(load<double>(p, i)); });
  }
}

/// out(t, key of element base + t * stride) for t < n.
template <class F>
void line_keys(const void* data, DType d, int64_t base, int64_t stride, int64_t n, F&& out, bool total = false) {
  with_key_of(
      d, [&](auto key) {
        for (int64_t t = 0; t < n; ++t) out(t, key(data, base + t * stride));
      },
      total);
}
}  // namespace

int64_t read_index(const void* data, DType d, int64_t i) {
  switch (d) {
    case DType::int8: return load<int8_t>(data, i);
    case DType::int16: return load<int16_t>(data, i);
    case DType::int32: return load<int32_t>(data, i);
    case DType::int64: return load<int64_t>(data, i);
    case DType::bool_:
    case DType::uint8: return load<uint8_t>(data, i);
    case DType::uint16: return load<uint16_t>(data, i);
    case DType::uint32: return load<uint32_t>(data, i);
    case DType::uint64: return static_cast<int64_t>(std::min<uint64_t>(load<uint64_t>(data, i), INT64_MAX));
    default: JITX_ASSERT(false, "index arrays are integers, not {}", dtype_name(d));
  }
  return 0;
}

WindowIndexing WindowIndexing::gather(const GatherDimensionNumbers& dn, const Ints& operand_dims,
                                      const Ints& index_dims, const Ints& result_dims) {
  return WindowIndexing(true, result_dims, dn.offset_dims, operand_dims, dn.collapsed_slice_dims, &dn.slice_sizes,
                        index_dims, dn.index_vector_dim, dn.start_index_map, dn.operand_batching_dims,
                        dn.start_indices_batching_dims);
}

WindowIndexing WindowIndexing::scatter(const ScatterDimensionNumbers& dn, const Ints& operand_dims,
                                       const Ints& index_dims, const Ints& update_dims) {
  return WindowIndexing(false, update_dims, dn.update_window_dims, operand_dims, dn.inserted_window_dims, nullptr,
                        index_dims, dn.index_vector_dim, dn.scatter_dims_to_operand_dims, dn.input_batching_dims,
                        dn.scatter_indices_batching_dims);
}

WindowIndexing::WindowIndexing(bool clamp, const Ints& space_dims, const Ints& window_axes, const Ints& operand_dims,
                               const Ints& dropped_axes, const Ints* slice_sizes, const Ints& index_dims,
                               int64_t index_vector_dim, const Ints& index_map, const Ints& operand_batching_axes,
                               const Ints& index_batching_axes)
    : clamp_(clamp),
      index_batch_(index_batch_axes(static_cast<int64_t>(index_dims.size()), index_vector_dim)),
      index_strides_(row_major(index_dims)),
      index_vector_dim_(index_vector_dim),
      index_map_(index_map),
      operand_strides_(row_major(operand_dims)) {
  auto sst = row_major(space_dims);
  for (int64_t d = 0; d < static_cast<int64_t>(space_dims.size()); ++d) {
    if (contains(window_axes, d)) continue;
    batch_dims.push_back(space_dims[d]);
    batch_strides_.push_back(sst[d]);
  }
  Ints extent(operand_dims.size(), 1);  // the window's size on each operand axis
  size_t k = 0;  // window_axes[k] pairs with the k-th operand axis that is neither dropped nor batching
  for (int64_t d = 0; d < static_cast<int64_t>(operand_dims.size()); ++d) {
    if (contains(dropped_axes, d) || contains(operand_batching_axes, d)) continue;
    int64_t u = window_axes.at(k++);
    extent[d] = space_dims[u];
    window_dims.push_back(space_dims[u]);
    window_strides.push_back(sst[u]);
    window_operand_strides.push_back(operand_strides_[d]);
  }
  if (slice_sizes) extent = *slice_sizes;  // gather clamps its starts by the slice sizes
  for (size_t d = 0; d < operand_dims.size(); ++d) limit_.push_back(operand_dims[d] - extent.at(d));
  for (size_t b = 0; b < operand_batching_axes.size(); ++b)
    batching_.emplace_back(operand_batching_axes[b], index_batching_axes[b]);
}

int64_t WindowIndexing::locate(const int64_t* batch, const void* indices, DType index_dtype, int64_t& base,
                               Cursor& c) const {
  base = 0;
  for (size_t k = 0; k < index_batch_.size(); ++k) {
    c.index_pos[index_batch_[k]] = batch[k];
    base += batch[k] * batch_strides_[k];
  }
  // StableHLO: full_start_index (from the index vector, clamped for gather) + full_batching_index.
  std::fill(c.start.begin(), c.start.end(), 0);
  const int64_t index_rank = static_cast<int64_t>(index_strides_.size());
  for (size_t j = 0; j < index_map_.size(); ++j) {
    if (index_vector_dim_ < index_rank) c.index_pos[index_vector_dim_] = static_cast<int64_t>(j);
    int64_t at = 0;
    for (int64_t a = 0; a < index_rank; ++a) at += c.index_pos[a] * index_strides_[a];
    c.start[index_map_[j]] = read_index(indices, index_dtype, at);
  }
  if (clamp_)
    for (size_t d = 0; d < limit_.size(); ++d) c.start[d] = std::clamp<int64_t>(c.start[d], 0, limit_[d]);
  for (auto [operand_axis, index_axis] : batching_) c.start[operand_axis] += c.index_pos[index_axis];
  int64_t offset = 0;
  for (size_t d = 0; d < limit_.size(); ++d) {
    if (!clamp_ && (c.start[d] < 0 || c.start[d] > limit_[d])) return -1;
    offset += c.start[d] * operand_strides_[d];
  }
  return offset;
}

uint64_t sort_key(const void* data, DType d, int64_t i) {
  uint64_t k = 0;
  line_keys(data, d, i, 1, 1, [&](int64_t, uint64_t key) { k = key; });
  return k;
}

SortLines::SortLines(const Ints& dims, int64_t dim) : n(dims.at(dim)), stride(row_major(dims)[dim]) {
  count = n == 0 ? 0 : std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>()) / n;
}

void sort_line(std::span<const void* const> keys, std::span<const DType> dtypes, int64_t base, int64_t stride,
               int64_t n, int64_t* perm, SortScratch& s) {
  auto nk = static_cast<int64_t>(keys.size());
  if (nk == 1) {  // (key, position) pairs are totally ordered: std::sort is stable here
    s.pairs.resize(static_cast<size_t>(n));
    line_keys(keys[0], dtypes[0], base, stride, n, [&](int64_t t, uint64_t key) { s.pairs[t] = {key, t}; });
    std::sort(s.pairs.begin(), s.pairs.end());
    for (int64_t t = 0; t < n; ++t) perm[t] = s.pairs[t].second;
    return;
  }
  s.keys.resize(static_cast<size_t>(n * nk));
  for (int64_t k = 0; k < nk; ++k)
    line_keys(keys[k], dtypes[k], base, stride, n, [&](int64_t t, uint64_t key) { s.keys[t * nk + k] = key; });
  std::iota(perm, perm + n, 0);
  const uint64_t* key = s.keys.data();
  std::stable_sort(perm, perm + n, [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(key + a * nk, key + a * nk + nk, key + b * nk, key + b * nk + nk);
  });
}

void top_k_line(const void* data, DType d, int64_t base, int64_t n, int64_t k, int64_t* pos, SortScratch& s) {
  // Largest first in IEEE total order (as XLA's TopK: +NaN first, +0.0 above -0.0), ties by position:
  // (~key, position) ascending.
  s.pairs.resize(static_cast<size_t>(n));
  line_keys(data, d, base, 1, n, [&](int64_t t, uint64_t key) { s.pairs[t] = {~key, t}; }, /*total=*/true);
  std::partial_sort(s.pairs.begin(), s.pairs.begin() + k, s.pairs.end());
  for (int64_t t = 0; t < k; ++t) pos[t] = s.pairs[t].second;
}

}  // namespace jitx::hlo
