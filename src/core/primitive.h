// Primitive: the interface every jaxpr primitive implements (its rules live in src/primitives), the registry and bind.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/jaxpr.h"
#include "core/params.h"
#include "core/shape_util.h"
#include "jitx/array.h"

namespace jitx::hlo {
class Instruction;
class Computation;
class Module;
}  // namespace jitx::hlo

namespace jitx::detail {

/// What a lowering rule gets (lowering/lower_ctx.h defines it).
struct LowerCtx;

using AbstractEvalFn = std::function<std::vector<ShapedArray>(std::span<const ShapedArray>, const Params&)>;
using LowerFn = std::function<std::vector<hlo::Instruction*>(LowerCtx&, std::span<hlo::Instruction* const>)>;

/// An input of a linear equation as a transpose rule sees it: a known value, or the linear input itself
/// (JAX's UndefinedPrimal), of which only the type is known.
struct LinearArg {
  Array value;  // empty for the linear input
  ShapedArray aval;
  bool is_linear() const { return !value.valid(); }
};

/// Primal outputs and their tangents. An empty Array is a symbolic zero tangent.
struct JvpResult {
  std::vector<Array> primals_out;
  std::vector<Array> tangents_out;
};
/// JVP rule: (primals, tangents) -> (primal outputs, tangent outputs); empty tangents are symbolic zeros.
using JvpFn = std::function<JvpResult(std::span<const Array> primals, std::span<const Array> tangents, const Params&)>;
/// Transpose rule of a primitive linear in some inputs: the cotangents of the linear inputs (empty: zero)
/// from the cotangents of the outputs (empty: zero; not all of them are).
using TransposeFn =
    std::function<std::vector<Array>(std::span<const Array> cts, std::span<const LinearArg> args, const Params&)>;
/// Batching rule (vmap): outputs and their batch axes (-1: unbatched) from inputs and their batch axes.
using BatchFn = std::function<std::pair<std::vector<Array>, std::vector<int64_t>>(
    std::span<const Array> args, std::span<const int64_t> batch_dims, const Params&)>;

struct Primitive {
  std::string name;
  AbstractEvalFn abstract_eval;
  LowerFn lower;
  JvpFn jvp;              // null: not differentiable (the JVP trace throws a clear error)
  TransposeFn transpose;  // set for primitives that are linear in some of their inputs
  BatchFn batch;          // null: vmap throws a clear error when this primitive sees a batched input
  int num_operands = -1;  // >= 0: abstract evaluation refuses another count before the rule reads an operand
};

/// Registers a primitive (at static-initialisation time); returns it for use as a handle.
const Primitive& register_primitive(Primitive p);
/// Looks a primitive up by name; nullptr if unknown.
const Primitive* find_primitive(std::string_view name);
/// The registered primitive of that name (an internal invariant: it must exist).
const Primitive& primitive(std::string_view name);
std::vector<const Primitive*> all_primitives();

/// The single dispatch point: runs, records or transforms p on inputs, per the innermost trace.
std::vector<Array> bind(const Primitive& p, std::vector<Array> inputs, const Params& params = {});
inline Array bind1(const Primitive& p, std::vector<Array> inputs, const Params& params = {}) {
  return bind(p, std::move(inputs), params)[0];
}

/// How bind runs a primitive that no trace claims: on concrete arrays, eagerly. The dispatch layer installs it
/// (dispatch/eager.cpp) at start-up; core knows only this signature.
using EagerEvalFn = std::vector<Array> (*)(const Primitive& p, std::span<const Array> inputs, const Params& params);
void set_eager_evaluator(EagerEvalFn fn);


}  // namespace jitx::detail
