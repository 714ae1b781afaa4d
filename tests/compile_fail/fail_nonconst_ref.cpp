// EXPECT: take `Array` or `const Array&`
#include <jitx/jitx.h>
using namespace jitx;
int main() {
  auto f = jit([](Array& x) { return x * 2.0f; });
  return f(array({1.f, 2.f})).ndim();
}
