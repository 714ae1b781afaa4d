// The SPMD partitioner's convolution rule: the input split on its batch, feature and spatial dimensions; each
// spatial split completed by halos from the neighbouring partitions (collective-permute), a feature split (the
// contraction) summed by an all-reduce or reduce-scatter, the kernel split like the input on its input features.
#include "hlo/passes/spmd_partitioner_internal.h"

namespace jitx::hlo::spmd {

std::vector<std::pair<int64_t, int64_t>> Partitioner::shift_pairs(const Tiles& t, int64_t d, int64_t step) const {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t p : t.devices) {
    int64_t j = tile_index(t, p, d) + step;
    if (j < 0 || j >= t.dims[static_cast<size_t>(d)]) continue;
    for (int64_t q : t.devices) {
      bool to = tile_index(t, q, d) == j;  // and the same place in every other dimension and copy
      for (int64_t e = 0; e < static_cast<int64_t>(t.dims.size()) && to; ++e)
        if (e != d) to = tile_index(t, q, e) == tile_index(t, p, e);
      if (to) pairs.emplace_back(p, q);
    }
  }
  return pairs;
}

Instruction* Partitioner::local_slice(Instruction* v, std::vector<int64_t> lo, std::vector<int64_t> hi) {
  Shape s = v->shape;
  for (size_t d = 0; d < s.dims.size(); ++d) s.dims[d] = hi[d] - lo[d];
  detail::Params sa;
  sa.set("start_indices", lo);
  sa.set("limit_indices", hi);
  sa.set("strides", std::vector<int64_t>(lo.size(), 1));
  return c_->add(Opcode::kSlice, s, {v}, sa);
}

Instruction* Partitioner::halo(Instruction* v, const Tiles& t, int64_t d, int64_t count, bool from_previous) {
  size_t u = static_cast<size_t>(d);
  std::vector<int64_t> lo(v->shape.dims.size(), 0), hi = v->shape.dims;
  if (from_previous) lo[u] = hi[u] - count;  // the previous partition sends its last `count` elements
  else hi[u] = count;                         // the next one its first
  Instruction* edge = local_slice(v, lo, hi);
  CollectiveConfig cp;
  cp.channel_id = channel_++;
  cp.source_target_pairs = shift_pairs(t, d, from_previous ? 1 : -1);
  detail::Params pa;
  cp.set_on(pa);
  return c_->add(Opcode::kCollectivePermute, edge->shape, {edge}, pa);
}

Local Partitioner::convolution(const Instruction& i) {
  auto cfg = ConvConfig::of(i);
  const auto& dn = cfg.dnums;
  const Local& x = map_.at(i.operand(0));
  const auto& in = i.operand(0)->shape.dims;
  const auto& kernel = i.operand(1)->shape.dims;
  if (!x.t.tiled()) return generic(i, "convolution of an untiled input");
  if (cfg.feature_group_count != 1 || cfg.batch_group_count != 1)
    return generic(i, "a grouped convolution (all-gathered)");
  for (size_t d = 0; d < in.size(); ++d)
    if (x.t.dims[d] > 1 && in[d] % x.t.dims[d] != 0) return generic(i, "an uneven split of a convolution's input");
  // Each split spatial dimension must keep its size (stride 1, no dilation, padding low + high = window - 1) with
  // halos no larger than a tile.
  for (int64_t s = 0; s < dn.num_spatial_dims(); ++s) {
    size_t ld = static_cast<size_t>(dn.input_spatial_dimensions[static_cast<size_t>(s)]);
    if (x.t.dims[ld] == 1) continue;
    size_t us = static_cast<size_t>(s);
    int64_t w = kernel[static_cast<size_t>(dn.kernel_spatial_dimensions[us])], tile = in[ld] / x.t.dims[ld];
    const auto& pad = cfg.window.padding[us];
    if (cfg.window.strides[us] != 1 || cfg.window.base_dilations[us] != 1 || cfg.window.window_dilations[us] != 1 ||
        pad.low < 0 || pad.high < 0 || pad.low + pad.high != w - 1 || pad.low > tile || pad.high > tile)
      return generic(i, "a convolution over a split spatial dimension that does not keep its size (all-gathered)");
  }
  // The result's tiles: the input's batch and spatial splits, moved to the result's dimensions (its features come
  // from the kernel, whole).
  std::vector<int64_t> keep(static_cast<size_t>(i.shape.rank()));
  keep[static_cast<size_t>(dn.output_batch_dimension)] = dn.input_batch_dimension;
  keep[static_cast<size_t>(dn.output_feature_dimension)] = -1;
  for (size_t s = 0; s < dn.output_spatial_dimensions.size(); ++s)
    keep[static_cast<size_t>(dn.output_spatial_dimensions[s])] = dn.input_spatial_dimensions[s];
  Tiles out_t = regroup(x.t, keep);
  // The kernel: split like the input on the features they contract (a data-parallel weight gradient contracts the
  // batch), whole elsewhere.
  std::vector<int64_t> keep_k(static_cast<size_t>(i.operand(1)->shape.rank()), -1);
  keep_k[static_cast<size_t>(dn.kernel_input_feature_dimension)] = dn.input_feature_dimension;
  Instruction* k = reshard(map_.at(i.operand(1)), regroup(x.t, keep_k), i).v;
  Instruction* v = x.v;
  for (int64_t s = 0; s < dn.num_spatial_dims(); ++s) {
    int64_t ld = dn.input_spatial_dimensions[static_cast<size_t>(s)];
    if (x.t.dims[static_cast<size_t>(ld)] == 1) continue;
    auto& pad = cfg.window.padding[static_cast<size_t>(s)];
    // Zeros arrive where no partition sends (the first and last tiles): the convolution's own zero padding.
    std::vector<Instruction*> parts;
    if (pad.low > 0) parts.push_back(halo(v, x.t, ld, pad.low, true));
    parts.push_back(v);
    if (pad.high > 0) parts.push_back(halo(v, x.t, ld, pad.high, false));
    if (parts.size() > 1) {
      Shape es = v->shape;
      es.dims[static_cast<size_t>(ld)] += pad.low + pad.high;
      detail::Params ca;
      ca.set("dimension", ld);
      v = c_->add(Opcode::kConcatenate, es, parts, ca);
    }
    pad = WindowPadding{};
  }
  detail::Params attrs = i.attrs;
  cfg.set_on(attrs);
  Instruction* local = add(Opcode::kConvolution, local_shape(i.shape, out_t, i), {v, k}, attrs, out_t);
  if (x.t.dims[static_cast<size_t>(dn.input_feature_dimension)] == 1) {
    note(i, out_t, "convolution: the input's batch and spatial splits, with halos from the neighbouring partitions");
    return Local{local, out_t};
  }
  return sum_partials(i, local, x.t, keep, {dn.input_feature_dimension}, out_t);
}

}  // namespace jitx::hlo::spmd
