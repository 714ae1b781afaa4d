// Attribute helpers: reading Params with errors that name the instruction, and the XLA-style text pieces.
#include "hlo/ir/attribute_util.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace jitx::hlo::attribute_util {

// --- reading Params -------------------------------------------------------------------------------

[[noreturn]] void bad(const Instruction& i, std::string_view msg) {
  throw CompileError(fmt::format("[{}] %{}: {}", opcode_name(i.opcode), i.name, msg));
}

void expect_opcode(const Instruction& i, std::initializer_list<Opcode> ops) {
  JITX_ASSERT(std::find(ops.begin(), ops.end(), i.opcode) != ops.end(), "%{} ({}) has no such attributes", i.name,
              opcode_name(i.opcode));
}

const Ints& list_attr(const Instruction& i, std::string_view key) { return required<Ints>(i, key, "a list"); }
Ints list_attr(const Instruction& i, std::string_view key, Ints dflt) {
  const Ints* v = find_attr<Ints>(i, key, "a list");
  return v ? *v : dflt;
}
int64_t int_attr(const Instruction& i, std::string_view key) { return required<int64_t>(i, key, "an integer"); }
int64_t int_attr(const Instruction& i, std::string_view key, int64_t dflt) {
  const int64_t* v = find_attr<int64_t>(i, key, "an integer");
  return v ? *v : dflt;
}

int64_t rank_of(const Instruction& i, size_t operand) { return i.operand(operand)->shape.rank(); }

/// Every entry of v names an axis of a rank-`rank` array (`what`), and no axis twice.
void check_axes(const Instruction& i, std::string_view key, const Ints& v, int64_t rank, std::string_view what) {
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k] < 0 || v[k] >= rank)
      bad(i, fmt::format("{}={{{}}} names axis {}, expected axes of the rank-{} {}", key, fmt::join(v, ","), v[k],
                         rank, what));
    if (std::find(v.begin(), v.begin() + k, v[k]) != v.begin() + k)
      bad(i, fmt::format("{}={{{}}} names axis {} twice", key, fmt::join(v, ","), v[k]));
  }
}

void check_size(const Instruction& i, std::string_view key, const Ints& v, int64_t n, std::string_view why) {
  if (static_cast<int64_t>(v.size()) != n)
    bad(i, fmt::format("{}={{{}}} has {} entries, expected {} ({})", key, fmt::join(v, ","), v.size(), n, why));
}

void check_at_least(const Instruction& i, std::string_view key, const Ints& v, int64_t lo) {
  for (auto x : v)
    if (x < lo) bad(i, fmt::format("{}={{{}}} has entry {}, expected each >= {}", key, fmt::join(v, ","), x, lo));
}

/// Axes that occur in both lists (a batch axis also contracted, ...).
void check_disjoint(const Instruction& i, std::string_view ka, const Ints& a, std::string_view kb, const Ints& b) {
  for (auto x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) bad(i, fmt::format("axis {} is in both {} and {}", x, ka, kb));
}

// --- text -----------------------------------------------------------------------------------------

[[noreturn]] void bad_text(std::string_view text, std::string_view msg) {
  throw CompileError(fmt::format("[hlo attributes] cannot parse '{}': {}", text, msg));
}

std::string list_str(const Ints& v) { return fmt::format("{{{}}}", fmt::join(v, ",")); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// Splits at `sep` outside braces and brackets.
std::vector<std::string_view> split_top(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t b = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    char c = s[k];
    if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') --depth;
    else if (c == sep && depth == 0) {
      out.push_back(trim(s.substr(b, k - b)));
      b = k + 1;
    }
  }
  out.push_back(trim(s.substr(b)));
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

int64_t parse_int(std::string_view s, std::string_view whole) {
  s = trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) bad_text(whole, fmt::format("'{}' is not an integer", s));
  return v;
}

/// "{1,2,3}" (or "{}").
Ints parse_list(std::string_view s, std::string_view whole) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') bad_text(whole, fmt::format("'{}' is not a {{list}}", s));
  Ints v;
  for (auto part : split_top(s.substr(1, s.size() - 2), ',')) v.push_back(parse_int(part, whole));
  return v;
}

/// "AxBxC" (a single number for one axis); "" for none.
Ints parse_by_x(std::string_view s, std::string_view whole) {
  Ints v;
  for (auto part : split_top(s, 'x')) v.push_back(parse_int(part, whole));
  return v;
}

}  // namespace jitx::hlo::attribute_util
