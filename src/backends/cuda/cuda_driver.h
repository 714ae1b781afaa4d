// The CUDA driver, opened at run time with dlopen("libcuda.so.1") (never linked) and its entry points resolved once
// through cuGetProcAddress. Without a driver nothing here throws until something asks for a device.
#pragma once
#include <memory>
#include <string>

#include <cuda.h>

namespace jitx::cuda {

/// The driver entry points jitx uses (cuda.h's prototypes; the _v2 variants where cuda.h maps the name to one).
struct Driver {
#define JITX_CUDA_DRIVER_FNS(X)                                                                                   \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)        \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                      \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)     \
  X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery) X(cuEventSynchronize)  \
  X(cuEventElapsedTime) X(cuCtxSynchronize) \
  X(cuMemAlloc) X(cuMemFree) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)        \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction)          \
  X(cuLaunchKernel) X(cuStreamQuery)
#define JITX_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  JITX_CUDA_DRIVER_FNS(JITX_CUDA_DECLARE)
#undef JITX_CUDA_DECLARE
  int version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
};

/// The driver, loaded and initialised (cuInit) on first use; nullptr when there is none, with the reason in *why
/// ("libcuda.so.1: cannot open shared object file", "cuInit failed: CUDA_ERROR_NO_DEVICE", ...).
const Driver* try_driver(std::string* why = nullptr);
/// Another driver library, opened and initialised like libcuda.so.1 (each call opens it anew; nullptr with the
/// reason in *why). For the plumbing tests, which run the runtime on a fake driver (tests/fake_cuda_driver.cpp)
/// without touching the process's driver.
std::unique_ptr<Driver> open_driver(const std::string& path, std::string* why = nullptr);
/// The driver, or RuntimeError("no CUDA driver: <reason>") naming `op`.
const Driver& driver(const char* op);
/// How many CUDA devices the driver sees: 0 without a driver.
int device_count();

/// Throws RuntimeError "<op>: <CUDA_ERROR_NAME> (<description>)" when r is not CUDA_SUCCESS.
void check(CUresult r, const char* op);

}  // namespace jitx::cuda
