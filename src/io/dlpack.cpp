// DLPack import and export: arrays shared with PyTorch, NumPy and other libraries without a copy.
#include <cstring>

#include "core/errors.h"
#include "core/shape_util.h"
#include "io/host_util.h"
#include "jitx/host.h"
#include "runtime/concrete.h"

namespace jitx {
using detail::ApiScope;
using detail::throw_error;

namespace {
/// What an exported tensor keeps alive: the buffer's memory and the shape and strides it points to.
struct ExportContext {
  std::shared_ptr<detail::Storage> storage;
  std::vector<int64_t> shape, strides;
};

template <class M>
M* export_tensor(const Array& a, M* t) {
  const auto& buf = detail::concrete_buffer(a, "to_dlpack");
  auto lit = buf->literal();  // waits for the value: the consumer reads it at once
  auto ctx = std::make_unique<ExportContext>(ExportContext{lit.storage, lit.dims, detail::row_major_strides(lit.dims)});
  DLTensor& d = t->dl_tensor;
  d.data = lit.storage->data();
  d.device = DLDevice{kDLCPU, buf->device ? buf->device->id : 0};
  d.ndim = static_cast<int32_t>(lit.dims.size());
  d.dtype = to_dlpack_dtype(lit.dtype);
  d.shape = ctx->shape.data();
  d.strides = ctx->strides.data();
  d.byte_offset = 0;
  t->manager_ctx = ctx.release();
  t->deleter = [](M* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
    delete self;
  };
  return t;
}

const char* device_name(DLDeviceType t) {
  switch (t) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    case kDLCUDAHost:
      return "cuda_host";
    case kDLOpenCL:
      return "opencl";
    case kDLVulkan:
      return "vulkan";
    case kDLMetal:
      return "metal";
    case kDLROCM:
      return "rocm";
    case kDLROCMHost:
      return "rocm_host";
    case kDLCUDAManaged:
      return "cuda_managed";
    case kDLOneAPI:
      return "oneapi";
    default:
      return "another device";
  }
}

template <class M>
Array import_tensor(M* t) {
  if (!t) throw_error<TypeError>("from_dlpack", "got a null DLPack tensor");
  const DLTensor& d = t->dl_tensor;
  DLDeviceType dev = d.device.device_type;
  if (dev != kDLCPU && dev != kDLCUDAHost && dev != kDLROCMHost)
    throw_error<TypeError>("from_dlpack",
                           "the tensor is on {} (DLDeviceType {}, device {}); jitx reads host memory "
                           "only (kDLCPU, kDLCUDAHost, kDLROCMHost): copy it to the host first",
                           device_name(dev), static_cast<int>(dev), d.device.device_id);
  DType dtype = from_dlpack_dtype(d.dtype);
  if (d.ndim < 0 || (d.ndim > 0 && !d.shape))
    throw_error<TypeError>("from_dlpack", "got ndim {} with {} shape", d.ndim, d.shape ? "a" : "a null");
  Shape shape(d.shape, d.shape + d.ndim);
  for (int64_t s : shape)
    if (s < 0) throw_error<ShapeError>("from_dlpack", "got a negative dimension in shape {}", detail::shape_str(shape));
  int64_t n = detail::checked_num_elements(shape, dtype, "from_dlpack");
  if (n > 0 && !d.data)
    throw_error<TypeError>("from_dlpack", "got a null data pointer for shape {}", detail::shape_str(shape));
  char* base = static_cast<char*>(d.data) + d.byte_offset;
  // Compact row-major: each axis of size > 1 steps by the product of the sizes after it (size-1 axes may say any).
  bool compact = true;
  if (d.strides) {
    int64_t expect = 1;
    for (int64_t i = d.ndim - 1; i >= 0; --i) {
      if (shape[i] != 1 && d.strides[i] != expect) compact = false;
      expect *= shape[i];
    }
  }
  auto release = [t] {
    if (t->deleter) t->deleter(t);
  };
  if (compact && io_detail::can_wrap(base, dtype, shape)) {
    std::shared_ptr<void> owner(base, [release](void*) { release(); });
    return io_detail::wrap_host(base, dtype, shape, std::move(owner), /*reusable=*/false);
  }
  Array a;
  if (n == 0 || compact) {
    a = array_from_data(n == 0 ? nullptr : base, dtype, shape, dtype);
  } else {  // a strided (transposed, sliced or reversed) tensor: gathered into row-major order
    size_t es = dtype_size(dtype);
    std::vector<char> tmp(static_cast<size_t>(n) * es);
    detail::IndexCounter it(shape);
    std::vector<int64_t> strides(d.strides, d.strides + d.ndim);
    for (int64_t k = 0; k < n; ++k, it.next())
      std::memcpy(tmp.data() + static_cast<size_t>(k) * es, base + detail::linear_index(it.idx, strides) * int64_t(es),
                  es);
    a = array_from_data(tmp.data(), dtype, shape, dtype);
  }
  release();
  return a;
}
}  // namespace

DLDataType to_dlpack_dtype(DType d) {
  uint8_t bits = static_cast<uint8_t>(dtype_bits(d));
  uint8_t code = is_bool(d)             ? kDLBool
                 : d == DType::bfloat16 ? kDLBfloat
                 : is_floating(d)       ? kDLFloat
                 : is_signed_integer(d) ? kDLInt
                                        : kDLUInt;
  if (is_bool(d)) bits = 8;
  return DLDataType{code, bits, 1};
}

DType from_dlpack_dtype(DLDataType t, Loc loc) {
  ApiScope s(loc);
  auto fail = [&]() -> DType {
    throw_error<TypeError>("from_dlpack",
                           "DLPack dtype (code {}, {} bits, {} lanes) has no jitx dtype; jitx reads "
                           "bool (kDLBool, 8 bits), int and uint of 8-64 bits, float of 16, 32 and "
                           "64 bits and bfloat16, one lane each",
                           int(t.code), int(t.bits), int(t.lanes));
  };
  if (t.lanes != 1) return fail();
  switch (t.code) {
    case kDLBool:
      return t.bits == 8 ? DType::bool_ : fail();
    case kDLInt:
      switch (t.bits) {
        case 8:
          return DType::int8;
        case 16:
          return DType::int16;
        case 32:
          return DType::int32;
        case 64:
          return DType::int64;
      }
      return fail();
    case kDLUInt:
      switch (t.bits) {
        case 8:
          return DType::uint8;
        case 16:
          return DType::uint16;
        case 32:
          return DType::uint32;
        case 64:
          return DType::uint64;
      }
      return fail();
    case kDLFloat:
      switch (t.bits) {
        case 16:
          return DType::float16;
        case 32:
          return DType::float32;
        case 64:
          return DType::float64;
      }
      return fail();
    case kDLBfloat:
      return t.bits == 16 ? DType::bfloat16 : fail();
    default:
      return fail();
  }
}

DLManagedTensor* to_dlpack(const Array& a, Loc loc) {
  ApiScope s(loc);
  auto t = std::make_unique<DLManagedTensor>();
  export_tensor(a, t.get());
  return t.release();
}

DLManagedTensorVersioned* to_dlpack_versioned(const Array& a, Loc loc) {
  ApiScope s(loc);
  auto t = std::make_unique<DLManagedTensorVersioned>();
  t->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  t->flags = DLPACK_FLAG_BITMASK_READ_ONLY;  // jitx arrays are immutable
  export_tensor(a, t.get());
  return t.release();
}

Array from_dlpack(DLManagedTensor* tensor, Loc loc) {
  ApiScope s(loc);
  return import_tensor(tensor);
}

Array from_dlpack(DLManagedTensorVersioned* tensor, Loc loc) {
  ApiScope s(loc);
  if (tensor && tensor->version.major != DLPACK_MAJOR_VERSION)
    throw_error<TypeError>("from_dlpack", "the tensor is DLPack version {}.{}; jitx reads major version {}",
                           tensor->version.major, tensor->version.minor, DLPACK_MAJOR_VERSION);
  return import_tensor(tensor);
}

}  // namespace jitx
