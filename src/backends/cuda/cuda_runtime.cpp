// The asynchronous runtime of one CUDA device (see cuda_runtime.h).
#include "backends/cuda/cuda_runtime.h"

#include <fmt/format.h>

#include <cstring>

#include "jitx/error.h"

namespace jitx::cuda {
namespace {
std::string error_name(const Driver& d, CUresult r) {
  const char *name = nullptr, *desc = nullptr;
  d.cuGetErrorName(r, &name);
  d.cuGetErrorString(r, &desc);
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", static_cast<int>(r)),
                     desc ? desc : "no description");
}
// Throws RuntimeError "<op>: <CUDA_ERROR_NAME> (<description>)", the names from driver d (not the process's
// driver: the tests run this runtime on a fake one).
void check(const Driver& d, CUresult r, const char* op) {
  if (r != CUDA_SUCCESS) throw RuntimeError(fmt::format("{}: {}", op, error_name(d, r)));
}
// An asynchronous failure seen by `op` reading an array computed by `producer`.
std::string async_failure(const Driver& d, const char* op, const std::string& producer, int ordinal, CUresult r) {
  return fmt::format(
      "{}: the work that computes this array ({}), or work before it, failed on cuda:{}: {} (errors of "
      "asynchronous CUDA work are sticky: the device's context cannot run anything after one)",
      op, producer, ordinal, error_name(d, r));
}
// Pinned staging blocks are rounded like device blocks and kept while they total at most this much.
constexpr size_t kMaxCachedStaging = size_t{256} << 20;
}  // namespace

GpuEvent::~GpuEvent() {
  if (d && e) d->cuEventDestroy(e);
}

GpuArray::~GpuArray() {
  if (device) device->release(*this);
}

bool GpuArray::is_ready() const {
  if (error || !ready) return true;
  CUresult r = device->d_.cuEventQuery(ready->e);
  return r != CUDA_ERROR_NOT_READY;
}

void GpuArray::block_until_ready() const { device->wait_ready(*this, "block_until_ready"); }

GpuDevice::GpuDevice(const Driver& d, int ordinal) : d_(d), ordinal_(ordinal) {
  check(d_, d_.cuDeviceGet(&dev_, ordinal), "cuDeviceGet");
  check(d_, d_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  try {
    make_current();
    for (CUstream& s : streams_) check(d_, d_.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  } catch (...) {
    for (CUstream s : streams_)
      if (s) d_.cuStreamDestroy(s);
    d_.cuDevicePrimaryCtxRelease(dev_);
    throw;
  }
  alloc_ = std::make_unique<CachingAllocator>(
      [this](size_t bytes) -> uint64_t {
        CUdeviceptr p = 0;
        CUresult r = d_.cuMemAlloc(&p, bytes);
        if (r == CUDA_SUCCESS) return p;
        if (r != CUDA_ERROR_OUT_OF_MEMORY) check(d_, r, "cuMemAlloc");
        // Out of memory: the allocator frees its cached blocks (of both streams) and retries; work still queued
        // on a stream may use a block freed just before, so both streams finish first.
        for (CUstream s : streams_) d_.cuStreamSynchronize(s);
        return 0;
      },
      [this](uint64_t p) { d_.cuMemFree(static_cast<CUdeviceptr>(p)); });
}

GpuDevice::~GpuDevice() {
  // Arrays must not outlive their device (their destructors return memory to it).
  make_current();
  for (CUstream s : streams_) d_.cuStreamSynchronize(s);
  alloc_.reset();
  for (auto& s : staging_) d_.cuMemFreeHost(s.host);
  for (auto& [key, m] : modules_) d_.cuModuleUnload(m.mod);
  for (CUstream s : streams_) d_.cuStreamDestroy(s);
  d_.cuDevicePrimaryCtxRelease(dev_);
}

void GpuDevice::make_current() const { check(d_, d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

std::string GpuDevice::name() const {
  char name[256] = {0};
  check(d_, d_.cuDeviceGetName(name, sizeof name, dev_), "cuDeviceGetName");
  return name;
}

// Asked of the driver once (every dispatch to the device reads it to find its executable).
int GpuDevice::compute_capability() const {
  std::call_once(cc_once_, [&] {
    int major = 0, minor = 0;
    const char* op = "cuDeviceGetAttribute";
    check(d_, d_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_), op);
    check(d_, d_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_), op);
    cc_ = major * 10 + minor;
  });
  return cc_;
}

std::shared_ptr<GpuEvent> GpuDevice::record(int stream) {
  auto ev = std::make_shared<GpuEvent>();
  check(d_, d_.cuEventCreate(&ev->e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  ev->d = &d_;
  check(d_, d_.cuEventRecord(ev->e, streams_[stream]), "cuEventRecord");
  return ev;
}

std::shared_ptr<GpuArray> GpuDevice::allocate(DType dtype, std::vector<int64_t> dims, int stream,
                                              std::string producer) {
  auto a = std::make_shared<GpuArray>();
  a->dtype = dtype;
  a->bytes = static_cast<size_t>(detail::num_elements(dims)) * dtype_size(dtype);
  a->dims = std::move(dims);
  a->producer = std::move(producer);
  a->stream = stream;
  a->ptr = static_cast<CUdeviceptr>(alloc_->allocate(a->bytes ? a->bytes : 1, stream));
  a->device = this;  // from here on the destructor returns the memory
  return a;
}

void GpuDevice::release(GpuArray& a) {
  if (!a.ptr) return;
  // Reads on the other stream must finish before the allocating stream's later work reuses the memory.
  for (auto& r : a.reads_) d_.cuStreamWaitEvent(streams_[a.stream], r->e, 0);
  alloc_->deallocate(a.ptr);
  a.ptr = 0;
}

GpuDevice::Staging GpuDevice::take_staging(size_t bytes) {
  size_t want = CachingAllocator::round_size(bytes ? bytes : 1);
  {
    std::lock_guard<std::mutex> l(mu_);
    for (size_t i = 0; i < staging_.size(); ++i) {
      Staging& s = staging_[i];
      if (s.bytes < want || s.bytes > 2 * want) continue;
      if (s.last_use && d_.cuEventQuery(s.last_use->e) == CUDA_ERROR_NOT_READY) continue;  // still being copied
      Staging out = std::move(s);
      staging_.erase(staging_.begin() + static_cast<std::ptrdiff_t>(i));
      out.last_use.reset();
      return out;
    }
  }
  Staging s;
  s.bytes = want;
  check(d_, d_.cuMemAllocHost(&s.host, want), "cuMemAllocHost (pinned staging buffer)");
  return s;
}

void GpuDevice::give_back_staging(Staging s) {
  std::lock_guard<std::mutex> l(mu_);
  size_t total = s.bytes;
  for (auto& t : staging_) total += t.bytes;
  if (total > kMaxCachedStaging && (!s.last_use || d_.cuEventQuery(s.last_use->e) != CUDA_ERROR_NOT_READY)) {
    d_.cuMemFreeHost(s.host);
    return;
  }
  staging_.push_back(std::move(s));
}

size_t GpuDevice::staging_blocks() const {
  std::lock_guard<std::mutex> l(mu_);
  return staging_.size();
}

std::shared_ptr<GpuArray> GpuDevice::put(const detail::Literal& host) {
  make_current();
  std::shared_ptr<GpuArray> a;
  try {
    a = allocate(host.dtype, host.dims, kTransfer, "device_put");
  } catch (const std::exception& e) {  // out of memory, or a sticky error of earlier work: the readers see it
    a = std::make_shared<GpuArray>();
    a->dtype = host.dtype;
    a->dims = host.dims;
    a->producer = "device_put";
    a->device = this;
    a->error = std::make_exception_ptr(RuntimeError(fmt::format("device_put: {}", e.what())));
    return a;
  }
  if (a->bytes == 0) {
    a->ready = record(kTransfer);
    return a;
  }
  Staging s = take_staging(a->bytes);
  std::memcpy(s.host, host.data(), a->bytes);
  CUresult r = d_.cuMemcpyHtoDAsync(a->ptr, s.host, a->bytes, streams_[kTransfer]);
  if (r != CUDA_SUCCESS) {
    a->error = std::make_exception_ptr(
        RuntimeError(fmt::format("device_put of {} bytes: cuMemcpyHtoDAsync: {}", a->bytes, error_name(d_, r))));
    give_back_staging(std::move(s));
    return a;
  }
  try {
    a->ready = record(kTransfer);
  } catch (const std::exception& e) {
    a->error = std::make_exception_ptr(RuntimeError(fmt::format("device_put of {} bytes: {}", a->bytes, e.what())));
    d_.cuStreamSynchronize(streams_[kTransfer]);  // the staging block may be reused only after the copy
  }
  s.last_use = a->ready;
  give_back_staging(std::move(s));
  return a;
}

void GpuDevice::wait_ready(const GpuArray& a, const char* op) const {
  if (a.error) std::rethrow_exception(a.error);
  if (!a.ready) return;
  CUresult r = d_.cuEventSynchronize(a.ready->e);
  if (r != CUDA_SUCCESS) throw RuntimeError(async_failure(d_, op, a.producer, ordinal_, r));
}

detail::Literal GpuDevice::fetch(const std::shared_ptr<GpuArray>& a) {
  if (a->error) std::rethrow_exception(a->error);
  make_current();
  auto out = detail::Literal::make(a->dtype, a->dims);
  if (a->bytes == 0) {
    wait_ready(*a, "fetch");
    return out;
  }
  Staging s = take_staging(a->bytes);
  // The transfer stream waits for the array's writer (on either stream), copies into the staging block, and the
  // host copies out of it once the event after the copy fires. Any failure (the writer's included: CUDA errors are
  // sticky) is reported with the array's producer.
  CUresult r = a->ready ? d_.cuStreamWaitEvent(streams_[kTransfer], a->ready->e, 0) : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) r = d_.cuMemcpyDtoHAsync(s.host, a->ptr, a->bytes, streams_[kTransfer]);
  std::shared_ptr<GpuEvent> done;
  if (r == CUDA_SUCCESS) {
    done = std::make_shared<GpuEvent>();
    r = d_.cuEventCreate(&done->e, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS) {
      done->d = &d_;
      r = d_.cuEventRecord(done->e, streams_[kTransfer]);
    }
    if (r == CUDA_SUCCESS) {
      s.last_use = done;
      r = d_.cuEventSynchronize(done->e);
    }
  }
  if (r == CUDA_SUCCESS) std::memcpy(out.data(), s.host, a->bytes);
  give_back_staging(std::move(s));
  if (r != CUDA_SUCCESS) throw RuntimeError(async_failure(d_, "fetch", a->producer, ordinal_, r));
  return out;
}

CUfunction GpuDevice::function(const GpuKernel& k) {
  std::string key = k.name + '\n' + k.ptx;
  std::lock_guard<std::mutex> l(mu_);
  auto it = modules_.find(key);
  if (it != modules_.end()) {
    ++module_hits_;
    return it->second.fn;
  }
  std::vector<char> log(16384, 0), info(16384, 0);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log.data(), reinterpret_cast<void*>(log.size()), info.data(), reinterpret_cast<void*>(info.size())};
  Module m;
  CUresult r = d_.cuModuleLoadDataEx(&m.mod, k.ptx.c_str(), 4, opts, vals);
  if (r != CUDA_SUCCESS)
    throw RuntimeError(fmt::format("cuModuleLoadDataEx of {} (%{}): {}; JIT log: {}", k.name, k.instruction,
                                   error_name(d_, r), log.data()));
  r = d_.cuModuleGetFunction(&m.fn, m.mod, k.name.c_str());
  if (r != CUDA_SUCCESS) {
    d_.cuModuleUnload(m.mod);
    throw RuntimeError(fmt::format("cuModuleGetFunction({}): {}", k.name, error_name(d_, r)));
  }
  modules_.emplace(std::move(key), m);
  return m.fn;
}

int64_t GpuDevice::modules_loaded() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int64_t>(modules_.size());
}
int64_t GpuDevice::module_cache_hits() const {
  std::lock_guard<std::mutex> l(mu_);
  return module_hits_;
}

std::vector<std::shared_ptr<GpuArray>> GpuDevice::launch(const GpuKernel& k,
                                                         std::span<const std::shared_ptr<GpuArray>> inputs,
                                                         const std::vector<hlo::Shape>& outputs) {
  size_t want = k.plan.num_operands + k.plan.num_scratch;
  if (inputs.size() != want || outputs.size() != k.plan.num_outputs)
    throw RuntimeError(fmt::format("cuda launch of {}: got {} inputs and {} outputs, expected {} and {}", k.name,
                                   inputs.size(), outputs.size(), want, k.plan.num_outputs));
  for (auto& in : inputs)
    if (in->device != this)
      throw RuntimeError(fmt::format("cuda launch of {}: an input lives on another device", k.name));
  return enqueue(fmt::format("kernel {} (%{})", k.name, k.instruction), inputs, outputs,
                 [&](CUstream stream, const std::vector<CUdeviceptr>& outs, const std::vector<CUdeviceptr>& ins) {
                   CUfunction fn = function(k);
                   std::vector<CUdeviceptr> params = outs;
                   params.insert(params.end(), ins.begin(), ins.end());
                   std::vector<void*> args;
                   for (auto& p : params) args.push_back(&p);
                   CUresult r =
                       d_.cuLaunchKernel(fn, static_cast<unsigned>(k.plan.grid), 1, 1,
                                         static_cast<unsigned>(k.plan.block), 1, 1, 0, stream, args.data(), nullptr);
                   return r == CUDA_SUCCESS ? std::string() : "cuLaunchKernel: " + error_name(d_, r);
                 });
}

std::vector<std::shared_ptr<GpuArray>> GpuDevice::enqueue(const std::string& producer,
                                                          std::span<const std::shared_ptr<GpuArray>> inputs,
                                                          const std::vector<hlo::Shape>& outputs,
                                                          const LibraryWork& work) {
  make_current();
  std::vector<std::shared_ptr<GpuArray>> outs;
  auto fail_all = [&](std::exception_ptr e) {
    if (outs.empty())  // failed before allocating: outputs that hold no memory, only the error
      for (auto& s : outputs) {
        auto o = std::make_shared<GpuArray>();
        o->dtype = s.dtype;
        o->dims = s.dims;
        o->producer = producer;
        o->device = this;  // holds no memory (ptr 0): nothing to give back
        outs.push_back(std::move(o));
      }
    for (auto& o : outs) o->error = e;
    return outs;
  };
  for (auto& in : inputs) {
    if (in->device != this) throw RuntimeError(fmt::format("{}: an input lives on another device", producer));
    if (in->error) {  // checked before any allocation (a sticky error would make that fail)
      // The input never got its value: neither do the outputs (every reader sees why).
      try {
        std::rethrow_exception(in->error);
      } catch (const std::exception& e) {
        return fail_all(
            std::make_exception_ptr(RuntimeError(fmt::format("{}: an input failed: {}", producer, e.what()))));
      }
    }
  }
  try {
    for (auto& s : outputs) outs.push_back(allocate(s.dtype, s.dims, kCompute, producer));
  } catch (const std::exception& e) {  // out of memory, or a sticky error of earlier work
    outs.clear();
    return fail_all(std::make_exception_ptr(RuntimeError(fmt::format("{}: {}", producer, e.what()))));
  }
  for (auto& in : inputs) {
    CUresult w = in->ready ? d_.cuStreamWaitEvent(streams_[kCompute], in->ready->e, 0) : CUDA_SUCCESS;
    if (w != CUDA_SUCCESS)
      return fail_all(std::make_exception_ptr(RuntimeError(async_failure(d_, "launch", in->producer, ordinal_, w))));
  }
  std::vector<CUdeviceptr> out_ptrs, in_ptrs;
  for (auto& o : outs) out_ptrs.push_back(o->ptr);
  for (auto& in : inputs) in_ptrs.push_back(in->ptr);
  try {
    std::string err = work(streams_[kCompute], out_ptrs, in_ptrs);
    if (!err.empty()) return fail_all(std::make_exception_ptr(RuntimeError(fmt::format("{}: {}", producer, err))));
  } catch (...) {
    return fail_all(std::current_exception());
  }
  std::shared_ptr<GpuEvent> done;
  try {
    done = record(kCompute);
  } catch (const std::exception& e) {
    return fail_all(std::make_exception_ptr(RuntimeError(fmt::format("{}: {}", producer, e.what()))));
  }
  for (auto& o : outs) o->ready = done;
  for (auto& in : inputs)
    if (in->stream != kCompute) {
      std::lock_guard<std::mutex> l(in->mu_);
      in->reads_.push_back(done);
    }
  return outs;
}

void GpuDevice::synchronize() {
  make_current();
  for (CUstream s : streams_) check(d_, d_.cuStreamSynchronize(s), "cuStreamSynchronize");
}

}  // namespace jitx::cuda
