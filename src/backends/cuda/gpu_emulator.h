// A host emulator of the CUDA backend's kernels, for tests on machines without a GPU: a kernel's own LLVM IR (what
// emit_gpu_kernel makes of its instruction, compiled for the host instead of NVPTX) run over host memory as the
// device runs it: `grid` blocks of `block` threads, a block's threads as fibers that meet at barriers and trade
// values through warp shuffles. ptxas checks that a kernel's PTX assembles; this checks what its code computes: the
// mapping of elements to threads, grid-stride loops, warp and block reductions, shared memory. It does not check
// the NVPTX back end or libdevice (math calls go to the host's C library) or timing-dependent behaviour (the
// threads of a block run one after another between synchronisations, warps in lockstep).
#pragma once
#include <cstdint>
#include <vector>

#include "hlo/ir/hlo.h"

namespace jitx::cuda {

/// Runs inst's kernel (compiled once per distinct instruction text and process) with its buffers `params` (outputs,
/// operands, scratch: the kernel's parameter order) on a grid of `grid` x `block` threads, twice: a block's threads
/// in ascending, then in descending order, with shared memory poisoned before each block. Throws jitx::Error when
/// the two runs' outputs differ (the threads race), on a deadlock (a barrier or shuffle that some live threads never
/// reach), when a block's threads wait at different barriers or some exited while others wait at one, on a shuffle
/// whose lanes are at different shuffles or name an exited lane, and for a kernel using an NVVM intrinsic the
/// emulator does not know.
void emulate_kernel(const hlo::Instruction& inst, bool allow_excess_precision, const std::vector<void*>& params,
                    int64_t grid, int64_t block);

struct EmulatorStats {
  int64_t compiled = 0, launches = 0, fiber_launches = 0, barriers = 0, shuffles = 0;
};
/// What the emulator did in this process (fiber_launches: kernels with barriers or shuffles, whose threads ran as
/// fibers; the others run one thread after another as plain calls).
EmulatorStats emulator_stats();

}  // namespace jitx::cuda
