// libFuzzer target: serialised executables and compilation-cache entries (jitx::deserialize_executable, which reads
// the file with cache::decode, then its signature, HLO and cpu-backend sections). Each input is tried three ways:
//   1. as it is (the magic, version, size and checksum checks);
//   2. with its size field and checksum recomputed, so that mutations reach the header and payload parsing (a
//      file that is not the one written: jitx must refuse it with a jitx::Error, not crash);
//   3. when (2) decodes: re-encoded with this process's jitx version, compiler, triple and CPU, so that the
//      signature and HLO sections are read on any machine (the checked-in seeds were made on another).
// Any exception but a jitx::Error, a crash, a sanitizer report, a hang or a leak is a bug.
//
// Trust: a serialised executable carries native code, which runs when it is called; its checksum detects
// accidents, not tampering. So in (2) and (3) the backend section (the object files LLVM's JITLink reads) must be
// one of the seeds' own, unmutated: mutated object files crash LLVM 19's ELF reader (a null dereference while it
// formats its error), which a file that passed the checksum reaches only by being made to. The backend section's
// counts are covered by tests/executable_file_test.cpp; its bytes by mode (1), which the checksum refuses.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cache/compilation_cache.h"
#include "cache/executable_file.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/error.h"
#include "jitx/jit.h"
#include "runtime/runtime.h"

namespace {
constexpr size_t kSizeAt = 8 + 4, kMinSize = 8 + 4 + 8 + 8;

void load(std::string_view bytes) {
  try {
    jitx::LoadedExecutable e = jitx::deserialize_executable(bytes);
    (void)e.memory_analysis();
  } catch (const jitx::Error&) {
  }
}

std::string with_size_and_checksum(std::string b) {
  uint64_t total = b.size();
  std::memcpy(b.data() + kSizeAt, &total, sizeof total);
  uint64_t sum = XXH3_64bits(b.data(), b.size() - sizeof sum);
  std::memcpy(b.data() + b.size() - sizeof sum, &sum, sizeof sum);
  return b;
}

/// The backend sections of the checked-in seeds (JITX_FUZZ_SEEDS, fuzz/corpus/executable_file).
const std::set<std::string>& trusted_code() {
  static const std::set<std::string> code = [] {
    std::set<std::string> out;
    for (auto& f : std::filesystem::directory_iterator(JITX_FUZZ_SEEDS)) {
      std::ifstream in(f.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string bytes = ss.str();
      if (bytes.size() < kMinSize) continue;
      try {
        auto d = jitx::cache::decode(with_size_and_checksum(bytes));
        if (d.sections.count(jitx::cache::kBackendSection)) out.insert(d.sections[jitx::cache::kBackendSection]);
      } catch (const jitx::Error&) {
      }
    }
    return out;
  }();
  return code;
}

/// The header this process writes, for the fields that must agree (the module-dependent ones are kept).
void adopt_this_process(jitx::cache::ExecutableHeader& h) {
  static const jitx::cache::ExecutableHeader now = [] {
    auto m = jitx::hlo::parse_hlo("HloModule m\nENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n");
    auto& backend = jitx::runtime::Client::get().backend();
    return jitx::cache::current_header(backend, *m, {});
  }();
  h.jitx_version = now.jitx_version;
  h.platform = now.platform;
  h.compiler = now.compiler;
  h.triple = now.triple;
  h.cpu = now.cpu;
  h.features = now.features;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  load(bytes);
  if (size < kMinSize) return 0;
  std::string fixed = with_size_and_checksum(std::string(bytes));
  jitx::cache::Decoded d;
  try {
    d = jitx::cache::decode(fixed);
  } catch (const jitx::Error&) {
    return 0;
  }
  auto code = d.sections.find(jitx::cache::kBackendSection);
  if (code != d.sections.end() && !trusted_code().count(code->second)) return 0;
  load(fixed);
  adopt_this_process(d.header);
  load(jitx::cache::encode(d.header, d.sections));
  return 0;
}
