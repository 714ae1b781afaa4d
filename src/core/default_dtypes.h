// JAX's default dtypes (jnp.int_, jnp.uint, jnp.float_): the dtypes index results (argmax, argsort), sums of
// bools and narrow ints, and int-to-inexact promotion in jax.nn take. With jax_enable_x64 (the reference) they are
// int64/uint64/float64; a 32-bit mode switches them here, in one place, to int32/uint32/float32.
#pragma once
#include "jitx/dtype.h"

namespace jitx::detail {
inline DType default_int_dtype() { return DType::int64; }
inline DType default_uint_dtype() { return DType::uint64; }
inline DType default_float_dtype() { return DType::float64; }
}  // namespace jitx::detail
