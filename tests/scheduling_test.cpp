// The scheduling pass: it reports peak live bytes, lowers them on a wide graph and never raises them.
#include <catch2/catch.hpp>

#include "hlo/passes/scheduling.h"
#include "hlo_test_util.h"
#include "jitx/config.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;

TEST_CASE("scheduling: the pass reports peak bytes and never raises them", "[fusion]") {
  const char* text = R"(HloModule wide
ENTRY %main (x: f32[1024]) -> f32[] {
  %x = f32[1024] parameter(0)
  %a = f32[1024] exponential(%x)
  %b = f32[1024] sine(%x)
  %c = f32[1024] cosine(%x)
  %z = f32[] constant(0)
  %ra = f32[] reduce(%a, %z), dimensions={0}, reducer=add
  %rb = f32[] reduce(%b, %z), dimensions={0}, reducer=add
  %rc = f32[] reduce(%c, %z), dimensions={0}, reducer=add
  %s = f32[] add(%ra, %rb)
  ROOT %t = f32[] add(%s, %rc)
}
)";
  auto r = run_pass<Scheduling>(text);
  CHECK(r.changed);
  std::vector<std::string> lines;
  set_log_sink([&](const std::string& s) { lines.push_back(s); });
  set_pass_trace(true);
  auto m = parse(text);
  Scheduling s;
  s.run(*m);
  set_pass_trace(false);
  set_log_sink(nullptr);
  CHECK(s.peak_after < s.peak_before);
  CHECK(s.peak_before >= 3 * 4096);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Matchers::Contains(fmt::format("[hlo schedule] peak live bytes {} -> {}", s.peak_before,
                                                             s.peak_after)));
  check_unchanged<Scheduling>(print_hlo(*m));  // already the best order
}
