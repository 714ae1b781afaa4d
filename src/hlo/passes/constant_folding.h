// Constant folding: instructions whose operands are all constants become constants, computed by the interpreter.
#pragma once
#include <cstdint>

#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Replaces an instruction whose operands are all constants with a constant holding its value, as the reference
/// interpreter computes it (so folded values match an unoptimised run on the interpreter bit for bit).
///
/// Deliberately does not fold: results with more than max_elements elements (big constants cost memory and
/// bandwidth that the op recomputing them would not), broadcasts and iotas (they only make big constants out of
/// small ones), tuples and get-tuple-element, ops that call computations, custom calls, or anything the
/// interpreter cannot evaluate (those are left as they are). Floats are computed as the interpreter does (in
/// double, rounded to the dtype), which may differ in the last place from a backend's own kernels.
class ConstantFolding : public HloPass {
 public:
  explicit ConstantFolding(int64_t max_elements = 1024) : max_elements_(max_elements) {}
  std::string_view name() const override { return "constant-folding"; }
  bool run(Module& m) override;

 private:
  int64_t max_elements_;
};

}  // namespace jitx::hlo
