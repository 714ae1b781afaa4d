// The tests' one tolerance table: per dtype, how far a float result may be from its reference, and why.
//
// A comparison is |got - want| <= atol + rtol |want|, NaN matching NaN and equal values (infinities too) matching.
// Each dtype has one row of three bounds, tightest first; a test names the bound its comparison needs:
//   op     one op, or a primitive's short chain, against a reference computed on the same (rounded) inputs: a
//          double-precision reference, or the interpreter, which computes every op in double and rounds once.
//   sum    a result that sums many terms in another order than its reference: reductions, dots, convolutions,
//          cumulative ops, scans and loop bodies, batched ops (vmap) against their per-example loop.
//   fused  a fused kernel of the CPU backend (any fusion kind, sums included) against the interpreter: f32
//          multiplies fused into adds (FMAs, excess precision), the kernels' own exp/tanh/log polynomials, and
//          f16/bf16 values whose neighbouring ops round differently because of those.
// Integers and bool are exact. The bounds outside the rows (below them) are the special ones a test names.
//
// This replaces the tables that disagreed (test_util.h's tol, cpu_backend_test's cpu_tol, cpu_native_test's
// tol_of, cpu_layout_test's rtol_of, indexing_test's tolerance, cpu_runtime_test's kRtol/kAtol, vmap_test's
// defaults): each entry is the tightest of them that every test still passes (the worst measured error of the
// tightest test against its bound in brackets, "x of the bound").
#pragma once
#include "jitx/dtype.h"

namespace jitx::testing {

/// |got - want| <= atol + rtol |want|.
struct Tol {
  double rtol = 0, atol = 0;
};

/// The comparison a test makes (see the file comment).
enum class Bound { kOp, kSum, kFused };

/// One dtype's row of the table.
struct Tolerances {
  Tol op, sum, fused;
};

/// f64 (ULP 2.2e-16): C-library math (the interpreter's digamma and erf_inv are ~1e-14) and double sums in blocks.
/// rtol 1e-12 is loose enough for iterative special functions and reassociated sums of thousands of terms, tight
/// enough to catch a single-precision algorithm behind an f64 result; atol 1e-13 for results that cancel to ~0.
/// One row for all three: the CPU backend's f64 kernels, dots and column sums need no more [0.15x] (cpu_native
/// allowed rtol 1e-10, cpu_backend atol 1e-12: neither was needed).
inline constexpr Tolerances kF64Tolerances{
    .op = {1e-12, 1e-13},
    .sum = {1e-12, 1e-13},
    .fused = {1e-12, 1e-13},
};

/// f32 (ULP 1.2e-7).
///   op: rtol 2e-6 (~16 ULP): the CPU backend's polynomial math is within 4 ULP (5 for tanh) and a primitive's
///       chain rounds a few times; atol 1e-7 for results that cancel to ~0.
///   sum: rtol 1e-5 (~80 ULP), atol 1e-6: sums reassociate in blocks of up to a few thousand terms, split across
///       threads (column reductions, Eigen dots, convolutions, the primitives walk's reductions and the control-flow
///       and compile tests' loops and layer stacks need it: up to 6.4x op's bound, 0.76x this one). cpu_runtime
///       and compile_time allowed rtol 1e-4, atol 1e-5 for their programs of a few dozen ops: not needed [0.18x].
///   fused: as sum (a fused f32 kernel computes in f32 like the interpreter's rounded ops, sums aside).
inline constexpr Tolerances kF32Tolerances{
    .op = {2e-6, 1e-7},
    .sum = {1e-5, 1e-6},
    .fused = {1e-5, 1e-6},
};

/// f16 (ULP 9.8e-4; the CPU backend computes f16 in f32, rounding results to f16).
///   op, sum: rtol 2e-3 (~2 ULP), atol 1e-4: a result of an op on a rounded intermediate (exp2 = exp(x ln 2)) is
///       within two roundings; an f32 sum rounded once to f16 is within one (the primitives walk: 0.39x).
///   fused: rtol 4e-3 (4 ULP = 8u, u = 2^-11), atol 2e-3. Both round after every op, but a transcendental op's
///       f32 value (the kernel's polynomial, the interpreter's C library) can round to neighbouring f16 values,
///       and the later ops of a chain carry that difference: for the loop and row fusions of the backend tests
///       (a gelu-ish chain with exp after it, a layer norm: values up to ~10, exp turning an absolute input error
///       into a relative one) a few ULP (measured when fused kernels kept f16 in f32, the larger difference:
///       [1.3x cpu_native's 2e-3/1e-3, 3.7x op's; 0.66x this]).
inline constexpr Tolerances kF16Tolerances{
    .op = {2e-3, 1e-4},
    .sum = {2e-3, 1e-4},
    .fused = {4e-3, 2e-3},
};

/// bf16 (ULP 7.8e-3; computed in f32 like f16).
///   op, sum: rtol 1.6e-2 (~2 ULP), atol 1e-3, as f16's (unary ops: 0.63x). indexing_test allowed rtol 1e-2 of
///       max(1, |want|), too tight for the unary ops' two roundings.
///   fused: rtol 3.2e-2 (4 ULP = 8u, u = 2^-8), atol 2e-2, as f16's fused and for the same chains [1.3x
///       cpu_native's 1.6e-2/1e-2; 0.65x this].
inline constexpr Tolerances kBF16Tolerances{
    .op = {1.6e-2, 1e-3},
    .sum = {1.6e-2, 1e-3},
    .fused = {3.2e-2, 2e-2},
};

/// Integers and bool: exact.
inline constexpr Tolerances kExactTolerances{};

inline const Tolerances& tolerances(DType d) {
  switch (d) {
    case DType::float64: return kF64Tolerances;
    case DType::float32: return kF32Tolerances;
    case DType::float16: return kF16Tolerances;
    case DType::bfloat16: return kBF16Tolerances;
    default: return kExactTolerances;
  }
}

/// The bound b of dtype d's row.
inline Tol tol(DType d, Bound b = Bound::kOp) {
  const Tolerances& t = tolerances(d);
  switch (b) {
    case Bound::kOp: return t.op;
    case Bound::kSum: return t.sum;
    case Bound::kFused: return t.fused;
  }
  return t.op;
}

// --- special bounds, named by the tests that need them -------------------------------------------------------

/// Dots and convolutions on the CPU backend sum K products in another order than the interpreter's double loop:
/// the absolute part of the bound grows with K, this many times the row's atol (K up to ~100 at |x| <= 3).
inline constexpr double kDotAtolScale = 100;

/// An HLO pass against the module before it, both on the interpreter: a rewrite may reorder or fold f32 math
/// (x * 2^k, 1 + tanh(y) = 2 logistic(2y)), a few f32 roundings: |a - b| <= this times max(1, |a|, |b|).
inline constexpr double kRewriteRtol = 1e-6;

/// The CPU backend's math library: the largest error in ULP of the result's dtype against a long-double (or
/// double) reference over dense samples of each function's range, the edges included. Measured maxima in
/// brackets (JITX_PRINT_ULP=1 prints them).
struct SpecialFunctionUlp {
  double erf_inv;           ///< on (-1, 1), 1 - k ulp and tiny arguments included  [f32 3.2, f64 1.4]
  double digamma;           ///< on (0, 1e6), near the pole at 0 and around the positive root  [f32 0.5, f64 3.9]
  double digamma_negative;  ///< on (-20, 0), in ULP of max(|psi|, 1): where psi crosses zero between two poles
                            ///< the reflection psi(1 - x) - pi cot(pi x) cancels  [f32 0.5, f64 8.0]
};
inline constexpr SpecialFunctionUlp kF32SpecialUlp{.erf_inv = 4, .digamma = 1, .digamma_negative = 1};
inline constexpr SpecialFunctionUlp kF64SpecialUlp{.erf_inv = 2, .digamma = 5, .digamma_negative = 10};

/// The f32 polynomial math.
struct F32MathUlp {
  double polynomial;        ///< exp, expm1, log, log1p, logistic, erf, sin, cos  [<= 4]
  double tanh;              ///< a rational approximation with one division, for speed  [<= 5]
  double exp_range_ends;    ///< exp at overflow, subnormal results and specials: the correctly rounded result
                            ///< within 1 ULP (2^-149 for subnormal results)
  double logistic_product;  ///< x * logistic(3x) in one staged kernel: logistic's 4 ULP and the product's rounding
};
inline constexpr F32MathUlp kF32MathUlp{.polynomial = 4, .tanh = 5, .exp_range_ends = 1, .logistic_product = 5};

/// f32 results the backend tests check against double precision directly (not against the interpreter).
struct F32Accuracy {
  double long_sum;          ///< a sum of 2^20 values in [0, 1), blocked: relative to the double sum (a naive
                            ///< sequential f32 sum is off by ~1e-4 here)
  double column_sum;        ///< a column sum of 20001 rows: one f32 rounding of the double sum, relative
  Tol softmax;              ///< jitted softmax of a [40, 300] batch against the double formula
  double gelu;              ///< gelu's tanh form as x * logistic(2u), relative where |gelu| > 1e-30: u in f32
                            ///< (constants rounded too) is off by ~1e-6 at u = -33, exp(2u) makes it ~2|u| 1e-8
                            ///< relative; measured below 1e-5
  double gelu_tiny;         ///< the same where |gelu| <= 1e-30, absolute
  double exp_scalar;        ///< one f32 exp against std::exp on the float, relative (Approx epsilon)
  double exp_threads;       ///< the same, absolute, for the concurrent callers
};
inline constexpr F32Accuracy kF32Accuracy{.long_sum = 8e-7, .column_sum = 1e-7, .softmax = {1e-6, 1e-12},
                                          .gelu = 2e-5, .gelu_tiny = 1e-37, .exp_scalar = 1e-6,
                                          .exp_threads = 1e-5};

/// f32 random draws batched over keys (vmap) against a loop over the keys: the same f32 arithmetic on the same
/// bits, vectorised another way; tighter than the op bound (rtol 1e-6, atol 1e-7).
inline constexpr Tol kBatchedDraws{1e-6, 1e-7};

/// jitx::random against JAX 0.10.2's values (CPU) for the same keys: the same algorithms, but XLA's f32 erf_inv
/// and erf are polynomial approximations where jitx's are exactly rounded, and XLA contracts uniform's
/// floats * (maxval - minval) + minval into one FMA where jitx rounds the product first. Relative to max(1, |want|).
struct JaxReference {
  double normal_f32;   ///< normal: up to 3 f32 ULPs apart, truncated_normal up to 5 (|diff| <= 3.4e-7 at |x| ~ 1.5)
  double uniform_f32;  ///< uniform with a range: an ULP of the product
  double f64;          ///< f64 draws: one f64 ULP seen
};
inline constexpr JaxReference kJaxReference{.normal_f32 = 6e-7, .uniform_f32 = 1e-6, .f64 = 1e-15};

}  // namespace jitx::testing
