// Common-subexpression elimination: equal instructions and equal constants merge; different constants, attributes,
// operand orders and shapes stay apart.
#include <catch2/catch.hpp>

#include "hlo/passes/cse.h"
#include "hlo/passes/dce.h"
#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;
using Catch::Matchers::Contains;

TEST_CASE("cse: merges equal instructions and equal constants", "[hlo]") {
  auto r = run(R"(HloModule cse
ENTRY %main (p: f32[4]) -> (f32[4], f32[4], f32[4]) {
  %p = f32[4] parameter(0)
  %k1 = f32[] constant(2)
  %k2 = f32[] constant(2)
  %b1 = f32[4] broadcast(%k1), broadcast_dimensions={}
  %b2 = f32[4] broadcast(%k2), broadcast_dimensions={}
  %m1 = f32[4] multiply(%p, %b1)
  %m2 = f32[4] multiply(%p, %b2)
  %e1 = f32[4] exponential(%m1)
  %e2 = f32[4] exponential(%m2)
  %s = f32[4] sine(%p)
  ROOT %t = (f32[4], f32[4], f32[4]) tuple(%e1, %e2, %s)
}
)", passes<CommonSubexpressionElimination, DeadCodeElimination>());
  CHECK(r.changed);
  CHECK_THAT(r.text, Contains("tuple(%e1, %e1, %s)"));
  CHECK(count_of(r.text, " exponential(") == 1);
  CHECK(count_of(r.text, " constant(") == 1);
  // Different constants, attributes, operand order or shapes stay apart.
  check_unchanged<CommonSubexpressionElimination>(R"(HloModule apart
ENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[4], pred[4], pred[4], f32[], f32[]) {
  %p = f32[4] parameter(0)
  %q = f32[4] parameter(1)
  %a1 = f32[4] add(%p, %q)
  %a2 = f32[4] add(%q, %p)
  %c1 = pred[4] compare(%p, %q), direction=LT
  %c2 = pred[4] compare(%p, %q), direction=GT
  %k1 = f32[] constant(1)
  %k2 = f32[] constant(-1)
  ROOT %t = (f32[4], f32[4], pred[4], pred[4], f32[], f32[]) tuple(%a1, %a2, %c1, %c2, %k1, %k2)
}
)");
}
