// jax.lax's special functions (jitx/lax_special.h) and jax.scipy.special (jitx/scipy_special.h).
// 1. JAX 0.10.2's values and gradients (tests/special_refs.h, from tools/gen_special_refs.py) on edge and ordinary
//    inputs in float64 and float32, eagerly and under jit. Tolerances: float64 1e-12 relative (+1e-13 absolute);
//    float32 2e-5 relative (+1e-6 absolute): jitx and XLA evaluate the same series, but lgamma, log and exp round
//    differently, and the incomplete gamma/beta functions amplify that (up to 9e-6 relative measured).
// 2. Independent references on random inputs, in long double: std::cyl_bessel_i and std::riemann_zeta, direct sums
//    of the Hurwitz zeta and polygamma series with an integral tail, the all-positive power series of P(a, x) and of
//    I_x(a, b), erfc, lgamma; and finite differences of the gradients.
// 3. Dtypes (integer promotion, bfloat16), vmap, the errors JAX raises, and custom_jvp's symbolic_zeros.
// 4. jnp::i0 and jnp::kaiser (jitx/numpy_special.h) against JAX and I0's power series.
#include <cmath>
#include <map>
#include <string>

#include "jitx/lax_special.h"
#include "jitx/numpy_special.h"
#include "jitx/scipy_special.h"
#include "special_refs.h"
#include "ref_check.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
namespace sps = jitx::scipy::special;

namespace {

using Args = const std::vector<Array>&;
using SpecialFn = std::function<Array(Args)>;

/// The functions special_refs.h names.
const std::map<std::string, SpecialFn>& special_table() {
  static const std::map<std::string, SpecialFn> t = {
      {"lax.igamma", [](Args a) { return lax::igamma(a[0], a[1]); }},
      {"lax.igammac", [](Args a) { return lax::igammac(a[0], a[1]); }},
      {"lax.igamma_grad_a", [](Args a) { return lax::igamma_grad_a(a[0], a[1]); }},
      {"lax.random_gamma_grad", [](Args a) { return lax::random_gamma_grad(a[0], a[1]); }},
      {"lax.betainc", [](Args a) { return lax::betainc(a[0], a[1], a[2]); }},
      {"lax.zeta", [](Args a) { return lax::zeta(a[0], a[1]); }},
      {"lax.polygamma", [](Args a) { return lax::polygamma(a[0], a[1]); }},
      {"lax.bessel_i0e", [](Args a) { return lax::bessel_i0e(a[0]); }},
      {"lax.bessel_i1e", [](Args a) { return lax::bessel_i1e(a[0]); }},
      {"gammaln", [](Args a) { return sps::gammaln(a[0]); }},
      {"gammasgn", [](Args a) { return sps::gammasgn(a[0]); }},
      {"gamma", [](Args a) { return sps::gamma(a[0]); }},
      {"loggamma", [](Args a) { return sps::loggamma(a[0]); }},
      {"digamma", [](Args a) { return sps::digamma(a[0]); }},
      {"factorial", [](Args a) { return sps::factorial(a[0]); }},
      {"erf", [](Args a) { return sps::erf(a[0]); }},
      {"erfc", [](Args a) { return sps::erfc(a[0]); }},
      {"erfinv", [](Args a) { return sps::erfinv(a[0]); }},
      {"ndtr", [](Args a) { return sps::ndtr(a[0]); }},
      {"ndtri", [](Args a) { return sps::ndtri(a[0]); }},
      {"log_ndtr", [](Args a) { return sps::log_ndtr(a[0]); }},
      {"log_ndtr1", [](Args a) { return sps::log_ndtr(a[0], 1); }},
      {"expit", [](Args a) { return sps::expit(a[0]); }},
      {"logit", [](Args a) { return sps::logit(a[0]); }},
      {"entr", [](Args a) { return sps::entr(a[0]); }},
      {"i0", [](Args a) { return sps::i0(a[0]); }},
      {"i1", [](Args a) { return sps::i1(a[0]); }},
      {"i0e", [](Args a) { return sps::i0e(a[0]); }},
      {"i1e", [](Args a) { return sps::i1e(a[0]); }},
      {"erfcx", [](Args a) { return sps::erfcx(a[0]); }},
      {"dawsn", [](Args a) { return sps::dawsn(a[0]); }},
      {"spence", [](Args a) { return sps::spence(a[0]); }},
      {"sici_si", [](Args a) { return sps::sici(a[0]).first; }},
      {"sici_ci", [](Args a) { return sps::sici(a[0]).second; }},
      // owens_t is float64 whatever its inputs (JAX's float64 quadrature constants; checked below).
      {"owens_t", [](Args a) { return sps::owens_t(a[0], a[1]).astype(a[0].dtype()); }},
      {"expi", [](Args a) { return sps::expi(a[0]); }},
      {"exp1", [](Args a) { return sps::exp1(a[0]); }},
      {"expn", [](Args a) { return sps::expn(a[0], a[1]); }},
      {"betaln", [](Args a) { return sps::betaln(a[0], a[1]); }},
      {"beta", [](Args a) { return sps::beta(a[0], a[1]); }},
      {"betainc", [](Args a) { return sps::betainc(a[0], a[1], a[2]); }},
      {"gammainc", [](Args a) { return sps::gammainc(a[0], a[1]); }},
      {"gammaincc", [](Args a) { return sps::gammaincc(a[0], a[1]); }},
      {"poch", [](Args a) { return sps::poch(a[0], a[1]); }},
      {"comb", [](Args a) { return sps::comb(a[0], a[1]); }},
      {"comb_rep", [](Args a) { return sps::comb(a[0], a[1], true); }},
      {"xlogy", [](Args a) { return sps::xlogy(a[0], a[1]); }},
      {"xlogy_edge", [](Args a) { return sps::xlogy(a[0], a[1]); }},
      {"xlog1py", [](Args a) { return sps::xlog1py(a[0], a[1]); }},
      {"rel_entr", [](Args a) { return sps::rel_entr(a[0], a[1]); }},
      {"rel_entr_edge", [](Args a) { return sps::rel_entr(a[0], a[1]); }},
      {"kl_div", [](Args a) { return sps::kl_div(a[0], a[1]); }},
      {"kl_div_edge", [](Args a) { return sps::kl_div(a[0], a[1]); }},
      {"boxcox", [](Args a) { return sps::boxcox(a[0], a[1]); }},
      {"boxcox1p", [](Args a) { return sps::boxcox1p(a[0], a[1]); }},
      {"zeta", [](Args a) { return sps::zeta(a[0], a[1]); }},
      {"multigammaln3", [](Args a) { return sps::multigammaln(a[0], 3); }},
      {"multigammaln4", [](Args a) { return sps::multigammaln(a[0], 4); }},
      {"polygamma", [](Args a) { return sps::polygamma(a[0].astype(DType::int64), a[1]); }},
  };
  return t;
}


SpecialFn case_fn(const std::string& name) {
  return ref_case_fn(name, [](const std::string& n) { return special_table().at(n); });
}

}  // namespace

TEST_CASE("special functions: JAX's values and gradients, eager and jit", "[special]") {
  for (const auto& c : special_refs::kCases) {
    std::vector<Array> args;
    for (const auto& a : c.args) args.push_back(make(a, c.dtype));
    SpecialFn f = case_fn(c.name);
    double rtol = c.dtype == DType::float64 ? 1e-12 : 2e-5, atol = c.dtype == DType::float64 ? 1e-13 : 1e-6;
    auto r = eager_and_jit(f, args);
    check_values(r[0], c.want, c.dtype, rtol, atol, std::string(c.name) + " (eager)");
    check_values(r[1], c.want, c.dtype, rtol, atol, std::string(c.name) + " (jit)");
  }
}

namespace {
using LD = long double;

/// Hurwitz zeta for x > 1, q > 0: the first 20000 terms, then the integral tail, the half term and the first
/// Euler-Maclaurin correction (x / 12 (N + q)^(-x-1)), which leaves an error below 1e-16 relative here.
LD zeta_ref(LD x, LD q) {
  const int n = 20000;
  LD s = 0;
  for (int k = n - 1; k >= 0; --k) s += std::pow(k + q, -x);
  LD a = n + q;
  return s + std::pow(a, 1 - x) / (x - 1) + 0.5L * std::pow(a, -x) + x / 12 * std::pow(a, -x - 1);
}
/// P(a, x) from its power series x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)) (positive terms).
LD igamma_ref(LD a, LD x) {
  LD term = 1, sum = 1;
  for (int n = 1; n < 100000 && term > 1e-22L * sum; ++n) {
    term *= x / (a + n);
    sum += term;
  }
  return std::exp(a * std::log(x) - x - std::lgamma(a + 1)) * sum;
}
/// I_x(a, b) for x <= 1/2 from x^a (1-x)^b / (a B(a, b)) * sum_n (a+b)_n / (a+1)_n x^n (positive terms), and by
/// the symmetry 1 - I_{1-x}(b, a) above.
LD betainc_ref(LD a, LD b, LD x) {
  if (x > 0.5L) return 1 - betainc_ref(b, a, 1 - x);
  LD term = 1, sum = 1;
  for (int n = 0; n < 100000 && term > 1e-22L * sum; ++n) {
    term *= (a + b + n) / (a + 1 + n) * x;
    sum += term;
  }
  LD lbeta = std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  return std::exp(a * std::log(x) + b * std::log1p(-x) - lbeta) / a * sum;
}
}  // namespace

TEST_CASE("special functions: independent references on random inputs (float64)", "[special]") {
  const DType f64 = DType::float64;
  SECTION("Bessel i0, i1 and the scaled forms against std::cyl_bessel_i") {
    auto xs = uniform(40, -40, 40);
    std::vector<double> i0e, i1e, i0, i1;
    for (double x : xs) {
      double s = std::exp(-std::fabs(x));
      double b0 = std::cyl_bessel_i(0.0, std::fabs(x)), b1 = std::cyl_bessel_i(1.0, std::fabs(x));
      i0.push_back(b0);
      i1.push_back(x < 0 ? -b1 : b1);
      i0e.push_back(b0 * s);
      i1e.push_back((x < 0 ? -b1 : b1) * s);
    }
    Array x = make(xs, f64);
    check_values(sps::i0e(x), i0e, f64, 1e-14, 0, "i0e");
    check_values(sps::i1e(x), i1e, f64, 1e-14, 0, "i1e");
    check_values(sps::i0(x), i0, f64, 1e-13, 0, "i0");
    check_values(sps::i1(x), i1, f64, 1e-13, 0, "i1");
  }
  SECTION("zeta and polygamma against direct sums, Riemann's zeta against std::riemann_zeta") {
    auto xs = uniform(16, 1.1, 12), qs = uniform(16, 0.05, 30);
    std::vector<double> want;
    for (size_t i = 0; i < xs.size(); ++i) want.push_back(double(zeta_ref(xs[i], qs[i])));
    check_values(sps::zeta(make(xs, f64), make(qs, f64)), want, f64, 1e-13, 0, "zeta(x, q)");
    std::vector<double> riemann;
    for (double x : xs) riemann.push_back(std::riemann_zeta(x));
    check_values(lax::zeta(make(xs, f64), jnp::ones({16}, f64)), riemann, f64, 1e-13, 0, "zeta(x, 1)");
    std::vector<double> ns, ps;
    for (size_t i = 0; i < qs.size(); ++i) {
      int n = 1 + int(i % 4);
      ns.push_back(n);
      ps.push_back(double((n % 2 ? 1 : -1) * std::tgamma(LD(n + 1)) * zeta_ref(n + 1, qs[i])));
    }
    check_values(lax::polygamma(make(ns, f64), make(qs, f64)), ps, f64, 1e-13, 0, "polygamma(n, x)");
  }
  SECTION("gammainc and gammaincc against the long-double power series") {
    auto as = uniform(24, 0.05, 25), xs = uniform(24, 0.01, 30);
    std::vector<double> p, q;
    for (size_t i = 0; i < as.size(); ++i) {
      LD v = igamma_ref(as[i], xs[i]);
      p.push_back(double(v));
      q.push_back(double(1 - v));
    }
    Array a = make(as, f64), x = make(xs, f64);
    check_values(sps::gammainc(a, x), p, f64, 1e-12, 1e-15, "gammainc");
    // Q = 1 - P from the reference loses relative precision where Q is tiny: compared absolutely.
    check_values(sps::gammaincc(a, x), q, f64, 1e-12, 1e-15, "gammaincc");
  }
  SECTION("betainc against the long-double power series") {
    auto as = uniform(24, 0.1, 30), bs = uniform(24, 0.1, 30), xs = uniform(24, 0.001, 0.999);
    std::vector<double> want;
    for (size_t i = 0; i < as.size(); ++i) want.push_back(double(betainc_ref(as[i], bs[i], xs[i])));
    check_values(sps::betainc(make(as, f64), make(bs, f64), make(xs, f64)), want, f64, 1e-11, 1e-14, "betainc");
  }
  SECTION("ndtr, log_ndtr, ndtri and betaln against erfc and lgamma") {
    auto xs = uniform(32, -35, 9);
    std::vector<double> nd, lnd;
    for (double x : xs) {
      LD v = 0.5L * std::erfc(-LD(x) / std::sqrt(LD(2)));
      nd.push_back(double(v));
      lnd.push_back(double(std::log(v)));
    }
    // erfc far in the tail (ndtr down to 1e-263) is good to 2e-13 relative; log_ndtr is log(ndtr) near 0 (good to
    // 1e-16 absolute where ndtr is within 1e-10 of 1) and a 3-term asymptotic series below -20 (JAX's: 1e-11).
    check_values(sps::ndtr(make(xs, f64)), nd, f64, 5e-13, 0, "ndtr");
    check_values(sps::log_ndtr(make(xs, f64)), lnd, f64, 2e-11, 1e-15, "log_ndtr");
    auto ps = uniform(32, 1e-12, 1 - 1e-9);
    Array back = sps::ndtr(sps::ndtri(make(ps, f64)));  // ndtr(ndtri(p)) = p
    check_values(back, ps, f64, 1e-13, 0, "ndtr(ndtri(p))");
    auto as = uniform(16, 0.1, 1e4), bs = uniform(16, 0.1, 1e4);
    std::vector<double> lb;
    for (size_t i = 0; i < as.size(); ++i) {
      LD a = as[i], b = bs[i];
      lb.push_back(double(std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b)));
    }
    check_values(sps::betaln(make(as, f64), make(bs, f64)), lb, f64, 1e-12, 1e-12, "betaln");
  }
  SECTION("gradients against central differences") {
    auto as = uniform(6, 0.5, 8), xs = uniform(6, 0.2, 9), us = uniform(6, 0.05, 0.95);
    Array a = make(as, f64), x = make(xs, f64), bb = make(uniform(6, 0.5, 6), f64);
    check_grad_fd([&](const Array& t) { return sps::gammainc(t, x); }, as, {6}, "d gammainc / d a");
    check_grad_fd([&](const Array& t) { return sps::gammaincc(a, t); }, xs, {6}, "d gammaincc / d x");
    check_grad_fd([&](const Array& t) { return sps::betainc(a, bb, t); }, us, {6}, "d betainc / d x");
    check_grad_fd([&](const Array& t) { return sps::zeta(t, x); }, uniform(6, 1.5, 6), {6}, "d zeta / d x");
    check_grad_fd([&](const Array& t) { return sps::i1e(t); }, uniform(6, -12, 12), {6}, "d i1e");
    check_grad_fd([&](const Array& t) { return sps::log_ndtr(t); }, uniform(6, -30, 6), {6}, "d log_ndtr");
    check_grad_fd([&](const Array& t) { return sps::poch(a, t); }, uniform(6, 0.1, 3), {6}, "d poch / d m");
  }
}

TEST_CASE("special functions: dtypes, weak types, bfloat16 and vmap", "[special]") {
  Array i = make_int({1, 2, 3}, DType::int32), l = make_int({1, 2, 3}, DType::int64);
  CHECK(sps::gammaln(i).dtype() == DType::float32);  // as JAX: int32 -> float32, int64 -> float64
  CHECK(sps::gammaln(l).dtype() == DType::float64);
  CHECK(sps::erf(make({1, 0}, DType::bool_)).dtype() == DType::float32);
  // A weak scalar result defers to a strong float32 operand, as JAX's.
  CHECK((sps::gammainc(Array(2.0), Array(3.0)) + make({1}, DType::float32)).dtype() == DType::float32);
  Array h = make({2.5, 7, 0.3}, DType::bfloat16);
  // JAX's bfloat16 results (computed in float32, rounded back), to bfloat16's precision.
  for (auto [name, r, want] :
       {std::tuple{"gammaln", sps::gammaln(h), std::vector<double>{0.28515625, 6.59375, 1.09375}},
        std::tuple{"i0e", lax::bessel_i0e(h), std::vector<double>{0.26953125, 0.1533203125, 0.7578125}},
        std::tuple{"zeta", lax::zeta(h + Array(1.0), jnp::ones({3}, DType::bfloat16)),
                   std::vector<double>{1.125, 1.0078125, 3.96875}}}) {
    check_values(r, want, DType::bfloat16, 8e-3, 0, name);
  }
  // vmap over the while loops: each row as computed alone.
  Array a = make(uniform(12, 0.2, 6), {3, 4}, DType::float64), x = make(uniform(12, 0.1, 9), {3, 4}, DType::float64);
  Array batched = vmap([](const Array& p, const Array& q) { return lax::igammac(p, q); })(a, x);
  check_values(batched, lax::igammac(a, x).to_vector<double>(), DType::float64, 1e-15, 0, "vmap igammac");
  Array u = make(uniform(12, 0.05, 0.95), {3, 4}, DType::float64);
  Array g = vmap(grad([&](const Array& t) { return jnp::sum(sps::betainc(Array(2.5), Array(1.5), t)); }))(u);
  std::vector<double> dens;
  for (double t : u.to_vector<double>())
    dens.push_back(std::pow(t, 1.5) * std::sqrt(1 - t) /
                   std::exp(std::lgamma(2.5) + std::lgamma(1.5) - std::lgamma(4)));
  check_values(g, dens, DType::float64, 1e-12, 0, "vmap(grad(betainc)) = x^(a-1) (1-x)^(b-1) / B(a, b)");
}

TEST_CASE("special functions: errors as JAX raises them", "[special]") {
  Array f = make({1, 2}, DType::float32), d = make({1, 2}, DType::float64), n = make_int({1, 2}, DType::int32);
  CHECK_THROWS_WITH(lax::igamma(f, d), Catch::Contains("igamma") && Catch::Contains("same dtypes"));
  CHECK_THROWS_WITH(lax::zeta(n, n), Catch::Contains("zeta") && Catch::Contains("i32"));
  CHECK_THROWS_AS(lax::betainc(f, f, make({1, 2, 3}, DType::float32)), ShapeError);
  CHECK_THROWS_WITH(sps::ndtr(n), Catch::Contains("ndtr") && Catch::Contains("i32"));
  CHECK_THROWS_WITH(sps::log_ndtr(d, 31), Catch::Contains("log_ndtr") && Catch::Contains("series_order"));
  CHECK_THROWS_WITH(sps::polygamma(d, d), Catch::Contains("polygamma") && Catch::Contains("integer"));
  // Gradients JAX does not define.
  CHECK_THROWS_WITH(grad([&](const Array& a) {
                      return jnp::sum(lax::betainc(a, d, make({0.3, 0.6}, DType::float64)));
                    })(d),
                    Catch::Contains("betainc") && Catch::Contains("respect to a"));
  CHECK_THROWS_WITH(grad([&](const Array& m) { return jnp::sum(lax::polygamma(m, d)); })(d),
                    Catch::Contains("polygamma") && Catch::Contains("respect to m"));
  CHECK_THROWS_WITH(grad([&](const Array& x) { return jnp::sum(lax::zeta(x, d)); })(d + Array(1.0)),
                    Catch::Contains("zeta") && Catch::Contains("not differentiable"));
  // ... but the gradient in x alone works with a and b fixed (their tangents are symbolic zeros).
  CHECK(grad([&](const Array& x) { return jnp::sum(lax::betainc(d, d, x)); })(make({0.3, 0.6}, DType::float64))
            .to_vector<double>()[0] > 0);
}

TEST_CASE("custom_jvp with symbolic_zeros: the rule sees which tangents are zero", "[special][autodiff]") {
  // f(x, y) = x * y with a rule that records which tangents it was given (empty = symbolic zero).
  auto seen = std::make_shared<std::vector<std::pair<bool, bool>>>();
  auto f = custom_jvp([](const Array& x, const Array& y) { return x * y; },
                      [seen](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
                        const auto& [x, y] = p;
                        const auto& [tx, ty] = t;
                        seen->emplace_back(tx.valid(), ty.valid());
                        Array out = x * y, tout = jnp::zeros_like(out);
                        if (tx.valid()) tout = tout + tx * y;
                        if (ty.valid()) tout = tout + ty * x;
                        return std::make_pair(out, tout);
                      },
                      symbolic_zeros);
  Array x = make({1.5, -2}, DType::float64), y = make({3, 0.5}, DType::float64);
  Array gx = grad([&](const Array& v) { return jnp::sum(f(v, y)); })(x);
  check_values(gx, {3, 0.5}, DType::float64, 0, 0, "d/dx");
  REQUIRE(!seen->empty());
  CHECK(seen->back() == std::pair{true, false});
  Array gy = jit(grad([&](const Array& v) { return jnp::sum(f(x, v)); }))(y);
  check_values(gy, {1.5, -2}, DType::float64, 0, 0, "d/dy under jit");
  CHECK(seen->back() == std::pair{false, true});
  // Under vmap the zero tangent stays symbolic inside the batched rule.
  Array xb = make({1, 2, 3, 4}, {2, 2}, DType::float64);
  Array gb = vmap(grad([&](const Array& v) { return jnp::sum(f(v, y)); }))(xb);
  check_values(gb, {3, 0.5, 3, 0.5}, DType::float64, 0, 0, "vmap(grad)");
  CHECK(seen->back() == std::pair{true, false});
}

TEST_CASE("jnp::i0 and jnp::kaiser: JAX's values, dtypes and derivative", "[special][jnp]") {
  const std::vector<double> x{-3.5, -0.5, 0.0, 0.25, 2.5, 30.0};
  auto i0 = [](Args a) { return jnp::i0(a[0]); };
  auto r = eager_and_jit(i0, {make(x, DType::float64)});
  for (const Array& v : r)
    check_values(v,
                 {7.3782034322254795, 1.0634833707413236, 1.0, 1.015686141223608, 3.289839144050123, 781672297823.9774},
                 DType::float64, 1e-13, 0, "i0 f64");
  check_values(
      jnp::i0(make(x, DType::float32)),
      {7.378204345703125, 1.063483476638794, 1.0000001192092896, 1.0156861543655396, 3.289839506149292, 781672185856.0},
      DType::float32, 2e-6, 0, "i0 f32");
  check_values(jnp::i0(make_int({0, 1, 2}, DType::int32)), {1.0000001192092896, 1.2660659551620483, 2.279585123062134},
               DType::float32, 2e-6, 0, "i0 int32 -> float32");
  Array g = grad([](const Array& t) { return jnp::sum(jnp::i0(t)); })(make(x, DType::float64));
  check_values(
      g, {-6.205834922258364, -0.2578943053908964, 0.0, 0.12597910894546793, 2.516716245288698, 768532038938.9568},
      DType::float64, 1e-12, 0, "d i0 (0 at x = 0, = i1 elsewhere)");
  check_values(jnp::kaiser(7, Array(2.5)),
               {0.3039662294153687, 0.6309201678591886, 0.8974290203504975, 1.0, 0.8974290203504975, 0.6309201678591886,
                0.3039662294153687},
               DType::float64, 1e-13, 0, "kaiser(7, 2.5)");
  check_values(jnp::kaiser(6, make({1.5}, {}, DType::float32)),
               {0.6072665747580158, 0.8463629616297079, 0.9822080543614451, 0.9822080543614451, 0.8463629616297079,
                0.6072665747580158},
               DType::float64, 1e-7, 0, "kaiser(6, float32 1.5): float64");
  check_values(jnp::kaiser(1, Array(3.0)), {1.0}, DType::float64, 0, 0, "kaiser(1)");
  CHECK(jnp::kaiser(0, Array(3.0)).shape() == Shape{0});
  // Against the series I0(x) = sum_k (x^2/4)^k / (k!)^2 in long double.
  auto xs = uniform(20, -20, 20);
  std::vector<double> want;
  for (double v : xs) {
    LD term = 1, sum = 1, q = LD(v) * v / 4;
    for (int k = 1; k < 200; ++k) sum += (term *= q / (LD(k) * k));
    want.push_back(double(sum));
  }
  check_values(jnp::i0(make(xs, DType::float64)), want, DType::float64, 1e-13, 0, "i0 against its series");
}

TEST_CASE("scipy::special extras: bernoulli, sici and owens_t identities, dtypes, erfcx without flushing",
          "[special]") {
  // JAX's bernoulli(8): its Chowla-Hartung sums stop at k = 49, so B_4 is -0.03333325 (not -1/30).
  auto b = sps::bernoulli(8);
  CHECK(b.dtype() == DType::float64);
  auto bv = b.to_vector<double>();
  REQUIRE(bv.size() == 9);
  CHECK(bv[0] == 1);
  CHECK(bv[1] == -0.5);
  CHECK(bv[2] == Approx(1.0 / 6).epsilon(1e-15));
  CHECK(bv[3] == 0);
  CHECK(bv[4] == Approx(-0.03333325).epsilon(1e-6));  // JAX 0.10.2's value
  CHECK(bv[6] == Approx(1.0 / 42).epsilon(1e-6));
  CHECK(bv[8] == Approx(-1.0 / 30).epsilon(1e-7));
  CHECK(sps::bernoulli(1).to_vector<double>() == std::vector<double>{1, -0.5});
  CHECK_THROWS_AS(sps::bernoulli(-1), ShapeError);
  // Si and Ci against their integrals by Simpson's rule in long double (|x| <= 4, where the series is used).
  for (double x : uniform(8, 0.2, 4)) {
    const int n = 4000;
    long double h = x / n, si = 0, ci = 0;
    for (int i = 0; i <= n; ++i) {
      long double t = i * h, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
      si += w * (t == 0 ? 1.0L : std::sin(t) / t);
      ci += w * (t == 0 ? 0.0L : (std::cos(t) - 1) / t);
    }
    si *= h / 3, ci = ci * h / 3 + 0.57721566490153286061L + std::log(static_cast<long double>(x));
    auto [s, c] = sps::sici(Array(x));
    CHECK(s.item<double>() == Approx(static_cast<double>(si)).epsilon(1e-12));
    CHECK(c.item<double>() == Approx(static_cast<double>(ci)).epsilon(1e-12));
  }
  // Owen's T: T(h, 1) = Phi(h) (1 - Phi(h)) / 2 and T(0, a) = atan(a) / (2 pi); float64 even for float32 inputs.
  for (double h : uniform(6, -3, 3)) {
    double phi = 0.5 * std::erfc(-h / std::sqrt(2.0));
    CHECK(sps::owens_t(Array(h), Array(1.0)).item<double>() == Approx(phi * (1 - phi) / 2).epsilon(1e-12));
  }
  CHECK(sps::owens_t(Array(0.0), Array(2.5)).item<double>() == Approx(std::atan(2.5) / (2 * M_PI)).epsilon(1e-14));
  CHECK(sps::owens_t(Array(0.5f), Array(0.3f)).dtype() == DType::float64);
  // erfcx in float32 just below sqrt(log(max)): exp(x^2) erfc(x) with erfc's subnormal result kept (JAX's XLA
  // flushes it to 0 and returns 0 there; jitx returns the value, 1 / (x sqrt(pi)) to first order).
  double x = 9.4;
  CHECK(sps::erfcx(Array(static_cast<float>(x))).item<double>() ==
        Approx(1 / (x * std::sqrt(M_PI)) * (1 - 1 / (2 * x * x))).epsilon(2e-3));
  // bfloat16 and float16 compute in float32 and round (as JAX); spence refuses integer and half dtypes.
  CHECK(sps::dawsn(Array(1.0f).astype(DType::bfloat16)).dtype() == DType::bfloat16);
  CHECK_THROWS_AS(sps::spence(jitx::numpy::array({1, 2})), TypeError);
  CHECK_THROWS_AS(sps::spence(Array(1.0f).astype(DType::float16)), TypeError);
}
