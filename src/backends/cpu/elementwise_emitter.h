// The CPU backend's elementwise emitter: the arithmetic of one element's op on LLVM values (its operands' values
// in, its result out), the types values are computed and stored in, and a reducer's identity and combine. The
// element-level emitter (elemental_emitter.h) builds on it; f32 transcendentals are math_emitter.cpp's.
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
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "backends/cpu/kernel_planner.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"

namespace jitx::cpu {

class ElementwiseEmitter {
 public:
  using Instruction = hlo::Instruction;
  using Opcode = hlo::Opcode;
  using Value = llvm::Value;

  ElementwiseEmitter(llvm::LLVMContext& ctx, bool excess_precision)
      : ctx_(ctx), b_(ctx_), excess_precision_(excess_precision) {}

 protected:
  Value* i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  // --- types and storage ---
  llvm::Type* ctype(DType d);  // the type values of d are computed in
  llvm::Type* stype(DType d);  // the type d is stored as
  Value* from_storage(DType d, Value* v);
  Value* to_storage(DType d, Value* v);
  // An op's result of type d: rounded to d only without excess precision (with it, f16/bf16 values keep their f32
  // precision until store() rounds them). Values kept in the kernel's own stack arrays (the row cache, column
  // accumulators) are f32 and unrounded alike: only what is written to a buffer is rounded.
  Value* round(DType d, Value* v) { return is_half(d) && !excess_precision_ ? from_storage(d, to_storage(d, v)) : v; }
  Value* fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

  // --- a reducer's arithmetic ---
  Value* identity(const std::string& r, DType d);
  Value* combine(const std::string& r, DType d, Value* acc, Value* x, bool reassoc);

  // --- elementwise ---
  Value* convert(Value* v, DType from, DType to);
  Value* elementwise(const Instruction& inst, std::vector<Value*>& ops);
  Value* lt(DType d, Value* x, Value* y);
  Value* compare(hlo::ComparisonDirection dir, DType d, Value* x, Value* y);
  Value* contractible(Value* v);
  Value* float_op(Opcode op, std::vector<Value*>& o);
  Value* int_op(Opcode op, DType d, std::vector<Value*>& o);

  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  bool excess_precision_;  // f16/bf16 values are rounded only when stored (see the file comment)
};

}  // namespace jitx::cpu
