// The CUDA backend's place holder in a build without the CUDA toolkit: JITX_PLATFORM=cuda says why it is missing.
#include <fmt/format.h>

#include "backends/cuda/cuda_platform.h"
#include "jitx/error.h"
#include "runtime/runtime.h"

namespace jitx::cuda {

bool backend_built() { return false; }
int visible_devices(std::string* why) {
  if (why) *why = "jitx was built without the CUDA backend (no CUDA toolkit found when it was configured)";
  return 0;
}
std::vector<runtime::Device*> runtime_devices(std::string* why) {
  visible_devices(why);
  return {};
}
std::shared_ptr<runtime::Buffer> put(const detail::Literal&, runtime::Device* dev) {
  throw RuntimeError(fmt::format("{}: jitx was built without the CUDA backend", dev->str()));
}
void use_driver_library_for_testing(const std::string&) {}

namespace {
std::unique_ptr<runtime::Backend> make_absent() {
  throw RuntimeError(
      "JITX_PLATFORM=cuda: jitx was built without the CUDA backend (CMake found no CUDA toolkit; install it, or "
      "point CUDAToolkit_ROOT at it, and configure again)");
}
const bool kCudaAbsentRegistered = runtime::register_backend("cuda", &make_absent);
}  // namespace

}  // namespace jitx::cuda
