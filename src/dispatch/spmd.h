// Running one per-device program of an SPMD (partitioned) module on several devices at once, its collectives going
// through a shared-memory communicator between the devices' streams.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "core/communicator.h"
#include "runtime/runtime.h"

namespace jitx::detail {

/// Enqueues `exe` (compiled from a partitioned module) on each device's stream, partition p on devices[p] with
/// args[p], and returns each partition's pending outputs. Launches are enqueued on all their streams under one
/// process-wide lock, so two launches from different threads reach every stream in the same order (no deadlock).
/// A partition that fails aborts the launch's communicator: the others' collectives fail with its error instead of
/// waiting, and every output event carries an error.
std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> execute_spmd(
    runtime::Executable& exe, std::span<runtime::Device* const> devices,
    const std::vector<std::vector<std::shared_ptr<runtime::Buffer>>>& args);

/// The same with the launch's communicators given (comms[p] for devices[p]): a multi-process launch passes this
/// process's MPI communicators (make_mpi_communicators), so partition p's collectives meet the other processes'
/// partitions; its program sees comms[p]->rank() as its partition id.
std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> execute_spmd(
    runtime::Executable& exe, std::span<runtime::Device* const> devices,
    const std::vector<std::vector<std::shared_ptr<runtime::Buffer>>>& args,
    std::vector<std::shared_ptr<Communicator>> comms);

}  // namespace jitx::detail
