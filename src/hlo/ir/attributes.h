// Typed HLO attributes: dimension numbers, windows, comparisons, reducers, read from an instruction's attrs.
//
// Instructions keep their attributes in a detail::Params map (so HLO text, fingerprints and CSE stay as they
// are); passes, analyses, the evaluator and the backends read them through these types, never by string key.
// Each struct has:
//   static X of(const Instruction&)  reads and validates; throws CompileError naming the instruction when an
//                                    attribute is missing, has the wrong type or names an axis out of range
//   void set_on(detail::Params&)     writes the attributes back (to_params(x) makes a fresh map)
//   std::string str(), X::parse()    XLA's HLO text spelling (`lhs_batch_dims={0}, lhs_contracting_dims={2}`)
// Checks that need operand extents (a contracting size that differs, a slice wider than the operand) are the
// verifier's; of() checks what the attributes say on their own and against the ranks of the operands.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.h"

namespace jitx::hlo {

class Instruction;

/// dot: lhs_batch_dims[k] pairs with rhs_batch_dims[k], lhs_contracting_dims[k] with rhs_contracting_dims[k].
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dims, lhs_contracting_dims, rhs_batch_dims, rhs_contracting_dims;

  static DotDimensionNumbers of(const Instruction& dot);  // absent batch lists are empty
  void set_on(detail::Params& attrs) const;
  std::string str() const;
  static DotDimensionNumbers parse(std::string_view text);
  bool operator==(const DotDimensionNumbers&) const = default;
};

/// convolution's axis roles; spelled as XLA's dim_labels (`b01f_01io->b01f`: batch, feature, spatial digits).
struct ConvDimensionNumbers {
  int64_t input_batch_dimension = 0, input_feature_dimension = 1;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_output_feature_dimension = 0, kernel_input_feature_dimension = 1;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0, output_feature_dimension = 1;
  std::vector<int64_t> output_spatial_dimensions;

  int64_t num_spatial_dims() const { return static_cast<int64_t>(input_spatial_dimensions.size()); }
  /// The lhs's (rhs's, result's) axes as StableHLO lists them: batch (output feature), feature (input feature),
  /// then the spatial axes.
  std::vector<int64_t> lhs_spec() const;
  std::vector<int64_t> rhs_spec() const;
  std::vector<int64_t> out_spec() const;
  std::string str() const;  // "dim_labels=b01f_01io->b01f"
  static ConvDimensionNumbers parse(std::string_view text);
  bool operator==(const ConvDimensionNumbers&) const = default;
};

struct WindowPadding {
  int64_t low = 0, high = 0;
  bool operator==(const WindowPadding&) const = default;
};

/// A window over the spatial axes (reduce-window: every axis): its size, stride, padding and dilations. The
/// base dilation spreads the operand (XLA's lhs_dilate), the window dilation the window (rhs_dilate).
struct Window {
  std::vector<int64_t> dimensions, strides, base_dilations, window_dilations;
  std::vector<WindowPadding> padding;

  int64_t rank() const { return static_cast<int64_t>(dimensions.size()); }
  /// A reduce-window's window (strides, padding and dilations may be absent: 1, 0 and 1).
  static Window of(const Instruction& reduce_window);
  void set_on(detail::Params& attrs) const;  // as reduce-window's attributes
  /// "window={size=2x2 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1}", defaults left out as XLA does.
  std::string str() const;
  static Window parse(std::string_view text);
  bool operator==(const Window&) const = default;
};

/// convolution's attributes. window.dimensions is the kernel's spatial extent (from the rhs's shape, not stored).
struct ConvConfig {
  ConvDimensionNumbers dnums;
  Window window;
  int64_t feature_group_count = 1, batch_group_count = 1;

  static ConvConfig of(const Instruction& convolution);
  void set_on(detail::Params& attrs) const;
  /// "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2" (counts of 1 left out).
  std::string str() const;
  static ConvConfig parse(std::string_view text);
  bool operator==(const ConvConfig&) const = default;
};

/// gather's dimension numbers with its slice_sizes and indices_are_sorted.
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, operand_batching_dims, start_indices_batching_dims,
      start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;

  static GatherDimensionNumbers of(const Instruction& gather);  // absent batching lists are empty
  void set_on(detail::Params& attrs) const;
  /// "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"
  std::string str() const;
  static GatherDimensionNumbers parse(std::string_view text);
  bool operator==(const GatherDimensionNumbers&) const = default;
};

/// scatter's dimension numbers with indices_are_sorted and unique_indices (its update kind is reducer_of()).
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, input_batching_dims, scatter_indices_batching_dims,
      scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  bool indices_are_sorted = false, unique_indices = false;

  static ScatterDimensionNumbers of(const Instruction& scatter);  // absent batching lists are empty
  void set_on(detail::Params& attrs) const;
  /// "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
  std::string str() const;
  static ScatterDimensionNumbers parse(std::string_view text);
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

/// pad: per axis, elements added before, after and between the operand's elements (edges may be negative).
struct PaddingConfig {
  std::vector<int64_t> low, high, interior;

  static PaddingConfig of(const Instruction& pad);
  void set_on(detail::Params& attrs) const;
  std::string str() const;  // "padding=0_1_0x2_2_1" (low_high_interior per axis)
  static PaddingConfig parse(std::string_view text);
  bool operator==(const PaddingConfig&) const = default;
};

/// slice: result element k of an axis is operand element start + k * stride, below limit.
struct SliceConfig {
  std::vector<int64_t> start_indices, limit_indices, strides;

  static SliceConfig of(const Instruction& slice);  // absent strides are 1
  void set_on(detail::Params& attrs) const;
  std::string str() const;  // "slice={[0:4], [1:8:2]}"
  static SliceConfig parse(std::string_view text);
  bool operator==(const SliceConfig&) const = default;
};

/// sort: along `dimension`, lexicographically on the first num_keys operands (ascending, NaNs last).
struct SortConfig {
  int64_t dimension = 0, num_keys = 1;
  bool is_stable = false;

  static SortConfig of(const Instruction& sort);
  void set_on(detail::Params& attrs) const;
  std::string str() const;  // "dimensions={0}, is_stable=true, num_keys=2" (XLA's list; num_keys of 1 left out)
  static SortConfig parse(std::string_view text);
  bool operator==(const SortConfig&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
/// How compare orders its operands: IEEE floats (a NaN is unordered), or integers as signed or unsigned.
enum class ComparisonType : uint8_t { kFloat, kSigned, kUnsigned };

std::string_view comparison_direction_name(ComparisonDirection d);  // "EQ"
std::string_view comparison_type_name(ComparisonType t);            // "FLOAT"

/// compare's direction and type (an absent type follows the operands' dtype, as in XLA).
struct Comparison {
  ComparisonDirection direction = ComparisonDirection::kEq;
  ComparisonType type = ComparisonType::kFloat;

  static Comparison of(const Instruction& compare);
  void set_on(detail::Params& attrs) const;
  std::string str() const;  // "direction=LT, type=FLOAT"
  static Comparison parse(std::string_view text);
  bool operator==(const Comparison&) const = default;
  /// Whether a pair that orders as `order` (-1, 0, 1) satisfies the direction; an unordered pair (a NaN) only
  /// satisfies NE.
  bool holds(int order, bool unordered) const;
};

/// The combining function of reduce and reduce-window (add..or, and argmax/argmin for the (value, index)
/// reduce) and the update kind of scatter (add..min, or replace).
enum class Reducer : uint8_t { kAdd, kMul, kMax, kMin, kAnd, kOr, kArgmax, kArgmin, kReplace };
std::string_view reducer_name(Reducer r);  // "add"
/// The `reducer` of a kReduce, kReduceWindow or kScatter, checked against the ones that op takes.
Reducer reducer_of(const Instruction& inst);

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kRow };
std::string_view fusion_kind_name(FusionKind k);  // "kLoop"
/// A kFusion's `kind` (kLoop when absent).
FusionKind fusion_kind_of(const Instruction& fusion);
/// A kFusion's `in_place_parameter`: the fused parameter that shares the output's buffer; -1 when none.
int64_t in_place_parameter_of(const Instruction& fusion);

// --- one-value attributes, checked against the operand and result ranks ---
const std::vector<int64_t>& broadcast_dimensions_of(const Instruction& broadcast);  // result axis per operand axis
const std::vector<int64_t>& permutation_of(const Instruction& transpose);  // result axis k is operand axis perm[k]
const std::vector<int64_t>& dimensions_of(const Instruction& reduce_or_reverse);  // distinct operand axes
int64_t iota_dimension_of(const Instruction& iota);
int64_t concatenate_dimension_of(const Instruction& concatenate);
int64_t tuple_index_of(const Instruction& get_tuple_element);
int64_t top_k_of(const Instruction& top_k);  // k

/// A fresh attribute map holding what x writes.
template <class X>
detail::Params to_params(const X& x) {
  detail::Params p;
  x.set_on(p);
  return p;
}

}  // namespace jitx::hlo
