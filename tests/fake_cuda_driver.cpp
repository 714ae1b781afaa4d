// A fake CUDA driver for the runtime's plumbing tests ("[cuda_fake]"), NOT a GPU: device memory is host memory, each
// stream is a thread running its work in order, events complete when their stream reaches them. It follows the
// Driver API's documented semantics where the runtime depends on them, so that a runtime bug fails a test:
// - calls that need a context (allocations, streams, events, modules) fail with CUDA_ERROR_INVALID_CONTEXT unless
//   the calling thread made one current (cuCtxSetCurrent); the primary context is reference counted, and is
//   destroyed (its sticky error cleared) when the last cuDevicePrimaryCtxRelease drops it;
// - cuStreamWaitEvent waits for the event's latest cuEventRecord at the time of the call (none: no wait);
//   cuEventQuery on an event never recorded is CUDA_SUCCESS; cuEventDestroy of an event still pending is safe;
// - an error of asynchronous work is sticky: once a failing kernel runs, every later call in its context returns
//   that error (cuEventQuery/Synchronize, cuStreamSynchronize, copies, launches), as the real driver's
//   CUDA_ERROR_ILLEGAL_ADDRESS does;
// - copies check that the device range lies inside one allocation (else CUDA_ERROR_INVALID_VALUE) and count the
//   asynchronous copies whose host side is not pinned (cuMemAllocHost) memory.
// Kernels: the fake cannot run PTX. A module loads when its text has ".version", ".target" and a ".visible .entry"
// (else CUDA_ERROR_INVALID_PTX with a message in the JIT error log). Launching an entry named "fake_copy" copies
// parameter 1 to parameter 0 (the smaller allocation's size) on the stream; "fake_fail" fails on the stream with
// CUDA_ERROR_ILLEGAL_ADDRESS (sticky); any other entry is refused at launch with CUDA_ERROR_NOT_SUPPORTED, unless a
// test set a kernel runner (jitx_fake_cuda_set_kernel_runner), which then computes it on the host.
//
// Environment: JITX_FAKE_CUDA_DELAY_MS delays every copy on a stream (to observe asynchrony);
// JITX_FAKE_CUDA_DEVICES (default 1, at most 8) is the device count. jitx_fake_cuda_counter(name) reads counters.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "fake_cuda.h"

namespace {
struct EventState {
  std::mutex mu;
  std::condition_variable cv;
  int64_t recorded = 0, done = 0;
};
}  // namespace
struct CUevent_st {
  CUctx_st* ctx;
  std::shared_ptr<EventState> s = std::make_shared<EventState>();  // queued work keeps it alive past destroy
};

struct CUmod_st {
  std::string image;
};
struct CUfunc_st {
  CUmod_st* mod;
  std::string name;
};

namespace {
int delay_ms() {
  const char* e = std::getenv("JITX_FAKE_CUDA_DELAY_MS");
  return e ? std::atoi(e) : 0;
}
void delay() {
  if (int ms = delay_ms()) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}
CUctx_st g_ctx[8];
// Test-only (jitx_fake_cuda_set_kernel_runner): computes launched kernels other than the two pretend ones.
using KernelRunner = int (*)(const char* entry, const char* ptx, const uint64_t* params, int nparams, unsigned grid,
                             unsigned block, void* user);
std::atomic<KernelRunner> g_runner{nullptr};
std::atomic<void*> g_runner_user{nullptr};
std::mutex g_mu;  // the primary contexts' refs, the allocation tables and the counters
thread_local CUctx_st* g_current = nullptr;
std::map<uintptr_t, size_t> g_device;  // device allocations: start -> size
std::map<uintptr_t, int> g_owner;      // device allocations: start -> the device whose primary context made it
std::map<uintptr_t, size_t> g_pinned;  // cuMemAllocHost blocks
std::map<std::string, int64_t> g_counters;

void count(const char* name, int64_t by = 1) {
  std::lock_guard<std::mutex> l(g_mu);
  g_counters[name] += by;
}
// The sticky error of the current context, or INVALID_CONTEXT without one.
CUresult current_state() {
  if (!g_current || g_current->refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  return g_current->sticky.load();
}
// Whether [p, p+n) lies inside one device allocation.
bool device_range(uintptr_t p, size_t n) {
  std::lock_guard<std::mutex> l(g_mu);
  auto it = g_device.upper_bound(p);
  if (it == g_device.begin()) return false;
  --it;
  return p >= it->first && p + n <= it->first + it->second;
}
size_t device_size(uintptr_t p) {
  std::lock_guard<std::mutex> l(g_mu);
  auto it = g_device.find(p);
  return it == g_device.end() ? 0 : it->second;
}
bool pinned_range(const void* h, size_t n) {
  auto p = reinterpret_cast<uintptr_t>(h);
  std::lock_guard<std::mutex> l(g_mu);
  auto it = g_pinned.upper_bound(p);
  if (it == g_pinned.begin()) return false;
  --it;
  return p + n <= it->first + it->second;
}

CUresult f_cuInit(unsigned flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult f_cuDriverGetVersion(int* v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult f_cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS:
      *s = "CUDA_SUCCESS";
      break;
    case CUDA_ERROR_INVALID_VALUE:
      *s = "CUDA_ERROR_INVALID_VALUE";
      break;
    case CUDA_ERROR_NOT_READY:
      *s = "CUDA_ERROR_NOT_READY";
      break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *s = "CUDA_ERROR_ILLEGAL_ADDRESS";
      break;
    case CUDA_ERROR_INVALID_PTX:
      *s = "CUDA_ERROR_INVALID_PTX";
      break;
    case CUDA_ERROR_NOT_FOUND:
      *s = "CUDA_ERROR_NOT_FOUND";
      break;
    case CUDA_ERROR_NOT_SUPPORTED:
      *s = "CUDA_ERROR_NOT_SUPPORTED";
      break;
    case CUDA_ERROR_INVALID_CONTEXT:
      *s = "CUDA_ERROR_INVALID_CONTEXT";
      break;
    case CUDA_ERROR_INVALID_DEVICE:
      *s = "CUDA_ERROR_INVALID_DEVICE";
      break;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *s = "CUDA_ERROR_OUT_OF_MEMORY";
      break;
    default:
      *s = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult f_cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *s = "an illegal memory access was encountered (fake driver)";
      break;
    case CUDA_ERROR_NOT_SUPPORTED:
      *s = "the fake driver runs no PTX (plumbing test, not a GPU)";
      break;
    default:
      *s = "fake driver error";
      break;
  }
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetCount(int* n) {
  const char* e = std::getenv("JITX_FAKE_CUDA_DEVICES");
  *n = e ? std::max(0, std::min(8, std::atoi(e))) : 1;
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceGet(CUdevice* d, int ordinal) {
  int n = 0;
  f_cuDeviceGetCount(&n);
  if (ordinal < 0 || ordinal >= n) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetName(char* name, int len, CUdevice d) {
  std::snprintf(name, static_cast<size_t>(len), "jitx fake CUDA device %d (host memory, no kernels)", d);
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceTotalMem(size_t* b, CUdevice) {
  *b = size_t{1} << 30;
  return CUDA_SUCCESS;
}
CUresult f_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  if (d < 0 || d >= 8) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard<std::mutex> l(g_mu);
  g_ctx[d].device = d;
  ++g_ctx[d].refs;
  *c = &g_ctx[d];
  return CUDA_SUCCESS;
}
CUresult f_cuDevicePrimaryCtxRelease(CUdevice d) {
  if (d < 0 || d >= 8) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard<std::mutex> l(g_mu);
  if (g_ctx[d].refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (--g_ctx[d].refs == 0) {  // destroyed: a later retain gets a fresh context
    g_ctx[d].sticky = CUDA_SUCCESS;
    // As the real driver, destroying a context frees the memory still allocated in it (after a sticky error
    // cuMemFree fails, so this is the only way that memory goes back).
    for (auto it = g_owner.begin(); it != g_owner.end();) {
      if (it->second != d) {
        ++it;
        continue;
      }
      std::free(reinterpret_cast<void*>(it->first));
      g_device.erase(it->first);
      it = g_owner.erase(it);
    }
  }
  return CUDA_SUCCESS;
}
CUresult f_cuCtxSetCurrent(CUcontext c) {
  g_current = c;
  return CUDA_SUCCESS;
}
CUresult f_cuCtxSynchronize() { return current_state(); }
CUresult f_cuStreamCreate(CUstream* s, unsigned) {
  if (CUresult r = current_state()) return r;
  *s = new CUstream_st(g_current);
  return CUDA_SUCCESS;
}
CUresult f_cuStreamDestroy(CUstream s) {
  delete s;
  return CUDA_SUCCESS;
}
CUresult f_cuStreamSynchronize(CUstream s) {
  if (!s) return CUDA_ERROR_INVALID_HANDLE;  // the runtime uses its own streams only
  s->drain();
  return s->ctx->sticky.load();
}
CUresult f_cuStreamQuery(CUstream s) {
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = s->ctx->sticky.load()) return r;
  std::lock_guard<std::mutex> l(s->mu);
  return s->q.empty() && !s->busy ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult f_cuEventCreate(CUevent* e, unsigned) {
  if (CUresult r = current_state()) return r;
  *e = new CUevent_st{g_current};
  return CUDA_SUCCESS;
}
CUresult f_cuEventDestroy(CUevent e) {
  delete e;  // queued records and waits hold the state
  return CUDA_SUCCESS;
}
CUresult f_cuEventRecord(CUevent e, CUstream s) {
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  if (e->ctx != s->ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (CUresult r = s->ctx->sticky.load()) return r;
  std::shared_ptr<EventState> st = e->s;
  int64_t gen;
  {
    std::lock_guard<std::mutex> l(st->mu);
    gen = ++st->recorded;
  }
  s->push([st, gen] {
    {
      std::lock_guard<std::mutex> l(st->mu);
      st->done = std::max(st->done, gen);
    }
    st->cv.notify_all();
  });
  return CUDA_SUCCESS;
}
CUresult f_cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  if (!s || !e || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = s->ctx->sticky.load()) return r;
  std::shared_ptr<EventState> st = e->s;
  int64_t gen;
  {
    std::lock_guard<std::mutex> l(st->mu);
    gen = st->recorded;  // the latest record now; later records do not matter
  }
  count("stream_waits");
  s->push([st, gen] {
    std::unique_lock<std::mutex> l(st->mu);
    st->cv.wait(l, [&] { return st->done >= gen; });
  });
  return CUDA_SUCCESS;
}
CUresult f_cuEventQuery(CUevent e) {
  if (CUresult r = e->ctx->sticky.load()) return r;
  std::lock_guard<std::mutex> l(e->s->mu);
  return e->s->done < e->s->recorded ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}
CUresult f_cuEventSynchronize(CUevent e) {
  {
    std::unique_lock<std::mutex> l(e->s->mu);
    e->s->cv.wait(l, [&] { return e->s->done >= e->s->recorded; });
  }
  return e->ctx->sticky.load();
}
CUresult f_cuEventElapsedTime(float* ms, CUevent, CUevent) {
  *ms = 0;
  return CUDA_SUCCESS;
}
CUresult f_cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  if (CUresult r = current_state()) return r;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* m = std::malloc(bytes);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(m);
  std::lock_guard<std::mutex> l(g_mu);
  g_device[*p] = bytes;
  g_owner[*p] = g_current->device;
  ++g_counters["mem_alloc"];
  return CUDA_SUCCESS;
}
CUresult f_cuMemFree(CUdeviceptr p) {
  if (CUresult r = current_state()) return r;
  std::lock_guard<std::mutex> l(g_mu);
  if (!g_device.erase(p)) return CUDA_ERROR_INVALID_VALUE;
  g_owner.erase(p);
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult f_cuMemAllocHost(void** p, size_t bytes) {
  if (CUresult r = current_state()) return r;
  *p = std::malloc(bytes ? bytes : 1);
  if (!*p) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> l(g_mu);
  g_pinned[reinterpret_cast<uintptr_t>(*p)] = bytes;
  ++g_counters["mem_alloc_host"];
  return CUDA_SUCCESS;
}
CUresult f_cuMemFreeHost(void* p) {
  std::lock_guard<std::mutex> l(g_mu);
  if (!g_pinned.erase(reinterpret_cast<uintptr_t>(p))) return CUDA_ERROR_INVALID_VALUE;
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult copy_async(void* dst, const void* src, size_t n, CUstream s, const void* host) {
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = s->ctx->sticky.load()) return r;
  if (host && !pinned_range(host, n)) count("pageable_copies");
  count("copies");
  s->push([dst, src, n] {
    delay();
    std::memcpy(dst, src, n);
  });
  return CUDA_SUCCESS;
}
CUresult f_cuMemcpyHtoDAsync(CUdeviceptr d, const void* h, size_t n, CUstream s) {
  if (!device_range(d, n)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(reinterpret_cast<void*>(d), h, n, s, h);
}
CUresult f_cuMemcpyDtoHAsync(void* h, CUdeviceptr d, size_t n, CUstream s) {
  if (!device_range(d, n)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(h, reinterpret_cast<const void*>(d), n, s, h);
}
CUresult f_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  if (!device_range(d, n) || !device_range(src, n)) return CUDA_ERROR_INVALID_VALUE;
  return copy_async(reinterpret_cast<void*>(d), reinterpret_cast<const void*>(src), n, s, nullptr);
}
CUresult f_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  if (!device_range(d, n)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = s->ctx->sticky.load()) return r;
  s->push([d, v, n] { std::memset(reinterpret_cast<void*>(d), v, n); });
  return CUDA_SUCCESS;
}
CUresult f_cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned n, CUjit_option* opts, void** vals) {
  if (CUresult r = current_state()) return r;
  std::string text(static_cast<const char*>(image));
  const char* missing = text.find(".version") == std::string::npos          ? ".version"
                        : text.find(".target") == std::string::npos         ? ".target"
                        : text.find(".visible .entry") == std::string::npos ? ".visible .entry"
                                                                            : nullptr;
  if (missing) {
    char* log = nullptr;
    size_t cap = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) log = static_cast<char*>(vals[i]);
      if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) cap = reinterpret_cast<size_t>(vals[i]);
    }
    if (log && cap) std::snprintf(log, cap, "ptxas fatal   : fake driver JIT: the image has no %s directive", missing);
    return CUDA_ERROR_INVALID_PTX;
  }
  *m = new CUmod_st{std::move(text)};
  count("modules_loaded");
  return CUDA_SUCCESS;
}
CUresult f_cuModuleUnload(CUmodule m) {
  delete m;
  return CUDA_SUCCESS;
}
CUresult f_cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  const std::string entry = std::string(".entry ") + name;
  size_t at = m->image.find(entry);
  if (at == std::string::npos) return CUDA_ERROR_NOT_FOUND;
  char next = at + entry.size() < m->image.size() ? m->image[at + entry.size()] : '(';
  if (next != '(' && next != ' ' && next != '\n') return CUDA_ERROR_NOT_FOUND;  // another entry's prefix
  static std::mutex fmu;
  static std::map<std::pair<CUmod_st*, std::string>, std::unique_ptr<CUfunc_st>> funcs;
  std::lock_guard<std::mutex> l(fmu);
  auto& slot = funcs[{m, name}];
  if (!slot) slot = std::make_unique<CUfunc_st>(CUfunc_st{m, name});
  *f = slot.get();
  return CUDA_SUCCESS;
}
CUresult f_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned, CUstream s, void** params, void** extra) {
  if (!s || !f) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = s->ctx->sticky.load()) return r;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 || extra) return CUDA_ERROR_INVALID_VALUE;
  count("launches");
  if (f->name == "fake_copy") {
    auto out = *static_cast<CUdeviceptr*>(params[0]), in = *static_cast<CUdeviceptr*>(params[1]);
    size_t n = std::min(device_size(out), device_size(in));
    if (n == 0) return CUDA_ERROR_INVALID_VALUE;
    s->push([out, in, n] {
      delay();
      std::memcpy(reinterpret_cast<void*>(out), reinterpret_cast<const void*>(in), n);
    });
    return CUDA_SUCCESS;
  }
  if (f->name == "fake_fail") {
    CUctx_st* c = s->ctx;
    s->push([c] {
      delay();
      c->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
    });
    return CUDA_SUCCESS;
  }
  if (KernelRunner run = g_runner.load()) {
    // The executor's tests: the host computes the kernel (its parameters counted from the PTX entry's signature;
    // the values are copied at launch, as the driver does).
    const std::string& img = f->mod->image;
    size_t at = img.find(".entry " + f->name);
    size_t end = img.find(')', at);
    int n = 0;
    for (size_t p = img.find(f->name + "_param_", at); p != std::string::npos && p < end;
         p = img.find(f->name + "_param_", p + 1))
      ++n;
    std::vector<uint64_t> vals;
    for (int i = 0; i < n; ++i) vals.push_back(*static_cast<CUdeviceptr*>(params[i]));
    CUctx_st* c = s->ctx;
    unsigned grid = gx * gy * gz, block = bx * by * bz;
    s->push([run, c, name = f->name, img, vals, grid, block] {
      delay();
      if (run(name.c_str(), img.c_str(), vals.data(), static_cast<int>(vals.size()), grid, block,
              g_runner_user.load()) != 0)
        c->sticky = CUDA_ERROR_LAUNCH_FAILED;
    });
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

// Each fake has the exact prototype of cuda.h's entry point (the runtime calls it through that type).
#define JITX_FAKE_SAME_TYPE(name) static_assert(std::is_same_v<decltype(&f_##name), decltype(&::name)>, #name);
#define JITX_FAKE_FNS(X)                                                                                               \
  X(cuInit)                                                                                                            \
  X(cuDriverGetVersion)                                                                                                \
  X(cuGetErrorName)                                                                                                    \
  X(cuGetErrorString)                                                                                                  \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                    \
      X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamDestroy) \
          X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)              \
              X(cuEventQuery) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuCtxSynchronize) X(cuMemAlloc)            \
                  X(cuMemFree) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)            \
                      X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuModuleLoadDataEx) X(cuModuleUnload)                  \
                          X(cuModuleGetFunction) X(cuLaunchKernel) X(cuStreamQuery)
JITX_FAKE_FNS(JITX_FAKE_SAME_TYPE)
#undef JITX_FAKE_SAME_TYPE

const std::map<std::string, void*>& table() {
  static const std::map<std::string, void*> t = {
#define F(name) {#name, reinterpret_cast<void*>(&f_##name)},
      JITX_FAKE_FNS(F)
#undef F
  };
  return t;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int,
                                                                               cuuint64_t,
                                                                               CUdriverProcAddressQueryResult* status) {
  auto it = table().find(symbol);
  if (it == table().end()) {
    *pfn = nullptr;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = it->second;
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

namespace jitx_fake {
void count(const char* name, int64_t by) { ::count(name, by); }
void delay() { ::delay(); }
bool device_range(uintptr_t p, size_t n) { return ::device_range(p, n); }
}  // namespace jitx_fake

// Test-only: launches of kernels other than fake_copy/fake_fail call `run` on the stream (with the entry, the module's
// PTX and the parameters' values); a non-zero return fails the stream (CUDA_ERROR_LAUNCH_FAILED, sticky). nullptr:
// such launches are refused again.
extern "C" __attribute__((visibility("default"))) void jitx_fake_cuda_set_kernel_runner(KernelRunner run, void* user) {
  g_runner_user = user;
  g_runner = run;
}

// Test-only: "copies", "pageable_copies", "stream_waits", "launches", "modules_loaded", "mem_alloc",
// "mem_alloc_host" (counts since the library was loaded), "live_device", "live_pinned" (allocations now).
extern "C" __attribute__((visibility("default"))) int64_t jitx_fake_cuda_counter(const char* name) {
  std::lock_guard<std::mutex> l(g_mu);
  std::string n = name;
  if (n == "live_device") return static_cast<int64_t>(g_device.size());
  if (n == "live_pinned") return static_cast<int64_t>(g_pinned.size());
  auto it = g_counters.find(n);
  return it == g_counters.end() ? 0 : it->second;
}
