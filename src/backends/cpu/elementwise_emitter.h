// The CPU backend's elementwise emitter: the arithmetic of one element's op on LLVM values (its operands' values
// in, its result out), the types values are computed and stored in, and a reducer's identity and combine. The
// element-level emitter (elemental_emitter.h) builds on it; f32 transcendentals are math_emitter.cpp's.
//
// f16/bf16 values are computed in f32 and rounded to their type after every op, as XLA:CPU computes them (its
// float normalization runs each bf16 op in f32 between a convert from and a convert back to bf16, and the compiled
// module keeps those round trips between ops: `jax.jit(f).lower(x).compile().as_text()` shows them; f16 ops are
// LLVM half arithmetic, which rounds each instruction). The interpreter rounds after every op too, so the two
// agree bit for bit on f16/bf16. XLA's one exception, a bf16 op whose result is converted to f32 keeping its f32
// value, is an HLO rewrite (hlo/passes/simplify_fp_conversions.h), so every backend sees it.
// Excess precision (config().allow_excess_precision, on by default as XLA's xla_allow_excess_precision) lets a
// multiply and the add that consumes it fuse into an FMA (see contractible). A bf16 product is rounded with integer
// ops, which nothing fuses across; an f16 one is an fptrunc, and LLVM narrows f32 math on two f16 values to f16
// math, which it may then fuse into the add (an FMA rounded to f16 once), as it does for XLA's f16 code.
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
  // An op's result of type d: f16/bf16 values are rounded to d (computed in f32, see the file comment).
  Value* round(DType d, Value* v) { return is_half(d) ? from_storage(d, to_storage(d, v)) : v; }
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
  bool excess_precision_;  // a multiply may fuse into the add it feeds (see the file comment)
};

}  // namespace jitx::cpu
