// The reading, validation and text helpers that attributes.cpp builds the typed attribute structs from.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/errors.h"
#include "hlo/ir/hlo.h"

namespace jitx::hlo::attribute_util {
using Ints = std::vector<int64_t>;

// --- reading Params -------------------------------------------------------------------------------
/// CompileError "[op] %name: msg".
[[noreturn]] void bad(const Instruction& i, std::string_view msg);
/// An internal invariant: only these opcodes have the attributes being read.
void expect_opcode(const Instruction& i, std::initializer_list<Opcode> ops);

/// The attribute `key` as a T, nullptr when absent; present with another type is an error.
template <class T>
const T* find_attr(const Instruction& i, std::string_view key, std::string_view type) {
  if (!i.attrs.has(key)) return nullptr;
  const T* v = std::get_if<T>(&i.attrs.at(key));
  if (!v) bad(i, fmt::format("attribute {}={} is not {}", key, detail::param_value_str(i.attrs.at(key)), type));
  return v;
}

template <class T>
const T& required(const Instruction& i, std::string_view key, std::string_view type) {
  const T* v = find_attr<T>(i, key, type);
  if (!v) bad(i, fmt::format("attribute {} is missing", key));
  return *v;
}

const Ints& list_attr(const Instruction& i, std::string_view key);
Ints list_attr(const Instruction& i, std::string_view key, Ints dflt);
int64_t int_attr(const Instruction& i, std::string_view key);
int64_t int_attr(const Instruction& i, std::string_view key, int64_t dflt);
int64_t rank_of(const Instruction& i, size_t operand);

/// Every entry of v names an axis of a rank-`rank` array (`what`), and no axis twice.
void check_axes(const Instruction& i, std::string_view key, const Ints& v, int64_t rank, std::string_view what);
void check_size(const Instruction& i, std::string_view key, const Ints& v, int64_t n, std::string_view why);
void check_at_least(const Instruction& i, std::string_view key, const Ints& v, int64_t lo);
/// Axes that occur in both lists (a batch axis also contracted, ...).
void check_disjoint(const Instruction& i, std::string_view ka, const Ints& a, std::string_view kb, const Ints& b);

// --- text -----------------------------------------------------------------------------------------
/// CompileError "[hlo attributes] cannot parse 'text': msg".
[[noreturn]] void bad_text(std::string_view text, std::string_view msg);
/// "{1,2,3}".
std::string list_str(const Ints& v);
std::string_view trim(std::string_view s);
/// Splits at `sep` outside braces and brackets.
std::vector<std::string_view> split_top(std::string_view s, char sep);
int64_t parse_int(std::string_view s, std::string_view whole);
/// "{1,2,3}" (or "{}").
Ints parse_list(std::string_view s, std::string_view whole);
/// "AxBxC" (a single number for one axis); "" for none.
Ints parse_by_x(std::string_view s, std::string_view whole);

/// `key=value, key=value` with each key taken once; finish() rejects keys nobody asked for.
class TextFields {
 public:
  explicit TextFields(std::string_view text) : text_(text) {
    for (auto part : split_top(text, ',')) {
      size_t eq = part.find('=');
      if (eq == std::string_view::npos) bad_text(text, fmt::format("'{}' is not key=value", part));
      std::string_view key = trim(part.substr(0, eq));
      for (auto& f : fields_)
        if (f.first == key) bad_text(text, fmt::format("{} given twice", key));
      fields_.emplace_back(key, trim(part.substr(eq + 1)));
    }
  }
  std::string_view text() const { return text_; }
  std::optional<std::string_view> take(std::string_view key) {
    for (auto it = fields_.begin(); it != fields_.end(); ++it) {
      if (it->first != key) continue;
      std::string_view v = it->second;
      fields_.erase(it);
      return v;
    }
    return std::nullopt;
  }
  std::string_view need(std::string_view key) {
    auto v = take(key);
    if (!v) bad_text(text_, fmt::format("{} is missing", key));
    return *v;
  }
  void finish() const {
    if (!fields_.empty()) bad_text(text_, fmt::format("unknown attribute {}", fields_.front().first));
  }

 private:
  std::string_view text_;
  std::vector<std::pair<std::string_view, std::string_view>> fields_;
};


}  // namespace jitx::hlo::attribute_util
