// EXPECT: take `Array` or `const Array&`
#include <jitx/jitx.h>
using namespace jitx;
int main() {
  Array x = array({1.f, 2.f});
  auto r = lax::cond(true, [](Array& a) { return a; }, [](const Array& a) { return -a; }, x);
  return r.ndim();
}
