// jitx::numpy (alias jnp): NumPy-style functions with broadcasting and JAX's type promotion.
#pragma once
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jitx/array.h"

namespace jitx::numpy {

using Axes = std::vector<int64_t>;  // empty: all axes

// elementwise binary (broadcasting, promotion)
#define JITX_JNP_BINARY(name) Array name(const Array& x, const Array& y, Loc loc = Loc::current());
JITX_JNP_BINARY(add) JITX_JNP_BINARY(subtract) JITX_JNP_BINARY(multiply) JITX_JNP_BINARY(divide)
JITX_JNP_BINARY(true_divide) JITX_JNP_BINARY(floor_divide) JITX_JNP_BINARY(remainder) JITX_JNP_BINARY(mod)
JITX_JNP_BINARY(power) JITX_JNP_BINARY(maximum) JITX_JNP_BINARY(minimum) JITX_JNP_BINARY(arctan2)
JITX_JNP_BINARY(equal) JITX_JNP_BINARY(not_equal) JITX_JNP_BINARY(less) JITX_JNP_BINARY(less_equal)
JITX_JNP_BINARY(greater) JITX_JNP_BINARY(greater_equal) JITX_JNP_BINARY(logical_and) JITX_JNP_BINARY(logical_or)
JITX_JNP_BINARY(logical_xor) JITX_JNP_BINARY(bitwise_and) JITX_JNP_BINARY(bitwise_or) JITX_JNP_BINARY(bitwise_xor)
JITX_JNP_BINARY(left_shift) JITX_JNP_BINARY(right_shift)
#undef JITX_JNP_BINARY

// elementwise unary (integers promote to float for the transcendental ones)
#define JITX_JNP_UNARY(name) Array name(const Array& x, Loc loc = Loc::current());
JITX_JNP_UNARY(negative) JITX_JNP_UNARY(abs) JITX_JNP_UNARY(sign) JITX_JNP_UNARY(floor) JITX_JNP_UNARY(ceil)
JITX_JNP_UNARY(exp) JITX_JNP_UNARY(exp2) JITX_JNP_UNARY(expm1) JITX_JNP_UNARY(log) JITX_JNP_UNARY(log1p)
JITX_JNP_UNARY(log2) JITX_JNP_UNARY(log10) JITX_JNP_UNARY(sqrt) JITX_JNP_UNARY(cbrt) JITX_JNP_UNARY(square)
JITX_JNP_UNARY(reciprocal) JITX_JNP_UNARY(tanh) JITX_JNP_UNARY(sin) JITX_JNP_UNARY(cos) JITX_JNP_UNARY(tan)
JITX_JNP_UNARY(arcsin) JITX_JNP_UNARY(arccos) JITX_JNP_UNARY(arctan) JITX_JNP_UNARY(sinh) JITX_JNP_UNARY(cosh)
JITX_JNP_UNARY(arcsinh) JITX_JNP_UNARY(arccosh) JITX_JNP_UNARY(arctanh) JITX_JNP_UNARY(isfinite)
JITX_JNP_UNARY(isnan) JITX_JNP_UNARY(isinf) JITX_JNP_UNARY(logical_not) JITX_JNP_UNARY(bitwise_not)
JITX_JNP_UNARY(invert)
#undef JITX_JNP_UNARY
Array round(const Array& x, int decimals = 0, Loc loc = Loc::current());

// reductions
Array sum(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array prod(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array max(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array min(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array all(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array any(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array mean(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array var(const Array& x, Axes axes = {}, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current());
Array std(const Array& x, Axes axes = {}, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current());
/// Index of the max along axis (flattened when axis is nullopt).
Array argmax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
             Loc loc = Loc::current());
Array argmin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
             Loc loc = Loc::current());
Array cumsum(const Array& x, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
Array cumprod(const Array& x, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());

// linear algebra
Array matmul(const Array& a, const Array& b, Loc loc = Loc::current());
Array dot(const Array& a, const Array& b, Loc loc = Loc::current());
/// einsum over explicit subscripts ("ij,jk->ik", "bij,bjk->bik", "i,i->", "ij->ji", ...).
Array einsum(const std::string& subscripts, const std::vector<Array>& operands, Loc loc = Loc::current());

// shapes
Array reshape(const Array& x, Shape shape, Loc loc = Loc::current());  // one -1 allowed
Array ravel(const Array& x, Loc loc = Loc::current());
Array transpose(const Array& x, Axes axes = {}, Loc loc = Loc::current());
Array swapaxes(const Array& x, int64_t a, int64_t b, Loc loc = Loc::current());
Array expand_dims(const Array& x, Axes axes, Loc loc = Loc::current());
Array squeeze(const Array& x, Axes axes = {}, Loc loc = Loc::current());
Array broadcast_to(const Array& x, Shape shape, Loc loc = Loc::current());
Array concatenate(const std::vector<Array>& xs, int64_t axis = 0, Loc loc = Loc::current());
Array stack(const std::vector<Array>& xs, int64_t axis = 0, Loc loc = Loc::current());
Array flip(const Array& x, Axes axes = {}, Loc loc = Loc::current());
Array where(const Array& cond, const Array& x, const Array& y, Loc loc = Loc::current());
Array clip(const Array& x, std::optional<Array> lo, std::optional<Array> hi, Loc loc = Loc::current());
Array astype(const Array& x, DType dtype, Loc loc = Loc::current());
/// x[start:stop:step] along axis (negative values count from the end, as in Python).
Array slice_axis(const Array& x, int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
                 int64_t step = 1, Loc loc = Loc::current());

// indexing, sorting (built on lax.gather / lax.scatter / lax.sort)
/// Elements of x at indices along axis (flattened x when axis is nullopt); negative indices count from the end.
/// Out-of-range indices follow mode, as in JAX: "fill" (the default) gives NaN for floats, the minimum of signed
/// integers, the maximum of unsigned ones and true for bool; "clip" clamps to the axis; "wrap" takes them modulo
/// the axis length.
Array take(const Array& x, const Array& indices, std::optional<int64_t> axis = std::nullopt,
           std::string_view mode = "fill", Loc loc = Loc::current());
/// Ascending, stable sort along axis (flattened when nullopt); NaNs last.
Array sort(const Array& x, std::optional<int64_t> axis = -1, Loc loc = Loc::current());
/// int32 indices that sort x along axis (stable; NaNs last).
Array argsort(const Array& x, std::optional<int64_t> axis = -1, Loc loc = Loc::current());

/// JAX's x.at[idx]: functional updates at integer indices of the leading axes (one index array per axis,
/// broadcast together). Negative indices count from the end; out-of-range updates are dropped, reads clamp.
class IndexUpdateRef {
 public:
  IndexUpdateRef(Array x, std::vector<Array> indices) : x_(std::move(x)), indices_(std::move(indices)) {}
  Array get(Loc loc = Loc::current()) const;
  Array set(const Array& values, Loc loc = Loc::current()) const;
  Array add(const Array& values, Loc loc = Loc::current()) const;
  Array mul(const Array& values, Loc loc = Loc::current()) const;
  Array min(const Array& values, Loc loc = Loc::current()) const;
  Array max(const Array& values, Loc loc = Loc::current()) const;

 private:
  Array update(std::string_view kind, const Array& values) const;
  Array x_;
  std::vector<Array> indices_;
};
/// x.at[index] (index: an integer array indexing the first axis).
IndexUpdateRef at(const Array& x, const Array& index);
/// x.at[i0, i1, ...] (integer arrays for the leading axes).
IndexUpdateRef at(const Array& x, std::vector<Array> indices);

// One integer axis where JAX takes `axis: int | Sequence[int]`: jnp::mean(h, -1, true). (A template, so that
// `{}` and `{0, 1}` still mean the axis lists.)
#define JITX_JNP_INT_AXIS(name)                                                                     \
  template <std::integral I>                                                                        \
  Array name(const Array& x, I axis, bool keepdims = false, Loc loc = Loc::current()) {             \
    return name(x, Axes{static_cast<int64_t>(axis)}, keepdims, loc);                               \
  }
JITX_JNP_INT_AXIS(sum) JITX_JNP_INT_AXIS(prod) JITX_JNP_INT_AXIS(max) JITX_JNP_INT_AXIS(min)
JITX_JNP_INT_AXIS(all) JITX_JNP_INT_AXIS(any) JITX_JNP_INT_AXIS(mean)
#undef JITX_JNP_INT_AXIS
template <std::integral I>
Array var(const Array& x, I axis, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) {
  return var(x, Axes{static_cast<int64_t>(axis)}, keepdims, ddof, loc);
}
template <std::integral I>
Array std(const Array& x, I axis, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) {
  return numpy::std(x, Axes{static_cast<int64_t>(axis)}, keepdims, ddof, loc);
}
template <std::integral I>
Array expand_dims(const Array& x, I axis, Loc loc = Loc::current()) {
  return expand_dims(x, Axes{static_cast<int64_t>(axis)}, loc);
}
template <std::integral I>
Array squeeze(const Array& x, I axis, Loc loc = Loc::current()) {
  return squeeze(x, Axes{static_cast<int64_t>(axis)}, loc);
}
template <std::integral I>
Array flip(const Array& x, I axis, Loc loc = Loc::current()) {
  return flip(x, Axes{static_cast<int64_t>(axis)}, loc);
}

// Array creation and dtype names, as in jax.numpy (defined in jitx::, array.h / dtype.h).
using jitx::arange;
using jitx::array;
using jitx::eye;
using jitx::full;
using jitx::full_like;
using jitx::linspace;
using jitx::ones;
using jitx::ones_like;
using jitx::zeros;
using jitx::zeros_like;
// The creation aliases below forward to eye/zeros/ones/full; an error they raise names the alias too
// ("[eye] ... (at main.cpp:4, in identity)").
/// jnp.identity(n, dtype): the n x n identity matrix.
Array identity(int64_t n, DType dtype = DType::float32, Loc loc = Loc::current());
/// jnp.empty(shape, dtype): XLA has no uninitialised buffers, so this is zeros (as in JAX).
Array empty(Shape shape, DType dtype = DType::float32, Loc loc = Loc::current());
/// jnp.zeros_like(a, dtype) / ones_like / full_like / empty_like with a dtype.
Array zeros_like(const Array& a, DType dtype, Loc loc = Loc::current());
Array ones_like(const Array& a, DType dtype, Loc loc = Loc::current());
Array full_like(const Array& a, double value, DType dtype, Loc loc = Loc::current());
Array empty_like(const Array& a, Loc loc = Loc::current());
using jitx::bfloat16;
using jitx::bool_;
using jitx::DType;
using jitx::float16;
using jitx::float32;
using jitx::float64;
using jitx::int16;
using jitx::int32;
using jitx::int64;
using jitx::int8;
using jitx::uint16;
using jitx::uint32;
using jitx::uint64;
using jitx::uint8;

/// Result shape of broadcasting shapes together (NumPy rules); throws ShapeError.
Shape broadcast_shapes(const std::vector<Shape>& shapes, std::string_view op = "broadcast_shapes");
/// Promotes two arrays to their common dtype (JAX rules, weak types included) and broadcasts them to their common
/// shape; a 0-d operand stays 0-d (lax's binary ops take a scalar next to an array).
std::pair<Array, Array> promote_and_broadcast(const Array& x, const Array& y, std::string_view op);
/// promote_and_broadcast, then a bool result as int32 (JAX's promote_args_numeric, for integer arithmetic that
/// bools take part in: floor_divide, remainder, fmod, power, the shifts).
std::pair<Array, Array> promote_numeric(const Array& x, const Array& y, std::string_view op);
/// The dtype the JAX rules give to a combination of arrays.
DType result_type(const std::vector<Array>& xs);

}  // namespace jitx::numpy

namespace jitx {
namespace jnp = jitx::numpy;
}
