// The element-level emitter (see elemental_emitter.h): index math, the types values are computed and stored in,
// data movement, and the arithmetic of every elementwise op (f32 transcendentals: math_emitter.cpp).
#include "backends/cpu/elemental_emitter.h"

#include <cmath>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "backends/cpu/llvm_emit.h"
#include "core/errors.h"

namespace jitx::cpu {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

Value* ElementalEmitter::gen(const Instruction* inst, Index idx) {
  auto bit = buffers_.find(inst);
  if (bit != buffers_.end()) return load(bit->second, linear_in(idx, buffer_layout(inst)), inst->shape.dtype);
  if (Value* held = held_value(inst, idx)) return held;
  std::vector<Value*> key{idx.linear};
  if (idx.has_multi) key.insert(key.end(), idx.multi.begin(), idx.multi.end());
  if (Value* shared = shared_key(*inst, idx)) key = {shared};
  auto mk = std::make_pair(inst, key);
  auto it = memo_.find(mk);
  if (it != memo_.end()) return it->second;
  Value* v = substitute(inst, idx);
  if (!v) v = gen_uncached(*inst, idx);
  memo_[mk] = v;
  return v;
}

// --- indices ---
std::vector<Value*> ElementalEmitter::delinearize(Value* lin, const std::vector<int64_t>& dims) {
  std::vector<Value*> m(dims.size());
  for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
    if (k == 0) m[k] = lin;
    else {
      m[k] = b_.CreateURem(lin, i64(dims[k]));
      lin = b_.CreateUDiv(lin, i64(dims[k]));
    }
    if (dims[k] == 1) m[k] = i64(0);
  }
  return m;
}
// Emits no arithmetic for size-1 dimensions, zero indices or unit strides: besides saving instructions, an
// index such as (row, 0) of a [R, 1] value then stays the row's own Value, so row_level() sees that a
// reduction reached through it is per row and hoist() computes it once per row, not once per element.
// The element's position in memory laid out by `layout` (canonical, over idx.dims): idx.linear when idx is
// ordered that way already, otherwise computed from the multi-index (and kept when it is idx's own order).
Value* ElementalEmitter::linear_in(Index& idx, const Layout& layout) {
  bool own = layout == idx.layout;
  if (own && idx.linear) return idx.linear;
  const std::vector<Value*>& multi = multi_of(idx);
  Value* l = nullptr;
  int64_t stride = 1;
  for (int64_t k : minor_to_major_of(layout, idx.dims.size())) {
    Value* m = multi[k];
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(m);
    if (idx.dims[k] != 1 && !(c && c->isZero())) {
      Value* term = stride == 1 ? m : b_.CreateMul(m, i64(stride));
      l = l ? b_.CreateAdd(l, term) : term;
    }
    stride *= idx.dims[k];
  }
  if (!l) l = i64(0);
  if (own) idx.linear = l;
  return l;
}
const std::vector<Value*>& ElementalEmitter::multi_of(Index& idx) {
  if (!idx.has_multi) {
    JITX_ASSERT(idx.layout.empty(), "cpu emitter: an index ordered by a layout without its multi-index");
    idx.multi = delinearize(idx.linear, idx.dims);
    idx.has_multi = true;
  }
  return idx.multi;
}
Index ElementalEmitter::multi_index(std::vector<int64_t> dims, std::vector<Value*> multi) {
  Index i;
  i.dims = std::move(dims);
  i.multi = std::move(multi);
  i.has_multi = true;
  return i;
}
Index ElementalEmitter::scalar_index() {
  Index i;
  i.linear = i64(0);
  i.has_multi = true;
  return i;
}

// --- types and memory ---
llvm::Type* ElementalEmitter::ctype(DType d) {
  if (d == DType::bool_) return b_.getInt1Ty();
  if (d == DType::float64) return b_.getDoubleTy();
  if (is_float(d)) return b_.getFloatTy();
  return b_.getIntNTy(static_cast<unsigned>(dtype_size(d) * 8));
}
llvm::Type* ElementalEmitter::stype(DType d) {
  switch (d) {
    case DType::bool_: return b_.getInt8Ty();
    case DType::float16: return b_.getHalfTy();
    case DType::bfloat16: return b_.getInt16Ty();
    case DType::float32: return b_.getFloatTy();
    case DType::float64: return b_.getDoubleTy();
    default: return b_.getIntNTy(static_cast<unsigned>(dtype_size(d) * 8));
  }
}
Value* ElementalEmitter::from_storage(DType d, Value* v) {
  switch (d) {
    case DType::bool_: return b_.CreateICmpNE(v, b_.getInt8(0));
    case DType::float16: return b_.CreateFPExt(v, b_.getFloatTy());
    case DType::bfloat16:
      return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
    default: return v;
  }
}
Value* ElementalEmitter::to_storage(DType d, Value* v) {
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
Value* ElementalEmitter::load(Value* ptr, Value* linear, DType d) {
  Value* p = b_.CreateInBoundsGEP(stype(d), ptr, linear);
  return from_storage(d, b_.CreateLoad(stype(d), p));
}
void ElementalEmitter::store(Value* ptr, Value* linear, DType d, Value* v) {
  Value* p = b_.CreateInBoundsGEP(stype(d), ptr, linear);
  b_.CreateStore(to_storage(d, v), p);
}
Value* ElementalEmitter::constant_global(const Instruction& c) {
  const detail::Literal& lit = *c.literal;
  llvm::StringRef raw(static_cast<const char*>(lit.data()), lit.nbytes());
  llvm::Constant* data = llvm::ConstantDataArray::getRaw(raw, static_cast<uint64_t>(lit.size()), stype(lit.dtype));
  auto* g = new llvm::GlobalVariable(m_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data, "const");
  g->setAlignment(llvm::Align(64));
  return g;
}

// --- element generation ---
Value* ElementalEmitter::operand_at(const Instruction& inst, size_t k, Index& idx) {
  const Instruction* o = inst.operand(k);
  if (o->shape.dims.empty() && !idx.dims.empty()) return gen(o, scalar_index());
  return gen(o, idx);
}

Value* ElementalEmitter::scalar_i64(const Instruction* o) {
  Value* v = gen(o, scalar_index());
  return b_.CreateIntCast(v, b_.getInt64Ty(), is_signed(o->shape.dtype));
}
Value* ElementalEmitter::clamp_i64(Value* v, int64_t lo, int64_t hi) {
  v = b_.CreateSelect(b_.CreateICmpSLT(v, i64(lo)), i64(lo), v);
  return b_.CreateSelect(b_.CreateICmpSGT(v, i64(hi)), i64(hi), v);
}

Value* ElementalEmitter::gen_uncached(const Instruction& inst, Index& idx) {
  const auto& a = inst.attrs;
  DType d = inst.shape.dtype;
  switch (inst.opcode) {
    case Opcode::kConstant: {
      if (inst.literal->size() == 1) {
        detail::Literal l = *inst.literal;
        if (is_float(d)) return fconst(ctype(d), l.get_f64(0));
        unsigned bits = ctype(d)->getIntegerBitWidth();
        uint64_t u = l.get_u64(0) & (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
        return llvm::ConstantInt::get(ctx_, llvm::APInt(bits, u));
      }
      Value* g = constant_global(inst);
      buffers_[&inst] = g;  // a literal: row-major
      return load(g, linear_of(idx), d);
    }
    case Opcode::kIota: {
      Value* m = multi_of(idx).at(a.get_int("iota_dimension"));
      if (is_float(d)) return round(d, b_.CreateUIToFP(m, ctype(d)));
      if (d == DType::bool_) return b_.CreateICmpNE(m, i64(0));
      return b_.CreateIntCast(m, ctype(d), false);
    }
    case Opcode::kBroadcastInDim: {
      const auto& bd = a.get_ints("broadcast_dimensions");
      const auto& od = inst.operand(0)->shape.dims;
      std::vector<Value*> m;
      for (size_t j = 0; j < bd.size(); ++j) m.push_back(od[j] == 1 ? i64(0) : multi_of(idx)[bd[j]]);
      return gen(inst.operand(0), multi_index(od, m));
    }
    case Opcode::kReshape: {
      Index o;
      o.dims = inst.operand(0)->shape.dims;
      o.linear = linear_of(idx);
      return gen(inst.operand(0), o);
    }
    case Opcode::kCopy: return gen(inst.operand(0), idx);
    case Opcode::kBitcastConvert: {  // one width (inner_reason): the stored bits, read as the other type
      DType in = inst.operand(0)->shape.dtype;
      Value* bits = b_.CreateBitCast(to_storage(in, gen(inst.operand(0), idx)), stype(inst.shape.dtype));
      return from_storage(inst.shape.dtype, bits);
    }
    case Opcode::kTranspose: {
      const auto& perm = a.get_ints("permutation");
      std::vector<Value*> m(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) m[perm[i]] = multi_of(idx)[i];
      return gen(inst.operand(0), multi_index(inst.operand(0)->shape.dims, m));
    }
    case Opcode::kSlice: {
      const auto& st = a.get_ints("start_indices");
      const auto& sd = a.get_ints("strides");
      std::vector<Value*> m;
      for (size_t i = 0; i < st.size(); ++i)
        m.push_back(b_.CreateAdd(b_.CreateMul(multi_of(idx)[i], i64(sd[i])), i64(st[i])));
      return gen(inst.operand(0), multi_index(inst.operand(0)->shape.dims, m));
    }
    case Opcode::kReverse: {
      std::vector<Value*> m = multi_of(idx);
      for (auto k : a.get_ints("dimensions")) m[k] = b_.CreateSub(i64(idx.dims[k] - 1), m[k]);
      return gen(inst.operand(0), multi_index(idx.dims, m));
    }
    case Opcode::kPad: {
      const auto& lo = a.get_ints("edge_padding_low");
      const auto& in = a.get_ints("interior_padding");
      const auto& od = inst.operand(0)->shape.dims;
      Value* inside = b_.getTrue();
      std::vector<Value*> m;
      for (size_t i = 0; i < od.size(); ++i) {
        Value* p = b_.CreateSub(multi_of(idx)[i], i64(lo[i]));
        Value* q = b_.CreateSDiv(p, i64(in[i] + 1));
        Value* ok = b_.CreateAnd(b_.CreateICmpSGE(p, i64(0)), b_.CreateICmpSLT(q, i64(od[i])));
        if (in[i]) ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateSRem(p, i64(in[i] + 1)), i64(0)));
        inside = b_.CreateAnd(inside, ok);
        m.push_back(clamp_i64(q, 0, od[i] - 1));
      }
      Value* v = gen(inst.operand(0), multi_index(od, m));
      Value* pad = gen(inst.operand(1), scalar_index());
      return b_.CreateSelect(inside, v, pad);
    }
    case Opcode::kConcatenate: {
      int64_t dim = a.get_int("dimension");
      Value* result = nullptr;
      int64_t off = 0;
      for (auto* o : inst.operands) {
        std::vector<Value*> m = multi_of(idx);
        Value* p = b_.CreateSub(m[dim], i64(off));
        m[dim] = clamp_i64(p, 0, o->shape.dims[dim] - 1);
        Value* v = gen(o, multi_index(o->shape.dims, m));
        result = result ? b_.CreateSelect(b_.CreateICmpSGE(p, i64(0)), v, result) : v;
        off += o->shape.dims[dim];
      }
      return result;
    }
    case Opcode::kDynamicSlice: {
      const auto& od = inst.operand(0)->shape.dims;
      std::vector<Value*> m;
      for (size_t i = 0; i < od.size(); ++i) {
        Value* s = clamp_start(inst.operand(1 + i), od[i] - idx.dims[i]);
        m.push_back(b_.CreateAdd(s, multi_of(idx)[i]));
      }
      return gen(inst.operand(0), multi_index(od, m));
    }
    case Opcode::kDynamicUpdateSlice: {
      const auto& ud = inst.operand(1)->shape.dims;
      Value* inside = b_.getTrue();
      std::vector<Value*> m;
      for (size_t i = 0; i < ud.size(); ++i) {
        Value* s = clamp_start(inst.operand(2 + i), idx.dims[i] - ud[i]);
        Value* p = b_.CreateSub(multi_of(idx)[i], s);
        inside = b_.CreateAnd(inside, b_.CreateAnd(b_.CreateICmpSGE(p, i64(0)), b_.CreateICmpSLT(p, i64(ud[i]))));
        m.push_back(clamp_i64(p, 0, ud[i] - 1));
      }
      Value* u = gen(inst.operand(1), multi_index(ud, m));
      return b_.CreateSelect(inside, u, gen(inst.operand(0), idx));
    }
    case Opcode::kReduce: return gen_reduce(inst, idx);
    default: break;
  }
  JITX_ASSERT(hlo::is_elementwise(inst.opcode), "cpu emitter: unexpected {}", hlo::opcode_name(inst.opcode));
  std::vector<Value*> ops;
  for (size_t k = 0; k < inst.operands.size(); ++k) ops.push_back(operand_at(inst, k, idx));
  return elementwise(inst, ops);
}

Value* ElementalEmitter::clamp_start(const Instruction* o, int64_t hi) {
  Value* v = gen(o, scalar_index());
  if (is_signed(o->shape.dtype)) v = b_.CreateSExt(v, b_.getInt64Ty());
  else {  // unsigned: values above INT64_MAX clamp to the top
    v = b_.CreateZExt(v, b_.getInt64Ty());
    if (dtype_size(o->shape.dtype) == 8) v = b_.CreateSelect(b_.CreateICmpSLT(v, i64(0)), i64(INT64_MAX), v);
  }
  return clamp_i64(v, 0, hi);
}

// --- a reducer's arithmetic ---
Value* ElementalEmitter::identity(const std::string& r, DType d) {
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
  if (r == "max") return llvm::ConstantInt::get(t->getContext(), sg ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt(bits, 0));
  return llvm::ConstantInt::get(t->getContext(), sg ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits));
}
Value* ElementalEmitter::combine(const std::string& r, DType d, Value* acc, Value* x, bool reassoc) {
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
Value* ElementalEmitter::convert(Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* t = ctype(to);
  if (to == DType::bool_) return is_float(from) ? b_.CreateFCmpUNE(v, fconst(v->getType(), 0.0)) : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (is_float(to)) {
    Value* r;
    if (is_half(to) && (from == DType::float64 || (!is_float(from) && dtype_size(from) >= 4))) {
      // As the interpreter does: to f32 with round-to-odd, then to the half type, so it rounds once (with excess
      // precision the round-to-odd f32 is the value, within an f32 ulp, and a store rounds it once to the type).
      Value* vd = from == DType::float64 ? v : is_signed(from) ? b_.CreateSIToFP(v, b_.getDoubleTy())
                                                               : b_.CreateUIToFP(v, b_.getDoubleTy());
      return round(to, round_odd_f32(vd));
    }
    if (is_float(from)) r = b_.CreateFPCast(v, t);
    else if (is_signed(from)) r = b_.CreateSIToFP(v, t);
    else r = b_.CreateUIToFP(v, t);
    return round(to, r);
  }
  if (is_float(from)) {
    auto id = is_signed(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {t, v->getType()}, {v});
  }
  return b_.CreateIntCast(v, t, is_signed(from));
}

// double -> float truncating toward zero and setting the last bit when inexact (infinities and NaN as they are).
Value* ElementalEmitter::round_odd_f32(Value* x) {
  auto* i32 = b_.getInt32Ty();
  Value* t = b_.CreateFPTrunc(x, b_.getFloatTy());
  Value* back = b_.CreateFPExt(t, b_.getDoubleTy());
  Value* fin = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, t), fconst(b_.getFloatTy(), INFINITY));
  Value* inexact = b_.CreateAnd(fin, b_.CreateFCmpONE(back, x));
  Value* away = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                 b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
  Value* bits = b_.CreateBitCast(t, i32);
  bits = b_.CreateSelect(b_.CreateAnd(inexact, away), b_.CreateSub(bits, b_.getInt32(1)), bits);
  bits = b_.CreateSelect(inexact, b_.CreateOr(bits, b_.getInt32(1)), bits);
  return b_.CreateBitCast(bits, b_.getFloatTy());
}

Value* ElementalEmitter::elementwise(const Instruction& inst, std::vector<Value*>& ops) {
  Opcode op = inst.opcode;
  DType d = inst.shape.dtype;
  DType in = inst.operand(0)->shape.dtype;
  if (op == Opcode::kConvert) return convert(ops[0], in, d);
  if (op == Opcode::kSelect) return b_.CreateSelect(ops[0], ops[1], ops[2]);
  if (op == Opcode::kCompare) return compare(inst.attrs.get_str("direction"), in, ops[0], ops[1]);
  if (op == Opcode::kClamp) {
    DType cd = inst.operand(1)->shape.dtype;
    Value *lo = ops[0], *x = ops[1], *hi = ops[2];
    Value* m = b_.CreateSelect(lt(cd, x, lo), lo, x);  // std::max(x, lo)
    m = b_.CreateSelect(lt(cd, hi, m), hi, m);          // std::min(m, hi)
    if (is_float(cd)) m = b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, m);
    return m;
  }
  if (is_float(in)) return round(d, float_op(op, ops));
  return int_op(op, in, ops);
}

Value* ElementalEmitter::lt(DType d, Value* x, Value* y) {
  if (is_float(d)) return b_.CreateFCmpOLT(x, y);
  return is_signed(d) ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
}

Value* ElementalEmitter::compare(const std::string& dir, DType d, Value* x, Value* y) {
  using P = llvm::CmpInst::Predicate;
  P p;
  if (is_float(d)) {
    p = dir == "EQ" ? P::FCMP_OEQ : dir == "NE" ? P::FCMP_UNE : dir == "LT" ? P::FCMP_OLT : dir == "LE" ? P::FCMP_OLE
      : dir == "GT" ? P::FCMP_OGT : P::FCMP_OGE;
    return b_.CreateFCmp(p, x, y);
  }
  bool sg = is_signed(d);
  p = dir == "EQ" ? P::ICMP_EQ : dir == "NE" ? P::ICMP_NE : dir == "LT" ? (sg ? P::ICMP_SLT : P::ICMP_ULT)
    : dir == "LE" ? (sg ? P::ICMP_SLE : P::ICMP_ULE) : dir == "GT" ? (sg ? P::ICMP_SGT : P::ICMP_UGT)
    : (sg ? P::ICMP_SGE : P::ICMP_UGE);
  return b_.CreateICmp(p, x, y);
}

// With excess precision allowed (the default), a fused multiply and the add or subtract that consumes it may be
// one fused multiply-add: one rounding instead of two, as XLA:CPU compiles every kernel ("always allow FMA
// fusion: this increases precision"). Off, every op rounds, as the interpreter does.
Value* ElementalEmitter::contractible(Value* v) {
  if (auto* i = llvm::dyn_cast<llvm::Instruction>(v); i && excess_precision_) i->setHasAllowContract(true);
  return v;
}

Value* ElementalEmitter::float_op(Opcode op, std::vector<Value*>& o) {
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

// Integer ops with XLA's semantics (interpreter/evaluator.cpp binary_int): division by zero, overflow, wide shifts.
Value* ElementalEmitter::int_op(Opcode op, DType d, std::vector<Value*>& o) {
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
        Value* ovf = b_.CreateAnd(b_.CreateICmpEQ(x, llvm::ConstantInt::get(t->getContext(), llvm::APInt::getSignedMinValue(bits))),
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
      Value* neg_pow = b_.CreateSelect(b_.CreateICmpEQ(x, C(1)), C(1),
                                       b_.CreateSelect(b_.CreateICmpEQ(x, C(-1)), b_.CreateSelect(odd, C(-1), C(1)), zero));
      return b_.CreateSelect(b_.CreateICmpSLT(y, zero), neg_pow, r);
    }
    default: break;
  }
  JITX_ASSERT(false, "cpu emitter: integer {}", hlo::opcode_name(op));
  return nullptr;
}

}  // namespace jitx::cpu
