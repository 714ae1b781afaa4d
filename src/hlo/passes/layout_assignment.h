// Layout assignment: a physical dimension order (minor_to_major) for every array, chosen for its consumers.
#pragma once
#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Gives every array in the module a layout. An empty Shape::layout is the row-major default ({1,0} in text),
/// the canonical spelling the parser also produces; any other layout is written out. What layouts mean:
/// a layout is a physical property only. Every op still computes the same logical values (the interpreter,
/// which works on logical row-major values, gives the same numbers whatever the layouts); a backend reads and
/// writes each buffer in its layout. Rules, in order:
///   1. Entry parameters and the entry result stay row-major (callers hand over and receive row-major buffers);
///      so do parameters and results of while bodies, conditions, branches and called computations.
///   2. Transpose as a layout change: a top-level transpose T = transpose(X) gets the layout that orders
///      memory exactly as X does, which makes T copy-free (is_layout_bitcast(T)), when at least one consumer
///      prefers that layout: a reduce whose reduced dimensions become the minor ones, a kInput fusion reducing
///      them, or a rank-2 dot (a GEMM takes a transposed operand at no cost). Consumers that do not accept the
///      layout (elementwise ops, reshapes, the result, ...) read a kCopy of T back in row-major order: one copy
///      (the physical transpose) is inserted for them, only where consumers disagree.
///   3. Dot operands: a rank-2 dot operand (no batch dimensions) produced by a kLoop fusion used only by that
///      dot is written in the layout a GEMM reads fastest: lhs contracting dimension minor, rhs output
///      dimension minor.
///   4. Fusions: each fused computation's parameters take their operands' layouts and its root the fusion's
///      result layout; instructions inside a fusion stay row-major (they live in registers, not memory).
/// Deliberately does not: reorder dimensions of parameters or results, pick layouts for reduces of non-minor
/// dimensions other than through a producing transpose, or change any instruction's logical shape or value.
class LayoutAssignment : public HloPass {
 public:
  std::string_view name() const override { return "layout"; }
  bool run(Module& m) override;
};

}  // namespace jitx::hlo
