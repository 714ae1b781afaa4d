// The "cuda" platform: registered with the runtime; without a driver it reports why, and with one it says that
// running kernels on the device is not implemented yet (code generation to PTX is: cuda_codegen.h).
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
      "JITX_PLATFORM=cuda: the driver sees {} CUDA device(s), but running executables on them is not implemented "
      "yet (the cuda backend generates PTX only; see the README's CUDA section)", n));
}
const bool kCudaBackendRegistered = runtime::register_backend("cuda", &make_cuda_backend);
}  // namespace

}  // namespace jitx::cuda
