// Helpers shared by jnp's statistics (src/ops/numpy_stats.cpp) and math (src/api/numpy_stats_math.cpp) packs.
// Their names are unique in jitx::numpy, so that sources sharing a unity build unit never clash.
#pragma once
#include <string_view>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "jitx/lax.h"
#include "ops/convert.h"

namespace jitx::numpy::stats_util {

/// A strong constant of dtype d.
inline Array stats_lit(double v, DType d) { return lax::convert_element_type(Array(v), d); }
/// A TypeError naming op for an empty (default-constructed) Array.
inline void stats_check_valid(std::string_view op, const Array& x, const char* what = "an") {
  if (!x.valid()) detail::throw_error<TypeError>(op, "got {} empty (default-constructed) Array", what);
}
/// JAX's promote_dtypes_inexact on one promoted operand: 64-bit ints become the default float (float64), other
/// ints and bool float32; a weak input stays weak.
inline DType stats_inexact_of(DType d) {
  if (is_floating(d)) return d;
  return dtype_bits(d) == 64 ? detail::default_float_dtype() : DType::float32;
}
inline Array stats_inexact(const Array& v) {
  if (is_floating(v.dtype())) return v;
  return detail::convert_weak(v, stats_inexact_of(v.dtype()), v.weak_type());
}

}  // namespace jitx::numpy::stats_util
