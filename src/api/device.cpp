// The public device API over runtime::Client.
#include "jitx/device.h"

#include <cstring>

#include "core/errors.h"
#include "core/trace.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"

namespace jitx {

int Device::id() const { return d_->id; }
std::string Device::platform() const { return d_->platform; }
std::string Device::str() const { return d_->str(); }

std::vector<Device> devices() {
  std::vector<Device> out;
  for (auto* d : runtime::Client::get().devices()) out.emplace_back(d);
  return out;
}

Device default_device() { return Device(runtime::Client::get().default_device()); }

Device device_of(const Array& a, Loc loc) {
  detail::ApiScope s(loc);
  return Device(detail::concrete_buffer(a, "device_of")->device);
}

Array device_put(const Array& a, Device device, Loc loc) {
  detail::ApiScope s(loc);
  if (!device.get()) detail::throw_error<RuntimeError>("device_put", "got a null device");
  const auto& buf = detail::concrete_buffer(a, "device_put");
  auto lit = buf->literal();  // waits for the value
  // A fresh copy: buffers may later be donated and written in place, so two devices never share memory.
  auto copy = detail::Literal::make(lit.dtype, lit.dims);
  if (lit.nbytes() > 0) std::memcpy(copy.data(), lit.data(), lit.nbytes());
  auto out = runtime::Buffer::from_literal(copy, device.get());
  out->committed = true;
  return detail::make_concrete(out, a.weak_type());
}

}  // namespace jitx
