// The de-optimised re-run of a jitted call that produced a NaN or inf (JAX's jax_debug_nans behaviour).
#include "api/debug_nans.h"

#include <unordered_map>

#include "core/errors.h"
#include "core/log.h"
#include "core/primitive.h"
#include "jitx/floating_point_error.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"

namespace jitx::detail {

void deoptimized_rerun(const ClosedJaxpr& cj, std::span<const Array> args, const std::string& name,
                       const std::string& what) {
  const Jaxpr& j = cj.jaxpr;
  log_line(
      fmt::format("[jitx] Invalid {} value encountered in the output of jit({}). Calling the de-optimized "
                  "version.",
                  what, name));
  if (args.size() == j.invars.size() && cj.consts.size() == j.constvars.size()) {
    std::unordered_map<int64_t, Array> env;
    for (size_t i = 0; i < cj.consts.size(); ++i) env[j.constvars[i].id] = cj.consts[i];
    for (size_t i = 0; i < args.size(); ++i) env[j.invars[i].id] = args[i];
    auto read = [&](const Atom& a) { return a.is_literal ? literal_array(a.lit) : env.at(a.var.id); };
    for (auto& e : j.eqns) {
      std::vector<Array> ins;
      for (auto& a : e.inputs) ins.push_back(read(a));
      std::vector<Array> outs;
      {
        // Each primitive runs at the line that traced it, so the eager check names that line.
        CallSiteReset reset;
        if (e.loc.line() != 0) {
          ApiScope scope(e.loc, std::source_location{});  // no ", in <fn>": the op is the one named
          outs = detail::bind(*e.prim, std::move(ins), e.params);
        } else {
          outs = detail::bind(*e.prim, std::move(ins), e.params);
        }
      }
      for (size_t i = 0; i < outs.size(); ++i) env[e.outputs[i].id] = outs[i];
    }
  }
  throw_error<FloatingPointError>(
      fmt::format("jit({})", name),
      "invalid value ({}) in the output; the de-optimized function (run op by op, as if jit were removed) did not "
      "produce one: it came from an argument (or the optimised program computed it where the ops one by one do "
      "not)",
      what);
}

}  // namespace jitx::detail
