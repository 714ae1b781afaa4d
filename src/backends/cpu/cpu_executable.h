// The CPU backend's executable: one compiled program per computation of the module (the entry, loop conditions and
// bodies, branches), each a list of steps (native kernels from LLVM ORC, Eigen dots, library ops, in-place updates,
// loops and branches that run other programs, interpreter fallbacks) over its own buffer assignment, and what each
// step does at run time. The program builder (program_builder.h) makes the steps.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/library.h"
#include "hlo/analysis/buffer_assignment.h"
#include "runtime/runtime.h"

namespace jitx::cpu::blocked {
struct DotPlan;  // gemm.h
}

namespace jitx::runtime::cpu_backend {

constexpr size_t kMaxNativeRank = 16;

/// Where a value lives: an allocation of its program's buffer assignment and an offset in it.
struct Slice {
  int64_t alloc = -1, offset = 0, size = 0;
};

/// What runs for one instruction of a program, and where its operands and results lie.
struct Step {
  enum class Kind { kKernel, kDot, kLibrary, kUpdateSlice, kWhile, kConditional, kFallback, kRowGroup };
  Kind kind = Kind::kKernel;
  const hlo::Instruction* inst = nullptr;
  std::vector<Slice> outs;              // the result's leaves
  std::vector<std::vector<Slice>> ins;  // each operand's leaves
  size_t kernel = 0;
  cpu::LoopSpace space;
  const hlo::Computation* fallback = nullptr;
  std::shared_ptr<cpu::LibraryOp> library;  // kLibrary; its kernels are kernels.fns[kernel, kernel + n)
  std::shared_ptr<const cpu::blocked::DotPlan> dot_plan;  // kDot (or nullptr)
  // kWhile: {condition, body}; kConditional: one program per branch (indices into CpuExecutable::programs).
  std::vector<size_t> programs;
  // kWhile, per carry: the scratch offset of its second buffer (-1: the body updates it in place), whether the
  // body returns it unchanged (then it is read straight from the operand), whether anything reads it afterwards.
  std::vector<int64_t> other;
  std::vector<char> invariant, used;
  int64_t pred_offset = 0;  // kWhile: the condition's result, in scratch
  // kRowGroup (row_groups.h): kernel steps run block by block over a leading dimension of group_rows, group_block
  // rows at a time; inst is the first one's.
  std::vector<Step> group;
  int64_t group_rows = 0, group_block = 0;
};

inline bool is_control_flow(Step::Kind k) { return k == Step::Kind::kWhile || k == Step::Kind::kConditional; }

/// One computation compiled: its buffer assignment and steps. Runs over caller-provided parameter and output
/// pointers and a frame of frame_size bytes: the temp arena, then scratch for the loops and branches it runs
/// (their programs' frames and second carry buffers), allocated once per call of the enclosing program.
struct Program {
  const hlo::Computation* comp = nullptr;
  hlo::BufferAssignment ba;
  std::vector<Step> steps;
  std::vector<Slice> results;              // the root's leaves
  std::vector<int64_t> output_leaf;        // per allocation: the root leaf whose output buffer it is, or -1
  std::vector<const void*> constant_data;  // per allocation
  int64_t scratch_offset = 0, frame_size = 0;
};

struct Counts {
  int64_t kernels = 0, dots = 0, library = 0, update_slices = 0, whiles = 0, conditionals = 0;
  int64_t layout_copies = 0;  // copies to row-major the backend inserted (see LayoutLegalizer)
  int64_t row_groups = 0, row_group_kernels = 0;  // runs of kernels run block by block (row_groups.h)
  std::vector<std::string> fallbacks;
};

class CpuExecutable : public Executable, public std::enable_shared_from_this<CpuExecutable> {
 public:
  std::shared_ptr<Executable> whole_module_fallback;  // modules the runtime cannot lay out (nested tuples)
  std::shared_ptr<const hlo::Module> planned;  // the module as planned (LayoutLegalizer), which the programs point into
  std::vector<std::unique_ptr<Program>> programs;     // programs[0] is the entry
  cpu::CompiledKernels kernels;
  uint64_t kernels_digest = 0;  // of the kernels' instructions, when serialisable (see CpuBackend::serialize)
  std::unique_ptr<hlo::Module> fallbacks;  // one-instruction computations run by the interpreter
  Counts counts;
  bool runs_inline = false;  // small and loop-free: may run on the caller's thread when its stream is idle

  std::map<std::string, int64_t> stats() const override;
  std::vector<std::shared_ptr<Buffer>> execute(std::span<const std::shared_ptr<Buffer>> args, Device* device) override;

 private:
  void run_entry(std::span<const std::shared_ptr<Buffer>> ins, const std::vector<std::shared_ptr<Buffer>>& outs);
  void run_program(const Program& p, void* const* params, void* const* outputs, char* frame) const;
  template <class Ptr>
  void run_step(const Program& p, const Step& st, Ptr ptr, char* frame) const;
  template <class Ptr>
  void run_while(const Program& p, const Step& st, Ptr ptr, char* frame) const;

  std::mutex frame_mu_;
  std::shared_ptr<detail::Storage> spare_frame_;  // the entry's frame between calls (run_entry)
};

/// Whether s's memory is in row-major order (a layout that differs only in where its size-1 dims go is).
bool row_major(const hlo::Shape& s);
bool all_row_major(const hlo::Shape& s);
/// A dynamic-update-slice the runtime does itself: only the update is written when the result is in place.
bool is_native_update_slice(const hlo::Instruction& i);

}  // namespace jitx::runtime::cpu_backend
