// jitx::numpy, the rest of jnp's everyday surface: aliases (absolute, around, positive, copy), the complex-number
// helpers on real arrays (conj, conjugate, real, imag, isreal, iscomplex, isrealobj, iscomplexobj: jitx has no
// complex dtypes, so these are the identities JAX gives real inputs), isscalar, partition (two top_k's, as JAX),
// gradient (second-order central differences, first-order edges, spacings as scalars or coordinates), spacing
// (through nextafter), ix_, fromfunction (a vmap per axis: the function sees scalars, as JAX's), mask_indices, and
// dtype introspection (finfo, iinfo, can_cast, isdtype). src/api/numpy_misc.cpp composes each as JAX does.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "jitx/numpy.h"
#include "jitx/numpy_functional.h"

namespace jitx::numpy {

/// abs(x) (jnp.absolute), round(x, decimals) (jnp.around), +x (jnp.positive: bool is a TypeError, as JAX's),
/// a copy of a (jnp.copy).
Array absolute(const Array& x, Loc loc = Loc::current());
Array around(const Array& x, int decimals = 0, Loc loc = Loc::current());
Array positive(const Array& x, Loc loc = Loc::current());
Array copy(const Array& a, Loc loc = Loc::current());
/// Real arrays' complex parts: conj(x) = conjugate(x) = real(x) = x, imag(x) = zeros of x's dtype; isreal(x) all
/// true, iscomplex(x) all false (bool arrays of x's shape); isrealobj is true and iscomplexobj false.
Array conj(const Array& x, Loc loc = Loc::current());
Array conjugate(const Array& x, Loc loc = Loc::current());
Array real(const Array& x, Loc loc = Loc::current());
Array imag(const Array& x, Loc loc = Loc::current());
Array isreal(const Array& x, Loc loc = Loc::current());
Array iscomplex(const Array& x, Loc loc = Loc::current());
bool isrealobj(const Array& x, Loc loc = Loc::current());
bool iscomplexobj(const Array& x, Loc loc = Loc::current());
/// Whether x is a scalar: a 0-d array (JAX's isscalar of an array).
bool isscalar(const Array& x, Loc loc = Loc::current());

/// a partially sorted along axis: the kth element in its sorted place, smaller ones before it (ascending), larger
/// ones after (descending), as JAX's two lax::top_k calls leave them.
Array partition(const Array& a, int64_t kth, int64_t axis = -1, Loc loc = Loc::current());

/// jnp.gradient: the derivative of the samples f along each axis (all by default), second-order central
/// differences inside and first-order differences at the edges. spacing: empty (unit), one entry for every axis,
/// or one per axis; an entry is a scalar step or 1-D coordinates of the axis's length. One array per axis.
std::vector<Array> gradient(const Array& f, const std::vector<Array>& spacing = {},
                            std::optional<std::vector<int64_t>> axis = std::nullopt, Loc loc = Loc::current());
/// The gradient along one axis (JAX returns a single array then).
Array gradient(const Array& f, int64_t axis, const std::optional<Array>& spacing = std::nullopt,
               Loc loc = Loc::current());

/// The distance from x to the next representable value away from zero (toward +inf for float16, as JAX's);
/// integers promote to floats.
Array spacing(const Array& x, Loc loc = Loc::current());

/// An open mesh of the 1-D arrays: the i-th has shape (1, ..., len_i, ..., 1).
std::vector<Array> ix_(const std::vector<Array>& args, Loc loc = Loc::current());

}  // namespace jitx::numpy
namespace jitx::detail {
/// The open mesh of aranges of shape's sizes in dtype (ix_ of them), checked against f's arity.
std::vector<Array> fromfunction_indices(const Shape& shape, DType dtype, size_t arity, const Loc& loc);
template <class F, size_t... I>
constexpr bool invocable_with(std::index_sequence<I...>) {
  return std::is_invocable_v<const F&, decltype((void)I, std::declval<const Array&>())...>;
}
template <class F>
constexpr size_t array_arity() {
  if constexpr (invocable_with<F>(std::make_index_sequence<1>{}))
    return 1;
  else if constexpr (invocable_with<F>(std::make_index_sequence<2>{}))
    return 2;
  else if constexpr (invocable_with<F>(std::make_index_sequence<3>{}))
    return 3;
  else if constexpr (invocable_with<F>(std::make_index_sequence<4>{}))
    return 4;
  else if constexpr (invocable_with<F>(std::make_index_sequence<5>{}))
    return 5;
  else
    return 6;
}
}  // namespace jitx::detail
namespace jitx::numpy {
/// jnp.fromfunction: f applied at every index of shape, f taking one Array per dimension (up to 6). As JAX's, f
/// is vmapped over each axis (through vectorize), so it sees scalars of dtype and may return any pytree, whose
/// leaves get shape's leading dimensions. dtype defaults to float32 (jitx's default float; JAX's float is float64
/// under x64).
template <class F>
auto fromfunction(F f, const Shape& shape, DType dtype = DType::float32, Loc loc = Loc::current()) {
  constexpr size_t n = detail::array_arity<F>();
  std::vector<Array> idx = detail::fromfunction_indices(shape, dtype, n, loc);
  auto vf = vectorize(std::move(f), std::nullopt, loc);
  return [&]<size_t... I>(std::index_sequence<I...>) { return vf(idx[I]...); }
  (std::make_index_sequence<n>{});
}

/// (rows, cols) of the nonzero entries of mask_func(ones((n, n)), k) (e.g. jnp::triu), as jnp.nonzero gives them.
std::pair<Array, Array> mask_indices(int64_t n, const std::function<Array(const Array&, int64_t)>& mask_func,
                                     int64_t k = 0, std::optional<int64_t> size = std::nullopt,
                                     Loc loc = Loc::current());

/// jnp.finfo: a float dtype's machine limits.
struct FInfo {
  DType dtype;
  int bits, nmant, nexp, minexp, maxexp, precision;
  double eps, epsneg, max, min, tiny, smallest_normal, smallest_subnormal, resolution;
};
FInfo finfo(DType dtype, Loc loc = Loc::current());
/// jnp.iinfo: an integer dtype's limits.
struct IInfo {
  DType dtype;
  int bits;
  int64_t min;
  uint64_t max;
};
IInfo iinfo(DType dtype, Loc loc = Loc::current());
/// Whether a cast from one dtype to another keeps every value ("safe", JAX's can_cast default), or "same_kind",
/// "equiv", "no", "unsafe".
bool can_cast(DType from, DType to, std::string_view casting = "safe", Loc loc = Loc::current());
/// The array API's isdtype: kind "bool", "signed integer", "unsigned integer", "integral", "real floating",
/// "complex floating" or "numeric".
bool isdtype(DType dtype, std::string_view kind, Loc loc = Loc::current());

}  // namespace jitx::numpy
