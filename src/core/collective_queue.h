// Asynchronous collectives: each thread that runs a partition's program hands its collectives, in program order, to
// one worker thread of its own, so the program computes on while they run (all-reduce-start ... all-reduce-done).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace jitx::detail {

/// The collectives of the partition the current thread runs. Every collective of a partition must reach its
/// communicator in program order (the k-th collective of each member meets the k-th of the others), so once one is
/// in flight, later ones (synchronous ones too) queue behind it on the same worker. The worker is started the
/// first time the thread starts a collective, and joined when the thread ends.
class CollectiveQueue {
 public:
  static CollectiveQueue& this_thread();
  ~CollectiveQueue();

  /// Runs `job` on the worker after every collective started before it; `key` (the start instruction) names it
  /// for finish(). A key still in flight may not be started again.
  void start(const void* key, std::function<void()> job);
  /// Waits for the collective started under `key` and rethrows its error; does nothing for a key not started
  /// (a start that ran synchronously). The time waited counts in collective_totals().wait_nanoseconds.
  void finish(const void* key);
  /// Runs `job` in order with the collectives in flight: at once on this thread when none is, else on the worker
  /// after them (this thread waits; its error is rethrown).
  void run_in_order(const std::function<void()>& job);
  bool in_flight() const { return completed_.load(std::memory_order_acquire) != issued_; }
  /// Waits for everything in flight and forgets their errors: a failing program calls it before its buffers go.
  void drain() noexcept;

 private:
  CollectiveQueue() = default;
  void wait_for(uint64_t ticket);
  void work();

  uint64_t issued_ = 0;                      // tickets handed out (this thread only)
  std::atomic<uint64_t> completed_{0};       // the worker's last finished ticket
  std::unordered_map<const void*, uint64_t> tickets_;  // this thread only
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::pair<uint64_t, std::function<void()>>> jobs_;
  std::map<uint64_t, std::exception_ptr> errors_;
  bool stop_ = false;
  std::thread worker_;
};

/// A program that fails while collectives are in flight on this thread: fails its communicator with `error` (so
/// no member waits for the rest of the program) and waits for them, before the program's buffers are released.
void abandon_collectives(std::exception_ptr error) noexcept;

}  // namespace jitx::detail
