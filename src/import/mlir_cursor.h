// A character cursor over MLIR text for the StableHLO importer: whitespace and `//` comments skipped, `loc(...)`
// skipped, balanced groups read raw, and every failure a ParseError naming the line, column and what was expected.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jitx/dtype.h"

namespace jitx::import {

class Cursor {
 public:
  explicit Cursor(std::string_view text, int64_t line = 1, int64_t col = 1) : s_(text), line_(line), col0_(col) {}
  [[noreturn]] void fail(std::string_view expected) const;
  void skip_ws();
  bool eof() { skip_ws(); return pos_ >= s_.size(); }
  char peek() { skip_ws(); return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool peek_str(std::string_view t) { skip_ws(); return s_.substr(pos_, t.size()) == t; }
  bool accept(std::string_view t);
  void expect(std::string_view t);
  /// A bare identifier ([A-Za-z_][A-Za-z0-9_.$-]*), or fail.
  std::string ident();
  bool peek_ident();
  /// `%name`, `%0`, `%x#1` (without the `%`).
  std::string value_name();
  /// `@name` or `@"name"` (without the `@`).
  std::string symbol();
  std::string string_lit();
  int64_t integer();
  /// The raw text of a balanced group starting at the current open bracket (included), e.g. "<{...}>".
  std::string_view balanced();
  /// Skips a `loc(...)` if one follows.
  void skip_loc();
  /// Raw text up to (not including) the first top-level `stop` char (outside brackets and strings).
  std::string_view until_top(std::string_view stops);
  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  std::string_view rest() const { return s_.substr(pos_); }
  /// Line and column of the current position (for sub-cursors).
  std::pair<int64_t, int64_t> where() const;

 private:
  std::string_view s_;
  size_t pos_ = 0;
  int64_t line_, col0_;
};

/// An MLIR tensor type: element dtype and static dims.
struct TensorType {
  DType dtype = DType::float32;
  std::vector<int64_t> dims;
  bool is_token = false;
};
/// Reads `tensor<2x3xf32>` (or a scalar element type such as `f32` in region signatures); dynamic dims, complex
/// and unknown element types throw ParseError naming what jitx does not support.
TensorType parse_type(Cursor& c);
/// `i32`, `f32`, `bf16`, `ui8`, `i1`...
DType parse_element_type(Cursor& c, std::string_view word);
/// A type list: `(T1, T2)` or `T`.
std::vector<TensorType> parse_type_list(Cursor& c);

}  // namespace jitx::import
