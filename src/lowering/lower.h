// Lowering: a closed Jaxpr becomes an hlo::Module (StableHLO op set); StableHLO text printing.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/jaxpr.h"
#include "hlo/ir/hlo.h"

namespace jitx::detail {

/// Lowers cj into a module whose entry takes cj's invars (consts become HLO constants) and returns
/// a tuple of its outvars when there is more than one (a single output is returned as is).
std::shared_ptr<hlo::Module> lower_jaxpr(const ClosedJaxpr& cj, const std::string& module_name);

/// What the StableHLO text adds to the module: args[k] / results[k], where given and not empty, extend the entry's
/// parameter k's (result k's) attribute dictionary (`%argk: tensor<4xf32> {tf.aliasing_output = 0 : i32}`); the
/// module's mhlo.num_partitions; declarations printed first in the module (a Shardy `sdy.mesh`).
struct StablehloAttrs {
  std::vector<std::string> args, results;
  int64_t num_partitions = 1;
  std::string declarations;
};
/// The module as StableHLO MLIR text, as `jax.jit(f).lower(...).as_text()` prints it.
std::string print_stablehlo(const hlo::Module& m, const StablehloAttrs& attrs = {});

}  // namespace jitx::detail
