// Storage: a 64-byte aligned, reference-counted block of host memory (jitx's own, or the user's, wrapped).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace jitx::detail {

class Storage {
 public:
  /// Allocates nbytes (at least 1) aligned to 64 bytes; throws RuntimeError when memory runs out.
  static std::shared_ptr<Storage> allocate(size_t nbytes);
  /// Memory jitx did not allocate (from_host, a moved-in vector, DLPack): `owner` keeps it alive and its deleter
  /// runs when the last reference to this Storage goes. `reusable`: whether a donating call may write its outputs
  /// into it in place (a moved-in vector: yes; memory the user still sees: no). p must be 64-byte aligned.
  static std::shared_ptr<Storage> wrap(void* p, size_t nbytes, std::shared_ptr<void> owner, bool reusable);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() { return ptr_; }
  const void* data() const { return ptr_; }
  size_t nbytes() const { return nbytes_; }
  /// Whether an executable may overwrite this memory when its array is donated.
  bool reusable() const { return reusable_; }

 private:
  Storage(void* p, size_t n) : ptr_(p), nbytes_(n) {}
  void* ptr_;
  size_t nbytes_;
  std::shared_ptr<void> owner_;  // set for wrapped memory: not returned to the allocation cache
  bool reusable_ = true;
};

}  // namespace jitx::detail
