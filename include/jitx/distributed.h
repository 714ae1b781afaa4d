// Multi-process runs (JAX's jax.distributed): one jitx process per MPI rank, started with mpirun.
#pragma once
#include <cstdint>

namespace jitx::distributed {

/// Joins this process to the multi-process job it was started in (as jax.distributed.initialize): initialises MPI
/// (MPI_Init_thread, MPI_THREAD_SERIALIZED) and reads the process id and count from it (under `mpirun` Open MPI also
/// sets OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE; they must agree). `num_processes` / `process_id`, when given
/// (>= 0), must match MPI's (there is no coordinator address: mpirun places the processes). Call it once, first
/// (before any array is placed on a device). Afterwards jitx::devices() lists every process's devices (process p's
/// local device i has id p * local_device_count() + i; every process must have as many), local_devices() this
/// process's, and a Mesh may span processes: device_put, jit and the make_array_from_* functions then hold and
/// compute only this process's shards. Throws a jitx::Error when jitx was built without MPI.
void initialize(int64_t num_processes = -1, int64_t process_id = -1);
/// Leaves the job (MPI_Finalize); after it, MPI cannot be initialised again in this process.
void shutdown();
/// True between initialize() and shutdown().
bool is_initialized();
/// This process's index in the job (0 without initialize), and the number of processes (1 without initialize).
int64_t process_index();
int64_t process_count();

}  // namespace jitx::distributed
