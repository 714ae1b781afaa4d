// The persistent cache's key and file: the header records jitx's and LLVM's versions, the triple, CPU and features
// and the code-changing settings (and a log or dump setting does not change the key); the payload is zstd-compressed;
// JITX_EXPLAIN_CACHE_MISSES names the CPU features or the jitx version of a near entry (same module, another key).
#include <catch2/catch.hpp>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>

#include "cache/compilation_cache.h"
#include "cache/executable_file.h"
#include "compile_log.h"
#include "jitx/jitx.h"

using namespace jitx;
namespace fs = std::filesystem;

namespace {
struct Dir {
  fs::path dir;
  std::string was = config().compilation_cache_dir;
  Dir() {
    char tmpl[] = "/tmp/jitx_disk_key_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    config().compilation_cache_dir = dir.string();
  }
  ~Dir() {
    config().compilation_cache_dir = was;
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".jxc") out.push_back(e.path());
    return out;
  }
};
std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }
bool contains(const std::string& t, const std::string& w) { return t.find(w) != std::string::npos; }

Array f(Array x) { return jnp::exp(x) * 2.0f - x; }
std::vector<float> run(std::string* log = nullptr) {
  testing::CompileLogCapture cap;
  auto y = jit(f, {.name = "keyed"})(array(std::vector<float>{0.5f, -1.0f, 2.0f})).to_vector<float>();
  if (log) *log = cap.text;
  return y;
}
void check_values(const std::vector<float>& y) {
  std::vector<float> x = {0.5f, -1.0f, 2.0f};
  REQUIRE(y.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(std::abs(y[i] - (2 * std::exp(x[i]) - x[i])) <= 1e-5f * (1 + std::abs(y[i])));
}
}  // namespace

TEST_CASE("disk cache: the key records versions, triple, CPU features and settings, logs and dumps do not count",
          "[disk_cache]") {
  if (default_platform() != "cpu") return;
  Dir d;
  check_values(run());
  auto e = d.entries();
  REQUIRE(e.size() == 1);
  std::string bytes = read(e[0]);
  cache::Decoded dec = cache::decode(bytes);
  const auto& h = dec.header;
  CHECK(!h.jitx_version.empty());
  CHECK(std::isdigit(static_cast<unsigned char>(h.jitx_version[0])));
  CHECK(h.compiler.rfind("LLVM 19.", 0) == 0);
  CHECK(contains(h.triple, "x86_64"));
  CHECK(!h.cpu.empty());
  CHECK(contains(h.features, "+sse2"));
  CHECK(contains(h.settings, "allow_excess_precision="));
  CHECK(h.key.size() == 32);  // XXH3-128 in hex
  CHECK(fs::path(e[0]).filename().string() == h.fingerprint.substr(0, 16) + "-" + h.key + ".jxc");
  // The payload is a zstd frame (magic 28 B5 2F FD): the HLO text is not in the file as plain text.
  CHECK(contains(bytes, std::string("\x28\xB5\x2F\xFD", 4)));
  REQUIRE(dec.sections.count(cache::kHloSection));
  std::string hlo = dec.sections.at(cache::kHloSection);
  REQUIRE(hlo.size() > 40);
  CHECK(!contains(bytes, hlo.substr(0, 40)));
  // Logging and dumping change nothing in the code: the same entry loads.
  char tmpl[] = "/tmp/jitx_disk_key_dump_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string was_dump = config().dump_to;
  config().dump_to = tmpl;
  std::string log;
  auto y = run(&log);
  config().dump_to = was_dump;
  std::error_code ec;
  fs::remove_all(tmpl, ec);
  INFO(log);
  CHECK(contains(log, "loaded from cache ("));
  check_values(y);
  CHECK(d.entries().size() == 1);
  // A code-changing setting is another key, so another entry.
  bool was = config().allow_excess_precision;
  config().allow_excess_precision = !was;
  check_values(run());
  config().allow_excess_precision = was;
  CHECK(d.entries().size() == 2);
}

TEST_CASE("disk cache: JITX_EXPLAIN_CACHE_MISSES names the CPU features or jitx version of a near entry",
          "[disk_cache]") {
  if (default_platform() != "cpu") return;
  Dir d;
  check_values(run());
  auto e = d.entries();
  REQUIRE(e.size() == 1);
  // The entry as another machine (other features) and another jitx would have written it: another key, so another
  // file name of the same module.
  cache::Decoded dec = cache::decode(read(e[0]));
  auto near = [&](const std::function<void(cache::ExecutableHeader&)>& edit, const std::string& key) {
    cache::ExecutableHeader h = dec.header;
    edit(h);
    h.key = key;
    write(d.dir / (h.fingerprint.substr(0, 16) + "-" + key + ".jxc"), cache::encode(h, dec.sections));
  };
  near([](cache::ExecutableHeader& h) { h.features += ",+jitx-imaginary-feature"; }, std::string(32, 'a'));
  near([](cache::ExecutableHeader& h) { h.jitx_version = "0.0.1-other"; }, std::string(32, 'b'));
  fs::remove(e[0]);
  bool was = config().explain_cache_misses;
  config().explain_cache_misses = true;
  std::string log;
  auto y = run(&log);
  config().explain_cache_misses = was;
  INFO(log);
  check_values(y);
  CHECK(contains(log, "PERSISTENT CACHE MISS for 'jit_keyed'"));
  CHECK(contains(log, "entries of this module exist but do not match"));
  CHECK(contains(log, "CPU features: the entry's code was generated with +jitx-imaginary-feature"));
  CHECK(contains(log, "jitx version: the entry's is '0.0.1-other'"));
  CHECK(contains(log, "Compiled 'keyed'"));
}
