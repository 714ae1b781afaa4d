// jitx::config, initialised from JITX_* environment variables.
#include "jitx/config.h"

#include <algorithm>
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
    if (auto n = env_str("JITX_COMPILATION_CACHE_MAX_BYTES"); !n.empty())
      c.compilation_cache_max_bytes = static_cast<size_t>(std::max(0LL, std::atoll(n.c_str())));
    if (auto n = env_str("JITX_JIT_CACHE_SIZE"); !n.empty()) c.jit_cache_size = std::max(1L, std::atol(n.c_str()));
    if (auto n = env_str("JITX_EAGER_CACHE_SIZE"); !n.empty()) c.eager_cache_size = std::max(1L, std::atol(n.c_str()));
    if (auto n = env_str("JITX_CPU_DEVICE_COUNT"); !n.empty()) c.cpu_device_count = std::max(1, std::atoi(n.c_str()));
    return c;
  }();
  return c;
}

}  // namespace jitx
