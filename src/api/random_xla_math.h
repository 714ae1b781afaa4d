// XLA:CPU's own f32 log, log1p, erf and erf_inv, and f32/f16/bf16 arithmetic rounded per op as
// XLA:CPU rounds it, reproduced bit for bit for jax.random's samplers only (jitx's general lax::log
// etc. keep their own accuracy). See random_xla_math.cpp for how and why.
//
// Every function here works on float64 arrays that hold values of a narrower float type d (f32, f16
// or bf16): widen() brings a d array in (exactly), narrow() takes the result out (exactly), and each
// operation in between rounds its result to d by integer arithmetic, which no backend fuses, narrows
// or keeps in excess precision.
#pragma once

#include "jitx/array.h"

namespace jitx::random::xla_math {

Array widen(const Array& x);               // f16/bf16/f32 -> f64, exact
Array narrow(const Array& x64, DType d);   // f64 holding d values -> d, exact
Array round_to(const Array& x64, DType d);  // to the nearest d value, ties to even (subnormals too)

Array add(const Array& a, const Array& b, DType d);
Array sub(const Array& a, const Array& b, DType d);
Array mul(const Array& a, const Array& b, DType d);
Array div(const Array& a, const Array& b, DType d);
/// a * b + c in f32 with one rounding (XLA:CPU contracts a multiply into the add that uses it).
Array fma32(const Array& a, const Array& b, const Array& c);
/// a * b + c in f64 with one rounding, on f64 values (finite, no underflow in the product's error).
Array fma64(const Array& a, const Array& b, const Array& c);

/// XLA:CPU's f32 algorithms on f32 values (in f64): log, log1p, erf, erf_inv.
Array log32(const Array& x);
Array log1p32(const Array& x);
Array erf32(const Array& x);
Array erf_inv32(const Array& x);

/// XLA:CPU's f64 log1p (Cephes' rational, libm's log(1 + x) above 0.414) and ErfInv64, as its optimised code
/// evaluates them (fused multiply-adds), on f64 values.
Array log1p64(const Array& x);
Array erf_inv64(const Array& x);

}  // namespace jitx::random::xla_math
