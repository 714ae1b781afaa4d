// SPMD launches: per-device programs on the devices' streams, a communicator per launch.
#include "dispatch/spmd.h"

#include <condition_variable>
#include <algorithm>
#include <mutex>
#include <thread>

#include "core/communicator.h"
#include "core/intra_op.h"
#include "core/errors.h"

namespace jitx::detail {

namespace {
std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

/// Released once every partition's program is enqueued: until then each stream runs the launch's first item, so no
/// program of the launch can run inline on the enqueuing thread (it would block that thread in a rendezvous).
struct Latch {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    std::lock_guard<std::mutex> l(mu);
    open = true;
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return open; });
  }
};

/// The communicator of the partition whose program runs on this stream thread, set between the launch's first and
/// last work items.
thread_local std::unique_ptr<CommunicatorScope> t_scope;
}  // namespace

std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> execute_spmd(
    runtime::Executable& exe, std::span<runtime::Device* const> devices,
    const std::vector<std::vector<std::shared_ptr<runtime::Buffer>>>& args) {
  return execute_spmd(exe, devices, args, make_local_communicators(static_cast<int64_t>(devices.size())));
}

std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> execute_spmd(
    runtime::Executable& exe, std::span<runtime::Device* const> devices,
    const std::vector<std::vector<std::shared_ptr<runtime::Buffer>>>& args,
    std::vector<std::shared_ptr<Communicator>> comms) {
  size_t n = devices.size();
  JITX_ASSERT(comms.size() == n, "{} communicators for {} devices", comms.size(), n);
  JITX_ASSERT(args.size() == n, "{} argument lists for {} devices", args.size(), n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < i; ++j)
      JITX_ASSERT(devices[i] != devices[j], "device {} twice in one SPMD launch", devices[i]->str());
  auto latch = std::make_shared<Latch>();
  // As many local partitions as hardware threads: each runs its kernels on its own stream's thread.
  bool serial = n > 1 && n >= std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> outs(n);
  {
    std::lock_guard<std::mutex> l(launch_mutex());
    for (size_t p = 0; p < n; ++p) {
      auto comm = comms[p];
      devices[p]->stream.enqueue([comm, latch, serial] {
        latch->wait();
        t_scope = std::make_unique<CommunicatorScope>(comm.get());
        intra_op_serial() = serial;
      });
    }
    try {
      for (size_t p = 0; p < n; ++p) {
        outs[p] = exe.execute(args[p], devices[p]);
        for (auto& a : args[p]) a->note_reader(devices[p]);
      }
    } catch (...) {
      // The partitions already enqueued must not wait for the others: fail their collectives, clear the streams'
      // scopes, open the latch.
      for (auto& c : comms) c->abort(std::current_exception());
      for (size_t p = 0; p < n; ++p)
        devices[p]->stream.enqueue([] {
          t_scope.reset();
          intra_op_serial() = false;
        });
      latch->release();
      throw;
    }
    for (size_t p = 0; p < n; ++p) {
      auto comm = comms[p];
      auto mine = outs[p];
      devices[p]->stream.enqueue([comm, mine] {
        t_scope.reset();
        intra_op_serial() = false;
        // A failed partition releases the others from their rendezvous with its error.
        for (auto& o : mine) {
          try {
            o->ready->wait();
          } catch (...) {
            comm->abort(std::current_exception());
            break;
          }
        }
      });
    }
  }
  latch->release();
  return outs;
}

}  // namespace jitx::detail
