// What the rest of jitx may ask about CUDA without the toolkit's headers: how many devices the driver sees and why
// there are none, the CUDA devices as runtime devices, and device_put onto them. Built with the toolkit
// (cuda_backend.cpp, cuda_devices.cpp) or without it (cuda_absent.cpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/literal.h"

namespace jitx::runtime {
class Buffer;
class Device;
}  // namespace jitx::runtime

namespace jitx::cuda {

/// Whether this build has the CUDA backend (configured with the CUDA toolkit).
bool backend_built();
/// The CUDA devices the driver sees; 0 with the reason in *why when there is no driver (or no backend).
int visible_devices(std::string* why);

/// The CUDA devices as runtime devices (platform "cuda", ids 0..n-1), each with its primary context, streams and
/// allocator, created on the first call; empty (the reason in *why) without a driver. They are not the client's
/// devices: computations do not run on them (execute_placed refuses), arrays are only copied there and back.
std::vector<runtime::Device*> runtime_devices(std::string* why = nullptr);
/// device_put onto CUDA device `dev`: stages `host` in pinned memory, starts the copy on the device's transfer
/// stream and returns the buffer at once (committed to `dev`; its event fires when the copy is done or failed).
/// Reading it back (Buffer::literal()) copies it to the host. RuntimeError when `dev` is not a CUDA device of this
/// process (no driver).
std::shared_ptr<runtime::Buffer> put(const detail::Literal& host, runtime::Device* dev);

/// Test-only: the CUDA devices come from the driver library at `path` (tests/fake_cuda_driver.cpp) instead of
/// libcuda.so.1; "" goes back to libcuda.so.1. Devices handed out before stay alive (their arrays readable), but
/// are no longer this process's CUDA devices: device_put to them throws.
void use_driver_library_for_testing(const std::string& path);

}  // namespace jitx::cuda
