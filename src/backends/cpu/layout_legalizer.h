// The CPU backend's layout legaliser: the layouts of the module the executable runs made ones that every step
// honours (an emitted kernel reads and writes any layout; everything else reads or writes row-major only).
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "hlo/ir/hlo.h"

namespace jitx::runtime::cpu_backend {

/// Makes the layouts of a copy of the optimised module ones the runtime executes as they say. Layout assignment
/// leaves parameters, results and the operands of row-major-only steps row-major already; where a layout still
/// disagrees (a module from elsewhere, a pass's oversight) this inserts a physical copy to row-major (counted:
/// `layout_copies`) or, for a result written by a row-major-only step, declares it row-major, so no step ever reads
/// memory in another order than it is in. Computations run by loops and branches exchange row-major buffers.
class LayoutLegalizer {
 public:
  int64_t copies = 0;

  void run(hlo::Computation& c);

 private:
  hlo::Instruction* to_row_major(hlo::Computation& c, const hlo::Instruction* user, hlo::Instruction* v);
  static void mirror(hlo::Instruction& f);

  std::unordered_set<const hlo::Computation*> done_;
  std::unordered_map<const hlo::Instruction*, hlo::Instruction*> copy_of_;
};

}  // namespace jitx::runtime::cpu_backend
