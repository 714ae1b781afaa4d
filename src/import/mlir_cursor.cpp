// The StableHLO importer's cursor and type reader.
#include "import/mlir_cursor.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "jitx/parse_error.h"

namespace jitx::import {

std::pair<int64_t, int64_t> Cursor::where() const {
  int64_t line = line_, col = col0_;
  for (size_t k = 0; k < pos_ && k < s_.size(); ++k) {
    if (s_[k] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

void Cursor::fail(std::string_view expected) const {
  auto [line, col] = where();
  std::string got = pos_ >= s_.size() ? "end of input" : "'" + std::string(s_.substr(pos_, 16)) + "'";
  for (char& ch : got)
    if (ch == '\n') ch = ' ';
  throw ParseError(fmt::format("import_stablehlo: line {}, column {}: expected {}, got {}", line, col, expected, got),
                   line, col);
}

void Cursor::skip_ws() {
  while (pos_ < s_.size()) {
    char ch = s_[pos_];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      ++pos_;
    } else if (ch == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
      while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

bool Cursor::accept(std::string_view t) {
  skip_ws();
  if (s_.substr(pos_, t.size()) != t) return false;
  // A keyword must not run on into an identifier ("dims" is not "dimsx").
  if (std::isalpha(static_cast<unsigned char>(t.back())) && pos_ + t.size() < s_.size()) {
    char n = s_[pos_ + t.size()];
    if (std::isalnum(static_cast<unsigned char>(n)) || n == '_') return false;
  }
  pos_ += t.size();
  return true;
}

void Cursor::expect(std::string_view t) {
  if (!accept(t)) fail(fmt::format("'{}'", t));
}

static bool ident_start(char ch) { return std::isalpha(static_cast<unsigned char>(ch)) || ch == '_'; }
static bool ident_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '$';
}

bool Cursor::peek_ident() { return ident_start(peek()); }

std::string Cursor::ident() {
  skip_ws();
  if (pos_ >= s_.size() || !ident_start(s_[pos_])) fail("an identifier");
  size_t b = pos_;
  while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
  return std::string(s_.substr(b, pos_ - b));
}

std::string Cursor::value_name() {
  skip_ws();
  if (pos_ >= s_.size() || s_[pos_] != '%') fail("a value (%name)");
  size_t b = ++pos_;
  while (pos_ < s_.size() && (ident_char(s_[pos_]) || s_[pos_] == '#')) ++pos_;
  if (pos_ == b) fail("a value name after '%'");
  return std::string(s_.substr(b, pos_ - b));
}

std::string Cursor::string_lit() {
  skip_ws();
  if (pos_ >= s_.size() || s_[pos_] != '"') fail("a string");
  std::string out;
  ++pos_;
  while (pos_ < s_.size() && s_[pos_] != '"') {
    if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
    out += s_[pos_++];
  }
  if (pos_ >= s_.size()) fail("a closing '\"'");
  ++pos_;
  return out;
}

std::string Cursor::symbol() {
  expect("@");
  if (peek() == '"') return string_lit();
  return ident();
}

int64_t Cursor::integer() {
  skip_ws();
  size_t b = pos_;
  if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
  while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  int64_t v = 0;
  auto text = s_.substr(b, pos_ - b);
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    pos_ = b;
    fail("an integer");
  }
  return v;
}

std::string_view Cursor::balanced() {
  skip_ws();
  size_t b = pos_;
  std::vector<char> stack;
  while (pos_ < s_.size()) {
    char ch = s_[pos_];
    if (ch == '"') {
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '"') pos_ += s_[pos_] == '\\' ? 2 : 1;
      if (pos_ >= s_.size()) break;
      if (stack.empty()) {  // a string on its own (an attribute value such as sym_name = "main")
        ++pos_;
        return s_.substr(b, pos_ - b);
      }
    } else if (ch == '(' || ch == '[' || ch == '{' || ch == '<') {
      stack.push_back(ch == '(' ? ')' : ch == '[' ? ']' : ch == '{' ? '}' : '>');
    } else if (ch == '-' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '>') {
      ++pos_;  // an arrow, not a closing '>'
    } else if (ch == ')' || ch == ']' || ch == '}' || ch == '>') {
      if (stack.empty() || stack.back() != ch) fail(stack.empty() ? "an opening bracket" : "a matching bracket");
      stack.pop_back();
      if (stack.empty()) {
        ++pos_;
        return s_.substr(b, pos_ - b);
      }
    }
    if (stack.empty()) fail("an opening bracket");
    ++pos_;
  }
  fail("a closing bracket");
}

std::string_view Cursor::until_top(std::string_view stops) {
  skip_ws();
  size_t b = pos_;
  while (pos_ < s_.size()) {
    char ch = s_[pos_];
    if (stops.find(ch) != std::string_view::npos) break;
    if (ch == '(' || ch == '[' || ch == '{' || ch == '<' || ch == '"') {
      balanced();
      continue;
    }
    if (ch == '-' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '>') ++pos_;
    ++pos_;
  }
  return s_.substr(b, pos_ - b);
}

void Cursor::skip_loc() {
  if (peek_str("loc(")) {
    pos_ += 3;
    balanced();
  }
}

DType parse_element_type(Cursor& c, std::string_view w) {
  static const std::pair<std::string_view, DType> kTypes[] = {
      {"i1", DType::bool_},      {"i8", DType::int8},       {"i16", DType::int16},     {"i32", DType::int32},
      {"i64", DType::int64},     {"ui8", DType::uint8},     {"ui16", DType::uint16},   {"ui32", DType::uint32},
      {"ui64", DType::uint64},   {"f16", DType::float16},   {"bf16", DType::bfloat16}, {"f32", DType::float32},
      {"f64", DType::float64},   {"si8", DType::int8},      {"si16", DType::int16},    {"si32", DType::int32},
      {"si64", DType::int64}};
  for (auto& [n, d] : kTypes)
    if (w == n) return d;
  if (w.starts_with("complex")) c.fail("a real element type (jitx has no complex dtypes; complex is unsupported)");
  c.fail(fmt::format("an element type jitx supports (i1, i8..i64, ui8..ui64, f16, bf16, f32, f64), not '{}'", w));
}

TensorType parse_type(Cursor& c) {
  TensorType t;
  if (c.accept("!stablehlo.token")) {
    t.is_token = true;
    return t;
  }
  if (!c.accept("tensor")) {
    std::string w = c.ident();
    if (w == "index") c.fail("a tensor type");
    t.dtype = parse_element_type(c, w);
    return t;
  }
  c.expect("<");
  int64_t elems = 1;
  // dims: `2x3x` then the element type; `?` is a dynamic dimension.
  while (true) {
    c.skip_ws();
    char ch = c.peek();
    if (ch == '?') c.fail("a static dimension (dynamic shapes are not supported by import_stablehlo)");
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    int64_t d = c.integer();
    if (!c.peek_str("x")) c.fail("'x' after a dimension");
    c.set_pos(c.pos() + 1);
    if (d < 0 || d > (int64_t{1} << 28)) c.fail("a dimension between 0 and 2^28");
    t.dims.push_back(d);
    elems = d == 0 ? 0 : elems * d;
    if (elems > (int64_t{1} << 28)) c.fail("a tensor of at most 2^28 elements");
  }
  std::string w = c.ident();
  t.dtype = parse_element_type(c, w);
  if (c.accept(",")) c.balanced();  // an encoding such as #stablehlo.bounds<...>
  c.expect(">");
  return t;
}

std::vector<TensorType> parse_type_list(Cursor& c) {
  std::vector<TensorType> out;
  if (c.accept("(")) {
    if (c.accept(")")) return out;
    do {
      out.push_back(parse_type(c));
      if (c.peek() == '{') c.balanced();  // result attributes
    } while (c.accept(","));
    c.expect(")");
    return out;
  }
  out.push_back(parse_type(c));
  return out;
}

}  // namespace jitx::import
