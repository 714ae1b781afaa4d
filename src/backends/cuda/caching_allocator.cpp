// The caching allocator's logic (see caching_allocator.h).
#include "backends/cuda/caching_allocator.h"

#include <fmt/format.h>

#include "jitx/error.h"

namespace jitx::cuda {

size_t CachingAllocator::round_size(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{2} << 20, kSmallLimit = size_t{1} << 20;
  if (bytes == 0) bytes = 1;
  size_t q = bytes < kSmallLimit ? kSmall : kLarge;
  return (bytes + q - 1) / q * q;
}

uint64_t CachingAllocator::allocate(size_t bytes, int stream) {
  size_t size = round_size(bytes);
  std::lock_guard<std::mutex> l(mu_);
  // The smallest cached block of this stream that fits without wasting more than a quarter of itself.
  for (auto it = cached_.lower_bound({stream, size}); it != cached_.end() && it->first.first == stream; ++it) {
    if (it->first.second - size > it->first.second / 4) break;
    if (it->second.empty()) continue;
    uint64_t p = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= it->first.second;
    in_use_[p] = {it->first.second, stream};
    in_use_bytes_ += it->first.second;
    return p;
  }
  uint64_t p = alloc_(size);
  if (p == 0) {  // out of memory: give the cache back and try once more
    release_locked();
    p = alloc_(size);
  }
  if (p == 0)
    throw RuntimeError(fmt::format("cuda allocator: out of device memory allocating {} bytes ({} in use)", size,
                                   in_use_bytes_));
  ++raw_allocs_;
  in_use_[p] = {size, stream};
  in_use_bytes_ += size;
  return p;
}

void CachingAllocator::deallocate(uint64_t ptr) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = in_use_.find(ptr);
  if (it == in_use_.end())
    throw RuntimeError(fmt::format("cuda allocator: freeing {:#x}, which is not an allocated block (double free?)",
                                   ptr));
  Block b = it->second;
  in_use_.erase(it);
  in_use_bytes_ -= b.size;
  cached_[{b.stream, b.size}].push_back(ptr);
  cached_bytes_ += b.size;
}

void CachingAllocator::release_cached() {
  std::lock_guard<std::mutex> l(mu_);
  release_locked();
}
void CachingAllocator::release_locked() {
  for (auto& [key, ptrs] : cached_)
    for (uint64_t p : ptrs) free_(p);
  cached_.clear();
  cached_bytes_ = 0;
}

size_t CachingAllocator::in_use_bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  return in_use_bytes_;
}
size_t CachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  return cached_bytes_;
}

}  // namespace jitx::cuda
