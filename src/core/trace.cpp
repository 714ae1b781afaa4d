// The thread-local trace stack, tracers, and recording equations into jaxprs.
#include "core/trace.h"

#include <atomic>

#include "core/errors.h"
#include "core/primitive.h"

namespace jitx::detail {
namespace {
thread_local std::vector<std::shared_ptr<Trace>> t_stack;
std::atomic<int64_t> g_var_id{0};
}  // namespace

int64_t new_var_id() { return g_var_id++; }
Var new_var(ShapedArray aval) { return Var{new_var_id(), std::move(aval)}; }

std::shared_ptr<Trace> current_trace() { return t_stack.empty() ? nullptr : t_stack.back(); }

TraceScope::TraceScope(std::shared_ptr<Trace> t) : trace_(std::move(t)) {
  trace_->level = static_cast<int>(t_stack.size()) + 1;
  t_stack.push_back(trace_);
}
TraceScope::~TraceScope() {
  trace_->alive = false;
  if (!t_stack.empty() && t_stack.back() == trace_) t_stack.pop_back();
}

void check_alive(const Tracer& t, std::string_view op) {
  if (!t.trace->alive)
    throw_error<TracerError>(op,
                             "an escaped tracer {} from the trace of '{}' was used after that trace ended; values "
                             "computed inside a traced function must be returned from it, not stored outside",
                             t.aval.str(), t.trace->fn_name);
}

Trace* find_top_trace(std::span<const Array> inputs, std::string_view op) {
  Trace* best = nullptr;
  for (auto it = t_stack.rbegin(); it != t_stack.rend() && !best; ++it)
    if ((*it)->ambient) best = it->get();
  for (auto& a : inputs) {
    if (!a.valid()) throw_error<TypeError>(op, "an input Array is empty (default-constructed)");
    if (!a.is_tracer()) continue;
    auto& t = static_cast<const Tracer&>(*a.impl());
    check_alive(t, op);
    if (!best || t.trace->level > best->level) best = t.trace.get();
  }
  return best;
}

Array JaxprTrace::new_arg(const ShapedArray& aval) {
  auto t = std::make_shared<JaxprTracer>();
  t->aval = aval;
  t->trace = shared_from_this();
  t->var = new_var(aval);
  return Array(t);
}

Atom JaxprTrace::to_atom(const Array& a) {
  if (a.is_tracer()) {
    auto& t = static_cast<const Tracer&>(*a.impl());
    check_alive(t, fn_name);
    if (t.trace.get() == this) return Atom::of(static_cast<const JaxprTracer&>(t).var);
  } else if (a.ndim() == 0) {
    // Concrete scalars become literals, as JAX does.
    Literal lit = a.impl()->host_literal(fn_name);
    LiteralValue v;
    v.aval = a.aval();
    if (is_floating(a.dtype())) v.f = lit.get_f64(0);
    else if (a.dtype() == DType::uint64) v.u = lit.get_u64(0);
    else v.i = lit.get_i64(0);
    return Atom::of(v);
  }
  // A non-scalar constant, or a tracer of an enclosing trace: a constvar (closure conversion).
  for (size_t i = 0; i < const_keys_.size(); ++i)
    if (const_keys_[i] == a.impl().get()) return Atom::of(constvars_[i]);
  ShapedArray aval = a.aval();
  Var v = new_var(aval);
  constvars_.push_back(v);
  consts_.push_back(a);
  const_keys_.push_back(a.impl().get());
  return Atom::of(v);
}

std::vector<Array> JaxprTrace::process_primitive(const Primitive& p, std::span<const Array> inputs,
                                                 const Params& params) {
  std::vector<ShapedArray> in_avals;
  for (auto& a : inputs) in_avals.push_back(a.aval());
  std::vector<ShapedArray> out_avals = p.abstract_eval(in_avals, params);
  Eqn eqn;
  eqn.prim = &p;
  eqn.params = params;
  if (auto* loc = current_call_site()) eqn.loc = *loc;
  for (auto& a : inputs) eqn.inputs.push_back(to_atom(a));
  std::vector<Array> outs;
  for (auto& av : out_avals) {
    auto t = std::make_shared<JaxprTracer>();
    t->aval = av;
    t->trace = shared_from_this();
    t->var = new_var(av);
    eqn.outputs.push_back(t->var);
    outs.emplace_back(t);
  }
  eqns_.push_back(std::move(eqn));
  return outs;
}

ClosedJaxpr JaxprTrace::finish(const std::vector<Array>& args, const std::vector<Array>& outs) {
  ClosedJaxpr cj;
  for (auto& a : args) cj.jaxpr.invars.push_back(static_cast<const JaxprTracer&>(*a.impl()).var);
  for (auto& o : outs) {
    if (!o.valid())
      throw_error<TypeError>(fn_name, "the traced function returned an empty (default-constructed) Array");
    cj.jaxpr.outvars.push_back(to_atom(o));
  }
  cj.jaxpr.eqns = std::move(eqns_);
  cj.jaxpr.constvars = constvars_;
  cj.consts = consts_;
  return cj;
}

ClosedJaxpr trace_to_jaxpr(const std::string& fn_name, const std::vector<ShapedArray>& in_avals,
                           const std::function<std::vector<Array>(const std::vector<Array>&)>& fn) {
  auto trace = std::make_shared<JaxprTrace>();
  trace->fn_name = fn_name;
  TraceScope scope(trace);
  std::vector<Array> args;
  for (auto& av : in_avals) args.push_back(trace->new_arg(av));
  std::vector<Array> outs = fn(args);
  return trace->finish(args, outs);
}

Literal ArrayImpl::host_literal(std::string_view op) const {
  throw_error<TracerError>(op, "needs a concrete value, but got an abstract {}", aval.str());
}

const Array* concrete_primal(const Array& a) {
  const Array* p = &a;
  while (p && p->valid() && p->is_tracer()) p = static_cast<const Tracer&>(*p->impl()).primal_value();
  return p;
}

}  // namespace jitx::detail
