// Little-endian byte strings for serialised forms (executables, the compilation cache): a writer that appends
// fixed-width integers and length-prefixed strings, and a reader that throws RuntimeError naming what it reads
// when the bytes run out.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/errors.h"

namespace jitx::detail {

class ByteWriter {
 public:
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    out.append(s.data(), s.size());
  }
  void raw(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  std::string out;
};

class ByteReader {
 public:
  ByteReader(std::string_view bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  uint32_t u32() { return fixed<uint32_t>(); }
  uint64_t u64() { return fixed<uint64_t>(); }
  std::string_view view(size_t n) {
    need(n);
    std::string_view v = bytes_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  std::string str() { return std::string(view(static_cast<size_t>(u64()))); }
  /// A u64 element count, refused (RuntimeError) when its elements, of at least `min_bytes` each, cannot fit in
  /// the bytes left: a corrupted count never becomes a huge allocation.
  size_t count(size_t min_bytes) {
    uint64_t n = u64();
    if (n > left() / (min_bytes ? min_bytes : 1))
      throw RuntimeError(fmt::format("{} is corrupted: a count of {} at offset {} with {} bytes left", what_, n,
                                     pos_ - sizeof n, left()));
    return static_cast<size_t>(n);
  }
  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  template <class T>
  T fixed() {
    T v;
    std::memcpy(&v, view(sizeof v).data(), sizeof v);
    return v;
  }
  void need(size_t n) const {
    if (n > left())
      throw RuntimeError(fmt::format("{} is truncated: {} more bytes needed at offset {}, {} left", what_, n, pos_,
                                     left()));
  }
  std::string_view bytes_;
  std::string what_;
  size_t pos_ = 0;
};

}  // namespace jitx::detail
