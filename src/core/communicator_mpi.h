// The multi-process collective transport over MPI (Open MPI), and the MPI process state behind jitx::distributed.
// Two levels: the participants (devices) of one process meet in a shared-memory rendezvous; then one of them (the
// last to arrive) exchanges the process's inputs with the other processes of each group over MPI, so MPI is only
// ever called by one thread at a time (MPI_THREAD_SERIALIZED is enough; MPI_THREAD_MULTIPLE is not needed).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/communicator.h"

namespace jitx::detail {

/// True when jitx was built with MPI (JITX_ENABLE_MPI and MPI found).
bool mpi_built();
/// MPI_Init_thread (MPI_THREAD_SERIALIZED) unless MPI is initialised already; throws a jitx::Error without MPI or
/// when MPI gives less than serialised thread support. Idempotent.
void mpi_initialize();
/// MPI_Finalize when mpi_initialize initialised MPI (and not finalised yet).
void mpi_finalize();
bool mpi_active();
/// This process's rank and the number of processes in MPI_COMM_WORLD (0 and 1 when MPI is not initialised).
int64_t mpi_process_index();
int64_t mpi_process_count();
/// Every process's `value`, in rank order (MPI_Allgather over MPI_COMM_WORLD; {value} without MPI). Collective.
std::vector<int64_t> mpi_allgather(int64_t value);
/// Every process's bytes, in rank order (MPI_Allgatherv over MPI_COMM_WORLD; {mine} without MPI). Collective.
std::vector<std::vector<char>> mpi_allgather_bytes(const std::vector<char>& mine);
/// The MPI thread-support level MPI_Init_thread gave ("MPI_THREAD_SERIALIZED", ...).
const char* mpi_thread_level();

/// `local_n` participants of a transport spanning every MPI process (each must make the same call with the same
/// local_n): participant i of process p has rank p * local_n + i; size() is process_count * local_n. Every local
/// participant makes every collective (as the partitions of one SPMD program do); groups may span processes.
std::vector<std::shared_ptr<Communicator>> make_mpi_communicators(int64_t local_n);

}  // namespace jitx::detail
