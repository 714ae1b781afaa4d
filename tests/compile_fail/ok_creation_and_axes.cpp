// Nested lists, integer axes, jnp creation functions and dtype names, JitOptions setters in any order.
#include <jitx/jitx.h>

#include <type_traits>
using namespace jitx;
int main() {
  Array m = array({{1.f, 2.f}, {3.f, 4.f}});
  Array t = array({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});
  // The CHECKs of this case are compile-time (values: [usability] tests).
  static_assert(std::is_same_v<decltype(jnp::mean(m, -1, true)), Array>, "an integer axis is accepted");
  static_assert(std::is_convertible_v<decltype(jnp::float32), DType>, "jnp has the dtype names");
  Array h = jnp::mean(m, -1, true) + jnp::sum(t, 0).astype(jnp::float32)[0];
  Array z = jnp::zeros({2, 2}, jnp::float32) + jnp::ones_like(m) + jnp::eye(2) + jnp::full({2, 2}, 1.0) +
            jnp::identity(2) + jnp::empty({2, 2}) + jnp::zeros_like(m) + jnp::full_like(m, 2.0);
  Array r = jnp::arange(4) + jnp::linspace(0, 1, 4, true, jnp::float64);
  auto f = jit([](const Array& x, int n) { return x * float(n); },
               JitOptions{}.set_donate_argnums({0}).set_static_argnums({1}));
  return static_cast<int>(h.ndim() + z.ndim() + r.ndim() + f(m, 2).ndim());
}
