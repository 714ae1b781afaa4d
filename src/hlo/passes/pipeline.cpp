// The HLO optimisation pipeline: the pass list, verification after each pass, per-pass dumps and trace lines.
#include "hlo/passes/pipeline.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "core/log.h"
#include "hlo/passes/algebraic_simplifier.h"
#include "hlo/passes/all_reduce_combiner.h"
#include "hlo/passes/async_collectives.h"
#include "hlo/passes/constant_folding.h"
#include "hlo/passes/cse.h"
#include "hlo/passes/dce.h"
#include "hlo/passes/fusion.h"
#include "hlo/passes/layout_assignment.h"
#include "hlo/passes/licm.h"
#include "hlo/passes/scheduling.h"
#include "hlo/passes/simplify_fp_conversions.h"
#include "jitx/config.h"

namespace jitx::hlo {

std::vector<std::unique_ptr<HloPass>> optimization_passes() {
  std::vector<std::unique_ptr<HloPass>> p;
  p.push_back(std::make_unique<SimplifyFpConversions>());           // bf16 op -> f32 convert keeps its f32 value
  p.push_back(std::make_unique<AlgebraicSimplifier>());             // identities, chains, dot(transpose)
  p.push_back(std::make_unique<ConstantFolding>());                 // constants in, constant out (<= 1024 elements)
  p.push_back(std::make_unique<AlgebraicSimplifier>());             // what folding exposed (x * folded 1)
  p.push_back(std::make_unique<CommonSubexpressionElimination>());  // one copy of each value
  p.push_back(std::make_unique<LoopInvariantCodeMotion>());         // loop-invariant values out of while bodies
  p.push_back(std::make_unique<AllReduceCombiner>());               // small independent all-reduces as one
  p.push_back(std::make_unique<DeadCodeElimination>());             // drop what the rewrites left behind
  p.push_back(std::make_unique<Fusion>());                          // kernels: kLoop, kInput, kOutput, kRow
  p.push_back(std::make_unique<LayoutAssignment>());                // minor_to_major per array, copies where needed
  p.push_back(std::make_unique<Scheduling>());                      // an order with a low peak of live bytes
  if (config().async_collectives)
    p.push_back(std::make_unique<AsyncCollectives>());              // collectives overlap independent work
  // Buffer assignment (hlo/analysis/buffer_assignment.h) runs on the result, in this order.
  return p;
}

bool run_passes(Module& m, const std::vector<std::unique_ptr<HloPass>>& passes, const PipelineOptions& options) {
  bool changed = false;
  int index = 0;
  for (auto& pass : passes) {
    auto t0 = std::chrono::steady_clock::now();
    bool c = pass->run(m);
    if (options.times)
      options.times->emplace_back(
          pass->name(), std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    changed = changed || c;
    if (options.verify) {
      try {
        verify(m);
      } catch (const CompileError& e) {
        throw CompileError(fmt::format("[hlo pipeline] the module is invalid after pass {} ({}): {}", index,
                                       pass->name(), e.what()));
      }
    }
    if (!options.dump_prefix.empty()) {
      std::filesystem::path path = fmt::format("{}.{:02d}.{}.hlo", options.dump_prefix, index, pass->name());
      if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
      auto tmp = path;
      tmp += ".tmp";
      {
        std::ofstream f(tmp, std::ios::binary);
        if (!f) throw RuntimeError(fmt::format("[dump] cannot write {}", tmp.string()));
        f << print_hlo(m);  // plain HLO text, so a dump can be fed back to parse_hlo
      }
      std::filesystem::rename(tmp, path);  // never a half-written dump
    }
    ++index;
  }
  return changed;
}

bool optimize(Module& m, const PipelineOptions& options) { return run_passes(m, optimization_passes(), options); }

// --- trace lines ----------------------------------------------------------------------------------------------
namespace {
std::atomic<int> g_trace_override{-1};  // -1: follow config().trace_passes
}

bool pass_trace_enabled() {
  int o = g_trace_override.load(std::memory_order_relaxed);
  return o < 0 ? config().trace_passes : o != 0;
}
void set_pass_trace(bool on) { g_trace_override.store(on ? 1 : 0); }

void trace_line(std::string_view pass, std::string_view text) {
  if (pass_trace_enabled()) detail::log_line(fmt::format("[hlo {}] {}", pass, text));
}
void trace_rewrite(std::string_view pass, const Instruction& inst, std::string_view rule) {
  if (pass_trace_enabled()) detail::log_line(fmt::format("[hlo {}] %{}: {}", pass, inst.name, rule));
}

}  // namespace jitx::hlo
