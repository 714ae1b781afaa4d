// ParseError: malformed program text (StableHLO import), with the line and column it was found at.
#pragma once
#include <cstdint>
#include <string>

#include "jitx/error.h"

namespace jitx {

/// Malformed program text: the message names the line, the column and what was expected.
class ParseError : public Error {
 public:
  ParseError(const std::string& what, int64_t line, int64_t column) : Error(what), line_(line), column_(column) {}
  int64_t line() const { return line_; }
  int64_t column() const { return column_; }

 private:
  int64_t line_ = 0, column_ = 0;
};

}  // namespace jitx
