// EXPECT: JITX_PYTREE
#include <jitx/jitx.h>
using namespace jitx;
struct Layer {
  Array w;
};
int main() {
  auto f = vmap([](const Layer& l) { return l.w * 2.0f; });
  return f(Layer{array({1.f, 2.f})}).ndim();
}
