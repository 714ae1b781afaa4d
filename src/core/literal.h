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

/// Row-major strides of dims, in elements.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);
int64_t num_elements(const std::vector<int64_t>& dims);

}  // namespace jitx::detail
