// The token layer of the HLO text parser: names, numbers, punctuation and quoted strings, with errors that name the
// line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitx::hlo {

/// A cursor over HLO text. Every reader skips leading whitespace; fail() throws CompileError naming the line.
class HloLexer {
 public:
  explicit HloLexer(std::string_view text) : s_(text) {}

  [[noreturn]] void fail(std::string_view msg) const;
  void skip_ws();
  /// Whether only whitespace is left.
  bool at_end();
  /// The next character after whitespace, or '\0' at the end.
  char peek();
  bool try_char(char c);
  void expect(char c);
  /// Consumes w when it is the next whole word.
  bool try_word(std::string_view w);
  void expect_word(std::string_view w);
  /// A run of name characters ([A-Za-z0-9_.-]).
  std::string name();
  /// `%name`.
  std::string percent_name();
  int64_t integer();
  /// `<open>1, 2, 3<close>` (possibly empty).
  std::vector<int64_t> int_list(char open, char close);
  /// Skips a `{...}` block, nested braces included.
  void skip_braced();
  /// A `{...}` block, nested braces included, as its text.
  std::string braced_text();
  /// An opcode word ([A-Za-z0-9-]), possibly empty.
  std::string opcode_word();
  /// A literal element token: number, true/false, inf, -inf, nan, nan(0x<bits>).
  std::string scalar_token();
  /// A `"..."` string with \n and \<c> escapes; the opening quote is next.
  std::string quoted_string();
  /// Text up to the next ',' or whitespace (an unquoted attribute value), possibly empty.
  std::string bare_token();
  /// strtod/strtof, not stod/stof: those throw on subnormals (ERANGE), which print_hlo writes.
  double to_double(const std::string& t) const;
  float to_float(const std::string& t) const;
  /// The position, to rewind() to after looking ahead.
  size_t position() const { return pos_; }
  size_t left() const { return s_.size() - pos_; }
  void rewind(size_t pos) { pos_ = pos; }

 private:
  static bool is_name_char(char c);

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace jitx::hlo
