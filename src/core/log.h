// Log lines (compile logs, cache-miss explanations, pass traces) go through one sink that every layer can use.
#pragma once
#include <string>

namespace jitx::detail {

/// Writes one line to the sink set with jitx::set_log_sink (stderr by default); safe from any thread.
void log_line(const std::string& s);

}  // namespace jitx::detail
