// jnp's creation aliases (identity, empty, the *_like with a dtype): each opens its own API scope, so an error
// raised by the function it forwards to also names the alias the user called (issue 16's API walk).
#include "core/errors.h"
#include "jitx/numpy.h"

namespace jitx::numpy {
using detail::ApiScope;

Array identity(int64_t n, DType dtype, Loc loc) {
  ApiScope s(loc);
  return eye(n, -1, 0, dtype, loc);
}
Array empty(Shape shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  return zeros(std::move(shape), dtype, loc);
}
// An invalid Array throws through jitx's own *_like, which name the function.
Array zeros_like(const Array& a, DType dtype, Loc loc) {
  ApiScope s(loc);
  return a.valid() ? zeros(a.shape(), dtype, loc) : jitx::zeros_like(a, loc);
}
Array ones_like(const Array& a, DType dtype, Loc loc) {
  ApiScope s(loc);
  return a.valid() ? ones(a.shape(), dtype, loc) : jitx::ones_like(a, loc);
}
Array full_like(const Array& a, double value, DType dtype, Loc loc) {
  ApiScope s(loc);
  return a.valid() ? full(a.shape(), value, dtype, loc) : jitx::full_like(a, value, loc);
}
Array empty_like(const Array& a, Loc loc) {
  ApiScope s(loc);
  return jitx::zeros_like(a, loc);
}

}  // namespace jitx::numpy
