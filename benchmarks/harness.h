// A small benchmark harness: warm-up, repeats, median and spread, compile time apart, JSON lines out.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms = 0, min_ms = 0, p10_ms = 0, p90_ms = 0;
  int reps = 0;
};

/// Runs fn (which must wait for its own result, e.g. with block_until_ready) until min_time_s has passed
/// and at least min_reps times, after `warmup` untimed calls.
inline Stats measure(const std::function<void()>& fn, double min_time_s = 0.3, int min_reps = 5, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  auto start = Clock::now();
  while (static_cast<int>(t.size()) < min_reps ||
         std::chrono::duration<double>(Clock::now() - start).count() < min_time_s) {
    auto s = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    if (t.size() > 100000) break;
  }
  std::sort(t.begin(), t.end());
  auto q = [&](double f) { return t[std::min(t.size() - 1, static_cast<size_t>(f * static_cast<double>(t.size())))]; };
  return Stats{q(0.5), t.front(), q(0.1), q(0.9), static_cast<int>(t.size())};
}

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// One result line: workload, size, dtype, system ("jitx", "jitx-eager", "eigen", ...), timing, and the
/// work done (bytes moved or flops) so a reader can compute rates and fractions of the machine's limits.
struct Result {
  std::string workload, size, dtype, system;
  Stats stats;
  double bytes = 0, flops = 0;
  double compile_ms = -1;  // reported apart from run time; -1 when not applicable
  std::string note;
};

inline std::string json(const Result& r) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"workload\": \"%s\", \"size\": \"%s\", \"dtype\": \"%s\", \"system\": \"%s\", \"median_ms\": %.6f, "
                "\"min_ms\": %.6f, \"p10_ms\": %.6f, \"p90_ms\": %.6f, \"reps\": %d, \"bytes\": %.0f, \"flops\": %.0f, "
                "\"compile_ms\": %.3f, \"note\": \"%s\"}",
                r.workload.c_str(), r.size.c_str(), r.dtype.c_str(), r.system.c_str(), r.stats.median_ms, r.stats.min_ms,
                r.stats.p10_ms, r.stats.p90_ms, r.stats.reps, r.bytes, r.flops, r.compile_ms, r.note.c_str());
  return buf;
}

}  // namespace bench
