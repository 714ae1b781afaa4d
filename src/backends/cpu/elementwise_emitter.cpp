// The elementwise emitter (see elementwise_emitter.h): the types values are computed and stored in, and the
// arithmetic of every elementwise op and reducer (f32 transcendentals: math_emitter.cpp).
#include "backends/cpu/elementwise_emitter.h"

#include <cmath>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "backends/cpu/llvm_emit.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

// --- types and storage ---
llvm::Type* ElementwiseEmitter::ctype(DType d) {
  if (d == DType::bool_) return b_.getInt1Ty();
  if (d == DType::float64) return b_.getDoubleTy();
  if (is_float(d)) return b_.getFloatTy();
  return b_.getIntNTy(static_cast<unsigned>(dtype_size(d) * 8));
}
llvm::Type* ElementwiseEmitter::stype(DType d) {
  switch (d) {
    case DType::bool_: return b_.getInt8Ty();
    case DType::float16: return b_.getHalfTy();
    case DType::bfloat16: return b_.getInt16Ty();
    case DType::float32: return b_.getFloatTy();
    case DType::float64: return b_.getDoubleTy();
    default: return b_.getIntNTy(static_cast<unsigned>(dtype_size(d) * 8));
  }
}
Value* ElementwiseEmitter::from_storage(DType d, Value* v) {
  switch (d) {
    case DType::bool_: return b_.CreateICmpNE(v, b_.getInt8(0));
    case DType::float16: return b_.CreateFPExt(v, b_.getFloatTy());
    case DType::bfloat16:
      return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
    default: return v;
  }
}
Value* ElementwiseEmitter::to_storage(DType d, Value* v) {
  switch (d) {
    case DType::bool_: return b_.CreateZExt(v, b_.getInt8Ty());
    case DType::float16: return b_.CreateFPTrunc(v, b_.getHalfTy());
    case DType::bfloat16: {  // round to nearest even; NaNs stay quiet NaNs
      Value* u = b_.CreateBitCast(v, b_.getInt32Ty());
      Value* lsb = b_.CreateAnd(b_.CreateLShr(u, 16), 1);
      Value* r = b_.CreateLShr(b_.CreateAdd(u, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
      Value* nan = b_.CreateOr(b_.CreateLShr(u, 16), 0x40);
      return b_.CreateTrunc(b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, r), b_.getInt16Ty());
    }
    default: return v;
  }
}

// --- a reducer's arithmetic ---
Value* ElementwiseEmitter::identity(const std::string& r, DType d) {
  llvm::Type* t = ctype(d);
  if (is_float(d)) {
    if (r == "add") return fconst(t, 0.0);
    if (r == "mul") return fconst(t, 1.0);
    return fconst(t, r == "max" ? -INFINITY : INFINITY);
  }
  unsigned bits = t->getIntegerBitWidth();
  if (r == "add" || r == "or") return llvm::ConstantInt::get(t, 0);
  if (r == "mul") return llvm::ConstantInt::get(t, 1);
  if (r == "and") return llvm::ConstantInt::getAllOnesValue(t);
  bool sg = is_signed(d);
  if (r == "max")
    return llvm::ConstantInt::get(t->getContext(), sg ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt(bits, 0));
  return llvm::ConstantInt::get(t->getContext(),
                                sg ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits));
}
Value* ElementwiseEmitter::combine(const std::string& r, DType d, Value* acc, Value* x, bool reassoc) {
  if (is_float(d)) {
    Value* v;
    if (r == "add") v = b_.CreateFAdd(acc, x);
    else if (r == "mul") v = b_.CreateFMul(acc, x);
    else if (r == "max") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, acc, x);
    else return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, acc, x);
    if (reassoc) llvm::cast<llvm::Instruction>(v)->setHasAllowReassoc(true);
    return v;
  }
  bool sg = is_signed(d);
  if (r == "add") return d == DType::bool_ ? b_.CreateOr(acc, x) : b_.CreateAdd(acc, x);
  if (r == "mul") return d == DType::bool_ ? b_.CreateAnd(acc, x) : b_.CreateMul(acc, x);
  if (r == "and") return b_.CreateAnd(acc, x);
  if (r == "or") return b_.CreateOr(acc, x);
  if (r == "max") return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, acc, x);
  return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, acc, x);
}

// --- elementwise ---
Value* ElementwiseEmitter::convert(Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* t = ctype(to);
  if (to == DType::bool_)
    return is_float(from) ? b_.CreateFCmpUNE(v, fconst(v->getType(), 0.0))
                          : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (is_float(to)) {
    // To f16/bf16 (computed in f32: t is float) from f64 or an integer this rounds to f32 and then to the half
    // type, as XLA converts (and as the interpreter does). An explicit convert to a half type always rounds (as
    // XLA:CPU: x.astype(bf16).astype(f32) is how users emulate bf16).
    Value* r;
    if (is_float(from)) r = b_.CreateFPCast(v, t);
    else if (is_signed(from)) r = b_.CreateSIToFP(v, t);
    else r = b_.CreateUIToFP(v, t);
    return is_half(to) ? from_storage(to, to_storage(to, r)) : r;
  }
  if (is_float(from)) {
    auto id = is_signed(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {t, v->getType()}, {v});
  }
  return b_.CreateIntCast(v, t, is_signed(from));
}

namespace {
/// Whether i's value reaches a broadcast, directly or through reshapes.
bool is_broadcast(const Instruction& i) {
  for (auto* u : i.users())
    if (u->opcode == Opcode::kBroadcastInDim || (u->opcode == Opcode::kReshape && is_broadcast(*u))) return true;
  return false;
}
}  // namespace

Value* ElementwiseEmitter::elementwise(const Instruction& inst, std::vector<Value*>& ops) {
  Opcode op = inst.opcode;
  DType d = inst.shape.dtype;
  DType in = inst.operand(0)->shape.dtype;
  if (op == Opcode::kConvert) return convert(ops[0], in, d);
  if (op == Opcode::kSelect) return b_.CreateSelect(ops[0], ops[1], ops[2]);
  if (op == Opcode::kCompare) return compare(hlo::Comparison::of(inst).direction, in, ops[0], ops[1]);
  if (op == Opcode::kClamp) {
    DType cd = inst.operand(1)->shape.dtype;
    Value *lo = ops[0], *x = ops[1], *hi = ops[2];
    if (is_float(cd)) {  // XLA's min(max(x, lo), hi): NaN from any operand, -0 below +0
      Value* m = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, lo);
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, m, hi);
    }
    Value* m = b_.CreateSelect(lt(cd, x, lo), lo, x);  // std::max(x, lo)
    return b_.CreateSelect(lt(cd, hi, m), hi, m);       // std::min(m, hi)
  }
  if (is_float(in)) {
    // A product that is broadcast (a mean, a row's scale) is one value for many elements: fused into each
    // element's add, it would be an unrounded value that differs from the rounded one the others see (x - mean(x)
    // not 0 for equal x: jnp.var of a constant column was 2^-50 once 512-bit vectorisation moved the multiply next
    // to its use). Such products do not contract; others (through reshapes too) may, as XLA:CPU's do.
    bool saved = excess_precision_;
    if (op == Opcode::kMultiply && is_broadcast(inst)) excess_precision_ = false;
    Value* r = round(d, float_op(op, ops));
    excess_precision_ = saved;
    return r;
  }
  return int_op(op, in, ops);
}

Value* ElementwiseEmitter::lt(DType d, Value* x, Value* y) {
  if (is_float(d)) return b_.CreateFCmpOLT(x, y);
  return is_signed(d) ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
}

Value* ElementwiseEmitter::compare(hlo::ComparisonDirection dir, DType d, Value* x, Value* y) {
  using P = llvm::CmpInst::Predicate;
  using D = hlo::ComparisonDirection;
  P p;
  if (is_float(d)) {
    p = dir == D::kEq ? P::FCMP_OEQ : dir == D::kNe ? P::FCMP_UNE : dir == D::kLt ? P::FCMP_OLT
      : dir == D::kLe ? P::FCMP_OLE : dir == D::kGt ? P::FCMP_OGT : P::FCMP_OGE;
    return b_.CreateFCmp(p, x, y);
  }
  bool sg = is_signed(d);
  p = dir == D::kEq ? P::ICMP_EQ : dir == D::kNe ? P::ICMP_NE : dir == D::kLt ? (sg ? P::ICMP_SLT : P::ICMP_ULT)
    : dir == D::kLe ? (sg ? P::ICMP_SLE : P::ICMP_ULE) : dir == D::kGt ? (sg ? P::ICMP_SGT : P::ICMP_UGT)
    : (sg ? P::ICMP_SGE : P::ICMP_UGE);
  return b_.CreateICmp(p, x, y);
}

// With excess precision allowed (the default), a fused multiply and the add or subtract that consumes it may be
// one fused multiply-add: one rounding instead of two, as XLA:CPU compiles every kernel ("always allow FMA
// fusion: this increases precision"). Off, every op rounds, as the interpreter does.
Value* ElementwiseEmitter::contractible(Value* v) {
  if (auto* i = llvm::dyn_cast<llvm::Instruction>(v); i && excess_precision_) i->setHasAllowContract(true);
  return v;
}

Value* ElementwiseEmitter::float_op(Opcode op, std::vector<Value*>& o) {
  Value* x = o[0];
  llvm::Type* t = x->getType();
  auto intr = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  switch (op) {
    case Opcode::kAbs: return intr(llvm::Intrinsic::fabs);
    case Opcode::kNegate: return b_.CreateFNeg(x);
    case Opcode::kSign: {
      Value* s = b_.CreateSelect(b_.CreateFCmpOGT(x, fconst(t, 0)), fconst(t, 1),
                                 b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(t, 0)), fconst(t, -1), x));
      return s;  // NaN and +-0 map to themselves
    }
    case Opcode::kFloor: return intr(llvm::Intrinsic::floor);
    case Opcode::kCeil: return intr(llvm::Intrinsic::ceil);
    case Opcode::kRoundNearestAfz: return intr(llvm::Intrinsic::round);
    case Opcode::kRoundNearestEven: return intr(llvm::Intrinsic::roundeven);
    case Opcode::kSqrt: return intr(llvm::Intrinsic::sqrt);
    case Opcode::kRsqrt: return b_.CreateFDiv(fconst(t, 1.0), intr(llvm::Intrinsic::sqrt));
    case Opcode::kIsFinite: return b_.CreateFCmpOLT(intr(llvm::Intrinsic::fabs), fconst(t, INFINITY));
    case Opcode::kAdd: return contractible(b_.CreateFAdd(x, o[1]));
    case Opcode::kSubtract: return contractible(b_.CreateFSub(x, o[1]));
    case Opcode::kMultiply: return contractible(b_.CreateFMul(x, o[1]));
    case Opcode::kDivide: return b_.CreateFDiv(x, o[1]);
    case Opcode::kMaximum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, o[1]);
    case Opcode::kMinimum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, o[1]);
    default: break;
  }
  Value* r = emit_float_math(b_, op, x, o.size() > 1 ? o[1] : nullptr);
  JITX_ASSERT(r, "cpu emitter: no float lowering for {}", hlo::opcode_name(op));
  return r;
}

// Integer ops with XLA's semantics (hlo/evaluator/evaluator.cpp binary_int): division by zero, overflow, wide shifts.
Value* ElementwiseEmitter::int_op(Opcode op, DType d, std::vector<Value*>& o) {
  Value* x = o[0];
  llvm::Type* t = x->getType();
  unsigned bits = t->getIntegerBitWidth();
  bool sg = is_signed(d), is_b = d == DType::bool_;
  auto C = [&](int64_t v) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true); };
  switch (op) {
    case Opcode::kNegate: return b_.CreateNeg(x);
    case Opcode::kAbs: return sg ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse()) : x;
    case Opcode::kSign:
      if (!sg) return b_.CreateZExt(b_.CreateICmpNE(x, C(0)), t);
      return b_.CreateSub(b_.CreateZExt(b_.CreateICmpSGT(x, C(0)), t), b_.CreateZExt(b_.CreateICmpSLT(x, C(0)), t));
    case Opcode::kNot: return b_.CreateNot(x);
    case Opcode::kPopcnt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
    default: break;
  }
  Value* y = o[1];
  Value* zero = C(0);
  switch (op) {
    case Opcode::kAdd: return is_b ? b_.CreateOr(x, y) : b_.CreateAdd(x, y);
    case Opcode::kSubtract: return b_.CreateSub(x, y);
    case Opcode::kMultiply: return is_b ? b_.CreateAnd(x, y) : b_.CreateMul(x, y);
    case Opcode::kAnd: return b_.CreateAnd(x, y);
    case Opcode::kOr: return b_.CreateOr(x, y);
    case Opcode::kXor: return b_.CreateXor(x, y);
    case Opcode::kMaximum:
      return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
    case Opcode::kMinimum:
      return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
    case Opcode::kDivide:
    case Opcode::kRemainder: {
      bool div = op == Opcode::kDivide;
      Value* yz = b_.CreateICmpEQ(y, zero);
      if (is_b) return div ? b_.CreateOr(b_.CreateNot(y), x) : b_.CreateAnd(x, b_.CreateNot(y));
      if (sg) {
        Value* ovf = b_.CreateAnd(
            b_.CreateICmpEQ(x, llvm::ConstantInt::get(t->getContext(), llvm::APInt::getSignedMinValue(bits))),
            b_.CreateICmpEQ(y, C(-1)));
        Value* safe = b_.CreateSelect(b_.CreateOr(yz, ovf), C(1), y);
        Value* q = div ? b_.CreateSDiv(x, safe) : b_.CreateSRem(x, safe);
        q = b_.CreateSelect(ovf, div ? x : zero, q);
        return b_.CreateSelect(yz, div ? C(-1) : x, q);
      }
      Value* safe = b_.CreateSelect(yz, C(1), y);
      Value* q = div ? b_.CreateUDiv(x, safe) : b_.CreateURem(x, safe);
      return b_.CreateSelect(yz, div ? C(-1) : x, q);
    }
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical: {
      Value* big = b_.CreateICmpUGE(y, C(bits));
      Value* safe = b_.CreateSelect(big, zero, y);
      Value* s = op == Opcode::kShiftLeft ? b_.CreateShl(x, safe) : b_.CreateLShr(x, safe);
      return b_.CreateSelect(big, zero, s);
    }
    case Opcode::kShiftRightArithmetic:
      return b_.CreateAShr(x, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, y, C(bits - 1)));
    case Opcode::kPower: {
      // Square-and-multiply over all `bits` exponent bits (straight-line, so it vectorises), wrapping as the
      // interpreter's 64-bit loop does once truncated; a negative signed exponent gives 1, +-1 or 0.
      Value* r = C(1);
      Value* base = x;
      for (unsigned k = 0; k < bits; ++k) {
        Value* bit = b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(y, C(k)), C(1)), zero);
        r = b_.CreateSelect(bit, b_.CreateMul(r, base), r);
        if (k + 1 < bits) base = b_.CreateMul(base, base);
      }
      if (!sg) return r;
      Value* odd = b_.CreateICmpNE(b_.CreateAnd(y, C(1)), zero);
      Value* neg_pow =
          b_.CreateSelect(b_.CreateICmpEQ(x, C(1)), C(1),
                          b_.CreateSelect(b_.CreateICmpEQ(x, C(-1)), b_.CreateSelect(odd, C(-1), C(1)), zero));
      return b_.CreateSelect(b_.CreateICmpSLT(y, zero), neg_pow, r);
    }
    default: break;
  }
  JITX_ASSERT(false, "cpu emitter: integer {}", hlo::opcode_name(op));
  return nullptr;
}


}  // namespace jitx::cpu
