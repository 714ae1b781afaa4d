// The CPU backend's intra-op parallelism (one Eigen thread pool per process) and its Eigen dot.
#pragma once
#include <cstdint>
#include <functional>

#include "hlo/ir/hlo.h"

namespace jitx::cpu {

/// Threads in the process-wide pool (the machine's hardware threads).
int pool_threads();

/// Runs fn(i) for i in [0, n) on the pool, part of it on the calling thread; returns when all are done and
/// rethrows the first exception.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

/// Whether run_dot handles this dot (float operands of the output's dtype).
bool dot_supported(const hlo::Instruction& dot);

/// out = dot_general(lhs, rhs) through Eigen's tensor contraction on the shared pool; bf16/f16 via f32.
void run_dot(const hlo::Instruction& dot, const void* lhs, const void* rhs, void* out);

}  // namespace jitx::cpu
