// The CPU backend's library ops: instructions that run as typed C++ routines called by the runtime (as XLA:CPU
// calls its runtime library for sort, convolution and GEMM) rather than as one emitted loop nest: output fusions
// (the blocked GEMM running an emitted epilogue kernel on each finished tile), convolution, integer and mixed-dtype
// dots, sort, gather, scatter, reduce-window, the variadic argmax/argmin reduce, jitx's linear-algebra custom-calls
// (Eigen's decompositions), and a slice that is one contiguous run of its operand (a memcpy).
#pragma once
#include <cstdint>
#include <memory>

#include "backends/cpu/library_op.h"
#include "hlo/ir/hlo.h"

namespace jitx::cpu {

/// The library op for inst, or nullptr when there is none (the backend then tries an emitted kernel, and falls
/// back to the interpreter with a logged reason).
std::unique_ptr<LibraryOp> make_library_op(const hlo::Instruction& inst);

// --- the ops (one translation unit each); each returns nullptr for instructions it does not handle ---
// (output fusions: output_fusion.h)
std::unique_ptr<LibraryOp> make_convolution(const hlo::Instruction& conv);
std::unique_ptr<LibraryOp> make_data_op(const hlo::Instruction& inst);  // sort, gather, scatter, reduce-window, argmax
/// Dots the Eigen dot does not take: integer and bool dots, and operands of another dtype than the result.
std::unique_ptr<LibraryOp> make_general_dot(const hlo::Instruction& dot);
/// jitx's linear-algebra custom-calls (jitx.linalg.*) over Eigen's decompositions (eigen_linalg.cpp).
std::unique_ptr<LibraryOp> make_linalg_op(const hlo::Instruction& custom_call);

/// c[m, n] = a[m, k] b[k, n], row-major, on unsigned words that wrap (integer dots and convolutions), rows split
/// across the pool (general_dot.cpp).
void int_gemm(const uint32_t* a, const uint32_t* b, uint32_t* c, int64_t m, int64_t k, int64_t n);
void int_gemm(const uint64_t* a, const uint64_t* b, uint64_t* c, int64_t m, int64_t k, int64_t n);
/// An integer element's bits sign- or zero-extended to 64 (by its dtype), and the low bits of v stored as one.
uint64_t load_int_bits(const void* p, DType d, int64_t i);
void store_int_bits(void* p, DType d, int64_t i, uint64_t v);

}  // namespace jitx::cpu
