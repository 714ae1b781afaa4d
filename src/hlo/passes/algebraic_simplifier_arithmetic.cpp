// The algebraic simplifier's arithmetic identities: A + 0, A * 1, --A, power-of-two scaling, select on a constant.
#include <cmath>

#include "hlo/passes/algebraic_simplifier_rules.h"

namespace jitx::hlo::algsimp {
namespace {
using detail::Literal;

// 1 + tanh(Y) => 2 * logistic(2Y), exactly equal in real arithmetic (tanh(y) = 2 logistic(2y) - 1). GELU's tail
// 0.5 x (1 + tanh(u)) is written this way in every framework; as 1 + tanh it loses all relative accuracy for
// u < 0 (the sum cancels) and costs a rational tanh; as x * logistic(2u) (after the power-of-two rules below
// fold the 0.5 and the 2s) it is accurate everywhere and costs one exp and one division. Only when nothing else
// reads the tanh, so no work is duplicated.
Instruction* one_plus_tanh(Rewriter& r, Instruction* i, std::string_view& rule) {
  for (int k = 0; k < 2; ++k) {
    Instruction* t = i->operand(k);
    if (t->opcode != Opcode::kTanh || r.uses(t) != 1 || !splat_is(i->operand(1 - k), 1)) continue;
    const Shape& s = i->shape;
    Instruction* twice = r.add(Opcode::kMultiply, s, {t->operand(0), r.splat(s.dtype, s.dims, 2)});
    Instruction* l = r.add(Opcode::kLogistic, s, {twice});
    rule = "1 + tanh(Y) => 2 * logistic(2Y)";
    return r.add(Opcode::kMultiply, s, {r.splat(s.dtype, s.dims, 2), l});
  }
  return nullptr;
}

// Products with power-of-two constants, whose scaling is exact (barring overflow and underflow):
//   (c1 A) (c2 B) => A B when c1 c2 = 1: both sides round A B once;
//   (c1 A) c2 => (c1 c2) A when c2 is a power of two: round(c1 A) 2^k = round(c1 2^k A).
Instruction* scaled_products(Rewriter& r, Instruction* i, std::string_view& rule) {
  const Shape& s = i->shape;
  double c1 = 0, c2 = 0;
  Instruction* a = scaled_by_constant(i->operand(0), c1);
  Instruction* b = scaled_by_constant(i->operand(1), c2);
  if (a && b && is_pow2(c1) && is_pow2(c2) && c1 * c2 == 1) {
    rule = "(c1 A) (c2 B) => A B (powers of two, c1 c2 = 1)";
    return r.add(Opcode::kMultiply, s, {a, b});
  }
  for (int k = 0; k < 2; ++k) {
    const Literal* outer = splat_literal(i->operand(1 - k));
    Instruction* inner = scaled_by_constant(i->operand(k), c1);
    if (!outer || !inner || !is_pow2(outer->get_f64(0))) continue;
    double folded = c1 * outer->get_f64(0);
    if (!exact_in(s.dtype, folded) || !std::isfinite(folded)) continue;
    rule = "(c1 A) c2 => (c1 c2) A (c2 a power of two)";
    return r.add(Opcode::kMultiply, s, {inner, r.splat(s.dtype, s.dims, folded)});
  }
  return nullptr;
}

Instruction* multiply_rules(Rewriter& r, Instruction* i, std::string_view& rule, bool integral) {
  auto op = [&](size_t k) { return i->operand(k); };
  // A * 1 => A
  if (splat_is(op(1), 1)) return rule = "A * 1 => A", op(0);
  // 1 * A => A
  if (splat_is(op(0), 1)) return rule = "1 * A => A", op(1);
  if (!integral) return scaled_products(r, i, rule);
  // A * 0 => 0 (integers only)
  if (splat_is(op(1), 0)) return rule = "A * 0 => 0 (integers)", op(1);
  // 0 * A => 0 (integers only)
  if (splat_is(op(0), 0)) return rule = "0 * A => 0 (integers)", op(0);
  return nullptr;
}

// A / c => A * (1/c), c a power of two: both sides are the correctly rounded A * 2^-k, so they are equal.
// Division by a constant or a broadcast becomes a multiply by the reciprocal, as XLA's simplifier rewrites it, so
// that jit(f) gives JAX's results bit for bit (jax.jit(lambda x, s: x / s) with s of shape [n, 1] is x * (1 / s):
// in f32 a quarter of the elements differ by one ULP from a true division). The reciprocal of a constant is folded
// in the dtype (in f32 for f16, then rounded); that of a broadcast value is computed in the dtype. bf16 ops XLA
// computes in f32 (its float normalization runs first): the reciprocal and the product stay f32, and the product
// is rounded to bf16 once (jax.jit(jax.nn.hard_sigmoid) of bf16 x is bf16(relu6(x + 3) * (1/6 in f32))).
Instruction* divide_rules(Rewriter& r, Instruction* i, std::string_view& rule) {
  const Shape& s = i->shape;
  DType d = s.dtype;
  if (!is_floating(d)) return nullptr;
  Instruction* a = i->operand(0);
  Shape sf(DType::float32, s.dims);
  // bf16: (A_f32 * f32 reciprocal) rounded once.
  auto bf16_product = [&](Instruction* inv_f32) {
    Instruction* prod = r.add(Opcode::kMultiply, sf, {r.add(Opcode::kConvert, sf, {a}), inv_f32});
    return r.add(Opcode::kConvert, s, {prod});
  };
  if (const Literal* c = splat_literal(i->operand(1))) {
    double v = c->get_f64(0);
    if (!std::isfinite(v) || v == 0) return nullptr;
    double inv = d == DType::float64 ? 1.0 / v : static_cast<double>(1.0f / static_cast<float>(v));
    rule = "A / c => A * (1/c)";
    if (d == DType::bfloat16) return bf16_product(r.splat(DType::float32, s.dims, inv));
    return r.add(Opcode::kMultiply, s, {a, r.splat(d, s.dims, inv)});
  }
  Instruction* b = i->operand(1);
  if (b->opcode != Opcode::kBroadcastInDim || b->operand(0)->shape.num_elements() >= s.num_elements()) return nullptr;
  Instruction* v = b->operand(0);
  rule = "A / broadcast(B) => A * broadcast(1 / B)";
  if (d != DType::bfloat16) {
    Instruction* inv = r.add(Opcode::kDivide, v->shape, {r.splat(d, v->shape.dims, 1.0), v});
    return r.add(Opcode::kMultiply, s, {a, r.add(Opcode::kBroadcastInDim, s, {inv}, b->attrs)});
  }
  Shape vf(DType::float32, v->shape.dims);
  Instruction* inv =
      r.add(Opcode::kDivide, vf, {r.splat(DType::float32, v->shape.dims, 1.0), r.add(Opcode::kConvert, vf, {v})});
  return bf16_product(r.add(Opcode::kBroadcastInDim, sf, {inv}, b->attrs));
}
}  // namespace

Instruction* arithmetic_rules(Rewriter& r, Instruction* i, std::string_view& rule) {
  const Shape& s = i->shape;
  DType d = s.dtype;
  auto op = [&](size_t k) { return i->operand(k); };
  bool integral = is_integer(d) || is_bool(d);
  switch (i->opcode) {
    case Opcode::kAdd:
      // A + 0 => A
      if (splat_is(op(1), 0)) return rule = "A + 0 => A", op(0);
      // 0 + A => A
      if (splat_is(op(0), 0)) return rule = "0 + A => A", op(1);
      if (!integral) return one_plus_tanh(r, i, rule);
      return nullptr;
    case Opcode::kSubtract:
      // A - 0 => A (+0 only for floats: A - (-0) turns -0 into +0)
      if (integral ? splat_is(op(1), 0) : splat_is_positive_zero(op(1))) return rule = "A - 0 => A", op(0);
      return nullptr;
    case Opcode::kMultiply: return multiply_rules(r, i, rule, integral);
    case Opcode::kNegate:
      // --A => A
      if (op(0)->opcode == Opcode::kNegate) return rule = "--A => A", op(0)->operand(0);
      return nullptr;
    case Opcode::kDivide: return divide_rules(r, i, rule);
    case Opcode::kPower:
      // pow(A, 2) => A * A
      if (splat_is(op(1), 2)) return rule = "pow(A, 2) => A * A", r.add(Opcode::kMultiply, s, {op(0), op(0)});
      // pow(A, 1) => A
      if (splat_is(op(1), 1)) return rule = "pow(A, 1) => A", op(0);
      return nullptr;
    case Opcode::kSelect: {
      // select(true, A, B) => A; select(false, A, B) => B
      const Literal* p = splat_literal(op(0));
      if (!p) return nullptr;
      bool t = p->get_i64(0) != 0;
      rule = t ? "select(true, A, B) => A" : "select(false, A, B) => B";
      return t ? op(1) : op(2);
    }
    default: return nullptr;
  }
}

}  // namespace jitx::hlo::algsimp
