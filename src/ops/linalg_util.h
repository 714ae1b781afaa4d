// Helpers of jnp::linalg's functions (src/ops/linalg*.cpp) and the linalg primitives' rules: argument checks that
// name the function, the inexact promotion, and a few matrix pieces (diagonal, permutation matrix, symmetrise).
#pragma once
#include <string_view>
#include <utility>

#include "jitx/array.h"

namespace jitx::detail::linalg_util {

/// JAX's dtypes.to_inexact_dtype: floats stay, int64/uint64 become float64, other ints and bool float32.
DType inexact_dtype(DType d);
/// x promoted to an inexact dtype as JAX's promote_dtypes_inexact (int64/uint64 to float64, other ints and bool to
/// float32, as JAX with x64); float16/bfloat16 (unless low_precision_ok: the functions JAX computes without
/// LAPACK) and empty Arrays are a TypeError naming op.
Array inexact(std::string_view op, const Array& x, bool low_precision_ok = false);
/// inexact, except that an empty f16/bf16 array passes as it is: JAX's qr, pinv and lstsq return empty results in
/// its dtype (it has no f16 LAPACK, but nothing to decompose).
Array inexact_or_empty_half(std::string_view op, const Array& x);
/// The dtype a and b (as given) are computed in: JAX's promote_dtypes_inexact (float32 unless that is float64).
DType common_float(const Array& a, const Array& b);
/// x has rank >= 2 (a batch of matrices); ShapeError naming op otherwise.
void check_matrix(std::string_view op, const Array& x);
/// ... and square matrices in its last two axes.
void check_square(std::string_view op, const Array& x);
/// (x + x^T) / 2 over the last two axes.
Array symmetrize(const Array& x);
/// jax.lax.linalg.cholesky/eigh's input: with symmetrize_input, (x + x^T) / 2 as JAX's true division computes it
/// (so integers and bools turn float as there: int32 -> float32, bool -> weak float64); without, a float32 or
/// float64 array as it is (JAX refuses other dtypes there). x square; TypeError/ShapeError naming op otherwise.
Array lax_symmetric_input(std::string_view op, const Array& x, bool symmetrize_input);
/// The diagonal of square matrices in the last two axes (..., n): a strided slice, so inf/nan elsewhere stay out.
Array diagonal(const Array& x);
/// P with P[..., i, j] = (perm[..., i] == j), in dtype: (P b) is b's rows in perm's order.
Array permutation_matrix(const Array& perm, DType dtype);
/// (-1)^(number of row swaps) of an LU's pivots (..., n), in dtype (...).
Array pivot_sign(const Array& pivots, DType dtype);
/// a (..., n, n) and b (..., n, k) with their batch axes broadcast against each other.
std::pair<Array, Array> broadcast_batch(std::string_view op, const Array& a, const Array& b);

}  // namespace jitx::detail::linalg_util
