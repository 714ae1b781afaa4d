// Runtime counters for profiling (not included by jitx/jitx.h): the collectives of SPMD programs.
#pragma once
#include <cstdint>

namespace jitx::profiler {

/// What the collectives (all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute) of partitioned
/// programs cost in this process since the last reset: how many ran (one per partition), the wall time spent in
/// them summed over partitions (a partition waiting for a slower member counts its wait), and the bytes of their
/// operands. Collectives the optimiser made asynchronous (all-reduce-start ... all-reduce-done, run while the
/// partition computes on) count in async_calls too, and wait_seconds is the time partitions spent waiting at their
/// -done: the part of those collectives that compute did not hide.
struct CollectiveStats {
  int64_t calls = 0;
  double seconds = 0;
  int64_t bytes = 0;
  int64_t async_calls = 0;
  double wait_seconds = 0;
};
CollectiveStats collective_stats();
void reset_collective_stats();

}  // namespace jitx::profiler
