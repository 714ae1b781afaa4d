// jitx::scipy::stats, the rest (jitx/scipy_stats.h): pareto, gumbel_r, gumbel_l, gennorm, vonmises, nbinom, betabinom,
// dirichlet and multinomial, each composed as JAX composes it.
#include <cmath>
#include <numbers>

#include "api/scipy_util.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_special.h"
#include "jitx/nn.h"
#include "jitx/numpy.h"
#include "jitx/scipy_special.h"
#include "jitx/scipy_stats.h"

namespace jitx::scipy::stats {
using detail::ApiScope;
using scipy_util::scipy_finish;
using scipy_util::scipy_promote;
namespace sp = jitx::scipy::special;

namespace {
using SP = scipy_util::ScipyPromoted;
Array kcm(double v, const Array& like) { return scipy_util::scipy_cst(v, like.dtype()); }
Array where_inf(const Array& cond, const Array& v) { return lax::select(cond, jnp::full_like(v, -INFINITY), v); }
Array where_nan(const Array& cond, const Array& v) { return lax::select(cond, jnp::full_like(v, NAN), v); }
/// scale <= 0 (or NaN): the Gumbel functions' NaN case.
Array invalid_scale(const Array& scale) { return lax::bitwise_not(lax::gt(scale, kcm(0, scale))); }
/// q outside [0, 1] or NaN.
Array bad_q(const Array& q) {
  return lax::bitwise_or(lax::ne(q, q), lax::bitwise_or(lax::lt(q, kcm(0, q)), lax::gt(q, kcm(1, q))));
}
}  // namespace

// --- pareto ---
namespace pareto {
namespace {
/// (x - loc) / scale and whether x is below the support (x < loc + scale).
std::pair<Array, Array> scaled(const Array& x, const Array& loc, const Array& scale) {
  return {lax::div(lax::sub(x, loc), scale), lax::lt(x, lax::add(loc, scale))};
}
Array logpdf_impl(const Array& x, const Array& b, const Array& loc, const Array& scale) {
  auto [z, below] = scaled(x, loc, scale);
  Array lp = lax::neg(lax::add(lax::log(lax::div(scale, b)), lax::mul(lax::add(b, kcm(1, b)), lax::log(z))));
  return where_inf(below, lp);
}
Array logsf_impl(const Array& x, const Array& b, const Array& loc, const Array& scale) {
  auto [z, below] = scaled(x, loc, scale);
  Array v = lax::neg(lax::mul(b, lax::log(z)));
  return lax::select(below, jnp::zeros_like(v), v);
}
}  // namespace
#define JITX_PARETO(name, op, expr)                                                          \
  Array name(const Array& x, const Array& b, const Array& loc, const Array& scale, Loc at) { \
    ApiScope s(at);                                                                          \
    SP p = scipy_promote(op, {x, b, loc, scale});                                            \
    const Array &xv = p.v[0], &bv = p.v[1], &lv = p.v[2], &sv = p.v[3];                      \
    return scipy_finish(p, expr);                                                            \
  }
JITX_PARETO(logpdf, "pareto.logpdf", logpdf_impl(xv, bv, lv, sv))
JITX_PARETO(pdf, "pareto.pdf", lax::exp(logpdf_impl(xv, bv, lv, sv)))
JITX_PARETO(cdf, "pareto.cdf", ([&] {
              auto [z, below] = scaled(xv, lv, sv);
              Array c = lax::sub(kcm(1, z), lax::pow(z, lax::neg(bv)));
              return lax::select(below, jnp::zeros_like(c), c);
            }()))
JITX_PARETO(logcdf, "pareto.logcdf", ([&] {
              auto [z, below] = scaled(xv, lv, sv);
              return where_inf(below, lax::log1p(lax::neg(lax::pow(z, lax::neg(bv)))));
            }()))
JITX_PARETO(sf, "pareto.sf", lax::exp(logsf_impl(xv, bv, lv, sv)))
JITX_PARETO(logsf, "pareto.logsf", logsf_impl(xv, bv, lv, sv))
JITX_PARETO(ppf, "pareto.ppf",
            where_nan(bad_q(xv), lax::add(lv, lax::mul(sv, lax::pow(lax::sub(kcm(1, xv), xv),
                                                                    lax::neg(lax::div(kcm(1, bv), bv)))))))
#undef JITX_PARETO
}  // namespace pareto

// --- gumbel_r ---
namespace gumbel_r {
namespace {
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array z = lax::div(lax::sub(x, loc), scale);
  Array lp = lax::add(sp::xlogy(kcm(-1, scale), scale), lax::neg(lax::add(z, lax::exp(lax::neg(z)))));
  return where_nan(invalid_scale(scale), lp);
}
Array logcdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array z = lax::div(lax::sub(x, loc), scale);
  return where_nan(invalid_scale(scale), lax::neg(lax::exp(lax::neg(z))));
}
}  // namespace
#define JITX_GUMBEL(name, op, expr)                                          \
  Array name(const Array& x, const Array& loc, const Array& scale, Loc at) { \
    ApiScope s(at);                                                          \
    SP p = scipy_promote(op, {x, loc, scale});                               \
    const Array &xv = p.v[0], &lv = p.v[1], &sv = p.v[2];                    \
    return scipy_finish(p, expr);                                            \
  }
JITX_GUMBEL(logpdf, "gumbel_r.logpdf", logpdf_impl(xv, lv, sv))
JITX_GUMBEL(pdf, "gumbel_r.pdf", lax::exp(logpdf_impl(xv, lv, sv)))
JITX_GUMBEL(logcdf, "gumbel_r.logcdf", logcdf_impl(xv, lv, sv))
JITX_GUMBEL(cdf, "gumbel_r.cdf", lax::exp(logcdf_impl(xv, lv, sv)))
JITX_GUMBEL(sf, "gumbel_r.sf",
            where_nan(invalid_scale(sv),
                      lax::sub(kcm(1, xv), lax::exp(lax::neg(lax::exp(lax::div(lax::sub(lv, xv), sv)))))))
JITX_GUMBEL(logsf, "gumbel_r.logsf",
            where_nan(invalid_scale(sv), nn::log1mexp(lax::exp(lax::div(lax::sub(lv, xv), sv)))))
JITX_GUMBEL(ppf, "gumbel_r.ppf", ([&] {
              Array ok = lax::bitwise_and(lax::gt(xv, kcm(0, xv)), lax::lt(xv, kcm(1, xv)));
              Array q = lax::sub(lv, lax::mul(sv, lax::log(sp::xlogy(kcm(-1, xv), xv))));
              return where_nan(lax::bitwise_not(ok), q);
            }()))
#undef JITX_GUMBEL
}  // namespace gumbel_r

// --- gumbel_l ---
namespace gumbel_l {
namespace {
Array z_of(const Array& x, const Array& loc, const Array& scale) { return lax::div(lax::sub(x, loc), scale); }
Array logpdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array z = z_of(x, loc, scale);
  return where_nan(invalid_scale(scale), lax::add(sp::xlogy(kcm(-1, scale), scale), lax::sub(z, lax::exp(z))));
}
Array logcdf_impl(const Array& x, const Array& loc, const Array& scale) {
  Array e = lax::neg(lax::exp(z_of(x, loc, scale)));
  return where_nan(invalid_scale(scale), lax::log(lax::neg(lax::expm1(e))));
}
Array logsf_impl(const Array& x, const Array& loc, const Array& scale) {
  return where_nan(invalid_scale(scale), lax::neg(lax::exp(z_of(x, loc, scale))));
}
}  // namespace
#define JITX_GUMBEL_L(name, op, expr)                                        \
  Array name(const Array& x, const Array& loc, const Array& scale, Loc at) { \
    ApiScope s(at);                                                          \
    SP p = scipy_promote(op, {x, loc, scale});                               \
    const Array &xv = p.v[0], &lv = p.v[1], &sv = p.v[2];                    \
    return scipy_finish(p, expr);                                            \
  }
JITX_GUMBEL_L(logpdf, "gumbel_l.logpdf", logpdf_impl(xv, lv, sv))
JITX_GUMBEL_L(pdf, "gumbel_l.pdf", lax::exp(logpdf_impl(xv, lv, sv)))
JITX_GUMBEL_L(logcdf, "gumbel_l.logcdf", logcdf_impl(xv, lv, sv))
JITX_GUMBEL_L(cdf, "gumbel_l.cdf", lax::exp(logcdf_impl(xv, lv, sv)))
JITX_GUMBEL_L(logsf, "gumbel_l.logsf", logsf_impl(xv, lv, sv))
JITX_GUMBEL_L(sf, "gumbel_l.sf", lax::exp(logsf_impl(xv, lv, sv)))
JITX_GUMBEL_L(ppf, "gumbel_l.ppf", ([&] {
                Array ok = lax::bitwise_and(lax::gt(xv, kcm(0, xv)), lax::lt(xv, kcm(1, xv)));
                Array q = lax::add(lv, lax::mul(sv, lax::log(sp::xlog1py(kcm(-1, xv), lax::neg(xv)))));
                return where_nan(lax::bitwise_not(ok), q);
              }()))
#undef JITX_GUMBEL_L
}  // namespace gumbel_l

// --- gennorm ---
namespace gennorm {
namespace {
Array logpdf_impl(const Array& x, const Array& beta) {
  return lax::sub(lax::sub(lax::log(lax::mul(kcm(0.5, beta), beta)), lax::lgamma(lax::div(kcm(1, beta), beta))),
                  lax::pow(lax::abs(x), beta));
}
}  // namespace
Array logpdf(const Array& x, const Array& beta, Loc at) {
  ApiScope s(at);
  SP p = scipy_promote("gennorm.logpdf", {x, beta});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1]));
}
Array pdf(const Array& x, const Array& beta, Loc at) {
  ApiScope s(at);
  SP p = scipy_promote("gennorm.pdf", {x, beta});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1])));
}
Array cdf(const Array& x, const Array& beta, Loc at) {
  ApiScope s(at);
  SP p = scipy_promote("gennorm.cdf", {x, beta});
  const Array &xv = p.v[0], &bv = p.v[1];
  Array g = lax::igamma(lax::div(kcm(1, bv), bv), lax::pow(lax::abs(xv), bv));
  return scipy_finish(p, lax::mul(kcm(0.5, xv), lax::add(kcm(1, xv), lax::mul(lax::sign(xv), g))));
}
}  // namespace gennorm

// --- vonmises ---
namespace vonmises {
namespace {
Array logpdf_impl(const Array& x, const Array& kappa) {
  Array lp = lax::sub(lax::mul(kappa, lax::sub(lax::cos(x), kcm(1, x))),
                      lax::log(lax::mul(kcm(2 * std::numbers::pi, kappa), lax::bessel_i0e(kappa))));
  return where_nan(lax::bitwise_not(lax::gt(kappa, kcm(0, kappa))), lp);
}
}  // namespace
Array logpdf(const Array& x, const Array& kappa, Loc at) {
  ApiScope s(at);
  SP p = scipy_promote("vonmises.logpdf", {x, kappa});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1]));
}
Array pdf(const Array& x, const Array& kappa, Loc at) {
  ApiScope s(at);
  SP p = scipy_promote("vonmises.pdf", {x, kappa});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1])));
}
}  // namespace vonmises

// --- nbinom ---
namespace nbinom {
namespace {
Array logpmf_impl(const Array& k, const Array& n, const Array& p, const Array& loc) {
  Array one = kcm(1, k);
  Array y = lax::sub(k, loc);
  Array comb = lax::sub(lax::sub(lax::lgamma(lax::add(y, n)), lax::lgamma(n)), lax::lgamma(lax::add(y, one)));
  Array linear = lax::add(sp::xlogy(n, p), sp::xlogy(y, lax::sub(one, p)));
  return where_inf(lax::lt(k, loc), lax::add(comb, linear));
}
}  // namespace
Array logpmf(const Array& k, const Array& n, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  SP pr = scipy_promote("nbinom.logpmf", {k, n, p, loc});
  return scipy_finish(pr, logpmf_impl(pr.v[0], pr.v[1], pr.v[2], pr.v[3]));
}
Array pmf(const Array& k, const Array& n, const Array& p, const Array& loc, Loc at) {
  ApiScope s(at);
  SP pr = scipy_promote("nbinom.pmf", {k, n, p, loc});
  return scipy_finish(pr, lax::exp(logpmf_impl(pr.v[0], pr.v[1], pr.v[2], pr.v[3])));
}
}  // namespace nbinom

// --- betabinom ---
namespace betabinom {
namespace {
Array logpmf_impl(const Array& k, const Array& n, const Array& a, const Array& b, const Array& loc) {
  Array y = lax::sub(lax::floor(k), loc);
  Array one = kcm(1, y), zero = kcm(0, y);
  Array combiln = lax::neg(lax::add(lax::log1p(n), sp::betaln(lax::add(lax::sub(n, y), one), lax::add(y, one))));
  Array beta_lns = lax::sub(sp::betaln(lax::add(y, a), lax::add(lax::sub(n, y), b)), sp::betaln(a, b));
  Array lp = lax::add(combiln, beta_lns);
  lp = lax::select(lax::bitwise_and(lax::eq(y, zero), lax::eq(n, zero)), jnp::zeros_like(lp), lp);
  Array y_bad =
      lax::bitwise_or(lax::bitwise_or(lax::lt(y, lax::neg(loc)), lax::gt(y, n)), lax::le(lax::add(y, a), zero));
  lp = where_inf(y_bad, lp);
  Array bad = lax::bitwise_or(lax::bitwise_or(lax::lt(n, zero), lax::le(a, zero)), lax::le(b, zero));
  return where_nan(bad, lp);
}
}  // namespace
Array logpmf(const Array& k, const Array& n, const Array& a, const Array& b, const Array& loc, Loc at) {
  ApiScope s(at);
  SP pr = scipy_promote("betabinom.logpmf", {k, n, a, b, loc});
  return scipy_finish(pr, logpmf_impl(pr.v[0], pr.v[1], pr.v[2], pr.v[3], pr.v[4]));
}
Array pmf(const Array& k, const Array& n, const Array& a, const Array& b, const Array& loc, Loc at) {
  ApiScope s(at);
  SP pr = scipy_promote("betabinom.pmf", {k, n, a, b, loc});
  return scipy_finish(pr, lax::exp(logpmf_impl(pr.v[0], pr.v[1], pr.v[2], pr.v[3], pr.v[4])));
}
}  // namespace betabinom

// --- dirichlet ---
namespace dirichlet {
namespace {
Array logpdf_impl(const Array& x_in, const Array& alpha_in, std::string_view op) {
  if (!x_in.valid() || !alpha_in.valid())
    detail::throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  DType d = jnp::stats_util::stats_inexact_of(jnp::result_type({x_in, alpha_in}));
  Array x = lax::convert_element_type(x_in, d), alpha = lax::convert_element_type(alpha_in, d);
  if (alpha.ndim() != 1)
    detail::throw_error<ShapeError>(op, "alpha must be one-dimensional; got alpha.shape={}",
                                    detail::shape_str(alpha.shape()));
  int64_t K = alpha.shape()[0];
  if (x.ndim() == 0 || (x.shape()[0] != K && x.shape()[0] != K - 1))
    detail::throw_error<ShapeError>(op,
                                    "x must have either the same number of entries as alpha or one entry fewer; got "
                                    "x.shape={}, alpha.shape={}",
                                    detail::shape_str(x.shape()), detail::shape_str(alpha.shape()));
  Array one = scipy_util::scipy_cst(1, d);
  if (x.shape()[0] != K) x = jnp::concatenate({x, jnp::subtract(one, jnp::sum(x, {0}, true))}, 0);
  Array normalize = jnp::subtract(jnp::sum(lax::lgamma(alpha)), lax::lgamma(jnp::sum(alpha)));
  Shape as{K};
  for (int64_t i = 1; i < x.ndim(); ++i) as.push_back(1);
  Array a = jnp::reshape(alpha, as);
  Array lp = jnp::subtract(jnp::sum(sp::xlogy(jnp::subtract(a, one), x), {0}), normalize);
  Array simplex = jnp::logical_and(jnp::all(jnp::greater(x, Array::scalar(0, d)), {0}),
                                   jnp::less(jnp::abs(jnp::subtract(jnp::sum(x, {0}), one)), Array(1e-6)));
  return jnp::where(simplex, lp, jnp::full_like(lp, -INFINITY));
}
}  // namespace
Array logpdf(const Array& x, const Array& alpha, Loc at) {
  ApiScope s(at);
  return logpdf_impl(x, alpha, "dirichlet.logpdf");
}
Array pdf(const Array& x, const Array& alpha, Loc at) {
  ApiScope s(at);
  return lax::exp(logpdf_impl(x, alpha, "dirichlet.pdf"));
}
}  // namespace dirichlet

// --- multinomial ---
namespace multinomial {
namespace {
Array logpmf_impl(const Array& x_in, const Array& n_in, const Array& p_in, std::string_view op) {
  if (!x_in.valid() || !n_in.valid() || !p_in.valid())
    detail::throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (!is_integer(x_in.dtype()) || !(is_integer(n_in.dtype()) || n_in.dtype() == DType::bool_))
    detail::throw_error<TypeError>(op, "x and n must be of integer type; got x.dtype={}, n.dtype={}",
                                   dtype_name(x_in.dtype()), dtype_name(n_in.dtype()));
  Array p = jnp::stats_util::stats_inexact(p_in);
  DType d = p.dtype();
  Array x = lax::convert_element_type(x_in, d), n = lax::convert_element_type(n_in, d);
  Array one = scipy_util::scipy_cst(1, d);
  Array lp = jnp::add(lax::lgamma(jnp::add(n, one)),
                      jnp::sum(jnp::subtract(sp::xlogy(x, p), lax::lgamma(jnp::add(x, one))), {-1}));
  // As JAX: the counts of all of x (not per row) must add up to n.
  return jnp::where(jnp::equal(jnp::sum(x), n), lp, jnp::full_like(lp, -INFINITY));
}
}  // namespace
Array logpmf(const Array& x, const Array& n, const Array& p, Loc at) {
  ApiScope s(at);
  return logpmf_impl(x, n, p, "multinomial.logpmf");
}
Array pmf(const Array& x, const Array& n, const Array& p, Loc at) {
  ApiScope s(at);
  return lax::exp(logpmf_impl(x, n, p, "multinomial.pmf"));
}
}  // namespace multinomial

}  // namespace jitx::scipy::stats
