// jax.scipy.special for C++: gamma-family functions (gammaln, gammasgn, gamma, loggamma, digamma, polygamma,
// betaln, beta, betainc, gammainc, gammaincc, factorial, comb, poch, multigammaln), the error function family
// (erf, erfc, erfinv, ndtr, ndtri, log_ndtr), logit/expit, entropies (xlogy, xlog1py, entr, rel_entr, kl_div),
// Box-Cox, the Hurwitz zeta function, the modified Bessel functions i0/i0e/i1/i1e and the reductions logsumexp,
// softmax and log_softmax, the exponential integrals expi, exp1 and expn. JAX's names, defaults, dtypes (integer arguments promote to an inexact dtype: int64 to
// float64, other integers and bool to float32), edge values and derivative rules; each is composed from lax ops
// (see src/api/scipy_special.cpp), so jit, grad and vmap apply.
// Not built: the complex-argument forms, erfcx, dawsn, wofz, sici, spence, hyp1f1, hyp2f1, owens_t, bernoulli,
// bessel_jn, lpmn, sph_harm, fresnel, and logsumexp's `where`.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "jitx/array.h"

namespace jitx::scipy::special {
using Axes = std::vector<int64_t>;  // empty: all axes

// --- gamma and beta ---
/// log|Gamma(x)|.
Array gammaln(const Array& x, Loc loc = Loc::current());
/// The sign of Gamma(x): NaN at the poles and for NaN, -1 for -0 and where floor(x) is odd below 0, else 1.
Array gammasgn(const Array& x, Loc loc = Loc::current());
/// Gamma(x) = gammasgn(x) exp(gammaln(x)).
Array gamma(const Array& x, Loc loc = Loc::current());
/// log Gamma(x) for real x > 0 (NaN elsewhere).
Array loggamma(const Array& x, Loc loc = Loc::current());
/// psi(x), the logarithmic derivative of Gamma.
Array digamma(const Array& x, Loc loc = Loc::current());
/// The n-th derivative of digamma; n has an integer dtype (TypeError otherwise, as JAX); NaN for n < 0.
Array polygamma(const Array& n, const Array& x, Loc loc = Loc::current());
/// log|B(a, b)|, accurate for large arguments (scipy's algdiv for max(a, b) >= 8).
Array betaln(const Array& a, const Array& b, Loc loc = Loc::current());
/// B(a, b) with its sign.
Array beta(const Array& a, const Array& b, Loc loc = Loc::current());
/// The regularized incomplete beta function I_x(a, b) (lax::betainc).
Array betainc(const Array& a, const Array& b, const Array& x, Loc loc = Loc::current());
/// The regularized lower (upper) incomplete gamma function P(a, x) (Q(a, x)).
Array gammainc(const Array& a, const Array& x, Loc loc = Loc::current());
Array gammaincc(const Array& a, const Array& x, Loc loc = Loc::current());
/// n! = Gamma(n + 1) as a float, 0 for n < 0.
Array factorial(const Array& n, Loc loc = Loc::current());
/// N choose k as a float (0 unless 0 <= k <= N); with repetition, (N + k - 1) choose k.
Array comb(const Array& N, const Array& k, bool repetition = false, Loc loc = Loc::current());
/// The rising factorial Gamma(z + m) / Gamma(z) (1 for m = 0).
Array poch(const Array& z, const Array& m, Loc loc = Loc::current());
/// log of the multivariate gamma function of dimension d (a static integer >= 1).
Array multigammaln(const Array& a, int64_t d, Loc loc = Loc::current());

// --- error function and the normal distribution ---
Array erf(const Array& x, Loc loc = Loc::current());
Array erfc(const Array& x, Loc loc = Loc::current());
Array erfinv(const Array& x, Loc loc = Loc::current());
/// The standard normal CDF (float32 or float64 only, as JAX).
Array ndtr(const Array& x, Loc loc = Loc::current());
/// Its inverse (Cephes' rational approximations; -inf at 0, inf at 1).
Array ndtri(const Array& p, Loc loc = Loc::current());
/// log(ndtr(x)), with an asymptotic series of series_order terms (0 to 30) far in the lower tail.
Array log_ndtr(const Array& x, int series_order = 3, Loc loc = Loc::current());

/// The exponential integral Ei(x) (Cephes' rational approximations, as JAX; Ei(x) = -E1(-x) for x < 0); its
/// derivative is e^x / x.
Array expi(const Array& x, Loc loc = Loc::current());
/// The generalised exponential integral E_n(x) for real n, x (NaN for n < 0 or x < 0, as JAX): the power series
/// for x <= 1, the continued fraction for x > 1, the asymptotic expansion for n >= 5000; d/dx = -E_{n-1}(x), n not
/// differentiated.
Array expn(const Array& n, const Array& x, Loc loc = Loc::current());
/// E_1(x) = expn(1, x).
Array exp1(const Array& x, Loc loc = Loc::current());
/// exp(x^2) erfc(x) (JAX's: exp(x^2) erfc(x) below sqrt(log(max)), an asymptotic series above; float16 and
/// bfloat16 computed in float32); derivative 2 x erfcx(x) - 2 / sqrt(pi).
Array erfcx(const Array& x, Loc loc = Loc::current());
/// Dawson's integral exp(-x^2) int_0^x exp(t^2) dt (Cephes' rational approximations, as JAX); derivative
/// 1 - 2 x dawsn(x).
Array dawsn(const Array& x, Loc loc = Loc::current());
/// Spence's function int_1^x log(t) / (1 - t) dt for x >= 0 (NaN below; as JAX, float32 and float64 only: other
/// dtypes are a TypeError).
Array spence(const Array& x, Loc loc = Loc::current());
/// The Bernoulli numbers B_0 .. B_n (B_1 = -1/2) as float64, by JAX's Chowla-Hartung sums (with its 48 terms,
/// so B_4 is -0.03333325, as JAX's).
Array bernoulli(int64_t n, Loc loc = Loc::current());
/// (Si(x), Ci(x)), the sine and cosine integrals (Cephes' series for |x| <= 4, its auxiliary functions up to 1e9,
/// the leading asymptotics beyond; Si odd, Ci(-inf) NaN, Ci of a negative x as of |x|, as JAX); derivatives
/// sin(x)/x and cos(x)/x.
std::pair<Array, Array> sici(const Array& x, Loc loc = Loc::current());
/// Owen's T function T(h, a) (JAX's 13-point quadrature with the exact cases h = 0 and a = 1 and the reciprocal
/// correction for |a| > 1). As JAX's, the result is float64 whatever the inputs' float dtype (its quadrature
/// constants are float64 arrays); the derivatives are JAX's closed forms.
Array owens_t(const Array& h, const Array& a, Loc loc = Loc::current());
// --- logistic ---
/// log(x / (1 - x)).
Array logit(const Array& x, Loc loc = Loc::current());
/// 1 / (1 + exp(-x)).
Array expit(const Array& x, Loc loc = Loc::current());

// --- entropies ---
/// x log(y), 0 where x = 0 (unless y is NaN).
Array xlogy(const Array& x, const Array& y, Loc loc = Loc::current());
/// x log(1 + y), 0 where x = 0 (unless y is NaN).
Array xlog1py(const Array& x, const Array& y, Loc loc = Loc::current());
/// -x log(x) (0 at 0, -inf below 0).
Array entr(const Array& x, Loc loc = Loc::current());
/// p log(p / q) for p, q > 0; 0 for p = 0 <= q; inf elsewhere.
Array rel_entr(const Array& p, const Array& q, Loc loc = Loc::current());
/// rel_entr(p, q) - p + q.
Array kl_div(const Array& p, const Array& q, Loc loc = Loc::current());

// --- transforms ---
/// (x^lambda - 1) / lambda, log(x) for lambda = 0.
Array boxcox(const Array& x, const Array& lmbda, Loc loc = Loc::current());
/// boxcox(1 + x, lambda), computed without forming 1 + x.
Array boxcox1p(const Array& x, const Array& lmbda, Loc loc = Loc::current());

// --- zeta and Bessel ---
/// The Hurwitz zeta function sum_k (k + q)^-x; differentiable in x and q (through its Euler-Maclaurin sum).
Array zeta(const Array& x, const Array& q, Loc loc = Loc::current());
/// The modified Bessel functions of the first kind of orders 0 and 1, and their exp(-|x|)-scaled forms.
Array i0(const Array& x, Loc loc = Loc::current());
Array i0e(const Array& x, Loc loc = Loc::current());
Array i1(const Array& x, Loc loc = Loc::current());
Array i1e(const Array& x, Loc loc = Loc::current());

// --- reductions ---
/// log(sum(b * exp(a))) over axes (all by default), stably; NaN where the weighted sum is negative.
Array logsumexp(const Array& a, Axes axes = {}, const std::optional<Array>& b = std::nullopt, bool keepdims = false,
                Loc loc = Loc::current());
/// logsumexp with return_sign=True: (log|sum(b * exp(a))|, sign of the sum).
std::pair<Array, Array> logsumexp_with_sign(const Array& a, Axes axes = {},
                                            const std::optional<Array>& b = std::nullopt, bool keepdims = false,
                                            Loc loc = Loc::current());
/// exp(x) / sum(exp(x)) over axes (all by default, unlike jax.nn.softmax's last axis).
Array softmax(const Array& x, Axes axes = {}, Loc loc = Loc::current());
Array log_softmax(const Array& x, Axes axes = {}, Loc loc = Loc::current());

}  // namespace jitx::scipy::special
