// LICM: find invariant instructions in a while body, clone them before the loop, carry them in as new elements.
#include "hlo/passes/licm.h"

#include <unordered_map>
#include <unordered_set>

#include "hlo/ir/custom_call.h"

namespace jitx::hlo {
namespace {

bool hoistable(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
      return false;
    case Opcode::kCustomCall:  // only jitx's pure linalg ones
      return is_pure_custom_call(i) && !i.shape.is_tuple;
    default:
      return i.called.empty() && !i.shape.is_tuple;
  }
}

/// Hoists what it can out of one while; returns whether anything moved.
bool hoist_from(Computation* outer, Instruction* w, std::string_view pass) {
  for (auto* u : w->users())
    if (u->opcode != Opcode::kGetTupleElement) return false;
  if (outer->root == w) return false;
  Computation* cond = w->called[0];
  Computation* body = w->called[1];
  if (body->root->opcode != Opcode::kTuple) return false;
  // Invariant parameters: passed through unchanged. They stand for the while's operands outside.
  std::unordered_map<const Instruction*, Instruction*> outside;
  std::unordered_set<const Instruction*> invariant;
  for (size_t k = 0; k < body->parameters.size(); ++k)
    if (body->root->operand(k) == body->parameters[k]) {
      invariant.insert(body->parameters[k]);
      outside[body->parameters[k]] = w->operand(k);
    }
  if (invariant.empty()) return false;
  std::vector<Instruction*> hoist;
  std::unordered_set<const Instruction*> depends_on_param(invariant.begin(), invariant.end());
  for (auto& up : body->instructions) {
    Instruction* i = up.get();
    if (i->opcode == Opcode::kConstant) {
      invariant.insert(i);
      continue;
    }
    if (!hoistable(*i)) continue;
    bool inv = true, dep = false;
    for (auto* o : i->operands) {
      inv = inv && invariant.count(o);
      dep = dep || depends_on_param.count(o);
    }
    if (!inv) continue;
    invariant.insert(i);
    if (dep) {
      depends_on_param.insert(i);
      hoist.push_back(i);
    }
  }
  // Only the hoisted values the rest of the body still reads need a loop element: the outermost ones.
  std::unordered_set<const Instruction*> hoisted(hoist.begin(), hoist.end());
  std::vector<Instruction*> carried;
  for (auto* h : hoist) {
    bool needed = h == body->root;
    for (auto* u : h->users()) needed = needed || !hoisted.count(u);
    if (needed) carried.push_back(h);
  }
  if (carried.empty()) return false;
  // Clone the hoisted instructions before the while, operands first; invariant values they read that depend only
  // on constants (a broadcast constant) are cloned along with them.
  auto copy_out = [&](auto& self, Instruction* h) -> Instruction* {
    if (auto it = outside.find(h); it != outside.end()) return it->second;
    JITX_ASSERT(invariant.count(h), "LICM: %{} is not loop-invariant", h->name);
    std::vector<Instruction*> ops;
    for (auto* o : h->operands) ops.push_back(self(self, o));
    Instruction* c = h->opcode == Opcode::kConstant ? outer->insert_constant_before(w, *h->literal)
                                                    : outer->insert_before(w, h->opcode, h->shape, ops, h->attrs);
    c->shape.layout = h->shape.layout;
    c->literal = h->literal;
    outside[h] = c;
    if (hoisted.count(h))
      trace_rewrite(pass, *h, fmt::format("loop-invariant in %{} => hoisted as %{}", body->name, c->name));
    return c;
  };
  for (auto* h : carried) copy_out(copy_out, h);
  // Carry each needed value in: a new operand, a new parameter of body and condition, passed through by the body.
  for (auto* h : carried) {
    int64_t k = static_cast<int64_t>(w->operands.size());
    w->operands.push_back(outside.at(h));
    w->shape.tuple_shapes.push_back(h->shape);
    Instruction* body_root = body->root;
    Instruction* p = body->add_parameter(k, h->shape);
    body->root = body_root;
    body->replace_all_uses(h, p);
    body->root->operands.push_back(p);
    body->root->shape.tuple_shapes.push_back(h->shape);
    Instruction* cond_root = cond->root;
    cond->add_parameter(k, h->shape);
    cond->root = cond_root;
  }
  body->sort_topologically();  // the new parameters were appended after their users
  cond->sort_topologically();
  body->remove_dead_instructions();
  return true;
}

}  // namespace

bool LoopInvariantCodeMotion::run(Module& m) {
  bool changed = false;
  for (auto& c : m.computations) {
    std::vector<Instruction*> whiles;
    for (auto& up : c->instructions)
      if (up->opcode == Opcode::kWhile) whiles.push_back(up.get());
    for (auto* w : whiles) changed = hoist_from(c.get(), w, name()) || changed;
  }
  return changed;
}

}  // namespace jitx::hlo
