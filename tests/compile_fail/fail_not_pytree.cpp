// EXPECT: JITX_PYTREE
#include <jitx/jitx.h>
using namespace jitx;
struct Params {
  Array w, b;
};
int main() {
  auto f = jit([](const Params& p, const Array& x) { return p.w * x + p.b; });
  Params p{array({1.f}), array({2.f})};
  return f(p, array({3.f})).ndim();
}
