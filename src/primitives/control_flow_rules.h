// The differentiation rules of cond, while and scan (control_flow_ad.cpp), registered with the primitives in
// control_flow.cpp.
#pragma once
#include "core/primitive.h"

namespace jitx::detail {
JvpFn cond_jvp_rule();
TransposeFn cond_transpose_rule();
/// Forward mode only: under linearize it throws the error naming lax::scan / a static fori_loop.
JvpFn while_jvp_rule();
TransposeFn while_transpose_rule();
JvpFn scan_jvp_rule();
TransposeFn scan_transpose_rule();
}  // namespace jitx::detail
