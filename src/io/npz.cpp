// The .npz format: a zip archive (through libzip) of .npy members named `<name>.npy`, as numpy.savez writes.
#include <zip.h>

#include <memory>
#include <set>

#include "io/io_util.h"

namespace jitx {
namespace {
using io_detail::io_error;

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

void write_npz(std::string_view op, const std::string& path, const NamedArrays& arrays, bool compress) {
  std::set<std::string> seen;
  std::vector<std::string> blobs;  // libzip reads them at zip_close: they must outlive it
  blobs.reserve(arrays.size());
  for (auto& [name, a] : arrays) {
    if (name.empty()) throw IOError(detail::error_message(op, fmt::format("'{}': an array name is empty", path)));
    if (!seen.insert(name).second)
      throw IOError(detail::error_message(op, fmt::format("'{}': the name '{}' is given twice", path, name)));
    blobs.push_back(npy_bytes(a));
  }
  io_detail::write_atomic(op, path, [&](const std::string& tmp) {
    int err = 0;
    zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    if (!z) io_error(op, tmp, "cannot create the zip archive: {}", zip_error_text(err));
    auto fail = [&](const std::string& what) {
      std::string msg = zip_strerror(z);
      zip_discard(z);
      io_error(op, path, "{}: {}", what, msg);
    };
    for (size_t i = 0; i < arrays.size(); ++i) {
      zip_source_t* src = zip_source_buffer(z, blobs[i].data(), blobs[i].size(), 0);
      if (!src) fail("cannot add '" + arrays[i].first + "'");
      zip_int64_t idx = zip_file_add(z, (arrays[i].first + ".npy").c_str(), src, ZIP_FL_ENC_UTF_8);
      if (idx < 0) {
        zip_source_free(src);
        fail("cannot add '" + arrays[i].first + "'");
      }
      if (zip_set_file_compression(z, static_cast<zip_uint64_t>(idx), compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0)
        fail("cannot set the compression of '" + arrays[i].first + "'");
    }
    if (arrays.empty()) {  // libzip writes no file for an empty archive: numpy writes the 22-byte end record
      zip_discard(z);
      io_detail::write_bytes(op, tmp, std::string("PK\x05\x06", 4) + std::string(18, '\0'));
      return;
    }
    if (zip_close(z) != 0) fail("writing the archive failed");
  });
}

NamedArrays map_items(const std::map<std::string, Array>& m) { return NamedArrays(m.begin(), m.end()); }
}  // namespace

void savez(const std::string& path, const NamedArrays& arrays, Loc loc) {
  detail::ApiScope s(loc);
  write_npz("savez", path, arrays, false);
}
void savez(const std::string& path, const std::map<std::string, Array>& arrays, Loc loc) {
  detail::ApiScope s(loc);
  write_npz("savez", path, map_items(arrays), false);
}
void savez_compressed(const std::string& path, const NamedArrays& arrays, Loc loc) {
  detail::ApiScope s(loc);
  write_npz("savez_compressed", path, arrays, true);
}
void savez_compressed(const std::string& path, const std::map<std::string, Array>& arrays, Loc loc) {
  detail::ApiScope s(loc);
  write_npz("savez_compressed", path, map_items(arrays), true);
}

NamedArrays load_npz_items(const std::string& path, Loc loc) {
  detail::ApiScope s(loc);
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!z) {
    if (err == ZIP_ER_NOENT || err == ZIP_ER_OPEN || err == ZIP_ER_READ)
      io_error("load_npz", path, "cannot open: {}", zip_error_text(err));
    io_error("load_npz", path, "not a valid .npz (zip) archive: {}", zip_error_text(err));
  }
  std::unique_ptr<zip_t, int (*)(zip_t*)> guard(z, [](zip_t* p) { zip_discard(p); return 0; });
  NamedArrays out;
  zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
      io_error("load_npz", path, "cannot read member {} of the archive: {}", i, zip_strerror(z));
    std::string name = st.name;
    if (!name.empty() && name.back() == '/') continue;  // a directory entry
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      io_error("load_npz", path, "member '{}' is not a .npy file (an .npz archive holds only .npy members)", name);
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    if (!f) io_error("load_npz", path, "cannot open member '{}': {}", name, zip_strerror(z));
    std::string bytes;
    char buf[1 << 16];
    zip_int64_t got;
    while ((got = zip_fread(f, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<size_t>(got));
    std::string ferr = got < 0 ? zip_file_strerror(f) : "";
    int closed = zip_fclose(f);
    if (got < 0 || closed != 0)
      io_error("load_npz", path, "member '{}' is corrupted: {}", name, got < 0 ? ferr : zip_error_text(closed));
    if ((st.valid & ZIP_STAT_SIZE) && bytes.size() != st.size)
      io_error("load_npz", path, "member '{}' is truncated: {} of {} bytes", name, bytes.size(), st.size);
    std::string key = name.substr(0, name.size() - 4);
    out.emplace_back(key, from_npy_bytes(bytes, path + ":" + name, loc));
  }
  return out;
}

std::map<std::string, Array> load_npz(const std::string& path, Loc loc) {
  NamedArrays items = load_npz_items(path, loc);
  return std::map<std::string, Array>(items.begin(), items.end());
}

namespace detail {
std::vector<Array> match_leaves(const std::string& path, const NamedArrays& like, std::map<std::string, Array> file,
                                Loc loc) {
  ApiScope s(loc);
  std::vector<Array> out;
  for (auto& [name, leaf] : like) {
    auto it = file.find(name);
    if (it == file.end())
      io_error("load", path, "the checkpoint has no array '{}' (the tree passed as `like` has it; the file has {} "
               "other arrays)", name, file.size());
    const Array& got = it->second;
    if (got.shape() != leaf.shape() || got.dtype() != leaf.dtype())
      io_error("load", path, "array '{}' is {} in the file but {} in `like`", name, got.aval().str(),
               leaf.aval().str());
    out.push_back(got);
    file.erase(it);
  }
  if (!file.empty())
    io_error("load", path, "the file has arrays that the tree passed as `like` has not, e.g. '{}' ({} in all)",
             file.begin()->first, file.size());
  return out;
}
}  // namespace detail

}  // namespace jitx
