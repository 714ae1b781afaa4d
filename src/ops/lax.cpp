// jitx::lax: each function binds its primitive (shape and dtype checks live in the primitive).
#include "jitx/lax.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "jitx/config.h"
#include "core/errors.h"
#include "core/primitive.h"
#include "ops/convert.h"

namespace jitx::lax {
using detail::ApiScope;
using detail::bind1;
using detail::Params;

namespace {
const detail::Primitive& prim(std::string_view name) {
  const auto* p = detail::find_primitive(name);
  JITX_ASSERT(p, "primitive {} is not registered", name);
  return *p;
}
/// JAX's lax refuses bool where the op needs a number (lax.cumsum, reduce_sum, scatter_add, ...): a TypeError.
void refuse_bool(std::string_view op, const Array& x) {
  if (x.valid() && x.dtype() == DType::bool_)
    detail::throw_error<TypeError>(op, "does not accept dtype bool (accepted dtypes are numbers), as jax.lax.{}",
                                   op);
}
/// x as uint8 for a bool x (the ops JAX runs on bools by their order False < True: clamp, top_k), else x.
Array bool_as_u8(const Array& x) {
  return x.valid() && x.dtype() == DType::bool_ ? convert_element_type(x, DType::uint8) : x;
}
}  // namespace

#define JITX_LAX_UNARY_IMPL(fn, pname)              \
  Array fn(const Array& x, Loc loc) {               \
    ApiScope s(loc);                                \
    static const auto& p = prim(pname);             \
    return bind1(p, {x});                           \
  }
JITX_LAX_UNARY_IMPL(neg, "neg") JITX_LAX_UNARY_IMPL(sign, "sign")
Array abs(const Array& x, Loc loc) {
  ApiScope s(loc);
  // As jax.lax.abs (jnp.abs returns unsigned inputs unchanged instead).
  if (x.valid() && is_unsigned_integer(x.dtype()))
    detail::throw_error<TypeError>("abs", "does not accept dtype {} (accepted: floating, complex and signed integer "
                                   "dtypes), as jax.lax.abs; jnp::abs takes unsigned integers", dtype_name(x.dtype()));
  static const auto& p = prim("abs");
  return bind1(p, {x});
}
JITX_LAX_UNARY_IMPL(floor, "floor") JITX_LAX_UNARY_IMPL(ceil, "ceil") JITX_LAX_UNARY_IMPL(exp, "exp")
JITX_LAX_UNARY_IMPL(exp2, "exp2") JITX_LAX_UNARY_IMPL(expm1, "expm1") JITX_LAX_UNARY_IMPL(log, "log")
JITX_LAX_UNARY_IMPL(log1p, "log1p") JITX_LAX_UNARY_IMPL(sqrt, "sqrt") JITX_LAX_UNARY_IMPL(rsqrt, "rsqrt")
JITX_LAX_UNARY_IMPL(cbrt, "cbrt") JITX_LAX_UNARY_IMPL(tanh, "tanh") JITX_LAX_UNARY_IMPL(logistic, "logistic")
JITX_LAX_UNARY_IMPL(sin, "sin") JITX_LAX_UNARY_IMPL(cos, "cos") JITX_LAX_UNARY_IMPL(tan, "tan")
JITX_LAX_UNARY_IMPL(asin, "asin") JITX_LAX_UNARY_IMPL(acos, "acos") JITX_LAX_UNARY_IMPL(atan, "atan")
JITX_LAX_UNARY_IMPL(sinh, "sinh") JITX_LAX_UNARY_IMPL(cosh, "cosh") JITX_LAX_UNARY_IMPL(asinh, "asinh")
JITX_LAX_UNARY_IMPL(acosh, "acosh") JITX_LAX_UNARY_IMPL(atanh, "atanh") JITX_LAX_UNARY_IMPL(erf, "erf")
JITX_LAX_UNARY_IMPL(erfc, "erfc") JITX_LAX_UNARY_IMPL(erf_inv, "erf_inv") JITX_LAX_UNARY_IMPL(lgamma, "lgamma")
JITX_LAX_UNARY_IMPL(digamma, "digamma") JITX_LAX_UNARY_IMPL(is_finite, "is_finite")
JITX_LAX_UNARY_IMPL(bitwise_not, "not") JITX_LAX_UNARY_IMPL(population_count, "population_count")
#undef JITX_LAX_UNARY_IMPL

Array round(const Array& x, RoundingMethod m, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("round");
  return bind1(p, {x}, Params{{"rounding_method", static_cast<int64_t>(m)}});
}

#define JITX_LAX_BINARY_IMPL(fn, pname)                     \
  Array fn(const Array& x, const Array& y, Loc loc) {       \
    ApiScope s(loc);                                        \
    static const auto& p = prim(pname);                     \
    return bind1(p, {x, y});                                \
  }
JITX_LAX_BINARY_IMPL(sub, "sub")
JITX_LAX_BINARY_IMPL(div, "div") JITX_LAX_BINARY_IMPL(rem, "rem")
JITX_LAX_BINARY_IMPL(max, "max") JITX_LAX_BINARY_IMPL(min, "min") JITX_LAX_BINARY_IMPL(atan2, "atan2")
JITX_LAX_BINARY_IMPL(bitwise_and, "and") JITX_LAX_BINARY_IMPL(bitwise_or, "or") JITX_LAX_BINARY_IMPL(bitwise_xor, "xor")
JITX_LAX_BINARY_IMPL(shift_left, "shift_left") JITX_LAX_BINARY_IMPL(shift_right_arithmetic, "shift_right_arithmetic")
JITX_LAX_BINARY_IMPL(shift_right_logical, "shift_right_logical")
JITX_LAX_BINARY_IMPL(eq, "eq") JITX_LAX_BINARY_IMPL(ne, "ne") JITX_LAX_BINARY_IMPL(lt, "lt")
JITX_LAX_BINARY_IMPL(le, "le") JITX_LAX_BINARY_IMPL(gt, "gt") JITX_LAX_BINARY_IMPL(ge, "ge")
#undef JITX_LAX_BINARY_IMPL

// lax.pow takes a float base, as JAX's (its exponent may be an integer); jnp::power of integers binds the
// primitive itself, which XLA defines on integers too.
Array pow(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype()))
    detail::throw_error<TypeError>("pow", "does not accept dtype {} at position 0 (accepted: floating types, as JAX)",
                                   dtype_name(x.dtype()));
  static const auto& p = prim("pow");
  return bind1(p, {x, y});
}

// lax.add and lax.mul refuse bools, as JAX's do (jnp::add/multiply of bools are logical or/and).
Array add(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  if (is_bool(x.dtype()) || is_bool(y.dtype()))
    detail::throw_error<TypeError>("add", "does not accept dtype bool (as in JAX; use bitwise_or)");
  static const auto& p = prim("add");
  return bind1(p, {x, y});
}
Array mul(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  if (is_bool(x.dtype()) || is_bool(y.dtype()))
    detail::throw_error<TypeError>("mul", "does not accept dtype bool (as in JAX; use bitwise_and)");
  static const auto& p = prim("mul");
  return bind1(p, {x, y});
}

Array select_n(const Array& which, const Array& case0, const Array& case1, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("select_n");
  // An integer `which` as JAX lowers it: case0 where which < 1, case1 elsewhere (the primitive takes a bool).
  if (which.valid() && is_integer(which.dtype()))
    return bind1(p, {ge(which, Array::scalar_int(1, which.dtype())), case0, case1});
  return bind1(p, {which, case0, case1});
}
Array select(const Array& pred, const Array& on_true, const Array& on_false, Loc loc) {
  return select_n(pred, on_false, on_true, loc);
}
Array clamp(const Array& lo, const Array& x, const Array& hi, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("clamp");
  // JAX accepts bool (False < True); the primitive computes in uint8 and the result is bool again.
  if (x.valid() && x.dtype() == DType::bool_ && lo.valid() && lo.dtype() == DType::bool_ && hi.valid() &&
      hi.dtype() == DType::bool_)
    return convert_element_type(bind1(p, {bool_as_u8(lo), bool_as_u8(x), bool_as_u8(hi)}), DType::bool_);
  return bind1(p, {lo, x, hi});
}
Array convert_element_type(const Array& x, DType dtype, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("convert_element_type");
  dtype = canonicalize_dtype(dtype);  // JAX: convert_element_type(x, f64) is f32 without x64
  if (x.dtype() == dtype && !x.weak_type()) return x;
  return bind1(p, {x}, Params{{"new_dtype", dtype}, {"weak_type", false}});
}
namespace {
DType uint_of_size(size_t bytes) {
  switch (bytes) {
    case 1: return DType::uint8;
    case 2: return DType::uint16;
    case 4: return DType::uint32;
    default: return DType::uint64;
  }
}
}  // namespace

Array bitcast_convert_type(const Array& x, DType dtype, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("bitcast_convert_type");
  auto same_width = [&](const Array& a, DType d) {
    return a.dtype() == d ? a : bind1(p, {a}, Params{{"new_dtype", d}});
  };
  if (!x.valid() || !is_valid_dtype(dtype) || is_bool(dtype) || is_bool(x.dtype()) ||
      dtype_size(dtype) == dtype_size(x.dtype()))
    return bind1(p, {x}, Params{{"new_dtype", dtype}});  // its abstract eval names what is wrong
  // Between widths, as XLA's bitcast-convert (little-endian): a wider element becomes a new minor dimension of
  // size ratio, least significant part first; narrower ones along the minor dimension (of that size) combine.
  // Built of shifts and masks on unsigned integers of the two widths.
  size_t in_bytes = dtype_size(x.dtype()), out_bytes = dtype_size(dtype);
  DType uin = uint_of_size(in_bytes), uout = uint_of_size(out_bytes);
  Array u = same_width(x, uin);
  if (in_bytes > out_bytes) {
    int64_t ratio = static_cast<int64_t>(in_bytes / out_bytes);
    Array mask = Array::scalar_int(static_cast<int64_t>((uint64_t{1} << (8 * out_bytes)) - 1), uin);
    Shape one = x.shape();
    one.push_back(1);
    std::vector<Array> parts;
    for (int64_t k = 0; k < ratio; ++k) {
      Array part = bitwise_and(shift_right_logical(u, Array::scalar_int(8 * out_bytes * k, uin)), mask);
      parts.push_back(reshape(convert_element_type(part, uout), one));
    }
    return same_width(concatenate(parts, x.ndim()), dtype);
  }
  int64_t ratio = static_cast<int64_t>(out_bytes / in_bytes);
  if (x.ndim() == 0 || x.shape().back() != ratio)
    detail::throw_error<ShapeError>("bitcast_convert_type",
                            "converting {} to the {}-times wider {} needs a minor dimension of size {}, got shape {} "
                            "(as XLA's bitcast-convert)",
                            x.aval().str(), ratio, dtype_name(dtype), ratio, detail::shape_str(x.shape()));
  Shape lead(x.shape().begin(), x.shape().end() - 1);
  Array acc;
  for (int64_t k = 0; k < ratio; ++k) {
    Array part = reshape(slice_in_dim(u, k, k + 1, 1, x.ndim() - 1), lead);
    Array wide = shift_left(convert_element_type(part, uout), Array::scalar_int(8 * in_bytes * k, uout));
    acc = k == 0 ? wide : bitwise_or(acc, wide);
  }
  return same_width(acc, dtype);
}

Array broadcast_in_dim(const Array& x, Shape shape, std::vector<int64_t> bd, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("broadcast_in_dim");
  // JAX accepts broadcast_dimensions in any order (distinct axes of the result): the operand's axes are transposed
  // into the order of their result axes first, so the primitive sees increasing dimensions.
  if (x.valid() && static_cast<int64_t>(bd.size()) == x.ndim() && !std::is_sorted(bd.begin(), bd.end())) {
    std::vector<int64_t> perm(bd.size());
    std::iota(perm.begin(), perm.end(), int64_t{0});
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return bd[a] < bd[b]; });
    std::vector<int64_t> sorted;
    for (int64_t a : perm) sorted.push_back(bd[a]);
    if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end())  // repeated axes: the primitive reports
      return bind1(p, {transpose(x, perm)}, Params{{"shape", std::move(shape)}, {"broadcast_dimensions", sorted}});
  }
  return bind1(p, {x}, Params{{"shape", std::move(shape)}, {"broadcast_dimensions", std::move(bd)}});
}
Array broadcast(const Array& x, Shape leading, Loc loc) {
  Shape shape = leading;
  std::vector<int64_t> bd;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    bd.push_back(static_cast<int64_t>(leading.size()) + i);
    shape.push_back(x.shape()[i]);
  }
  return broadcast_in_dim(x, shape, bd, loc);
}
Array reshape(const Array& x, Shape new_sizes, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("reshape");
  if (x.shape() == new_sizes) return x;
  return bind1(p, {x}, Params{{"new_sizes", std::move(new_sizes)}});
}
Array transpose(const Array& x, std::vector<int64_t> perm, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("transpose");
  return bind1(p, {x}, Params{{"permutation", std::move(perm)}});
}
Array rev(const Array& x, std::vector<int64_t> dims, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("rev");
  return bind1(p, {x}, Params{{"dimensions", std::move(dims)}});
}
Array slice(const Array& x, std::vector<int64_t> start, std::vector<int64_t> limit, std::vector<int64_t> strides,
            Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("slice");
  if (strides.empty()) strides.assign(start.size(), 1);
  return bind1(p, {x}, Params{{"start_indices", std::move(start)}, {"limit_indices", std::move(limit)},
                              {"strides", std::move(strides)}});
}
Array slice_in_dim(const Array& x, int64_t start, int64_t limit, int64_t stride, int64_t axis, Loc loc) {
  ApiScope s(loc);
  axis = detail::canonical_axis(axis, x.ndim(), "slice_in_dim");
  // Negative start and limit count from the end of the axis, as JAX's slice_in_dim.
  if (start < 0) start += x.shape()[axis];
  if (limit < 0) limit += x.shape()[axis];
  std::vector<int64_t> st(x.ndim(), 0), li = x.shape(), str(x.ndim(), 1);
  st[axis] = start;
  li[axis] = limit;
  str[axis] = stride;
  return slice(x, st, li, str, loc);
}
namespace {
/// Negative start indices count from the end of their axis, as JAX's dynamic_slice does (then the
/// primitive clamps into range). Concrete indices are fixed on the host; traced ones get a select.
std::vector<Array> wrap_negative_starts(const Array& x, const std::vector<Array>& given) {
  // Start indices must share one integer dtype (the primitive checks it, as JAX's dtype rule). A weak index (a C++
  // integer literal, JAX's Python int) takes the strong indices' dtype when they agree on one.
  std::optional<DType> strong_dtype;
  for (const Array& s : given)
    if (s.valid() && !s.weak_type() && is_integer(s.dtype()) && !strong_dtype) strong_dtype = s.dtype();
  std::vector<Array> starts = given;
  if (strong_dtype)
    for (Array& s : starts)
      if (s.valid() && s.weak_type() && is_integer(s.dtype()) && s.dtype() != *strong_dtype)
        s = convert_element_type(s, *strong_dtype);
  std::vector<Array> out;
  for (size_t i = 0; i < starts.size(); ++i) {
    const Array& s = starts[i];
    if (!s.valid() || i >= static_cast<size_t>(x.ndim()) || !is_signed_integer(s.dtype()) || s.ndim() != 0) {
      out.push_back(s);  // the primitive reports what is wrong
      continue;
    }
    Array d = Array::scalar_int(x.shape()[i], s.dtype());
    if (!s.is_tracer()) {
      out.push_back(s.item<int64_t>() < 0 ? add(s, d) : s);
      continue;
    }
    // One statement per op, in JAX's order (compare, then add): a call's arguments are evaluated in an unspecified
    // order (gcc right to left, clang left to right), which would reorder the traced equations between compilers.
    Array negative = lt(s, Array::scalar_int(0, s.dtype()));
    Array shifted = add(s, d);
    out.push_back(select(negative, shifted, s));
  }
  return out;
}
}  // namespace

Array dynamic_slice(const Array& x, const std::vector<Array>& starts, std::vector<int64_t> sizes, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("dynamic_slice");
  std::vector<Array> ins{x};
  auto wrapped = wrap_negative_starts(x, starts);
  ins.insert(ins.end(), wrapped.begin(), wrapped.end());
  return bind1(p, ins, Params{{"slice_sizes", std::move(sizes)}});
}
Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("dynamic_update_slice");
  std::vector<Array> ins{x, update};
  auto wrapped = wrap_negative_starts(x, starts);
  ins.insert(ins.end(), wrapped.begin(), wrapped.end());
  return bind1(p, ins);
}
Array concatenate(const std::vector<Array>& xs, int64_t dimension, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("concatenate");
  return bind1(p, xs, Params{{"dimension", dimension}});
}
Array pad(const Array& x, const Array& v, std::vector<std::array<int64_t, 3>> cfg, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("pad");
  std::vector<int64_t> flat;
  for (auto& c : cfg) flat.insert(flat.end(), c.begin(), c.end());
  return bind1(p, {x, v}, Params{{"padding_config", flat}});
}
Array broadcasted_iota(DType dtype, Shape shape, int64_t dimension, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("iota");
  return bind1(p, {},
               Params{{"dtype", canonicalize_dtype(dtype)}, {"shape", std::move(shape)}, {"dimension", dimension}});
}
Array iota(DType dtype, int64_t size, Loc loc) { return broadcasted_iota(dtype, {size}, 0, loc); }
Array full(Shape shape, const Array& fill, Loc loc) {
  ApiScope s(loc);
  if (fill.ndim() != 0)
    detail::throw_error<ShapeError>("full", "fill_value must be a scalar, got shape {}",
                                    detail::shape_str(fill.shape()));
  return broadcast_in_dim(fill, std::move(shape), {}, loc);
}

#define JITX_LAX_REDUCE_IMPL(fn)                                   \
  Array fn(const Array& x, std::vector<int64_t> axes, Loc loc) {   \
    ApiScope s(loc);                                               \
    static const auto& p = prim(#fn);                              \
    if (std::string_view(#fn) == "reduce_sum" || std::string_view(#fn) == "reduce_prod") refuse_bool(#fn, x); \
    return bind1(p, {x}, Params{{"axes", std::move(axes)}});       \
  }
JITX_LAX_REDUCE_IMPL(reduce_sum) JITX_LAX_REDUCE_IMPL(reduce_prod) JITX_LAX_REDUCE_IMPL(reduce_max)
JITX_LAX_REDUCE_IMPL(reduce_min) JITX_LAX_REDUCE_IMPL(reduce_and) JITX_LAX_REDUCE_IMPL(reduce_or)
#undef JITX_LAX_REDUCE_IMPL

Array argmax(const Array& x, int64_t axis, DType index_dtype, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("argmax");
  return bind1(p, {x}, Params{{"axes", std::vector<int64_t>{axis}}, {"index_dtype", index_dtype}});
}
Array argmin(const Array& x, int64_t axis, DType index_dtype, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("argmin");
  return bind1(p, {x}, Params{{"axes", std::vector<int64_t>{axis}}, {"index_dtype", index_dtype}});
}

namespace {
// JAX's lax cumulative ops refuse negative axes ("XLA operations do not allow negative axes"); jnp's accept them.
void refuse_negative_axis(const char* op, int64_t axis) {
  if (axis < 0)
    detail::throw_error<ShapeError>(op, "got axis {}: lax operations do not allow negative axes, as JAX's (jnp's "
                                        "cumulative functions accept them)", axis);
}
}  // namespace

#define JITX_LAX_CUM_IMPL(fn)                                           \
  Array fn(const Array& x, int64_t axis, bool reverse, Loc loc) {       \
    ApiScope s(loc);                                                    \
    static const auto& p = prim(#fn);                                   \
    refuse_bool(#fn, x);                                                \
    refuse_negative_axis(#fn, axis);                                    \
    axis = detail::canonical_axis(axis, x.ndim(), #fn);                 \
    return bind1(p, {x}, Params{{"axis", axis}, {"reverse", reverse}}); \
  }
JITX_LAX_CUM_IMPL(cumsum) JITX_LAX_CUM_IMPL(cumprod) JITX_LAX_CUM_IMPL(cummax) JITX_LAX_CUM_IMPL(cummin)
#undef JITX_LAX_CUM_IMPL

namespace {
Params window_params(const Array& x, const WindowConfig& w) {
  int64_t r = x.ndim();
  Params ps;
  ps.set("window_dimensions", w.window_dimensions);
  ps.set("window_strides", w.window_strides.empty() ? std::vector<int64_t>(r, 1) : w.window_strides);
  std::vector<int64_t> pad;
  if (w.padding.empty()) pad.assign(2 * r, 0);
  for (auto& [lo, hi] : w.padding) {
    pad.push_back(lo);
    pad.push_back(hi);
  }
  ps.set("padding", pad);
  ps.set("base_dilation", w.base_dilation.empty() ? std::vector<int64_t>(r, 1) : w.base_dilation);
  ps.set("window_dilation", w.window_dilation.empty() ? std::vector<int64_t>(r, 1) : w.window_dilation);
  return ps;
}
}  // namespace

#define JITX_LAX_WINDOW_IMPL(fn)                                  \
  Array fn(const Array& x, const WindowConfig& w, Loc loc) {      \
    ApiScope s(loc);                                              \
    static const auto& p = prim(#fn);                             \
    if (std::string_view(#fn) == "reduce_window_sum") refuse_bool(#fn, x); \
    return bind1(p, {x}, window_params(x, w));                    \
  }
JITX_LAX_WINDOW_IMPL(reduce_window_sum)
JITX_LAX_WINDOW_IMPL(reduce_window_max) JITX_LAX_WINDOW_IMPL(reduce_window_min)
#undef JITX_LAX_WINDOW_IMPL

    Array
    dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& d, std::optional<DType> pref, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("dot_general");
  Params ps{{"lhs_contracting_dimensions", d.lhs_contracting},
            {"rhs_contracting_dimensions", d.rhs_contracting},
            {"lhs_batch_dimensions", d.lhs_batch},
            {"rhs_batch_dimensions", d.rhs_batch}};
  if (pref) ps.set("preferred_element_type", *pref);
  return bind1(p, {lhs, rhs}, ps);
}
Array dot(const Array& lhs, const Array& rhs, Loc loc) {
  ApiScope s(loc);
  if (lhs.ndim() < 1 || lhs.ndim() > 2 || rhs.ndim() < 1 || rhs.ndim() > 2)
    detail::throw_error<ShapeError>("dot", "expects 1-D or 2-D operands, got {} and {}", lhs.aval().str(),
                                    rhs.aval().str());
  return dot_general(lhs, rhs, {{lhs.ndim() - 1}, {0}, {}, {}}, std::nullopt, loc);
}

}  // namespace jitx::lax

// --- indexing and convolution --------------------------------------------------------------------------------
namespace jitx::lax {
namespace {
int64_t index_vector_dim(const Array& indices, int64_t ivd) {
  if (ivd != -1) return ivd;
  return indices.ndim() == 0 ? 0 : indices.ndim() - 1;
}

Array scatter_impl(std::string_view name, const Array& operand, const Array& indices, const Array& updates,
                   const ScatterDimensionNumbers& d, bool sorted, bool unique) {
  const auto& p = prim(name);
  Params ps{{"update_window_dims", d.update_window_dims},
            {"inserted_window_dims", d.inserted_window_dims},
            {"input_batching_dims", d.input_batching_dims},
            {"scatter_indices_batching_dims", d.scatter_indices_batching_dims},
            {"scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims},
            {"index_vector_dim", index_vector_dim(indices, d.index_vector_dim)},
            {"indices_are_sorted", sorted},
            {"unique_indices", unique}};
  return bind1(p, {operand, indices, updates}, ps);
}
}  // namespace

Array gather(const Array& operand, const Array& start_indices, const GatherDimensionNumbers& d,
             std::vector<int64_t> slice_sizes, bool indices_are_sorted, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("gather");
  Params ps{{"offset_dims", d.offset_dims},
            {"collapsed_slice_dims", d.collapsed_slice_dims},
            {"operand_batching_dims", d.operand_batching_dims},
            {"start_indices_batching_dims", d.start_indices_batching_dims},
            {"start_index_map", d.start_index_map},
            {"index_vector_dim", index_vector_dim(start_indices, d.index_vector_dim)},
            {"slice_sizes", slice_sizes},
            {"indices_are_sorted", indices_are_sorted}};
  // A batching axis of slice size 0 (JAX accepts 0 or 1) gathers nothing: XLA's result is zeros. The gather runs with
  // size 1 there (the output's shape does not depend on it) and its values are replaced.
  bool zeros = false;
  if (operand.valid())
    for (int64_t a : d.operand_batching_dims)
      if (a >= 0 && a < operand.ndim() && static_cast<size_t>(a) < slice_sizes.size() && slice_sizes[a] == 0 &&
          operand.shape()[a] > 0)
        slice_sizes[a] = 1, zeros = true;
  if (zeros) ps.set("slice_sizes", slice_sizes);
  Array r = bind1(p, {operand, start_indices}, ps);
  if (!zeros) return r;
  return lax::full(r.shape(), detail::convert_weak(Array(0), r.dtype(), r.weak_type()));
}

#define JITX_LAX_SCATTER_IMPL(fn, pname)                                                                       \
  Array fn(const Array& operand, const Array& indices, const Array& updates, const ScatterDimensionNumbers& d, \
           bool indices_are_sorted, bool unique_indices, Loc loc) {                                             \
    ApiScope s(loc);                                                                                           \
    if (std::string_view(pname) == "scatter-add" || std::string_view(pname) == "scatter-mul")                  \
      refuse_bool(#fn, operand);                                                                               \
    return scatter_impl(pname, operand, indices, updates, d, indices_are_sorted, unique_indices);              \
  }
JITX_LAX_SCATTER_IMPL(scatter, "scatter") JITX_LAX_SCATTER_IMPL(scatter_add, "scatter-add")
JITX_LAX_SCATTER_IMPL(scatter_mul, "scatter-mul") JITX_LAX_SCATTER_IMPL(scatter_min, "scatter-min")
JITX_LAX_SCATTER_IMPL(scatter_max, "scatter-max")
#undef JITX_LAX_SCATTER_IMPL

std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, bool is_stable, int64_t num_keys,
                        Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("sort");
  if (operands.empty()) detail::throw_error<ShapeError>("sort", "needs at least one operand, got none");
  dimension = detail::canonical_axis(dimension, operands[0].ndim(), "sort");
  return detail::bind(p, operands, Params{{"dimension", dimension}, {"is_stable", is_stable}, {"num_keys", num_keys}});
}
Array sort(const Array& operand, int64_t dimension, bool is_stable, Loc loc) {
  return sort(std::vector<Array>{operand}, dimension, is_stable, 1, loc)[0];
}

std::pair<Array, Array> top_k(const Array& operand, int64_t k, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("top_k");
  // JAX accepts bool: the largest k by False < True (computed in uint8, the values bool again).
  auto outs = detail::bind(p, {bool_as_u8(operand)}, Params{{"k", k}});
  if (operand.valid() && operand.dtype() == DType::bool_) outs[0] = convert_element_type(outs[0], DType::bool_);
  return {outs[0], outs[1]};
}

ConvDimensionNumbers conv_dimension_numbers(const std::string& lhs, const std::string& rhs, const std::string& out,
                                            Loc loc) {
  ApiScope s(loc);
  auto fail = [&] {
    detail::throw_error<ShapeError>(
        "conv_dimension_numbers",
        "specs '{}', '{}', '{}' need equal lengths (at least 2), 'N' and 'C' once in lhs and "
        "out, 'O' and 'I' once in rhs, and the same spatial letters in all three",
        lhs, rhs, out);
  };
  if (lhs.size() != rhs.size() || lhs.size() != out.size() || lhs.size() < 2) fail();
  auto pos = [&](const std::string& spec, char c) -> int64_t {
    if (std::count(spec.begin(), spec.end(), c) != 1) fail();
    return static_cast<int64_t>(spec.find(c));
  };
  // Spatial axes are ordered as the rhs spec lists them (jax.lax.conv_general_permutations).
  std::string spatial;
  for (char c : rhs)
    if (c != 'O' && c != 'I') spatial.push_back(c);
  ConvDimensionNumbers dn;
  dn.lhs_spec = {pos(lhs, 'N'), pos(lhs, 'C')};
  dn.rhs_spec = {pos(rhs, 'O'), pos(rhs, 'I')};
  dn.out_spec = {pos(out, 'N'), pos(out, 'C')};
  for (char c : spatial) {
    dn.lhs_spec.push_back(pos(lhs, c));
    dn.rhs_spec.push_back(pos(rhs, c));
    dn.out_spec.push_back(pos(out, c));
  }
  return dn;
}

Array conv_general_dilated(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides,
                           std::vector<std::pair<int64_t, int64_t>> padding, std::vector<int64_t> lhs_dilation,
                           std::vector<int64_t> rhs_dilation, const ConvDimensionNumbers& dn,
                           int64_t feature_group_count, int64_t batch_group_count, Loc loc) {
  ApiScope s(loc);
  static const auto& p = prim("conv_general_dilated");
  size_t nsp = lhs.ndim() >= 2 ? static_cast<size_t>(lhs.ndim() - 2) : 0;
  std::vector<int64_t> iota(static_cast<size_t>(lhs.ndim()));
  for (size_t k = 0; k < iota.size(); ++k) iota[k] = static_cast<int64_t>(k);
  bool dflt = dn.lhs_spec.empty() && dn.rhs_spec.empty() && dn.out_spec.empty();
  std::vector<int64_t> pad;
  for (auto& [lo, hi] : padding) {
    pad.push_back(lo);
    pad.push_back(hi);
  }
  if (padding.empty()) pad.assign(2 * nsp, 0);
  if (window_strides.empty()) window_strides.assign(nsp, 1);
  if (lhs_dilation.empty()) lhs_dilation.assign(nsp, 1);
  if (rhs_dilation.empty()) rhs_dilation.assign(nsp, 1);
  Params ps{{"window_strides", std::move(window_strides)},
            {"padding", pad},
            {"lhs_dilation", std::move(lhs_dilation)},
            {"rhs_dilation", std::move(rhs_dilation)},
            {"lhs_spec", dflt ? iota : dn.lhs_spec},
            {"rhs_spec", dflt ? iota : dn.rhs_spec},
            {"out_spec", dflt ? iota : dn.out_spec},
            {"feature_group_count", feature_group_count},
            {"batch_group_count", batch_group_count}};
  // A window of no elements: JAX's lowering refuses it (the verifier: "expects window to have positive value"). The
  // primitive takes it (transposes of convolutions with empty outputs build such windows).
  const auto& rspec = dflt ? iota : dn.rhs_spec;
  if (rhs.valid() && rspec.size() == static_cast<size_t>(rhs.ndim()))
    for (size_t k = 2; k < rspec.size(); ++k)
      if (rspec[k] >= 0 && rspec[k] < rhs.ndim() && rhs.shape()[static_cast<size_t>(rspec[k])] == 0)
        detail::throw_error<ShapeError>("conv_general_dilated",
                                        "the window (rhs {}) has size 0 on spatial axis {}; it must have at least "
                                        "one element", rhs.aval().str(), k - 2);
  // JAX accepts bool (XLA's pred convolution: the OR of ANDs): an int32 convolution of the 0/1 values, != 0.
  if (lhs.valid() && rhs.valid() && lhs.dtype() == DType::bool_ && rhs.dtype() == DType::bool_)
    return ne(bind1(p, {convert_element_type(lhs, DType::int32), convert_element_type(rhs, DType::int32)}, ps),
              Array::scalar_int(0, DType::int32));
  return bind1(p, {lhs, rhs}, ps);
}

}  // namespace jitx::lax
