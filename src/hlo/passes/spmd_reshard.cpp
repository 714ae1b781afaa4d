// Moving a partitioned value between tilings (see spmd_partitioner_internal.h): same placement (nothing), a
// refinement (a local slice), a move between dimensions (all-to-all), or all-gathers and a slice; uneven tiles'
// padding and the masks that keep it from counting.
#include <string>
#include <vector>

#include "hlo/passes/spmd_partitioner_internal.h"

namespace jitx::hlo::spmd {

Local Partitioner::reshard(const Local& x, const Tiles& to, const Instruction& at) {
  if (same_placement(x.t, to)) {
    Local same{x.v, to};
    same.global = x.global;
    return same;
  }
  auto key = std::make_pair(x.v, to_sharding(x.t).to_string() + "->" + to_sharding(to).to_string());
  if (auto it = reshards_.find(key); it != reshards_.end()) return it->second;
  Local r = reshard_uncached(x, to, at);
  r.global = x.global;
  reshards_[key] = r;
  return r;
}

Instruction* Partitioner::tile_offset(const Tiles& t, int64_t d, int64_t tile, int64_t ratio) {
  Instruction* pid =
      c_->add(Opcode::kConvert, Shape(DType::int32, {}), {c_->add(Opcode::kPartitionId, Shape(DType::uint32, {}), {})});
  auto table = detail::Literal::make(DType::int32, {n_});
  for (int64_t p = 0; p < n_; ++p) {
    int64_t k = tile_index(t, p, d);
    table.set_i64(p, (ratio > 0 ? k % ratio : k) * tile);
  }
  Instruction* tc = c_->add_constant(std::move(table));
  Instruction* one = c_->add(Opcode::kDynamicSlice, Shape(DType::int32, {1}), {tc, pid});
  return c_->add(Opcode::kReshape, Shape(DType::int32, {}), {one});
}

Instruction* Partitioner::mask_padding(Instruction* v, const Tiles& t, const std::vector<int64_t>& global,
                                       const std::vector<int64_t>& dims, Instruction* fill) {
  Instruction* keep = nullptr;
  const Shape& ls = v->shape;
  detail::Params ba;
  ba.set("broadcast_dimensions", std::vector<int64_t>{});
  for (int64_t d : dims) {
    if (t.dims[static_cast<size_t>(d)] == 1 || !uneven(global, t, d)) continue;
    detail::Params ia;
    ia.set("iota_dimension", d);
    Shape s32(DType::int32, ls.dims), pred(DType::bool_, ls.dims);
    Instruction* iota = c_->add(Opcode::kIota, s32, {}, ia);
    Instruction* off = tile_offset(t, d, ls.dims[static_cast<size_t>(d)]);
    Instruction* pos = c_->add(Opcode::kAdd, s32, {iota, c_->add(Opcode::kBroadcastInDim, s32, {off}, ba)});
    Instruction* size = c_->add(Opcode::kBroadcastInDim, s32, {s32_scalar(global[static_cast<size_t>(d)])}, ba);
    detail::Params ca;
    ca.set("direction", std::string("LT"));
    ca.set("compare_type", std::string("SIGNED"));
    Instruction* in = c_->add(Opcode::kCompare, pred, {pos, size}, ca);
    keep = keep ? c_->add(Opcode::kAnd, pred, {keep, in}) : in;
  }
  if (!keep) return v;
  Instruction* f = c_->add(Opcode::kBroadcastInDim, Shape(ls.dtype, ls.dims), {fill}, ba);
  Instruction* out = c_->add(Opcode::kSelect, ls, {keep, v, f});
  if (auto s = sharding_of(*v)) set_sharding(*out, *s);
  return out;
}

std::optional<Local> Partitioner::all_to_all(const Local& x, const Tiles& to, const Instruction& at) {
  int64_t r = x.t.rank(), a = -1, b = -1;
  if (r != to.rank() || x.global.size() != static_cast<size_t>(r)) return std::nullopt;
  for (int64_t d = 0; d < r; ++d) {
    int64_t f = x.t.dims[static_cast<size_t>(d)], t = to.dims[static_cast<size_t>(d)];
    if (f == t) continue;
    if (f > 1 && t == 1 && a < 0) a = d;
    else if (f == 1 && t > 1 && b < 0) b = d;
    else return std::nullopt;
  }
  if (a < 0 || b < 0) return std::nullopt;
  int64_t k = x.t.dims[static_cast<size_t>(a)];
  if (to.dims[static_cast<size_t>(b)] != k || uneven(x.global, x.t, a) || uneven(x.global, to, b)) return std::nullopt;
  for (int64_t p : x.t.devices) {
    if (tile_index(x.t, p, a) != tile_index(to, p, b)) return std::nullopt;
    for (int64_t d = 0; d < r; ++d)
      if (d != a && d != b && tile_index(x.t, p, d) != tile_index(to, p, d)) return std::nullopt;
  }
  if (log_on())
    detail::log_line(fmt::format("[sharding] %{}: reshard {} -> {} by all-to-all", at.name,
                                 to_sharding(x.t).to_string(), to_sharding(to).to_string()));
  // All-to-all along b: chunk j of my columns goes to the partition holding row block j; chunk i of the result is
  // partition i's rows (of my columns). Then the chunks become rows: split b into (k, b/k), move k before a, merge.
  const Shape& ls = x.v->shape;
  Instruction* v = c_->add(Opcode::kAllToAll, ls, {x.v}, collective_attrs(groups_over(x.t, {a}), b));
  std::vector<int64_t> split;  // ls with b split into (k, ls[b] / k)
  for (int64_t d = 0; d < r; ++d) {
    if (d == b) {
      split.push_back(k);
      split.push_back(ls.dims[static_cast<size_t>(d)] / k);
    } else {
      split.push_back(ls.dims[static_cast<size_t>(d)]);
    }
  }
  v = c_->add(Opcode::kReshape, Shape(ls.dtype, split), {v});
  int64_t kpos = b, apos = a < b ? a : a + 1;  // positions in `split`
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r + 1; ++d) {
    if (d == kpos) continue;
    if (d == apos) perm.push_back(kpos);
    perm.push_back(d);
  }
  std::vector<int64_t> tdims;
  for (auto d : perm) tdims.push_back(split[static_cast<size_t>(d)]);
  detail::Params ta;
  ta.set("permutation", perm);
  v = c_->add(Opcode::kTranspose, Shape(ls.dtype, tdims), {v}, ta);
  Shape out = local_shape(Shape(ls.dtype, x.global), to, at);
  return Local{add(Opcode::kReshape, out, {v}, {}, to), to};
}

Local Partitioner::reshard_uncached(const Local& x, const Tiles& to, const Instruction& at) {
  JITX_ASSERT(x.global.size() == static_cast<size_t>(x.t.rank()) && to.rank() == x.t.rank(),
              "reshard of %{} for %{}: global {} dims, tiles of rank {} -> {}", x.v->name, at.name, x.global.size(),
              x.t.rank(), to.rank());
  if (auto moved = all_to_all(x, to, at)) return *moved;
  if (log_on())
    detail::log_line(fmt::format("[sharding] %{}: reshard {} -> {}", at.name, to_sharding(x.t).to_string(),
                                 to_sharding(to).to_string()));
  Instruction* v = x.v;
  Shape s = v->shape;
  Tiles cur = x.t;
  bool even = true;
  for (int64_t d = 0; d < x.t.rank(); ++d) even = even && !uneven(x.global, x.t, d) && !uneven(x.global, to, d);
  bool local = even && refines(x.t, to);  // each partition slices the tile it holds
  for (int64_t d = 0; d < x.t.rank() && !local; ++d) {
    int64_t k = x.t.dims[static_cast<size_t>(d)];
    if (k == 1) continue;
    detail::Params a = collective_attrs(groups_over(x.t, {d}), d);
    s.dims[static_cast<size_t>(d)] *= k;
    cur.dims[static_cast<size_t>(d)] = 1;
    v = add(Opcode::kAllGather, s, {v}, a, replicated(x.t.rank(), n_));
  }
  if (!local && s.dims != x.global) {  // the gathered padded tiles: the global value, then its padding
    detail::Params sa;
    sa.set("start_indices", std::vector<int64_t>(s.dims.size(), 0));
    sa.set("limit_indices", x.global);
    sa.set("strides", std::vector<int64_t>(s.dims.size(), 1));
    s.dims = x.global;
    v = add(Opcode::kSlice, s, {v}, sa, replicated(x.t.rank(), n_));
  }
  if (!to.tiled()) return Local{v, to};
  Shape ls = local_shape(local ? global_of(s, x.t) : s, to, at);
  if (!local) {  // an uneven target: pad the global value to whole tiles, so no slice start is clamped
    std::vector<int64_t> high(s.dims.size(), 0);
    bool pad = false;
    for (size_t d = 0; d < s.dims.size(); ++d) {
      high[d] = ls.dims[d] * to.dims[d] - s.dims[d];
      pad = pad || high[d] > 0;
    }
    if (pad) {
      detail::Params pa;
      pa.set("edge_padding_low", std::vector<int64_t>(s.dims.size(), 0));
      pa.set("edge_padding_high", high);
      pa.set("interior_padding", std::vector<int64_t>(s.dims.size(), 0));
      Shape ps = s;
      for (size_t d = 0; d < s.dims.size(); ++d) ps.dims[d] += high[d];
      v = add(Opcode::kPad, ps, {v, zero_scalar(s.dtype)}, pa, replicated(x.t.rank(), n_));
    }
  }
  std::vector<Instruction*> ops{v};
  for (int64_t d = 0; d < to.rank(); ++d) {
    if (to.dims[static_cast<size_t>(d)] == 1) {
      ops.push_back(s32_scalar(0));
      continue;
    }
    // The offset inside what the partition holds: the whole dimension, or (refining) its current tile.
    int64_t ratio = local ? to.dims[static_cast<size_t>(d)] / x.t.dims[static_cast<size_t>(d)] : 0;
    ops.push_back(tile_offset(to, d, ls.dims[static_cast<size_t>(d)], ratio));
  }
  return Local{add(Opcode::kDynamicSlice, ls, ops, {}, to), to};
}

}  // namespace jitx::hlo::spmd
