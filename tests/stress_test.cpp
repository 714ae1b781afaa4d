// Stress: many threads call many jitted functions with changing shapes on several devices, with donation, while
// other threads create and drop jit objects and arrays. At the end every result was right, each function compiled
// once per signature, and the live buffers and executables are back at their starting counts.
#include <atomic>
#include <cmath>
#include <optional>
#include <set>
#include <thread>

#include "runtime/runtime.h"
#include "test_util.h"

using namespace jitx;

namespace {
constexpr int64_t kSizes[] = {1, 3, 8, 17, 64, 257};

std::vector<float> host_values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(((i * 37 + seed * 11) % 23) - 11) / 8;
  return v;
}
}  // namespace

TEST_CASE("stress: threads x functions x shapes x devices with donation, while others drop jits and arrays",
          "[stress][jit]") {
  auto ds = devices();
  // The test main sets two devices (JITX_CPU_DEVICE_COUNT overrides it): with one, donation never crosses devices.
  if (ds.size() < 2) WARN("one device: the cross-device donation is not exercised");
  int64_t buffers_before = runtime::live_buffers(), executables_before = runtime::live_executables();
  std::atomic<int64_t> wrong{0}, calls{0};
  std::string first_wrong;
  std::mutex wrong_mu;
  auto record = [&](bool ok, const std::string& what) {
    calls.fetch_add(1);
    if (ok) return;
    std::lock_guard<std::mutex> l(wrong_mu);
    if (wrong.fetch_add(1) == 0) first_wrong = what;
  };
  {
    // Exact in f32 whatever the contraction: small multiples of 1/8 times 2 or 4, plus small integers.
    auto axpy = jit([](Array x, Array y) { return x * 2.0f + y; });
    auto total = jit([](Array x) { return jnp::sum(x * 4.0f); });
    auto step = jit([](Array w, Array g) { return w - g * 0.5f; }, {.donate_argnums = {0}});
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int t = 0; t < 6; ++t) {
      workers.emplace_back([&, t] {
        for (int it = 0; it < 60; ++it) {
          int64_t n = kSizes[(t + it) % 6];
          Device dev = ds[static_cast<size_t>(it + t) % ds.size()];
          auto xv = host_values(n, t + it), yv = host_values(n, t * 7 + it + 1);
          Array x = device_put(array(xv, {n}), dev), y = device_put(array(yv, {n}), dev);
          Array a = axpy(x, y);
          Array s = total(x);
          // w is uncommitted: read on dev (queued behind this thread's and the others' work there), then donated
          // by a step that runs on the next device, which must not overwrite it before that read is done.
          Array w = array(yv, {n});
          Array read = axpy(x, w);
          Array g = device_put(array(xv, {n}), ds[static_cast<size_t>(it + t + 1) % ds.size()]);
          Array w2 = step(w, g);
          auto av = a.to_vector<float>(), wv = w2.to_vector<float>(), rv = read.to_vector<float>();
          double want_sum = 0;
          bool ok = true;
          for (int64_t i = 0; i < n; ++i) {
            size_t k = static_cast<size_t>(i);
            ok &= av[k] == xv[k] * 2.0f + yv[k] && wv[k] == yv[k] - xv[k] * 0.5f && rv[k] == av[k];
            want_sum += 4.0 * xv[k];
          }
          ok &= s.item<float>() == static_cast<float>(want_sum);
          record(ok, fmt::format("thread {} iteration {} size {}", t, it, n));
        }
      });
    }
    // Churn: jit objects made, called and dropped; arrays made and dropped, some never read.
    std::thread churn([&] {
      int i = 0;
      while (!stop.load()) {
        auto g = jit([](Array x) { return jnp::tanh(x) + 1.0f; });
        int64_t n = kSizes[i++ % 6];
        auto xv = host_values(n, i);
        Array r = g(device_put(array(xv, {n}), ds[static_cast<size_t>(i) % ds.size()]));
        if (i % 3 == 0) {
          auto rv = r.to_vector<float>();
          bool ok = true;
          for (int64_t k = 0; k < n; ++k)
            ok &= std::abs(rv[static_cast<size_t>(k)] - (std::tanh(xv[static_cast<size_t>(k)]) + 1.0f)) < 1e-5f;
          record(ok, fmt::format("churn {}", i));
        }
        Array dropped = axpy(array(xv, {n}), array(xv, {n}));  // never read: dropped while maybe still pending
      }
    });
    for (auto& w : workers) w.join();
    stop.store(true);
    churn.join();
    CHECK(wrong.load() == 0);
    if (wrong.load()) FAIL_CHECK("first wrong result: " << first_wrong);
    CHECK(calls.load() >= 360);
    // One compile per signature: six sizes each (the device is not part of the signature).
    CHECK(axpy.num_compiles() == 6);
    CHECK(total.num_compiles() == 6);
    CHECK(step.num_compiles() == 6);
  }
  // Everything the test made is gone: the jit objects with their executables, every array and pending buffer.
  for (auto& d : ds) d.get()->stream.synchronize();
  CHECK(runtime::live_buffers() == buffers_before);
  CHECK(runtime::live_executables() == executables_before);
}

// A jit object's copies share its compiled executables. Here the threads calling it hold copies while the
// original is dropped mid-run by another thread, each caller drops its copy right after its last call (its
// results maybe still pending on the device streams), and the last drop, on whichever thread is last, frees the
// executables while other threads' work may still be queued. The results are read only after every copy is gone.
TEST_CASE("stress: a jit object dropped while other threads are calling it", "[stress][jit]") {
  auto ds = devices();
  int64_t buffers_before = runtime::live_buffers(), executables_before = runtime::live_executables();
  constexpr int kCallers = 4, kCalls = 24;
  constexpr int64_t kRoundSizes[] = {2, 5, 16, 33};
  for (int round = 0; round < 3; ++round) {
    struct Result {
      Array a, w2;
      std::vector<float> xv, yv;
    };
    std::vector<std::vector<Result>> results(kCallers);
    std::atomic<int> calls{0}, callers_left{kCallers};
    std::atomic<int64_t> compiles_seen{-1}, step_compiles_seen{-1};
    {
      auto f = jit([](Array x, Array y) { return x * 2.0f + y; });
      auto step = jit([](Array w, Array g) { return w - g * 0.5f; }, {.donate_argnums = {0}});
      std::vector<std::thread> callers;
      for (int t = 0; t < kCallers; ++t) {
        // Copies (they share the executables), held so that the thread can drop them before it ends.
        callers.emplace_back([&, t, fc = std::optional(f), sc = std::optional(step)]() mutable {
          auto& f = *fc;
          auto& step = *sc;
          for (int it = 0; it < kCalls; ++it) {
            int64_t n = kRoundSizes[(t + it) % 4];
            Device dev = ds[static_cast<size_t>(t + it) % ds.size()];
            Result r{Array(), Array(), host_values(n, t + it + round), host_values(n, t * 5 + it + 2)};
            Array x = device_put(array(r.xv, {n}), dev);
            r.a = f(x, device_put(array(r.yv, {n}), dev));
            r.w2 = step(array(r.yv, {n}), x);
            results[static_cast<size_t>(t)].push_back(std::move(r));
            calls.fetch_add(1);
          }
          if (callers_left.fetch_sub(1) == 1) {  // every other caller is done calling
            compiles_seen = static_cast<int64_t>(f.num_compiles());
            step_compiles_seen = static_cast<int64_t>(step.num_compiles());
          }
          fc.reset();  // drop this thread's copies (its results maybe still pending)
          sc.reset();
        });
      }
      // The original is dropped by another thread while the callers are calling their copies.
      std::thread dropper([&, g = std::optional(std::move(f)), s = std::optional(std::move(step))]() mutable {
        while (calls.load() < kCallers * kCalls / 4) std::this_thread::yield();
        g.reset();
        s.reset();
      });
      dropper.join();
      for (auto& c : callers) c.join();
    }
    // Every copy is gone (the last caller dropped the last one); the results are still there and right.
    CHECK(compiles_seen.load() == 4);  // one compile per size, shared by the copies
    CHECK(step_compiles_seen.load() == 4);
    int64_t wrong = 0;
    for (auto& per_thread : results) {
      REQUIRE(per_thread.size() == static_cast<size_t>(kCalls));
      for (auto& r : per_thread) {
        auto av = r.a.to_vector<float>(), wv = r.w2.to_vector<float>();
        for (size_t k = 0; k < r.xv.size(); ++k)
          wrong += av[k] != r.xv[k] * 2.0f + r.yv[k] || wv[k] != r.yv[k] - r.xv[k] * 0.5f;
      }
    }
    CHECK(wrong == 0);
  }
  for (auto& d : ds) d.get()->stream.synchronize();
  CHECK(runtime::live_buffers() == buffers_before);
  CHECK(runtime::live_executables() == executables_before);
}

// Hidden: a deliberate data race on a plain int, which ThreadSanitizer must report. tools/sanitize.sh tsan-ci runs
// it first and fails if there is no report (the sanitizer is then not on). Never run in a normal build.
TEST_CASE("tsan canary: a deliberate data race that ThreadSanitizer must report", "[.tsan_canary]") {
  int racy = 0;
  std::thread a([&] { racy += 1; }), b([&] { racy += 2; });
  a.join();
  b.join();
  CHECK(racy > 0);
}
