// jitx::lax: thin wrappers over the primitives (no implicit broadcasting or promotion), as jax.lax.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jitx/array.h"

namespace jitx::lax {

// unary
#define JITX_LAX_UNARY(name) Array name(const Array& x, Loc loc = Loc::current());
JITX_LAX_UNARY(neg) JITX_LAX_UNARY(abs) JITX_LAX_UNARY(sign) JITX_LAX_UNARY(floor) JITX_LAX_UNARY(ceil)
JITX_LAX_UNARY(exp) JITX_LAX_UNARY(exp2) JITX_LAX_UNARY(expm1) JITX_LAX_UNARY(log) JITX_LAX_UNARY(log1p)
JITX_LAX_UNARY(sqrt) JITX_LAX_UNARY(rsqrt) JITX_LAX_UNARY(cbrt) JITX_LAX_UNARY(tanh) JITX_LAX_UNARY(logistic)
JITX_LAX_UNARY(sin) JITX_LAX_UNARY(cos) JITX_LAX_UNARY(tan) JITX_LAX_UNARY(asin) JITX_LAX_UNARY(acos)
JITX_LAX_UNARY(atan) JITX_LAX_UNARY(sinh) JITX_LAX_UNARY(cosh) JITX_LAX_UNARY(asinh) JITX_LAX_UNARY(acosh)
JITX_LAX_UNARY(atanh) JITX_LAX_UNARY(erf) JITX_LAX_UNARY(erfc) JITX_LAX_UNARY(erf_inv) JITX_LAX_UNARY(lgamma)
JITX_LAX_UNARY(digamma) JITX_LAX_UNARY(is_finite) JITX_LAX_UNARY(bitwise_not) JITX_LAX_UNARY(population_count)
#undef JITX_LAX_UNARY

enum class RoundingMethod { AWAY_FROM_ZERO = 0, TO_NEAREST_EVEN = 1 };
Array round(const Array& x, RoundingMethod m = RoundingMethod::AWAY_FROM_ZERO, Loc loc = Loc::current());

// binary (same dtypes; equal shapes or a scalar operand)
#define JITX_LAX_BINARY(name) Array name(const Array& x, const Array& y, Loc loc = Loc::current());
JITX_LAX_BINARY(add) JITX_LAX_BINARY(sub) JITX_LAX_BINARY(mul) JITX_LAX_BINARY(div) JITX_LAX_BINARY(rem)
JITX_LAX_BINARY(pow) JITX_LAX_BINARY(max) JITX_LAX_BINARY(min) JITX_LAX_BINARY(atan2)
JITX_LAX_BINARY(bitwise_and) JITX_LAX_BINARY(bitwise_or) JITX_LAX_BINARY(bitwise_xor)
JITX_LAX_BINARY(shift_left) JITX_LAX_BINARY(shift_right_arithmetic) JITX_LAX_BINARY(shift_right_logical)
JITX_LAX_BINARY(eq) JITX_LAX_BINARY(ne) JITX_LAX_BINARY(lt) JITX_LAX_BINARY(le) JITX_LAX_BINARY(gt) JITX_LAX_BINARY(ge)
#undef JITX_LAX_BINARY

/// select_n(which, case0, case1): case1 where `which` is true, else case0.
Array select_n(const Array& which, const Array& case0, const Array& case1, Loc loc = Loc::current());
/// select(pred, on_true, on_false).
Array select(const Array& pred, const Array& on_true, const Array& on_false, Loc loc = Loc::current());
Array clamp(const Array& lo, const Array& x, const Array& hi, Loc loc = Loc::current());
Array convert_element_type(const Array& x, DType dtype, Loc loc = Loc::current());
Array bitcast_convert_type(const Array& x, DType dtype, Loc loc = Loc::current());

// shapes
Array broadcast_in_dim(const Array& x, Shape shape, std::vector<int64_t> broadcast_dimensions,
                       Loc loc = Loc::current());
Array broadcast(const Array& x, Shape leading_sizes, Loc loc = Loc::current());
Array reshape(const Array& x, Shape new_sizes, Loc loc = Loc::current());
Array transpose(const Array& x, std::vector<int64_t> permutation, Loc loc = Loc::current());
Array rev(const Array& x, std::vector<int64_t> dimensions, Loc loc = Loc::current());
Array slice(const Array& x, std::vector<int64_t> start, std::vector<int64_t> limit, std::vector<int64_t> strides = {},
            Loc loc = Loc::current());
Array slice_in_dim(const Array& x, int64_t start, int64_t limit, int64_t stride = 1, int64_t axis = 0,
                   Loc loc = Loc::current());
Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices, std::vector<int64_t> slice_sizes,
                    Loc loc = Loc::current());
Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& start_indices,
                           Loc loc = Loc::current());
Array concatenate(const std::vector<Array>& xs, int64_t dimension, Loc loc = Loc::current());
/// padding_config: (low, high, interior) per axis.
Array pad(const Array& x, const Array& padding_value, std::vector<std::array<int64_t, 3>> padding_config,
          Loc loc = Loc::current());
Array iota(DType dtype, int64_t size, Loc loc = Loc::current());
Array broadcasted_iota(DType dtype, Shape shape, int64_t dimension, Loc loc = Loc::current());
Array full(Shape shape, const Array& fill_value, Loc loc = Loc::current());

// reductions
Array reduce_sum(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
Array reduce_prod(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
Array reduce_max(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
Array reduce_min(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
Array reduce_and(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
Array reduce_or(const Array& x, std::vector<int64_t> axes, Loc loc = Loc::current());
Array argmax(const Array& x, int64_t axis, DType index_dtype = DType::int32, Loc loc = Loc::current());
Array argmin(const Array& x, int64_t axis, DType index_dtype = DType::int32, Loc loc = Loc::current());
Array cumsum(const Array& x, int64_t axis = 0, bool reverse = false, Loc loc = Loc::current());
Array cumprod(const Array& x, int64_t axis = 0, bool reverse = false, Loc loc = Loc::current());
Array cummax(const Array& x, int64_t axis = 0, bool reverse = false, Loc loc = Loc::current());
Array cummin(const Array& x, int64_t axis = 0, bool reverse = false, Loc loc = Loc::current());
/// log(cumsum(exp(x))) without overflow, as JAX computes it on CPU (an associative scan of logaddexp).
Array cumlogsumexp(const Array& x, int64_t axis = 0, bool reverse = false, Loc loc = Loc::current());

/// The next representable value after x1 towards x2 (same float dtype; a scalar operand broadcasts); x2 where
/// they are equal, NaN if either is. Subnormals are kept: nextafter(0, 1) is the smallest subnormal.
Array nextafter(const Array& x1, const Array& x2, Loc loc = Loc::current());
/// x rounded (to nearest even) to a float with exponent_bits and mantissa_bits, as XLA's reduce-precision:
/// values out of that format's range become signed infinities, those below its smallest normal signed zeros, and
/// NaNs stay NaN (as JAX on CPU, even with mantissa_bits = 0). Its derivative is 1 (JAX also rounds the tangent; jitx does not).
Array reduce_precision(const Array& x, int exponent_bits, int mantissa_bits, Loc loc = Loc::current());

/// Windowed reductions (pooling). padding: (low, high) per axis.
struct WindowConfig {
  std::vector<int64_t> window_dimensions, window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> base_dilation, window_dilation;
};
Array reduce_window_sum(const Array& x, const WindowConfig& w, Loc loc = Loc::current());
Array reduce_window_max(const Array& x, const WindowConfig& w, Loc loc = Loc::current());
Array reduce_window_min(const Array& x, const WindowConfig& w, Loc loc = Loc::current());

// contractions
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};
Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type = std::nullopt, Loc loc = Loc::current());
Array dot(const Array& lhs, const Array& rhs, Loc loc = Loc::current());

// indexing (StableHLO's gather/scatter dimension numbers)
/// index_vector_dim = -1 means the last axis of the indices (JAX's convention).
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, operand_batching_dims, start_indices_batching_dims,
      start_index_map;
  int64_t index_vector_dim = -1;
};
/// Slices of operand at start_indices; out-of-range starts are clamped into the operand, as XLA does.
Array gather(const Array& operand, const Array& start_indices, const GatherDimensionNumbers& dimension_numbers,
             std::vector<int64_t> slice_sizes, bool indices_are_sorted = false, Loc loc = Loc::current());
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, input_batching_dims, scatter_indices_batching_dims,
      scatter_dims_to_operand_dims;
  int64_t index_vector_dim = -1;
};
/// operand with updates written (or combined) at scatter_indices; update windows out of range are dropped.
#define JITX_LAX_SCATTER(name)                                                                                \
  Array name(const Array& operand, const Array& scatter_indices, const Array& updates,                       \
             const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,              \
             bool unique_indices = false, Loc loc = Loc::current());
JITX_LAX_SCATTER(scatter) JITX_LAX_SCATTER(scatter_add) JITX_LAX_SCATTER(scatter_mul) JITX_LAX_SCATTER(scatter_min)
JITX_LAX_SCATTER(scatter_max)
#undef JITX_LAX_SCATTER

/// Sorts the operands together along dimension, ascending on the first num_keys (lexicographically); floats sort
/// -0.0 == 0.0 and NaNs last.
std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension = -1, bool is_stable = true,
                        int64_t num_keys = 1, Loc loc = Loc::current());
Array sort(const Array& operand, int64_t dimension = -1, bool is_stable = true, Loc loc = Loc::current());
/// (values, int32 indices) of the k largest entries along the last axis; ties pick the lower index.
std::pair<Array, Array> top_k(const Array& operand, int64_t k, Loc loc = Loc::current());

// convolution
/// JAX's ConvDimensionNumbers: lhs_spec = (batch, feature, spatial...), rhs_spec = (out feature, in feature,
/// spatial...), out_spec = (batch, feature, spatial...), each a list of axis numbers. Empty: NCHW, OIHW, NCHW.
struct ConvDimensionNumbers {
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
};
/// Dimension numbers from layout strings such as ("NHWC", "HWIO", "NHWC"), as jax.lax.conv_dimension_numbers.
ConvDimensionNumbers conv_dimension_numbers(const std::string& lhs, const std::string& rhs, const std::string& out,
                                            Loc loc = Loc::current());
/// padding: (low, high) per spatial axis; empty dilations mean 1.
Array conv_general_dilated(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides,
                           std::vector<std::pair<int64_t, int64_t>> padding, std::vector<int64_t> lhs_dilation = {},
                           std::vector<int64_t> rhs_dilation = {}, const ConvDimensionNumbers& dimension_numbers = {},
                           int64_t feature_group_count = 1, int64_t batch_group_count = 1, Loc loc = Loc::current());

}  // namespace jitx::lax
#include "jitx/lax_control.h"
