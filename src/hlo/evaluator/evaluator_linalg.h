// Reference evaluation of jitx's linear-algebra custom-calls (custom_call_target="jitx.linalg.<name>").
#pragma once
#include <vector>

#include "hlo/evaluator/evaluator.h"

namespace jitx::evaluator {

/// lu, cholesky, triangular_solve, qr, eigh, svd over the leading batch axes, in double; throws CompileError for
/// a custom-call target it does not know.
Value eval_linalg(const hlo::Instruction& inst, const std::vector<const detail::Literal*>& ops);

}  // namespace jitx::evaluator
