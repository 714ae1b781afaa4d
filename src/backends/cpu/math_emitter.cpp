// Vectorisable float math in LLVM IR: polynomial approximations with range reduction for the common f32 functions.
//
// The loop vectoriser widens straight-line code but not libm calls, so exp, log, tanh, logistic, erf, erfc, sin,
// cos, expm1 and log1p on f32 (and on bf16/f16, computed in f32) are written out here (Cephes-style minimax
// polynomials, Horner with fused multiply-add). Measured error against double-precision references is in
// tests/cpu_math_test.cpp. digamma (f32 and f64) is straight-line double-precision code (series with exact
// Taylor coefficients, see digamma_f64); erf_inv is Giles' approximation in f32, refined by Newton steps on the C
// library's erf/erfc in f64. Everything else in f64 calls the C library (scalar, correctly rounded or nearly so):
// f64 accuracy needs longer polynomials than are worth writing here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/cpu/llvm_emit.h"
#include "core/errors.h"

namespace jitx::cpu {
namespace {
using hlo::Opcode;
using llvm::Value;
using B = llvm::IRBuilderBase;

Value* c(B& b, Value* like, double v) { return llvm::ConstantFP::get(like->getType(), v); }

// Horner with fmuladd: coeffs from the highest power down.
Value* horner(B& b, Value* x, std::initializer_list<double> coeffs) {
  Value* acc = nullptr;
  for (double k : coeffs) {
    if (!acc) acc = c(b, x, k);
    else acc = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {acc, x, c(b, x, k)});
  }
  return acc;
}
Value* fma(B& b, Value* x, Value* y, Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {x, y, z});
}
// Estrin's scheme: the polynomial horner() evaluates (coefficients highest degree first) with a dependency chain of
// about log2(degree) fused multiply-adds instead of degree: a transcendental in an elementwise kernel is latency-
// bound (the out-of-order window holds only a few iterations), so a shorter chain is a faster kernel.
Value* estrin(B& b, Value* x, std::initializer_list<double> coeffs) {
  std::vector<double> a(coeffs.begin(), coeffs.end());
  std::reverse(a.begin(), a.end());  // lowest degree first
  std::vector<Value*> terms;
  for (size_t i = 0; i < a.size(); i += 2)
    terms.push_back(i + 1 < a.size() ? fma(b, c(b, x, a[i + 1]), x, c(b, x, a[i])) : c(b, x, a[i]));
  Value* power = x;
  while (terms.size() > 1) {
    power = b.CreateFMul(power, power);
    std::vector<Value*> next;
    for (size_t i = 0; i < terms.size(); i += 2)
      next.push_back(i + 1 < terms.size() ? fma(b, terms[i + 1], power, terms[i]) : terms[i]);
    terms = std::move(next);
  }
  return terms[0];
}
Value* unary_intr(B& b, llvm::Intrinsic::ID id, Value* x) { return b.CreateUnaryIntrinsic(id, x); }
Value* is_nan(B& b, Value* x) { return b.CreateFCmpUNO(x, x); }

// expf: n = round(x / ln2), r = x - n ln2 (two-part ln2), exp(r) = 1 + q with q = r + r^2 P(r) (P of degree 4,
// fitted for relative error on [-ln2/2, ln2/2]: 0.05 ULP), scaled by 2^n. In two halves for kernels that stage it
// (see emit_float_math_stage1): stage 1 is the range reduction (r, and j, whose bits hold n), stage 2 the
// polynomial and the scaling. No selects on the result: x is clamped to [-104, 88.7228] (NaN kept), and the clamped
// ends give the right limits by themselves (at 88.7228, 2^128 overflows to +inf; at -104, about 2^-150 rounds to 0;
// below -103.97, where the true result is under 2^-150, too); NaN propagates through q.
//
// The scaling is two factors, so results down to the subnormal range round once from an exact product and n = 128
// (near the top, where exp(r) < 1) does not overflow early: 2^n = s1 s2 with s2 = 2^clamp(n, -125, 127) and s1 =
// 2^(n - that), which is 1 for every normal result. y s1 is one fused multiply-add, s1 + s1 q, and the product with
// s2 rounds once (the subnormal results: within 1 ULP, 2^-149). All of it is integer work on j's bits: n = round(x /
// ln2) by the shifter (j = x / ln2 + 1.5 2^23 + 127 holds n + 127 in its low bits, which a shift by 23 turns into
// the bits of 2^n; the shifter's own bits shift out). No round instruction, no float-to-int conversion (poison for
// NaN). 19 vector operations, where the Cephes form with two float-derived scale factors took 28: on a first-
// generation AMD Zen, where every 256-bit operation takes about a cycle, this made exp a third faster.
std::vector<Value*> exp_f32_stage1(B& b, Value* x) {
  Value* lo = c(b, x, -104.0);
  Value* hi = c(b, x, 88.72283935546875);
  Value* xc = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, hi), hi, xc);
  Value* shifter = c(b, x, 12582912.0 + 127.0);
  Value* j = fma(b, xc, c(b, x, 1.44269504088896341), shifter);
  Value* n = b.CreateFSub(j, shifter);
  Value* r = fma(b, n, c(b, x, -0.693359375), xc);
  r = fma(b, n, c(b, x, 2.12194440e-4), r);
  return {r, j};
}
Value* exp_f32_stage2(B& b, const std::vector<Value*>& parts) {
  Value *r = parts[0], *j = parts[1];
  Value* p = horner(b, r, {0.0013814613183417458, 0.008368709928149563, 0.04166838737028246, 0.1666652068895711,
                           0.4999999345164775});
  Value* q = fma(b, p, b.CreateFMul(r, r), r);
  auto* i32 = b.getInt32Ty();
  Value* t = b.CreateShl(b.CreateBitCast(j, i32), 23);  // the bits of 2^n where n is in [-126, 127]
  Value* s2 = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, t, b.getInt32(2 << 23));
  s2 = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, s2, b.getInt32(254 << 23));
  Value* s1 = b.CreateBitCast(b.CreateAdd(b.CreateSub(t, s2), b.getInt32(127 << 23)), b.getFloatTy());
  return b.CreateFMul(fma(b, s1, q, s1), b.CreateBitCast(s2, b.getFloatTy()));
}
Value* exp_f32(B& b, Value* x) { return exp_f32_stage2(b, exp_f32_stage1(b, x)); }

// logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(1 + f) by a degree-9 polynomial, e ln2 in two parts.
Value* log_f32(B& b, Value* x) {
  auto* i32 = b.getInt32Ty();
  Value* sub = b.CreateFCmpOLT(x, c(b, x, 1.17549435e-38));
  Value* xs = b.CreateSelect(sub, b.CreateFMul(x, c(b, x, 8388608.0)), x);  // subnormals: scale by 2^23
  Value* bits = b.CreateBitCast(xs, i32);
  Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 23), 0xff), b.getInt32(126));
  e = b.CreateSub(e, b.CreateSelect(sub, b.getInt32(23), b.getInt32(0)));
  Value* m = b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, 0x807fffff), 0x3f000000), b.getFloatTy());  // [0.5, 1)
  Value* lo = b.CreateFCmpOLT(m, c(b, x, 0.707106781186547524));
  e = b.CreateSub(e, b.CreateZExt(lo, i32));
  Value* f = b.CreateFSub(b.CreateSelect(lo, b.CreateFAdd(m, m), m), c(b, x, 1.0));
  Value* ef = b.CreateSIToFP(e, b.getFloatTy());
  Value* z = b.CreateFMul(f, f);
  Value* p = horner(b, f, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                           -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  Value* y = b.CreateFMul(b.CreateFMul(f, z), p);
  y = fma(b, ef, c(b, x, -2.12194440e-4), y);
  y = fma(b, z, c(b, x, -0.5), y);
  Value* r = b.CreateFAdd(f, y);
  r = fma(b, ef, c(b, x, 0.693359375), r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, c(b, x, INFINITY)), x, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, c(b, x, 0.0)), c(b, x, -INFINITY), r);
  r = b.CreateSelect(b.CreateFCmpOLT(x, c(b, x, 0.0)), c(b, x, NAN), r);
  return b.CreateSelect(is_nan(b, x), x, r);
}

// log1p(x) = log(u) * (x / (u - 1)) with u = 1 + x (Goldberg): the rounding of u cancels. The ratio (near 1)
// first: log(u) * x overflows for x above about 3.8e36, where the ratio is exactly 1.
Value* log1p_f32(B& b, Value* x) {
  Value* u = b.CreateFAdd(x, c(b, x, 1.0));
  Value* d = b.CreateFSub(u, c(b, x, 1.0));
  Value* r = b.CreateFMul(log_f32(b, u), b.CreateFDiv(x, d));
  r = b.CreateSelect(b.CreateFCmpOEQ(d, c(b, x, 0.0)), x, r);
  return b.CreateSelect(b.CreateFCmpOEQ(u, c(b, x, INFINITY)), u, r);
}

// expm1(x) = (u - 1) * (x / log(u)) with u = exp(x) (Goldberg). The ratio (near 1) first: (u - 1) * x overflows
// for x from about 84 up, where u is still finite (up to x = 88.72).
Value* expm1_f32(B& b, Value* x) {
  Value* u = exp_f32(b, x);
  Value* um1 = b.CreateFSub(u, c(b, x, 1.0));
  Value* r = b.CreateFMul(um1, b.CreateFDiv(x, log_f32(b, u)));
  r = b.CreateSelect(b.CreateFCmpOEQ(um1, c(b, x, 0.0)), x, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(um1, c(b, x, -1.0)), um1, r);
  return b.CreateSelect(b.CreateFCmpOEQ(u, c(b, x, INFINITY)), u, r);
}

// tanh: x P(x^2) / Q(x^2) on |x| <= 9 (a rational minimax fit of relative error 3e-9; above 9, tanh rounds to
// +-1 in f32 and the clamped argument gives exactly that). One division and ten fused multiply-adds: no exp, no
// branches, about a third of the instructions of 1 - 2 / (exp(2|x|) + 1), which made GELU compute-bound.
// Measured error <= 5 ULP (tests/cpu_math_test.cpp), mostly near saturation where P and Q are large. Near and at
// the clamp the quotient rounds to 1 + 2^-23, so it is capped at 1: |tanh| > 1 made 1 + tanh(u) negative, and
// GELU's tail and tanh's derivative 1 - tanh^2 wrong in sign (tests/numerics_test.cpp).
Value* tanh_f32(B& b, Value* x) {
  Value* ax = unary_intr(b, llvm::Intrinsic::fabs, x);
  Value* xc = b.CreateSelect(b.CreateFCmpOGT(ax, c(b, x, 9.0)), c(b, x, 9.0), ax);  // NaN stays NaN
  Value* z = b.CreateFMul(xc, xc);
  Value* p = estrin(b, z, {-1.2338740272566096e-11, 3.077899890513436e-08, 2.8092008506064303e-05,
                            0.003872630652040243, 0.1368337720632553, 1.0});
  Value* q = estrin(b, z, {1.2931501487400965e-06, 0.00039461374399252236, 0.027261679992079735,
                            0.4701671004295349, 1.0});
  Value* y = b.CreateFDiv(b.CreateFMul(xc, p), q);
  y = b.CreateSelect(b.CreateFCmpOGT(y, c(b, x, 1.0)), c(b, x, 1.0), y);  // NaN stays NaN
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, y, x);
}

// logistic(k x) = 1 / (1 + 2^w) with w = x kk, kk = -k log2(e), in two halves, so that a kernel can run them as
// two loops (stage 1's values stored per element, see emit_float_math_stage1): a transcendental's dependency chain is
// long, and the out-of-order core overlaps only a few elements' chains, so two half-length chains in two loops run
// faster than one (measured on GELU). The constant k lets a kernel fold a multiply by a constant into the range
// reduction (GELU's logistic(c u)); kk is split in two parts (hi + lo), so w is x kk to f32 accuracy: a folded
// product is not rounded before the logistic (more accurate than the unfused kernel, whose rounded c u moves the
// result by up to |c u| 2^-24 relative in the tail).
//
// Stage 1: n = round(w) by the round-to-nearest shifter j = w + 1.5 2^23 (j's low mantissa bits hold n), f = w - n
// in [-1/2, 1/2]. The range is fixed without selects on the results: x is clamped on the side where w -> -inf (a
// max or min that keeps NaN: w >= -130, so f stays finite and e = 0 below), and j's bits are clamped as integers to
// n in [-127, 128] (integer min/max run on every vector pipe; float compares and blends share the two FMA pipes).
// n = 128 makes the scale 2^n (below) +inf: f is then >= 0 or +inf, the polynomial positive, and e = +inf, so
// logistic is 0 (its true value there is below 2^-127: flushed, as the f32 result would be subnormal); n = -127 makes
// the scale +0, so e = 0 and logistic is 1 (true value within 2^-25 of it).
std::vector<Value*> logistic_f32_stage1(B& b, Value* x, double k) {
  const double shifter = 12582912.0;  // 1.5 * 2^23
  const double kk = -k * 1.44269504088896341;
  const float hi = static_cast<float>(kk);
  const float lo = static_cast<float>(kk - hi);
  Value* lim = c(b, x, -130.0 / hi);
  x = hi > 0 ? b.CreateSelect(b.CreateFCmpOLT(x, lim), lim, x) : b.CreateSelect(b.CreateFCmpOGT(x, lim), lim, x);
  Value* j = fma(b, x, c(b, x, hi), c(b, x, shifter));
  llvm::Type* it = b.getInt32Ty();
  Value* bits = b.CreateBitCast(j, it);
  Value* base = b.CreateBitCast(c(b, x, shifter), it);
  bits = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, bits, b.CreateSub(base, b.getInt32(127)));
  bits = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, bits, b.CreateAdd(base, b.getInt32(128)));
  j = b.CreateBitCast(bits, b.getFloatTy());
  Value* n = b.CreateFSub(j, c(b, x, shifter));
  Value* f = fma(b, x, c(b, x, hi), b.CreateFNeg(n));
  f = fma(b, x, c(b, x, lo), f);
  return {f, j};
}
// Stage 2: 2^f by a degree-6 polynomial fitted for relative error on [-1/2, 1/2] (0.93 ULP in f32 with these
// coefficients), e = 2^f 2^n with 2^n = (n + 127) << 23 (j's bits shifted: the shifter's own bits shift out), a
// multiply (fused into 1 + e), so that a NaN stays a NaN; then num / (1 + e), num = 1 unless the kernel folds the
// multiply that consumes the logistic (GELU's x * logistic(.)) into the division: one rounding fewer, one op fewer.
// Measured: 2.2 ULP from a double-precision logistic at most (test "cpu: f32 math is within a few ULP ...": 4).
Value* logistic_f32_stage2(B& b, const std::vector<Value*>& parts, Value* num) {
  Value* f = parts[0];
  Value* p = horner(b, f, {0.00015353361518086368, 0.0013398874525857307, 0.009618437360157727,
                           0.055503324708711055, 0.24022647913599243, 0.6931472028551572, 1.0});
  Value* scale = b.CreateAdd(b.CreateShl(b.CreateBitCast(parts[1], b.getInt32Ty()), 23), b.getInt32(127 << 23));
  Value* den = fma(b, p, b.CreateBitCast(scale, b.getFloatTy()), c(b, f, 1.0));
  return b.CreateFDiv(num ? num : c(b, f, 1.0), den);
}
Value* logistic_f32(B& b, Value* x) { return logistic_f32_stage2(b, logistic_f32_stage1(b, x, 1.0), nullptr); }

// erf's small range: erf(x) = x P(x^2) for |x| < 1 (P returned).
Value* erf_small_poly_f32(B& b, Value* x) {
  return horner(b, b.CreateFMul(x, x), {7.853861353153693E-5, -8.010193625184903E-4, 5.188327685732524E-3,
                                        -2.685381193529856E-2, 1.128358514861418E-1, -3.761262582423300E-1,
                                        1.128379165726710E0});
}
// erfc(a) for a >= 1: exp(-a^2) / a * R(1/a^2) (two ranges, Cephes' erfcf). a^2 = hi + lo exactly (lo from a fused
// multiply-add), and exp(-a^2) = exp(-hi) (1 - lo): exp of the rounded square alone is off by up to a^2 2^-24
// relative (40 ULP at a = 9). a is clamped to 12 (erfc underflows from 10.06 on), so that hi stays finite.
Value* erfc_large_f32(B& b, Value* a) {
  a = b.CreateSelect(b.CreateFCmpOGT(a, c(b, a, 12.0)), c(b, a, 12.0), a);  // NaN stays NaN
  Value* hi = b.CreateFMul(a, a);
  Value* lo = fma(b, a, a, b.CreateFNeg(hi));
  Value* e = exp_f32(b, b.CreateFNeg(hi));
  e = fma(b, e, b.CreateFNeg(lo), e);
  Value* q = b.CreateFDiv(c(b, a, 1.0), a);
  Value* y = b.CreateFMul(q, q);
  Value* p1 = horner(b, y, {2.326819970068386E-2, -1.387039388740657E-1, 3.687424674597105E-1, -5.824733027278666E-1,
                            6.210004621745983E-1, -4.944515323274145E-1, 3.404879937665872E-1, -2.741127028184656E-1,
                            5.638259427386472E-1});
  Value* p2 = horner(b, y, {-1.047766399936249E1, 1.297719955372516E1, -7.495518717768503E0, 2.921019019210786E0,
                            -1.015265279202700E0, 4.218463358204948E-1, -2.820767439740514E-1,
                            5.641895067754075E-1});
  Value* p = b.CreateSelect(b.CreateFCmpOLT(a, c(b, a, 2.0)), p1, p2);
  return b.CreateFMul(b.CreateFMul(e, q), p);
}

// erf: x P(x^2) below 1; above, 1 - erfc.
Value* erf_f32(B& b, Value* x) {
  Value* ax = unary_intr(b, llvm::Intrinsic::fabs, x);
  Value* large = b.CreateFSub(c(b, x, 1.0), erfc_large_f32(b, ax));
  large = b.CreateSelect(b.CreateFCmpOGT(ax, c(b, x, 9.0)), c(b, x, 1.0), large);
  large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, c(b, x, 1.0)), b.CreateFMul(x, erf_small_poly_f32(b, x)), large);
}

// erfc: 1 - x P(x^2) for |x| < 1, in double (erfc is in (0.15, 1.85) there, so nothing cancels, but erf's f32
// rounding errors grow relative to erfc near x = 1: 7.5 ULP in f32, 1.9 in double); erfc(|x|) above, 2 - erfc(|x|)
// for x <= -1. Measured on [-4, 10.5]: 4.5 ULP at most (tests/numerics_test.cpp). The tail underflows to 0 past
// x = 10.05; +-inf give 0 and 2, NaN stays NaN.
Value* erfc_f32(B& b, Value* x) {
  Value* ax = unary_intr(b, llvm::Intrinsic::fabs, x);
  Value* tail = erfc_large_f32(b, ax);
  Value* large = b.CreateSelect(b.CreateFCmpOLT(x, c(b, x, 0.0)), b.CreateFSub(c(b, x, 2.0), tail), tail);
  Value* xd = b.CreateFPExt(x, b.getDoubleTy());
  Value* small = b.CreateFPTrunc(fma(b, b.CreateFNeg(xd), erf_small_poly_f32(b, xd), c(b, xd, 1.0)), x->getType());
  return b.CreateSelect(b.CreateFCmpOLT(ax, c(b, x, 1.0)), small, large);
}

// sin/cos for |x| >= 2^48, where the fast reduction below breaks down (it would need 2/pi to about 24 + 60 +
// log2|x| bits to find x mod pi/2 to f32 accuracy): the C library's double sin/cos of the exact double of x (glibc
// reduces every double exactly, Payne-Hanek), rounded to f32, as `float jitx_<sin|cos>_large(float)`.
//
// The kernel calls it in a block that only lanes with such arguments enter. The loop vectoriser vectorises a loop
// with a call in a predicated block only through a masked vector variant of the callee, so the call site names
// one for each vector width (`vector-function-abi-variant`): jitx_<sin|cos>_large_v<n>(x, mask) returns at once
// when no lane of the mask is set and calls the scalar function for the lanes that are. The variants are
// alwaysinline, and the kernel pipeline inlines again after vectorising (orc_jit.cpp), so ordinary arguments pay
// a compare and one branch per vector. Until then jitx_trig_keep holds a (noinline) call to each variant, so that
// the first always-inline pass does not delete them as unused; globaldce removes it and whatever stays unused.
// The calls to the C library are marked free of memory effects (errno is never read) and nobuiltin, so that LLVM
// does not turn them into intrinsics that it would then speculate for every lane.
llvm::Function* trig_large_scalar(llvm::Module& m, bool is_cos) {
  std::string name = is_cos ? "jitx_cos_large" : "jitx_sin_large";
  if (llvm::Function* f = m.getFunction(name)) return f;
  llvm::LLVMContext& ctx = m.getContext();
  auto *f32 = llvm::Type::getFloatTy(ctx), *f64 = llvm::Type::getDoubleTy(ctx);
  auto* f =
      llvm::Function::Create(llvm::FunctionType::get(f32, {f32}, false), llvm::Function::InternalLinkage, name, m);
  f->setDoesNotThrow();
  f->setDoesNotAccessMemory();
  f->addFnAttr(llvm::Attribute::NoInline);  // a call until the vectoriser has seen it (see orc_jit.cpp's build)
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::FunctionCallee libm = m.getOrInsertFunction(is_cos ? "cos" : "sin", llvm::FunctionType::get(f64, {f64}, false));
  llvm::CallInst* call = b.CreateCall(libm, {b.CreateFPExt(f->getArg(0), f64)});
  call->setDoesNotThrow();
  call->setDoesNotAccessMemory();
  call->addFnAttr(llvm::Attribute::NoBuiltin);
  b.CreateRet(b.CreateFPTrunc(call, f32));

  // The masked vector variants, and the function that keeps them until the vectoriser has run.
  llvm::Function* keep = m.getFunction("jitx_trig_keep");
  if (!keep) {
    keep = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                  llvm::Function::InternalLinkage, "jitx_trig_keep", m);
    keep->addFnAttr(llvm::Attribute::NoInline);  // not inlined (and so not deleted) by the first always-inline
    llvm::IRBuilder<>(llvm::BasicBlock::Create(ctx, "entry", keep)).CreateRetVoid();
  }
  llvm::IRBuilder<> kb(keep->getEntryBlock().getTerminator());
  std::string mappings;
  for (unsigned n : {2u, 4u, 8u, 16u, 32u}) {
    std::string vname = fmt::format("{}_v{}", name, n);
    auto* vt = llvm::FixedVectorType::get(f32, n);
    auto* mt = llvm::FixedVectorType::get(b.getInt1Ty(), n);
    auto* v = llvm::Function::Create(llvm::FunctionType::get(vt, {vt, mt}, false), llvm::Function::InternalLinkage,
                                     vname, m);
    v->setDoesNotThrow();
    v->setDoesNotAccessMemory();
    v->addFnAttr(llvm::Attribute::AlwaysInline);
    auto* entry = llvm::BasicBlock::Create(ctx, "entry", v);
    auto* loop = llvm::BasicBlock::Create(ctx, "lane", v);
    auto* lane_call = llvm::BasicBlock::Create(ctx, "call", v);
    auto* next = llvm::BasicBlock::Create(ctx, "next", v);
    auto* done = llvm::BasicBlock::Create(ctx, "done", v);
    llvm::IRBuilder<> vb(entry);
    Value* zero = llvm::Constant::getNullValue(vt);
    Value* any = vb.CreateICmpNE(vb.CreateBitCast(v->getArg(1), vb.getIntNTy(n)), vb.getIntN(n, 0));
    vb.CreateCondBr(any, loop, done, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
    vb.SetInsertPoint(loop);
    llvm::PHINode* i = vb.CreatePHI(vb.getInt32Ty(), 2);
    llvm::PHINode* acc = vb.CreatePHI(vt, 2);
    i->addIncoming(vb.getInt32(0), entry);
    acc->addIncoming(zero, entry);
    vb.CreateCondBr(vb.CreateExtractElement(v->getArg(1), i), lane_call, next);
    vb.SetInsertPoint(lane_call);
    Value* set = vb.CreateInsertElement(acc, vb.CreateCall(f, {vb.CreateExtractElement(v->getArg(0), i)}), i);
    vb.CreateBr(next);
    vb.SetInsertPoint(next);
    llvm::PHINode* acc2 = vb.CreatePHI(vt, 2);
    acc2->addIncoming(acc, loop);
    acc2->addIncoming(set, lane_call);
    Value* i1 = vb.CreateAdd(i, vb.getInt32(1));
    i->addIncoming(i1, next);
    acc->addIncoming(acc2, next);
    vb.CreateCondBr(vb.CreateICmpULT(i1, vb.getInt32(n)), loop, done);
    vb.SetInsertPoint(done);
    llvm::PHINode* r = vb.CreatePHI(vt, 2);
    r->addIncoming(zero, entry);
    r->addIncoming(acc2, next);
    vb.CreateRet(r);
    kb.CreateCall(v, {llvm::PoisonValue::get(vt), llvm::PoisonValue::get(mt)})->setIsNoInline();
    mappings += fmt::format("{}_ZGV_LLVM_M{}v_{}({})", mappings.empty() ? "" : ",", n, name, vname);
  }
  f->addFnAttr("jitx-vector-variants", mappings);
  return f;
}

// The f32 result of sin/cos: `fast` where |x| < 2^48, else jitx_<sin|cos>_large(x) (see trig_large_scalar).
Value* sincos_large_f32(B& b, Value* x, Value* fast, bool is_cos) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::BasicBlock* cur = b.GetInsertBlock();
  llvm::Function* large_fn = trig_large_scalar(*cur->getModule(), is_cos);
  Value* large = b.CreateFCmpOGE(unary_intr(b, llvm::Intrinsic::fabs, x), c(b, x, 0x1p48));
  // What the block already holds after the insert point moves on to the join block.
  auto* done = llvm::BasicBlock::Create(ctx, "trig.done", cur->getParent(), cur->getNextNode());
  if (b.GetInsertPoint() != cur->end()) {
    done->splice(done->end(), cur, b.GetInsertPoint(), cur->end());
    done->replaceSuccessorsPhiUsesWith(cur, done);
  }
  auto* slow = llvm::BasicBlock::Create(ctx, "trig.large", cur->getParent(), done);
  b.SetInsertPoint(cur);
  b.CreateCondBr(large, slow, done, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
  b.SetInsertPoint(slow);
  llvm::CallInst* call = b.CreateCall(large_fn, {x});
  call->addFnAttr(llvm::Attribute::get(ctx, "vector-function-abi-variant",
                                       large_fn->getFnAttribute("jitx-vector-variants").getValueAsString()));
  b.CreateBr(done);
  b.SetInsertPoint(done, done->begin());
  llvm::PHINode* phi = b.CreatePHI(x->getType(), 2);
  phi->addIncoming(fast, cur);
  phi->addIncoming(call, slow);
  return phi;
}

// sin/cos: reduce by pi/2 in double (three-part pi/2, the products exact in the fused multiply-adds), polynomials on
// [-pi/4, pi/4]. Measured on every f32 of each binade: within 1.6 ULP of the double-precision sin/cos for
// |x| < 2^48 (1.8 ULP at 2^48, 5 at 2^49, 754 at 2^51); larger arguments take sincos_large_f32. sin(-0) is -0
// (j = -0 makes r = +0, so the sign comes from x).
Value* sincos_f32(B& b, Value* x, bool is_cos) {
  Value* xd = b.CreateFPExt(x, b.getDoubleTy());
  Value* j = unary_intr(b, llvm::Intrinsic::roundeven, b.CreateFMul(xd, c(b, xd, 0.636619772367581343)));
  Value* r = fma(b, j, c(b, xd, -1.57079632673412561417e+00), xd);
  r = fma(b, j, c(b, xd, -6.07710050630396597660e-11), r);
  r = fma(b, j, c(b, xd, -2.02226624871116645580e-21), r);
  Value* rf = b.CreateFPTrunc(r, b.getFloatTy());
  Value* jm = b.CreateFSub(j, b.CreateFMul(unary_intr(b, llvm::Intrinsic::floor, b.CreateFMul(j, c(b, xd, 0.25))),
                                          c(b, xd, 4.0)));  // j mod 4 in [0, 4)
  Value* q = b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b.getInt32Ty(), b.getDoubleTy()}, {jm});
  if (is_cos) q = b.CreateAdd(q, b.getInt32(1));  // cos(x) = sin(x + pi/2)
  Value* z = b.CreateFMul(rf, rf);
  Value* s = fma(b, b.CreateFMul(z, rf), horner(b, z, {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1}), rf);
  Value* co = b.CreateFAdd(fma(b, b.CreateFMul(z, z), horner(b, z, {2.443315711809948E-5, -1.388731625493765E-3,
                                                                     4.166664568298827E-2}),
                               b.CreateFMul(z, c(b, rf, -0.5))),
                           c(b, rf, 1.0));
  Value* odd = b.CreateICmpNE(b.CreateAnd(q, 1), b.getInt32(0));
  Value* neg = b.CreateICmpNE(b.CreateAnd(q, 2), b.getInt32(0));
  Value* v = b.CreateSelect(odd, co, s);
  v = b.CreateSelect(neg, b.CreateFNeg(v), v);
  if (!is_cos) v = b.CreateSelect(b.CreateFCmpOEQ(x, c(b, x, 0.0)), x, v);
  return sincos_large_f32(b, x, v, is_cos);
}

// --- double-precision building blocks of erf_inv and digamma (straight-line, so the vectoriser widens them) ---
// `full`: f64 accuracy (the f64 functions); otherwise enough terms for an f32 result (error ~1e-13).

// log(x) for x > 0 finite or +inf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m-1)/(m+1),
// |s| <= 0.172, by its Taylor series 2 (s + s^3/3 + s^5/5 + ...) (terms to s^21: remainder < 1e-18 relative), and
// e ln2 in two parts (ln2_hi has trailing zeros, so e ln2_hi is exact). Subnormal inputs are not handled (the
// callers pass values >= 1).
Value* log_f64(B& b, Value* x, bool full) {
  auto* i64 = b.getInt64Ty();
  Value* bits = b.CreateBitCast(x, i64);
  Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 52), 0x7ff), b.getInt64(1022));
  Value* m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, b.getInt64(0x800fffffffffffffULL)), b.getInt64(0x3fe0000000000000ULL)),
      b.getDoubleTy());  // [0.5, 1)
  Value* lo = b.CreateFCmpOLT(m, c(b, x, 0.70710678118654752440));
  e = b.CreateSub(e, b.CreateZExt(lo, i64));
  m = b.CreateSelect(lo, b.CreateFAdd(m, m), m);
  Value* s = b.CreateFDiv(b.CreateFSub(m, c(b, x, 1.0)), b.CreateFAdd(m, c(b, x, 1.0)));
  Value* z = b.CreateFMul(s, s);
  Value* p =
      full ? horner(b, z,
                    {1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3})
           : horner(b, z, {1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3});
  Value* two_s = b.CreateFAdd(s, s);
  Value* lm = fma(b, b.CreateFMul(two_s, z), p, two_s);
  Value* ef = b.CreateSIToFP(e, b.getDoubleTy());
  Value* r = fma(b, ef, c(b, x, 6.93147180369123816490e-01), fma(b, ef, c(b, x, 1.90821492927058770002e-10), lm));
  return b.CreateSelect(b.CreateFCmpOEQ(x, c(b, x, INFINITY)), x, r);
}

// sin(y) and cos(y) for |y| <= pi/4 by their Taylor series (error < 1e-17 with `full`, < 1e-14 without).
std::pair<Value*, Value*> sincos_small_f64(B& b, Value* y, bool full) {
  Value* z = b.CreateFMul(y, y);
  Value* s = full ? horner(b, z, {1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0,
                                  -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0})
                  : horner(b, z, {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0,
                                  -1.0 / 6.0});
  Value* co = full ? horner(b, z, {1.0 / 6402373705728000.0, -1.0 / 20922789888000.0, 1.0 / 87178291200.0,
                                   -1.0 / 479001600.0, 1.0 / 3628800.0, -1.0 / 40320.0, 1.0 / 720.0, -1.0 / 24.0,
                                   0.5})
                   : horner(b, z, {1.0 / 87178291200.0, -1.0 / 479001600.0, 1.0 / 3628800.0, -1.0 / 40320.0,
                                   1.0 / 720.0, -1.0 / 24.0, 0.5});
  return {fma(b, b.CreateFMul(y, z), s, y), fma(b, b.CreateFNeg(z), co, c(b, y, 1.0))};
}

// digamma in double. Nonpositive integers (the poles), -inf and NaN give NaN (as the interpreter); +inf gives +inf.
//  - x < 0: reflection, psi(x) = psi(1 - x) - pi cot(pi x), with cot(pi r) for r = x - round(x) (exact) in
//    [-1/2, 1/2] from sin/cos on [0, pi/4] (cot(pi a) = tan(pi (1/2 - a)) above a = 1/4, so no cancellation).
//  - x >= 10: the asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k) (terms to x^-16; x^-10 for f32).
//  - x0 - 1/2 <= z <= x0 + 1/2 around the positive root x0 = 1.4616...: Taylor series psi(z) = sum_n c_n (z - x0)^n,
//    c_n = (-1)^(n+1) zeta(n + 1, x0) (Hurwitz zeta, to double precision; radius of convergence x0, so 36 terms
//    leave < 1e-17). Relative accuracy where psi is near zero, which recurrences from large x cannot give.
//  - x0 + 1/2 < z <= 3: Taylor series at 5/2, c_0 = psi(5/2) = 8/3 - gamma - 2 log 2, c_n as above with zeta(n+1, 5/2)
//    (27 terms: < 1e-18): psi > 0.39 here; a recurrence down into the first interval would cancel (psi(0.99) + 1/0.99).
//  - other x < 10 reach those intervals by psi(x) = psi(x + 1) - 1/x (below) or psi(x) = psi(x - 1) + 1/(x - 1)
//    (above 3, up to seven steps, straight-line selects): psi > 0.7 there and every term added is positive.
Value* digamma_f64(B& b, Value* x, bool full) {
  Value* one = c(b, x, 1.0);
  Value* neg = b.CreateFCmpOLT(x, c(b, x, 0.0));
  Value* xr = b.CreateSelect(neg, b.CreateFSub(one, x), x);  // >= 1 when x < 0
  // xr >= 10: the asymptotic series.
  Value* big = b.CreateFCmpOGE(xr, c(b, x, 10.0));
  Value* zb = b.CreateSelect(big, xr, c(b, x, 10.0));  // keeps the unused lanes finite
  Value* inv = b.CreateFDiv(one, zb);
  Value* f = b.CreateFMul(inv, inv);
  Value* series = full ? horner(b, f, {3617.0 / 8160, -1.0 / 12, 691.0 / 32760, -1.0 / 132, 1.0 / 240, -1.0 / 252,
                                       1.0 / 120, -1.0 / 12})
                       : horner(b, f, {-1.0 / 132, 1.0 / 240, -1.0 / 252, 1.0 / 120, -1.0 / 12});
  Value* asym = fma(b, series, f, fma(b, inv, c(b, x, -0.5), log_f64(b, zb, full)));
  // xr < 10: recurrence into [x0 - 1/2, 3], accumulating the terms in s.
  const double lo = 0.9616321449683622, hi = 1.9616321449683622;
  Value* below = b.CreateFCmpOLT(xr, c(b, x, lo));
  Value* s = b.CreateSelect(below, b.CreateFNeg(b.CreateFDiv(one, xr)), c(b, x, 0.0));
  Value* z = b.CreateSelect(below, b.CreateFAdd(xr, one), b.CreateSelect(big, c(b, x, 1.5), xr));
  for (int k = 0; k < 7; ++k) {
    Value* step = b.CreateFCmpOGT(z, c(b, x, 3.0));
    z = b.CreateSelect(step, b.CreateFSub(z, one), z);  // exact: z < 10
    s = b.CreateSelect(step, b.CreateFAdd(s, b.CreateFDiv(one, z)), s);
  }
  // The Taylor series at the root (x0 = x0_hi + x0_lo).
  Value* t = b.CreateFSub(b.CreateFSub(z, c(b, x, 1.4616321449683622)), c(b, x, 9.549995429965697e-17));
  Value* taylor = b.CreateFMul(t, horner(b, t, {
      -7.961425431241989e-07, 1.1636675363548871e-06, -1.7008538854332643e-06, 2.4860227331295433e-06,
      -3.633650789801054e-06, 5.3110609208898746e-06, -7.7628176684621096e-06, 1.1346384584663872e-05,
      -1.6584242271854162e-05, 2.4240066118601359e-05, -3.5430070947659671e-05, 5.1785757952220897e-05,
      -7.5691795821950769e-05, 0.00011063372768747429, -0.00016170622091974825, 0.00023635601564027086,
      -0.00034546802510630818, 0.00050495326583460264, -0.00073807093899600602, 0.0010788252019162975,
      -0.0015769367714301987, 0.0023051263267349301, -0.0033698016554393317, 0.0049267813957298576,
      -0.0072045343863568747, 0.010538791616612182, -0.015424765904948968, 0.022597648232218125,
      -0.033161126474847376, 0.048804288164143145, -0.072199561256454756, 0.10782405069126239, -0.16394270544240658,
      0.25849976095565119, -0.44276316898359214, 0.96767224544762143}));
  Value* t2 = b.CreateFSub(z, c(b, x, 2.5));
  Value* taylor2 = fma(b, t2, horner(b, t2, {
      7.2063434910111827e-12, -1.8016443331442419e-11, 4.5043155479529538e-11, -1.126150584061632e-10,
      2.8156276111135815e-10, -7.0399490101196219e-10, 1.7602956776182689e-09, -4.4018206336021876e-09,
      1.1008345466854141e-08, -2.7534182401274525e-08, 6.8882254155130341e-08, -1.7237026144442e-07,
      4.3150565296917942e-07, -1.0808116193449876e-06, 2.7092759794669098e-06, -6.7989292319747952e-06,
      1.7089167198843551e-05, -4.3052688655542605e-05, 0.00010882584206868631, -0.00027643925426264719,
      0.00070738816518316108, -0.0018305640382639376, 0.0048214098213931952, -0.013073166646113805,
      0.037317641469542015, -0.11810202582086368, 0.49035775610023491}), c(b, x, 0.7031566406452432));
  taylor = b.CreateSelect(b.CreateFCmpOLE(z, c(b, x, hi)), taylor, taylor2);
  Value* psi = b.CreateSelect(big, asym, b.CreateFAdd(taylor, s));
  // The reflection term pi cot(pi x).
  Value* r = b.CreateFSub(x, unary_intr(b, llvm::Intrinsic::roundeven, x));
  Value* a = unary_intr(b, llvm::Intrinsic::fabs, r);
  Value* far = b.CreateFCmpOGT(a, c(b, x, 0.25));
  Value* v = b.CreateSelect(far, b.CreateFSub(c(b, x, 0.5), a), a);
  auto [sn, co] = sincos_small_f64(b, b.CreateFMul(v, c(b, x, M_PI)), full);
  Value* cot = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign,
                                       b.CreateSelect(far, b.CreateFDiv(sn, co), b.CreateFDiv(co, sn)), r);
  Value* res = b.CreateSelect(neg, b.CreateFSub(psi, b.CreateFMul(c(b, x, M_PI), cot)), psi);
  Value* pole = b.CreateAnd(b.CreateFCmpOLE(x, c(b, x, 0.0)), b.CreateFCmpOEQ(r, c(b, x, 0.0)));
  pole = b.CreateOr(pole, b.CreateFCmpOEQ(x, c(b, x, -INFINITY)));
  return b.CreateSelect(b.CreateOr(pole, is_nan(b, x)), c(b, x, NAN), res);
}

// digamma on f32 values: the f32-accuracy variant of digamma_f64 in double, rounded once (so near the roots,
// where psi is small, the result is still accurate relative to itself).
Value* digamma_f32(B& b, Value* x) {
  return b.CreateFPTrunc(digamma_f64(b, b.CreateFPExt(x, b.getDoubleTy()), false), b.getFloatTy());
}

// Giles' single-precision erf_inv approximation (the interpreter's starting point too): w = -log((1 - x)(1 + x)),
// erf_inv(x) = x P(w - 2.5) for w < 5, x Q(sqrt(w) - 3) above. `log` is the log of the value's precision.
template <class Log>
Value* erf_inv_giles(B& b, Value* x, Log log) {
  Value* one = c(b, x, 1.0);
  Value* w = b.CreateFNeg(log(b.CreateFMul(b.CreateFSub(one, x), b.CreateFAdd(one, x))));
  Value* p1 = horner(b, b.CreateFSub(w, c(b, x, 2.5)), {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                                                        0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                                                        1.50140941});
  Value* p2 = horner(b, b.CreateFSub(unary_intr(b, llvm::Intrinsic::sqrt, w), c(b, x, 3.0)),
                     {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                      0.00943887047, 1.00167406, 2.83297682});
  return b.CreateFMul(b.CreateSelect(b.CreateFCmpOLT(w, c(b, x, 5.0)), p1, p2), x);
}

// erf_inv's special values: +-1 -> +-inf, |x| > 1 and NaN -> NaN.
Value* erf_inv_edges(B& b, Value* x, Value* y) {
  Value* ax = unary_intr(b, llvm::Intrinsic::fabs, x);
  y = b.CreateSelect(b.CreateFCmpOEQ(ax, c(b, x, 1.0)),
                     b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, c(b, x, INFINITY), x), y);
  return b.CreateSelect(b.CreateFCmpUGT(ax, c(b, x, 1.0)), c(b, x, NAN), y);
}

Value* erf_inv_f32(B& b, Value* x) {
  return erf_inv_edges(b, x, erf_inv_giles(b, x, [&](Value* v) { return log_f32(b, v); }));
}

Value* libm(B& b, const char* name, Value* x, Value* y = nullptr) {
  llvm::Module* m = b.GetInsertBlock()->getModule();
  auto* d = b.getDoubleTy();
  bool narrow = !x->getType()->isDoubleTy();
  auto* fty = y ? llvm::FunctionType::get(d, {d, d}, false) : llvm::FunctionType::get(d, {d}, false);
  llvm::FunctionCallee f = m->getOrInsertFunction(name, fty);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    fn->setDoesNotThrow();
    fn->setOnlyAccessesInaccessibleMemory();  // errno at most
  }
  Value* xd = narrow ? b.CreateFPExt(x, d) : x;
  Value* r = y ? b.CreateCall(f, {xd, narrow ? b.CreateFPExt(y, d) : y}) : b.CreateCall(f, {xd});
  return narrow ? b.CreateFPTrunc(r, x->getType()) : r;
}

// erf_inv in f64: Giles' approximation refined by Newton steps. For |x| <= 1/2 on erf(y) - |x| (the start is
// within ~3e-7, so two steps would do). Above, on log(erfc(y)) - log(1 - |x|), where 1 - |x| is exact (erf(y) - |x|
// would cancel) and log erfc(y) ~ -y^2 is nearly a parabola, on which Newton converges from any start (Giles'
// polynomial is fitted to f32's range and is rough beyond 1 - 2^-24): four steps. erf, erfc, exp and log are the C
// library's (scalar calls, as all f64 math here).
Value* erf_inv_f64(B& b, Value* x) {
  Value* a = unary_intr(b, llvm::Intrinsic::fabs, x);
  Value* y = erf_inv_giles(b, a, [&](Value* v) { return log_f64(b, v, true); });
  Value* tail = b.CreateFCmpOGT(a, c(b, x, 0.5));
  Value* log_q = libm(b, "log", b.CreateFSub(c(b, x, 1.0), a));
  for (int i = 0; i < 4; ++i) {
    Value* d = b.CreateFMul(c(b, x, 1.1283791670955126), libm(b, "exp", b.CreateFNeg(b.CreateFMul(y, y))));
    Value* ec = libm(b, "erfc", y);
    Value* yt = b.CreateFAdd(y, b.CreateFDiv(b.CreateFMul(b.CreateFSub(libm(b, "log", ec), log_q), ec), d));
    Value* yc = b.CreateFSub(y, b.CreateFDiv(b.CreateFSub(libm(b, "erf", y), a), d));
    y = b.CreateSelect(tail, yt, yc);
  }
  return erf_inv_edges(b, x, b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, y, x));
}

const char* libm_name(Opcode op) {
  switch (op) {
    case Opcode::kExp: return "exp";
    case Opcode::kExpm1: return "expm1";
    case Opcode::kLog: return "log";
    case Opcode::kLog1p: return "log1p";
    case Opcode::kCbrt: return "cbrt";
    case Opcode::kTanh: return "tanh";
    case Opcode::kSin: return "sin";
    case Opcode::kCos: return "cos";
    case Opcode::kTan: return "tan";
    case Opcode::kErf: return "erf";
    case Opcode::kErfc: return "erfc";
    case Opcode::kLgamma: return "lgamma";
    case Opcode::kAsin: return "asin";
    case Opcode::kAcos: return "acos";
    case Opcode::kAtan: return "atan";
    case Opcode::kSinh: return "sinh";
    case Opcode::kCosh: return "cosh";
    case Opcode::kAsinh: return "asinh";
    case Opcode::kAcosh: return "acosh";
    case Opcode::kAtanh: return "atanh";
    case Opcode::kPower: return "pow";
    case Opcode::kAtan2: return "atan2";
    case Opcode::kRemainder: return "fmod";
    default: return nullptr;
  }
}
}  // namespace

bool has_vector_variants(const llvm::Module& m) { return m.getFunction("jitx_trig_keep") != nullptr; }

bool has_float_math(Opcode op) {
  return op == Opcode::kLogistic || op == Opcode::kErfInv || op == Opcode::kDigamma || libm_name(op) != nullptr;
}

int two_stage_math_parts(Opcode op, llvm::Type* t) {
  if (!t->isFloatTy()) return 0;
  return op == Opcode::kLogistic || op == Opcode::kExp ? 2 : 0;
}

std::vector<Value*> emit_float_math_stage1(B& b, Opcode op, Value* x, double scale) {
  JITX_ASSERT(two_stage_math_parts(op, x->getType()) > 0, "cpu emitter: no two-stage lowering for {}",
              hlo::opcode_name(op));
  if (op == Opcode::kExp) {
    JITX_ASSERT(scale == 1.0, "cpu emitter: exp takes no folded scale");
    return exp_f32_stage1(b, x);
  }
  return logistic_f32_stage1(b, x, scale);
}
Value* emit_float_math_stage2(B& b, Opcode op, const std::vector<Value*>& parts, Value* times) {
  JITX_ASSERT(two_stage_math_parts(op, parts.at(0)->getType()) > 0, "cpu emitter: no two-stage lowering for {}",
              hlo::opcode_name(op));
  if (op == Opcode::kExp) {
    Value* e = exp_f32_stage2(b, parts);
    return times ? b.CreateFMul(times, e) : e;
  }
  return logistic_f32_stage2(b, parts, times);
}

Value* emit_float_math(B& b, Opcode op, Value* x, Value* y) {
  if (x->getType()->isFloatTy()) {
    switch (op) {
      case Opcode::kExp: return exp_f32(b, x);
      case Opcode::kExpm1: return expm1_f32(b, x);
      case Opcode::kLog: return log_f32(b, x);
      case Opcode::kLog1p: return log1p_f32(b, x);
      case Opcode::kTanh: return tanh_f32(b, x);
      case Opcode::kLogistic: return logistic_f32(b, x);
      case Opcode::kErf: return erf_f32(b, x);
      case Opcode::kErfc: return erfc_f32(b, x);
      case Opcode::kSin: return sincos_f32(b, x, false);
      case Opcode::kCos: return sincos_f32(b, x, true);
      case Opcode::kErfInv: return erf_inv_f32(b, x);
      case Opcode::kDigamma: return digamma_f32(b, x);
      default: break;
    }
  }
  if (op == Opcode::kErfInv) return erf_inv_f64(b, x);
  if (op == Opcode::kDigamma) return digamma_f64(b, x, true);
  if (op == Opcode::kLogistic) {
    Value* e = libm(b, "exp", b.CreateFNeg(x));
    return b.CreateFDiv(c(b, x, 1.0), b.CreateFAdd(e, c(b, x, 1.0)));
  }
  const char* name = libm_name(op);
  if (!name) return nullptr;
  return libm(b, name, x, y);
}

}  // namespace jitx::cpu
