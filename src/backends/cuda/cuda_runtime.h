// The asynchronous runtime of one CUDA device, as PJRT's GPU client does it: the device's primary context, a compute
// stream and a transfer stream, an event per array saying when it is written (cross-stream waits are
// cuStreamWaitEvent on it), device memory from the stream-ordered caching allocator over cuMemAlloc, pinned
// staging buffers for the asynchronous host<->device copies, and loaded modules cached by their PTX.
//
// Errors: a launch or copy that fails to start marks its outputs with the error at once; work that fails on the
// device fails the event recorded after it, and every reader of an affected array (fetch, block_until_ready, a
// kernel reading it) gets a RuntimeError naming the work that computed it.
//
// Used by the "cuda" devices of the public API (cuda_devices.cpp: device_put there and back) and by the executable
// that runs jitted programs on them (cuda_executable.h). Tested on a fake driver (tests/cuda_fake_test.cpp, plumbing
// only) and, through tools/gpu_check.sh, on a real one (never run yet).
//
// Arrays must not outlive their GpuDevice (their destructors give memory back to it).
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/caching_allocator.h"
#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/cuda_driver.h"
#include "core/literal.h"

namespace jitx::cuda {

class GpuDevice;

/// A CUDA event, destroyed with its last owner.
struct GpuEvent {
  const Driver* d = nullptr;
  CUevent e = nullptr;
  ~GpuEvent();
};

/// One array in device memory. Owned through shared_ptr; its memory goes back to the allocator when the last
/// owner drops it, ordered after every read recorded on another stream.
class GpuArray {
 public:
  DType dtype = DType::float32;
  std::vector<int64_t> dims;
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  GpuDevice* device = nullptr;
  std::shared_ptr<GpuEvent> ready;  // recorded after the work that writes the array
  std::exception_ptr error;         // known on the host: the work that should write it never started
  std::string producer;             // what writes it, for messages ("kernel jitx_kernel_0 (%fusion.1)")

  ~GpuArray();
  /// True once the work that writes it has finished (or failed): cuEventQuery, no waiting.
  bool is_ready() const;
  /// Waits for the value; throws RuntimeError when the work that computed it failed.
  void block_until_ready() const;

 private:
  friend class GpuDevice;
  int stream = 0;  // the stream whose allocator cache the memory came from (0 compute, 1 transfer)
  std::mutex mu_;
  std::vector<std::shared_ptr<GpuEvent>> reads_;  // reads recorded on the other stream
};

class GpuDevice {
 public:
  static constexpr int kCompute = 0, kTransfer = 1;
  /// The device `ordinal` of driver `d` (which must outlive the device): retains its primary context, creates the
  /// two streams.
  GpuDevice(const Driver& d, int ordinal);
  ~GpuDevice();
  GpuDevice(const GpuDevice&) = delete;
  GpuDevice& operator=(const GpuDevice&) = delete;

  int ordinal() const { return ordinal_; }
  std::string name() const;
  int compute_capability() const;

  /// Starts copying `host` to the device (host -> pinned staging now, staging -> device on the transfer stream)
  /// and returns the array at once; `host` may be changed or freed as soon as this returns.
  std::shared_ptr<GpuArray> put(const detail::Literal& host);
  /// The array's value on the host: waits for it (the transfer stream waits for its event); throws RuntimeError
  /// when the work that computed it failed.
  detail::Literal fetch(const std::shared_ptr<GpuArray>& a);
  /// Enqueues kernel `k` on the compute stream after the work that writes `inputs` (operands then scratch, as
  /// the kernel's ABI), with fresh outputs of `outputs`' shapes, and returns them at once.
  std::vector<std::shared_ptr<GpuArray>> launch(const GpuKernel& k, std::span<const std::shared_ptr<GpuArray>> inputs,
                                                const std::vector<hlo::Shape>& outputs);
  /// Library work on the compute stream (a cuBLASLt matmul): given the stream and the device pointers of the
  /// outputs and inputs, enqueues itself and returns "" or what failed.
  using LibraryWork = std::function<std::string(CUstream stream, const std::vector<CUdeviceptr>& outputs,
                                                const std::vector<CUdeviceptr>& inputs)>;
  /// Enqueues `work` on the compute stream after the work that writes `inputs`, with fresh outputs of `outputs`'
  /// shapes, and returns them at once; a failure to start marks the outputs with the error (named `producer`).
  std::vector<std::shared_ptr<GpuArray>> enqueue(const std::string& producer,
                                                 std::span<const std::shared_ptr<GpuArray>> inputs,
                                                 const std::vector<hlo::Shape>& outputs, const LibraryWork& work);
  /// Waits for both streams.
  void synchronize();

  const CachingAllocator& allocator() const { return *alloc_; }
  /// Modules loaded so far (each distinct PTX once) and how many launches found theirs in the cache.
  int64_t modules_loaded() const;
  int64_t module_cache_hits() const;
  /// Pinned staging blocks the device holds (free or in flight).
  size_t staging_blocks() const;

 private:
  friend class GpuArray;
  struct Staging {
    void* host = nullptr;
    size_t bytes = 0;
    std::shared_ptr<GpuEvent> last_use;  // the copy that used it last
  };
  const Driver& d_;
  int ordinal_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream streams_[2] = {nullptr, nullptr};
  mutable std::once_flag cc_once_;
  mutable int cc_ = 0;
  std::unique_ptr<CachingAllocator> alloc_;
  mutable std::mutex mu_;  // staging and modules
  std::vector<Staging> staging_;
  struct Module {
    CUmodule mod = nullptr;
    CUfunction fn = nullptr;
  };
  std::map<std::string, Module> modules_;  // keyed by target, entry name and PTX text
  int64_t module_hits_ = 0;

  void make_current() const;
  std::shared_ptr<GpuEvent> record(int stream);
  std::shared_ptr<GpuArray> allocate(DType dtype, std::vector<int64_t> dims, int stream, std::string producer);
  Staging take_staging(size_t bytes);
  void give_back_staging(Staging s);
  CUfunction function(const GpuKernel& k);
  void release(GpuArray& a);
  void wait_ready(const GpuArray& a, const char* op) const;
};

}  // namespace jitx::cuda
