// A fake CUDA driver for the runtime's plumbing tests ("[cuda_fake]"), NOT a GPU: device memory is host memory,
// each stream is a thread running its work in order, events complete when their stream reaches them, and a kernel
// launch is accepted but fails on its stream (this library cannot run PTX), so the error reaches the event
// recorded after it, and through cuStreamWaitEvent the work that waits for that event. Only what jitx's runtime
// resolves is exported, through cuGetProcAddress_v2 like the real driver.
//
// Environment: JITX_FAKE_CUDA_DELAY_MS delays every copy on a stream (to observe asynchrony);
// JITX_FAKE_CUDA_DEVICES (default 1) is the device count.
#include <cuda.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

struct CUstream_st {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> q;
  bool busy = false, stop = false;
  CUresult pending_error = CUDA_SUCCESS;  // a failed launch's, given to the next event recorded here
  std::thread t;
  CUstream_st() : t([this] { loop(); }) {}
  ~CUstream_st() {
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_all();
    t.join();
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

struct CUevent_st {
  std::mutex mu;
  std::condition_variable cv;
  int64_t recorded = 0, done = 0;
  CUresult error = CUDA_SUCCESS;
};

struct CUmod_st {
  std::string image;
};
struct CUctx_st {
  int device;
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

CUresult f_cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult f_cuDriverGetVersion(int* v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult f_cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_NOT_READY: *s = "CUDA_ERROR_NOT_READY"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; break;
    case CUDA_ERROR_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; break;
  }
  return CUDA_SUCCESS;
}
CUresult f_cuGetErrorString(CUresult r, const char** s) {
  *s = r == CUDA_ERROR_LAUNCH_FAILED ? "fake driver: kernels cannot run here (no GPU; plumbing test)"
                                     : "fake driver error";
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetCount(int* n) {
  const char* e = std::getenv("JITX_FAKE_CUDA_DEVICES");
  *n = e ? std::atoi(e) : 1;
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceGet(CUdevice* d, int ordinal) {
  int n = 0;
  f_cuDeviceGetCount(&n);
  if (ordinal < 0 || ordinal >= n || ordinal >= 8) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult f_cuDeviceGetName(char* name, int len, CUdevice) {
  std::snprintf(name, static_cast<size_t>(len), "jitx fake CUDA device (host memory, no kernels)");
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
  g_ctx[d].device = d;
  *c = &g_ctx[d];
  return CUDA_SUCCESS;
}
CUresult f_cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult f_cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult f_cuStreamCreate(CUstream* s, unsigned) {
  *s = new CUstream_st;
  return CUDA_SUCCESS;
}
CUresult f_cuStreamDestroy(CUstream s) {
  delete s;
  return CUDA_SUCCESS;
}
CUresult f_cuStreamSynchronize(CUstream s) {
  if (s) s->drain();
  return CUDA_SUCCESS;
}
CUresult f_cuStreamQuery(CUstream s) {
  if (!s) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> l(s->mu);
  return s->q.empty() && !s->busy ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult f_cuStreamWaitEvent(CUstream s, CUevent e, unsigned) {
  int64_t gen;
  {
    std::lock_guard<std::mutex> l(e->mu);
    gen = e->recorded;
  }
  s->push([s, e, gen] {
    std::unique_lock<std::mutex> l(e->mu);
    e->cv.wait(l, [&] { return e->done >= gen; });
    if (e->error != CUDA_SUCCESS) s->pending_error = e->error;  // the stream's own thread: no lock needed
  });
  return CUDA_SUCCESS;
}
CUresult f_cuEventCreate(CUevent* e, unsigned) {
  *e = new CUevent_st;
  return CUDA_SUCCESS;
}
CUresult f_cuEventDestroy(CUevent e) {
  delete e;
  return CUDA_SUCCESS;
}
CUresult f_cuEventRecord(CUevent e, CUstream s) {
  int64_t gen;
  {
    std::lock_guard<std::mutex> l(e->mu);
    gen = ++e->recorded;
  }
  auto complete = [e, gen](CUresult err) {
    {
      std::lock_guard<std::mutex> l(e->mu);
      e->done = gen;
      e->error = err;
    }
    e->cv.notify_all();
  };
  if (!s) {
    complete(CUDA_SUCCESS);
    return CUDA_SUCCESS;
  }
  s->push([s, complete] {
    CUresult err = s->pending_error;
    s->pending_error = CUDA_SUCCESS;
    complete(err);
  });
  return CUDA_SUCCESS;
}
CUresult f_cuEventQuery(CUevent e) {
  std::lock_guard<std::mutex> l(e->mu);
  if (e->done < e->recorded) return CUDA_ERROR_NOT_READY;
  return e->error;
}
CUresult f_cuEventSynchronize(CUevent e) {
  std::unique_lock<std::mutex> l(e->mu);
  e->cv.wait(l, [&] { return e->done >= e->recorded; });
  return e->error;
}
CUresult f_cuEventElapsedTime(float* ms, CUevent, CUevent) {
  *ms = 0;
  return CUDA_SUCCESS;
}
CUresult f_cuCtxSynchronize() { return CUDA_SUCCESS; }
CUresult f_cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  void* m = std::malloc(bytes);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(m);
  return CUDA_SUCCESS;
}
CUresult f_cuMemFree(CUdeviceptr p) {
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult f_cuMemAllocHost(void** p, size_t bytes) {
  *p = std::malloc(bytes);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult f_cuMemFreeHost(void* p) {
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult copy_async(void* dst, const void* src, size_t n, CUstream s) {
  auto work = [dst, src, n] {
    delay();
    std::memcpy(dst, src, n);
  };
  if (s) s->push(work);
  else work();
  return CUDA_SUCCESS;
}
CUresult f_cuMemcpyHtoDAsync(CUdeviceptr d, const void* h, size_t n, CUstream s) {
  return copy_async(reinterpret_cast<void*>(d), h, n, s);
}
CUresult f_cuMemcpyDtoHAsync(void* h, CUdeviceptr d, size_t n, CUstream s) {
  return copy_async(h, reinterpret_cast<const void*>(d), n, s);
}
CUresult f_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  return copy_async(reinterpret_cast<void*>(d), reinterpret_cast<const void*>(src), n, s);
}
CUresult f_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  auto work = [d, v, n] { std::memset(reinterpret_cast<void*>(d), v, n); };
  if (s) s->push(work);
  else work();
  return CUDA_SUCCESS;
}
// Accepts text with a kernel entry; anything else fails with a log, as the driver's JIT would.
CUresult f_cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned n, CUjit_option* opts, void** vals) {
  std::string text(static_cast<const char*>(image));
  if (text.find(".visible .entry") == std::string::npos) {
    for (unsigned i = 0; i < n; ++i)
      if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) {
        size_t cap = 0;
        for (unsigned j = 0; j < n; ++j)
          if (opts[j] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) cap = reinterpret_cast<size_t>(vals[j]);
        if (cap) std::snprintf(static_cast<char*>(vals[i]), cap, "fake driver JIT: no .visible .entry in the image");
      }
    return CUDA_ERROR_INVALID_PTX;
  }
  *m = new CUmod_st{std::move(text)};
  return CUDA_SUCCESS;
}
CUresult f_cuModuleUnload(CUmodule m) {
  delete m;
  return CUDA_SUCCESS;
}
CUresult f_cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  if (m->image.find(std::string(".entry ") + name) == std::string::npos) return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(m);
  return CUDA_SUCCESS;
}
// Accepted, then fails on the stream: the error reaches the next event recorded there.
CUresult f_cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          CUstream s, void**, void**) {
  if (!s) return CUDA_ERROR_LAUNCH_FAILED;
  s->push([s] { s->pending_error = CUDA_ERROR_LAUNCH_FAILED; });
  return CUDA_SUCCESS;
}

// Each fake has the exact prototype of cuda.h's entry point (the runtime calls it through that type).
#define JITX_FAKE_SAME_TYPE(name) static_assert(std::is_same_v<decltype(&f_##name), decltype(&::name)>, #name);
JITX_FAKE_SAME_TYPE(cuMemAlloc) JITX_FAKE_SAME_TYPE(cuMemFree) JITX_FAKE_SAME_TYPE(cuMemAllocHost)
JITX_FAKE_SAME_TYPE(cuMemcpyHtoDAsync) JITX_FAKE_SAME_TYPE(cuMemcpyDtoHAsync) JITX_FAKE_SAME_TYPE(cuMemcpyDtoDAsync)
JITX_FAKE_SAME_TYPE(cuMemsetD8Async) JITX_FAKE_SAME_TYPE(cuModuleLoadDataEx) JITX_FAKE_SAME_TYPE(cuModuleGetFunction)
JITX_FAKE_SAME_TYPE(cuLaunchKernel) JITX_FAKE_SAME_TYPE(cuStreamWaitEvent) JITX_FAKE_SAME_TYPE(cuEventRecord)
JITX_FAKE_SAME_TYPE(cuEventCreate) JITX_FAKE_SAME_TYPE(cuStreamCreate) JITX_FAKE_SAME_TYPE(cuDeviceGetAttribute)
JITX_FAKE_SAME_TYPE(cuDevicePrimaryCtxRetain) JITX_FAKE_SAME_TYPE(cuDevicePrimaryCtxRelease)
JITX_FAKE_SAME_TYPE(cuDeviceGetName) JITX_FAKE_SAME_TYPE(cuDeviceTotalMem) JITX_FAKE_SAME_TYPE(cuEventElapsedTime)
JITX_FAKE_SAME_TYPE(cuStreamDestroy) JITX_FAKE_SAME_TYPE(cuEventDestroy) JITX_FAKE_SAME_TYPE(cuGetErrorName)
#undef JITX_FAKE_SAME_TYPE

const std::map<std::string, void*>& table() {
  static const std::map<std::string, void*> t = {
#define F(name) {#name, reinterpret_cast<void*>(&f_##name)},
      F(cuInit) F(cuDriverGetVersion) F(cuGetErrorName) F(cuGetErrorString) F(cuDeviceGetCount) F(cuDeviceGet)
      F(cuDeviceGetName) F(cuDeviceGetAttribute) F(cuDeviceTotalMem) F(cuDevicePrimaryCtxRetain)
      F(cuDevicePrimaryCtxRelease) F(cuCtxSetCurrent) F(cuStreamCreate) F(cuStreamDestroy) F(cuStreamSynchronize)
      F(cuStreamWaitEvent) F(cuEventCreate) F(cuEventDestroy) F(cuEventRecord) F(cuEventQuery)
      F(cuEventSynchronize) F(cuEventElapsedTime) F(cuCtxSynchronize) F(cuMemAlloc) F(cuMemFree) F(cuMemAllocHost)
      F(cuMemFreeHost) F(cuMemcpyHtoDAsync) F(cuMemcpyDtoHAsync) F(cuMemcpyDtoDAsync) F(cuMemsetD8Async)
      F(cuModuleLoadDataEx) F(cuModuleUnload) F(cuModuleGetFunction) F(cuLaunchKernel) F(cuStreamQuery)
#undef F
  };
  return t;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
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
