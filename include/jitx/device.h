// Devices: jitx::devices(), default_device(), device_put — a thin public view of the runtime's devices.
#pragma once
#include <string>
#include <vector>

#include "jitx/array.h"

namespace jitx {

namespace runtime {
class Device;
}

/// A handle to one device of the process-wide client (cheap to copy, compares by identity).
class Device {
 public:
  explicit Device(runtime::Device* d) : d_(d) {}
  int id() const;
  std::string platform() const;  // "cpu" or "interpreter"
  std::string str() const;       // "cpu:0"
  /// The process that owns the device (jitx::distributed; 0 in a one-process run).
  int process_index() const;
  /// Whether this process can hold buffers on the device and run work there (its own devices).
  bool is_addressable() const;
  bool operator==(const Device& o) const { return d_ == o.d_; }
  runtime::Device* get() const { return d_; }

 private:
  runtime::Device* d_;
};

/// All devices of the platform (JITX_CPU_DEVICE_COUNT of them, default 1), as jax.devices(): in a multi-process
/// job (jitx::distributed::initialize) every process's devices, ordered by id.
std::vector<Device> devices();
/// This process's devices (jax.local_devices()); the same as devices() in a one-process run.
std::vector<Device> local_devices();
/// devices().size() and local_devices().size() (jax.device_count(), jax.local_device_count()).
int64_t device_count();
int64_t local_device_count();
Device default_device();
/// The device a concrete array lives on; throws TracerError for tracers.
Device device_of(const Array& a, Loc loc = Loc::current());
/// A copy of a concrete array on `device` (waits for the value first), committed to it: jitted calls and eager ops
/// on it run on that device (on its stream), and their results are committed there too. Arguments committed to
/// different devices are an error; uncommitted arrays (created without device_put) go wherever the call runs.
Array device_put(const Array& a, Device device, Loc loc = Loc::current());

}  // namespace jitx
