// The SPMD partitioner: sharding propagation and the per-partition rewrite (see spmd_partitioner.h).
#include "hlo/passes/spmd_partitioner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hlo/passes/spmd_partitioner_internal.h"

namespace jitx::hlo {
namespace spmd {

Local Partitioner::generic(const Instruction& i, const std::string& why) {
  if (i.shape.is_tuple) unsupported(i, "has a tuple result (not partitioned yet)");
  for (auto* o : i.operands)
    if (o->shape.is_tuple) unsupported(i, "has a tuple operand (not partitioned yet)");
  std::vector<Instruction*> ops;
  for (auto* o : i.operands) ops.push_back(reshard(map_.at(o), replicated(o->shape.rank(), n_), i).v);
  Tiles t = replicated(i.shape.rank(), n_);
  note(i, t, why);
  Instruction* ni = add(i.opcode, i.shape, ops, i.attrs, t);
  ni->literal = i.literal;
  ni->called = i.called;  // a comparator or a map's scalar function: the same on every partition
  return Local{ni, t};
}

Local Partitioner::reshape(const Instruction& i) {
  // Split into groups of consecutive dimensions with equal products on both sides. A group keeps its tiles when
  // only its major-most dimension is tiled on each side, by the same count (the same contiguous chunks).
  const Local& x = map_.at(i.operand(0));
  const auto &in = i.operand(0)->shape.dims, &out = i.shape.dims;
  std::vector<int64_t> keep(out.size(), -1);
  size_t a = 0, b = 0;
  while (a < in.size() || b < out.size()) {
    size_t a0 = a, b0 = b;
    int64_t pa = a < in.size() ? in[a++] : 1, pb = b < out.size() ? out[b++] : 1;
    while (pa != pb) {
      if (pa < pb && a < in.size()) pa *= in[a++];
      else if (pb < pa && b < out.size()) pb *= out[b++];
      else break;
    }
    // Size-1 dimensions at the group's start carry no elements: the first dimension of size > 1 is the major one.
    while (a0 + 1 < a && in[a0] == 1 && x.t.dims[a0] == 1) ++a0;
    while (b0 + 1 < b && out[b0] == 1) ++b0;
    for (size_t d = a0 + 1; d < a; ++d)
      if (x.t.dims[d] > 1) return generic(i, "a reshape that moves a minor tiled dimension (all-gathered)");
    if (a0 < in.size() && x.t.dims[a0] > 1 && in[a0] % x.t.dims[a0] != 0)
      return generic(i, "a reshape of an unevenly split dimension (all-gathered)");
    if (a0 < in.size() && x.t.dims[a0] > 1) {
      if (b0 >= out.size() || out[b0] % x.t.dims[a0] != 0)
        return generic(i, "a reshape whose tiled dimension does not divide its new major dimension (all-gathered)");
      keep[b0] = static_cast<int64_t>(a0);
    }
  }
  Tiles t = regroup(x.t, keep);
  if (x.t.tiled() && !t.tiled()) return generic(i, "reshape");
  note(i, t, "reshape: the tiled dimensions stay the major dimensions of their groups");
  return Local{add(i.opcode, local_shape(i.shape, t, i), {x.v}, i.attrs, t), t};
}

std::optional<Local> Partitioner::halo_slice(const Instruction& i) {
  // A static slice whose result keeps the operand's tile size on each tiled dimension (an evenly split operand,
  // start s below the tile size, stride 1): result tile j is operand tile j from s on, then the first s elements of
  // tile j + 1, which its holder sends over (a collective-permute: the halo). The last tiles' extra elements are
  // padding of an uneven result.
  const Local& x = map_.at(i.operand(0));
  const auto& in = i.operand(0)->shape.dims;
  auto cfg = SliceConfig::of(i);
  std::vector<int64_t> start = cfg.start_indices, limit = cfg.limit_indices;
  int64_t r = static_cast<int64_t>(in.size());
  for (int64_t d = 0; d < r; ++d) {
    int64_t k = x.t.dims[static_cast<size_t>(d)];
    if (k == 1) continue;
    size_t u = static_cast<size_t>(d);
    int64_t tile = in[u] / k, out = limit[u] - start[u];
    if (in[u] % k != 0 || (out + k - 1) / k != tile || start[u] >= tile) return std::nullopt;
  }
  for (int64_t st : cfg.strides)  // the local windows are unit-stride slices
    if (st != 1) return std::nullopt;
  // The local slice of the untiled dimensions (tiled ones whole), then each tiled dimension's halo and window.
  Shape ls = x.v->shape;
  std::vector<int64_t> lo(static_cast<size_t>(r), 0), hi = ls.dims;
  for (int64_t d = 0; d < r; ++d)
    if (x.t.dims[static_cast<size_t>(d)] == 1) {
      lo[static_cast<size_t>(d)] = start[static_cast<size_t>(d)];
      hi[static_cast<size_t>(d)] = limit[static_cast<size_t>(d)];
    }
  Instruction* v = local_slice(x.v, lo, hi);
  for (int64_t d = 0; d < r; ++d) {
    size_t u = static_cast<size_t>(d);
    int64_t s = start[u];
    if (x.t.dims[u] == 1 || s == 0) continue;
    Instruction* next = halo(v, x.t, d, s, false);  // the first s elements of the next partition's tile
    Shape es = v->shape;
    es.dims[u] += s;
    detail::Params ca;
    ca.set("dimension", d);
    Instruction* ext = c_->add(Opcode::kConcatenate, es, {v, next}, ca);
    std::vector<int64_t> wa(static_cast<size_t>(r), 0), wb = ext->shape.dims;
    wa[u] = s;
    wb[u] = s + v->shape.dims[u];
    v = local_slice(ext, wa, wb);
  }
  set_sharding(*v, to_sharding(x.t));
  note(i, x.t, "slice: the operand's tiles, with a halo from the next partition (collective-permute)");
  return Local{v, x.t};
}

Local Partitioner::slicing(const Instruction& i) {
  // slice, dynamic-slice and dynamic-update-slice that take every element of each tiled dimension run locally.
  const Local& x = map_.at(i.operand(0));
  const auto& in = i.operand(0)->shape.dims;
  if (i.opcode == Opcode::kSlice)
    for (size_t d = 0; d < in.size(); ++d)
      if (x.t.dims[d] > 1 && (i.shape.dims[d] != in[d] || i.attrs.get_ints("start_indices")[d] != 0)) {
        if (auto h = halo_slice(i)) return *h;
        break;
      }
  for (size_t d = 0; d < in.size(); ++d) {
    if (x.t.dims[d] == 1) continue;
    int64_t want = i.opcode == Opcode::kDynamicUpdateSlice ? i.operand(1)->shape.dims[d] : i.shape.dims[d];
    if (want != in[d] || (i.opcode == Opcode::kSlice && i.attrs.get_ints("start_indices")[d] != 0))
      return generic(i, fmt::format("{} of part of a tiled dimension (all-gathered)", opcode_name(i.opcode)));
  }
  if (i.opcode == Opcode::kSlice) {
    auto strides = i.attrs.get_ints("strides", {});
    for (size_t d = 0; d < in.size(); ++d)
      if (x.t.dims[d] > 1 && !strides.empty() && strides[d] != 1) return generic(i, "a strided slice of a tiled dim");
  }
  std::vector<Instruction*> ops{x.v};
  Tiles t = x.t;
  for (size_t k = 1; k < i.operands.size(); ++k) {
    const Instruction* o = i.operand(k);
    Tiles want = k == 1 && i.opcode == Opcode::kDynamicUpdateSlice ? t : replicated(o->shape.rank(), n_);
    ops.push_back(reshard(map_.at(o), want, i).v);
  }
  note(i, t, fmt::format("{}: whole tiled dimensions, local", opcode_name(i.opcode)));
  Shape ls = local_shape(i.shape, t, i);
  detail::Params attrs = i.attrs;
  if (i.opcode == Opcode::kDynamicSlice || i.opcode == Opcode::kSlice) {
    // The slice sizes / limits of the tiled dimensions are the local extents.
    if (i.opcode == Opcode::kDynamicSlice) {
      attrs.set("slice_sizes", ls.dims);
    } else {
      auto limit = i.attrs.get_ints("limit_indices");
      for (size_t d = 0; d < in.size(); ++d)
        if (t.dims[d] > 1) limit[d] = ls.dims[d];
      attrs.set("limit_indices", limit);
    }
  }
  return Local{add(i.opcode, ls, ops, attrs, t), t};
}

void Partitioner::propagate_backward(const Computation& c) {
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> users;
  for (auto& up : c.instructions)
    for (auto* o : up->operands) users[o].push_back(up.get());
  auto keeps_tiles = [](const Instruction& u) {
    return is_elementwise(u.opcode) || u.opcode == Opcode::kTranspose;
  };
  // The tiles operand o of u needs for u to come out tiled as w.
  auto operand_tiles = [](const Instruction& u, const Tiles& w) {
    if (u.opcode != Opcode::kTranspose) return w;
    const auto& perm = u.attrs.get_ints("permutation");
    std::vector<int64_t> keep(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) keep[static_cast<size_t>(perm[j])] = static_cast<int64_t>(j);
    return regroup(w, keep);
  };
  for (auto it = c.instructions.rbegin(); it != c.instructions.rend(); ++it) {  // users before their operands
    const Instruction& u = **it;
    if (u.shape.is_tuple || !keeps_tiles(u)) continue;
    auto wu = wanted(u);
    if (!wu || !wu->tiled()) continue;
    Tiles w = operand_tiles(u, *wu);
    for (auto* o : u.operands) {
      if (o->shape.is_tuple || o->shape.rank() != w.rank() || o->opcode == Opcode::kParameter || sharding_of(*o) ||
          hints_.count(o))
        continue;
      if (u.opcode != Opcode::kTranspose && o->shape.dims != u.shape.dims) continue;  // an implicit broadcast
      bool agree = true;
      for (auto* v : users[o]) {
        auto wv = wanted(*v);
        agree = agree && keeps_tiles(*v) && wv && same_placement(operand_tiles(*v, *wv), w);
      }
      if (!agree) continue;
      hints_[o] = w;
      if (log_on())
        detail::log_line(fmt::format("[sharding] %{}: wants {} (backward from %{})", o->name,
                                     to_sharding(w).to_string(), u.name));
    }
  }
}

Computation* Partitioner::partition(const Computation& old, const std::vector<Tiles>* params,
                                    const std::vector<Tiles>* want_root, std::vector<Tiles>* root_tiles) {
  Computation* saved_c = c_;
  const std::vector<Tiles>* saved_params = params_;
  // Reshards are reused within one computation only (its dead instructions are freed when it is done).
  auto saved_reshards = std::move(reshards_);
  reshards_.clear();
  c_ = m_.add_computation(old.name + ".spmd");
  c_->parent = &m_;
  params_ = params;
  propagate_backward(old);
  for (auto& up : old.instructions) {
    const Instruction& i = *up;
    Local l = visit(i);
    if (!i.shape.is_tuple) l.global = i.shape.dims;
    // A sharding annotated on the instruction (with_sharding_constraint, out_shardings) is a constraint.
    if (i.opcode != Opcode::kParameter && !i.shape.is_tuple) {
      if (auto want = sharding_of(i)) {
        Tiles wt = tiles_of(*want, i.shape.rank(), n_, i);
        if (!(wt == l.t)) {
          if (log_on())
            detail::log_line(
                fmt::format("[sharding] %{}: conflict: propagation chose {}, the annotation says {}: "
                            "resharded",
                            i.name, to_sharding(l.t).to_string(), want->to_string()));
          l = reshard(l, wt, i);
        }
      }
    }
    map_[&i] = l;
  }
  Local root = map_.at(old.root);
  if (!params) {  // the entry: a result split unevenly is gathered (an Array's shards divide its dimensions)
    auto whole = [&](const Instruction* o) {
      const Local& l = map_.at(o);
      for (int64_t d = 0; d < l.t.rank(); ++d)
        if (l.t.dims[static_cast<size_t>(d)] > 1 && uneven(l.global, l.t, d))
          return reshard(l, replicated(l.t.rank(), n_), *old.root);
      return l;
    };
    if (old.root->opcode == Opcode::kTuple) {
      std::vector<Instruction*> ops;
      std::vector<Tiles> elems;
      for (auto* o : old.root->operands) {
        Local l = whole(o);
        ops.push_back(l.v);
        elems.push_back(l.t);
      }
      root = Local{c_->add(Opcode::kTuple, Shape(), ops), Tiles{}, elems};
    } else if (!old.root->shape.is_tuple) {
      root = whole(old.root);
    }
  }
  if (want_root) {
    if (old.root->opcode != Opcode::kTuple || old.root->operands.size() != want_root->size())
      unsupported(*old.root, "a loop body or branch whose root is not a tuple of its results");
    std::vector<Instruction*> ops;
    for (size_t k = 0; k < want_root->size(); ++k)
      ops.push_back(reshard(map_.at(old.root->operand(k)), (*want_root)[k], *old.root).v);
    root = Local{c_->add(Opcode::kTuple, Shape(), ops), Tiles{}, *want_root};
  }
  if (root.v->opcode == Opcode::kTuple) {
    std::vector<Shape> elems;
    for (auto* o : root.v->operands) elems.push_back(o->shape);
    root.v->shape = Shape::tuple(elems);
  }
  if (root_tiles) *root_tiles = root.v->shape.is_tuple ? root.elems : std::vector<Tiles>{root.t};
  c_->root = root.v;
  c_->remove_dead_instructions();
  Computation* out = c_;
  c_ = saved_c;
  params_ = saved_params;
  reshards_ = std::move(saved_reshards);
  return out;
}

Local Partitioner::while_loop(const Instruction& i) {
  // The carry's tiles: the initial values', then what the body makes of them until it keeps them (at most 3 rounds;
  // a body that still changes them reshards its results back each iteration).
  std::vector<Tiles> carry;
  for (auto* o : i.operands) {
    if (o->shape.is_tuple) unsupported(i, "a tuple-shaped loop value");
    carry.push_back(map_.at(o).t);
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<Tiles> got;
    partition(*i.called[1], &carry, nullptr, &got);
    if (got == carry) break;
    carry = got;
  }
  Computation* cond = partition(*i.called[0], &carry, nullptr, nullptr);
  Computation* body = partition(*i.called[1], &carry, &carry, nullptr);
  std::vector<Instruction*> ops;
  std::vector<Shape> shapes;
  for (size_t k = 0; k < i.operands.size(); ++k) {
    ops.push_back(reshard(map_.at(i.operand(k)), carry[k], i).v);
    shapes.push_back(ops.back()->shape);
  }
  Instruction* w = c_->add(Opcode::kWhile, Shape::tuple(shapes), ops, i.attrs);
  w->called = {cond, body};
  if (log_on())
    for (size_t k = 0; k < carry.size(); ++k)
      detail::log_line(fmt::format("[sharding] %{}: carry {}: {} (the loop keeps it)", i.name, k,
                                   to_sharding(carry[k]).to_string()));
  return Local{w, Tiles{}, carry};
}

Local Partitioner::conditional(const Instruction& i) {
  // Branches see the operands' tiles; their results take branch 0's tiles (the other branches reshard to them).
  std::vector<Tiles> args;
  std::vector<Instruction*> ops{reshard(map_.at(i.operand(0)), replicated(0, n_), i).v};
  for (size_t k = 1; k < i.operands.size(); ++k) {
    if (i.operand(k)->shape.is_tuple) unsupported(i, "a tuple-shaped branch operand");
    args.push_back(map_.at(i.operand(k)).t);
    ops.push_back(map_.at(i.operand(k)).v);
  }
  std::vector<Tiles> out;
  partition(*i.called[0], &args, nullptr, &out);
  std::vector<Computation*> branches;
  for (auto* b : i.called) branches.push_back(partition(*b, &args, &out, nullptr));
  Instruction* c = c_->add(Opcode::kConditional, branches[0]->root->shape, ops, i.attrs);
  c->called = branches;
  note(i, out.empty() ? replicated(0, n_) : out[0], "conditional: branch 0's result tiles");
  return Local{c, Tiles{}, out};
}

Local Partitioner::elementwise(const Instruction& i) {
  // The operand split into the most tiles leads; the others are resharded to it.
  const Tiles* lead = nullptr;
  size_t from = 0;
  for (size_t k = 0; k < i.operands.size(); ++k) {
    if (i.operands[k]->shape.rank() != i.shape.rank()) continue;  // a clamp's scalar bounds
    const Tiles& t = map_.at(i.operands[k]).t;
    if (!lead || t.num_tiles() > lead->num_tiles()) {
      lead = &t;
      from = k;
    }
  }
  Tiles t = lead ? *lead : replicated(i.shape.rank(), n_);
  std::string why = fmt::format("elementwise: from operand {}", from);
  if (!t.tiled())  // every operand whole: computed split where its users want it (their slices are local)
    if (auto it = hints_.find(&i); it != hints_.end()) {
      t = it->second;
      why = "elementwise: replicated operands, split as its users want (backward propagation)";
    }
  std::vector<Instruction*> ops;
  for (auto* o : i.operands)
    ops.push_back(reshard(map_.at(o), o->shape.rank() == i.shape.rank() ? t : replicated(o->shape.rank(), n_), i).v);
  note(i, t, why);
  return Local{add(i.opcode, local_shape(i.shape, t, i), ops, i.attrs, t), t};
}

Local Partitioner::dot(const Instruction& i) {
  auto dn = DotDimensionNumbers::of(i);
  const Local &L = map_.at(i.operand(0)), &R = map_.at(i.operand(1));
  // The padding of an unevenly split contracting dimension must add nothing: zeros on both sides (garbage times
  // zero could still be a NaN).
  auto masked = [&](const Local& l, const std::vector<int64_t>& contracting) {
    return mask_padding(l.v, l.t, l.global, contracting, zero_scalar(l.v->shape.dtype));
  };
  if (L.t.tiled() && R.t.tiled())
    if (auto full = combined_dot_tiles(L.t, R.t, dn, L.v->shape.rank(), R.v->shape.rank(), n_)) {
      int64_t nout = i.shape.rank(), nc = static_cast<int64_t>(dn.lhs_contracting_dims.size());
      std::vector<int64_t> keep_out, contracting;
      for (int64_t d = 0; d < nout; ++d) keep_out.push_back(d);
      for (int64_t k = 0; k < nc; ++k)
        if (full->dims[static_cast<size_t>(nout + k)] > 1) contracting.push_back(nout + k);
      Tiles out_t = regroup(*full, keep_out);
      Instruction* local =
          add(Opcode::kDot, local_shape(i.shape, out_t, i),
              {masked(L, dn.lhs_contracting_dims), masked(R, dn.rhs_contracting_dims)}, i.attrs, out_t);
      if (contracting.empty()) {
        note(i, out_t, "dot: both operands split on free or batch dimensions, no communication");
        return Local{local, out_t};
      }
      return sum_partials(i, local, *full, keep_out, contracting, out_t);
    }
  // The leader is the split operand (lhs when both are); the other is resharded to match it on the batch and
  // contracting dimensions and left whole on its free ones.
  bool lead_lhs = L.t.tiled() || !R.t.tiled();
  const Local& lead = lead_lhs ? L : R;
  const Local& other = lead_lhs ? R : L;
  const auto& lb = lead_lhs ? dn.lhs_batch_dims : dn.rhs_batch_dims;
  const auto& lc = lead_lhs ? dn.lhs_contracting_dims : dn.rhs_contracting_dims;
  const auto& ob = lead_lhs ? dn.rhs_batch_dims : dn.lhs_batch_dims;
  const auto& oc = lead_lhs ? dn.rhs_contracting_dims : dn.lhs_contracting_dims;
  int64_t lr = lead.v->shape.rank(), orank = other.v->shape.rank();
  std::vector<int64_t> keep_other(static_cast<size_t>(orank), -1);
  for (size_t k = 0; k < ob.size(); ++k) keep_other[static_cast<size_t>(ob[k])] = lb[k];
  for (size_t k = 0; k < oc.size(); ++k) keep_other[static_cast<size_t>(oc[k])] = lc[k];
  Tiles other_t = regroup(lead.t, keep_other);
  Local o2 = reshard(other, other_t, i);
  // The result: batch dims, lhs free dims, rhs free dims.
  auto is_in = [](const std::vector<int64_t>& v, int64_t d) { return std::find(v.begin(), v.end(), d) != v.end(); };
  std::vector<int64_t> keep_out(dn.lhs_batch_dims.size(), -1);
  for (size_t k = 0; k < lb.size(); ++k) keep_out[k] = lb[k];
  auto free_dims = [&](int64_t rank, const std::vector<int64_t>& b, const std::vector<int64_t>& c, bool mine) {
    for (int64_t d = 0; d < rank; ++d)
      if (!is_in(b, d) && !is_in(c, d)) keep_out.push_back(mine ? d : -1);
  };
  if (lead_lhs) {
    free_dims(lr, lb, lc, true);
    free_dims(orank, ob, oc, false);
  } else {
    free_dims(orank, ob, oc, false);
    free_dims(lr, lb, lc, true);
  }
  Tiles out_t = regroup(lead.t, keep_out);
  std::vector<int64_t> split_contracting;
  for (auto d : lc)
    if (lead.t.dims[static_cast<size_t>(d)] > 1) split_contracting.push_back(d);
  Instruction* lhs = lead_lhs ? masked(lead, lc) : masked(o2, oc);
  Instruction* rhs = lead_lhs ? masked(o2, oc) : masked(lead, lc);
  Instruction* local = add(Opcode::kDot, local_shape(i.shape, out_t, i), {lhs, rhs}, i.attrs, out_t);
  if (split_contracting.empty()) {
    note(
        i, out_t,
        fmt::format("dot: split like the {} on batch and free dimensions, no communication", lead_lhs ? "lhs" : "rhs"));
    return Local{local, out_t};
  }
  std::vector<int64_t> full_keep = keep_out;
  return sum_partials(i, local, lead.t, full_keep, split_contracting, out_t);
}

Local Partitioner::sum_partials(const Instruction& i, Instruction* local, const Tiles& full,
                                const std::vector<int64_t>& keep_out, const std::vector<int64_t>& split_contracting,
                                const Tiles& out_t) {
  // An output wanted split (annotated, or by a user's annotation: backward propagation) on a dimension the
  // contraction's partitions can share out: reduce-scatter the partial products (each partition keeps its piece of
  // the sum) instead of an all-reduce and a slice.
  if (auto want = wanted(i); want && split_contracting.size() == 1) {
    int64_t c = split_contracting[0], g = full.dims[static_cast<size_t>(c)];
    for (int64_t d = 0; d < i.shape.rank(); ++d) {
      int64_t k = keep_out[static_cast<size_t>(d)];
      if ((k >= 0 && full.dims[static_cast<size_t>(k)] > 1) || local->shape.dims[static_cast<size_t>(d)] % g != 0)
        continue;
      auto cand_keep = keep_out;
      cand_keep[static_cast<size_t>(d)] = c;
      Tiles cand = regroup(full, cand_keep);
      if (!same_placement(cand, *want)) continue;
      detail::Params a = collective_attrs(groups_over(full, split_contracting), d, "add");
      Shape ls = local->shape;
      ls.dims[static_cast<size_t>(d)] /= g;
      note(i, cand, fmt::format("dot: contracting dimension split, output split on dimension {}: reduce-scatter", d));
      return Local{add(Opcode::kReduceScatter, ls, {local}, a, cand), cand};
    }
  }
  // Partial products over the split contracting dimensions: summed by an all-reduce over the partitions that hold
  // the other pieces of the contraction.
  Groups groups = groups_over(full, split_contracting);
  note(i, out_t,
       fmt::format("dot: contracting dimension split, partial products + all-reduce over {} groups", groups.size()));
  detail::Params a = collective_attrs(std::move(groups), -1, "add");
  return Local{add(Opcode::kAllReduce, local->shape, {local}, a, out_t), out_t};
}

Local Partitioner::reduce(const Instruction& i) {
  if (i.operands.size() != 2 || i.shape.is_tuple) return generic(i, "a variadic reduce runs replicated");
  const Local& x = map_.at(i.operand(0));
  const auto& dims = dimensions_of(i);
  Reducer r = reducer_of(i);
  std::vector<int64_t> split, kept;
  for (int64_t d = 0; d < x.t.rank(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (reduced && x.t.dims[static_cast<size_t>(d)] > 1) split.push_back(d);
    if (!reduced) kept.push_back(d);
  }
  if (!split.empty() && !is_identity(*i.operand(1), r))
    return generic(i, "a reduce over a split dimension whose init is not the reducer's identity runs replicated");
  Instruction* init = reshard(map_.at(i.operand(1)), replicated(0, n_), i).v;
  Tiles out_t = regroup(x.t, kept);
  Instruction* xv = mask_padding(x.v, x.t, x.global, split, init);  // padding counts as the identity
  Instruction* local = add(Opcode::kReduce, local_shape(i.shape, out_t, i), {xv, init}, i.attrs, out_t);
  if (split.empty()) {
    note(i, out_t, "reduce: kept dimensions keep their tiles, no communication");
    return Local{local, out_t};
  }
  detail::Params a = collective_attrs(groups_over(x.t, split), -1, reducer_name(r));
  note(i, out_t, "reduce: over a split dimension, local reduce + all-reduce");
  return Local{add(Opcode::kAllReduce, local->shape, {local}, a, out_t), out_t};
}

std::optional<Local> Partitioner::manual(const Instruction& i) {
  bool any = false;
  for (auto* o : i.operands) any = any || map_.at(o).manual;
  auto manual_local = [&](Instruction* v) {
    Local l{v, v->shape.is_tuple ? Tiles{} : replicated(v->shape.rank(), n_)};
    if (v->shape.is_tuple)
      for (auto& e : v->shape.tuple_shapes) l.elems.push_back(replicated(e.rank(), n_));
    l.manual = true;
    return l;
  };
  auto region_sharding = [&](const Instruction& at) {
    return tiles_of(HloSharding::parse(at.attrs.get_str("mhlo.sharding")), at.shape.rank(), n_, at);
  };
  if (i.opcode == Opcode::kCustomCall) {
    const std::string& target = i.attrs.get_str("custom_call_target");
    if (target == "Sharding") {
      const Local& x = map_.at(i.operand(0));
      if (x.manual) return x;
      if (i.attrs.get_str("mhlo.sharding") == "{manual}") {  // a body's result computed without its operands
        if (x.t.tiled()) unsupported(i, "a shard_map body returns a split value from outside the region");
        return manual_local(x.v);
      }
      Local r = reshard(x, region_sharding(i), i);
      note(i, r.t, "shard_map: the operand resharded to its in_spec");
      return r;
    }
    if (target == "SPMDFullToShardShape") {
      const Local& x = map_.at(i.operand(0));
      if (x.manual || x.v->shape.dims != i.shape.dims)
        unsupported(i, fmt::format("a shard_map operand's tile {} is not its block {}", x.v->shape.str(),
                                   i.shape.str()));
      return manual_local(x.v);
    }
    if (target == "SPMDShardToFullShape") {
      const Local& z = map_.at(i.operand(0));
      Tiles t = region_sharding(i);
      if ((!z.manual && z.t.tiled()) || local_shape(i.shape, t, i).dims != z.v->shape.dims)
        unsupported(i, fmt::format("a shard_map result's block {} is not the tile of {}", z.v->shape.str(),
                                   i.shape.str()));
      note(i, t, "shard_map: the result's out_spec");
      // The partition's block is its tile of the result. A value the region did not make itself (an operand passed
      // through, a result returned twice) is copied, so its other uses keep their own sharding.
      Instruction* block = z.v;
      if (!z.manual || sharding_of(*block)) block = c_->add(Opcode::kCopy, block->shape, {block});
      set_sharding(*block, to_sharding(t));
      return Local{block, t};
    }
  }
  if (!any) return std::nullopt;
  // Per-device code: every operand is the partition's own value (a manual one, or a replicated one).
  std::vector<Instruction*> ops;
  for (auto* o : i.operands) {
    const Local& l = map_.at(o);
    if (!l.manual && l.t.tiled()) unsupported(i, "a shard_map body reads a split value from outside the region");
    ops.push_back(l.v);
  }
  Instruction* ni = c_->add(i.opcode, i.shape, ops, i.attrs);
  ni->called = i.called;
  ni->literal = i.literal;
  return manual_local(ni);
}

Local Partitioner::visit(const Instruction& i) {
  if (auto m = manual(i)) return *m;
  switch (i.opcode) {
    case Opcode::kParameter: {
      if (i.shape.is_tuple) unsupported(i, "a tuple-shaped parameter");
      auto s = sharding_of(i);
      Tiles t = params_ ? (*params_).at(static_cast<size_t>(i.parameter_number))
                        : s ? tiles_of(*s, i.shape.rank(), n_, i) : replicated(i.shape.rank(), n_);
      for (int64_t d = 0; d < i.shape.rank() && !params_; ++d)
        if (uneven(i.shape.dims, t, d))
          unsupported(i, fmt::format("dimension {} of argument {} is split {} ways, but does not divide evenly (an "
                                     "argument's shards divide its dimensions, as a jax.Array's do; values inside "
                                     "the program may split unevenly)",
                                     d, i.shape.str(), t.dims[static_cast<size_t>(d)]));
      Instruction* p = c_->add_parameter(i.parameter_number, local_shape(i.shape, t, i), i.name);
      set_sharding(*p, to_sharding(t));
      if (!params_) note(i, t, s ? "the argument's sharding" : "an argument without a sharding is replicated");
      return Local{p, t};
    }
    case Opcode::kConstant:
    case Opcode::kIota:
      return generic(i, "constants are replicated");
    case Opcode::kBroadcastInDim: {
      const auto& bd = broadcast_dimensions_of(i);
      if (!std::is_sorted(bd.begin(), bd.end())) return generic(i, "a broadcast that reorders dimensions");
      const Local& x = map_.at(i.operand(0));
      std::vector<int64_t> keep(static_cast<size_t>(i.shape.rank()), -1);
      for (size_t k = 0; k < bd.size(); ++k) keep[static_cast<size_t>(bd[k])] = static_cast<int64_t>(k);
      Tiles t = regroup(x.t, keep);
      note(i, t, "broadcast: the operand's tiles on their result dimensions");
      return Local{add(i.opcode, local_shape(i.shape, t, i), {x.v}, i.attrs, t), t};
    }
    case Opcode::kTranspose: {
      const Local& x = map_.at(i.operand(0));
      Tiles t = regroup(x.t, i.attrs.get_ints("permutation"));
      note(i, t, "transpose: the operand's tiles, permuted");
      return Local{add(i.opcode, local_shape(i.shape, t, i), {x.v}, i.attrs, t), t};
    }
    case Opcode::kDot:
      return dot(i);
    case Opcode::kReduce:
      return reduce(i);
    case Opcode::kGather:
      return gather(i);
    case Opcode::kScatter:
      return scatter(i);
    case Opcode::kConvolution:
      return convolution(i);
    case Opcode::kTuple: {
      std::vector<Instruction*> ops;
      std::vector<Tiles> elems;
      std::vector<Shape> shapes;
      for (auto* o : i.operands) {
        ops.push_back(map_.at(o).v);
        elems.push_back(map_.at(o).t);
        shapes.push_back(ops.back()->shape);
      }
      return Local{c_->add(Opcode::kTuple, Shape::tuple(shapes), ops), Tiles{}, elems};
    }
    case Opcode::kGetTupleElement: {
      const Local& x = map_.at(i.operand(0));
      size_t k = static_cast<size_t>(tuple_index_of(i));
      Tiles t = x.elems.at(k);
      return Local{add(i.opcode, x.v->shape.tuple_shapes.at(k), {x.v}, i.attrs, t), t};
    }
    case Opcode::kWhile:
      return while_loop(i);
    case Opcode::kConditional:
      return conditional(i);
    case Opcode::kReshape:
      return reshape(i);
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
      return slicing(i);
    default:
      if (is_elementwise(i.opcode)) return elementwise(i);
      return generic(i, fmt::format("{} is not partitioned yet: its operands are all-gathered", opcode_name(i.opcode)));
  }
}

void Partitioner::run() {
  Computation* old = m_.entry;
  Computation* entry = partition(*old, nullptr, nullptr, nullptr);
  m_.entry = entry;
  // Drop what the new entry no longer calls: the old entry, the old loop bodies and branches, and the partitioned
  // bodies of the rounds that chose a loop's carry tiles.
  std::vector<const Computation*> live{entry};
  for (size_t k = 0; k < live.size(); ++k)
    for (auto& inst : live[k]->instructions)
      for (auto* c : inst->called)
        if (std::find(live.begin(), live.end(), c) == live.end()) live.push_back(c);
  std::erase_if(m_.computations, [&](const std::unique_ptr<Computation>& c) {
    return std::find(live.begin(), live.end(), c.get()) == live.end();
  });
}

}  // namespace spmd

bool SpmdPartitioner::run(Module& m) {
  if (n_ < 1) throw CompileError(fmt::format("[spmd-partitioner] num_partitions must be positive, got {}", n_));
  spmd::Partitioner(m, n_).run();
  return true;
}

}  // namespace jitx::hlo
