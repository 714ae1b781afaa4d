// Arrays over host memory without a copy (from_host, a moved-in vector) and in-place reads (host_view).
#include "jitx/host.h"

#include "core/errors.h"
#include "core/shape_util.h"
#include "io/host_util.h"
#include "jitx/config.h"
#include "runtime/concrete.h"

namespace jitx {
using detail::ApiScope;
using detail::throw_error;

namespace io_detail {
bool is_host_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kHostAlignment == 0; }

Array wrap_host(void* data, DType dtype, const Shape& shape, std::shared_ptr<void> owner, bool reusable) {
  detail::Literal lit;
  lit.dtype = dtype;
  lit.dims = shape;
  size_t nbytes = static_cast<size_t>(detail::num_elements(shape)) * dtype_size(dtype);
  lit.storage = detail::Storage::wrap(data, nbytes, std::move(owner), reusable);
  return detail::make_concrete(runtime::Buffer::from_literal(lit, runtime::Client::get().default_device()));
}

bool can_wrap(const void* data, DType dtype, const Shape& shape) {
  return data && is_host_aligned(data) && canonicalize_dtype(dtype) == dtype && detail::num_elements(shape) > 0;
}
}  // namespace io_detail

Array detail::array_from_owned(void* data, DType dtype, Shape shape, std::shared_ptr<void> owner, bool reusable,
                               Loc loc) {
  ApiScope s(loc);
  detail::checked_num_elements(shape, dtype, "array");
  if (!io_detail::can_wrap(data, dtype, shape)) return array_from_data(data, dtype, std::move(shape), dtype, loc);
  return io_detail::wrap_host(data, dtype, shape, std::move(owner), reusable);
}

Array from_host(void* data, Shape shape, DType dtype, std::function<void(void*)> deleter, Loc loc) {
  ApiScope s(loc);
  if (!is_valid_dtype(dtype)) throw_error<TypeError>("from_host", "got an invalid dtype ({})", int(dtype));
  int64_t n = detail::checked_num_elements(shape, dtype, "from_host");
  if (n > 0 && !data)
    throw_error<TypeError>("from_host", "got a null data pointer for shape {}", detail::shape_str(shape));
  if (!io_detail::can_wrap(data, dtype, shape)) {
    // Copied (misaligned, 64-bit without x64, or empty): the memory is not needed past this call.
    Array a = array_from_data(data, dtype, std::move(shape), dtype, loc);
    if (deleter) deleter(data);
    return a;
  }
  // The owner's deleter is the user's; an empty one borrows (the caller keeps the memory alive).
  std::shared_ptr<void> owner(data, [d = std::move(deleter)](void* p) {
    if (d) d(p);
  });
  return io_detail::wrap_host(data, dtype, shape, std::move(owner), /*reusable=*/false);
}

const void* unsafe_buffer_pointer(const Array& a, Loc loc) {
  ApiScope s(loc);
  return detail::concrete_buffer(a, "unsafe_buffer_pointer")->literal().data();
}

std::pair<const void*, std::shared_ptr<const void>> detail::host_buffer(const Array& a, DType elem_dtype, bool raw_bits,
                                                                        Loc loc) {
  ApiScope s(loc);
  auto lit = detail::concrete_buffer(a, "host_view")->literal();  // waits for the value
  bool half = lit.dtype == DType::float16 || lit.dtype == DType::bfloat16;
  if (lit.dtype != elem_dtype && !(raw_bits && half))
    throw_error<TypeError>("host_view",
                           "the array holds {} but the view reads {}; use host_view<T> with T the "
                           "array's element type (uint16_t for the bits of float16 and bfloat16), or "
                           "astype first",
                           dtype_name(lit.dtype), dtype_name(elem_dtype));
  const void* p = lit.data();
  return {p, std::shared_ptr<const void>(lit.storage, p)};
}

}  // namespace jitx
