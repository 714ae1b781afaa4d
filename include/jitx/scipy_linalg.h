// jax.scipy.linalg for C++: Cholesky (cholesky, cho_factor, cho_solve), LU (lu, lu_factor, lu_solve),
// solve_triangular, solve (assume_a "gen", "sym", "her" or "pos"), expm (Pade approximants with scaling and
// squaring, as JAX's), block_diag, toeplitz and hilbert. JAX's defaults (scipy's: cholesky is upper unless lower),
// promotion and shapes; composed from jitx's lax.linalg primitives, so jit, grad and vmap apply.
// Not built: the complex-only functions (schur, rsf2csf, sqrtm, funm, polar), eigh_tridiagonal, expm_frechet,
// hessenberg, and expm's upper_triangular fast path beyond solving with the triangle.
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
/// The Toeplitz matrix with first column c and first row r (r = c when absent; r[0] is ignored), both flattened.
Array toeplitz(const Array& c, const std::optional<Array>& r = std::nullopt, Loc loc = Loc::current());
/// The n x n Hilbert matrix 1 / (i + j + 1), float64 (the default float).
Array hilbert(int64_t n, Loc loc = Loc::current());

}  // namespace jitx::scipy::linalg
