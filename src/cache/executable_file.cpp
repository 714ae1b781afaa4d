// The serialised executable's file format (executable_file.h): encoding, decoding with its checks, comparison.
#include "cache/executable_file.h"

#include <algorithm>
#include <set>
#include <sstream>

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include "core/bytes.h"
#include "core/errors.h"
#include "jitx/config.h"

namespace jitx::cache {
namespace {
constexpr std::string_view kMagic{"JITXEXE\0", 8};
constexpr uint32_t kZstd = 1;

std::vector<std::string*> fields(ExecutableHeader& h) {
  return {&h.jitx_version, &h.platform, &h.compiler, &h.triple, &h.cpu, &h.features,
          &h.settings,     &h.fingerprint, &h.key, &h.name};
}

std::string key_of(const ExecutableHeader& h) {
  std::string text = fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", kFormatVersion, h.jitx_version, h.platform,
                                 h.compiler, h.triple, h.cpu, h.features, h.settings, h.fingerprint);
  XXH128_hash_t k = XXH3_128bits(text.data(), text.size());
  return fmt::format("{:016x}{:016x}", k.high64, k.low64);
}

std::set<std::string> split(const std::string& s, char sep) {
  std::set<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) out.insert(part);
  return out;
}

/// "+avx512f,-sse4a" -> what one side has that the other lacks, for a readable difference of feature strings.
std::string feature_difference(const std::string& stored, const std::string& now) {
  auto a = split(stored, ','), b = split(now, ',');
  std::vector<std::string> only_stored, only_now;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_stored));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_now));
  return fmt::format("the entry's code was generated with {} where this CPU has {}", fmt::join(only_stored, ","),
                     fmt::join(only_now, ","));
}
}  // namespace

ExecutableHeader current_header(const runtime::Backend& backend, const hlo::Module& module,
                                const runtime::CompileOptions& options) {
  ExecutableHeader h;
  h.jitx_version = JITX_VERSION_STRING;
  h.platform = backend.name();
  runtime::TargetInfo t = backend.target();
  h.compiler = t.compiler;
  h.triple = t.triple;
  h.cpu = t.cpu;
  h.features = t.features;
  // Every setting that changes the generated code (dump, log, verification and cache-size settings do not).
  h.settings = fmt::format("allow_excess_precision={};enable_x64={};donated={}",
                           config().allow_excess_precision ? 1 : 0, config().enable_x64 ? 1 : 0,
                           fmt::join(options.donated_parameters, ","));
  h.fingerprint = module.fingerprint();
  h.key = key_of(h);
  h.name = module.name;
  return h;
}

std::string encode(const ExecutableHeader& header, const Sections& sections) {
  detail::ByteWriter payload;
  payload.u32(static_cast<uint32_t>(sections.size()));
  for (auto& [name, bytes] : sections) {
    payload.str(name);
    payload.str(bytes);
  }
  std::string packed(ZSTD_compressBound(payload.out.size()), '\0');
  size_t n = ZSTD_compress(packed.data(), packed.size(), payload.out.data(), payload.out.size(), 3);
  if (ZSTD_isError(n)) throw RuntimeError(fmt::format("[serialize] zstd: {}", ZSTD_getErrorName(n)));
  packed.resize(n);

  detail::ByteWriter w;
  w.raw(kMagic.data(), kMagic.size());
  w.u32(kFormatVersion);
  size_t size_at = w.out.size();
  w.u64(0);  // the file size, filled in below
  ExecutableHeader h = header;
  for (std::string* f : fields(h)) w.str(*f);
  w.u32(kZstd);
  w.u64(payload.out.size());
  w.raw(packed.data(), packed.size());
  uint64_t total = w.out.size() + sizeof(uint64_t);
  std::memcpy(w.out.data() + size_at, &total, sizeof total);
  w.u64(XXH3_64bits(w.out.data(), w.out.size()));
  return std::move(w.out);
}

Decoded decode(std::string_view bytes) {
  const char* what = "the serialised executable";
  if (bytes.size() < kMagic.size() + 4 + 8 + 8)
    throw RuntimeError(fmt::format("{} is truncated: {} bytes", what, bytes.size()));
  if (bytes.substr(0, kMagic.size()) != kMagic)
    throw RuntimeError(fmt::format("{} is not one: it does not start with jitx's magic bytes", what));
  detail::ByteReader r(bytes, what);
  r.view(kMagic.size());
  if (uint32_t v = r.u32(); v != kFormatVersion)
    throw RuntimeError(fmt::format("{} has format version {}, this jitx ({}) reads version {}", what, v,
                                   JITX_VERSION_STRING, kFormatVersion));
  uint64_t total = r.u64();
  if (bytes.size() < total)
    throw RuntimeError(fmt::format("{} is truncated: {} of its {} bytes", what, bytes.size(), total));
  if (bytes.size() > total)
    throw RuntimeError(fmt::format("{} is corrupted: {} bytes where its header says {}", what, bytes.size(), total));
  uint64_t sum;
  std::memcpy(&sum, bytes.data() + total - sizeof sum, sizeof sum);
  if (sum != XXH3_64bits(bytes.data(), total - sizeof sum))
    throw RuntimeError(fmt::format("{} is corrupted (checksum mismatch)", what));
  Decoded d;
  for (std::string* f : fields(d.header)) *f = r.str();
  uint32_t flags = r.u32();
  uint64_t raw_size = r.u64();
  std::string_view packed = r.view(r.left() - sizeof sum);
  std::string payload;
  if (flags & kZstd) {
    // A zstd block expands at most 2^15-fold (an RLE block: 4 bytes for 128 KiB), and a frame says its size: a
    // corrupted size is refused before it is allocated.
    if (raw_size / 32768 > packed.size() ||
        ZSTD_getFrameContentSize(packed.data(), packed.size()) != static_cast<unsigned long long>(raw_size))
      throw RuntimeError(fmt::format("{} is corrupted: its payload's size {} is not its compressed {} bytes'", what,
                                     raw_size, packed.size()));
    payload.resize(raw_size);
    size_t n = ZSTD_decompress(payload.data(), payload.size(), packed.data(), packed.size());
    if (ZSTD_isError(n) || n != raw_size)
      throw RuntimeError(fmt::format("{} is corrupted: its payload does not decompress", what));
  } else {
    payload = std::string(packed);
  }
  detail::ByteReader p(payload, "the serialised executable's payload");
  for (uint32_t k = p.u32(); k > 0; --k) {
    std::string name = p.str();
    d.sections[name] = p.str();
  }
  return d;
}

std::vector<std::string> incompatibilities(const ExecutableHeader& stored, const ExecutableHeader& now,
                                           bool settings) {
  std::vector<std::string> out;
  auto differ = [&](const char* what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(fmt::format("{}: the entry's is '{}', this process's '{}'", what, a, b));
  };
  differ("jitx version", stored.jitx_version, now.jitx_version);
  differ("platform", stored.platform, now.platform);
  differ("compiler", stored.compiler, now.compiler);
  differ("target triple", stored.triple, now.triple);
  differ("CPU", stored.cpu, now.cpu);
  if (stored.features != now.features)
    out.push_back("CPU features: " + feature_difference(stored.features, now.features));
  if (settings) differ("settings", stored.settings, now.settings);
  return out;
}

}  // namespace jitx::cache
