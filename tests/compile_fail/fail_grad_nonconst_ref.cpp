// EXPECT: take `Array` or `const Array&`
#include <jitx/jitx.h>
using namespace jitx;
int main() {
  auto g = grad([](Array& x) { return jnp::sum(x * x); });
  return g(array({1.f, 2.f})).ndim();
}
