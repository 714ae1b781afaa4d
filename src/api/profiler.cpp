// jitx::profiler: the runtime's counters (core/communicator.h's collective totals).
#include "jitx/profiler.h"

#include "core/communicator.h"

namespace jitx::profiler {

CollectiveStats collective_stats() {
  auto& t = detail::collective_totals();
  return {t.calls.load(), static_cast<double>(t.nanoseconds.load()) * 1e-9, t.bytes.load(), t.async_calls.load(),
          static_cast<double>(t.wait_nanoseconds.load()) * 1e-9};
}

void reset_collective_stats() {
  auto& t = detail::collective_totals();
  t.calls = 0;
  t.nanoseconds = 0;
  t.bytes = 0;
  t.async_calls = 0;
  t.wait_nanoseconds = 0;
}

}  // namespace jitx::profiler
