// The "cuda" platform as the process's default (JITX_PLATFORM=cuda): registered with the runtime; without a driver
// it reports why, and with one it says that this is not implemented yet (computations on arrays device_put onto a
// CUDA device do run there: cuda_executable.h).
#include <fmt/format.h>

#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_platform.h"
#include "jitx/error.h"
#include "runtime/runtime.h"

namespace jitx::cuda {

bool backend_built() { return true; }

namespace {
std::unique_ptr<runtime::Backend> make_cuda_backend() {
  std::string why;
  int n = visible_devices(&why);
  if (n == 0) throw RuntimeError(fmt::format("JITX_PLATFORM=cuda: no CUDA driver: {}", why));
  throw RuntimeError(fmt::format(
      "JITX_PLATFORM=cuda: the driver sees {} CUDA device(s), but CUDA as the default platform is not implemented "
      "yet: device_put arrays onto jitx::devices(\"cuda\") and computations on them run there (see the README's "
      "CUDA section)", n));
}
const bool kCudaBackendRegistered = runtime::register_backend("cuda", &make_cuda_backend);
}  // namespace

}  // namespace jitx::cuda
