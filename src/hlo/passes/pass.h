// HloPass: the interface every HLO optimisation pass implements, and the per-rewrite trace line.
#pragma once
#include <string>
#include <string_view>

#include "hlo/ir/hlo.h"

namespace jitx::hlo {

/// One pass over a module. Passes are small classes listed in pipeline.cpp; each header says what the pass
/// deliberately does not do.
class HloPass {
 public:
  virtual ~HloPass() = default;
  /// The short name used in dumps and trace lines ("algsimp", "cse", "dce").
  virtual std::string_view name() const = 0;
  /// Rewrites m in place; returns whether anything changed.
  virtual bool run(Module& m) = 0;
};

/// Whether rewrite trace lines are on (config().trace_passes, JITX_TRACE_PASSES=1, or set_pass_trace).
bool pass_trace_enabled();
/// Turns trace lines on or off for this process, overriding the config flag (tests use it).
void set_pass_trace(bool on);
/// Logs "[hlo <pass>] %<inst>: <rule>" when tracing is on, so a dump can be read next to the rule's comment.
void trace_rewrite(std::string_view pass, const Instruction& inst, std::string_view rule);
/// Logs "[hlo <pass>] <text>" when tracing is on.
void trace_line(std::string_view pass, std::string_view text);

}  // namespace jitx::hlo
