// The JVP trace, jvp of flat functions, and linearize (JVP whose tangents are recorded into a linear jaxpr).
#include <unordered_map>

#include "core/errors.h"
#include "jitx/lax.h"
#include "transforms/ad.h"

namespace jitx::detail {

Array JVPTrace::make_tracer(Array primal, Array tangent) {
  auto t = std::make_shared<JVPTracer>();
  t->aval = primal.aval();
  t->trace = shared_from_this();
  t->primal = std::move(primal);
  t->tangent = std::move(tangent);
  return Array(t);
}

std::pair<Array, Array> JVPTrace::unpack(const Array& a) const {
  if (a.is_tracer()) {
    auto& t = static_cast<const Tracer&>(*a.impl());
    if (t.trace.get() == this) {
      auto& j = static_cast<const JVPTracer&>(t);
      return {j.primal, j.tangent};
    }
  }
  return {a, Array()};
}

/// A rule's tangent, checked against its primal output: scalars broadcast, dtypes match.
static Array fit_tangent(const Primitive& p, Array t, const Array& out) {
  if (t.shape() != out.shape()) {
    JITX_ASSERT(t.ndim() == 0, "JVP rule of {} gave a tangent {} for an output {}", p.name, t.aval().str(),
                out.aval().str());
    t = broadcast_to(t, out.shape());
  }
  if (t.dtype() != out.dtype()) t = lax::convert_element_type(t, out.dtype());
  return t;
}

std::vector<Array> JVPTrace::process_primitive(const Primitive& p, std::span<const Array> inputs,
                                               const Params& params) {
  std::vector<Array> primals, tangents;
  bool any = false;
  for (auto& a : inputs) {
    auto [x, t] = unpack(a);
    any = any || t.valid();
    primals.push_back(std::move(x));
    tangents.push_back(std::move(t));
  }
  if (!any) return bind(p, primals, params);
  if (!p.jvp) not_differentiable(p.name, "it has no JVP rule yet");
  JvpResult r = p.jvp(primals, tangents, params);
  JITX_ASSERT(r.primals_out.size() == r.tangents_out.size(), "JVP rule of {} returned mismatched outputs", p.name);
  std::vector<Array> outs;
  for (size_t i = 0; i < r.primals_out.size(); ++i) {
    const Array& o = r.primals_out[i];
    const Array& t = r.tangents_out[i];
    // Integer and bool values carry no tangent (JAX's float0): their tangents stay symbolic zeros.
    if (!t.valid() || !is_floating(o.dtype())) outs.push_back(o);
    else outs.push_back(make_tracer(o, fit_tangent(p, t, o)));
  }
  return outs;
}

void not_differentiable(std::string_view prim, std::string_view why) {
  throw_error<TypeError>("jvp", "cannot differentiate primitive '{}': {}", prim, why);
}

std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const std::string& name, const LeafFn& fn,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents) {
  JITX_ASSERT(primals.size() == tangents.size(), "jvp_flat: {} primals, {} tangents", primals.size(), tangents.size());
  auto trace = std::make_shared<JVPTrace>();
  trace->fn_name = name;
  std::vector<Array> outs, touts;
  {
    TraceScope scope(trace);
    std::vector<Array> ins;
    for (size_t i = 0; i < primals.size(); ++i) {
      bool diff = tangents[i].valid() && is_floating(primals[i].dtype());
      ins.push_back(diff ? trace->make_tracer(primals[i], tangents[i]) : primals[i]);
    }
    for (auto& o : fn(ins)) {
      auto [x, t] = trace->unpack(o);
      outs.push_back(x);
      touts.push_back(t);
    }
  }
  return {outs, touts};
}

std::shared_ptr<Linearized> linearize_flat(const std::string& name, const LeafFn& fn,
                                           const std::vector<Array>& primals, std::vector<bool> diff) {
  auto lin = std::make_shared<Linearized>();
  auto jvp_trace = std::make_shared<JVPTrace>();
  auto tan_trace = std::make_shared<JaxprTrace>();
  jvp_trace->fn_name = tan_trace->fn_name = name;
  // The tangent trace is not ambient: only operations on tangents are recorded; the primal (known) part
  // runs in the enclosing trace now, and the values it hands to tangent operations become the linear
  // jaxpr's constvars (residuals). This is partial evaluation done while tracing (JAX's linearize).
  tan_trace->ambient = false;
  std::vector<Array> tan_args, tan_outs;
  {
    TraceScope s1(jvp_trace);
    TraceScope s2(tan_trace);
    std::vector<Array> ins;
    for (size_t i = 0; i < primals.size(); ++i) {
      lin->in_avals.push_back(primals[i].aval());
      diff[i] = diff[i] && is_floating(primals[i].dtype());
      if (!diff[i]) {
        ins.push_back(primals[i]);
        continue;
      }
      Array t = tan_trace->new_arg(primals[i].aval());
      tan_args.push_back(t);
      ins.push_back(jvp_trace->make_tracer(primals[i], t));
    }
    for (auto& o : fn(ins)) {
      auto [x, t] = jvp_trace->unpack(o);
      lin->out_avals.push_back(x.aval());
      lin->primals_out.push_back(x);
      lin->out_zero.push_back(!t.valid());
      if (t.valid()) tan_outs.push_back(t);
    }
    lin->linear = tan_trace->finish(tan_args, tan_outs);
  }
  lin->diff = std::move(diff);
  return lin;
}

std::vector<Array> linearized_primals_out(const Linearized& lin) { return lin.primals_out; }

std::vector<Array> linearized_jvp(const Linearized& lin, const std::vector<Array>& tangents) {
  std::vector<Array> args;
  for (size_t i = 0; i < lin.diff.size(); ++i)
    if (lin.diff[i]) args.push_back(instantiate(i < tangents.size() ? tangents[i] : Array(), lin.in_avals[i]));
  std::vector<Array> outs = eval_jaxpr(lin.linear.jaxpr, lin.linear.consts, args);
  std::vector<Array> result;
  size_t k = 0;
  for (size_t i = 0; i < lin.out_zero.size(); ++i)
    result.push_back(lin.out_zero[i] ? zeros_like_aval(lin.out_avals[i]) : outs[k++]);
  return result;
}

std::vector<Array> linearized_vjp(const Linearized& lin, const std::vector<Array>& cts, bool zeros_for_all) {
  std::vector<Array> cts_out;
  for (size_t i = 0; i < lin.out_zero.size(); ++i) {
    if (lin.out_zero[i]) continue;
    Array ct = i < cts.size() ? cts[i] : Array();
    if (ct.valid() && (ct.shape() != lin.out_avals[i].shape || ct.dtype() != lin.out_avals[i].dtype))
      throw_error<TypeError>("vjp", "the cotangent of output {} must have the output's type {}, got {}", i,
                             lin.out_avals[i].str(), ct.aval().str());
    cts_out.push_back(ct);
  }
  std::vector<Array> cts_in = backward_pass(lin.linear.jaxpr, lin.linear.consts, cts_out);
  std::vector<Array> result;
  size_t k = 0;
  for (size_t i = 0; i < lin.diff.size(); ++i) {
    Array ct = lin.diff[i] ? cts_in[k++] : Array();
    result.push_back(lin.diff[i] || zeros_for_all ? instantiate(ct, lin.in_avals[i]) : ct);
  }
  return result;
}

}  // namespace jitx::detail
