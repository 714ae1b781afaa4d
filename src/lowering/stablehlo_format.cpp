// StableHLO text formatting without printer state (see stablehlo_format.h).
#include "lowering/stablehlo_format.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "core/errors.h"

namespace jitx::detail {
using hlo::Instruction;

std::string i64_array(const std::vector<int64_t>& v) {
  if (v.empty()) return "array<i64>";
  return fmt::format("array<i64: {}>", fmt::join(v, ", "));
}
/// `[1, 2]`, the dims list of the pretty forms.
std::string dims_list(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::string scalar_type(DType d) { return fmt::format("tensor<{}>", dtype_mlir_name(d)); }

namespace {
/// Rounds v to the dtype's precision (the value a parser of a decimal literal would produce).
double round_to(double v, DType d) {
  switch (d) {
    case DType::float16: return half_to_float(float_to_half(static_cast<float>(v)));
    case DType::bfloat16: return bfloat16_to_float(float_to_bfloat16(static_cast<float>(v)));
    case DType::float32: return static_cast<double>(static_cast<float>(v));
    default: return v;
  }
}

int mantissa_bits(DType d) {
  return d == DType::float16 ? 11 : d == DType::bfloat16 ? 8 : d == DType::float32 ? 24 : 53;
}

/// llvm::APFloat::toString for a finite value of dtype d, ported faithfully (MLIR prints floats with it):
/// the exact decimal significand is first cut to about FormatPrecision digits by truncation, then rounded
/// half-up to FormatPrecision digits, then written in scientific or plain notation.
std::string apfloat_to_string(double v, DType d, unsigned precision, unsigned max_padding, bool truncate_zero) {
  std::string str = std::signbit(v) ? "-" : "";
  v = std::fabs(v);
  int p = mantissa_bits(d);
  if (!precision) precision = 2 + p * 59 / 196;
  if (v == 0) {
    if (max_padding) return str + "0";
    if (truncate_zero) return str + "0.0E+0";
    return str + "0.0" + std::string(precision > 1 ? precision - 1 : 0, '0') + "e+00";
  }
  // v = m * 2^e with m odd.
  int fexp;
  double frac = std::frexp(v, &fexp);
  auto m = static_cast<uint64_t>(std::ldexp(frac, 53));
  int e = fexp - 53;
  while (!(m & 1)) {
    m >>= 1;
    ++e;
  }
  // The decimal digits of N, where v = N * 10^exp exactly (N = m * 2^e or m * 5^-e), and N's bit length.
  std::string digits;
  int exp = 0;
  long double bits;
  if (e >= 0) {
    digits = fmt::format("{:.0f}", v);
    bits = std::floor(std::log2(static_cast<long double>(m))) + 1 + e;
  } else {
    std::string fixed = fmt::format("{:.{}f}", v, -e);
    digits = fixed.substr(fixed.find('.') + 1);
    if (fixed[0] != '0') digits = fixed.substr(0, fixed.find('.')) + digits;
    digits.erase(0, digits.find_first_not_of('0'));
    exp = e;
    bits = std::floor(std::log2(static_cast<long double>(m)) + (-e) * std::log2(5.0L)) + 1;
  }
  // AdjustToPrecision(APInt): divide by a power of ten (truncating) when N has more bits than needed.
  long double bits_required = (precision * 196 + 58) / 59;
  if (bits > bits_required) {
    auto tens = static_cast<int>((static_cast<int64_t>(bits - bits_required) * 59) / 196);
    if (tens > 0) {
      digits = tens >= static_cast<int>(digits.size()) ? "0" : digits.substr(0, digits.size() - tens);
      exp += tens;
    }
  }
  // Drop trailing zeros.
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    ++exp;
  }
  // AdjustToPrecision(buffer): round half up to `precision` digits.
  if (digits.size() > precision) {
    size_t n = digits.size();
    if (digits[precision] < '5') {
      digits.resize(precision);
      exp += static_cast<int>(n - precision);
      while (digits.size() > 1 && digits.back() == '0') {
        digits.pop_back();
        ++exp;
      }
    } else {
      digits.resize(precision);
      exp += static_cast<int>(n - precision);
      while (!digits.empty() && digits.back() == '9') {
        digits.pop_back();
        ++exp;
      }
      if (digits.empty()) digits = "1";
      else digits.back() = static_cast<char>(digits.back() + 1);
    }
  }
  auto nd = static_cast<int>(digits.size());
  bool sci;
  if (!max_padding) sci = true;
  else if (exp >= 0) sci = exp > static_cast<int>(max_padding) || nd + exp > static_cast<int>(precision);
  else {
    int msd = exp + nd - 1;
    sci = msd < 0 && -msd > static_cast<int>(max_padding);
  }
  if (sci) {
    exp += nd - 1;
    str += digits.substr(0, 1) + ".";
    if (nd == 1 && truncate_zero) str += "0";
    else str += digits.substr(1);
    if (!truncate_zero && static_cast<int>(precision) > nd - 1) str += std::string(precision - nd + 1, '0');
    str += truncate_zero ? 'E' : 'e';
    if (exp < 0) str += '-';
    else if (!truncate_zero) str += '+';
    std::string ex = std::to_string(std::abs(exp));
    if (!truncate_zero && ex.size() < 2) ex = "0" + ex;
    return str + ex;
  }
  if (exp >= 0) return str + digits + std::string(exp, '0');
  int whole = exp + nd;
  if (whole > 0) return str + digits.substr(0, whole) + "." + digits.substr(whole);
  return str + "0." + std::string(-whole, '0') + digits;
}

/// A finite float as MLIR's printFloatValue writes it: "%e" with 6 digits when that reads back exactly, else
/// APFloat's default form when it has a '.'; "" when MLIR would write the bit pattern instead.
std::string mlir_float(double v, DType d) {
  std::string s = apfloat_to_string(v, d, 6, 0, false);
  double back = round_to(std::strtod(s.c_str(), nullptr), d);
  if (back == v && std::signbit(back) == std::signbit(v)) return s;
  s = apfloat_to_string(v, d, 0, 3, true);
  return s.find('.') != std::string::npos ? s : "";
}

/// One element of a dense literal, in a form MLIR's parser reads back exactly.
std::string dense_elem(const Literal& l, int64_t i) {
  DType d = l.dtype;
  if (d == DType::bool_) return l.get_i64(i) ? "true" : "false";
  if (is_floating(d)) {
    double v = l.get_f64(i);
    if (std::isfinite(v)) {
      if (std::string s = mlir_float(v, d); !s.empty()) return s;
    }
    // Non-finite floats (and integral values too long for "%e") are written as their bit patterns, payload and
    // sign kept, as MLIR prints them.
    const char* p = static_cast<const char*>(l.data()) + i * static_cast<int64_t>(dtype_size(d));
    switch (dtype_size(d)) {
      case 2: { uint16_t b; std::memcpy(&b, p, 2); return fmt::format("0x{:04X}", b); }
      case 4: { uint32_t b; std::memcpy(&b, p, 4); return fmt::format("0x{:08X}", b); }
      default: { uint64_t b; std::memcpy(&b, p, 8); return fmt::format("0x{:016X}", b); }
    }
  }
  if (d == DType::uint64) return std::to_string(l.get_u64(i));
  return std::to_string(l.get_i64(i));
}
}  // namespace

std::string dense_literal(const Literal& l) {
  int64_t n = l.size();
  if (n == 0) return "dense<>";
  bool splat = true;
  for (int64_t i = 1; i < n && splat; ++i) splat = dense_elem(l, i) == dense_elem(l, 0);
  if (splat) return fmt::format("dense<{}>", dense_elem(l, 0));
  std::string s;
  auto strides = row_major_strides(l.dims);
  std::function<void(size_t, int64_t)> rec = [&](size_t axis, int64_t base) {
    s += "[";
    for (int64_t i = 0; i < l.dims[axis]; ++i) {
      if (i) s += ", ";
      if (axis + 1 == l.dims.size()) s += dense_elem(l, base + i);
      else rec(axis + 1, base + i * strides[axis]);
    }
    s += "]";
  };
  rec(0, 0);
  return fmt::format("dense<{}>", s);
}

std::string_view reducer_op(hlo::Reducer r) {
  switch (r) {
    case hlo::Reducer::kAdd: return "stablehlo.add";
    case hlo::Reducer::kMul: return "stablehlo.multiply";
    case hlo::Reducer::kMax: return "stablehlo.maximum";
    case hlo::Reducer::kMin: return "stablehlo.minimum";
    case hlo::Reducer::kAnd: return "stablehlo.and";
    case hlo::Reducer::kOr: return "stablehlo.or";
    default: break;
  }
  JITX_ASSERT(false, "no StableHLO op for reducer {}", hlo::reducer_name(r));
  return "";
}

std::string compare_type(DType d) {
  return is_floating(d) ? "FLOAT" : is_signed_integer(d) ? "SIGNED" : "UNSIGNED";
}

/// A module name as JAX makes it (characters outside [A-Za-z0-9_.-] become '_') and MLIR prints it (bare when
/// an identifier, quoted otherwise).
std::string symbol_name(const std::string& name) {
  std::string n;
  for (char c : name) n += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ? c : '_';
  bool bare = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_');
  for (char c : n) bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.');
  return bare ? "@" + n : "@\"" + n + "\"";
}

/// A float NaN as an MLIR dense element (its bit pattern).
std::string nan_elem(DType d) {
  switch (d) {
    case DType::float16: return "0x7E00";
    case DType::bfloat16: return "0x7FC0";
    case DType::float32: return "0x7FC00000";
    default: return "0x7FF8000000000000";
  }
}

std::string operand_types(const hlo::Instruction& i) {
  std::vector<std::string> v;
  for (auto* o : i.operands) v.push_back(o->shape.mlir());
  return fmt::format("{}", fmt::join(v, ", "));
}
std::string result_types(const hlo::Instruction& i) {
  if (!i.shape.is_tuple) return i.shape.mlir();
  std::vector<std::string> v;
  for (auto& t : i.shape.tuple_shapes) v.push_back(t.mlir());
  return fmt::format("({})", fmt::join(v, ", "));
}
/// `(operand types) -> result type`.
std::string functional_type(const hlo::Instruction& i) {
  return fmt::format("({}) -> {}", operand_types(i), result_types(i));
}
/// The type of an op printed with custom<SameOperandsAndResultType>: one type when all agree.
std::string same_or_functional_type(const hlo::Instruction& i) {
  bool same = !i.shape.is_tuple;
  for (auto* o : i.operands) same = same && o->shape.mlir() == i.shape.mlir();
  return same ? i.shape.mlir() : functional_type(i);
}
/// Whether i is an op with several results (a one-element tuple is a single result in MLIR).
bool multi_result(const hlo::Instruction& i) { return i.shape.is_tuple && i.shape.tuple_shapes.size() != 1; }
/// The result type list: `T`, or `(T1, T2)` for several results.
std::string results_type(const hlo::Instruction& i) {
  if (!i.shape.is_tuple) return i.shape.mlir();
  std::vector<std::string> v;
  for (auto& t : i.shape.tuple_shapes) v.push_back(t.mlir());
  return v.size() == 1 ? v[0] : fmt::format("({})", fmt::join(v, ", "));
}

}  // namespace jitx::detail
