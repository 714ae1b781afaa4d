// checkpoint (remat): under reverse mode, a checkpointed function's forward pass saves only the residuals its
// policy allows; the others are recomputed inside the backward pass by the transpose of a `remat` equation.
// An optimization_barrier over the recomputation's inputs and the cotangents keeps the compiler from merging
// the recomputation with the forward pass (CSE) or scheduling it before the backward pass needs it (XLA's
// opt-barrier, as JAX's remat uses).
#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using Insts = std::vector<hlo::Instruction*>;

std::vector<ShapedArray> avals_of(const std::vector<Array>& xs) {
  std::vector<ShapedArray> v;
  for (auto& x : xs) v.push_back(x.aval());
  return v;
}

// optimization_barrier(xs...) -> xs...: the identity, opaque to the optimiser.
const Primitive& barrier_prim = [] () -> const Primitive& {
  Primitive p;
  p.name = "optimization_barrier";
  p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
    return std::vector<ShapedArray>(in.begin(), in.end());
  };
  p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    std::vector<hlo::Shape> shapes;
    for (auto* x : a) shapes.push_back(x->shape);
    auto* b = c.comp->add(hlo::Opcode::kOptimizationBarrier, hlo::Shape::tuple(shapes), Insts(a.begin(), a.end()));
    Insts outs;
    for (size_t k = 0; k < a.size(); ++k)
      outs.push_back(
          c.comp->add(hlo::Opcode::kGetTupleElement, shapes[k], {b}, Params{{"index", static_cast<int64_t>(k)}}));
    return outs;
  };
  p.jvp = linear_jvp("optimization_barrier");
  p.transpose = [](std::span<const Array> cts, std::span<const LinearArg> args, const Params&) {
    std::vector<Array> ins;
    for (size_t k = 0; k < args.size(); ++k) ins.push_back(instantiate(cts[k], args[k].aval));
    std::vector<Array> outs = detail::bind(*find_primitive("optimization_barrier"), ins);
    for (size_t k = 0; k < args.size(); ++k)
      if (!args[k].is_linear()) outs[k] = Array();
    return outs;
  };
  // vmap: the barrier passes each value through with its batch axis where it is.
  p.batch = [](std::span<const Array> args, std::span<const int64_t> dims, const Params&) {
    return BatchResult{detail::bind(*find_primitive("optimization_barrier"), {args.begin(), args.end()}),
                       {dims.begin(), dims.end()}};
  };
  return register_primitive(std::move(p));
}();

/// vmap of a primitive that calls its "jaxpr" param (checkpoint, remat): the same primitive over the batched
/// jaxpr, with every batched input's batch axis in front, so the mark (and what it recomputes) survives vmap.
BatchResult batch_jaxpr_call(const char* prim, std::span<const Array> args, std::span<const int64_t> dims,
                             const Params& ps) {
  int64_t n = batch_size(args, dims);
  std::vector<bool> in_b;
  std::vector<Array> ins;
  for (size_t k = 0; k < args.size(); ++k) {
    in_b.push_back(dims[k] != not_mapped);
    ins.push_back(in_b.back() ? batch_at(args[k], dims[k], n) : args[k]);
  }
  auto [bj, out_b] = batch_jaxpr(*ps.get_jaxpr("jaxpr"), n, in_b, {});
  Params q = ps;
  q.set("jaxpr", std::make_shared<const ClosedJaxpr>(std::move(bj)));
  std::vector<int64_t> out_dims;
  for (bool b : out_b) out_dims.push_back(b ? 0 : not_mapped);
  return BatchResult{detail::bind(*find_primitive(prim), ins, q), out_dims};
}

// remat[jaxpr, num_known](known..., tangents...): the tangent of a checkpointed function. Its jaxpr recomputes
// the unsaved residuals from the known inputs (the function's inputs and the saved residuals) and applies the
// linear part to the tangents; it is linear in the tangents.
const Primitive& remat_prim = [] () -> const Primitive& {
  Primitive p;
  p.name = "remat";
  p.abstract_eval = [](std::span<const ShapedArray>, const Params& ps) { return ps.get_jaxpr("jaxpr")->out_avals(); };
  p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    return c.lower_into(c.comp, *c.params.get_jaxpr("jaxpr"), Insts(a.begin(), a.end()));
  };
  // Differentiating the backward pass again (grad of grad) differentiates the recomputation as it stands.
  p.jvp = [](std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
    const ClosedJaxpr& r = *ps.get_jaxpr("jaxpr");
    LeafFn fn = [&](const std::vector<Array>& xs) { return eval_jaxpr(r.jaxpr, r.consts, xs); };
    auto [outs, touts] = jvp_flat("remat", fn, {primals.begin(), primals.end()}, {tangents.begin(), tangents.end()});
    return JvpResult{outs, touts};
  };
  p.transpose = [](std::span<const Array> cts, std::span<const LinearArg> args, const Params& ps) {
    const ClosedJaxpr& r = *ps.get_jaxpr("jaxpr");
    size_t nk = static_cast<size_t>(ps.get_int("num_known"));
    std::vector<ShapedArray> out_avals = r.out_avals();
    std::vector<Array> through;
    for (size_t k = 0; k < nk; ++k) {
      if (args[k].is_linear()) not_differentiable("remat", "its known inputs must be known in the backward pass");
      through.push_back(args[k].value);
    }
    for (size_t k = 0; k < cts.size(); ++k) through.push_back(instantiate(cts[k], out_avals[k]));
    // The recomputation reads the known values through a barrier that also holds the cotangents: it cannot
    // be merged with the forward pass, nor run before the backward pass reaches it. With nothing to recompute
    // there is no barrier (it would only keep the saved values from fusing into their consumers).
    std::vector<Array> b = ps.get_bool("recompute") ? detail::bind(barrier_prim, through) : through;
    std::vector<Array> bargs(args.size());
    for (size_t k = 0; k < nk; ++k) bargs[k] = b[k];
    std::vector<Array> bcts(b.begin() + nk, b.end());
    std::vector<Array> cin = backward_pass(r.jaxpr, r.consts, bargs, bcts);
    for (size_t k = 0; k < nk; ++k) cin[k] = Array();
    return cin;
  };
  p.batch = [](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
    return batch_jaxpr_call("remat", args, dims, ps);
  };
  return register_primitive(std::move(p));
}();

/// The equations of j needed for `wanted`, given that the vars in `available` are known (not recomputed).
std::vector<const Eqn*> needed_eqns(const Jaxpr& j, const std::vector<Atom>& wanted,
                                    const std::unordered_set<int64_t>& available) {
  std::unordered_set<int64_t> live;
  for (auto& a : wanted)
    if (!a.is_literal && !available.count(a.var.id)) live.insert(a.var.id);
  std::vector<const Eqn*> out;
  for (size_t k = j.eqns.size(); k-- > 0;) {
    const Eqn& e = j.eqns[k];
    bool need = false;
    for (auto& o : e.outputs) need = need || live.count(o.id);
    if (!need) continue;
    out.push_back(&e);
    for (auto& a : e.inputs)
      if (!a.is_literal && !available.count(a.var.id)) live.insert(a.var.id);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

/// Evaluates the given equations of j by binding them, over an environment seeded with known values.
void eval_eqns(const std::vector<const Eqn*>& eqns, std::unordered_map<int64_t, Array>& env) {
  for (const Eqn* e : eqns) {
    std::vector<Array> ins;
    for (auto& a : e->inputs) {
      if (a.is_literal) {
        Array s = is_floating(a.lit.aval.dtype) ? Array::scalar(a.lit.f, a.lit.aval.dtype)
                                                : Array::scalar_int(a.lit.i, a.lit.aval.dtype);
        ins.push_back(s);
      } else {
        ins.push_back(env.at(a.var.id));
      }
    }
    std::vector<Array> outs = detail::bind(*e->prim, std::move(ins), e->params);
    for (size_t i = 0; i < outs.size(); ++i) env.emplace(e->outputs[i].id, outs[i]);  // saved values win
  }
}

/// The checkpoint rule under reverse mode, on f's jaxpr j (closure-converted: no consts): the outputs,
/// computed now with the saveable intermediates, and their tangents from a remat equation.
JvpResult checkpoint_linearize(const ClosedJaxpr& j, const CheckpointPolicy& policy, const std::vector<Array>& ins,
                               const std::vector<Array>& tins) {
  std::vector<bool> diff;
  for (auto& t : tins) diff.push_back(t.valid());
  LinearizedJaxpr lin = linearize_jaxpr("checkpoint", j, diff);

  // The inputs (and constants) are always there for the backward pass.
  const Jaxpr& k = lin.known.jaxpr;
  size_t nout = lin.out_nz.size();
  std::unordered_set<int64_t> available;
  for (auto& v : k.invars) available.insert(v.id);
  for (auto& v : k.constvars) available.insert(v.id);
  // What the backward pass may read instead of recomputing: the values of equations the policy allows
  // (JAX's policies look at every intermediate, not only at residuals: dots_saveable keeps the products
  // that the recomputed tanh needs). Those the recomputation reaches are saved by the forward pass.
  std::vector<Atom> res_atoms(k.outvars.begin() + nout, k.outvars.end());
  for (auto& a : res_atoms) JITX_ASSERT(!a.is_literal, "checkpoint: a literal residual");
  std::unordered_set<int64_t> r_available = available;
  std::unordered_set<int64_t> allowed;
  if (policy.saveable)
    for (auto& e : k.eqns)
      if (policy.saveable(e.prim->name))
        for (auto& o : e.outputs) {
          r_available.insert(o.id);
          allowed.insert(o.id);
        }
  std::vector<const Eqn*> recompute = needed_eqns(k, res_atoms, r_available);
  std::vector<Atom> saved;
  std::unordered_set<int64_t> saved_ids;
  auto save = [&](const Atom& a) {
    if (a.is_literal || !allowed.count(a.var.id) || !saved_ids.insert(a.var.id).second) return;
    saved.push_back(a);
  };
  for (auto& a : res_atoms) save(a);
  for (const Eqn* e : recompute)
    for (auto& a : e->inputs) save(a);
  // The forward pass: the outputs and the saved residuals.
  std::unordered_map<int64_t, Array> env;
  for (size_t i = 0; i < k.constvars.size(); ++i) env.emplace(k.constvars[i].id, lin.known.consts[i]);
  for (size_t i = 0; i < k.invars.size(); ++i) env.emplace(k.invars[i].id, ins[i]);
  std::vector<Atom> fwd_wanted(k.outvars.begin(), k.outvars.begin() + nout);
  fwd_wanted.insert(fwd_wanted.end(), saved.begin(), saved.end());
  eval_eqns(needed_eqns(k, fwd_wanted, available), env);
  auto read = [&](const Atom& a, std::unordered_map<int64_t, Array>& e) {
    return a.is_literal ? (is_floating(a.lit.aval.dtype) ? Array::scalar(a.lit.f, a.lit.aval.dtype)
                                                         : Array::scalar_int(a.lit.i, a.lit.aval.dtype))
                        : e.at(a.var.id);
  };
  std::vector<Array> outs, saved_values;
  for (size_t i = 0; i < nout; ++i) outs.push_back(read(k.outvars[i], env));
  for (auto& a : saved) saved_values.push_back(read(a, env));

  // The tangent: remat(inputs..., saved..., tangents...), recomputing the other residuals from the first two.
  std::vector<ShapedArray> r_avals = avals_of(ins);
  for (auto& a : saved) r_avals.push_back(a.var.aval);
  std::vector<Array> ts;
  for (size_t i = 0; i < tins.size(); ++i)
    if (lin.diff[i]) {
      ts.push_back(tins[i]);
      r_avals.push_back(ins[i].aval());
    }
  ClosedJaxpr r = trace_to_jaxpr("checkpoint recompute", r_avals, [&](const std::vector<Array>& a) {
    std::unordered_map<int64_t, Array> e;
    for (size_t i = 0; i < k.constvars.size(); ++i) e.emplace(k.constvars[i].id, lin.known.consts[i]);
    size_t q = 0;
    for (auto& v : k.invars) e.emplace(v.id, a[q++]);
    for (auto& s : saved) e.emplace(s.var.id, a[q++]);
    eval_eqns(recompute, e);
    std::vector<Array> res;
    for (auto& at : res_atoms) res.push_back(read(at, e));
    return eval_jaxpr(lin.linear, res, std::vector<Array>(a.begin() + q, a.end()));
  });
  std::vector<Array> rin = ins;
  rin.insert(rin.end(), saved_values.begin(), saved_values.end());
  rin.insert(rin.end(), ts.begin(), ts.end());
  size_t num_known = ins.size() + saved_values.size();
  std::vector<Array> touts =
      detail::bind(remat_prim, rin,
           Params{{"jaxpr", std::make_shared<const ClosedJaxpr>(std::move(r))},
                  {"num_known", static_cast<int64_t>(num_known)},
                  {"policy", policy.name},
                  {"recompute", !recompute.empty()}});
  JvpResult result{outs, {}};
  for (size_t i = 0, q = 0; i < nout; ++i) result.tangents_out.push_back(lin.out_nz[i] ? touts[q++] : Array());
  return result;
}

/// Policies by name: a checkpoint equation names its policy (params hold no functions).
std::mutex g_policies_mu;
std::map<std::string, CheckpointPolicy, std::less<>>& policies() {
  static auto* m = new std::map<std::string, CheckpointPolicy, std::less<>>();
  return *m;
}
CheckpointPolicy policy_named(std::string_view name) {
  std::lock_guard<std::mutex> lock(g_policies_mu);
  auto it = policies().find(name);
  JITX_ASSERT(it != policies().end(), "checkpoint policy {} is not registered", name);
  return it->second;
}

// checkpoint[jaxpr, policy](consts..., args...): f marked for rematerialisation, so that the mark survives
// tracing (a checkpointed scan body, a function traced by jit and differentiated later). It evaluates and
// lowers as f; its JVP rule is where the policy applies.
const Primitive& checkpoint_prim = [] () -> const Primitive& {
  Primitive p;
  p.name = "checkpoint";
  p.abstract_eval = [](std::span<const ShapedArray>, const Params& ps) { return ps.get_jaxpr("jaxpr")->out_avals(); };
  p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    return c.lower_into(c.comp, *c.params.get_jaxpr("jaxpr"), Insts(a.begin(), a.end()));
  };
  p.jvp = [](std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
    const ClosedJaxpr& j = *ps.get_jaxpr("jaxpr");
    std::vector<Array> ins(primals.begin(), primals.end()), tins(tangents.begin(), tangents.end());
    if (std::any_of(tins.begin(), tins.end(), is_linearize_tangent))
      return checkpoint_linearize(j, policy_named(ps.get_str("policy")), ins, tins);
    // Forward mode has nothing to save: f is differentiated as it is.
    LeafFn fn = [&](const std::vector<Array>& xs) { return eval_jaxpr(j.jaxpr, j.consts, xs); };
    auto [outs, touts] = jvp_flat("checkpoint", fn, ins, tins);
    return JvpResult{outs, touts};
  };
  p.batch = [](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
    return batch_jaxpr_call("checkpoint", args, dims, ps);
  };
  return register_primitive(std::move(p));
}();

}  // namespace

std::vector<Array> checkpoint_call(const LeafFn& fn, const CheckpointPolicy& policy, const std::vector<Array>& args) {
  // Outside any trace there is nothing to differentiate later: f runs as it is.
  if (!find_top_trace(args, "checkpoint")) return fn(args);
  {
    std::lock_guard<std::mutex> lock(g_policies_mu);
    policies().insert_or_assign(policy.name, policy);
  }
  // f traced over the arguments' types; the values it closes over become leading inputs (closure conversion),
  // so that their tangents reach the rule.
  ClosedJaxpr j = trace_to_jaxpr("checkpoint", avals_of(args), fn);
  std::vector<Array> ins = j.consts;
  ins.insert(ins.end(), args.begin(), args.end());
  j.jaxpr.invars.insert(j.jaxpr.invars.begin(), j.jaxpr.constvars.begin(), j.jaxpr.constvars.end());
  j.jaxpr.constvars.clear();
  j.consts.clear();
  return detail::bind(checkpoint_prim, ins,
                      Params{{"jaxpr", std::make_shared<const ClosedJaxpr>(std::move(j))}, {"policy", policy.name}});
}

}  // namespace jitx::detail
