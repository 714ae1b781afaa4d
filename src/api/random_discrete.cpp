// jitx::random: poisson (Knuth's product of uniforms below lam = 10, JAX's transformed rejection above), as
// jax.random.poisson: both loops run over the whole shape under the one key, as JAX runs them.
#include <cmath>
#include <limits>

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
using detail::shape_str;
using detail::throw_error;
using namespace internal;

namespace {

using Carry = std::vector<Array>;
constexpr DType F32 = DType::float32;

double int_max_of(DType d) {
  switch (d) {
    case DType::int8:
      return 127;
    case DType::int16:
      return 32767;
    case DType::int32:
      return 2147483647.0;
    case DType::uint8:
      return 255;
    case DType::uint16:
      return 65535;
    case DType::uint32:
      return 4294967295.0;
    default:
      return 9.2233720368547758e18;
  }
}

/// Iteration counter and its bound (JAX's i < max_iters, max_iters = iinfo(dtype).max: never reached in practice).
Array iters_left(const Array& i, DType dtype) {
  return lax::lt(lax::convert_element_type(i, DType::float64), Array::scalar(int_max_of(dtype), DType::float64));
}

Array poisson_knuth(const Array& key, const Array& lam, const Shape& sh, DType dtype) {
  Fx F{F32};
  Array neg_lam = lax::neg(lam);
  Carry init{Array::scalar_int(0, DType::int64), lax::full(sh, Array::scalar_int(0, dtype)), key,
             lax::full(sh, F.c(0))};
  Carry out = lax::while_loop(
      [=](const Carry& c) { return lax::bitwise_and(jnp::any(lax::gt(c[3], neg_lam)), iters_left(c[0], dtype)); },
      [=](const Carry& c) {
        auto ks = split_n(c[2], 2);
        Array k = lax::select(lax::gt(c[3], neg_lam), lax::add(c[1], Array::scalar_int(1, dtype)), c[1]);
        Array u = F.in(unit_uniform(ks[1], sh, F32, 0.0, 1.0, "poisson"));
        return Carry{lax::add(c[0], Array::scalar_int(1, DType::int64)), k, ks[0], F.add(c[3], F.log(u))};
      },
      init);
  return lax::sub(out[1], Array::scalar_int(1, dtype));
}

Array poisson_rejection(const Array& key, const Array& lam, const Shape& sh, DType dtype) {
  Fx F{F32};
  Array log_lam = F.log(lam);
  // (each multiply feeding an add is one FMA in XLA:CPU's fused loop)
  Array b = F.fma(F.c(2.53), F.sqrt(lam), F.c(0.931));
  Array a = F.fma(F.c(0.02483), b, F.c(-0.059));
  Array inv_alpha = F.add(F.c(1.1239), F.div(F.c(1.1328), F.sub(b, F.c(3.4))));
  Array v_r = F.sub(F.c(0.9277), F.div(F.c(3.6224), F.sub(b, F.c(2))));
  Carry init{Array::scalar_int(0, DType::int64), lax::full(sh, F.c(-1)), lax::full(sh, Array(false)), key};
  Carry out = lax::while_loop(
      [=](const Carry& c) { return lax::bitwise_and(jnp::any(lax::bitwise_not(c[2])), iters_left(c[0], dtype)); },
      [=](const Carry& c) {
        auto ks = split_n(c[3], 3);
        Array u = F.sub(F.in(unit_uniform(ks[1], sh, F32, 0.0, 1.0, "poisson")), F.c(0.5));
        Array v = F.in(unit_uniform(ks[2], sh, F32, 0.0, 1.0, "poisson"));
        Array us = F.sub(F.c(0.5), lax::abs(u));
        Array k = lax::floor(F.add(F.fma(F.add(F.div(F.mul(F.c(2), a), us), b), u, lam), F.c(0.43)));
        Array s = F.log(F.div(F.mul(v, inv_alpha), F.add(F.div(a, F.mul(us, us)), b)));
        Array lg = F.via(F.add(k, F.c(1)), [](const Array& x) { return lax::lgamma(x); });
        Array t = F.sub(F.fma(k, log_lam, lax::neg(lam)), lg);
        Array accept1 = lax::bitwise_and(lax::ge(us, F.c(0.07)), lax::le(v, v_r));
        Array reject = lax::bitwise_or(lax::lt(k, F.c(0)), lax::bitwise_and(lax::lt(us, F.c(0.013)), lax::gt(v, us)));
        Array accept = lax::bitwise_or(accept1, lax::bitwise_and(lax::bitwise_not(reject), lax::le(s, t)));
        return Carry{lax::add(c[0], Array::scalar_int(1, DType::int64)), lax::select(accept, k, c[1]),
                     lax::bitwise_or(c[2], accept), ks[0]};
      },
      init);
  return lax::convert_element_type(F.out(out[1]), dtype);
}

}  // namespace

Array poisson(const Array& key, const Array& lam, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "poisson");
  check_dtype_value(dtype, "poisson");
  dtype = canonicalize_dtype(dtype);
  if (!is_integer(dtype))
    throw_error<TypeError>("poisson", "dtype must be an integer dtype, got {}", dtype_name(dtype));
  if (!lam.valid() || !(is_floating(lam.dtype()) || is_integer(lam.dtype())))
    throw_error<TypeError>("poisson", "lam must be a real array, got {}",
                           lam.valid() ? lam.aval().str() : "an empty Array");
  Shape sh = shape ? *shape : lam.shape();
  check_shape(sh, "poisson");
  broadcast_param(lam, sh, "poisson", "lam");
  detail::ScopedX64 x64;
  return compiled(sig("poisson", sh, dtype), {key, lam}, [=](auto& a) {
    Fx F{F32};
    Array l = F.in(jnp::broadcast_to(lax::convert_element_type(a[1], F32), sh));
    Array use_knuth = lax::bitwise_or(lax::ne(l, l), lax::lt(l, F.c(10)));
    Array lk = lax::select(use_knuth, l, lax::full(sh, F.c(0)));
    Array lr = lax::select(use_knuth, lax::full(sh, F.c(1e5)), l);
    Array r = lax::select(use_knuth, poisson_knuth(a[0], lk, sh, dtype), poisson_rejection(a[0], lr, sh, dtype));
    return lax::select(lax::eq(l, F.c(0)), lax::full(sh, Array::scalar_int(0, dtype)), r);
  });
}

}  // namespace jitx::random
