// Dead-code elimination: dead instructions and uncalled computations go, parameters stay.
#include <catch2/catch.hpp>

#include "hlo/passes/dce.h"
#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;
using Catch::Matchers::Contains;

TEST_CASE("dce: removes dead instructions and uncalled computations, keeps parameters", "[hlo]") {
  auto r = run(R"(HloModule dce

%unused (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%a)
}

%used (a.1: f32[4]) -> f32[4] {
  %a.1 = f32[4] parameter(0)
  ROOT %n.1 = f32[4] abs(%a.1)
}

ENTRY %main (p: f32[4], unused_param: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %unused_param = f32[4] parameter(1)
  %dead1 = f32[4] exponential(%p)
  %dead2 = f32[4] add(%dead1, %p)
  ROOT %call = f32[4] call(%p), calls=%used
}
)", passes<DeadCodeElimination>());
  CHECK(r.changed);
  CHECK(r.text.find("dead1") == std::string::npos);
  CHECK(r.text.find("dead2") == std::string::npos);
  CHECK(r.text.find("%unused ") == std::string::npos);
  CHECK_THAT(r.text, Contains("%used"));
  CHECK_THAT(r.text, Contains("%unused_param = f32[4]{0} parameter(1)"));
  check_unchanged<DeadCodeElimination>(R"(HloModule live
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %e = f32[4] exponential(%p)
  ROOT %a = f32[4] add(%e, %p)
}
)");
}
