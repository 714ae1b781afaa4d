// DCE: removes instructions no root depends on, and computations nothing live calls.
#pragma once
#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Dead-code elimination. Removes, in every computation, each instruction the root does not depend on, then every
/// non-entry computation no remaining instruction calls (transitively from the entry).
///
/// Deliberately does not: remove parameters (they are the computation's signature), remove unused elements of a
/// tuple-shaped root (that changes the signature), or treat any op as side-effecting: jitx has no side-effecting
/// HLO ops yet; when custom calls with side effects or collectives arrive, they must be kept here.
class DeadCodeElimination : public HloPass {
 public:
  std::string_view name() const override { return "dce"; }
  bool run(Module& m) override;
};

}  // namespace jitx::hlo
