// Array's method-style reductions and reshapes (x.prod(), x.argmax(1), x.squeeze(), ...): each is its jnp function.
#include "jitx/array.h"
#include "jitx/numpy.h"

namespace jitx {

Array Array::prod(std::vector<int64_t> axes, bool keepdims, Loc loc) const {
  return jnp::prod(*this, axes, keepdims, loc);
}
Array Array::all(std::vector<int64_t> axes, bool keepdims, Loc loc) const {
  return jnp::all(*this, axes, keepdims, loc);
}
Array Array::any(std::vector<int64_t> axes, bool keepdims, Loc loc) const {
  return jnp::any(*this, axes, keepdims, loc);
}
Array Array::var(std::vector<int64_t> axes, bool keepdims, int64_t ddof, Loc loc) const {
  return jnp::var(*this, axes, keepdims, ddof, loc);
}
Array Array::std(std::vector<int64_t> axes, bool keepdims, int64_t ddof, Loc loc) const {
  return jnp::std(*this, axes, keepdims, ddof, loc);
}
Array Array::argmax(std::optional<int64_t> axis, bool keepdims, Loc loc) const {
  return jnp::argmax(*this, axis, keepdims, loc);
}
Array Array::argmin(std::optional<int64_t> axis, bool keepdims, Loc loc) const {
  return jnp::argmin(*this, axis, keepdims, loc);
}
Array Array::flatten(Loc loc) const { return jnp::ravel(*this, loc); }
Array Array::ravel(Loc loc) const { return jnp::ravel(*this, loc); }
Array Array::squeeze(std::vector<int64_t> axes, Loc loc) const { return jnp::squeeze(*this, axes, loc); }
Array Array::cumsum(std::optional<int64_t> axis, Loc loc) const { return jnp::cumsum(*this, axis, loc); }

}  // namespace jitx
