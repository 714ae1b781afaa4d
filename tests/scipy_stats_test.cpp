// jax.scipy.stats (jitx/scipy_stats.h) against JAX 0.10.2 (tests/stats_refs.h, from tools/gen_stats_refs.py): every
// function on points inside and outside its support, with default and non-default loc/scale, invalid parameters
// and quantiles outside [0, 1], in float64 and float32, eagerly and under jit, with the result dtype JAX gives
// (norm.ppf/isf: float64 always); gradients of log densities as jax.grad gives them. Tolerances: float64 1e-12
// relative (+1e-13 absolute), float32 2e-5 relative (+1e-6 absolute; the incomplete gamma/beta functions behind
// the cdfs differ from XLA's by up to 9e-6 relative). Then the densities against std:: closed forms and numerical
// integration on random parameters, and multivariate_normal against a double-precision Cholesky written here.
#include "jitx/scipy_stats.h"

#include <cmath>
#include <map>
#include <numbers>
#include <string>

#include "ref_check.h"
#include "stats_refs.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
namespace st = jitx::scipy::stats;

namespace {

using Args = const std::vector<Array>&;
using StatFn = std::function<Array(Args)>;

// loc/scale families: name(x) with the defaults, or name(x, loc, scale).
#define JITX_LS(dist, fn)                                                   \
  {#dist "." #fn, [](Args a) { return st::dist::fn(a[0], a[1], a[2]); }}, { \
#dist "." #fn "_std", [](Args a) { return st::dist::fn(a[0]); }         \
  }
#define JITX_LS_ONLY(dist, fn)                                           \
  {                                                                      \
#dist "." #fn, [](Args a) { return st::dist::fn(a[0], a[1], a[2]); } \
  }
#define JITX_SHAPE1(dist, fn)                                                                                  \
  {                                                                                                            \
#dist "." #fn,                                                                                             \
        [](Args a) { return a.size() == 2 ? st::dist::fn(a[0], a[1]) : st::dist::fn(a[0], a[1], a[2], a[3]); } \
  }
#define JITX_DISCRETE(dist, fn)                                                 \
  {#dist "." #fn, [](Args a) { return st::dist::fn(a[0], a[1]); }}, {           \
#dist "." #fn "_loc", [](Args a) { return st::dist::fn(a[0], a[1], a[2]); } \
  }

const std::map<std::string, StatFn>& stats_table() {
  static std::map<std::string, StatFn> t = {
      JITX_LS(norm, logpdf),
      JITX_LS(norm, pdf),
      JITX_LS(norm, cdf),
      JITX_LS(norm, logcdf),
      JITX_LS(norm, sf),
      JITX_LS(norm, logsf),
      JITX_LS_ONLY(norm, ppf),
      JITX_LS_ONLY(norm, isf),
      JITX_LS(expon, logpdf),
      JITX_LS(expon, pdf),
      JITX_LS(expon, cdf),
      JITX_LS(expon, logcdf),
      JITX_LS(expon, sf),
      JITX_LS(expon, logsf),
      JITX_LS_ONLY(expon, ppf),
      JITX_LS(laplace, logpdf),
      JITX_LS(laplace, pdf),
      JITX_LS(laplace, cdf),
      JITX_LS(logistic, logpdf),
      JITX_LS(logistic, pdf),
      JITX_LS(logistic, cdf),
      JITX_LS(logistic, sf),
      JITX_LS_ONLY(logistic, ppf),
      JITX_LS_ONLY(logistic, isf),
      JITX_LS(cauchy, logpdf),
      JITX_LS(cauchy, pdf),
      JITX_LS(cauchy, cdf),
      JITX_LS(cauchy, logcdf),
      JITX_LS(cauchy, sf),
      JITX_LS(cauchy, logsf),
      JITX_LS_ONLY(cauchy, ppf),
      JITX_LS_ONLY(cauchy, isf),
      JITX_LS(uniform, logpdf),
      JITX_LS(uniform, pdf),
      JITX_LS(uniform, cdf),
      JITX_LS_ONLY(uniform, ppf),
      JITX_SHAPE1(gamma, logpdf),
      JITX_SHAPE1(gamma, pdf),
      JITX_SHAPE1(gamma, cdf),
      JITX_SHAPE1(gamma, logcdf),
      JITX_SHAPE1(gamma, sf),
      JITX_SHAPE1(gamma, logsf),
      JITX_SHAPE1(chi2, logpdf),
      JITX_SHAPE1(chi2, pdf),
      JITX_SHAPE1(chi2, cdf),
      JITX_SHAPE1(chi2, logcdf),
      JITX_SHAPE1(chi2, sf),
      JITX_SHAPE1(chi2, logsf),
      JITX_SHAPE1(t, logpdf),
      JITX_SHAPE1(t, pdf),
      JITX_DISCRETE(poisson, logpmf),
      JITX_DISCRETE(poisson, pmf),
      JITX_DISCRETE(poisson, cdf),
      JITX_DISCRETE(geom, logpmf),
      JITX_DISCRETE(geom, pmf),
      {"bernoulli.logpmf", [](Args a) { return st::bernoulli::logpmf(a[0], a[1]); }},
      {"bernoulli.pmf", [](Args a) { return st::bernoulli::pmf(a[0], a[1]); }},
      {"bernoulli.cdf", [](Args a) { return st::bernoulli::cdf(a[0], a[1]); }},
      {"bernoulli.ppf", [](Args a) { return st::bernoulli::ppf(a[0], a[1]); }},
      JITX_SHAPE1(pareto, logpdf),
      JITX_SHAPE1(pareto, pdf),
      JITX_SHAPE1(pareto, cdf),
      JITX_SHAPE1(pareto, logcdf),
      JITX_SHAPE1(pareto, sf),
      JITX_SHAPE1(pareto, logsf),
      JITX_SHAPE1(pareto, ppf),
      JITX_LS_ONLY(gumbel_r, logpdf),
      JITX_LS_ONLY(gumbel_r, pdf),
      JITX_LS_ONLY(gumbel_r, cdf),
      JITX_LS_ONLY(gumbel_r, logcdf),
      JITX_LS_ONLY(gumbel_r, sf),
      JITX_LS_ONLY(gumbel_r, logsf),
      JITX_LS_ONLY(gumbel_r, ppf),
      JITX_LS_ONLY(gumbel_l, logpdf),
      JITX_LS_ONLY(gumbel_l, pdf),
      JITX_LS_ONLY(gumbel_l, cdf),
      JITX_LS_ONLY(gumbel_l, logcdf),
      JITX_LS_ONLY(gumbel_l, sf),
      JITX_LS_ONLY(gumbel_l, logsf),
      JITX_LS_ONLY(gumbel_l, ppf),
      {"gennorm.logpdf", [](Args a) { return st::gennorm::logpdf(a[0], a[1]); }},
      {"gennorm.pdf", [](Args a) { return st::gennorm::pdf(a[0], a[1]); }},
      {"gennorm.cdf", [](Args a) { return st::gennorm::cdf(a[0], a[1]); }},
      {"vonmises.logpdf", [](Args a) { return st::vonmises::logpdf(a[0], a[1]); }},
      {"vonmises.pdf", [](Args a) { return st::vonmises::pdf(a[0], a[1]); }},
      {"nbinom.logpmf", [](Args a) { return st::nbinom::logpmf(a[0], a[1], a[2]); }},
      {"nbinom.pmf", [](Args a) { return st::nbinom::pmf(a[0], a[1], a[2]); }},
      {"betabinom.logpmf", [](Args a) { return st::betabinom::logpmf(a[0], a[1], a[2], a[3]); }},
      {"betabinom.pmf", [](Args a) { return st::betabinom::pmf(a[0], a[1], a[2], a[3]); }},
      {"binom.logpmf", [](Args a) { return st::binom::logpmf(a[0], a[1], a[2]); }},
      {"binom.pmf", [](Args a) { return st::binom::pmf(a[0], a[1], a[2]); }},
      {"wrapcauchy.logpdf", [](Args a) { return st::wrapcauchy::logpdf(a[0], a[1]); }},
      {"wrapcauchy.pdf", [](Args a) { return st::wrapcauchy::pdf(a[0], a[1]); }},
  };
#define JITX_TRUNCNORM(fn)                                                                                  \
  t["truncnorm." #fn] = [](Args a) { return st::truncnorm::fn(a[0], a[1], a[2], a[3], a[4]); };            \
  t["truncnorm." #fn "_std"] = [](Args a) { return st::truncnorm::fn(a[0], a[1], a[2]); };
  static const bool added = [] {
    JITX_TRUNCNORM(logpdf)
    JITX_TRUNCNORM(pdf)
    JITX_TRUNCNORM(cdf)
    JITX_TRUNCNORM(logcdf)
    JITX_TRUNCNORM(sf)
    JITX_TRUNCNORM(logsf)
    return true;
  }();
#undef JITX_TRUNCNORM
  (void)added;
  return t;
}
#undef JITX_LS
#undef JITX_LS_ONLY
#undef JITX_SHAPE1
#undef JITX_DISCRETE

/// beta's functions take (x, a, b) or (x, a, b, loc, scale).
StatFn beta_fn(const std::string& fn) {
  static const std::map<std::string, std::function<Array(Args)>> five = {
      {"logpdf", [](Args a) { return st::beta::logpdf(a[0], a[1], a[2], a[3], a[4]); }},
      {"pdf", [](Args a) { return st::beta::pdf(a[0], a[1], a[2], a[3], a[4]); }},
      {"cdf", [](Args a) { return st::beta::cdf(a[0], a[1], a[2], a[3], a[4]); }},
      {"logcdf", [](Args a) { return st::beta::logcdf(a[0], a[1], a[2], a[3], a[4]); }},
      {"sf", [](Args a) { return st::beta::sf(a[0], a[1], a[2], a[3], a[4]); }},
      {"logsf", [](Args a) { return st::beta::logsf(a[0], a[1], a[2], a[3], a[4]); }}};
  StatFn f = five.at(fn);
  return [f](Args a) {
    if (a.size() == 5) return f(a);
    return f({a[0], a[1], a[2], Array(0.0), Array(1.0)});
  };
}

StatFn lookup(const std::string& name) {
  if (name.rfind("beta.", 0) == 0) {
    std::string fn = name.substr(5);
    if (fn.size() > 3 && fn.substr(fn.size() - 3) == "_ls") fn.resize(fn.size() - 3);
    return beta_fn(fn);
  }
  return stats_table().at(name);
}

StatFn case_fn(const std::string& name) { return ref_case_fn(name, lookup); }

}  // namespace

TEST_CASE("scipy.stats: JAX's values, dtypes and gradients, eager and jit", "[scipy_stats]") {
  for (const auto& c : stats_refs::kCases) {
    std::vector<Array> args;
    for (const auto& a : c.args) args.push_back(make(a, c.dtype));
    StatFn f = case_fn(c.name);
    bool f64 = c.dtype == DType::float64;
    auto r = eager_and_jit(f, args);
    // JAX's eager and jitted results differ at some edges: XLA fuses a multiply into the add it feeds (one FMA;
    // cauchy.logsf(inf): log of 0 eagerly, of -1e-17 fused, as jitx's jit) and clamps f32 exp's argument
    // (gumbel_r.logpdf(-inf): NaN eagerly, inf jitted; jitx's exp(inf) is inf, so NaN both ways). want_jit holds
    // jax.jit's results; jitx's jitted result must match one of JAX's two, element by element.
    double rtol = f64 ? 1e-12 : 2e-5, atol = f64 ? 1e-13 : 1e-6;
    check_values(r[0], c.want, c.want_dtype, rtol, atol, std::string(c.name) + " eager");
    if (c.want_jit.empty()) {
      check_values(r[1], c.want, c.want_dtype, rtol, atol, std::string(c.name) + " jit");
    } else {
      auto g = r[1].astype(DType::float64).to_vector<double>();
      std::vector<double> pick = c.want_jit;  // per element, whichever of JAX's two jitx's result is nearer
      for (size_t i = 0; i < pick.size() && i < g.size(); ++i) {
        auto off = [&](double w) { return std::isnan(w) ? (std::isnan(g[i]) ? 0.0 : INFINITY) : std::fabs(g[i] - w); };
        if (off(c.want[i]) < off(c.want_jit[i]) || (std::isnan(g[i]) && std::isnan(c.want[i]))) pick[i] = c.want[i];
      }
      check_values(r[1], pick, c.want_dtype, rtol, atol, std::string(c.name) + " jit");
    }
  }
}

TEST_CASE("scipy.stats: closed forms and normalisation on random parameters (float64)", "[scipy_stats]") {
  const DType f64 = DType::float64;
  auto xs = uniform(24, -6, 6), locs = uniform(24, -2, 2), scales = uniform(24, 0.2, 3);
  Array x = make(xs, f64), l = make(locs, f64), s = make(scales, f64);
  std::vector<double> npdf, ncdf, lpdf, cpdf;
  for (size_t i = 0; i < xs.size(); ++i) {
    double z = (xs[i] - locs[i]) / scales[i];
    npdf.push_back(std::exp(-z * z / 2) / (scales[i] * std::sqrt(2 * std::numbers::pi)));
    ncdf.push_back(0.5 * std::erfc(-z / std::sqrt(2.0)));
    lpdf.push_back(std::exp(-std::fabs(z)) / (2 * scales[i]));
    cpdf.push_back(1 / (std::numbers::pi * scales[i] * (1 + z * z)));
  }
  check_values(st::norm::pdf(x, l, s), npdf, f64, 1e-13, 0, "norm.pdf");
  check_values(st::norm::cdf(x, l, s), ncdf, f64, 1e-13, 1e-300, "norm.cdf");
  check_values(st::laplace::pdf(x, l, s), lpdf, f64, 1e-13, 0, "laplace.pdf");
  check_values(st::cauchy::pdf(x, l, s), cpdf, f64, 1e-13, 0, "cauchy.pdf");
  // Densities integrate to their cdfs: the trapezoid rule of pdf on a fine grid against cdf(b) - cdf(a).
  auto integral = [](const std::function<Array(const Array&)>& pdf, double a, double b) {
    const int n = 200001;
    Array g = jnp::linspace(a, b, n, true, DType::float64);
    auto v = pdf(g).to_vector<double>();
    double h = (b - a) / (n - 1), sum = 0.5 * (v.front() + v.back());
    for (int i = 1; i < n - 1; ++i) sum += v[size_t(i)];
    return sum * h;
  };
  for (double a : {0.7, 2.5, 6.0}) {
    Array av(a), sc(1.7);
    double want = st::gamma::cdf(Array(9.0), av, Array(0.0), sc).item<double>() -
                  st::gamma::cdf(Array(0.5), av, Array(0.0), sc).item<double>();
    CHECK(std::fabs(integral([&](const Array& g) { return st::gamma::pdf(g, av, Array(0.0), sc); }, 0.5, 9.0) - want) <
          1e-9);
    double want_t = 2 * st::chi2::cdf(Array(4.0), av).item<double>() - 2 * st::chi2::cdf(Array(1.0), av).item<double>();
    CHECK(std::fabs(2 * integral([&](const Array& g) { return st::chi2::pdf(g, av); }, 1.0, 4.0) - want_t) < 1e-9);
    double wb = st::beta::cdf(Array(0.9), av, Array(1.5)).item<double>() -
                st::beta::cdf(Array(0.1), av, Array(1.5)).item<double>();
    CHECK(std::fabs(integral([&](const Array& g) { return st::beta::pdf(g, av, Array(1.5)); }, 0.1, 0.9) - wb) < 1e-9);
  }
  // Student's t density: its closed form for df = 1 (Cauchy) and df = 3.
  for (double v : xs) {
    CHECK(std::fabs(st::t::pdf(Array(v), Array(1.0)).item<double>() - 1 / (std::numbers::pi * (1 + v * v))) < 1e-14);
    double t3 = 6 * std::sqrt(3.0) / (std::numbers::pi * std::pow(3 + v * v, 2));
    CHECK(std::fabs(st::t::pdf(Array(v), Array(3.0)).item<double>() - t3) < 1e-14);
  }
  // Discrete pmfs sum to one and match their closed forms.
  double total = 0;
  for (int k = 0; k < 60; ++k) total += st::poisson::pmf(Array(double(k)), Array(4.2)).item<double>();
  CHECK(std::fabs(total - 1) < 1e-13);
  for (int k = 0; k <= 7; ++k) {
    double want =
        std::tgamma(8.0) / (std::tgamma(k + 1.0) * std::tgamma(8.0 - k)) * std::pow(0.35, k) * std::pow(0.65, 7 - k);
    CHECK(std::fabs(st::binom::pmf(Array(double(k)), Array(7.0), Array(0.35)).item<double>() - want) < 1e-14);
  }
}

TEST_CASE("scipy.stats: multivariate_normal against a double-precision Cholesky", "[scipy_stats]") {
  const int n = 4;
  auto m = uniform(n * n, -1, 1);
  std::vector<double> cov(n * n, 0.0);  // A A^T + n I: positive definite
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) cov[size_t(i * n + j)] += m[size_t(i * n + k)] * m[size_t(j * n + k)];
      if (i == j) cov[size_t(i * n + j)] += n;
    }
  auto mean = uniform(n, -1, 1), xs = uniform(3 * n, -3, 3);
  // Cholesky and the log density in double.
  std::vector<double> L(n * n, 0.0);
  for (int j = 0; j < n; ++j) {
    double d = cov[size_t(j * n + j)];
    for (int k = 0; k < j; ++k) d -= L[size_t(j * n + k)] * L[size_t(j * n + k)];
    L[size_t(j * n + j)] = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double v = cov[size_t(i * n + j)];
      for (int k = 0; k < j; ++k) v -= L[size_t(i * n + k)] * L[size_t(j * n + k)];
      L[size_t(i * n + j)] = v / L[size_t(j * n + j)];
    }
  }
  std::vector<double> want;
  for (int r = 0; r < 3; ++r) {
    std::vector<double> y(n);
    double q = 0, logdet = 0;
    for (int i = 0; i < n; ++i) {
      double v = xs[size_t(r * n + i)] - mean[size_t(i)];
      for (int k = 0; k < i; ++k) v -= L[size_t(i * n + k)] * y[size_t(k)];
      y[size_t(i)] = v / L[size_t(i * n + i)];
      q += y[size_t(i)] * y[size_t(i)];
      logdet += std::log(L[size_t(i * n + i)]);
    }
    want.push_back(-0.5 * q - 0.5 * n * std::log(2 * std::numbers::pi) - logdet);
  }
  const DType f64 = DType::float64;
  Array x = make(xs, {3, n}, f64), mu = make(mean, f64), c = make(cov, {n, n}, f64);
  auto r = eager_and_jit([](Args a) { return st::multivariate_normal::logpdf(a[0], a[1], a[2]); }, {x, mu, c});
  check_values(r[0], want, f64, 1e-13, 0, "multivariate_normal.logpdf");
  check_values(r[1], want, f64, 1e-13, 0, "multivariate_normal.logpdf (jit)");
  // An isotropic (scalar) covariance and the univariate form.
  std::vector<double> iso;
  for (int r2 = 0; r2 < 3; ++r2) {
    double q = 0;
    for (int i = 0; i < n; ++i) q += std::pow(xs[size_t(r2 * n + i)] - mean[size_t(i)], 2);
    iso.push_back(-0.5 * q / 2.5 - 0.5 * n * (std::log(2 * std::numbers::pi) + std::log(2.5)));
  }
  check_values(st::multivariate_normal::logpdf(x, mu, Array(2.5)), iso, f64, 1e-13, 0, "isotropic");
  check_values(st::multivariate_normal::pdf(Array(0.3), Array(-0.2), Array(1.7)),
               {std::exp(-0.5 * 0.25 / 1.7) / std::sqrt(2 * std::numbers::pi * 1.7)}, DType::float64, 1e-14, 0,
               "univariate");
  CHECK_THROWS_AS(st::multivariate_normal::logpdf(x, mu, make(uniform(9, 0, 1), {3, 3}, f64)), ShapeError);
  CHECK_THROWS_AS(st::norm::ppf(make_int({1}, DType::int32)), TypeError);  // ndtri takes floats only, as JAX
  CHECK_THROWS_AS(st::gamma::pdf(make({1, 2}, f64), make({1, 2, 3}, f64)), ShapeError);
}

TEST_CASE("scipy.stats: dirichlet and multinomial against their closed forms", "[scipy_stats]") {
  const DType f64 = DType::float64;
  // Dirichlet(alpha) log density: sum (alpha_i - 1) log x_i - (sum lgamma(alpha_i) - lgamma(sum alpha)).
  std::vector<double> alpha{1.5, 2.0, 0.7}, xs{0.2, 0.5, 0.3, 0.6, 0.1, 0.3};  // x (3, 2): two points, axis 0
  Array x = jnp::transpose(make(xs, {2, 3}, f64)), a = make(alpha, f64);
  std::vector<double> want;
  for (int c = 0; c < 2; ++c) {
    double lp = std::lgamma(alpha[0] + alpha[1] + alpha[2]);
    for (int i = 0; i < 3; ++i)
      lp += (alpha[size_t(i)] - 1) * std::log(xs[size_t(c * 3 + i)]) - std::lgamma(alpha[size_t(i)]);
    want.push_back(lp);
  }
  auto r = eager_and_jit([](Args v) { return st::dirichlet::logpdf(v[0], v[1]); }, {x, a});
  check_values(r[0], want, f64, 1e-13, 0, "dirichlet.logpdf");
  check_values(r[1], want, f64, 1e-13, 0, "dirichlet.logpdf (jit)");
  // K - 1 coordinates: the last is 1 - their sum; off the simplex: -inf.
  check_values(st::dirichlet::logpdf(lax::slice(x, {0, 0}, {2, 2}), a), want, f64, 1e-13, 0, "dirichlet, K - 1");
  check_values(st::dirichlet::pdf(make({0.5, 0.6, -0.1}, f64), a), {0.0}, f64, 0, 0, "off the simplex");
  CHECK_THROWS_AS(st::dirichlet::logpdf(make({0.5, 0.5}, {1, 2}, f64), make({1, 1, 1, 1}, {2, 2}, f64)), ShapeError);
  // Multinomial: log n! + sum (x_i log p_i - log x_i!); -inf unless the counts add up to n.
  Array counts = make_int({2, 0, 3}, DType::int32), p = make({0.2, 0.3, 0.5}, f64);
  double lp = std::lgamma(6.0) + 2 * std::log(0.2) - std::lgamma(3.0) + 3 * std::log(0.5) - std::lgamma(4.0);
  check_values(st::multinomial::logpmf(counts, Array(5), p), {lp}, f64, 1e-13, 0, "multinomial.logpmf");
  check_values(st::multinomial::pmf(counts, Array(6), p), {0.0}, f64, 0, 0, "counts that do not add up to n");
  CHECK_THROWS_AS(st::multinomial::logpmf(make({2, 0, 3}, f64), Array(5), p), TypeError);  // integer counts only
}

TEST_CASE("scipy.stats: mode, rankdata and sem as JAX's", "[scipy_stats]") {
  // JAX 0.10.2's results (x64) on this matrix, written out; the rank methods also by hand for the ties 1, 1 (ranks
  // 2-3 of 11 sorted: average 1.5), 3, 3, 5, 5, 5.
  Array x = make({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4}, {4, 6}, DType::float64);
  auto vec = [](const Array& a) { return a.astype(DType::float64).to_vector<double>(); };
  for (bool jitted : {false, true}) {
    INFO((jitted ? "jit" : "eager"));
    auto m0 = jitted ? jit([](const Array& a) { return st::mode(a).mode; })(x) : st::mode(x).mode;
    CHECK(vec(m0) == std::vector<double>{2, 1, 4, 3, 5, 3});
    auto m1 = st::mode(x, 1);
    CHECK(vec(m1.mode) == std::vector<double>{1, 5, 3, 4});
    CHECK(m1.count.dtype() == DType::int64);
    CHECK(vec(m1.count) == std::vector<double>{2, 2, 2, 2});
    auto mn = st::mode(x, std::nullopt);
    CHECK(mn.mode.item<double>() == 3);
    CHECK(mn.count.item<int64_t>() == 4);
  }
  CHECK(st::mode(x, 1, "propagate", true).mode.shape() == Shape{4, 1});
  auto mnan = st::mode(make({NAN, 1, NAN, 2}, {4}, DType::float64), 0);
  CHECK(std::isnan(mnan.mode.item<double>()));  // the NaNs count as one value, as jnp.unique's equal_nan
  CHECK(mnan.count.item<int64_t>() == 2);
  auto mi = st::mode(make_int({1, 2, 2, 3, 3, 1}, {2, 3}, DType::int32), 1);
  CHECK(mi.mode.dtype() == DType::int32);
  CHECK(mi.mode.to_vector<int32_t>() == std::vector<int32_t>{2, 3});
  auto me = st::mode(jnp::zeros({0, 3}, DType::float64), 0);
  CHECK(me.count.dtype() == DType::float64);
  CHECK(std::isnan(vec(me.mode)[0]));

  Array v = make({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}, {11}, DType::float64);
  std::map<std::string, std::vector<double>> want = {
      {"average", {4.5, 1.5, 6, 1.5, 8, 11, 3, 10, 8, 4.5, 8}}, {"min", {4, 1, 6, 1, 7, 11, 3, 10, 7, 4, 7}},
      {"max", {5, 2, 6, 2, 9, 11, 3, 10, 9, 5, 9}},           {"dense", {3, 1, 4, 1, 5, 7, 2, 6, 5, 3, 5}},
      {"ordinal", {4, 1, 6, 2, 7, 11, 3, 10, 8, 5, 9}}};
  for (auto& [method, w] : want) {
    INFO(method);
    Array r = st::rankdata(v, method);
    CHECK(r.dtype() == DType::float64);
    CHECK(vec(r) == w);
    std::string m = method;
    CHECK(vec(jit([m](const Array& a) { return st::rankdata(a, m); })(v)) == w);
    CHECK(vec(st::rankdata(v.astype(DType::int32), method)) == w);
  }
  CHECK(vec(st::rankdata(x, "average", 1)) == std::vector<double>{3, 1.5, 4, 1.5, 5,   6,   1, 5, 3.5, 2, 3.5, 6,
                                                                   5.5, 4, 5.5, 2.5, 1, 2.5, 6, 2.5, 4.5, 1, 4.5, 2.5});
  for (double r : vec(st::rankdata(make({1, NAN, 2}, {3}, DType::float64)))) CHECK(std::isnan(r));

  auto near = [](const std::vector<double>& g, const std::vector<double>& w) {
    REQUIRE(g.size() == w.size());
    for (size_t i = 0; i < g.size(); ++i) CHECK(std::fabs(g[i] - w[i]) <= 1e-14 * std::fabs(w[i]));
  };
  near(vec(st::sem(x)), {1.755942292142123, 1.3228756555322954, 1.0801234497346432, 0.47871355387816905,
                         0.8660254037844386, 1.4719601443879744});
  near(vec(st::sem(x, std::nullopt)), {0.5212136292759383});
  near(vec(st::sem(x, 1, 0)), {1.1159616348111483, 0.7964039548239696, 1.1960583412006105, 0.7817359599705717});
  near(vec(st::sem(make({1, NAN, 4, 6}, {4}, DType::float64), 0, 1, "omit")), {1.452966314513558});
  CHECK(st::sem(make_int({1, 2, 3, 4}, {4}, DType::int32)).dtype() == DType::float32);  // JAX's promotion

  CHECK_THROWS_WITH(st::mode(x, 0, "omit"), Catch::Contains("nan_policy='omit' is not implemented"));
  CHECK_THROWS_WITH(st::rankdata(x, "median"), Catch::Contains("unknown method 'median'"));
  CHECK_THROWS_WITH(st::mode(x, 2), Catch::Contains("mode"));
  CHECK_THROWS_WITH(st::sem(x, 0, 1, "skip"), Catch::Contains("nan_policy 'skip' is not supported"));
}
