// Scheduling: the memory-driven list scheduler (schedule_for_memory) as a pass, with its peak bytes reported.
#pragma once
#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Reorders the entry computation so that peak live temporary bytes go down (buffer_assignment.h's
/// schedule_for_memory: a list scheduler preferring the instruction that frees the most bytes, kept only when
/// its peak is lower). Logs "[hlo schedule] peak live bytes <before> -> <after>". Buffer assignment then uses
/// this order. Deliberately does not: schedule computations other than the entry, or move work into or out
/// of fusions.
class Scheduling : public HloPass {
 public:
  std::string_view name() const override { return "schedule"; }
  bool run(Module& m) override;
  /// The peaks measured by the last run().
  int64_t peak_before = 0, peak_after = 0;
};

}  // namespace jitx::hlo
