// Shared by host.cpp and dlpack.cpp: wrapping host memory jitx did not allocate as an array's buffer.
#pragma once
#include <memory>

#include "jitx/array.h"

namespace jitx::io_detail {

/// Whether p is kHostAlignment-aligned (what the cpu backend's kernels assume of every buffer).
bool is_host_aligned(const void* p);
/// Whether `data` can be the array's memory as it is: non-null, aligned, a canonical dtype, a non-empty shape.
bool can_wrap(const void* data, DType dtype, const Shape& shape);
/// A concrete array on the default device whose buffer is `data` (can_wrap must hold); owner's deleter runs when
/// the last reference goes. `reusable`: whether donation may write into it.
Array wrap_host(void* data, DType dtype, const Shape& shape, std::shared_ptr<void> owner, bool reusable);

}  // namespace jitx::io_detail
