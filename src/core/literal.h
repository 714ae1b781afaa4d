// Literal: an array's values on the host (dtype, dims, storage); HLO constants and interpreter values.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/storage.h"
#include "jitx/dtype.h"

namespace jitx::detail {

struct Literal {
  DType dtype = DType::float32;
  std::vector<int64_t> dims;
  std::shared_ptr<Storage> storage;

  static Literal make(DType dtype, std::vector<int64_t> dims);  // uninitialised
  int64_t size() const;
  size_t nbytes() const { return static_cast<size_t>(size()) * dtype_size(dtype); }
  void* data() { return storage->data(); }
  const void* data() const { return storage->data(); }

  // Element access through wide types (double for floats, int64/uint64 for integers).
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  uint64_t get_u64(int64_t i) const;
  void set_f64(int64_t i, double v);  // rounds to the dtype
  void set_i64(int64_t i, int64_t v);  // wraps to the dtype's width
  void set_u64(int64_t i, uint64_t v);

  /// Copies n elements converting between dtypes (numpy's astype semantics, floats truncate to ints).
  static void convert(const void* src, DType src_dtype, void* dst, DType dst_dtype, size_t n);
  /// Values printed as numpy would, at most max_elems per array.
  std::string values_str(int64_t max_elems = 1000) const;
};

/// The values as NumPy's array2string prints them in JAX's repr (separator ", ", line width 75 less suffix_len,
/// continuation lines indented past a prefix of prefix_len characters and the "["); over `threshold` elements
/// summarised with "...". src/core/array_print.cpp.
std::string array_text(const Literal& lit, int64_t threshold, size_t prefix_len, size_t suffix_len);

/// Row-major strides of dims, in elements.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);
int64_t num_elements(const std::vector<int64_t>& dims);

/// Multi-index iteration over dims in row-major order: idx starts at zeros, next() steps to the following index.
struct IndexCounter {
  std::vector<int64_t> dims, idx;
  explicit IndexCounter(std::vector<int64_t> d) : dims(std::move(d)), idx(dims.size(), 0) {}
  void next() {
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      if (++idx[i] < dims[i]) return;
      idx[i] = 0;
    }
  }
};

/// sum(idx[i] * strides[i]): the offset of a multi-index.
inline int64_t linear_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t l = 0;
  for (size_t i = 0; i < idx.size(); ++i) l += idx[i] * strides[i];
  return l;
}

}  // namespace jitx::detail
