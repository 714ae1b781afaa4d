// The fake CUDA driver's internals shared by its files (tests/fake_cuda_driver.cpp, tests/fake_cublaslt.cpp): the
// context and stream objects behind the Driver API's handles, and the allocation table and counters.
#pragma once
#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

struct CUctx_st {
  int device = 0;
  int refs = 0;
  std::atomic<CUresult> sticky{CUDA_SUCCESS};
};

struct CUstream_st {
  CUctx_st* ctx;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> q;
  bool busy = false, stop = false;
  std::thread t;
  explicit CUstream_st(CUctx_st* c) : ctx(c), t([this] { loop(); }) {}
  ~CUstream_st() {
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_all();
    t.join();  // runs what is queued first (the real cuStreamDestroy also lets queued work finish)
  }
  void push(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> l(mu);
      q.push_back(std::move(f));
    }
    cv.notify_all();
  }
  void loop() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> l(mu);
        cv.wait(l, [&] { return stop || !q.empty(); });
        if (q.empty()) return;
        f = std::move(q.front());
        q.pop_front();
        busy = true;
      }
      f();
      {
        std::lock_guard<std::mutex> l(mu);
        busy = false;
      }
      cv.notify_all();
    }
  }
  void drain() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return q.empty() && !busy; });
  }
};

namespace jitx_fake {
void count(const char* name, int64_t by = 1);  // a test-visible counter (jitx_fake_cuda_counter)
void delay();                                  // JITX_FAKE_CUDA_DELAY_MS before a stream's work
bool device_range(uintptr_t p, size_t n);      // [p, p + n) lies within one device allocation
}  // namespace jitx_fake
