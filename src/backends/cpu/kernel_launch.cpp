// The partitioned launch of a compiled kernel over its loop space, shared by the runtime's kernel steps and the
// library ops that run emitted kernels (output fusions' epilogues).
#include <algorithm>
#include <atomic>

#include "backends/cpu/kernels.h"
#include "backends/cpu/parallel.h"

namespace jitx::cpu {

void run_kernel(KernelFn fn, void* const* bufs, const LoopSpace& sp) {
  int64_t work = sp.work();
  int threads = pool_threads();
  // Measured on a 2-core VM: below 1 << 16 element reads per chunk, waking a sleeping pool thread costs more than
  // it saves; a spinning one (the pool stays awake for a while after each job, thread_pool.cpp) takes a job in
  // well under a microsecond, so while the pool is warm a chunk may be 4x smaller.
  const int64_t min_work_per_chunk = pool_warm() ? 1 << 14 : 1 << 16;
  // Up to 8 chunks per thread, taken dynamically: on a busy machine a thread that is descheduled for a while
  // does not hold up the kernel by a whole static share.
  int64_t chunks = std::min<int64_t>(int64_t{threads} * 8, work / min_work_per_chunk);
  bool by_rows = sp.rows >= chunks;
  if (!by_rows) {
    chunks = std::min(chunks, (sp.cols + 15) / 16);
    // A reduction split by columns (a column sum) reads every row once per chunk, a run as wide as the chunk:
    // one chunk per thread keeps those runs as long as they can be.
    if (sp.work_per_point > 1) chunks = std::min<int64_t>(chunks, threads);
  }
  if (threads <= 1 || chunks <= 1) {
    fn(bufs, 0, sp.rows, 0, sp.cols);
    return;
  }
  // One pointer captured, so the std::function holding the task allocates nothing.
  struct Shared {
    KernelFn fn;
    void* const* bufs;
    const LoopSpace& sp;
    int64_t chunks;
    bool by_rows;
    std::atomic<int64_t> next{0};
  } sh{fn, bufs, sp, chunks, by_rows};
  parallel_for(std::min<int64_t>(threads, chunks), [s = &sh](int64_t) {
    const LoopSpace& sp = s->sp;
    for (int64_t p, n = s->chunks; (p = s->next.fetch_add(1)) < n;) {
      if (s->by_rows) {
        s->fn(s->bufs, sp.rows * p / n, sp.rows * (p + 1) / n, 0, sp.cols);
      } else {
        // Column blocks of whole 16-lane vectors, so no two threads write one cache line's worth of a vector.
        int64_t lo = sp.cols * p / n / 16 * 16, hi = p + 1 == n ? sp.cols : sp.cols * (p + 1) / n / 16 * 16;
        s->fn(s->bufs, 0, sp.rows, lo, hi);
      }
    }
  });
}

}  // namespace jitx::cpu
