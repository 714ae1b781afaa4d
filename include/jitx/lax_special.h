// jax.lax's special functions beyond the primitives of jitx/lax.h: the regularized incomplete gamma and beta
// functions (igamma, igammac, betainc) and their derivative helpers (igamma_grad_a, random_gamma_grad), the Hurwitz
// zeta function, polygamma and the exponentially scaled Bessel functions i0e/i1e. Each is composed from lax ops as
// XLA decomposes it (series and continued fractions run as while loops that stop per element once converged;
// zeta's Euler-Maclaurin sum and the Bessel functions' Chebyshev series are straight-line code), so jit, vmap and
// the transformations apply, and each carries JAX's derivative rule. The arguments must share one floating dtype
// and broadcast together (as jax.lax's); bfloat16 and float16 are computed in float32 and rounded back, as JAX does.
// jax.scipy.special's names (gammainc, betainc, zeta, polygamma, i0e, ...) are in jitx/scipy_special.h.
#pragma once
#include "jitx/array.h"

namespace jitx::lax {

/// The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a): power series for x < 1 or
/// x <= a, else 1 - the continued fraction of Q. NaN for a < 0, x < 0, a = x = 0 or a NaN; 0 at x = 0 (a > 0),
/// 1 at x = inf. Differentiable in both arguments (d/da through igamma_grad_a).
Array igamma(const Array& a, const Array& x, Loc loc = Loc::current());
/// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), computed directly (no cancellation).
Array igammac(const Array& a, const Array& x, Loc loc = Loc::current());
/// dP(a, x)/da (NaN for a <= 0 or x < 0; 0 at x = 0).
Array igamma_grad_a(const Array& a, const Array& x, Loc loc = Loc::current());
/// The derivative of a Gamma(a, 1) sample x with respect to a at fixed CDF: -(dP/da) / (dP/dx), as
/// jax.random.gamma differentiates its draws.
Array random_gamma_grad(const Array& a, const Array& x, Loc loc = Loc::current());
/// The regularized incomplete beta function I_x(a, b), by the continued fraction of DLMF 8.17.22 (with the
/// symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where it converges faster). NaN outside a, b >= 0, 0 <= x <= 1.
/// Differentiable in x only; a gradient in a or b throws, as in JAX.
Array betainc(const Array& a, const Array& b, const Array& x, Loc loc = Loc::current());
/// The Hurwitz zeta function sum_k (k + q)^-x (x >= 1; x = 1 gives inf, x < 1 NaN; q <= 0 needs an integer x,
/// and at the poles q = 0, -1, ... the result is inf for even x, NaN for odd x). Not differentiable, as in JAX.
Array zeta(const Array& x, const Array& q, Loc loc = Loc::current());
/// The m-th derivative of digamma at x (m a non-negative integer value, else NaN): (-1)^(m+1) m! zeta(m+1, x),
/// digamma for m = 0. Differentiable in x (polygamma(m + 1, x)); a gradient in m throws, as in JAX.
Array polygamma(const Array& m, const Array& x, Loc loc = Loc::current());
/// exp(-|x|) I0(x), the modified Bessel function of order 0 scaled (Chebyshev series on [0, 8] and in 1/x).
Array bessel_i0e(const Array& x, Loc loc = Loc::current());
/// exp(-|x|) I1(x), the modified Bessel function of order 1 scaled (odd in x).
Array bessel_i1e(const Array& x, Loc loc = Loc::current());

}  // namespace jitx::lax
