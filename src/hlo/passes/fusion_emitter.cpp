// Fusion rewriting (see fusion_emitter.h): fused computations, kFusion instructions and the batched edits.
#include "hlo/passes/fusion_emitter.h"

#include <algorithm>

#include "hlo/passes/pass.h"

namespace jitx::hlo::fusion {

void FusionEmitter::sort_members(Group& g) const {
  std::sort(g.members.begin(), g.members.end(), [&](auto* a, auto* b) { return pos_.at(a) < pos_.at(b); });
}

/// What reads of i see after the fusions emitted so far.
Instruction* FusionEmitter::resolve(Instruction* i) const {
  for (auto it = replaced_by_.find(i); it != replaced_by_.end(); it = replaced_by_.find(i)) i = it->second;
  return i;
}

/// A new instruction of c_, placed just before `at` when the edits are applied.
Instruction* FusionEmitter::add_before(const Instruction* at, Opcode op, Shape shape,
                                       std::vector<Instruction*> operands, detail::Params attrs) {
  Instruction* root = c_.root;
  Instruction* i = c_.add(op, std::move(shape), std::move(operands), std::move(attrs));  // appended for now
  c_.root = root;
  before_[at].push_back(i);
  return i;
}

void FusionEmitter::apply_edits() {
  std::vector<std::unique_ptr<Instruction>> old = std::move(c_.instructions);
  c_.instructions.clear();
  std::unordered_map<const Instruction*, size_t> index;
  for (size_t k = 0; k < old.size(); ++k) index[old[k].get()] = k;
  for (auto& u : old) {
    if (!u) continue;  // a new instruction, already placed
    if (auto b = before_.find(u.get()); b != before_.end())
      for (auto* n : b->second) c_.instructions.push_back(std::move(old[index.at(n)]));
    if (!removed_.count(u.get())) c_.instructions.push_back(std::move(u));
  }
  for (auto& u : c_.instructions)
    for (auto*& o : u->operands) o = resolve(o);
  c_.root = resolve(c_.root);
}

bool FusionEmitter::materialize(std::vector<Group>& groups) {
  bool changed = false;
  std::unordered_set<Instruction*> duplicated;
  for (auto& g : groups) {
    if (!g.alive) continue;
    sort_members(g);
    emit(g);
    for (auto* d : g.dup) duplicated.insert(const_cast<Instruction*>(d));
    changed = true;
  }
  apply_edits();
  c_.sort_topologically();
  // Only originals still in the computation: a producer copied into one fusion may have been owned (and
  // removed) by another.
  for (auto it = duplicated.begin(); it != duplicated.end();)
    it = removed_.count(*it) ? duplicated.erase(it) : std::next(it);
  // Originals of duplicated producers that every user now reads from a copy (users counted once each, as
  // Instruction::users() does).
  std::unordered_map<const Instruction*, int64_t> users;
  auto count_uses = [&](const Instruction* i, int64_t delta) {
    std::unordered_set<const Instruction*> seen;
    for (auto* o : i->operands)
      if (seen.insert(o).second) users[o] += delta;
  };
  for (auto& i : c_.instructions) count_uses(i.get(), 1);
  std::unordered_set<const Instruction*> dead;
  for (bool again = true; again;) {
    again = false;
    for (auto* d : std::vector<Instruction*>(duplicated.begin(), duplicated.end()))
      if (d != c_.root && users[d] == 0) {
        duplicated.erase(d);
        dead.insert(d);
        count_uses(d, -1);
        again = true;
      }
  }
  std::erase_if(c_.instructions, [&](auto& u) { return dead.count(u.get()) > 0; });
  return changed;
}

/// Position in the original order; instructions made by earlier emits (fusions, get-tuple-elements) sort by
/// the position of what they replace, which their own operands precede.
int64_t FusionEmitter::position(const Instruction* i) const {
  auto it = pos_.find(i);
  if (it != pos_.end()) return it->second;
  auto r = replaced_.find(i);
  return r == replaced_.end() ? INT64_MAX : r->second;
}

void FusionEmitter::emit(Group& g) {
  Computation* fc = m_.add_computation("fused_computation");
  std::unordered_map<const Instruction*, Instruction*> map;
  // Operands in the order the computation defines them (parameters first, as they are numbered).
  std::vector<Instruction*> operands;
  std::unordered_set<const Instruction*> seen;
  for (auto* i : g.members)
    for (auto* o : i->operands)
      if (!g.in.count(resolve(o)) && seen.insert(resolve(o)).second) operands.push_back(resolve(o));
  std::sort(operands.begin(), operands.end(), [&](auto* a, auto* b) { return position(a) < position(b); });
  for (size_t k = 0; k < operands.size(); ++k)
    map[operands[k]] = fc->add_parameter(static_cast<int64_t>(k), operands[k]->shape, fmt::format("param_{}", k));
  for (auto* i : g.members) {
    std::vector<Instruction*> ops;
    for (auto* o : i->operands) ops.push_back(map.at(resolve(o)));
    Instruction* ni = fc->add(i->opcode, i->shape, ops, i->attrs);
    ni->literal = i->literal;
    map[i] = ni;
  }
  Shape shape = g.outputs[0]->shape;
  if (g.outputs.size() > 1) {
    std::vector<Instruction*> outs;
    std::vector<Shape> shapes;
    for (auto* o : g.outputs) {
      outs.push_back(map.at(o));
      shapes.push_back(o->shape);
    }
    shape = Shape::tuple(shapes);
    fc->add(Opcode::kTuple, shape, outs);
  } else {
    fc->root = map.at(g.outputs[0]);
  }
  Instruction* last = g.members.back();
  Instruction* f = add_before(last, Opcode::kFusion, shape, operands,
                              detail::Params{{"kind", std::string(kind_name(g.kind))}});
  f->called = {fc};
  trace_line(pass_, fmt::format("%{}: {} fusion of {} instructions, {} operand(s), {} output(s) -> %{}",
                                g.outputs[0]->name, kind_name(g.kind), g.members.size(), operands.size(),
                                g.outputs.size(), f->name));
  if (g.outputs.size() == 1) {
    replaced_[f] = pos_.at(g.outputs[0]);
    replaced_by_[g.outputs[0]] = f;
  } else {
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      Instruction* gte = add_before(last, Opcode::kGetTupleElement, g.outputs[k]->shape, {f},
                                    detail::Params{{"index", static_cast<int64_t>(k)}});
      replaced_[gte] = pos_.at(g.outputs[k]);
      replaced_by_[g.outputs[k]] = gte;
    }
  }
  // Owned members are used only inside the fusion now.
  for (auto* m : g.members)
    if (!g.dup.count(m)) removed_.insert(m);
}

}  // namespace jitx::hlo::fusion
