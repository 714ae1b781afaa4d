// The algebraic simplifier: each rule is one labelled block in simplify(); the label is also its trace line.
#include "hlo/passes/algebraic_simplifier.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "hlo/ir/attributes.h"

namespace jitx::hlo {
namespace {
using detail::Literal;
using detail::Params;
using Ints = std::vector<int64_t>;

// --- constant matching ----------------------------------------------------------------------------------
/// The constant under a chain of broadcasts, or nullptr.
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
/// Whether every element of i is v (compared as a double, so 0 matches both +0 and -0).
bool splat_is(const Instruction* i, double v) {
  const Literal* l = splat_literal(i);
  return l && l->get_f64(0) == v;
}
bool splat_is_positive_zero(const Instruction* i) {
  const Literal* l = splat_literal(i);
  return l && l->get_f64(0) == 0 && !std::signbit(l->get_f64(0));
}
/// Whether v survives a round trip through dtype d exactly.
bool exact_in(DType d, double v) {
  Literal l = Literal::make(d, {});
  l.set_f64(0, v);
  return l.get_f64(0) == v;
}
/// Whether v is a finite power of two (so multiplying by it is exact, barring overflow and underflow).
bool is_pow2(double v) {
  int e = 0;
  return std::isfinite(v) && v != 0 && std::fabs(std::frexp(v, &e)) == 0.5;
}
/// i = c * A or A * c with c a floating splat constant: c's value and A, else nullptr.
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

/// The identity element of a reducer for dtype d, if init holds it.
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

// --- the rewriter -----------------------------------------------------------------------------------------
class Simplifier {
 public:
  Simplifier(Computation* c, std::string_view pass) : comp_(c), pass_(pass) {}

  /// One sweep over the computation; returns whether any rule fired.
  bool sweep() {
    uses_.clear();
    for (auto& u : comp_->instructions)
      for (auto* o : u->operands) uses_[o]++;
    std::vector<Instruction*> order;
    for (auto& u : comp_->instructions) order.push_back(u.get());
    bool changed = false;
    for (Instruction* i : order) {
      if (i != comp_->root && uses_[i] == 0) continue;  // dead: leave it for DCE
      at_ = i;
      std::string_view rule;
      Instruction* with = simplify(i, rule);
      if (!with || with == i) continue;
      if (comp_->replace_all_uses(i, with)) {
        uses_[with] += uses_[i];
        uses_[i] = 0;
        trace_rewrite(pass_, *i, fmt::format("{} (now %{})", rule, with->name));
        changed = true;
      }
    }
    return changed;
  }

 private:
  Computation* comp_;
  std::string_view pass_;
  std::unordered_map<const Instruction*, int64_t> uses_;
  Instruction* at_ = nullptr;  // the instruction being rewritten: new instructions go just before it

  Instruction* add(Opcode op, Shape s, std::vector<Instruction*> ops, Params attrs = {}) {
    for (auto* o : ops) uses_[o]++;
    return comp_->insert_before(at_, op, std::move(s), std::move(ops), std::move(attrs));
  }
  /// A dtype d array of dims holding v everywhere: a scalar constant, broadcast unless dims is empty.
  Instruction* splat(DType d, const Ints& dims, double v) {
    Literal lit = Literal::make(d, {});
    lit.set_f64(0, v);
    Instruction* c = comp_->insert_constant_before(at_, std::move(lit));
    if (dims.empty()) return c;
    return add(Opcode::kBroadcastInDim, Shape(d, dims), {c}, Params{{"broadcast_dimensions", Ints{}}});
  }

  Instruction* simplify(Instruction* i, std::string_view& rule) {
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
        if (!integral) return one_plus_tanh(i, rule);
        break;
      case Opcode::kSubtract:
        // A - 0 => A (+0 only for floats: A - (-0) turns -0 into +0)
        if (integral ? splat_is(op(1), 0) : splat_is_positive_zero(op(1))) return rule = "A - 0 => A", op(0);
        break;
      case Opcode::kMultiply:
        // A * 1 => A
        if (splat_is(op(1), 1)) return rule = "A * 1 => A", op(0);
        // 1 * A => A
        if (splat_is(op(0), 1)) return rule = "1 * A => A", op(1);
        if (!integral) return scaled_products(i, rule);
        if (integral) {
          // A * 0 => 0 (integers only)
          if (splat_is(op(1), 0)) return rule = "A * 0 => 0 (integers)", op(1);
          // 0 * A => 0 (integers only)
          if (splat_is(op(0), 0)) return rule = "0 * A => 0 (integers)", op(0);
        }
        break;
      case Opcode::kNegate:
        // --A => A
        if (op(0)->opcode == Opcode::kNegate) return rule = "--A => A", op(0)->operand(0);
        break;
      case Opcode::kDivide: {
        // A / c => A * (1/c), c a power of two: both sides are the correctly rounded A * 2^-k, so they are equal.
        const Literal* c = is_floating(d) ? splat_literal(op(1)) : nullptr;
        if (!c) break;
        double v = c->get_f64(0);
        int e = 0;
        if (!std::isfinite(v) || v == 0 || std::fabs(std::frexp(v, &e)) != 0.5) break;
        double r = 1.0 / v;
        if (!exact_in(d, r)) break;
        rule = "A / c => A * (1/c) (c a power of two)";
        return add(Opcode::kMultiply, s, {op(0), splat(d, s.dims, r)});
      }
      case Opcode::kPower:
        // pow(A, 2) => A * A
        if (splat_is(op(1), 2)) return rule = "pow(A, 2) => A * A", add(Opcode::kMultiply, s, {op(0), op(0)});
        // pow(A, 1) => A
        if (splat_is(op(1), 1)) return rule = "pow(A, 1) => A", op(0);
        break;
      case Opcode::kConvert:
        // convert(A) => A when A already has the type
        if (op(0)->shape.same_type(s)) return rule = "convert(A) => A (same type)", op(0);
        break;
      case Opcode::kReshape:
        // reshape(A) => A when the shape does not change
        if (op(0)->shape.same_type(s) && op(0)->shape.layout == s.layout) return rule = "reshape(A) => A (same shape)", op(0);
        // reshape(reshape(A)) => reshape(A)
        if (op(0)->opcode == Opcode::kReshape)
          return rule = "reshape(reshape(A)) => reshape(A)", add(Opcode::kReshape, s, {op(0)->operand(0)});
        break;
      case Opcode::kTranspose: {
        const Ints& p2 = permutation_of(*i);
        // transpose(A) => A for the identity permutation
        if (is_identity(p2) && s.layout == op(0)->shape.layout) return rule = "transpose(A) => A (identity)", op(0);
        // transpose(transpose(A)) => transpose(A) with the composed permutation: out dim k is A's dim p1[p2[k]]
        if (op(0)->opcode == Opcode::kTranspose) {
          const Ints& p1 = permutation_of(*op(0));
          Ints p(p2.size());
          for (size_t k = 0; k < p2.size(); ++k) p[k] = p1[p2[k]];
          Instruction* a = op(0)->operand(0);
          if (is_identity(p) && a->shape.layout == s.layout) return rule = "transpose(transpose(A)) => A", a;
          rule = "transpose(transpose(A)) => transpose(A) (composed)";
          return add(Opcode::kTranspose, s, {a}, Params{{"permutation", p}});
        }
        // transpose(dot(A, B)) => dot(B, A)
        if (op(0)->opcode == Opcode::kDot && uses_[op(0)] == 1) return transpose_of_dot(i, rule);
        break;
      }
      case Opcode::kBroadcastInDim: {
        const Ints& bd2 = broadcast_dimensions_of(*i);
        // broadcast(A) => A when it neither adds nor expands a dimension
        if (op(0)->shape.same_type(s) && is_identity(bd2) && op(0)->shape.layout == s.layout)
          return rule = "broadcast(A) => A (identity)", op(0);
        // broadcast(broadcast(A)) => broadcast(A): A's dim k lands at bd2[bd1[k]]
        if (op(0)->opcode == Opcode::kBroadcastInDim) {
          const Ints& bd1 = broadcast_dimensions_of(*op(0));
          Ints bd(bd1.size());
          for (size_t k = 0; k < bd1.size(); ++k) bd[k] = bd2[bd1[k]];
          rule = "broadcast(broadcast(A)) => broadcast(A)";
          return add(Opcode::kBroadcastInDim, s, {op(0)->operand(0)}, Params{{"broadcast_dimensions", bd}});
        }
        break;
      }
      case Opcode::kSlice: {
        auto s2 = SliceConfig::of(*i);
        const Ints& st2 = s2.start_indices;
        // slice(A) => A when it keeps every element (starts at 0, same dims)
        if (op(0)->shape.same_type(s) && std::all_of(st2.begin(), st2.end(), [](int64_t x) { return x == 0; }) &&
            op(0)->shape.layout == s.layout)
          return rule = "slice(A) => A (full range)", op(0);
        // slice(slice(A)) => slice(A): element k is A[s1 + (s2 + k*t2)*t1]
        if (op(0)->opcode == Opcode::kSlice && s.num_elements() > 0) {
          auto s1 = SliceConfig::of(*op(0));
          const Ints &st1 = s1.start_indices, &t1 = s1.strides, &t2 = s2.strides;
          Ints start(s.rank()), limit(s.rank()), stride(s.rank());
          for (int64_t k = 0; k < s.rank(); ++k) {
            start[k] = st1[k] + st2[k] * t1[k];
            stride[k] = t1[k] * t2[k];
            limit[k] = start[k] + (s.dims[k] - 1) * stride[k] + 1;
          }
          rule = "slice(slice(A)) => slice(A)";
          return add(Opcode::kSlice, s, {op(0)->operand(0)}, to_params(SliceConfig{start, limit, stride}));
        }
        break;
      }
      case Opcode::kReduce:
        return reduce_of_broadcast(i, rule);
      case Opcode::kDot:
        return dot_of_transpose(i, rule);
      case Opcode::kSelect: {
        // select(true, A, B) => A; select(false, A, B) => B
        const Literal* p = splat_literal(op(0));
        if (!p) break;
        bool t = p->get_i64(0) != 0;
        rule = t ? "select(true, A, B) => A" : "select(false, A, B) => B";
        return t ? op(1) : op(2);
      }
      default:
        break;
    }
    return nullptr;
  }

  // reduce(broadcast(A)) along dims the broadcast added => broadcast(A) * count (add) or broadcast(A) (max, min)
  Instruction* reduce_of_broadcast(Instruction* i, std::string_view& rule) {
    if (i->operands.size() != 2 || i->operand(0)->opcode != Opcode::kBroadcastInDim) return nullptr;
    Reducer reducer = reducer_of(*i);
    Instruction* b = i->operand(0);
    Instruction* a = b->operand(0);
    DType d = i->shape.dtype;
    if ((reducer != Reducer::kAdd && reducer != Reducer::kMax && reducer != Reducer::kMin) || is_bool(d)) return nullptr;
    if (!init_is_identity(reducer, i->operand(1), d)) return nullptr;
    const Ints& dims = dimensions_of(*i);
    const Ints& bd = broadcast_dimensions_of(*b);
    for (auto x : bd)
      if (contains(dims, x)) return nullptr;  // a reduced dim carries A's data: not a plain repeat
    int64_t count = 1;
    Ints kept;  // broadcast output dims that survive the reduce, in order
    for (int64_t k = 0; k < b->shape.rank(); ++k) {
      if (contains(dims, k)) count *= b->shape.dims[k];
      else kept.push_back(k);
    }
    if (count == 0) return nullptr;
    Ints new_bd;
    for (auto x : bd) new_bd.push_back(std::find(kept.begin(), kept.end(), x) - kept.begin());
    Instruction* r = a;
    if (!(is_identity(new_bd) && a->shape.dims == i->shape.dims))
      r = add(Opcode::kBroadcastInDim, Shape(d, i->shape.dims), {a}, Params{{"broadcast_dimensions", new_bd}});
    if (reducer != Reducer::kAdd) return rule = "reduce(broadcast(A), max|min) => broadcast(A)", r;
    if (is_floating(d) && !exact_in(d, static_cast<double>(count))) return nullptr;
    rule = "reduce(broadcast(A), add) => broadcast(A) * count";
    return add(Opcode::kMultiply, i->shape, {r, splat(d, i->shape.dims, static_cast<double>(count))});
  }

  // 1 + tanh(Y) => 2 * logistic(2Y), exactly equal in real arithmetic (tanh(y) = 2 logistic(2y) - 1). GELU's tail
  // 0.5 x (1 + tanh(u)) is written this way in every framework; as 1 + tanh it loses all relative accuracy for
  // u < 0 (the sum cancels) and costs a rational tanh; as x * logistic(2u) (after the power-of-two rules below
  // fold the 0.5 and the 2s) it is accurate everywhere and costs one exp and one division. Only when nothing else
  // reads the tanh, so no work is duplicated.
  Instruction* one_plus_tanh(Instruction* i, std::string_view& rule) {
    for (int k = 0; k < 2; ++k) {
      Instruction* t = i->operand(k);
      if (t->opcode != Opcode::kTanh || uses_[t] != 1 || !splat_is(i->operand(1 - k), 1)) continue;
      const Shape& s = i->shape;
      Instruction* twice = add(Opcode::kMultiply, s, {t->operand(0), splat(s.dtype, s.dims, 2)});
      Instruction* l = add(Opcode::kLogistic, s, {twice});
      rule = "1 + tanh(Y) => 2 * logistic(2Y)";
      return add(Opcode::kMultiply, s, {splat(s.dtype, s.dims, 2), l});
    }
    return nullptr;
  }

  // Products with power-of-two constants, whose scaling is exact (barring overflow and underflow):
  //   (c1 A) (c2 B) => A B when c1 c2 = 1: both sides round A B once;
  //   (c1 A) c2 => (c1 c2) A when c2 is a power of two: round(c1 A) 2^k = round(c1 2^k A).
  Instruction* scaled_products(Instruction* i, std::string_view& rule) {
    const Shape& s = i->shape;
    double c1 = 0, c2 = 0;
    Instruction* a = scaled_by_constant(i->operand(0), c1);
    Instruction* b = scaled_by_constant(i->operand(1), c2);
    if (a && b && is_pow2(c1) && is_pow2(c2) && c1 * c2 == 1) {
      rule = "(c1 A) (c2 B) => A B (powers of two, c1 c2 = 1)";
      return add(Opcode::kMultiply, s, {a, b});
    }
    for (int k = 0; k < 2; ++k) {
      const Literal* outer = splat_literal(i->operand(1 - k));
      Instruction* inner = scaled_by_constant(i->operand(k), c1);
      if (!outer || !inner || !is_pow2(outer->get_f64(0))) continue;
      double folded = c1 * outer->get_f64(0);
      if (!exact_in(s.dtype, folded) || !std::isfinite(folded)) continue;
      rule = "(c1 A) c2 => (c1 c2) A (c2 a power of two)";
      return add(Opcode::kMultiply, s, {inner, splat(s.dtype, s.dims, folded)});
    }
    return nullptr;
  }

  // transpose(dot(A, B)) => dot(B, A) when the transpose only swaps the lhs's and the rhs's free dimensions (no
  // batch dimensions) and nothing else reads the dot: the product comes out in the transposed order directly, so
  // the transpose's pass over memory goes (autodiff writes weight gradients as transpose(dot(g, x))).
  Instruction* transpose_of_dot(Instruction* i, std::string_view& rule) {
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
    return add(Opcode::kDot, i->shape, {dot->operand(1), dot->operand(0)}, attrs);
  }

  // dot(transpose(A), B) => dot(A, B) and dot(A, transpose(B)) => dot(A, B), the permutation moved into the
  // dimension numbers; only when the free dims keep their relative order (the result's dims must not move).
  Instruction* dot_of_transpose(Instruction* i, std::string_view& rule) {
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
      return add(Opcode::kDot, i->shape, ops, attrs);
    }
    return nullptr;
  }
};

}  // namespace

bool AlgebraicSimplifier::run(Module& m) {
  bool changed = false;
  for (auto& c : m.computations) {
    Simplifier s(c.get(), name());
    // Rewrites expose others (a folded transpose makes a new dot); stop at a fixed point, with a bound.
    for (int round = 0; round < 64 && s.sweep(); ++round) changed = true;
  }
  return changed;
}

}  // namespace jitx::hlo
