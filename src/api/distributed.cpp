// jitx::distributed: the process-level state of a multi-process job, over the MPI transport, and the global device
// list it makes (every process's devices, numbered process by process).
#include "jitx/distributed.h"

#include <cstdlib>
#include <string>

#include "core/communicator_mpi.h"
#include "core/errors.h"
#include "jitx/error.h"
#include "runtime/runtime.h"

namespace jitx::distributed {

namespace {
int64_t env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  return std::strtoll(v, nullptr, 10);
}
}  // namespace

namespace {
bool g_joined = false;
}  // namespace

void initialize(int64_t num_processes, int64_t process_id) {
  if (g_joined)
    detail::throw_error<RuntimeError>("distributed.initialize",
                                      "should only be called once (the job's devices are already listed)");
  detail::mpi_initialize();
  int64_t n = detail::mpi_process_count(), me = detail::mpi_process_index();
  int64_t env_n = env_int("OMPI_COMM_WORLD_SIZE"), env_me = env_int("OMPI_COMM_WORLD_RANK");
  if ((env_n >= 0 && env_n != n) || (env_me >= 0 && env_me != me))
    detail::throw_error<Error>("distributed.initialize",
                               "OMPI_COMM_WORLD_SIZE/RANK say process {} of {}, but MPI says process {} of {}", env_me,
                               env_n, me, n);
  if (num_processes >= 0 && num_processes != n)
    detail::throw_error<Error>("distributed.initialize", "num_processes={} but the MPI job has {} processes",
                               num_processes, n);
  if (process_id >= 0 && process_id != me)
    detail::throw_error<Error>("distributed.initialize", "process_id={} but MPI says this is process {}", process_id,
                               me);
  // The global device list: every process must have as many devices (JITX_CPU_DEVICE_COUNT) for ids p * n + i.
  auto& client = runtime::Client::get();
  auto counts = detail::mpi_allgather(static_cast<int64_t>(client.num_devices()));
  for (size_t p = 0; p < counts.size(); ++p)
    if (counts[p] != counts[0])
      detail::throw_error<Error>("distributed.initialize",
                                 "process 0 has {} devices but process {} has {}: every process needs the same "
                                 "number of local devices (set the same JITX_CPU_DEVICE_COUNT for each)",
                                 counts[0], p, counts[p]);
  client.join_job(me, n);
  g_joined = true;
}

void shutdown() { detail::mpi_finalize(); }
bool is_initialized() { return detail::mpi_active(); }
int64_t process_index() { return detail::mpi_process_index(); }
int64_t process_count() { return detail::mpi_process_count(); }

}  // namespace jitx::distributed
