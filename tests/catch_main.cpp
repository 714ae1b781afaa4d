// Catch2's main, compiled once on its own (it is the slowest file to build).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
