// Vectorisable float math in LLVM IR: polynomial approximations with range reduction for the common f32 functions.
//
// The loop vectoriser widens straight-line code but not libm calls, so exp, log, tanh, logistic, erf, sin, cos,
// expm1 and log1p on f32 (and on bf16/f16, computed in f32) are written out here (Cephes-style minimax
// polynomials, Horner with fused multiply-add). Measured error against double-precision references is in
// tests/cpu_backend_test.cpp. Everything else, and all f64 math, calls the C library (scalar, correctly rounded
// or nearly so): f64 accuracy needs longer polynomials than are worth writing here.
#include <cmath>
#include <limits>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
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
Value* unary_intr(B& b, llvm::Intrinsic::ID id, Value* x) { return b.CreateUnaryIntrinsic(id, x); }
Value* is_nan(B& b, Value* x) { return b.CreateFCmpUNO(x, x); }

// 2^n for an integer-valued float n in [-126, 127].
Value* pow2i(B& b, Value* n) {
  Value* i = b.CreateFPToSI(n, b.getInt32Ty());
  Value* bits = b.CreateShl(b.CreateAdd(i, b.getInt32(127)), 23);
  return b.CreateBitCast(bits, b.getFloatTy());
}

// expf: n = round(x / ln2), r = x - n ln2 (two-part ln2), exp(r) by a degree-7 polynomial, scaled by 2^n in two
// steps so results down to the subnormal range stay exact.
Value* exp_f32(B& b, Value* x) {
  Value* xc = b.CreateMinNum(b.CreateMaxNum(x, c(b, x, -104.0)), c(b, x, 88.72283935546875));
  Value* n = unary_intr(b, llvm::Intrinsic::roundeven, b.CreateFMul(xc, c(b, x, 1.44269504088896341)));
  Value* r = fma(b, n, c(b, x, -0.693359375), xc);
  r = fma(b, n, c(b, x, 2.12194440e-4), r);
  Value* p = horner(b, r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1,
                           5.0000001201E-1});
  Value* r2 = b.CreateFMul(r, r);
  Value* y = b.CreateFAdd(fma(b, p, r2, r), c(b, x, 1.0));
  Value* n1 = unary_intr(b, llvm::Intrinsic::trunc, b.CreateFMul(n, c(b, x, 0.5)));
  Value* n2 = b.CreateFSub(n, n1);
  y = b.CreateFMul(b.CreateFMul(y, pow2i(b, n1)), pow2i(b, n2));
  y = b.CreateSelect(b.CreateFCmpOGT(x, c(b, x, 88.72283935546875)), c(b, x, INFINITY), y);
  y = b.CreateSelect(b.CreateFCmpOLT(x, c(b, x, -103.972084045410)), c(b, x, 0.0), y);
  return b.CreateSelect(is_nan(b, x), x, y);
}

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

// log1p(x) = log(u) * x / (u - 1) with u = 1 + x (Goldberg): the rounding of u cancels.
Value* log1p_f32(B& b, Value* x) {
  Value* u = b.CreateFAdd(x, c(b, x, 1.0));
  Value* d = b.CreateFSub(u, c(b, x, 1.0));
  Value* r = b.CreateFDiv(b.CreateFMul(log_f32(b, u), x), d);
  r = b.CreateSelect(b.CreateFCmpOEQ(d, c(b, x, 0.0)), x, r);
  return b.CreateSelect(b.CreateFCmpOEQ(u, c(b, x, INFINITY)), u, r);
}

// expm1(x) = (u - 1) * x / log(u) with u = exp(x) (Goldberg).
Value* expm1_f32(B& b, Value* x) {
  Value* u = exp_f32(b, x);
  Value* um1 = b.CreateFSub(u, c(b, x, 1.0));
  Value* r = b.CreateFDiv(b.CreateFMul(um1, x), log_f32(b, u));
  r = b.CreateSelect(b.CreateFCmpOEQ(um1, c(b, x, 0.0)), x, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(um1, c(b, x, -1.0)), um1, r);
  return b.CreateSelect(b.CreateFCmpOEQ(u, c(b, x, INFINITY)), u, r);
}

// tanh: x P(x^2) / Q(x^2) on |x| <= 9 (a rational minimax fit of relative error 3e-9; above 9, tanh rounds to
// +-1 in f32 and the clamped argument gives exactly that). One division and ten fused multiply-adds: no exp, no
// branches, about a third of the instructions of 1 - 2 / (exp(2|x|) + 1), which made GELU compute-bound.
// Measured error <= 5 ULP (tests/cpu_backend_test.cpp), mostly near saturation where P and Q are large.
Value* tanh_f32(B& b, Value* x) {
  Value* ax = unary_intr(b, llvm::Intrinsic::fabs, x);
  Value* xc = b.CreateSelect(b.CreateFCmpOGT(ax, c(b, x, 9.0)), c(b, x, 9.0), ax);  // NaN stays NaN
  Value* z = b.CreateFMul(xc, xc);
  Value* p = horner(b, z, {-1.2338740272566096e-11, 3.077899890513436e-08, 2.8092008506064303e-05,
                           0.003872630652040243, 0.1368337720632553, 1.0});
  Value* q = horner(b, z, {1.2931501487400965e-06, 0.00039461374399252236, 0.027261679992079735,
                           0.4701671004295349, 1.0});
  Value* y = b.CreateFDiv(b.CreateFMul(xc, p), q);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, y, x);
}

Value* logistic_f32(B& b, Value* x) {
  Value* e = exp_f32(b, b.CreateFNeg(x));
  return b.CreateFDiv(c(b, x, 1.0), b.CreateFAdd(e, c(b, x, 1.0)));
}

// erf: x P(x^2) below 1; above, 1 - erfc with erfc(x) = exp(-x^2) / x * R(1/x^2) (two ranges).
Value* erf_f32(B& b, Value* x) {
  Value* ax = unary_intr(b, llvm::Intrinsic::fabs, x);
  Value* z = b.CreateFMul(x, x);
  Value* small = b.CreateFMul(x, horner(b, z, {7.853861353153693E-5, -8.010193625184903E-4, 5.188327685732524E-3,
                                               -2.685381193529856E-2, 1.128358514861418E-1,
                                               -3.761262582423300E-1, 1.128379165726710E0}));
  Value* q = b.CreateFDiv(c(b, x, 1.0), ax);
  Value* y = b.CreateFMul(q, q);
  Value* p1 = horner(b, y, {2.326819970068386E-2, -1.387039388740657E-1, 3.687424674597105E-1, -5.824733027278666E-1,
                            6.210004621745983E-1, -4.944515323274145E-1, 3.404879937665872E-1, -2.741127028184656E-1,
                            5.638259427386472E-1});
  Value* p2 = horner(b, y, {-1.047766399936249E1, 1.297719955372516E1, -7.495518717768503E0, 2.921019019210786E0,
                            -1.015265279202700E0, 4.218463358204948E-1, -2.820767439740514E-1,
                            5.641895067754075E-1});
  Value* p = b.CreateSelect(b.CreateFCmpOLT(ax, c(b, x, 2.0)), p1, p2);
  Value* erfc = b.CreateFMul(b.CreateFMul(exp_f32(b, b.CreateFNeg(z)), q), p);
  Value* large = b.CreateFSub(c(b, x, 1.0), erfc);
  large = b.CreateSelect(b.CreateFCmpOGT(ax, c(b, x, 9.0)), c(b, x, 1.0), large);
  large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, c(b, x, 1.0)), small, large);
}

// sin/cos: reduce by pi/2 in double (three-part pi/2, exact for |x| < 2^20 pi/2), polynomials on [-pi/4, pi/4].
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
  return b.CreateSelect(neg, b.CreateFNeg(v), v);
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

bool has_float_math(Opcode op) { return op == Opcode::kLogistic || libm_name(op) != nullptr; }

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
      case Opcode::kSin: return sincos_f32(b, x, false);
      case Opcode::kCos: return sincos_f32(b, x, true);
      default: break;
    }
  }
  if (op == Opcode::kLogistic) {
    Value* e = libm(b, "exp", b.CreateFNeg(x));
    return b.CreateFDiv(c(b, x, 1.0), b.CreateFAdd(e, c(b, x, 1.0)));
  }
  const char* name = libm_name(op);
  if (!name) return nullptr;
  return libm(b, name, x, y);
}

}  // namespace jitx::cpu
