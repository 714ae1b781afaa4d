// Reductions: reduce_{sum,max,min,prod,and,or}, argmax/argmin, reduce_window_*, cumulative ops, dot_general.
#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

#include "core/primitive.h"
#include "jitx/lax_control.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {

/// The identity of a reducer for dtype d (used as the init value of reduce and reduce_window).
double reducer_identity(const std::string& reducer, DType d) {
  if (reducer == "add" || reducer == "or") return 0;
  if (reducer == "mul" || reducer == "and") return 1;
  bool fl = is_floating(d);
  if (reducer == "max") {
    if (fl) return -std::numeric_limits<double>::infinity();
    if (is_bool(d) || is_unsigned_integer(d)) return 0;
    return -std::ldexp(1.0, dtype_bits(d) - 1);
  }
  if (reducer == "min") {
    if (fl) return std::numeric_limits<double>::infinity();
    if (is_bool(d)) return 1;
    if (is_unsigned_integer(d)) return std::ldexp(1.0, dtype_bits(d)) - 1;
    return std::ldexp(1.0, dtype_bits(d) - 1) - 1;
  }
  JITX_ASSERT(false, "unknown reducer {}", reducer);
  return 0;
}

namespace {
using hlo::Opcode;
using Outs = std::vector<ShapedArray>;
using Insts = std::vector<hlo::Instruction*>;
using Arrays = std::vector<Array>;
using Ints = std::vector<int64_t>;
using A = const Array&;

Ints kept_axes(int64_t rank, const Ints& axes) {
  Ints kept;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) kept.push_back(i);
  return kept;
}

// --- JVP and transpose rules -------------------------------------------------------------------------
/// reduce_sum's transpose: the cotangent broadcast back over the reduced axes.
std::vector<Array> reduce_sum_transpose(std::span<const Array> ct, std::span<const LinearArg> args, const Params& ps) {
  const auto& av = args[0].aval;
  return {lax::broadcast_in_dim(ct[0], av.shape, kept_axes(av.ndim(), ps.get_ints("axes")))};
}

/// reduce_max/min (JAX's chooser rule): the tangent averaged over the positions that attain the result.
JvpFn chooser_jvp(std::string name) {
  return [name](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
    const auto& axes = ps.get_ints("axes");
    Array ans = bind1(*find_primitive(name), {x[0]}, ps);
    Array loc = lax::convert_element_type(
        lax::eq(x[0], lax::broadcast_in_dim(ans, x[0].shape(), kept_axes(x[0].ndim(), axes))), x[0].dtype());
    Array counts = lax::reduce_sum(loc, axes);
    return JvpResult{{ans}, {lax::div(lax::reduce_sum(lax::mul(t[0], loc), axes), counts)}};
  };
}

/// reduce_prod: d(prod) = sum_j t_j * prod_{k != j} x_k, with the products of the others taken from
/// exclusive cumulative products from both sides (exact where some x_k are zero, as JAX's rule).
JvpResult reduce_prod_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  const auto& axes = ps.get_ints("axes");
  Array ans = lax::reduce_prod(x[0], axes);
  Ints kept = kept_axes(x[0].ndim(), axes), perm = kept;
  perm.insert(perm.end(), axes.begin(), axes.end());
  Shape s;
  int64_t n = 1;
  for (auto k : kept) s.push_back(x[0].shape()[k]);
  for (auto a : axes) n *= x[0].shape()[a];
  s.push_back(n);
  int64_t last = static_cast<int64_t>(s.size()) - 1;
  auto flat = [&](A v) { return lax::reshape(lax::transpose(v, perm), s); };
  Array x2 = flat(x[0]);
  std::vector<std::array<int64_t, 3>> lo(s.size(), {0, 0, 0}), hi = lo;
  lo[last] = {1, 0, 0};
  hi[last] = {0, 1, 0};
  Array one = scalar_like(x2, 1);
  Array left = lax::slice_in_dim(lax::pad(lax::cumprod(x2, last), one, lo), 0, n, 1, last);
  Array right = lax::slice_in_dim(lax::pad(lax::cumprod(x2, last, true), one, hi), 1, n + 1, 1, last);
  return JvpResult{{ans}, {lax::reduce_sum(lax::mul(flat(t[0]), lax::mul(left, right)), {last})}};
}

/// The JVP of cumprod/cummax/cummin as JAX's: that of lax.associative_scan's odd/even recursion of `combine`. The
/// tree's shape matters beyond rounding: max's JVP gives half of a tie to each side, so it decides how tied
/// elements share the tangent (cummax of [1, 1, 1] and cotangent [1, 10, 100] gives JAX's [31, 30, 50]).
JvpFn cumulative_jvp(std::string name, std::function<Array(A, A)> combine) {
  return [=](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
    Array out = bind1(*find_primitive(name), {x[0]}, ps);
    int64_t axis = ps.get_int("axis");
    bool reverse = ps.get_bool("reverse", false);
    detail::AssociativeFn fn = [=](const Arrays& a, const Arrays& b) { return Arrays{combine(a[0], b[0])}; };
    LeafFn scan = [=](const std::vector<Array>& v) {
      return detail::associative_scan_flat(fn, {v[0]}, reverse, axis, name);
    };
    return JvpResult{{out}, {jvp_flat(name, scan, {x[0]}, {t[0]}).second[0]}};
  };
}

struct Window {
  Ints dims, strides, pad, base, dil;
  explicit Window(const Params& ps, int64_t r)
      : dims(ps.get_ints("window_dimensions")),
        strides(ps.get_ints("window_strides", Ints(r, 1))),
        pad(ps.get_ints("padding", Ints(2 * r, 0))),
        base(ps.get_ints("base_dilation", Ints(r, 1))),
        dil(ps.get_ints("window_dilation", Ints(r, 1))) {}
};

/// reduce_window_max/min: the tangent of the element XLA's select_and_scatter (JAX's gradient of max pooling)
/// selects in each window: the window's first position, then, in row-major order, each position e for which
/// `selected >= e` (max; `<=` for min) is false. Padding and base-dilation holes take part with the reduction's
/// identity (-inf for max) and a zero tangent. That is the first maximum, and around NaN, JAX's choice (a NaN
/// replaces a number and is replaced by the next position, padding included, which then takes the cotangent
/// away). The transpose (the vjp) sends each window's cotangent there, as JAX's select_and_scatter_add. (JAX's
/// own jvp differs in one case: a window of only -inf (max) gets tangent 0 there, its vjp the first element's.)
JvpFn window_chooser_jvp(std::string name, std::string reducer) {
  return [=](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
    Array out = bind1(*find_primitive(name), {x[0]}, ps);
    int64_t r = x[0].ndim();
    Window w(ps, r);
    std::vector<std::array<int64_t, 3>> cfg;
    for (int64_t i = 0; i < r; ++i) cfg.push_back({w.pad[2 * i], w.pad[2 * i + 1], w.base[i] - 1});
    Array px = lax::pad(x[0], Array::scalar(reducer_identity(reducer, x[0].dtype()), x[0].dtype()), cfg);
    Array pt = lax::pad(t[0], scalar_like(t[0], 0), cfg);
    if (out.size() == 0) return JvpResult{{out}, {zeros_like_aval(out.aval())}};
    std::optional<Array> sel, t_out;
    Ints offset(r, 0);
    while (true) {
      Ints start, limit;
      for (int64_t i = 0; i < r; ++i) {
        start.push_back(offset[i] * w.dil[i]);
        limit.push_back(start.back() + (out.shape()[i] - 1) * w.strides[i] + 1);
      }
      Array e = lax::slice(px, start, limit, w.strides), te = lax::slice(pt, start, limit, w.strides);
      if (!sel) {
        sel = e, t_out = te;
      } else {
        Array take = lax::bitwise_not(reducer == "max" ? lax::ge(*sel, e) : lax::le(*sel, e));
        t_out = lax::select(take, te, *t_out);
        sel = lax::select(take, e, *sel);
      }
      int64_t i = r - 1;
      while (i >= 0 && ++offset[i] == w.dims[i]) offset[i--] = 0;
      if (i < 0) break;
    }
    return JvpResult{{out}, {*t_out}};
  };
}

/// reduce_window_sum's transpose (JAX's): the cotangent dilated by the strides and padded as in a
/// convolution's input gradient, then summed over windows again with the base dilation as stride.
std::vector<Array> reduce_window_sum_transpose(std::span<const Array> ct, std::span<const LinearArg> args,
                                               const Params& ps) {
  const auto& in = args[0].aval.shape;
  int64_t r = static_cast<int64_t>(in.size());
  Window w(ps, r);
  auto dilate = [](int64_t n, int64_t d) { return n == 0 ? int64_t{0} : 1 + d * (n - 1); };
  std::vector<std::array<int64_t, 3>> cfg;
  lax::WindowConfig wc;
  for (int64_t i = 0; i < r; ++i) {
    int64_t lhs = dilate(in[i], w.base[i]), rhs = dilate(w.dims[i], w.dil[i]),
            out = dilate(ct[0].shape()[i], w.strides[i]);
    int64_t before = rhs - w.pad[2 * i] - 1, after = lhs + rhs - 1 - out - before;
    cfg.push_back({before, after, w.strides[i] - 1});
  }
  wc.window_dimensions = w.dims;
  wc.window_strides = w.base;
  wc.window_dilation = w.dil;
  return {lax::reduce_window_sum(lax::pad(ct[0], scalar_like(ct[0], 0), cfg), wc)};
}

/// dot_general's transpose with respect to its lhs (JAX's); the rhs case swaps the operands.
Array dot_transpose_lhs(A g, A y, const ShapedArray& x_aval, Ints xc, Ints yc, Ints xb, Ints yb, bool swap_ans) {
  int64_t xn = x_aval.ndim(), yn = y.ndim();
  auto remaining = [](int64_t n, const Ints& a, const Ints& b) {
    Ints out;
    for (int64_t i = 0; i < n; ++i)
      if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) out.push_back(i);
    return out;
  };
  Ints x_kept = remaining(xn, xc, xb), y_kept = remaining(yn, yc, yb);
  int64_t nb = static_cast<int64_t>(xb.size());
  Ints ans_batch, ans_y;
  for (int64_t i = 0; i < nb; ++i) ans_batch.push_back(i);
  int64_t y_start = swap_ans ? nb : nb + static_cast<int64_t>(x_kept.size());
  for (size_t i = 0; i < y_kept.size(); ++i) ans_y.push_back(y_start + static_cast<int64_t>(i));
  Array gg = g.dtype() == y.dtype() ? g : lax::convert_element_type(g, y.dtype());
  Array d = lax::dot_general(gg, y, {ans_y, y_kept, ans_batch, yb});
  // x's contracting axes, ordered as y's contracting axes sort.
  Ints order(yc.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return yc[a] < yc[b]; });
  Ints pos = xb;
  pos.insert(pos.end(), x_kept.begin(), x_kept.end());
  for (auto o : order) pos.push_back(xc[o]);
  Ints out_axes(pos.size());
  std::iota(out_axes.begin(), out_axes.end(), 0);
  std::sort(out_axes.begin(), out_axes.end(), [&](int64_t a, int64_t b) { return pos[a] < pos[b]; });
  Array r = lax::transpose(d, out_axes);
  return r.dtype() == x_aval.dtype ? r : lax::convert_element_type(r, x_aval.dtype);
}

std::vector<int64_t> checked_axes(std::string_view op, const ShapedArray& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> out;
  for (auto a : axes) {
    if (a < 0 || a >= x.ndim())
      throw_error<ShapeError>(op, "axis {} is out of bounds for an array of rank {}", a, x.ndim());
    if (std::find(out.begin(), out.end(), a) != out.end())
      throw_error<ShapeError>(op, "axis {} appears twice in axes {}", a, shape_str(axes));
    out.push_back(a);
  }
  return out;
}

Shape reduced_shape(const ShapedArray& x, const std::vector<int64_t>& axes) {
  Shape s;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) s.push_back(x.shape[i]);
  return s;
}

/// An init constant, written exactly for 64-bit integers (whose extremes a double cannot hold).
hlo::Instruction* identity_constant(hlo::Computation* comp, const std::string& reducer, DType d) {
  auto lit = Literal::make(d, {});
  if (d == DType::int64 && reducer == "max") lit.set_i64(0, std::numeric_limits<int64_t>::min());
  else if (d == DType::int64 && reducer == "min") lit.set_i64(0, std::numeric_limits<int64_t>::max());
  else if (d == DType::uint64 && reducer == "min") lit.set_u64(0, std::numeric_limits<uint64_t>::max());
  // Bitwise and on integers starts from all ones (1 would clear every bit but the lowest).
  else if (is_integer(d) && reducer == "and") lit.set_i64(0, -1);
  else lit.set_f64(0, reducer_identity(reducer, d));
  return comp->add_constant(std::move(lit));
}

/// Reductions over `axes` batch with the batch axis in front and the axes shifted past it.
BatchFn axes_batch(const std::string& name) {
  return leading_batch(name, [](Params& q, int64_t) { q.set("axes", shifted(q.get_ints("axes"))); });
}

void register_reduce(const std::string& name, const std::string& reducer, bool bool_only, JvpFn jvp,
                     TransposeFn transpose = nullptr) {
  Primitive p;
  p.name = name;
  p.num_operands = 1;
  p.batch = axes_batch(name);
  p.jvp = std::move(jvp);
  p.transpose = std::move(transpose);
  p.abstract_eval = [name, bool_only](std::span<const ShapedArray> in, const Params& ps) {
    const auto& x = in[0];
    if (bool_only && !is_bool(x.dtype) && !is_integer(x.dtype))
      throw_error<TypeError>(name, "needs a bool or integer operand, got {}", dtype_name(x.dtype));
    auto axes = checked_axes(name, x, ps.get_ints("axes"));
    return Outs{ShapedArray{reduced_shape(x, axes), x.dtype, x.weak_type}};
  };
  p.lower = [reducer](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    DType d = c.in_avals[0].dtype;
    auto* init = identity_constant(c.comp, reducer, d);
    return Insts{c.comp->add(Opcode::kReduce, hlo_shape(c.out_avals[0]), {a[0], init},
                             Params{{"dimensions", c.params.get_ints("axes")}, {"reducer", reducer}})};
  };
  register_primitive(std::move(p));
}

void register_arg_reduce(const std::string& name) {
  Primitive p;
  p.name = name;
  p.num_operands = 1;
  p.batch = axes_batch(name);
  p.jvp = zero_jvp(name);
  p.abstract_eval = [name](std::span<const ShapedArray> in, const Params& ps) {
    const auto& x = in[0];
    auto axes = checked_axes(name, x, ps.get_ints("axes"));
    if (axes.size() != 1) throw_error<ShapeError>(name, "reduces exactly one axis, got axes {}", shape_str(axes));
    if (x.shape[axes[0]] == 0)
      throw_error<ShapeError>(name, "cannot reduce an empty axis {} of shape {}", axes[0], shape_str(x.shape));
    DType idx = ps.get_dtype("index_dtype");
    if (!is_integer(idx)) throw_error<TypeError>(name, "index_dtype must be an integer dtype, got {}", dtype_name(idx));
    return Outs{ShapedArray{reduced_shape(x, axes), idx, false}};
  };
  p.lower = [name](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    const auto& x = c.in_avals[0];
    DType idx = c.out_avals[0].dtype;
    int64_t axis = c.params.get_ints("axes")[0];
    auto* iota = c.comp->add(Opcode::kIota, hlo::Shape(idx, x.shape), {}, Params{{"iota_dimension", axis}});
    std::string r = name == "argmax" ? "max" : "min";
    auto* init_v = identity_constant(c.comp, r, x.dtype);
    auto* init_i = c.comp->add_scalar_constant(idx, 0);
    hlo::Shape vs(x.dtype, c.out_avals[0].shape), is(idx, c.out_avals[0].shape);
    auto* red = c.comp->add(Opcode::kReduce, hlo::Shape::tuple({vs, is}), {a[0], iota, init_v, init_i},
                            Params{{"dimensions", std::vector<int64_t>{axis}}, {"reducer", name}});
    return Insts{c.comp->add(Opcode::kGetTupleElement, is, {red}, Params{{"index", int64_t{1}}})};
  };
  register_primitive(std::move(p));
}

// Output size of a windowed axis.
int64_t window_out(int64_t n, int64_t lo, int64_t hi, int64_t win, int64_t stride, int64_t base_dil, int64_t win_dil) {
  int64_t padded = (n == 0 ? 0 : (n - 1) * base_dil + 1) + lo + hi;
  int64_t w = (win - 1) * win_dil + 1;
  if (padded < w) return 0;
  return (padded - w) / stride + 1;
}

void register_reduce_window(const std::string& name, const std::string& reducer, JvpFn jvp,
                            TransposeFn transpose = nullptr) {
  Primitive p;
  p.name = name;
  p.num_operands = 1;
  // The batch axis in front, under a window of size 1 that neither strides, pads nor dilates.
  p.batch = leading_batch(name, [](Params& q, int64_t) {
    auto r = static_cast<int64_t>(q.get_ints("window_dimensions").size());
    Window w(q, r);
    q.set("window_dimensions", prepended(1, w.dims));
    q.set("window_strides", prepended(1, w.strides));
    q.set("padding", prepended(0, prepended(0, w.pad)));
    q.set("base_dilation", prepended(1, w.base));
    q.set("window_dilation", prepended(1, w.dil));
  });
  p.jvp = std::move(jvp);
  p.transpose = std::move(transpose);
  p.abstract_eval = [name](std::span<const ShapedArray> in, const Params& ps) {
    const auto& x = in[0];
    int64_t r = x.ndim();
    auto wd = ps.get_ints("window_dimensions");
    auto ws = ps.get_ints("window_strides", std::vector<int64_t>(r, 1));
    auto pad = ps.get_ints("padding", std::vector<int64_t>(2 * r, 0));
    auto bd = ps.get_ints("base_dilation", std::vector<int64_t>(r, 1));
    auto wdl = ps.get_ints("window_dilation", std::vector<int64_t>(r, 1));
    if (static_cast<int64_t>(wd.size()) != r || static_cast<int64_t>(ws.size()) != r ||
        static_cast<int64_t>(pad.size()) != 2 * r || static_cast<int64_t>(bd.size()) != r ||
        static_cast<int64_t>(wdl.size()) != r)
      throw_error<ShapeError>(
          name, "window parameters need one entry per axis of {} (padding: a (low, high) pair each)", x.str());
    Shape s;
    for (int64_t i = 0; i < r; ++i) {
      if (wd[i] < 1 || ws[i] < 1 || bd[i] < 1 || wdl[i] < 1)
        throw_error<ShapeError>(name, "window sizes, strides and dilations must be positive (axis {})", i);
      s.push_back(window_out(x.shape[i], pad[2 * i], pad[2 * i + 1], wd[i], ws[i], bd[i], wdl[i]));
    }
    return Outs{ShapedArray{s, x.dtype, x.weak_type}};
  };
  p.lower = [reducer](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    int64_t r = c.in_avals[0].ndim();
    auto* init = identity_constant(c.comp, reducer, c.in_avals[0].dtype);
    Params attrs{{"window_dimensions", c.params.get_ints("window_dimensions")},
                 {"window_strides", c.params.get_ints("window_strides", std::vector<int64_t>(r, 1))},
                 {"padding", c.params.get_ints("padding", std::vector<int64_t>(2 * r, 0))},
                 {"base_dilations", c.params.get_ints("base_dilation", std::vector<int64_t>(r, 1))},
                 {"window_dilations", c.params.get_ints("window_dilation", std::vector<int64_t>(r, 1))},
                 {"reducer", reducer}};
    return Insts{c.comp->add(Opcode::kReduceWindow, hlo_shape(c.out_avals[0]), {a[0], init}, attrs)};
  };
  register_primitive(std::move(p));
}

// cumsum[axis reverse]: lowered, as JAX does on CPU, to a reduce_window over a padded prefix window. A reverse
// float sum or product is the forward window of the reversed axis, reversed: its output i adds x[n-1] down to x[i]
// (a backward running value, as rev(cumsum(rev(x))) would), which backends scan in O(n); the window padded after the
// axis adds x[i] up to x[n-1], an order no running value has (O(n^2) on cpu: minutes for 200k elements, and every
// cumsum's gradient is a reverse cumsum). Order-free reductions (max, min, integers) keep the reverse window.
void register_cumulative(const std::string& name, const std::string& reducer, JvpFn jvp,
                         TransposeFn transpose = nullptr) {
  Primitive p;
  p.name = name;
  p.num_operands = 1;
  p.batch = leading_batch(name, [](Params& q, int64_t) { q.set("axis", q.get_int("axis") + 1); });
  p.jvp = std::move(jvp);
  p.transpose = std::move(transpose);
  p.abstract_eval = [name](std::span<const ShapedArray> in, const Params& ps) {
    int64_t axis = ps.get_int("axis");
    if (axis < 0 || axis >= in[0].ndim())
      throw_error<ShapeError>(name, "axis {} is out of bounds for an array of rank {}", axis, in[0].ndim());
    return Outs{in[0]};
  };
  p.lower = [reducer](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    const auto& x = c.in_avals[0];
    int64_t r = x.ndim(), axis = c.params.get_int("axis");
    bool reverse = c.params.get_bool("reverse", false);
    int64_t n = x.shape[axis];
    bool flip = reverse && n > 1 && is_floating(x.dtype) && (reducer == "add" || reducer == "mul");
    std::vector<int64_t> wd(r, 1), pad(2 * r, 0);
    wd[axis] = std::max<int64_t>(n, 1);
    pad[2 * axis + (reverse && !flip ? 1 : 0)] = std::max<int64_t>(n - 1, 0);
    auto* init = identity_constant(c.comp, reducer, x.dtype);
    Params attrs{{"window_dimensions", wd},
                 {"window_strides", std::vector<int64_t>(r, 1)},
                 {"padding", pad},
                 {"base_dilations", std::vector<int64_t>(r, 1)},
                 {"window_dilations", std::vector<int64_t>(r, 1)},
                 {"reducer", reducer}};
    auto rev = [&](hlo::Instruction* v) {
      return c.comp->add(Opcode::kReverse, hlo_shape(c.out_avals[0]), {v}, Params{{"dimensions", Ints{axis}}});
    };
    hlo::Instruction* in = flip ? rev(a[0]) : a[0];
    hlo::Instruction* w = c.comp->add(Opcode::kReduceWindow, hlo_shape(c.out_avals[0]), {in, init}, attrs);
    return Insts{flip ? rev(w) : w};
  };
  register_primitive(std::move(p));
}

/// dot_general: with both operands batched the batch axes pair up as one more batch dimension (in front of the
/// result); with one side batched its batch axis is a free dimension of that side, found in the result after the
/// batch dimensions (and the lhs free dimensions, for the rhs).
std::pair<std::vector<Array>, std::vector<int64_t>> dot_general_batch(std::span<const Array> args,
                                                                      std::span<const int64_t> dims, const Params& ps) {
  Params q = ps;
  Ints lc = ps.get_ints("lhs_contracting_dimensions"), rc = ps.get_ints("rhs_contracting_dimensions");
  Ints lb = ps.get_ints("lhs_batch_dimensions"), rb = ps.get_ints("rhs_batch_dimensions");
  static const Primitive& dot = *find_primitive("dot_general");
  Array l = args[0], r = args[1];
  int64_t out_dim = 0;
  if (dims[0] != not_mapped) {
    l = move_axis(l, dims[0], 0);
    lc = shifted(lc);
    lb = shifted(lb);
  }
  if (dims[1] != not_mapped) {
    r = move_axis(r, dims[1], 0);
    rc = shifted(rc);
    rb = shifted(rb);
  }
  if (dims[0] != not_mapped && dims[1] != not_mapped) {
    lb = prepended(0, lb);
    rb = prepended(0, rb);
  } else if (dims[0] != not_mapped) {
    out_dim = static_cast<int64_t>(lb.size());
  } else {
    int64_t lhs_free = l.ndim() - static_cast<int64_t>(lc.size() + lb.size());
    out_dim = static_cast<int64_t>(lb.size()) + lhs_free;
  }
  q.set("lhs_contracting_dimensions", lc);
  q.set("rhs_contracting_dimensions", rc);
  q.set("lhs_batch_dimensions", lb);
  q.set("rhs_batch_dimensions", rb);
  return {{bind1(dot, {l, r}, q)}, {out_dim}};
}

const bool kReductionsRegistered = [] {
  register_reduce("reduce_sum", "add", false, linear_jvp("reduce_sum"), reduce_sum_transpose);
  register_reduce("reduce_prod", "mul", false, reduce_prod_jvp);
  register_reduce("reduce_max", "max", false, chooser_jvp("reduce_max"));
  register_reduce("reduce_min", "min", false, chooser_jvp("reduce_min"));
  register_reduce("reduce_and", "and", true, zero_jvp("reduce_and"));
  register_reduce("reduce_or", "or", true, zero_jvp("reduce_or"));
  register_arg_reduce("argmax");
  register_arg_reduce("argmin");
  register_reduce_window("reduce_window_sum", "add", linear_jvp("reduce_window_sum"), reduce_window_sum_transpose);
  register_reduce_window("reduce_window_max", "max", window_chooser_jvp("reduce_window_max", "max"));
  register_reduce_window("reduce_window_min", "min", window_chooser_jvp("reduce_window_min", "min"));
  register_cumulative("cumsum", "add", linear_jvp("cumsum"),
                      [](std::span<const Array> ct, std::span<const LinearArg>, const Params& ps) {
                        return Arrays{lax::cumsum(ct[0], ps.get_int("axis"), !ps.get_bool("reverse", false))};
                      });
  register_cumulative("cumprod", "mul", cumulative_jvp("cumprod", [](A a, A b) { return lax::mul(a, b); }));
  register_cumulative("cummax", "max", cumulative_jvp("cummax", [](A a, A b) { return lax::max(a, b); }));
  register_cumulative("cummin", "min", cumulative_jvp("cummin", [](A a, A b) { return lax::min(a, b); }));

  // dot_general[lhs_contracting_dimensions rhs_contracting_dimensions lhs_batch_dimensions
  //             rhs_batch_dimensions preferred_element_type]
  Primitive p;
  p.name = "dot_general";
  p.num_operands = 2;
  // Bilinear: each operand's tangent contracted with the other operand; transposes as JAX's.
  p.jvp = defjvp("dot_general",
                 {[](A t, A, std::span<const Array> x, const Params& ps) {
                    return bind1(*find_primitive("dot_general"), {t, x[1]}, ps);
                  },
                  [](A t, A, std::span<const Array> x, const Params& ps) {
                    return bind1(*find_primitive("dot_general"), {x[0], t}, ps);
                  }});
  p.transpose = [](std::span<const Array> ct, std::span<const LinearArg> args, const Params& ps) {
    Ints lc = ps.get_ints("lhs_contracting_dimensions"), rc = ps.get_ints("rhs_contracting_dimensions");
    Ints lb = ps.get_ints("lhs_batch_dimensions"), rb = ps.get_ints("rhs_batch_dimensions");
    if (args[0].is_linear() && args[1].is_linear())
      not_differentiable("dot_general", "transposing it needs one known operand");
    Arrays out(2);
    if (args[0].is_linear()) out[0] = dot_transpose_lhs(ct[0], args[1].value, args[0].aval, lc, rc, lb, rb, false);
    else out[1] = dot_transpose_lhs(ct[0], args[0].value, args[1].aval, rc, lc, rb, lb, true);
    return out;
  };
  p.batch = dot_general_batch;
  p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
    const auto &l = in[0], &r = in[1];
    auto lc = ps.get_ints("lhs_contracting_dimensions"), rc = ps.get_ints("rhs_contracting_dimensions");
    auto lb = ps.get_ints("lhs_batch_dimensions"), rb = ps.get_ints("rhs_batch_dimensions");
    if (l.dtype != r.dtype)
      throw_error<TypeError>("dot_general", "operands must have the same dtype, got {} and {}", dtype_name(l.dtype),
                             dtype_name(r.dtype));
    if (lc.size() != rc.size() || lb.size() != rb.size())
      throw_error<ShapeError>("dot_general", "contracting {} vs {} and batch {} vs {} dimensions must pair up",
                              shape_str(lc), shape_str(rc), shape_str(lb), shape_str(rb));
    checked_axes("dot_general", l, [&] { auto v = lc; v.insert(v.end(), lb.begin(), lb.end()); return v; }());
    checked_axes("dot_general", r, [&] { auto v = rc; v.insert(v.end(), rb.begin(), rb.end()); return v; }());
    for (size_t i = 0; i < lc.size(); ++i)
      if (l.shape[lc[i]] != r.shape[rc[i]])
        throw_error<ShapeError>("dot_general",
                                "contracting dimensions differ in size: lhs {} axis {} is {}, rhs {} axis {} is {}",
                                shape_str(l.shape), lc[i], l.shape[lc[i]], shape_str(r.shape), rc[i], r.shape[rc[i]]);
    for (size_t i = 0; i < lb.size(); ++i)
      if (l.shape[lb[i]] != r.shape[rb[i]])
        throw_error<ShapeError>("dot_general", "batch dimensions differ in size: lhs {} axis {} vs rhs {} axis {}",
                                shape_str(l.shape), lb[i], shape_str(r.shape), rb[i]);
    Shape s;
    for (auto d : lb) s.push_back(l.shape[d]);
    for (int64_t i = 0; i < l.ndim(); ++i)
      if (std::find(lc.begin(), lc.end(), i) == lc.end() && std::find(lb.begin(), lb.end(), i) == lb.end())
        s.push_back(l.shape[i]);
    for (int64_t i = 0; i < r.ndim(); ++i)
      if (std::find(rc.begin(), rc.end(), i) == rc.end() && std::find(rb.begin(), rb.end(), i) == rb.end())
        s.push_back(r.shape[i]);
    DType out = ps.has("preferred_element_type") ? ps.get_dtype("preferred_element_type") : l.dtype;
    return Outs{ShapedArray{s, out, l.weak_type && r.weak_type}};
  };
  p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    Params attrs{{"lhs_contracting_dimensions", c.params.get_ints("lhs_contracting_dimensions")},
                 {"rhs_contracting_dimensions", c.params.get_ints("rhs_contracting_dimensions")},
                 {"lhs_batch_dimensions", c.params.get_ints("lhs_batch_dimensions")},
                 {"rhs_batch_dimensions", c.params.get_ints("rhs_batch_dimensions")}};
    return Insts{c.comp->add(Opcode::kDot, hlo_shape(c.out_avals[0]), {a[0], a[1]}, attrs)};
  };
  register_primitive(std::move(p));
  return true;
}();
}  // namespace
}  // namespace jitx::detail
