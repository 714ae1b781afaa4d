// LowerCtx: what a primitive's lowering rule builds into (the computation, the types, sub-jaxpr lowering).
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/jaxpr.h"
#include "core/params.h"
#include "hlo/ir/hlo.h"

namespace jitx::detail {

/// What a lowering rule gets: the computation to build into, and the types on both sides.
struct LowerCtx {
  hlo::Computation* comp;
  std::span<const ShapedArray> in_avals;
  std::span<const ShapedArray> out_avals;
  const Params& params;
  /// Lowers a closed sub-jaxpr into a fresh computation (one parameter per invar; a tuple root for several outputs).
  std::function<hlo::Computation*(const ClosedJaxpr&, const std::string&)> lower_sub;
  /// Lowers a closed sub-jaxpr's equations into `into`, given the instructions for its invars; returns its outputs.
  std::function<std::vector<hlo::Instruction*>(hlo::Computation* into, const ClosedJaxpr&,
                                               const std::vector<hlo::Instruction*>&)>
      lower_into;
  /// The module being built (control flow adds computations to it).
  hlo::Module* module = nullptr;
};

/// The HLO shape of an abstract value (row-major: layouts are chosen later, by layout assignment).
inline hlo::Shape hlo_shape(const ShapedArray& a) { return hlo::Shape(a.dtype, a.shape); }

}  // namespace jitx::detail
