// jitx::config, initialised from JITX_* environment variables.
#include "jitx/config.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace jitx {
namespace {
bool env_bool(const char* name, bool dflt) {
  const char* v = std::getenv(name);
  if (!v) return dflt;
  std::string s(v);
  return !(s.empty() || s == "0" || s == "false" || s == "False" || s == "no");
}
std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}
/// A whole-number setting of at least `min`; anything else (abc, 3x, 0 where 1 is the least) is ignored with a
/// line on stderr saying so, and the default stays (the setting is read once, before any jitx call could report it).
template <class T>
void env_int(const char* name, T min, T& value) {
  std::string s = env_str(name);
  if (s.empty()) return;
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && end == s.data() + s.size() && v >= static_cast<long long>(min)) {
    value = static_cast<T>(v);
    return;
  }
  std::fprintf(stderr, "[jitx] ignoring %s=%s: expected a whole number >= %lld; using %lld\n", name, s.c_str(),
               static_cast<long long>(min), static_cast<long long>(value));
}
}  // namespace

Config& config() {
  static Config c = [] {
    Config c;
    c.log_compiles = env_bool("JITX_LOG_COMPILES", false);
    c.explain_cache_misses = env_bool("JITX_EXPLAIN_CACHE_MISSES", false);
    c.dump_to = env_str("JITX_DUMP_TO");
    c.platform = env_str("JITX_PLATFORM");
    c.verify_passes = env_bool("JITX_VERIFY", false);
    c.dump_passes = env_bool("JITX_DUMP_PASSES", false);
    c.trace_passes = env_bool("JITX_TRACE_PASSES", false);
    c.allow_excess_precision = env_bool("JITX_ALLOW_EXCESS_PRECISION", true);
    c.enable_x64 = env_bool("JITX_ENABLE_X64", true);
    c.debug_nans = env_bool("JITX_DEBUG_NANS", false);
    c.debug_infs = env_bool("JITX_DEBUG_INFS", false);
    c.cpu_row_groups = env_bool("JITX_CPU_ROW_GROUPS", true);
    c.async_collectives = env_bool("JITX_ASYNC_COLLECTIVES", true);
    c.compilation_cache_dir = env_str("JITX_COMPILATION_CACHE_DIR");
    env_int("JITX_COMPILATION_CACHE_MAX_BYTES", size_t{0}, c.compilation_cache_max_bytes);
    env_int("JITX_JIT_CACHE_SIZE", decltype(c.jit_cache_size){1}, c.jit_cache_size);
    env_int("JITX_EAGER_CACHE_SIZE", decltype(c.eager_cache_size){1}, c.eager_cache_size);
    env_int("JITX_CPU_DEVICE_COUNT", decltype(c.cpu_device_count){1}, c.cpu_device_count);
    return c;
  }();
  return c;
}

}  // namespace jitx
