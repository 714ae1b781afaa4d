// Constant folding: small all-constant instructions become constants; broadcasts, iotas, results over the size cap
// and non-constant operands stay.
#include <catch2/catch.hpp>

#include "hlo/passes/constant_folding.h"
#include "hlo/passes/dce.h"
#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;
using Catch::Matchers::Contains;

TEST_CASE("constant folding: small all-constant instructions become constants", "[hlo]") {
  auto r = run(R"(HloModule m
ENTRY %main (p: f32[3]) -> f32[3] {
  %p = f32[3] parameter(0)
  %a = f32[3] constant({1, 2, 3})
  %b = f32[3] constant({0.5, 0.25, 4})
  %m = f32[3] multiply(%a, %b)
  %e = f32[3] negate(%m)
  ROOT %r = f32[3] add(%p, %e)
}
)", passes<ConstantFolding, DeadCodeElimination>());
  CHECK(r.changed);
  CHECK_THAT(r.text, Contains("f32[3]{0} constant({-0.5, -0.5, -12})"));
  CHECK(count_of(r.text, "multiply(") == 0);
  SECTION("must not change: broadcasts, iotas, results over the size cap, non-constant operands") {
    check_unchanged<ConstantFolding>(R"(HloModule m
ENTRY %main (p: f32[3]) -> (f32[2000], s32[4], f32[2000], f32[3]) {
  %p = f32[3] parameter(0)
  %k = f32[] constant(1)
  %b = f32[2000] broadcast(%k), broadcast_dimensions={}
  %i = s32[4] iota(), iota_dimension=0
  %e = f32[2000] exponential(%b)
  %n = f32[3] negate(%p)
  ROOT %t = (f32[2000], s32[4], f32[2000], f32[3]) tuple(%b, %i, %e, %n)
}
)");
  }
}
