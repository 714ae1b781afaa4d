// Events, buffers, streams, devices and the client.
#include "runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define JITX_PAUSE() _mm_pause()
#else
#define JITX_PAUSE() std::this_thread::yield()
#endif

#include "core/errors.h"
#include "runtime/foreign_memory.h"
#include "core/host_callback.h"
#include "jitx/config.h"

namespace jitx::runtime {
namespace {
// Short spins before a thread sleeps. On a VM, waking a thread whose core has gone idle costs tens of microseconds
// (the hypervisor reschedules the vCPU), more than a small program runs: a stream's thread watches for the next
// work item for kStreamSpin after each one (a loop of calls keeps it awake), short enough that a process that
// stops calling gives its cores back at once. Waiters do not spin: with the pool's workers and the stream's
// thread busy, a third spinning thread on a 2-core machine would take a core from the computation it waits for.
constexpr auto kStreamSpin = std::chrono::microseconds(100);

/// Spins (with `pause`) until done() or `spin` has passed; returns done().
template <class F>
bool spin_until(F&& done, std::chrono::microseconds spin) {
  auto until = std::chrono::steady_clock::now() + spin;
  for (int i = 1;; ++i) {
    if (done()) return true;
    JITX_PAUSE();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return done();
  }
}
}  // namespace

std::shared_ptr<Event> Event::ready_now() {
  auto e = std::make_shared<Event>();
  e->done_.store(true, std::memory_order_relaxed);
  return e;
}
void Event::set() {
  {
    std::lock_guard<std::mutex> l(mu_);
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}
void Event::set_error(std::exception_ptr e) {
  {
    std::lock_guard<std::mutex> l(mu_);
    error_ = e;
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}
void Event::wait() const {
  if (!done_.load(std::memory_order_acquire)) {
    if (detail::in_host_callback())
      detail::throw_error<RuntimeError>("host callback",
                                "the callback waits for a jitx value that is not computed yet; a callback runs on "
                                "the device stream that runs its program, so jitx computations inside "
                                "debug::print/debug::callback/pure_callback are not supported: compute on the "
                                "values the callback receives with plain C++ instead");
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return done_.load(std::memory_order_relaxed); });
  }
  if (error_) std::rethrow_exception(error_);
}

std::shared_ptr<Buffer> Buffer::pending(DType dtype, std::vector<int64_t> dims, Device* dev) {
  auto b = std::make_shared<Buffer>();
  b->dtype = dtype;
  b->dims = std::move(dims);
  b->ready = std::make_shared<Event>();
  b->device = dev;
  return b;
}

std::shared_ptr<Buffer> Buffer::from_literal(const detail::Literal& lit, Device* dev) {
  auto b = std::make_shared<Buffer>();
  b->dtype = lit.dtype;
  b->dims = lit.dims;
  b->storage = lit.storage;
  b->ready = Event::ready_now();
  b->device = dev;
  return b;
}

detail::Literal Buffer::literal() const {
  ready->wait();
  if (is_foreign(*this)) return foreign_platform(device->platform)->fetch(*this);  // device memory: copied back
  detail::Literal l;
  l.dtype = dtype;
  l.dims = dims;
  l.storage = storage;
  return l;
}

Stream::Stream(std::string name) : thread_([this] { loop(); }) { (void)name; }
Stream::~Stream() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}
void Stream::enqueue(std::function<void()> work) {
  bool wake;
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(std::move(work));
    pending_.store(static_cast<int64_t>(queue_.size()), std::memory_order_release);
    ++enqueued_;
    // A running item's finish_one() wakes the thread for what follows; a thread still spinning sees pending_.
    wake = !running_ && sleeping_;
  }
  if (wake) cv_.notify_one();
}
void Stream::synchronize() { wait_for(position()); }
int64_t Stream::position() {
  std::lock_guard<std::mutex> l(mu_);
  return enqueued_;
}
void Stream::wait_for(int64_t position) {
  std::unique_lock<std::mutex> l(mu_);
  ++synchronizing_;
  done_cv_.wait(l, [&] { return done_ >= position; });
  --synchronizing_;
}

void Buffer::note_reader(Device* dev) {
  int64_t pos = dev->stream.position();
  std::lock_guard<std::mutex> l(readers_mu_);
  for (auto& [d, p] : readers_)
    if (d == dev) {
      p = pos;
      return;
    }
  readers_.emplace_back(dev, pos);
}

void Buffer::wait_for_readers_except(const Device* dev) {
  std::vector<std::pair<Device*, int64_t>> readers;
  {
    std::lock_guard<std::mutex> l(readers_mu_);
    readers = readers_;
  }
  for (auto& [d, p] : readers)
    if (d != dev) d->stream.wait_for(p);
}
void Stream::finish_one() {
  bool wake_thread, wake_sync;
  {
    std::lock_guard<std::mutex> l(mu_);
    running_ = false;
    ++done_;
    wake_thread = !queue_.empty() && sleeping_;
    wake_sync = synchronizing_ > 0;
  }
  if (wake_sync) done_cv_.notify_all();
  if (wake_thread) cv_.notify_one();
}
void Stream::loop() {
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> l(mu_);
      auto ready = [&] { return (stop_ && !running_) || (!queue_.empty() && !running_); };
      if (!ready()) {
        l.unlock();
        spin_until([&] { return pending_.load(std::memory_order_acquire) > 0; }, kStreamSpin);
        l.lock();
        sleeping_ = true;
        cv_.wait(l, ready);
        sleeping_ = false;
      }
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
      pending_.store(static_cast<int64_t>(queue_.size()), std::memory_order_release);
      running_ = true;
    }
    work();  // work items catch their own errors and deliver them through events
    // Its captures (argument buffers, the executable) go before the item counts as done: once synchronize() has
    // returned, nothing the finished work held is alive (the stress tests count live buffers right after; the
    // closure used to die at the end of this iteration, after the count, and a test saw 3 buffers and 1
    // executable still alive about once in a few hundred runs).
    work = nullptr;
    {
      std::lock_guard<std::mutex> l(mu_);
      running_ = false;
      ++done_;
      if (synchronizing_ > 0) done_cv_.notify_all();
    }
  }
}

Device::Device(int id_, std::string platform_, int process_index_, bool local_)
    : id(id_), platform(std::move(platform_)), process_index(process_index_), local(local_),
      stream(platform + ":" + std::to_string(id_)) {}

Client& Client::get() {
  static Client* c = new Client();  // never destroyed: streams may still hold work at exit
  return *c;
}

namespace {
std::map<std::string, BackendFactory, std::less<>>& backend_registry() {
  static std::map<std::string, BackendFactory, std::less<>> r;
  return r;
}
}  // namespace

namespace {
std::map<std::string, ForeignPlatform, std::less<>>& foreign_registry() {
  static std::map<std::string, ForeignPlatform, std::less<>> r;
  return r;
}
}  // namespace
bool register_foreign_platform(std::string name, ForeignPlatform p) {
  JITX_ASSERT(!foreign_registry().count(name), "foreign platform {} registered twice", name);
  foreign_registry().emplace(std::move(name), p);
  return true;
}
const ForeignPlatform* foreign_platform(std::string_view platform) {
  auto it = foreign_registry().find(platform);
  return it == foreign_registry().end() ? nullptr : &it->second;
}
bool is_foreign(const Buffer& b) {
  // Host buffers with elements always have storage bytes; a foreign one's storage is a zero-byte placeholder.
  return b.storage && b.storage->nbytes() == 0 && b.num_elements() > 0 && b.device &&
         foreign_platform(b.device->platform);
}

bool register_backend(std::string platform, BackendFactory make) {
  JITX_ASSERT(!backend_registry().count(platform), "backend {} registered twice", platform);
  backend_registry().emplace(std::move(platform), make);
  return true;
}

std::string Backend::serialize(const Executable&) const {
  throw RuntimeError(fmt::format("the {} backend cannot serialise executables (jitx serialises the cpu backend's; "
                                 "set JITX_PLATFORM=cpu)", name()));
}
std::shared_ptr<Executable> Backend::deserialize(std::shared_ptr<const hlo::Module>, const CompileOptions&,
                                                 std::string_view) {
  throw RuntimeError(fmt::format("the {} backend cannot load serialised executables (jitx serialises the cpu "
                                 "backend's; set JITX_PLATFORM=cpu)", name()));
}

std::vector<std::string> registered_platforms() {
  std::vector<std::string> out;
  for (auto& [name, make] : backend_registry()) out.push_back(name);
  return out;
}

std::unique_ptr<Backend> make_backend(std::string_view platform) {
  auto it = backend_registry().find(platform);
  if (it == backend_registry().end())
    throw RuntimeError(fmt::format("[jitx] unknown platform '{}' (JITX_PLATFORM); expected one of: {}", platform,
                                   fmt::join(registered_platforms(), ", ")));
  return it->second();
}

Client::Client() {
  const auto& cfg = config();
  // The LLVM CPU backend is the default (the whole test suite passes on it); "interpreter" selects the oracle.
  backend_ = make_backend(cfg.platform.empty() ? "cpu" : cfg.platform);
  int n = std::max(1, cfg.cpu_device_count);
  try {
    for (int i = 0; i < n; ++i) devices_.push_back(std::make_unique<Device>(i, backend_->name()));
  } catch (const std::system_error& e) {  // each device runs its own stream threads
    throw RuntimeError(fmt::format("[jitx] cannot create {} devices (JITX_CPU_DEVICE_COUNT={}): starting device {}'s "
                                   "threads failed: {}; ask for fewer devices", n, n, devices_.size(), e.what()));
  }
}

}  // namespace jitx::runtime

namespace jitx {
std::string default_platform() { return runtime::Client::get().backend().name(); }
}  // namespace jitx

namespace jitx::runtime {

Placement place(std::span<const std::shared_ptr<Buffer>> args) {
  Placement p;
  for (size_t k = 0; k < args.size(); ++k) {
    const Buffer& b = *args[k];
    if (!b.committed) continue;
    if (!p.committed) {
      p.committed = true;
      p.device = b.device;
      p.first = static_cast<int64_t>(k);
    } else if (b.device != p.device) {
      p.second = static_cast<int64_t>(k);
      return p;
    }
  }
  if (!p.committed) p.device = Client::get().default_device();
  return p;
}

std::vector<Device*> Client::devices() {
  std::vector<Device*> out;
  for (auto& d : devices_) out.push_back(d.get());
  return out;
}

std::vector<Device*> Client::global_devices() {
  std::vector<Device*> out = devices();
  for (auto& d : remote_) out.push_back(d.get());
  std::sort(out.begin(), out.end(), [](const Device* a, const Device* b) { return a->id < b->id; });
  return out;
}

void Client::join_job(int64_t process, int64_t process_count) {
  int n = static_cast<int>(devices_.size());
  for (int i = 0; i < n; ++i) {
    devices_[static_cast<size_t>(i)]->id = static_cast<int>(process) * n + i;
    devices_[static_cast<size_t>(i)]->process_index = static_cast<int>(process);
  }
  remote_.clear();
  for (int64_t p = 0; p < process_count; ++p)
    if (p != process)
      for (int i = 0; i < n; ++i)
        remote_.push_back(std::make_unique<Device>(static_cast<int>(p) * n + i, backend_->name(), static_cast<int>(p),
                                                   /*local=*/false));
}

}  // namespace jitx::runtime
