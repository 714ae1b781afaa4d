// jnp's everyday remainder (numpy_misc.h): aliases, real-array complex helpers, partition, gradient, spacing, ix_,
// fromfunction's indices, mask_indices and dtype introspection, each as JAX composes it.
#include "jitx/numpy_misc.h"

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_extra.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_more.h"
#include "jitx/numpy_shape.h"
#include "jitx/numpy_stats.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using jitx::detail::ApiScope;
using jitx::detail::shape_str;
using jitx::detail::throw_error;

namespace {
void misc_valid(const Array& x, std::string_view op) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
}
/// x itself, once it is a valid Array (errors name op and the caller's line).
const Array& checked_at(const Array& x, std::string_view op, const Loc& loc) {
  ApiScope s(loc, nullptr);
  misc_valid(x, op);
  return x;
}
/// The 13 dtypes in the order of the can_cast tables below.
int cast_index(DType d) {
  static const DType order[] = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                                DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                                DType::bfloat16, DType::float32, DType::float64};
  for (int i = 0; i < 13; ++i)
    if (order[i] == d) return i;
  throw_error<TypeError>("can_cast", "got DType({}), which is not a jitx dtype", static_cast<int>(d));
}
}  // namespace

Array absolute(const Array& x, Loc loc) {
  {
    ApiScope s(loc);
    misc_valid(x, "absolute");
  }
  return abs(x, loc);
}
Array around(const Array& x, int decimals, Loc loc) {
  {
    ApiScope s(loc);
    misc_valid(x, "around");
    if (x.dtype() == DType::bool_) throw_error<TypeError>("around", "does not accept dtype bool (as jnp.round)");
  }
  return round(x, decimals, loc);
}
Array positive(const Array& x, Loc loc) { return checked_at(x, "positive", loc); }
Array copy(const Array& a, Loc loc) {
  ApiScope s(loc);
  misc_valid(a, "copy");
  if (a.is_tracer()) return a;  // inside a trace a value is a value: nothing aliases it
  // A new buffer (as JAX's array(a, copy=True)), so donating one never invalidates the other: through the host,
  // exactly (half floats widen to float32 and back).
  auto via = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v = a.to_vector<T>();
    return array_from_data(v.data(), dtype_of<T>(), a.shape(), a.dtype());
  };
  if (is_unsigned_integer(a.dtype())) return via(uint64_t{});
  if (is_integer(a.dtype()) || a.dtype() == DType::bool_) return via(int64_t{});
  return a.dtype() == DType::float64 ? via(double{}) : via(float{});  // half floats widen exactly
}
Array conj(const Array& x, Loc loc) { return checked_at(x, "conj", loc); }
Array conjugate(const Array& x, Loc loc) { return checked_at(x, "conjugate", loc); }
Array real(const Array& x, Loc loc) { return checked_at(x, "real", loc); }
Array imag(const Array& x, Loc loc) {
  ApiScope s(loc);
  misc_valid(x, "imag");
  return full_like(x, 0.0);
}
Array isreal(const Array& x, Loc loc) {
  ApiScope s(loc);
  misc_valid(x, "isreal");
  return equal(imag(x), jitx::detail::convert_weak(Array(0), x.dtype(), false));
}
Array iscomplex(const Array& x, Loc loc) {
  ApiScope s(loc);
  misc_valid(x, "iscomplex");
  return not_equal(imag(x), jitx::detail::convert_weak(Array(0), x.dtype(), false));
}
bool isrealobj(const Array& x, Loc loc) { return checked_at(x, "isrealobj", loc).valid(); }
bool iscomplexobj(const Array& x, Loc loc) { return !checked_at(x, "iscomplexobj", loc).valid(); }
bool isscalar(const Array& x, Loc loc) {
  ApiScope s(loc);
  misc_valid(x, "isscalar");
  return x.ndim() == 0;
}

Array partition(const Array& a, int64_t kth, int64_t axis, Loc loc) {
  ApiScope s(loc);
  misc_valid(a, "partition");
  if (a.ndim() == 0) throw_error<ShapeError>("partition", "a must have at least one dimension, got a scalar");
  int64_t ax = jitx::detail::canonical_axis(axis, a.ndim(), "partition");
  int64_t n = a.dim(ax);
  int64_t k = jitx::detail::canonical_axis(kth, n, "partition");
  Array arr = swapaxes(a, ax, -1);
  Array bottom;
  if (is_unsigned_integer(a.dtype())) {  // JAX's trick: -(arr + 1) keeps 0 apart from the wrap-around
    Array one = jitx::detail::convert_weak(Array(1), a.dtype(), false);
    bottom = subtract(negative(lax::top_k(negative(add(arr, one)), k + 1).first), one);
  } else {
    bottom = negative(lax::top_k(negative(arr), k + 1).first);
  }
  Array top = lax::top_k(arr, n - k - 1).first;
  return swapaxes(concatenate({bottom, top}, arr.ndim() - 1), -1, ax);
}

namespace {
Array gradient_along(const Array& a, const Array& h, int64_t axis) {
  auto sl = [axis](const Array& v, int64_t lo, int64_t hi) { return lax::slice_in_dim(v, lo, hi, 1, axis); };
  int64_t n = a.dim(axis);
  Array upper = subtract(sl(a, 1, 2), sl(a, 0, 1));
  Array lower = subtract(sl(a, n - 1, n), sl(a, n - 2, n - 1));
  Array inner;
  if (h.ndim() == 0) {
    inner = divide(multiply(subtract(sl(a, 2, n), sl(a, 0, n - 2)), Array(0.5)), h);
    lower = divide(lower, h);
    upper = divide(upper, h);
  } else if (h.ndim() == 1) {
    if (h.dim(0) != n)
      throw_error<ShapeError>("gradient",
                              "spacing arrays must have the same length as the dimension along which the "
                              "gradient is calculated: {} coordinates for an axis of {}",
                              h.dim(0), n);
    Shape hs(static_cast<size_t>(a.ndim()), 1);
    hs[static_cast<size_t>(axis)] = n;
    Array x = reshape(h, hs);
    upper = divide(upper, subtract(sl(x, 1, 2), sl(x, 0, 1)));
    lower = divide(lower, subtract(sl(x, n - 1, n), sl(x, n - 2, n - 1)));
    Array dx1 = subtract(sl(x, 1, n - 1), sl(x, 0, n - 2)), dx2 = subtract(sl(x, 2, n), sl(x, 1, n - 1));
    Array ca = divide(negative(dx2), multiply(dx1, add(dx1, dx2)));
    Array cb = divide(subtract(dx2, dx1), multiply(dx1, dx2));
    Array cc = divide(dx1, multiply(dx2, add(dx1, dx2)));
    inner = add(add(multiply(ca, sl(a, 0, n - 2)), multiply(cb, sl(a, 1, n - 1))), multiply(cc, sl(a, 2, n)));
  } else {
    throw_error<ShapeError>("gradient", "spacing arrays must be 1-D arrays or scalars, got shape {}",
                            shape_str(h.shape()));
  }
  return concatenate({upper, inner, lower}, axis);
}
}  // namespace

std::vector<Array> gradient(const Array& f, const std::vector<Array>& spacing, std::optional<std::vector<int64_t>> axis,
                            Loc loc) {
  ApiScope s(loc);
  misc_valid(f, "gradient");
  for (const Array& h : spacing) misc_valid(h, "gradient");
  // promote_dtypes_inexact(f, *spacing): one inexact dtype for all.
  DType d = stats_util::stats_inexact_of(f.dtype());
  {
    // 0-d stand-ins keeping each weak type (a C++ double step defers to a float32 f, as JAX's Python float).
    auto stand_in = [](const Array& v) { return jitx::detail::convert_weak(Array(0), v.dtype(), v.weak_type()); };
    std::vector<Array> all = {stand_in(f)};
    for (const Array& h : spacing) all.push_back(stand_in(h));
    d = stats_util::stats_inexact_of(result_type(all));
  }
  Array a = astype(f, d);
  std::vector<int64_t> axes;
  if (!axis) {
    for (int64_t i = 0; i < a.ndim(); ++i) axes.push_back(i);
  } else {
    for (int64_t ax : *axis) axes.push_back(jitx::detail::canonical_axis(ax, a.ndim(), "gradient"));
  }
  if (axes.empty()) return {};
  for (int64_t ax : axes)
    if (a.dim(ax) < 2)
      throw_error<ShapeError>("gradient",
                              "shape of array too small to calculate a numerical gradient, at least 2 "
                              "elements are required; got shape {}",
                              shape_str(a.shape()));
  std::vector<Array> dx;
  if (spacing.empty())
    dx.assign(axes.size(), jitx::detail::convert_weak(Array(1.0), d, true));
  else if (spacing.size() == 1)
    dx.assign(axes.size(), astype(spacing[0], d));
  else if (spacing.size() == axes.size())
    for (const Array& h : spacing) dx.push_back(astype(h, d));
  else
    throw_error<TypeError>("gradient", "invalid number of spacing arguments {} for {} axes", spacing.size(),
                           axes.size());
  std::vector<Array> out;
  for (size_t i = 0; i < axes.size(); ++i) out.push_back(gradient_along(a, dx[i], axes[i]));
  return out;
}
Array gradient(const Array& f, int64_t axis, const std::optional<Array>& spacing, Loc loc) {
  return gradient(f, spacing ? std::vector<Array>{*spacing} : std::vector<Array>{}, std::vector<int64_t>{axis}, loc)[0];
}

Array spacing(const Array& x, Loc loc) {
  ApiScope s(loc);
  misc_valid(x, "spacing");
  Array arr = stats_util::stats_inexact(x);
  if (arr.dtype() == DType::float16) return subtract(lax::nextafter(arr, full_like(arr, INFINITY)), arr);
  Array result = subtract(lax::nextafter(arr, copysign(full_like(arr, INFINITY), arr)), arr);
  double sub = finfo(arr.dtype()).smallest_subnormal;
  return where(equal(result, Array::scalar(0, arr.dtype())), copysign(Array::scalar(sub, arr.dtype()), arr), result);
}

std::vector<Array> ix_(const std::vector<Array>& args, Loc loc) {
  ApiScope s(loc);
  std::vector<Array> out;
  const int64_t n = static_cast<int64_t>(args.size());
  for (int64_t i = 0; i < n; ++i) {
    const Array& a = args[static_cast<size_t>(i)];
    misc_valid(a, "ix_");
    if (a.ndim() != 1)
      throw_error<ShapeError>("ix_", "arguments must be 1-dimensional, got shape {} (argument {})",
                              shape_str(a.shape()), i);
    if (a.dtype() == DType::bool_) throw_error<TypeError>("ix_", "boolean arguments are not implemented (as in JAX)");
    Shape sh(static_cast<size_t>(n), 1);
    sh[static_cast<size_t>(i)] = a.dim(0);
    out.push_back(a.size() == 0 ? jitx::zeros(sh, DType::int64) : lax::broadcast_in_dim(a, sh, {i}));
  }
  return out;
}

std::pair<Array, Array> mask_indices(int64_t n, const std::function<Array(const Array&, int64_t)>& mask_func, int64_t k,
                                     std::optional<int64_t> size, Loc loc) {
  ApiScope s(loc);
  if (!mask_func) throw_error<TypeError>("mask_indices", "mask_func is empty");
  if (n < 0) throw_error<ShapeError>("mask_indices", "n must be non-negative, got {}", n);
  Array m = mask_func(ones({n, n}), k);
  if (!m.valid() || m.shape() != Shape{n, n})
    throw_error<ShapeError>("mask_indices", "mask_func must return an ({}, {}) array, got {}", n, n,
                            m.valid() ? shape_str(m.shape()) : std::string("an empty Array"));
  auto nz = nonzero(m, size);
  return {nz[0], nz[1]};
}

FInfo finfo(DType d, Loc loc) {
  ApiScope s(loc);
  auto p2 = [](int e) { return std::ldexp(1.0, e); };
  switch (d) {
    case DType::float64:
      return {d,       64,      52,       11,        -1022,     1024,      15,   p2(-52),
              p2(-53), DBL_MAX, -DBL_MAX, p2(-1022), p2(-1022), p2(-1074), 1e-15};
    case DType::float32:
      return {d,        32,       23,       8,        -126,
              128,      6,        p2(-23),  p2(-24),  FLT_MAX,
              -FLT_MAX, p2(-126), p2(-126), p2(-149), static_cast<double>(1e-6f)};
    case DType::float16:
      return {d,      16,      10,      5,       -14,
              16,     3,       p2(-10), p2(-11), 65504,
              -65504, p2(-14), p2(-14), p2(-24), 0.0010004043579101562};  // 1e-3 in float16
    case DType::bfloat16: {
      double mx = (2 - p2(-7)) * p2(127);
      return {d,  16,  7,        8,        -126,     128,           2, p2(-7), p2(-8),
              mx, -mx, p2(-126), p2(-126), p2(-133), 0.010009765625};  // 1e-2 in bfloat16
    }
    default:
      throw_error<TypeError>("finfo", "data type {} not inexact", dtype_name(d));
  }
}

IInfo iinfo(DType d, Loc loc) {
  ApiScope s(loc);
  if (!is_integer(d)) throw_error<TypeError>("iinfo", "invalid integer data type {}", dtype_name(d));
  int bits = dtype_bits(d);
  if (is_unsigned_integer(d)) return {d, bits, 0, bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1};
  return {d, bits, bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1)),
          bits == 64 ? uint64_t{INT64_MAX} : (uint64_t{1} << (bits - 1)) - 1};
}

bool can_cast(DType from, DType to, std::string_view casting, Loc loc) {
  ApiScope s(loc);
  // JAX 0.10.2's jnp.can_cast over the 13 dtypes (rows: from, columns: to, in cast_index's order).
  static const char* kSafe[13] = {"1111111111111", "0111100001111", "0011100000011", "0001100000001", "0000100000001",
                                  "0011111111111", "0001101110011", "0000100110001", "0000000010001", "0000000001011",
                                  "0000000000111", "0000000000011", "0000000000001"};
  static const char* kSameKind[13] = {"1111111111111", "0111100001111", "0111100001111", "0111100001111",
                                      "0111100001111", "0111111111111", "0111111111111", "0111111111111",
                                      "0111111111111", "0000000001111", "0000000001111", "0000000001111",
                                      "0000000001111"};
  int i = cast_index(from), j = cast_index(to);
  if (casting == "no" || casting == "equiv") return from == to;
  if (casting == "safe") return kSafe[i][j] == '1';
  if (casting == "same_kind") return kSameKind[i][j] == '1';
  if (casting == "unsafe") return true;
  throw_error<TypeError>("can_cast",
                         "casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe', got "
                         "'{}'",
                         casting);
}

bool isdtype(DType d, std::string_view kind, Loc loc) {
  ApiScope s(loc);
  if (kind == "bool") return d == DType::bool_;
  if (kind == "signed integer") return is_integer(d) && !is_unsigned_integer(d);
  if (kind == "unsigned integer") return is_unsigned_integer(d);
  if (kind == "integral") return is_integer(d);
  if (kind == "real floating") return is_floating(d);
  if (kind == "complex floating") return false;
  if (kind == "numeric") return d != DType::bool_;
  throw_error<TypeError>("isdtype",
                         "kind must be one of 'bool', 'signed integer', 'unsigned integer', 'integral', "
                         "'real floating', 'complex floating' or 'numeric', got '{}'",
                         kind);
}

}  // namespace jitx::numpy

namespace jitx {
std::vector<Array> detail::fromfunction_indices(const Shape& shape, DType dtype, size_t arity, const Loc& loc) {
  detail::ApiScope s(loc, nullptr);
  if (shape.size() != arity)
    detail::throw_error<TypeError>("fromfunction",
                                   "the function takes {} arguments, one per dimension, but shape {} has {}", arity,
                                   detail::shape_str(shape), shape.size());
  std::vector<Array> aranges;
  for (int64_t d : shape) {
    if (d < 0)
      detail::throw_error<ShapeError>("fromfunction", "shape must be non-negative, got {}", detail::shape_str(shape));
    aranges.push_back(numpy::arange(0.0, static_cast<double>(d), 1.0, dtype));
  }
  return numpy::ix_(aranges, loc);
}
}  // namespace jitx
