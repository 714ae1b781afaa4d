// The PJRT-shaped runtime: Client, Device (with an in-order stream), Buffer, Event, Executable, Backend.
#pragma once
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
  bool is_ready() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class Device;

/// Device memory holding one array, plus the event that says when it is written.
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
  static std::shared_ptr<Buffer> from_literal(const detail::Literal& lit, Device* dev);
  /// Waits for the value and returns a Literal sharing the storage.
  detail::Literal literal() const;
  int64_t num_elements() const { return detail::num_elements(dims); }
};

/// Where a computation on `args` runs: the device of the committed ones (which must agree), else the default device.
struct Placement {
  Device* device = nullptr;
  bool committed = false;  // some argument was committed: the outputs are committed too
  int64_t first = -1, second = -1;  // when two committed arguments are on different devices: their indices
};
Placement place(std::span<const std::shared_ptr<Buffer>> args);

/// An in-order work queue served by one thread.
class Stream {
 public:
  explicit Stream(std::string name);
  ~Stream();
  void enqueue(std::function<void()> work);
  /// Waits until everything enqueued so far has run.
  void synchronize();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  int64_t enqueued_ = 0, done_ = 0;
  std::condition_variable done_cv_;
  std::thread thread_;
};

class Device {
 public:
  Device(int id, std::string platform);
  int id;
  std::string platform;
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
};

struct CompileOptions {
  /// Entry parameters whose buffers the caller gives up (jit's donate_argnums): an output of the same type may be
  /// written into one in place. A backend may ignore this.
  std::vector<int64_t> donated_parameters;
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
};

std::unique_ptr<Backend> make_interpreter_backend();
/// The LLVM CPU backend (backends/cpu): native kernels, Eigen dots, interpreter fallbacks for the rest.
std::unique_ptr<Backend> make_cpu_backend();

/// The process-wide client: devices and the backend chosen by config.platform.
class Client {
 public:
  static Client& get();
  Device* default_device() { return devices_.front().get(); }
  std::vector<Device*> devices();
  Backend& backend() { return *backend_; }

 private:
  Client();
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace jitx::runtime
