// Reductions: reduce_{sum,max,min,prod,and,or}, argmax/argmin, reduce_window_*, cumulative ops, dot_general.
#include <algorithm>
#include <limits>

#include "primitives/primitive.h"

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

void register_reduce(const std::string& name, const std::string& reducer, bool bool_only) {
  Primitive p;
  p.name = name;
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

void register_reduce_window(const std::string& name, const std::string& reducer) {
  Primitive p;
  p.name = name;
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
      throw_error<ShapeError>(name, "window parameters need one entry per axis of {} (padding: a (low, high) pair each)",
                              x.str());
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

// cumsum[axis reverse]: lowered, as JAX does on CPU, to a reduce_window over a padded prefix window.
void register_cumulative(const std::string& name, const std::string& reducer) {
  Primitive p;
  p.name = name;
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
    std::vector<int64_t> wd(r, 1), pad(2 * r, 0);
    wd[axis] = std::max<int64_t>(n, 1);
    pad[2 * axis + (reverse ? 1 : 0)] = std::max<int64_t>(n - 1, 0);
    auto* init = identity_constant(c.comp, reducer, x.dtype);
    Params attrs{{"window_dimensions", wd},
                 {"window_strides", std::vector<int64_t>(r, 1)},
                 {"padding", pad},
                 {"base_dilations", std::vector<int64_t>(r, 1)},
                 {"window_dilations", std::vector<int64_t>(r, 1)},
                 {"reducer", reducer}};
    return Insts{c.comp->add(Opcode::kReduceWindow, hlo_shape(c.out_avals[0]), {a[0], init}, attrs)};
  };
  register_primitive(std::move(p));
}

const bool registered = [] {
  register_reduce("reduce_sum", "add", false);
  register_reduce("reduce_prod", "mul", false);
  register_reduce("reduce_max", "max", false);
  register_reduce("reduce_min", "min", false);
  register_reduce("reduce_and", "and", true);
  register_reduce("reduce_or", "or", true);
  register_arg_reduce("argmax");
  register_arg_reduce("argmin");
  register_reduce_window("reduce_window_sum", "add");
  register_reduce_window("reduce_window_max", "max");
  register_reduce_window("reduce_window_min", "min");
  register_cumulative("cumsum", "add");
  register_cumulative("cumprod", "mul");
  register_cumulative("cummax", "max");
  register_cumulative("cummin", "min");

  // dot_general[lhs_contracting_dimensions rhs_contracting_dimensions lhs_batch_dimensions
  //             rhs_batch_dimensions preferred_element_type]
  Primitive p;
  p.name = "dot_general";
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
        throw_error<ShapeError>("dot_general", "contracting dimensions differ in size: lhs {} axis {} is {}, rhs {} axis {} is {}",
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
