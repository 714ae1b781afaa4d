// LICM: hoists loop-invariant instructions out of while bodies.
#pragma once
#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Loop-invariant code motion (XLA's WhileLoopInvariantCodeMotion). In a while body, a parameter whose value the
/// body passes through unchanged (root operand k is parameter k) is invariant, and so is every instruction all of
/// whose operands are invariant or constants. Each invariant instruction that depends on at least one invariant
/// parameter is computed once before the loop and carried in as a new, passed-through loop element; its uses in the
/// body read that element instead.
///
/// Deliberately does not: hoist constants or instructions that depend only on constants (constant folding's job,
/// and carrying them would cost memory for nothing), hoist instructions that call computations (nested loops,
/// conditionals, fusions), hoist out of while conditions or conditional branches, or touch a while whose result
/// is used by anything but get-tuple-element (its shape grows).
class LoopInvariantCodeMotion : public HloPass {
 public:
  std::string_view name() const override { return "licm"; }
  bool run(Module& m) override;
};

}  // namespace jitx::hlo
