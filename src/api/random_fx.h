// Arithmetic for the samplers of random_samplers*.cpp, rounded as XLA:CPU rounds it: values live in float64 arrays
// holding values of the sampler's dtype d; for f32/f16/bf16 each op is rounded to d by xla_math (integer
// arithmetic, so no backend fuses it), for f64 the ops are jitx's f64 ops (log: libm's, as XLA's; log1p: XLA's).
// Functions XLA:CPU inlines and xla_math does not model (exp, pow, tan, lgamma) go through jitx's own op in d:
// results that pass through them are close to JAX's but not bit-exact.
#pragma once

#include <functional>

#include "api/random_internal.h"
#include "api/random_xla_math.h"
#include "jitx/lax.h"

namespace jitx::random::internal {

struct Fx {
  DType d;
  /// Differentiable: each rounded op gets the derivative of the plain op at the same inputs (with_derivative_of),
  /// for samplers whose parameters JAX differentiates (the integer rounding alone has a zero derivative).
  bool smooth = false;
  bool wide() const { return d == DType::float64; }
  Array st(const Array& exact, const Array& plain) const { return smooth ? with_derivative_of(exact, plain) : exact; }
  /// A d array in (exact), out to d (exact).
  Array in(const Array& x) const { return wide() ? x : xla_math::widen(x); }
  Array out(const Array& x) const { return wide() ? x : xla_math::narrow(x, d); }
  /// v rounded to d.
  Array c(double v) const {
    return wide() ? Array::scalar(v, DType::float64) : xla_math::widen(Array::scalar(v, d));
  }
  Array add(const Array& a, const Array& b) const {
    return wide() ? lax::add(a, b) : st(xla_math::add(a, b, d), lax::add(a, b));
  }
  Array sub(const Array& a, const Array& b) const {
    return wide() ? lax::sub(a, b) : st(xla_math::sub(a, b, d), lax::sub(a, b));
  }
  Array mul(const Array& a, const Array& b) const {
    return wide() ? lax::mul(a, b) : st(xla_math::mul(a, b, d), lax::mul(a, b));
  }
  Array div(const Array& a, const Array& b) const {
    return wide() ? lax::div(a, b) : st(xla_math::div(a, b, d), lax::div(a, b));
  }
  /// a * b + c as XLA:CPU's contracted multiply-add: one rounding in f32 and f64, two in f16/bf16.
  Array fma(const Array& a, const Array& b, const Array& c) const {
    if (wide()) return xla_math::fma64(a, b, c);
    if (d == DType::float32) return st(xla_math::fma32(a, b, c), lax::add(lax::mul(a, b), c));
    return add(mul(a, b), c);
  }
  Array sqrt(const Array& a) const {
    return wide() ? lax::sqrt(a) : st(xla_math::round_to(lax::sqrt(a), d), lax::sqrt(a));
  }
  Array log(const Array& a) const {
    return wide() ? lax::log(a) : st(xla_math::round_to(xla_math::log32(a), d), lax::log(a));
  }
  Array log1p(const Array& a) const {
    return wide() ? xla_math::log1p64(a) : st(xla_math::round_to(xla_math::log1p32(a), d), lax::log1p(a));
  }
  /// fn (a jitx op) evaluated in d: not XLA's algorithm.
  Array via(const Array& a, const std::function<Array(const Array&)>& fn) const { return in(fn(out(a))); }
  Array exp(const Array& a) const { return via(a, [](const Array& x) { return lax::exp(x); }); }
  Array pow(const Array& a, const Array& b) const { return in(lax::pow(out(a), out(b))); }
};

}  // namespace jitx::random::internal
