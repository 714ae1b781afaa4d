// The persistent compilation cache across processes: two processes (this test binary run again, with the hidden
// [disk_cache_writer] case) compiling one function into one fresh directory at the same moment get the right
// result and leave one whole entry that a third process (this one) loads; and the temporary files of writers that
// died before their rename are removed by the next store.
#include <catch2/catch.hpp>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cache/executable_file.h"
#include "compile_log.h"
#include "jitx/io.h"
#include "jitx/jitx.h"

extern char** environ;

using namespace jitx;
namespace fs = std::filesystem;

namespace {
fs::path make_temp_dir() {
  char tmpl[] = "/tmp/jitx_disk_proc_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

Array layer(Array x, Array w, Array b) { return jnp::tanh(jnp::matmul(x, w) + b) * 0.5; }

/// Inputs every process computes alike (no random state): x f32[8,16], w f32[16,12], b f32[12].
std::vector<Array> fixed_inputs() {
  std::vector<float> x(8 * 16), w(16 * 12), b(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(0.3 * std::cos(0.11 * static_cast<double>(i)));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(0.01 * static_cast<double>(i));
  return {jitx::array(x, {8, 16}), jitx::array(w, {16, 12}), jitx::array(b, {12})};
}

/// The layer in double precision (an independent reference).
void check_reference(const std::vector<float>& got) {
  auto in = fixed_inputs();
  auto x = in[0].to_vector<double>(), w = in[1].to_vector<double>(), b = in[2].to_vector<double>();
  REQUIRE(got.size() == 8 * 12);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 12; ++j) {
      double s = b[j];
      for (int p = 0; p < 16; ++p) s += x[i * 16 + p] * w[p * 12 + j];
      REQUIRE(std::abs(got[i * 12 + j] - 0.5 * std::tanh(s)) <= 1e-5);
    }
}

std::vector<float> run_layer(std::string* log) {
  testing::CompileLogCapture cap;
  auto in = fixed_inputs();
  auto out = jit(layer, {.name = "layer"})(in[0], in[1], in[2]).to_vector<float>();
  if (log) *log = cap.text;
  return out;
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jxc") out.push_back(e.path());
  return out;
}
size_t temporaries(const fs::path& dir) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}
std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

/// Starts this test binary on the hidden writer case with `env` added; returns its pid.
pid_t spawn_writer(const std::vector<std::string>& env, const fs::path& console) {
  std::vector<std::string> vars = env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "JITX_TEST_WRITER_", 17) != 0 && std::strncmp(*e, "JITX_COMPILATION_CACHE_DIR=", 27) != 0)
      vars.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::string spec = "[disk_cache_writer]";
  char* argv[] = {exe.data(), spec.data(), nullptr};
  int fd = ::open(console.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);  // the child's Catch2 report
  pid_t pid = fork();
  if (pid == 0) {
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execve(exe.c_str(), argv, envp.data());
    _exit(127);
  }
  if (fd >= 0) ::close(fd);
  return pid;
}
}  // namespace

TEST_CASE("disk cache: (helper process) one writer of the two-process test", "[.disk_cache_writer]") {
  const char* dir = std::getenv("JITX_TEST_WRITER_DIR");
  const char* out = std::getenv("JITX_TEST_WRITER_OUT");
  REQUIRE(dir);
  REQUIRE(out);
  config().compilation_cache_dir = dir;
  // Both writers wait for the go file, so that their lookups, compiles and stores overlap.
  fs::path go = fs::path(out).parent_path() / "go";
  for (int i = 0; i < 2000 && !fs::exists(go); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::string log;
  auto got = run_layer(&log);
  check_reference(got);
  jitx::save(out, jitx::array(got, {8, 12}));
  std::ofstream(std::string(out) + ".log") << log;
}

TEST_CASE("disk cache: two processes writing one entry at once: right results, one whole entry that loads",
          "[disk_cache]") {
  if (default_platform() != "cpu") return;  // the interpreter has no code to store
  fs::path cache = make_temp_dir(), work = make_temp_dir();
  std::string was = config().compilation_cache_dir;
  std::vector<pid_t> pids;
  for (int k = 0; k < 2; ++k)
    pids.push_back(spawn_writer({"JITX_TEST_WRITER_DIR=" + cache.string(),
                                 "JITX_TEST_WRITER_OUT=" + (work / fmt::format("out{}.npy", k)).string(),
                                 "JITX_PLATFORM=cpu"},
                             work / fmt::format("console{}.txt", k)));
  std::ofstream(work / "go") << "go";
  for (pid_t pid : pids) {
    REQUIRE(pid > 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::string logs = read(work / "console0.txt") + read(work / "console1.txt") + read(work / "out0.npy.log") +
                     read(work / "out1.npy.log");
  INFO(logs);
  auto a = jitx::load((work / "out0.npy").string()).to_vector<float>();
  auto b = jitx::load((work / "out1.npy").string()).to_vector<float>();
  check_reference(a);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  // One entry, whole (its checksum holds), no temporary files left.
  auto e = entries(cache);
  REQUIRE(e.size() == 1);
  CHECK(temporaries(cache) == 0);
  CHECK_NOTHROW(cache::decode(read(e[0])));
  // This process loads it and computes the writers' bits.
  config().compilation_cache_dir = cache.string();
  std::string log;
  auto c = run_layer(&log);
  config().compilation_cache_dir = was;
  CHECK(contains(log, "loaded from cache ("));
  CHECK(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)) == 0);
  std::error_code ec;
  fs::remove_all(cache, ec);
  fs::remove_all(work, ec);
}

TEST_CASE("disk cache: temporary files of writers that died are removed by the next store", "[disk_cache]") {
  if (default_platform() != "cpu") return;
  fs::path cache = make_temp_dir();
  std::string was = config().compilation_cache_dir;
  config().compilation_cache_dir = cache.string();
  std::string log;
  check_reference(run_layer(&log));
  auto e = entries(cache);
  REQUIRE(e.size() == 1);
  pid_t dead = fork();  // a process that is gone by the time the store looks
  if (dead == 0) _exit(0);
  REQUIRE(dead > 0);
  waitpid(dead, nullptr, 0);
  auto now = fs::file_time_type::clock::now();
  auto temp = [&](long pid, int n, std::chrono::seconds age) {
    fs::path p = e[0];
    p += fmt::format(".tmp.{}.{}.1f2e", pid, n);
    std::ofstream(p) << "a partial entry";
    fs::last_write_time(p, now - age);
    return p;
  };
  fs::path of_dead = temp(dead, 0, std::chrono::seconds(60));
  fs::path ancient = temp(::getpid(), 1, std::chrono::seconds(7200));
  fs::path live = temp(::getpid(), 2, std::chrono::seconds(0));  // a writer of this (live) process, still writing
  // Another function's store runs the clean-up.
  testing::CompileLogCapture cap;
  auto y = jit([](Array x) { return x * 3.0f + 1.0f; }, {.name = "other"})(jitx::array(std::vector<float>{1, 2}));
  CHECK(y.to_vector<float>() == std::vector<float>{4, 7});
  INFO(cap.text);
  CHECK(!fs::exists(of_dead));
  CHECK(!fs::exists(ancient));
  CHECK(fs::exists(live));
  CHECK(contains(cap.text, fmt::format("is gone, pid {}", dead)));
  CHECK(entries(cache).size() == 2);
  config().compilation_cache_dir = was;
  std::error_code ec;
  fs::remove_all(cache, ec);
}
