// The persistent compilation cache (compilation_cache.h): lookup, checks, store, eviction, explanations.
#include "cache/compilation_cache.h"
#include "hlo/ir/custom_call.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <system_error>
#include <thread>

#include "core/errors.h"
#include "core/log.h"
#include "jitx/config.h"

namespace jitx::cache {
namespace fs = std::filesystem;
namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
constexpr std::string_view kExt = ".jxc";

void log(const std::string& s) {
  if (config().log_compiles) detail::log_line("[jitx] compilation cache: " + s);
}

bool read_file(const fs::path& p, std::string& out) {
  // Only a regular file is an entry: a directory at an entry's path opened as a stream and reported a size of
  // 2^63 - 1 (a bad_alloc out of the caller's jitted call); a FIFO would block.
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return false;
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  f.seekg(0, std::ios::end);
  auto n = f.tellg();
  if (n < 0) return false;
  out.resize(static_cast<size_t>(n));
  f.seekg(0);
  f.read(out.data(), n);
  return static_cast<bool>(f) || f.gcount() == n;
}

/// Removes a bad entry; in a read-only directory it stays (and is checked, and skipped, again next time).
void remove_entry(const fs::path& p) {
  std::error_code ec;
  if (!fs::remove(p, ec) && ec) log(fmt::format("cannot remove {} ({}); the directory is read-only?", p.string(),
                                                ec.message()));
}

/// Directories found unwritable this process: logged once each, then used read-only.
bool note_read_only(const std::string& dir, const std::string& why) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> l(mu);
  if (seen.insert(dir).second)
    log(fmt::format("cannot write to {} ({}): using it as a read-only cache", dir, why));
  return true;
}

/// Writes the entry through a temporary file of its own in the same directory and renames it into place: a reader
/// sees the old file or the whole new one, and writers of one entry do not disturb each other.
bool store(const fs::path& path, const std::string& bytes) {
  static std::atomic<uint64_t> seq{0};
  uint64_t salt = std::random_device{}();
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}.{}.{:x}", ::getpid(), seq++, salt);
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return !note_read_only(path.parent_path().string(), "cannot create a file there");
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return !note_read_only(path.parent_path().string(), "writing failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

/// Removes the temporary files (`<entry>.tmp.<pid>.<n>.<salt>`) of writers that died before their rename: those
/// whose process is gone (a kill(pid, 0) that fails with ESRCH) once they are a few seconds old (pids of another
/// machine sharing the directory may look gone: a live writer finishes within that time), and any older than an
/// hour. Run before each eviction pass, that is after every store. A writer whose file went anyway just fails its
/// rename and stores nothing, so this never corrupts an entry.
void remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    size_t at = name.find(std::string(kExt) + ".tmp.");
    if (at == std::string::npos) continue;
    std::error_code e;
    auto age = now - it->last_write_time(e);
    if (e) continue;
    long pid = std::strtol(name.c_str() + at + kExt.size() + 5, nullptr, 10);
    bool gone = pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    if ((gone && age > std::chrono::seconds(5)) || age > std::chrono::hours(1)) {
      if (fs::remove(it->path(), e))
        log(fmt::format("removed {} (a temporary file of a writer that {})", name,
                        gone ? fmt::format("is gone, pid {}", pid) : std::string("stopped over an hour ago")));
    }
  }
}

/// Keeps the directory's entries under config().compilation_cache_max_bytes: the least recently used (oldest
/// mtime) go first, never `keep` (the entry just written).
void evict(const fs::path& dir, const fs::path& keep) {
  struct File {
    fs::path path;
    fs::file_time_type mtime;
    uintmax_t size;
  };
  remove_stale_temporaries(dir);
  std::vector<File> files;
  uintmax_t total = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != kExt) continue;
    std::error_code e1, e2;
    auto size = it->file_size(e1);
    auto mtime = it->last_write_time(e2);
    if (e1 || e2) continue;
    files.push_back({it->path(), mtime, size});
    total += size;
  }
  uintmax_t cap = config().compilation_cache_max_bytes;
  if (total <= cap) return;
  std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.mtime < b.mtime; });
  for (auto& f : files) {
    if (total <= cap) break;
    if (f.path == keep) continue;
    std::error_code e;
    if (fs::remove(f.path, e)) {
      total -= f.size;
      log(fmt::format("evicted {} ({} bytes, least recently used; the cap is {} bytes, "
                      "JITX_COMPILATION_CACHE_MAX_BYTES)", f.path.filename().string(), f.size, cap));
    }
  }
}

/// JITX_EXPLAIN_CACHE_MISSES: entries of the same module (same fingerprint prefix) that did not match, and why.
void explain_miss(const fs::path& dir, const ExecutableHeader& now) {
  std::string prefix = now.fingerprint.substr(0, 16) + "-";
  std::error_code ec;
  std::string lines;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with(prefix) || it->path().extension() != kExt) continue;
    std::string bytes;
    if (!read_file(it->path(), bytes)) continue;
    try {
      Decoded d = decode(bytes);
      if (d.header.fingerprint != now.fingerprint) continue;
      auto why = incompatibilities(d.header, now, true);
      std::string reason = why.empty() ? "a key of another format" : fmt::format("{}", fmt::join(why, "; "));
      lines += fmt::format("\n  * {}: {}", name, reason);
    } catch (const std::exception& e) {
      lines += fmt::format("\n  * {}: unreadable ({})", name, e.what());
    }
  }
  std::string msg = fmt::format("[jitx] PERSISTENT CACHE MISS for '{}' (module {}) in {}: ", now.name,
                                now.fingerprint, dir.string());
  msg += lines.empty() ? "no entry of this module" : "entries of this module exist but do not match:" + lines;
  detail::log_line(msg);
}

/// Loads the entry at path for `module`, or returns nullptr (absent, or bad: then logged and removed).
std::shared_ptr<runtime::Executable> load(runtime::Backend& backend, const std::shared_ptr<const hlo::Module>& module,
                                          const runtime::CompileOptions& options, const ExecutableHeader& now,
                                          const fs::path& path) {
  std::string bytes;
  if (!read_file(path, bytes)) return nullptr;
  std::string problem;
  try {
    Decoded d = decode(bytes);
    auto why = incompatibilities(d.header, now, true);
    if (d.header.fingerprint != now.fingerprint) why.push_back("it holds another module");
    if (d.header.key != now.key) why.push_back("its key differs");
    if (why.empty()) {
      auto it = d.sections.find(kBackendSection);
      if (it == d.sections.end()) throw RuntimeError("the entry has no backend section");
      auto exe = backend.deserialize(module, options, it->second);
      std::error_code ec;  // least recently used eviction goes by mtime: a load makes the entry recent
      fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
      return exe;
    }
    problem = fmt::format("does not match this process: {}", fmt::join(why, "; "));
  } catch (const std::exception& e) {
    problem = e.what();
  }
  log(fmt::format("{}: {}; removed it, compiling", path.string(), problem));
  remove_entry(path);
  return nullptr;
}
}  // namespace

std::string entry_path(const std::string& dir, const ExecutableHeader& header) {
  return (fs::path(dir) / fmt::format("{}-{}{}", header.fingerprint.substr(0, 16), header.key, kExt)).string();
}

std::shared_ptr<runtime::Executable> compile(runtime::Backend& backend, std::shared_ptr<const hlo::Module> module,
                                             runtime::CompileOptions options, const Sections& extra,
                                             CacheResult* result) {
  CacheResult local;
  CacheResult& r = result ? *result : local;
  const std::string dir = config().compilation_cache_dir;
  auto t0 = Clock::now();
  if (dir.empty() || !backend.can_serialize() || hlo::has_host_callback(*module)) {
    auto exe = backend.compile(module, options);
    r.ms = ms_since(t0);
    return exe;
  }
  r.used = true;
  options.serializable = true;
  ExecutableHeader header = current_header(backend, *module, options);
  fs::path path = entry_path(dir, header);
  r.path = path.string();
  if (auto exe = load(backend, module, options, header, path)) {
    r.loaded = true;
    r.ms = ms_since(t0);
    return exe;
  }
  if (config().explain_cache_misses) explain_miss(dir, header);
  auto t1 = Clock::now();
  auto exe = backend.compile(module, options);
  r.ms = ms_since(t1);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    note_read_only(dir, ec.message());
    return exe;
  }
  Sections sections = extra;
  sections[kHloSection] = hlo::print_hlo(*module);
  sections[kBackendSection] = backend.serialize(*exe);
  std::string bytes = encode(header, sections);
  if (store(path, bytes)) {
    r.stored = true;
    log(fmt::format("stored '{}' ({} bytes) as {}", module->name, bytes.size(), path.string()));
    evict(dir, path);
  }
  return exe;
}

}  // namespace jitx::cache
