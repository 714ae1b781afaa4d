// The values of JAX's linspace as XLA computes them on the CPU (src/ops/array.cpp): shared by jnp::linspace and
// the histogram's bin edges, so that both round as JAX's jitted _linspace does.
#pragma once
#include <cstdint>
#include <vector>

#include "jitx/dtype.h"

namespace jitx::detail {
/// num values from start to stop (stop included when endpoint), computed in the float dtype comp as XLA's CPU
/// backend computes JAX's _linspace in comp (float32/float64 with its fma contraction, float16 and bfloat16 with
/// every op rounded); returned as doubles holding comp's values.
/// v rounded to the float dtype d (to nearest, ties to even; float64 unchanged).
double round_to_float(double v, DType d);
std::vector<double> linspace_values(double start, double stop, int64_t num, bool endpoint, DType comp);
}  // namespace jitx::detail
