// jitx::random: gamma (Marsaglia-Tsang with JAX's per-element keys and while loops), loggamma and what is built
// on them (beta, dirichlet, t, chisquare, f, generalized_normal, ball) and poisson, as jax.random.
#include <cmath>
#include <limits>

#include "api/random_fx.h"
#include "api/random_internal.h"
#include "api/random_samplers_internal.h"
#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax_control.h"
#include "jitx/lax_special.h"
#include "jitx/nn.h"
#include "jitx/numpy.h"
#include "jitx/random.h"

namespace jitx::random {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
using namespace internal;

namespace {

using Carry = std::vector<Array>;
using Words = std::pair<Array, Array>;

/// split(key, num)[j] for a batch of keys given as words: threefry on the counter pair (0, j).
std::vector<Words> split_words(const Words& k, int num) {
  std::vector<Words> out;
  Shape s = k.first.shape();
  for (int j = 0; j < num; ++j) {
    out.push_back(threefry2x32(k.first, k.second, lax::full(s, Array::scalar_int(0, DType::uint32)),
                               lax::full(s, Array::scalar_int(j, DType::uint32))));
  }
  return out;
}

int rng_bits(DType d) { return nmant(d) < 8 ? 8 : dtype_bits(d); }

/// One uniform [0, 1) value per key (shape () draws under each key).
Array lane_uniform(const Words& k, DType d, double lo = 0.0) {
  Shape s = k.first.shape();
  Array b = random_bits_words(k.first, k.second, rng_bits(d), {}, "gamma");
  return uniform_from_bits(b, d, lax::full(s, Array::scalar(lo, d)), lax::full(s, Array::scalar(1.0, d)));
}
Array lane_normal(const Words& k, DType d) {
  return sqrt2_erf_inv(lane_uniform(k, d, -(1.0 - std::ldexp(1.0, -(nmant(d) + 1)))));
}

/// JAX's _gamma_one for every lane at once (as its vmap of the while loops runs them): k the lanes' keys, alpha
/// (wide, see Fx) their shapes. Returns the sample (or its log), wide.
Array gamma_lanes(const Words& key0, const Array& alpha, DType d, bool log_space) {
  Fx F{d};
  Shape s = alpha.shape();
  Array zero = lax::full(s, F.c(0)), one = lax::full(s, F.c(1)), two = lax::full(s, F.c(2));
  Array minus_one = lax::full(s, F.c(-1));
  Array third = F.c(1.0 / 3.0), squeeze = F.c(0.0331), half = F.c(0.5);
  Array boost_mask = lax::ge(alpha, one);
  Array a = lax::select(boost_mask, alpha, F.add(alpha, one));
  Array dd = F.sub(a, third);
  Array c = F.div(third, F.sqrt(dd));
  auto ks = split_words(key0, 2);
  Words subkey = ks[1];
  // (1 - 0.0331 X^2 and the log test as XLA:CPU evaluates them: each multiply feeding an add is one FMA.)
  auto lane_cond = [=](const Array& X, const Array& V, const Array& U) {
    Array c1 = lax::ge(U, F.fma(lax::neg(squeeze), F.mul(X, X), F.c(1)));
    Array rhs = F.fma(X, half, F.mul(dd, F.add(F.sub(F.c(1), V), F.log(V))));
    return lax::bitwise_and(c1, lax::ge(F.log(U), rhs));
  };
  Carry init{ks[0].first, ks[0].second, zero, one, two};
  Carry out =
      lax::while_loop([=](const Carry& st) { return jnp::any(lane_cond(st[2], st[3], st[4])); },
                      [=](const Carry& st) {
                        Array m = lane_cond(st[2], st[3], st[4]);
                        auto k3 = split_words({st[0], st[1]}, 3);
                        Carry inner{k3[1].first, k3[1].second, zero, minus_one};
                        Carry xv = lax::while_loop([=](const Carry& q) { return jnp::any(lax::le(q[3], zero)); },
                                                   [=](const Carry& q) {
                                                     Array m2 = lax::le(q[3], zero);
                                                     auto k2 = split_words({q[0], q[1]}, 2);
                                                     Array x = F.in(lane_normal(k2[1], d));
                                                     Array v = F.fma(x, c, F.c(1));
                                                     return Carry{lax::select(m2, k2[0].first, q[0]),
                                                                  lax::select(m2, k2[0].second, q[1]),
                                                                  lax::select(m2, x, q[2]), lax::select(m2, v, q[3])};
                                                   },
                                                   inner);
                        Array X = F.mul(xv[2], xv[2]);
                        Array V = F.mul(F.mul(xv[3], xv[3]), xv[3]);
                        Array U = F.in(lane_uniform(k3[2], d));
                        return Carry{lax::select(m, k3[0].first, st[0]), lax::select(m, k3[0].second, st[1]),
                                     lax::select(m, X, st[2]), lax::select(m, V, st[3]), lax::select(m, U, st[4])};
                      },
                      init);
  Array V = out[3];
  Array inv_alpha = F.div(F.c(1), alpha);
  if (log_space) {
    // -exponential(subkey, ()): -(-log1p(-u))
    Array log_samples = F.log1p(lax::neg(F.in(lane_uniform(subkey, d))));
    Array log_boost =
        lax::select(lax::bitwise_or(boost_mask, lax::eq(log_samples, zero)), zero, F.mul(log_samples, inv_alpha));
    return F.add(F.add(F.log(dd), F.log(V)), log_boost);
  }
  Array samples = F.sub(F.c(1), F.in(lane_uniform(subkey, d)));
  Array boost = lax::select(boost_mask, one, F.pow(samples, inv_alpha));
  return F.mul(F.mul(dd, V), boost);
}

/// gamma/loggamma of a (already of dtype d and of the output shape): JAX's random_gamma_p.
Array gamma_raw(const Array& key, const Array& a, DType d, bool log_space) {
  Fx F{d};
  int64_t n = a.size();
  Array flat = F.in(lax::reshape(a, {n}));
  auto [k0, k1] = key_words(key, "gamma");
  // split(key, n): one key per element.
  Array c1 = lax::iota(DType::uint32, n), c0 = lax::full({n}, Array::scalar_int(0, DType::uint32));
  Words keys = threefry2x32(lax::full({n}, k0), lax::full({n}, k1), c0, c1);
  return lax::reshape(F.out(gamma_lanes(keys, flat, d, log_space)), a.shape());
}

void check_real(const Array& x, std::string_view op, std::string_view what) {
  if (!x.valid() || !(is_floating(x.dtype()) || is_integer(x.dtype())))
    throw_error<TypeError>(op, "{} must be a real (float or integer) array, got {}", what,
                           x.valid() ? x.aval().str() : "an empty Array");
}

// --- d sample / d a: implicit reparameterization (lax::random_gamma_grad, jitx/lax_special.h) ---------------------
Array k(double v, DType d) { return Array::scalar(v, d); }

Array gamma_impl(const Array& key, const Array& a_in, const Shape& sh, DType d, bool log_space) {
  Array a = jnp::broadcast_to(lax::convert_element_type(a_in, d), sh);
  // Differentiable in a as JAX's gamma (the rejection loop itself is not): the sample's tangent is
  // random_gamma_grad(a, x) * da, and d log x = dx / x for loggamma (x = exp(log x), kept above zero).
  auto draw = [d, log_space](const Array& k, const Array& av) { return gamma_raw(k, av, d, log_space); };
  auto rule = [draw, d, log_space](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
    const Array& av = std::get<1>(p);
    Array s = draw(std::get<0>(p), av);
    Array x = s;
    if (log_space) {
      x = lax::exp(s);
      x = lax::select(lax::eq(x, k(0, d)), jnp::full_like(x, tiny(d)), x);
    }
    Array g = lax::random_gamma_grad(av, x);  // -(dP/da) / (dP/dx) at the draw
    if (log_space) g = lax::div(g, x);
    const Array& ta = std::get<1>(t);
    return std::make_pair(s, ta.valid() ? lax::mul(g, ta) : jnp::zeros_like(s));
  };
  return custom_jvp(draw, rule, symbolic_zeros)(key, a);
}

Array gamma_public(const Array& key, const Array& a, std::optional<Shape> shape, DType dtype, bool log_space,
                   std::string_view op) {
  check_real(a, op, "a");
  Shape sh = shape ? *shape : a.shape();
  dtype = begin_float(key, dtype, sh, op);
  broadcast_param(a, sh, op, "a");
  detail::ScopedX64 x64;
  return compiled(sig(op, sh, dtype), {key, a}, [=](auto& v) { return gamma_impl(v[0], v[1], sh, dtype, log_space); });
}

}  // namespace

Array gamma(const Array& key, const Array& a, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  return gamma_public(key, a, shape, dtype, false, "gamma");
}

Array loggamma(const Array& key, const Array& a, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  return gamma_public(key, a, shape, dtype, true, "loggamma");
}

Array beta(const Array& key, const Array& a, const Array& b, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  check_real(a, "beta", "a");
  check_real(b, "beta", "b");
  Shape sh = param_shape(shape, {a.shape(), b.shape()}, "beta");
  dtype = begin_float(key, dtype, sh, "beta");
  broadcast_param(a, sh, "beta", "a");
  broadcast_param(b, sh, "beta", "b");
  detail::ScopedX64 x64;
  return compiled(sig("beta", sh, dtype), {key, a, b}, [=](auto& v) {
    Fx F{dtype, true};  // differentiable in a and b (through gamma's rule)
    auto ks = split_n(v[0], 2);
    Array la = F.in(gamma_impl(ks[0], v[1], sh, dtype, true));
    Array lb = F.in(gamma_impl(ks[1], v[2], sh, dtype, true));
    Array lmax = lax::max(la, lb);
    Array ga = F.exp(F.sub(la, lmax)), gb = F.exp(F.sub(lb, lmax));
    return F.out(F.div(ga, F.add(ga, gb)));
  });
}

Array dirichlet(const Array& key, const Array& alpha, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  check_real(alpha, "dirichlet", "alpha");
  if (alpha.ndim() < 1)
    throw_error<ShapeError>("dirichlet", "requires alpha.ndim >= 1, got alpha.ndim == {}", alpha.ndim());
  Shape batch(alpha.shape().begin(), alpha.shape().end() - 1);
  Shape sh = shape ? *shape : batch;
  if (shape && jnp::broadcast_shapes({sh, batch}, "dirichlet") != sh)
    throw_error<ShapeError>("dirichlet", "alpha's batch shape {} does not broadcast to shape {}", shape_str(batch),
                            shape_str(sh));
  Shape full = sh;
  full.push_back(alpha.shape().back());
  dtype = begin_float(key, dtype, full, "dirichlet");
  detail::ScopedX64 x64;
  return compiled(sig("dirichlet", full, dtype), {key, alpha},
                  [=](auto& v) { return nn::softmax(gamma_impl(v[0], v[1], full, dtype, true), -1); });
}

Array t(const Array& key, const Array& df, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  check_real(df, "t", "df");
  Shape sh = shape ? *shape : df.shape();
  dtype = begin_float(key, dtype, sh, "t");
  broadcast_param(df, sh, "t", "df");
  detail::ScopedX64 x64;
  return compiled(sig("t", sh, dtype), {key, df}, [=](auto& v) {
    Fx F{dtype, true};  // differentiable in df
    auto ks = split_n(v[0], 2);
    Array n = F.in(normal_impl(ks[0], sh, dtype));
    Array half_df = F.div(F.in(lax::convert_element_type(v[1], dtype)), F.c(2));
    Array g = F.in(gamma_impl(ks[1], F.out(half_df), sh, dtype, false));
    return F.out(F.mul(n, F.sqrt(F.div(jnp::broadcast_to(half_df, sh), g))));
  });
}

namespace {
Array chisquare_impl(const Array& key, const Array& df, const Shape& sh, DType d) {
  Fx F{d, true};  // differentiable in df
  Array half_df = F.div(F.in(lax::convert_element_type(df, d)), F.c(2));
  Array lg = F.in(gamma_impl(key, F.out(half_df), sh, d, true));
  return F.out(F.mul(F.exp(lg), F.c(2)));
}
}  // namespace

Array chisquare(const Array& key, const Array& df, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  check_real(df, "chisquare", "df");
  Shape sh = shape ? *shape : df.shape();
  dtype = begin_float(key, dtype, sh, "chisquare");
  broadcast_param(df, sh, "chisquare", "df");
  detail::ScopedX64 x64;
  return compiled(sig("chisquare", sh, dtype), {key, df},
                  [=](auto& v) { return chisquare_impl(v[0], v[1], sh, dtype); });
}

Array f(const Array& key, const Array& dfnum, const Array& dfden, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  check_real(dfnum, "f", "dfnum");
  check_real(dfden, "f", "dfden");
  Shape sh = param_shape(shape, {dfnum.shape(), dfden.shape()}, "f");
  dtype = begin_float(key, dtype, sh, "f");
  broadcast_param(dfnum, sh, "f", "dfnum");
  broadcast_param(dfden, sh, "f", "dfden");
  detail::ScopedX64 x64;
  return compiled(sig("f", sh, dtype), {key, dfnum, dfden}, [=](auto& v) {
    Fx F{dtype, true};  // differentiable in dfnum and dfden
    auto ks = split_n(v[0], 2);  // key_dfd, key_dfn
    Array dn = F.in(jnp::broadcast_to(lax::convert_element_type(v[1], dtype), sh));
    Array dd = F.in(jnp::broadcast_to(lax::convert_element_type(v[2], dtype), sh));
    Array cn = F.in(chisquare_impl(ks[1], v[1], sh, dtype)), cd = F.in(chisquare_impl(ks[0], v[2], sh, dtype));
    return F.out(F.div(F.div(cn, dn), F.div(cd, dd)));
  });
}

namespace {
Array generalized_normal_impl(const Array& key, double p, const Shape& sh, DType d) {
  Fx F{d};
  auto ks = split_n(key, 2);
  Array g = F.in(gamma_impl(ks[0], Array::scalar(1.0 / p, d), sh, d, false));
  Array u = unit_uniform(ks[1], sh, DType::float64, 0.0, 1.0, "generalized_normal");  // rademacher (x64)
  Array r = F.in(lax::sub(
      lax::mul(Array::scalar(2.0, d), lax::convert_element_type(lax::lt(u, Array::scalar(0.5, DType::float64)), d)),
      Array::scalar(1.0, d)));
  return F.out(F.mul(r, F.pow(g, F.c(1.0 / p))));
}
}  // namespace

Array generalized_normal(const Array& key, double p, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  dtype = begin_float(key, dtype, shape, "generalized_normal");
  detail::ScopedX64 x64;
  return compiled(sig("generalized_normal", shape, dtype, fmt::format("{}", p)), {key},
                  [=](auto& v) { return generalized_normal_impl(v[0], p, shape, dtype); });
}

Array ball(const Array& key, int64_t d, double p, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (d < 0) throw_error<ShapeError>("ball", "d must be non-negative, got {}", d);
  Shape full = shape;
  full.push_back(d);
  dtype = begin_float(key, dtype, full, "ball");
  detail::ScopedX64 x64;
  return compiled(sig("ball", full, dtype, fmt::format("{}", p)), {key}, [=](auto& v) {
    auto ks = split_n(v[0], 2);
    Array g = generalized_normal_impl(ks[0], p, full, dtype);
    Array e = exponential_impl(ks[1], shape, dtype);
    Array pp = Array::scalar(p, dtype), ip = Array::scalar(1.0 / p, dtype);
    Array den = lax::pow(lax::add(jnp::sum(lax::pow(lax::abs(g), pp), {-1}), e), ip);
    return jnp::divide(g, jnp::expand_dims(den, -1));
  });
}

}  // namespace jitx::random
