// The log sink: one mutex-guarded function that every log line goes through.
#include "core/log.h"

#include <functional>
#include <iostream>
#include <mutex>

#include "jitx/config.h"

namespace jitx {
namespace {
std::mutex& log_mutex() {
  static std::mutex mu;
  return mu;
}
std::function<void(const std::string&)>& log_sink() {
  static std::function<void(const std::string&)> sink;
  return sink;
}
}  // namespace

void set_log_sink(std::function<void(const std::string&)> sink) {
  std::lock_guard<std::mutex> l(log_mutex());
  log_sink() = std::move(sink);
}

namespace detail {
void log_line(const std::string& s) {
  std::lock_guard<std::mutex> l(log_mutex());
  if (log_sink()) log_sink()(s);
  else std::cerr << s << std::endl;
}
}  // namespace detail
}  // namespace jitx
