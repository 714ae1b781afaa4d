// Internal to the CPU backend's LLVM translation units: the IR emitter's and the math library's entry points.
#pragma once
#include <string>
#include <vector>

#include "hlo/ir/hlo.h"

namespace llvm {
class Module;
class Type;
class Value;
class IRBuilderBase;
}  // namespace llvm

namespace jitx::cpu {

/// Adds `void kernel_<i>(ptr bufs, i64 r0, i64 r1, i64 c0, i64 c1)` for each instruction to m. With
/// allow_excess_precision, a multiply may fuse into the add it feeds (an FMA); otherwise every op rounds.
void emit_kernels(llvm::Module& m, const std::vector<const hlo::Instruction*>& insts, bool allow_excess_precision);
std::string kernel_symbol(size_t i);

/// Vectorisable float math on a float or double scalar (the loop vectoriser widens it). Returns nullptr for
/// ops it does not implement. f32 exp/expm1/log/log1p/tanh/logistic/erf/erfc/sin/cos/erf_inv and digamma (f32, f64)
/// are polynomial approximations; the rest (and f64 erf_inv's Newton steps) call the C library.
llvm::Value* emit_float_math(llvm::IRBuilderBase& b, hlo::Opcode op, llvm::Value* x, llvm::Value* y = nullptr);
/// Whether emit_float_math handles op.
bool has_float_math(hlo::Opcode op);
/// Whether emit_float_math added masked vector variants of helper functions to m: the optimiser inlines them
/// once the loops are vectorised (always-inline, then globaldce for the unused ones).
bool has_vector_variants(const llvm::Module& m);

/// Ops whose lowering on scalar type t splits in two halves (f32 logistic): stage 1 maps the operand to this many
/// float values (0: no split), stage 2 finishes from them. A kernel computes a block of elements' stage 1 in one
/// loop, stores the values in stack arrays and runs stage 2 in a second loop (see the kernel emitter's staged
/// ops): shorter dependency chains per loop, which the out-of-order core overlaps better. Stage 1 computes the
/// op of scale * x (a kernel folds a multiply by a constant into it); stage 2 returns times * op(...) when times is
/// given (a kernel folds the multiply that consumes the op into it), else op(...).
int two_stage_math_parts(hlo::Opcode op, llvm::Type* t);
std::vector<llvm::Value*> emit_float_math_stage1(llvm::IRBuilderBase& b, hlo::Opcode op, llvm::Value* x,
                                                 double scale = 1.0);
llvm::Value* emit_float_math_stage2(llvm::IRBuilderBase& b, hlo::Opcode op, const std::vector<llvm::Value*>& parts,
                                    llvm::Value* times = nullptr);

}  // namespace jitx::cpu
