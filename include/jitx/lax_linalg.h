// jax.lax.linalg's qr, eigh and svd with JAX's signatures and result order (lu, cholesky and triangular_solve are
// in jitx/linalg.h): the same primitives as jnp::linalg's, so the same backends, JVP and vmap rules.
#pragma once
#include "jitx/linalg.h"

namespace jitx::lax::linalg {

struct QrResult {
  Array q, r;
};
/// jax.lax.linalg.qr (pivoting=False): full_matrices gives q m x m and r m x n, else q m x k and r k x n.
QrResult qr(const Array& x, bool full_matrices = true, Loc loc = Loc::current());
struct EighResult {
  Array v, w;  // JAX's order: eigenvectors (columns), then eigenvalues ascending
};
/// jax.lax.linalg.eigh (subset_by_index=None): lower names the triangle read unless symmetrize_input, which uses
/// (x + x^T) / 2. The eigenvalues always come sorted (sort_eigenvalues=false allows that too).
EighResult eigh(const Array& x, bool lower = true, bool symmetrize_input = true, bool sort_eigenvalues = true,
                Loc loc = Loc::current());
struct SvdResult {
  Array u, s, vh;  // u and vh are empty with compute_uv = false (JAX returns s alone)
};
/// jax.lax.linalg.svd (subset_by_index=None, the default algorithm): x = u diag(s) vh, s descending.
SvdResult svd(const Array& x, bool full_matrices = true, bool compute_uv = true, Loc loc = Loc::current());

}  // namespace jitx::lax::linalg
