// CSE: merges instructions that compute the same value (same opcode, operands, attributes, shape; constants by value).
#pragma once
#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Common-subexpression elimination, per computation, in one forward sweep: an instruction whose opcode, shape
/// (with layout), operands, attributes and called computations equal an earlier one's is replaced by the earlier
/// one; two constants are equal when their dtype, dims and bytes are. The duplicates are left dead for DCE.
///
/// Deliberately does not: canonicalise commutative operands (add(a,b) and add(b,a) stay two instructions), merge
/// parameters, compare called computations by structure (only by identity), merge custom calls (they may have
/// effects), or remove the duplicates it makes dead (DCE does).
class CommonSubexpressionElimination : public HloPass {
 public:
  std::string_view name() const override { return "cse"; }
  bool run(Module& m) override;
};

}  // namespace jitx::hlo
