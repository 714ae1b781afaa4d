// Whole-file reads, atomic writes (temporary file + rename) and the Array <-> host-values bridge of the formats.
#include "io/io_util.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "runtime/concrete.h"
#include "runtime/runtime.h"

namespace jitx::io_detail {

std::string read_file(std::string_view op, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) io_error(op, path, "cannot open for reading: {}", std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  bool bad = std::ferror(f);
  int err = errno;
  std::fclose(f);
  if (bad) io_error(op, path, "read failed: {}", std::strerror(err));
  return out;
}

void write_bytes(std::string_view op, const std::string& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) io_error(op, path, "cannot open for writing: {}", std::strerror(errno));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fflush(f) == 0 && ok;
  int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) io_error(op, path, "write failed: {}", std::strerror(err ? err : errno));
}

void write_atomic(std::string_view op, const std::string& path, const std::function<void(const std::string&)>& write) {
  static std::atomic<uint64_t> counter{0};
  // A missing directory is reported against the caller's path, not the temporary file's.
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code dir_ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, dir_ec))
    io_error(op, path, "cannot write: the directory '{}' does not exist", dir.string());
  std::string tmp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter.fetch_add(1));
  try {
    write(tmp);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    io_error(op, path, "cannot rename the finished temporary file into place: {}", std::strerror(err));
  }
}

detail::Literal host_values(const Array& a, std::string_view op) {
  if (!a.valid()) throw TypeError(detail::error_message(op, "got an empty (default-constructed) Array"));
  if (a.is_tracer())
    throw TypeError(detail::error_message(
        op, fmt::format("got a traced value {}: arrays can be saved only outside jit/grad/vmap (return the value and "
                        "save it after the call)", a.aval().str())));
  return detail::concrete_buffer(a, op)->literal();
}

Array from_literal(const detail::Literal& lit) {
  return detail::make_concrete(runtime::Buffer::from_literal(lit, runtime::Client::get().default_device()));
}

int64_t checked_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

}  // namespace jitx::io_detail
