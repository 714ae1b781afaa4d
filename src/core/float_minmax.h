// Maximum and minimum of two floats as XLA (and so JAX) computes them, for the reference evaluator and the CPU
// backend's library ops: NaN if either operand is NaN, and -0 below +0 (std::max and std::min return their first
// operand for -0 and +0, which compare equal).
#pragma once
#include <cmath>
#include <limits>

namespace jitx::detail {

inline double float_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

inline double float_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

}  // namespace jitx::detail
