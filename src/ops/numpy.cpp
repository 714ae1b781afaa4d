// jitx::numpy: broadcasting, promotion and the NumPy-style functions built on lax.
#include "jitx/numpy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "core/default_dtypes.h"
#include "jitx/config.h"
#include "core/errors.h"
#include "core/literal.h"
#include "core/trace.h"
#include "core/primitive.h"
#include "jitx/lax.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"

namespace jitx::detail {
Array convert_weak(const Array& x, DType dtype, bool weak) {
  dtype = canonicalize_dtype(dtype);
  if (x.dtype() == dtype && x.weak_type() == weak) return x;
  if (!x.is_tracer() && x.ndim() == 0) {
    auto lit = concrete_buffer(x, "convert")->literal();
    auto out = Literal::make(dtype, {});
    Literal::convert(lit.data(), lit.dtype, out.data(), dtype, 1);
    auto* dev = runtime::Client::get().default_device();
    return make_concrete(runtime::Buffer::from_literal(out, dev), weak);
  }
  static const auto& p = *find_primitive("convert_element_type");
  return bind1(p, {x}, Params{{"new_dtype", dtype}, {"weak_type", weak}});
}
}  // namespace jitx::detail

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;

namespace {
Array convert(const Array& x, DType dtype, bool weak) { return detail::convert_weak(x, dtype, weak); }

Array broadcast_to_shape(const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  std::vector<int64_t> bd;
  int64_t off = static_cast<int64_t>(shape.size()) - x.ndim();
  for (int64_t i = 0; i < x.ndim(); ++i) bd.push_back(off + i);
  // Size-1 axes that broadcast stay size 1 in the operand: broadcast_in_dim handles them.
  return lax::broadcast_in_dim(x, shape, bd);
}

std::vector<int64_t> canon_axes(const Array& x, const Axes& axes, std::string_view op) {
  std::vector<int64_t> out = stats_util::axes_in_order(x, axes, op);
  std::sort(out.begin(), out.end());
  return out;
}

Array keepdims_reshape(const Array& r, const Array& x, const std::vector<int64_t>& axes, bool keepdims) {
  if (!keepdims) return r;
  Shape s = x.shape();
  for (auto a : axes) s[a] = 1;
  return lax::reshape(r, s);
}

/// max/min have no identity: reducing an empty axis is an error, as in NumPy and JAX.
const Array& nonempty_axes(const Array& x, const std::vector<int64_t>& axes, std::string_view op) {
  for (auto a : axes)
    if (x.shape()[a] == 0)
      throw_error<ShapeError>(op, "cannot reduce the empty axis {} of shape {} ({} has no identity)", a,
                              shape_str(x.shape()), op);
  return x;
}

/// Bools and ints narrower than the default int widened to it (unsigned ones to the default uint): the dtype
/// jnp.sum/prod accumulate in. Other dtypes are returned as they are.
Array to_default_int(const Array& x) {
  DType d = x.dtype();
  if (!is_bool(d) && !is_integer(d)) return x;
  DType to = is_unsigned_integer(d) ? detail::default_uint_dtype() : detail::default_int_dtype();
  if (!is_bool(d) && dtype_bits(d) >= dtype_bits(to)) return x;
  return convert(x, to, false);
}

/// Integer and bool inputs to transcendental functions become float32, 64-bit ints the default float (float64),
/// as JAX's promote_dtypes_inexact does (weak inputs stay weak).
Array to_float(const Array& x) {
  if (is_floating(x.dtype())) return x;
  return convert(x, dtype_bits(x.dtype()) == 64 ? detail::default_float_dtype() : DType::float32, x.weak_type());
}

/// Integer arithmetic that JAX defines on bools too (floor_divide, remainder, fmod, power, shifts, square) runs it
/// in int32, as jnp does.
Array bool_as_int32(const Array& x) { return is_bool(x.dtype()) ? convert(x, DType::int32, false) : x; }

/// float16/bfloat16 become float32 for accumulation (JAX's _upcast_f16); other dtypes are returned as they are.
Array upcast_f16(const Array& x) {
  if (x.dtype() != DType::float16 && x.dtype() != DType::bfloat16) return x;
  return convert(x, DType::float32, x.weak_type());
}

/// r rounded back to the 16-bit float dtype of x when upcast_f16 widened it.
Array downcast_to(const Array& r, const Array& x) {
  if (x.dtype() != DType::float16 && x.dtype() != DType::bfloat16) return r;
  return convert(r, x.dtype(), x.weak_type());
}
}  // namespace

Shape broadcast_shapes(const std::vector<Shape>& shapes, std::string_view op) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (auto& s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i];
      int64_t& o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) o = d;
      else {
        std::vector<std::string> all;
        for (auto& t : shapes) all.push_back(shape_str(t));
        throw_error<ShapeError>(op, "incompatible shapes for broadcasting: {}", fmt::join(all, " and "));
      }
    }
  }
  return out;
}

DType result_type(const std::vector<Array>& xs) {
  if (xs.empty()) throw_error<TypeError>("result_type", "needs at least one array");
  for (size_t i = 0; i < xs.size(); ++i)
    if (!xs[i].valid()) throw_error<TypeError>("result_type", "array {} is empty (default-constructed)", i);
  DType d = xs[0].dtype();
  bool w = xs[0].weak_type();
  for (size_t i = 1; i < xs.size(); ++i) d = promote_types(d, w, xs[i].dtype(), xs[i].weak_type(), &w);
  return canonicalize_dtype(d);
}

std::pair<Array, Array> promote_and_broadcast(const Array& x, const Array& y, std::string_view op) {
  if (!x.valid() || !y.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  bool weak = false;
  DType d = promote_types(x.dtype(), x.weak_type(), y.dtype(), y.weak_type(), &weak);
  // A weak result (i32 array + 1.5 -> weak f32) converts both operands to it, as jnp's promote_dtypes does.
  Array a = convert(x, d, weak), b = convert(y, d, weak);
  if (a.shape() == b.shape()) return {a, b};
  Shape s = broadcast_shapes({a.shape(), b.shape()}, op);
  // lax binary ops accept a scalar next to an array, so scalars are left as they are.
  if (a.ndim() != 0) a = broadcast_to_shape(a, s);
  if (b.ndim() != 0) b = broadcast_to_shape(b, s);
  return {a, b};
}

/// JAX's promote_args_numeric: x and y promoted together (a bool next to an integer takes its type: bool and
/// uint64 give uint64), and only a bool result runs in int32.
std::pair<Array, Array> promote_numeric(const Array& x, const Array& y, std::string_view op) {
  auto [a, b] = promote_and_broadcast(x, y, op);
  if (is_bool(a.dtype())) return {convert(a, DType::int32, false), convert(b, DType::int32, false)};
  return {a, b};
}

#define JITX_JNP_BINARY_IMPL(name, laxfn)                 \
  Array name(const Array& x, const Array& y, Loc loc) {   \
    ApiScope s(loc);                                      \
    auto [a, b] = promote_and_broadcast(x, y, #name);     \
    return lax::laxfn(a, b);                              \
  }
JITX_JNP_BINARY_IMPL(subtract, sub)
JITX_JNP_BINARY_IMPL(maximum, max) JITX_JNP_BINARY_IMPL(minimum, min)
JITX_JNP_BINARY_IMPL(equal, eq) JITX_JNP_BINARY_IMPL(not_equal, ne) JITX_JNP_BINARY_IMPL(less, lt)
JITX_JNP_BINARY_IMPL(less_equal, le) JITX_JNP_BINARY_IMPL(greater, gt) JITX_JNP_BINARY_IMPL(greater_equal, ge)
JITX_JNP_BINARY_IMPL(bitwise_and, bitwise_and) JITX_JNP_BINARY_IMPL(bitwise_or, bitwise_or)
JITX_JNP_BINARY_IMPL(bitwise_xor, bitwise_xor)
#undef JITX_JNP_BINARY_IMPL

// Of bools, add is logical or and multiply logical and, as in JAX (lax.add/mul refuse bools).
Array add(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_and_broadcast(x, y, "add");
  return is_bool(a.dtype()) ? lax::bitwise_or(a, b) : lax::add(a, b);
}
Array multiply(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_and_broadcast(x, y, "multiply");
  return is_bool(a.dtype()) ? lax::bitwise_and(a, b) : lax::mul(a, b);
}

Array left_shift(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_numeric(x, y, "left_shift");
  return lax::shift_left(a, b);
}
Array right_shift(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_numeric(x, y, "right_shift");
  return is_unsigned_integer(a.dtype()) ? lax::shift_right_logical(a, b) : lax::shift_right_arithmetic(a, b);
}

Array true_divide(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_and_broadcast(x, y, "true_divide");
  if (!is_floating(a.dtype())) {
    a = to_float(a);
    b = to_float(b);
  }
  return lax::div(a, b);
}
Array divide(const Array& x, const Array& y, Loc loc) { return true_divide(x, y, loc); }

// floor_divide and remainder follow jnp's formulas operation for operation, so that division by zero, infinities
// and NaN give what JAX gives: lax.div by zero is -1 (all ones for unsigned), lax.rem by zero the dividend.
Array floor_divide(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_numeric(x, y, "floor_divide");
  DType d = a.dtype();
  // Constants as weak as the operands: floor_divide of two weak scalars stays weak, as in JAX.
  bool weak = a.weak_type() && b.weak_type();
  auto k = [d, weak](double v) { return convert(Array(v), d, weak); };
  if (is_unsigned_integer(d)) return lax::div(a, b);
  if (is_integer(d)) {
    // One less where the signs differ and the division is inexact; the signs as lax.sign gives them, so that
    // x // 0 = -1 - 1 = -2 for x != 0 (JAX's).
    Array fix = lax::bitwise_and(lax::ne(lax::sign(a), lax::sign(b)), lax::ne(lax::rem(a, b), k(0)));
    Array q = lax::div(a, b);
    return lax::select(fix, lax::sub(q, k(1)), q);
  }
  // JAX's _float_divmod (CPython's float_divmod): (x - fmod(x, y)) / y, one less where fmod's sign differs from
  // y's, rounded. +-inf // y is NaN (fmod is NaN); x // -+inf is -1 for x of the other sign (fmod is x).
  Array mod = lax::rem(a, b);
  Array num = jnp::where(lax::eq(b, k(0)), a, lax::sub(a, mod));
  Array div = lax::div(num, b);
  Array fix = lax::bitwise_and(lax::ne(mod, k(0)), lax::ne(lax::sign(b), lax::sign(mod)));
  return lax::round(lax::select(fix, lax::sub(div, k(1)), div), lax::RoundingMethod::AWAY_FROM_ZERO);
}

Array remainder(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_numeric(x, y, "remainder");
  DType d = a.dtype();
  bool weak = a.weak_type() && b.weak_type();  // two weak scalars give a weak result, as in JAX
  Array zero = convert(Array(0), d, weak);
  // An integer divisor of 0 counts as 1, so x % 0 = 0 (JAX's); floats give fmod's NaN.
  if (is_integer(d)) b = jnp::where(lax::eq(b, zero), convert(Array(1), d, weak), b);
  Array r = lax::rem(a, b);
  if (is_unsigned_integer(d)) return r;
  // Python's sign convention: the result takes the divisor's sign.
  Array fix = lax::bitwise_and(lax::ne(r, zero), lax::ne(lax::lt(r, zero), lax::lt(b, zero)));
  return lax::select(fix, lax::add(r, b), r);
}
Array mod(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);  // an error raised by remainder also names mod
  return remainder(x, y, loc);
}

// power: numpy_extra.cpp.

Array arctan2(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  // JAX's promote_args_inexact: promoted together first (int8 and float16 give float16, int32 and uint32 float64),
  // then an integer result made inexact.
  auto [a, b] = promote_and_broadcast(x, y, "arctan2");
  return lax::atan2(to_float(a), to_float(b));
}

namespace {
Array as_bool(const Array& x) {
  if (x.dtype() == DType::bool_) return x;
  return lax::ne(x, convert(Array(0), x.dtype(), x.weak_type()));
}
}  // namespace
Array logical_and(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_and_broadcast(as_bool(x), as_bool(y), "logical_and");
  return lax::bitwise_and(a, b);
}
Array logical_or(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_and_broadcast(as_bool(x), as_bool(y), "logical_or");
  return lax::bitwise_or(a, b);
}
Array logical_xor(const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_and_broadcast(as_bool(x), as_bool(y), "logical_xor");
  return lax::bitwise_xor(a, b);
}
Array logical_not(const Array& x, Loc loc) {
  ApiScope s(loc);
  return lax::bitwise_not(as_bool(x));
}
Array bitwise_not(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (is_floating(x.dtype()))
    throw_error<TypeError>("bitwise_not", "needs an integer or bool operand, got {}", dtype_name(x.dtype()));
  return lax::bitwise_not(x);
}
Array invert(const Array& x, Loc loc) {
  ApiScope s(loc);  // an error raised by bitwise_not also names invert
  return bitwise_not(x, loc);
}

Array negative(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (is_bool(x.dtype())) throw_error<TypeError>("negative", "is not defined for bool; use logical_not");
  return lax::neg(x);
}
Array abs(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (is_bool(x.dtype()) || is_unsigned_integer(x.dtype())) return x;
  return lax::abs(x);
}
Array sign(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (is_bool(x.dtype())) throw_error<TypeError>("sign", "does not accept dtype bool (as in JAX)");
  return lax::sign(x);
}
Array floor(const Array& x, Loc loc) {
  ApiScope s(loc);
  return is_floating(x.dtype()) ? lax::floor(x) : x;
}
Array ceil(const Array& x, Loc loc) {
  ApiScope s(loc);
  return is_floating(x.dtype()) ? lax::ceil(x) : x;
}
Array round(const Array& x, int decimals, Loc loc) {
  ApiScope s(loc);
  if (is_bool(x.dtype())) throw_error<TypeError>("round", "does not accept dtype bool (as in JAX)");
  if (!is_floating(x.dtype()) && decimals < 0)
    throw_error<TypeError>("round", "rounding integers ({}) to decimals < 0 (got {}) is not implemented (as in JAX, "
                           "whose integer round raises NotImplementedError there)", dtype_name(x.dtype()), decimals);
  if (!is_floating(x.dtype())) return x;
  if (decimals == 0) return lax::round(x, lax::RoundingMethod::TO_NEAREST_EVEN);
  // As JAX's _round_float: rounding past the dtype's range of decimal exponents is a no-op (10^decimals would
  // overflow to inf and give NaN); float16 scales in float32 (its own precision loses the digit being rounded);
  // the factor takes x's weak type.
  double max_exponent = x.dtype() == DType::float16 ? 4.816 : x.dtype() == DType::float64 ? 308.25 : 38.53;
  if (decimals > max_exponent) return x;
  Array v = x.dtype() == DType::float16 ? convert(x, DType::float32, x.weak_type()) : x;
  Array f = convert(Array(std::pow(10.0, decimals)), v.dtype(), v.weak_type());
  Array r = lax::div(lax::round(lax::mul(v, f), lax::RoundingMethod::TO_NEAREST_EVEN), f);
  return x.dtype() == DType::float16 ? convert(r, DType::float16, x.weak_type()) : r;
}

#define JITX_JNP_FLOAT_UNARY(name, laxfn)  \
  Array name(const Array& x, Loc loc) {    \
    ApiScope s(loc);                       \
    return lax::laxfn(to_float(x));        \
  }
JITX_JNP_FLOAT_UNARY(exp, exp) JITX_JNP_FLOAT_UNARY(exp2, exp2) JITX_JNP_FLOAT_UNARY(expm1, expm1)
JITX_JNP_FLOAT_UNARY(log, log) JITX_JNP_FLOAT_UNARY(log1p, log1p) JITX_JNP_FLOAT_UNARY(sqrt, sqrt)
JITX_JNP_FLOAT_UNARY(cbrt, cbrt) JITX_JNP_FLOAT_UNARY(tanh, tanh) JITX_JNP_FLOAT_UNARY(sin, sin)
JITX_JNP_FLOAT_UNARY(cos, cos) JITX_JNP_FLOAT_UNARY(tan, tan) JITX_JNP_FLOAT_UNARY(arcsin, asin)
JITX_JNP_FLOAT_UNARY(arccos, acos) JITX_JNP_FLOAT_UNARY(arctan, atan) JITX_JNP_FLOAT_UNARY(sinh, sinh)
JITX_JNP_FLOAT_UNARY(cosh, cosh) JITX_JNP_FLOAT_UNARY(arcsinh, asinh) JITX_JNP_FLOAT_UNARY(arccosh, acosh)
JITX_JNP_FLOAT_UNARY(arctanh, atanh)
#undef JITX_JNP_FLOAT_UNARY

namespace {
/// x rounded to dtype d (as numpy's astype of a double).
double in_dtype(double v, DType d) {
  detail::Literal l = detail::Literal::make(d, {});
  l.set_f64(0, v);
  return l.get_f64(0);
}
}  // namespace

Array log2(const Array& x, Loc loc) {
  ApiScope s(loc);
  // JAX: lax.div(lax.log(x), lax.log(2 as x's dtype)), which XLA's algebraic simplifier turns into a multiply by
  // the reciprocal of the folded log(2), folded in the dtype too (in f32 for the 16-bit floats, then rounded).
  // bf16 keeps the division (XLA's reciprocal and product are f32 there; the simplifier does the same under jit).
  Array f = to_float(x);
  DType d = f.dtype();
  if (d == DType::bfloat16) return lax::div(lax::log(f), convert(Array(in_dtype(std::log(2.0f), d)), d, false));
  double c = d == DType::float64 ? 1.0 / std::log(2.0)
                                 : in_dtype(1.0f / static_cast<float>(in_dtype(std::log(2.0f), d)), d);
  return lax::mul(lax::log(f), convert(Array(c), d, false));
}
Array log10(const Array& x, Loc loc) {
  ApiScope s(loc);
  // JAX: lax.mul(lax.log(x), 0.4342944819032518 as x's dtype).
  Array f = to_float(x);
  return lax::mul(lax::log(f), convert(Array(in_dtype(0.4342944819032518, f.dtype())), f.dtype(), false));
}
Array square(const Array& x, Loc loc) {
  ApiScope s(loc);
  Array v = bool_as_int32(x);
  return lax::mul(v, v);
}
Array reciprocal(const Array& x, Loc loc) {
  ApiScope s(loc);
  Array f = to_float(x);
  return lax::div(convert(Array(1.0), f.dtype(), f.weak_type()), f);
}
Array isfinite(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return lax::full(x.shape(), Array(true));
  return lax::is_finite(x);
}
Array isnan(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return lax::full(x.shape(), Array(false));
  return lax::ne(x, x);
}
Array isinf(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (!is_floating(x.dtype())) return lax::full(x.shape(), Array(false));
  return lax::eq(lax::abs(x), convert(Array(INFINITY), x.dtype(), false));
}

// --- reductions ----------------------------------------------------------------------------------------
// jnp's reductions (and cumulative ones) return strongly typed results, weak inputs too, as JAX's _reduction
// (lax's keep the input's weak type).
Array strong(const Array& r) { return convert(r, r.dtype(), false); }
#define JITX_JNP_REDUCE(name, laxfn, pre)                                   \
  Array name(const Array& x, Axes axes, bool keepdims, Loc loc) {           \
    ApiScope s(loc);                                                        \
    auto ax = canon_axes(x, axes, #name);                                   \
    Array in = pre;                                                         \
    return strong(keepdims_reshape(lax::laxfn(in, ax), x, ax, keepdims));   \
  }
#define JITX_JNP_REDUCE_UPCAST(name, laxfn, pre)                                              \
  Array name(const Array& x, Axes axes, bool keepdims, Loc loc) {                              \
    ApiScope s(loc);                                                                           \
    auto ax = canon_axes(x, axes, #name);                                                      \
    Array in = pre;                                                                            \
    return strong(keepdims_reshape(downcast_to(lax::laxfn(upcast_f16(in), ax), in), x, ax, keepdims)); \
  }
// Sums and products of bools and narrower ints accumulate in the default int (uint for unsigned), as JAX does;
// float16/bfloat16 ones in float32, rounded once at the end (JAX's upcast_f16_for_computation: the reduce is
// convert -> reduce in f32 -> convert, so that a bf16 op feeding it keeps its f32 value, as in XLA).
JITX_JNP_REDUCE_UPCAST(sum, reduce_sum, to_default_int(x))
JITX_JNP_REDUCE_UPCAST(prod, reduce_prod, to_default_int(x))
#undef JITX_JNP_REDUCE_UPCAST
JITX_JNP_REDUCE(max, reduce_max, nonempty_axes(x, ax, "max"))
JITX_JNP_REDUCE(min, reduce_min, nonempty_axes(x, ax, "min"))
JITX_JNP_REDUCE(all, reduce_and, as_bool(x))
JITX_JNP_REDUCE(any, reduce_or, as_bool(x))
#undef JITX_JNP_REDUCE

namespace {
/// 1 / d computed in dtype (one correctly rounded division, as XLA folds the constant).
Array reciprocal_in(DType dtype, double d) {
  return lax::div(convert(Array(1.0), dtype, false), convert(Array(d), dtype, false));
}
}  // namespace

Array mean(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  auto ax = canon_axes(x, axes, "mean");
  int64_t n = 1;
  for (auto a : ax) n *= x.shape()[a];
  // As JAX does, 16-bit floats are summed and divided in float32 and the result rounded once at the end.
  Array f = upcast_f16(to_float(x));
  Array total = lax::reduce_sum(f, ax);
  // A multiply by 1/n rounded in the dtype: XLA's simplifier turns JAX's division by the constant n into that
  // (mean([1, 2, 7, 4, 5]) is 3.8000000000000003, not 19 / 5), and jitx's does under jit; eager must agree.
  Array r = lax::mul(total, reciprocal_in(f.dtype(), static_cast<double>(n)));
  return keepdims_reshape(downcast_to(r, x), x, ax, keepdims);
}

Array var(const Array& x, Axes axes, bool keepdims, int64_t ddof, Loc loc) {
  ApiScope s(loc);
  auto ax = canon_axes(x, axes, "var");
  int64_t n = 1;
  for (auto a : ax) n *= x.shape()[a];
  Array f = upcast_f16(to_float(x));
  Array mu = mean(f, ax, true);
  Array c = lax::sub(f, broadcast_to_shape(mu, f.shape()));
  Array ss = lax::reduce_sum(lax::mul(c, c), ax);
  Array r = lax::mul(ss, reciprocal_in(f.dtype(), static_cast<double>(n - ddof)));  // as mean's
  // As JAX: NaN where ddof leaves no degrees of freedom (its where(n - ddof > 0, ...), which also gives its
  // gradients there: NaN at ddof = n, zeros past it).
  if (n - ddof <= 0) r = jnp::where(Array(false), r, full_like(r, NAN));
  return keepdims_reshape(downcast_to(r, x), x, ax, keepdims);
}

Array std(const Array& x, Axes axes, bool keepdims, int64_t ddof, Loc loc) {
  ApiScope s(loc);
  return lax::sqrt(var(x, axes, keepdims, ddof));
}

namespace {
Array arg_reduce(const Array& x, std::optional<int64_t> axis, bool keepdims, bool is_max, std::string_view op) {
  Array in = x;
  int64_t a;
  if (!axis) {
    in = lax::reshape(x, {x.size()});
    a = 0;
  } else {
    a = detail::canonical_axis(*axis, x.ndim(), op);
  }
  DType idx = detail::default_int_dtype();
  Array r = is_max ? lax::argmax(in, a, idx) : lax::argmin(in, a, idx);
  if (keepdims) {
    Shape s = axis ? x.shape() : Shape(x.ndim(), 1);
    if (axis) s[a] = 1;
    r = lax::reshape(r, s);
  }
  return r;
}
}  // namespace
Array argmax(const Array& x, std::optional<int64_t> axis, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return arg_reduce(x, axis, keepdims, true, "argmax");
}
Array argmin(const Array& x, std::optional<int64_t> axis, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return arg_reduce(x, axis, keepdims, false, "argmin");
}
// Cumulative sums/products keep integer dtypes (as JAX's do); bools accumulate in the default int.
Array cumsum(const Array& x, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  Array in = is_bool(x.dtype()) ? convert(x, detail::default_int_dtype(), false) : x;
  if (!axis) return strong(lax::cumsum(lax::reshape(in, {in.size()}), 0));
  return strong(lax::cumsum(in, detail::canonical_axis(*axis, in.ndim(), "cumsum")));
}
Array cumprod(const Array& x, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  Array in = is_bool(x.dtype()) ? convert(x, detail::default_int_dtype(), false) : x;
  if (!axis) return strong(lax::cumprod(lax::reshape(in, {in.size()}), 0));
  return strong(lax::cumprod(in, detail::canonical_axis(*axis, in.ndim(), "cumprod")));
}

// --- linear algebra -----------------------------------------------------------------------------------
Array matmul(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  if (a.ndim() == 0 || b.ndim() == 0)
    throw_error<ShapeError>("matmul", "operands must be at least 1-D, got shapes {} and {}", shape_str(a.shape()),
                            shape_str(b.shape()));
  DType d = result_type({a, b});
  bool w = a.weak_type() && b.weak_type();
  Array x = convert(a, d, w), y = convert(b, d, w);
  bool a1 = x.ndim() == 1, b1 = y.ndim() == 1;
  if (a1) x = lax::reshape(x, {1, x.shape()[0]});
  if (b1) y = lax::reshape(y, {y.shape()[0], 1});
  int64_t k = x.shape().back();
  if (y.shape()[y.ndim() - 2] != k)
    throw_error<ShapeError>("matmul", "contracting dimensions differ: {} @ {} (sizes {} and {})", shape_str(a.shape()),
                            shape_str(b.shape()), k, y.shape()[y.ndim() - 2]);
  // A matrix (or vector) on the right, as a layer's weights are: x's leading dims are free dims of one dot_general
  // (JAX's matmul does the same), not batch dims the weights would be broadcast along: one [B*T, k] x [k, n] GEMM
  // instead of B*T / T batched ones over copies of the weights.
  if (y.ndim() == 2 && x.ndim() > 2) {
    Array r = lax::dot_general(x, y, {{x.ndim() - 1}, {0}, {}, {}});
    if (b1) r = lax::reshape(r, Shape(r.shape().begin(), r.shape().end() - 1));
    return r;
  }
  // Broadcast the batch dimensions, then one dot_general with batch dims.
  Shape xb(x.shape().begin(), x.shape().end() - 2), yb(y.shape().begin(), y.shape().end() - 2);
  Shape batch = broadcast_shapes({xb, yb}, "matmul");
  int64_t nb = static_cast<int64_t>(batch.size());
  Shape xs = batch, ys = batch;
  xs.insert(xs.end(), x.shape().end() - 2, x.shape().end());
  ys.insert(ys.end(), y.shape().end() - 2, y.shape().end());
  x = broadcast_to_shape(x, xs);
  y = broadcast_to_shape(y, ys);
  std::vector<int64_t> bd(nb);
  std::iota(bd.begin(), bd.end(), 0);
  Array r = lax::dot_general(x, y, {{nb + 1}, {nb}, bd, bd});
  if (a1 || b1) {
    Shape rs = batch;
    if (!a1) rs.push_back(x.shape()[nb]);
    if (!b1) rs.push_back(y.shape()[nb + 1]);
    r = lax::reshape(r, rs);
  }
  return r;
}

Array dot(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  if (a.ndim() == 0 || b.ndim() == 0) return multiply(a, b);
  if (b.ndim() <= 2) return matmul(a, b);
  // N-D dot: sum over the last axis of a and the second-to-last of b.
  DType d = result_type({a, b});
  return lax::dot_general(convert(a, d, false), convert(b, d, false), {{a.ndim() - 1}, {b.ndim() - 2}, {}, {}});
}

// --- shapes ---------------------------------------------------------------------------------------------
Array reshape(const Array& x, Shape shape, Loc loc) {
  ApiScope s(loc);
  int64_t known = 1, neg = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (neg >= 0) throw_error<ShapeError>("reshape", "can only infer one dimension, got {}", shape_str(shape));
      neg = static_cast<int64_t>(i);
    } else if (shape[i] < 0 || __builtin_mul_overflow(known, shape[i], &known)) {
      throw_error<ShapeError>("reshape", "cannot reshape an array of shape {} into shape {}: {}", shape_str(x.shape()),
                              shape_str(shape), shape[i] < 0 ? "a negative dimension" : "its size overflows int64");
    }
  }
  if (neg >= 0) {
    if (known == 0 || x.size() % known != 0)
      throw_error<ShapeError>("reshape", "cannot reshape an array of shape {} into shape {}", shape_str(x.shape()),
                              shape_str(shape));
    shape[neg] = x.size() / known;
  }
  return lax::reshape(x, shape);
}
Array ravel(const Array& x, Loc loc) {
  ApiScope s(loc);  // an error raised by reshape also names ravel
  return reshape(x, {-1}, loc);
}
Array transpose(const Array& x, Axes axes, Loc loc) {
  ApiScope s(loc);
  std::vector<int64_t> perm;
  if (axes.empty())
    for (int64_t i = x.ndim() - 1; i >= 0; --i) perm.push_back(i);
  else
    for (auto a : axes) perm.push_back(detail::canonical_axis(a, x.ndim(), "transpose"));
  return lax::transpose(x, perm);
}
Array swapaxes(const Array& x, int64_t a, int64_t b, Loc loc) {
  ApiScope s(loc);
  std::vector<int64_t> perm(x.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[detail::canonical_axis(a, x.ndim(), "swapaxes")],
            perm[detail::canonical_axis(b, x.ndim(), "swapaxes")]);
  return lax::transpose(x, perm);
}
Array expand_dims(const Array& x, Axes axes, Loc loc) {
  ApiScope s(loc);
  int64_t out_rank = x.ndim() + static_cast<int64_t>(axes.size());
  std::vector<bool> is_new(out_rank, false);
  for (auto a : axes) {
    int64_t c = detail::canonical_axis(a, out_rank, "expand_dims");
    if (is_new[c]) throw_error<ShapeError>("expand_dims", "axis {} is repeated", a);
    is_new[c] = true;
  }
  Shape shape;
  int64_t k = 0;
  for (int64_t i = 0; i < out_rank; ++i) shape.push_back(is_new[i] ? 1 : x.shape()[k++]);
  return lax::reshape(x, shape);
}
Array squeeze(const Array& x, Axes axes, Loc loc) {
  ApiScope s(loc);
  std::vector<bool> drop(x.ndim(), false);
  if (axes.empty()) {
    for (int64_t i = 0; i < x.ndim(); ++i) drop[i] = x.shape()[i] == 1;
  } else {
    for (auto a : axes) {
      int64_t c = detail::canonical_axis(a, x.ndim(), "squeeze");
      if (drop[c])
        throw_error<ShapeError>("squeeze", "axes {} name axis {} twice (JAX: dimensions are not unique)",
                                fmt::format("{}", fmt::join(axes, ", ")), c);
      if (x.shape()[c] != 1)
        throw_error<ShapeError>("squeeze", "cannot squeeze axis {} of size {} (shape {})", a, x.shape()[c],
                                shape_str(x.shape()));
      drop[c] = true;
    }
  }
  Shape shape;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (!drop[i]) shape.push_back(x.shape()[i]);
  return lax::reshape(x, shape);
}
Array broadcast_to(const Array& x, Shape shape, Loc loc) {
  ApiScope s(loc);
  Shape r = broadcast_shapes({x.shape(), shape}, "broadcast_to");
  if (r != shape)
    throw_error<ShapeError>("broadcast_to", "cannot broadcast an array of shape {} to {}", shape_str(x.shape()),
                            shape_str(shape));
  return broadcast_to_shape(x, shape);
}
Array concatenate(const std::vector<Array>& xs, int64_t axis, Loc loc) {
  ApiScope s(loc);
  if (xs.empty()) throw_error<ShapeError>("concatenate", "needs at least one array");
  DType d = result_type(xs);
  // Weak as JAX's promote_dtypes: the lattice join's (weak scalars stack to a weak array; an int32 array joined
  // with a weak float is a weak float).
  bool w = xs[0].valid() && xs[0].weak_type();
  DType joined = xs[0].valid() ? xs[0].dtype() : d;
  for (size_t k = 1; k < xs.size(); ++k)
    if (xs[k].valid()) joined = promote_types(joined, w, xs[k].dtype(), xs[k].weak_type(), &w);
  std::vector<Array> cs;
  for (auto& x : xs) {
    if (x.ndim() == 0) throw_error<ShapeError>("concatenate", "zero-dimensional arrays cannot be concatenated");
    cs.push_back(convert(x, d, w));
  }
  return lax::concatenate(cs, detail::canonical_axis(axis, xs[0].ndim(), "concatenate"));
}
Array stack(const std::vector<Array>& xs, int64_t axis, Loc loc) {
  ApiScope s(loc);
  if (xs.empty()) throw_error<ShapeError>("stack", "needs at least one array");
  int64_t a = detail::canonical_axis(axis, xs[0].ndim() + 1, "stack");
  std::vector<Array> ex;
  for (auto& x : xs) {
    if (x.shape() != xs[0].shape())
      throw_error<ShapeError>("stack", "all arrays must have the same shape, got {} and {}", shape_str(xs[0].shape()),
                              shape_str(x.shape()));
    ex.push_back(expand_dims(x, {a}));
  }
  return concatenate(ex, a);
}
Array flip(const Array& x, Axes axes, Loc loc) {
  ApiScope s(loc);
  return lax::rev(x, canon_axes(x, axes, "flip"));
}
Array where(const Array& cond, const Array& x, const Array& y, Loc loc) {
  ApiScope s(loc);
  auto [a, b] = promote_and_broadcast(x, y, "where");
  Array c = as_bool(cond);
  Shape shape = broadcast_shapes({c.shape(), a.shape(), b.shape()}, "where");
  c = broadcast_to_shape(c, shape);
  a = broadcast_to_shape(a, shape);
  b = broadcast_to_shape(b, shape);
  return lax::select(c, a, b);
}
Array clip(const Array& x, std::optional<Array> lo, std::optional<Array> hi, Loc loc) {
  ApiScope s(loc);
  Array r = x;
  if (lo) r = maximum(r, *lo);
  if (hi) r = minimum(r, *hi);
  return r;
}
Array astype(const Array& x, DType dtype, Loc loc) {
  ApiScope s(loc);
  return lax::convert_element_type(x, dtype);
}
Array slice_axis(const Array& x, int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step,
                 Loc loc) {
  ApiScope s(loc);
  int64_t a = detail::canonical_axis(axis, x.ndim(), "slice");
  int64_t n = x.shape()[a];
  if (step == 0) throw_error<ShapeError>("slice", "step must not be zero, got {}", step);
  if (step < 0) {
    // Python's rules for a negative step: start defaults to the last element, stop to "before the first";
    // x[start:stop:step] is then rev(x)[n-1-start : n-1-stop : -step].
    auto normn = [&](std::optional<int64_t> v, int64_t dflt) {
      if (!v) return dflt;
      int64_t i = *v < 0 ? *v + n : *v;
      return std::clamp<int64_t>(i, -1, n - 1);
    };
    int64_t b = normn(start, n - 1), e = std::min(normn(stop, -1), b);
    // (-INT64_MIN overflows; any stride of n or more takes just the first element.)
    int64_t stride = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
    return lax::slice_in_dim(lax::rev(x, {a}), n - 1 - b, n - 1 - e, stride, a);
  }
  auto norm = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    return std::clamp<int64_t>(i, 0, n);
  };
  int64_t b = norm(start, 0), e = std::max(norm(stop, n), norm(start, 0));
  return lax::slice_in_dim(x, b, e, step, a);
}

}  // namespace jitx::numpy
