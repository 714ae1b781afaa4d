// Convolution: conv_general_dilated with JAX's dimension numbers, lowered to HLO convolution.
#include <algorithm>
#include <numeric>

#include "core/primitive.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using hlo::Opcode;
using Outs = std::vector<ShapedArray>;
using Ints = std::vector<int64_t>;
using A = const Array&;

// --- JVP and transpose rules (JAX's _conv_general_dilated_transpose_{lhs,rhs}) ---------------------
const Primitive& conv() { return *find_primitive("conv_general_dilated"); }
int64_t dilate(int64_t n, int64_t d) { return n == 0 ? 0 : 1 + d * (n - 1); }
Ints spatial(const Ints& spec) { return Ints(spec.begin() + 2, spec.end()); }
Ints spec_transpose(const Ints& spec) {
  Ints t = spec;
  std::swap(t[0], t[1]);
  return t;
}
Ints take(const Shape& s, const Ints& axes) {
  Ints out;
  for (auto a : axes) out.push_back(s[a]);
  return out;
}
/// Splits axis src into (size1, rest).
Array reshape_axis_out_of(int64_t src, int64_t size1, A x) {
  Shape s = x.shape();
  int64_t n = s[src];
  s[src] = n / size1;
  s.insert(s.begin() + src, size1);
  return lax::reshape(x, s);
}
/// Merges axis src into axis dst (dst counted after removing src), src major.
Array reshape_axis_into(int64_t src, int64_t dst, A x) {
  Ints perm;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != src) perm.push_back(i);
  perm.insert(perm.begin() + dst, src);
  Shape s;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != src) s.push_back(x.shape()[i]);
  s[dst] *= x.shape()[src];
  return lax::reshape(lax::transpose(x, perm), s);
}
Ints flat_pads(const std::vector<std::pair<int64_t, int64_t>>& p) {
  Ints out;
  for (auto& [lo, hi] : p) {
    out.push_back(lo);
    out.push_back(hi);
  }
  return out;
}

Array conv_transpose_lhs(A g, A rhs_in, const ShapedArray& lhs, const Params& ps) {
  Ints ls = ps.get_ints("lhs_spec"), rs = ps.get_ints("rhs_spec"), os = ps.get_ints("out_spec");
  Ints strides = ps.get_ints("window_strides"), pad = ps.get_ints("padding"), ld = ps.get_ints("lhs_dilation"),
       rd = ps.get_ints("rhs_dilation");
  int64_t G = ps.get_int("feature_group_count"), B = ps.get_int("batch_group_count");
  Array rhs = rhs_in;
  if (G > 1 || B > 1) {
    rhs = reshape_axis_into(rs[0], rs[1], reshape_axis_out_of(rs[0], std::max(G, B), rhs));
    G = std::max(G, B);
  }
  Ints lsp = take(lhs.shape, spatial(ls)), rsp = take(rhs.shape(), spatial(rs)), osp = take(g.shape(), spatial(os));
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t k = 0; k < lsp.size(); ++k) {
    int64_t l = dilate(lsp[k], ld[k]), r = dilate(rsp[k], rd[k]), o = dilate(osp[k], strides[k]);
    int64_t before = r - pad[2 * k] - 1;
    pads.push_back({before, l + r - 1 - o - before});
  }
  Array out = bind1(conv(), {g, lax::rev(rhs, spatial(rs))},
                    Params{{"window_strides", ld}, {"padding", flat_pads(pads)}, {"lhs_dilation", strides},
                           {"rhs_dilation", rd}, {"lhs_spec", os}, {"rhs_spec", spec_transpose(rs)}, {"out_spec", ls},
                           {"feature_group_count", G}, {"batch_group_count", int64_t{1}}});
  if (B > 1) out = reshape_axis_into(ls[1], ls[0], reshape_axis_out_of(ls[1], B, out));
  return out;
}

Array conv_transpose_rhs(A g, A lhs, const ShapedArray& rhs, const Params& ps) {
  Ints ls = ps.get_ints("lhs_spec"), rs = ps.get_ints("rhs_spec"), os = ps.get_ints("out_spec");
  Ints strides = ps.get_ints("window_strides"), pad = ps.get_ints("padding"), ld = ps.get_ints("lhs_dilation"),
       rd = ps.get_ints("rhs_dilation");
  int64_t G = ps.get_int("feature_group_count"), B = ps.get_int("batch_group_count");
  if (B > 1) std::swap(G, B);
  else if (G > 1) std::swap(G, B);
  Ints lsp = take(lhs.shape(), spatial(ls)), rsp = take(rhs.shape, spatial(rs)), osp = take(g.shape(), spatial(os));
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t k = 0; k < lsp.size(); ++k) {
    int64_t l = dilate(lsp[k], ld[k]), r = dilate(rsp[k], rd[k]), o = dilate(osp[k], strides[k]);
    int64_t lo = pad[2 * k];
    pads.push_back({lo, (o - l) + (r - lo - 1)});
  }
  return bind1(conv(), {lhs, g},
               Params{{"window_strides", rd}, {"padding", flat_pads(pads)}, {"lhs_dilation", ld},
                      {"rhs_dilation", strides}, {"lhs_spec", spec_transpose(ls)}, {"rhs_spec", spec_transpose(os)},
                      {"out_spec", spec_transpose(rs)}, {"feature_group_count", G}, {"batch_group_count", B}});
}

/// vmap, JAX's rule: a batched lhs joins the convolution's batch axis (with batch groups: inside each group), a
/// batched rhs its output features (with groups: inside each group), both batched become feature groups (or batch
/// groups) one per example; a batch of 0 examples is the empty result of the unbatched shape.
std::pair<std::vector<Array>, std::vector<int64_t>> conv_batch(std::span<const Array> args,
                                                               std::span<const int64_t> dims, const Params& ps) {
  Ints ls = ps.get_ints("lhs_spec"), rs = ps.get_ints("rhs_spec"), os = ps.get_ints("out_spec");
  int64_t G = ps.get_int("feature_group_count"), B = ps.get_int("batch_group_count");
  int64_t n = batch_size(args, dims);
  if (n == 0) {
    std::vector<ShapedArray> unbatched;
    for (size_t i = 0; i < 2; ++i) {
      ShapedArray a = args[i].aval();
      if (dims[i] != not_mapped) a.shape.erase(a.shape.begin() + dims[i]);
      unbatched.push_back(a);
    }
    ShapedArray out = conv().abstract_eval(unbatched, ps)[0];
    Shape s = out.shape;
    s.insert(s.begin(), 0);
    return {{zeros(s, out.dtype)}, {0}};
  }
  auto with_groups = [&](int64_t g, int64_t b) {
    Params q = ps;
    q.set("feature_group_count", g);
    q.set("batch_group_count", b);
    return q;
  };
  if (dims[0] != not_mapped && dims[1] != not_mapped) {
    Array lhs = B > 1 ? reshape_axis_into(dims[0], ls[0], args[0]) : reshape_axis_into(dims[0], ls[1], args[0]);
    Params q = B > 1 ? with_groups(G, B * n) : with_groups(G * n, B);
    Array out = bind1(conv(), {lhs, reshape_axis_into(dims[1], rs[0], args[1])}, q);
    return {{reshape_axis_out_of(os[1], n, out)}, {os[1]}};
  }
  if (dims[0] != not_mapped) {
    int64_t bd = dims[0];
    if (B == 1) {
      Array out = bind1(conv(), {reshape_axis_into(bd, ls[0], args[0]), args[1]}, ps);
      return {{reshape_axis_out_of(os[0], n, out)}, {os[0]}};
    }
    Array lhs = reshape_axis_out_of(ls[0] + (bd <= ls[0] ? 1 : 0), B, args[0]);
    lhs = reshape_axis_into(bd + (ls[0] < bd ? 1 : 0), ls[0] + 1, lhs);
    lhs = reshape_axis_into(ls[0], ls[0], lhs);
    Array out = bind1(conv(), {lhs, args[1]}, ps);
    return {{reshape_axis_out_of(os[0], n, out)}, {os[0]}};
  }
  int64_t bd = dims[1];
  if (G == 1 && B == 1) {
    Array out = bind1(conv(), {args[0], reshape_axis_into(bd, rs[0], args[1])}, ps);
    return {{reshape_axis_out_of(os[1], n, out)}, {os[1]}};
  }
  // Groups outermost: factored out of the rhs output features, the examples folded inside each group, the groups
  // put back; the output undone the same way.
  int64_t groups = G > 1 ? G : B;
  Array rhs = reshape_axis_out_of(rs[0] + (bd <= rs[0] ? 1 : 0), groups, args[1]);
  rhs = reshape_axis_into(bd + (rs[0] < bd ? 1 : 0), rs[0] + 1, rhs);
  rhs = reshape_axis_into(rs[0], rs[0], rhs);
  Array out = bind1(conv(), {args[0], rhs}, ps);
  out = reshape_axis_out_of(os[1], groups, out);
  out = reshape_axis_out_of(os[1] + 1, n, out);
  out = reshape_axis_into(os[1], os[1] + 1, out);
  return {{out}, {os[1]}};
}

void check_spec(std::string_view what, const Ints& spec, int64_t rank) {
  Ints sorted = spec, iota(rank);
  std::sort(sorted.begin(), sorted.end());
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota)
    throw_error<ShapeError>("conv_general_dilated", "{} {} must be a permutation of the {} axes (batch/feature first, "
                            "then spatial)", what, shape_str(spec), rank);
}

void check_positive(std::string_view what, const Ints& v, size_t n) {
  if (v.size() != n)
    throw_error<ShapeError>("conv_general_dilated", "{} {} needs one entry per spatial axis ({})", what, shape_str(v),
                            n);
  for (auto x : v)
    if (x < 1) throw_error<ShapeError>("conv_general_dilated", "{} {} must be positive", what, shape_str(v));
}

// conv_general_dilated[window_strides padding lhs_dilation rhs_dilation lhs_spec rhs_spec out_spec
//                      feature_group_count batch_group_count]
// lhs_spec = (batch, feature, spatial...), rhs_spec = (out feature, in feature, spatial...), out_spec as lhs_spec:
// the axis numbers of JAX's ConvDimensionNumbers. padding is flattened (low, high) pairs, one per spatial axis.
Outs conv_abstract_eval(std::span<const ShapedArray> in, const Params& ps) {
  const std::string_view op = "conv_general_dilated";
  if (in.size() != 2) throw_error<ShapeError>(op, "takes (lhs, rhs), got {} operands", in.size());
  const auto &l = in[0], &r = in[1];
  if (l.dtype != r.dtype)
    throw_error<TypeError>(op, "lhs and rhs must have the same dtype, got {} and {}", dtype_name(l.dtype),
                           dtype_name(r.dtype));
  if (is_bool(l.dtype)) throw_error<TypeError>(op, "needs numeric operands, got {}", dtype_name(l.dtype));
  int64_t n = l.ndim();
  if (n < 2 || r.ndim() != n)
    throw_error<ShapeError>(op, "lhs {} and rhs {} must have the same rank, at least 2", l.str(), r.str());
  const auto &ls = ps.get_ints("lhs_spec"), &rs = ps.get_ints("rhs_spec"), &os = ps.get_ints("out_spec");
  check_spec("lhs_spec", ls, n);
  check_spec("rhs_spec", rs, n);
  check_spec("out_spec", os, n);
  size_t nsp = static_cast<size_t>(n - 2);
  const auto& strides = ps.get_ints("window_strides");
  const auto& pad = ps.get_ints("padding");
  const auto& ld = ps.get_ints("lhs_dilation");
  const auto& rd = ps.get_ints("rhs_dilation");
  check_positive("window_strides", strides, nsp);
  check_positive("lhs_dilation", ld, nsp);
  check_positive("rhs_dilation", rd, nsp);
  if (pad.size() != 2 * nsp)
    throw_error<ShapeError>(op, "padding needs a (low, high) pair per spatial axis ({}), got {} values", nsp,
                            pad.size());
  int64_t g = ps.get_int("feature_group_count"), bg = ps.get_int("batch_group_count");
  if (g < 1 || bg < 1)
    throw_error<ShapeError>(op, "feature_group_count {} and batch_group_count {} must be positive", g, bg);
  if (g > 1 && bg > 1)
    throw_error<ShapeError>(op, "feature_group_count {} and batch_group_count {} cannot both exceed 1", g, bg);
  int64_t b = l.shape[ls[0]], c = l.shape[ls[1]], o = r.shape[rs[0]], i = r.shape[rs[1]];
  if (c % g != 0 || c / g != i)
    throw_error<ShapeError>(op, "lhs feature size {} must equal rhs input-feature size {} times feature_group_count {}",
                            c, i, g);
  if (o % g != 0)
    throw_error<ShapeError>(op, "rhs output-feature size {} must be divisible by feature_group_count {}", o, g);
  if (b % bg != 0 || o % bg != 0)
    throw_error<ShapeError>(op, "lhs batch size {} and rhs output-feature size {} must be divisible by "
                            "batch_group_count {}", b, o, bg);
  Shape s(n);
  s[os[0]] = b / bg;
  s[os[1]] = o;
  for (size_t k = 0; k < nsp; ++k) {
    int64_t in_size = l.shape[ls[2 + k]], win = r.shape[rs[2 + k]];
    int64_t padded = (in_size == 0 ? 0 : (in_size - 1) * ld[k] + 1) + pad[2 * k] + pad[2 * k + 1];
    int64_t w = win == 0 ? 0 : (win - 1) * rd[k] + 1;
    if (padded < 0)
      throw_error<ShapeError>(op, "padding ({}, {}) on spatial axis {} leaves a negative size {}", pad[2 * k],
                              pad[2 * k + 1], k, padded);
    s[os[2 + k]] = padded < w ? 0 : (padded - w) / strides[k] + 1;
  }
  return Outs{ShapedArray{s, l.dtype, l.weak_type && r.weak_type}};
}

const bool kConvRegistered = [] {
  Primitive p;
  p.name = "conv_general_dilated";
  p.num_operands = 2;
  p.jvp = defjvp("conv_general_dilated",
                 {[](A t, A, std::span<const Array> x, const Params& ps) { return bind1(conv(), {t, x[1]}, ps); },
                  [](A t, A, std::span<const Array> x, const Params& ps) { return bind1(conv(), {x[0], t}, ps); }});
  p.transpose = [](std::span<const Array> ct, std::span<const LinearArg> args, const Params& ps) {
    if (args[0].is_linear() && args[1].is_linear())
      not_differentiable("conv_general_dilated", "transposing it needs one known operand");
    std::vector<Array> out(2);
    if (args[0].is_linear()) out[0] = conv_transpose_lhs(ct[0], args[1].value, args[0].aval, ps);
    else if (ct[0].size() != 0) out[1] = conv_transpose_rhs(ct[0], args[0].value, args[1].aval, ps);
    return out;
  };
  p.batch = conv_batch;
  p.abstract_eval = conv_abstract_eval;
  p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    const auto& ps = c.params;
    Params attrs{{"window_strides", ps.get_ints("window_strides")},
                 {"padding", ps.get_ints("padding")},
                 {"lhs_dilation", ps.get_ints("lhs_dilation")},
                 {"rhs_dilation", ps.get_ints("rhs_dilation")},
                 {"lhs_spec", ps.get_ints("lhs_spec")},
                 {"rhs_spec", ps.get_ints("rhs_spec")},
                 {"out_spec", ps.get_ints("out_spec")},
                 {"feature_group_count", ps.get_int("feature_group_count")},
                 {"batch_group_count", ps.get_int("batch_group_count")}};
    return std::vector<hlo::Instruction*>{
        c.comp->add(Opcode::kConvolution, hlo_shape(c.out_avals[0]), {a[0], a[1]}, attrs)};
  };
  register_primitive(std::move(p));
  return true;
}();
}  // namespace
}  // namespace jitx::detail
