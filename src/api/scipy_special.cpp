// jitx::scipy::special (jitx/scipy_special.h): jax.scipy.special composed as JAX composes it, with its custom
// derivative rules (logit, xlogy, xlog1py, x log x, log_ndtr, poch) as custom_jvp.
#include "jitx/scipy_special.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <numbers>
#include <string_view>
#include <tuple>

#include "api/lax_special_internal.h"
#include "api/scipy_util.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_special.h"
#include "jitx/nn.h"
#include "jitx/numpy.h"
#include "jitx/numpy_stats.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"

namespace jitx::scipy::special {
using detail::ApiScope;
using detail::throw_error;

namespace {

using scipy_util::scipy_finish;
using scipy_util::scipy_promote;
using Promoted = scipy_util::ScipyPromoted;

Array cst(double v, DType d) { return Array::scalar(v, d); }
Array full(const Array& like, double v) { return jnp::full_like(like, v); }

/// ndtr, ndtri and log_ndtr take float32 or float64 only, as JAX's.
void check_f32_f64(std::string_view op, const Array& x) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (x.dtype() != DType::float32 && x.dtype() != DType::float64)
    throw_error<TypeError>(op, "x.dtype={} is not supported (accepted: float32 and float64, as jax.scipy.special.{})",
                           dtype_name(x.dtype()), op);
}

// --- pieces with custom derivatives ---
Array xlogy_impl(const Array& x, const Array& y) {
  Array x_ok = lax::bitwise_or(lax::ne(x, cst(0, x.dtype())), lax::ne(y, y));
  return lax::select(x_ok, lax::mul(x, lax::log(y)), jnp::zeros_like(x));
}
Array xlog1py_impl(const Array& x, const Array& y) {
  Array x_ok = lax::bitwise_or(lax::ne(x, cst(0, x.dtype())), lax::ne(y, y));
  return lax::select(x_ok, lax::mul(x, lax::log1p(y)), jnp::zeros_like(x));
}
using Pair = std::tuple<Array, Array>;
/// f(x, y) with the tangent dx * fx(x, y) + dy * fy(x, y) (a missing tangent adds nothing).
template <class F, class Fx, class Fy>
Array with_partials(F f, Fx fx, Fy fy, const Array& x, const Array& y) {
  return custom_jvp(
      f,
      [f, fx, fy](const Pair& p, const Pair& t) {
        const auto& [xv, yv] = p;
        Array out = f(xv, yv);
        Array tout = jnp::zeros_like(out);
        if (std::get<0>(t).valid()) tout = lax::add(tout, lax::mul(std::get<0>(t), fx(xv, yv)));
        if (std::get<1>(t).valid()) tout = lax::add(tout, lax::mul(std::get<1>(t), fy(xv, yv)));
        return std::make_pair(out, tout);
      },
      symbolic_zeros)(x, y);
}
Array xlogy_jvp(const Array& x, const Array& y) {
  return with_partials(
      xlogy_impl, [](const Array&, const Array& yv) { return lax::log(yv); },
      [](const Array& xv, const Array& yv) { return lax::div(xv, yv); }, x, y);
}
Array xlog1py_jvp(const Array& x, const Array& y) {
  return with_partials(
      xlog1py_impl, [](const Array&, const Array& yv) { return lax::log1p(yv); },
      [](const Array& xv, const Array& yv) { return lax::div(xv, lax::add(cst(1, yv.dtype()), yv)); }, x, y);
}
/// x log x with the derivative log(x) + 1.
Array xlogx(const Array& x) {
  return custom_jvp([](const Array& v) { return xlogy_impl(v, v); },
                    [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                      const Array& v = std::get<0>(p);
                      Array d = lax::add(lax::log(v), cst(1, v.dtype()));
                      return std::make_pair(xlogy_impl(v, v), lax::mul(std::get<0>(t), d));
                    })(x);
}

Array gammasgn_impl(const Array& x) {
  DType d = x.dtype();
  Array fl = lax::floor(x), neg = lax::lt(x, cst(0, d));
  Array nan_at = lax::bitwise_or(lax::bitwise_and(neg, lax::eq(x, fl)), lax::ne(x, x));
  Array odd_floor = lax::ne(jnp::remainder(fl, cst(2, d)), cst(0, d));
  Array minus =
      lax::bitwise_or(lax::bitwise_and(neg, odd_floor), lax::bitwise_and(lax::eq(x, cst(0, d)), jnp::signbit(x)));
  return lax::select(nan_at, full(x, NAN), lax::select(minus, full(x, -1), full(x, 1)));
}

/// scipy's algdiv: log(Gamma(b) / Gamma(a + b)) for b >= 8 (a <= b), from the Stirling remainders.
Array algdiv(const Array& a, const Array& b) {
  DType dt = a.dtype();
  auto k = [dt](double v) { return cst(v, dt); };
  const std::array<double, 6> c{0.833333333333333e-01,  -0.277777777760991e-02, 0.793650666825390e-03,
                                -0.595202931351870e-03, 0.837308034031215e-03,  -0.165322962780713e-02};
  Array h = lax::div(a, b);
  Array x = lax::div(h, lax::add(k(1), h));
  Array d = lax::add(b, lax::sub(a, k(0.5)));
  Array x2 = lax::mul(x, x);
  // s_n = (1 - x^n) / (1 - x) for odd n
  Array s3 = lax::add(k(1), lax::add(x, x2));
  Array s5 = lax::add(k(1), lax::add(x, lax::mul(x2, s3)));
  Array s7 = lax::add(k(1), lax::add(x, lax::mul(x2, s5)));
  Array s9 = lax::add(k(1), lax::add(x, lax::mul(x2, s7)));
  Array s11 = lax::add(k(1), lax::add(x, lax::mul(x2, s9)));
  Array ib = lax::div(k(1), b);
  Array t = lax::mul(ib, ib);
  Array w = lax::add(lax::mul(lax::mul(k(c[5]), s11), t), lax::mul(k(c[4]), s9));
  w = lax::add(lax::mul(w, t), lax::mul(k(c[3]), s7));
  w = lax::add(lax::mul(w, t), lax::mul(k(c[2]), s5));
  w = lax::add(lax::mul(w, t), lax::mul(k(c[1]), s3));
  w = lax::add(lax::mul(w, t), k(c[0]));
  w = lax::mul(w, lax::div(x, b));
  Array u = lax::mul(d, lax::log1p(lax::div(a, b)));
  Array v = lax::mul(a, lax::sub(lax::log(b), k(1)));
  return lax::select(lax::le(u, v), lax::sub(lax::sub(w, v), u), lax::sub(lax::sub(w, u), v));
}
Array betaln_impl(const Array& a0, const Array& b0) {
  Array a = lax::min(a0, b0), b = lax::max(a0, b0);
  Array small_b = lax::add(lax::lgamma(a), lax::sub(lax::lgamma(b), lax::lgamma(lax::add(a, b))));
  Array large_b = lax::add(lax::lgamma(a), algdiv(a, b));
  return lax::select(lax::lt(b, cst(8, a.dtype())), small_b, large_b);
}

Array poch_impl(const Array& z, const Array& m) {
  Array g = lax::div(lax::mul(gammasgn_impl(lax::add(z, m)), lax::exp(lax::lgamma(lax::add(z, m)))),
                     lax::mul(gammasgn_impl(z), lax::exp(lax::lgamma(z))));
  return lax::select(lax::eq(m, cst(0, z.dtype())), jnp::ones_like(z), g);
}

Array ndtr_impl(const Array& x) {
  DType d = x.dtype();
  Array half_sqrt2 = cst(0.5 * std::numbers::sqrt2, d);
  Array w = lax::mul(x, half_sqrt2), z = lax::abs(w);
  Array y = lax::select(lax::lt(z, half_sqrt2), lax::add(cst(1, d), lax::erf(w)),
                        lax::select(lax::gt(w, cst(0, d)), lax::sub(cst(2, d), lax::erfc(z)), lax::erfc(z)));
  return lax::mul(cst(0.5, d), y);
}

/// A polynomial by Horner's rule, the coefficients highest power first.
template <size_t N>
Array polyval(const std::array<double, N>& c, const Array& x) {
  Array r = jnp::full_like(x, c[0]);
  for (size_t i = 1; i < N; ++i) r = lax::add(lax::mul(r, x), cst(c[i], x.dtype()));
  return r;
}

// Cephes' rational approximations of the normal quantile (ndtri.c): P0/Q0 near the centre, P1/Q1 and P2/Q2 in
// the tails (z = sqrt(-2 log p) below and above 8).
constexpr std::array<double, 5> kNdtriP0{-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                                         1.39312609387279679503E1, -1.23916583867381258016E0};
constexpr std::array<double, 9> kNdtriQ0{1.0,
                                         1.95448858338141759834E0,
                                         4.67627912898881538453E0,
                                         8.63602421390890590575E1,
                                         -2.25462687854119370527E2,
                                         2.00260212380060660359E2,
                                         -8.20372256168333339912E1,
                                         1.59056225126211695515E1,
                                         -1.18331621121330003142E0};
constexpr std::array<double, 9> kNdtriP1{
    4.05544892305962419923E0,   3.15251094599893866154E1,   5.71628192246421288162E1,
    4.40805073893200834700E1,   1.46849561928858024014E1,   2.18663306850790267539E0,
    -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
constexpr std::array<double, 9> kNdtriQ1{1.0,
                                         1.57799883256466749731E1,
                                         4.53907635128879210584E1,
                                         4.13172038254672030440E1,
                                         1.50425385692907503408E1,
                                         2.50464946208309415979E0,
                                         -1.42182922854787788574E-1,
                                         -3.80806407691578277194E-2,
                                         -9.33259480895457427372E-4};
constexpr std::array<double, 9> kNdtriP2{
    3.23774891776946035970E0,  6.91522889068984211695E0,  3.93881025292474443415E0,
    1.33303460815807542389E0,  2.01485389549179081538E-1, 1.23716634817820021358E-2,
    3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
constexpr std::array<double, 9> kNdtriQ2{1.0,
                                         6.02427039364742014255E0,
                                         3.67983563856160859403E0,
                                         1.37702099489081330271E0,
                                         2.16236993594496635890E-1,
                                         1.34204006088543189037E-2,
                                         3.28014464682127739104E-4,
                                         2.89247864745380683936E-6,
                                         6.79019408009981274425E-9};

Array ndtri_impl(const Array& p) {
  DType d = p.dtype();
  auto k = [d](double v) { return cst(v, d); };
  const double exp_m2 = std::exp(-2.0);
  Array mcp = lax::select(lax::gt(p, k(-std::expm1(-2.0))), lax::sub(k(1), p), p);
  Array safe = lax::select(lax::eq(mcp, k(0)), full(p, 0.5), mcp);  // 0 would give NaNs in unused branches
  Array w = lax::sub(safe, k(0.5));
  Array ww = lax::mul(w, w);
  Array big = lax::add(w, lax::mul(lax::mul(w, ww), lax::div(polyval(kNdtriP0, ww), polyval(kNdtriQ0, ww))));
  big = lax::mul(big, k(-std::sqrt(2 * std::numbers::pi)));
  Array z = lax::sqrt(lax::mul(k(-2), lax::log(safe)));
  Array iz = lax::div(k(1), z);
  Array first = lax::sub(z, lax::div(lax::log(z), z));
  Array tail2 = lax::div(lax::div(polyval(kNdtriP2, iz), polyval(kNdtriQ2, iz)), z);
  Array tail1 = lax::div(lax::div(polyval(kNdtriP1, iz), polyval(kNdtriQ1, iz)), z);
  Array x = lax::select(lax::gt(safe, k(exp_m2)), big,
                        lax::select(lax::ge(z, k(8)), lax::sub(first, tail2), lax::sub(first, tail1)));
  x = lax::select(lax::gt(p, k(1 - exp_m2)), x, lax::neg(x));
  return lax::select(lax::eq(p, k(0)), full(p, -INFINITY), lax::select(lax::eq(p, k(1)), full(p, INFINITY), x));
}

/// log ndtr far in the lower tail: -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum of the asymptotic series).
Array log_ndtr_lower(const Array& x, int order) {
  DType d = x.dtype();
  Array x2 = lax::mul(x, x);
  Array log_scale = lax::sub(lax::sub(lax::mul(cst(-0.5, d), x2), lax::log(lax::neg(x))),
                             cst(0.5 * std::log(2 * std::numbers::pi), d));
  Array even = jnp::zeros_like(x), odd = jnp::zeros_like(x), x2n = x2;
  double double_factorial = 1;  // (2n - 1)!!
  for (int n = 1; n <= order; ++n) {
    double_factorial *= 2 * n - 1;
    Array y = lax::div(cst(double_factorial, d), x2n);
    if (n % 2)
      odd = lax::add(odd, y);
    else
      even = lax::add(even, y);
    x2n = lax::mul(x2n, x2);
  }
  Array series = order <= 0 ? jnp::ones_like(x) : lax::sub(lax::add(cst(1, d), even), odd);
  return lax::add(log_scale, lax::log(series));
}
Array log_ndtr_impl(const Array& x, int order) {
  DType d = x.dtype();
  Array lower = cst(d == DType::float64 ? -20 : -10, d), upper = cst(d == DType::float64 ? 8 : 5, d);
  Array above = lax::gt(x, upper);
  Array r = ndtr_impl(lax::select(above, lax::neg(x), lax::max(x, lower)));
  return lax::select(above, lax::neg(r),
                     lax::select(lax::gt(x, lower), lax::log(r), log_ndtr_lower(lax::min(x, lower), order)));
}

/// The reduced axes of x (all when empty), canonical and ascending.
Axes reduced_axes(const Array& x, const Axes& axes, std::string_view op) {
  Axes out = jnp::stats_util::axes_in_order(x, axes, op);
  std::sort(out.begin(), out.end());
  return out;
}

std::pair<Array, Array> logsumexp_core(const Array& a_in, const Axes& axes, const std::optional<Array>& b_in,
                                       bool keepdims, bool nan_for_negative) {
  Promoted p = b_in ? scipy_promote("logsumexp", {a_in, *b_in}) : scipy_promote("logsumexp", {a_in});
  Array a = p.v[0];
  if (b_in) a = lax::select(lax::ne(p.v[1], cst(0, p.dtype)), a, full(a, -INFINITY));
  Axes dims = reduced_axes(a, axes, "logsumexp");
  Shape kept = a.shape();  // amax with the reduced axes kept as size 1 (-inf over an empty axis, as JAX's initial)
  for (int64_t ax : dims) kept[size_t(ax)] = 1;
  Array amax = jnp::reshape(lax::reduce_max(a, dims), kept);
  amax = stop_gradient(lax::select(lax::is_finite(amax), amax, jnp::zeros_like(amax)));
  Array e = lax::exp(lax::sub(a, jnp::broadcast_to(amax, a.shape())));
  if (b_in) e = lax::mul(e, p.v[1]);
  Array s = jnp::sum(e, dims, keepdims);
  Array sign = lax::sign(s);
  Array m = keepdims ? amax : jnp::squeeze(amax, dims);
  Array out = lax::add(lax::log(lax::abs(s)), m);
  if (nan_for_negative && b_in) out = lax::select(lax::lt(sign, cst(0, p.dtype)), full(out, NAN), out);
  return {scipy_finish(p, out), scipy_finish(p, sign)};
}

}  // namespace

// --- gamma and beta ---
Array gammaln(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("gammaln", {x});
  return scipy_finish(p, lax::lgamma(p.v[0]));
}
Array gammasgn(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("gammasgn", {x});
  return scipy_finish(p, gammasgn_impl(p.v[0]));
}
Array gamma(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("gamma", {x});
  return scipy_finish(p, lax::mul(gammasgn_impl(p.v[0]), lax::exp(lax::lgamma(p.v[0]))));
}
Array loggamma(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("loggamma", {x});
  const Array& v = p.v[0];
  return scipy_finish(p, lax::select(lax::gt(v, cst(0, p.dtype)), lax::lgamma(v), full(v, NAN)));
}
Array digamma(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("digamma", {x});
  return scipy_finish(p, lax::digamma(p.v[0]));
}
Array polygamma(const Array& n, const Array& x, Loc loc) {
  ApiScope s(loc);
  if (n.valid() && !is_integer(n.dtype()))
    throw_error<TypeError>("polygamma", "argument n must be of integer type, got dtype {} (as jax.scipy.special)",
                           dtype_name(n.dtype()));
  auto p = scipy_promote("polygamma", {n, x});
  return scipy_finish(p, lax::polygamma(p.v[0], p.v[1]));
}
Array betaln(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("betaln", {a, b});
  return scipy_finish(p, betaln_impl(p.v[0], p.v[1]));
}
Array beta(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("beta", {a, b});
  const Array &av = p.v[0], &bv = p.v[1];
  Array sign = lax::mul(lax::mul(gammasgn_impl(av), gammasgn_impl(bv)), gammasgn_impl(lax::add(av, bv)));
  return scipy_finish(p, lax::mul(sign, lax::exp(betaln_impl(av, bv))));
}
Array betainc(const Array& a, const Array& b, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("betainc", {a, b, x});
  return scipy_finish(p, lax::betainc(p.v[0], p.v[1], p.v[2]));
}
Array gammainc(const Array& a, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("gammainc", {a, x});
  return scipy_finish(p, lax::igamma(p.v[0], p.v[1]));
}
Array gammaincc(const Array& a, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("gammaincc", {a, x});
  return scipy_finish(p, lax::igammac(p.v[0], p.v[1]));
}
Array factorial(const Array& n, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("factorial", {n});
  const Array& v = p.v[0];
  Array f = lax::exp(lax::lgamma(lax::add(v, cst(1, p.dtype))));
  return scipy_finish(p, lax::select(lax::lt(v, cst(0, p.dtype)), jnp::zeros_like(v), f));
}
Array comb(const Array& N, const Array& k, bool repetition, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("comb", {N, k});
  DType d = p.dtype;
  Array n = p.v[0], kk = p.v[1];
  if (repetition) n = lax::sub(lax::add(n, kk), cst(1, d));
  Array ok = lax::bitwise_and(lax::bitwise_and(lax::le(kk, n), lax::ge(n, cst(0, d))), lax::ge(kk, cst(0, d)));
  Array sn = lax::select(ok, n, jnp::zeros_like(n)), sk = lax::select(ok, kk, jnp::zeros_like(kk));
  Array one = cst(1, d);
  Array r = lax::exp(lax::sub(lax::sub(lax::lgamma(lax::add(sn, one)), lax::lgamma(lax::add(sk, one))),
                              lax::lgamma(lax::sub(lax::add(sn, one), sk))));
  return scipy_finish(p, lax::select(ok, r, jnp::zeros_like(r)));
}
Array poch(const Array& z, const Array& m, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("poch", {z, m});
  auto dz = [](const Array& zv, const Array& mv) {
    return lax::mul(lax::sub(lax::digamma(lax::add(zv, mv)), lax::digamma(zv)), poch_impl(zv, mv));
  };
  auto dm = [](const Array& zv, const Array& mv) {
    return lax::mul(lax::digamma(lax::add(zv, mv)), poch_impl(zv, mv));
  };
  return scipy_finish(p, with_partials(poch_impl, dz, dm, p.v[0], p.v[1]));
}
Array multigammaln(const Array& a, int64_t d, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("multigammaln", {a});
  const Array& v = p.v[0];
  double dd = double(d);
  Array out = jnp::full_like(v, 0.25 * dd * (dd - 1) * std::log(std::numbers::pi));
  for (int64_t j = 0; j < d; ++j) out = lax::add(out, lax::lgamma(lax::sub(v, cst(double(j) / 2, p.dtype))));
  return scipy_finish(p, out);
}

// --- error function and the normal distribution ---
Array erf(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("erf", {x});
  return scipy_finish(p, lax::erf(p.v[0]));
}
Array erfc(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("erfc", {x});
  return scipy_finish(p, lax::erfc(p.v[0]));
}
Array erfinv(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("erfinv", {x});
  return scipy_finish(p, lax::erf_inv(p.v[0]));
}
Array ndtr(const Array& x, Loc loc) {
  ApiScope s(loc);
  check_f32_f64("ndtr", x);
  return ndtr_impl(x);
}
Array ndtri(const Array& p, Loc loc) {
  ApiScope s(loc);
  check_f32_f64("ndtri", p);
  return ndtri_impl(p);
}
Array log_ndtr(const Array& x, int series_order, Loc loc) {
  ApiScope s(loc);
  check_f32_f64("log_ndtr", x);
  if (series_order < 0 || series_order > 30)
    throw_error<TypeError>("log_ndtr", "series_order must be in [0, 30], got {}", series_order);
  return custom_jvp([series_order](const Array& v) { return log_ndtr_impl(v, series_order); },
                    [series_order](const std::tuple<Array>& pr, const std::tuple<Array>& t) {
                      const Array& v = std::get<0>(pr);
                      DType d = v.dtype();
                      Array ans = log_ndtr_impl(v, series_order);
                      // d/dx log ndtr(x) = pdf(x) / ndtr(x) = exp(log pdf(x) - log ndtr(x))
                      Array logpdf = lax::sub(lax::mul(cst(-0.5, d), lax::mul(v, v)),
                                              cst(0.5 * std::log(2 * std::numbers::pi), d));
                      return std::make_pair(ans, lax::mul(std::get<0>(t), lax::exp(lax::sub(logpdf, ans))));
                    })(x);
}

// --- logistic ---
Array logit(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("logit", {x});
  auto f = [](const Array& v) { return lax::log(lax::div(v, lax::sub(cst(1, v.dtype()), v))); };
  return scipy_finish(p, custom_jvp(f, [f](const std::tuple<Array>& pr, const std::tuple<Array>& t) {
                        const Array& v = std::get<0>(pr);
                        Array denom = lax::mul(v, lax::sub(cst(1, v.dtype()), v));
                        return std::make_pair(f(v), lax::div(std::get<0>(t), denom));
                      })(p.v[0]));
}
Array expit(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("expit", {x});
  return scipy_finish(p, lax::logistic(p.v[0]));
}

// --- entropies ---
Array xlogy(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("xlogy", {x, y});
  return scipy_finish(p, xlogy_jvp(p.v[0], p.v[1]));
}
Array xlog1py(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("xlog1py", {x, y});
  return scipy_finish(p, xlog1py_jvp(p.v[0], p.v[1]));
}
Array entr(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("entr", {x});
  const Array& v = p.v[0];
  return scipy_finish(p, lax::select(lax::lt(v, cst(0, p.dtype)), full(v, -INFINITY), lax::neg(xlogx(v))));
}
Array rel_entr(const Array& pp, const Array& q, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("rel_entr", {pp, q});
  const Array &pv = p.v[0], &qv = p.v[1];
  Array zero = cst(0, p.dtype);
  Array both = lax::bitwise_and(lax::gt(pv, zero), lax::gt(qv, zero));
  Array one_zero = lax::bitwise_and(lax::eq(pv, zero), lax::ge(qv, zero));
  Array sp = lax::select(both, pv, jnp::ones_like(pv)), sq = lax::select(both, qv, jnp::ones_like(qv));
  Array val = lax::sub(xlogx(sp), xlogy_jvp(sp, sq));
  return scipy_finish(p, lax::select(both, val, lax::select(one_zero, jnp::zeros_like(val), full(val, INFINITY))));
}
Array kl_div(const Array& pp, const Array& q, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("kl_div", {pp, q});
  Array r = rel_entr(p.v[0], p.v[1]);
  return scipy_finish(p, lax::add(lax::sub(r, p.v[0]), p.v[1]));
}

// --- transforms ---
namespace {
Array boxcox_of_log(const Array& log_x, const Array& lmbda) {
  Array zero = lax::eq(lmbda, cst(0, lmbda.dtype()));
  Array safe = lax::select(zero, jnp::ones_like(lmbda), lmbda);
  Array power = lax::div(lax::expm1(lax::mul(safe, log_x)), safe);
  return lax::select(zero, log_x, power);
}
}  // namespace
Array boxcox(const Array& x, const Array& lmbda, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("boxcox", {x, lmbda});
  return scipy_finish(p, boxcox_of_log(lax::log(p.v[0]), p.v[1]));
}
Array boxcox1p(const Array& x, const Array& lmbda, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("boxcox1p", {x, lmbda});
  return scipy_finish(p, boxcox_of_log(lax::log1p(p.v[0]), p.v[1]));
}

// --- zeta and Bessel ---
Array zeta(const Array& x, const Array& q, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("zeta", {x, q});
  DType work = p.dtype == DType::float64 ? DType::float64 : DType::float32;
  Array r = lax::special_internal::zeta_differentiable(lax::convert_element_type(p.v[0], work),
                                                       lax::convert_element_type(p.v[1], work));
  return scipy_finish(p, lax::convert_element_type(r, p.dtype));
}
Array i0e(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("i0e", {x});
  return scipy_finish(p, lax::bessel_i0e(p.v[0]));
}
Array i0(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("i0", {x});
  return scipy_finish(p, lax::mul(lax::exp(lax::abs(p.v[0])), lax::bessel_i0e(p.v[0])));
}
Array i1e(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("i1e", {x});
  return scipy_finish(p, lax::bessel_i1e(p.v[0]));
}
Array i1(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("i1", {x});
  return scipy_finish(p, lax::mul(lax::exp(lax::abs(p.v[0])), lax::bessel_i1e(p.v[0])));
}

// --- reductions ---
Array logsumexp(const Array& a, Axes axes, const std::optional<Array>& b, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return logsumexp_core(a, axes, b, keepdims, true).first;
}
std::pair<Array, Array> logsumexp_with_sign(const Array& a, Axes axes, const std::optional<Array>& b, bool keepdims,
                                            Loc loc) {
  ApiScope s(loc);
  return logsumexp_core(a, axes, b, keepdims, false);
}
Array softmax(const Array& x, Axes axes, Loc loc) {
  ApiScope s(loc);
  return nn::softmax(x, std::move(axes));
}
Array log_softmax(const Array& x, Axes axes, Loc loc) {
  ApiScope s(loc);
  return nn::log_softmax(x, std::move(axes));
}

}  // namespace jitx::scipy::special
