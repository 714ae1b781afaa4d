// CSE: a hash map from an instruction's structural key to the first instruction with that key.
#include "hlo/passes/cse.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "hlo/ir/custom_call.h"

namespace jitx::hlo {
namespace {

size_t shape_hash(const Shape& s) {
  size_t h = detail::hash_combine(static_cast<size_t>(s.dtype), s.is_tuple);
  for (auto d : s.dims) h = detail::hash_combine(h, static_cast<size_t>(d));
  for (auto d : s.layout) h = detail::hash_combine(h, static_cast<size_t>(d) + 977);
  for (auto& t : s.tuple_shapes) h = detail::hash_combine(h, shape_hash(t));
  return h;
}

bool same_shape(const Shape& a, const Shape& b) {
  if (!a.same_type(b) || a.layout != b.layout || a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
  for (size_t i = 0; i < a.tuple_shapes.size(); ++i)
    if (!same_shape(a.tuple_shapes[i], b.tuple_shapes[i])) return false;
  return true;
}

bool same_literal(const detail::Literal& a, const detail::Literal& b) {
  return a.dtype == b.dtype && a.dims == b.dims && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

struct KeyHash {
  size_t operator()(const Instruction* i) const {
    size_t h = detail::hash_combine(static_cast<size_t>(i->opcode), shape_hash(i->shape));
    for (auto* o : i->operands) h = detail::hash_combine(h, std::hash<const void*>{}(o));
    for (auto* c : i->called) h = detail::hash_combine(h, std::hash<const void*>{}(c));
    h = detail::hash_combine(h, i->attrs.hash());
    if (i->literal) {
      const auto* p = static_cast<const unsigned char*>(i->literal->data());
      size_t n = std::min<size_t>(i->literal->nbytes(), 256);  // a prefix is enough to spread the buckets
      for (size_t b = 0; b < n; ++b) h = detail::hash_combine(h, p[b]);
    }
    return h;
  }
};

struct KeyEq {
  bool operator()(const Instruction* a, const Instruction* b) const {
    if (a->opcode != b->opcode || a->operands != b->operands || a->called != b->called || !(a->attrs == b->attrs) ||
        !same_shape(a->shape, b->shape))
      return false;
    if (a->literal || b->literal) return a->literal && b->literal && same_literal(*a->literal, *b->literal);
    return true;
  }
};

/// Custom-calls may have effects, except jitx's own linalg ones (pure functions of their operands).
bool mergeable(const Instruction& i) {
  return i.opcode != Opcode::kParameter && (i.opcode != Opcode::kCustomCall || is_pure_custom_call(i)) &&
         !has_side_effect(i);
}

}  // namespace

bool CommonSubexpressionElimination::run(Module& m) {
  bool changed = false;
  for (auto& c : m.computations) {
    std::unordered_map<Instruction*, Instruction*, KeyHash, KeyEq> first;
    // Duplicates and what replaces them. Each instruction's operands are made canonical when it is reached (its
    // operands come before it), so one walk replaces every use, where replace_all_uses per duplicate walked the
    // whole computation each time (quadratic in an unrolled program).
    std::unordered_map<const Instruction*, Instruction*> replaced;
    std::unordered_set<const Instruction*> used;
    if (c->root) used.insert(c->root);
    for (auto& up : c->instructions)
      for (auto* o : up->operands) used.insert(o);
    for (auto& up : c->instructions) {
      Instruction* i = up.get();
      for (auto*& o : i->operands)
        if (auto r = replaced.find(o); r != replaced.end()) o = r->second;
      if (!mergeable(*i)) continue;
      auto [it, inserted] = first.emplace(i, i);
      if (inserted) continue;
      // %i computes what %it->second does: same opcode, operands, attributes, shape.
      replaced[i] = it->second;
      if (used.count(i)) {
        trace_rewrite(name(), *i, fmt::format("duplicate => %{}", it->second->name));
        changed = true;
      }
    }
    if (auto r = replaced.find(c->root); r != replaced.end()) c->root = r->second;
  }
  return changed;
}

}  // namespace jitx::hlo
