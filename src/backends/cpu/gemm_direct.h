// The GEMM's unpacked path (gemm.h's multiply for small f32 products): both operands read where they lie, no
// packing. Built with AVX2 (6 x 16 kernels) or AVX-512 (8 x 32); without either, direct_ok is always false.
#pragma once
#include <cstdint>

#include "backends/cpu/gemm.h"

namespace jitx::cpu::blocked {

/// Whether multiply_direct takes the problem: f32 operands, the rhs's columns contiguous, 0 < K <= 1024, and both
/// operands within 2^17 floats together (L2).
bool direct_ok(const Problem& p);
/// The product into out[(b*m + i)*n + j] (the output, or a scratch of batch*m*n floats), on up to `threads`
/// threads, calling `finish` on each chunk of rows (all columns) when it is done.
void multiply_direct(const Problem& p, float* out, TileFn finish, int64_t threads);

}  // namespace jitx::cpu::blocked
