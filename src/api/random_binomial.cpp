// jitx::random: binomial, as jax.random.binomial (JAX 0.10.2, after TensorFlow's random_binomial_op): inversion
// (a count of geometric waiting times) where n * min(p, 1 - p) <= 10 or n is NaN or negative, else BTRS
// (Hormann's transformed rejection with squeeze). Both loops run over the whole shape under the one key, as JAX
// runs them, in p's inexact dtype (a C++ number: float64, as a weak Python float under x64), and their results are
// selected per element; the output is cast to dtype. Arithmetic is rounded as XLA:CPU rounds it (random_fx.h).
#include <cmath>

#include "api/random_fx.h"
#include "api/random_internal.h"
#include "api/random_samplers_internal.h"
#include "core/default_dtypes.h"
#include "core/errors.h"
#include "jitx/lax_control.h"
#include "jitx/numpy.h"
#include "jitx/random.h"

namespace jitx::random {
using detail::ApiScope;
using detail::throw_error;
using namespace internal;

namespace {

using Carry = std::vector<Array>;

/// JAX's promote_dtypes_inexact of p: floats keep their dtype; weak numbers (C++ literals) and 64-bit ints give
/// float64, other ints and bool float32.
DType compute_dtype(const Array& p) {
  DType d = p.dtype();
  if (is_floating(d)) return p.weak_type() ? DType::float64 : d;
  if (p.weak_type() || d == DType::int64 || d == DType::uint64) return DType::float64;
  return DType::float32;
}

/// JAX's _stirling_approx_tail(k): the tabulated tails for k <= 9, else the series at min(k, 9) (as JAX clamps
/// before evaluating it).
Array stirling_tail(const Fx& F, const Array& k) {
  static const double kTail[10] = {0.0810614667953272,  0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                                   0.0166446911898211,  0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                                   0.00925546218271273, 0.00833056343336287};
  Shape s = k.shape();
  Array use_table = lax::le(k, F.c(9));
  Array kc = lax::clamp(F.c(0), k, F.c(9));
  Array k1 = F.add(kc, F.c(1));
  Array kp1sq = F.mul(k1, k1);
  Array approx = F.div(F.sub(F.c(1.0 / 12), F.div(F.sub(F.c(1.0 / 360), F.div(F.c(1.0 / 1260), kp1sq)), kp1sq)), k1);
  Array kf = lax::floor(kc);
  Array table = lax::full(s, F.c(kTail[9]));
  for (int j = 8; j >= 0; --j) table = lax::select(lax::eq(kf, F.c(j)), lax::full(s, F.c(kTail[j])), table);
  return lax::select(use_table, table, approx);
}

/// JAX's _binomial_inversion: the number of geometric(q) waiting times that fit into count, minus one.
Array inversion(const Array& key, const Array& count, const Array& q, const Shape& sh, DType cd) {
  Fx F{cd};
  // log1p(-0) is -0 (q = 0: every wait is +inf, the count 0); held exactly so, whatever log1p's sign of zero.
  Array log1mq = lax::select(lax::eq(q, F.c(0)), lax::full(sh, F.c(-0.0)), F.log1p(lax::neg(q)));
  Array zero = lax::full(sh, F.c(0));
  Carry init{zero, zero, key};
  Carry out = lax::while_loop([=](const Carry& c) { return jnp::any(lax::le(c[1], count)); },
                              [=](const Carry& c) {
                                auto ks = split_n(c[2], 2);  // subkey, key
                                Array more = lax::le(c[1], count);
                                Array num = lax::select(more, F.add(c[0], F.c(1)), c[0]);
                                Array u = F.in(unit_uniform(ks[0], sh, cd, 0.0, 1.0, "binomial"));
                                Array geom = lax::ceil(F.div(F.log(u), log1mq));
                                return Carry{num, F.add(c[1], geom), ks[1]};
                              },
                              init);
  return F.sub(out[0], F.c(1));
}

/// JAX's _btrs. As in JAX, an accepted element takes every later accepted draw too (k_out is replaced wherever a
/// draw is accepted), so the loop's length over the whole shape matters for each element.
Array btrs(const Array& key, const Array& count, const Array& prob, const Shape& sh, DType cd) {
  Fx F{cd};
  Array one = F.c(1), half = F.c(0.5);
  Array stddev = F.sqrt(F.mul(F.mul(count, prob), F.sub(one, prob)));
  Array b = F.fma(F.c(2.53), stddev, F.c(1.15));
  Array a = F.fma(F.c(0.01), prob, F.fma(F.c(0.0248), b, F.c(-0.0873)));
  Array c = F.fma(count, prob, half);
  Array v_r = F.sub(F.c(0.92), F.div(F.c(4.2), b));
  Array r = F.div(prob, F.sub(one, prob));
  Array alpha = F.mul(F.add(F.c(2.83), F.div(F.c(5.1), b)), stddev);
  Array m = lax::floor(F.mul(F.add(count, one), prob));
  Array cm1 = F.add(F.sub(count, m), one);  // count - m + 1
  Array lead_log = F.log(F.div(F.add(m, one), F.mul(r, cm1)));
  Carry init{lax::full(sh, F.c(-1)), lax::full(sh, Array(false)), key};
  Carry out = lax::while_loop(
      [=](const Carry& st) { return jnp::any(lax::bitwise_not(st[1])); },
      [=](const Carry& st) {
        auto ks = split_n(st[2], 3);  // key, subkey_0, subkey_1
        Array u = F.sub(F.in(unit_uniform(ks[1], sh, cd, 0.0, 1.0, "binomial")), half);
        Array v = F.in(unit_uniform(ks[2], sh, cd, 0.0, 1.0, "binomial"));
        Array us = F.sub(half, lax::abs(u));
        Array accept1 = lax::bitwise_and(lax::ge(us, F.c(0.07)), lax::le(v, v_r));
        Array k = lax::floor(F.fma(F.add(F.div(F.mul(F.c(2), a), us), b), u, c));
        Array reject = lax::bitwise_or(lax::lt(k, F.c(0)), lax::gt(k, count));
        Array lv = F.log(F.div(F.mul(v, alpha), F.add(F.div(a, F.mul(us, us)), b)));
        Array ck1 = F.add(F.sub(count, k), one);  // count - k + 1
        // lead + (count + 1) * l2 + (k + 0.5) * l3 + tails, contracted as LLVM does (the first product of the
        // first sum, the second product of the second).
        Array ub = F.fma(F.add(m, half), lead_log, F.mul(F.add(count, one), F.log(F.div(cm1, ck1))));
        ub = F.fma(F.add(k, half), F.log(F.div(F.mul(r, ck1), F.add(k, one))), ub);
        ub = F.add(F.add(ub, stirling_tail(F, m)), stirling_tail(F, F.sub(count, m)));
        ub = F.sub(F.sub(ub, stirling_tail(F, k)), stirling_tail(F, F.sub(count, k)));
        Array accept = lax::bitwise_or(accept1, lax::bitwise_and(lax::bitwise_not(reject), lax::le(lv, ub)));
        return Carry{lax::select(accept, k, st[0]), lax::bitwise_or(st[1], accept), ks[0]};
      },
      init);
  return out[0];
}

Array binomial_impl(const Array& key, const Array& n, const Array& p, const Shape& sh, DType cd, DType dtype) {
  Fx F{cd}, O{dtype};
  Array prob = F.in(jnp::broadcast_to(lax::convert_element_type(p, cd), sh));
  Array count = F.in(jnp::broadcast_to(lax::convert_element_type(n, cd), sh));
  Array p_lt_half = lax::lt(prob, F.c(0.5));
  Array q = lax::select(p_lt_half, prob, F.sub(F.c(1), prob));
  Array count_nan_or_neg = lax::bitwise_or(lax::ne(count, count), lax::lt(count, F.c(0)));
  Array count_inf = lax::eq(lax::abs(count), F.c(INFINITY));
  Array q_is_nan = lax::ne(q, q);
  Array q_l_0 = lax::lt(q, F.c(0));
  q = lax::select(lax::bitwise_or(q_is_nan, q_l_0), lax::full(sh, F.c(0.01)), q);
  Array use_inv = lax::bitwise_or(count_nan_or_neg, lax::le(F.mul(count, q), F.c(10)));
  count = lax::floor(count);
  Array count_inv = lax::select(use_inv, count, lax::full(sh, F.c(0)));
  // An infinite count never ends JAX's BTRS loop (its acceptance tests are NaN); its result is +inf below
  // whatever the loop gives, so such elements run the loop on the inversion elements' dummy values instead.
  Array dummy = lax::bitwise_or(use_inv, count_inf);
  Array count_btrs = lax::select(dummy, lax::full(sh, F.c(1e4)), count);
  Array q_btrs = lax::select(dummy, lax::full(sh, F.c(0.5)), q);
  Array inv = lax::convert_element_type(F.out(inversion(key, count_inv, q, sh, cd)), dtype);
  Array bt = lax::convert_element_type(F.out(btrs(key, count_btrs, q_btrs, sh, cd)), dtype);
  Array samples = O.in(lax::select(use_inv, inv, bt));
  Array invalid = lax::bitwise_or(lax::bitwise_or(q_l_0, q_is_nan), count_nan_or_neg);
  samples = lax::select(invalid, lax::full(sh, O.c(NAN)), samples);
  samples = lax::select(lax::bitwise_and(count_inf, lax::bitwise_not(invalid)), lax::full(sh, O.c(INFINITY)), samples);
  Array keep = lax::bitwise_or(lax::bitwise_or(p_lt_half, count_nan_or_neg), lax::bitwise_or(q_is_nan, count_inf));
  Array count_d = O.in(lax::convert_element_type(F.out(count), dtype));
  return O.out(lax::select(keep, samples, O.sub(count_d, samples)));
}

void check_real_param(const Array& x, std::string_view what) {
  if (!x.valid() || !(is_floating(x.dtype()) || is_integer(x.dtype())))
    throw_error<TypeError>("binomial", "{} must be a real (float or integer) array, got {}", what,
                           x.valid() ? x.aval().str() : "an empty Array");
}

}  // namespace

Array binomial(const Array& key, const Array& n, const Array& p, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "binomial");
  check_real_param(n, "n");
  check_real_param(p, "p");
  check_dtype_value(dtype, "binomial");
  dtype = canonicalize_dtype(dtype);
  check_float(dtype, "binomial");
  Shape sh = param_shape(shape, {n.shape(), p.shape()}, "binomial");
  check_shape(sh, "binomial");
  broadcast_param(n, sh, "binomial", "n");
  broadcast_param(p, sh, "binomial", "p");
  DType cd = compute_dtype(p);
  detail::ScopedX64 x64;
  return compiled(sig("binomial", sh, dtype, dtype_name(cd)), {key, n, p},
                  [=](auto& a) { return binomial_impl(a[0], a[1], a[2], sh, cd, dtype); });
}

}  // namespace jitx::random
