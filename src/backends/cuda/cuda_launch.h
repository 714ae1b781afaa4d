// Running one compiled kernel on a CUDA device, synchronously: the smallest piece of a runtime, for the GPU tests
// and tools/gpu_check.sh (the asynchronous runtime of streams, events and a caching allocator is not built yet).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_codegen.h"
#include "core/literal.h"

namespace jitx::cuda {

/// A loaded kernel on device `ordinal` (its primary context): the module is loaded with cuModuleLoadDataEx, and a
/// failure throws RuntimeError carrying the driver's JIT error log.
class LoadedKernel {
 public:
  LoadedKernel(const GpuKernel& k, int ordinal = 0);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  /// Copies the operands in, launches with the kernel's plan, copies the outputs back (dtypes and dims of
  /// `outputs`); scratch buffers (output fusions' dot results) come after the operands in `inputs`.
  std::vector<detail::Literal> run(const std::vector<detail::Literal>& inputs,
                                   const std::vector<hlo::Shape>& outputs) const;
  /// Milliseconds per launch over `reps` launches on buffers already on the device (events around them).
  double time_ms(const std::vector<detail::Literal>& inputs, const std::vector<hlo::Shape>& outputs, int reps) const;
  /// The device's name and compute capability ("NVIDIA H200", 90).
  std::string device_name() const;
  int compute_capability() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Milliseconds per device-to-device copy of `bytes` (the bandwidth reference of the benchmarks).
double copy_time_ms(int64_t bytes, int reps, int ordinal = 0);

/// The target for a device's compute capability: sm_90 for 9.x and later, else sm_80.
GpuTarget target_for(int compute_capability);

}  // namespace jitx::cuda
