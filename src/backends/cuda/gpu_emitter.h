// The CUDA backend's kernel emitter: one NVPTX kernel per fusion (or unfused instruction), its elements computed by
// the CPU backend's element-level emitter (backends/cpu/elemental_emitter.h); only the mapping of elements to
// threads is this file's. Internal to the backend's LLVM translation units.
#pragma once
#include <string>

#include "backends/cuda/cuda_codegen.h"
#include "hlo/ir/hlo.h"

namespace llvm {
class Module;
}

namespace jitx::cuda {

/// Adds the kernel `name` for inst to m (marked as a PTX entry) and returns how it is launched. Throws CompileError
/// for what it cannot emit.
LaunchPlan emit_gpu_kernel(llvm::Module& m, const std::string& name, const hlo::Instruction& inst,
                           bool allow_excess_precision);

/// Why the emitter writes no kernel for scatter `inst` ("" when it does: one operand, a known update, and every
/// operand dim the indices address with a window of 1, so that threads own disjoint output positions).
std::string scatter_unsupported_reason(const hlo::Instruction& inst);

/// Whether `inst` is an argmax/argmin: a variadic reduce of (values, indices) whose kernel the emitter writes.
bool is_arg_reduce(const hlo::Instruction& inst);

/// Why the emitter writes no kernel for sort `inst` ("" when it does: lines of at most 2048 elements, at most two
/// keys; a block sorts a line in shared memory).
std::string sort_unsupported_reason(const hlo::Instruction& inst);

}  // namespace jitx::cuda
