// The HLO optimisation pipeline: one flat, named list of passes (pipeline.cpp), verified and dumpable per stage.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "hlo/passes/pass.h"

namespace jitx::hlo {

struct PipelineOptions {
  bool verify = false;      // run verify() after every pass (config().verify_passes, and always in tests)
  std::string dump_prefix;  // when set, write "<prefix>.<NN>.<pass>.hlo" after every pass
  /// When set, receives each pass's name and wall time in ms (verification and dumps not included), in order.
  std::vector<std::pair<std::string, double>>* times = nullptr;
};

/// The optimisation passes in the order they run. The one place to read or change what jitx's compiler does.
std::vector<std::unique_ptr<HloPass>> optimization_passes();

/// Runs passes over m in order; throws CompileError naming the pass when verification fails after it. Returns
/// whether any pass changed the module.
bool run_passes(Module& m, const std::vector<std::unique_ptr<HloPass>>& passes, const PipelineOptions& options);

/// Runs optimization_passes() over m.
bool optimize(Module& m, const PipelineOptions& options);

}  // namespace jitx::hlo
