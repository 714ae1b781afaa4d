// Loading the CUDA driver (see cuda_driver.h): dlopen once, every entry point through cuGetProcAddress.
#include "backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/errors.h"

namespace jitx::cuda {
namespace {
struct Loaded {
  Driver d;
  bool ok = false;
  std::string why;
};

// cuGetProcAddress (CUDA 12's _v2 signature, with the symbol status) or CUDA 11's.
using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

Loaded load(const std::string& path) {
  Loaded l;
  // Only the real driver: the toolkit's stub (lib64/stubs/libcuda.so) would make cuInit fail with
  // CUDA_ERROR_STUB_LIBRARY, so it is never on jitx's search path.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    l.why = fmt::format("dlopen(\"{}\") failed: {}", path, e ? e : "unknown error");
    return l;
  }
  auto v2 = reinterpret_cast<GetProcV2>(dlsym(h, "cuGetProcAddress_v2"));
  auto v1 = reinterpret_cast<GetProcV1>(dlsym(h, "cuGetProcAddress"));
  if (!v2 && !v1) {
    l.why = path + " has no cuGetProcAddress (a driver older than CUDA 11.3)";
    return l;
  }
  // The names without _v2: cuGetProcAddress returns the variant of the CUDA version asked for: cuda.h's, whose
  // prototypes the Driver members have.
  auto resolve = [&](const char* name, void** fn) {
    CUdriverProcAddressQueryResult status{};
    CUresult r = v2 ? v2(name, fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status)
                    : v1(name, fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT);
    return r == CUDA_SUCCESS && *fn != nullptr;
  };
  std::string missing;
#define JITX_CUDA_RESOLVE(name)                                                                                   \
  if (!resolve(#name, reinterpret_cast<void**>(&l.d.name))) missing += std::string(missing.empty() ? "" : ", ") + #name;
  JITX_CUDA_DRIVER_FNS(JITX_CUDA_RESOLVE)
#undef JITX_CUDA_RESOLVE
  if (!missing.empty()) {
    l.why = path + " lacks entry points: " + missing;
    return l;
  }
  CUresult r = l.d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    l.d.cuGetErrorName(r, &name);
    l.why = fmt::format("cuInit failed: {} ({})", name ? name : "unknown", static_cast<int>(r));
    return l;
  }
  l.d.cuDriverGetVersion(&l.d.version);
  l.ok = true;
  return l;  // the handle stays open for the process's life
}

const Loaded& loaded() {
  static const Loaded l = load("libcuda.so.1");
  return l;
}
}  // namespace

std::unique_ptr<Driver> open_driver(const std::string& path, std::string* why) {
  Loaded l = load(path);
  if (!l.ok) {
    if (why) *why = l.why;
    return nullptr;
  }
  return std::make_unique<Driver>(l.d);
}

const Driver* try_driver(std::string* why) {
  const Loaded& l = loaded();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.d : nullptr;
}

const Driver& driver(const char* op) {
  std::string why;
  const Driver* d = try_driver(&why);
  if (!d) throw RuntimeError(fmt::format("{}: no CUDA driver: {}", op, why));
  return *d;
}

int device_count() {
  const Driver* d = try_driver();
  int n = 0;
  if (!d || d->cuDeviceGetCount(&n) != CUDA_SUCCESS) return 0;
  return n;
}

void check(CUresult r, const char* op) {
  if (r == CUDA_SUCCESS) return;
  const Driver* d = try_driver();
  const char *name = nullptr, *desc = nullptr;
  if (d) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &desc);
  }
  throw RuntimeError(fmt::format("{}: {} ({})", op, name ? name : fmt::format("CUresult {}", static_cast<int>(r)),
                                 desc ? desc : "no description"));
}

}  // namespace jitx::cuda
