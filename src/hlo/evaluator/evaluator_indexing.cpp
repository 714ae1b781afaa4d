// Reference evaluator for gather, scatter, sort, top_k and convolution: plain loops that follow the StableHLO spec.
#include "hlo/evaluator/evaluator_indexing.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/indexing.h"
#include "core/float_minmax.h"

namespace jitx::evaluator {
namespace {
using detail::Literal;
using hlo::Instruction;
using Ints = std::vector<int64_t>;


Literal copy_literal(const Literal& x) {
  Literal out = Literal::make(x.dtype, x.dims);
  std::memcpy(out.data(), x.data(), x.nbytes());
  return out;
}

/// out[o] = reducer(out[o], upd[u]); floats in double (rounded on store), integers wrap, bools use or/and.
void combine(hlo::Reducer r, Literal& out, int64_t o, const Literal& upd, int64_t u) {
  using hlo::Reducer;
  if (r == Reducer::kReplace) return copy_elem(out, o, upd, u);
  DType d = out.dtype;
  if (is_floating(d)) {
    double a = out.get_f64(o), b = upd.get_f64(u), v = 0;
    if (r == Reducer::kAdd) v = a + b;
    else if (r == Reducer::kMul) v = a * b;
    else if (r == Reducer::kMax) v = detail::float_max(a, b);
    else if (r == Reducer::kMin) v = detail::float_min(a, b);
    else JITX_ASSERT(false, "scatter reducer {}", hlo::reducer_name(r));
    return out.set_f64(o, v);
  }
  if (is_bool(d)) {
    bool a = out.get_u64(o) != 0, b = upd.get_u64(u) != 0;
    bool any = r == Reducer::kAdd || r == Reducer::kMax;
    return out.set_i64(o, any ? (a || b) : (a && b));
  }
  if (is_signed_integer(d)) {
    int64_t a = out.get_i64(o), b = upd.get_i64(u);
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    int64_t v = r == Reducer::kAdd ? static_cast<int64_t>(ua + ub)
                : r == Reducer::kMul ? static_cast<int64_t>(ua * ub)
                : r == Reducer::kMax ? std::max(a, b)
                                     : std::min(a, b);
    return out.set_i64(o, v);
  }
  uint64_t a = out.get_u64(o), b = upd.get_u64(u);
  uint64_t v = r == Reducer::kAdd   ? a + b
               : r == Reducer::kMul ? a * b
               : r == Reducer::kMax ? std::max(a, b)
                                    : std::min(a, b);
  out.set_u64(o, v);
}
}  // namespace

Literal eval_gather(const Instruction& inst, const Literal& x, const Literal& idx) {
  auto ix = hlo::WindowIndexing::gather(hlo::GatherDimensionNumbers::of(inst), x.dims, idx.dims, inst.shape.dims);
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  auto cursor = ix.cursor();
  detail::IndexCounter bc(ix.batch_dims);
  for (int64_t b = 0; b < detail::num_elements(ix.batch_dims); ++b, bc.next()) {
    int64_t base = 0, start = ix.locate(bc.idx.data(), idx.data(), idx.dtype, base, cursor);
    hlo::for_each_offset(ix.window_dims, ix.window_strides, ix.window_operand_strides,
                         [&](int64_t o, int64_t w) { copy_elem(out, base + o, x, start + w); });
  }
  return out;
}

Literal eval_scatter(const Instruction& inst, const Literal& x, const Literal& idx, const Literal& upd) {
  auto ix = hlo::WindowIndexing::scatter(hlo::ScatterDimensionNumbers::of(inst), x.dims, idx.dims, upd.dims);
  hlo::Reducer reducer = hlo::reducer_of(inst);
  Literal out = copy_literal(x);
  auto cursor = ix.cursor();
  detail::IndexCounter bc(ix.batch_dims);
  // In update order: with duplicate indices the later update wins (replace) or combines after the earlier one.
  for (int64_t b = 0; b < detail::num_elements(ix.batch_dims); ++b, bc.next()) {
    int64_t base = 0, start = ix.locate(bc.idx.data(), idx.data(), idx.dtype, base, cursor);
    if (start < 0) continue;  // a window that does not fit is dropped
    hlo::for_each_offset(ix.window_dims, ix.window_strides, ix.window_operand_strides,
                         [&](int64_t u, int64_t w) { combine(reducer, out, start + w, upd, base + u); });
  }
  return out;
}

Value eval_sort(const Instruction& inst, const std::vector<const Literal*>& ops) {
  auto cfg = hlo::SortConfig::of(inst);
  hlo::SortLines lines(ops[0]->dims, cfg.dimension);
  std::vector<const void*> keys;
  std::vector<DType> key_dtypes;
  for (int64_t k = 0; k < cfg.num_keys; ++k) keys.push_back(ops[k]->data()), key_dtypes.push_back(ops[k]->dtype);
  std::vector<Literal> outs;
  for (auto* o : ops) outs.push_back(Literal::make(o->dtype, o->dims));
  hlo::SortScratch scratch;
  Ints perm(lines.n);
  // A stable sort is a valid answer for is_stable=false too.
  for (int64_t l = 0; l < lines.count; ++l) {
    int64_t base = lines.base(l);
    hlo::sort_line(keys, key_dtypes, base, lines.stride, lines.n, perm.data(), scratch);
    for (size_t k = 0; k < ops.size(); ++k)
      for (int64_t t = 0; t < lines.n; ++t)
        copy_elem(outs[k], base + t * lines.stride, *ops[k], base + perm[t] * lines.stride);
  }
  if (outs.size() == 1) return Value{outs[0], {}, false};
  Value v;
  v.is_tuple = true;
  for (auto& o : outs) v.tuple.push_back(Value{o, {}, false});
  return v;
}

Value eval_top_k(const Instruction& inst, const Literal& x) {
  int64_t k = hlo::top_k_of(inst);
  int64_t n = x.dims.back(), rows = n == 0 ? 0 : x.size() / n;
  Ints out_dims = x.dims;
  out_dims.back() = k;
  Literal vals = Literal::make(x.dtype, out_dims), inds = Literal::make(DType::int32, out_dims);
  hlo::SortScratch scratch;
  Ints pos(k);
  for (int64_t r = 0; r < rows; ++r) {
    hlo::top_k_line(x.data(), x.dtype, r * n, n, k, pos.data(), scratch);
    for (int64_t t = 0; t < k; ++t) {
      copy_elem(vals, r * k + t, x, r * n + pos[t]);
      inds.set_i64(r * k + t, pos[t]);
    }
  }
  Value v;
  v.is_tuple = true;
  v.tuple.push_back(Value{vals, {}, false});
  v.tuple.push_back(Value{inds, {}, false});
  return v;
}

Literal eval_convolution(const Instruction& inst, const Literal& lhs, const Literal& rhs) {
  auto conv = hlo::ConvConfig::of(inst);
  const hlo::ConvDimensionNumbers& dn = conv.dnums;
  const hlo::Window& win = conv.window;  // its dimensions are the kernel's spatial extents
  const Ints &in_sp = dn.input_spatial_dimensions, &k_sp = dn.kernel_spatial_dimensions,
             &out_sp = dn.output_spatial_dimensions;
  int64_t g = conv.feature_group_count, bg = conv.batch_group_count;
  size_t nsp = in_sp.size();
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  auto lst = detail::row_major_strides(lhs.dims), rst = detail::row_major_strides(rhs.dims);
  int64_t o_feat = rhs.dims[dn.kernel_output_feature_dimension], i_feat = rhs.dims[dn.kernel_input_feature_dimension];
  int64_t out_batch = out.dims[dn.output_batch_dimension];
  int64_t wn = detail::num_elements(win.dimensions);
  bool fl = is_floating(lhs.dtype), sg = is_signed_integer(lhs.dtype);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    int64_t b = oc.idx[dn.output_batch_dimension], f = oc.idx[dn.output_feature_dimension];
    int64_t fgroup = f / (o_feat / g), bgroup = f / (o_feat / bg);
    int64_t lhs_base = (bgroup * out_batch + b) * lst[dn.input_batch_dimension];
    int64_t rhs_base = f * rst[dn.kernel_output_feature_dimension];
    double facc = 0;
    uint64_t iacc = 0;
    detail::IndexCounter wc(win.dimensions);
    for (int64_t w = 0; w < wn; ++w, wc.next()) {
      int64_t lsp = lhs_base, rsp = rhs_base;
      bool inside = true;
      for (size_t k = 0; k < nsp && inside; ++k) {
        // Position in the dilated, padded lhs; only the points of the undilated lhs contribute.
        int64_t pos = oc.idx[out_sp[k]] * win.strides[k] + wc.idx[k] * win.window_dilations[k] - win.padding[k].low;
        int64_t ld = win.base_dilations[k];
        if (pos < 0 || pos % ld != 0 || pos / ld >= lhs.dims[in_sp[k]]) inside = false;
        else lsp += (pos / ld) * lst[in_sp[k]];
        rsp += wc.idx[k] * rst[k_sp[k]];
      }
      if (!inside) continue;
      for (int64_t c = 0; c < i_feat; ++c) {
        int64_t li = lsp + (fgroup * i_feat + c) * lst[dn.input_feature_dimension];
        int64_t ri = rsp + c * rst[dn.kernel_input_feature_dimension];
        if (fl) facc += lhs.get_f64(li) * rhs.get_f64(ri);
        else if (sg) iacc += static_cast<uint64_t>(lhs.get_i64(li)) * static_cast<uint64_t>(rhs.get_i64(ri));
        else iacc += lhs.get_u64(li) * rhs.get_u64(ri);
      }
    }
    if (fl) out.set_f64(o, facc);
    else out.set_i64(o, static_cast<int64_t>(iacc));
  }
  return out;
}

}  // namespace jitx::evaluator
