// The algebraic simplifier's shape-op rules: identity and nested convert, reshape, transpose, broadcast, slice, and
// reduce of a broadcast.
#include <algorithm>

#include "hlo/passes/algebraic_simplifier_rules.h"

namespace jitx::hlo::algsimp {
namespace {
using detail::Params;

Instruction* transpose_rules(Rewriter& r, Instruction* i, std::string_view& rule) {
  const Shape& s = i->shape;
  Instruction* x = i->operand(0);
  const Ints& p2 = permutation_of(*i);
  // transpose(A) => A for the identity permutation
  if (is_identity(p2) && s.layout == x->shape.layout) return rule = "transpose(A) => A (identity)", x;
  // transpose(transpose(A)) => transpose(A) with the composed permutation: out dim k is A's dim p1[p2[k]]
  if (x->opcode == Opcode::kTranspose) {
    const Ints& p1 = permutation_of(*x);
    Ints p(p2.size());
    for (size_t k = 0; k < p2.size(); ++k) p[k] = p1[p2[k]];
    Instruction* a = x->operand(0);
    if (is_identity(p) && a->shape.layout == s.layout) return rule = "transpose(transpose(A)) => A", a;
    rule = "transpose(transpose(A)) => transpose(A) (composed)";
    return r.add(Opcode::kTranspose, s, {a}, Params{{"permutation", p}});
  }
  // transpose(dot(A, B)) => dot(B, A)
  if (x->opcode == Opcode::kDot && r.uses(x) == 1) return transpose_of_dot(r, i, rule);
  // transpose(all-reduce(A)) => all-reduce(transpose(A)): the sum commutes with moving elements, and the transpose
  // can then fold into A (a partitioned weight gradient: transpose(all-reduce(dot)) becomes all-reduce(dot)).
  if (x->opcode == Opcode::kAllReduce && r.uses(x) == 1 && x->operands.size() == 1 && !x->shape.is_tuple) {
    Instruction* t = r.add(Opcode::kTranspose, s, {x->operand(0)}, Params{{"permutation", p2}});
    rule = "transpose(all-reduce(A)) => all-reduce(transpose(A))";
    return r.add(Opcode::kAllReduce, s, {t}, x->attrs);
  }
  return nullptr;
}

Instruction* broadcast_rules(Rewriter& r, Instruction* i, std::string_view& rule) {
  const Shape& s = i->shape;
  Instruction* x = i->operand(0);
  const Ints& bd2 = broadcast_dimensions_of(*i);
  // broadcast(A) => A when it neither adds nor expands a dimension
  if (x->shape.same_type(s) && is_identity(bd2) && x->shape.layout == s.layout)
    return rule = "broadcast(A) => A (identity)", x;
  // broadcast(broadcast(A)) => broadcast(A): A's dim k lands at bd2[bd1[k]]
  if (x->opcode == Opcode::kBroadcastInDim) {
    const Ints& bd1 = broadcast_dimensions_of(*x);
    Ints bd(bd1.size());
    for (size_t k = 0; k < bd1.size(); ++k) bd[k] = bd2[bd1[k]];
    rule = "broadcast(broadcast(A)) => broadcast(A)";
    return r.add(Opcode::kBroadcastInDim, s, {x->operand(0)}, Params{{"broadcast_dimensions", bd}});
  }
  return nullptr;
}

Instruction* slice_rules(Rewriter& r, Instruction* i, std::string_view& rule) {
  const Shape& s = i->shape;
  Instruction* x = i->operand(0);
  auto s2 = SliceConfig::of(*i);
  const Ints& st2 = s2.start_indices;
  // slice(A) => A when it keeps every element (starts at 0, same dims)
  if (x->shape.same_type(s) && std::all_of(st2.begin(), st2.end(), [](int64_t v) { return v == 0; }) &&
      x->shape.layout == s.layout)
    return rule = "slice(A) => A (full range)", x;
  // slice(slice(A)) => slice(A): element k is A[s1 + (s2 + k*t2)*t1]
  if (x->opcode == Opcode::kSlice && s.num_elements() > 0) {
    auto s1 = SliceConfig::of(*x);
    const Ints &st1 = s1.start_indices, &t1 = s1.strides, &t2 = s2.strides;
    Ints start(s.rank()), limit(s.rank()), stride(s.rank());
    for (int64_t k = 0; k < s.rank(); ++k) {
      start[k] = st1[k] + st2[k] * t1[k];
      stride[k] = t1[k] * t2[k];
      limit[k] = start[k] + (s.dims[k] - 1) * stride[k] + 1;
    }
    rule = "slice(slice(A)) => slice(A)";
    return r.add(Opcode::kSlice, s, {x->operand(0)}, to_params(SliceConfig{start, limit, stride}));
  }
  return nullptr;
}

// reduce(broadcast(A)) along dims the broadcast added => broadcast(A) * count (add) or broadcast(A) (max, min)
Instruction* reduce_of_broadcast(Rewriter& rw, Instruction* i, std::string_view& rule) {
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
    r = rw.add(Opcode::kBroadcastInDim, Shape(d, i->shape.dims), {a}, Params{{"broadcast_dimensions", new_bd}});
  if (reducer != Reducer::kAdd) return rule = "reduce(broadcast(A), max|min) => broadcast(A)", r;
  if (is_floating(d) && !exact_in(d, static_cast<double>(count))) return nullptr;
  rule = "reduce(broadcast(A), add) => broadcast(A) * count";
  return rw.add(Opcode::kMultiply, i->shape, {r, rw.splat(d, i->shape.dims, static_cast<double>(count))});
}
}  // namespace

Instruction* shape_rules(Rewriter& r, Instruction* i, std::string_view& rule) {
  const Shape& s = i->shape;
  Instruction* x = i->operand(0);
  switch (i->opcode) {
    case Opcode::kConvert:
      // convert(A) => A when A already has the type
      if (x->shape.same_type(s)) return rule = "convert(A) => A (same type)", x;
      return nullptr;
    case Opcode::kReshape:
      // reshape(A) => A when the shape does not change
      if (x->shape.same_type(s) && x->shape.layout == s.layout) return rule = "reshape(A) => A (same shape)", x;
      // reshape(reshape(A)) => reshape(A)
      if (x->opcode == Opcode::kReshape)
        return rule = "reshape(reshape(A)) => reshape(A)", r.add(Opcode::kReshape, s, {x->operand(0)});
      return nullptr;
    case Opcode::kTranspose: return transpose_rules(r, i, rule);
    case Opcode::kBroadcastInDim: return broadcast_rules(r, i, rule);
    case Opcode::kSlice: return slice_rules(r, i, rule);
    case Opcode::kReduce: return reduce_of_broadcast(r, i, rule);
    default: return nullptr;
  }
}

}  // namespace jitx::hlo::algsimp
