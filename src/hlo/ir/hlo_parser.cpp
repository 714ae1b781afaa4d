// The HLO text parser: a hand-written recursive-descent reader of print_hlo's output.
#include "hlo/ir/hlo_parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "core/errors.h"

namespace jitx::hlo {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::unique_ptr<Module> module() {
    expect_word("HloModule");
    auto m = std::make_unique<Module>(name());
    m_ = m.get();
    if (try_char(',')) {
      expect_word("entry_computation_layout");
      expect('=');
      skip_braced();  // derived from the entry computation; nothing to keep
    }
    while (true) {
      skip_ws();
      if (pos_ >= s_.size()) break;
      computation();
    }
    if (!m->entry) fail("no ENTRY computation");
    // Resolve called computations now that every computation is known.
    for (auto& [inst, names] : calls_) {
      for (auto& n : names) {
        Computation* c = m->find_computation(n);
        if (!c) fail(fmt::format("%{} calls unknown computation %{}", inst->name, n));
        inst->called.push_back(c);
      }
    }
    return m;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  Module* m_ = nullptr;
  std::vector<std::pair<Instruction*, std::vector<std::string>>> calls_;

  [[noreturn]] void fail(std::string_view msg) const {
    size_t line = 1 + std::count(s_.begin(), s_.begin() + std::min(pos_, s_.size()), '\n');
    size_t bol = s_.rfind('\n', pos_ == 0 ? 0 : pos_ - 1);
    bol = bol == std::string_view::npos ? 0 : bol + 1;
    size_t eol = s_.find('\n', pos_);
    std::string_view text = s_.substr(bol, (eol == std::string_view::npos ? s_.size() : eol) - bol);
    throw CompileError(fmt::format("[hlo parser] line {}: {} (in: '{}')", line, msg, text));
  }

  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool try_char(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!try_char(c)) fail(fmt::format("expected '{}'", c));
  }
  bool try_word(std::string_view w) {
    skip_ws();
    if (s_.substr(pos_, w.size()) != w) return false;
    size_t end = pos_ + w.size();
    if (end < s_.size() && is_name_char(s_[end])) return false;
    pos_ = end;
    return true;
  }
  void expect_word(std::string_view w) {
    if (!try_word(w)) fail(fmt::format("expected '{}'", w));
  }
  static bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  }
  std::string name() {
    skip_ws();
    size_t b = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    if (b == pos_) fail("expected a name");
    return std::string(s_.substr(b, pos_ - b));
  }
  std::string percent_name() {
    expect('%');
    return name();
  }
  int64_t integer() {
    skip_ws();
    size_t b = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (b == pos_) fail("expected an integer");
    return std::stoll(std::string(s_.substr(b, pos_ - b)));
  }
  std::vector<int64_t> int_list(char open, char close) {
    expect(open);
    std::vector<int64_t> v;
    if (try_char(close)) return v;
    do v.push_back(integer());
    while (try_char(','));
    expect(close);
    return v;
  }
  void skip_braced() {
    expect('{');
    int depth = 1;
    while (pos_ < s_.size() && depth > 0) {
      if (s_[pos_] == '{') ++depth;
      if (s_[pos_] == '}') --depth;
      ++pos_;
    }
    if (depth) fail("unbalanced braces");
  }

  DType dtype() {
    std::string n = name();
    for (int d = 0; d < kNumDTypes; ++d)
      if (hlo_dtype_name(static_cast<DType>(d)) == n) return static_cast<DType>(d);
    fail(fmt::format("unknown element type '{}'", n));
  }

  Shape shape(bool with_layout) {
    if (try_char('(')) {
      std::vector<Shape> elems;
      if (!try_char(')')) {
        do elems.push_back(shape(with_layout));
        while (try_char(','));
        expect(')');
      }
      return Shape::tuple(std::move(elems));
    }
    DType d = dtype();
    Shape s(d, int_list('[', ']'));
    if (with_layout && peek() == '{') {
      s.layout = int_list('{', '}');
      std::vector<int64_t> row_major;
      for (int64_t i = s.rank() - 1; i >= 0; --i) row_major.push_back(i);
      if (s.layout == row_major) s.layout.clear();  // the default prints the same way
      else if (static_cast<int64_t>(s.layout.size()) != s.rank()) fail("layout size does not match the rank");
    }
    return s;
  }

  // A literal element token: number, true/false, inf, -inf, nan, nan(0x<bits>).
  std::string scalar_token() {
    skip_ws();
    size_t b = pos_;
    while (pos_ < s_.size() && !std::strchr(",{}) \t\r\n", s_[pos_])) {
      if (s_[pos_] == '(') {  // nan(0x...)
        size_t e = s_.find(')', pos_);
        if (e == std::string_view::npos) fail("unterminated nan(...)");
        pos_ = e;
      }
      ++pos_;
    }
    if (b == pos_) fail("expected a constant value");
    return std::string(s_.substr(b, pos_ - b));
  }

  // strtod/strtof, not stod/stof: those throw on subnormals (ERANGE), which print_hlo writes.
  double to_double(const std::string& t) const {
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size()) fail(fmt::format("bad number '{}'", t));
    return v;
  }
  float to_float(const std::string& t) const {
    char* end = nullptr;
    float v = std::strtof(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size()) fail(fmt::format("bad number '{}'", t));
    return v;
  }

  void set_element(detail::Literal& l, int64_t i, const std::string& t) {
    DType d = l.dtype;
    size_t es = dtype_size(d);
    char* dst = static_cast<char*>(l.data()) + i * es;
    try {
      if (d == DType::bool_) {
        if (t != "true" && t != "false") fail(fmt::format("expected true or false, got '{}'", t));
        l.set_i64(i, t == "true");
      } else if (is_unsigned_integer(d)) {
        l.set_u64(i, std::stoull(t));
      } else if (is_integer(d)) {
        l.set_i64(i, std::stoll(t));
      } else if (t.rfind("nan", 0) == 0) {
        uint64_t bits = t == "nan" ? canonical_nan_bits(d) : std::stoull(t.substr(4, t.size() - 5), nullptr, 16);
        std::memcpy(dst, &bits, es);  // little-endian hosts
      } else if (d == DType::float64) {
        l.set_f64(i, to_double(t));
      } else {
        l.set_f64(i, static_cast<double>(to_float(t)));  // the printed float is exact in f32, f16 and bf16
      }
    } catch (const std::logic_error&) {
      fail(fmt::format("bad {} constant value '{}'", hlo_dtype_name(d), t));
    }
  }

  detail::Literal literal(const Shape& s) {
    if (s.is_tuple) fail("tuple constants are not supported");
    auto lit = detail::Literal::make(s.dtype, s.dims);
    int64_t n = 0, total = lit.size();
    auto rec = [&](auto& self) -> void {
      if (try_char('{')) {
        if (try_char('}')) return;
        do self(self);
        while (try_char(','));
        expect('}');
        return;
      }
      std::string t = scalar_token();
      if (n >= total) fail(fmt::format("constant has more than {} values", total));
      set_element(lit, n++, t);
    };
    if (peek() == ')' && total == 0) return lit;
    rec(rec);
    if (n != total) fail(fmt::format("constant has {} values, its shape {} needs {}", n, s.str(), total));
    return lit;
  }

  detail::ParamValue attr_value() {
    char c = peek();
    if (c == '{') return int_list('{', '}');
    if (c == '"') {
      ++pos_;
      std::string v;
      while (pos_ < s_.size() && s_[pos_] != '"') {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) {
          ++pos_;
          v += s_[pos_] == 'n' ? '\n' : s_[pos_];
        } else {
          v += s_[pos_];
        }
        ++pos_;
      }
      if (pos_ >= s_.size()) fail("unterminated string");
      ++pos_;
      return v;
    }
    size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && !std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    std::string t(s_.substr(b, pos_ - b));
    if (t.empty()) fail("expected an attribute value");
    if (t == "true" || t == "false") return t == "true";
    for (int d = 0; d < kNumDTypes; ++d)
      if (hlo_dtype_name(static_cast<DType>(d)) == t) return static_cast<DType>(d);
    if (t == "inf" || t == "nan" || t == "-inf" || t == "-nan") return to_double(t);
    if (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-') {
      try {
        if (t.find_first_of(".en") != std::string::npos) return to_double(t);
        size_t used = 0;
        int64_t v = std::stoll(t, &used);
        if (used == t.size()) return v;
      } catch (const std::logic_error&) {
      }
      fail(fmt::format("bad number '{}'", t));
    }
    return t;
  }

  void computation() {
    bool is_entry = try_word("ENTRY");
    std::string cname = percent_name();
    if (m_->find_computation(cname)) fail(fmt::format("duplicate computation %{}", cname));
    auto comp = std::make_unique<Computation>();
    comp->name = cname;
    comp->parent = m_;
    m_->reserve_name(cname);
    // The signature repeats what the parameter instructions say; it is read and checked for form only.
    expect('(');
    if (!try_char(')')) {
      do {
        name();
        expect(':');
        shape(false);
      } while (try_char(','));
      expect(')');
    }
    expect('-');
    expect('>');
    shape(false);
    expect('{');
    std::unordered_map<std::string, Instruction*> by_name;
    while (!try_char('}')) {
      bool is_root = try_word("ROOT");
      auto inst = std::make_unique<Instruction>();
      inst->name = percent_name();
      if (by_name.count(inst->name)) fail(fmt::format("duplicate instruction %{}", inst->name));
      expect('=');
      inst->shape = shape(true);
      skip_ws();
      size_t b = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-')) ++pos_;
      std::string op(s_.substr(b, pos_ - b));
      try {
        inst->opcode = opcode_from_name(op);
      } catch (const CompileError&) {
        fail(fmt::format("unknown opcode '{}'", op));
      }
      expect('(');
      if (inst->opcode == Opcode::kParameter) {
        inst->parameter_number = integer();
      } else if (inst->opcode == Opcode::kConstant) {
        inst->literal = std::make_shared<detail::Literal>(literal(inst->shape));
      } else if (peek() != ')') {
        do {
          std::string on = percent_name();
          auto it = by_name.find(on);
          if (it == by_name.end()) fail(fmt::format("operand %{} is not defined before its use", on));
          inst->operands.push_back(it->second);
        } while (try_char(','));
      }
      expect(')');
      std::vector<std::string> called;
      while (try_char(',')) {
        std::string key = name();
        expect('=');
        if (key == "calls") {
          called.push_back(percent_name());
          while (true) {  // calls=%a, %b: a comma followed by '%' continues the list
            size_t save = pos_;
            if (try_char(',') && peek() == '%') {
              called.push_back(percent_name());
              continue;
            }
            pos_ = save;
            break;
          }
          continue;
        }
        if (inst->attrs.has(key)) fail(fmt::format("attribute {} given twice", key));
        inst->attrs.set(key, attr_value());
      }
      inst->parent = comp.get();
      m_->reserve_name(inst->name);
      Instruction* raw = inst.get();
      by_name[raw->name] = raw;
      if (!called.empty()) calls_.emplace_back(raw, std::move(called));
      if (raw->opcode == Opcode::kParameter) comp->parameters.push_back(raw);
      if (is_root) {
        if (comp->root) fail(fmt::format("computation %{} has two ROOT instructions", cname));
        comp->root = raw;
      }
      comp->instructions.push_back(std::move(inst));
    }
    if (!comp->root) fail(fmt::format("computation %{} has no ROOT instruction", cname));
    std::stable_sort(comp->parameters.begin(), comp->parameters.end(),
                     [](auto* a, auto* b) { return a->parameter_number < b->parameter_number; });
    if (is_entry) {
      if (m_->entry) fail("two ENTRY computations");
      m_->entry = comp.get();
    }
    m_->computations.push_back(std::move(comp));
  }
};

}  // namespace

std::unique_ptr<Module> parse_hlo(std::string_view text) { return Parser(text).module(); }

}  // namespace jitx::hlo
