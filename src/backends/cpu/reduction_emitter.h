// The CPU backend's reduction emitter: one output element of a reduce as a loop over its reduced elements (float
// sums in blocks of 256, the block sums added in double), the row cache, transcendentals staged inside a row
// reduction's blocks (column reductions are the next layer, column_reduction_emitter.h). It also answers the
// element-level emitter's questions about values the loops hold (the ElementalEmitter hooks).
//
// For memory-bound kernels: a row fusion computes a value that a row reduction and the output both read once
// (the row cache: softmax's exp).
#pragma once
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cpu/loop_emitter.h"

namespace jitx::cpu {

class ReductionEmitter : public LoopEmitter {
 public:
  using LoopEmitter::LoopEmitter;

 protected:
  // --- the element-level emitter's hooks ---
  Value* held_value(const Instruction* inst, const Index& idx) override { return row_cached(inst, idx); }
  Value* shared_key(const Instruction& inst, const Index& idx) override;
  Value* substitute(const Instruction* inst, Index& idx) override;
  Value* gen_reduce(const Instruction& inst, Index& idx) override;

  // --- the row cache ---
  // A row fusion whose row reduction reads an expensive value that the output reads too (softmax: sum(exp(x - m))
  // and exp(x - m) / sum) would compute it twice per element. Instead the reduction, emitted first for each row
  // (prime_row_reductions), stores the row of values in a stack array as it goes, and the output loop loads them:
  // each element is computed once, and the array stays in L1/L2 between the two passes.
  static constexpr int64_t kRowCacheBytes = int64_t{64} << 10;  // per cached value: one row, on the stack
  struct RowCache {
    const Instruction* filler;  // the reduce whose pass stores the row
    Value* array = nullptr;
    llvm::Type* type = nullptr;
    bool filled = false;  // the current row's values are stored (emission order)
  };
  std::unordered_map<const Instruction*, RowCache> row_cache_;
  const Instruction* filling_ = nullptr;  // the instruction whose row gen_reduce stores now
  std::vector<const Instruction*> row_reductions_;  // trailing row reductions, operands first (when caching)
  void plan_row_cache(const std::vector<const Instruction*>& roots, const std::vector<int64_t>& dims);
  void prime_row_reductions(const std::vector<Value*>& row_multi);
  Value* row_cached(const Instruction* inst, const Index& idx);

  // --- staged row reductions ---
  // Staging inside a row reduction's blocks (gen_reduce): the two-stage ops of the summed expression x that are
  // evaluated at x's own index (reached from x through elementwise ops of x's shape), with their stack arrays.
  struct ReduceStage {
    const std::vector<std::pair<const Instruction*, std::vector<Value*>>>* ops = nullptr;
    Value* lo = nullptr;      // the block's first reduced element
    Value* k = nullptr;       // the summing loop's reduced element
    Value* linear = nullptr;  // x's linear index at k, as element() built it
  };
  ReduceStage red_stage_;
  std::vector<std::pair<const Instruction*, std::vector<Value*>>> plan_reduce_stages(const Instruction* x,
                                                                                      int64_t block);
  Value* reduce_staged_value(const Instruction* inst, Index& idx);

  // --- reductions ---
  Layout read_layout(const Instruction* x, int depth = 0) const;
  Value* gen_reduce_body(const Instruction& inst, Index& idx);
};

}  // namespace jitx::cpu
