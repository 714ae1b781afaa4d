// The logic of a stream-ordered caching allocator for device memory, independent of the driver (its raw
// allocation and free are functions given to it, cuMemAlloc/cuMemFree on a GPU): freed blocks are kept per stream
// and handed out again to work on the same stream at once (stream order makes that safe, as PyTorch's and
// PJRT's allocators do); another stream gets them only after release_cached(), which waits for nothing and so must
// be called when the device is idle. GpuDevice (cuda_runtime.h) uses it over cuMemAlloc; tests/cuda_codegen_test.cpp
// checks its logic, tests/cuda_fake_test.cpp its use.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jitx::cuda {

class CachingAllocator {
 public:
  using RawAlloc = std::function<uint64_t(size_t)>;  // returns 0 when the device is out of memory
  using RawFree = std::function<void(uint64_t)>;
  CachingAllocator(RawAlloc alloc, RawFree free) : alloc_(std::move(alloc)), free_(std::move(free)) {}
  ~CachingAllocator() { release_cached(); }

  /// Sizes are rounded up: to 512 bytes below 1 MiB, to 2 MiB above (fewer distinct sizes, more reuse).
  static size_t round_size(size_t bytes);
  /// A block of at least `bytes` for work on `stream`: the smallest cached block of that stream that fits and
  /// wastes at most a quarter of itself, else a new raw allocation; when that fails, the cache is released and
  /// the allocation retried once; then RuntimeError("out of device memory").
  uint64_t allocate(size_t bytes, int stream);
  /// Returns the block to `stream`'s cache (it must be `allocate`d's and not yet freed: else RuntimeError).
  void deallocate(uint64_t ptr);
  /// Frees every cached (not in use) block.
  void release_cached();

  size_t in_use_bytes() const;
  size_t cached_bytes() const;
  int64_t raw_allocations() const { return raw_allocs_; }

 private:
  struct Block {
    size_t size;
    int stream;
  };
  RawAlloc alloc_;
  RawFree free_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Block> in_use_;
  std::map<std::pair<int, size_t>, std::vector<uint64_t>> cached_;  // (stream, size) -> blocks
  size_t in_use_bytes_ = 0, cached_bytes_ = 0;
  int64_t raw_allocs_ = 0;
  void release_locked();
};

}  // namespace jitx::cuda
