// Storage: a 64-byte aligned, reference-counted block of host memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace jitx::detail {

class Storage {
 public:
  /// Allocates nbytes (at least 1) aligned to 64 bytes; throws RuntimeError when memory runs out.
  static std::shared_ptr<Storage> allocate(size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() { return ptr_; }
  const void* data() const { return ptr_; }
  size_t nbytes() const { return nbytes_; }

 private:
  Storage(void* p, size_t n) : ptr_(p), nbytes_(n) {}
  void* ptr_;
  size_t nbytes_;
};

}  // namespace jitx::detail
