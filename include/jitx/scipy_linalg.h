// jax.scipy.linalg for C++: Cholesky (cholesky, cho_factor, cho_solve), LU (lu, lu_factor, lu_solve),
// solve_triangular, solve (assume_a "gen", "sym", "her" or "pos"), expm (Pade approximants with scaling and
// squaring, as JAX's), block_diag, toeplitz and hilbert. JAX's defaults (scipy's: cholesky is upper unless lower),
// promotion and shapes; composed from jitx's lax.linalg primitives, so jit, grad and vmap apply.
// Also det, inv, eigh, qr, svd, polar, expm_frechet and the special matrices (hankel, circulant, companion, ...).
// Not built: the complex-only functions (schur, rsf2csf, sqrtm, funm, dft), eigh_tridiagonal, hessenberg,
// qr_multiply, solve_sylvester, qr's pivoting, and expm's upper_triangular fast path beyond solving with the triangle.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "jitx/array.h"

namespace jitx::scipy::linalg {

/// The Cholesky factor of symmetric positive-definite matrices (..., n, n): upper (a = U^T U) unless lower
/// (a = L L^T); only the chosen triangle of a is read.
Array cholesky(const Array& a, bool lower = false, Loc loc = Loc::current());
/// (c, lower) as scipy's cho_factor, for cho_solve.
struct ChoFactor {
  Array c;
  bool lower = false;
};
ChoFactor cho_factor(const Array& a, bool lower = false, Loc loc = Loc::current());
/// x with a x = b from a's Cholesky factor; b is (n,) or (..., n, k).
Array cho_solve(const ChoFactor& c_and_lower, const Array& b, Loc loc = Loc::current());

/// a = p l u for a 2-d a (m, n): p a permutation matrix (m, m), l unit lower (m, k), u upper (k, n), k = min(m, n).
struct PLU {
  Array p, l, u;
};
PLU lu(const Array& a, Loc loc = Loc::current());
/// (lu, piv) as scipy's lu_factor: L and U packed, piv the int32 pivot rows (LAPACK's).
struct LuFactor {
  Array lu, piv;
};
LuFactor lu_factor(const Array& a, Loc loc = Loc::current());
/// x with a x = b (trans 0), a^T x = b (1 or 2) from lu_factor's result; b is (n,) or (..., n, k).
Array lu_solve(const LuFactor& lu_and_piv, const Array& b, int trans = 0, Loc loc = Loc::current());

/// x with op(a) x = b for triangular a (lower or upper; op(a) = a for trans 0, a^T for 1 or 2); b is (n,) or
/// (..., n, k).
Array solve_triangular(const Array& a, const Array& b, int trans = 0, bool lower = false, bool unit_diagonal = false,
                       Loc loc = Loc::current());
/// x with a x = b: "gen", "sym" and "her" by LU (jnp.linalg.solve), "pos" by Cholesky (lower chooses the triangle
/// read). Another assume_a is a TypeError.
Array solve(const Array& a, const Array& b, bool lower = false, std::string_view assume_a = "gen",
            Loc loc = Loc::current());

/// The matrix exponential of square matrices (..., n, n), by JAX's method: Pade approximants of degree 3 to 13
/// (float64; 3 to 7 in float32) chosen by the 1-norm, scaling by 2^-s and s squarings; NaN when s would exceed
/// max_squarings. upper_triangular solves the Pade quotient with the triangle (a must be upper triangular).
Array expm(const Array& a, bool upper_triangular = false, int64_t max_squarings = 16, Loc loc = Loc::current());

/// The matrices (at most 2-d; 0-d and 1-d are rows) on the diagonal of one matrix, zeros elsewhere, in their
/// promoted dtype. No matrices: an empty (1, 0) matrix.
Array block_diag(const std::vector<Array>& arrs, Loc loc = Loc::current());
/// The Toeplitz matrix with first column c and first row r (r = c when absent; r[0] is ignored); leading axes batch.
Array toeplitz(const Array& c, const std::optional<Array>& r = std::nullopt, Loc loc = Loc::current());
/// The n x n Hilbert matrix 1 / (i + j + 1), float64 (the default float).
Array hilbert(int64_t n, Loc loc = Loc::current());

// --- decompositions and inverses (src/api/scipy_linalg_more.cpp), as jax.scipy.linalg wraps jnp.linalg/lax.linalg
Array det(const Array& a, Loc loc = Loc::current());
Array inv(const Array& a, Loc loc = Loc::current());
/// Eigenvalues w (ascending) and eigenvectors v (columns) of symmetric matrices, reading the lower triangle unless
/// lower is false; with eigvals_only, v is an empty Array (JAX returns w alone).
struct Eigh {
  Array w, v;
};
Eigh eigh(const Array& a, bool lower = true, bool eigvals_only = false, Loc loc = Loc::current());
/// mode "full" (q m x m), "economic" (q m x k) or "r" (q empty); pivoting is not built (a TypeError says so).
struct QR {
  Array q, r;
};
QR qr(const Array& a, std::string_view mode = "full", bool pivoting = false, Loc loc = Loc::current());
/// a = u diag(s) vh; with compute_uv false, u and vh are empty Arrays.
struct SVD {
  Array u, s, vh;
};
SVD svd(const Array& a, bool full_matrices = true, bool compute_uv = true, Loc loc = Loc::current());
/// a = u p (side "right") or p u ("left"), u with orthonormal columns (rows), p symmetric positive semi-definite.
/// Computed from the SVD for both of JAX's methods ("qdwh", its default, and "svd"): the factors agree with JAX's
/// qdwh to rounding, not bit for bit (see the README).
struct Polar {
  Array u, p;
};
Polar polar(const Array& a, std::string_view side = "right", std::string_view method = "qdwh",
            Loc loc = Loc::current());
/// (expm(A), the Frechet derivative of expm at A in direction E), as JAX computes it: jvp of expm.
struct ExpmFrechet {
  Array expm, frechet;
};
ExpmFrechet expm_frechet(const Array& A, const Array& E, Loc loc = Loc::current());

// --- special matrices (src/api/scipy_linalg_more.cpp); batched over leading axes where JAX's are
/// The Hankel matrix with first column c and last row r (r = zeros when absent; r[0] is ignored): h[i, j] =
/// concat(c, r[1:])[i + j]. Leading axes of c and r broadcast.
Array hankel(const Array& c, const std::optional<Array>& r = std::nullopt, Loc loc = Loc::current());
/// The circulant matrix of c (..., n): m[i, j] = c[(i - j) mod n].
Array circulant(const Array& c, Loc loc = Loc::current());
/// The companion matrix of the polynomial coefficients a (..., n >= 2), first row -a[1:] / a[0].
Array companion(const Array& a, Loc loc = Loc::current());
/// The matrix of convolution with a (..., m) on inputs of length n: mode "full" (m + n - 1 rows), "same" or "valid".
Array convolution_matrix(const Array& a, int64_t n, std::string_view mode = "full", Loc loc = Loc::current());
/// |a[i] - a[j]| for a (..., n).
Array fiedler(const Array& a, Loc loc = Loc::current());
/// Fiedler's pentadiagonal companion matrix of the coefficients a (..., n >= 1).
Array fiedler_companion(const Array& a, Loc loc = Loc::current());
/// The n x n Hadamard matrix (n a power of 2), int64 unless dtype.
Array hadamard(int64_t n, DType dtype = DType::int64, Loc loc = Loc::current());
/// The (n - 1) x n Helmert matrix (n x n with full), float64.
Array helmert(int64_t n, bool full = false, Loc loc = Loc::current());
/// The inverse of the n x n Hilbert matrix, float64 (JAX's formula through comb).
Array invhilbert(int64_t n, Loc loc = Loc::current());
/// The Leslie matrix of fecundities f (..., n >= 2) and survival rates s (..., n - 1).
Array leslie(const Array& f, const Array& s, Loc loc = Loc::current());
/// The n x n Pascal matrix, kind "symmetric", "lower" or "upper": float32 binomials exp(lgamma(...)) as JAX's (so
/// not exact integers: JAX's pascal(4) has 0.99999905 for 1).
Array pascal(int64_t n, std::string_view kind = "symmetric", Loc loc = Loc::current());
/// The inverse of pascal(n, kind), float64 by the same formula.
Array invpascal(int64_t n, std::string_view kind = "symmetric", Loc loc = Loc::current());

}  // namespace jitx::scipy::linalg
