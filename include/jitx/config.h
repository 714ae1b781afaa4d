// jitx::config: process-wide settings, from code or from JITX_* environment variables.
#pragma once
#include <string>

namespace jitx {

struct Config {
  bool log_compiles = false;          // JITX_LOG_COMPILES=1
  bool explain_cache_misses = false;  // JITX_EXPLAIN_CACHE_MISSES=1
  std::string dump_to;                // JITX_DUMP_TO=dir
  std::string compilation_cache_dir;  // JITX_COMPILATION_CACHE_DIR=dir
  std::string platform;               // JITX_PLATFORM=interpreter|cpu
  int cpu_device_count = 1;           // JITX_CPU_DEVICE_COUNT=n
  bool verify_passes = false;         // JITX_VERIFY=1: run the HLO verifier after every pass
};

/// The global configuration (initialised from the environment on first use).
Config& config();

}  // namespace jitx
