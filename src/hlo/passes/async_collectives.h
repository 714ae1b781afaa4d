// Asynchronous collectives: each collective with independent work to overlap becomes a start/done pair around
// that work (XLA's async collective creator and, simplified, its latency-hiding scheduler).
#pragma once
#include <cstdint>

#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Runs after scheduling, on the entry and on every computation loops and branches call (not fusion bodies). Each
/// collective the runtime runs on buffers (hlo::collective_runs_on_buffers) is split into `<op>-start` and
/// `<op>-done`, placed by a list scheduler that keeps the memory-driven order as its priority but:
/// - issues a start as soon as the collective's operands are computed (at most kMaxInFlight collectives of a
///   computation in flight at once: a partition's collectives run one after another on its worker, see
///   core/collective_queue.h, so more would only hold buffers longer);
/// - runs every instruction that does not need an in-flight result before waiting: a done is placed only when
///   nothing else can run, the oldest first.
/// Instructions with side effects keep their order. A collective whose start and done end up with no work between
/// them stays synchronous. The collectives run in one order on every partition, so this cannot deadlock.
/// Deliberately does not: estimate costs (any instruction that computes counts as overlap), limit how far the
/// schedule runs ahead of the memory-driven one, or overlap across a loop's iterations.
class AsyncCollectives : public HloPass {
 public:
  static constexpr int kMaxInFlight = 2;
  std::string_view name() const override { return "async-collectives"; }
  bool run(Module& m) override;
  /// Collectives made asynchronous and kept synchronous by the last run().
  int64_t converted = 0, kept = 0;
};

}  // namespace jitx::hlo
