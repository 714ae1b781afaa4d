// The CPU backend's library ops: instructions that run as typed C++ routines called by the runtime (as XLA:CPU
// calls its runtime library for sort, convolution and GEMM) rather than as one emitted loop nest: output fusions
// (the blocked GEMM running an emitted epilogue kernel on each finished tile), convolution, integer and mixed-dtype
// dots, sort, gather, scatter, reduce-window, the variadic argmax/argmin reduce, and a slice that is one contiguous
// run of its operand (a memcpy).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "backends/cpu/kernels.h"
#include "hlo/ir/hlo.h"

namespace jitx::cpu {

/// One instruction of an entry computation, prepared at compile time and run once per execution.
class LibraryOp {
 public:
  virtual ~LibraryOp() = default;
  /// Instructions this op needs compiled as native kernels with the rest of the executable (an output fusion's
  /// epilogue); the backend compiles them and hands their functions to bind(), in the same order.
  virtual std::vector<const hlo::Instruction*> kernels() const { return {}; }
  virtual void bind(const std::vector<KernelFn>& /*fns*/) {}
  /// Whether the op only copies its result's bytes (a contiguous slice): cheap enough to run inline when small.
  virtual bool is_copy() const { return false; }
  /// ins: one pointer per operand (arrays only), outs: one per leaf of the result, all row-major (the backend
  /// copies operands to row-major first, see LayoutLegalizer), except that an output fusion reads its operands
  /// through their layouts.
  virtual void run(std::span<const void* const> ins, std::span<void* const> outs) const = 0;
};

/// The library op for inst, or nullptr when there is none (the backend then tries an emitted kernel, and falls
/// back to the interpreter with a logged reason).
std::unique_ptr<LibraryOp> make_library_op(const hlo::Instruction& inst);

/// Runs a compiled kernel over its whole loop space, split across the pool by rows (or columns when rows are
/// few) when the work is large enough to pay for it.
void run_kernel(KernelFn fn, void* const* bufs, const LoopSpace& space);

// --- the ops (one translation unit each); each returns nullptr for instructions it does not handle ---
std::unique_ptr<LibraryOp> make_output_fusion(const hlo::Instruction& fusion);
std::unique_ptr<LibraryOp> make_convolution(const hlo::Instruction& conv);
std::unique_ptr<LibraryOp> make_data_op(const hlo::Instruction& inst);  // sort, gather, scatter, reduce-window, argmax
/// Dots the Eigen dot does not take: integer and bool dots, and operands of another dtype than the result.
std::unique_ptr<LibraryOp> make_general_dot(const hlo::Instruction& dot);

/// c[m, n] = a[m, k] b[k, n], row-major, on unsigned words that wrap (integer dots and convolutions), rows split
/// across the pool (general_dot.cpp).
void int_gemm(const uint32_t* a, const uint32_t* b, uint32_t* c, int64_t m, int64_t k, int64_t n);
void int_gemm(const uint64_t* a, const uint64_t* b, uint64_t* c, int64_t m, int64_t k, int64_t n);
/// An integer element's bits sign- or zero-extended to 64 (by its dtype), and the low bits of v stored as one.
uint64_t load_int_bits(const void* p, DType d, int64_t i);
void store_int_bits(void* p, DType d, int64_t i, uint64_t v);

}  // namespace jitx::cpu
