// jitx::numpy::linalg (jnp::linalg) and jitx::lax::linalg: linear algebra as JAX's jnp.linalg and jax.lax.linalg.
// Every function works on the last two axes, batched over the leading ones, in float32 or float64 (integers and
// bool promote to float32, int64/uint64 to float64, as JAX's promote_dtypes_inexact does with x64; float16/bfloat16
// are a TypeError, as JAX on CPU has no LAPACK for them). The decompositions are primitives (lu, cholesky, triangular_solve, qr, eigh,
// svd) with JAX's JVP rules, vmap rules and a custom-call in the HLO (custom_call_target="jitx.linalg.<name>"):
// Eigen on the CPU backend, plain loops in the interpreter. Singular matrices give inf/nan, never an exception.
// The signs of QR, SVD and eigh vectors are whatever the backend's algorithm gives (they differ from LAPACK's).
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "jitx/array.h"

namespace jitx::numpy::linalg {

/// jnp.linalg.norm with a numeric ord (nullopt: the 2-norm of a vector, Frobenius of a matrix, or, with no axis,
/// the 2-norm of x flattened). axis: nullopt (a vector norm of a 1-d x, a matrix norm of a 2-d x when ord is
/// given; else every axis flattened), one axis (a vector norm: any p, +-inf, 0) or two (a matrix norm: 1, -1,
/// +-inf, 2 and -2: the largest and smallest singular value). Integers promote to the default float, as in JAX.
Array norm(const Array& x, std::optional<double> ord = std::nullopt,
           std::optional<std::vector<int64_t>> axis = std::nullopt, bool keepdims = false, Loc loc = Loc::current());
/// jnp.linalg.norm with ord "fro" or "nuc" (matrix norms only; "nuc" is the sum of the singular values).
Array norm(const Array& x, std::string_view ord, std::optional<std::vector<int64_t>> axis = std::nullopt,
           bool keepdims = false, Loc loc = Loc::current());

/// jnp.linalg.cholesky: the lower factor L (a = L L^T) of symmetric positive-definite matrices, or its transpose
/// with upper; the input is symmetrised first ((a + a^T) / 2). NaN in the lower triangle where a is not positive
/// definite, as in JAX.
Array cholesky(const Array& a, bool upper = false, Loc loc = Loc::current());
/// jnp.linalg.inv: the inverse of square matrices (through LU with partial pivoting).
Array inv(const Array& a, Loc loc = Loc::current());
/// jnp.linalg.solve: x with a x = b; b of rank 1 is one vector (..., n); otherwise b is (..., n, k) and the batch
/// axes of a and b broadcast.
Array solve(const Array& a, const Array& b, Loc loc = Loc::current());
/// jnp.linalg.det (2x2 and 3x3 by JAX's closed formulas, whose gradient is the cofactor matrix also at a singular
/// matrix; larger through LU: the product of U's diagonal with the permutation's sign).
Array det(const Array& a, Loc loc = Loc::current());
struct SlogdetResult {
  Array sign, logabsdet;
};
/// jnp.linalg.slogdet: sign (-1, 0 or 1) and log|det| (-inf for a singular matrix).
SlogdetResult slogdet(const Array& a, Loc loc = Loc::current());
struct QRResult {
  Array Q, R;  // Q is empty for mode "r"
};
/// jnp.linalg.qr: mode "reduced" (Q m x k, R k x n, k = min(m, n)), "complete" (Q m x m, R m x n) or "r" (R only,
/// k x n). Differentiable in every mode and shape, with JAX 0.10.2's rules.
QRResult qr(const Array& a, std::string_view mode = "reduced", Loc loc = Loc::current());
struct EighResult {
  Array eigenvalues, eigenvectors;  // ascending eigenvalues; column k of eigenvectors goes with eigenvalue k
};
/// jnp.linalg.eigh: UPLO "L" or "U" names the triangle read; symmetrize_input uses (a + a^T) / 2 instead.
EighResult eigh(const Array& a, std::string_view UPLO = "L", bool symmetrize_input = true, Loc loc = Loc::current());
/// jnp.linalg.eigvalsh: the eigenvalues of eigh, ascending.
Array eigvalsh(const Array& a, std::string_view UPLO = "L", Loc loc = Loc::current());
struct SVDResult {
  Array U, S, Vh;  // U and Vh are empty with compute_uv = false
};
/// jnp.linalg.svd: a = U diag(S) Vh with S descending; full_matrices gives square U (m x m) and Vh (n x n), else
/// U m x k and Vh k x n. The JVP needs full_matrices = false or compute_uv = false, as in JAX.
SVDResult svd(const Array& a, bool full_matrices = true, bool compute_uv = true, Loc loc = Loc::current());
/// jnp.linalg.svdvals: the singular values, descending.
Array svdvals(const Array& a, Loc loc = Loc::current());
struct LstsqResult {
  Array x, residuals, rank, s;
};
/// jnp.linalg.lstsq for a 2-d a (m x n) and b (m,) or (m, k), through the SVD: the minimum-norm least-squares x,
/// the residuals' squared norms (one per column of b, whatever the rank: JAX's numpy_resid=False), the rank (int64)
/// and a's singular values. rcond (nullopt: eps * max(m, n)) is relative to the largest singular value.
LstsqResult lstsq(const Array& a, const Array& b, std::optional<double> rcond = std::nullopt,
                  Loc loc = Loc::current());
/// jnp.linalg.pinv: the pseudo-inverse through the SVD; singular values at most rtol * the largest are dropped
/// (nullopt: 10 * eps * max(m, n), as JAX).
Array pinv(const Array& a, std::optional<double> rtol = std::nullopt, Loc loc = Loc::current());
/// jnp.linalg.matrix_power: a^n by repeated squaring (n < 0: the inverse's power; n = 0: the identity).
Array matrix_power(const Array& a, int64_t n, Loc loc = Loc::current());

/// jnp.linalg.matrix_rank: the number of singular values above rtol (an absolute threshold when given, as JAX's;
/// default max(S) * max(m, n) * eps), per matrix (int64); a 0-d or 1-d input gives int32 (any element nonzero).
Array matrix_rank(const Array& a, std::optional<double> rtol = std::nullopt, Loc loc = Loc::current());
/// jnp.linalg.cond: the condition number in the 2-norm (nullopt or 2: s_max / s_min; -2: s_min / s_max) or in the
/// norm ord (1, -1, +-inf: square matrices, norm(x) * norm(inv(x))); NaN becomes inf unless x has a NaN.
Array cond(const Array& a, std::optional<double> p = std::nullopt, Loc loc = Loc::current());
/// jnp.linalg.cond with p "fro" or "nuc".
Array cond(const Array& a, std::string_view p, Loc loc = Loc::current());
/// jnp.linalg.multi_dot: the product of two or more matrices (the first and last may be vectors), as one einsum.
Array multi_dot(const std::vector<Array>& arrays, Loc loc = Loc::current());
/// jnp.linalg.tensorinv: the inverse of a reshaped to (prod(shape[:ind]), prod(shape[ind:])).
Array tensorinv(const Array& a, int64_t ind = 2, Loc loc = Loc::current());
/// jnp.linalg.tensorsolve: x with tensordot(a, x, x.ndim) = b (axes: a's axes moved to the end first).
Array tensorsolve(const Array& a, const Array& b, std::optional<std::vector<int64_t>> axes = std::nullopt,
                  Loc loc = Loc::current());
/// jnp.linalg.vector_norm: the ord-norm over axis (nullopt: every axis): 2, +-inf, 0, 1 or any p.
Array vector_norm(const Array& x, std::optional<std::vector<int64_t>> axis = std::nullopt, bool keepdims = false,
                  double ord = 2, Loc loc = Loc::current());
/// jnp.linalg.matrix_norm: norm over the last two axes, ord "fro" (default) or "nuc".
Array matrix_norm(const Array& x, bool keepdims = false, std::string_view ord = "fro", Loc loc = Loc::current());
/// jnp.linalg.matrix_norm with a numeric ord (1, -1, 2, -2, +-inf).
Array matrix_norm(const Array& x, bool keepdims, double ord, Loc loc = Loc::current());
/// jnp.linalg.matrix_transpose: the last two axes swapped (rank >= 2).
Array matrix_transpose(const Array& x, Loc loc = Loc::current());
/// jnp.linalg.outer: x1[:, None] * x2[None, :] of two vectors.
Array outer(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// jnp.linalg.vecdot: the dot products of x1 and x2 along axis (broadcast against each other otherwise).
Array vecdot(const Array& x1, const Array& x2, int64_t axis = -1, Loc loc = Loc::current());
/// jnp.linalg.diagonal / trace: jnp's over the last two axes.
Array diagonal(const Array& x, int64_t offset = 0, Loc loc = Loc::current());
Array trace(const Array& x, int64_t offset = 0, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
/// jnp.linalg.cross: the cross product of 3-vectors along axis (both sizes there must be 3).
Array cross(const Array& x1, const Array& x2, int64_t axis = -1, Loc loc = Loc::current());
/// jnp.linalg.matmul and tensordot: jnp's.
Array matmul(const Array& x1, const Array& x2, Loc loc = Loc::current());
Array tensordot(const Array& x1, const Array& x2, int64_t axes = 2, Loc loc = Loc::current());

}  // namespace jitx::numpy::linalg

namespace jitx::lax::linalg {

/// jax.lax.linalg.triangular_solve: x with op(a) x = b (left_side) or x op(a) = b, op(a) = a or a^T
/// (transpose_a), a triangular (lower or upper; its other triangle is never read; unit_diagonal takes its diagonal
/// as ones). a is (..., m, m), b (..., m, n) on the left or (..., n, m) on the right, with the same batch axes.
/// conjugate_a has no effect on real dtypes.
Array triangular_solve(const Array& a, const Array& b, bool left_side = false, bool lower = false,
                       bool transpose_a = false, bool conjugate_a = false, bool unit_diagonal = false,
                       Loc loc = Loc::current());
/// jax.lax.linalg.cholesky (symmetrize_input: (x + x^T) / 2 first; otherwise only the lower triangle is read).
Array cholesky(const Array& x, bool symmetrize_input = true, Loc loc = Loc::current());
struct LuResult {
  Array lu, pivots, permutation;  // pivots/permutation int32; x[..., permutation, :] = L U
};
/// jax.lax.linalg.lu of m x n matrices: partial pivoting, L unit lower (m x k) and U upper (k x n) packed in lu,
/// k = min(m, n); pivots [..., k] as LAPACK's (row i was swapped with row pivots[i]), permutation [..., m].
LuResult lu(const Array& x, Loc loc = Loc::current());

}  // namespace jitx::lax::linalg
