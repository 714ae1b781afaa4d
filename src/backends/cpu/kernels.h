// The CPU backend's kernel interface: which instructions compile to native code, and the JIT that builds them.
// No LLVM types here: only the emitter and ORC translation units include LLVM headers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/ir/hlo.h"

namespace jitx::cpu {

/// A native kernel: bufs holds the output pointers, then one pointer per operand of the instruction.
/// It computes the part [r0, r1) x [c0, c1) of its loop space (see loop_space()).
using KernelFn = void (*)(void* const* bufs, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

/// What an element-level emitter's driver can do beyond what the CPU backend's kernels do: gather elements, reduce
/// windows and convolve (the CUDA backend's kernels; the CPU backend runs these as library ops).
struct EmitterAbilities {
  bool gather = false;
  bool reduce_window = false;  // a loop over each output element's window (the driver's gen_reduce_window)
  bool convolution = false;    // loops over each output element's window and features (gen_convolution)
};
/// Why `inst` (a top-level instruction of an entry computation) cannot be compiled natively; "" when it can.
std::string unsupported_reason(const hlo::Instruction& inst, const EmitterAbilities& abilities = {});

/// The loop space of inst's kernel: {rows, cols}; the runtime partitions rows (or cols when rows are few).
struct LoopSpace {
  int64_t rows = 1, cols = 1;
  int64_t work_per_point = 1;  // elements read per point, for deciding whether to split across threads
  // The compute per point, in units of a plain element operation: kTranscendentalCost when a transcendental is
  // evaluated per point (it costs that many), else 1.
  int64_t cost_per_point = 1;
  int64_t work() const { return rows * cols * work_per_point * cost_per_point; }
};
/// A transcendental evaluated per element (exp, logistic, tanh: 20-30 vector instructions) against a memory-bound
/// element operation: a softmax of 256x256 (65536 elements, under the threshold for a second thread) ran on one
/// core at 0.44 ns per element, a negation at about 0.1.
constexpr int64_t kTranscendentalCost = 4;
LoopSpace loop_space(const hlo::Instruction& inst);

/// Runs a compiled kernel over its whole loop space, split across the pool by rows (or columns when rows are
/// few) when the work is large enough to pay for it (kernel_launch.cpp).
void run_kernel(KernelFn fn, void* const* bufs, const LoopSpace& space);

/// Where compile_kernels' time went. Kernels compile in parts on several threads at once: these are the phases of
/// the part that took longest (so they add up to the time spent), and codegen includes linking.
struct CompileTimes {
  double emit_ms = 0, optimize_ms = 0, codegen_ms = 0;
};

/// Compiled kernels of one executable; dropping it releases their code (the executable's JITDylib).
struct CompiledKernels {
  std::vector<KernelFn> fns;  // one per requested instruction, in order
  size_t distinct = 0;        // kernels compiled: instructions with equal canonical text share one
  size_t parts = 0;           // threads they were compiled on
  size_t small = 0;           // of distinct: compiled in the small tier (orc_jit.cpp, is_small_kernel)
  std::shared_ptr<void> owner;
  CompileTimes times;
  // With JitOptions::keep_objects: the relocatable object files linked (one per part) and, per requested
  // instruction, the distinct kernel it runs (kernel_symbol(which[k])): what load_kernels() needs.
  std::vector<std::string> objects;
  std::vector<size_t> which;
};

struct JitOptions {
  std::string module_name;
  std::string dump_prefix;  // when set: <prefix>.ll (before), <prefix>.opt.ll (after), <prefix>.s
  int opt_level = 2;
  /// A multiply may fuse into the add it feeds (one FMA; config().allow_excess_precision, see
  /// elementwise_emitter.h); false: every op rounds, as the interpreter does.
  bool allow_excess_precision = true;
  bool keep_objects = false;  // keep copies of the object files in CompiledKernels (for serialising)
};

/// Emits one function per instruction, optimises the module and JIT-compiles it; throws CompileError.
CompiledKernels compile_kernels(const std::vector<const hlo::Instruction*>& insts, const JitOptions& options);

/// Kernels linked from object files compile_kernels made (kept with keep_objects), in a new JITDylib: no LLVM
/// optimisation or code generation. Throws CompileError when an object does not link or lacks a kernel.
CompiledKernels load_kernels(std::vector<std::string> objects, std::vector<size_t> which, size_t distinct);

/// The host the JIT generates code for: LLVM's version, the target triple, the CPU name and its features (the
/// "+avx2,+fma,..." string LLVM detected).
struct HostTarget {
  std::string compiler, triple, cpu, features;
};
const HostTarget& host_target();
/// The vector width, in bits, the loop vectoriser prefers for kernels (512 on AVX-512 hosts unless
/// JITX_CPU_VECTOR_WIDTH says otherwise; see orc_jit.cpp).
int preferred_vector_width();

/// The optimised LLVM IR of kernels for insts (for tests that look for vector instructions).
std::string optimized_ir(const std::vector<const hlo::Instruction*>& insts, int opt_level = 2,
                         bool allow_excess_precision = true);

}  // namespace jitx::cpu
