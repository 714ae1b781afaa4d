// CUDA devices from the public API: jitx::devices("cuda") is empty where there is no CUDA driver.
#pragma once
#include <string_view>
#include <vector>

#include "jitx/device.h"

namespace jitx {

/// The devices of one platform: the process's own platform's devices (devices()); for "cuda" (or "gpu"), the CUDA
/// devices: empty when there is no CUDA driver or the build has no CUDA backend. Throws RuntimeError for any other
/// platform. Jitted calls and eager ops on arrays committed to a CUDA device (device_put) run there.
std::vector<Device> devices(std::string_view platform, Loc loc = Loc::current());

/// Whether this jitx was built with the CUDA backend (the toolkit was found at configure time), and the reason
/// there are no CUDA devices ("" when the driver sees some).
bool cuda_backend_built();
std::string cuda_unavailable_reason();

}  // namespace jitx
