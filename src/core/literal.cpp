// Literal element access and dtype conversion.
#include "core/literal.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/errors.h"

namespace jitx::detail {

int64_t num_elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

Literal Literal::make(DType dtype, std::vector<int64_t> dims) {
  Literal l;
  l.dtype = dtype;
  l.dims = std::move(dims);
  l.storage = Storage::allocate(l.nbytes());
  return l;
}

int64_t Literal::size() const { return num_elements(dims); }

namespace {
/// double -> float rounded to odd: a float that then rounds to f16/bf16 (RNE) gives the same result as
/// rounding the double directly; a plain (RNE) double -> float step would round twice.
float to_float_round_odd(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || std::isinf(f) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);  // truncate toward zero
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

/// a as a double rounded to odd: exact below 2^53, else truncated with the last bit set when bits were dropped, so
/// that a later rounding to a narrower type (through to_float_round_odd) rounds a once.
double u64_to_double_round_odd(uint64_t a) {
  int drop = 11 - std::countl_zero(a);  // bits below the 53 a keeps
  if (drop <= 0) return static_cast<double>(a);
  uint64_t q = a >> drop;
  if (a & ((uint64_t{1} << drop) - 1)) q |= 1;
  return std::ldexp(static_cast<double>(q), drop);
}

template <class T>
T load(const void* p, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void store(void* p, int64_t i, T v) {
  std::memcpy(static_cast<char*>(p) + i * sizeof(T), &v, sizeof(T));
}

/// Stores the integer -a (neg) or a in the float dtype dd, rounded once (as NumPy and ml_dtypes convert): a
/// 64-bit integer through double would round twice (2^62 + 2^38 + 1 to f32: 2^62 instead of 2^62 + 2^39).
void store_int_as_float(void* p, DType dd, int64_t i, uint64_t a, bool neg) {
  switch (dd) {
    case DType::float32: store<float>(p, i, neg ? -static_cast<float>(a) : static_cast<float>(a)); return;
    case DType::float64: store<double>(p, i, neg ? -static_cast<double>(a) : static_cast<double>(a)); return;
    default: {
      double v = u64_to_double_round_odd(a);
      float f = to_float_round_odd(neg ? -v : v);
      store<uint16_t>(p, i, dd == DType::float16 ? float_to_half(f) : float_to_bfloat16(f));
    }
  }
}
void store_int_as_float(void* p, DType dd, int64_t i, int64_t v) {
  store_int_as_float(p, dd, i, v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), v < 0);
}

double load_f64(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::bool_: return load<uint8_t>(p, i) ? 1.0 : 0.0;
    case DType::int8: return load<int8_t>(p, i);
    case DType::int16: return load<int16_t>(p, i);
    case DType::int32: return load<int32_t>(p, i);
    case DType::int64: return static_cast<double>(load<int64_t>(p, i));
    case DType::uint8: return load<uint8_t>(p, i);
    case DType::uint16: return load<uint16_t>(p, i);
    case DType::uint32: return load<uint32_t>(p, i);
    case DType::uint64: return static_cast<double>(load<uint64_t>(p, i));
    case DType::float16: return half_to_float(load<uint16_t>(p, i));
    case DType::bfloat16: return bfloat16_to_float(load<uint16_t>(p, i));
    case DType::float32: return load<float>(p, i);
    case DType::float64: return load<double>(p, i);
  }
  return 0;
}
int64_t load_i64(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::bool_: return load<uint8_t>(p, i) != 0;
    case DType::int8: return load<int8_t>(p, i);
    case DType::int16: return load<int16_t>(p, i);
    case DType::int32: return load<int32_t>(p, i);
    case DType::int64: return load<int64_t>(p, i);
    case DType::uint8: return load<uint8_t>(p, i);
    case DType::uint16: return load<uint16_t>(p, i);
    case DType::uint32: return load<uint32_t>(p, i);
    case DType::uint64: return static_cast<int64_t>(load<uint64_t>(p, i));
    default: {
      // float -> int: saturating, NaN -> 0 (XLA's convert semantics).
      double v = load_f64(p, d, i);
      if (std::isnan(v)) return 0;
      if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
      if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(v);
    }
  }
}
}  // namespace

double Literal::get_f64(int64_t i) const { return load_f64(data(), dtype, i); }
int64_t Literal::get_i64(int64_t i) const { return load_i64(data(), dtype, i); }
uint64_t Literal::get_u64(int64_t i) const {
  if (dtype == DType::uint64) return load<uint64_t>(data(), i);
  if (is_floating(dtype)) {
    double v = get_f64(i);
    if (std::isnan(v) || v <= 0) return 0;
    if (v >= 1.8446744073709552e19) return std::numeric_limits<uint64_t>::max();
    return static_cast<uint64_t>(v);
  }
  return static_cast<uint64_t>(get_i64(i));
}

void Literal::set_f64(int64_t i, double v) {
  void* p = data();
  switch (dtype) {
    case DType::float16: store<uint16_t>(p, i, float_to_half(to_float_round_odd(v))); return;
    case DType::bfloat16: store<uint16_t>(p, i, float_to_bfloat16(to_float_round_odd(v))); return;
    case DType::float32: store<float>(p, i, static_cast<float>(v)); return;
    case DType::float64: store<double>(p, i, v); return;
    case DType::bool_: store<uint8_t>(p, i, v != 0); return;
    default: break;
  }
  // float -> integer: saturate to the target's range, NaN -> 0.
  if (std::isnan(v)) { set_i64(i, 0); return; }
  if (is_unsigned_integer(dtype)) {
    double hi = std::ldexp(1.0, dtype_bits(dtype)) - 1;
    set_u64(i, v <= 0 ? 0 : v >= hi ? static_cast<uint64_t>(hi) : static_cast<uint64_t>(v));
  } else {
    double hi = std::ldexp(1.0, dtype_bits(dtype) - 1);
    if (v >= hi)
      set_i64(i, static_cast<int64_t>(hi - 1 > 9.2e18 ? std::numeric_limits<int64_t>::max()
                                                      : static_cast<int64_t>(hi) - 1));
    else if (v <= -hi)
      set_i64(i, dtype_bits(dtype) == 64 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(hi));
    else set_i64(i, static_cast<int64_t>(v));
  }
}

void Literal::set_i64(int64_t i, int64_t v) {
  void* p = data();
  switch (dtype) {
    case DType::bool_: store<uint8_t>(p, i, v != 0); return;
    case DType::int8: store<int8_t>(p, i, static_cast<int8_t>(v)); return;
    case DType::int16: store<int16_t>(p, i, static_cast<int16_t>(v)); return;
    case DType::int32: store<int32_t>(p, i, static_cast<int32_t>(v)); return;
    case DType::int64: store<int64_t>(p, i, v); return;
    case DType::uint8: store<uint8_t>(p, i, static_cast<uint8_t>(v)); return;
    case DType::uint16: store<uint16_t>(p, i, static_cast<uint16_t>(v)); return;
    case DType::uint32: store<uint32_t>(p, i, static_cast<uint32_t>(v)); return;
    case DType::uint64: store<uint64_t>(p, i, static_cast<uint64_t>(v)); return;
    default: store_int_as_float(p, dtype, i, v); return;
  }
}

void Literal::set_u64(int64_t i, uint64_t v) {
  if (is_floating(dtype)) store_int_as_float(data(), dtype, i, v, false);
  else set_i64(i, static_cast<int64_t>(v));
}

void Literal::convert(const void* src, DType sd, void* dst, DType dd, size_t n) {
  if (sd == dd) {
    if (n) std::memcpy(dst, src, n * dtype_size(sd));  // an empty array's data may be null (UB even for 0 bytes)
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t ii = static_cast<int64_t>(i);
    if (dd == DType::bool_) {
      bool nz = is_floating(sd) ? load_f64(src, sd, ii) != 0 : load_i64(src, sd, ii) != 0;
      store<uint8_t>(dst, ii, nz);
    } else if (!is_floating(sd) && is_floating(dd)) {
      if (sd == DType::uint64) store_int_as_float(dst, dd, ii, load<uint64_t>(src, ii), false);
      else store_int_as_float(dst, dd, ii, load_i64(src, sd, ii));
    } else if (is_floating(dd)) {
      double v = load_f64(src, sd, ii);
      switch (dd) {
        case DType::float16: store<uint16_t>(dst, ii, float_to_half(to_float_round_odd(v))); break;
        case DType::bfloat16: store<uint16_t>(dst, ii, float_to_bfloat16(to_float_round_odd(v))); break;
        case DType::float32: store<float>(dst, ii, static_cast<float>(v)); break;
        default: store<double>(dst, ii, v); break;
      }
    } else {
      // Integer destination: saturate from floats, wrap from integers.
      int64_t bits = dtype_bits(dd);
      uint64_t u;
      if (is_floating(sd)) {
        double v = load_f64(src, sd, ii);
        if (std::isnan(v)) u = 0;
        else if (is_unsigned_integer(dd)) {
          double hi = std::ldexp(1.0, static_cast<int>(bits)) - 1;
          u = v <= 0 ? 0 : v >= hi ? (bits == 64 ? ~0ULL : (1ULL << bits) - 1) : static_cast<uint64_t>(v);
        } else {
          double hi = std::ldexp(1.0, static_cast<int>(bits) - 1);
          int64_t s = v >= hi ? (bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1)
                      : v <= -hi ? (bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1)))
                                 : static_cast<int64_t>(v);
          u = static_cast<uint64_t>(s);
        }
      } else if (sd == DType::uint64) {
        u = load<uint64_t>(src, ii);
      } else {
        u = static_cast<uint64_t>(load_i64(src, sd, ii));
      }
      switch (bits) {
        case 8: store<uint8_t>(dst, ii, static_cast<uint8_t>(u)); break;
        case 16: store<uint16_t>(dst, ii, static_cast<uint16_t>(u)); break;
        case 32: store<uint32_t>(dst, ii, static_cast<uint32_t>(u)); break;
        default: store<uint64_t>(dst, ii, u); break;
      }
    }
  }
}

std::string Literal::values_str(int64_t max_elems) const { return array_text(*this, max_elems, 6, 1); }

}  // namespace jitx::detail
