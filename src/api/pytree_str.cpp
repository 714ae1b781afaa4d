// Decoding the Flattener's structure string (pytree.h) into a readable tree.
#include "api/pytree_str.h"

#include <cctype>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace jitx::detail {
namespace {

struct Decoder {
  std::string_view s;
  size_t i = 0;

  [[noreturn]] static void fail() { throw std::invalid_argument("bad pytree structure"); }
  char peek() const { return i < s.size() ? s[i] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail();
    ++i;
  }
  // Children up to the closing character.
  std::vector<std::string> children(char close) {
    std::vector<std::string> out;
    while (peek() != close) {
      if (i >= s.size()) fail();
      out.push_back(node());
    }
    ++i;
    return out;
  }
  std::string sized(char close) {  // "[n:" or "<n:" then children
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++i;
    expect(':');
    return fmt::format("[{}]", fmt::join(children(close), ", "));
  }
  // Whether a JITX_PYTREE struct's "Name{" starts at i (a name runs up to '{').
  bool struct_here() const {
    size_t j = i;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == ':')) ++j;
    return j > i && j < s.size() && s[j] == '{';
  }
  std::string node() {
    char c = peek();
    if (c == '*') return ++i, "*";
    if (c == 'S' && !struct_here()) return ++i, "static";
    if (c == '#') return ++i, "static " + node();
    if (c == '[') return ++i, sized(']');
    if (c == '<') return ++i, sized('>');
    if (c == '(') {
      ++i;
      auto kids = children(')');
      return fmt::format("({}{})", fmt::join(kids, ", "), kids.size() == 1 ? "," : "");
    }
    if (c == '?') {
      ++i;
      if (s.substr(i, 4) == "none") return i += 4, "None";
      expect('(');
      std::string inner = node();
      expect(')');
      return inner;
    }
    if (c == '{') {  // map: "key:" node "," ...
      ++i;
      std::vector<std::string> items;
      while (peek() != '}') {
        size_t colon = s.find(':', i);
        if (colon == std::string_view::npos) fail();
        std::string key(s.substr(i, colon - i));
        i = colon + 1;
        items.push_back(fmt::format("'{}': {}", key, node()));
        expect(',');
      }
      ++i;
      return fmt::format("{{{}}}", fmt::join(items, ", "));
    }
    if (struct_here()) {  // JITX_PYTREE struct "Name{...}"
      size_t brace = s.find('{', i);
      if (brace == std::string_view::npos) fail();
      std::string name(s.substr(i, brace - i));
      i = brace + 1;
      return fmt::format("{}{{{}}}", name, fmt::join(children('}'), ", "));
    }
    fail();
  }
};

}  // namespace

std::string structure_str(std::string_view encoded) {
  try {
    Decoder d{encoded};
    std::vector<std::string> args;
    while (d.i < encoded.size()) {
      args.push_back(d.node());
      d.expect(',');
    }
    return fmt::format("({}{})", fmt::join(args, ", "), args.size() == 1 ? "," : "");
  } catch (const std::invalid_argument&) {
    return std::string(encoded);
  }
}

}  // namespace jitx::detail
