// libFuzzer target: the HLO text parser (hlo::parse_hlo) and the verifier on any bytes. Malformed text must end in
// a jitx::Error; any other exception, a crash, a sanitizer report, a hang or a leak is a bug. A module that parses
// and verifies must print back to text that parses to the same text (print_hlo's round trip).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<jitx::hlo::Module> m;
  try {
    m = jitx::hlo::parse_hlo(text);
    jitx::hlo::verify(*m);
  } catch (const jitx::Error&) {
    return 0;
  }
  std::string printed = jitx::hlo::print_hlo(*m);
  std::string again;
  try {
    again = jitx::hlo::print_hlo(*jitx::hlo::parse_hlo(printed));
  } catch (const jitx::Error& e) {
    std::fprintf(stderr, "a verified module's text does not parse: %s\n%s\n", e.what(), printed.c_str());
    std::abort();
  }
  if (again != printed) {
    std::fprintf(stderr, "print_hlo(parse_hlo(t)) != t for\n%s\nit printed\n%s\n", printed.c_str(), again.c_str());
    std::abort();
  }
  return 0;
}
