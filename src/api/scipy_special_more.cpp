// jitx::scipy::special (jitx/scipy_special.h): erfcx, dawsn, spence, bernoulli, sici and owens_t, each composed
// as jax.scipy.special composes it (Cephes' rational approximations, JAX's series and quadrature, its piecewise
// and select structure and dtypes), with JAX's derivative rules.
#include <cfloat>
#include <cmath>
#include <numbers>
#include <vector>

#include "api/scipy_util.h"
#include "core/errors.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_functional.h"
#include "jitx/numpy_more.h"
#include "jitx/numpy_stats.h"
#include "jitx/scipy_special.h"

namespace jitx::scipy::special {
using detail::ApiScope;
using detail::throw_error;
using scipy_util::horner;
using scipy_util::scipy_finish;
using scipy_util::scipy_promote;

namespace {
constexpr double kPi = std::numbers::pi;
/// A strong constant of x's dtype (JAX's _lax_const).
Array sm_const(double v, const Array& x) { return Array::scalar(v, x.dtype()); }

// --- erfcx ---
Array erfcx_impl(const Array& x, int nterms) {
  // np.sqrt(np.log(finfo(dtype).max)), in the dtype's own arithmetic.
  double threshold =
      x.dtype() == DType::float64 ? std::sqrt(std::log(DBL_MAX)) : static_cast<double>(std::sqrt(std::log(FLT_MAX)));
  Array large = x > sm_const(threshold, x);
  Array safe_x = jnp::where(large, sm_const(1, x), x);
  Array direct = jnp::exp(jnp::square(safe_x)) * lax::erfc(safe_x);
  static const std::vector<double> coeffs = {7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625,
                                             -1.875,        .75,           -.5,        1.};
  Array t = sm_const(1, x) / jnp::square(x);
  Array p = horner(std::vector<double>(coeffs.end() - nterms, coeffs.end()), t);
  Array asymp = p / (x * sm_const(std::sqrt(kPi), x));
  return jnp::where(large, asymp, direct);
}
Array erfcx_dtype(const Array& x) {
  if (x.dtype() == DType::float64) return erfcx_impl(x, 9);
  if (x.dtype() == DType::float32) return erfcx_impl(x, 5);
  return jnp::astype(erfcx_impl(jnp::astype(x, DType::float32), 5), x.dtype());
}

// --- dawsn ---
const std::vector<double> kDawsnAN = {
    1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8,  9.53151741254484363489e-7,
    3.07828309874913200438e-6,  3.52513368520288738649e-4,  -8.50149846724410912031e-4, 4.22618223005546594270e-2,
    -9.17480371773452345351e-2, 9.99999999999999994612e-1};
const std::vector<double> kDawsnAD = {2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8,
                                      1.27258478273186970203e-6,  2.32490249820789513991e-5, 3.25524741826057911661e-4,
                                      3.48805814657162590916e-3,  2.79448531198828973716e-2, 1.58874241960120565368e-1,
                                      5.74918629489320327824e-1,  1.00000000000000000539e0};
const std::vector<double> kDawsnBN = {
    5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2, -2.18711255142039025206e-2,
    3.66207612329569181322e-3, -4.23209114460388756528e-4, 3.59641304793896631888e-5, -2.14640351719968974225e-6,
    9.10010780076391431042e-8, -2.40274520828250956942e-9, 3.59233385440928410398e-11};
const std::vector<double> kDawsnBD = {
    1.00000000000000000000e0,  -6.31839869873368190192e-1, 2.36706788228248691528e-1, -5.31806367003223277662e-2,
    8.48041718586295374409e-3, -9.47996768486665330168e-4, 7.81025592944552338085e-5, -4.55875153252442634831e-6,
    1.89100358111421846170e-7, -4.91324691331920606875e-9, 7.18466403235734541950e-11};
const std::vector<double> kDawsnCN = {-5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1,
                                      1.64837047825189632310e-2, -4.86827613020462700845e-4};
const std::vector<double> kDawsnCD = {1.00000000000000000000e0,  -2.69820057197544900361e0,
                                      1.73270799045947845857e0,  -3.93708582281939493482e-1,
                                      3.44278924041233391079e-2, -9.73655226040941223894e-4};

Array dawsn_impl(const Array& x) {
  Array sign = jnp::sign(x), ax = jnp::abs(x);
  Array one = sm_const(1, x), half = sm_const(0.5, x), lo = sm_const(3.25, x), hi = sm_const(6.25, x);
  Array t = one / jnp::square(ax);
  Array r1 = ax < lo, r2 = jnp::logical_and(ax >= lo, ax < hi), r3 = ax >= hi;
  Array ax1 = jnp::where(r1, ax, one), ax1sq = jnp::square(ax1);
  Array v1 = ax1 * horner(kDawsnAN, ax1sq) / horner(kDawsnAD, ax1sq);
  Array t2 = jnp::where(r2, t, one), ax2 = jnp::where(r2, ax, one);
  Array v2 = (half / ax2) * (one + t2 * horner(kDawsnBN, t2) / horner(kDawsnBD, t2));
  Array t3 = jnp::where(r3, t, one), ax3 = jnp::where(r3, ax, one);
  Array v3 = (half / ax3) * (one + t3 * horner(kDawsnCN, t3) / horner(kDawsnCD, t3));
  return sign * jnp::where(r1, v1, jnp::where(ax < hi, v2, v3));
}
Array dawsn_dtype(const Array& x) {
  if (x.dtype() == DType::float64 || x.dtype() == DType::float32) return dawsn_impl(x);
  return jnp::astype(dawsn_impl(jnp::astype(x, DType::float32)), x.dtype());
}

// --- spence ---
Array spence_poly(const Array& w) {
  static const std::vector<double> a = {4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
                                        8.79691311754530315341E-1, 2.71149851196553469920E0,  4.25697156008121755724E0,
                                        3.29771340985225106936E0,  1.00000000000000000126E0};
  static const std::vector<double> b = {6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
                                        1.41172597751831069617E0,  3.63800533345137075418E0,  5.03278880143316990390E0,
                                        3.54771340985225096217E0,  9.99999999999999998740E-1};
  return -w * horner(a, w) / horner(b, w);
}
Array spence_calc(const Array& x0) {
  Array x2 = x0 > Array(2.0);
  Array x = jnp::piecewise(x0, {x2}, {[](const Array& v) { return Array(1.0) / v; }, [](const Array& v) { return v; }});
  Array x15 = x > Array(1.5), x05 = x < Array(0.5);
  x2 = jnp::logical_or(x2, x15);
  Array w = jnp::piecewise(x, {x15, x05},
                           {[](const Array& v) { return Array(1.0) / v - Array(1.0); },
                            [](const Array& v) { return -v; }, [](const Array& v) { return v - Array(1.0); }});
  Array y = spence_poly(w);
  Array y1 = Array(kPi * kPi / 6.0) - jnp::log(x) * jnp::log(Array(1.0) - x) - y;
  y = jnp::where(x05, y1, y);
  Array y2 = Array(-0.5) * jnp::square(jnp::log(x)) - y;
  return jnp::where(x2, y2, y);
}

// --- sici ---
std::pair<Array, Array> sici_series(const Array& x) {
  static const std::vector<double> sn = {-8.39167827910303881427E-11, 4.62591714427012837309E-8,
                                         -9.75759303843632795789E-6,  9.76945438170435310816E-4,
                                         -4.13470316229406538752E-2,  1.00000000000000000302E0};
  static const std::vector<double> sd = {2.03269266195951942049E-12, 1.27997891179943299903E-9,
                                         4.41827842801218905784E-7,  9.96412122043875552487E-5,
                                         1.42085239326149893930E-2,  9.99999999999999996984E-1};
  static const std::vector<double> cn = {2.02524002389102268789E-11, -1.35249504915790756375E-8,
                                         3.59325051419993077021E-6,  -4.74007206873407909465E-4,
                                         2.89159652607555242092E-2,  -1.00000000000000000080E0};
  static const std::vector<double> cd = {4.07746040061880559506E-12, 3.06780997581887812692E-9,
                                         1.23210355685883423679E-6,  3.17442024775032769882E-4,
                                         5.10028056236446052392E-2,  4.00000000000000000080E0};
  Array t = x * x;
  Array si = (x * horner(sn, t)) / horner(sd, t);
  Array ci = Array(std::numbers::egamma) + jnp::log(x) + t * horner(cn, t) / horner(cd, t);
  Array zero = x == Array(0.0);
  return {jnp::where(zero, Array(0.0), si), jnp::where(zero, Array(-INFINITY), ci)};
}
std::pair<Array, Array> sici_asympt(const Array& x) {
  static const std::vector<double> fn4 = {
      4.23612862892216586994E0,  5.45937717161812843388E0,  1.62083287701538329132E0, 1.67006611831323023771E-1,
      6.81020132472518137426E-3, 1.08936580650328664411E-4, 5.48900223421373614008E-7};
  static const std::vector<double> fd4 = {1,
                                          8.16496634205391016773E0,
                                          7.30828822505564552187E0,
                                          1.86792257950184183883E0,
                                          1.78792052963149907262E-1,
                                          7.01710668322789753610E-3,
                                          1.10034357153915731354E-4,
                                          5.48900252756255700982E-7};
  static const std::vector<double> gn4 = {
      8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1, 7.48527737628469092119E-2,
      5.38868681462177273157E-3, 1.61999794598934024525E-4, 1.97963874140963632189E-6, 7.82579040744090311069E-9};
  static const std::vector<double> gd4 = {1,
                                          1.64402202413355338886E0,
                                          6.66296701268987968381E-1,
                                          9.88771761277688796203E-2,
                                          6.22396345441768420760E-3,
                                          1.73221081474177119497E-4,
                                          2.02659182086343991969E-6,
                                          7.82579218933534490868E-9};
  static const std::vector<double> fn8 = {
      4.55880873470465315206E-1, 7.13715274100146711374E-1,  1.60300158222319456320E-1,
      1.16064229408124407915E-2, 3.49556442447859055605E-4,  4.86215430826454749482E-6,
      3.20092790091004902806E-8, 9.41779576128512936592E-11, 9.70507110881952024631E-14};
  static const std::vector<double> fd8 = {1.0,
                                          9.17463611873684053703E-1,
                                          1.78685545332074536321E-1,
                                          1.22253594771971293032E-2,
                                          3.58696481881851580297E-4,
                                          4.92435064317881464393E-6,
                                          3.21956939101046018377E-8,
                                          9.43720590350276732376E-11,
                                          9.70507110881952025725E-14};
  static const std::vector<double> gn8 = {
      6.97359953443276214934E-1, 3.30410979305632063225E-1,  3.84878767649974295920E-2,
      1.71718239052347903558E-3, 3.48941165502279436777E-5,  3.47131167084116673800E-7,
      1.70404452782044526189E-9, 3.85945925430276600453E-12, 3.14040098946363334640E-15};
  static const std::vector<double> gd8 = {1.0,
                                          1.68548898811011640017E0,
                                          4.87852258695304967486E-1,
                                          4.67913194259625806320E-2,
                                          1.90284426674399523638E-3,
                                          3.68475504442561108162E-5,
                                          3.57043223443740838771E-7,
                                          1.72693748966316146736E-9,
                                          3.87830166023954706752E-12,
                                          3.14040098946363335242E-15};
  Array s = jnp::sin(x), c = jnp::cos(x), z = Array(1.0) / (x * x);
  Array f4 = horner(fn4, z) / (x * horner(fd4, z)), g4 = z * horner(gn4, z) / horner(gd4, z);
  Array f8 = horner(fn8, z) / (x * horner(fd8, z)), g8 = z * horner(gn8, z) / horner(gd8, z);
  Array mask = x < Array(8.0);
  Array f = jnp::where(mask, f4, f8), g = jnp::where(mask, g4, g8);
  return {Array(kPi / 2) - f * c - g * s, f * s - g * c};
}
std::pair<Array, Array> sici_impl(const Array& x) {
  Array ax = jnp::abs(x);
  auto [si1, ci1] = sici_series(ax);
  auto [si2, ci2] = sici_asympt(ax);
  Array pinf = jnp::isposinf(ax);
  Array si3 = jnp::where(pinf, Array(kPi / 2), Array(kPi / 2) - jnp::cos(ax) / ax);
  Array ci3 = jnp::where(pinf, Array(0.0), jnp::sin(ax) / ax);
  Array c1 = ax <= Array(4.0), c2 = jnp::logical_and(ax > Array(4.0), ax <= Array(1e9));
  Array si = jnp::where(c1, si1, jnp::where(c2, si2, si3));
  Array ci = jnp::where(c1, ci1, jnp::where(c2, ci2, ci3));
  return {jnp::sign(x) * si, jnp::where(jnp::isneginf(x), Array(NAN), ci)};
}

// --- owens_t ---
const std::vector<double> kOwensPts = {
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277, 0.25851196049125435,
    0.36807553840697534,   0.48501092905604697,  0.60277514152618577,  0.71477884217753227, 0.81475510988760099,
    0.89711029755948966,   0.95723808085944262,  0.99178832974629704};
const std::vector<double> kOwensWts = {
    0.018831438115323503,  0.018567086243977649,  0.018042093461223386, 0.017263829606398753, 0.016243219975989857,
    0.014994592034116705,  0.013535474469662088,  0.011886351605820165, 0.010070377242777432, 0.0081130545742299587,
    0.0060419009528470239, 0.0038862217010742058, 0.0016793031084546090};
Array owens_quadrature(const Array& h, const Array& a) {
  // The points and weights are float64 arrays (strong), so the quadrature is float64, as in JAX.
  Shape ps(static_cast<size_t>(a.ndim()), 1);
  ps.push_back(13);
  Array pts = jnp::reshape(array(kOwensPts, {13}, DType::float64), ps);
  Array r = jnp::expand_dims(jnp::square(a), -1) * pts;
  Array one = Array(1.0);
  Array integrand = jnp::exp(Array(-0.5) * jnp::expand_dims(jnp::square(h), -1) * (one + r)) / (one + r);
  return a * jnp::matmul(integrand, array(kOwensWts, {13}, DType::float64));
}
Array owens_impl(const Array& h0, const Array& a) {
  Array h = jnp::abs(h0), abs_a = jnp::abs(a);
  Array root2 = sm_const(std::sqrt(2.0), h);
  Array h_normed = h / root2;
  Array small = abs_a <= Array(1.0);
  Array ma = jnp::where(small, abs_a, jnp::reciprocal(abs_a));
  Array mh = jnp::where(small, h, abs_a * h);
  Array result = owens_quadrature(mh, ma);
  result = jnp::where(mh == Array(0.0), jnp::arctan(ma) / Array(2 * kPi), result);
  result = jnp::where(ma == Array(1.0), Array(0.125) * lax::erfc(-mh / root2) * lax::erfc(mh / root2), result);
  Array normh = lax::erfc(h_normed), normah = lax::erfc(abs_a * h_normed);
  Array near = Array(0.25) - Array(0.25) * lax::erf(h_normed) * lax::erf(abs_a * h_normed) - result;
  Array far = Array(0.25) * (normh + normah - normh * normah) - result;
  result = jnp::where(abs_a > Array(1.0), jnp::where(abs_a * h <= Array(0.67), near, far), result);
  result = lax::sign(a) * result;
  return jnp::where(jnp::logical_or(jnp::isnan(a), jnp::isnan(h)), jnp::full_like(result, NAN), result);
}
}  // namespace

Array erfcx(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("erfcx", {x});
  Array r = custom_jvp([](const Array& v) { return erfcx_dtype(v); },
                       [](const std::tuple<Array>& pr, const std::tuple<Array>& t) {
                         const Array& v = std::get<0>(pr);
                         Array ans = erfcx_dtype(v);
                         Array d = Array(2) * v * ans - sm_const(2.0 / std::sqrt(kPi), v);
                         return std::make_pair(ans, std::get<0>(t) * d);
                       })(p.v[0]);
  return scipy_finish(p, r);
}

Array dawsn(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("dawsn", {x});
  Array r = custom_jvp([](const Array& v) { return dawsn_dtype(v); },
                       [](const std::tuple<Array>& pr, const std::tuple<Array>& t) {
                         const Array& v = std::get<0>(pr);
                         Array ans = dawsn_dtype(v);
                         Array d = sm_const(1, v) - sm_const(2, v) * v * ans;
                         return std::make_pair(ans, std::get<0>(t) * d);
                       })(p.v[0]);
  return scipy_finish(p, r);
}

Array spence(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (!x.valid()) throw_error<TypeError>("spence", "got an empty (default-constructed) Array");
  if (x.dtype() != DType::float32 && x.dtype() != DType::float64)
    throw_error<TypeError>("spence", "x.dtype={} is not supported (float32 and float64 only, as JAX's)",
                           dtype_name(x.dtype()));
  return jnp::piecewise(x, {x < Array(0.0), x == Array(1.0), x == Array(0.0)},
                        {NAN, 0.0, kPi * kPi / 6.0, [](const Array& v) { return spence_calc(v); }});
}

Array bernoulli(int64_t n, Loc loc) {
  ApiScope s(loc);
  if (n < 0) throw_error<ShapeError>("bernoulli", "n must be a non-negative integer, got {}", n);
  Array b3 = array(std::vector<double>{1, -0.5, 1.0 / 6}, {3}, DType::float64);
  if (n < 3) return lax::slice_in_dim(b3, 0, n + 1, 1, 0);
  Array bn = jnp::at(jnp::zeros({n + 1}, DType::float64), jnp::arange(3)).set(b3);
  Array m = jnp::arange(4.0, static_cast<double>(n + 1), 2.0, DType::float64);
  Array q1 = Array(1.0 / (kPi * kPi)) * jnp::cumprod(-(m - Array(1)) * m / Array(4) / Array(kPi * kPi));
  Array k = jnp::arange(2.0, 50.0, 1.0, DType::float64);
  Array q2 = jnp::sum(jnp::power(jnp::expand_dims(k, 1), jnp::expand_dims(-m, 0)), {0});
  return jnp::at(bn, jnp::arange(4.0, static_cast<double>(n + 1), 2.0, DType::int64)).set(q1 * (Array(1) + q2));
}

std::pair<Array, Array> sici(const Array& x, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("sici", {x});
  using Pair = std::pair<Array, Array>;
  Pair r = custom_jvp([](const Array& v) { return sici_impl(v); },
                      [](const std::tuple<Array>& pr, const std::tuple<Array>& t) {
                        const Array& v = std::get<0>(pr);
                        const Array& tv = std::get<0>(t);
                        Pair out = sici_impl(v);
                        Pair tan{jnp::sinc(v / Array(kPi)) * tv, jnp::cos(v) / v * tv};
                        return std::make_pair(out, tan);
                      })(p.v[0]);
  return {scipy_finish(p, r.first), scipy_finish(p, r.second)};
}

Array owens_t(const Array& h, const Array& a, Loc loc) {
  ApiScope s(loc);
  auto p = scipy_promote("owens_t", {h, a});
  using Pair = std::tuple<Array, Array>;
  return custom_jvp([](const Array& hv, const Array& av) { return owens_impl(hv, av); },
                    [](const Pair& pr, const Pair& t) {
                      const auto& [hv, av] = pr;
                      const auto& [dh, da] = t;
                      Array result = owens_impl(hv, av);
                      Array root2 = sm_const(std::sqrt(2.0), hv);
                      Array ddh = -lax::exp(Array(-0.5) * jnp::square(hv)) * lax::erf(av * hv / root2) /
                                  (Array(2.0) * sm_const(std::sqrt(2 * kPi), hv));
                      Array a2 = jnp::square(av) + Array(1.0);
                      Array dda = lax::exp(Array(-0.5) * a2 * jnp::square(hv)) / (Array(2 * kPi) * a2);
                      return std::make_pair(result, jnp::astype(ddh * dh + dda * da, result.dtype()));
                    })(p.v[0], p.v[1]);
}

}  // namespace jitx::scipy::special
