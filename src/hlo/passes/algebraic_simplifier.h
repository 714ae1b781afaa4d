// The algebraic simplifier: local rewrites of identities, data-movement chains and dot operand transposes.
#pragma once
#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Local rewrites, each labelled in algebraic_simplifier.cpp and in its trace line, repeated until nothing changes:
///   A + 0 => A, 0 + A => A, A - 0 => A, A * 1 => A, 1 * A => A, A * 0 => 0 and 0 * A => 0 (integers only),
///   --A => A, A / c => A * (1/c) (floats, c a power of two whose reciprocal the dtype holds), pow(A, 2) => A * A,
///   pow(A, 1) => A, convert(A) => A (same type), reshape(reshape(A)) => reshape(A), reshape(A) => A (same shape),
///   transpose(transpose(A)) => transpose(A) composed (or A), transpose(A) => A (identity permutation),
///   broadcast(broadcast(A)) => broadcast(A), broadcast(A) => A (identity), slice(slice(A)) => slice(A),
///   slice(A) => A (full range), reduce(broadcast(A)) along broadcast dims => broadcast(A) * count (add) or
///   broadcast(A) (max, min), dot(transpose(A), B) and dot(A, transpose(B)) => dot with the transpose folded
///   into its dimension numbers, transpose(dot(A, B)) => dot(B, A) (no batch dimensions, the free dimensions swapped,
///   the dot read by nothing else), select(constant pred, A, B) => A or B.
/// A "0", "1", "2" or "c" is a constant whose elements all hold that value, or a broadcast of one.
///
/// Deliberately does not:
///   - rewrite exp(log(A)) => A or log(exp(A)) => A: for floats neither is exact (each op rounds, so the result can
///     differ from A in the last place; log of a negative A is NaN where A is not; exp overflows to inf for large
///     A), and both ops exist only for floats, so there is no type where the rule is exact. Constant folding still
///     evaluates them on constants.
///   - rewrite A * 0 => 0 for floats (NaN * 0 and inf * 0 are NaN, -A * 0 is -0), or A / c for c not a power of two
///     (1/c would round, so A * (1/c) can differ from A / c).
///   - treat +0 and -0 apart in A + 0 => A (as XLA does: the only difference is -0 + +0 = +0 where the rewrite
///     gives -0, which compares equal); A - 0 => A only matches +0, where it is exact.
///   - fold constants (ConstantFolding does), remove the instructions it makes dead (DCE does), fuse, or change
///     layouts: every rewrite keeps each instruction's shape and layout.
class AlgebraicSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "algsimp"; }
  bool run(Module& m) override;
};

}  // namespace jitx::hlo
