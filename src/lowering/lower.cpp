// Lowering a closed jaxpr to an hlo::Module: one HLO computation, each equation via its primitive's rule.
#include "lowering/lower.h"
#include "lowering/lower_ctx.h"

#include <unordered_map>

#include "core/trace.h"
#include "core/primitive.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"

namespace jitx::detail {
namespace {

hlo::Instruction* lower_literal(hlo::Computation* comp, const LiteralValue& l) {
  auto lit = Literal::make(l.aval.dtype, {});
  if (is_floating(l.aval.dtype)) lit.set_f64(0, l.f);
  else if (l.aval.dtype == DType::uint64) lit.set_u64(0, l.u);
  else lit.set_i64(0, l.i);
  return comp->add_constant(std::move(lit));
}

/// Lowers the body of cj into comp given the instructions standing for its invars.
std::vector<hlo::Instruction*> lower_body(hlo::Module& m, hlo::Computation* comp, const ClosedJaxpr& cj,
                                          const std::vector<hlo::Instruction*>& args) {
  std::unordered_map<int64_t, hlo::Instruction*> env;
  const Jaxpr& j = cj.jaxpr;
  JITX_ASSERT(j.constvars.size() == cj.consts.size(), "constvars/consts mismatch");
  for (size_t i = 0; i < j.constvars.size(); ++i) {
    const Array& c = cj.consts[i];
    if (c.is_tracer())
      throw_error<CompileError>("lower", "a closed-over tracer reached lowering as a constant; the function captured a "
                                         "value from an enclosing trace that jitx cannot stage here yet");
    env[j.constvars[i].id] = comp->add_constant(concrete_buffer(c, "lower")->literal());
  }
  for (size_t i = 0; i < j.invars.size(); ++i) env[j.invars[i].id] = args[i];
  auto read = [&](const Atom& a) -> hlo::Instruction* {
    if (a.is_literal) return lower_literal(comp, a.lit);
    auto it = env.find(a.var.id);
    JITX_ASSERT(it != env.end(), "unbound jaxpr variable {}", a.var.id);
    return it->second;
  };
  for (const Eqn& e : j.eqns) {
    std::vector<hlo::Instruction*> ins;
    std::vector<ShapedArray> in_avals, out_avals;
    for (auto& a : e.inputs) {
      ins.push_back(read(a));
      in_avals.push_back(a.aval());
    }
    for (auto& v : e.outputs) out_avals.push_back(v.aval);
    LowerCtx ctx{comp, in_avals, out_avals, e.params, nullptr, nullptr, &m};
    ctx.lower_into = [&m](hlo::Computation* into, const ClosedJaxpr& sub, const std::vector<hlo::Instruction*>& args) {
      return lower_body(m, into, sub, args);
    };
    ctx.lower_sub = [&m](const ClosedJaxpr& sub, const std::string& name) {
      auto* c = m.add_computation(name);
      std::vector<hlo::Instruction*> ps;
      for (size_t i = 0; i < sub.jaxpr.invars.size(); ++i)
        ps.push_back(c->add_parameter(i, hlo_shape(sub.jaxpr.invars[i].aval)));
      auto outs = lower_body(m, c, sub, ps);
      if (outs.size() == 1) c->root = outs[0];
      else {
        std::vector<hlo::Shape> shapes;
        for (auto* o : outs) shapes.push_back(o->shape);
        c->add(hlo::Opcode::kTuple, hlo::Shape::tuple(shapes), outs);
      }
      return c;
    };
    if (!e.prim->lower) throw_error<CompileError>(e.prim->name, "has no lowering rule");
    auto outs = e.prim->lower(ctx, ins);
    JITX_ASSERT(outs.size() == e.outputs.size(), "{} lowered to {} values, expected {}", e.prim->name, outs.size(),
                e.outputs.size());
    for (size_t i = 0; i < outs.size(); ++i) env[e.outputs[i].id] = outs[i];
  }
  std::vector<hlo::Instruction*> results;
  for (auto& o : j.outvars) results.push_back(read(o));
  return results;
}
}  // namespace

std::shared_ptr<hlo::Module> lower_jaxpr(const ClosedJaxpr& cj, const std::string& module_name) {
  auto m = std::make_shared<hlo::Module>(module_name);
  auto* entry = m->add_computation("main");
  m->entry = entry;
  std::vector<hlo::Instruction*> params;
  for (size_t i = 0; i < cj.jaxpr.invars.size(); ++i)
    params.push_back(entry->add_parameter(static_cast<int64_t>(i), hlo_shape(cj.jaxpr.invars[i].aval)));
  auto outs = lower_body(*m, entry, cj, params);
  std::vector<hlo::Shape> shapes;
  for (auto* o : outs) shapes.push_back(o->shape);
  // The entry always returns a tuple of its results, so one executable returns many buffers.
  entry->add(hlo::Opcode::kTuple, hlo::Shape::tuple(shapes), outs);
  return m;
}

}  // namespace jitx::detail
