// custom_jvp and custom_vjp: user differentiation rules, applied when a JVP trace sees the call. A custom_vjp's
// tangent is a custom_lin equation (linear in the tangents) whose transpose runs the user's bwd, traced to a jaxpr.
#include "core/errors.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using Insts = std::vector<hlo::Instruction*>;

/// Tangents of the inputs with zeros instantiated (also for integer inputs, in their own dtype).
std::vector<Array> all_tangents(const std::vector<Array>& primals, const std::vector<Array>& tangents) {
  std::vector<Array> out;
  for (size_t i = 0; i < primals.size(); ++i) out.push_back(instantiate(tangents[i], primals[i].aval()));
  return out;
}

/// The rule's output tangents, checked against the outputs: none (a symbolic zero) for non-float outputs.
std::vector<Array> checked_tangents(std::string_view op, const std::vector<Array>& outs, std::vector<Array> touts) {
  if (touts.size() != outs.size())
    throw_error<TypeError>(op, "the rule returned {} output tangents for {} outputs", touts.size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!is_floating(outs[i].dtype()) || !touts[i].valid()) {
      touts[i] = Array();
      continue;
    }
    if (touts[i].shape() != outs[i].shape() || touts[i].dtype() != outs[i].dtype())
      throw_error<TypeError>(op, "the tangent of output {} must have the output's type {}, got {}", i,
                             outs[i].aval().str(), touts[i].aval().str());
  }
  return touts;
}

std::vector<Array> wrap_outputs(JVPTrace& jt, std::string_view op, const std::vector<Array>& outs,
                                const std::vector<Array>& touts) {
  std::vector<Array> ts = checked_tangents(op, outs, touts), r;
  for (size_t i = 0; i < outs.size(); ++i) r.push_back(ts[i].valid() ? jt.make_tracer(outs[i], ts[i]) : outs[i]);
  return r;
}

// --- under vmap ------------------------------------------------------------------------------------------
// custom_jvp/custom_vjp functions are not primitives here, so the batch trace cannot see the call: when it is the
// innermost trace, the call is re-made one level out with its function and rules batched (JAX's batching rules of
// custom_jvp_call/custom_vjp_call), so an enclosing grad still applies the user's rule. Every output is batched
// at axis 0.
struct Unbatched {
  std::vector<Array> vals;
  std::vector<int64_t> dims;
  bool any = false;
};
Unbatched unbatch(const BatchTrace& bt, const std::vector<Array>& args) {
  Unbatched u;
  for (auto& a : args) {
    auto [v, d] = bt.unpack(a);
    u.any = u.any || d != not_mapped;
    u.vals.push_back(v);
    u.dims.push_back(d);
  }
  return u;
}

/// fn over stacked values: fn under a fresh batch trace, every output with its batch axis in front.
std::vector<Array> call_batched(int64_t n, const LeafFn& fn, const std::vector<Array>& args,
                                const std::vector<int64_t>& dims) {
  auto [outs, odims] = batch_call(n, fn, args, dims);
  for (size_t i = 0; i < outs.size(); ++i) outs[i] = batch_at(outs[i], odims[i], n);
  return outs;
}

std::vector<Array> rewrap(BatchTrace& bt, const std::vector<Array>& outs) {
  std::vector<Array> r;
  for (auto& o : outs) r.push_back(bt.make_tracer(o, 0));
  return r;
}

std::vector<Array> concat(std::vector<Array> a, const std::vector<Array>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// custom_lin[bwd num_res](residuals..., tangents...): the tangent of a custom_vjp function's outputs.
const Primitive& custom_lin = [] () -> const Primitive& {
  Primitive p;
  p.name = "custom_lin";
  p.abstract_eval = [](std::span<const ShapedArray>, const Params& ps) {
    const auto& bwd = *std::get<std::shared_ptr<const ClosedJaxpr>>(ps.at("bwd"));
    auto in = bwd.in_avals();
    return std::vector<ShapedArray>(in.begin() + ps.get_int("num_res"), in.end());
  };
  p.lower = [](LowerCtx&, std::span<hlo::Instruction* const>) -> std::vector<hlo::Instruction*> {
    throw_error<TypeError>("custom_vjp", "forward-mode differentiation (jvp, linearize's jvp) of a custom_vjp function "
                                         "is not supported; use vjp or grad, or define the function with custom_jvp");
  };
  // jacfwd (vmap of jvp) meets the forward-mode tangent here first: the same error, as JAX's "can't apply
  // forward-mode autodiff (jvp) to a custom_vjp function", not a missing batching rule.
  p.batch = [](std::span<const Array>, std::span<const int64_t>,
               const Params&) -> std::pair<std::vector<Array>, std::vector<int64_t>> {
    throw_error<TypeError>("custom_vjp", "forward-mode differentiation (jvp, jacfwd, linearize's jvp) of a custom_vjp "
                                         "function is not supported; use vjp, grad or jacrev, or define the function "
                                         "with custom_jvp");
  };
  p.jvp = [](std::span<const Array>, std::span<const Array>, const Params&) -> JvpResult {
    throw_error<TypeError>("custom_vjp", "cannot differentiate the linear part of a custom_vjp function in forward "
                                         "mode; higher derivatives go through reverse mode (grad of grad)");
  };
  p.transpose = [](std::span<const Array> cts, std::span<const LinearArg> args, const Params& ps) {
    const auto& bwd = *std::get<std::shared_ptr<const ClosedJaxpr>>(ps.at("bwd"));
    size_t nres = static_cast<size_t>(ps.get_int("num_res"));
    auto in = bwd.in_avals();
    std::vector<Array> bargs;
    for (size_t i = 0; i < nres; ++i) {
      if (args[i].is_linear()) not_differentiable("custom_lin", "its residuals must be known");
      bargs.push_back(args[i].value);
    }
    for (size_t i = 0; i < cts.size(); ++i) bargs.push_back(instantiate(cts[i], in[nres + i]));
    std::vector<Array> ct_in = eval_jaxpr(bwd.jaxpr, bwd.consts, bargs);
    std::vector<Array> out(nres);
    out.insert(out.end(), ct_in.begin(), ct_in.end());
    return out;
  };
  return register_primitive(std::move(p));
}();
}  // namespace

namespace {
// --- inside jaxprs ---------------------------------------------------------------------------------------------
// A custom function called where a jaxpr is being traced (a cond branch, a loop body, a checkpointed function,
// jit) is recorded as one equation, custom_jvp_call[call_jaxpr, rules] or custom_vjp_call[...], holding the traced
// function and the user's rules, as JAX's custom_jvp_call_p does: differentiating the jaxpr later (grad of a cond,
// of a scan) applies the rule, where inlining the function lost it. Lowered and evaluated, it is its call_jaxpr.
struct CustomRules : OpaqueParam {
  LeafFn fn;
  CustomJvpRule jvp;            // custom_jvp
  bool symbolic_zeros = false;  // custom_jvp: the rule takes empty Arrays for zero tangents
  CustomFwd fwd;      // custom_vjp
  CustomBwd bwd;
  std::string str() const override { return jvp ? "custom_jvp" : "custom_vjp"; }
};
const CustomRules& rules_of(const Params& ps) {
  return static_cast<const CustomRules&>(*std::get<std::shared_ptr<const OpaqueParam>>(ps.at("rules")));
}

std::pair<std::vector<Array>, std::vector<Array>> vjp_rule_jvp(const CustomFwd& fwd, const CustomBwd& bwd,
                                                                const std::vector<Array>& primals,
                                                                const std::vector<Array>& tangents);

/// The custom call's batching (JAX's batching rules of custom_jvp_call/custom_vjp_call): the same call one level
/// out, with its function and rules batched (every output batched at axis 0), so an enclosing grad still applies
/// the user's rule. The batched functions hold copies of what they need: a jaxpr may keep them.
std::vector<Array> batched_custom_call(const CustomRules& r, int64_t n, const std::vector<Array>& vals,
                                       const std::vector<int64_t>& dims) {
  LeafFn fn = r.fn;
  LeafFn bfn = [n, fn, dims](const std::vector<Array>& xs) { return call_batched(n, fn, xs, dims); };
  if (r.jvp) {
    CustomJvpRule rule = r.jvp;
    // Tangents have their primals' shapes, so their batch axes are the primals'. Symbolic zeros (empty tangents)
    // stay out of the batched call and are given back to the rule as they came; a zero output tangent the rule
    // returns empty comes back as zeros.
    CustomJvpRule brule = [n, rule, dims](const std::vector<Array>& primals, const std::vector<Array>& tangents) {
      size_t k = primals.size(), nout = 0;
      std::vector<size_t> present;
      for (size_t i = 0; i < tangents.size(); ++i)
        if (tangents[i].valid()) present.push_back(i);
      LeafFn both = [&](const std::vector<Array>& xs) {
        std::vector<Array> ts(tangents.size());
        for (size_t j = 0; j < present.size(); ++j) ts[present[j]] = xs[k + j];
        auto [o, t] = rule({xs.begin(), xs.begin() + k}, ts);
        nout = o.size();
        for (size_t i = 0; i < t.size() && i < o.size(); ++i)
          if (!t[i].valid()) t[i] = instantiate(t[i], o[i].aval());
        return concat(o, t);
      };
      std::vector<Array> args = primals;
      std::vector<int64_t> d2 = dims;
      for (size_t i : present) {
        args.push_back(tangents[i]);
        d2.push_back(dims[i]);
      }
      auto outs = call_batched(n, both, args, d2);
      return std::make_pair(std::vector<Array>(outs.begin(), outs.begin() + nout),
                            std::vector<Array>(outs.begin() + nout, outs.end()));
    };
    return custom_jvp_call(bfn, brule, vals, r.symbolic_zeros);
  }
  CustomFwd fwd = r.fwd;
  CustomBwd bwd = r.bwd;
  CustomFwd bfwd = [n, fwd, dims](const std::vector<Array>& primals) {
    size_t nout = 0;
    LeafFn both = [&](const std::vector<Array>& xs) {
      auto [o, res] = fwd(xs);
      nout = o.size();
      return concat(o, res);
    };
    auto outs = call_batched(n, both, primals, dims);
    return std::make_pair(std::vector<Array>(outs.begin(), outs.begin() + nout),
                          std::vector<Array>(outs.begin() + nout, outs.end()));
  };
  // Residuals and output cotangents are batched at axis 0. An input's cotangent goes back to its batch axis; an
  // unbatched input is shared by every example, so its cotangent is the sum of theirs.
  CustomBwd bbwd = [n, bwd, dims](const std::vector<Array>& res, const std::vector<Array>& cts) {
    size_t nres = res.size();
    LeafFn both = [&](const std::vector<Array>& xs) {
      return bwd({xs.begin(), xs.begin() + nres}, {xs.begin() + nres, xs.end()});
    };
    std::vector<Array> all = concat(res, cts);
    auto [g, gd] = batch_call(n, both, all, std::vector<int64_t>(all.size(), 0));
    for (size_t i = 0; i < g.size() && i < dims.size(); ++i) {
      if (dims[i] != not_mapped) g[i] = batch_at(g[i], gd[i], n, dims[i]);
      else if (gd[i] != not_mapped) g[i] = lax::reduce_sum(g[i], {gd[i]});
      else g[i] = lax::mul(g[i], Array::scalar(static_cast<double>(n), g[i].dtype()));
    }
    return g;
  };
  return custom_vjp_call(bfn, bfwd, bbwd, vals);
}

Primitive custom_call_prim(const char* name) {
  Primitive p;
  p.name = name;
  p.abstract_eval = [](std::span<const ShapedArray>, const Params& ps) {
    return ps.get_jaxpr("call_jaxpr")->out_avals();
  };
  p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    return c.lower_into(c.comp, *c.params.get_jaxpr("call_jaxpr"), Insts(a.begin(), a.end()));
  };
  p.jvp = [](std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
    const CustomRules& r = rules_of(ps);
    std::vector<Array> xs(primals.begin(), primals.end()), ts(tangents.begin(), tangents.end());
    if (!(r.jvp && r.symbolic_zeros)) ts = all_tangents(xs, ts);
    auto [outs, touts] = r.jvp ? r.jvp(xs, ts) : vjp_rule_jvp(r.fwd, r.bwd, xs, ts);
    return JvpResult{outs, checked_tangents(r.jvp ? "custom_jvp" : "custom_vjp", outs, touts)};
  };
  p.batch = [](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
    int64_t n = batch_size(args, dims);
    std::vector<Array> vals(args.begin(), args.end());
    std::vector<int64_t> ds(dims.begin(), dims.end());
    std::vector<Array> outs = batched_custom_call(rules_of(ps), n, vals, ds);
    return BatchResult{outs, std::vector<int64_t>(outs.size(), 0)};
  };
  return p;
}
const Primitive& custom_jvp_prim = register_primitive(custom_call_prim("custom_jvp_call"));
const Primitive& custom_vjp_prim = register_primitive(custom_call_prim("custom_vjp_call"));

/// The call recorded as an equation of the jaxpr being traced (see CustomRules).
std::vector<Array> record_call(const Primitive& prim, std::shared_ptr<CustomRules> rules,
                               const std::vector<Array>& args) {
  std::vector<ShapedArray> avals;
  for (auto& a : args) avals.push_back(a.aval());
  auto call = std::make_shared<const ClosedJaxpr>(trace_to_jaxpr(prim.name, avals, rules->fn));
  return detail::bind(prim, args,
                      Params{{"call_jaxpr", call}, {"rules", std::shared_ptr<const OpaqueParam>(std::move(rules))}});
}
}  // namespace

namespace {
/// A custom function's call, per the innermost trace of its arguments: under vmap re-made one level out with
/// batched rules; where a jaxpr is traced, recorded as one equation; under a JVP trace the rule applied; on
/// concrete arguments the function itself.
std::vector<Array> custom_call(const std::shared_ptr<CustomRules>& r, const std::vector<Array>& args) {
  const char* op = r->jvp ? "custom_jvp" : "custom_vjp";
  Trace* top = find_top_trace(args, op);
  if (auto* bt = dynamic_cast<BatchTrace*>(top)) {
    Unbatched u = unbatch(*bt, args);
    if (!u.any) return custom_call(r, u.vals);
    return rewrap(*bt, batched_custom_call(*r, bt->axis_size, u.vals, u.dims));
  }
  auto* jt = dynamic_cast<JVPTrace*>(top);
  if (!jt) {
    if (!top) return r->fn(args);  // concrete arguments: no transformation can see the call
    return record_call(r->jvp ? custom_jvp_prim : custom_vjp_prim, r, args);
  }
  std::vector<Array> primals, tangents;
  bool any = false;
  for (auto& a : args) {
    auto [x, t] = jt->unpack(a);
    any = any || t.valid();
    primals.push_back(x);
    tangents.push_back(t);
  }
  if (!any) return custom_call(r, primals);
  std::vector<Array> ts = r->jvp && r->symbolic_zeros ? tangents : all_tangents(primals, tangents);
  auto [outs, touts] = r->jvp ? r->jvp(primals, ts) : vjp_rule_jvp(r->fwd, r->bwd, primals, ts);
  return wrap_outputs(*jt, op, outs, touts);
}
}  // namespace

std::vector<Array> custom_jvp_call(const LeafFn& fn, const CustomJvpRule& rule, const std::vector<Array>& args,
                                   bool symbolic_zeros) {
  auto r = std::make_shared<CustomRules>();
  r->fn = fn;
  r->jvp = rule;
  r->symbolic_zeros = symbolic_zeros;
  return custom_call(r, args);
}

namespace {
/// A custom_vjp function's JVP: fwd's outputs, and as tangents a custom_lin equation (linear in the tangents)
/// whose transpose runs bwd, traced to a jaxpr here.
std::pair<std::vector<Array>, std::vector<Array>> vjp_rule_jvp(const CustomFwd& fwd, const CustomBwd& bwd,
                                                                const std::vector<Array>& primals,
                                                                const std::vector<Array>& tangents) {
  auto [outs, res] = fwd(primals);
  std::vector<ShapedArray> avals;
  for (auto& r : res) avals.push_back(r.aval());
  for (auto& o : outs) avals.push_back(o.aval());
  size_t nres = res.size();
  auto bwd_jaxpr =
      std::make_shared<ClosedJaxpr>(trace_to_jaxpr("custom_vjp_bwd", avals, [&](const std::vector<Array>& a) {
        std::vector<Array> r(a.begin(), a.begin() + nres), cts(a.begin() + nres, a.end());
        std::vector<Array> ct_in = bwd(r, cts);
        if (ct_in.size() != primals.size())
          throw_error<TypeError>("custom_vjp", "bwd returned {} cotangent leaves for {} input leaves", ct_in.size(),
                                 primals.size());
        for (size_t i = 0; i < ct_in.size(); ++i) {
          ct_in[i] = instantiate(ct_in[i], primals[i].aval());
          if (ct_in[i].shape() != primals[i].shape())
            throw_error<TypeError>("custom_vjp", "bwd's cotangent {} has type {}, the input has {}", i,
                                   ct_in[i].aval().str(), primals[i].aval().str());
          if (ct_in[i].dtype() != primals[i].dtype())
            ct_in[i] = lax::convert_element_type(ct_in[i], primals[i].dtype());
        }
        return ct_in;
      }));
  std::vector<Array> lin_in = res;
  lin_in.insert(lin_in.end(), tangents.begin(), tangents.end());
  std::vector<Array> touts = detail::bind(
      custom_lin, lin_in,
      Params{{"bwd", std::shared_ptr<const ClosedJaxpr>(bwd_jaxpr)}, {"num_res", static_cast<int64_t>(nres)}});
  return {outs, touts};
}
}  // namespace

std::vector<Array> custom_vjp_call(const LeafFn& fn, const CustomFwd& fwd, const CustomBwd& bwd,
                                   const std::vector<Array>& args) {
  auto r = std::make_shared<CustomRules>();
  r->fn = fn;
  r->fwd = fwd;
  r->bwd = bwd;
  return custom_call(r, args);
}

}  // namespace jitx::detail
