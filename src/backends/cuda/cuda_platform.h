// What the rest of jitx may ask about CUDA without the toolkit's headers: how many devices the driver sees and why
// there are none. Built with the toolkit (cuda_backend.cpp) or without it (cuda_absent.cpp).
#pragma once
#include <string>

namespace jitx::cuda {

/// Whether this build has the CUDA backend (configured with the CUDA toolkit).
bool backend_built();
/// The CUDA devices the driver sees; 0 with the reason in *why when there is no driver (or no backend).
int visible_devices(std::string* why);

}  // namespace jitx::cuda
