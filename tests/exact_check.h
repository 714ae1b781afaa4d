// Exact comparison of a result with expected values, for ops that only move or select elements (unique, the set
// operations): dtype, shape, and each element equal, NaN matching NaN and the sign of a zero checked.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "jitx/jitx.h"

namespace jitx::testing {

inline void check_exact(const Array& got, DType dtype, const Shape& shape, const std::vector<double>& want) {
  INFO(got.aval().str());
  CHECK(got.dtype() == dtype);
  CHECK(got.shape() == shape);
  std::vector<double> g = got.astype(DType::float64).to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    CHECK(((std::isnan(want[i]) && std::isnan(g[i])) ||
           (g[i] == want[i] && std::signbit(g[i]) == std::signbit(want[i]))));
  }
}

}  // namespace jitx::testing
