// The per-thread queue of asynchronous collectives (collective_queue.h).
#include "core/collective_queue.h"

#include <chrono>

#include "core/communicator.h"

namespace jitx::detail {

CollectiveQueue& CollectiveQueue::this_thread() {
  thread_local CollectiveQueue q;
  return q;
}

CollectiveQueue::~CollectiveQueue() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void CollectiveQueue::start(const void* key, std::function<void()> job) {
  uint64_t t = ++issued_;
  tickets_[key] = t;
  collective_totals().async_calls++;
  {
    std::lock_guard<std::mutex> l(mu_);
    jobs_.emplace_back(t, std::move(job));
    if (!worker_.joinable()) worker_ = std::thread([this] { work(); });
  }
  work_cv_.notify_one();
}

void CollectiveQueue::work() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    work_cv_.wait(l, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopped with nothing left to do
    auto [t, job] = std::move(jobs_.front());
    jobs_.pop_front();
    l.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    l.lock();
    if (error) errors_[t] = error;
    completed_.store(t, std::memory_order_release);
    done_cv_.notify_all();
  }
}

void CollectiveQueue::wait_for(uint64_t ticket) {
  if (completed_.load(std::memory_order_acquire) >= ticket) return;
  auto t0 = std::chrono::steady_clock::now();
  // A short spin first: a collective that is nearly done costs no sleep and wake-up.
  for (int k = 0; k < 256 && completed_.load(std::memory_order_acquire) < ticket; ++k) std::this_thread::yield();
  if (completed_.load(std::memory_order_acquire) < ticket) {
    std::unique_lock<std::mutex> l(mu_);
    done_cv_.wait(l, [&] { return completed_.load(std::memory_order_acquire) >= ticket; });
  }
  collective_totals().wait_nanoseconds +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

void CollectiveQueue::finish(const void* key) {
  auto it = tickets_.find(key);
  if (it == tickets_.end()) return;
  uint64_t t = it->second;
  tickets_.erase(it);
  wait_for(t);
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto e = errors_.find(t);
    if (e != errors_.end()) {
      error = e->second;
      errors_.erase(e);
    }
  }
  if (error) std::rethrow_exception(error);
}

void CollectiveQueue::run_in_order(const std::function<void()>& job) {
  if (!in_flight()) return job();
  int key = 0;  // a key of this call's own
  start(&key, [&job] { job(); });
  finish(&key);
}

void CollectiveQueue::drain() noexcept {
  wait_for(issued_);
  tickets_.clear();
  std::lock_guard<std::mutex> l(mu_);
  errors_.clear();
}

void abandon_collectives(std::exception_ptr error) noexcept {
  auto& q = CollectiveQueue::this_thread();
  if (q.in_flight())
    if (Communicator* c = current_communicator()) c->abort(error);
  q.drain();
}

}  // namespace jitx::detail
