// The algebraic simplifier: sweeps that dispatch each instruction to its rule family (the rules live in
// algebraic_simplifier_{arithmetic,shapes,dot}.cpp); each rule's label is also its trace line.
#include "hlo/passes/algebraic_simplifier.h"

#include "hlo/passes/algebraic_simplifier_rules.h"

namespace jitx::hlo {
namespace {
using algsimp::Rewriter;

/// The rule family of i's opcode: i's replacement, with `rule` set to the rule's label, or nullptr.
Instruction* simplify(Rewriter& r, Instruction* i, std::string_view& rule) {
  switch (i->opcode) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kNegate:
    case Opcode::kDivide: case Opcode::kPower: case Opcode::kSelect:
      return algsimp::arithmetic_rules(r, i, rule);
    case Opcode::kConvert: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kBroadcastInDim:
    case Opcode::kSlice: case Opcode::kReduce:
      return algsimp::shape_rules(r, i, rule);
    case Opcode::kDot: return algsimp::dot_of_transpose(r, i, rule);
    default: return nullptr;
  }
}

/// One sweep over the computation; returns whether any rule fired.
bool sweep(Rewriter& r, std::string_view pass) {
  Computation* comp = r.computation();
  r.count_uses();
  std::vector<Instruction*> order;
  for (auto& u : comp->instructions) order.push_back(u.get());
  bool changed = false;
  for (Instruction* i : order) {
    if (i != comp->root && r.uses(i) == 0) continue;  // dead: leave it for DCE
    r.rewrite_at(i);
    std::string_view rule;
    Instruction* with = simplify(r, i, rule);
    if (!with || with == i) continue;
    if (comp->replace_all_uses(i, with)) {
      r.uses(with) += r.uses(i);
      r.uses(i) = 0;
      trace_rewrite(pass, *i, fmt::format("{} (now %{})", rule, with->name));
      changed = true;
    }
  }
  return changed;
}
}  // namespace

bool AlgebraicSimplifier::run(Module& m) {
  bool changed = false;
  for (auto& c : m.computations) {
    Rewriter r(c.get());
    // Rewrites expose others (a folded transpose makes a new dot); stop at a fixed point, with a bound.
    for (int round = 0; round < 64 && sweep(r, name()); ++round) changed = true;
  }
  return changed;
}

}  // namespace jitx::hlo
