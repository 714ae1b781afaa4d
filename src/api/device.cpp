// The public device API over runtime::Client.
#include "jitx/device.h"
#include "jitx/cuda.h"

#include <cstring>

#include "backends/cuda/cuda_platform.h"
#include "core/errors.h"
#include "core/trace.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"

namespace jitx {

namespace {
/// The device behind a handle; a null one (Device(nullptr)) is a clear error, not a crash.
const runtime::Device& checked(const runtime::Device* d, const char* what) {
  if (!d) detail::throw_error<TypeError>(what, "the Device handle is null (Device(nullptr)); take devices from "
                                               "jitx::devices() or default_device()");
  return *d;
}
}  // namespace

int Device::id() const { return checked(d_, "Device.id").id; }
std::string Device::platform() const { return checked(d_, "Device.platform").platform; }
std::string Device::str() const { return d_ ? d_->str() : "Device(null)"; }
int Device::process_index() const { return checked(d_, "Device.process_index").process_index; }
bool Device::is_addressable() const { return checked(d_, "Device.is_addressable").local; }

std::vector<Device> devices() {
  std::vector<Device> out;
  for (auto* d : runtime::Client::get().global_devices()) out.emplace_back(d);
  return out;
}

std::vector<Device> local_devices() {
  std::vector<Device> out;
  for (auto* d : runtime::Client::get().devices()) out.emplace_back(d);
  return out;
}

int64_t device_count() { return static_cast<int64_t>(runtime::Client::get().global_devices().size()); }
int64_t local_device_count() { return static_cast<int64_t>(runtime::Client::get().num_devices()); }

std::vector<Device> devices(std::string_view platform, Loc loc) {
  detail::ApiScope s(loc);
  // CUDA first: asking for CUDA devices neither needs nor starts the process's client (JITX_PLATFORM=cuda throws
  // when the client starts).
  if (platform == "cuda" || platform == "gpu") {
    // No driver: none (cuda_unavailable_reason() says why), and nothing else changes. With one: devices that
    // hold arrays (device_put there and back); computations on them are not implemented yet.
    std::vector<Device> out;
    for (auto* d : cuda::runtime_devices()) out.emplace_back(d);
    return out;
  }
  std::string own = runtime::Client::get().backend().name();
  if (platform == own) return devices();
  detail::throw_error<RuntimeError>("devices", "got platform '{}'; this process runs platform '{}' (JITX_PLATFORM) "
                                    "and knows 'cuda' besides", platform, own);
}

bool cuda_backend_built() { return cuda::backend_built(); }
std::string cuda_unavailable_reason() {
  std::string why;
  return cuda::visible_devices(&why) > 0 ? "" : why;
}

Device default_device() { return Device(runtime::Client::get().default_device()); }

Device device_of(const Array& a, Loc loc) {
  detail::ApiScope s(loc);
  return Device(detail::concrete_buffer(a, "device_of")->device);
}

Array device_put(const Array& a, Device device, Loc loc) {
  detail::ApiScope s(loc);
  if (!device.get()) detail::throw_error<RuntimeError>("device_put", "got a null device");
  if (!device.is_addressable())
    detail::throw_error<RuntimeError>("device_put",
                                      "got device {} of process {}, but this is process {}: a process can only put "
                                      "arrays on its own devices (jitx::local_devices())",
                                      device.str(), device.process_index(), runtime::Client::get().default_device()
                                                                                ->process_index);
  const auto& buf = detail::concrete_buffer(a, "device_put");
  auto lit = buf->literal();  // waits for the value (copied back to the host when it is in CUDA memory)
  if (device.platform() == "cuda") {
    try {
      return detail::make_concrete(cuda::put(lit, device.get()), a.weak_type());
    } catch (const RuntimeError& e) {  // the cuda layer's message, named as every API error is, with the location
      detail::throw_error<RuntimeError>("device_put", "{}", e.what());
    }
  }
  // A fresh copy: buffers may later be donated and written in place, so two devices never share memory.
  auto copy = detail::Literal::make(lit.dtype, lit.dims);
  if (lit.nbytes() > 0) std::memcpy(copy.data(), lit.data(), lit.nbytes());
  auto out = runtime::Buffer::from_literal(copy, device.get());
  out->committed = true;
  return detail::make_concrete(out, a.weak_type());
}

}  // namespace jitx
