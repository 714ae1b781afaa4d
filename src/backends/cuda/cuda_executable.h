// Running an optimised module on one CUDA device: jit calls and eager ops whose committed arguments live on a CUDA
// device run there (JAX's rule: computations follow committed arrays).
//
// The executable is the module's kernels (cuda_codegen.h: every fusion and unfused elementwise or data-movement
// instruction, in every computation) launched in the computation's order on the device's compute stream, each after
// the work that writes its inputs (GpuDevice::launch). The host drives control flow as XLA:GPU does: a while loop's
// condition and a conditional's branch index are read back each time, the bodies' kernels launched between. What has
// no kernel yet runs on the host, on the reference evaluator (its operands copied back, its result copied in,
// counted as `host_fallbacks`): sorts, gathers, scatters, convolutions, custom calls, bool dots. Dots go to
// cuBLASLt where they are one (batched) matmul of a type it has, else to a generated tiled kernel. Collectives refuse
// at compile time (no multi-GPU SPMD yet).
//
// Buffers are laid out as their shapes' layouts say (the CPU backend's LayoutLegalizer runs on the module's copy
// first, so loops and branches exchange row-major buffers); host fallbacks convert between that layout and the
// evaluator's row-major literals.
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cuda/cublaslt.h"
#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/cuda_runtime.h"

namespace jitx::runtime {
class Buffer;
class Device;
class Executable;
}  // namespace jitx::runtime

namespace jitx::cuda {

class CudaExecutable {
 public:
  /// Compiles `module` (an optimised module, as the cpu backend receives it) for `target`. Throws CompileError for a
  /// module with collectives or a kernel the emitter cannot write.
  CudaExecutable(std::shared_ptr<const hlo::Module> module, const GpuTarget& target);

  /// Runs the entry computation on `gpu` over `args` (one device array per entry parameter) and returns its outputs.
  /// Kernels are enqueued and return at once; host fallbacks and control flow wait for the values they read.
  std::vector<std::shared_ptr<GpuArray>> run(GpuDevice& gpu, const std::vector<std::shared_ptr<GpuArray>>& args) const;

  /// {"kernels", "library_dots", "dot_kernels", "cublaslt_epilogues", "host_fallbacks", "while_loops",
  /// "conditionals"}: what the module compiled to (kernels counts the dot kernels too; library_dots the epilogue
  /// matmuls).
  std::map<std::string, int64_t> stats() const;
  const GpuModule& code() const { return code_; }
  /// The generated kernels of the dots cuBLASLt does not run.
  const std::deque<GpuKernel>& dot_kernels() const { return dot_kernels_; }
  /// Whether a run only enqueues device work (no host fallback, loop or branch reads a value back): it may then run
  /// on the caller's thread without waiting for anything.
  bool launches_only() const { return fallback_of_.empty() && whiles_ == 0 && conds_ == 0; }
  /// Why no dot goes to cuBLASLt ("" when it was found).
  const std::string& blas_missing() const { return blas_why_; }
  /// The instruction kernel `entry` with this PTX computes, or nullptr (the fake driver's tests run it on the host).
  const hlo::Instruction* instruction_of(const std::string& entry, const std::string& ptx) const;

 private:
  struct Val;  // an array or a tuple of values
  std::shared_ptr<const hlo::Module> source_;
  std::unique_ptr<hlo::Module> module_;     // the copy that runs (legal layouts)
  std::unique_ptr<hlo::Module> fallbacks_;  // one computation per host fallback: parameters and a copy of it
  GpuModule code_;
  std::unordered_map<const hlo::Instruction*, const GpuKernel*> kernel_of_;
  // Dots through cuBLASLt (none when the library is missing: blas_why_ says why), and the dots of output fusions,
  // whose results the epilogue kernel reads as scratch: (plan, the fusion's operand index of lhs and rhs).
  Blas* blas_ = nullptr;
  std::string blas_why_;
  std::unordered_map<const hlo::Instruction*, GemmPlan> gemm_of_;
  // A dot cuBLASLt cannot do (or every dot, without it) is a generated kernel (gpu_emitter's tiled dot), kept here
  // (stable addresses: kernel_of_ and ScratchDot point at them).
  std::deque<GpuKernel> dot_kernels_;
  struct ScratchDot {
    const hlo::Instruction* dot;
    GemmPlan plan;
    size_t lhs, rhs;
    const GpuKernel* kernel = nullptr;  // the generated kernel instead of cuBLASLt
  };
  std::unordered_map<const hlo::Instruction*, std::vector<ScratchDot>> scratch_of_;
  // Output fusions that are one cuBLASLt matmul with an epilogue (bias, ReLU, GELU): the fusion's operands.
  struct FusedMatmul {
    GemmPlan gemm;
    size_t lhs, rhs;
    EpiloguePlan epilogue;
  };
  std::unordered_map<const hlo::Instruction*, FusedMatmul> epilogue_of_;
  std::unordered_map<const hlo::Instruction*, const hlo::Computation*> fallback_of_;
  int64_t whiles_ = 0, conds_ = 0;
  // Constants copied to a device once, on the first call there.
  mutable std::mutex constants_mu_;
  mutable std::map<std::pair<const hlo::Instruction*, const GpuDevice*>, std::shared_ptr<GpuArray>> constants_;

  Val run_computation(GpuDevice& gpu, const hlo::Computation& c, std::vector<Val> params) const;
  Val run_fallback(GpuDevice& gpu, const hlo::Instruction& inst, const std::vector<const Val*>& ops) const;
  // The generated kernel of `dot` (recorded in kernel_of_), or nullptr when the emitter cannot write it.
  const GpuKernel* dot_kernel(const hlo::Instruction& dot, const GpuTarget& target);
};

/// The execute hook of the "cuda" foreign platform (runtime/foreign_memory.h): `exe`'s module on CUDA device `dev`,
/// compiled once per module and device kind, run on the device's runtime stream; returns pending buffers at once.
std::vector<std::shared_ptr<runtime::Buffer>> execute_on_device(const runtime::Executable& exe,
                                                                std::span<const std::shared_ptr<runtime::Buffer>> args,
                                                                runtime::Device* dev);

/// A literal laid out as `m2m` (minor to major) from its row-major form (to_physical), or back to row-major.
detail::Literal relayout(const detail::Literal& in, const std::vector<int64_t>& m2m, bool to_physical);

// --- the CUDA buffers of the public API (cuda_devices.cpp) ---
/// The GpuDevice behind runtime device `dev`, or nullptr when it is not a CUDA device of this process.
GpuDevice* gpu_of(const runtime::Device* dev);
/// The device array a CUDA buffer holds, or nullptr for a host buffer.
std::shared_ptr<GpuArray> array_of(const runtime::Buffer& b);
/// Makes `b` (a pending buffer of a CUDA device) hold `a`: its storage becomes the array's placeholder owner.
void attach(runtime::Buffer& b, std::shared_ptr<GpuArray> a, GpuDevice* gpu);

/// Test-only: the instruction kernel `entry` (with this PTX) of a cached executable computes, or nullptr.
const hlo::Instruction* kernel_instruction_for_testing(const std::string& entry, const std::string& ptx);
/// Test-only: the kernels of the cached executables (each distinct name once).
std::vector<GpuKernel> kernels_for_testing();
/// Test-only: the stats of every cached executable, summed.
std::map<std::string, int64_t> executables_stats_for_testing();

}  // namespace jitx::cuda
