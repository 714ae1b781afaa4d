// End-to-end smoke: eager ops, jit, jaxpr, StableHLO.
#include <catch2/catch.hpp>

#include "jitx/jitx.h"

using namespace jitx;

TEST_CASE("eager add and jit add agree with hand-computed values", "[smoke]") {
  Array x = array<float>({1.5f, -2.0f, 3.25f});
  Array y = array<float>({0.5f, 4.0f, -1.25f});
  auto eager = (x + y).to_vector<float>();
  REQUIRE(eager == std::vector<float>{2.0f, 2.0f, 2.0f});
  auto f = jit([](Array a, Array b) { return a * b + 1.0; });
  auto r = f(x, y).to_vector<float>();
  REQUIRE(r == std::vector<float>{1.75f, -7.0f, -3.0625f});
}
