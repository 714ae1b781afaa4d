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

/// The module as StableHLO MLIR text, as `jax.jit(f).lower(...).as_text()` prints it.
/// arg_attrs[k], where given and not empty, is printed as the entry's parameter k's attribute dictionary
/// (`%argk: tensor<4xf32> {tf.aliasing_output = 0 : i32}`).
std::string print_stablehlo(const hlo::Module& m, const std::vector<std::string>& arg_attrs = {});

}  // namespace jitx::detail
