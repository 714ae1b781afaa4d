// Running an executable on placed argument buffers (shared by eager evaluation and jit calls).
#include "dispatch/execute.h"

#include "core/errors.h"
#include "runtime/concrete.h"

namespace jitx::detail {

std::vector<Array> execute_placed(runtime::Executable& exe, std::span<const std::shared_ptr<runtime::Buffer>> args,
                                  std::span<const ShapedArray> out_avals, std::string_view what,
                                  const ArgNames& names) {
  runtime::Placement at = runtime::place(args);
  if (at.second >= 0)
    throw_error<RuntimeError>(what, "got {} committed to different devices: {} is on {}, {} is on {} (device_put "
                              "them onto one device)", names.noun, names.name(at.first),
                              args[at.first]->device->str(), names.name(at.second), args[at.second]->device->str());
  auto outs = exe.execute(args, at.device);
  if (at.committed)
    for (auto& o : outs) o->committed = true;
  std::vector<Array> result;
  result.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) result.push_back(make_concrete(std::move(outs[i]), out_avals[i].weak_type));
  return result;
}

}  // namespace jitx::detail
