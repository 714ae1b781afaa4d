// Helpers shared by jnp's sources (numpy.cpp, the shape, statistics and math packs). Their names are unique in
// jitx::numpy, so that sources sharing a unity build unit never clash.
#pragma once
#include <algorithm>
#include <numeric>
#include <string_view>
#include <vector>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
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

/// A weak x made strong (JAX's gathers and reductions give strong results even of weak inputs).
inline Array stats_strong(const Array& x) { return x.weak_type() ? detail::convert_weak(x, x.dtype(), false) : x; }
/// x's axes canonicalised in the order given (all of them, ascending, when empty); a repeated axis is a ShapeError
/// naming op.
inline std::vector<int64_t> axes_in_order(const Array& x, const std::vector<int64_t>& axes, std::string_view op) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    out.resize(static_cast<size_t>(x.ndim()));
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int64_t a : axes) {
    int64_t c = detail::canonical_axis(a, x.ndim(), op);
    if (std::find(out.begin(), out.end(), c) != out.end())
      detail::throw_error<ShapeError>(op, "axis {} is repeated in {}", a, detail::shape_str(axes));
    out.push_back(c);
  }
  return out;
}

}  // namespace jitx::numpy::stats_util
