// XLA:CPU's f32 log, log1p, erf and erf_inv, bit for bit, so that jitx::random's normal, gumbel,
// truncated_normal and uniform (with minval/maxval) draw what jax.random draws (JAX 0.10.2 on CPU).
//
// XLA:CPU does not call libm for f32 log: it inlines its own polynomial (range reduction to
// m in [sqrt(1/2), sqrt(2)), a degree-8 polynomial in three interleaved Horner chains, e*ln2 in two
// parts), log1p is the Cephes rational for |x| < sqrt(2)-1 and log(1+x) otherwise, and erf_inv is
// Giles' single-precision polynomial on w = -log1p(-x*x). LLVM then contracts every multiply whose
// only use is an add into a fused multiply-add. The sequence below was read from the optimised LLVM
// IR and the machine code XLA emits (XLA_FLAGS=--xla_dump_to) and is checked against 2,000,000
// jax.lax.erf_inv / jnp.log / jnp.log1p values bit for bit (tools/random_xla_model.py).
//
// To be exact on every jitx path (eager, jit on cpu, the interpreter), each f32 operation is done in
// float64 and rounded to f32 by integer arithmetic on the bits: the product of two f32 numbers is
// exact in f64 and f64 has more than 2*24+2 bits, so one f64 operation rounded once more to 24 bits
// is the correctly rounded f32 operation; a fused multiply-add rounds the exact sum to odd first
// (Boldo & Melquiond), which makes the second rounding correct too. Integer rounding (not a convert)
// keeps LLVM from narrowing the f64 ops back to f32 and contracting them, and any contraction of the
// f64 ops themselves is harmless because every product they contract is exact. f16 and bf16 work the
// same way: XLA:CPU rounds every f16/bf16 op (and computes erf/erf_inv/log of them in f32, rounding
// the result), where jitx's CPU backend would keep them in f32 through a fusion (excess precision).
// Subnormal results of d round to d's quantum by adding and subtracting 1.5 * 2^(quantum + 52).
#include "api/random_xla_math.h"

#include <cmath>
#include <cstring>

#include "jitx/lax.h"
#include "jitx/numpy.h"

namespace jitx::random::xla_math {
namespace {

constexpr DType F = DType::float64, U = DType::uint64;

Array k(double v) { return Array::scalar(v, F); }
Array u64(uint64_t v) { return Array::scalar_int(static_cast<int64_t>(v), U); }
/// The f32 constant with these bits, as f64.
Array c32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return k(static_cast<double>(f));
}

int precision(DType d) { return d == DType::float32 ? 24 : d == DType::float16 ? 11 : 8; }
int min_exponent(DType d) { return d == DType::float16 ? -14 : -126; }

/// x (finite, at least d's smallest normal in magnitude, or 0) rounded to d's precision, ties to even.
Array round_normal(const Array& x, DType d) {
  int drop = 53 - precision(d);
  Array b = lax::bitcast_convert_type(x, U);
  Array lsb = lax::bitwise_and(lax::shift_right_logical(b, u64(drop)), u64(1));
  b = lax::add(b, lax::add(u64((uint64_t{1} << (drop - 1)) - 1), lsb));
  b = lax::bitwise_and(b, u64(~((uint64_t{1} << drop) - 1)));
  return lax::bitcast_convert_type(b, F);
}

/// Rounded to f32 where the values can't be subnormal in f32 (every intermediate of the algorithms).
Array rd(const Array& x) { return round_normal(x, DType::float32); }

Array sel(const Array& p, const Array& a, const Array& b) { return jnp::where(p, a, b); }

/// fma in f32: the exact product plus c, rounded to odd in f64 (TwoSum's error says whether the
/// f64 sum was exact; if not, its last bit is forced to 1 toward the exact value), then to 24 bits.
Array fma(const Array& a, const Array& b, const Array& c) {
  Array p = lax::mul(a, b);
  Array s = lax::add(p, c);
  Array bb = lax::sub(s, p);
  Array e = lax::add(lax::sub(p, lax::sub(s, bb)), lax::sub(c, bb));
  Array sb = lax::bitcast_convert_type(s, U);
  Array zero = k(0.0);
  Array even = lax::eq(lax::bitwise_and(sb, u64(1)), u64(0));
  Array fix = lax::bitwise_and(lax::ne(e, zero), even);
  Array away = lax::eq(lax::lt(e, zero), lax::lt(s, zero));  // the exact value is farther from 0
  Array odd = lax::select(away, lax::add(sb, u64(1)), lax::sub(sb, u64(1)));
  return rd(lax::bitcast_convert_type(lax::select(fix, odd, sb), F));
}

Array add32(const Array& a, const Array& b) { return rd(lax::add(a, b)); }
Array mul32(const Array& a, const Array& b) { return rd(lax::mul(a, b)); }

}  // namespace

Array widen(const Array& x) { return lax::convert_element_type(x, F); }
Array narrow(const Array& x64, DType d) { return lax::convert_element_type(x64, d); }

Array round_to(const Array& x, DType d) {
  Array normal = round_normal(x, d);
  if (d == DType::float32) return normal;  // (the samplers' f32 values are never subnormal)
  // |x| below d's smallest normal: round to a multiple of d's quantum 2^(emin - p + 1).
  Array big = k(std::ldexp(1.5, min_exponent(d) - precision(d) + 1 + 52));
  Array ax = lax::abs(x);
  Array q = lax::sub(lax::add(ax, big), big);
  Array sub = sel(lax::lt(x, k(0.0)), lax::neg(q), q);
  return sel(lax::lt(ax, k(std::ldexp(1.0, min_exponent(d)))), sub, normal);
}

Array add(const Array& a, const Array& b, DType d) { return round_to(lax::add(a, b), d); }
Array sub(const Array& a, const Array& b, DType d) { return round_to(lax::sub(a, b), d); }
Array mul(const Array& a, const Array& b, DType d) { return round_to(lax::mul(a, b), d); }
Array div(const Array& a, const Array& b, DType d) { return round_to(lax::div(a, b), d); }
Array fma32(const Array& a, const Array& b, const Array& c) { return fma(a, b, c); }

namespace {
/// x split at 26 significant bits by rounding its bits (not Dekker's multiply, which a backend could
/// contract): hi has at most 26 bits and x - hi at most 26, so every product of halves is exact.
std::pair<Array, Array> split26(const Array& x) {
  Array b = lax::bitcast_convert_type(x, U);
  Array lsb = lax::bitwise_and(lax::shift_right_logical(b, u64(27)), u64(1));
  b = lax::bitwise_and(lax::add(b, lax::add(u64((uint64_t{1} << 26) - 1), lsb)), u64(~((uint64_t{1} << 27) - 1)));
  Array hi = lax::bitcast_convert_type(b, F);
  return {hi, lax::sub(x, hi)};
}
/// Knuth's TwoSum: s = fl(a + b) and the exact error a + b - s.
std::pair<Array, Array> two_sum(const Array& a, const Array& b) {
  Array s = lax::add(a, b);
  Array bb = lax::sub(s, a);
  return {s, lax::add(lax::sub(a, lax::sub(s, bb)), lax::sub(b, bb))};
}
/// s rounded to odd given the exact error e of s (its last bit forced to 1 toward e when inexact).
Array to_odd(const Array& s, const Array& e) {
  Array sb = lax::bitcast_convert_type(s, U), zero = k(0.0);
  Array fix = lax::bitwise_and(lax::ne(e, zero), lax::eq(lax::bitwise_and(sb, u64(1)), u64(0)));
  Array away = lax::eq(lax::lt(e, zero), lax::lt(s, zero));
  Array odd = lax::select(away, lax::add(sb, u64(1)), lax::sub(sb, u64(1)));
  return lax::bitcast_convert_type(lax::select(fix, odd, sb), F);
}
}  // namespace

Array fma64(const Array& a, const Array& b, const Array& c) {
  // Boldo & Melquiond: uh + ul = a * b exactly (Dekker), th + tl = c + uh exactly, then
  // th + RO(tl + ul) rounded once more is the correctly rounded a * b + c.
  auto [ah, al] = split26(a);
  auto [bh, bl] = split26(b);
  Array uh = lax::mul(a, b);
  Array ul = lax::add(lax::add(lax::add(lax::sub(lax::mul(ah, bh), uh), lax::mul(ah, bl)), lax::mul(al, bh)),
                      lax::mul(al, bl));
  auto [th, tl] = two_sum(c, uh);
  auto [v, ve] = two_sum(tl, ul);
  Array r = lax::add(th, to_odd(v, ve));
  // a * b == 0 or non-finite: the plain expression (the error terms would be NaN or 0 anyway).
  Array finite = lax::lt(lax::abs(uh), k(INFINITY));
  return sel(finite, r, lax::add(uh, c));
}

/// XLA's log_f32 on f32 values.
Array log32(const Array& x) {
  Array tiny = c32(0x00800000u);
  Array m0 = sel(lax::gt(x, tiny), x, tiny);
  Array bits = lax::bitcast_convert_type(m0, U);
  // m in [0.5, 1) with m0's mantissa; e = m0's unbiased exponent + 1.
  Array m = lax::bitcast_convert_type(
      lax::bitwise_or(lax::bitwise_and(bits, u64(0x800FFFFFFFFFFFFFull)), u64(0x3FE0000000000000ull)), F);
  Array ex = lax::convert_element_type(
      lax::sub(lax::convert_element_type(lax::shift_right_logical(bits, u64(52)), DType::int64),
               Array::scalar_int(1023, DType::int64)),
      F);
  Array e = add32(ex, k(1.0));
  Array small = lax::lt(m, c32(0x3F3504F3u));
  e = sel(small, add32(e, k(-1.0)), e);
  Array r = add32(add32(m, k(-1.0)), sel(small, m, k(0.0)));
  Array r2 = mul32(r, r), r3 = mul32(r2, r);
  Array a = fma(r, c32(0x3D9021BBu), c32(0xBDEBD1B8u));
  Array b = fma(r, c32(0xBDFE5D4Fu), c32(0x3E11E9BFu));
  Array c = fma(r, c32(0x3E4CCEACu), c32(0xBE7FFFFCu));
  a = fma(a, r, c32(0x3DEF251Au));
  b = fma(b, r, c32(0xBE2AAE50u));
  c = fma(c, r, c32(0x3EAAAAAAu));
  b = fma(a, r3, b);
  b = fma(b, r3, c);
  Array y = fma(b, r3, mul32(e, c32(0xB95E8083u)));
  Array z = add32(fma(lax::neg(r2), k(0.5), r), y);
  z = fma(e, c32(0x3F318000u), z);
  // log(0) = -inf, log(inf) = inf, log(x < 0) and log(NaN) = NaN.
  z = sel(lax::le(x, k(0.0)), k(NAN), z);
  z = sel(lax::ne(x, x), x, z);
  z = sel(lax::eq(x, k(0.0)), k(-INFINITY), z);
  return sel(lax::eq(x, k(INFINITY)), x, z);
}

/// XLA's log1p on f32 values: Cephes' rational for |x| < sqrt(2) - 1, else log(1 + x).
Array log1p32(const Array& x) {
  static constexpr uint32_t P[] = {0x417101ADu, 0x42A6185Bu, 0x435DC32Du, 0x439A8CA3u, 0x43586D8Au, 0x42707982u};
  static constexpr uint32_t Q[] = {0x3EFF40C5u, 0x40D284FAu, 0x41EF4B9Cu, 0x4273CC76u, 0x426473ADu, 0x41A05101u};
  Array big = log32(add32(x, k(1.0)));
  Array num = k(1.0), den = k(static_cast<double>(4.527e-05f));
  for (uint32_t h : P) num = fma(num, x, c32(h));
  for (uint32_t h : Q) den = fma(den, x, c32(h));
  Array rat = rd(lax::div(den, num));
  Array x2 = mul32(x, x);
  Array t = fma(lax::neg(x2), k(0.5), mul32(mul32(x2, x), rat));
  return sel(lax::lt(lax::abs(x), c32(0x3ED413CDu)), add32(x, t), big);
}


/// XLA's f32 erf: +-1 where |x| >= 3.8325 (0x407547CB), else x * P(x^2) / Q(x^2) in fused
/// multiply-adds.
Array erf32(const Array& x) {
  static constexpr uint32_t P[] = {0x39702D51u, 0x3B5F5DA2u, 0x3D50B6EBu, 0x3E3DA740u, 0x3F906EBAu};
  static constexpr uint32_t Q[] = {0xB3FD3906u, 0x37C588DFu, 0x3A856D28u, 0x3C6687D4u,
                                   0x3DE34C21u, 0x3EFEB44Au, 0x3F800000u};
  Array x2 = mul32(x, x);
  Array n = fma(x2, c32(P[0]), c32(P[1]));
  for (int i = 2; i < 5; ++i) n = fma(x2, n, c32(P[i]));
  Array q = fma(x2, c32(Q[0]), c32(Q[1]));
  for (int i = 2; i < 7; ++i) q = fma(x2, q, c32(Q[i]));
  Array r = rd(lax::div(mul32(x, n), q));
  Array one = sel(lax::lt(x, k(0.0)), k(-1.0), k(1.0));
  return sel(lax::ge(lax::abs(x), c32(0x407547CBu)), one, r);
}

/// XLA's ErfInv32: Giles' polynomials in w - 2.5 (w < 5) or sqrt(w) - 3, w = -log1p(-x*x).
Array erf_inv32(const Array& x) {
  static constexpr uint32_t LT[] = {0x32F16588u, 0x34B84B36u, 0xB66C7357u, 0xB6935AC1u, 0x396532DBu,
                                    0xBAA45408u, 0xBB88E4EFu, 0x3E7C8F63u, 0x3FC02E2Fu};
  static constexpr uint32_t GT[] = {0xB951F09Bu, 0x38D3B56Bu, 0x3AB0DC72u, 0xBB70BDE7u, 0x3BBC127Bu,
                                    0xBBF9C5D7u, 0x3C1AA57Eu, 0x3F8036DBu, 0x40354F7Eu};
  Array l = log1p32(lax::neg(mul32(x, x)));
  Array lt = lax::gt(l, k(-5.0));
  Array w = sel(lt, add32(k(-2.5), lax::neg(l)), add32(rd(lax::sqrt(lax::neg(l))), k(-3.0)));
  Array p = sel(lt, c32(LT[0]), c32(GT[0]));
  for (int i = 1; i < 9; ++i) p = fma(p, w, sel(lt, c32(LT[i]), c32(GT[i])));
  p = sel(lax::eq(lax::abs(x), k(1.0)), k(INFINITY), p);
  return mul32(x, p);
}

// --- float64: XLA:CPU's log1p and ErfInv64 as its optimised code evaluates them (read from the LLVM IR
// and machine code of jax.lax.erf_inv on f64, XLA_FLAGS=--xla_dump_to). log1p is Cephes' rational for
// |x| < 0.41421356 and libm's log(1 + x) otherwise (jitx's f64 log is the C library's on every platform, the
// same glibc function XLA calls); ErfInv64 is a degree-22 polynomial in w - 3.125 (w < 6.25), degree 18 in
// sqrt(w) - 3.25 (w < 16) or degree 16 in sqrt(w) - 5, w = -log1p(-x*x), each step c + p*w contracted into
// one fused multiply-add (fma64: exact on every backend). Checked against 600,000 jax.lax.erf_inv values
// and jax.random.normal draws bit for bit (all agree but subnormal inputs, which XLA flushes to zero).
namespace {
constexpr double kErfInvLt625[23] = {
    -3.64441206401782e-21,   -1.6850591381820166e-19, 1.28584807152564e-18,   1.1157877678025181e-17,
    -1.333171662854621e-16,  2.0972767875968562e-17,  6.637638134358324e-15,  -4.054566272975207e-14,
    -8.151934197605472e-14,  2.6335093153082323e-12,  -1.2975133253453532e-11, -5.415412054294628e-11,
    1.0512122733215323e-09,  -4.112633980346984e-09,  -2.9070369957882005e-08, 4.2347877827932404e-07,
    -1.3654692000834679e-06, -1.3882523362786469e-05, 0.00018673420803405714, -0.000740702534166267,
    -0.006033670871430149,   0.24015818242558962,     1.6536545626831027};
constexpr double kErfInvLt16[19] = {
    2.2137376921775787e-09, 9.075656193888539e-08,   -2.7517406297064545e-07, 1.8239629214389228e-08,
    1.5027403968909828e-06, -4.013867526981546e-06,  2.9234449089955446e-06,  1.2475304481671779e-05,
    -4.7318229009055734e-05, 6.828485145957318e-05,  2.4031110387097894e-05,  -0.0003550375203628475,
    0.0009532893797373805,  -0.0016882755560235047, 0.002491442096107851,    -0.003751208507569241,
    0.005370914553590064,   1.0052589676941592,      3.0838856104922208};
constexpr double kErfInvGt16[17] = {
    -2.7109920616438573e-11, -2.555641816996525e-10, 1.5076572693500548e-09,  -3.789465440126737e-09,
    7.61570120807834e-09,    -1.496002662714924e-08, 2.914795345090108e-08,   -6.771199775845234e-08,
    2.2900482228026655e-07,  -9.9298272942317e-07,   4.526062597223154e-06,   -1.968177810553167e-05,
    7.599527703001776e-05,   -0.00021503011930044477, -0.00013871931833623122, 1.0103004648645344,
    4.849906401408584};
Array c64(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return k(d);
}
}  // namespace

Array log1p64(const Array& x) {
  static constexpr uint64_t P[] = {0x402E20359E903E37ull, 0x4054C30B52213498ull, 0x406BB86590FCFB56ull,
                                   0x407351945DC908A5ull, 0x406B0DB13E48E066ull, 0x404E0F304466448Eull};
  static constexpr uint64_t Q[] = {0x3FDFE818A0FE1A83ull, 0x401A509F46F4FA53ull, 0x403DE9738B8CB9C9ull,
                                   0x404E798EB86C3351ull, 0x404C8E7597479A10ull, 0x40340A202D99830Aull};
  Array big = lax::log(lax::add(x, k(1.0)));
  Array num = k(1.0), den = c64(0x3F07BC0962B395CAull);
  for (uint64_t h : P) num = fma64(num, x, c64(h));
  for (uint64_t h : Q) den = fma64(den, x, c64(h));
  Array rat = lax::div(den, num);
  Array x2 = lax::mul(x, x);
  Array t = fma64(x2, k(-0.5), lax::mul(lax::mul(x, x2), rat));
  Array r = sel(lax::lt(lax::abs(x), c64(0x3FDA827999FCEF32ull)), lax::add(x, t), big);
  // log1p(-0) is -0, as XLA's (geometric(p = 0) divides by it: +inf trials, not -inf).
  return sel(lax::eq(x, k(0.0)), x, r);
}

Array erf_inv64(const Array& x) {
  Array l = log1p64(lax::mul(x, lax::neg(x)));  // -w
  Array lt625 = lax::gt(l, k(-6.25)), lt16 = lax::gt(l, k(-16.0));
  Array w = sel(lt625, lax::sub(k(-3.125), l), lax::sub(lax::sqrt(lax::neg(l)), sel(lt16, k(3.25), k(5.0))));
  auto coefficient = [&](int i) {
    Array c = k(kErfInvLt625[i]);
    if (i < 19) c = sel(lt625, c, k(kErfInvLt16[i]));
    if (i < 17) c = sel(lt16, c, k(kErfInvGt16[i]));
    return c;
  };
  Array p = coefficient(0);
  for (int i = 1; i < 17; ++i) p = fma64(p, w, coefficient(i));
  for (int i = 17; i < 19; ++i) p = sel(lt16, fma64(p, w, coefficient(i)), p);
  for (int i = 19; i < 23; ++i) p = sel(lt625, fma64(p, w, coefficient(i)), p);
  return lax::mul(x, sel(lax::eq(lax::abs(x), k(1.0)), k(INFINITY), p));
}

}  // namespace jitx::random::xla_math
