// EXPECT: a scan body returns (carry, y)
#include <jitx/jitx.h>
using namespace jitx;
int main() {
  auto r = lax::scan([](const Array& c, const Array& x) { return c + x; }, Array(0.f), array({1.f, 2.f}));
  return r.first.ndim();
}
