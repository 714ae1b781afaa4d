// The algebraic simplifier's dot rules: transposes folded into a dot's dimension numbers, or into its operand order.
#include <algorithm>

#include "hlo/passes/algebraic_simplifier_rules.h"

namespace jitx::hlo::algsimp {
using detail::Params;

// transpose(dot(A, B)) => dot(B, A) when the transpose only swaps the lhs's and the rhs's free dimensions (no
// batch dimensions) and nothing else reads the dot: the product comes out in the transposed order directly, so
// the transpose's pass over memory goes (autodiff writes weight gradients as transpose(dot(g, x))).
Instruction* transpose_of_dot(Rewriter& r, Instruction* i, std::string_view& rule) {
  Instruction* dot = i->operand(0);
  auto dn = DotDimensionNumbers::of(*dot);
  if (!dn.lhs_batch_dims.empty() || !dn.rhs_batch_dims.empty()) return nullptr;
  int64_t nl = dot->operand(0)->shape.rank() - static_cast<int64_t>(dn.lhs_contracting_dims.size());
  int64_t nr = dot->shape.rank() - nl;
  Ints want;  // the rhs's free dimensions, then the lhs's
  for (int64_t k = 0; k < nr; ++k) want.push_back(nl + k);
  for (int64_t k = 0; k < nl; ++k) want.push_back(k);
  if (permutation_of(*i) != want) return nullptr;
  Params attrs = dot->attrs;
  std::swap(dn.lhs_contracting_dims, dn.rhs_contracting_dims);
  dn.set_on(attrs);
  rule = "transpose(dot(A, B)) => dot(B, A)";
  return r.add(Opcode::kDot, i->shape, {dot->operand(1), dot->operand(0)}, attrs);
}

// dot(transpose(A), B) => dot(A, B) and dot(A, transpose(B)) => dot(A, B), the permutation moved into the
// dimension numbers; only when the free dims keep their relative order (the result's dims must not move).
Instruction* dot_of_transpose(Rewriter& r, Instruction* i, std::string_view& rule) {
  for (int side = 0; side < 2; ++side) {
    Instruction* t = i->operand(side);
    if (t->opcode != Opcode::kTranspose) continue;
    const Ints& p = permutation_of(*t);
    auto dn = DotDimensionNumbers::of(*i);
    Ints& contracting = side == 0 ? dn.lhs_contracting_dims : dn.rhs_contracting_dims;
    Ints& batch = side == 0 ? dn.lhs_batch_dims : dn.rhs_batch_dims;
    Ints free_mapped;
    for (int64_t k = 0; k < t->shape.rank(); ++k)
      if (!contains(contracting, k) && !contains(batch, k)) free_mapped.push_back(p[k]);
    if (!std::is_sorted(free_mapped.begin(), free_mapped.end())) continue;
    for (auto& x : contracting) x = p[x];
    for (auto& x : batch) x = p[x];
    Params attrs = i->attrs;
    dn.set_on(attrs);
    std::vector<Instruction*> ops = i->operands;
    ops[side] = t->operand(0);
    rule = side == 0 ? "dot(transpose(A), B) => dot(A, B) (dimension numbers)"
                     : "dot(A, transpose(B)) => dot(A, B) (dimension numbers)";
    return r.add(Opcode::kDot, i->shape, ops, attrs);
  }
  return nullptr;
}

}  // namespace jitx::hlo::algsimp
