// The CPU backend's element-level IR emitter: the LLVM value of one element of an instruction at a given index,
// with no loops, vector widths, threads or prefetching (the loop and reduction emitters drive it, and another
// backend may drive it with its own mapping of elements to threads).
//
// Every element is generated on demand by gen(instruction, index): elementwise ops at the same index, data
// movement as index math, a reduce as a loop over its reduced dimensions (which the driver emits: gen_reduce).
// So a loop fusion, an input (reduction) fusion and a row fusion are all "evaluate the fused computation per output
// element", XLA's elemental-emitter style.
//
// f16/bf16 values are computed in f32. By default (excess precision, XLA's xla_allow_excess_precision, which XLA
// and JAX turn on) they stay in f32 through the whole fused computation and are rounded to their type only where
// they are written to memory (the kernel's outputs): XLA's float normalization computes bf16 ops in f32 and its
// simplify-fp-conversions pass then drops the f32 -> bf16 -> f32 round trips between them, so this is the value
// XLA computes. It is also cheaper (a round to nearest even is ~6 integer ops per value, more than most ops it
// follows) and more accurate (one rounding instead of one per op). With config().allow_excess_precision off, each
// op's result is rounded to its type, as the interpreter rounds after every op (then the two agree bit for bit).
// Excess precision also lets a multiply and the add that consumes it fuse into an FMA (see contractible).
// A convert to f16/bf16 inside a fusion is such an op too: like XLA, which drops f32 -> bf16 -> f32 pairs however
// they arose, excess precision does not round it unless it is stored.
#pragma once
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

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

class ElementalEmitter {
 public:
  using Instruction = hlo::Instruction;
  using Opcode = hlo::Opcode;
  using Value = llvm::Value;

  /// Emits into f (at the builder's insertion point, which the driver sets) with m's context.
  ElementalEmitter(llvm::Module& m, llvm::Function* f, bool excess_precision)
      : m_(m), ctx_(m.getContext()), b_(ctx_), f_(f), excess_precision_(excess_precision) {}
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

  // --- indices ---
  Value* i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  std::vector<Value*> delinearize(Value* lin, const std::vector<int64_t>& dims);
  Value* linear_in(Index& idx, const Layout& layout);
  Value* linear_of(Index& idx) { return linear_in(idx, {}); }  // row-major
  const std::vector<Value*>& multi_of(Index& idx);
  Index multi_index(std::vector<int64_t> dims, std::vector<Value*> multi);
  Index scalar_index();

  // --- types and memory ---
  llvm::Type* ctype(DType d);  // the type values of d are computed in
  llvm::Type* stype(DType d);  // the type d is stored as
  Value* from_storage(DType d, Value* v);
  Value* to_storage(DType d, Value* v);
  // An op's result of type d: rounded to d only without excess precision (with it, f16/bf16 values keep their f32
  // precision until store() rounds them). Values kept in the kernel's own stack arrays (the row cache, column
  // accumulators) are f32 and unrounded alike: only what is written to a buffer is rounded.
  Value* round(DType d, Value* v) { return is_half(d) && !excess_precision_ ? from_storage(d, to_storage(d, v)) : v; }
  Value* load(Value* ptr, Value* linear, DType d);
  void store(Value* ptr, Value* linear, DType d, Value* v);
  Value* constant_global(const Instruction& c);
  Value* fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

  // --- element generation ---
  Value* operand_at(const Instruction& inst, size_t k, Index& idx);
  Value* scalar_i64(const Instruction* o);
  Value* clamp_i64(Value* v, int64_t lo, int64_t hi);
  Value* gen_uncached(const Instruction& inst, Index& idx);
  Value* clamp_start(const Instruction* o, int64_t hi);

  // --- a reducer's arithmetic ---
  Value* identity(const std::string& r, DType d);
  Value* combine(const std::string& r, DType d, Value* acc, Value* x, bool reassoc);

  // --- elementwise ---
  Value* convert(Value* v, DType from, DType to);
  Value* round_odd_f32(Value* x);
  Value* elementwise(const Instruction& inst, std::vector<Value*>& ops);
  Value* lt(DType d, Value* x, Value* y);
  Value* compare(const std::string& dir, DType d, Value* x, Value* y);
  Value* contractible(Value* v);
  Value* float_op(Opcode op, std::vector<Value*>& o);
  Value* int_op(Opcode op, DType d, std::vector<Value*>& o);

  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* f_;
  bool excess_precision_;  // f16/bf16 values are rounded only when stored (see the file comment)
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
