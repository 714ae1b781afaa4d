// config().debug_nans/debug_infs for jitted calls: the de-optimised re-run that finds the primitive at fault.
#pragma once
#include <span>
#include <string>

#include "core/jaxpr.h"

namespace jitx::detail {

/// A jitted call of `name` produced a NaN/inf (`what`): runs its jaxpr on args one primitive at a time, eagerly,
/// each at the user's line that traced it, so that the first primitive producing one throws FloatingPointError
/// (dispatch/eager.cpp). If none does (the value came from an argument), throws FloatingPointError saying so.
[[noreturn]] void deoptimized_rerun(const ClosedJaxpr& cj, std::span<const Array> args, const std::string& name,
                                    const std::string& what);

}  // namespace jitx::detail
