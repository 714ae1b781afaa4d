// jitx::lax special functions (jitx/lax_special.h): igamma/igammac and their a-derivatives, betainc, zeta,
// polygamma, bessel_i0e/i1e, composed from lax ops as XLA decomposes them, each wrapped in custom_jvp with JAX's
// derivative rule (the loops inside are never differentiated through).
#include "jitx/lax_special.h"

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "api/lax_special_internal.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_control.h"
#include "jitx/numpy.h"

namespace jitx::lax {
using detail::ApiScope;
using detail::throw_error;

namespace {

using Arrays = std::vector<Array>;

Array cst(double v, DType d) { return Array::scalar(v, d); }
Array keep(const Array& on, const Array& next, const Array& prev) { return select(on, next, prev); }
Array any_of(const Array& b) { return jnp::any(b); }
Array or3(const Array& a, const Array& b, const Array& c) { return bitwise_or(bitwise_or(a, b), c); }
Array is_nan(const Array& x) { return ne(x, x); }

/// Machine epsilon and largest finite value of the dtype the functions compute in (float32 or float64).
double eps_of(DType d) {
  return d == DType::float64 ? std::numeric_limits<double>::epsilon() : double(std::numeric_limits<float>::epsilon());
}
double max_of(DType d) {
  return d == DType::float64 ? std::numeric_limits<double>::max() : double(std::numeric_limits<float>::max());
}

/// The arguments of a special function checked as jax.lax checks them (floating, one dtype), broadcast to one
/// shape and widened to float32 when they are bfloat16 or float16 (result rounded back by finish).
struct Prepared {
  Arrays args;
  DType dtype;  // the arguments' dtype (the result's)
};
Prepared prepare(std::string_view op, std::initializer_list<std::reference_wrapper<const Array>> in) {
  Prepared p;
  int pos = 0;
  std::vector<Shape> shapes;
  for (const Array& a : in) {
    if (!a.valid()) throw_error<TypeError>(op, "argument {} is an empty (default-constructed) Array", pos);
    if (!is_floating(a.dtype()))
      throw_error<TypeError>(op,
                             "does not accept dtype {} at position {}. Accepted dtypes at position {} are subtypes of "
                             "floating, as jax.lax.{}",
                             dtype_name(a.dtype()), pos, pos, op);
    if (pos > 0 && a.dtype() != p.dtype)
      throw_error<TypeError>(op, "requires arguments to have the same dtypes, got {}, {} (as jax.lax.{})",
                             dtype_name(p.dtype), dtype_name(a.dtype()), op);
    p.dtype = a.dtype();
    shapes.push_back(a.shape());
    ++pos;
  }
  Shape sh = jnp::broadcast_shapes(shapes, op);
  DType work = p.dtype == DType::float64 ? DType::float64 : DType::float32;
  for (const Array& a : in) p.args.push_back(convert_element_type(jnp::broadcast_to(a, sh), work));
  return p;
}
Array finish(const Array& r, DType d) { return r.dtype() == d ? r : convert_element_type(r, d); }

[[noreturn]] void no_gradient(std::string_view op, std::string_view what) {
  throw_error<TypeError>(op, "{} gradient with respect to {} is not supported (as in JAX)", op, what);
}

// ---------------------------------------------------------------------------------------------------------------
// The incomplete gamma function: XLA's series for P and continued fraction for Q, each carrying its derivative in
// a alongside its value. kValue gives P (or Q), kDerivative dP/da, kSample the gamma sample's derivative
// -(dP/da) / (dP/dx).
enum class Mode { kValue, kDerivative, kSample };

Array igamma_series(const Array& ax, const Array& x, const Array& a, const Array& enabled, Mode mode) {
  DType d = a.dtype();
  double eps = eps_of(d);
  Array one = jnp::ones_like(a), zero = jnp::zeros_like(a);
  // enabled, r, c (the term), ans (the sum), dc/da, dans/da
  Arrays init{enabled, a, one, one, zero, zero};
  auto v = while_loop([](const Arrays& s) { return any_of(s[0]); },
                      [&](const Arrays& s) {
                        const Array& on = s[0];
                        Array r = add(s[1], cst(1, d));
                        Array dc = sub(mul(s[4], div(x, r)), div(mul(s[2], x), mul(r, r)));
                        Array dans = add(s[5], dc);
                        Array c = mul(s[2], div(x, r));
                        Array ans = add(s[3], c);
                        Array more =
                            mode == Mode::kValue ? gt(div(c, ans), cst(eps, d)) : gt(abs(div(dc, dans)), cst(eps, d));
                        return Arrays{bitwise_and(on, more), keep(on, r, s[1]),  keep(on, c, s[2]),
                                      keep(on, ans, s[3]),   keep(on, dc, s[4]), keep(on, dans, s[5])};
                      },
                      init);
  const Array &ans = v[3], &dans = v[5];
  if (mode == Mode::kValue) return div(mul(ans, ax), a);
  Array dlogax = sub(log(x), digamma(add(a, cst(1, d))));
  if (mode == Mode::kDerivative) return div(mul(ax, add(mul(ans, dlogax), dans)), a);
  return div(mul(neg(add(dans, mul(ans, dlogax))), x), a);
}

Array igammac_fraction(const Array& ax, const Array& x, const Array& a, const Array& enabled, Mode mode) {
  DType d = a.dtype();
  double eps = eps_of(d);
  Array one = jnp::ones_like(a), zero = jnp::zeros_like(a);
  Array y = sub(cst(1, d), a), z = add(add(x, y), cst(1, d));
  Array pkm1 = add(x, cst(1, d)), qkm1 = mul(z, x);
  Array ans = div(pkm1, qkm1);
  Array dqkm1 = neg(x);
  Array dans = div(neg(mul(ans, dqkm1)), qkm1);
  // enabled, ans, t, y, z, step, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans
  Arrays init{enabled, ans, one, y, z, cst(0, d), pkm1, qkm1, one, x, zero, zero, zero, dqkm1, dans};
  auto v = while_loop(
      [&](const Arrays& s) { return bitwise_and(lt(s[5], cst(2000, d)), any_of(s[0])); },  // at most 2000 steps
      [&](const Arrays& s) {
        const Array& on = s[0];
        Array c = add(s[5], cst(1, d));
        Array yy = add(s[3], cst(1, d)), zz = add(s[4], cst(2, d));
        Array yc = mul(yy, c);
        Array pk = sub(mul(s[6], zz), mul(s[8], yc));
        Array qk = sub(mul(s[7], zz), mul(s[9], yc));
        Array nz = ne(qk, cst(0, d));
        Array safe_qk = select(nz, qk, one);
        Array r = div(pk, safe_qk);
        Array t = keep(nz, abs(div(sub(s[1], r), r)), one);
        Array ans2 = keep(nz, r, s[1]);
        Array dpk = add(sub(sub(mul(s[12], zz), s[6]), mul(s[10], yc)), mul(s[8], c));
        Array dqk = add(sub(sub(mul(s[13], zz), s[7]), mul(s[11], yc)), mul(s[9], c));
        Array dans2 = keep(nz, div(sub(dpk, mul(ans2, dqk)), safe_qk), s[14]);
        Array change = keep(nz, abs(sub(dans2, s[14])), one);
        // The recurrences grow without bound; their ratio is what matters, so all are rescaled together.
        Array big = gt(abs(pk), cst(1 / eps, d));
        auto sc = [&](const Array& u) { return keep(big, mul(u, cst(eps, d)), u); };
        Array more = mode == Mode::kValue ? gt(t, cst(eps, d)) : gt(change, cst(eps, d));
        return Arrays{bitwise_and(on, more),    keep(on, ans2, s[1]),       keep(on, t, s[2]),
                      keep(on, yy, s[3]),       keep(on, zz, s[4]),         c,
                      keep(on, sc(pk), s[6]),   keep(on, sc(qk), s[7]),     keep(on, sc(s[6]), s[8]),
                      keep(on, sc(s[7]), s[9]), keep(on, sc(s[12]), s[10]), keep(on, sc(s[13]), s[11]),
                      keep(on, sc(dpk), s[12]), keep(on, sc(dqk), s[13]),   keep(on, dans2, s[14])};
      },
      init);
  const Array &ans_out = v[1], &dans_out = v[14];
  if (mode == Mode::kValue) return mul(ans_out, ax);
  Array dlogax = sub(log(x), digamma(a));
  if (mode == Mode::kDerivative) return mul(ax, add(mul(ans_out, dlogax), dans_out));
  return neg(mul(add(dans_out, mul(ans_out, dlogax)), x));
}

/// x^a e^-x / Gamma(a) (the common factor) and whether its log underflows the dtype.
std::pair<Array, Array> igamma_prefactor(const Array& a, const Array& x) {
  DType d = a.dtype();
  Array log_ax = sub(sub(mul(a, log(x)), x), lgamma(a));
  return {exp(log_ax), lt(log_ax, cst(-std::log(max_of(d)), d))};
}

Array igamma_value(const Array& a, const Array& x) {
  DType d = a.dtype();
  Array x_inf = eq(x, cst(INFINITY, d)), x_zero = eq(x, cst(0, d));
  Array domain = bitwise_or(or3(lt(x, cst(0, d)), lt(a, cst(0, d)), bitwise_and(eq(a, cst(0, d)), x_zero)),
                            bitwise_or(is_nan(a), is_nan(x)));
  Array use_fraction = bitwise_and(ge(x, cst(1, d)), gt(x, a));
  auto [ax, underflow] = igamma_prefactor(a, x);
  Array enabled = bitwise_not(bitwise_or(or3(x_zero, domain, underflow), x_inf));
  Array out =
      select(use_fraction, sub(cst(1, d), igammac_fraction(ax, x, a, bitwise_and(enabled, use_fraction), Mode::kValue)),
             igamma_series(ax, x, a, bitwise_and(enabled, bitwise_not(use_fraction)), Mode::kValue));
  out = select(x_zero, jnp::zeros_like(a), out);
  out = select(x_inf, jnp::ones_like(a), out);
  return select(domain, jnp::full_like(a, NAN), out);
}

Array igammac_value(const Array& a, const Array& x) {
  DType d = a.dtype();
  Array a_zero = eq(a, cst(0, d)), x_inf = eq(x, cst(INFINITY, d));
  Array domain = bitwise_or(or3(lt(x, cst(0, d)), lt(a, cst(0, d)), bitwise_and(a_zero, eq(x, cst(0, d)))),
                            bitwise_or(is_nan(a), is_nan(x)));
  Array use_series = bitwise_or(lt(x, cst(1, d)), lt(x, a));
  auto [ax, underflow] = igamma_prefactor(a, x);
  Array enabled = bitwise_not(bitwise_or(or3(domain, underflow, x_inf), a_zero));
  Array out =
      select(use_series, sub(cst(1, d), igamma_series(ax, x, a, bitwise_and(enabled, use_series), Mode::kValue)),
             igammac_fraction(ax, x, a, bitwise_and(enabled, bitwise_not(use_series)), Mode::kValue));
  out = select(bitwise_or(x_inf, a_zero), jnp::zeros_like(out), out);
  return select(domain, jnp::full_like(a, NAN), out);
}

/// dP/da (kDerivative) or the gamma sample's derivative (kSample).
Array igamma_derivative(const Array& a, const Array& x, Mode mode) {
  DType d = a.dtype();
  Array nan = bitwise_or(is_nan(a), is_nan(x));
  Array x_zero = eq(x, cst(0, d));
  Array domain = bitwise_or(lt(x, cst(0, d)), le(a, cst(0, d)));
  Array use_fraction = bitwise_and(gt(x, cst(1, d)), gt(x, a));
  auto [ax, underflow] = igamma_prefactor(a, x);
  Array enabled = bitwise_not(bitwise_or(or3(x_zero, domain, underflow), nan));
  Array out = select(use_fraction, neg(igammac_fraction(ax, x, a, bitwise_and(enabled, use_fraction), mode)),
                     igamma_series(ax, x, a, bitwise_and(enabled, bitwise_not(use_fraction)), mode));
  out = select(x_zero, jnp::zeros_like(out), out);
  return select(bitwise_or(domain, nan), jnp::full_like(a, NAN), out);
}

/// d/dx P(a, x) = x^(a-1) e^-x / Gamma(a).
Array igamma_density(const Array& a, const Array& x) {
  DType d = a.dtype();
  return exp(sub(add(neg(x), mul(sub(a, cst(1, d)), log(x))), lgamma(a)));
}

/// f(a, x) with tangent da * df/da + dx * df/dx; a missing rule (nullptr-like) throws when its tangent is used.
template <class F, class Da, class Dx>
Array binary_with_jvp(F f, Da da, Dx dx, const Array& a, const Array& x) {
  auto rule = [f, da, dx](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
    const auto& [av, xv] = p;
    const auto& [ta, tx] = t;
    Array out = f(av, xv);
    Array tout = jnp::zeros_like(out);
    if (ta.valid()) tout = add(tout, mul(ta, da(av, xv, out)));
    if (tx.valid()) tout = add(tout, mul(tx, dx(av, xv, out)));
    return std::make_pair(out, tout);
  };
  return custom_jvp(f, rule, symbolic_zeros)(a, x);
}

// ---------------------------------------------------------------------------------------------------------------
// betainc: the modified Lentz evaluation of DLMF 8.17.22's continued fraction (every element iterates until all
// have converged, at most 200 steps in float32 and 600 in float64).
Array betainc_value(const Array& a_in, const Array& b_in, const Array& x_in) {
  DType d = a_in.dtype();
  double small = eps_of(d) / 2, threshold = eps_of(d) / 2;
  double steps = d == DType::float32 ? 200 : 600;
  Array zero = cst(0, d), one = cst(1, d), two = cst(2, d), inf = cst(INFINITY, d);
  Array a_zero = bitwise_or(eq(a_in, zero), eq(b_in, inf));
  Array b_zero = bitwise_or(eq(b_in, zero), eq(a_in, inf));
  Array x_zero = eq(x_in, zero), x_one = eq(x_in, one);
  Array result_zero = bitwise_or(bitwise_and(b_zero, bitwise_not(x_one)), bitwise_and(a_zero, x_zero));
  Array result_one = bitwise_or(bitwise_and(a_zero, bitwise_not(x_zero)), bitwise_and(b_zero, x_one));
  Array result_nan = bitwise_or(or3(lt(a_in, zero), lt(b_in, zero), lt(x_in, zero)), gt(x_in, one));
  result_nan =
      bitwise_or(result_nan, bitwise_or(bitwise_and(a_zero, b_zero), or3(is_nan(a_in), is_nan(b_in), is_nan(x_in))));
  // The fraction converges fast for x < (a + 1) / (a + b + 2); elsewhere I_x(a, b) = 1 - I_{1-x}(b, a).
  Array direct = lt(x_in, div(add(a_in, one), add(add(a_in, b_in), two)));
  Array a = select(direct, a_in, b_in), b = select(direct, b_in, a_in), x = select(direct, x_in, sub(one, x_in));

  auto numerator = [&](const Array& it) {  // it: the step (a float scalar)
    Array m = floor(div(sub(it, one), two));
    Array two_m = mul(two, m);
    Array first_even = div(mul(neg(add(a, b)), x), add(a, one));  // m == 0 (stable when a is tiny)
    Array even = div(mul(mul(neg(add(a, m)), add(add(a, b), m)), x), mul(add(a, two_m), add(add(a, two_m), one)));
    even = select(jnp::broadcast_to(eq(m, zero), a.shape()), first_even, even);
    Array odd = div(mul(mul(m, sub(b, m)), x), mul(sub(add(a, two_m), one), add(a, two_m)));
    Array is_even = eq(sub(it, mul(two, floor(div(it, two)))), zero);
    Array num = select(jnp::broadcast_to(is_even, a.shape()), even, odd);
    return select(jnp::broadcast_to(eq(it, one), a.shape()), jnp::ones_like(x), num);
  };
  Array tiny_c = jnp::full_like(x, small);
  Array h0 = tiny_c;  // the zeroth partial denominator is 0, replaced by `small`
  // step, unconverged, c, d, h
  Arrays init{cst(1, d), Array::scalar(true, DType::bool_), h0, jnp::zeros_like(x), h0};
  auto v = while_loop([&](const Arrays& s) { return bitwise_and(lt(s[0], cst(steps, d)), s[1]); },
                      [&](const Arrays& s) {
                        Array pn = numerator(s[0]);  // partial denominators are 1 after the zeroth
                        Array c = add(one, div(pn, s[2]));
                        c = select(lt(abs(c), tiny_c), tiny_c, c);
                        Array dd = add(one, mul(pn, s[3]));
                        dd = div(one, select(lt(abs(dd), tiny_c), tiny_c, dd));
                        Array delta = mul(c, dd);
                        Array more = any_of(ge(abs(sub(delta, one)), cst(threshold, d)));
                        return Arrays{add(s[0], one), more, c, dd, mul(s[4], delta)};
                      },
                      init);
  // a * Gamma(a) -> 1 as a -> 0+, used below twice the smallest normal to avoid dividing by zero.
  double very_small =
      2 * (d == DType::float64 ? std::numeric_limits<double>::min() : double(std::numeric_limits<float>::min()));
  Array lbeta_small_a = sub(lgamma(b), lgamma(add(a, b)));
  Array lbeta = add(lgamma(a), lbeta_small_a);
  Array log1m_x = log1p(neg(x));
  Array factor = select(lt(a, cst(very_small, d)), exp(sub(mul(log1m_x, b), lbeta_small_a)),
                        div(exp(sub(add(mul(log(x), a), mul(log1m_x, b)), lbeta)), a));
  Array result = mul(v[4], factor);
  result = select(direct, result, sub(one, result));
  result = select(result_zero, jnp::zeros_like(result), result);
  result = select(result_one, jnp::ones_like(result), result);
  return select(result_nan, jnp::full_like(result, NAN), result);
}

// ---------------------------------------------------------------------------------------------------------------
// zeta: the first ten terms summed, then Euler-Maclaurin at q + 10 with twelve Bernoulli corrections (Horner's
// rule over (x + 2j - 3)(x + 2j - 2) / (q + 10)^2). kZetaCoeffs[j - 1] = (2j)! / B_2j.
constexpr std::array<double, 12> kZetaCoeffs{12.0,
                                             -720.0,
                                             30240.0,
                                             -1209600.0,
                                             47900160.0,
                                             -1.8924375803183791606e9,
                                             7.47242496e10,
                                             -2.950130727918164224e12,
                                             1.1646782814350067249e14,
                                             -4.5979787224074726105e15,
                                             1.8152105401943546773e17,
                                             -7.1661652561756670113e18};

Array zeta_value(const Array& x, const Array& q) {
  DType d = x.dtype();
  Array one = cst(1, d), minus_x = neg(x);
  Array initial = pow(q, minus_x);
  Array term = q;
  for (int i = 0; i < 9; ++i) {
    term = add(term, one);
    initial = add(initial, pow(term, minus_x));
  }
  Array a = add(term, one);
  Array neg_power = pow(a, minus_x);
  Array s = add(initial, div(mul(neg_power, a), sub(x, one)));
  Array inv_a2 = div(one, mul(a, a));
  Array horner = jnp::zeros_like(x);
  for (int j = 12; j >= 2; --j) {
    Array factor = mul(add(x, cst(2.0 * j - 3, d)), add(x, cst(2.0 * j - 2, d)));
    horner = mul(mul(factor, inv_a2), add(horner, cst(1 / kZetaCoeffs[size_t(j - 1)], d)));
  }
  s = add(s, mul(neg_power, add(cst(0.5, d), mul(div(x, a), add(cst(1 / kZetaCoeffs[0], d), horner)))));
  // The first terms alone where the rest is below their rounding.
  Array out = select(lt(abs(neg_power), mul(abs(initial), cst(eps_of(d), d))), initial, s);
  out = select(lt(x, one), jnp::full_like(out, NAN), out);
  Array q_le_zero = le(q, cst(0, d));
  Array x_not_int = ne(x, floor(x));
  out = select(bitwise_and(q_le_zero, x_not_int), jnp::full_like(out, NAN), out);
  // At the poles (q = 0, -1, ...) the sum is +inf for even x and undefined for odd x.
  Array at_pole = bitwise_and(q_le_zero, eq(q, floor(q)));
  Array x_even = bitwise_and(eq(rem(x, cst(2, d)), cst(0, d)), bitwise_not(x_not_int));
  out = select(at_pole, select(x_even, jnp::full_like(out, INFINITY), jnp::full_like(out, NAN)), out);
  return select(eq(x, one), jnp::full_like(out, INFINITY), out);
}

Array polygamma_value(const Array& m, const Array& x) {
  DType d = x.dtype();
  Array m1 = add(m, cst(1, d));
  Array sign = sub(cst(1, d), mul(cst(2, d), rem(m1, cst(2, d))));  // (-1)^(m+1)
  Array out = mul(mul(sign, exp(lgamma(m1))), zeta_value(m1, x));
  out = select(eq(m, cst(0, d)), digamma(x), out);
  return select(bitwise_or(ne(m, floor(m)), lt(m, cst(0, d))), jnp::full_like(out, NAN), out);
}

Array polygamma_jvp(const Array& m, const Array& x) {
  return custom_jvp(
      polygamma_value,
      [](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
        const auto& [mv, xv] = p;
        if (std::get<0>(t).valid()) no_gradient("polygamma", "m");
        Array out = polygamma_value(mv, xv);
        const Array& tx = std::get<1>(t);
        Array tout = tx.valid() ? mul(tx, polygamma_jvp(add(mv, cst(1, mv.dtype())), xv)) : jnp::zeros_like(out);
        return std::make_pair(out, tout);
      },
      symbolic_zeros)(m, x);
}

// ---------------------------------------------------------------------------------------------------------------
// Bessel functions: Chebyshev series (Clenshaw's recurrence, highest order first) in y/2 - 2 on [0, 8] and in
// 32/y - 2 above, y = |x|. The coefficients are the Chebyshev expansions of i0e(y), i1e(y)/y, sqrt(y) i0e(y) and
// sqrt(y) i1e(y), computed to 50 digits (float32 uses the trailing, low-order ones).
constexpr std::array<double, 30> kI0eSmall{
    -4.4153416464793394e-18, 3.3307945188222381e-17, -2.4312798465479547e-16, 1.715391285555133e-15,
    -1.1685332877993452e-14, 7.6761854986049356e-14, -4.8564467831119295e-13, 2.9550526631296398e-12,
    -1.7268262914415557e-11, 9.6758090353732369e-11, -5.1897956016352629e-10, 2.6598237246823867e-9,
    -1.300025009986248e-8,   6.0469950225419189e-8,  -2.6707938539406117e-7,  1.1173875391201037e-6,
    -4.4167383584587506e-6,  1.6448448070728897e-5,  -5.7541950100821037e-5,  1.8850288509584166e-4,
    -5.7637557453858237e-4,  1.6394756169413358e-3,  -4.3243099950505759e-3,  1.0546460394594998e-2,
    -2.3737414805899469e-2,  4.9305284239670708e-2,  -9.4901097048047644e-2,  1.7162090152220878e-1,
    -3.046826723431984e-1,   6.7679527440947608e-1};
constexpr std::array<double, 30> kI1eSmall{
    -3.5415817725421362e-19, 2.7779141127610464e-18, -2.1114212143581661e-17, 1.5536319577362005e-16,
    -1.1055969477353863e-15, 7.6006842947354069e-15, -5.0421855047279117e-14, 3.2237933659455747e-13,
    -1.9839743977649437e-12, 1.1736186298890902e-11, -6.6634897235020277e-11, 3.625590281552117e-10,
    -1.8872497517228293e-9,  9.3815373864957718e-9,  -4.4450591287963281e-8,  2.0032947535521353e-7,
    -8.5687202646954547e-7,  3.4702513081376785e-6,  -1.3273163656039436e-5,  4.7815651075500542e-5,
    -1.6176081582589675e-4,  5.1228595616857577e-4,  -1.5135724506312531e-3,  4.1564229443128882e-3,
    -1.0564084894626198e-2,  2.4726449030626517e-2,  -5.2945981208094991e-2,  1.026436586898471e-1,
    -1.7641651835783406e-1,  2.5258718644363365e-1};
constexpr std::array<double, 27> kI0eLarge{
    1.1936508908459821e-18,  9.9214754121736986e-19,  -7.233180487874754e-18,  -4.8305044859441821e-18,
    4.46562142029676e-17,    3.4612228676974611e-17,  -2.8276239805165835e-16, -3.4254856196772191e-16,
    1.7725601330565264e-15,  3.8116806693526224e-15,  -9.5548466988283076e-15, -4.1505693472872221e-14,
    1.5400862175214098e-14,  3.8527783827421427e-13,  7.1801244513836662e-13,  -1.7941785315068061e-12,
    -1.3215811840447713e-11, -3.1499165279632414e-11, 1.1889147107846438e-11,  4.9406023882249696e-10,
    3.3962320257083863e-9,   2.2666689904981781e-8,   2.0489185894690637e-7,   2.8913705208347565e-6,
    6.889758346916824e-5,    3.3691164782556941e-3,   8.0449041101410883e-1};
constexpr std::array<double, 27> kI1eLarge{
    -1.242193275194891e-18,  -9.3141788673268834e-19, 7.5172963108421048e-18,  4.4143483230717079e-18,
    -4.6503053684893583e-17, -3.209525921993424e-17,  2.9626289976459501e-16,  3.3082023109209283e-16,
    -1.8803547755107824e-15, -3.8144030724370078e-15, 1.0420276984128803e-14,  4.2724400167119514e-14,
    -2.1015418427726643e-14, -4.0835511110921973e-13, -7.1985517762459085e-13, 2.0356285441470895e-12,
    1.4125807436613781e-11,  3.2526035830154882e-11,  -1.8974958123505412e-11, -5.5897434621965838e-10,
    -3.835380385964237e-9,   -2.6314688468895195e-8,  -2.5122362378702089e-7,  -3.8825648088776904e-6,
    -1.1058893876262372e-4,  -9.7610974913614684e-3,  7.7857623501828012e-1};

/// sum' c_k T_k(t / 2) by Clenshaw's recurrence, the coefficients highest order first; float32 skips the leading
/// ones below its precision (those after `f32_terms` from the end are kept).
Array chebyshev(const Array& t, std::span<const double> coeffs, size_t f32_terms) {
  DType d = t.dtype();
  size_t start = d == DType::float64 ? 0 : coeffs.size() - f32_terms;
  Array b0 = jnp::zeros_like(t), b1 = b0, b2 = b0;
  for (size_t i = start; i < coeffs.size(); ++i) {
    b2 = b1;
    b1 = b0;
    b0 = add(sub(mul(t, b1), b2), cst(coeffs[i], d));
  }
  return mul(cst(0.5, d), sub(b0, b2));
}

/// i0e (order 0) or i1e (order 1) of x.
Array bessel_value(const Array& x, int order) {
  DType d = x.dtype();
  Array y = abs(x);
  Array small_t = sub(mul(cst(0.5, d), y), cst(2, d));
  Array large_t = sub(div(cst(32, d), y), cst(2, d));
  Array small = order == 0 ? chebyshev(small_t, kI0eSmall, 19) : mul(y, chebyshev(small_t, kI1eSmall, 18));
  Array large = div(chebyshev(large_t, order == 0 ? std::span<const double>(kI0eLarge) : kI1eLarge, 7), sqrt(y));
  Array out = select(le(y, cst(8, d)), small, large);
  return order == 0 ? out : mul(sign(x), out);
}

Array bessel_i0e_jvp(const Array& x);
Array bessel_i1e_jvp(const Array& x) {
  return custom_jvp([](const Array& v) { return bessel_value(v, 1); },
                    [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                      const Array& xv = std::get<0>(p);
                      DType d = xv.dtype();
                      Array y = bessel_value(xv, 1);
                      // d/dx i1e = i0e(x) - i1e(x) (sign(x) + 1/x), 1/2 near 0.
                      double e = eps_of(d);
                      Array not_tiny = gt(abs(xv), cst(e, d));
                      Array safe_x = select(not_tiny, xv, jnp::full_like(xv, e));
                      Array dy = sub(bessel_i0e_jvp(safe_x), mul(y, add(sign(safe_x), div(cst(1, d), safe_x))));
                      dy = select(not_tiny, dy, jnp::full_like(xv, 0.5));
                      return std::make_pair(y, mul(std::get<0>(t), dy));
                    })(x);
}
Array bessel_i0e_jvp(const Array& x) {
  return custom_jvp([](const Array& v) { return bessel_value(v, 0); },
                    [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                      const Array& xv = std::get<0>(p);
                      Array y = bessel_value(xv, 0);
                      // d/dx i0e = i1e(x) - sign(x) i0e(x)
                      return std::make_pair(y, mul(std::get<0>(t), sub(bessel_i1e_jvp(xv), mul(sign(xv), y))));
                    })(x);
}

Array igamma_grad_a_jvp(const Array& a, const Array& x, Mode mode, std::string_view op) {
  auto f = [mode](const Array& av, const Array& xv) { return igamma_derivative(av, xv, mode); };
  std::string name(op);
  auto fail = [name](const Array&, const Array&, const Array&) -> Array {
    throw_error<TypeError>(name, "{} is not differentiable (as in JAX: it has no derivative rule)", name);
  };
  return binary_with_jvp(f, fail, fail, a, x);
}

Array igamma_jvp(const Array& a, const Array& x, bool upper) {
  double s = upper ? -1 : 1;
  auto f = [upper](const Array& av, const Array& xv) { return upper ? igammac_value(av, xv) : igamma_value(av, xv); };
  auto da = [s](const Array& av, const Array& xv, const Array&) {
    return mul(cst(s, av.dtype()), igamma_grad_a_jvp(av, xv, Mode::kDerivative, "igamma_grad_a"));
  };
  auto dx = [s](const Array& av, const Array& xv, const Array&) {
    return mul(cst(s, av.dtype()), igamma_density(av, xv));
  };
  return binary_with_jvp(f, da, dx, a, x);
}

}  // namespace

Array special_internal::zeta_differentiable(const Array& x, const Array& q) { return zeta_value(x, q); }

Array igamma(const Array& a, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("igamma", {a, x});
  return finish(igamma_jvp(p.args[0], p.args[1], false), p.dtype);
}

Array igammac(const Array& a, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("igammac", {a, x});
  return finish(igamma_jvp(p.args[0], p.args[1], true), p.dtype);
}

Array igamma_grad_a(const Array& a, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("igamma_grad_a", {a, x});
  return finish(igamma_grad_a_jvp(p.args[0], p.args[1], Mode::kDerivative, "igamma_grad_a"), p.dtype);
}

Array random_gamma_grad(const Array& a, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("random_gamma_grad", {a, x});
  return finish(igamma_grad_a_jvp(p.args[0], p.args[1], Mode::kSample, "random_gamma_grad"), p.dtype);
}

Array betainc(const Array& a, const Array& b, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("betainc", {a, b, x});
  auto rule = [](const std::tuple<Array, Array, Array>& pr, const std::tuple<Array, Array, Array>& t) {
    const auto& [av, bv, xv] = pr;
    if (std::get<0>(t).valid()) no_gradient("betainc", "a");
    if (std::get<1>(t).valid()) no_gradient("betainc", "b");
    Array out = betainc_value(av, bv, xv);
    const Array& tx = std::get<2>(t);
    if (!tx.valid()) return std::make_pair(out, jnp::zeros_like(out));
    DType d = av.dtype();
    // d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)
    Array lbeta = sub(add(lgamma(av), lgamma(bv)), lgamma(add(av, bv)));
    Array dx = exp(sub(add(mul(sub(bv, cst(1, d)), log1p(neg(xv))), mul(sub(av, cst(1, d)), log(xv))), lbeta));
    return std::make_pair(out, mul(tx, dx));
  };
  return finish(custom_jvp(betainc_value, rule, symbolic_zeros)(p.args[0], p.args[1], p.args[2]), p.dtype);
}

Array zeta(const Array& x, const Array& q, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("zeta", {x, q});
  auto fail = [](const Array&, const Array&, const Array&) -> Array {
    throw_error<TypeError>("zeta", "zeta is not differentiable (as in JAX: it has no derivative rule)");
  };
  return finish(binary_with_jvp(zeta_value, fail, fail, p.args[0], p.args[1]), p.dtype);
}

Array polygamma(const Array& m, const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("polygamma", {m, x});
  return finish(polygamma_jvp(p.args[0], p.args[1]), p.dtype);
}

Array bessel_i0e(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("bessel_i0e", {x});
  return finish(bessel_i0e_jvp(p.args[0]), p.dtype);
}

Array bessel_i1e(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = prepare("bessel_i1e", {x});
  return finish(bessel_i1e_jvp(p.args[0]), p.dtype);
}

}  // namespace jitx::lax
