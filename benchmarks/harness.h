// A small benchmark harness: warm-up, repeats, median and spread, compile time apart, JSON lines
// out.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms = 0, min_ms = 0, p10_ms = 0, p90_ms = 0;
  int reps = 0;
  double max_ms = 0;
};

/// A call longer than this (seconds; 0: no limit) ends the measurement after that one call: its
/// time is the result (reps = 1), so a system far slower than its smaller size predicted costs one
/// call, not several.
inline double g_stop_after_s = 0;

/// Median, minimum and deciles of call times (ms).
inline Stats stats_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  auto q = [&](double f) {
    return t[std::min(t.size() - 1, static_cast<size_t>(f * static_cast<double>(t.size())))];
  };
  return Stats{q(0.5), t.front(), q(0.1), q(0.9), static_cast<int>(t.size()), t.back()};
}

/// Runs fn (which must wait for its own result, e.g. with block_until_ready) until min_time_s has
/// passed and at least min_reps times, after `warmup` untimed calls. A call slower than slow_s
/// (seen in the first warm-up) cuts the warm-up to that one call and the repeats to 3, so a slow
/// system costs seconds, not minutes.
inline Stats measure(const std::function<void()>& fn, double min_time_s = 0.3, int min_reps = 5,
                     int warmup = 2, double slow_s = 0.5) {
  if (warmup > 0) {
    auto s = Clock::now();
    fn();
    double first = std::chrono::duration<double>(Clock::now() - s).count();
    if (g_stop_after_s > 0 && first > g_stop_after_s)
      return Stats{first * 1e3, first * 1e3, first * 1e3, first * 1e3, 1, first * 1e3};
    if (first > slow_s) {
      warmup = 1;
      min_reps = std::min(min_reps, 3);
      min_time_s = 0;
    }
  }
  for (int i = 1; i < warmup; ++i) fn();
  std::vector<double> t;
  auto start = Clock::now();
  while (static_cast<int>(t.size()) < min_reps ||
         std::chrono::duration<double>(Clock::now() - start).count() < min_time_s) {
    auto s = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    if (t.size() > 100000) break;
  }
  return stats_of(std::move(t));
}

/// Several systems measured in rounds, each round running every fn (in an order that rotates from round to round)
/// as a block of back-to-back calls, after one untimed call each (which also compiles what eager code compiles on
/// first use): a machine whose speed drifts (other processes, frequency) slows all of them alike, so their ratios
/// hold even where each time alone is noisy.
///
/// Each block is a short loop, as a user's code calls: about 1 ms of untimed calls first, then about 1 ms of timed
/// ones (1 to 64 calls each). The untimed lead-in is there because thread pools spin-wait for a while after a job
/// (jitx's for 200 us, OpenMP's for GOMP_SPINCOUNT, which jitx_bench sets low): without it a system would be timed
/// against its neighbour's still-spinning workers rather than on the machine. (Sleeping between blocks instead does
/// not work on this VM: after a few ms idle the cores come back slow for longer than a block.)
///
/// Rounds continue until min_time_s has passed and min_reps rounds are done. When the first round's slowest call
/// exceeds slow_s, the rounds are slow_reps of one call each, without lead-in, and min_time_s is dropped: enough
/// for a few-percent difference between seconds-long calls to show above the noise, at a few calls' cost. A warm-up
/// call longer than g_stop_after_s ends it there, its times the result, as measure() does.
inline std::vector<Stats> measure_interleaved(const std::vector<std::function<void()>>& fns, double min_time_s = 0.3,
                                              int min_reps = 9, int slow_reps = 5, double slow_s = 0.5) {
  std::vector<std::vector<double>> t(fns.size());
  auto timed = [&](size_t i) {
    auto s = Clock::now();
    fns[i]();
    return std::chrono::duration<double, std::milli>(Clock::now() - s).count();
  };
  std::vector<double> warm(fns.size());
  std::vector<int> block(fns.size());
  for (size_t i = 0; i < fns.size(); ++i) {
    warm[i] = timed(i);
    double again = timed(i);  // the first call may compile or fault pages in
    block[i] = static_cast<int>(std::clamp(1.0 / std::max(again, 1e-6), 1.0, 64.0));
  }
  bool stop = g_stop_after_s > 0 && *std::max_element(warm.begin(), warm.end()) > g_stop_after_s * 1e3;
  auto start = Clock::now();
  bool slow = false;
  for (int round = 0; !stop && (round < min_reps ||
                                std::chrono::duration<double>(Clock::now() - start).count() < min_time_s);
       ++round) {
    double slowest = 0;
    for (size_t k = 0; k < fns.size(); ++k) {
      size_t i = (k + static_cast<size_t>(round)) % fns.size();
      for (int r = 0; !slow && r < block[i]; ++r) fns[i]();
      for (int r = 0; r < (slow ? 1 : block[i]); ++r) {
        t[i].push_back(timed(i));
        slowest = std::max(slowest, t[i].back());
      }
    }
    if (round == 0 && slowest > slow_s * 1e3) {
      min_reps = slow_reps;
      min_time_s = 0;
      slow = true;
    }
    if (round > 100000) break;
  }
  std::vector<Stats> out;
  for (size_t i = 0; i < fns.size(); ++i)
    out.push_back(stats_of(stop ? std::vector<double>{warm[i]} : std::move(t[i])));
  return out;
}

/// Skips what would take too long: predicts a call's time from the same workload and system at the
/// previous (smaller) size, scaled by the work (flops, else bytes). Sizes run from small to large,
/// so a system that falls back to something slow is measured at the sizes it can do and reported as
/// skipped beyond them.
class Budget {
 public:
  explicit Budget(double max_call_s = 0) : max_call_s_(max_call_s) {}
  void set_max_call_s(double s) { max_call_s_ = s; }
  /// Seconds one call is predicted to take at `work`, or -1 when nothing is known.
  double predict(const std::string& key, double work) const {
    auto it = last_.find(key);
    if (it == last_.end() || it->second.first <= 0 || work <= 0) return -1;
    return it->second.second * 1e-3 * work / it->second.first;
  }
  bool too_slow(const std::string& key, double work) const {
    return max_call_s_ > 0 && predict(key, work) > max_call_s_;
  }
  void record(const std::string& key, double work, double median_ms) {
    last_[key] = {work, median_ms};
  }
  double max_call_s() const { return max_call_s_; }

 private:
  double max_call_s_;
  std::map<std::string, std::pair<double, double>> last_;  // key -> (work, median ms)
};

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// One result line: workload, size, dtype, system ("jitx", "jitx-eager", "eigen", ...), timing, and
/// the work done (bytes moved or flops) so a reader can compute rates and fractions of the
/// machine's limits.
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
                "{\"workload\": \"%s\", \"size\": \"%s\", \"dtype\": \"%s\", \"system\": \"%s\", "
                "\"median_ms\": %.6f, "
                "\"min_ms\": %.6f, \"p10_ms\": %.6f, \"p90_ms\": %.6f, \"max_ms\": %.6f, \"reps\": %d, \"bytes\": "
                "%.0f, \"flops\": %.0f, "
                "\"compile_ms\": %.3f, \"note\": \"%s\"}",
                r.workload.c_str(), r.size.c_str(), r.dtype.c_str(), r.system.c_str(),
                r.stats.median_ms, r.stats.min_ms, r.stats.p10_ms, r.stats.p90_ms, r.stats.max_ms, r.stats.reps,
                r.bytes, r.flops, r.compile_ms, r.note.c_str());
  return buf;
}

/// n normally distributed floats (mean 0, standard deviation scale), the same for the same seed.
inline std::vector<float> randn(size_t n, float scale, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

}  // namespace bench
