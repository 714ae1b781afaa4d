// erf_inv (initial guess + Newton steps on std::erf) and digamma (recurrence + asymptotic series).
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
  double y = p * x;
  // Newton: f(y) = erf(y) - x, f'(y) = 2/sqrt(pi) exp(-y^2).
  for (int i = 0; i < 3; ++i) {
    double err = std::erf(y) - x;
    y -= err / (1.1283791670955126 * std::exp(-y * y));
  }
  return y;
}

double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x <= 0 && std::floor(x) == x) return std::numeric_limits<double>::quiet_NaN();
  double result = 0;
  if (x < 0) {
    // Reflection: psi(1 - x) - psi(x) = pi cot(pi x).
    result = -M_PI / std::tan(M_PI * x);
    x = 1 - x;
  }
  // From x >= 10 the series' first omitted term (691/32760 x^-12) is below 1e-13.
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132)))));
  return result + std::log(x) - 0.5 / x + t;
}

}  // namespace jitx::evaluator
