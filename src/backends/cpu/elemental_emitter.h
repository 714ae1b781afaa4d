// The CPU backend's element-level IR emitter: the LLVM value of one element of an instruction at a given index,
// with no loops, vector widths, threads or prefetching (the loop and reduction emitters drive it, and another
// backend may drive it with its own mapping of elements to threads). The arithmetic of elementwise ops and the
// f16/bf16 rounding rules (excess precision) are the elementwise emitter's (elementwise_emitter.h).
//
// Every element is generated on demand by gen(instruction, index): elementwise ops at the same index, data
// movement as index math, a reduce as a loop over its reduced dimensions (which the driver emits: gen_reduce).
// So a loop fusion, an input (reduction) fusion and a row fusion are all "evaluate the fused computation per output
// element", XLA's elemental-emitter style.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cpu/elementwise_emitter.h"
#include "backends/cpu/kernel_planner.h"
#include "hlo/ir/hlo.h"

namespace jitx::cpu {

// An element's index: the multi-index and/or `linear`, its position in memory ordered by `layout` (row-major when
// empty). An index with a non-row-major layout always carries its multi-index.
struct Index {
  std::vector<int64_t> dims;
  llvm::Value* linear = nullptr;
  std::vector<llvm::Value*> multi;
  bool has_multi = false;
  Layout layout;
};

class ElementalEmitter : public ElementwiseEmitter {
 public:
  /// Emits into f (at the builder's insertion point, which the driver sets) with m's context.
  ElementalEmitter(llvm::Module& m, llvm::Function* f, bool excess_precision)
      : ElementwiseEmitter(m.getContext(), excess_precision), m_(m), f_(f) {}
  virtual ~ElementalEmitter() = default;

  /// inst's value at idx: loaded when inst is one of the kernel's buffers, otherwise computed (once per index).
  Value* gen(const Instruction* inst, Index idx);

 protected:
  // --- what the driver adds (its loops know these values; the element-level emitter does not) ---
  /// A value the driver keeps for inst at idx (a row stored on the stack), looked up before the memo; or nullptr.
  virtual Value* held_value(const Instruction* inst, const Index& idx) { return nullptr; }
  /// A memo key under which inst's values at idx and at other indices are one value (a reduce at the current row,
  /// however its index was reached), or nullptr for the index's own key.
  virtual Value* shared_key(const Instruction& inst, const Index& idx) { return nullptr; }
  /// inst's value at idx as the driver computes it instead (the second stage of a staged op, a reduction hoisted
  /// out of the loop along a row), or nullptr: then gen() computes it.
  virtual Value* substitute(const Instruction* inst, Index& idx) { return nullptr; }
  /// One output element of a reduce (inst.operand(0) reduced over inst's dimensions): the driver's loop.
  virtual Value* gen_reduce(const Instruction& inst, Index& idx) = 0;
  /// One output element of a reduce-window: a loop over its window, the driver's (only drivers whose
  /// EmitterAbilities say reduce_window are asked; the default throws CompileError).
  virtual Value* gen_reduce_window(const Instruction& inst, Index& idx);
  /// One output element of a convolution: loops over its window and input features (EmitterAbilities::convolution).
  virtual Value* gen_convolution(const Instruction& inst, Index& idx);

  // --- indices ---
  std::vector<Value*> delinearize(Value* lin, const std::vector<int64_t>& dims);
  Value* linear_in(Index& idx, const Layout& layout);
  Value* linear_of(Index& idx) { return linear_in(idx, {}); }  // row-major
  const std::vector<Value*>& multi_of(Index& idx);
  Index multi_index(std::vector<int64_t> dims, std::vector<Value*> multi);
  Index scalar_index();

  // --- memory ---
  Value* load(Value* ptr, Value* linear, DType d);
  void store(Value* ptr, Value* linear, DType d, Value* v);
  Value* constant_global(const Instruction& c);

  // --- element generation ---
  Value* operand_at(const Instruction& inst, size_t k, Index& idx);
  Value* scalar_i64(const Instruction* o);
  Value* clamp_i64(Value* v, int64_t lo, int64_t hi);
  Value* gen_uncached(const Instruction& inst, Index& idx);
  Value* clamp_start(const Instruction* o, int64_t hi);
  Value* gen_gather(const Instruction& inst, Index& idx);
  /// An integer index as i64: signed values sign-extended, unsigned ones above INT64_MAX saturated.
  Value* index_i64(Value* v, DType d);
  /// Component `component` of the start index vector of a gather or scatter: `indices` at the batch coordinates
  /// `batch`, with `component` at index_vector_dim (none when that equals the indices' rank), as index_i64.
  Value* start_index(const Instruction* indices, int64_t index_vector_dim, const std::vector<Value*>& batch,
                     int64_t component);

  llvm::Module& m_;
  llvm::Function* f_;
  std::unordered_map<const Instruction*, Value*> buffers_;
  // The layouts of the kernel's operand buffers (those of the instruction's operands: a fusion's parameters may
  // carry a stale copy); buffers not listed (constants) are row-major.
  std::unordered_map<const Instruction*, Layout> buffer_layouts_;
  Layout buffer_layout(const Instruction* i) const {
    auto it = buffer_layouts_.find(i);
    return it == buffer_layouts_.end() ? Layout{} : it->second;
  }
  std::map<std::pair<const Instruction*, std::vector<Value*>>, Value*> memo_;
};

}  // namespace jitx::cpu
