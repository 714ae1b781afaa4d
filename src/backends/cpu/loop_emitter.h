// The CPU backend's loop emitter: counted loops (with the interleave count that asks the vectoriser for wider
// iterations), the output loop's current position, reductions hoisted to the row, streaming (non-temporal) stores,
// software prefetch of the next row, and staged transcendentals (two loops per block of a row). It drives the
// element-level emitter; the kernel emitter (kernel_emitter.cpp) puts these together into a kernel's loop nest.
//
// For memory-bound kernels: outputs of 16 MiB or more are written with non-temporal (streaming) stores, and a
// streaming kernel with row reductions prefetches the next row.
#pragma once
#include <functional>
#include <map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backends/cpu/elemental_emitter.h"

namespace jitx::cpu {

class LoopEmitter : public ElementalEmitter {
 public:
  using ElementalEmitter::ElementalEmitter;

 protected:
  // A counted loop [lo, hi) with one optional loop-carried value; returns its final value.
  template <class F>
  Value* loop(Value* lo, Value* hi, Value* acc0, F body, int interleave = 1) {
    std::vector<Value*> accs0;
    if (acc0) accs0.push_back(acc0);
    auto r = loop_n(lo, hi, accs0, [&](Value* i, const std::vector<Value*>& acc) {
      Value* next = body(i, acc.empty() ? nullptr : acc[0]);
      return acc.empty() ? std::vector<Value*>{} : std::vector<Value*>{next};
    }, interleave);
    return r.empty() ? nullptr : r[0];
  }

  // A counted loop [lo, hi) carrying several values: body(i, current) returns the next ones; returns the last.
  template <class F>
  std::vector<Value*> loop_n(Value* lo, Value* hi, const std::vector<Value*>& accs0, F body, int interleave = 1) {
    auto saved = memo_;  // values made inside the loop do not dominate what follows it
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "loop", f_);
    auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", f_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", f_);
    if (collect_) inner_blocks_.insert({header, bodyb, exit});
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2);
    std::vector<Value*> acc;
    for (Value* a0 : accs0) {
      llvm::PHINode* phi = b_.CreatePHI(a0->getType(), 2);
      phi->addIncoming(a0, pre);
      acc.push_back(phi);
    }
    i->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(i, hi), bodyb, exit);
    b_.SetInsertPoint(bodyb);
    std::vector<Value*> next = body(i, acc);
    Value* inext = b_.CreateAdd(i, i64(1), "", true, true);
    i->addIncoming(inext, b_.GetInsertBlock());
    for (size_t k = 0; k < acc.size(); ++k)
      llvm::cast<llvm::PHINode>(acc[k])->addIncoming(next[k], b_.GetInsertBlock());
    auto* latch = b_.CreateBr(header);
    if (interleave > 1) {
      // llvm.loop metadata asking the vectoriser to interleave (its cost model picks 1 for long bodies).
      llvm::Metadata* count[] = {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                                 llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<uint32_t>(interleave)))};
      llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(ctx_, count)};
      auto* md = llvm::MDNode::getDistinct(ctx_, ops);
      md->replaceOperandWith(0, md);
      latch->setMetadata(llvm::LLVMContext::MD_loop, md);
    }
    b_.SetInsertPoint(exit);
    memo_ = std::move(saved);
    return acc;
  }

  // --- the output loop's current element and row ---
  Value* loop_linear_ = nullptr;  // the output loop's linear index and column, while emitting its body
  Value* loop_col_ = nullptr;
  // The output loop's current row: its linear index, and the (extent, index) of its dimensions larger than 1.
  Value* row_linear_ = nullptr;
  std::vector<std::pair<int64_t, Value*>> row_key_;
  static std::vector<std::pair<int64_t, Value*>> nonunit(const std::vector<int64_t>& dims,
                                                         const std::vector<Value*>& m);
  // Whether idx is element row_linear_ of its (row-shaped) value.
  bool at_current_row(const Index& idx) const;

  // --- row-level hoisting ---
  // The block before the loop along a row, the blocks inside that loop, and what is known there.
  llvm::BasicBlock* hoist_bb_ = nullptr;
  std::unordered_set<llvm::BasicBlock*> inner_blocks_;
  bool collect_ = false;
  std::map<std::pair<const Instruction*, std::vector<Value*>>, Value*> row_memo_;
  bool row_level(const Index& idx);
  Value* hoist(const Instruction* inst, Index& idx);

  std::vector<const Instruction*> computed_order(const std::vector<const Instruction*>& roots) const;

  // Runs `body` in a block of its own, entered only where `cond` holds, with branch weights of `odds` to 1 against
  // it: block placement and register allocation favour the other path (a call's spills and reloads stay in the
  // rare block). The blocks count as the enclosing loop's for hoisting (see loop_n). Returns body's value where
  // it ran and `otherwise` where it did not (a phi), or null when body returns null.
  Value* when_rarely(Value* cond, uint32_t odds, const std::function<Value*()>& body, Value* otherwise = nullptr);

  // --- streaming stores ---
  // Outputs at least this large (all of a kernel's outputs together) are written with non-temporal stores: they
  // cannot stay in the last-level cache for their consumer anyway (half of a 32 MiB L3), and plain stores would
  // first read every output line from memory (write-allocate), a third more traffic for an elementwise kernel.
  static constexpr int64_t kStreamingStoreBytes = int64_t{16} << 20;
  // `loaded`: values the output loop loads from the row cache rather than computes.
  bool streaming_stores(const Instruction& inst, const std::vector<const hlo::Shape*>& outs,
                        const std::vector<const Instruction*>& roots,
                        const std::unordered_set<const Instruction*>& loaded);
  void stream_out(Value* tmp, Value* out, Value* start, Value* len, DType d);
  std::vector<Value*> stream_tmp_;  // one block per output
  static constexpr int64_t kStreamBlock = 256;  // columns computed per block before they are streamed out

  // --- software prefetch ---
  bool prefetch_next_rows(const std::vector<const Instruction*>& roots, const std::vector<int64_t>& dims,
                          int64_t cols) const;
  /// Whether the inputs of shape `dims` are large enough (with 2+ dims) to come from memory row by row.
  bool prefetches_next_row(const std::vector<int64_t>& dims) const;
  /// Prefetches the next row's block into L1 (locality 3), or L2 (2: a compute-bound pass whose working set
  /// already fills L1).
  void prefetch_next(const std::vector<int64_t>& dims, Value* next, int64_t count, int locality = 3);

  // --- staged ops ---
  // A transcendental's dependency chain is long (logistic: ~50 cycles of latency from operand to result), and the
  // out-of-order core holds only so many waiting instructions: in one loop it overlaps a few elements' chains and
  // stalls (GELU ran at half the FMA units' throughput). An op with a two-stage lowering (two_stage_math_parts) in a
  // kernel that walks its output in blocks is computed in two loops per block of kStreamBlock columns: the first
  // computes its operand and stage 1, storing the stage-1 values in stack arrays (1 KiB each: L1); the second, the
  // kernel's usual element loop, loads them and runs stage 2. Each loop's chain is half as long. Only for ops
  // shaped like the output (one value per element of the loop) in kernels without reductions (no row-level
  // hoisting between the loops).
  //
  // Two multiplies fold into a staged logistic (f32): one of its operand by a scalar constant (stage 1 takes the
  // constant: GELU's logistic(c u) reduces u directly), and the one that is its only user when the other factor is
  // shaped like the output (stage 2 divides that factor instead of 1: x * logistic(.) is x / (1 + e)), unless per-op
  // rounding of f16/bf16 is asked for (the product would then be rounded once instead of twice).
  struct Staged {
    std::vector<Value*> arrays;  // one float array of kStreamBlock per stage-1 value
    const Instruction* arg = nullptr;    // stage 1's operand: the op's, or the factor of a folded constant multiply
    double scale = 1.0;                  // the folded constant (1: none)
    const Instruction* times = nullptr;  // the multiply folded into stage 2, or nullptr
    size_t times_other = 0;              // the multiply's other operand's index
  };
  std::vector<std::pair<const Instruction*, Staged>> staged_;  // in the computation's order (deterministic IR)
  Value* stage_lo_ = nullptr;  // the current block's first column, while its second loop is emitted
  static constexpr int kStagedInterleave = 2;  // vectors per iteration of the second loop

  void plan_stages(const std::vector<const Instruction*>& roots, const std::vector<int64_t>& dims);
  void fold_multiplies(const Instruction* i, const std::vector<int64_t>& dims,
                       const std::vector<const Instruction*>& roots,
                       std::unordered_map<const Instruction*, std::vector<const Instruction*>>& users, Staged& st);
  static bool scalar_float_constant(const Instruction* inst, double& v);
  Value* staged_value(const Instruction* inst, Index& idx);
};

}  // namespace jitx::cpu
