// Row groups: consecutive kernel steps of a program run block by block over their outputs' leading dimension.
//
// A softmax is three kernels (a row max, a row sum of exponentials, the normalised output), each reading the whole
// input: at 4096 x 4096 f32 that is 256 MB of memory traffic for 128 MB of data, and the kernels run at half the
// machine's bandwidth. When every kernel's output row i depends only on row i of what the earlier kernels of the
// run wrote (a row reduction, an elementwise op, a broadcast along the rows), the runtime can run the kernels one
// block of rows at a time instead: kernel 1 on rows [0, 64), kernel 2 on the same rows, kernel 3, then the next
// block. A block's rows (and the vectors of row statistics) stay in the core's L2 cache between the kernels, so
// the input is read from memory once; the blocks are shared out across the thread pool, one parallel_for for the
// whole run instead of one per kernel. XLA:CPU does not do this (it runs fusions one after another).
//
// The conditions, checked on the HLO of each kernel (a fusion's computation or a bare instruction) and on the
// buffer assignment's slices, are in row_groups.cpp.
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_executable.h"

namespace jitx::runtime::cpu_backend {

/// The runs of kernels (instructions is_kernel accepts) of c that may run as row groups, as [first, last] positions
/// in c's schedule: what buffer assignment keeps live across (hlo::BufferOptions::keep_live_spans), so that the
/// steps form_row_groups finds there share no memory.
std::vector<std::pair<int64_t, int64_t>> row_group_spans(
    const hlo::Computation& c, const std::function<bool(const hlo::Instruction&)>& is_kernel);

/// Replaces runs of kernel steps that can run block by block with one Step::Kind::kRowGroup step each.
/// Returns how many groups were formed.
int64_t form_row_groups(Program& prog);

/// A group's work in element reads (its kernels' loop spaces times their reads per point).
int64_t row_group_work(const Step& group);

/// Runs a row group (cpu_executable.cpp calls it with the sub-steps' buffer pointers, outputs then operands each).
void run_row_group(const Step& group, const std::vector<cpu::KernelFn>& fns, void* const* const* bufs);

}  // namespace jitx::runtime::cpu_backend
