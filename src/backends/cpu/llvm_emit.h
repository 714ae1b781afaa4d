// Internal to the CPU backend's LLVM translation units: the IR emitter's and the math library's entry points.
#pragma once
#include <string>
#include <vector>

#include "hlo/ir/hlo.h"

namespace llvm {
class Module;
class Value;
class IRBuilderBase;
}  // namespace llvm

namespace jitx::cpu {

/// Adds `void kernel_<i>(ptr bufs, i64 r0, i64 r1, i64 c0, i64 c1)` for each instruction to m.
void emit_kernels(llvm::Module& m, const std::vector<const hlo::Instruction*>& insts);
std::string kernel_symbol(size_t i);

/// Vectorisable float math on a float or double scalar (the loop vectoriser widens it). Returns nullptr for
/// ops it does not implement. f32 exp/expm1/log/log1p/tanh/logistic/erf/sin/cos/erf_inv and digamma (f32, f64)
/// are polynomial approximations; the rest (and f64 erf_inv's Newton steps) call the C library.
llvm::Value* emit_float_math(llvm::IRBuilderBase& b, hlo::Opcode op, llvm::Value* x, llvm::Value* y = nullptr);
/// Whether emit_float_math handles op.
bool has_float_math(hlo::Opcode op);

}  // namespace jitx::cpu
