// The CUDA devices of the public API (see cuda_platform.h): runtime devices of platform "cuda" over GpuDevice, and
// buffers in their memory whose value Buffer::literal() copies back through runtime/foreign_memory.h.
#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "backends/cuda/cuda_executable.h"
#include "backends/cuda/cuda_platform.h"
#include "backends/cuda/cuda_runtime.h"
#include "jitx/error.h"
#include "runtime/foreign_memory.h"
#include "runtime/runtime.h"

namespace jitx::cuda {
namespace {
struct Registry {
  std::unique_ptr<Driver> owned;  // a test's driver library
  const Driver* d = nullptr;
  std::string why;  // no driver: why
  bool made = false;
  std::vector<std::unique_ptr<GpuDevice>> gpus;
  std::vector<std::unique_ptr<runtime::Device>> devs;
};
std::mutex g_mu;
std::string g_path;            // "" : libcuda.so.1
Registry* g_reg = nullptr;     // never destroyed: arrays on its devices may live until the process ends
std::vector<Registry*> g_old;  // replaced by use_driver_library_for_testing, kept alive for the same reason

Registry& registry_locked() {
  if (g_reg) return *g_reg;
  auto* r = new Registry;
  if (g_path.empty()) {
    r->d = try_driver(&r->why);
  } else {
    r->owned = open_driver(g_path, &r->why);
    r->d = r->owned.get();
  }
  g_reg = r;
  return *r;
}

// A CUDA buffer's storage owner: keeps the device array alive; found again from the storage by fetch().
struct Holder {
  std::shared_ptr<GpuArray> a;
  GpuDevice* gpu = nullptr;
  const detail::Storage* key = nullptr;
  ~Holder();
};
std::mutex g_holders_mu;
std::unordered_map<const detail::Storage*, Holder*> g_holders;
Holder::~Holder() {
  std::lock_guard<std::mutex> l(g_holders_mu);
  g_holders.erase(key);
}

detail::Literal fetch(const runtime::Buffer& b) {
  Holder* h = nullptr;
  {
    std::lock_guard<std::mutex> l(g_holders_mu);
    auto it = g_holders.find(b.storage.get());
    if (it != g_holders.end()) h = it->second;  // alive: b.storage owns it
  }
  if (!h) throw RuntimeError(fmt::format("reading an array on {}: it holds no CUDA memory", b.device->str()));
  return h->gpu->fetch(h->a);
}
void wait(const runtime::Buffer& b) {
  std::shared_ptr<GpuArray> a = array_of(b);
  if (!a) throw RuntimeError(fmt::format("waiting for an array on {}: it holds no CUDA memory", b.device->str()));
  a->block_until_ready();
}
const bool kCudaDevicesRegistered =
    runtime::register_foreign_platform("cuda", runtime::ForeignPlatform{&fetch, &wait, &execute_on_device});
}  // namespace

int visible_devices(std::string* why) {
  std::lock_guard<std::mutex> l(g_mu);
  Registry& r = registry_locked();
  if (!r.d) {
    if (why) *why = r.why;
    return 0;
  }
  int n = 0;
  CUresult e = r.d->cuDeviceGetCount(&n);
  if (e != CUDA_SUCCESS) {
    if (why) *why = fmt::format("cuDeviceGetCount failed ({})", static_cast<int>(e));
    return 0;
  }
  if (n == 0 && why) *why = "the CUDA driver reports no devices";
  return n;
}

std::vector<runtime::Device*> runtime_devices(std::string* why) {
  int n = visible_devices(why);
  std::lock_guard<std::mutex> l(g_mu);
  Registry& r = registry_locked();
  if (n > 0 && !r.made) {
    std::vector<std::unique_ptr<GpuDevice>> gpus;  // all or none (a failure throws, and a later call retries)
    for (int i = 0; i < n; ++i) gpus.push_back(std::make_unique<GpuDevice>(*r.d, i));
    r.gpus = std::move(gpus);
    for (int i = 0; i < n; ++i) r.devs.push_back(std::make_unique<runtime::Device>(i, "cuda"));
    r.made = true;
  }
  std::vector<runtime::Device*> out;
  for (auto& d : r.devs) out.push_back(d.get());
  return out;
}

std::shared_ptr<runtime::Buffer> put(const detail::Literal& host, runtime::Device* dev) {
  GpuDevice* gpu = nullptr;
  std::string why;
  {
    std::lock_guard<std::mutex> l(g_mu);
    Registry& r = registry_locked();
    for (size_t i = 0; i < r.devs.size(); ++i)
      if (r.devs[i].get() == dev) gpu = r.gpus[i].get();
    why = r.d ? "the device belongs to a CUDA driver this process no longer uses" : "no CUDA driver: " + r.why;
  }
  if (!gpu) throw RuntimeError(fmt::format("{} is not a CUDA device of this process ({})", dev->str(), why));
  auto b = std::make_shared<runtime::Buffer>();
  b->dtype = host.dtype;
  b->dims = host.dims;
  b->device = dev;
  b->committed = true;
  std::shared_ptr<GpuArray> a = gpu->put(host);
  attach(*b, a, gpu);
  // The buffer's event fires when the copy has landed (or failed): a wait on the device's runtime stream.
  b->ready = std::make_shared<runtime::Event>();
  dev->stream.enqueue([a, ev = b->ready] {
    try {
      a->block_until_ready();
      ev->set();
    } catch (...) {
      ev->set_error(std::current_exception());
    }
  });
  return b;
}

GpuDevice* gpu_of(const runtime::Device* dev) {
  std::lock_guard<std::mutex> l(g_mu);
  Registry& r = registry_locked();
  for (size_t i = 0; i < r.devs.size(); ++i)
    if (r.devs[i].get() == dev) return r.gpus[i].get();
  return nullptr;
}

std::shared_ptr<GpuArray> array_of(const runtime::Buffer& b) {
  std::lock_guard<std::mutex> l(g_holders_mu);
  auto it = g_holders.find(b.storage.get());
  return it == g_holders.end() ? nullptr : it->second->a;
}

void attach(runtime::Buffer& b, std::shared_ptr<GpuArray> a, GpuDevice* gpu) {
  auto h = std::make_shared<Holder>();
  h->a = std::move(a);
  h->gpu = gpu;
  b.storage = detail::Storage::wrap(nullptr, 0, h, false);
  h->key = b.storage.get();
  std::lock_guard<std::mutex> l(g_holders_mu);
  g_holders[h->key] = h.get();
}

void use_driver_library_for_testing(const std::string& path) {
  std::lock_guard<std::mutex> l(g_mu);
  if (g_reg) g_old.push_back(g_reg);
  g_reg = nullptr;
  g_path = path;
}

}  // namespace jitx::cuda
