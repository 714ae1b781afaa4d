// The partitioner's gather and scatter rules (see spmd_partitioner_internal.h).
//
// gather: indices split on their batch dimensions (a data-parallel embedding lookup) give the result those tiles on
// its batch dimensions, the table whole on every device; a table split on a dimension the gather takes whole (an
// embedding's feature dimension) gives the result that split on the matching offset dimension. No communication.
// scatter with an add reducer: indices and updates split on their scatter (batch) dimensions, the operand whole:
// each device adds its updates into zeros, an all-reduce sums the devices' contributions, and the operand is added
// once (an embedding's gradient). Anything else all-gathers its operands (generic).
#include <algorithm>

#include "hlo/passes/spmd_partitioner_internal.h"

namespace jitx::hlo::spmd {

namespace {
bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

Local Partitioner::gather(const Instruction& i) {
  auto dn = GatherDimensionNumbers::of(i);
  const Local &x = map_.at(i.operand(0)), &idx = map_.at(i.operand(1));
  if (!dn.operand_batching_dims.empty() || (x.t.tiled() && idx.t.tiled()))
    return generic(i, "a gather with both operands split, or batched (all-gathered)");
  int64_t out_rank = i.shape.rank(), idx_rank = i.operand(1)->shape.rank();
  // Output batch dimensions (not offset dims), in order, are the indices' dimensions without index_vector_dim.
  std::vector<int64_t> keep(static_cast<size_t>(out_rank), -1);
  if (idx.t.tiled()) {
    if (dn.index_vector_dim < idx_rank && idx.t.dims[static_cast<size_t>(dn.index_vector_dim)] > 1)
      return generic(i, "a gather whose index vectors are split (all-gathered)");
    int64_t k = 0;
    for (int64_t d = 0; d < out_rank; ++d) {
      if (contains(dn.offset_dims, d)) continue;
      if (k == dn.index_vector_dim) ++k;
      keep[static_cast<size_t>(d)] = k++;
    }
    Tiles t = regroup(idx.t, keep);
    note(i, t, "gather: the indices' batch tiles, the table whole");
    Instruction* table = reshard(x, replicated(i.operand(0)->shape.rank(), n_), i).v;
    return Local{add(i.opcode, local_shape(i.shape, t, i), {table, idx.v}, i.attrs, t), t};
  }
  if (!x.t.tiled()) {
    Tiles t = replicated(out_rank, n_);
    note(i, t, "gather: both operands whole");
    return Local{add(i.opcode, i.shape, {x.v, idx.v}, i.attrs, t), t};
  }
  // The table split: only on dimensions the gather takes whole, which land on offset dimensions in order.
  std::vector<int64_t> kept_operand;  // operand dims that are offset dims, in order
  const auto& in = i.operand(0)->shape.dims;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
    if (!contains(dn.collapsed_slice_dims, d)) kept_operand.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    if (x.t.dims[static_cast<size_t>(d)] == 1) continue;
    if (contains(dn.start_index_map, d) || contains(dn.collapsed_slice_dims, d) ||
        dn.slice_sizes[static_cast<size_t>(d)] != in[static_cast<size_t>(d)])
      return generic(i, "a gather that indexes a split dimension of its table (all-gathered)");
  }
  for (size_t k = 0; k < kept_operand.size() && k < dn.offset_dims.size(); ++k)
    keep[static_cast<size_t>(dn.offset_dims[k])] = kept_operand[k];
  Tiles t = regroup(x.t, keep);
  auto local = GatherDimensionNumbers::of(i);
  Shape ls = local_shape(Shape(x.v->shape.dtype, in), x.t, i);
  for (size_t d = 0; d < in.size(); ++d)
    if (x.t.dims[d] > 1) local.slice_sizes[d] = ls.dims[d];
  detail::Params attrs = i.attrs;
  local.set_on(attrs);
  note(i, t, "gather: the table's split on a dimension it takes whole");
  return Local{add(i.opcode, local_shape(i.shape, t, i), {x.v, idx.v}, attrs, t), t};
}

Local Partitioner::scatter(const Instruction& i) {
  if (i.operands.size() != 3 || i.shape.is_tuple) return generic(i, "a variadic scatter (all-gathered)");
  auto dn = ScatterDimensionNumbers::of(i);
  const Local &x = map_.at(i.operand(0)), &idx = map_.at(i.operand(1)), &upd = map_.at(i.operand(2));
  if (!idx.t.tiled() && !upd.t.tiled()) {
    std::vector<Instruction*> ops;
    for (auto* o : i.operands) ops.push_back(reshard(map_.at(o), replicated(o->shape.rank(), n_), i).v);
    Tiles t = replicated(i.shape.rank(), n_);
    note(i, t, "scatter: every operand whole");
    Instruction* s = add(i.opcode, i.shape, ops, i.attrs, t);
    s->called = i.called;
    return Local{s, t};
  }
  if (reducer_of(i) != Reducer::kAdd || !dn.input_batching_dims.empty() || x.t.tiled())
    return generic(i, "a scatter that is not an add of split updates into a whole operand (all-gathered)");
  for (int64_t d : dn.update_window_dims)  // each device's window would land at the window's start
    if (upd.t.dims[static_cast<size_t>(d)] > 1)
      return generic(i, "a scatter whose update windows are split (all-gathered)");
  // The updates' scatter dimensions (not window dims) match the indices' dimensions without index_vector_dim.
  int64_t idx_rank = i.operand(1)->shape.rank(), upd_rank = i.operand(2)->shape.rank();
  if (dn.index_vector_dim < idx_rank && idx.t.dims[static_cast<size_t>(dn.index_vector_dim)] > 1)
    return generic(i, "a scatter whose index vectors are split (all-gathered)");
  std::vector<int64_t> keep_upd(static_cast<size_t>(upd_rank), -1);
  int64_t k = 0;
  for (int64_t d = 0; d < upd_rank; ++d) {
    if (contains(dn.update_window_dims, d)) continue;
    if (k == dn.index_vector_dim) ++k;
    keep_upd[static_cast<size_t>(d)] = k++;
  }
  const Local& lead = idx.t.tiled() ? idx : upd;
  Tiles idx_t = lead.t;
  Tiles upd_t = regroup(idx_t, keep_upd);
  if (&lead == &upd) {  // the indices follow the updates' scatter dimensions
    std::vector<int64_t> keep_idx(static_cast<size_t>(idx_rank), -1);
    for (int64_t d = 0; d < upd_rank; ++d)
      if (keep_upd[static_cast<size_t>(d)] >= 0) keep_idx[static_cast<size_t>(keep_upd[static_cast<size_t>(d)])] = d;
    idx_t = regroup(upd.t, keep_idx);
    upd_t = upd.t;
  }
  for (int64_t d = 0; d < upd_t.rank(); ++d)  // padding would scatter garbage: uneven splits are gathered
    if (upd_t.dims[static_cast<size_t>(d)] > 1 && uneven(upd.global, upd_t, d))
      return generic(i, "a scatter of unevenly split updates (all-gathered)");
  Instruction* iv = reshard(idx, idx_t, i).v;
  Instruction* uv = reshard(upd, upd_t, i).v;
  Tiles whole = replicated(i.shape.rank(), n_);
  Instruction* zero = zero_scalar(i.shape.dtype);
  detail::Params ba;
  ba.set("broadcast_dimensions", std::vector<int64_t>{});
  Instruction* zeros = c_->add(Opcode::kBroadcastInDim, i.shape, {zero}, ba);
  Instruction* part = add(i.opcode, i.shape, {zeros, iv, uv}, i.attrs, whole);
  part->called = i.called;
  // The devices holding the same updates (a replication group of the updates' tiling) must add them once.
  std::vector<int64_t> split_dims;
  for (int64_t d = 0; d < upd_t.rank(); ++d)
    if (upd_t.dims[static_cast<size_t>(d)] > 1) split_dims.push_back(d);
  Instruction* sum =
      add(Opcode::kAllReduce, i.shape, {part}, collective_attrs(groups_over(upd_t, split_dims), -1, "add"), whole);
  Instruction* base = reshard(x, whole, i).v;
  note(i, whole, "scatter: each device adds its updates into zeros, an all-reduce, then the operand");
  return Local{add(Opcode::kAdd, i.shape, {base, sum}, {}, whole), whole};
}

}  // namespace jitx::hlo::spmd
