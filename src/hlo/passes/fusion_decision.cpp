// Fusion decisions: the predicates on single instructions and the validation of a candidate group against the
// contract of each kind (see fusion.h).
#include "hlo/passes/fusion_decision.h"

#include "hlo/analysis/cost_analysis.h"
#include "hlo/ir/attributes.h"

namespace jitx::hlo::fusion {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kLoop: return "kLoop";
    case Kind::kInput: return "kInput";
    case Kind::kOutput: return "kOutput";
    case Kind::kRow: return "kRow";
    default: return "invalid";
  }
}

bool is_loop_op(const Instruction& i) {
  if (i.shape.is_tuple) return false;
  // A bitcast-convert between types of one width is elementwise (a reinterpretation of each element's bits): it
  // fuses, so that random bits and the floats made from them are one kernel (XLA fuses it too).
  if (i.opcode == Opcode::kBitcastConvert) return is_elementwise_bitcast(i);
  if (!is_loop_fusible(i.opcode)) return false;
  return i.opcode != Opcode::kConstant || i.shape.num_elements() <= kSmallConstant;
}
bool is_simple_reduce(const Instruction& i) {
  return i.opcode == Opcode::kReduce && i.operands.size() == 2 && !i.shape.is_tuple;
}
bool is_cheap(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kBroadcastInDim: case Opcode::kIota: case Opcode::kReshape: case Opcode::kConvert:
      return !i.shape.is_tuple;
    case Opcode::kConstant: return i.shape.num_elements() <= kSmallConstant;
    default: return false;
  }
}
bool is_expensive(const Instruction& i) {
  return is_transcendental(i.opcode) || i.opcode == Opcode::kDivide || i.opcode == Opcode::kRemainder;
}
bool expands(const Instruction& i) {
  return i.opcode == Opcode::kBroadcastInDim && i.shape.num_elements() > i.operand(0)->shape.num_elements();
}

int64_t GroupRules::parameter_count(const Group& g) const {
  std::unordered_set<const Instruction*> ext;
  for (auto* i : g.members)
    for (auto* o : i->operands)
      if (!g.in.count(o)) ext.insert(o);
  return static_cast<int64_t>(ext.size());
}

const Instruction* expensive_behind_broadcast(const Group& g) {
  for (auto* b : g.members) {
    if (!expands(*b) || !g.in.count(b->operand(0))) continue;
    std::vector<const Instruction*> work{b->operand(0)};
    std::unordered_set<const Instruction*> seen;
    while (!work.empty()) {
      const Instruction* x = work.back();
      work.pop_back();
      if (!g.in.count(x) || !seen.insert(x).second) continue;
      if (is_expensive(*x)) return b->operand(0);
      for (auto* o : x->operands) work.push_back(o);
    }
  }
  return nullptr;
}

Kind GroupRules::classify(const Group& g) const {
  const Instruction* dot = nullptr;
  std::vector<const Instruction*> reduces;
  static const std::vector<Instruction*> none;
  auto users_of = [&](const Instruction* i) -> const std::vector<Instruction*>& {
    auto it = users_.find(i);
    return it == users_.end() ? none : it->second;
  };
  for (auto* i : g.members) {
    if (i->opcode == Opcode::kDot) {
      if (dot) return Kind::kInvalid;
      dot = i;
    } else if (is_simple_reduce(*i)) {
      reduces.push_back(i);
    } else if (!is_loop_op(*i)) {
      return Kind::kInvalid;
    }
  }
  if (dot) return reduces.empty() && valid_output(g, dot) ? Kind::kOutput : Kind::kInvalid;
  if (reduces.empty()) {
    // Several outputs (multi-output loop fusion) share one loop: every one an array of the first's dims.
    for (auto* o : g.outputs)
      if (o->shape.is_tuple || o->shape.dims != g.outputs[0]->shape.dims) return Kind::kInvalid;
    return Kind::kLoop;
  }
  bool reduce_used_inside = false;
  for (auto* r : reduces)
    for (auto* u : users_of(r))
      if (g.in.count(u)) reduce_used_inside = true;
  if (!reduce_used_inside && valid_input(g, reduces)) return Kind::kInput;
  if (g.outputs.size() == 1 && valid_row(g, reduces)) return Kind::kRow;
  return Kind::kInvalid;
}

bool GroupRules::valid_output(const Group& g, const Instruction* dot) const {
  if (g.outputs.size() != 1) return false;
  for (auto* o : dot->operands)
    if (g.in.count(o)) return false;  // a GEMM reads its operands from memory
  std::unordered_set<const Instruction*> dep{dot};
  for (auto* i : g.members) {
    if (i == dot) continue;
    bool d = false;
    for (auto* o : i->operands) d = d || dep.count(o);
    if (!d) continue;
    if (!is_elementwise(i->opcode) || i->shape.dims != dot->shape.dims) return false;
    dep.insert(i);
  }
  return dep.count(g.outputs[0]) > 0;
}

bool GroupRules::valid_input(const Group& g, const std::vector<const Instruction*>& reduces) const {
  if (g.outputs.size() != reduces.size()) return false;
  for (auto* o : g.outputs)
    if (!is_simple_reduce(*o)) return false;
  for (auto* r : reduces) {
    if (r->operand(0)->shape.dims != reduces[0]->operand(0)->shape.dims) return false;
    if (dimensions_of(*r) != dimensions_of(*reduces[0])) return false;
  }
  return true;
}

bool GroupRules::valid_row(const Group& g, const std::vector<const Instruction*>& reduces) const {
  const Ints& D = reduces[0]->operand(0)->shape.dims;
  int64_t k = static_cast<int64_t>(D.size()) - 1;
  if (k < 0) return false;
  Ints lead(D.begin(), D.end() - 1), lead1 = lead;
  lead1.push_back(1);
  auto full = [&](const Shape& s) { return s.dims == D; };
  auto row = [&](const Shape& s) { return s.dims == lead || s.dims == lead1; };
  Ints leading_dims, leading1_dims;
  for (int64_t d = 0; d < k; ++d) leading_dims.push_back(d);
  leading1_dims = leading_dims;
  leading1_dims.push_back(k);
  for (auto* r : reduces)
    if (r->operand(0)->shape.dims != D || dimensions_of(*r) != Ints{k}) return false;
  for (auto* i : g.members) {
    const Shape& s = i->shape;
    switch (i->opcode) {
      case Opcode::kReduce: break;
      case Opcode::kConstant:
        if (!s.dims.empty()) return false;
        break;
      case Opcode::kBroadcastInDim: {
        const Shape& o = i->operand(0)->shape;
        const Ints& bd = broadcast_dimensions_of(*i);
        bool ok = o.dims.empty() && (full(s) || row(s));
        if (full(s)) {
          ok = ok || (o.dims == lead && bd == leading_dims) || (o.dims == lead1 && bd == leading1_dims) ||
               (o.dims == Ints{D[k]} && bd == Ints{k}) || (o.dims == D);
        }
        if (!ok) return false;
        break;
      }
      case Opcode::kReshape:
        if (!((row(s) && row(i->operand(0)->shape)) || (full(s) && full(i->operand(0)->shape)))) return false;
        break;
      default:
        if (!is_elementwise(i->opcode) || !(full(s) || row(s) || s.dims.empty())) return false;
    }
  }
  const Shape& out = g.outputs[0]->shape;
  return full(out) || row(out);
}

bool GroupRules::acceptable(const Group& g) const {
  if (static_cast<int64_t>(g.members.size()) > opt_.max_instructions) return false;
  if (parameter_count(g) > opt_.max_parameters) return false;
  return classify(g) != Kind::kInvalid;
}

bool shares_operand(const Group& a, const Group& b) {
  std::unordered_set<const Instruction*> ext;
  for (auto* i : a.members)
    for (auto* o : i->operands)
      if (!a.in.count(o) && o->opcode != Opcode::kConstant && !o->shape.dims.empty()) ext.insert(o);
  for (auto* i : b.members)
    for (auto* o : i->operands)
      if (!b.in.count(o) && ext.count(o)) return true;
  return false;
}

bool depends(const Group& a, const Group& b) {
  std::vector<const Instruction*> work(b.members.begin(), b.members.end());
  std::unordered_set<const Instruction*> seen;
  while (!work.empty()) {
    const Instruction* x = work.back();
    work.pop_back();
    if (!seen.insert(x).second) continue;
    if (a.in.count(x) && !a.dup.count(x) && !b.in.count(x)) return true;
    for (auto* o : x->operands) work.push_back(o);
  }
  return false;
}

}  // namespace jitx::hlo::fusion
