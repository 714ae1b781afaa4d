// Host-callback primitives (JAX's debug_callback and pure_callback): debug_callback[callback_id] has no results
// and an effect; pure_callback[callback_id] returns what its callback declared. Both lower to one HLO custom-call
// (custom_call_target="jitx.host_callback", hlo/ir/custom_call.h) that the CPU backend runs as a library op and
// the interpreter evaluates, each calling core/host_callback.h's table. vmap unrolls over the batch (as JAX's
// debug_callback rule and pure_callback's vmap_method="sequential"); the JVP of debug_callback calls it on the
// primals; pure_callback has no JVP (as in JAX).
#include "core/errors.h"
#include "core/host_callback.h"
#include "hlo/ir/custom_call.h"
#include "jitx/numpy.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using hlo::Opcode;
using Insts = std::vector<hlo::Instruction*>;

hlo::Instruction* add_callback(LowerCtx& c, std::span<hlo::Instruction* const> a, const hlo::Shape& s, bool effect) {
  Params attrs;
  attrs.set("custom_call_target", std::string(hlo::kHostCallbackTarget));
  attrs.set("callback_id", c.params.get_int("callback_id"));
  attrs.set("has_side_effect", effect);
  return c.comp->add(Opcode::kCustomCall, s, {a.begin(), a.end()}, std::move(attrs));
}

/// The arguments of batch element i: mapped ones indexed at i, unmapped ones as they are.
std::vector<Array> element(std::span<const Array> args, std::span<const int64_t> dims, int64_t n, int64_t i) {
  std::vector<Array> out;
  for (size_t k = 0; k < args.size(); ++k) out.push_back(dims[k] < 0 ? args[k] : batch_at(args[k], dims[k], n, 0)[i]);
  return out;
}

const bool kCallbackRegistered = [] {
  {
    Primitive p;
    p.name = "debug_callback";
    p.abstract_eval = [](std::span<const ShapedArray>, const Params&) { return std::vector<ShapedArray>{}; };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      add_callback(c, a, hlo::Shape::tuple({}), true);
      return Insts{};
    };
    p.jvp = [](std::span<const Array> primals, std::span<const Array>, const Params& ps) {
      detail::bind(primitive("debug_callback"), {primals.begin(), primals.end()}, ps);
      return JvpResult{};
    };
    p.batch = [](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
      int64_t n = batch_size(args, dims);
      for (int64_t i = 0; i < n; ++i) bind(primitive("debug_callback"), element(args, dims, n, i), ps);
      return std::pair<std::vector<Array>, std::vector<int64_t>>{};
    };
    register_primitive(std::move(p));
  }
  {
    Primitive p;
    p.name = "pure_callback";
    p.abstract_eval = [](std::span<const ShapedArray>, const Params& ps) {
      return host_callback(ps.get_int("callback_id")).result_avals;
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      std::vector<hlo::Shape> shapes;
      for (auto& av : c.out_avals) shapes.push_back(hlo_shape(av));
      hlo::Shape s = shapes.size() == 1 ? shapes[0] : hlo::Shape::tuple(shapes);
      auto* inst = add_callback(c, a, s, false);
      if (!s.is_tuple) return Insts{inst};
      Insts out;
      for (size_t k = 0; k < shapes.size(); ++k)
        out.push_back(
            c.comp->add(Opcode::kGetTupleElement, shapes[k], {inst}, Params{{"index", static_cast<int64_t>(k)}}));
      return out;
    };
    p.jvp = [](std::span<const Array>, std::span<const Array>, const Params&) -> JvpResult {
      throw_error<TypeError>("pure_callback",
                             "pure callbacks do not support JVP (grad, jvp, vjp); wrap the callback in custom_jvp "
                             "(or custom_vjp) with a rule for its derivative");
    };
    p.batch = [](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
      int64_t n = batch_size(args, dims);
      std::vector<std::vector<Array>> per_output;
      for (int64_t i = 0; i < n; ++i) {
        auto outs = detail::bind(primitive("pure_callback"), element(args, dims, n, i), ps);
        per_output.resize(outs.size());
        for (size_t k = 0; k < outs.size(); ++k) per_output[k].push_back(outs[k]);
      }
      std::vector<Array> stacked;
      for (auto& xs : per_output) stacked.push_back(numpy::stack(xs, 0));
      return std::pair<std::vector<Array>, std::vector<int64_t>>{stacked, std::vector<int64_t>(stacked.size(), 0)};
    };
    register_primitive(std::move(p));
  }
  return true;
}();
}  // namespace

}  // namespace jitx::detail
