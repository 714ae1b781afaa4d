// EXPECT: take `Array` or `const Array&`
#include <jitx/jitx.h>
using namespace jitx;
int main() {
  auto r = lax::while_loop([](const Array& c) { return c < 10.f; }, [](Array& c) { return c + 1.f; }, Array(0.f));
  return r.ndim();
}
