// EXPECT: fori_loop body
#include <jitx/jitx.h>
using namespace jitx;
int main() {
  auto r = lax::fori_loop(Array(0), Array(3), [](const Array& c) { return c + 1.f; }, Array(0.f));
  return r.ndim();
}
