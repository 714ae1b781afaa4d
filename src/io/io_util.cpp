// Whole-file reads, atomic writes (temporary file + rename) and the Array <-> host-values bridge of the formats.
#include "io/io_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "jitx/config.h"
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

namespace {
/// path with its symbolic links followed (a dangling link's target, as open() would create it); path itself when it
/// is not a link.
std::filesystem::path follow_links(std::string_view op, const std::filesystem::path& path) {
  std::filesystem::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec))) return p;
    std::filesystem::path target = std::filesystem::read_symlink(p, ec);
    if (ec) io_error(op, path.string(), "cannot read the symbolic link: {}", ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  io_error(op, path.string(), "too many levels of symbolic links");
}
}  // namespace

void write_atomic(std::string_view op, const std::string& given, const std::function<void(const std::string&)>& write) {
  static std::atomic<uint64_t> counter{0};
  // As NumPy's open(path, "wb"): a symbolic link is written through (its target replaced, the link kept), and a
  // device, a pipe or a file with other hard links is written in place (never replaced by a new regular file).
  // Only a plain file is replaced atomically (temporary file + rename), keeping its permission bits.
  const std::string path = follow_links(op, given).string();
  struct stat st {};
  bool exists = ::stat(path.c_str(), &st) == 0;
  bool in_place = exists && (!S_ISREG(st.st_mode) || st.st_nlink > 1);
  // A missing directory is reported against the caller's path, not the temporary file's.
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code dir_ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, dir_ec))
    io_error(op, given, "cannot write: the directory '{}' does not exist", dir.string());
  // In place: the temporary file goes to the system's temporary directory (a device's directory, /dev, is not for
  // files), then its bytes are copied over the target.
  std::filesystem::path tmp_dir = in_place ? std::filesystem::temp_directory_path(dir_ec) : dir;
  std::string base = in_place ? std::string("jitx-save") : std::filesystem::path(path).filename().string();
  std::string tmp = (tmp_dir / fmt::format("{}.tmp.{}.{}", base, ::getpid(), counter.fetch_add(1))).string();
  auto drop_tmp = [&] {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
  };
  try {
    write(tmp);
    if (in_place) write_bytes(op, path, read_file(op, tmp));
  } catch (...) {
    drop_tmp();
    throw;
  }
  if (in_place) {
    drop_tmp();
    return;
  }
  if (exists) {  // the replaced file's permission bits (and owner, where allowed), not the umask's defaults
    ::chmod(tmp.c_str(), st.st_mode & 07777);
    if (::chown(tmp.c_str(), st.st_uid, st.st_gid) != 0) {
      // Not permitted to give the file away: it keeps the writer's ownership, as a rewritten file would.
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    drop_tmp();
    io_error(op, given, "cannot rename the finished temporary file into place: {}", std::strerror(err));
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
  // Without x64 a file's 64-bit values load as 32-bit ones, as jnp.asarray(np.load(...)) does and as jitx's array()
  // takes host data.
  DType want = canonicalize_dtype(lit.dtype);
  if (want != lit.dtype) {
    detail::Literal c = detail::Literal::make(want, lit.dims);
    detail::Literal::convert(lit.data(), lit.dtype, c.data(), want, static_cast<size_t>(lit.size()));
    return detail::make_concrete(runtime::Buffer::from_literal(c, runtime::Client::get().default_device()));
  }
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
