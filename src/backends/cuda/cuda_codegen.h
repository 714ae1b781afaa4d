// The CUDA backend's code generation: an optimised hlo::Module's fusions (and unfused elementwise/data-movement
// instructions) as NVPTX kernels, compiled in process to PTX by LLVM's NVPTX target. No LLVM types here.
//
// A kernel's parameters are pointers to device memory: its outputs (one per element of a tuple-shaped result), then
// one per operand of the instruction, then the scratch buffers (the results of the dots of an output fusion, which
// the GEMM library writes before the epilogue kernel runs). Shapes are compile-time constants.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hlo/ir/hlo.h"

namespace jitx::cuda {

/// The device code is compiled for: sm_80 (PTX ISA 7.0, CUDA 11) or sm_90 (PTX ISA 8.0, CUDA 12).
struct GpuTarget {
  std::string arch = "sm_90";
  std::string features = "+ptx80";
  static GpuTarget sm80() { return {"sm_80", "+ptx70"}; }
  static GpuTarget sm90() { return {"sm_90", "+ptx80"}; }
};

/// How elements map to threads.
enum class KernelKind {
  kLoop,             // one thread per output element, grid-stride loop (reductions inside: a loop per element)
  kRowReduction,     // one warp (or one block, for long rows) per row: warp shuffles, then shared memory
  kColumnReduction,  // 8 x 32 threads per 32 columns: strided partials, combined through shared memory
};
const char* kernel_kind_name(KernelKind k);

struct LaunchPlan {
  KernelKind kind = KernelKind::kLoop;
  int64_t block = 256;  // threads per block
  int64_t grid = 1;     // blocks (grid-stride loops make any count correct; this one covers the work once)
  size_t num_outputs = 0, num_operands = 0, num_scratch = 0;
  std::vector<int64_t> scratch_bytes;  // per scratch buffer
};

struct GpuKernel {
  std::string name;         // the PTX entry
  std::string instruction;  // the HLO instruction it computes, and its computation
  std::string computation;
  LaunchPlan plan;
  std::string llvm_ir;  // as emitted (before optimisation)
  std::string ptx;
};

/// The kernel of one instruction (a fusion or an unfused instruction that unsupported_reason() accepts).
GpuKernel compile_kernel(const hlo::Instruction& inst, const GpuTarget& target, bool allow_excess_precision = true,
                         const std::string& name = "jitx_kernel");

/// What the backend makes of a module: kernels for the fusions and elementwise instructions of every computation
/// (control-flow bodies included), the instructions that go to a library (dots: cuBLASLt), and the rest with the
/// reason no kernel is emitted for them (control flow and tuples run on the host; others are not implemented).
struct GpuModule {
  std::vector<GpuKernel> kernels;
  std::vector<std::pair<std::string, std::string>> library;    // instruction -> library call
  std::vector<std::pair<std::string, std::string>> no_kernel;  // instruction -> why
};
/// With config().dump_to set, writes <dir>/<module>.cuda.<kernel>.ll and .ptx for each kernel (each compiled anew).
/// Otherwise kernels come from the kernel cache: instructions with equal canonical text (an unrolled stack of layers,
/// the same function jitted again) share one kernel, named jitx_k_<hash of its key>, compiled once per process; with
/// config().compilation_cache_dir set, the PTX is also kept on disk (<dir>/cuda/<hash>.ptxk, written atomically) and
/// read back by later processes of the same jitx build (a file that does not match its key exactly is recompiled).
GpuModule compile_module(const hlo::Module& m, const GpuTarget& target, bool allow_excess_precision = true);

/// The kernel of one instruction through the kernel cache (as compile_module's): a dot's generated kernel, which the
/// executable asks for where cuBLASLt is missing or the dot is not one matmul.
GpuKernel cached_kernel(const hlo::Instruction& inst, const GpuTarget& target, bool allow_excess_precision);

struct KernelCacheStats {
  int64_t compiled = 0, memory_hits = 0, disk_hits = 0;
};
/// What the kernel cache did in this process.
KernelCacheStats kernel_cache_stats();
/// Test-only: forgets this process's kernels (the disk cache stays).
void clear_kernel_cache_for_testing();

/// The toolkit's ptxas found at configure time ("" when none), and its libdevice.10.bc (JITX_CUDA_LIBDEVICE or
/// CUDA_HOME override the configured path; "" when none exists).
std::string ptxas_path();
std::string libdevice_path();

}  // namespace jitx::cuda
