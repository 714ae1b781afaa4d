// The CPU backend's intra-op thread pool: parallel_for (parallel.h) on workers that spin briefly between jobs.
//
// A jitted program runs its kernels and GEMMs a few microseconds apart. A pool whose workers sleep after every job
// (Eigen's ThreadPool, which this replaces) pays a futex wake-up and a reschedule per job, tens of microseconds on a
// VM, more than a 128^3 GEMM's second half is worth. Here a worker that finishes a job spins (with `pause`) for
// kSpin, watching a generation counter, and only then sleeps on it (std::atomic::wait, a futex); a submitter
// notifies only when some worker sleeps, and wakes at most as many as the job has tasks beyond its own.
//
// One job at a time: a parallel_for that finds the pool taken (another thread's job) or that runs inside a task (an
// output fusion's epilogue inside a GEMM tile) runs its tasks inline, on its own thread.
//
// A job lives on its submitter's stack. A worker announces itself (active_) before it reads the job pointer; the
// submitter, once every task is claimed, clears the pointer and waits for active_ to reach zero, so no worker still
// holds the job when parallel_for returns (all sequentially consistent: either the worker sees the pointer cleared,
// or the submitter sees the worker).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define JITX_PAUSE() _mm_pause()
#else
#define JITX_PAUSE() std::this_thread::yield()
#endif

#include "backends/cpu/parallel.h"
#include "core/intra_op.h"

namespace jitx::cpu {
namespace {

using Clock = std::chrono::steady_clock;
// How long a worker spins for the next job before it sleeps: long enough to span the gap between a program's
// kernels (a few microseconds each), short enough that an idle process gives its cores back at once.
constexpr auto kSpin = std::chrono::microseconds(200);

thread_local bool t_in_task = false;  // a pool task runs on this thread (nested parallel_for runs inline)

struct Job {
  const std::function<void(int64_t)>* fn;
  int64_t n;
  std::atomic<int64_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;

  /// Claims and runs tasks until none is left; on a pool thread (in_pool) a nested parallel_for runs inline.
  void run_tasks(bool in_pool) {
    bool was = t_in_task;
    t_in_task = was || in_pool;
    for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      try {
        (*fn)(i);
      } catch (...) {
        std::lock_guard<std::mutex> l(error_mu);
        if (!error) error = std::current_exception();
      }
    }
    t_in_task = was;
  }
};

class SpinPool {
 public:
  explicit SpinPool(int threads) : threads_(threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  // The pool lives until exit (it is never destroyed), so its workers are never joined.

  int threads() const { return threads_; }
  bool warm() const { return sleepers_.load(std::memory_order_relaxed) == 0; }

  /// Runs job's tasks here and on the workers; false when the pool is taken (the caller runs them inline).
  bool run(Job& job) {
    std::unique_lock<std::mutex> lock(submit_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    job_.store(&job);
    generation_.fetch_add(1);
    if (int sleeping = sleepers_.load(); sleeping > 0) {
      int64_t wake = std::min<int64_t>(sleeping, job.n - 1);
      for (int64_t i = 0; i < wake; ++i) generation_.notify_one();
    }
    job.run_tasks(true);
    job_.store(nullptr);
    for (int spins = 0; active_.load() != 0; ++spins) {
      if (spins < 4096) JITX_PAUSE();
      else std::this_thread::yield();  // a worker descheduled mid-task (a busy machine): give it the core
    }
    return true;
  }

 private:
  void work() {
    uint32_t seen = generation_.load();
    for (;;) {
      uint32_t g = generation_.load(std::memory_order_acquire);
      auto until = Clock::now() + kSpin;
      for (int spins = 0; g == seen; g = generation_.load(std::memory_order_acquire)) {
        JITX_PAUSE();
        if (++spins % 64 == 0 && Clock::now() > until) {
          sleepers_.fetch_add(1);
          generation_.wait(seen);
          sleepers_.fetch_sub(1);
          until = Clock::now() + kSpin;
        }
      }
      seen = g;
      active_.fetch_add(1);
      if (Job* job = job_.load()) job->run_tasks(true);
      active_.fetch_sub(1);
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex submit_;
  std::atomic<Job*> job_{nullptr};
  std::atomic<uint32_t> generation_{0};  // 32 bits: std::atomic::wait is a futex on it
  std::atomic<int> sleepers_{0}, active_{0};
};

SpinPool& spin_pool() {
  static SpinPool* p = new SpinPool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return *p;
}

}  // namespace

int pool_threads() { return spin_pool().threads(); }

bool pool_warm() { return spin_pool().warm(); }

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  Job job{&fn, n};
  if (n == 1 || t_in_task || detail::intra_op_serial() || spin_pool().threads() <= 1 || !spin_pool().run(job))
    job.run_tasks(false);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace jitx::cpu
