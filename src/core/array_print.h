// NumPy's text of arrays and scalars, as JAX prints them (src/core/array_print.cpp).
#pragma once
#include <string>

#include "core/literal.h"

namespace jitx::detail {

/// A 0-d value as NumPy's scalar str (what jax.debug.print shows for "{}"): floats with the fewest digits that
/// identify them in their dtype, positional from 1e-4 to 1e16 ("2.0", "0.3333333333333333", "0.33333334" in f32),
/// scientific outside ("1e+20"); bfloat16 as ml_dtypes' "%.6g"; bools "True"/"False".
std::string scalar_text(const Literal& lit);

}  // namespace jitx::detail
