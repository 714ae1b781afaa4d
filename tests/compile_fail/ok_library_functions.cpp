// Library functions passed directly, as jax.jit(jnp.tanh), jax.grad(jnp.sin), jax.vmap(jnp.exp).
#include <jitx/jitx.h>

#include <type_traits>
using namespace jitx;
int main() {
  Array x = array({1.f, 2.f});
  // The CHECKs of this case are compile-time: each call compiles and gives an Array (values: [usability] tests).
  static_assert(std::is_same_v<decltype(jit(jnp::tanh)(x)), Array>, "jit(jnp::tanh)(x) is an Array");
  static_assert(std::is_same_v<decltype(grad(jnp::sin)(Array(1.f))), Array>, "grad(jnp::sin) gives an Array");
  Array a = jit(jnp::tanh)(x), b = vmap(jnp::exp)(x), c = grad(jnp::sin)(Array(1.f));
  Array d = jit(jnp::add)(x, x), e = value_and_grad(jnp::cos)(Array(1.f)).second;
  return static_cast<int>(a.ndim() + b.ndim() + c.ndim() + d.ndim() + e.ndim());
}
