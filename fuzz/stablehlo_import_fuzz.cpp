// libFuzzer target: the StableHLO importer (jitx::import_stablehlo) on any bytes. Malformed text must end in a
// jitx::Error (ParseError, or CompileError for what jitx does not support); any other exception, a crash, a
// sanitizer report, a hang or a leak is a bug. What imports must print as StableHLO and as HLO text.
#include <cstdint>
#include <string_view>

#include "jitx/error.h"
#include "jitx/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    jitx::ImportedModule m = jitx::import_stablehlo(text);
    (void)m.as_text();
    (void)m.as_hlo_text();
  } catch (const jitx::Error&) {
  }
  return 0;
}
