// The api walk's table: jax.scipy.stats (scipy_stats.h), see api_walk_table.h.
#pragma once
#include "jitx/scipy_stats.h"

namespace {

/// A distribution function of n array arguments (x or q first, then the parameters): equal shapes, scalar
/// parameters, shapes that do not broadcast, integer data (promoted, or refused by name), an empty Array.
void stats_fn(Walk& w, int n, std::function<Array(A)> f) {
  auto all = [n](Array first, Array rest) {
    std::vector<Array> v{first};
    for (int i = 1; i < n; ++i) v.push_back(rest);
    return v;
  };
  w.ok("f32[2,3] everywhere", all(pos23(), pos23()), f, {2, 3});
  w.ok("f32[2,3] with f32[] parameters", all(pos23(), s0()), f, {2, 3});
  w.ok("f32[0,3] with f32[] parameters", all(z03(), s0()), f, {0, 3});
  if (n > 1) w.err("f32[2,3] with f32[4] parameters", all(pos23(), f4()), f);
  w.either("i32[2,3]", all(i23(), s0()), f);
  w.invalid([f, all](A a) { return f(all(Array(), a[0])); });
}

using namespace jitx::scipy::stats;
#define JITX_ST(dist, fn, n, call)                                                                      \
  {                                                                                                     \
    "scipy::stats::" #dist "::" #fn, [](Walk& w) { stats_fn(w, n, [](A a) { return dist::fn call; }); } \
  }
#define JITX_ST_LS(dist, fn) JITX_ST(dist, fn, 3, (a[0], a[1], a[2]))
#define JITX_ST_S(dist, fn) JITX_ST(dist, fn, 4, (a[0], a[1], a[2], a[3]))
#define JITX_ST_D(dist, fn) JITX_ST(dist, fn, 3, (a[0], a[1], a[2]))

const std::vector<Case> kStats = {
    JITX_ST_LS(norm, logpdf),
    JITX_ST_LS(norm, pdf),
    JITX_ST_LS(norm, cdf),
    JITX_ST_LS(norm, logcdf),
    JITX_ST_LS(norm, sf),
    JITX_ST_LS(norm, logsf),
    JITX_ST_LS(norm, ppf),
    JITX_ST_LS(norm, isf),
    JITX_ST_LS(expon, logpdf),
    JITX_ST_LS(expon, pdf),
    JITX_ST_LS(expon, cdf),
    JITX_ST_LS(expon, logcdf),
    JITX_ST_LS(expon, sf),
    JITX_ST_LS(expon, logsf),
    JITX_ST_LS(expon, ppf),
    JITX_ST_LS(laplace, logpdf),
    JITX_ST_LS(laplace, pdf),
    JITX_ST_LS(laplace, cdf),
    JITX_ST_LS(logistic, logpdf),
    JITX_ST_LS(logistic, pdf),
    JITX_ST_LS(logistic, cdf),
    JITX_ST_LS(logistic, sf),
    JITX_ST_LS(logistic, ppf),
    JITX_ST_LS(logistic, isf),
    JITX_ST_LS(cauchy, logpdf),
    JITX_ST_LS(cauchy, pdf),
    JITX_ST_LS(cauchy, cdf),
    JITX_ST_LS(cauchy, logcdf),
    JITX_ST_LS(cauchy, sf),
    JITX_ST_LS(cauchy, logsf),
    JITX_ST_LS(cauchy, ppf),
    JITX_ST_LS(cauchy, isf),
    JITX_ST_LS(uniform, logpdf),
    JITX_ST_LS(uniform, pdf),
    JITX_ST_LS(uniform, cdf),
    JITX_ST_LS(uniform, ppf),
    JITX_ST_S(gamma, logpdf),
    JITX_ST_S(gamma, pdf),
    JITX_ST_S(gamma, cdf),
    JITX_ST_S(gamma, logcdf),
    JITX_ST_S(gamma, sf),
    JITX_ST_S(gamma, logsf),
    JITX_ST_S(t, logpdf),
    JITX_ST_S(t, pdf),
    JITX_ST_S(chi2, logpdf),
    JITX_ST_S(chi2, pdf),
    JITX_ST_S(chi2, cdf),
    JITX_ST_S(chi2, logcdf),
    JITX_ST_S(chi2, sf),
    JITX_ST_S(chi2, logsf),
    JITX_ST_D(poisson, logpmf),
    JITX_ST_D(poisson, pmf),
    JITX_ST_D(poisson, cdf),
    JITX_ST_D(bernoulli, logpmf),
    JITX_ST_D(bernoulli, pmf),
    JITX_ST(bernoulli, cdf, 2, (a[0], a[1])),
    JITX_ST(bernoulli, ppf, 2, (a[0], a[1])),
    JITX_ST_D(geom, logpmf),
    JITX_ST_D(geom, pmf),
    JITX_ST(binom, logpmf, 4, (a[0], a[1], a[2], a[3])),
    JITX_ST(binom, pmf, 4, (a[0], a[1], a[2], a[3])),
    JITX_ST(beta, logpdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(beta, pdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(beta, cdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(beta, logcdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(beta, sf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(beta, logsf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST_S(pareto, logpdf),     JITX_ST_S(pareto, pdf),        JITX_ST_S(pareto, cdf),
    JITX_ST_S(pareto, logcdf),     JITX_ST_S(pareto, sf),         JITX_ST_S(pareto, logsf),
    JITX_ST_S(pareto, ppf),        JITX_ST_LS(gumbel_r, logpdf),  JITX_ST_LS(gumbel_r, pdf),
    JITX_ST_LS(gumbel_r, cdf),     JITX_ST_LS(gumbel_r, logcdf),  JITX_ST_LS(gumbel_r, sf),
    JITX_ST_LS(gumbel_r, logsf),   JITX_ST_LS(gumbel_r, ppf),
    JITX_ST_LS(gumbel_l, logpdf),  JITX_ST_LS(gumbel_l, pdf),     JITX_ST_LS(gumbel_l, cdf),
    JITX_ST_LS(gumbel_l, logcdf),  JITX_ST_LS(gumbel_l, sf),      JITX_ST_LS(gumbel_l, logsf),
    JITX_ST_LS(gumbel_l, ppf),
    JITX_ST(gennorm, logpdf, 2, (a[0], a[1])), JITX_ST(gennorm, pdf, 2, (a[0], a[1])),
    JITX_ST(gennorm, cdf, 2, (a[0], a[1])),    JITX_ST(vonmises, logpdf, 2, (a[0], a[1])),
    JITX_ST(vonmises, pdf, 2, (a[0], a[1])),
    JITX_ST(nbinom, logpmf, 4, (a[0], a[1], a[2], a[3])), JITX_ST(nbinom, pmf, 4, (a[0], a[1], a[2], a[3])),
    JITX_ST(betabinom, logpmf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(betabinom, pmf, 5, (a[0], a[1], a[2], a[3], a[4])),
    {"scipy::stats::dirichlet::logpdf",
     [](Walk& w) {
       auto f = [](A a) { return dirichlet::logpdf(a[0], a[1]); };
       w.ok("x (3,2), alpha (3,)", {jnp::transpose(f23()), jnp::ones({3})}, f, {2});
       w.ok("x (2,), alpha (3,)", {jnp::full({2}, 0.3), jnp::ones({3})}, f, {});
       w.err("alpha (2,3)", {jnp::ones({3}), f23()}, f);
       w.err("x (5,), alpha (3,)", {jnp::ones({5}), jnp::ones({3})}, f);
       w.invalid([](A a) { return dirichlet::logpdf(a[0], jnp::ones({3})); });
     }},
    {"scipy::stats::dirichlet::pdf",
     [](Walk& w) {
       w.ok("x (3,), alpha (3,)", {jnp::full({3}, 1.0 / 3)},
            [](A a) { return dirichlet::pdf(a[0], jnp::ones({3})); }, {});
       w.err("x (0,)", {jnp::zeros({0})}, [](A a) { return dirichlet::pdf(a[0], jnp::ones({3})); });
       w.invalid([](A a) { return dirichlet::pdf(a[0], jnp::ones({3})); });
     }},
    {"scipy::stats::multinomial::logpmf",
     [](Walk& w) {
       auto f = [](A a) { return multinomial::logpmf(a[0], a[1], a[2]); };
       w.ok("x (2,3) int, n, p (3,)", {i23(), Array(6), jnp::full({3}, 1.0 / 3)}, f, {2});
       w.err("float counts", {f23(), Array(6), jnp::full({3}, 1.0 / 3)}, f);
       w.err("p (4,)", {i23(), Array(6), f4()}, f);
       w.invalid([](A a) { return multinomial::logpmf(a[0], Array(6), jnp::ones({3})); });
     }},
    {"scipy::stats::multinomial::pmf",
     [](Walk& w) {
       w.ok("x (3,) int", {testing::make_int({1, 2, 3}, DType::int32)},
            [](A a) { return multinomial::pmf(a[0], Array(6), jnp::full({3}, 1.0 / 3)); }, {});
       w.invalid([](A a) { return multinomial::pmf(a[0], Array(6), jnp::ones({3})); });
     }},
    {"scipy::stats::multivariate_normal::logpdf",
     [](Walk& w) {
       auto f = [](A a) { return multivariate_normal::logpdf(a[0], a[1], a[2]); };
       Array eye3 = jnp::eye(3);
       w.ok("x (2,3), mean (3,), cov (3,3)", {f23(), f4().astype(DType::float32)},
            [eye3](A a) { return multivariate_normal::logpdf(a[0], jnp::zeros({3}), eye3); }, {2});
       w.ok("scalar cov", {f23()}, [](A a) { return multivariate_normal::logpdf(a[0], jnp::zeros({3}), Array(2.0f)); },
            {2});
       w.err("x (2,3), mean (4,)", {f23(), f4(), jnp::eye(4)}, f);
       w.err("cov (2,3)", {f23(), jnp::zeros({3}), f23()}, f);
       w.invalid([](A a) { return multivariate_normal::logpdf(a[0], jnp::zeros({3}), Array(1.0f)); });
     }},
    {"scipy::stats::multivariate_normal::pdf",
     [](Walk& w) {
       w.ok("x (2,3), mean (3,), cov (3,3)", {f23()},
            [](A a) { return multivariate_normal::pdf(a[0], jnp::zeros({3}), jnp::eye(3)); }, {2});
       w.err("cov (4,4)", {f23()}, [](A a) { return multivariate_normal::pdf(a[0], jnp::zeros({3}), jnp::eye(4)); });
       w.invalid([](A a) { return multivariate_normal::pdf(a[0], jnp::zeros({3}), jnp::eye(3)); });
     }},
    JITX_ST(truncnorm, logpdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(truncnorm, pdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(truncnorm, cdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(truncnorm, logcdf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(truncnorm, sf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(truncnorm, logsf, 5, (a[0], a[1], a[2], a[3], a[4])),
    JITX_ST(wrapcauchy, logpdf, 2, (a[0], a[1])),
    JITX_ST(wrapcauchy, pdf, 2, (a[0], a[1])),
    {"scipy::stats::mode",
     [](Walk& w) {
       w.ok("f32[2,3] axis 0", {f23()}, [](A a) { return mode(a[0]).mode; }, {3});
       w.ok("f32[2,3] axis 1 keepdims", {f23()}, [](A a) { return mode(a[0], 1, "propagate", true).count; }, {2, 1});
       w.ok("f32[2,3] flattened", {f23()}, [](A a) { return mode(a[0], std::nullopt).mode; }, {});
       w.ok("f32[0,3]", {z03()}, [](A a) { return mode(a[0]).mode; }, {3});
       w.err("axis 2", {f23()}, [](A a) { return mode(a[0], 2).mode; });
       w.err("nan_policy 'omit'", {f23()}, [](A a) { return mode(a[0], 0, "omit").mode; });
       w.err("nan_policy 'skip'", {f23()}, [](A a) { return mode(a[0], 0, "skip").mode; });
       w.invalid([](A a) { return mode(a[0]).mode; });
     }},
    {"scipy::stats::rankdata",
     [](Walk& w) {
       w.ok("f32[2,3]", {f23()}, [](A a) { return rankdata(a[0]); }, {6});
       w.ok("f32[2,3] axis 1, dense", {f23()}, [](A a) { return rankdata(a[0], "dense", 1); }, {2, 3});
       w.ok("f32[0,3] axis 0", {z03()}, [](A a) { return rankdata(a[0], "average", 0); }, {0, 3});
       w.err("method 'median'", {f23()}, [](A a) { return rankdata(a[0], "median"); });
       w.err("axis -3", {f23()}, [](A a) { return rankdata(a[0], "average", -3); });
       w.invalid([](A a) { return rankdata(a[0]); });
     }},
    {"scipy::stats::sem",
     [](Walk& w) {
       w.ok("f32[2,3]", {f23()}, [](A a) { return sem(a[0]); }, {3});
       w.ok("f32[2,3] omit, keepdims", {f23()}, [](A a) { return sem(a[0], 1, 1, "omit", true); }, {2, 1});
       w.err("axis 3", {f23()}, [](A a) { return sem(a[0], 3); });
       w.err("nan_policy 'raise'", {f23()}, [](A a) { return sem(a[0], 0, 1, "raise"); });
       w.invalid([](A a) { return sem(a[0]); });
     }},
};

#undef JITX_ST
#undef JITX_ST_LS
#undef JITX_ST_S
#undef JITX_ST_D

}  // namespace
