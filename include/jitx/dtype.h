// Element types, their properties and JAX's type-promotion lattice.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jitx {

enum class DType : uint8_t {
  bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
  float16, bfloat16, float32, float64,
};
inline constexpr int kNumDTypes = 13;
/// Whether d is one of the 13 dtypes (a DType cast from an arbitrary integer may not be).
inline constexpr bool is_valid_dtype(DType d) { return static_cast<int>(d) < kNumDTypes; }

inline constexpr DType bool_ = DType::bool_;
inline constexpr DType int8 = DType::int8;
inline constexpr DType int16 = DType::int16;
inline constexpr DType int32 = DType::int32;
inline constexpr DType int64 = DType::int64;
inline constexpr DType uint8 = DType::uint8;
inline constexpr DType uint16 = DType::uint16;
inline constexpr DType uint32 = DType::uint32;
inline constexpr DType uint64 = DType::uint64;
inline constexpr DType float16 = DType::float16;
inline constexpr DType bfloat16 = DType::bfloat16;
inline constexpr DType float32 = DType::float32;
inline constexpr DType float64 = DType::float64;

/// Short name as jaxprs print it: f32, bf16, i8, u32, bool.
std::string_view dtype_name(DType d);
/// Element type as StableHLO prints it: f32, bf16, i8, ui32, i1.
std::string_view dtype_mlir_name(DType d);
/// Parses either spelling; throws TypeError on an unknown name.
DType dtype_from_name(std::string_view name);
size_t dtype_size(DType d);
bool is_floating(DType d);
bool is_integer(DType d);  // signed or unsigned, not bool
bool is_signed_integer(DType d);
bool is_unsigned_integer(DType d);
inline bool is_bool(DType d) { return d == DType::bool_; }
int dtype_bits(DType d);

/// JAX type promotion of two (dtype, weak) pairs; returns the result and whether it is weak.
DType promote_types(DType a, bool a_weak, DType b, bool b_weak, bool* result_weak = nullptr);

/// The DType of a C++ element type.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::bool_; }
template <> constexpr DType dtype_of<int8_t>() { return DType::int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::int64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::uint8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::uint16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::uint32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::uint64; }
template <> constexpr DType dtype_of<float>() { return DType::float32; }
template <> constexpr DType dtype_of<double>() { return DType::float64; }

/// IEEE half and bfloat16 conversions (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
float bfloat16_to_float(uint16_t b);

}  // namespace jitx
