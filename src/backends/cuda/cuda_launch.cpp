// The synchronous kernel launcher (see cuda_launch.h).
#include "backends/cuda/cuda_launch.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_driver.h"
#include "jitx/error.h"

namespace jitx::cuda {
namespace {
CUcontext primary_context(const Driver& d, int ordinal, CUdevice* dev) {
  check(d.cuDeviceGet(dev, ordinal), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(d.cuDevicePrimaryCtxRetain(&ctx, *dev), "cuDevicePrimaryCtxRetain");
  check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return ctx;
}

// Device buffers freed on scope exit.
struct DeviceBuffers {
  const Driver& d;
  std::vector<CUdeviceptr> ptrs;
  ~DeviceBuffers() {
    for (CUdeviceptr p : ptrs) d.cuMemFree(p);
  }
  CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    check(d.cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
    ptrs.push_back(p);
    return p;
  }
};
}  // namespace

struct LoadedKernel::Impl {
  const Driver& d;
  GpuKernel k;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;

  // Device buffers for outputs, then inputs (copied in); returns the kernel's parameters in that order.
  std::vector<CUdeviceptr> place(DeviceBuffers& bufs, const std::vector<detail::Literal>& inputs,
                                 const std::vector<hlo::Shape>& outputs) const {
    size_t want = k.plan.num_operands + k.plan.num_scratch;
    if (inputs.size() != want || outputs.size() != k.plan.num_outputs)
      throw RuntimeError(fmt::format("cuda launch of {}: got {} inputs and {} outputs, expected {} and {}", k.name,
                                     inputs.size(), outputs.size(), want, k.plan.num_outputs));
    std::vector<CUdeviceptr> params;
    for (auto& s : outputs) params.push_back(bufs.alloc(static_cast<size_t>(s.byte_size())));
    for (auto& in : inputs) {
      CUdeviceptr p = bufs.alloc(in.nbytes());
      if (in.nbytes()) check(d.cuMemcpyHtoDAsync(p, in.data(), in.nbytes(), nullptr), "cuMemcpyHtoDAsync");
      params.push_back(p);
    }
    return params;
  }
  void launch(std::vector<CUdeviceptr>& params) const {
    std::vector<void*> args;
    for (auto& p : params) args.push_back(&p);
    check(d.cuLaunchKernel(fn, static_cast<unsigned>(k.plan.grid), 1, 1, static_cast<unsigned>(k.plan.block), 1, 1,
                           0, nullptr, args.data(), nullptr),
          "cuLaunchKernel");
  }
};

LoadedKernel::LoadedKernel(const GpuKernel& k, int ordinal) : impl_(new Impl{driver("cuda launch"), k}) {
  Impl& m = *impl_;
  m.ctx = primary_context(m.d, ordinal, &m.dev);
  std::vector<char> log(16384, 0), info(16384, 0);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log.data(), reinterpret_cast<void*>(log.size()), info.data(), reinterpret_cast<void*>(info.size())};
  CUresult r = m.d.cuModuleLoadDataEx(&m.mod, k.ptx.c_str(), 4, opts, vals);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    m.d.cuGetErrorName(r, &name);
    throw RuntimeError(fmt::format("cuModuleLoadDataEx of {} (%{}): {}; JIT log: {}", k.name, k.instruction,
                                   name ? name : "error", log.data()));
  }
  check(m.d.cuModuleGetFunction(&m.fn, m.mod, k.name.c_str()), "cuModuleGetFunction");
}

LoadedKernel::~LoadedKernel() {
  if (impl_->mod) impl_->d.cuModuleUnload(impl_->mod);
  if (impl_->ctx) impl_->d.cuDevicePrimaryCtxRelease(impl_->dev);
}

std::vector<detail::Literal> LoadedKernel::run(const std::vector<detail::Literal>& inputs,
                                               const std::vector<hlo::Shape>& outputs) const {
  const Impl& m = *impl_;
  check(m.d.cuCtxSetCurrent(m.ctx), "cuCtxSetCurrent");
  DeviceBuffers bufs{m.d, {}};
  std::vector<CUdeviceptr> params = m.place(bufs, inputs, outputs);
  m.launch(params);
  std::vector<detail::Literal> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    out.push_back(detail::Literal::make(outputs[i].dtype, outputs[i].dims));
    if (out.back().nbytes())
      check(m.d.cuMemcpyDtoHAsync(out.back().data(), params[i], out.back().nbytes(), nullptr), "cuMemcpyDtoHAsync");
  }
  check(m.d.cuStreamSynchronize(nullptr), "kernel execution (cuStreamSynchronize)");
  return out;
}

double LoadedKernel::time_ms(const std::vector<detail::Literal>& inputs, const std::vector<hlo::Shape>& outputs,
                             int reps) const {
  const Impl& m = *impl_;
  check(m.d.cuCtxSetCurrent(m.ctx), "cuCtxSetCurrent");
  DeviceBuffers bufs{m.d, {}};
  std::vector<CUdeviceptr> params = m.place(bufs, inputs, outputs);
  m.launch(params);  // warm-up
  CUevent e0 = nullptr, e1 = nullptr;
  check(m.d.cuEventCreate(&e0, CU_EVENT_DEFAULT), "cuEventCreate");
  check(m.d.cuEventCreate(&e1, CU_EVENT_DEFAULT), "cuEventCreate");
  check(m.d.cuEventRecord(e0, nullptr), "cuEventRecord");
  for (int i = 0; i < reps; ++i) m.launch(params);
  check(m.d.cuEventRecord(e1, nullptr), "cuEventRecord");
  check(m.d.cuEventSynchronize(e1), "kernel execution (cuEventSynchronize)");
  float ms = 0;
  check(m.d.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
  m.d.cuEventDestroy(e0);
  m.d.cuEventDestroy(e1);
  return ms / reps;
}

std::string LoadedKernel::device_name() const {
  char name[256] = {0};
  check(impl_->d.cuDeviceGetName(name, sizeof name, impl_->dev), "cuDeviceGetName");
  return name;
}
int LoadedKernel::compute_capability() const {
  int major = 0, minor = 0;
  check(impl_->d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, impl_->dev), "attr");
  check(impl_->d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, impl_->dev), "attr");
  return major * 10 + minor;
}

double copy_time_ms(int64_t bytes, int reps, int ordinal) {
  const Driver& d = driver("cuda copy benchmark");
  CUdevice dev = 0;
  primary_context(d, ordinal, &dev);
  DeviceBuffers bufs{d, {}};
  CUdeviceptr a = bufs.alloc(static_cast<size_t>(bytes)), b = bufs.alloc(static_cast<size_t>(bytes));
  check(d.cuMemsetD8Async(a, 1, static_cast<size_t>(bytes), nullptr), "cuMemsetD8Async");
  check(d.cuMemcpyDtoDAsync(b, a, static_cast<size_t>(bytes), nullptr), "cuMemcpyDtoDAsync");
  CUevent e0 = nullptr, e1 = nullptr;
  check(d.cuEventCreate(&e0, CU_EVENT_DEFAULT), "cuEventCreate");
  check(d.cuEventCreate(&e1, CU_EVENT_DEFAULT), "cuEventCreate");
  check(d.cuEventRecord(e0, nullptr), "cuEventRecord");
  for (int i = 0; i < reps; ++i) check(d.cuMemcpyDtoDAsync(b, a, static_cast<size_t>(bytes), nullptr), "copy");
  check(d.cuEventRecord(e1, nullptr), "cuEventRecord");
  check(d.cuEventSynchronize(e1), "cuEventSynchronize");
  float ms = 0;
  check(d.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
  d.cuEventDestroy(e0);
  d.cuEventDestroy(e1);
  d.cuDevicePrimaryCtxRelease(dev);
  return ms / reps;
}

GpuTarget target_for(int cc) { return cc >= 90 ? GpuTarget::sm90() : GpuTarget::sm80(); }

}  // namespace jitx::cuda
