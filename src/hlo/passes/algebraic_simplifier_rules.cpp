// What the algebraic simplifier's rules share: the rewriter that places new instructions, and constant matching.
#include "hlo/passes/algebraic_simplifier_rules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace jitx::hlo::algsimp {
using detail::Literal;
using detail::Params;

void Rewriter::count_uses() {
  // Uses by live instructions only (the root and what it reads, transitively): a rewrite leaves the replaced
  // instruction in place until DCE, and its reads must not keep a single-use rule from firing on its operands.
  uses_.clear();
  for (auto it = comp_->instructions.rbegin(); it != comp_->instructions.rend(); ++it) {
    const Instruction* u = it->get();
    if (u != comp_->root && uses_[u] == 0) continue;
    for (auto* o : u->operands) uses_[o]++;
  }
}

Instruction* Rewriter::add(Opcode op, Shape s, std::vector<Instruction*> ops, Params attrs) {
  for (auto* o : ops) uses_[o]++;
  return comp_->insert_before(at_, op, std::move(s), std::move(ops), std::move(attrs));
}

Instruction* Rewriter::splat(DType d, const Ints& dims, double v) {
  Literal lit = Literal::make(d, {});
  lit.set_f64(0, v);
  Instruction* c = comp_->insert_constant_before(at_, std::move(lit));
  if (dims.empty()) return c;
  return add(Opcode::kBroadcastInDim, Shape(d, dims), {c}, Params{{"broadcast_dimensions", Ints{}}});
}

const Literal* splat_literal(const Instruction* i) {
  while (i->opcode == Opcode::kBroadcastInDim) i = i->operand(0);
  if (i->opcode != Opcode::kConstant || !i->literal || i->literal->size() == 0) return nullptr;
  const Literal& l = *i->literal;
  size_t es = dtype_size(l.dtype);
  const char* p = static_cast<const char*>(l.data());
  for (int64_t k = 1; k < l.size(); ++k)
    if (std::memcmp(p, p + k * es, es) != 0) return nullptr;
  return &l;
}
bool splat_is(const Instruction* i, double v) {
  const Literal* l = splat_literal(i);
  return l && l->get_f64(0) == v;
}
bool splat_is_positive_zero(const Instruction* i) {
  const Literal* l = splat_literal(i);
  return l && l->get_f64(0) == 0 && !std::signbit(l->get_f64(0));
}
bool exact_in(DType d, double v) {
  Literal l = Literal::make(d, {});
  l.set_f64(0, v);
  return l.get_f64(0) == v;
}
bool is_pow2(double v) {
  int e = 0;
  return std::isfinite(v) && v != 0 && std::fabs(std::frexp(v, &e)) == 0.5;
}
Instruction* scaled_by_constant(Instruction* i, double& c) {
  if (i->opcode != Opcode::kMultiply || !is_floating(i->shape.dtype)) return nullptr;
  for (int k = 0; k < 2; ++k)
    if (const Literal* l = splat_literal(i->operand(k))) {
      c = l->get_f64(0);
      return i->operand(1 - k);
    }
  return nullptr;
}
bool is_identity(const Ints& p) {
  for (size_t k = 0; k < p.size(); ++k)
    if (p[k] != static_cast<int64_t>(k)) return false;
  return true;
}
bool contains(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool init_is_identity(Reducer reducer, const Instruction* init, DType d) {
  const Literal* l = splat_literal(init);
  if (!l) return false;
  if (reducer == Reducer::kAdd) return l->get_f64(0) == 0;
  bool is_max = reducer == Reducer::kMax;
  if (is_floating(d)) return l->get_f64(0) == (is_max ? -INFINITY : INFINITY);
  if (is_unsigned_integer(d)) return is_max ? l->get_u64(0) == 0 : l->get_u64(0) == (~0ULL >> (64 - dtype_bits(d)));
  int bits = dtype_bits(d);
  int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
  int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
  return l->get_i64(0) == (is_max ? lo : hi);
}

}  // namespace jitx::hlo::algsimp
