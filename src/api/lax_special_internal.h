// Internal entry points of src/api/lax_special.cpp for jax.scipy.special's forms (src/api/scipy_special.cpp).
#pragma once
#include "jitx/array.h"

namespace jitx::lax::special_internal {
/// The Hurwitz zeta function on float32/float64 arguments of one shape, differentiable in both (autodiff through
/// its Euler-Maclaurin sum, as jax.scipy.special.zeta differentiates its series expansion).
Array zeta_differentiable(const Array& x, const Array& q);
}  // namespace jitx::lax::special_internal
