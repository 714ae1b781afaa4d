// More of jax.lax, composed from jitx's primitives (so jit, grad and vmap apply unchanged): the *_in_dim slicing
// helpers, squeeze/expand_dims/collapse/split, integer_pow/square/clz, full_like, sort_key_val, batch_matmul,
// string padding (padtype_to_pads, conv, conv_with_general_padding, conv_transpose) and lax::map
// (lax.stop_gradient is jitx::stop_gradient, jitx/autodiff.h).
#pragma once
#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jitx/lax.h"

namespace jitx::detail {
/// Opens lax::map's API scope for the returned object's lifetime (an error its scan raises also names map).
std::shared_ptr<void> lax_map_scope(const Loc& loc);
}  // namespace jitx::detail

namespace jitx::lax {

/// lax.index_in_dim: x's slice at a static index along axis (negative counts from the end), keeping the axis as
/// size 1 unless keepdims is false. IndexError out of range.
Array index_in_dim(const Array& x, int64_t index, int64_t axis = 0, bool keepdims = true, Loc loc = Loc::current());
/// lax.dynamic_slice_in_dim: slice_size elements from a traced start along axis (the start clamped as
/// dynamic_slice clamps it).
Array dynamic_slice_in_dim(const Array& x, const Array& start_index, int64_t slice_size, int64_t axis = 0,
                           Loc loc = Loc::current());
/// lax.dynamic_index_in_dim: the slice at a traced index along axis, kept as size 1 unless keepdims is false.
Array dynamic_index_in_dim(const Array& x, const Array& index, int64_t axis = 0, bool keepdims = true,
                           Loc loc = Loc::current());
/// lax.dynamic_update_slice_in_dim: update written into x from a traced start along axis.
Array dynamic_update_slice_in_dim(const Array& x, const Array& update, const Array& start_index, int64_t axis,
                                  Loc loc = Loc::current());
/// lax.dynamic_update_index_in_dim: update (with or without the axis) written at a traced index along axis.
Array dynamic_update_index_in_dim(const Array& x, const Array& update, const Array& index, int64_t axis,
                                  Loc loc = Loc::current());

/// lax.squeeze: removes the given axes, each of size 1 (ShapeError otherwise).
Array squeeze(const Array& x, std::vector<int64_t> dimensions, Loc loc = Loc::current());
/// lax.expand_dims: inserts axes of size 1 at the given positions of the result.
Array expand_dims(const Array& x, std::vector<int64_t> dimensions, Loc loc = Loc::current());
/// lax.collapse: axes [start, stop) merged into one (stop defaults to the rank).
Array collapse(const Array& x, int64_t start_dimension, std::optional<int64_t> stop_dimension = std::nullopt,
               Loc loc = Loc::current());
/// lax.split: consecutive pieces of the given sizes along axis (their sum must be the axis' size).
std::vector<Array> split(const Array& x, const std::vector<int64_t>& sizes, int64_t axis = 0, Loc loc = Loc::current());

/// lax.integer_pow: x to a static integer power by repeated squaring (JAX's order of multiplies); a negative y is
/// 1 / x^-y, refused for integer x. y = 0 gives ones.
Array integer_pow(const Array& x, int64_t y, Loc loc = Loc::current());
/// lax.square: x * x.
Array square(const Array& x, Loc loc = Loc::current());
/// lax.clz: the number of leading zero bits of each integer element, in its dtype.
Array clz(const Array& x, Loc loc = Loc::current());
/// lax.full_like: an array like x (or of the given dtype/shape) filled with fill_value.
Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype = std::nullopt,
                std::optional<Shape> shape = std::nullopt, Loc loc = Loc::current());

/// lax.sort_key_val: keys sorted along dimension, values permuted with them.
std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int64_t dimension = -1,
                                     bool is_stable = true, Loc loc = Loc::current());
/// lax.batch_matmul: matmul over the last two axes of two arrays of the same rank (>= 2) and batch shape.
Array batch_matmul(const Array& lhs, const Array& rhs, Loc loc = Loc::current());

/// A padding mode by name ("SAME", "VALID", "SAME_LOWER"): its own type, so that `{}` still means an empty list
/// of (low, high) pairs where both overloads exist.
struct PaddingMode {
  std::string name;
  // A template, so that a braced list ({{0, 0}}: explicit pads) never converts to a name.
  template <class S>
    requires std::convertible_to<const S&, std::string_view>
  PaddingMode(const S& n) : name(std::string_view(n)) {}  // NOLINT(google-explicit-constructor)
};

/// lax.padtype_to_pads: (low, high) per spatial axis for "VALID", "SAME" (the extra element high) or
/// "SAME_LOWER" (low), case-insensitive, so that the output has ceil(in / stride) elements.
std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(const std::vector<int64_t>& in_shape,
                                                         const std::vector<int64_t>& window_shape,
                                                         const std::vector<int64_t>& window_strides,
                                                         std::string_view padding, Loc loc = Loc::current());
/// conv_general_dilated with a padding string (JAX's padtype_to_pads on the dilated kernel; not with lhs_dilation).
Array conv_general_dilated(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides,
                           const PaddingMode& padding, std::vector<int64_t> lhs_dilation = {},
                           std::vector<int64_t> rhs_dilation = {}, const ConvDimensionNumbers& dimension_numbers = {},
                           int64_t feature_group_count = 1, int64_t batch_group_count = 1, Loc loc = Loc::current());
/// lax.conv: NCHW input, OIHW kernel, a padding string.
Array conv(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides, const PaddingMode& padding,
           Loc loc = Loc::current());
/// lax.conv_with_general_padding: NCHW/OIHW with explicit padding and dilations.
Array conv_with_general_padding(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides,
                                std::vector<std::pair<int64_t, int64_t>> padding, std::vector<int64_t> lhs_dilation,
                                std::vector<int64_t> rhs_dilation, Loc loc = Loc::current());
/// lax.conv_transpose: the fractionally strided convolution (keras' Conv2DTranspose): lhs dilated by strides,
/// padding "SAME"/"VALID" as for the forward convolution or explicit pairs; dimension numbers default to
/// NC/IO, NHC/HIO, NHWC/HWIO, NHWDC/HWDIO by rank; transpose_kernel flips the kernel and swaps its I and O axes.
Array conv_transpose(const Array& lhs, const Array& rhs, std::vector<int64_t> strides, const PaddingMode& padding,
                     std::vector<int64_t> rhs_dilation = {},
                     std::optional<std::vector<std::string>> dimension_numbers = std::nullopt,
                     bool transpose_kernel = false, Loc loc = Loc::current());
Array conv_transpose(const Array& lhs, const Array& rhs, std::vector<int64_t> strides,
                     std::vector<std::pair<int64_t, int64_t>> padding, std::vector<int64_t> rhs_dilation = {},
                     std::optional<std::vector<std::string>> dimension_numbers = std::nullopt,
                     bool transpose_kernel = false, Loc loc = Loc::current());

/// lax.map(f, xs): f applied to each slice of xs (a pytree) along its leading axis, the results stacked: one scan.
template <class F, class X>
auto map(const F& f, const X& xs, Loc loc = Loc::current()) {
  auto scope = jitx::detail::lax_map_scope(loc);
  auto [carry, ys] = scan([&](const std::tuple<>& c, const auto& x) { return std::make_pair(c, f(x)); }, std::tuple<>{},
                          xs, ScanOptions{}, loc);
  (void)carry;
  return ys;
}

}  // namespace jitx::lax
