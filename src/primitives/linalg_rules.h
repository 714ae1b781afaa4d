// The JVP and transpose rules of the linear-algebra primitives (linalg_ad.cpp), JAX's (jax/_src/lax/linalg.py).
#pragma once
#include <span>

#include "core/primitive.h"

namespace jitx::detail {

JvpResult lu_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps);
JvpResult cholesky_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps);
JvpResult triangular_solve_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps);
std::vector<Array> triangular_solve_transpose(std::span<const Array> cts, std::span<const LinearArg> args,
                                              const Params& ps);
JvpResult qr_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps);
JvpResult eigh_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps);
JvpResult svd_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps);

}  // namespace jitx::detail
