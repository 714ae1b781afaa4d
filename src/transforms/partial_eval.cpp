// Jaxpr-level JVP and partial evaluation (known/unknown split), the tools higher-order primitives'
// rules are built from (JAX's jvp_jaxpr and partial_eval_jaxpr_nounits).
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "transforms/ad.h"

namespace jitx::detail {

JvpJaxpr jvp_jaxpr(const ClosedJaxpr& cj, const std::vector<bool>& nonzero, const std::vector<bool>& force) {
  std::vector<ShapedArray> avals = cj.in_avals();
  size_t n = avals.size();
  JITX_ASSERT(nonzero.size() == n, "jvp_jaxpr: {} flags for {} invars", nonzero.size(), n);
  for (size_t i = 0; i < n; ++i)
    if (nonzero[i]) avals.push_back(avals[i]);
  JvpJaxpr r;
  r.jaxpr = trace_to_jaxpr("jvp_jaxpr", avals, [&](const std::vector<Array>& args) {
    std::vector<Array> primals(args.begin(), args.begin() + n), tangents(n);
    for (size_t i = 0, k = n; i < n; ++i)
      if (nonzero[i]) tangents[i] = args[k++];
    LeafFn fn = [&](const std::vector<Array>& xs) { return eval_jaxpr(cj.jaxpr, cj.consts, xs); };
    auto [outs, touts] = jvp_flat("jvp_jaxpr", fn, primals, tangents);
    size_t nout = outs.size();
    for (size_t i = 0; i < nout; ++i) {
      bool inst = i < force.size() && force[i];
      bool nz = is_floating(outs[i].dtype()) && (touts[i].valid() || inst);
      r.out_nz.push_back(nz);
      if (nz) outs.push_back(instantiate(touts[i], outs[i].aval()));
    }
    return outs;
  });
  return r;
}

LinearizedJaxpr linearize_jaxpr(const std::string& name, const ClosedJaxpr& cj, const std::vector<bool>& diff) {
  LinearizedJaxpr r;
  // The known half is traced like any function; linearize_flat inside it runs the primal part in this trace
  // (nested control flow splits itself the same way) and records the tangent part into its own linear jaxpr,
  // whose constvars (residuals) are values of this trace: returning them makes them the known outputs.
  r.known = trace_to_jaxpr(name, cj.in_avals(), [&](const std::vector<Array>& args) {
    LeafFn fn = [&](const std::vector<Array>& xs) { return eval_jaxpr(cj.jaxpr, cj.consts, xs); };
    auto lin = linearize_flat(name, fn, args, diff);
    r.linear = lin->linear.jaxpr;
    r.diff = lin->diff;
    for (bool z : lin->out_zero) r.out_nz.push_back(!z);
    std::vector<Array> outs = lin->primals_out;
    for (auto& c : lin->linear.consts) {
      outs.push_back(c);
      r.res_avals.push_back(c.aval());
    }
    return outs;
  });
  return r;
}

bool is_linearize_tangent(const Array& t) {
  if (!t.valid() || !t.is_tracer()) return false;
  auto* jt = dynamic_cast<const JaxprTrace*>(static_cast<const Tracer&>(*t.impl()).trace.get());
  return jt && !jt->ambient;
}

PartialEval partial_eval_jaxpr(const ClosedJaxpr& cj, const std::vector<bool>& unknown_inputs) {
  const Jaxpr& j = cj.jaxpr;
  JITX_ASSERT(unknown_inputs.size() == j.invars.size(), "partial_eval_jaxpr: {} flags for {} invars",
              unknown_inputs.size(), j.invars.size());
  std::unordered_set<int64_t> unknown, residual_ids;
  std::vector<Var> residuals;
  PartialEval pe;
  Jaxpr& known = pe.known.jaxpr;
  known.constvars = j.constvars;
  pe.known.consts = cj.consts;
  for (size_t i = 0; i < j.invars.size(); ++i) {
    if (unknown_inputs[i]) unknown.insert(j.invars[i].id);
    else known.invars.push_back(j.invars[i]);
  }
  auto is_unknown = [&](const Atom& a) { return !a.is_literal && unknown.count(a.var.id); };
  auto need_residual = [&](const Atom& a) {
    if (a.is_literal || is_unknown(a) || residual_ids.count(a.var.id)) return;
    residual_ids.insert(a.var.id);
    residuals.push_back(a.var);
  };
  for (auto& e : j.eqns) {
    bool any = false;
    for (auto& a : e.inputs) any = any || is_unknown(a);
    if (!any) {
      known.eqns.push_back(e);
      continue;
    }
    for (auto& a : e.inputs) need_residual(a);
    for (auto& o : e.outputs) unknown.insert(o.id);
    pe.unknown.eqns.push_back(e);
  }
  for (auto& a : j.outvars) {
    pe.out_unknown.push_back(is_unknown(a));
    (is_unknown(a) ? pe.unknown.outvars : known.outvars).push_back(a);
  }
  for (auto& r : residuals) known.outvars.push_back(Atom::of(r));
  pe.unknown.invars = residuals;
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (unknown_inputs[i]) pe.unknown.invars.push_back(j.invars[i]);
  pe.num_residuals = residuals.size();
  return pe;
}

}  // namespace jitx::detail
