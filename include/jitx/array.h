// jitx::Array: the one array type, concrete (a device buffer) or a tracer while tracing.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <concepts>
#include <memory>
#include <optional>
#include <ostream>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "jitx/dtype.h"
#include "jitx/error.h"

namespace jitx {

using Shape = std::vector<int64_t>;
using Loc = std::source_location;

/// The abstract value of an array: what a tracer knows (JAX's ShapedArray).
struct ShapedArray {
  Shape shape;
  DType dtype = DType::float32;
  bool weak_type = false;

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const;
  /// "f32[8,4]" (weak types print with a trailing "{weak}" only in str_verbose()).
  std::string str() const;
  bool operator==(const ShapedArray&) const = default;
};

namespace detail {
struct ArrayImpl;
}
class Sharding;  // jitx/sharding.h
struct Shard;

template <class T>
concept Scalar = std::is_arithmetic_v<T>;

class Array {
 public:
  Array() = default;
  explicit Array(std::shared_ptr<detail::ArrayImpl> impl) : impl_(std::move(impl)) {}
  /// A C++ number becomes a weak-typed 0-d array (bool stays strongly typed), as in JAX: float -> weak f32,
  /// double -> weak f64, 32-bit ints -> weak i32, 64-bit ints -> weak i64.
  template <Scalar T>
  Array(T v) : Array(from_scalar(v)) {}  // NOLINT(google-explicit-constructor)

  const ShapedArray& aval() const;
  const Shape& shape() const { return aval().shape; }
  DType dtype() const { return aval().dtype; }
  bool weak_type() const { return aval().weak_type; }
  int64_t ndim() const { return aval().ndim(); }
  int64_t size() const { return aval().size(); }
  int64_t dim(int64_t axis, Loc loc = Loc::current()) const;
  bool valid() const { return impl_ != nullptr; }
  bool is_tracer() const;

  /// Copies the values to the host, converting to T; waits for the value. Throws on tracers.
  template <class T>
  std::vector<T> to_vector(Loc loc = Loc::current()) const {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: read bytes, then copy
      std::vector<uint8_t> b(static_cast<size_t>(size()));
      copy_to_host(b.data(), DType::bool_, b.size(), loc);
      return std::vector<bool>(b.begin(), b.end());
    } else {
      std::vector<T> out(static_cast<size_t>(size()));
      copy_to_host(out.data(), dtype_of<T>(), out.size(), loc);
      return out;
    }
  }
  /// The single value of a size-1 array; waits for it. Throws on tracers.
  template <class T>
  T item(Loc loc = Loc::current()) const {
    T v{};
    check_item(loc);
    copy_to_host(&v, dtype_of<T>(), 1, loc);
    return v;
  }
  /// Waits until the value is computed; rethrows an error raised while computing it.
  const Array& block_until_ready() const;

  /// How a concrete array is laid out over devices (jitx/sharding.h): a SingleDeviceSharding, or the NamedSharding
  /// of device_put / a jitted call. Throws TracerError for tracers.
  Sharding sharding(Loc loc = Loc::current()) const;
  /// One Shard (its device, its index ranges, its data) per device of this process holding part of the array.
  std::vector<Shard> addressable_shards(Loc loc = Loc::current()) const;
  /// Whether every device holds the whole array.
  bool is_fully_replicated(Loc loc = Loc::current()) const;
  /// Whether this process holds every shard (false for arrays over a mesh spanning processes: jitx::distributed).
  bool is_fully_addressable(Loc loc = Loc::current()) const;

  /// Truth value of a concrete size-1 array; on a tracer throws TracerError (use lax::cond).
  explicit operator bool() const;

  Array astype(DType dtype, Loc loc = Loc::current()) const;
  Array reshape(Shape shape, Loc loc = Loc::current()) const;
  Array transpose(std::vector<int64_t> axes = {}, Loc loc = Loc::current()) const;
  Array T(Loc loc = Loc::current()) const { return transpose({}, loc); }
  Array sum(std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current()) const;
  Array mean(std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current()) const;
  Array max(std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current()) const;
  Array min(std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current()) const;
  Array prod(std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current()) const;
  Array all(std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current()) const;
  Array any(std::vector<int64_t> axes = {}, bool keepdims = false, Loc loc = Loc::current()) const;
  Array var(std::vector<int64_t> axes = {}, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) const;
  Array std(std::vector<int64_t> axes = {}, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) const;
  // One integer axis, as x.sum(axis=1) (templates, so that `{}` and `{0, 1}` still mean axis lists).
#define JITX_ARRAY_INT_AXIS_(name)                                                      \
  template <std::integral I>                                                            \
  Array name(I axis, bool keepdims = false, Loc loc = Loc::current()) const {           \
    return name(std::vector<int64_t>{static_cast<int64_t>(axis)}, keepdims, loc);       \
  }
  JITX_ARRAY_INT_AXIS_(sum) JITX_ARRAY_INT_AXIS_(mean) JITX_ARRAY_INT_AXIS_(max) JITX_ARRAY_INT_AXIS_(min)
  JITX_ARRAY_INT_AXIS_(prod) JITX_ARRAY_INT_AXIS_(all) JITX_ARRAY_INT_AXIS_(any)
#undef JITX_ARRAY_INT_AXIS_
  template <std::integral I>
  Array var(I axis, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) const {
    return var(std::vector<int64_t>{static_cast<int64_t>(axis)}, keepdims, ddof, loc);
  }
  template <std::integral I>
  Array std(I axis, bool keepdims = false, int64_t ddof = 0, Loc loc = Loc::current()) const {
    return this->std(std::vector<int64_t>{static_cast<int64_t>(axis)}, keepdims, ddof, loc);
  }
  /// Index of the largest (smallest) value along axis, of the flattened array when axis is nullopt (int32 without
  /// x64, as jnp.argmax).
  Array argmax(std::optional<int64_t> axis = std::nullopt, bool keepdims = false, Loc loc = Loc::current()) const;
  Array argmin(std::optional<int64_t> axis = std::nullopt, bool keepdims = false, Loc loc = Loc::current()) const;
  /// The values in one row-major axis (x.flatten() copies in NumPy; arrays are immutable here, so both are views).
  Array flatten(Loc loc = Loc::current()) const;
  Array ravel(Loc loc = Loc::current()) const;
  /// Drops the given size-1 axes (every size-1 axis when empty).
  Array squeeze(std::vector<int64_t> axes = {}, Loc loc = Loc::current()) const;
  template <std::integral I>
  Array squeeze(I axis, Loc loc = Loc::current()) const {
    return squeeze(std::vector<int64_t>{static_cast<int64_t>(axis)}, loc);
  }
  /// Cumulative sum along axis (of the flattened array when nullopt).
  Array cumsum(std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current()) const;
  /// A static index that carries its caller's source location (operator[] takes one parameter, so the location
  /// rides on the index: an integer converts to it where it is written).
  struct Index {
    Index(int64_t i, Loc l = Loc::current()) : value(i), loc(l) {}  // NOLINT(google-explicit-constructor)
    int64_t value;
    Loc loc;
  };
  /// x[i] along the first axis (a static index, negative counts from the end).
  Array operator[](Index i) const;

  /// "Array([[1., 2.], [3., 4.]], dtype=float32)" for concrete arrays, "Traced<f32[2,2]>" for tracers.
  std::string to_string() const;

  const std::shared_ptr<detail::ArrayImpl>& impl() const { return impl_; }
  /// A strongly-typed 0-d array of dtype d holding v.
  static Array scalar(double v, DType d);
  static Array scalar_int(int64_t v, DType d);

 private:
  static Array from_scalar_f64(double v, DType d, bool weak);
  static Array from_scalar_i64(int64_t v, DType d, bool weak);
  static Array from_scalar_u64(uint64_t v, DType d, bool weak);
  template <class T>
  static Array from_scalar(T v) {
    if constexpr (std::is_same_v<T, bool>) return from_scalar_i64(v, DType::bool_, false);
    // Weak types keep the literal's full precision (as JAX with x64): a weak f64 next to an f32 array
    // still gives f32, and next to an f64 array nothing is lost.
    else if constexpr (std::is_floating_point_v<T>)
      return from_scalar_f64(double(v), sizeof(T) <= 4 ? DType::float32 : DType::float64, true);
    // An unsigned value is the Python int of that value (weak): past int32 it is a weak int64 (4000000000u is not
    // -294967296), past int64 JAX's OverflowError (from_scalar_u64 refuses it).
    else if constexpr (std::is_unsigned_v<T>) {
      if (sizeof(T) < 8 && static_cast<uint64_t>(v) <= 0x7fffffffu)
        return from_scalar_i64(static_cast<int64_t>(v), DType::int32, true);
      return from_scalar_u64(static_cast<uint64_t>(v), DType::int64, true);
    } else if constexpr (sizeof(T) == 8) return from_scalar_i64(static_cast<int64_t>(v), DType::int64, true);
    else return from_scalar_i64(int64_t(v), DType::int32, true);
  }
  void copy_to_host(void* dst, DType dst_dtype, size_t n, const Loc& loc) const;
  void check_item(const Loc& loc) const;

  std::shared_ptr<detail::ArrayImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Array& a);
std::ostream& operator<<(std::ostream& os, const ShapedArray& a);

/// An operand of an overloaded operator: an Array or a C++ number, with the caller's source location.
struct ArrayLike {
  Array value;
  Loc loc;
  ArrayLike(const Array& a, Loc l = Loc::current()) : value(a), loc(l) {}  // NOLINT
  template <Scalar T>
  ArrayLike(T v, Loc l = Loc::current()) : value(v), loc(l) {}  // NOLINT
};

// --- creation --------------------------------------------------------------------------------------
/// An array from host data (copied); dtype is T's unless given.
Array array_from_data(const void* data, DType src_dtype, Shape shape, DType dtype, Loc loc = Loc::current());
namespace detail {
/// ShapeError naming `array` unless `count` values fill `shape` exactly.
void check_host_count(size_t count, const Shape& shape, Loc loc);
/// ValueError: nested lists given to `array` have rows of different lengths.
[[noreturn]] void ragged_error(Loc loc);
}  // namespace detail
template <class T>
Array array(const std::vector<T>& data, Shape shape, DType dtype = dtype_of<T>(), Loc loc = Loc::current()) {
  detail::check_host_count(data.size(), shape, loc);
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> b(data.begin(), data.end());
    return array_from_data(b.data(), DType::bool_, std::move(shape), dtype, loc);
  } else {
    return array_from_data(data.data(), dtype_of<T>(), std::move(shape), dtype, loc);
  }
}
namespace detail {
/// An array over host memory that `owner` keeps alive (no copy when `data` is 64-byte aligned and `dtype` is
/// canonical; a copy otherwise, after which owner is released). `reusable`: donation may write into it.
Array array_from_owned(void* data, DType dtype, Shape shape, std::shared_ptr<void> owner, bool reusable, Loc loc);
}  // namespace detail
/// A vector moved in becomes the array's memory without a copy where it can (README, "Host memory without a copy"):
/// when its data is 64-byte aligned (jitx::HostAllocator in jitx/host.h gives that) and T's dtype is canonical;
/// otherwise the values are copied. vector<bool> is always copied.
template <class T, class A>
  requires(!std::is_same_v<T, bool>)
Array array(std::vector<T, A>&& data, Shape shape, Loc loc = Loc::current()) {
  detail::check_host_count(data.size(), shape, loc);
  auto owner = std::make_shared<std::vector<T, A>>(std::move(data));
  void* p = owner->data();
  return detail::array_from_owned(p, dtype_of<T>(), std::move(shape), std::move(owner), true, loc);
}
template <class T, class A>
  requires(!std::is_same_v<T, bool>)
Array array(std::vector<T, A>&& data, Loc loc = Loc::current()) {
  Shape shape{static_cast<int64_t>(data.size())};
  return array(std::move(data), std::move(shape), loc);
}
template <class T>
Array array(const std::vector<T>& data, Loc loc = Loc::current()) {
  return array(data, Shape{static_cast<int64_t>(data.size())}, dtype_of<T>(), loc);
}
template <class T>
Array array(std::initializer_list<T> data, Loc loc = Loc::current()) {
  return array(std::vector<T>(data), loc);
}
/// Nested lists, as jnp.array([[1, 2], [3, 4]]): the shape is the nesting (rows must have equal lengths).
template <class T>
Array array(std::initializer_list<std::initializer_list<T>> rows, Loc loc = Loc::current()) {
  std::vector<T> flat;
  int64_t cols = rows.size() ? static_cast<int64_t>(rows.begin()->size()) : 0;
  for (auto& r : rows) {
    if (static_cast<int64_t>(r.size()) != cols) detail::ragged_error(loc);
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return array(flat, Shape{static_cast<int64_t>(rows.size()), cols}, dtype_of<T>(), loc);
}
template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes, Loc loc = Loc::current()) {
  std::vector<T> flat;
  auto first = planes.size() ? planes.begin()->begin() : nullptr;
  int64_t rows = planes.size() ? static_cast<int64_t>(planes.begin()->size()) : 0;
  int64_t cols = first && rows ? static_cast<int64_t>(first->size()) : 0;
  for (auto& p : planes) {
    if (static_cast<int64_t>(p.size()) != rows) detail::ragged_error(loc);
    for (auto& r : p) {
      if (static_cast<int64_t>(r.size()) != cols) detail::ragged_error(loc);
      flat.insert(flat.end(), r.begin(), r.end());
    }
  }
  return array(flat, Shape{static_cast<int64_t>(planes.size()), rows, cols}, dtype_of<T>(), loc);
}
/// A 0-d array of a C++ number, strongly typed (jnp.array(3.0) is not weak): float -> f32, int -> i32, ...
template <class T>
  requires std::is_arithmetic_v<T>
Array array(T value, Loc loc = Loc::current()) {
  return array(std::vector<T>{value}, Shape{}, dtype_of<T>(), loc);
}
template <class T>
Array array(const T* data, Shape shape, Loc loc = Loc::current()) {
  return array_from_data(data, dtype_of<T>(), std::move(shape), dtype_of<T>(), loc);
}

Array zeros(Shape shape, DType dtype = DType::float32, Loc loc = Loc::current());
Array ones(Shape shape, DType dtype = DType::float32, Loc loc = Loc::current());
Array full(Shape shape, double value, DType dtype = DType::float32, Loc loc = Loc::current());
Array zeros_like(const Array& a, Loc loc = Loc::current());
Array ones_like(const Array& a, Loc loc = Loc::current());
Array full_like(const Array& a, double value, Loc loc = Loc::current());
namespace detail {
/// full with an integer fill value, converted as JAX converts a Python int: exactly (2^53 + 1 as int64), wrapping
/// into a narrower integer dtype (-1 as uint8 is 255, 300 is 44).
Array full_integer(Shape shape, int64_t value, bool from_unsigned, DType dtype, Loc loc, bool weak = false);
}  // namespace detail
/// full / full_like with a C++ integer fill value (see detail::full_integer): not through a double.
template <std::integral T>
  requires(!std::same_as<T, bool>)
Array full(Shape shape, T value, DType dtype = DType::float32, Loc loc = Loc::current()) {
  return detail::full_integer(std::move(shape), static_cast<int64_t>(value), std::is_unsigned_v<T>, dtype, loc);
}
template <std::integral T>
  requires(!std::same_as<T, bool>)
Array full_like(const Array& a, T value, Loc loc = Loc::current()) {
  return detail::full_integer(a.shape(), static_cast<int64_t>(value), std::is_unsigned_v<T>, a.dtype(), loc,
                              a.weak_type());
}
/// [start, stop) by step, as jnp.arange. Without a dtype the C++ types decide, as Python's decide jnp.arange's:
/// int32 when start, stop and step are all integers, float32 when any is floating (arange(0.5, 3.0, 0.5) is
/// [0.5, 1, ..., 2.5]); jitx's creation functions default to 32 bits (see the README's deliberate differences).
Array arange(double start, double stop, double step, DType dtype, Loc loc = Loc::current());
Array arange(double stop, DType dtype, Loc loc = Loc::current());
template <class A, class B, class C = int>
  requires std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && std::is_arithmetic_v<C>
Array arange(A start, B stop, C step = 1, Loc loc = Loc::current()) {
  constexpr bool any_float = std::is_floating_point_v<A> || std::is_floating_point_v<B> || std::is_floating_point_v<C>;
  return arange(static_cast<double>(start), static_cast<double>(stop), static_cast<double>(step),
                any_float ? DType::float32 : DType::int32, loc);
}
template <class A>
  requires std::is_arithmetic_v<A>
Array arange(A stop, Loc loc = Loc::current()) {
  return arange(static_cast<double>(stop), std::is_floating_point_v<A> ? DType::float32 : DType::int32, loc);
}
Array linspace(double start, double stop, int64_t num, bool endpoint = true, DType dtype = DType::float32,
               Loc loc = Loc::current());
Array eye(int64_t n, int64_t m = -1, int64_t k = 0, DType dtype = DType::float32, Loc loc = Loc::current());
Array iota(DType dtype, Shape shape, int64_t dimension = 0, Loc loc = Loc::current());

// --- operators (NumPy broadcasting and JAX promotion) -----------------------------------------
Array operator+(const ArrayLike& a, const ArrayLike& b);
Array operator-(const ArrayLike& a, const ArrayLike& b);
Array operator*(const ArrayLike& a, const ArrayLike& b);
Array operator/(const ArrayLike& a, const ArrayLike& b);
Array operator%(const ArrayLike& a, const ArrayLike& b);
Array operator==(const ArrayLike& a, const ArrayLike& b);
Array operator!=(const ArrayLike& a, const ArrayLike& b);
Array operator<(const ArrayLike& a, const ArrayLike& b);
Array operator<=(const ArrayLike& a, const ArrayLike& b);
Array operator>(const ArrayLike& a, const ArrayLike& b);
Array operator>=(const ArrayLike& a, const ArrayLike& b);
Array operator&(const ArrayLike& a, const ArrayLike& b);
Array operator|(const ArrayLike& a, const ArrayLike& b);
Array operator^(const ArrayLike& a, const ArrayLike& b);
Array operator-(const Array& a);
Array operator~(const Array& a);
Array operator!(const Array& a);
Array& operator+=(Array& a, const ArrayLike& b);
Array& operator-=(Array& a, const ArrayLike& b);
Array& operator*=(Array& a, const ArrayLike& b);
Array& operator/=(Array& a, const ArrayLike& b);

}  // namespace jitx
