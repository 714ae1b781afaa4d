// DType names, sizes, half/bfloat16 conversion and JAX's type-promotion lattice.
#include "jitx/dtype.h"

#include <array>
#include <bit>
#include <cstring>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "jitx/config.h"

namespace jitx {
namespace {
struct DTypeInfo {
  std::string_view name, mlir;
  size_t size;
  int bits;
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", "i1", 1, 1},        {"i8", "i8", 1, 8},       {"i16", "i16", 2, 16},
    {"i32", "i32", 4, 32},       {"i64", "i64", 8, 64},    {"u8", "ui8", 1, 8},
    {"u16", "ui16", 2, 16},      {"u32", "ui32", 4, 32},   {"u64", "ui64", 8, 64},
    {"f16", "f16", 2, 16},       {"bf16", "bf16", 2, 16},  {"f32", "f32", 4, 32},
    {"f64", "f64", 8, 64},
}};
const DTypeInfo& info(DType d) {
  if (!is_valid_dtype(d))
    throw TypeError(fmt::format("[dtype] DType({}) is not a jitx dtype; expected one of bool, i8, i16, i32, i64, u8, "
                                "u16, u32, u64, f16, bf16, f32, f64", static_cast<int>(d)));
  return kInfo[static_cast<int>(d)];
}
}  // namespace

std::string_view dtype_name(DType d) { return info(d).name; }
std::string_view dtype_mlir_name(DType d) { return info(d).mlir; }
size_t dtype_size(DType d) { return info(d).size; }
int dtype_bits(DType d) { return info(d).bits; }

DType dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kInfo[i].name == name || kInfo[i].mlir == name) return static_cast<DType>(i);
  }
  if (name == "float32") return DType::float32;
  if (name == "float64") return DType::float64;
  if (name == "int32") return DType::int32;
  if (name == "pred") return DType::bool_;
  detail::throw_error<TypeError>(
      "dtype", "unknown dtype name '{}'; expected one of bool, i8..i64, u8..u64, f16, bf16, f32, f64", name);
}

namespace detail {
thread_local int t_force_x64 = 0;
ScopedX64::ScopedX64() { ++t_force_x64; }
ScopedX64::~ScopedX64() { --t_force_x64; }
}  // namespace detail

DType canonicalize_dtype(DType d) {
  if (config().enable_x64 || detail::t_force_x64 > 0) return d;
  switch (d) {
    case DType::float64: return DType::float32;
    case DType::int64: return DType::int32;
    case DType::uint64: return DType::uint32;
    default: return d;
  }
}

bool is_floating(DType d) { return d >= DType::float16; }
bool is_signed_integer(DType d) { return d >= DType::int8 && d <= DType::int64; }
bool is_unsigned_integer(DType d) { return d >= DType::uint8 && d <= DType::uint64; }
bool is_integer(DType d) { return is_signed_integer(d) || is_unsigned_integer(d); }

// --- JAX's promotion lattice -------------------------------------------------------------------
// Nodes are the 13 dtypes plus the two weak kinds "i*" (weak int) and "f*" (weak float).
namespace {
enum Node : int {
  kBool,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kWeakInt,
  kWeakFloat,
  kNumNodes
};
using Mask = uint32_t;

// Upward edges, as in jax._src.dtypes._type_promotion_lattice (without complex types).
constexpr std::array<Mask, kNumNodes> kEdges = {
    /*bool*/ 1u << kWeakInt,
    /*i8*/ 1u << kI16,
    /*i16*/ 1u << kI32,
    /*i32*/ 1u << kI64,
    /*i64*/ 1u << kWeakFloat,
    /*u8*/ (1u << kI16) | (1u << kU16),
    /*u16*/ (1u << kI32) | (1u << kU32),
    /*u32*/ (1u << kI64) | (1u << kU64),
    /*u64*/ 1u << kWeakFloat,
    /*f16*/ 1u << kF32,
    /*bf16*/ 1u << kF32,
    /*f32*/ 1u << kF64,
    /*f64*/ 0,
    /*i**/ (1u << kU8) | (1u << kI8),
    /*f**/ (1u << kBF16) | (1u << kF16),
};

std::array<Mask, kNumNodes> compute_closure() {
  std::array<Mask, kNumNodes> up{};
  for (int n = 0; n < kNumNodes; ++n) up[n] = (1u << n) | kEdges[n];
  for (int iter = 0; iter < kNumNodes; ++iter)
    for (int n = 0; n < kNumNodes; ++n)
      for (int m = 0; m < kNumNodes; ++m)
        if (up[n] & (1u << m)) up[n] |= up[m];
  return up;
}
const std::array<Mask, kNumNodes> kUp = compute_closure();

Node to_node(DType d, bool weak) {
  if (weak) {
    if (is_floating(d)) return kWeakFloat;
    if (is_integer(d)) return kWeakInt;
  }
  return static_cast<Node>(static_cast<int>(d));
}
}  // namespace

DType promote_types(DType a, bool a_weak, DType b, bool b_weak, bool* result_weak) {
  Node na = to_node(a, a_weak), nb = to_node(b, b_weak);
  Mask common = kUp[na] & kUp[nb];
  // The least upper bound: the common upper bound whose closure holds all the others.
  for (int n = 0; n < kNumNodes; ++n) {
    if (!(common & (1u << n))) continue;
    if ((kUp[n] & common) == common) {
      if (n == kWeakInt || n == kWeakFloat) {
        if (result_weak) *result_weak = true;
        // Keep the widest concrete dtype of the weak operands (i64 weak + i32 weak -> i64 weak).
        DType cand = n == kWeakFloat ? DType::float32 : DType::int32;
        bool from_weak = false;
        for (auto [d, w] : {std::pair{a, a_weak}, std::pair{b, b_weak}}) {
          if (!w || to_node(d, w) != n) continue;
          from_weak = true;
          if (dtype_bits(d) > dtype_bits(cand)) cand = d;
        }
        // Strong integers that only meet at the weak float (u64 + i64, i32 + u64) give JAX's default float, which
        // with x64 is a weak float64.
        if (!from_weak && n == kWeakFloat) cand = DType::float64;
        return cand;
      }
      if (result_weak) *result_weak = false;
      return static_cast<DType>(n);
    }
  }
  JITX_ASSERT(false, "promotion lattice has no join");
  return a;
}

// --- half and bfloat16 ---------------------------------------------------------------------------
uint16_t float_to_bfloat16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf (rounded)
  if (ax < 0x38800000u) {  // subnormal or zero in half
    // value = ax as float; half subnormal unit = 2^-24
    float v = std::bit_cast<float>(ax);
    float scaled = v * 16777216.0f;  // 2^24, exact
    // round to nearest even integer
    float r = __builtin_nearbyintf(scaled);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  uint32_t mant = ax & 0x7fffffu;
  uint32_t exp = (ax >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

}  // namespace jitx
