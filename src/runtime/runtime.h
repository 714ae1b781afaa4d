// The PJRT-shaped runtime: Client, Device (with an in-order stream), Buffer, Event, Executable, Backend.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/literal.h"
#include "hlo/ir/hlo.h"

namespace jitx::runtime {

/// Set once when a value is computed (or fails); wait() blocks and rethrows the failure.
class Event {
 public:
  static std::shared_ptr<Event> ready_now();
  void set();
  void set_error(std::exception_ptr e);
  void wait() const;
  /// Lock-free: dispatch checks its inputs with it.
  bool is_ready() const { return done_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::atomic<bool> done_{false};  // stored (release) after error_, under mu_
  std::exception_ptr error_;
};

class Device;

/// Device memory holding one array, plus the event that says when it is written.
/// Counts the live objects of one class (a member of it: copies and moves count as new objects). For tests and
/// leak checks: `live_buffers()` and `live_executables()` below.
template <class Tag>
class LiveCount {
 public:
  LiveCount() { count().fetch_add(1, std::memory_order_relaxed); }
  LiveCount(const LiveCount&) : LiveCount() {}
  LiveCount& operator=(const LiveCount&) { return *this; }
  ~LiveCount() { count().fetch_sub(1, std::memory_order_relaxed); }
  static int64_t live() { return count().load(std::memory_order_relaxed); }

 private:
  static std::atomic<int64_t>& count() {
    static std::atomic<int64_t> n{0};
    return n;
  }
};

class Buffer {
 public:
  DType dtype;
  std::vector<int64_t> dims;
  std::shared_ptr<detail::Storage> storage;  // set by the producer before `ready` fires
  std::shared_ptr<Event> ready;
  Device* device = nullptr;
  bool deleted = false;  // donated to an executable: using it again is an error
  /// Placed on its device explicitly (device_put, or computed from committed inputs): computations follow it there.
  /// Uncommitted buffers live on the default device and go wherever the computation runs (JAX's rule).
  bool committed = false;

  static std::shared_ptr<Buffer> pending(DType dtype, std::vector<int64_t> dims, Device* dev);
  /// Records that work just enqueued on dev's stream reads this buffer (with several devices, a stream other than
  /// the buffer's own may read it; in-order streams order the rest).
  void note_reader(Device* dev);
  /// Waits until every recorded read on a stream other than dev's has run: before dev's stream overwrites the
  /// buffer in place (donation), whoever reads it elsewhere must have read it.
  void wait_for_readers_except(const Device* dev);
  static std::shared_ptr<Buffer> from_literal(const detail::Literal& lit, Device* dev);
  /// Waits for the value and returns a Literal sharing the storage.
  detail::Literal literal() const;
  int64_t num_elements() const { return detail::num_elements(dims); }

 private:
  std::mutex readers_mu_;
  std::vector<std::pair<Device*, int64_t>> readers_;  // the latest read per device's stream
  LiveCount<Buffer> live_;
};
/// Buffers alive now in this process (held by arrays, executables' constants, pending work).
inline int64_t live_buffers() { return LiveCount<Buffer>::live(); }

/// Where a computation on `args` runs: the device of the committed ones (which must agree), else the default device.
struct Placement {
  Device* device = nullptr;
  bool committed = false;  // some argument was committed: the outputs are committed too
  int64_t first = -1, second = -1;  // when two committed arguments are on different devices: their indices
};
Placement place(std::span<const std::shared_ptr<Buffer>> args);

/// An in-order work queue served by one thread. Work items never run concurrently with each other.
class Stream {
 public:
  explicit Stream(std::string name);
  ~Stream();
  void enqueue(std::function<void()> work);
  /// Runs work on the calling thread, now, if the stream is idle (nothing queued or running), and returns true;
  /// returns false without running it otherwise. A small executable whose inputs are ready takes this path: it
  /// saves the two thread wake-ups (the stream's, then the waiter's) that dominate a tiny call. Work must not throw.
  template <class F>
  bool try_run_inline(F&& work) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (running_ || !queue_.empty() || stop_) return false;
      running_ = true;
      ++enqueued_;
    }
    work();
    finish_one();
    return true;
  }
  /// Waits until everything enqueued so far has run.
  void synchronize();
  /// How many work items have been enqueued (or run inline) so far: the position of the latest one.
  int64_t position();
  /// Waits until the work items up to `position` have run.
  void wait_for(int64_t position);

 private:
  void loop();
  void finish_one();  // after a work item: counts it, wakes synchronize() and, if work is queued, the thread
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  bool running_ = false;  // a work item runs (on the stream's thread or inline)
  bool sleeping_ = false;  // the thread sleeps on cv_ (rather than spinning for work): enqueue must notify
  std::atomic<int64_t> pending_{0};  // queue_.size(), for the thread's spin to watch without the lock
  int64_t enqueued_ = 0, done_ = 0;
  int synchronizing_ = 0;  // threads in synchronize(): only then is done_cv_ notified
  std::condition_variable done_cv_;
  std::thread thread_;
};

class Device {
 public:
  Device(int id, std::string platform, int process_index = 0, bool local = true);
  int id;  // global: process p's local device i has id p * local_device_count + i (jitx::distributed)
  std::string platform;
  int process_index = 0;  // the process that owns the device (0 without jitx::distributed)
  bool local = true;      // this process's: it holds buffers and runs work; another process's device only names it
  Stream stream;
  std::string str() const { return platform + ":" + std::to_string(id); }
};

/// A compiled program for one backend. execute() enqueues and returns pending output buffers.
class Executable {
 public:
  virtual ~Executable() = default;
  virtual std::vector<std::shared_ptr<Buffer>> execute(std::span<const std::shared_ptr<Buffer>> args,
                                                       Device* device) = 0;
  /// What the executable is made of, for tests and logs: e.g. {"native_kernels": 3, "interpreter_fallbacks": 0,
  /// "while_loops": 1}. Keys are backend-specific; empty when a backend reports nothing.
  virtual std::map<std::string, int64_t> stats() const { return {}; }
  std::shared_ptr<const hlo::Module> module;
  /// The backend's compile phases and their wall times in ms, in order (cpu: plan, emit, llvm-opt, codegen).
  std::vector<std::pair<std::string, double>> compile_phases;

 private:
  LiveCount<Executable> live_;
};
/// Executables alive now in this process (held by jit caches, the eager cache, Compiled objects).
inline int64_t live_executables() { return LiveCount<Executable>::live(); }

struct CompileOptions {
  /// Entry parameters whose buffers the caller gives up (jit's donate_argnums): an output of the same type may be
  /// written into one in place. A backend may ignore this.
  std::vector<int64_t> donated_parameters;
  /// Keep what Backend::serialize() needs (the cpu backend's object files): jit's compiles do, eager ones don't.
  bool serializable = false;
};

/// What compiled code is for: a serialised executable records it, and loads only where it matches.
struct TargetInfo {
  std::string compiler;  // e.g. "LLVM 19.1.7"
  std::string triple, cpu, features;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::shared_ptr<Executable> compile(std::shared_ptr<const hlo::Module> module,
                                              const CompileOptions& options) = 0;
  std::shared_ptr<Executable> compile(std::shared_ptr<const hlo::Module> module) {
    return compile(std::move(module), CompileOptions{});
  }
  /// Whether serialize()/deserialize() work (the persistent compilation cache skips backends that cannot).
  virtual bool can_serialize() const { return false; }
  /// The code's target (empty for a backend without native code).
  virtual TargetInfo target() const { return {}; }
  /// The executable's compiled code and whatever else it needs to run, beyond its module and compile options, as
  /// the backend's own bytes. Throws RuntimeError where the backend cannot.
  virtual std::string serialize(const Executable& exe) const;
  /// The executable of `module` (the optimised module it was compiled from) and `options` back from serialize()'s
  /// bytes, without compiling; throws RuntimeError when the bytes do not fit the module.
  virtual std::shared_ptr<Executable> deserialize(std::shared_ptr<const hlo::Module> module,
                                                  const CompileOptions& options, std::string_view payload);
};

/// Backends register a factory under their platform name at start-up (runtime never names a backend itself).
using BackendFactory = std::unique_ptr<Backend> (*)();
bool register_backend(std::string platform, BackendFactory make);
/// A new backend of a registered platform; throws RuntimeError listing the registered ones for any other name.
std::unique_ptr<Backend> make_backend(std::string_view platform);
/// The platforms registered, sorted.
std::vector<std::string> registered_platforms();

/// The reference interpreter backend (backends/interpreter): the evaluator on a device's stream.
std::unique_ptr<Backend> make_interpreter_backend();
/// The LLVM CPU backend (backends/cpu): native kernels, Eigen dots, interpreter fallbacks for the rest.
std::unique_ptr<Backend> make_cpu_backend();

/// The process-wide client: devices and the backend chosen by config.platform.
class Client {
 public:
  static Client& get();
  Device* default_device() { return devices_.front().get(); }
  /// This process's devices (addressable: they hold buffers and run work).
  std::vector<Device*> devices();
  size_t num_devices() const { return devices_.size(); }
  /// Every device of the job, ordered by id: this process's and (after join_job) the other processes' devices.
  std::vector<Device*> global_devices();
  /// Makes this client process `process` of `process_count`, each with as many devices as this one (checked by the
  /// caller): renumbers the local devices' ids to process * n + i and adds the other processes' devices (not local).
  /// Called once, by jitx::distributed::initialize, before any array is placed on a device.
  void join_job(int64_t process, int64_t process_count);
  Backend& backend() { return *backend_; }

 private:
  Client();
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::unique_ptr<Device>> remote_;  // other processes' devices (jitx::distributed)
  std::unique_ptr<Backend> backend_;
};

}  // namespace jitx::runtime
