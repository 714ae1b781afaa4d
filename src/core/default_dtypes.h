// JAX's default dtypes (jnp.int_, jnp.uint, jnp.float_): the dtypes index results (argmax, argsort), sums of
// bools and narrow ints, and int-to-inexact promotion in jax.nn take. With jax_enable_x64 (the reference) they are
// int64/uint64/float64; with config().enable_x64 off (JAX's default mode) int32/uint32/float32.
#pragma once
#include "jitx/config.h"
#include "jitx/dtype.h"

namespace jitx::detail {
inline DType default_int_dtype() { return canonicalize_dtype(DType::int64); }
inline DType default_uint_dtype() { return canonicalize_dtype(DType::uint64); }
inline DType default_float_dtype() { return canonicalize_dtype(DType::float64); }
}  // namespace jitx::detail
