// jitx::config: process-wide settings, from code or from JITX_* environment variables.
#pragma once
#include <string>

namespace jitx {

struct Config {
  bool log_compiles = false;          // JITX_LOG_COMPILES=1
  bool explain_cache_misses = false;  // JITX_EXPLAIN_CACHE_MISSES=1
  std::string dump_to;                // JITX_DUMP_TO=dir
  std::string compilation_cache_dir;  // JITX_COMPILATION_CACHE_DIR=dir
  std::string platform;               // JITX_PLATFORM=cpu (default)|interpreter
  int cpu_device_count = 1;           // JITX_CPU_DEVICE_COUNT=n
  bool verify_passes = false;         // JITX_VERIFY=1: run the HLO verifier after every pass
  bool dump_passes = false;           // JITX_DUMP_PASSES=1: with dump_to, write the HLO after every pass
  bool trace_passes = false;          // JITX_TRACE_PASSES=1: log one line per rewrite an HLO pass makes
};

/// The global configuration (initialised from the environment on first use).
Config& config();

/// The platform executables run on ("cpu" or "interpreter"), after JITX_PLATFORM and defaults.
std::string default_platform();

}  // namespace jitx
