// Running an executable on placed argument buffers (shared by eager evaluation and jit calls).
#include "dispatch/execute.h"

#include "core/errors.h"
#include "runtime/concrete.h"
#include "runtime/foreign_memory.h"

namespace jitx::detail {

std::vector<Array> execute_placed(runtime::Executable& exe, std::span<const std::shared_ptr<runtime::Buffer>> args,
                                  std::span<const ShapedArray> out_avals, std::string_view what, const ArgNames& names,
                                  std::span<const uint8_t> donated) {
  runtime::Placement at = runtime::place(args);
  if (at.second >= 0)
    throw_error<RuntimeError>(what,
                              "got {} committed to different devices: {} is on {}, {} is on {} (device_put "
                              "them onto one device)",
                              names.noun, names.name(at.first), args[at.first]->device->str(), names.name(at.second),
                              args[at.second]->device->str());
  const runtime::ForeignPlatform* foreign = at.committed ? runtime::foreign_platform(at.device->platform) : nullptr;
  if (foreign && !foreign->execute)
    throw_error<RuntimeError>(what,
                              "{} is on {}: running computations on {} devices is not implemented yet "
                              "(device_put them to a cpu device first)",
                              names.name(at.first), at.device->str(), at.device->platform);
  // With several devices, one buffer may be read by several streams (an uncommitted array goes wherever the
  // computation runs): an in-place write on this stream must wait for the reads queued on the others.
  bool several = runtime::Client::get().num_devices() > 1;
  if (several)
    for (size_t i = 0; i < donated.size(); ++i)
      if (donated[i]) args[i]->wait_for_readers_except(at.device);
  // A foreign platform's device (CUDA) runs the executable's module with its own backend.
  auto outs = foreign ? foreign->execute(exe, args, at.device) : exe.execute(args, at.device);
  if (several)
    for (auto& a : args) a->note_reader(at.device);
  if (at.committed)
    for (auto& o : outs) o->committed = true;
  std::vector<Array> result;
  result.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) result.push_back(make_concrete(std::move(outs[i]), out_avals[i].weak_type));
  return result;
}

}  // namespace jitx::detail
