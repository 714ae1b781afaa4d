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
#include <cublasLt.h>
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

struct CUctx_st {
  int device = 0;
  int refs = 0;
  std::atomic<CUresult> sticky{CUDA_SUCCESS};
};

struct CUstream_st {
  CUctx_st* ctx;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> q;
  bool busy = false, stop = false;
  std::thread t;
  explicit CUstream_st(CUctx_st* c) : ctx(c), t([this] { loop(); }) {}
  ~CUstream_st() {
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_all();
    t.join();  // runs what is queued first (the real cuStreamDestroy also lets queued work finish)
  }
  void push(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> l(mu);
      q.push_back(std::move(f));
    }
    cv.notify_all();
  }
  void loop() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> l(mu);
        cv.wait(l, [&] { return stop || !q.empty(); });
        if (q.empty()) return;
        f = std::move(q.front());
        q.pop_front();
        busy = true;
      }
      f();
      {
        std::lock_guard<std::mutex> l(mu);
        busy = false;
      }
      cv.notify_all();
    }
  }
  void drain() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return q.empty() && !busy; });
  }
};

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
#define JITX_FAKE_FNS(X)                                                                                     \
  X(cuInit)                                                                                                  \
  X(cuDriverGetVersion)                                                                                      \
  X(cuGetErrorName)                                                                                          \
  X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)          \
      X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)        \
          X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuEventCreate)  \
              X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery) X(cuEventSynchronize) X(cuEventElapsedTime) \
                  X(cuCtxSynchronize) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocHost) X(cuMemFreeHost)          \
                      X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async)      \
                          X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel)   \
                              X(cuStreamQuery)
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

// --- a fake cuBLASLt (the subset jitx's cublaslt.cpp calls), for the executor's tests: column-major matmuls
// (op(A) m x k times op(B) k x n into D, strided batches) computed in double on the stream's thread over host
// memory, f32/f64/bf16/f16 elements, as cuBLASLt documents them. Loaded in place of libcublasLt by
// cuda::Blas::use_library_for_testing. ---
struct cublasLtContext {
  int unused = 0;
};
namespace {
struct LtDesc {
  int32_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  cublasComputeType_t compute;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // BIAS, RELU_BIAS or GELU_BIAS: the bias per row of D
  const void* bias = nullptr;
  int32_t bias_type = -1;  // -1: D's type
};
struct LtLayout {
  cudaDataType type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
static_assert(sizeof(LtDesc) <= sizeof(cublasLtMatmulDescOpaque_t) &&
              sizeof(LtLayout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
LtDesc& desc(cublasLtMatmulDesc_t d) { return *reinterpret_cast<LtDesc*>(d->data); }
LtLayout& layout(cublasLtMatrixLayout_t l) { return *reinterpret_cast<LtLayout*>(l->data); }
size_t type_size(cudaDataType t) { return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2; }
double load(const char* p, cudaDataType t) {
  uint32_t bits;
  switch (t) {
    case CUDA_R_64F: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case CUDA_R_32F: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CUDA_R_16BF: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      bits = static_cast<uint32_t>(h) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    default: {  // f16
      uint16_t h;
      std::memcpy(&h, p, 2);
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
      return (h & 0x8000) ? -v : v;
    }
  }
}
void store(char* p, cudaDataType t, double v) {
  switch (t) {
    case CUDA_R_64F:
      std::memcpy(p, &v, 8);
      return;
    case CUDA_R_32F: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case CUDA_R_16BF: {  // round to nearest even
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      uint16_t h = static_cast<uint16_t>((b + 0x7fff + ((b >> 16) & 1)) >> 16);
      std::memcpy(p, &h, 2);
      return;
    }
    default: {  // f16, round to nearest (the tests' values are normal)
      float f = static_cast<float>(v);
      int e;
      double m = std::frexp(std::fabs(f), &e);  // f = m 2^e, m in [0.5, 1)
      uint16_t h = f < 0 ? 0x8000 : 0;
      if (f != 0) {
        int be = e + 14;  // biased exponent of m 2^e = (2m) 2^(e-1)
        if (be >= 31)
          h |= 0x7c00;
        else if (be <= 0)
          h |= static_cast<uint16_t>(std::nearbyint(std::ldexp(std::fabs(f), 24)));
        else
          h |= static_cast<uint16_t>((be << 10) + static_cast<int>(std::nearbyint((2 * m - 1) * 1024)));
      }
      std::memcpy(p, &h, 2);
      return;
    }
  }
}
}  // namespace

#define JITX_FAKE_LT extern "C" __attribute__((visibility("default")))
JITX_FAKE_LT cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
  *h = new cublasLtContext;
  count("cublaslt_handles");
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT const char* cublasLtGetStatusName(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_NOT_SUPPORTED (fake cuBLASLt)";
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t c, cudaDataType_t) {
  *d = new cublasLtMatmulDescOpaque_t{};
  desc(*d) = LtDesc{CUBLAS_OP_N, CUBLAS_OP_N, c};
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  delete d;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                                           const void* buf, size_t n) {
  if (a == CUBLASLT_MATMUL_DESC_BIAS_POINTER) {
    if (n != sizeof(void*)) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(&desc(d).bias, buf, n);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (n != 4) return CUBLAS_STATUS_INVALID_VALUE;
  if (a == CUBLASLT_MATMUL_DESC_TRANSA)
    std::memcpy(&desc(d).ta, buf, 4);
  else if (a == CUBLASLT_MATMUL_DESC_TRANSB)
    std::memcpy(&desc(d).tb, buf, 4);
  else if (a == CUBLASLT_MATMUL_DESC_EPILOGUE)
    std::memcpy(&desc(d).epilogue, buf, 4);
  else if (a == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE)
    std::memcpy(&desc(d).bias_type, buf, 4);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType t, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  if (ld < static_cast<int64_t>(rows)) return CUBLAS_STATUS_INVALID_VALUE;  // column-major: ld >= rows
  *l = new cublasLtMatrixLayoutOpaque_t{};
  layout(*l) = LtLayout{t, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  delete l;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                             cublasLtMatrixLayoutAttribute_t a, const void* buf,
                                                             size_t n) {
  if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && n == 4)
    std::memcpy(&layout(l).batch, buf, 4);
  else if (a == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET && n == 8)
    std::memcpy(&layout(l).stride, buf, 8);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  *p = new cublasLtMatmulPreferenceOpaque_t{};
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  delete p;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                                 cublasLtMatmulPreferenceAttributes_t, const void*,
                                                                 size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                                           cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                           cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                           cublasLtMatmulPreference_t, int requested,
                                                           cublasLtMatmulHeuristicResult_t results[], int* found) {
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].state = CUBLAS_STATUS_SUCCESS;
  *found = 1;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t op, const void* alpha, const void* A,
                                           cublasLtMatrixLayout_t Ad, const void* B, cublasLtMatrixLayout_t Bd,
                                           const void* beta, const void* C, cublasLtMatrixLayout_t Cd, void* D,
                                           cublasLtMatrixLayout_t Dd, const cublasLtMatmulAlgo_t* algo, void*, size_t,
                                           cudaStream_t s) {
  if (!s || !algo || C != D || Cd != Dd) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (s->ctx->sticky.load()) return CUBLAS_STATUS_EXECUTION_FAILED;
  LtDesc o = desc(op);
  LtLayout a = layout(Ad), b = layout(Bd), d = layout(Dd);
  bool f64 = o.compute == CUBLAS_COMPUTE_64F;
  double al = f64 ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  double be = f64 ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  uint64_t m = d.rows, n = d.cols, k = o.ta == CUBLAS_OP_N ? a.cols : a.rows;
  uint64_t am = o.ta == CUBLAS_OP_N ? a.rows : a.cols, bk = o.tb == CUBLAS_OP_N ? b.rows : b.cols,
           bn = o.tb == CUBLAS_OP_N ? b.cols : b.rows;
  if (am != m || bk != k || bn != n || a.batch != d.batch || b.batch != d.batch || be != 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!device_range(reinterpret_cast<CUdeviceptr>(D), 1) || !device_range(reinterpret_cast<CUdeviceptr>(A), 1) ||
      !device_range(reinterpret_cast<CUdeviceptr>(B), 1))
    return CUBLAS_STATUS_INVALID_VALUE;
  bool biased = o.epilogue == CUBLASLT_EPILOGUE_BIAS || o.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                o.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
  if (o.epilogue != CUBLASLT_EPILOGUE_DEFAULT &&
      (!biased || !o.bias || !device_range(reinterpret_cast<CUdeviceptr>(o.bias), m * type_size(d.type))))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  cudaDataType bias_type = o.bias_type < 0 ? d.type : static_cast<cudaDataType>(o.bias_type);
  count("cublaslt_matmuls");
  if (biased) count("cublaslt_epilogues");
  s->push([=] {
    delay();
    auto* pa = static_cast<const char*>(A);
    auto* pb = static_cast<const char*>(B);
    auto* pd = static_cast<char*>(D);
    for (int32_t t = 0; t < d.batch; ++t)
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t i = 0; i < m; ++i) {
          double acc = 0;
          for (uint64_t p = 0; p < k; ++p) {
            int64_t ia = o.ta == CUBLAS_OP_N ? static_cast<int64_t>(i + p * a.ld) : static_cast<int64_t>(p + i * a.ld);
            int64_t ib = o.tb == CUBLAS_OP_N ? static_cast<int64_t>(p + j * b.ld) : static_cast<int64_t>(j + p * b.ld);
            acc += load(pa + (t * a.stride + ia) * type_size(a.type), a.type) *
                   load(pb + (t * b.stride + ib) * type_size(b.type), b.type);
          }
          double v = al * acc;
          if (biased) {  // computed in the compute type, rounded once into D, as cuBLASLt does
            v += load(static_cast<const char*>(o.bias) + i * type_size(bias_type), bias_type);
            if (o.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) v = std::max(v, 0.0);
            if (o.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS)
              v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
          }
          store(pd + (t * d.stride + static_cast<int64_t>(i + j * d.ld)) * type_size(d.type), d.type, v);
        }
  });
  return CUBLAS_STATUS_SUCCESS;
}
#undef JITX_FAKE_LT

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
