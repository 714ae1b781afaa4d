// Special functions in double precision that <cmath> lacks: erf_inv, digamma.
#pragma once

namespace jitx::evaluator {
double erf_inv(double x);
double digamma(double x);
}  // namespace jitx::evaluator
