// The reference evaluator: plain, obviously-correct loops over any hlo::Module (the numerical oracle).
#pragma once
#include <vector>

#include "core/literal.h"
#include "hlo/ir/hlo.h"

namespace jitx::evaluator {

/// A value of the interpreter: an array literal or a tuple of values.
struct Value {
  detail::Literal array;
  std::vector<Value> tuple;
  bool is_tuple = false;
};

/// Evaluates computation c on args (one per parameter). Floats are computed in double and rounded to
/// their dtype after every op; reductions and dots accumulate in double; integers wrap.
Value evaluate(const hlo::Computation& c, const std::vector<Value>& args);
/// Evaluates the module's entry computation.
Value evaluate(const hlo::Module& m, const std::vector<detail::Literal>& args);

}  // namespace jitx::evaluator
