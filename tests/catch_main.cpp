// Catch2's main, compiled once on its own (it is the slowest file to build).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

#include "jitx/config.h"

int main(int argc, char** argv) {
  // The suite runs with eight CPU devices (set before the runtime's client exists) so that device placement and
  // sharding over 2, 4 and 8 devices are tested; JITX_CPU_DEVICE_COUNT still overrides it.
  if (!std::getenv("JITX_CPU_DEVICE_COUNT")) jitx::config().cpu_device_count = 8;
  return Catch::Session().run(argc, argv);
}
