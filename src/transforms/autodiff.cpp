// jitx::stop_gradient (the rest of the autodiff API is templates over detail::{jvp,linearize}_flat).
#include "core/errors.h"
#include "jitx/autodiff.h"
#include "core/primitive.h"

namespace jitx {
Array stop_gradient(const Array& x, Loc loc) {
  detail::ApiScope s(loc);
  static const auto& p = *detail::find_primitive("stop_gradient");
  // Integer and bool values have no gradient to stop.
  if (!is_floating(x.dtype())) return x;
  return detail::bind1(p, {x});
}
}  // namespace jitx
