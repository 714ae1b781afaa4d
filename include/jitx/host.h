// Host memory in and out without a copy: from_host, a moved-in vector, host_view, and DLPack import and export.
//   jitx::HostVector<float> v(n);  ...fill v...  Array x = jitx::array(std::move(v), {n});   // no copy
//   Array y = jitx::from_host(ptr, {rows, cols}, jitx::float32, [](void* p) { std::free(p); });
//   auto view = jitx::host_view<float>(y);   // y's buffer, read in place; view.span(), view[i]
//   DLManagedTensor* t = jitx::to_dlpack(y);   Array z = jitx::from_dlpack(t);   // same memory, both ways
// Every jitx buffer is host memory (the cpu and interpreter platforms), in row-major order, 64-byte aligned: the
// cpu backend's kernels assume that alignment of every pointer. Memory that is not 64-byte aligned (or not
// compact row-major, for DLPack) is copied, and the copy is what the array holds; the README's "Host memory
// without a copy" says when each path copies. Arrays stay immutable: memory given to jitx with from_host or
// from_dlpack is never written, not even by a call that donates the array (it computes into fresh memory).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include "jitx/array.h"
#include "jitx/dlpack.h"

namespace jitx {

/// The alignment jitx's buffers have and zero-copy host memory needs, in bytes.
inline constexpr size_t kHostAlignment = 64;

/// A std::allocator whose memory is kHostAlignment-aligned: a HostVector moved into jitx::array is not copied.
template <class T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <class U>
  HostAllocator(const HostAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(size_t n) { return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kHostAlignment})); }
  void deallocate(T* p, size_t) noexcept { ::operator delete (p, std::align_val_t{kHostAlignment}); }
  template <class U>
  bool operator==(const HostAllocator<U>&) const noexcept {
    return true;
  }
};
template <class T>
using HostVector = std::vector<T, HostAllocator<T>>;

/// An array over `data` (shape's elements of dtype, row-major) without a copy. `deleter(data)` runs once, when the
/// last reference to the memory goes (the array, arrays sharing its buffer, views and DLPack exports of it); an
/// empty deleter means the caller keeps `data` alive and unchanged for as long as any of those lives. jitx never
/// writes `data`. When `data` is not kHostAlignment-aligned (or dtype is 64-bit with config().enable_x64 off, or the
/// array is empty), the values are copied and deleter runs before from_host returns. A null `data` for a non-empty
/// shape is a TypeError.
Array from_host(void* data, Shape shape, DType dtype, std::function<void(void*)> deleter, Loc loc = Loc::current());

/// The address of the array's memory on the host (waiting for its value), as jax.Array.unsafe_buffer_pointer():
/// for checking that no copy was made. The address is valid while the array lives.
const void* unsafe_buffer_pointer(const Array& a, Loc loc = Loc::current());

namespace detail {
/// The ready host buffer of `a` whose elements are read as `elem_dtype` (TypeError when a's dtype differs; raw
/// uint16 bits may read float16 and bfloat16): the memory and an owner that keeps it alive.
std::pair<const void*, std::shared_ptr<const void>> host_buffer(const Array& a, DType elem_dtype, bool raw_bits,
                                                                Loc loc);
}  // namespace detail

/// A read-only view of an array's host memory, without a copy. It holds the memory (the view stays valid after the
/// array goes), and while it lives a call donating the array computes into fresh memory, so the values it shows
/// never change.
template <class T>
class HostView {
 public:
  HostView(const T* data, int64_t size, Shape shape, std::shared_ptr<const void> owner)
      : data_(data), size_(size), shape_(std::move(shape)), owner_(std::move(owner)) {}
  std::span<const T> span() const { return {data_, static_cast<size_t>(size_)}; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }
  const Shape& shape() const { return shape_; }
  const T& operator[](int64_t i) const { return data_[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  const T* data_;
  int64_t size_;
  Shape shape_;
  std::shared_ptr<const void> owner_;
};

/// The values of a concrete array in place (waiting for them): T must be the array's element type (bool for bool;
/// uint16_t gives the bits of float16 and bfloat16). TypeError for another T; TracerError for a tracer;
/// RuntimeError for a donated array.
template <class T>
HostView<T> host_view(const Array& a, Loc loc = Loc::current()) {
  static_assert(std::is_arithmetic_v<T>,
                "host_view<T>: T is the array's element type (bool, an integer, float, "
                "double; uint16_t for the bits of float16 and bfloat16)");
  constexpr bool raw = std::is_same_v<T, uint16_t>;
  auto [p, owner] = detail::host_buffer(a, dtype_of<T>(), raw, loc);
  return HostView<T>(static_cast<const T*>(p), a.size(), a.shape(), std::move(owner));
}

// --- DLPack ---------------------------------------------------------------------------------------------------
/// The array as a DLPack tensor sharing its memory (no copy; waits for the value): kDLCPU, compact row-major
/// strides (never NULL), bool as kDLBool with 8 bits, bfloat16 as kDLBfloat. The consumer must not write the data
/// and calls the tensor's deleter once when done; the memory stays alive until then. TracerError for a tracer,
/// RuntimeError for a donated array.
DLManagedTensor* to_dlpack(const Array& a, Loc loc = Loc::current());
/// The same as a DLManagedTensorVersioned (version 1.0, flags DLPACK_FLAG_BITMASK_READ_ONLY).
DLManagedTensorVersioned* to_dlpack_versioned(const Array& a, Loc loc = Loc::current());

/// An array from a DLPack tensor on host memory (kDLCPU, kDLCUDAHost or kDLROCMHost), taking it over: the tensor's
/// deleter runs once when the last reference to the memory goes, or before from_dlpack returns when the values had
/// to be copied (strides that are not compact row-major, an address not kHostAlignment-aligned, a 64-bit dtype with
/// enable_x64 off, an empty tensor). jitx never writes the memory. dtypes: bool (kDLBool, 8 bits), int8-64,
/// uint8-64, float16/32/64, bfloat16; lanes must be 1. Throws (TypeError for a dtype, a device or a major version
/// it cannot read, or a null tensor; ShapeError for a negative dimension) without calling the deleter: on error the
/// tensor is still the caller's.
Array from_dlpack(DLManagedTensor* tensor, Loc loc = Loc::current());
Array from_dlpack(DLManagedTensorVersioned* tensor, Loc loc = Loc::current());

/// The DLPack element type of a jitx dtype, and back (TypeError naming `from_dlpack` for types jitx lacks).
DLDataType to_dlpack_dtype(DType d);
DType from_dlpack_dtype(DLDataType t, Loc loc = Loc::current());

}  // namespace jitx
