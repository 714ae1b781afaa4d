// The evaluator's collectives and its SPMD runner: one evaluation per partition, exchanging values.
#pragma once
#include <vector>

#include "hlo/evaluator/evaluator.h"

namespace jitx::evaluator {

/// A collective instruction (or its start) on this partition's operand, through the current thread's communicator
/// (core/communicator.h), after the collectives in flight on this thread. Without one, a collective whose group is this partition alone is the identity; any other
/// throws RuntimeError.
detail::Literal eval_collective(const hlo::Instruction& inst, const detail::Literal& x);

/// Whether run_collective takes `inst`: partition-id, all-reduce, collective-permute, and the other collectives
/// when the chunks they exchange are contiguous (every dimension before the exchanged one has size 1).
bool collective_runs_in_place(const hlo::Instruction& inst);
/// eval_collective (or eval_partition_id) on raw row-major memory: `in` the operand's bytes, `out` the result's. A
/// collective runs after those in flight on this thread (core/collective_queue.h), in program order.
void run_collective(const hlo::Instruction& inst, const void* in, void* out);

/// The start of an asynchronous collective (all-reduce-start, ...) on raw memory: handed to this thread's
/// collective queue (core/collective_queue.h) through the current communicator; `in` must stay unwritten and `out`
/// unread until finish_collective(start). Without a communicator it runs at once, as run_collective does.
void start_collective(const hlo::Instruction& start, const void* in, void* out);
/// Waits for the collective `start` began on this thread (the -done); rethrows its error.
void finish_collective(const hlo::Instruction& start);

/// partition-id: the current communicator's rank (0 without one), as u32[].
detail::Literal eval_partition_id();

/// Evaluates a partitioned module once per partition (args[p] are partition p's arguments), each on its own thread
/// with a shared-memory communicator; returns each partition's result. An error in one partition reaches them all
/// and is rethrown here.
std::vector<Value> evaluate_spmd(const hlo::Module& m, const std::vector<std::vector<detail::Literal>>& args);

}  // namespace jitx::evaluator
