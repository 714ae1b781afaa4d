// jitx::scipy::special (jitx/scipy_special.h): the exponential integrals expi, exp1 and expn, as
// jax.scipy.special computes them (Cephes' rational approximations for Ei on (0, 64] and beyond, the power series,
// continued fraction and asymptotic expansion of E_n), with JAX's derivative rules.
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <vector>

#include "api/scipy_util.h"
#include "core/errors.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_control.h"
#include "jitx/numpy.h"
#include "jitx/scipy_special.h"

namespace jitx::scipy::special {
using detail::ApiScope;
using scipy_util::scipy_finish;
using scipy_util::horner;
using scipy_util::scipy_promote;

namespace {
using State = std::vector<Array>;
Array ek(double v, const Array& like) { return Array::scalar(v, like.dtype()); }
/// finfo(dtype).eps, the loops' stopping tolerance (Cephes' MACHEP).
double machep_of(DType d) {
  return std::ldexp(1.0, d == DType::float64 ? -52 : d == DType::float16 ? -10 : d == DType::bfloat16 ? -7 : -23);
}


/// Each element's own while loop (as jax.vmap of a scalar lax.while_loop): the body runs where cond holds, until it
/// fails everywhere.
State per_element_while(const std::function<Array(const State&)>& cond, const std::function<State(const State&)>& body,
                        const State& init) {
  return lax::while_loop([cond](const State& s) { return jnp::any(cond(s)); },
                         [cond, body](const State& s) {
                           Array on = cond(s);
                           State next = body(s);
                           for (size_t i = 0; i < next.size(); ++i) next[i] = jnp::where(on, next[i], s[i]);
                           return next;
                         },
                         init);
}

// --- Ei(x) for x > 0: Cephes' rational approximations on (0, 2], (2, 4], ..., (32, 64] and beyond ---
Array expint1(const Array& x) {
  Array f = horner({-5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3,
                    5.541176756393557601232e4, -3.313381331178144034309e5, 1.592627163384945414220e6},
                   x) /
            horner({1.0, -5.250547959112862969197e1, 1.259616186786790571525e3, -1.756549581973534652631e4,
                    1.493062117002725991967e5, -7.294949239640527645655e5, 1.592627163384945429726e6},
                   x);
  return x * f + Array(std::numbers::egamma) + jnp::log(x);
}
/// e^x / x (1 + A(1/x) / (x B(1/x))).
Array expint_k(const std::vector<double>& a, const std::vector<double>& b, const Array& x) {
  Array one = ek(1, x), w = one / x;
  Array f = horner(a, w) / horner(b, w);
  f = w * f + one;
  return jnp::exp(x) * w * f;
}
const std::vector<std::vector<double>> kExpintA = {
    {1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0, 2.755544509187936721172e0,
     -4.409507048701600257171e-1, 4.665623805935891391017e-2, -1.545042679673485262580e-3, 7.059980605299617478514e-5},
    {-1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0, -2.601500427425622944234e-1,
     2.994674694113713763365e-2, -1.038086040188744005513e-3, 4.371064420753005429514e-5, 2.141783679522602903795e-6},
    {-2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1, 2.322724180937565842585e-2,
     2.372880440493179832059e-4, -8.343219561192552752335e-5, 1.363408795605250394881e-5, -3.655412321999253963714e-7,
     1.464941733975961318456e-8, 6.176407863710360207074e-10},
    {-2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2, -1.348315687380940523823e-2,
     1.342775069788636972294e-3, -7.942465637159712264564e-5, 2.644179518984235952241e-6, -4.239473659313765177195e-8},
    {1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1, -3.040034318113248237280e-2,
     1.510082146865190661777e-3, -2.523137095499571377122e-5},
    {-7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1, 3.346107552384193813594e-2,
     -3.076541477344756050249e-3, 1.747119316454907477380e-4, -6.103711682274170530369e-6, 1.218032765428652199087e-7,
     -1.086076102793290233007e-9},
};
const std::vector<std::vector<double>> kExpintB = {
    {1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1, 2.291647179034212017463e-2,
     4.450150439728752875043e-3, 1.727439612206521482874e-4, 3.953167195549672482304e-5},
    {1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2,
     2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4, -4.729848351866523044863e-6,
     2.665195537390710170105e-6},
    {1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1, -1.566542966630792353556e-2,
     2.761106850817352773874e-3, -2.089148012284048449115e-4, 1.708528938807675304186e-5, -4.459311796356686423199e-7,
     1.394634930353847498145e-8, 6.150865933977338354138e-10},
    {1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1, 9.695000254621984627876e-2,
     -1.601745692712991078208e-2, 1.496414899205908021882e-3, -8.462452563778485013756e-5, 2.728938403476726394024e-6,
     -4.239462431819542051337e-8},
    {1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1, -3.337004338674007801307e-2,
     1.560544881127388842819e-3, -2.523137093603234562648e-5},
    {1.0, -1.888802868662308731041e0, 1.066691687211408896850e0, -2.751915982306380647738e-1,
     3.930852688233823569726e-2, -3.414684558602365085394e-3, 1.866844370703555398195e-4, -6.345146083130515357861e-6,
     1.239754287483206878024e-7, -1.086076102793126632978e-9},
};

/// jnp.piecewise: the default first, then each (condition, value) over it, so the last condition that holds wins.
Array piecewise(Array out, const std::vector<std::pair<Array, Array>>& cases) {
  for (const auto& [cond, value] : cases) out = jnp::where(cond, value, out);
  return out;
}

Array expi_pos(const Array& x) {
  // Each piece on its own interval, fed 1 elsewhere so that no piece overflows where it is not chosen.
  auto on = [&](double lo, double hi) { return jnp::logical_and(ek(lo, x) < x, x <= ek(hi, x)); };
  auto fed = [&](const Array& cond) { return jnp::where(cond, x, ek(1, x)); };
  std::vector<std::pair<Array, Array>> cases;
  Array c0 = on(0, 2);
  cases.emplace_back(c0, expint1(fed(c0)));
  for (int i = 1; i < 6; ++i) {
    Array c = on(std::ldexp(1.0, i), std::ldexp(1.0, i + 1));
    cases.emplace_back(c, expint_k(kExpintA[size_t(i - 1)], kExpintB[size_t(i - 1)], fed(c)));
  }
  return piecewise(expint_k(kExpintA[5], kExpintB[5], x), cases);
}

// --- E_n(x): the power series (x <= 1), the continued fraction (x > 1), the asymptotic expansion (n >= 5000) ---
Array expn_series(const Array& x, const Array& n) {
  Array zero = ek(0, x), one = ek(1, x);
  double machep = machep_of(x.dtype());
  // psi(n) = -gamma - log(x) + sum_{i=1}^{n-1} 1/i (JAX's fori_loop(1, n), per element).
  Array psi0 = Array::scalar(-std::numbers::egamma, x.dtype()) - jnp::log(x);
  State ps = per_element_while([n](const State& s) { return s[0] < n; },
                               [one](const State& s) {
                                 return State{s[0] + one, s[1] + one / s[0]};
                               },
                               {jnp::ones_like(x), psi0});
  Array psi = ps[1];
  Array n_is_1 = n == one;
  Array n1 = jnp::where(n_is_1, one + one, n);
  Array z = -x;
  // (xk, yk, pk, ans, t)
  State init{jnp::zeros_like(x), jnp::ones_like(x), one - n, jnp::where(n_is_1, zero, one / (one - n1)),
             jnp::full_like(x, INFINITY)};
  State d =
      per_element_while([x, zero, machep](const State& s) { return jnp::logical_and(x > zero, s[4] > ek(machep, x)); },
                        [z, zero, one](const State& s) {
                          Array xk = s[0] + one, yk = s[1] * (z / xk), pk = s[2] + one;
                          Array ans = s[3] + jnp::where(pk != zero, yk / pk, zero);
                          Array t = jnp::where(ans != zero, jnp::abs(yk / ans), one);
                          return State{xk, yk, pk, ans, t};
                        },
                        init);
  return jnp::power(z, n - one) * psi / jnp::exp(gammaln(n)) - d[3];
}

Array expn_fraction(const Array& x, const Array& n) {
  Array zero = ek(0, x), one = ek(1, x), two = ek(2, x), big = ek(1.44115188075855872e17, x);
  double machep = machep_of(x.dtype());
  // (k, pkm2, qkm2, pkm1, qkm1, ans, t, r)
  State init{jnp::ones_like(x),           jnp::ones_like(x), x, jnp::ones_like(x), x + n, one / (x + n),
             jnp::full_like(x, INFINITY), jnp::zeros_like(x)};
  State d =
      per_element_while([x, zero, machep](const State& s) { return jnp::logical_and(x > zero, s[6] > ek(machep, x)); },
                        [x, n, zero, one, two, big](const State& s) {
                          Array k = s[0] + one;
                          Array odd = jnp::remainder(k, two) == one;
                          Array yk = jnp::where(odd, one, x), xk = jnp::where(odd, n + (k - one) / two, k / two);
                          Array pk = s[3] * yk + s[1] * xk, qk = s[4] * yk + s[2] * xk;
                          Array nz = qk != zero;
                          Array r = jnp::where(nz, pk / qk, s[7]);
                          Array t = jnp::where(nz, jnp::abs((s[5] - r) / r), one);
                          Array ans = jnp::where(nz, r, s[5]);
                          State next{k, s[3], s[4], pk, qk, ans, t, r};
                          Array is_big = jnp::abs(pk) > big;
                          for (size_t i = 1; i <= 4; ++i) next[i] = jnp::where(is_big, next[i] / big, next[i]);
                          return next;
                        },
                        init);
  return d[5] * jnp::exp(-x);
}

Array expn_asymptotic(const Array& x, const Array& n) {
  Array one = ek(1, x), xk = x + n, yk = one / (xk * xk), t = n;
  Array ans = yk * t * (ek(6, x) * x * x - ek(8, x) * t * x + t * t);
  ans = yk * (ans + t * (t - ek(2, x) * x));
  ans = yk * (ans + t);
  return (ans + one) * jnp::exp(-x) / xk;
}

Array expn_impl(const Array& n, const Array& x) {
  Array zero = ek(0, x), one = ek(1, x), two = ek(2, x);
  Array c0 = jnp::logical_or(n < zero, x < zero);
  Array c1 = jnp::logical_and(x == zero, n < two);
  Array c2 = jnp::logical_and(x == zero, n >= two);
  Array c3 = jnp::logical_and(n == zero, x >= zero);
  Array c4 = n >= ek(5000, x);
  Array c5 = x > one;
  Array n1 = jnp::where(n == one, n + n, n);
  // The pieces run on every element (as JAX's vmapped switch); unchosen ones get inputs that end their loops at
  // once (the series on n = 1, x = 0.5; the fraction on x = 2).
  Array series_on = jnp::logical_not(jnp::logical_or(jnp::logical_or(c0, c1), jnp::logical_or(c2, c3)));
  series_on = jnp::logical_and(series_on, jnp::logical_not(jnp::logical_or(c4, c5)));
  Array series = expn_series(jnp::where(series_on, x, ek(0.5, x)), jnp::where(series_on, n, one));
  Array frac_on = c5;  // the last condition: it wins wherever it holds (n < 0 included, as in JAX)
  Array fraction = expn_fraction(jnp::where(frac_on, x, two), jnp::where(frac_on, n, one));
  return piecewise(series, {{c0, jnp::full_like(x, NAN)},
                            {c1, jnp::full_like(x, INFINITY)},
                            {c2, one / n1},
                            {c3, jnp::exp(-x) / x},
                            {c4, expn_asymptotic(x, n)},
                            {c5, fraction}});
}

/// expn with JAX's derivative in x, -expn(n - 1, x); n is not differentiated (JAX's nondiff_argnums: its tangent
/// is ignored).
Array expn_diff(const Array& n, const Array& x) {
  using Pair = std::tuple<Array, Array>;
  return custom_jvp([](const Array& nn, const Array& v) { return expn_impl(nn, v); },
                    [](const Pair& p, const Pair& t) {
                      const auto& [nn, v] = p;
                      Array out = expn_impl(nn, v);
                      const Array& tx = std::get<1>(t);
                      Array tout =
                          tx.valid() ? lax::mul(lax::neg(tx), expn_impl(nn - ek(1, nn), v)) : jnp::zeros_like(out);
                      return std::make_pair(out, tout);
                    },
                    symbolic_zeros)(n, x);
}

Array expi_impl(const Array& x) {
  Array neg = x < ek(0, x);
  Array mx = jnp::where(neg, -x, ek(1, x));
  Array from_neg = -expn_diff(jnp::ones_like(x), mx);
  Array pos = expi_pos(jnp::where(neg, ek(1, x), x));
  return jnp::where(neg, from_neg, pos);
}
}  // namespace

Array expi(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("expi", {x});
  Array r = custom_jvp([](const Array& v) { return expi_impl(v); },
                       [](const std::tuple<Array>& pr, const std::tuple<Array>& t) {
                         const Array& v = std::get<0>(pr);
                         return std::make_pair(expi_impl(v), lax::mul(jnp::exp(v) / v, std::get<0>(t)));
                       })(p.v[0]);
  return scipy_finish(p, r);
}

Array expn(const Array& n, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("expn", {n, x});
  return scipy_finish(p, expn_diff(p.v[0], p.v[1]));
}

Array exp1(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("exp1", {x});
  return scipy_finish(p, expn_diff(jnp::ones_like(p.v[0]), p.v[0]));
}

}  // namespace jitx::scipy::special
