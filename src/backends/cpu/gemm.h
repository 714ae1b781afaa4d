// The CPU backend's own GEMM for f32, bf16 and f16 dots: packed, cache-blocked, an AVX2/FMA register-blocked
// micro-kernel, run on the shared pool, with a per-tile hook that output fusions use to run their epilogue while
// the tile is still in cache. f64 (and everything else) stays on Eigen's tensor contraction (eigen_dot.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "hlo/ir/hlo.h"

namespace jitx::cpu::blocked {

/// One operand of a batched product as strides (in elements) over its buffer: element (b, r, k) is at
/// data + batch_offset(b) + r*row + k*depth, r being M's index for the lhs and N's for the rhs. A transposed
/// operand (or a column-major layout) is only other strides: the packing routines read it as it lies, nothing is
/// permuted. The batch index may walk two strides (inner_count > 0): b = outer * inner_count + inner, at
/// outer*batch + inner*batch_inner (attention's [B, T, H, dh] heads: batch dims B and H, H's stride inside T's).
struct Operand {
  const void* data = nullptr;
  DType dtype = DType::float32;  // f32, or bf16/f16 converted to f32 while packing
  int64_t batch = 0, row = 0, depth = 0;
  int64_t batch_inner = 0, inner_count = 0;
  int64_t batch_offset(int64_t b) const {
    return inner_count > 0 ? b / inner_count * batch + b % inner_count * batch_inner : b * batch;
  }
};

/// c[b, i, j] = sum_k a[b, i, k] * b[b, j, k], accumulated in f32.
struct Problem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  Operand a, b;
};

/// Called once per finished tile: rows [i0, i1) and columns [j0, j1) of batch b. `product` addresses the f32
/// product as product[(b*m + i)*n + j]; only the tile's elements are valid there (it may be a per-thread buffer
/// positioned so that they are), and it is 64-byte aligned. Runs on the thread that computed the tile.
struct TileFn {
  void* context = nullptr;
  void (*fn)(void* context, float* product, int64_t b, int64_t i0, int64_t i1, int64_t j0, int64_t j1) = nullptr;
  explicit operator bool() const { return fn != nullptr; }
  void operator()(float* product, int64_t b, int64_t i0, int64_t i1, int64_t j0, int64_t j1) const {
    fn(context, product, b, i0, i1, j0, j1);
  }
};
/// A TileFn calling f (which must outlive it).
template <class F>
TileFn tile_fn(F& f) {
  return {&f, [](void* c, float* p, int64_t b, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
            (*static_cast<F*>(c))(p, b, i0, i1, j0, j1);
          }};
}

/// Computes the product. With c (f32, [batch, m, n] row-major) the tiles are written there and `finish` (if set)
/// runs on each; without c they go to per-thread buffers and `finish` must consume them (round them to the
/// output's type, run an epilogue). Rows of every operand must not overlap c.
void multiply(const Problem& p, float* c, TileFn finish = {});

/// The dot_general `dot` as a Problem over its operands' buffers (their strides from each shape's layout, so a
/// column-major operand is read as a transposed one), or nullopt when this GEMM does not take it (f64, integers,
/// mixed dtypes). An operand whose batch, free or contracting dimensions cannot be walked with one stride each
/// is first gathered into a compact f32 copy, held in the result.
struct DotProblem {
  Problem problem;
  std::vector<float> lhs_copy, rhs_copy;  // from a per-thread pool, returned to it when the problem goes
  DotProblem() = default;
  DotProblem(DotProblem&&) = default;
  DotProblem& operator=(DotProblem&&) = default;
  ~DotProblem();
};
std::optional<DotProblem> dot_problem(const hlo::Instruction& dot, const void* lhs, const void* rhs);

/// A dot's problem worked out from its shapes once, when the program is built: a call then only sets the
/// operands' data (no attribute parsing, no allocation: a 64^3 product's dispatch spent a microsecond here).
struct DotPlan {
  Problem problem;     // operands without data
  bool views = false;  // both operands are strided views (else each call works the problem out, gathering)
};
/// nullptr when dot_problem does not take the dot.
std::shared_ptr<const DotPlan> plan_dot(const hlo::Instruction& dot);
/// dot_problem through a plan (or without one: nullptr).
std::optional<DotProblem> dot_problem(const hlo::Instruction& dot, const DotPlan* plan, const void* lhs,
                                      const void* rhs);

/// Whether dot_problem takes this dot (without looking at buffers).
bool handles(const hlo::Instruction& dot);

}  // namespace jitx::cpu::blocked
