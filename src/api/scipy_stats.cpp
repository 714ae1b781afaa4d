// jitx::scipy::stats (jitx/scipy_stats.h): jax.scipy.stats's distributions, each function composed as JAX
// composes it (same formulas, so the same edge values, dtypes and gradients).
#include "jitx/scipy_stats.h"

#include <cmath>
#include <numbers>

#include "api/scipy_util.h"
#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/scipy_special.h"

namespace jitx::scipy::stats {
using detail::ApiScope;
using scipy_util::scipy_cst;
using scipy_util::scipy_finish;
using scipy_util::scipy_promote;
namespace sp = jitx::scipy::special;

namespace {
using P = scipy_util::ScipyPromoted;
Array kc(double v, const Array& like) { return scipy_cst(v, like.dtype()); }
Array neg_inf_where(const Array& cond, const Array& v) { return lax::select(cond, jnp::full_like(v, -INFINITY), v); }
Array nan_where(const Array& cond, const Array& v) { return lax::select(cond, jnp::full_like(v, NAN), v); }
/// (x - loc) / scale.
Array standardize(const Array& x, const Array& loc, const Array& scale) { return lax::div(lax::sub(x, loc), scale); }
/// clamp(0, v, hi).
Array clamp0(const Array& v, double hi) { return lax::clamp(kc(0, v), v, kc(hi, v)); }
}  // namespace

// --- norm ---
namespace norm {
namespace {
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array s2 = lax::mul(scale, scale);
  Array log_normalizer = lax::log(lax::mul(kc(2 * std::numbers::pi, x), s2));
  Array d = lax::sub(x, loc);
  Array quadratic = lax::div(lax::mul(d, d), s2);
  return lax::div(lax::add(log_normalizer, quadratic), kc(-2, x));
}
/// ndtri(q) * scale + loc as the default float dtype (JAX's jnp.asarray(..., float)); q float32/float64 only.
Array ppf_impl(const Array& q, const Array& loc, const Array& scale) {
  Array z = sp::ndtri(q);
  P p = scipy_promote("norm.ppf", {z, scale, loc});
  Array r = lax::add(lax::mul(p.v[0], p.v[1]), p.v[2]);
  return lax::convert_element_type(r, detail::default_float_dtype());
}
}  // namespace
Array logpdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("norm.logpdf", {x, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2]));
}
Array pdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("norm.pdf", {x, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2])));
}
Array cdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("norm.cdf", {x, loc, scale});
  return scipy_finish(p, sp::ndtr(standardize(p.v[0], p.v[1], p.v[2])));
}
Array logcdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("norm.logcdf", {x, loc, scale});
  return scipy_finish(p, sp::log_ndtr(standardize(p.v[0], p.v[1], p.v[2])));
}
Array sf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("norm.sf", {x, loc, scale});
  return scipy_finish(p, sp::ndtr(standardize(lax::neg(p.v[0]), lax::neg(p.v[1]), p.v[2])));
}
Array logsf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("norm.logsf", {x, loc, scale});
  return scipy_finish(p, sp::log_ndtr(standardize(lax::neg(p.v[0]), lax::neg(p.v[1]), p.v[2])));
}
Array ppf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  return ppf_impl(q, loc, scale);
}
Array isf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  if (!q.valid()) detail::throw_error<TypeError>("norm.isf", "q is an empty (default-constructed) Array");
  return ppf_impl(lax::sub(scipy_cst(1, q.dtype()), q), loc, scale);
}
}  // namespace norm

// --- expon ---
namespace expon {
namespace {
Array logsf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array neg_scaled = lax::div(lax::sub(loc, x), scale);
  return lax::select(lax::lt(x, loc), jnp::zeros_like(neg_scaled), neg_scaled);
}
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array lp = lax::neg(lax::add(standardize(x, loc, scale), lax::log(scale)));
  return neg_inf_where(lax::lt(x, loc), lp);
}
}  // namespace
Array logpdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("expon.logpdf", {x, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2]));
}
Array pdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("expon.pdf", {x, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2])));
}
Array cdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("expon.cdf", {x, loc, scale});
  Array neg_scaled = lax::div(lax::sub(p.v[1], p.v[0]), p.v[2]);
  return scipy_finish(
      p, lax::select(lax::lt(p.v[0], p.v[1]), jnp::zeros_like(neg_scaled), lax::neg(lax::expm1(neg_scaled))));
}
Array logcdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("expon.logcdf", {x, loc, scale});
  return scipy_finish(p, lax::log1p(lax::neg(lax::exp(logsf_impl(p.v[0], p.v[1], p.v[2])))));
}
Array sf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("expon.sf", {x, loc, scale});
  return scipy_finish(p, lax::exp(logsf_impl(p.v[0], p.v[1], p.v[2])));
}
Array logsf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("expon.logsf", {x, loc, scale});
  return scipy_finish(p, logsf_impl(p.v[0], p.v[1], p.v[2]));
}
Array ppf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("expon.ppf", {q, loc, scale});
  const Array& qv = p.v[0];
  Array bad = lax::bitwise_or(lax::ne(qv, qv), lax::bitwise_or(lax::lt(qv, kc(0, qv)), lax::gt(qv, kc(1, qv))));
  return scipy_finish(p, nan_where(bad, lax::sub(p.v[1], lax::mul(p.v[2], lax::log1p(lax::neg(qv))))));
}
}  // namespace expon

// --- laplace ---
namespace laplace {
namespace {
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array linear = lax::div(lax::abs(lax::sub(x, loc)), scale);
  return lax::neg(lax::add(linear, lax::log(lax::mul(kc(2, x), scale))));
}
}  // namespace
Array logpdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("laplace.logpdf", {x, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2]));
}
Array pdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("laplace.pdf", {x, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2])));
}
Array cdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("laplace.cdf", {x, loc, scale});
  Array d = standardize(p.v[0], p.v[1], p.v[2]);
  Array half = kc(0.5, d);
  return scipy_finish(p, lax::select(lax::le(d, kc(0, d)), lax::mul(half, lax::exp(d)),
                                     lax::sub(kc(1, d), lax::mul(half, lax::exp(lax::neg(d))))));
}
}  // namespace laplace

// --- logistic ---
namespace logistic {
namespace {
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array z = standardize(x, loc, scale);
  Array half = lax::div(z, kc(2, z));
  return lax::sub(lax::mul(kc(-2, z), jnp::logaddexp(half, lax::neg(half))), lax::log(scale));
}
}  // namespace
Array logpdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("logistic.logpdf", {x, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2]));
}
Array pdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("logistic.pdf", {x, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2])));
}
Array cdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("logistic.cdf", {x, loc, scale});
  return scipy_finish(p, sp::expit(standardize(p.v[0], p.v[1], p.v[2])));
}
Array sf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("logistic.sf", {x, loc, scale});
  return scipy_finish(p, sp::expit(lax::neg(standardize(p.v[0], p.v[1], p.v[2]))));
}
Array ppf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("logistic.ppf", {q, loc, scale});
  return scipy_finish(p, lax::add(lax::mul(sp::logit(p.v[0]), p.v[2]), p.v[1]));
}
Array isf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("logistic.isf", {q, loc, scale});
  return scipy_finish(p, lax::add(lax::mul(lax::neg(sp::logit(p.v[0])), p.v[2]), p.v[1]));
}
}  // namespace logistic

// --- cauchy ---
namespace cauchy {
namespace {
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array z = standardize(x, loc, scale);
  Array normalize = lax::log(lax::mul(kc(std::numbers::pi, x), scale));
  return lax::neg(lax::add(normalize, lax::log1p(lax::mul(z, z))));
}
Array cdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array z = standardize(x, loc, scale);
  return lax::add(kc(0.5, z), lax::mul(kc(1 / std::numbers::pi, z), lax::atan(z)));
}
/// tan(pi q - pi/2) (ppf) or tan(pi/2 - pi q) (isf), scaled and shifted.
Array quantile(const Array& q, const Array& loc, const Array& scale, bool upper) {
  Array pq = lax::mul(kc(std::numbers::pi, q), q), half_pi = kc(std::numbers::pi / 2, q);
  Array u = lax::tan(upper ? lax::sub(half_pi, pq) : lax::sub(pq, half_pi));
  return lax::add(lax::mul(u, scale), loc);
}
}  // namespace
Array logpdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.logpdf", {x, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2]));
}
Array pdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.pdf", {x, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2])));
}
Array cdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.cdf", {x, loc, scale});
  return scipy_finish(p, cdf_impl(p.v[0], p.v[1], p.v[2]));
}
Array logcdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.logcdf", {x, loc, scale});
  return scipy_finish(p, lax::log(cdf_impl(p.v[0], p.v[1], p.v[2])));
}
Array sf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.sf", {x, loc, scale});
  return scipy_finish(p, cdf_impl(lax::neg(p.v[0]), lax::neg(p.v[1]), p.v[2]));
}
Array logsf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.logsf", {x, loc, scale});
  return scipy_finish(p, lax::log(cdf_impl(lax::neg(p.v[0]), lax::neg(p.v[1]), p.v[2])));
}
Array ppf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.ppf", {q, loc, scale});
  return scipy_finish(p, quantile(p.v[0], p.v[1], p.v[2], false));
}
Array isf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("cauchy.isf", {q, loc, scale});
  return scipy_finish(p, quantile(p.v[0], p.v[1], p.v[2], true));
}
}  // namespace cauchy

// --- uniform ---
namespace uniform {
namespace {
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array outside = lax::bitwise_or(lax::gt(x, lax::add(loc, scale)), lax::lt(x, loc));
  return neg_inf_where(outside, lax::neg(lax::log(scale)));
}
}  // namespace
Array logpdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("uniform.logpdf", {x, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2]));
}
Array pdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("uniform.pdf", {x, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2])));
}
Array cdf(const Array& x, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("uniform.cdf", {x, loc, scale});
  const Array &xv = p.v[0], &lo = p.v[1];
  Array hi = lax::add(lo, p.v[2]);
  // jnp.select: below -> 0, above -> 1, inside -> (x - loc) / scale, otherwise (NaN) 0.
  Array inside = lax::bitwise_and(lax::ge(xv, lo), lax::le(xv, hi));
  Array r = lax::select(inside, standardize(xv, lo, p.v[2]), jnp::zeros_like(xv));
  r = lax::select(lax::gt(xv, hi), jnp::ones_like(xv), r);
  return scipy_finish(p, lax::select(lax::lt(xv, lo), jnp::zeros_like(xv), r));
}
Array ppf(const Array& q, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("uniform.ppf", {q, loc, scale});
  const Array& qv = p.v[0];
  Array bad = lax::bitwise_or(lax::ne(qv, qv), lax::bitwise_or(lax::lt(qv, kc(0, qv)), lax::gt(qv, kc(1, qv))));
  return scipy_finish(p, nan_where(bad, lax::add(p.v[1], lax::mul(p.v[2], qv))));
}
}  // namespace uniform

// --- gamma ---
namespace gamma {
namespace {
Array logpdf_impl(const Array& x, const Array& a, const Array& loc, const Array& scale) {
  Array ok = lax::ge(x, loc);
  Array y = lax::select(ok, standardize(x, loc, scale), jnp::ones_like(x));
  Array linear = lax::sub(sp::xlogy(lax::sub(a, kc(1, a)), y), y);
  Array shape_terms = lax::add(lax::lgamma(a), lax::log(scale));
  return neg_inf_where(lax::bitwise_not(ok), lax::sub(linear, shape_terms));
}
Array cdf_impl(const Array& x, const Array& a, const Array& loc, const Array& scale) {
  return sp::gammainc(a, clamp0(standardize(x, loc, scale), INFINITY));
}
Array sf_impl(const Array& x, const Array& a, const Array& loc, const Array& scale) {
  Array y = standardize(x, loc, scale);
  return lax::select(lax::lt(y, kc(0, y)), jnp::ones_like(y), sp::gammaincc(a, y));
}
}  // namespace
#define JITX_STATS_GAMMA(name, op, expr)                                                     \
  Array name(const Array& x, const Array& a, const Array& loc, const Array& scale, Loc at) { \
    ApiScope s(at);                                                                          \
    P p = scipy_promote(op, {x, a, loc, scale});                                             \
    const Array &xv = p.v[0], &av = p.v[1], &lv = p.v[2], &sv = p.v[3];                      \
    return scipy_finish(p, expr);                                                            \
  }
JITX_STATS_GAMMA(logpdf, "gamma.logpdf", logpdf_impl(xv, av, lv, sv))
JITX_STATS_GAMMA(pdf, "gamma.pdf", lax::exp(logpdf_impl(xv, av, lv, sv)))
JITX_STATS_GAMMA(cdf, "gamma.cdf", cdf_impl(xv, av, lv, sv))
JITX_STATS_GAMMA(logcdf, "gamma.logcdf", lax::log(cdf_impl(xv, av, lv, sv)))
JITX_STATS_GAMMA(sf, "gamma.sf", sf_impl(xv, av, lv, sv))
JITX_STATS_GAMMA(logsf, "gamma.logsf", lax::log(sf_impl(xv, av, lv, sv)))
#undef JITX_STATS_GAMMA
}  // namespace gamma

// --- beta ---
namespace beta {
namespace {
Array logpdf_impl(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale) {
  Array one = kc(1, x), zero = kc(0, a);
  Array y = standardize(x, loc, scale);
  Array linear = lax::add(sp::xlogy(lax::sub(a, one), y), sp::xlog1py(lax::sub(b, one), lax::neg(y)));
  Array lp = lax::sub(lax::add(lax::neg(sp::betaln(a, b)), linear), lax::log(scale));
  Array r = neg_inf_where(lax::bitwise_or(lax::gt(x, lax::add(loc, scale)), lax::lt(x, loc)), lp);
  Array bad = lax::bitwise_or(lax::bitwise_or(lax::le(a, zero), lax::le(b, zero)), lax::le(scale, zero));
  return nan_where(bad, r);
}
Array cdf_impl(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale) {
  return sp::betainc(a, b, clamp0(standardize(x, loc, scale), 1));
}
Array sf_impl(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale) {
  return sp::betainc(b, a, lax::sub(kc(1, x), clamp0(standardize(x, loc, scale), 1)));
}
}  // namespace
#define JITX_STATS_BETA(name, op, expr)                                                                      \
  Array name(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale, Loc at) { \
    ApiScope s(at);                                                                                          \
    P p = scipy_promote(op, {x, a, b, loc, scale});                                                          \
    const Array &xv = p.v[0], &av = p.v[1], &bv = p.v[2], &lv = p.v[3], &sv = p.v[4];                        \
    return scipy_finish(p, expr);                                                                            \
  }
JITX_STATS_BETA(logpdf, "beta.logpdf", logpdf_impl(xv, av, bv, lv, sv))
JITX_STATS_BETA(pdf, "beta.pdf", lax::exp(logpdf_impl(xv, av, bv, lv, sv)))
JITX_STATS_BETA(cdf, "beta.cdf", cdf_impl(xv, av, bv, lv, sv))
JITX_STATS_BETA(logcdf, "beta.logcdf", lax::log(cdf_impl(xv, av, bv, lv, sv)))
JITX_STATS_BETA(sf, "beta.sf", sf_impl(xv, av, bv, lv, sv))
JITX_STATS_BETA(logsf, "beta.logsf", lax::log(sf_impl(xv, av, bv, lv, sv)))
#undef JITX_STATS_BETA
}  // namespace beta

// --- t ---
namespace t {
namespace {
Array logpdf_impl(const Array& x, const Array& df, const Array& loc, const Array& scale) {
  Array two = kc(2, x);
  Array z = standardize(x, loc, scale);
  Array half_df = lax::div(df, two);
  Array half_df1 = lax::add(half_df, kc(0.5, x));
  Array c = lax::mul(lax::mul(scale, scale), kc(std::numbers::pi, x));
  Array normalize =
      lax::sub(lax::add(lax::lgamma(half_df), lax::div(lax::log(lax::mul(c, df)), two)), lax::lgamma(half_df1));
  Array quadratic = lax::div(lax::mul(z, z), df);
  return lax::neg(lax::add(normalize, lax::mul(half_df1, lax::log1p(quadratic))));
}
}  // namespace
Array logpdf(const Array& x, const Array& df, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("t.logpdf", {x, df, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2], p.v[3]));
}
Array pdf(const Array& x, const Array& df, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("t.pdf", {x, df, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2], p.v[3])));
}
}  // namespace t

// --- chi2 ---
namespace chi2 {
namespace {
Array logpdf_impl(const Array& x, const Array& df, const Array& loc, const Array& scale) {
  Array one = kc(1, x), two = kc(2, x);
  Array y = standardize(x, loc, scale);
  Array half_df = lax::div(df, two);
  Array kernel = lax::sub(lax::mul(lax::sub(half_df, one), lax::log(y)), lax::div(y, two));
  Array normalizer = lax::neg(lax::add(lax::lgamma(half_df), lax::div(lax::mul(lax::log(two), df), two)));
  return neg_inf_where(lax::lt(x, loc), lax::add(lax::sub(normalizer, lax::log(scale)), kernel));
}
/// (df / 2, clamp(0, (x - loc) / (2 scale), inf)): the incomplete gamma functions' arguments.
std::pair<Array, Array> gamma_args(const Array& x, const Array& df, const Array& loc, const Array& scale) {
  Array two = kc(2, x);
  return {lax::div(df, two), clamp0(lax::div(lax::sub(x, loc), lax::mul(scale, two)), INFINITY)};
}
Array cdf_impl(const Array& x, const Array& df, const Array& loc, const Array& scale) {
  auto [h, y] = gamma_args(x, df, loc, scale);
  return sp::gammainc(h, y);
}
Array sf_impl(const Array& x, const Array& df, const Array& loc, const Array& scale) {
  auto [h, y] = gamma_args(x, df, loc, scale);
  return sp::gammaincc(h, y);
}
}  // namespace
#define JITX_STATS_CHI2(name, op, expr)                                                       \
  Array name(const Array& x, const Array& df, const Array& loc, const Array& scale, Loc at) { \
    ApiScope s(at);                                                                           \
    P p = scipy_promote(op, {x, df, loc, scale});                                             \
    const Array &xv = p.v[0], &dv = p.v[1], &lv = p.v[2], &sv = p.v[3];                       \
    return scipy_finish(p, expr);                                                             \
  }
JITX_STATS_CHI2(logpdf, "chi2.logpdf", logpdf_impl(xv, dv, lv, sv))
JITX_STATS_CHI2(pdf, "chi2.pdf", lax::exp(logpdf_impl(xv, dv, lv, sv)))
JITX_STATS_CHI2(cdf, "chi2.cdf", cdf_impl(xv, dv, lv, sv))
JITX_STATS_CHI2(logcdf, "chi2.logcdf", lax::log(cdf_impl(xv, dv, lv, sv)))
JITX_STATS_CHI2(sf, "chi2.sf", sf_impl(xv, dv, lv, sv))
JITX_STATS_CHI2(logsf, "chi2.logsf", lax::log(sf_impl(xv, dv, lv, sv)))
#undef JITX_STATS_CHI2
}  // namespace chi2

// --- poisson ---
namespace poisson {
namespace {
Array logpmf_impl(const Array& k, const Array& mu, const Array& loc) {
  Array x = lax::sub(k, loc);
  Array lp = lax::sub(lax::sub(sp::xlogy(x, mu), lax::lgamma(lax::add(x, kc(1, x)))), mu);
  return neg_inf_where(lax::bitwise_or(lax::lt(x, kc(0, x)), lax::ne(jnp::round(k), k)), lp);
}
}  // namespace
Array logpmf(const Array& k, const Array& mu, const Array& loc, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("poisson.logpmf", {k, mu, loc});
  return scipy_finish(p, logpmf_impl(p.v[0], p.v[1], p.v[2]));
}
Array pmf(const Array& k, const Array& mu, const Array& loc, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("poisson.pmf", {k, mu, loc});
  return scipy_finish(p, lax::exp(logpmf_impl(p.v[0], p.v[1], p.v[2])));
}
Array cdf(const Array& k, const Array& mu, const Array& loc, Loc at) {
  ApiScope s(at);
  P p = scipy_promote("poisson.cdf", {k, mu, loc});
  Array x = lax::sub(p.v[0], p.v[2]);
  Array c = sp::gammaincc(lax::floor(lax::add(kc(1, x), x)), p.v[1]);
  return scipy_finish(p, lax::select(lax::lt(x, kc(0, x)), jnp::zeros_like(c), c));
}
}  // namespace poisson

// --- bernoulli ---
namespace bernoulli {
namespace {
Array logpmf_impl(const Array& k, const Array& p, const Array& loc) {
  Array one = kc(1, k);
  Array x = lax::sub(k, loc);
  Array lp = lax::add(sp::xlogy(x, p), sp::xlog1py(lax::sub(one, x), lax::neg(p)));
  return neg_inf_where(lax::bitwise_or(lax::lt(x, kc(0, x)), lax::gt(x, one)), lp);
}
Array bad_p(const Array& p) {
  return lax::bitwise_or(lax::ne(p, p), lax::bitwise_or(lax::lt(p, kc(0, p)), lax::gt(p, kc(1, p))));
}
}  // namespace
Array logpmf(const Array& k, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("bernoulli.logpmf", {k, p, loc});
  return scipy_finish(pr, logpmf_impl(pr.v[0], pr.v[1], pr.v[2]));
}
Array pmf(const Array& k, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("bernoulli.pmf", {k, p, loc});
  return scipy_finish(pr, lax::exp(logpmf_impl(pr.v[0], pr.v[1], pr.v[2])));
}
Array cdf(const Array& k, const Array& p, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("bernoulli.cdf", {k, p});
  const Array &kv = pr.v[0], &pv = pr.v[1];
  Array zero = kc(0, kv), one = kc(1, kv);
  // jnp.select in JAX's order: invalid -> NaN, k < 0 -> 0, 0 <= k < 1 -> 1 - p, k >= 1 -> 1.
  Array r = lax::select(lax::ge(kv, one), jnp::ones_like(kv), jnp::zeros_like(kv));
  r = lax::select(lax::bitwise_and(lax::ge(kv, zero), lax::lt(kv, one)), lax::sub(one, pv), r);
  r = lax::select(lax::lt(kv, zero), jnp::zeros_like(kv), r);
  return scipy_finish(pr, nan_where(lax::bitwise_or(lax::ne(kv, kv), bad_p(pv)), r));
}
Array ppf(const Array& q, const Array& p, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("bernoulli.ppf", {q, p});
  const Array &qv = pr.v[0], &pv = pr.v[1];
  Array one = kc(1, qv);
  Array bad = lax::bitwise_or(lax::bitwise_or(lax::ne(qv, qv), bad_p(pv)),
                              lax::bitwise_or(lax::lt(qv, kc(0, qv)), lax::gt(qv, one)));
  Array r = lax::select(lax::le(qv, lax::sub(one, pv)), jnp::zeros_like(qv), jnp::ones_like(qv));
  return scipy_finish(pr, nan_where(bad, r));
}
}  // namespace bernoulli

// --- binom ---
namespace binom {
namespace {
Array logpmf_impl(const Array& k, const Array& n, const Array& p, const Array& loc) {
  Array y = lax::sub(k, loc);
  Array one = kc(1, y), zero = kc(0, y);
  Array comb = lax::sub(lax::lgamma(lax::add(n, one)),
                        lax::add(lax::lgamma(lax::add(y, one)), lax::lgamma(lax::add(lax::sub(n, y), one))));
  Array linear = lax::add(sp::xlogy(y, p), sp::xlog1py(lax::sub(n, y), lax::neg(p)));
  Array lp = lax::add(comb, linear);
  Array certain = lax::bitwise_or(lax::bitwise_and(lax::eq(y, zero), lax::eq(n, zero)), lax::eq(linear, zero));
  lp = lax::select(certain, jnp::zeros_like(lp), lp);
  Array inside = lax::bitwise_and(lax::ge(k, loc), lax::lt(k, lax::add(lax::add(loc, n), one)));
  return neg_inf_where(lax::bitwise_not(inside), lp);
}
}  // namespace
Array logpmf(const Array& k, const Array& n, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("binom.logpmf", {k, n, p, loc});
  return scipy_finish(pr, logpmf_impl(pr.v[0], pr.v[1], pr.v[2], pr.v[3]));
}
Array pmf(const Array& k, const Array& n, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("binom.pmf", {k, n, p, loc});
  return scipy_finish(pr, lax::exp(logpmf_impl(pr.v[0], pr.v[1], pr.v[2], pr.v[3])));
}
}  // namespace binom

// --- geom ---
namespace geom {
namespace {
Array logpmf_impl(const Array& k, const Array& p, const Array& loc) {
  Array x = lax::sub(k, loc);
  Array lp = lax::add(sp::xlog1py(lax::sub(x, kc(1, x)), lax::neg(p)), lax::log(p));
  return neg_inf_where(lax::le(x, kc(0, x)), lp);
}
}  // namespace
Array logpmf(const Array& k, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("geom.logpmf", {k, p, loc});
  return scipy_finish(pr, logpmf_impl(pr.v[0], pr.v[1], pr.v[2]));
}
Array pmf(const Array& k, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  P pr = scipy_promote("geom.pmf", {k, p, loc});
  return scipy_finish(pr, lax::exp(logpmf_impl(pr.v[0], pr.v[1], pr.v[2])));
}
}  // namespace geom

// --- multivariate_normal ---
namespace multivariate_normal {
namespace {
Array logpdf_impl(const Array& x_in, const Array& mean_in, const Array& cov_in, std::string_view op) {
  for (const Array* a : {&x_in, &mean_in, &cov_in})
    if (!a->valid()) detail::throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  // promote_dtypes_inexact: one dtype, no broadcasting (the shapes carry the structure).
  DType d = jnp::stats_util::stats_inexact_of(jnp::result_type({x_in, mean_in, cov_in}));
  Array x = lax::convert_element_type(x_in, d), mean = lax::convert_element_type(mean_in, d);
  Array cov = lax::convert_element_type(cov_in, d);
  const double log2pi = std::log(2 * std::numbers::pi);
  if (mean.ndim() == 0) {  // univariate
    Array dx = jnp::subtract(x, mean);
    return jnp::subtract(jnp::divide(jnp::multiply(Array(-0.5), jnp::multiply(dx, dx)), cov),
                         jnp::multiply(Array(0.5), jnp::add(Array(log2pi), jnp::log(cov))));
  }
  int64_t n = mean.shape().back();
  Array dx = jnp::subtract(x, mean);
  if (dx.ndim() == 0 || dx.shape().back() != n)
    detail::throw_error<ShapeError>(op, "x's last axis must be mean's size {}, got x of shape {}", n,
                                    detail::shape_str(x.shape()));
  Shape batch(dx.shape().begin(), dx.shape().end() - 1);
  if (cov.ndim() == 0) {  // isotropic
    Array q = jnp::sum(jnp::multiply(dx, dx), {-1});
    return jnp::subtract(jnp::divide(jnp::multiply(Array(-0.5), q), cov),
                         jnp::multiply(Array(0.5 * double(n)), jnp::add(Array(log2pi), jnp::log(cov))));
  }
  if (cov.ndim() < 2 || cov.shape()[size_t(cov.ndim() - 1)] != n || cov.shape()[size_t(cov.ndim() - 2)] != n)
    detail::throw_error<ShapeError>(op, "got incompatible shapes: mean {} needs cov of shape (..., {}, {}), got {}",
                                    detail::shape_str(mean.shape()), n, n, detail::shape_str(cov.shape()));
  Shape cov_batch(cov.shape().begin(), cov.shape().end() - 2);
  Shape b = jnp::broadcast_shapes({batch, cov_batch}, op);
  Shape bn = b, bnn = b, bn1 = b;
  bn.push_back(n);
  bnn.insert(bnn.end(), {n, n});
  bn1.insert(bn1.end(), {n, 1});
  Array L = lax::linalg::cholesky(cov);
  // y = L^-1 (x - mean): |y|^2 is the Mahalanobis form; log det cov = 2 sum log diag L.
  Array y = lax::linalg::triangular_solve(jnp::broadcast_to(L, bnn), jnp::reshape(jnp::broadcast_to(dx, bn), bn1), true,
                                          true);
  Array q = jnp::sum(jnp::multiply(y, y), {-2, -1});
  Array logdet = jnp::sum(jnp::log(jnp::diagonal(L, 0, -2, -1)), {-1});
  return jnp::subtract(jnp::subtract(jnp::multiply(Array(-0.5), q), Array(0.5 * double(n) * log2pi)),
                       jnp::broadcast_to(logdet, b));
}
}  // namespace
Array logpdf(const Array& x, const Array& mean, const Array& cov, Loc at) {
  ApiScope s(at);
  return logpdf_impl(x, mean, cov, "multivariate_normal.logpdf");
}
Array pdf(const Array& x, const Array& mean, const Array& cov, Loc at) {
  ApiScope s(at);
  return jnp::exp(logpdf_impl(x, mean, cov, "multivariate_normal.pdf"));
}
}  // namespace multivariate_normal

}  // namespace jitx::scipy::stats
