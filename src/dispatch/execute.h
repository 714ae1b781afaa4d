// The one routine that runs an executable on Arrays: placement, the committed-device check, execution, results.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/jaxpr.h"
#include "runtime/runtime.h"

namespace jitx::detail {

/// What execute_placed reports about a call's arguments in its errors.
struct ArgNames {
  std::string_view noun;                           // "operands" (eager), "arguments" (jit)
  std::function<std::string(size_t i)> name;       // "operand 1", "args[0].w"
};

/// Runs `exe` on the given argument buffers on the device they are placed on (a committed argument's device,
/// else the default one) and returns its outputs as concrete arrays with out_avals' weak types; outputs are
/// committed when an argument was. Throws RuntimeError naming `what` when arguments are committed to different
/// devices. Eager evaluation (bind) and jit calls both run through here. `donated[i]` marks an argument whose
/// buffer the executable may overwrite: reads of it still pending on another device's stream finish first.
std::vector<Array> execute_placed(runtime::Executable& exe, std::span<const std::shared_ptr<runtime::Buffer>> args,
                                  std::span<const ShapedArray> out_avals, std::string_view what,
                                  const ArgNames& names, std::span<const uint8_t> donated = {});

}  // namespace jitx::detail
