// SimplifyFpConversions: a bf16 op whose result is converted to f32 keeps its f32 value, as XLA:CPU computes it.
#pragma once
#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// With config().allow_excess_precision (the default), rewrites convert_f32(op_bf16(a, b, ...)) for a bf16
/// elementwise arithmetic op into op_f32(convert_f32(a), convert_f32(b), ...): the op's f32 result is used
/// unrounded. This is what XLA:CPU computes: its float normalization runs each bf16 op in f32 between converts,
/// and simplify-fp-conversions then drops the f32 -> bf16 -> f32 round trip that the user's convert makes
/// (`jax.jit(lambda x: jnp.exp(x).astype(jnp.float32))` of bf16 x gives the f32 exp, unrounded; jnp.sum of bf16,
/// which converts to f32 first, sums the unrounded values). Only one level: the op's own operands stay rounded,
/// as in XLA (there the round trips between two normalized ops stay).
///
/// Deliberately does not: touch f16 (XLA:CPU computes f16 ops as LLVM half arithmetic, which rounds every op, so
/// jnp.exp(x).astype(f32) of f16 x is rounded there), converts to f64 (XLA rounds those), an explicit convert
/// to bf16 and back (x.astype(bf16).astype(f32) rounds, in jitx and XLA), reductions (jitx accumulates f16/bf16
/// reductions in f32 already), or ops whose value does not depend on it (compare, select, clamp, conversions).
class SimplifyFpConversions : public HloPass {
 public:
  std::string_view name() const override { return "simplify-fp-conversions"; }
  bool run(Module& m) override;
};

}  // namespace jitx::hlo
