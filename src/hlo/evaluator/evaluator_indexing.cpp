// Reference evaluator for gather, scatter, sort, top_k and convolution: plain loops that follow the StableHLO spec.
#include "hlo/evaluator/evaluator_indexing.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/errors.h"
#include "core/float_minmax.h"

namespace jitx::evaluator {
namespace {
using detail::Literal;
using hlo::Instruction;
using Ints = std::vector<int64_t>;

bool contains(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }


inline void copy_elem(Literal& dst, int64_t i, const Literal& src, int64_t j) {
  size_t es = dtype_size(dst.dtype);
  std::memcpy(static_cast<char*>(dst.data()) + i * es, static_cast<const char*>(src.data()) + j * es, es);
}

Literal copy_literal(const Literal& x) {
  Literal out = Literal::make(x.dtype, x.dims);
  std::memcpy(out.data(), x.data(), x.nbytes());
  return out;
}

/// An index value read as int64 (huge uint64 values saturate, so they stay out of range).
int64_t read_index(const Literal& l, int64_t i) {
  if (l.dtype == DType::uint64) return static_cast<int64_t>(std::min<uint64_t>(l.get_u64(i), INT64_MAX));
  return l.get_i64(i);
}

/// The axes of an index array other than index_vector_dim, in order: they pair with the result's batch axes.
Ints index_batch_axes(int64_t rank, int64_t ivd) {
  Ints out;
  for (int64_t d = 0; d < rank; ++d)
    if (d != ivd) out.push_back(d);
  return out;
}

/// The start vector at idx_pos (index_vector_dim is walked here), scattered into operand axes by index_map.
void read_start(const Literal& idx, Ints& idx_pos, int64_t ivd, const Ints& index_map, const Ints& idx_strides,
                Ints& full_start) {
  int64_t rank = static_cast<int64_t>(idx.dims.size());
  for (size_t j = 0; j < index_map.size(); ++j) {
    if (ivd < rank) idx_pos[ivd] = static_cast<int64_t>(j);
    full_start[index_map[j]] = read_index(idx, detail::linear_index(idx_pos, idx_strides));
  }
}

/// -1, 0, 1 comparing elements a and b of l in sort order: floats with -0.0 == 0.0 and NaNs (all equal) last.
int compare_keys(const Literal& l, int64_t a, int64_t b) {
  if (is_floating(l.dtype)) {
    double x = l.get_f64(a), y = l.get_f64(b);
    bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (is_signed_integer(l.dtype)) {
    int64_t x = l.get_i64(a), y = l.get_i64(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  uint64_t x = l.get_u64(a), y = l.get_u64(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/// compare_keys in IEEE's total order for floats (XLA's TopK order): -NaN first, -0.0 below 0.0, +NaN last.
int compare_total(const Literal& l, int64_t a, int64_t b) {
  if (!is_floating(l.dtype)) return compare_keys(l, a, b);
  auto key = [&](int64_t i) {
    int64_t k = std::bit_cast<int64_t>(l.get_f64(i));
    return k < 0 ? k ^ std::numeric_limits<int64_t>::max() : k;
  };
  int64_t x = key(a), y = key(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/// out[o] = reducer(out[o], upd[u]); floats in double (rounded on store), integers wrap, bools use or/and.
void combine(const std::string& r, Literal& out, int64_t o, const Literal& upd, int64_t u) {
  if (r == "replace") return copy_elem(out, o, upd, u);
  DType d = out.dtype;
  if (is_floating(d)) {
    double a = out.get_f64(o), b = upd.get_f64(u), v = 0;
    if (r == "add") v = a + b;
    else if (r == "mul") v = a * b;
    else if (r == "max") v = detail::float_max(a, b);
    else if (r == "min") v = detail::float_min(a, b);
    else JITX_ASSERT(false, "scatter reducer {}", r);
    return out.set_f64(o, v);
  }
  if (is_bool(d)) {
    bool a = out.get_u64(o) != 0, b = upd.get_u64(u) != 0;
    bool any = r == "add" || r == "max";
    return out.set_i64(o, any ? (a || b) : (a && b));
  }
  if (is_signed_integer(d)) {
    int64_t a = out.get_i64(o), b = upd.get_i64(u);
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    int64_t v = r == "add" ? static_cast<int64_t>(ua + ub)
                : r == "mul" ? static_cast<int64_t>(ua * ub)
                : r == "max" ? std::max(a, b)
                             : std::min(a, b);
    return out.set_i64(o, v);
  }
  uint64_t a = out.get_u64(o), b = upd.get_u64(u);
  uint64_t v = r == "add" ? a + b : r == "mul" ? a * b : r == "max" ? std::max(a, b) : std::min(a, b);
  out.set_u64(o, v);
}
}  // namespace

Literal eval_gather(const Instruction& inst, const Literal& x, const Literal& idx) {
  const auto& a = inst.attrs;
  const auto &offset = a.get_ints("offset_dims"), &collapsed = a.get_ints("collapsed_slice_dims");
  const auto &obd = a.get_ints("operand_batching_dims"), &sibd = a.get_ints("start_indices_batching_dims");
  const auto &sim = a.get_ints("start_index_map"), &sizes = a.get_ints("slice_sizes");
  int64_t ivd = a.get_int("index_vector_dim");
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  int64_t rank = static_cast<int64_t>(out.dims.size()), xr = static_cast<int64_t>(x.dims.size());
  Ints out_batch;  // result axes that are not offset axes, paired with the index array's batch axes
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(offset, d)) out_batch.push_back(d);
  Ints idx_batch = index_batch_axes(static_cast<int64_t>(idx.dims.size()), ivd);
  Ints offset_operand;  // operand axes that are not collapsed or batching, paired with offset_dims
  for (int64_t d = 0; d < xr; ++d)
    if (!contains(collapsed, d) && !contains(obd, d)) offset_operand.push_back(d);
  auto xs = detail::row_major_strides(x.dims), is = detail::row_major_strides(idx.dims);
  Ints idx_pos(idx.dims.size(), 0), start(xr, 0), operand_index(xr, 0);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    for (size_t k = 0; k < out_batch.size(); ++k) idx_pos[idx_batch[k]] = oc.idx[out_batch[k]];
    std::fill(start.begin(), start.end(), 0);
    read_start(idx, idx_pos, ivd, sim, is, start);
    for (int64_t d = 0; d < xr; ++d) operand_index[d] = std::clamp<int64_t>(start[d], 0, x.dims[d] - sizes[d]);
    for (size_t k = 0; k < obd.size(); ++k) operand_index[obd[k]] += idx_pos[sibd[k]];
    for (size_t k = 0; k < offset.size(); ++k) operand_index[offset_operand[k]] += oc.idx[offset[k]];
    copy_elem(out, o, x, detail::linear_index(operand_index, xs));
  }
  return out;
}

Literal eval_scatter(const Instruction& inst, const Literal& x, const Literal& idx, const Literal& upd) {
  const auto& a = inst.attrs;
  const auto &uwd = a.get_ints("update_window_dims"), &iwd = a.get_ints("inserted_window_dims");
  const auto &ibd = a.get_ints("input_batching_dims"), &sibd = a.get_ints("scatter_indices_batching_dims");
  const auto& sdod = a.get_ints("scatter_dims_to_operand_dims");
  int64_t ivd = a.get_int("index_vector_dim");
  const std::string& reducer = a.get_str("reducer");
  Literal out = copy_literal(x);
  int64_t xr = static_cast<int64_t>(x.dims.size()), ur = static_cast<int64_t>(upd.dims.size());
  Ints upd_scatter;
  for (int64_t d = 0; d < ur; ++d)
    if (!contains(uwd, d)) upd_scatter.push_back(d);
  Ints idx_batch = index_batch_axes(static_cast<int64_t>(idx.dims.size()), ivd);
  Ints window_operand;  // operand axes paired with update_window_dims
  for (int64_t d = 0; d < xr; ++d)
    if (!contains(iwd, d) && !contains(ibd, d)) window_operand.push_back(d);
  Ints extent(xr, 1);  // the window's size on each operand axis
  for (size_t k = 0; k < uwd.size(); ++k) extent[window_operand[k]] = upd.dims[uwd[k]];
  auto xs = detail::row_major_strides(x.dims), is = detail::row_major_strides(idx.dims);
  Ints idx_pos(idx.dims.size(), 0), start(xr, 0), result_index(xr, 0);
  detail::IndexCounter uc(upd.dims);
  for (int64_t u = 0; u < upd.size(); ++u, uc.next()) {
    for (size_t k = 0; k < upd_scatter.size(); ++k) idx_pos[idx_batch[k]] = uc.idx[upd_scatter[k]];
    std::fill(start.begin(), start.end(), 0);
    read_start(idx, idx_pos, ivd, sdod, is, start);
    for (size_t k = 0; k < ibd.size(); ++k) start[ibd[k]] += idx_pos[sibd[k]];
    // XLA drops a whole update window that does not fit inside the operand.
    bool fits = true;
    for (int64_t d = 0; d < xr && fits; ++d) fits = start[d] >= 0 && start[d] <= x.dims[d] - extent[d];
    if (!fits) continue;
    result_index = start;
    for (size_t k = 0; k < uwd.size(); ++k) result_index[window_operand[k]] += uc.idx[uwd[k]];
    combine(reducer, out, detail::linear_index(result_index, xs), upd, u);
  }
  return out;
}

Value eval_sort(const Instruction& inst, const std::vector<const Literal*>& ops) {
  int64_t dim = inst.attrs.get_int("dimension"), num_keys = inst.attrs.get_int("num_keys");
  const Ints& dims = ops[0]->dims;
  int64_t n = dims[dim];
  int64_t stride = detail::row_major_strides(dims)[dim];
  std::vector<Literal> outs;
  for (auto* o : ops) outs.push_back(Literal::make(o->dtype, o->dims));
  Ints lines = dims;
  lines[dim] = 1;
  auto strides = detail::row_major_strides(dims);
  detail::IndexCounter lc(lines);
  Ints perm(n);
  for (int64_t l = 0; l < detail::num_elements(lines); ++l, lc.next()) {
    int64_t base = detail::linear_index(lc.idx, strides);
    std::iota(perm.begin(), perm.end(), 0);
    // A stable sort is a valid answer for is_stable=false too.
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t i, int64_t j) {
      for (int64_t k = 0; k < num_keys; ++k) {
        int c = compare_keys(*ops[k], base + i * stride, base + j * stride);
        if (c != 0) return c < 0;
      }
      return false;
    });
    for (size_t k = 0; k < ops.size(); ++k)
      for (int64_t t = 0; t < n; ++t) copy_elem(outs[k], base + t * stride, *ops[k], base + perm[t] * stride);
  }
  if (outs.size() == 1) return Value{outs[0], {}, false};
  Value v;
  v.is_tuple = true;
  for (auto& o : outs) v.tuple.push_back(Value{o, {}, false});
  return v;
}

Value eval_top_k(const Instruction& inst, const Literal& x) {
  int64_t k = inst.attrs.get_int("k");
  int64_t n = x.dims.back(), rows = n == 0 ? 0 : x.size() / n;
  Ints out_dims = x.dims;
  out_dims.back() = k;
  Literal vals = Literal::make(x.dtype, out_dims), inds = Literal::make(DType::int32, out_dims);
  Ints perm(n);
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t i, int64_t j) { return compare_total(x, r * n + i, r * n + j) > 0; });
    for (int64_t t = 0; t < k; ++t) {
      copy_elem(vals, r * k + t, x, r * n + perm[t]);
      inds.set_i64(r * k + t, perm[t]);
    }
  }
  Value v;
  v.is_tuple = true;
  v.tuple.push_back(Value{vals, {}, false});
  v.tuple.push_back(Value{inds, {}, false});
  return v;
}

Literal eval_convolution(const Instruction& inst, const Literal& lhs, const Literal& rhs) {
  const auto& a = inst.attrs;
  const auto &ls = a.get_ints("lhs_spec"), &rs = a.get_ints("rhs_spec"), &os = a.get_ints("out_spec");
  const auto &strides = a.get_ints("window_strides"), &pad = a.get_ints("padding");
  const auto &ld = a.get_ints("lhs_dilation"), &rd = a.get_ints("rhs_dilation");
  int64_t g = a.get_int("feature_group_count"), bg = a.get_int("batch_group_count");
  size_t nsp = ls.size() - 2;
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  auto lst = detail::row_major_strides(lhs.dims), rst = detail::row_major_strides(rhs.dims);
  int64_t o_feat = rhs.dims[rs[0]], i_feat = rhs.dims[rs[1]], out_batch = out.dims[os[0]];
  Ints window(nsp);
  for (size_t k = 0; k < nsp; ++k) window[k] = rhs.dims[rs[2 + k]];
  int64_t wn = detail::num_elements(window);
  bool fl = is_floating(lhs.dtype), sg = is_signed_integer(lhs.dtype);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    int64_t b = oc.idx[os[0]], f = oc.idx[os[1]];
    int64_t fgroup = f / (o_feat / g), bgroup = f / (o_feat / bg);
    int64_t lhs_base = (bgroup * out_batch + b) * lst[ls[0]];
    int64_t rhs_base = f * rst[rs[0]];
    double facc = 0;
    uint64_t iacc = 0;
    detail::IndexCounter wc(window);
    for (int64_t w = 0; w < wn; ++w, wc.next()) {
      int64_t lsp = lhs_base, rsp = rhs_base;
      bool inside = true;
      for (size_t k = 0; k < nsp && inside; ++k) {
        // Position in the dilated, padded lhs; only the points of the undilated lhs contribute.
        int64_t pos = oc.idx[os[2 + k]] * strides[k] + wc.idx[k] * rd[k] - pad[2 * k];
        if (pos < 0 || pos % ld[k] != 0 || pos / ld[k] >= lhs.dims[ls[2 + k]]) inside = false;
        else lsp += (pos / ld[k]) * lst[ls[2 + k]];
        rsp += wc.idx[k] * rst[rs[2 + k]];
      }
      if (!inside) continue;
      for (int64_t c = 0; c < i_feat; ++c) {
        int64_t li = lsp + (fgroup * i_feat + c) * lst[ls[1]], ri = rsp + c * rst[rs[1]];
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
