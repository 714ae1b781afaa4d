// Catch2's main, compiled once on its own (it is the slowest file to build).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

#include "jitx/config.h"

int main(int argc, char** argv) {
  // The suite runs with two CPU devices (set before the runtime's client exists) so that device placement is
  // tested; JITX_CPU_DEVICE_COUNT still overrides it.
  if (!std::getenv("JITX_CPU_DEVICE_COUNT")) jitx::config().cpu_device_count = 2;
  return Catch::Session().run(argc, argv);
}
