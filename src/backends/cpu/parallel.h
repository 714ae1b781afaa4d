// The CPU backend's intra-op parallelism (one spinning thread pool per process, thread_pool.cpp) and its dots.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>

#include "hlo/ir/hlo.h"

namespace jitx::cpu {

/// Threads in the process-wide pool (the machine's hardware threads).
int pool_threads();

/// Whether the pool's workers are all awake (spinning or busy), so a job reaches them without a wake-up: they are
/// for a short while after each job.
bool pool_warm();

/// Runs fn(i) for i in [0, n) on the pool, part of it on the calling thread; returns when all are done and
/// rethrows the first exception. Runs inline (on the calling thread) inside a pool task, or while another thread's
/// job holds the pool.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

/// Runs f(lo, hi) over [0, n) in at most pool_threads() contiguous chunks, or inline when n * work_per_item (a
/// rough count of element operations) is below min_work, where threads would cost more than they save.
template <class F>
void parallel_chunks(int64_t n, int64_t work_per_item, F&& f, int64_t min_work = 1 << 15) {
  int64_t parts = std::min<int64_t>(pool_threads(), n);
  parts = std::min<int64_t>(parts, n * work_per_item / min_work);
  if (parts <= 1) {
    f(int64_t{0}, n);
    return;
  }
  parallel_for(parts, [&](int64_t p) { f(n * p / parts, n * (p + 1) / parts); });
}

/// Whether run_dot handles this dot (float operands of the output's dtype).
bool dot_supported(const hlo::Instruction& dot);

namespace blocked {
struct DotPlan;
}
/// What run_dot can work out from the dot's shapes, once, when the program is built (nullptr: nothing; f64 dots).
std::shared_ptr<const blocked::DotPlan> plan_run_dot(const hlo::Instruction& dot);

/// out = dot_general(lhs, rhs) on the shared pool: f32/bf16/f16 through the blocked GEMM (gemm.h, accumulating in
/// f32), f64 through Eigen's tensor contraction. The operands are read as their shapes' layouts lay them out (a
/// column-major matrix is a transposed one); out is written row-major.
void run_dot(const hlo::Instruction& dot, const void* lhs, const void* rhs, void* out,
             const blocked::DotPlan* plan = nullptr);

/// dot_general into a buffer of the accumulation type (f64 for f64 dots, else f32), not rounded to the dot's
/// dtype: for an output fusion, whose epilogue rounds it as the dot would have.
void run_dot_unrounded(const hlo::Instruction& dot, const void* lhs, const void* rhs, void* out,
                       const blocked::DotPlan* plan = nullptr);

/// c[m, n] = a[m, k] b[k, n], all row-major, on the shared pool (f32: the blocked GEMM; f64: Eigen).
void gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n);
void gemm(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n);

}  // namespace jitx::cpu
