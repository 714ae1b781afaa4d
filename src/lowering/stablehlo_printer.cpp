// Printing an hlo::Module as StableHLO MLIR text, in the pretty forms `jax.jit(f).lower(...).as_text()` uses
// (JAX 0.10), with the generic form only where StableHLO has no pretty form (reduce_window).
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <unordered_map>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "lowering/lower.h"

namespace jitx::detail {
namespace {
using hlo::Instruction;
using hlo::Opcode;

std::string i64_array(const std::vector<int64_t>& v) {
  if (v.empty()) return "array<i64>";
  return fmt::format("array<i64: {}>", fmt::join(v, ", "));
}
/// `[1, 2]`, the dims list of the pretty forms.
std::string dims_list(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::string scalar_type(DType d) { return fmt::format("tensor<{}>", dtype_mlir_name(d)); }

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

/// A gather's or scatter's dimension numbers as MLIR prints them: `key = [1, 2]` for the non-empty lists, then
/// index_vector_dim.
std::string dimension_numbers(std::initializer_list<std::pair<std::string_view, const std::vector<int64_t>*>> lists,
                              int64_t index_vector_dim) {
  std::vector<std::string> dn;
  for (auto& [key, v] : lists)
    if (!v->empty()) dn.push_back(fmt::format("{} = [{}]", key, fmt::join(*v, ", ")));
  dn.push_back(fmt::format("index_vector_dim = {}", index_vector_dim));
  return fmt::format("{}", fmt::join(dn, ", "));
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

/// The comparator of an ascending sort on the first num_keys operands, as JAX writes it: lexicographic `lt`,
/// floats compared in TOTALORDER after mapping -0.0 to 0.0 and every NaN to one positive NaN (so NaNs sort last).
std::string sort_region(const std::vector<DType>& types, int64_t num_keys, const std::string& ind) {
  std::string s = "({\n";
  std::vector<std::string> args;
  for (size_t k = 0; k < types.size(); ++k) {
    args.push_back(fmt::format("%lhs{}: {}", k, scalar_type(types[k])));
    args.push_back(fmt::format("%rhs{}: {}", k, scalar_type(types[k])));
  }
  s += fmt::format("{}  ^bb0({}):\n", ind, fmt::join(args, ", "));
  auto line = [&](const std::string& text) { s += ind + "    " + text + "\n"; };
  auto cmp = [&](const std::string& name, const std::string& dir, const std::string& x, const std::string& y,
                 const std::string& ct, const std::string& t) {
    line(fmt::format("%{} = \"stablehlo.compare\"(%{}, %{}) {{comparison_direction = #stablehlo<comparison_direction "
                     "{}>, compare_type = #stablehlo<comparison_type {}>}} : ({}, {}) -> tensor<i1>",
                     name, x, y, dir, ct, t, t));
  };
  auto sel = [&](const std::string& name, const std::string& p, const std::string& x, const std::string& y,
                 const std::string& t) {
    line(fmt::format("%{} = \"stablehlo.select\"(%{}, %{}, %{}) : (tensor<i1>, {}, {}) -> {}", name, p, x, y, t, t, t));
  };
  for (int64_t k = 0; k < num_keys; ++k) {
    DType d = types[k];
    std::string t = scalar_type(d), ct = compare_type(d), lk = fmt::format("lhs{}", k), rk = fmt::format("rhs{}", k);
    if (is_floating(d)) {
      ct = "TOTALORDER";
      line(fmt::format("%zero{} = \"stablehlo.constant\"() {{value = dense<0.000000e+00> : {}}} : () -> {}", k, t, t));
      line(fmt::format("%nan{} = \"stablehlo.constant\"() {{value = dense<{}> : {}}} : () -> {}", k, nan_elem(d), t, t));
      for (std::string side : {"lhs", "rhs"}) {
        std::string v = fmt::format("{}{}", side, k);
        cmp(v + "_z", "EQ", v, fmt::format("zero{}", k), "FLOAT", t);
        sel(v + "_nz", v + "_z", fmt::format("zero{}", k), v, t);
        cmp(v + "_n", "NE", v, v, "FLOAT", t);
        sel(v + "_key", v + "_n", fmt::format("nan{}", k), v + "_nz", t);
      }
      lk += "_key";
      rk += "_key";
    }
    cmp(fmt::format("lt{}", k), "LT", lk, rk, ct, t);
    if (k + 1 < num_keys) cmp(fmt::format("eq{}", k), "EQ", lk, rk, ct, t);
  }
  // p = lt[n-1]; p = lt[k] | (eq[k] & p) for k = n-2 .. 0
  std::string p = fmt::format("lt{}", num_keys - 1);
  for (int64_t k = num_keys - 2; k >= 0; --k) {
    line(fmt::format("%tie{} = \"stablehlo.and\"(%eq{}, %{}) : (tensor<i1>, tensor<i1>) -> tensor<i1>", k, k, p));
    line(fmt::format("%p{} = \"stablehlo.or\"(%lt{}, %tie{}) : (tensor<i1>, tensor<i1>) -> tensor<i1>", k, k, k));
    p = fmt::format("p{}", k);
  }
  line(fmt::format("\"stablehlo.return\"(%{}) : (tensor<i1>) -> ()", p));
  s += ind + "})";
  return s;
}

/// "[b, 0, 1, f]" style labels of a convolution operand: first/second are the labels of spec[0] and spec[1].
std::string conv_labels(const std::vector<int64_t>& spec, const char* first, const char* second) {
  std::vector<std::string> l(spec.size());
  l[spec[0]] = first;
  l[spec[1]] = second;
  for (size_t k = 2; k < spec.size(); ++k) l[spec[k]] = std::to_string(k - 2);
  return fmt::format("[{}]", fmt::join(l, ", "));
}

class Printer {
 public:
  explicit Printer(const hlo::Module& m) : m_(m) {}

  std::string print() {
    std::string out = fmt::format("module {} attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{\n",
                                  symbol_name(m_.name));
    const hlo::Computation& c = *m_.entry;
    const Instruction* root = c.root;
    std::vector<const Instruction*> results;
    if (root->opcode == Opcode::kTuple) results.assign(root->operands.begin(), root->operands.end());
    else results.push_back(root);
    std::vector<std::string> rtypes, rdecls;
    for (size_t k = 0; k < results.size(); ++k) {
      rtypes.push_back(results[k]->shape.mlir());
      // JAX names each result by its pytree path; jitx's entry is a flat list of results.
      std::string info = results.size() == 1 ? "result" : fmt::format("result[{}]", k);
      rdecls.push_back(fmt::format("{} {{jax.result_info = \"{}\"}}", rtypes.back(), info));
    }
    // MLIR numbers the values of nested regions after all of the function body's: a first pass counts those.
    std::string body;
    print_body(c, body);
    region_value_base_ = next_;
    region_conflict_base_ = next_conflict_;
    body_names_ = used_;
    reset();
    body.clear();
    print_body(c, body);

    std::vector<std::string> params;
    for (auto* p : c.parameters) params.push_back(fmt::format("{}: {}", name(p), p->shape.mlir()));
    out += fmt::format("  func.func public @main({}) -> ({}) {{\n", fmt::join(params, ", "), fmt::join(rdecls, ", "));
    out += body;
    std::vector<std::string> rnames;
    for (auto* r : results) rnames.push_back(names_.at(r));
    out += fmt::format("    return {} : {}\n", fmt::join(rnames, ", "), fmt::join(rtypes, ", "));
    out += "  }\n}\n";
    return out;
  }

 private:
  void reset() {
    names_.clear();
    used_.clear();
    next_ = 0;
    next_conflict_ = 0;
  }
  void print_body(const hlo::Computation& c, std::string& out) {
    num_args_ = 0;
    for (auto* p : c.parameters) {
      names_[p] = fmt::format("%arg{}", p->parameter_number);
      num_args_ = std::max<int64_t>(num_args_, p->parameter_number + 1);
    }
    for (auto& up : c.instructions) {
      if (up.get() == c.root && c.root->opcode == Opcode::kTuple) continue;
      print_inst(out, *up);
    }
  }
  std::string fresh() { return fmt::format("%{}", next_++); }
  /// A named value (`%cst`, `%c_0`...), uniqued as MLIR's printer does: one conflict counter for all names.
  std::string fresh_named(const std::string& base) {
    std::string n = base;
    while (used_.count(n)) n = fmt::format("{}_{}", base, next_conflict_++);
    used_.insert(n);
    return "%" + n;
  }
  const std::string& name(const Instruction* i) { return names_.at(i); }
  std::string operand_list(const Instruction& i) {
    std::vector<std::string> v;
    for (auto* o : i.operands) v.push_back(name(o));
    return fmt::format("{}", fmt::join(v, ", "));
  }
  std::string operand_types(const Instruction& i) {
    std::vector<std::string> v;
    for (auto* o : i.operands) v.push_back(o->shape.mlir());
    return fmt::format("{}", fmt::join(v, ", "));
  }
  std::string result_types(const Instruction& i) {
    if (!i.shape.is_tuple) return i.shape.mlir();
    std::vector<std::string> v;
    for (auto& t : i.shape.tuple_shapes) v.push_back(t.mlir());
    return fmt::format("({})", fmt::join(v, ", "));
  }
  /// `(operand types) -> result type`.
  std::string functional_type(const Instruction& i) {
    return fmt::format("({}) -> {}", operand_types(i), result_types(i));
  }
  /// The type of an op printed with custom<SameOperandsAndResultType>: one type when all agree.
  std::string same_or_functional_type(const Instruction& i) {
    bool same = !i.shape.is_tuple;
    for (auto* o : i.operands) same = same && o->shape.mlir() == i.shape.mlir();
    return same ? i.shape.mlir() : functional_type(i);
  }
  /// Whether i is an op with several results (a one-element tuple is a single result in MLIR).
  static bool multi_result(const Instruction& i) { return i.shape.is_tuple && i.shape.tuple_shapes.size() != 1; }
  /// The result type list: `T`, or `(T1, T2)` for several results.
  static std::string results_type(const Instruction& i) {
    if (!i.shape.is_tuple) return i.shape.mlir();
    std::vector<std::string> v;
    for (auto& t : i.shape.tuple_shapes) v.push_back(t.mlir());
    return v.size() == 1 ? v[0] : fmt::format("({})", fmt::join(v, ", "));
  }
  /// Names the result(s) of i: `%n`, or `%n:k` for a k-result op (used as `%n#j`).
  std::string define(const Instruction& i) {
    std::string n = fresh();
    names_[&i] = n;
    return multi_result(i) ? fmt::format("{}:{}", n, i.shape.tuple_shapes.size()) : n;
  }
  /// `%n = op <rest>` in the pretty form.
  void pretty(std::string& out, const Instruction& i, std::string_view op, const std::string& rest) {
    std::string lhs = define(i);
    out += fmt::format("    {} = {}{}{}\n", lhs, op, rest.starts_with("(") ? "" : " ", rest);
  }
  /// `%n = "op"(operands) <{properties}> (region) : (types) -> result` (the generic form, always valid MLIR).
  void generic(std::string& out, const Instruction& i, std::string_view op, const std::string& attrs,
               const std::string& region = "") {
    std::string lhs = define(i);
    out += fmt::format("    {} = \"{}\"({}){}{} : {}\n", lhs, op, operand_list(i), attrs.empty() ? "" : " <{" + attrs + "}>",
                       region.empty() ? "" : " " + region, functional_type(i));
  }

  // --- regions, numbered as MLIR numbers a nested region: values after the body's, arguments after main's ---
  struct RegionNames {
    int64_t value, arg, conflict;
    std::set<std::string> used;  // the names of the enclosing body are visible, so taken
    std::string v() { return fmt::format("%{}", value++); }
    std::string a() { return fmt::format("%arg{}", arg++); }
    /// A named value such as a constant (`%cst_3`).
    std::string named(const std::string& base) {
      std::string n = base;
      while (used.count(n)) n = fmt::format("{}_{}", base, conflict++);
      used.insert(n);
      return "%" + n;
    }
  };
  /// Each region of each op starts from the same counters: those at the end of the function body.
  RegionNames region_names() const { return RegionNames{region_value_base_, num_args_, region_conflict_base_, body_names_}; }

  /// `({ ^bb0(...): <one binary op> stablehlo.return })` for reduce_window.
  std::string binary_region(hlo::Reducer r, DType d) {
    RegionNames n = region_names();
    std::string t = scalar_type(d), a = n.a(), b = n.a(), v = n.v();
    std::string s = "({\n";
    s += fmt::format("    ^bb0({}: {}, {}: {}):\n", a, t, b, t);
    s += fmt::format("      {} = {} {}, {} : {}\n", v, reducer_op(r), a, b, t);
    s += fmt::format("      stablehlo.return {} : {}\n", v, t);
    return s + "    })";
  }

  /// The update region of a scatter: "replace" returns the update, the other kinds combine with one binary op.
  std::string scatter_region(hlo::Reducer r, DType d) {
    if (r != hlo::Reducer::kReplace) return binary_region(r, d);
    RegionNames n = region_names();
    std::string t = scalar_type(d), a = n.a(), b = n.a();
    return fmt::format("({{\n    ^bb0({}: {}, {}: {}):\n      stablehlo.return {} : {}\n    }})", a, t, b, t, b, t);
  }

  // --- control-flow regions (while, case, if): MLIR numbers a region's own values first, from the counters
  // at the end of its parent's, and its nested regions after them; sibling regions restart from the same counters.
  struct Counters {
    std::set<std::string> used;
    int64_t next, next_conflict, num_args;
  };
  struct Bases {
    int64_t value, conflict;
    std::set<std::string> names;
  };
  Counters counters() const { return Counters{used_, next_, next_conflict_, num_args_}; }
  void set_counters(const Counters& c) {
    used_ = c.used;
    next_ = c.next;
    next_conflict_ = c.next_conflict;
    num_args_ = c.num_args;
  }
  Bases bases() const { return Bases{region_value_base_, region_conflict_base_, body_names_}; }
  void set_bases(const Bases& b) {
    region_value_base_ = b.value;
    region_conflict_base_ = b.conflict;
    body_names_ = b.names;
  }

  static std::string indent(const std::string& text) {
    std::string out;
    size_t at = 0;
    while (at < text.size()) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size() - 1;
      out += "  " + text.substr(at, nl - at + 1);
      at = nl + 1;
    }
    return out;
  }

  /// The body of region `rc` (its instructions and `stablehlo.return`), indented one level deeper than the op.
  /// Parameters are named from `param_names`, or `%iterArg...` when it is empty; *arg_names gets the names used.
  std::string print_region(const hlo::Computation& rc, const std::vector<std::string>& param_names,
                           std::vector<std::string>* arg_names = nullptr) {
    Counters saved = counters();
    Bases saved_bases = bases();
    Counters start{saved_bases.names, saved_bases.value, saved_bases.conflict, saved.num_args};
    auto run = [&] {
      set_counters(start);
      std::vector<std::string> args;
      for (size_t k = 0; k < rc.parameters.size(); ++k) {
        std::string n = param_names.empty() ? fresh_named("iterArg") : param_names.at(k);
        names_[rc.parameters[k]] = n;
        args.push_back(n);
      }
      if (arg_names) *arg_names = args;
      std::string body;
      for (auto& up : rc.instructions) {
        if (up.get() == rc.root && rc.root->opcode == Opcode::kTuple) continue;
        print_inst(body, *up);
      }
      std::vector<const Instruction*> rets;
      if (rc.root->opcode == Opcode::kTuple) rets.assign(rc.root->operands.begin(), rc.root->operands.end());
      else rets.push_back(rc.root);
      std::vector<std::string> rn, rt;
      for (auto* r : rets) {
        rn.push_back(name(r));
        rt.push_back(r->shape.mlir());
      }
      body += rets.empty() ? "    stablehlo.return\n"
                           : fmt::format("    stablehlo.return {} : {}\n", fmt::join(rn, ", "), fmt::join(rt, ", "));
      return body;
    };
    run();  // numbers this region's own values; its nested regions start after them
    Counters end = counters();
    set_bases(Bases{end.next, end.next_conflict, end.used});
    std::string text = run();
    set_counters(saved);
    set_bases(saved_bases);
    return indent(text);
  }

  void print_while(std::string& out, const Instruction& i) {
    std::string lhs = define(i);
    std::vector<std::string> args;
    std::string cond = print_region(*i.called.at(0), {}, &args);
    std::string body = print_region(*i.called.at(1), {});
    std::vector<std::string> inits, types;
    for (size_t k = 0; k < i.operands.size(); ++k) {
      inits.push_back(fmt::format("{} = {}", args.at(k), name(i.operand(k))));
      types.push_back(i.operand(k)->shape.mlir());
    }
    out += fmt::format("    {} = stablehlo.while({}) : {}\n", lhs, fmt::join(inits, ", "), fmt::join(types, ", "));
    out += "    cond {\n" + cond + "    } do {\n" + body + "    }\n";
  }

  /// `stablehlo.case` on an s32 index; `stablehlo.if` on a pred (true branch first, as XLA orders them). The
  /// branch computations' parameters are the conditional's operands, which regions read from the enclosing scope.
  void print_conditional(std::string& out, const Instruction& i) {
    std::vector<std::string> operands;
    for (size_t k = 1; k < i.operands.size(); ++k) operands.push_back(name(i.operand(k)));
    std::string lhs = define(i);
    bool is_if = i.operand(0)->shape.dtype == DType::bool_;
    std::vector<std::string> regions;
    for (auto* c : i.called) regions.push_back("{\n" + print_region(*c, operands) + "    }");
    out += fmt::format("    {} = \"stablehlo.{}\"({}) ({}) : ({}) -> {}\n", lhs, is_if ? "if" : "case",
                       name(i.operand(0)), fmt::join(regions, ", "), i.operand(0)->shape.mlir(), results_type(i));
  }

  void print_reduce(std::string& out, const Instruction& i) {
    hlo::Reducer r = hlo::reducer_of(i);
    std::string dims = dims_list(hlo::dimensions_of(i));
    size_t n = i.operands.size() / 2;
    if (r != hlo::Reducer::kArgmax && r != hlo::Reducer::kArgmin) {
      JITX_ASSERT(n == 1, "a {} reduce has one operand", hlo::reducer_name(r));
      return pretty(out, i, "stablehlo.reduce",
                    fmt::format("({} init: {}) applies {} across dimensions = {} : {}", name(i.operand(0)),
                                name(i.operand(1)), reducer_op(r), dims, functional_type(i)));
    }
    // (values, indices): the body picks the larger (smaller) value, NaN above all, ties to the lower index.
    JITX_ASSERT(n == 2, "an arg-reduction reduces (values, indices)");
    DType vd = i.operand(0)->shape.dtype, kd = i.operand(1)->shape.dtype;
    std::string tv = scalar_type(vd), tk = scalar_type(kd), pred = "tensor<i1>";
    std::string lhs = define(i);
    out += fmt::format("    {} = stablehlo.reduce({} init: {}), ({} init: {}) across dimensions = {} : {}\n", lhs,
                       name(i.operand(0)), name(i.operand(2)), name(i.operand(1)), name(i.operand(3)), dims,
                       functional_type(i));
    RegionNames rn = region_names();
    std::string av = rn.a(), ai = rn.a(), bv = rn.a(), bi = rn.a();
    out += fmt::format("     reducer({}: {}, {}: {}) ({}: {}, {}: {})  {{\n", av, tv, bv, tv, ai, tk, bi, tk);
    auto cmp = [&](std::string dir, const std::string& x, const std::string& y, DType d) {
      std::string v = rn.v(), t = scalar_type(d);
      out += fmt::format("      {} = stablehlo.compare {}, {}, {}, {} : ({}, {}) -> {}\n", v, dir, x, y, compare_type(d), t,
                         t, pred);
      return v;
    };
    auto logic = [&](std::string_view op, const std::string& x, const std::string& y) {
      std::string v = rn.v();
      out += fmt::format("      {} = stablehlo.{} {}, {} : {}\n", v, op, x, y, pred);
      return v;
    };
    std::string better = cmp(r == hlo::Reducer::kArgmax ? "GT" : "LT", av, bv, vd);
    std::string eq = cmp("EQ", av, bv, vd);
    if (is_floating(vd)) {
      // better' = (better or a is NaN) and b is not NaN; eq' = eq or both are NaN.
      std::string anan = cmp("NE", av, av, vd), bnan = cmp("NE", bv, bv, vd);
      std::string nb = rn.v();
      out += fmt::format("      {} = stablehlo.not {} : {}\n", nb, bnan, pred);
      better = logic("and", logic("or", better, anan), nb);
      eq = logic("or", eq, logic("and", anan, bnan));
    }
    std::string first = cmp("LT", ai, bi, kd);
    std::string pick = logic("or", better, logic("and", eq, first));
    std::string sv = rn.v(), si = rn.v();
    out += fmt::format("      {} = stablehlo.select {}, {}, {} : {}, {}\n", sv, pick, av, bv, pred, tv);
    out += fmt::format("      {} = stablehlo.select {}, {}, {} : {}, {}\n", si, pick, ai, bi, pred, tk);
    out += fmt::format("      stablehlo.return {}, {} : {}, {}\n", sv, si, tv, tk);
    out += "    }\n";
  }

  void print_inst(std::string& out, const Instruction& i) {
    auto op = hlo::opcode_mlir_name(i.opcode);
    switch (i.opcode) {
      case Opcode::kParameter: return;
      case Opcode::kConstant: {
        std::string n = fresh_named(is_floating(i.shape.dtype) ? "cst" : "c");
        names_[&i] = n;
        out += fmt::format("    {} = stablehlo.constant {} : {}\n", n, dense_literal(*i.literal), i.shape.mlir());
        return;
      }
      case Opcode::kGetTupleElement:
        if (i.operand(0)->opcode != Opcode::kTuple && !multi_result(*i.operand(0))) {
          names_[&i] = name(i.operand(0));  // the single result of a one-element tuple op
          return;
        }
        if (i.operand(0)->opcode != Opcode::kTuple) {
          names_[&i] = fmt::format("{}#{}", name(i.operand(0)), hlo::tuple_index_of(i));
          return;
        }
        names_[&i] = name(i.operand(0)->operand(hlo::tuple_index_of(i)));
        return;
      case Opcode::kCompare: {
        auto c = hlo::Comparison::of(i);
        return pretty(out, i, op,
                      fmt::format("{}, {}, {}, {} : {}", hlo::comparison_direction_name(c.direction),
                                  name(i.operand(0)), name(i.operand(1)), hlo::comparison_type_name(c.type),
                                  functional_type(i)));
      }
      case Opcode::kSelect: {
        // custom<SelectOpType>: `pred type, result type` when both cases have the result's type.
        bool same = i.operand(1)->shape.mlir() == i.shape.mlir() && i.operand(2)->shape.mlir() == i.shape.mlir();
        return pretty(out, i, op,
                      fmt::format("{} : {}", operand_list(i),
                                  same ? fmt::format("{}, {}", i.operand(0)->shape.mlir(), i.shape.mlir())
                                       : functional_type(i)));
      }
      case Opcode::kBroadcastInDim:
        return pretty(out, i, op,
                      fmt::format("{}, dims = {} : {}", operand_list(i), dims_list(hlo::broadcast_dimensions_of(i)),
                                  functional_type(i)));
      case Opcode::kReshape:
      case Opcode::kConvert:
      case Opcode::kBitcastConvert:
        return pretty(out, i, op, fmt::format("{} : {}", operand_list(i), functional_type(i)));
      case Opcode::kTranspose:
        return pretty(out, i, op,
                      fmt::format("{}, dims = {} : {}", operand_list(i), dims_list(hlo::permutation_of(i)),
                                  functional_type(i)));
      case Opcode::kReverse:
        return pretty(out, i, op,
                      fmt::format("{}, dims = {} : {}", operand_list(i), dims_list(hlo::dimensions_of(i)),
                                  same_or_functional_type(i)));
      case Opcode::kIota:
        return pretty(out, i, op, fmt::format("dim = {} : {}", hlo::iota_dimension_of(i), i.shape.mlir()));
      case Opcode::kConcatenate:
        return pretty(out, i, op,
                      fmt::format("{}, dim = {} : {}", operand_list(i), hlo::concatenate_dimension_of(i), functional_type(i)));
      case Opcode::kSlice: {
        auto slice = hlo::SliceConfig::of(i);
        const auto &start = slice.start_indices, &limit = slice.limit_indices, &strides = slice.strides;
        std::vector<std::string> ranges;
        for (size_t k = 0; k < start.size(); ++k)
          ranges.push_back(strides[k] == 1 ? fmt::format("{}:{}", start[k], limit[k])
                                           : fmt::format("{}:{}:{}", start[k], limit[k], strides[k]));
        return pretty(out, i, op,
                      fmt::format("{} [{}] : {}", operand_list(i), fmt::join(ranges, ", "), functional_type(i)));
      }
      case Opcode::kDynamicSlice:
        return pretty(out, i, op,
                      fmt::format("{}, sizes = {} : {}", operand_list(i), dims_list(i.shape.dims),
                                  functional_type(i)));
      case Opcode::kDynamicUpdateSlice:
        return pretty(out, i, op, fmt::format("{} : {}", operand_list(i), functional_type(i)));
      case Opcode::kPad: {
        auto p = hlo::PaddingConfig::of(i);
        return pretty(out, i, op,
                      fmt::format("{}, low = {}, high = {}, interior = {} : {}", operand_list(i), dims_list(p.low),
                                  dims_list(p.high), dims_list(p.interior), functional_type(i)));
      }
      case Opcode::kDot: {
        auto dn = hlo::DotDimensionNumbers::of(i);
        const auto &lb = dn.lhs_batch_dims, &rb = dn.rhs_batch_dims;
        std::string batch = lb.empty() ? "" : fmt::format("batching_dims = {} x {}, ", dims_list(lb), dims_list(rb));
        return pretty(out, i, op,
                      fmt::format("{}, {}contracting_dims = {} x {}, precision = [DEFAULT, DEFAULT] : {}", operand_list(i),
                                  batch, dims_list(dn.lhs_contracting_dims), dims_list(dn.rhs_contracting_dims),
                                  functional_type(i)));
      }
      case Opcode::kReduce: return print_reduce(out, i);
      case Opcode::kReduceWindow: {
        auto w = hlo::Window::of(i);
        std::vector<std::string> pairs;
        for (auto& p : w.padding) pairs.push_back(fmt::format("[{}, {}]", p.low, p.high));
        // Properties in MLIR's (alphabetical) order, as JAX prints them.
        std::string attrs = fmt::format(
            "base_dilations = {}, padding = dense<{}> : tensor<{}x2xi64>, window_dilations = {}, window_dimensions = {}, "
            "window_strides = {}",
            i64_array(w.base_dilations), pairs.empty() ? "" : fmt::format("[{}]", fmt::join(pairs, ", ")),
            pairs.size(), i64_array(w.window_dilations), i64_array(w.dimensions), i64_array(w.strides));
        return generic(out, i, op, attrs, binary_region(hlo::reducer_of(i), i.operand(0)->shape.dtype));
      }
      case Opcode::kGather: {
        auto g = hlo::GatherDimensionNumbers::of(i);
        std::string dn = dimension_numbers({{"offset_dims", &g.offset_dims},
                                            {"collapsed_slice_dims", &g.collapsed_slice_dims},
                                            {"operand_batching_dims", &g.operand_batching_dims},
                                            {"start_indices_batching_dims", &g.start_indices_batching_dims},
                                            {"start_index_map", &g.start_index_map}},
                                           g.index_vector_dim);
        return generic(out, i, op,
                       fmt::format("dimension_numbers = #stablehlo.gather<{}>, indices_are_sorted = {}, slice_sizes = {}",
                                   dn, g.indices_are_sorted ? "true" : "false", i64_array(g.slice_sizes)));
      }
      case Opcode::kScatter: {
        auto s = hlo::ScatterDimensionNumbers::of(i);
        std::string dn = dimension_numbers({{"update_window_dims", &s.update_window_dims},
                                            {"inserted_window_dims", &s.inserted_window_dims},
                                            {"input_batching_dims", &s.input_batching_dims},
                                            {"scatter_indices_batching_dims", &s.scatter_indices_batching_dims},
                                            {"scatter_dims_to_operand_dims", &s.scatter_dims_to_operand_dims}},
                                           s.index_vector_dim);
        return generic(out, i, op,
                       fmt::format("indices_are_sorted = {}, scatter_dimension_numbers = #stablehlo.scatter<{}>, "
                                   "unique_indices = {}",
                                   s.indices_are_sorted ? "true" : "false", dn, s.unique_indices ? "true" : "false"),
                       scatter_region(hlo::reducer_of(i), i.operand(0)->shape.dtype));
      }
      case Opcode::kSort: {
        std::vector<DType> types;
        for (auto* o : i.operands) types.push_back(o->shape.dtype);
        auto cfg = hlo::SortConfig::of(i);
        return generic(out, i, op,
                       fmt::format("dimension = {} : i64, is_stable = {}", cfg.dimension, cfg.is_stable ? "true" : "false"),
                       sort_region(types, cfg.num_keys, "    "));
      }
      case Opcode::kTopK: return generic(out, i, op, fmt::format("k = {} : i64", hlo::top_k_of(i)));
      case Opcode::kConvolution: {
        auto c = hlo::ConvConfig::of(i);
        std::string attrs = fmt::format(
            "batch_group_count = {} : i64, dimension_numbers = #stablehlo.conv<{}x{}->{}>, feature_group_count = {} : i64",
            c.batch_group_count, conv_labels(c.dnums.lhs_spec(), "b", "f"), conv_labels(c.dnums.rhs_spec(), "o", "i"),
            conv_labels(c.dnums.out_spec(), "b", "f"), c.feature_group_count);
        if (c.window.rank() > 0) {  // no spatial axes: the window attributes are left out (their defaults)
          std::vector<std::string> pairs;
          for (auto& p : c.window.padding) pairs.push_back(fmt::format("[{}, {}]", p.low, p.high));
          attrs += fmt::format(", lhs_dilation = {}, padding = dense<[{}]> : tensor<{}x2xi64>, rhs_dilation = {}, "
                               "window_strides = {}",
                               i64_array(c.window.base_dilations), fmt::join(pairs, ", "), pairs.size(),
                               i64_array(c.window.window_dilations), i64_array(c.window.strides));
        }
        return generic(out, i, op, attrs);
      }
      case Opcode::kWhile: return print_while(out, i);
      case Opcode::kConditional: return print_conditional(out, i);
      case Opcode::kTuple:
        throw_error<CompileError>("stablehlo", "tuples are only supported as the entry's result");
      default:
        break;
    }
    if (op.empty() || op == "stablehlo.custom_call" || op == "func.call" || op == "stablehlo.while" ||
        op == "stablehlo.case")
      throw_error<CompileError>("stablehlo", "printing {} as StableHLO is not supported yet", hlo::opcode_name(i.opcode));
    if (hlo::is_elementwise(i.opcode)) {
      // chlo ops print `%x : T -> R`; stablehlo ones one type when operands and result agree, else (..) -> R.
      if (op.starts_with("chlo."))
        return pretty(out, i, op, fmt::format("{} : {} -> {}", operand_list(i), operand_types(i), result_types(i)));
      return pretty(out, i, op, fmt::format("{} : {}", operand_list(i), same_or_functional_type(i)));
    }
    // Anything else without a pretty form here.
    generic(out, i, op, "");
  }

  const hlo::Module& m_;
  std::unordered_map<const Instruction*, std::string> names_;
  std::set<std::string> used_;
  int64_t next_ = 0, next_conflict_ = 0;
  int64_t num_args_ = 0;
  int64_t region_value_base_ = 0, region_conflict_base_ = 0;
  std::set<std::string> body_names_;
};
}  // namespace

std::string print_stablehlo(const hlo::Module& m) { return Printer(m).print(); }

}  // namespace jitx::detail
