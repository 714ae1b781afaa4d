// The token layer of the HLO text parser (see hlo_lexer.h).
#include "hlo/ir/hlo_lexer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"

namespace jitx::hlo {

void HloLexer::fail(std::string_view msg) const {
  size_t line = 1 + std::count(s_.begin(), s_.begin() + std::min(pos_, s_.size()), '\n');
  size_t bol = s_.rfind('\n', pos_ == 0 ? 0 : pos_ - 1);
  bol = bol == std::string_view::npos ? 0 : bol + 1;
  size_t eol = s_.find('\n', pos_);
  std::string_view text = s_.substr(bol, (eol == std::string_view::npos ? s_.size() : eol) - bol);
  throw CompileError(fmt::format("[hlo parser] line {}: {} (in: '{}')", line, msg, text));
}

void HloLexer::skip_ws() {
  while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
}
bool HloLexer::at_end() {
  skip_ws();
  return pos_ >= s_.size();
}
char HloLexer::peek() {
  skip_ws();
  return pos_ < s_.size() ? s_[pos_] : '\0';
}
bool HloLexer::try_char(char c) {
  if (peek() != c) return false;
  ++pos_;
  return true;
}
void HloLexer::expect(char c) {
  if (!try_char(c)) fail(fmt::format("expected '{}'", c));
}
bool HloLexer::try_word(std::string_view w) {
  skip_ws();
  if (s_.substr(pos_, w.size()) != w) return false;
  size_t end = pos_ + w.size();
  if (end < s_.size() && is_name_char(s_[end])) return false;
  pos_ = end;
  return true;
}
void HloLexer::expect_word(std::string_view w) {
  if (!try_word(w)) fail(fmt::format("expected '{}'", w));
}
bool HloLexer::is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}
std::string HloLexer::name() {
  skip_ws();
  size_t b = pos_;
  while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
  if (b == pos_) fail("expected a name");
  return std::string(s_.substr(b, pos_ - b));
}
std::string HloLexer::percent_name() {
  expect('%');
  return name();
}
int64_t HloLexer::integer() {
  skip_ws();
  size_t b = pos_;
  if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
  while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  std::string_view t = s_.substr(b, pos_ - b);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || t == "-") fail("expected an integer");
  if (ec != std::errc() || end != t.data() + t.size())
    fail(fmt::format("integer '{}' is out of range (int64)", t));  // (std::stoll threw std::out_of_range)
  return v;
}
std::vector<int64_t> HloLexer::int_list(char open, char close) {
  expect(open);
  std::vector<int64_t> v;
  if (try_char(close)) return v;
  do v.push_back(integer());
  while (try_char(','));
  expect(close);
  return v;
}
void HloLexer::skip_braced() {
  expect('{');
  int depth = 1;
  while (pos_ < s_.size() && depth > 0) {
    if (s_[pos_] == '{') ++depth;
    if (s_[pos_] == '}') --depth;
    ++pos_;
  }
  if (depth) fail("unbalanced braces");
}

std::string HloLexer::braced_text() {
  skip_ws();
  size_t b = pos_;
  skip_braced();
  return std::string(s_.substr(b, pos_ - b));
}

std::string HloLexer::opcode_word() {
  skip_ws();
  size_t b = pos_;
  while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-')) ++pos_;
  return std::string(s_.substr(b, pos_ - b));
}

std::string HloLexer::scalar_token() {
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

std::string HloLexer::quoted_string() {
  expect('"');
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

std::string HloLexer::bare_token() {
  size_t b = pos_;
  while (pos_ < s_.size() && s_[pos_] != ',' && !std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  return std::string(s_.substr(b, pos_ - b));
}

double HloLexer::to_double(const std::string& t) const {
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) fail(fmt::format("bad number '{}'", t));
  return v;
}
float HloLexer::to_float(const std::string& t) const {
  char* end = nullptr;
  float v = std::strtof(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) fail(fmt::format("bad number '{}'", t));
  return v;
}

}  // namespace jitx::hlo
