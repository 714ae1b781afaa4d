// The persistent compilation cache (config().compilation_cache_dir) and serialised executables
// (Compiled::serialize, deserialize_executable): a compile stores an entry, a fresh jit in the same process (its
// own in-memory cache is empty) loads it and computes the same bits; corrupted, truncated, foreign-version and
// foreign-CPU entries are logged, removed and compiled again; concurrent writers, a read-only directory, the size
// cap's least-recently-used eviction, JITX_EXPLAIN_CACHE_MISSES. Process-level: examples/CMakeLists.txt runs the
// MLP block example twice over one directory (the second run loads).
#include <catch2/catch.hpp>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cache/executable_file.h"
#include "compile_log.h"
#include "jitx/jitx.h"
#include "test_util.h"

using namespace jitx;
namespace fs = std::filesystem;

namespace {
/// A fresh directory as config().compilation_cache_dir for one test; the setting and the directory go after it.
struct TempCache {
  fs::path dir;
  std::string was_dir = config().compilation_cache_dir;
  size_t was_max = config().compilation_cache_max_bytes;
  TempCache() {
    char tmpl[] = "/tmp/jitx_disk_cache_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    config().compilation_cache_dir = dir.string();
  }
  ~TempCache() {
    config().compilation_cache_dir = was_dir;
    config().compilation_cache_max_bytes = was_max;
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, ec);
    fs::remove_all(dir, ec);
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".jxc") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  size_t temporaries() const {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp.") != std::string::npos;
    return n;
  }
};

bool cpu() { return default_platform() == "cpu"; }

Array block(Array x, Array w, Array b) {
  Array h = nn::gelu(jnp::matmul(x, w) + b);
  Array mu = jnp::mean(h, {-1}, true);
  Array var = jnp::mean(jnp::square(h - mu), {-1}, true);
  return (h - mu) * lax::rsqrt(var + 1e-5);
}

struct Inputs {
  Array x, w, b;
};
Inputs random_inputs(int64_t m = 16, int64_t k = 32, int64_t n = 24) {
  using testing::make;
  using testing::uniform;
  return {make(uniform(m * k, -1, 1), {m, k}, DType::float32), make(uniform(k * n, -0.3, 0.3), {k, n}, DType::float32),
          make(uniform(n, -0.1, 0.1), {n}, DType::float32)};
}

/// The block through a new jit object (an empty in-memory cache: it compiles or loads from disk).
std::vector<float> run_fresh(const Inputs& in, std::string* log = nullptr) {
  testing::CompileLogCapture cap;
  auto j = jit(block, {.name = "block"});
  auto out = j(in.x, in.w, in.b).to_vector<float>();
  if (log) *log = cap.text;
  return out;
}

/// The block in double precision on the host (an independent reference for the first compile).
std::vector<double> block_reference(const Inputs& in) {
  auto x = in.x.to_vector<double>(), w = in.w.to_vector<double>(), b = in.b.to_vector<double>();
  int64_t m = in.x.shape()[0], k = in.x.shape()[1], n = in.w.shape()[1];
  std::vector<double> out(m * n);
  for (int64_t i = 0; i < m; ++i) {
    std::vector<double> h(n);
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) {
      double s = b[j];
      for (int64_t p = 0; p < k; ++p) s += x[i * k + p] * w[p * n + j];
      h[j] = 0.5 * s * (1 + std::tanh(std::sqrt(2 / M_PI) * (s + 0.044715 * s * s * s)));
      mu += h[j];
    }
    mu /= n;
    for (double v : h) var += (v - mu) * (v - mu);
    var /= n;
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = (h[j] - mu) / std::sqrt(var + 1e-5);
  }
  return out;
}

void check_reference(const std::vector<float>& got, const Inputs& in) {
  auto ref = block_reference(in);
  REQUIRE(got.size() == ref.size());
  for (size_t i = 0; i < ref.size(); ++i) REQUIRE(std::abs(got[i] - ref[i]) <= 2e-4 * (1 + std::abs(ref[i])));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << s;
}
bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

/// Compiles once into the cache and returns the result and the (single) entry.
std::pair<std::vector<float>, fs::path> first_compile(const TempCache& c, const Inputs& in) {
  std::string log;
  auto out = run_fresh(in, &log);
  REQUIRE(contains(log, "Compiled 'block'"));
  REQUIRE(contains(log, "compilation cache: stored"));
  auto e = c.entries();
  REQUIRE(e.size() == 1);
  return {out, e[0]};
}

/// After a bad entry: the log says why and that it was removed, the block compiled again with the right result,
/// and the new entry it stored loads.
void check_recovered(const TempCache& c, const Inputs& in, const std::vector<float>& want, const std::string& why) {
  std::string log;
  auto got = run_fresh(in, &log);
  INFO(log);
  CHECK(contains(log, why));
  CHECK(contains(log, "removed it, compiling"));
  CHECK(contains(log, "Compiled 'block'"));
  CHECK(same_bits(got, want));
  REQUIRE(c.entries().size() == 1);
  auto again = run_fresh(in, &log);
  CHECK(contains(log, "loaded from cache"));
  CHECK(same_bits(again, want));
}

/// Rewrites an entry's header field and re-seals it (a valid file made elsewhere).
void rewrite_header(const fs::path& p, const std::function<void(cache::ExecutableHeader&)>& edit) {
  cache::Decoded d = cache::decode(read(p));
  edit(d.header);
  write(p, cache::encode(d.header, d.sections));
}
}  // namespace

TEST_CASE("disk cache: a compile stores an entry, a fresh jit loads it and computes the same bits", "[disk_cache]") {
  TempCache c;
  Inputs in = random_inputs();
  std::string log;
  auto compiled = run_fresh(in, &log);
  check_reference(compiled, in);
  if (!cpu()) {  // the interpreter has no code to store: the cache is skipped
    CHECK(c.entries().empty());
    return;
  }
  REQUIRE(c.entries().size() == 1);
  CHECK(fs::file_size(c.entries()[0]) > 100);
  CHECK(contains(log, "Compiled 'block'"));
  auto loaded = run_fresh(in, &log);
  INFO(log);
  CHECK(contains(log, "loaded from cache ("));
  CHECK(!contains(log, "Compiled 'block'"));
  CHECK(same_bits(loaded, compiled));
  // Other random inputs through the loaded executable: still the compiled one's bits.
  Inputs in2 = random_inputs();
  auto j = jit(block, {.name = "block"});
  auto l2 = j(in2.x, in2.w, in2.b).to_vector<float>();
  config().compilation_cache_dir.clear();
  auto c2 = jit(block, {.name = "block"})(in2.x, in2.w, in2.b).to_vector<float>();
  CHECK(same_bits(l2, c2));
}

TEST_CASE("disk cache: a corrupted byte is detected by the checksum, removed and recompiled", "[disk_cache]") {
  if (!cpu()) return;
  TempCache c;
  Inputs in = random_inputs();
  auto [want, entry] = first_compile(c, in);
  std::string bytes = read(entry);
  bytes[bytes.size() / 2] ^= 0x5a;
  write(entry, bytes);
  check_recovered(c, in, want, "corrupted (checksum mismatch)");
}

TEST_CASE("disk cache: a truncated entry is removed and recompiled", "[disk_cache]") {
  if (!cpu()) return;
  TempCache c;
  Inputs in = random_inputs();
  auto [want, entry] = first_compile(c, in);
  std::string bytes = read(entry);
  write(entry, bytes.substr(0, bytes.size() * 2 / 3));
  check_recovered(c, in, want, "is truncated");
  // Shorter than a header, too.
  write(c.entries()[0], "JITX");
  check_recovered(c, in, want, "is truncated");
}

TEST_CASE("disk cache: an entry of another jitx version or format is never loaded", "[disk_cache]") {
  if (!cpu()) return;
  TempCache c;
  Inputs in = random_inputs();
  auto [want, entry] = first_compile(c, in);
  rewrite_header(entry, [](cache::ExecutableHeader& h) { h.jitx_version = "0.0.1-other"; });
  check_recovered(c, in, want, "jitx version: the entry's is '0.0.1-other'");
  // Another format version: refused before anything else is read.
  std::string bytes = read(c.entries()[0]);
  uint32_t v = cache::kFormatVersion + 6;
  std::memcpy(bytes.data() + 8, &v, sizeof v);
  write(c.entries()[0], bytes);
  check_recovered(c, in, want, fmt::format("format version {}", v));
}

TEST_CASE("disk cache: an entry for other CPU features is never loaded", "[disk_cache]") {
  if (!cpu()) return;
  TempCache c;
  Inputs in = random_inputs();
  auto [want, entry] = first_compile(c, in);
  rewrite_header(entry, [](cache::ExecutableHeader& h) { h.features += ",+jitx-imaginary-feature"; });
  check_recovered(c, in, want, "CPU features: the entry's code was generated with +jitx-imaginary-feature");
  rewrite_header(c.entries()[0], [](cache::ExecutableHeader& h) { h.cpu = "jitx-imaginary-cpu"; });
  check_recovered(c, in, want, "CPU: the entry's is 'jitx-imaginary-cpu'");
}

TEST_CASE("disk cache: eight threads compiling one function into a fresh directory", "[disk_cache]") {
  TempCache c;
  Inputs in = random_inputs();
  std::vector<std::vector<float>> outs(8);
  {
    testing::CompileLogCapture cap;  // one sink for all threads (log_line is thread-safe)
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
      ts.emplace_back([&, t] { outs[t] = jit(block, {.name = "block"})(in.x, in.w, in.b).to_vector<float>(); });
    for (auto& t : ts) t.join();
  }
  check_reference(outs[0], in);
  for (auto& o : outs) CHECK(same_bits(o, outs[0]));
  CHECK(c.temporaries() == 0);
  if (!cpu()) return;
  REQUIRE(c.entries().size() == 1);
  std::string log;
  auto loaded = run_fresh(in, &log);
  CHECK(contains(log, "loaded from cache"));
  CHECK(same_bits(loaded, outs[0]));
}

TEST_CASE("disk cache: a directory that cannot be written is a read-only cache", "[disk_cache]") {
  if (!cpu()) return;
  TempCache c;
  Inputs in = random_inputs();
  // A directory that cannot be created (its parent is a file): no error, a log line, the result.
  write(c.dir / "a_file", "x");
  config().compilation_cache_dir = (c.dir / "a_file" / "cache").string();
  std::string log;
  auto out = run_fresh(in, &log);
  check_reference(out, in);
  CHECK(contains(log, "using it as a read-only cache"));
  if (geteuid() == 0) return;  // root writes anywhere: the populated read-only directory needs another user
  config().compilation_cache_dir = c.dir.string();
  auto [want, entry] = first_compile(c, in);
  fs::permissions(c.dir, fs::perms::owner_read | fs::perms::owner_exec);
  auto loaded = run_fresh(in, &log);
  CHECK(contains(log, "loaded from cache"));
  CHECK(same_bits(loaded, want));
  Inputs other = random_inputs(8, 32, 24);  // a miss in the read-only directory compiles and stores nothing
  check_reference(run_fresh(other, &log), other);
  CHECK(c.entries().size() == 1);
}

TEST_CASE("disk cache: the size cap evicts the least recently used entries", "[disk_cache]") {
  if (!cpu()) return;
  TempCache c;
  Inputs a = random_inputs(4, 32, 24), b = random_inputs(8, 32, 24), d = random_inputs(12, 32, 24);
  run_fresh(a);
  auto after_a = c.entries();
  run_fresh(b);
  REQUIRE(c.entries().size() == 2);
  fs::path ea = after_a[0], eb = c.entries()[0] == ea ? c.entries()[1] : c.entries()[0];
  auto now = fs::file_time_type::clock::now();
  fs::last_write_time(ea, now - std::chrono::seconds(100));
  fs::last_write_time(eb, now - std::chrono::seconds(50));
  // Loading a makes it the most recently used (its mtime is refreshed), so b is now the oldest.
  std::string log;
  run_fresh(a, &log);
  REQUIRE(contains(log, "loaded from cache"));
  CHECK(fs::last_write_time(ea) > fs::last_write_time(eb));
  config().compilation_cache_max_bytes = fs::file_size(ea) + fs::file_size(eb) + fs::file_size(eb) / 2;
  auto out = run_fresh(d, &log);
  check_reference(out, d);
  INFO(log);
  CHECK(contains(log, "evicted " + eb.filename().string()));
  CHECK(fs::exists(ea));
  CHECK(!fs::exists(eb));
  CHECK(c.entries().size() == 2);
}

TEST_CASE("disk cache: JITX_EXPLAIN_CACHE_MISSES names the setting a near entry was compiled with", "[disk_cache]") {
  if (!cpu()) return;
  TempCache c;
  Inputs in = random_inputs();
  run_fresh(in);
  bool was_explain = config().explain_cache_misses, was_excess = config().allow_excess_precision;
  config().explain_cache_misses = true;
  config().allow_excess_precision = !was_excess;
  std::string log;
  auto out = run_fresh(in, &log);
  config().explain_cache_misses = was_explain;
  config().allow_excess_precision = was_excess;
  INFO(log);
  CHECK(contains(log, "PERSISTENT CACHE MISS"));
  CHECK(contains(log, "settings: the entry's is 'allow_excess_precision="));
  check_reference(out, in);
  CHECK(c.entries().size() == 2);
}

TEST_CASE("serialised executables: serialize and deserialize_executable round trip", "[disk_cache]") {
  Inputs in = random_inputs();
  auto compiled = jit(block, {.name = "block"}).lower(in.x, in.w, in.b).compile();
  if (!cpu()) {
    CHECK_THROWS_AS(compiled.serialize(), RuntimeError);
    CHECK_THROWS_WITH(compiled.serialize(), Catch::Contains("cannot serialise"));
    return;
  }
  std::string bytes = compiled.serialize();
  LoadedExecutable loaded = deserialize_executable(bytes);
  auto want = compiled(in.x, in.w, in.b).to_vector<float>();
  check_reference(want, in);
  auto outs = loaded(in.x, in.w, in.b);
  REQUIRE(outs.size() == 1);
  CHECK(same_bits(outs[0].to_vector<float>(), want));
  CHECK(loaded.as_text() == compiled.as_text());
  CHECK(loaded.cost_analysis() == compiled.cost_analysis());
  CHECK(loaded.cost_analysis_text() == compiled.cost_analysis_text());
  CHECK(loaded.memory_analysis().str() == compiled.memory_analysis().str());
  CHECK(loaded.executable_stats() == compiled.executable_stats());
  CHECK(loaded.in_avals().size() == 3);
  CHECK(loaded.out_avals().at(0).shape == Shape{16, 24});
  auto phases = loaded.compile_phases();
  REQUIRE(phases.size() >= 2);
  CHECK(phases.back().name == "load");
  // Once more from its own bytes.
  auto again = deserialize_executable(loaded.serialize());
  CHECK(same_bits(again(in.x, in.w, in.b)[0].to_vector<float>(), want));

  // Clear errors: wrong arguments, bytes that are not an executable, truncated, corrupted, foreign.
  CHECK_THROWS_AS(loaded(in.x, in.w), TypeError);
  CHECK_THROWS_WITH(loaded(in.w, in.w, in.b), Catch::Contains("argument 0: expected f32[16,32], got f32[32,24]"));
  CHECK_THROWS_WITH(deserialize_executable("not an executable at all, just text"), Catch::Contains("magic"));
  CHECK_THROWS_WITH(deserialize_executable(bytes.substr(0, bytes.size() - 10)), Catch::Contains("truncated"));
  std::string bad = bytes;
  bad[bad.size() / 3] ^= 1;
  CHECK_THROWS_WITH(deserialize_executable(bad), Catch::Contains("checksum"));
  cache::Decoded d = cache::decode(bytes);
  d.header.jitx_version = "9.9.9";
  CHECK_THROWS_WITH(deserialize_executable(cache::encode(d.header, d.sections)),
                    Catch::Contains("jitx version: the entry's is '9.9.9'"));
  d = cache::decode(bytes);
  d.header.features = "+jitx-imaginary-feature";
  CHECK_THROWS_AS(deserialize_executable(cache::encode(d.header, d.sections)), RuntimeError);
  CHECK_THROWS_WITH(deserialize_executable(cache::encode(d.header, d.sections)), Catch::Contains("CPU features"));
}

TEST_CASE("serialised executables: donation, several results and a loop survive the round trip", "[disk_cache]") {
  if (!cpu()) return;
  auto f = [](Array x, Array y) {
    Array s = lax::fori_loop(0, 5, [](Array, Array c) { return c * 1.5f + 1.0f; }, x);
    return std::make_tuple(s + y, jnp::sum(y));
  };
  Array x = testing::make(testing::uniform(12, -1, 1), {3, 4}, DType::float32);
  Array y = testing::make(testing::uniform(12, -1, 1), {3, 4}, DType::float32);
  auto compiled = jit(f, {.donate_argnums = {0}}).lower(x, y).compile();
  auto loaded = deserialize_executable(compiled.serialize());
  auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
  Array x2 = testing::make(xv, {3, 4}, DType::float32);
  auto outs = loaded(x2, y);
  REQUIRE(outs.size() == 2);
  auto s = outs[0].to_vector<double>();
  double sum = 0;
  for (size_t i = 0; i < 12; ++i) {
    double c = xv[i];
    for (int k = 0; k < 5; ++k) c = c * 1.5 + 1.0;
    CHECK(s[i] == Approx(c + yv[i]).epsilon(1e-5));
    sum += yv[i];
  }
  CHECK(outs[1].to_vector<double>()[0] == Approx(sum).epsilon(1e-5));
  CHECK(loaded.memory_analysis().alias_size_in_bytes == compiled.memory_analysis().alias_size_in_bytes);
}
