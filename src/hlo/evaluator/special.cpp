// erf_inv (initial guess + Newton steps on erf/erfc) and digamma (recurrence + asymptotic series), in long double.
#include "hlo/evaluator/special.h"

#include <cmath>
#include <limits>

namespace jitx::evaluator {

double erf_inv(double x) {
  if (std::isnan(x) || x < -1 || x > 1) return std::numeric_limits<double>::quiet_NaN();
  if (x == 1) return std::numeric_limits<double>::infinity();
  if (x == -1) return -std::numeric_limits<double>::infinity();
  // Giles' single-precision approximation as the starting point.
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  // Newton in long double on f(y) = erf(y) - x, f'(y) = 2/sqrt(pi) exp(-y^2); for |x| > 1/2 on the residual
  // (1 - |x|) - erfc(|y|), as 1 - |x| is exact there and erfc keeps its relative accuracy where erf(y) is
  // within a few ULPs of 1 (on erf's residual, f64 erf_inv(0.9999) was 24 ULPs off).
  long double ax = std::fabs(static_cast<long double>(x)), y = std::fabs(p * x);
  for (int i = 0; i < 4; ++i) {
    long double err = ax > 0.5L ? (1.0L - ax) - std::erfc(y) : std::erf(y) - ax;
    y -= err / (1.1283791670955125738961589031215452L * std::exp(-y * y));
  }
  return std::copysign(static_cast<double>(y), x);
}

double digamma(double xd) {
  if (std::isnan(xd)) return xd;
  if (xd <= 0 && std::floor(xd) == xd) return std::numeric_limits<double>::quiet_NaN();
  if (xd == std::numeric_limits<double>::infinity()) return xd;
  // In long double (64-bit significand on x86): the recurrence's cancellation (psi(1) = psi(20) - H_19) and the
  // reflection's tan cost the double version up to ~180 ULPs.
  long double x = xd, result = 0;
  const long double pi = 3.14159265358979323846264338327950288L;
  if (x < 0) {
    // Reflection: psi(x) = psi(1 - x) - pi cot(pi x), cot taken at r = x - round(x) (exact; cot has period 1).
    long double r = x - std::nearbyint(x);
    result = -pi / std::tan(pi * r);
    x = 1 - x;
  }
  while (x < 20) {
    result -= 1 / x;
    x += 1;
  }
  // log x - 1/(2x) - sum B_2k / (2k x^2k), to x^-16 (the first omitted term is below 1e-21 from x = 20).
  long double f = 1 / (x * x);
  long double t = f * (-1.0L / 12 + f * (1.0L / 120 + f * (-1.0L / 252 + f * (1.0L / 240 + f * (-1.0L / 132 +
                  f * (691.0L / 32760 + f * (-1.0L / 12 + f * (3617.0L / 8160))))))));
  return static_cast<double>(result + std::log(x) - 0.5L / x + t);
}

}  // namespace jitx::evaluator
