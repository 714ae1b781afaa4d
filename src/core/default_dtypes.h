// JAX's default dtypes (jnp.int_, jnp.uint, jnp.float_): the dtypes index results (argmax, argsort), sums of
// bools and narrow ints, and int-to-inexact promotion in jax.nn take. With jax_enable_x64 (the reference) they are
// int64/uint64/float64; with config().enable_x64 off (JAX's default mode) int32/uint32/float32.
#pragma once
#include "jitx/config.h"
#include "jitx/dtype.h"

namespace jitx::detail {
/// For its scope, on this thread, canonicalize_dtype keeps 64-bit dtypes whatever config().enable_x64 says: for
/// library code whose internals need 64-bit arithmetic (the random samplers' exact emulation of XLA's math) while
/// its results follow the mode.
struct ScopedX64 {
  ScopedX64();
  ~ScopedX64();
  ScopedX64(const ScopedX64&) = delete;
  ScopedX64& operator=(const ScopedX64&) = delete;
};
inline DType default_int_dtype() { return canonicalize_dtype(DType::int64); }
inline DType default_uint_dtype() { return canonicalize_dtype(DType::uint64); }
inline DType default_float_dtype() { return canonicalize_dtype(DType::float64); }
}  // namespace jitx::detail
