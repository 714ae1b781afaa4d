// hlo::Module editing utilities for passes: clone, insertion, use replacement, dead-code removal, fingerprints.
#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/custom_call.h"
#include "hlo/ir/hlo.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace jitx::hlo {

Instruction* Computation::insert_before(const Instruction* before, Opcode op, Shape shape,
                                        std::vector<Instruction*> operands, detail::Params attrs, std::string name) {
  auto it = std::find_if(instructions.begin(), instructions.end(), [&](auto& u) { return u.get() == before; });
  JITX_ASSERT(it != instructions.end(), "insert_before: %{} is not in computation {}", before->name, this->name);
  auto inst = std::make_unique<Instruction>();
  inst->opcode = op;
  inst->shape = std::move(shape);
  inst->operands = std::move(operands);
  inst->attrs = std::move(attrs);
  inst->parent = this;
  inst->name = parent ? parent->unique_name(name.empty() ? opcode_name(op) : name) : std::string(opcode_name(op));
  return instructions.insert(it, std::move(inst))->get();
}

Instruction* Computation::insert_constant_before(const Instruction* before, detail::Literal lit) {
  auto* c = insert_before(before, Opcode::kConstant, Shape(lit.dtype, lit.dims), {});
  c->literal = std::make_shared<detail::Literal>(std::move(lit));
  return c;
}

bool Computation::replace_all_uses(Instruction* old_inst, Instruction* new_inst) {
  JITX_ASSERT(old_inst->parent == this && new_inst->parent == this, "replace_all_uses across computations");
  JITX_ASSERT(old_inst->shape.same_type(new_inst->shape), "replace_all_uses: %{} is {} but %{} is {}", old_inst->name,
              old_inst->shape.str(), new_inst->name, new_inst->shape.str());
  if (old_inst == new_inst) return false;
  bool changed = false;
  for (auto& u : instructions)
    for (auto*& o : u->operands)
      if (o == old_inst) {
        o = new_inst;
        changed = true;
      }
  if (root == old_inst) {
    root = new_inst;
    changed = true;
  }
  return changed;
}

void Computation::remove_instruction(Instruction* inst) {
  JITX_ASSERT(inst != root, "cannot remove the root %{} of {}", inst->name, name);
  JITX_ASSERT(inst->opcode != Opcode::kParameter, "cannot remove parameter %{}", inst->name);
  JITX_ASSERT(inst->users().empty(), "cannot remove %{}: it still has users", inst->name);
  auto it = std::find_if(instructions.begin(), instructions.end(), [&](auto& u) { return u.get() == inst; });
  JITX_ASSERT(it != instructions.end(), "%{} is not in computation {}", inst->name, name);
  instructions.erase(it);
}

int64_t Computation::remove_dead_instructions() {
  std::unordered_set<const Instruction*> live;
  if (root) live.insert(root);
  // Effects (host callbacks, and loops or branches containing them) stay though nothing uses their results.
  for (auto& u : instructions)
    if (has_side_effect(*u)) live.insert(u.get());
  for (auto it = instructions.rbegin(); it != instructions.rend(); ++it)
    if (live.count(it->get()) || (*it)->opcode == Opcode::kParameter)
      for (auto* o : (*it)->operands) live.insert(o);
  size_t before = instructions.size();
  std::erase_if(instructions, [&](auto& u) { return u->opcode != Opcode::kParameter && !live.count(u.get()); });
  return static_cast<int64_t>(before - instructions.size());
}

void Computation::sort_topologically() {
  std::unordered_map<const Instruction*, std::unique_ptr<Instruction>*> slot;
  for (auto& u : instructions) slot[u.get()] = &u;
  std::unordered_set<const Instruction*> done, on_stack;
  std::vector<std::unique_ptr<Instruction>> order;
  order.reserve(instructions.size());
  // Depth-first from each instruction in the current order: an instruction goes out after its operands.
  auto visit = [&](auto& self, Instruction* i) -> void {
    if (done.count(i)) return;
    JITX_ASSERT(on_stack.insert(i).second, "cycle through %{} in computation {}", i->name, name);
    for (auto* o : i->operands) {
      JITX_ASSERT(slot.count(o), "%{} uses %{}, which is not in computation {}", i->name, o->name, name);
      self(self, o);
    }
    on_stack.erase(i);
    done.insert(i);
    order.push_back(std::move(*slot.at(i)));
  };
  std::vector<Instruction*> current;
  for (auto& u : instructions) current.push_back(u.get());
  for (auto* i : current) visit(visit, i);
  instructions = std::move(order);
}

Instruction* Computation::find(std::string_view n) const {
  for (auto& u : instructions)
    if (u->name == n) return u.get();
  return nullptr;
}

void Module::reserve_name(std::string_view n) {
  auto dot = n.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == n.size()) return;
  int64_t id = 0;
  auto [p, ec] = std::from_chars(n.data() + dot + 1, n.data() + n.size(), id);
  if (ec == std::errc() && p == n.data() + n.size()) next_id_ = std::max(next_id_, id + 1);
}

Computation* Module::find_computation(std::string_view n) const {
  for (auto& c : computations)
    if (c->name == n) return c.get();
  return nullptr;
}

std::unique_ptr<Module> Module::clone() const {
  auto m = std::make_unique<Module>(name);
  m->next_id_ = next_id_;
  std::unordered_map<const Computation*, Computation*> cmap;
  std::unordered_map<const Instruction*, Instruction*> imap;
  for (auto& c : computations) {
    auto nc = std::make_unique<Computation>();
    nc->name = c->name;
    nc->parent = m.get();
    cmap[c.get()] = nc.get();
    m->computations.push_back(std::move(nc));
  }
  for (auto& c : computations) {
    Computation* nc = cmap.at(c.get());
    for (auto& i : c->instructions) {
      auto ni = std::make_unique<Instruction>(*i);  // copies opcode, shape, attrs, literal (shared), names
      ni->parent = nc;
      for (auto*& o : ni->operands) o = imap.at(o);
      for (auto*& cc : ni->called) cc = cmap.at(cc);
      imap[i.get()] = ni.get();
      nc->instructions.push_back(std::move(ni));
    }
    for (auto* p : c->parameters) nc->parameters.push_back(imap.at(p));
    nc->root = c->root ? imap.at(c->root) : nullptr;
  }
  m->entry = entry ? cmap.at(entry) : nullptr;
  return m;
}

std::vector<int64_t> minor_to_major(const Shape& s) {
  if (!s.layout.empty()) return s.layout;
  std::vector<int64_t> l;
  for (int64_t d = s.rank() - 1; d >= 0; --d) l.push_back(d);
  return l;
}

bool is_elementwise_bitcast(const Instruction& i) {
  if (i.opcode != Opcode::kBitcastConvert || i.shape.is_tuple || i.operands.size() != 1) return false;
  const Shape& in = i.operand(0)->shape;
  return !in.is_tuple && in.dims == i.shape.dims && dtype_size(in.dtype) == dtype_size(i.shape.dtype) &&
         in.dtype != DType::bool_ && i.shape.dtype != DType::bool_;
}

bool is_layout_bitcast(const Instruction& i) {
  if (i.shape.is_tuple || i.operands.size() != 1 || i.operand(0)->shape.is_tuple) return false;
  const Shape& in = i.operand(0)->shape;
  std::vector<int64_t> perm;  // result dim k is operand dim perm[k]
  if (i.opcode == Opcode::kTranspose)
    perm = permutation_of(i);
  else if (i.opcode == Opcode::kCopy)
    for (int64_t k = 0; k < in.rank(); ++k) perm.push_back(k);
  else
    return false;
  // Walking the result's dims from minor to major must walk the operand's dims in its own minor-to-major order,
  // ignoring dims of size 1 (they do not move data).
  std::vector<int64_t> out_order, in_order;
  for (auto d : minor_to_major(i.shape))
    if (i.shape.dims[d] != 1) out_order.push_back(perm[d]);
  for (auto d : minor_to_major(in))
    if (in.dims[d] != 1) in_order.push_back(d);
  return out_order == in_order;
}

std::string Module::fingerprint() const {
  std::string text = print_hlo_canonical(*this);
  XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

Computation* add_single_instruction_computation(Module& m, const Instruction& inst) {
  Computation* c = m.add_computation(m.unique_name(inst.name));
  std::vector<Instruction*> params;
  for (size_t k = 0; k < inst.operands.size(); ++k)
    params.push_back(c->add_parameter(static_cast<int64_t>(k), inst.operand(k)->shape));
  Instruction* copy = c->add(inst.opcode, inst.shape, params, inst.attrs, inst.name);
  copy->called = inst.called;
  copy->literal = inst.literal;
  c->root = copy;
  return c;
}

}  // namespace jitx::hlo
