// Dtype conversion with an explicit weak type, shared by the jnp sources (lax::convert_element_type always gives a
// strong result).
#pragma once

#include "jitx/array.h"

namespace jitx::detail {
/// x as (dtype, weak); concrete scalars are converted on the host so they stay literals.
Array convert_weak(const Array& x, DType dtype, bool weak);
}  // namespace jitx::detail
