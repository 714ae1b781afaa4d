// The serialised form of a compiled executable (Compiled::serialize, the compilation cache's entries): a small
// versioned binary file. Layout (little-endian):
//   "JITXEXE\0"            magic, 8 bytes
//   u32 format version     kFormatVersion; another one is refused before anything else is read
//   u64 file size          the whole file's length: a shorter file is truncated
//   header                 length-prefixed strings (ExecutableHeader, in declaration order)
//   u32 flags              1: the payload is zstd-compressed
//   u64 payload size       uncompressed
//   payload                (compressed) u32 section count, then per section: name and bytes, length-prefixed
//   u64 checksum           XXH3-64 of every byte before it
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/hlo.h"
#include "runtime/runtime.h"

namespace jitx::cache {

constexpr uint32_t kFormatVersion = 1;

/// Who made the code and for what: a file loads only where all of it but `key`, `fingerprint` and `name` agree.
struct ExecutableHeader {
  std::string jitx_version;  // this library's version
  std::string platform;      // the backend ("cpu")
  std::string compiler;      // "LLVM 19.1.7"
  std::string triple, cpu, features;
  std::string settings;      // the code-changing settings: "allow_excess_precision=1;donated=0,2"
  std::string fingerprint;   // the optimised module's (hlo::Module::fingerprint)
  std::string key;           // the cache key: XXH3-128 of everything above
  std::string name;          // the module's name, for logs
};

using Sections = std::map<std::string, std::string>;

/// The header this process writes, and expects, for `module` compiled by `backend` with `options`.
ExecutableHeader current_header(const runtime::Backend& backend, const hlo::Module& module,
                                const runtime::CompileOptions& options);

/// The file: header and sections, the payload zstd-compressed.
std::string encode(const ExecutableHeader& header, const Sections& sections);

struct Decoded {
  ExecutableHeader header;
  Sections sections;
};
/// Reads a file, checking magic, format version, size and checksum; throws RuntimeError saying which failed
/// ("truncated", "corrupted (checksum mismatch)", "format version 7, this jitx reads 1", ...).
Decoded decode(std::string_view bytes);

/// Why code described by `stored` cannot run here (`now`: this process): one line per differing property among
/// the jitx version, platform, compiler, triple, CPU and its features, and (with settings) the settings. Empty when
/// it can.
std::vector<std::string> incompatibilities(const ExecutableHeader& stored, const ExecutableHeader& now,
                                           bool settings);

}  // namespace jitx::cache
