// Intra-op parallelism of the current thread's computations.
#pragma once

namespace jitx::detail {

/// When true, the CPU backend runs every kernel of the current thread's work on that thread, without its thread
/// pool. The SPMD runner sets it on the streams of a launch that runs as many partitions in this process as it has
/// hardware threads: the partitions are then the parallelism, and a pool shared between them would only contend.
inline bool& intra_op_serial() {
  thread_local bool serial = false;
  return serial;
}

}  // namespace jitx::detail
