// jax.scipy.stats for C++: the densities, distribution functions and quantiles of norm, expon, laplace, logistic,
// cauchy, uniform, gamma, beta, t, chi2, pareto, gumbel_r, gumbel_l, gennorm, vonmises, poisson, bernoulli, binom,
// geom, nbinom, betabinom, dirichlet, multinomial and multivariate_normal, as jitx::scipy::stats::norm::logpdf(x, loc,
// scale) ... JAX's parameter names, defaults (loc 0, scale 1), promotion (integers to an inexact dtype, weak scalars
// deferring to arrays), broadcasting and edge values (-inf log density outside the support, NaN for invalid parameters
// where JAX gives it); each is composed from jitx::scipy::special and lax ops as JAX composes it
// (src/api/scipy_stats.cpp), so jit, grad and vmap apply. norm.ppf and norm.isf return the default float dtype
// (float64), as JAX's do. Also truncnorm, wrapcauchy and the sample statistics mode, rankdata and sem
// (src/api/scipy_stats_extra.cpp). Not built: gaussian_kde, poisson.entropy, the *.rvs samplers (use jitx::random),
// multivariate_normal's allow_singular, and nan_policy "omit"/"raise" of mode and rankdata (as in JAX).
#pragma once
#include <optional>
#include <string_view>

#include "jitx/array.h"

namespace jitx::scipy::stats {

// The source location is the last parameter, named `at` (`loc` is the distributions' location parameter).
#define JITX_STATS_LS const Array &loc = Array(0.0), const Array &scale = Array(1.0), Loc at = Loc::current()

namespace norm {
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
Array logcdf(const Array& x, JITX_STATS_LS);
Array sf(const Array& x, JITX_STATS_LS);
Array logsf(const Array& x, JITX_STATS_LS);
/// The quantile function (float32/float64 q, as ndtri; the result in the default float dtype, as JAX's).
Array ppf(const Array& q, JITX_STATS_LS);
Array isf(const Array& q, JITX_STATS_LS);
}  // namespace norm

namespace expon {
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
Array logcdf(const Array& x, JITX_STATS_LS);
Array sf(const Array& x, JITX_STATS_LS);
Array logsf(const Array& x, JITX_STATS_LS);
Array ppf(const Array& q, JITX_STATS_LS);
}  // namespace expon

namespace laplace {
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
}  // namespace laplace

namespace logistic {
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
Array sf(const Array& x, JITX_STATS_LS);
Array ppf(const Array& q, JITX_STATS_LS);
Array isf(const Array& q, JITX_STATS_LS);
}  // namespace logistic

namespace cauchy {
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
Array logcdf(const Array& x, JITX_STATS_LS);
Array sf(const Array& x, JITX_STATS_LS);
Array logsf(const Array& x, JITX_STATS_LS);
Array ppf(const Array& q, JITX_STATS_LS);
Array isf(const Array& q, JITX_STATS_LS);
}  // namespace cauchy

namespace uniform {
/// On [loc, loc + scale].
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
Array ppf(const Array& q, JITX_STATS_LS);
}  // namespace uniform

namespace gamma {
/// Shape a.
Array logpdf(const Array& x, const Array& a, JITX_STATS_LS);
Array pdf(const Array& x, const Array& a, JITX_STATS_LS);
Array cdf(const Array& x, const Array& a, JITX_STATS_LS);
Array logcdf(const Array& x, const Array& a, JITX_STATS_LS);
Array sf(const Array& x, const Array& a, JITX_STATS_LS);
Array logsf(const Array& x, const Array& a, JITX_STATS_LS);
}  // namespace gamma

namespace beta {
Array logpdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array pdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array cdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array logcdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array sf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array logsf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
}  // namespace beta

namespace t {
/// Student's t with df degrees of freedom.
Array logpdf(const Array& x, const Array& df, JITX_STATS_LS);
Array pdf(const Array& x, const Array& df, JITX_STATS_LS);
}  // namespace t

namespace chi2 {
Array logpdf(const Array& x, const Array& df, JITX_STATS_LS);
Array pdf(const Array& x, const Array& df, JITX_STATS_LS);
Array cdf(const Array& x, const Array& df, JITX_STATS_LS);
Array logcdf(const Array& x, const Array& df, JITX_STATS_LS);
Array sf(const Array& x, const Array& df, JITX_STATS_LS);
Array logsf(const Array& x, const Array& df, JITX_STATS_LS);
}  // namespace chi2

namespace pareto {
/// Shape b; support x >= loc + scale.
Array logpdf(const Array& x, const Array& b, JITX_STATS_LS);
Array pdf(const Array& x, const Array& b, JITX_STATS_LS);
Array cdf(const Array& x, const Array& b, JITX_STATS_LS);
Array logcdf(const Array& x, const Array& b, JITX_STATS_LS);
Array sf(const Array& x, const Array& b, JITX_STATS_LS);
Array logsf(const Array& x, const Array& b, JITX_STATS_LS);
Array ppf(const Array& q, const Array& b, JITX_STATS_LS);
}  // namespace pareto

namespace gumbel_r {
/// The right-skewed Gumbel distribution (NaN for scale <= 0).
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
Array logcdf(const Array& x, JITX_STATS_LS);
Array sf(const Array& x, JITX_STATS_LS);
Array logsf(const Array& x, JITX_STATS_LS);
Array ppf(const Array& q, JITX_STATS_LS);
}  // namespace gumbel_r

namespace gumbel_l {
/// The left-skewed Gumbel distribution (NaN for scale <= 0).
Array logpdf(const Array& x, JITX_STATS_LS);
Array pdf(const Array& x, JITX_STATS_LS);
Array cdf(const Array& x, JITX_STATS_LS);
Array logcdf(const Array& x, JITX_STATS_LS);
Array sf(const Array& x, JITX_STATS_LS);
Array logsf(const Array& x, JITX_STATS_LS);
Array ppf(const Array& q, JITX_STATS_LS);
}  // namespace gumbel_l


namespace gennorm {
/// The generalised normal distribution of shape beta (no loc/scale, as JAX's).
Array logpdf(const Array& x, const Array& beta, Loc at = Loc::current());
Array pdf(const Array& x, const Array& beta, Loc at = Loc::current());
Array cdf(const Array& x, const Array& beta, Loc at = Loc::current());
}  // namespace gennorm

namespace vonmises {
/// The von Mises distribution of concentration kappa (NaN for kappa <= 0).
Array logpdf(const Array& x, const Array& kappa, Loc at = Loc::current());
Array pdf(const Array& x, const Array& kappa, Loc at = Loc::current());
}  // namespace vonmises

namespace dirichlet {
/// x (K, ...) or (K - 1, ...) on the simplex along axis 0 (the last coordinate 1 - sum when K - 1 are given),
/// alpha (K,); -inf off the simplex (a coordinate <= 0 or a sum 1e-6 away from 1).
Array logpdf(const Array& x, const Array& alpha, Loc at = Loc::current());
Array pdf(const Array& x, const Array& alpha, Loc at = Loc::current());
}  // namespace dirichlet

namespace multinomial {
/// Integer counts x (..., K) of n trials with probabilities p (K,); -inf unless the counts (all of x, as JAX sums
/// them) add up to n.
Array logpmf(const Array& x, const Array& n, const Array& p, Loc at = Loc::current());
Array pmf(const Array& x, const Array& n, const Array& p, Loc at = Loc::current());
}  // namespace multinomial

// The discrete distributions: a location shift only.
#define JITX_STATS_L const Array &loc = Array(0.0), Loc at = Loc::current()

namespace poisson {
/// Rate mu; -inf for k < loc or non-integer k.
Array logpmf(const Array& k, const Array& mu, JITX_STATS_L);
Array pmf(const Array& k, const Array& mu, JITX_STATS_L);
Array cdf(const Array& k, const Array& mu, JITX_STATS_L);
}  // namespace poisson

namespace bernoulli {
Array logpmf(const Array& k, const Array& p, JITX_STATS_L);
Array pmf(const Array& k, const Array& p, JITX_STATS_L);
/// (No loc, as JAX's.)
Array cdf(const Array& k, const Array& p, Loc at = Loc::current());
Array ppf(const Array& q, const Array& p, Loc at = Loc::current());
}  // namespace bernoulli

namespace binom {
Array logpmf(const Array& k, const Array& n, const Array& p, JITX_STATS_L);
Array pmf(const Array& k, const Array& n, const Array& p, JITX_STATS_L);
}  // namespace binom

namespace geom {
/// The number of trials up to the first success (k >= 1).
Array logpmf(const Array& k, const Array& p, JITX_STATS_L);
Array pmf(const Array& k, const Array& p, JITX_STATS_L);
}  // namespace geom

namespace nbinom {
/// Failures k before the n-th success with probability p.
Array logpmf(const Array& k, const Array& n, const Array& p, JITX_STATS_L);
Array pmf(const Array& k, const Array& n, const Array& p, JITX_STATS_L);
}  // namespace nbinom

namespace betabinom {
Array logpmf(const Array& k, const Array& n, const Array& a, const Array& b, JITX_STATS_L);
Array pmf(const Array& k, const Array& n, const Array& a, const Array& b, JITX_STATS_L);
}  // namespace betabinom

#undef JITX_STATS_L

namespace multivariate_normal {
/// The log density of x (..., n) under N(mean, cov): mean of shape (n,) (or a scalar with scalar x), cov a scalar
/// (isotropic), or (..., n, n) factored by Cholesky.
Array logpdf(const Array& x, const Array& mean, const Array& cov, Loc at = Loc::current());
Array pdf(const Array& x, const Array& mean, const Array& cov, Loc at = Loc::current());
}  // namespace multivariate_normal

// --- src/api/scipy_stats_extra.cpp ---
namespace truncnorm {
/// The normal (loc, scale) truncated to [a, b] in standard units; NaN where a >= b.
Array logpdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array pdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array logcdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array cdf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array logsf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
Array sf(const Array& x, const Array& a, const Array& b, JITX_STATS_LS);
}  // namespace truncnorm

namespace wrapcauchy {
/// On [0, 2 pi] with shape 0 < c < 1 (NaN outside it).
Array logpdf(const Array& x, const Array& c, Loc at = Loc::current());
Array pdf(const Array& x, const Array& c, Loc at = Loc::current());
}  // namespace wrapcauchy

/// scipy.stats.mode's result: the most common value along the axis (the smallest among ties; NaNs count as one
/// value) and its count (int64).
struct ModeResult {
  Array mode, count;
};
/// axis nullopt: over the flattened array. nan_policy "omit" and "raise" are not implemented (as in JAX).
ModeResult mode(const Array& a, std::optional<int64_t> axis = 0, std::string_view nan_policy = "propagate",
                bool keepdims = false, Loc at = Loc::current());
/// Ranks from 1 (float64), ties by method "average", "min", "max", "dense" or "ordinal"; of the flattened array, or
/// of each 1-D slice along axis. A slice with a NaN ranks as all NaN.
Array rankdata(const Array& a, std::string_view method = "average", std::optional<int64_t> axis = std::nullopt,
               std::string_view nan_policy = "propagate", Loc at = Loc::current());
/// The standard error of the mean, std(a, ddof) / sqrt(n), along axis (nullopt: all); nan_policy "omit" skips NaNs.
Array sem(const Array& a, std::optional<int64_t> axis = 0, int64_t ddof = 1, std::string_view nan_policy = "propagate",
          bool keepdims = false, Loc at = Loc::current());
#undef JITX_STATS_LS

}  // namespace jitx::scipy::stats
