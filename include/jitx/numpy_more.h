// jitx::numpy, more of jnp's surface: rounding and float decomposition (trunc, rint, fabs, modf, frexp, divmod),
// NaN-ignoring fmax/fmin, logaddexp2, isposinf/isneginf, bit counting and the array API's bitwise_* names, amax and
// amin, array_equal/array_equiv, concat/permute_dims/rollaxis/unstack/broadcast_arrays, ediff1d, lexsort,
// matvec/vecmat, the *_indices_from helpers, polynomial arithmetic (polyadd, polysub, polymul, polyder, polyint) and
// the window functions (bartlett, blackman, hamming, hanning). JAX's names, defaults, result dtypes and edge values
// (src/ops/numpy_more.cpp composes each as JAX does). Include "jitx/numpy.h" too.
#pragma once
#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "jitx/numpy.h"

namespace jitx::numpy {

// --- elementwise ---
/// Rounds toward zero (integers and bools unchanged).
Array trunc(const Array& x, Loc loc = Loc::current());
/// Rounds to the nearest integer, ties to even; integers and bools become the default float dtype (float64).
Array rint(const Array& x, Loc loc = Loc::current());
/// |x| as a float (integers promote to an inexact dtype first, as JAX: int64 to float64, others to float32).
Array fabs(const Array& x, Loc loc = Loc::current());
/// The larger (smaller) of x and y, ignoring a NaN in either (NaN only where both are).
Array fmax(const Array& x, const Array& y, Loc loc = Loc::current());
Array fmin(const Array& x, const Array& y, Loc loc = Loc::current());
/// log2(2^x + 2^y), without overflow (floats; integers promote as fabs).
Array logaddexp2(const Array& x, const Array& y, Loc loc = Loc::current());
/// x == +inf (x == -inf); false for integers and bools.
Array isposinf(const Array& x, Loc loc = Loc::current());
Array isneginf(const Array& x, Loc loc = Loc::current());
/// (fractional part, integral part), both with x's sign, in x's inexact dtype (inf: (NaN, inf), as JAX).
std::pair<Array, Array> modf(const Array& x, Loc loc = Loc::current());
/// (mantissa in [0.5, 1) with x's sign, int32 exponent): x = mantissa * 2^exponent; 0, inf and NaN give (x, 0).
std::pair<Array, Array> frexp(const Array& x, Loc loc = Loc::current());
/// (floor_divide(x, y), remainder(x, y)); floats as Python's divmod (the quotient rounded, the remainder with y's
/// sign).
std::pair<Array, Array> divmod(const Array& x, const Array& y, Loc loc = Loc::current());
/// The number of 1 bits of |x|, as uint8.
Array bitwise_count(const Array& x, Loc loc = Loc::current());
/// The array API's names of bitwise_not, left_shift and right_shift.
Array bitwise_invert(const Array& x, Loc loc = Loc::current());
Array bitwise_left_shift(const Array& x, const Array& y, Loc loc = Loc::current());
Array bitwise_right_shift(const Array& x, const Array& y, Loc loc = Loc::current());

// --- reductions and comparisons ---
/// max and min under NumPy's other names.
Array amax(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array amin(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
template <std::integral I>
Array amax(const Array& x, I axis, bool keepdims = false, Loc loc = Loc::current()) {
  return amax(x, Axes{static_cast<int64_t>(axis)}, keepdims, loc);
}
template <std::integral I>
Array amin(const Array& x, I axis, bool keepdims = false, Loc loc = Loc::current()) {
  return amin(x, Axes{static_cast<int64_t>(axis)}, keepdims, loc);
}
/// Whether a and b have one shape and equal elements (a bool scalar; false for different shapes). equal_nan: NaNs
/// in the same places count as equal.
Array array_equal(const Array& a, const Array& b, bool equal_nan = false, Loc loc = Loc::current());
/// Whether a and b are equal once broadcast to each other (shapes that do not broadcast: a ShapeError, as JAX's
/// TypeError, where NumPy returns false).
Array array_equiv(const Array& a, const Array& b, Loc loc = Loc::current());

// --- shapes ---
/// The array API's names of concatenate and transpose (permute_dims takes the axes' order, required).
Array concat(const std::vector<Array>& xs, int64_t axis = 0, Loc loc = Loc::current());
Array permute_dims(const Array& x, Axes axes, Loc loc = Loc::current());
/// Moves axis to the position before start (NumPy's older form of moveaxis).
Array rollaxis(const Array& x, int64_t axis, int64_t start = 0, Loc loc = Loc::current());
/// The slices of x along axis, each without that axis.
std::vector<Array> unstack(const Array& x, int64_t axis = 0, Loc loc = Loc::current());
/// Every array broadcast to the shape they broadcast to together.
std::vector<Array> broadcast_arrays(const std::vector<Array>& xs, Loc loc = Loc::current());
/// Differences of consecutive elements of the flattened array, with to_begin and to_end (flattened, converted to
/// its dtype) around them.
Array ediff1d(const Array& x, std::optional<Array> to_end = std::nullopt, std::optional<Array> to_begin = std::nullopt,
              Loc loc = Loc::current());
/// The indices that sort along axis by the last key first, then the one before it, ... (stable; int64).
Array lexsort(const std::vector<Array>& keys, int64_t axis = -1, Loc loc = Loc::current());
/// Matrix times vector over the last dims, x1 (..., m, n) and x2 (..., n) -> (..., m); vecmat: x1 (..., n) and
/// x2 (..., n, m) -> (..., m). Leading dims broadcast.
Array matvec(const Array& x1, const Array& x2, Loc loc = Loc::current());
Array vecmat(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// diag_indices(n, ndim) of an array with ndim >= 2 equal dims; tril/triu_indices of a 2-D array's shape.
std::vector<Array> diag_indices_from(const Array& x, Loc loc = Loc::current());
std::pair<Array, Array> tril_indices_from(const Array& x, int64_t k = 0, Loc loc = Loc::current());
std::pair<Array, Array> triu_indices_from(const Array& x, int64_t k = 0, Loc loc = Loc::current());

// --- polynomials (1-D coefficient arrays, highest power first) ---
/// Sum and difference, in the promoted dtype (the shorter one aligned with the longer one's end).
Array polyadd(const Array& a, const Array& b, Loc loc = Loc::current());
Array polysub(const Array& a, const Array& b, Loc loc = Loc::current());
/// Product (a full convolution), in the promoted inexact dtype; trim_leading_zeros (concrete inputs) drops leading
/// zero coefficients first.
Array polymul(const Array& a, const Array& b, bool trim_leading_zeros = false, Loc loc = Loc::current());
/// The m-th derivative (m >= 0), in p's inexact dtype.
Array polyder(const Array& p, int64_t m = 1, Loc loc = Loc::current());
/// The m-th antiderivative (m >= 0) with integration constants k (a scalar, or m of them; default 0).
Array polyint(const Array& p, int64_t m = 1, std::optional<Array> k = std::nullopt, Loc loc = Loc::current());

// --- selection, filling and reshaping ---
/// a (flattened) repeated cyclically to fill new_shape (zeros when a or the result is empty).
Array resize(const Array& a, Shape new_shape, Loc loc = Loc::current());
/// The slices of a concrete array without its leading ('f') and/or trailing ('b') all-zero slices along axes (all
/// axes by default).
Array trim_zeros(const Array& filt, std::string_view trim = "fb", Axes axes = {}, Loc loc = Loc::current());
/// The slices of a along axis (flattened a when nullopt) where the 1-D condition is true. Without size the inputs
/// must be concrete; with it the result has size slices, padded with fill_value.
Array compress(const Array& condition, const Array& a, std::optional<int64_t> axis = std::nullopt,
               std::optional<int64_t> size = std::nullopt, const Array& fill_value = Array(0),
               Loc loc = Loc::current());
/// compress of the flattened arrays.
Array extract(const Array& condition, const Array& arr, std::optional<int64_t> size = std::nullopt,
              const Array& fill_value = Array(0), Loc loc = Loc::current());
/// choices[a[i]][i] (a, the choices broadcast together); mode "raise" (a concrete a in range), "wrap" or "clip".
Array choose(const Array& a, const std::vector<Array>& choices, std::string_view mode = "raise",
             Loc loc = Loc::current());
/// a with its main diagonal set to val (a scalar, or values repeated along the diagonal); as JAX's
/// fill_diagonal(..., inplace=False). wrap=true is not implemented (as in JAX).
Array fill_diagonal(const Array& a, const Array& val, bool wrap = false, Loc loc = Loc::current());
/// a with the flat positions ind set to v (repeated to ind's length); as JAX's put(..., inplace=False). mode: ""
/// (JAX's None: indices clamped by unravel_index), "clip" or "wrap".
Array put(const Array& a, const Array& ind, const Array& v, std::string_view mode = "", Loc loc = Loc::current());
/// arr with values (broadcast to indices' shape) written at indices along axis (flattened arr when nullopt);
/// negative indices count from the end, out-of-range ones are dropped. As JAX's put_along_axis(..., inplace=False).
Array put_along_axis(const Array& arr, const Array& indices, const Array& values, std::optional<int64_t> axis,
                     Loc loc = Loc::current());
/// Phase unwrapping along axis: jumps larger than discont (default period / 2) become their period complement.
Array unwrap(const Array& p, std::optional<Array> discont = std::nullopt, int64_t axis = -1,
             const Array& period = Array(2 * 3.14159265358979323846), Loc loc = Loc::current());
/// Indices that partition along axis: the kth smallest at kth, smaller ones before it, the rest after (int32).
Array argpartition(const Array& a, int64_t kth, int64_t axis = -1, Loc loc = Loc::current());
/// The elements of an integer or bool array as bits (nonzero: 1), packed 8 to a uint8 along axis (flattened when
/// nullopt; padded with zeros), bitorder "big" or "little"; unpackbits undoes it (count: keep that many bits).
Array packbits(const Array& a, std::optional<int64_t> axis = std::nullopt, std::string_view bitorder = "big",
               Loc loc = Loc::current());
Array unpackbits(const Array& a, std::optional<int64_t> axis = std::nullopt,
                 std::optional<int64_t> count = std::nullopt, std::string_view bitorder = "big",
                 Loc loc = Loc::current());
/// The coefficients of the monic polynomial with the given real roots (a 1-D array; square matrices need complex
/// eigenvalues: not supported).
Array poly(const Array& seq_of_zeros, Loc loc = Loc::current());
/// (quotient, remainder) of the polynomial division u / v, in the promoted inexact dtype.
std::pair<Array, Array> polydiv(const Array& u, const Array& v, Loc loc = Loc::current());

// --- window functions (float64, the default float dtype; M <= 1 gives M ones) ---
Array bartlett(int64_t M, Loc loc = Loc::current());
Array blackman(int64_t M, Loc loc = Loc::current());
Array hamming(int64_t M, Loc loc = Loc::current());
Array hanning(int64_t M, Loc loc = Loc::current());

}  // namespace jitx::numpy
