// jitx::Array methods, creation functions and operator overloads.
#include "jitx/array.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "core/primitive.h"
#include "core/shape_util.h"
#include "core/trace.h"
#include "jitx/config.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "ops/convert.h"
#include "ops/linspace.h"
#include "runtime/concrete.h"
#include "runtime/foreign_memory.h"
#include "runtime/runtime.h"
#include "runtime/sharded.h"

namespace jitx {
using detail::ApiScope;
using detail::throw_error;

int64_t ShapedArray::size() const { return detail::num_elements(shape); }
std::string ShapedArray::str() const { return detail::aval_str(*this); }
std::ostream& operator<<(std::ostream& os, const ShapedArray& a) { return os << a.str(); }

namespace {
const ShapedArray& empty_aval() {
  static ShapedArray a;
  return a;
}
runtime::Device* default_device() { return runtime::Client::get().default_device(); }

Array scalar_array(DType d, bool weak, const std::function<void(detail::Literal&)>& fill) {
  d = canonicalize_dtype(d);  // with enable_x64 off: a C++ double is a weak f32, an int64 a weak i32
  auto lit = detail::Literal::make(d, {});
  fill(lit);
  return detail::make_concrete(runtime::Buffer::from_literal(lit, default_device()), weak);
}
}  // namespace

const ShapedArray& Array::aval() const {
  if (!impl_) return empty_aval();
  return impl_->aval;
}
bool Array::is_tracer() const { return impl_ && impl_->is_tracer(); }

int64_t Array::dim(int64_t axis, Loc loc) const {
  ApiScope s(loc);
  return shape().at(detail::canonical_axis(axis, ndim(), "dim"));
}

Array Array::from_scalar_f64(double v, DType d, bool weak) {
  return scalar_array(d, weak, [&](detail::Literal& l) { l.set_f64(0, v); });
}
Array Array::from_scalar_i64(int64_t v, DType d, bool weak) {
  // As JAX without x64 (OverflowError for a Python int that does not fit int32): no silent wrap-around.
  if (d == DType::int64 && canonicalize_dtype(d) != d &&
      (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()))
    throw_error<TypeError>("Array",
                           "the 64-bit integer {} does not fit int32, the integer dtype with "
                           "config().enable_x64 off (JAX's OverflowError)",
                           v);
  return scalar_array(d, weak, [&](detail::Literal& l) { l.set_i64(0, v); });
}
Array Array::from_scalar_u64(uint64_t v, DType d, bool weak) {
  if (is_integer(d) && !is_unsigned_integer(d) && v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw_error<TypeError>("Array",
                           "the unsigned integer {} does not fit int64, the type of a C++ unsigned "
                           "value next to arrays (JAX's OverflowError for a Python int that large)",
                           v);
  if (d == DType::uint64 && canonicalize_dtype(d) != d && v > std::numeric_limits<uint32_t>::max())
    throw_error<TypeError>("Array",
                           "the 64-bit unsigned integer {} does not fit uint32, the unsigned dtype with "
                           "config().enable_x64 off (JAX's OverflowError)",
                           v);
  return scalar_array(d, weak, [&](detail::Literal& l) { l.set_u64(0, v); });
}

void Array::copy_to_host(void* dst, DType dst_dtype, size_t n, const Loc& loc) const {
  ApiScope s(loc);
  auto& buf = detail::concrete_buffer(*this, "to_vector");
  auto lit = buf->literal();  // waits for the value (and rethrows a failure)
  JITX_ASSERT(static_cast<int64_t>(n) <= lit.size(), "copy_to_host size");
  detail::Literal::convert(lit.data(), lit.dtype, dst, dst_dtype, n);
}

void Array::check_item(const Loc& loc) const {
  ApiScope s(loc);
  detail::concrete_buffer(*this, "item");
  if (size() != 1)
    throw_error<ShapeError>("item", "needs an array with exactly one element, got shape {}",
                            detail::shape_str(shape()));
}

const Array& Array::block_until_ready() const {
  if (auto* sa = detail::as_sharded(*this)) {  // each shard on its device: no assembling
    sa->wait_local();
    return *this;
  }
  if (impl_ && !is_tracer()) {
    const auto& b = detail::concrete_buffer(*this, "block_until_ready");
    b->ready->wait();
    // A device outside the client's platform (CUDA): the event says the work is enqueued; wait for the device too.
    if (const runtime::ForeignPlatform* f =
            runtime::is_foreign(*b) ? runtime::foreign_platform(b->device->platform) : nullptr;
        f && f->wait)
      f->wait(*b);
  }
  return *this;
}

Array::operator bool() const {
  if (is_tracer() && !detail::concrete_primal(*this)) {
    auto& t = static_cast<const detail::Tracer&>(*impl_);
    // A conversion operator takes no source location: name the last API call (usually `x > 0`).
    const auto* last = detail::last_call_site();
    ApiScope s(last ? *last : Loc::current());
    throw_error<TracerError>("bool",
                             "a traced value {} was used as a C++ bool (in an `if`, `while`, `&&` or `?:`) while "
                             "tracing '{}'. Its value is only known when the compiled code runs. Use "
                             "lax::cond / lax::select / jnp::where for data-dependent branches, or pass the value "
                             "as a static argument",
                             t.aval.str(), t.trace->fn_name);
  }
  if (impl_ && size() != 1) {
    // No source location: a conversion operator has none, and the last API call may be anywhere before it.
    throw_error<ShapeError>("bool",
                            "the truth value of an array with {} elements ({}) is ambiguous: use jnp::any(x) or "
                            "jnp::all(x), as NumPy and JAX say",
                            size(), aval().str());
  }
  return item<bool>();
}

Array Array::astype(DType d, Loc loc) const { return jnp::astype(*this, d, loc); }
Array Array::reshape(Shape s, Loc loc) const { return jnp::reshape(*this, std::move(s), loc); }
Array Array::transpose(std::vector<int64_t> axes, Loc loc) const { return jnp::transpose(*this, std::move(axes), loc); }
Array Array::sum(std::vector<int64_t> axes, bool keepdims, Loc loc) const {
  return jnp::sum(*this, axes, keepdims, loc);
}
Array Array::mean(std::vector<int64_t> axes, bool keepdims, Loc loc) const {
  return jnp::mean(*this, axes, keepdims, loc);
}
Array Array::max(std::vector<int64_t> axes, bool keepdims, Loc loc) const {
  return jnp::max(*this, axes, keepdims, loc);
}
Array Array::min(std::vector<int64_t> axes, bool keepdims, Loc loc) const {
  return jnp::min(*this, axes, keepdims, loc);
}

Array Array::operator[](Index index) const {
  ApiScope s(index.loc);
  int64_t i = index.value;
  if (!impl_) throw_error<TypeError>("getitem", "got an empty (default-constructed) Array");
  if (ndim() == 0) throw_error<ShapeError>("getitem", "cannot index a 0-d array");
  int64_t n = shape()[0];
  if (i < -n || i >= n) throw_error<ShapeError>("getitem", "index {} is out of bounds for axis 0 of size {}", i, n);
  if (i < 0) i += n;
  Array row = lax::slice_in_dim(*this, i, i + 1, 1, 0);
  Shape rest(shape().begin() + 1, shape().end());
  return lax::reshape(row, rest);
}

std::string Array::to_string() const {
  if (!impl_) return "Array(<empty>)";
  if (is_tracer()) return fmt::format("Traced<{}>", aval().str());
  auto lit = detail::concrete_buffer(*this, "to_string")->literal();
  static const char* names[] = {"bool",   "int8",   "int16",   "int32",    "int64",   "uint8",  "uint16",
                                "uint32", "uint64", "float16", "bfloat16", "float32", "float64"};
  std::string dtype_str =
      fmt::format("dtype={}{}", names[static_cast<int>(dtype())], weak_type() ? ", weak_type=True" : "");
  // As JAX's Array.__repr__: an empty array shows its shape; the dtype follows the last line, or (past the line
  // width) six spaces, as JAX writes it.
  if (lit.size() == 0) {
    const Shape& dims = shape();
    std::string s = dims.size() == 1 ? fmt::format("({},)", dims[0]) : fmt::format("({})", fmt::join(dims, ", "));
    return fmt::format("Array([], shape={}, {})", s, dtype_str);
  }
  std::string body = lit.values_str();
  auto nl = body.rfind('\n');
  size_t last_line = nl == std::string::npos ? body.size() + 2 : body.size() - nl + 1;
  const char* sep = last_line + dtype_str.size() + 2 > 75 ? "      " : " ";
  return fmt::format("Array({},{}{})", body, sep, dtype_str);
}

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << a.to_string(); }

// --- creation ------------------------------------------------------------------------------------------
void detail::check_host_count(size_t count, const Shape& shape, Loc loc) {
  ApiScope s(loc);
  int64_t need = detail::checked_num_elements(shape, DType::uint8, "array");
  if (static_cast<int64_t>(count) != need)
    throw_error<ShapeError>("array",
                            "got {} values for shape {}, which holds {}; pass as many values as the shape has "
                            "elements",
                            count, detail::shape_str(shape), need);
}

void detail::ragged_error(Loc loc) {
  ApiScope s(loc);
  throw_error<ShapeError>("array",
                          "nested lists have rows of different lengths (an inhomogeneous shape); every "
                          "row of one level must have the same length");
}

Array array_from_data(const void* data, DType src, Shape shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  dtype = canonicalize_dtype(dtype);  // 64-bit host data becomes 32-bit with enable_x64 off (ints wrap)
  detail::checked_num_elements(shape, src, "array");
  detail::checked_num_elements(shape, dtype, "array");
  auto lit = detail::Literal::make(dtype, shape);
  if (lit.size() > 0) {
    if (!data) throw_error<TypeError>("array", "got a null data pointer for shape {}", detail::shape_str(shape));
    detail::Literal::convert(data, src, lit.data(), dtype, static_cast<size_t>(lit.size()));
  }
  return detail::make_concrete(runtime::Buffer::from_literal(lit, runtime::Client::get().default_device()));
}

namespace {
Array fill(Shape shape, double v, DType d, Loc loc, bool weak = false) {
  ApiScope s(loc);
  d = canonicalize_dtype(d);
  detail::checked_num_elements(shape, d, "full");
  Array scalar = scalar_array(d, weak, [&](detail::Literal& l) { l.set_f64(0, v); });
  return lax::full(std::move(shape), scalar, loc);
}
}  // namespace

Array Array::scalar(double v, DType d) { return from_scalar_f64(v, d, false); }

Array detail::full_integer(Shape shape, int64_t value, bool from_unsigned, DType dtype, Loc loc, bool weak) {
  ApiScope s(loc);
  dtype = canonicalize_dtype(dtype);
  detail::checked_num_elements(shape, dtype, "full");
  // A uint64 value past int64's range keeps its value in a float dtype (its bits in an integer one).
  Array scalar = from_unsigned && value < 0 && is_floating(dtype)
                     ? Array::scalar(static_cast<double>(static_cast<uint64_t>(value)), dtype)
                     : Array::scalar_int(value, dtype);
  if (weak) scalar = convert_weak(scalar, dtype, true);  // full_like of a weak array is weak, as JAX's
  return lax::full(std::move(shape), scalar, loc);
}

Array zeros(Shape shape, DType dtype, Loc loc) { return fill(std::move(shape), 0, dtype, loc); }
Array ones(Shape shape, DType dtype, Loc loc) { return fill(std::move(shape), 1, dtype, loc); }
Array full(Shape shape, double value, DType dtype, Loc loc) { return fill(std::move(shape), value, dtype, loc); }
namespace {
const Array& checked_like(const Array& a, const char* op) {
  if (!a.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  return a;
}
}  // namespace

Array zeros_like(const Array& a, Loc loc) {
  ApiScope s(loc);
  // As JAX: the dtype and weak type of a (jnp.zeros_like of a weak scalar is weak).
  return fill(checked_like(a, "zeros_like").shape(), 0, a.dtype(), loc, a.weak_type());
}
Array ones_like(const Array& a, Loc loc) {
  ApiScope s(loc);
  return fill(checked_like(a, "ones_like").shape(), 1, a.dtype(), loc, a.weak_type());
}
Array full_like(const Array& a, double v, Loc loc) {
  ApiScope s(loc);
  return fill(checked_like(a, "full_like").shape(), v, a.dtype(), loc, a.weak_type());
}

namespace {
/// v rounded to the float dtype d (f64: as it is).
double round_to(double v, DType d) {
  if (d == DType::float64) return v;
  if (d == DType::float32) return static_cast<double>(static_cast<float>(v));
  detail::Literal l = detail::Literal::make(d, {});
  l.set_f64(0, v);
  return l.get_f64(0);
}
}  // namespace

double detail::round_to_float(double v, DType d) { return round_to(v, d); }

std::vector<double> detail::linspace_values(double start, double stop, int64_t num, bool endpoint, DType comp) {
  // JAX's _linspace as XLA compiles it on the CPU, in the computation dtype comp: out[i] = start (1 - i/div) +
  // stop (i/div), stop appended when endpoint. Per comp, as XLA's passes leave it:
  // - float32/float64: the simplifier turns i/div into i * r (r = 1/div rounded) and stop * (i r) into
  //   i * (stop r); LLVM contracts the sum into fma(i, stop r, start (1 - i r)), except for i = 1 when div <= 33
  //   (a loop LLVM unrolls, folding 1 * (stop r) to stop r): fma(start, 1 - r, stop r). So integer results floor
  //   what JAX floors: linspace(10, 1, 4, int32) is 10, 6, 3, 1 (the exact quotients give 10, 7, 4, 1). (Measured
  //   against JAX 0.10.2 on random bounds: float32 exact; float64 exact to a few in 10^4 below ~200 points, while
  //   longer float64 runs, which XLA's vectorised loop contracts 1 - i r too, differ by an ULP more often.)
  // - float16: the same reassociation with every op rounded to float16 (r too), no fma.
  // - bfloat16: no reassociation: step = i * r rounded (r = 1/bf16(div) in float32), then start (1 - step) +
  //   stop step, every op rounded to bfloat16.
  std::vector<double> v(static_cast<size_t>(std::max<int64_t>(num, 0)));
  auto R = [comp](double x) { return round_to(x, comp); };
  bool wide = comp == DType::float64;
  auto W = [wide](double x) { return wide ? x : static_cast<double>(static_cast<float>(x)); };
  auto fma = [wide](double x, double y, double z) {
    return wide ? std::fma(x, y, z)
                : static_cast<double>(std::fmaf(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)));
  };
  double a = R(start), b = R(stop);
  int64_t div = endpoint ? num - 1 : num;
  if (num == 1) {
    v[0] = a;
  } else if (num > 1) {
    for (int64_t i = 0; i < div; ++i) {
      double fi = R(static_cast<double>(i)), out;
      if (comp == DType::bfloat16) {
        double step = R(fi * W(1.0 / R(static_cast<double>(div))));
        out = R(R(a * R(1.0 - step)) + R(b * step));
      } else if (comp == DType::float16) {
        double r = R(1.0 / R(static_cast<double>(div))), br = R(b * r);
        out = R(R(a * R(1.0 - R(fi * r))) + R(fi * br));
      } else {
        double r = W(1.0 / static_cast<double>(div)), br = W(b * r), sub = W(1.0 - W(fi * r));
        out = i == 1 && div <= 33 ? fma(a, sub, br) : fma(fi, br, W(a * sub));
      }
      v[static_cast<size_t>(i)] = out;  // i = 0 too: start, or NaN where stop r is not finite (0 * inf), as JAX's
    }
    if (endpoint) v[static_cast<size_t>(num - 1)] = b;
  }
  return v;
}

Array arange(double start, double stop, double step, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (step == 0) throw_error<ShapeError>("arange", "step must not be zero");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw_error<ShapeError>("arange", "start, stop and step must be finite, got ({}, {}, {})", start, stop, step);
  double count = std::ceil((stop - start) / step);
  if (!(count < 9.2e18))
    throw_error<ShapeError>("arange", "({}, {}, {}) has {} elements: too many to address", start, stop, step, count);
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  if (dtype == DType::bool_) throw_error<TypeError>("arange", "does not accept dtype bool (as JAX's iota)");
  // A constant, as jnp.arange is: computed on the host, then converted.
  detail::checked_num_elements(std::vector<int64_t>{n}, dtype, "arange");
  if (is_integer(dtype) && n > 0 && std::fabs(start) < 9.2e18 && std::fabs(step) < 9.2e18) {
    // jnp's integer arange: as many values as in double, from start and step each converted to the dtype first:
    // arange(-2.5, 2, 1, int32) is -2, -1, 0, 1, 2 and arange(0.5, 3, 0.7, int32) four zeros (NumPy: 0, 1, 2, 3).
    // Values past the dtype's range wrap, as NumPy's arithmetic in the dtype (arange(250, 260, 3, uint8) is 250,
    // 253, 0, 3): computed modulo 2^64, then converted integer to integer.
    auto v = detail::Literal::make(DType::int64, {n});  // a failed allocation is a RuntimeError, not bad_alloc
    auto* p = static_cast<int64_t*>(v.data());
    auto first = static_cast<uint64_t>(static_cast<int64_t>(std::trunc(start)));
    auto delta = static_cast<uint64_t>(static_cast<int64_t>(std::trunc(step)));
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(first + static_cast<uint64_t>(i) * delta);
    return array_from_data(p, DType::int64, {n}, dtype, loc);
  }
  auto v = detail::Literal::make(DType::float64, {n});  // a failed allocation is a RuntimeError, not bad_alloc
  auto* p = static_cast<double*>(v.data());
  if ((dtype == DType::float32 || dtype == DType::float64) && n > 0) {
    // NumPy's fill (jnp.arange of concrete bounds is np.arange's): the first two values rounded to the dtype, then
    // first + i * (second - first) in the dtype's arithmetic, so arange(0, 1, 0.1) in float32 ends in 0.90000004,
    // as JAX's, not 0.9f. (float16 and bfloat16 are start + i * step rounded once, as JAX gives them.)
    double b0 = round_to(start, dtype), b1 = n > 1 ? round_to(start + step, dtype) : 0.0;
    p[0] = b0;
    if (n > 1) p[1] = b1;
    if (dtype == DType::float64) {
      double delta = b1 - b0;
      for (int64_t i = 2; i < n; ++i) p[i] = b0 + static_cast<double>(i) * delta;
    } else {  // float32
      float f0 = static_cast<float>(b0), delta = static_cast<float>(b1) - f0;
      for (int64_t i = 2; i < n; ++i) p[i] = static_cast<double>(f0 + static_cast<float>(i) * delta);
    }
    return array_from_data(p, DType::float64, {n}, dtype, loc);
  }
  for (int64_t i = 0; i < n; ++i) p[i] = start + static_cast<double>(i) * step;
  return array_from_data(p, DType::float64, {n}, dtype, loc);
}
Array arange(double stop, DType dtype, Loc loc) { return arange(0.0, stop, 1.0, dtype, loc); }

Array linspace(double start, double stop, int64_t num, bool endpoint, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (num < 0) throw_error<ShapeError>("linspace", "num must be non-negative, got {}", num);
  detail::checked_num_elements(std::vector<int64_t>{num}, dtype, "linspace");
  DType comp = is_floating(dtype) ? dtype : dtype_bits(dtype) == 64 ? DType::float64 : DType::float32;
  std::vector<double> vals = detail::linspace_values(start, stop, num, endpoint, comp);
  auto lit = detail::Literal::make(DType::float64, {num});
  auto* v = static_cast<double*>(lit.data());
  std::copy(vals.begin(), vals.end(), v);
  if (is_integer(dtype))  // jnp.linspace floors before converting to an integer dtype (-1.67 -> -2, not -1)
    for (int64_t i = 0; i < num; ++i) v[i] = std::floor(v[i]);
  return array_from_data(v, DType::float64, {num}, dtype, loc);
}

Array eye(int64_t n, int64_t m, int64_t k, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (m < -1) throw_error<ShapeError>("eye", "M must be non-negative (or -1 for M = N), got {}", m);
  if (m < 0) m = n;
  if (n < 0) throw_error<ShapeError>("eye", "N must be non-negative, got {}", n);
  // A diagonal outside the matrix (|k| up to int64's limits) leaves it all zeros: k clamped to [-n, m] first.
  k = std::clamp<int64_t>(k, -std::max<int64_t>(n, 0), std::max<int64_t>(m, 0));
  DType it = n > INT32_MAX / 2 || m > INT32_MAX / 2 ? DType::int64 : DType::int32;
  Array rows = lax::broadcasted_iota(it, {n, m}, 0);
  Array cols = lax::broadcasted_iota(it, {n, m}, 1);
  Array diag = lax::eq(lax::add(rows, Array::scalar_int(k, it)), cols);
  return lax::convert_element_type(diag, dtype);
}

Array Array::scalar_int(int64_t v, DType d) { return from_scalar_i64(v, d, false); }

Array iota(DType dtype, Shape shape, int64_t dimension, Loc loc) {
  return lax::broadcasted_iota(dtype, std::move(shape), dimension, loc);
}

// --- operators -------------------------------------------------------------------------------------------
#define JITX_OPERATOR(op, fn) \
  Array operator op(const ArrayLike& a, const ArrayLike& b) { return jnp::fn(a.value, b.value, a.loc); }
JITX_OPERATOR(+, add)
JITX_OPERATOR(-, subtract)
JITX_OPERATOR(*, multiply)
JITX_OPERATOR(/, true_divide)
JITX_OPERATOR(%, remainder)
JITX_OPERATOR(==, equal)
JITX_OPERATOR(!=, not_equal)
JITX_OPERATOR(<, less)
JITX_OPERATOR(<=, less_equal)
JITX_OPERATOR(>, greater)
JITX_OPERATOR(>=, greater_equal)
JITX_OPERATOR(&, bitwise_and)
JITX_OPERATOR(|, bitwise_or)
JITX_OPERATOR(^, bitwise_xor)
#undef JITX_OPERATOR

Array operator-(const Array& a) { return jnp::negative(a); }
Array operator~(const Array& a) { return jnp::bitwise_not(a); }
Array operator!(const Array& a) { return jnp::logical_not(a); }
Array& operator+=(Array& a, const ArrayLike& b) { return a = jnp::add(a, b.value, b.loc); }
Array& operator-=(Array& a, const ArrayLike& b) { return a = jnp::subtract(a, b.value, b.loc); }
Array& operator*=(Array& a, const ArrayLike& b) { return a = jnp::multiply(a, b.value, b.loc); }
Array& operator/=(Array& a, const ArrayLike& b) { return a = jnp::true_divide(a, b.value, b.loc); }

}  // namespace jitx
