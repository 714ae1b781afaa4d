// jitx::numpy shape and indexing functions (moveaxis, the stacks and splits, diagonal/trace, take_along_axis,
// meshgrid, rot90, diff, delete_/insert, tensordot/kron/cross, tri/vander and the index helpers), composed from
// jnp/lax so that grad, vmap and jit apply unchanged; kept in their own header so this branch merges additively.
#pragma once
#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "jitx/numpy.h"

namespace jitx::detail {
/// split/array_split/hsplit/vsplit/dsplit into `sections` equal parts: the integer templates below forward here
/// (`here` is the template's own location, so that an error names the function the user called).
std::vector<Array> jnp_split_sections(const Array& ary, int64_t sections, std::optional<int64_t> axis,
                                      std::string_view op, Loc loc, Loc here);
}  // namespace jitx::detail

namespace jitx::numpy {

// (src/ops/numpy_shape.cpp)
/// Moves axis `source` to position `destination`; the other axes keep their order.
Array moveaxis(const Array& a, int64_t source, int64_t destination, Loc loc = Loc::current());
/// Moves each source axis to its destination (distinct axes, as many of each; NumPy refuses a repeated
/// destination, and so does jitx).
Array moveaxis(const Array& a, Axes source, Axes destination, Loc loc = Loc::current());

/// Concatenation after atleast_1d (hstack: along axis 1, or 0 for 1-D arrays), atleast_2d (vstack: axis 0) or
/// atleast_3d (dstack: axis 2), in `dtype` when given (else the arrays' promoted dtype).
Array hstack(const std::vector<Array>& tup, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
Array vstack(const std::vector<Array>& tup, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
Array dstack(const std::vector<Array>& tup, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
/// 1-D (and 0-d) arrays become columns, then everything is concatenated along axis 1.
Array column_stack(const std::vector<Array>& tup, Loc loc = Loc::current());

/// x with leading size-1 axes added up to rank 1 / 2; atleast_3d turns (n,) into (1, n, 1) and (m, n) into
/// (m, n, 1), as NumPy. The vector forms map over several arrays (JAX's *arys).
Array atleast_1d(const Array& x, Loc loc = Loc::current());
Array atleast_2d(const Array& x, Loc loc = Loc::current());
Array atleast_3d(const Array& x, Loc loc = Loc::current());
std::vector<Array> atleast_1d(const std::vector<Array>& arys, Loc loc = Loc::current());
std::vector<Array> atleast_2d(const std::vector<Array>& arys, Loc loc = Loc::current());
std::vector<Array> atleast_3d(const std::vector<Array>& arys, Loc loc = Loc::current());

/// Splits ary along axis at the given indices (nondecreasing, within [0, size]: JAX refuses others), or, with an
/// integer, into that many equal sections (array_split: the first size % sections parts one longer). hsplit splits
/// axis 1 (axis 0 of a 1-D array), vsplit axis 0, dsplit axis 2. An integer argument takes the template: a braced
/// list, even of one element (split(x, {2})), is a list of indices, as JAX's [2].
std::vector<Array> split(const Array& ary, const std::vector<int64_t>& indices_or_sections, int64_t axis = 0,
                         Loc loc = Loc::current());
std::vector<Array> array_split(const Array& ary, const std::vector<int64_t>& indices_or_sections, int64_t axis = 0,
                               Loc loc = Loc::current());
std::vector<Array> hsplit(const Array& ary, const std::vector<int64_t>& indices_or_sections, Loc loc = Loc::current());
std::vector<Array> vsplit(const Array& ary, const std::vector<int64_t>& indices_or_sections, Loc loc = Loc::current());
std::vector<Array> dsplit(const Array& ary, const std::vector<int64_t>& indices_or_sections, Loc loc = Loc::current());
template <std::integral I>
std::vector<Array> split(const Array& ary, I sections, int64_t axis = 0, Loc loc = Loc::current()) {
  return detail::jnp_split_sections(ary, static_cast<int64_t>(sections), axis, "split", loc, Loc::current());
}
template <std::integral I>
std::vector<Array> array_split(const Array& ary, I sections, int64_t axis = 0, Loc loc = Loc::current()) {
  return detail::jnp_split_sections(ary, static_cast<int64_t>(sections), axis, "array_split", loc, Loc::current());
}
template <std::integral I>
std::vector<Array> hsplit(const Array& ary, I sections, Loc loc = Loc::current()) {
  return detail::jnp_split_sections(ary, static_cast<int64_t>(sections), std::nullopt, "hsplit", loc,
                                    Loc::current());
}
template <std::integral I>
std::vector<Array> vsplit(const Array& ary, I sections, Loc loc = Loc::current()) {
  return detail::jnp_split_sections(ary, static_cast<int64_t>(sections), 0, "vsplit", loc, Loc::current());
}
template <std::integral I>
std::vector<Array> dsplit(const Array& ary, I sections, Loc loc = Loc::current()) {
  return detail::jnp_split_sections(ary, static_cast<int64_t>(sections), 2, "dsplit", loc, Loc::current());
}

/// The diagonal (offset above the main one when positive, below when negative) of the planes of axes (axis1,
/// axis2), as the last axis of the result; an offset past the edge gives an empty diagonal.
Array diagonal(const Array& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1, Loc loc = Loc::current());
/// The sum of that diagonal (jnp.sum's dtype: int64 for narrower ints and bool), or in `dtype` when given.
Array trace(const Array& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1,
            std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());

/// out[..., j, ...] = arr[..., indices[..., j, ...], ...] along axis (arr flattened, indices 1-D, when axis is
/// nullopt); arr and indices have the same rank and their other axes broadcast. Negative indices count from the
/// end (except with "promise_in_bounds"); out-of-range ones follow mode: "fill" (the default; also "drop") gives
/// fill_value or take's fill (NaN, the integer minimum / maximum, true), "clip" clamps, "promise_in_bounds" leaves
/// it to the gather (which clamps), "one_hot" gives 0.
Array take_along_axis(const Array& arr, const Array& indices, std::optional<int64_t> axis = -1,
                      std::string_view mode = "fill", std::optional<double> fill_value = std::nullopt,
                      Loc loc = Loc::current());

/// Coordinate grids of 1-D arrays: indexing "xy" (the default) swaps the first two output axes, "ij" does not;
/// sparse gives broadcastable arrays (size 1 on the other axes). JAX's copy= is not taken (jitx arrays are
/// immutable; JAX refuses copy=False).
std::vector<Array> meshgrid(const std::vector<Array>& xi, bool sparse = false, std::string_view indexing = "xy",
                            Loc loc = Loc::current());

/// m rotated k times by 90 degrees in the plane of axes (from the first towards the second).
Array rot90(const Array& m, int64_t k = 1, std::pair<int64_t, int64_t> axes = {0, 1}, Loc loc = Loc::current());
/// flip along axis 1 / axis 0.
Array fliplr(const Array& m, Loc loc = Loc::current());
Array flipud(const Array& m, Loc loc = Loc::current());

/// values appended to arr along axis (both flattened when axis is nullopt).
Array append(const Array& arr, const Array& values, std::optional<int64_t> axis = std::nullopt,
             Loc loc = Loc::current());
/// The n-th discrete difference along axis (of bools: not_equal), after prepend / append are concatenated there
/// (a 0-d one is broadcast to one slice).
Array diff(const Array& a, int64_t n = 1, int64_t axis = -1, std::optional<Array> prepend = std::nullopt,
           std::optional<Array> append = std::nullopt, Loc loc = Loc::current());

/// Contracts the last `axes` axes of a with the first `axes` of b (a negative count contracts none, as JAX),
/// or the listed pairs of axes; the result in the promoted dtype, or preferred_element_type.
Array tensordot(const Array& a, const Array& b, int64_t axes = 2,
                std::optional<DType> preferred_element_type = std::nullopt, Loc loc = Loc::current());
Array tensordot(const Array& a, const Array& b, const std::pair<Axes, Axes>& axes,
                std::optional<DType> preferred_element_type = std::nullopt, Loc loc = Loc::current());
/// Sum over the last axes of a and b (a * b when either is 0-d).
Array inner(const Array& a, const Array& b, std::optional<DType> preferred_element_type = std::nullopt,
            Loc loc = Loc::current());
/// dot of the flattened arrays (equal sizes).
Array vdot(const Array& a, const Array& b, std::optional<DType> preferred_element_type = std::nullopt,
           Loc loc = Loc::current());
/// The Kronecker product (the lower-rank operand gets leading size-1 axes first).
Array kron(const Array& a, const Array& b, Loc loc = Loc::current());
/// Cross product of 3-vectors (or 2-vectors, taken with z = 0; two 2-vectors give the z component only) along
/// axisa / axisb, the result's vector axis at axisc; `axis` sets all three. Other axes broadcast.
Array cross(const Array& a, const Array& b, int64_t axisa = -1, int64_t axisb = -1, int64_t axisc = -1,
            std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());

/// A 2-D array with ravel(v) on diagonal k.
Array diagflat(const Array& v, int64_t k = 0, Loc loc = Loc::current());
/// N x M (M defaults to N) with ones on and below diagonal k.
Array tri(int64_t N, std::optional<int64_t> M = std::nullopt, int64_t k = 0, DType dtype = DType::float32,
          Loc loc = Loc::current());
/// Columns x^(N-1), ..., x^0 of the 1-D x (N defaults to its length; increasing reverses them), in x's dtype.
Array vander(const Array& x, std::optional<int64_t> N = std::nullopt, bool increasing = false,
             Loc loc = Loc::current());

/// Row and column indices (int64, as JAX with x64) of the lower / upper triangle of an n x m array (m defaults to
/// n) from diagonal k, in row-major order.
std::pair<Array, Array> tril_indices(int64_t n, int64_t k = 0, std::optional<int64_t> m = std::nullopt,
                                     Loc loc = Loc::current());
std::pair<Array, Array> triu_indices(int64_t n, int64_t k = 0, std::optional<int64_t> m = std::nullopt,
                                     Loc loc = Loc::current());
/// ndim copies of arange(n) (int64): the indices of the main diagonal of an n x ... x n array.
std::vector<Array> diag_indices(int64_t n, int64_t ndim = 2, Loc loc = Loc::current());
/// The grid of indices of an array of shape `dimensions`, stacked: shape (len(dimensions), *dimensions). dtype
/// defaults to int32 (jitx's creation default; JAX's is int64 with x64).
Array indices(Shape dimensions, DType dtype = DType::int32, Loc loc = Loc::current());
/// The same grids as a list: one array per axis, each of shape `dimensions`, or broadcastable (size 1 on the other
/// axes) when sparse, as JAX's sparse=True.
std::vector<Array> indices(Shape dimensions, DType dtype, bool sparse, Loc loc = Loc::current());
/// The coordinates in an array of `shape` of the flat (row-major) indices, one array per axis in the indices'
/// dtype; out-of-range indices clamp to the first or last element, -1 is the last one (as JAX).
std::vector<Array> unravel_index(const Array& indices, Shape shape, Loc loc = Loc::current());
/// Flat (row-major for order "C", column-major for "F") indices of the coordinates in multi_index (one integer
/// array per axis, broadcast together) into an array of shape dims. mode: "raise" (checks the values, so it needs
/// concrete arrays: a TracerError under jit, as JAX's ConcretizationTypeError), "wrap", "clip" or "ignore". The
/// result dtype is dtype, else the indices' promoted with a weak int.
Array ravel_multi_index(const std::vector<Array>& multi_index, Shape dims, std::string_view mode = "raise",
                        std::string_view order = "C", std::optional<DType> dtype = std::nullopt,
                        Loc loc = Loc::current());

/// jnp.delete (delete_: `delete` is a C++ keyword): arr without the entries at obj along axis (arr flattened when
/// axis is nullopt). obj: one index, a list, an integer array (negative indices count from the end, repeats count
/// once, out-of-range ones are refused) or a boolean mask of the axis's length. An array obj must be concrete
/// (TracerError under jit, as JAX's ConcretizationTypeError), except integer indices with assume_unique_indices,
/// which are clamped into range and must then be distinct. An integer argument takes the template, a braced list
/// the list.
Array delete_(const Array& arr, const Array& obj, std::optional<int64_t> axis = std::nullopt,
              bool assume_unique_indices = false, Loc loc = Loc::current());
Array delete_(const Array& arr, const std::vector<int64_t>& obj, std::optional<int64_t> axis = std::nullopt,
              Loc loc = Loc::current());
template <std::integral I>
Array delete_(const Array& arr, I obj, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current()) {
  return delete_(arr, Array(static_cast<int64_t>(obj)), axis, false, loc);
}
/// values inserted into arr before the entries at obj along axis (arr flattened when axis is nullopt), in arr's
/// dtype. obj: one index (values' first axis then runs along axis, as JAX's scalar obj) or a 1-D integer array
/// (traced ones too; negative indices count from the end, out-of-range ones clamp to the ends); values broadcast
/// to the inserted slots.
Array insert(const Array& arr, const Array& obj, const Array& values, std::optional<int64_t> axis = std::nullopt,
             Loc loc = Loc::current());
Array insert(const Array& arr, const std::vector<int64_t>& obj, const Array& values,
             std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
template <std::integral I>
Array insert(const Array& arr, I obj, const Array& values, std::optional<int64_t> axis = std::nullopt,
             Loc loc = Loc::current()) {
  return insert(arr, Array(static_cast<int64_t>(obj)), values, axis, loc);
}

}  // namespace jitx::numpy
