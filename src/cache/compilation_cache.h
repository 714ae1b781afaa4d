// The persistent compilation cache (config().compilation_cache_dir): executables stored as files of the format in
// executable_file.h, one per key, named <fingerprint prefix>-<key>.jxc so that entries of one module sit together
// (JITX_EXPLAIN_CACHE_MISSES compares a miss with them). Safe with several writers (a temporary file in the
// directory, then an atomic rename), checked on every load (a bad entry is logged, removed and compiled again),
// capped in size (least recently used entries go; a load refreshes an entry's mtime), and read-only where the
// directory is.
#pragma once
#include <memory>
#include <string>

#include "cache/executable_file.h"
#include "hlo/ir/hlo.h"
#include "runtime/runtime.h"

namespace jitx::cache {

struct CacheResult {
  bool used = false;    // the cache was on and the backend serialises
  bool loaded = false;  // loaded from an entry rather than compiled
  bool stored = false;  // compiled and written to an entry
  std::string path;     // the entry's file
  double ms = 0;        // loading, or compiling
};

/// Compiles `module` with `backend`, through the cache when config().compilation_cache_dir is set and the backend
/// serialises (otherwise it simply compiles). `extra` sections are stored with the entry (the api layer's call
/// signature, so that deserialize_executable can read an entry). Logs with JITX_LOG_COMPILES and
/// JITX_EXPLAIN_CACHE_MISSES.
std::shared_ptr<runtime::Executable> compile(runtime::Backend& backend, std::shared_ptr<const hlo::Module> module,
                                             runtime::CompileOptions options, const Sections& extra,
                                             CacheResult* result = nullptr);

/// The section names every serialised executable has: the optimised module's HLO text and the backend's bytes.
inline constexpr const char* kHloSection = "hlo";
inline constexpr const char* kBackendSection = "backend";

/// The entry file `module` would have in `dir` (for tests and tools).
std::string entry_path(const std::string& dir, const ExecutableHeader& header);

}  // namespace jitx::cache
