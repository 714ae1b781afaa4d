// Aligned host allocations, with a small free-list cache per size class so hot loops reuse blocks.
#include "core/storage.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/errors.h"

namespace jitx::detail {
namespace {
constexpr size_t kAlign = 64;
constexpr size_t kMaxCachedBytes = size_t(1) << 30;

// Blocks are rounded up to a size class (multiples of 64 bytes below 4 KiB, powers of two above)
// and freed blocks wait in a per-class list for reuse: fresh pages cost ~11 us per 4 KiB to fault in.
size_t size_class(size_t n) {
  if (n > (size_t(1) << 62)) return n;  // no machine has this much; aligned_alloc fails and says so
  n = (n + kAlign - 1) / kAlign * kAlign;
  if (n <= 4096) return n;
  size_t c = 4096;
  while (c < n) c <<= 1;
  return c;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free_lists;
  size_t cached_bytes = 0;
  size_t live_bytes = 0;  // held by Storage objects now (for the out-of-memory message)
};
Cache& cache() {
  static Cache* c = new Cache();  // leaked on purpose: outlives static Storage owners
  return *c;
}
}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t nbytes) {
  size_t cls = size_class(nbytes == 0 ? 1 : nbytes);
  void* p = nullptr;
  {
    auto& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free_lists.find(cls);
    if (it != c.free_lists.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      c.cached_bytes -= cls;
      c.live_bytes += cls;  // one lock for a cached block (every small call's output)
    }
  }
  if (p) return std::shared_ptr<Storage>(new Storage(p, cls));
  p = std::aligned_alloc(kAlign, cls);
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!p)
    throw RuntimeError(fmt::format("[allocate] out of host memory allocating {} bytes ({:.1f} MiB); jitx holds {} "
                                   "bytes ({:.1f} MiB) in live arrays and {} bytes in its cache of freed blocks",
                                   nbytes, nbytes / 1048576.0, c.live_bytes, c.live_bytes / 1048576.0,
                                   c.cached_bytes));
  c.live_bytes += cls;
  return std::shared_ptr<Storage>(new Storage(p, cls));
}

std::shared_ptr<Storage> Storage::wrap(void* p, size_t nbytes, std::shared_ptr<void> owner, bool reusable) {
  JITX_ASSERT(owner != nullptr && reinterpret_cast<uintptr_t>(p) % kAlign == 0, "Storage::wrap: aligned, owned");
  auto s = std::shared_ptr<Storage>(new Storage(p, nbytes));
  s->owner_ = std::move(owner);
  s->reusable_ = reusable;
  return s;
}

Storage::~Storage() {
  if (owner_) return;  // the owner's deleter runs as owner_ goes
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.live_bytes -= nbytes_;
  if (c.cached_bytes + nbytes_ <= kMaxCachedBytes) {
    c.free_lists[nbytes_].push_back(ptr_);
    c.cached_bytes += nbytes_;
  } else {
    std::free(ptr_);
  }
}

}  // namespace jitx::detail
