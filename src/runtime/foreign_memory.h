// Buffers whose memory the host cannot read directly: those of devices outside the client's platform (a CUDA
// device's memory, reached through jitx::devices("cuda") and device_put). Such a buffer's `storage` is a zero-byte
// placeholder that keeps its device memory alive (its owner); Buffer::literal() reads the value back through the
// platform's registered fetch. Computations on such buffers run through the platform's execute hook (execute_placed),
// or are refused where it has none.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/literal.h"

namespace jitx::runtime {

class Buffer;
class Device;
class Executable;

struct ForeignPlatform {
  /// The buffer's value on the host (waits for it; throws RuntimeError when the work that computed it failed).
  detail::Literal (*fetch)(const Buffer& b) = nullptr;
  /// Waits until the device has computed `b` (its `ready` event only says the work is enqueued there); throws
  /// RuntimeError when that work failed.
  void (*wait)(const Buffer& b) = nullptr;
  /// Runs `exe`'s module on `dev` (a device of the platform) over `args` and returns its pending outputs; nullptr
  /// where computations do not run on the platform's devices.
  std::vector<std::shared_ptr<Buffer>> (*execute)(const Executable& exe, std::span<const std::shared_ptr<Buffer>> args,
                                                  Device* dev) = nullptr;
};
/// Registers platform `name` (at static initialisation, as register_backend does); returns true.
bool register_foreign_platform(std::string name, ForeignPlatform p);
/// The registration of `platform`, or nullptr when buffers of that platform are host memory.
const ForeignPlatform* foreign_platform(std::string_view platform);
/// Whether `b` is such a buffer (a placeholder storage with elements behind it).
bool is_foreign(const Buffer& b);

}  // namespace jitx::runtime
