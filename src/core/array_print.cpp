// Array text as JAX's repr prints it: NumPy's array2string (numpy/_core/arrayprint.py) with separator ", ",
// linewidth 75 and the "Array(" prefix. Floats print the fewest digits that identify the value in its own dtype
// (at most 8 after the point), padded to a common width, in scientific notation when the finite nonzero magnitudes
// span over a factor of 1000, fall below 1e-4 or reach 10^min(8, the dtype's decimal precision); integers are
// right-aligned; more than `threshold` elements are summarised with "..." (3 edge items per axis). bfloat16 is not
// a NumPy float: ml_dtypes prints each element as "%.6g", unaligned.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/array_print.h"

namespace jitx::detail {
namespace {

/// v in dtype d, for the round-trip test of the 16-bit floats.
double in_dtype(double v, DType d) {
  Literal l = Literal::make(d, {});
  l.set_f64(0, v);
  return l.get_f64(0);
}

/// The shortest text of v (positional or scientific) that reads back as v in dtype d.
std::string shortest(double v, DType d, bool scientific) {
  char buf[64];
  auto fmt = scientific ? std::chars_format::scientific : std::chars_format::fixed;
  if (d == DType::float64) return std::string(buf, std::to_chars(buf, buf + sizeof buf, v, fmt).ptr);
  if (d == DType::float32)
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), fmt).ptr);
  for (int p = 0; p < 17; ++p) {  // float16: the first precision that reads back as the same half
    auto r = std::to_chars(buf, buf + sizeof buf, v, fmt, p);
    std::string s(buf, r.ptr);
    if (in_dtype(std::strtod(s.c_str(), nullptr), d) == v) return s;
  }
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v, fmt).ptr);
}

/// dragon4 in "unique" mode with precision 8 (NumPy's maxprec): the shortest digits, cut to 8 after the point
/// (correctly rounded) when the shortest need more; trailing zeros trimmed. Split into sign+integer part,
/// fraction digits and (scientific) the exponent's text without 'e'.
struct Parts {
  std::string int_part, frac, exp;
};
Parts unique_parts(double v, DType d, bool scientific) {
  std::string s = shortest(v, d, scientific);
  std::string exp;
  if (scientific) {
    auto e = s.find('e');
    exp = s.substr(e + 1);
    s = s.substr(0, e);
  }
  auto dot = s.find('.');
  Parts p{s.substr(0, dot), dot == std::string::npos ? "" : s.substr(dot + 1), exp};
  if (p.frac.size() > 8) {
    char buf[64];
    auto fmt = scientific ? std::chars_format::scientific : std::chars_format::fixed;
    std::string r(buf, std::to_chars(buf, buf + sizeof buf, v, fmt, 8).ptr);
    if (scientific) {
      auto e = r.find('e');
      p.exp = r.substr(e + 1);
      r = r.substr(0, e);
    }
    dot = r.find('.');
    p.int_part = r.substr(0, dot);
    p.frac = r.substr(dot + 1);
    while (!p.frac.empty() && p.frac.back() == '0') p.frac.pop_back();
  }
  if (scientific) {  // NumPy's exponent: a sign and at least two digits
    char sign = p.exp[0] == '-' ? '-' : '+';
    std::string digits = p.exp.substr(p.exp[0] == '-' || p.exp[0] == '+' ? 1 : 0);
    while (digits.size() < 2) digits = "0" + digits;
    p.exp = std::string(1, sign) + digits;
  }
  return p;
}

std::string pad_to(const std::string& s, size_t width, bool left) {
  if (s.size() >= width) return s;
  return left ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

using ElementFn = std::function<std::string(int64_t)>;

/// NumPy's FloatingFormat (floatmode "maxprec", precision 8, sign '-') over the values it will print.
ElementFn float_format(const Literal& lit, const std::vector<int64_t>& shown) {
  DType d = lit.dtype;
  std::vector<double> finite;
  bool neg_inf = false, any_nonfinite = false;
  for (int64_t i : shown) {
    double v = lit.get_f64(i);
    if (std::isfinite(v)) finite.push_back(v);
    else any_nonfinite = true, neg_inf = neg_inf || (std::isinf(v) && v < 0);
  }
  double decimal_precision = d == DType::float16 ? 3 : d == DType::float32 ? 6 : 15;
  double cutoff = std::pow(10.0, std::min(8.0, decimal_precision));
  bool sci = false;
  double lo = INFINITY, hi = 0;
  for (double v : finite)
    if (v != 0) lo = std::min(lo, std::fabs(v)), hi = std::max(hi, std::fabs(v));
  if (hi > 0) sci = hi >= cutoff || lo < 1e-4 || hi / lo > 1000.0;
  size_t pad_left = 0, pad_right = 0, frac_digits = 0, exp_size = 0;
  for (double v : finite) {
    Parts p = unique_parts(v, d, sci);
    pad_left = std::max(pad_left, p.int_part.size());
    frac_digits = std::max(frac_digits, p.frac.size());
    exp_size = std::max(exp_size, p.exp.size() - 1);
  }
  pad_right = sci ? exp_size + 2 + frac_digits : frac_digits;
  if (any_nonfinite)
    pad_left = std::max({pad_left, size_t(3) > pad_right + 1 ? 3 - (pad_right + 1) : 0,
                         3 + (neg_inf ? 1 : 0) > pad_right + 1 ? 3 + (neg_inf ? 1 : 0) - (pad_right + 1) : 0});
  return [=, &lit](int64_t i) {
    double v = lit.get_f64(i);
    if (!std::isfinite(v)) {
      std::string s = std::isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
      return pad_to(s, pad_left + pad_right + 1, true);
    }
    Parts p = unique_parts(v, d, sci);
    if (sci) {  // every mantissa with the widest one's digits (zeros appended), exponents padded alike
      std::string frac = p.frac + std::string(frac_digits - p.frac.size(), '0');
      std::string exp = p.exp.substr(0, 1) + std::string(exp_size + 1 - p.exp.size(), '0') + p.exp.substr(1);
      return pad_to(p.int_part, pad_left, true) + "." + frac + "e" + exp;
    }
    return pad_to(p.int_part, pad_left, true) + "." + pad_to(p.frac, pad_right, false);
  };
}

ElementFn element_format(const Literal& lit, const std::vector<int64_t>& shown) {
  if (lit.dtype == DType::bool_) {
    bool zero_d = lit.dims.empty();
    return [&lit, zero_d](int64_t i) { return lit.get_i64(i) ? (zero_d ? "True" : " True") : "False"; };
  }
  if (lit.dtype == DType::bfloat16)
    return [&lit](int64_t i) {
      double v = lit.get_f64(i);
      if (std::isnan(v)) return std::string("nan");
      if (std::isinf(v)) return std::string(v < 0 ? "-inf" : "inf");
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", v);
      return std::string(buf);
    };
  if (is_floating(lit.dtype)) return float_format(lit, shown);
  auto text = [&lit](int64_t i) {
    return lit.dtype == DType::uint64 ? std::to_string(lit.get_u64(i)) : std::to_string(lit.get_i64(i));
  };
  size_t width = 0;
  for (int64_t i : shown) width = std::max(width, text(i).size());
  return [=](int64_t i) { return pad_to(text(i), width, true); };
}

/// NumPy's _extendLine: a word appended to the line, wrapping first when it would pass the width.
void extend_line(std::string& s, std::string& line, const std::string& word, size_t width,
                 const std::string& next_prefix) {
  if (line.size() + word.size() > width && line.size() > next_prefix.size()) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
    line = next_prefix;
  }
  line += word;
}

}  // namespace

std::string scalar_text(const Literal& lit) {
  if (lit.dtype == DType::bool_) return lit.get_i64(0) ? "True" : "False";
  if (!is_floating(lit.dtype))
    return lit.dtype == DType::uint64 ? std::to_string(lit.get_u64(0)) : std::to_string(lit.get_i64(0));
  double v = lit.get_f64(0);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (lit.dtype == DType::bfloat16) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
  }
  double a = std::fabs(v);
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    std::string s = shortest(v, lit.dtype, false);
    return s.find('.') == std::string::npos ? s + ".0" : s;
  }
  std::string s = shortest(v, lit.dtype, true);  // "1e+20", "1.5e-05": two exponent digits at least
  auto e = s.find('e');
  std::string mant = s.substr(0, e), exp = s.substr(e + 1);
  char sign = exp[0] == '-' ? '-' : '+';
  std::string digits = exp.substr(exp[0] == '-' || exp[0] == '+' ? 1 : 0);
  while (digits.size() < 2) digits = "0" + digits;
  return mant + "e" + sign + digits;
}

std::string array_text(const Literal& lit, int64_t threshold, size_t prefix_len, size_t suffix_len) {
  const auto& dims = lit.dims;
  int64_t n = lit.size();
  const int64_t edge = 3;
  bool summarise = n > threshold;
  auto strides = row_major_strides(dims);
  // The positions printed (the edge items of every axis when summarising): what the widths are computed over.
  std::vector<int64_t> shown;
  std::function<void(size_t, int64_t)> collect = [&](size_t axis, int64_t base) {
    if (axis == dims.size()) return shown.push_back(base);
    for (int64_t i = 0; i < dims[axis]; ++i) {
      if (summarise && dims[axis] > 2 * edge && i == edge) i = dims[axis] - edge;
      collect(axis + 1, base + i * strides[axis]);
    }
  };
  collect(0, 0);
  ElementFn elem = element_format(lit, shown);
  if (dims.empty()) return elem(0);
  const std::string sep = ", ";
  size_t line_width = 75 - suffix_len;
  // NumPy's _formatArray: rows wrap at the line width, higher axes separate their blocks with blank lines.
  std::function<std::string(size_t, int64_t, const std::string&, size_t)> rec =
      [&](size_t axis, int64_t base, const std::string& hanging, size_t width) -> std::string {
    if (axis == dims.size()) return elem(base);
    std::string next_hanging = hanging + " ";
    size_t next_width = width - 1;
    int64_t len = dims[axis];
    bool cut = summarise && 2 * edge < len;
    std::vector<int64_t> items;
    for (int64_t i = 0; i < len; ++i) {
      if (cut && i == edge) {
        items.push_back(-1);  // "..."
        i = len - edge;
      }
      items.push_back(i);
    }
    std::string s;
    if (axis + 1 == dims.size()) {
      size_t elem_width = width - 1;  // room for "," or "]"
      std::string line = hanging;
      for (size_t k = 0; k < items.size(); ++k) {
        std::string word = items[k] < 0 ? "..." : rec(axis + 1, base + items[k] * strides[axis], next_hanging,
                                                      next_width);
        extend_line(s, line, word, elem_width, hanging);
        if (k + 1 < items.size()) line += sep;
      }
      s += line;
    } else {
      std::string line_sep = "," + std::string(dims.size() - axis - 1, '\n');
      for (size_t k = 0; k < items.size(); ++k) {
        s += hanging + (items[k] < 0 ? "..." : rec(axis + 1, base + items[k] * strides[axis], next_hanging,
                                                    next_width));
        if (k + 1 < items.size()) s += line_sep;
      }
    }
    return "[" + s.substr(hanging.size()) + "]";
  };
  return rec(0, 0, std::string(prefix_len + 1, ' '), line_width);
}

}  // namespace jitx::detail
