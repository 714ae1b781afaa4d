// EXPECT: does not match declaration order
// (GCC's own message; JitOptions' comment names the order and the set_* setters that take any order)
#include <jitx/jitx.h>
using namespace jitx;
int main() {
  auto f = jit([](const Array& x, int n) { return x * float(n); },
               JitOptions{.donate_argnums = {0}, .static_argnums = {1}});
  return f(array({1.f}), 2).ndim();
}
