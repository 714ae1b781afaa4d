// Captures jitx's compile log (config().log_compiles through a log sink) for a scope; the previous setting and the
// default sink come back when it ends, however the scope is left.
#pragma once
#include <string>

#include "jitx/config.h"
#include "jitx/jit.h"

namespace jitx::testing {

struct CompileLogCapture {
  std::string text;
  bool was = config().log_compiles;
  CompileLogCapture() {
    config().log_compiles = true;
    set_log_sink([this](const std::string& s) { text += s + "\n"; });
  }
  ~CompileLogCapture() {
    set_log_sink(nullptr);
    config().log_compiles = was;
  }
  CompileLogCapture(const CompileLogCapture&) = delete;
  CompileLogCapture& operator=(const CompileLogCapture&) = delete;
};

}  // namespace jitx::testing
