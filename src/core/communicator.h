// The collective transport behind SPMD programs: all-reduce, all-gather, reduce-scatter, all-to-all and permute over
// raw buffers of a dtype, between the participants (partitions) of one launch.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "jitx/dtype.h"

namespace jitx::detail {

enum class ReduceKind { kSum, kProduct, kMax, kMin, kAnd, kOr };

/// One participant's end of a collective transport (the shared-memory one below; an MPI one can implement the same
/// interface). Every member of `group` (ranks, this one included, in the order their chunks are laid out) makes the
/// same call with the same counts; the k-th collective a participant makes meets the k-th of the others. Counts are
/// elements. An error raised by any participant (abort()) is rethrown by every call that waits or comes later.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// out = the elementwise reduction of every member's in (count elements), the same on all members.
  virtual void all_reduce(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                          std::span<const int64_t> group) = 0;
  /// out = member 0's in, then member 1's, ... (group.size() * count elements).
  virtual void all_gather(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) = 0;
  /// in has group.size() chunks of count elements; out = the reduction over members of chunk <my position>.
  virtual void reduce_scatter(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                              std::span<const int64_t> group) = 0;
  /// in has group.size() chunks of count elements, chunk j for member j; out's chunk i comes from member i.
  virtual void all_to_all(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) = 0;
  /// Every rank calls with the same (source, target) pairs: out = the in of the rank whose pair targets this one, or
  /// zeros when none does.
  virtual void permute(const void* in, void* out, int64_t count, DType dtype,
                       std::span<const std::pair<int64_t, int64_t>> pairs) = 0;
  /// Fails the collectives of every participant (those waiting now and those to come) with `error`.
  virtual void abort(std::exception_ptr error) = 0;
};

/// out[i] = the reduction over k of ins[k][offset + i] (i < count), in the order of ins (every transport reduces
/// in member order, so every member gets the same bits).
void reduce_into(std::span<const void* const> ins, int64_t offset, void* out, int64_t count, DType d, ReduceKind kind);

/// `n` participants of one shared-memory transport (threads of this process): participant i is rank i. Each
/// collective is a rendezvous of its group: every member posts its input, then reads the others' directly.
std::vector<std::shared_ptr<Communicator>> make_local_communicators(int64_t n);

/// Partition `partition`'s end of `inner` (a transport whose participant ranks differ from partition ids):
/// rank_of_partition[q] is partition q's rank in `inner`. Groups and pairs are translated; rank() is `partition`.
std::shared_ptr<Communicator> renumber_communicator(std::shared_ptr<Communicator> inner,
                                                   std::vector<int64_t> rank_of_partition, int64_t partition);

/// Process-wide totals of the collectives partitions ran (jitx/profiler.h): calls, the wall time spent in them
/// (summed over partitions: waiting for the slowest member counts) and the bytes of their operands; of those, the
/// ones started asynchronously and the time programs waited for them at their -done (collective_queue.h).
struct CollectiveTotals {
  std::atomic<int64_t> calls{0}, nanoseconds{0}, bytes{0};
  std::atomic<int64_t> async_calls{0}, wait_nanoseconds{0};
};
CollectiveTotals& collective_totals();
/// Adds one collective's time (its lifetime) and bytes to collective_totals().
class CollectiveTimer {
 public:
  explicit CollectiveTimer(int64_t bytes);
  ~CollectiveTimer();
  CollectiveTimer(const CollectiveTimer&) = delete;
  CollectiveTimer& operator=(const CollectiveTimer&) = delete;

 private:
  int64_t bytes_;
  std::chrono::steady_clock::time_point start_;
};

/// The communicator of the partition the current thread evaluates (set by the SPMD runners around a program), or
/// null outside one.
Communicator* current_communicator();
class CommunicatorScope {
 public:
  explicit CommunicatorScope(Communicator* c);
  ~CommunicatorScope();
  CommunicatorScope(const CommunicatorScope&) = delete;
  CommunicatorScope& operator=(const CommunicatorScope&) = delete;

 private:
  Communicator* saved_;
};

}  // namespace jitx::detail
