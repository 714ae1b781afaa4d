// jnp's Bessel-function pieces, which need jax.lax's special functions (jitx/lax_special.h): i0 and the Kaiser
// window. Include "jitx/numpy.h" too.
#pragma once
#include <cstdint>

#include "jitx/array.h"

namespace jitx::numpy {

/// The modified Bessel function of the first kind, order 0 (integers promote to an inexact dtype); its derivative
/// is 0 at x = 0, as JAX's custom rule makes it.
Array i0(const Array& x, Loc loc = Loc::current());
/// The Kaiser window of M points: i0(beta sqrt(1 - ((n - alpha) / alpha)^2)) / i0(beta), alpha = (M - 1) / 2, in the
/// default float dtype (M <= 1: M ones).
Array kaiser(int64_t M, const Array& beta, Loc loc = Loc::current());

}  // namespace jitx::numpy
