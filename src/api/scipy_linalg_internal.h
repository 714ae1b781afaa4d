// Helpers shared by jitx::scipy::linalg's sources (scipy_linalg.cpp, scipy_linalg_more.cpp): the argument check and
// JAX's promote_dtypes_inexact on one array.
#pragma once
#include <string_view>

#include "core/errors.h"
#include "jitx/array.h"
#include "ops/numpy_stats_util.h"

namespace jitx::scipy::linalg::internal {

/// x itself, or a TypeError naming op for an empty (default-constructed) Array.
inline const Array& valid_arg(std::string_view op, const Array& x) {
  if (!x.valid()) detail::throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  return x;
}
/// x promoted to an inexact dtype (JAX's promote_dtypes_inexact on one array), strongly typed.
inline Array inexact_of(std::string_view op, const Array& x) {
  return numpy::stats_util::stats_strong(numpy::stats_util::stats_inexact(valid_arg(op, x)));
}

}  // namespace jitx::scipy::linalg::internal
