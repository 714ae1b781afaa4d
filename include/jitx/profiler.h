// Runtime counters for profiling (not included by jitx/jitx.h): the collectives of SPMD programs.
#pragma once
#include <cstdint>

namespace jitx::profiler {

/// What the collectives (all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute) of partitioned
/// programs cost in this process since the last reset: how many ran (one per partition), the wall time spent in
/// them summed over partitions (a partition waiting for a slower member counts its wait), and the bytes of their
/// operands.
struct CollectiveStats {
  int64_t calls = 0;
  double seconds = 0;
  int64_t bytes = 0;
};
CollectiveStats collective_stats();
void reset_collective_stats();

}  // namespace jitx::profiler
