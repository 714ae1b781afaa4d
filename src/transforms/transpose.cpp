// Evaluating jaxprs by binding their equations, and the backward pass that transposes a linear jaxpr.
#include <algorithm>
#include <unordered_map>

#include "core/errors.h"
#include "core/literal.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"
#include "jitx/lax.h"
#include "transforms/ad.h"

namespace jitx::detail {
std::vector<Array> eval_jaxpr(const Jaxpr& j, std::span<const Array> consts, std::span<const Array> args) {
  JITX_ASSERT(consts.size() == j.constvars.size() && args.size() == j.invars.size(), "eval_jaxpr: wrong arity");
  std::unordered_map<int64_t, Array> env;
  for (size_t i = 0; i < consts.size(); ++i) env[j.constvars[i].id] = consts[i];
  for (size_t i = 0; i < args.size(); ++i) env[j.invars[i].id] = args[i];
  auto read = [&](const Atom& a) { return a.is_literal ? literal_array(a.lit) : env.at(a.var.id); };
  for (auto& e : j.eqns) {
    std::vector<Array> ins;
    for (auto& a : e.inputs) ins.push_back(read(a));
    std::vector<Array> outs = bind(*e.prim, std::move(ins), e.params);
    for (size_t i = 0; i < outs.size(); ++i) env[e.outputs[i].id] = outs[i];
  }
  std::vector<Array> result;
  for (auto& a : j.outvars) result.push_back(read(a));
  return result;
}

std::vector<Array> backward_pass(const Jaxpr& j, std::span<const Array> consts, std::span<const Array> cts_out) {
  return backward_pass(j, consts, std::vector<Array>(j.invars.size()), cts_out);
}

std::vector<Array> backward_pass(const Jaxpr& j, std::span<const Array> consts, std::span<const Array> args,
                                 std::span<const Array> cts_out) {
  std::unordered_map<int64_t, Array> known, ct_env;
  for (size_t i = 0; i < consts.size(); ++i) known[j.constvars[i].id] = consts[i];
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].valid()) known[j.invars[i].id] = args[i];
  auto accumulate = [&](const Var& v, const Array& ct) {
    if (!ct.valid() || known.count(v.id)) return;
    JITX_ASSERT(ct.shape() == v.aval.shape, "backward pass: cotangent {} for a value {}", ct.aval().str(),
                v.aval.str());
    Array c = ct.dtype() == v.aval.dtype ? ct : lax::convert_element_type(ct, v.aval.dtype);
    auto it = ct_env.find(v.id);
    if (it == ct_env.end()) ct_env.emplace(v.id, c);
    else it->second = add_tangents(it->second, c);
  };
  for (size_t i = 0; i < j.outvars.size(); ++i)
    if (!j.outvars[i].is_literal) accumulate(j.outvars[i].var, cts_out[i]);
  // Linearize records only equations with a linear input, but the tangent sub-jaxprs of control flow also
  // hold zeros instantiated from literals (a branch whose output tangent is zero where another's is not):
  // such equations, with no unknown input, are evaluated forward; their outputs are known values.
  std::vector<bool> forward(j.eqns.size(), false);
  for (size_t k = 0; k < j.eqns.size(); ++k) {
    const Eqn& e = j.eqns[k];
    bool all_known = std::all_of(e.inputs.begin(), e.inputs.end(),
                                 [&](const Atom& a) { return a.is_literal || known.count(a.var.id); });
    if (!all_known) continue;
    std::vector<Array> ins;
    for (auto& a : e.inputs) ins.push_back(a.is_literal ? literal_array(a.lit) : known.at(a.var.id));
    std::vector<Array> outs = bind(*e.prim, std::move(ins), e.params);
    for (size_t i = 0; i < outs.size(); ++i) known[e.outputs[i].id] = outs[i];
    forward[k] = true;
  }
  // One reverse sweep over the linear equations.
  for (size_t k = j.eqns.size(); k-- > 0;) {
    if (forward[k]) continue;
    const Eqn* e = &j.eqns[k];
    std::vector<Array> cts;
    bool any = false;
    for (auto& o : e->outputs) {
      auto it = ct_env.find(o.id);
      cts.push_back(it == ct_env.end() ? Array() : it->second);
      any = any || cts.back().valid();
      if (it != ct_env.end()) ct_env.erase(it);
    }
    if (!any) continue;
    std::vector<LinearArg> args;
    for (auto& a : e->inputs) {
      if (a.is_literal) args.push_back(LinearArg{literal_array(a.lit), a.lit.aval});
      else if (auto it = known.find(a.var.id); it != known.end()) args.push_back(LinearArg{it->second, a.var.aval});
      else args.push_back(LinearArg{Array(), a.var.aval});
    }
    if (!e->prim->transpose)
      throw_error<TypeError>("vjp", "cannot transpose primitive '{}': it has no transpose rule (it is not linear in "
                                    "its tangent inputs)", e->prim->name);
    std::vector<Array> cts_in = e->prim->transpose(cts, args, e->params);
    JITX_ASSERT(cts_in.size() == args.size(), "transpose rule of {} returned {} cotangents for {} inputs",
                e->prim->name, cts_in.size(), args.size());
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].is_linear()) accumulate(e->inputs[i].var, cts_in[i]);
  }
  std::vector<Array> result;
  for (auto& v : j.invars) {
    auto it = ct_env.find(v.id);
    result.push_back(it == ct_env.end() ? Array() : it->second);
  }
  return result;
}

}  // namespace jitx::detail
