// Automatic differentiation internals: the JVP trace, linearize (JVP + partial evaluation), the backward pass
// (transposition of a linear jaxpr), and the small helpers the per-primitive rules are written with.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/trace.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "core/primitive.h"

namespace jitx::detail {

/// A tracer of a JVP trace: a primal value and its tangent (empty: symbolic zero).
struct JVPTracer : Tracer {
  Array primal;
  Array tangent;
  const Array* primal_value() const override { return &primal; }
};

/// Applies each primitive's JVP rule to (primal, tangent) pairs (JAX's JVPTrace).
class JVPTrace : public Trace {
 public:
  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> inputs,
                                       const Params& params) override;
  Array make_tracer(Array primal, Array tangent);
  /// (primal, tangent) of a value as seen by this trace (values of other traces have zero tangents).
  std::pair<Array, Array> unpack(const Array& a) const;
};

/// jvp of a flat function: tangents[i] empty means a zero tangent. Returns (outputs, output tangents) with
/// empty tangents where they are zero.
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const std::string& name, const LeafFn& fn,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

/// The linear part of a function at a point: a jaxpr from input tangents to output tangents whose constvars
/// are the residuals (values of the enclosing trace, or concrete arrays).
struct Linearized {
  std::vector<Array> primals_out;
  ClosedJaxpr linear;                   // invars: tangents of the inputs with diff[i]; outvars: see out_zero
  std::vector<ShapedArray> in_avals;    // all inputs
  std::vector<bool> diff;               // which inputs have tangent invars
  std::vector<bool> out_zero;           // outputs whose tangent is a symbolic zero (no outvar)
  std::vector<ShapedArray> out_avals;
};

/// JVP + partial evaluation: the primal part runs now (in the enclosing trace), the tangent part is recorded
/// into a linear jaxpr by a non-ambient jaxpr trace. Inputs with diff[i] false (and non-float ones) get zero tangents.
std::shared_ptr<Linearized> linearize_flat(const std::string& name, const LeafFn& fn,
                                           const std::vector<Array>& primals, std::vector<bool> diff);
/// Evaluates the linear jaxpr on tangents of the differentiated inputs (the jvp of a linearize).
std::vector<Array> linearized_jvp(const Linearized& lin, const std::vector<Array>& tangents);
/// The backward pass: cotangents of every input from those of the outputs; zeros for inputs without a tangent
/// (integer ones too), or empty Arrays for them when zeros_for_all is false (grad drops them anyway).
std::vector<Array> linearized_vjp(const Linearized& lin, const std::vector<Array>& cts, bool zeros_for_all);

/// Evaluates a jaxpr by binding its equations (so an enclosing trace records or transforms them).
std::vector<Array> eval_jaxpr(const Jaxpr& j, std::span<const Array> consts, std::span<const Array> args);
/// Transposes a linear jaxpr: cotangents for its invars (empty: zero) from cotangents of its outvars.
std::vector<Array> backward_pass(const Jaxpr& j, std::span<const Array> consts, std::span<const Array> cts_out);
/// The same where some invars are known (args[i] valid: residuals). Equations without a linear input (zeros a
/// rule instantiated) are evaluated forward first; every other one must be linear in its unknown inputs.
std::vector<Array> backward_pass(const Jaxpr& j, std::span<const Array> consts, std::span<const Array> args,
                                 std::span<const Array> cts_out);

// --- jaxpr-level transformations (for higher-order primitives: cond, while, scan, custom rules) --------
/// The JVP of a closed jaxpr (JAX's jvp_jaxpr). invars: (primals..., tangents of the inputs with
/// nonzero[i]); outvars: (primal outputs..., tangents of the outputs with out_nz[i]), where out_nz[i] says the
/// output's tangent is not a symbolic zero or force[i] asks for it (floating outputs only).
struct JvpJaxpr {
  ClosedJaxpr jaxpr;
  std::vector<bool> out_nz;
};
JvpJaxpr jvp_jaxpr(const ClosedJaxpr& cj, const std::vector<bool>& nonzero, const std::vector<bool>& force);

/// A closed jaxpr linearized at trace time (linearize_flat inside a trace): `known` maps the primal inputs
/// to (primal outputs..., residuals...); `linear` maps the tangents of the inputs with diff[i] to the
/// output tangents with out_nz[i], and its constvars are the residuals, in order.
struct LinearizedJaxpr {
  ClosedJaxpr known;
  Jaxpr linear;
  std::vector<bool> diff;    // the diff flags, cleared for non-floating inputs
  std::vector<bool> out_nz;  // outputs with a nonzero tangent
  std::vector<ShapedArray> res_avals;
};
LinearizedJaxpr linearize_jaxpr(const std::string& name, const ClosedJaxpr& cj, const std::vector<bool>& diff);

/// Whether a tangent is recorded by linearize's (non-ambient) tangent trace: a JVP rule that sees one is in
/// reverse mode and must keep its primal work out of the linear jaxpr (control flow splits itself).
bool is_linearize_tangent(const Array& t);

/// Partial evaluation of a jaxpr (JAX's partial_eval_jaxpr_nounits): equations with an unknown input are
/// unknown. `known` maps the known invars to the known outputs followed by the residuals; `unknown` maps
/// (residuals..., unknown invars...) to the unknown outputs.
struct PartialEval {
  ClosedJaxpr known;
  Jaxpr unknown;
  std::vector<bool> out_unknown;
  size_t num_residuals = 0;
};
PartialEval partial_eval_jaxpr(const ClosedJaxpr& cj, const std::vector<bool>& unknown_inputs);

// --- helpers for rules ---------------------------------------------------------------------------------
/// Zeros of a type (concrete, or recorded by the ambient trace).
Array zeros_like_aval(const ShapedArray& aval);
/// t, or zeros of aval's type when t is a symbolic zero.
Array instantiate(const Array& t, const ShapedArray& aval);
/// a + b where either may be a symbolic zero (empty).
Array add_tangents(const Array& a, const Array& b);
/// x broadcast to shape when it is a scalar (lax binary ops let a scalar stand next to an array).
Array broadcast_to(const Array& x, const Shape& shape);
/// A cotangent of an output summed down to an input that was broadcast from a scalar.
Array unbroadcast(const Array& ct, const ShapedArray& aval);
/// A scalar of x's dtype.
Array scalar_like(const Array& x, double v);
/// The primal part of a JVP rule that only needs per-input tangent terms (JAX's defjvp).
using TangentFn = std::function<Array(const Array& t, const Array& ans, std::span<const Array> primals, const Params&)>;
JvpFn defjvp(std::string prim, std::vector<TangentFn> per_input);
/// A JVP rule for primitives whose outputs have no tangent (integer/bool results, rounding).
JvpFn zero_jvp(std::string prim);
/// A JVP rule for primitives linear in all their inputs: the primitive applied to the tangents (zeros instantiated).
JvpFn linear_jvp(std::string prim);
/// Throws the clear error of a primitive that cannot be differentiated (yet).
[[noreturn]] void not_differentiable(std::string_view prim, std::string_view why);

}  // namespace jitx::detail
