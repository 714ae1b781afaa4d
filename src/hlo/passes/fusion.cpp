// Fusion: per computation, plans the groups (fusion_planner, deciding with fusion_decision) and rewrites them
// into fusions (fusion_emitter): output fusion of dot epilogues, greedy root-up producer fusion (kLoop/kInput/kRow),
// sibling reductions.
#include "hlo/passes/fusion.h"

#include <unordered_set>

#include "hlo/passes/fusion_emitter.h"
#include "hlo/passes/fusion_planner.h"

namespace jitx::hlo {

bool is_loop_fusible(Opcode op) {
  if (is_elementwise(op)) return true;
  switch (op) {
    case Opcode::kBroadcastInDim: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kReverse:
    case Opcode::kSlice: case Opcode::kIota: case Opcode::kConstant: case Opcode::kConcatenate: case Opcode::kPad:
      return true;
    default:
      return false;
  }
}

namespace {
/// The computations fusion runs on: everything but fused computations (and what they call).
std::vector<Computation*> fusible_computations(Module& m) {
  std::unordered_set<const Computation*> fused;
  for (auto& c : m.computations)
    for (auto& i : c->instructions)
      if (i->opcode == Opcode::kFusion)
        for (auto* cc : i->called) fused.insert(cc);
  std::vector<Computation*> out;
  for (auto& c : m.computations)
    if (!fused.count(c.get())) out.push_back(c.get());
  return out;
}
}  // namespace

bool Fusion::run(Module& m) {
  bool changed = false;
  for (auto* c : fusible_computations(m)) {
    fusion::FusionPlanner planner(*c, options_, name());
    planner.plan();
    fusion::FusionEmitter emitter(m, *c, name(), planner.positions());
    changed = emitter.materialize(planner.groups()) || changed;
  }
  return changed;
}

}  // namespace jitx::hlo
