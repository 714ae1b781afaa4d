// The element-level emitter (see elemental_emitter.h): the memo, index math, loads and stores, and each op's value
// at an index (data movement as index math; the arithmetic of elementwise ops is elementwise_emitter.cpp's).
#include "backends/cpu/elemental_emitter.h"

#include <cstdint>

#include <llvm/IR/Constants.h>

#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

Value* ElementalEmitter::gen(const Instruction* inst, Index idx) {
  // An empty array's element is never used (pad, concatenate, windows and dynamic updates select it away), but the
  // read would still happen, at a clamped index that is out of bounds: no read, a zero instead.
  if (!inst->shape.is_tuple && inst->shape.num_elements() == 0)
    return llvm::Constant::getNullValue(ctype(inst->shape.dtype));
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

// --- memory ---
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
      Value* m = multi_of(idx).at(hlo::iota_dimension_of(inst));
      if (is_float(d)) return round(d, b_.CreateUIToFP(m, ctype(d)));
      if (d == DType::bool_) return b_.CreateICmpNE(m, i64(0));
      return b_.CreateIntCast(m, ctype(d), false);
    }
    case Opcode::kBroadcastInDim: {
      const auto& bd = hlo::broadcast_dimensions_of(inst);
      const auto& od = inst.operand(0)->shape.dims;
      std::vector<Value*> m;
      for (size_t j = 0; j < bd.size(); ++j) m.push_back(od[j] == 1 ? i64(0) : multi_of(idx)[bd[j]]);
      return gen(inst.operand(0), multi_index(od, m));
    }
    case Opcode::kReshape: {
      const auto& od = inst.operand(0)->shape.dims;
      if (idx.has_multi) {
        // A reshape that only inserts or removes unit dims keeps the multi-index of the others: no linear index to
        // rebuild, and a row fusion still sees that a reduce behind it is at the current row (at_current_row).
        std::vector<Value*> nonunit_multi;
        std::vector<int64_t> nonunit_out, nonunit_in;
        for (size_t k = 0; k < idx.dims.size(); ++k)
          if (idx.dims[k] != 1) nonunit_out.push_back(idx.dims[k]), nonunit_multi.push_back(idx.multi[k]);
        for (auto d : od)
          if (d != 1) nonunit_in.push_back(d);
        if (nonunit_in == nonunit_out) {
          std::vector<Value*> m;
          size_t next = 0;
          for (auto d : od) m.push_back(d == 1 ? i64(0) : nonunit_multi[next++]);
          return gen(inst.operand(0), multi_index(od, m));
        }
      }
      Index o;
      o.dims = od;
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
      const auto& perm = hlo::permutation_of(inst);
      std::vector<Value*> m(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) m[perm[i]] = multi_of(idx)[i];
      return gen(inst.operand(0), multi_index(inst.operand(0)->shape.dims, m));
    }
    case Opcode::kSlice: {
      auto slice = hlo::SliceConfig::of(inst);
      const auto &st = slice.start_indices, &sd = slice.strides;
      std::vector<Value*> m;
      for (size_t i = 0; i < st.size(); ++i)
        m.push_back(b_.CreateAdd(b_.CreateMul(multi_of(idx)[i], i64(sd[i])), i64(st[i])));
      return gen(inst.operand(0), multi_index(inst.operand(0)->shape.dims, m));
    }
    case Opcode::kReverse: {
      std::vector<Value*> m = multi_of(idx);
      for (auto k : hlo::dimensions_of(inst)) m[k] = b_.CreateSub(i64(idx.dims[k] - 1), m[k]);
      return gen(inst.operand(0), multi_index(idx.dims, m));
    }
    case Opcode::kPad: {
      auto padding = hlo::PaddingConfig::of(inst);
      const auto &lo = padding.low, &in = padding.interior;
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
      int64_t dim = hlo::concatenate_dimension_of(inst);
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
    case Opcode::kGather:
      return gen_gather(inst, idx);
    case Opcode::kReduceWindow:
      return gen_reduce_window(inst, idx);
    case Opcode::kConvolution:
      return gen_convolution(inst, idx);
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

// XLA's gather, one output element: the output's batch dims (those not in offset_dims) pick a start index vector
// from the indices (index_vector_dim inserted among them; start_indices_batching_dims pick the operand's batching
// dims directly), each start clamped so that the slice fits the operand; the offset dims walk the slice (the
// operand's dims that are neither collapsed nor batching, in order).
Value* ElementalEmitter::gen_gather(const Instruction& inst, Index& idx) {
  auto g = hlo::GatherDimensionNumbers::of(inst);
  const Instruction *x = inst.operand(0), *ind = inst.operand(1);
  const auto &xd = x->shape.dims, &id = ind->shape.dims;
  const std::vector<Value*>& out = multi_of(idx);
  auto has = [](const std::vector<int64_t>& v, int64_t a) { return std::find(v.begin(), v.end(), a) != v.end(); };
  std::vector<Value*> batch;  // the output's batch coordinates, in order
  for (size_t a = 0; a < out.size(); ++a)
    if (!has(g.offset_dims, static_cast<int64_t>(a))) batch.push_back(out[a]);
  bool vector_dim = g.index_vector_dim < static_cast<int64_t>(id.size());
  auto index_at = [&](int64_t component) { return start_index(ind, g.index_vector_dim, batch, component); };
  std::vector<Value*> xm(xd.size(), i64(0));
  for (size_t k = 0; k < g.start_index_map.size(); ++k) {
    auto a = static_cast<size_t>(g.start_index_map[k]);
    xm[a] = clamp_i64(index_at(static_cast<int64_t>(k)), 0, xd[a] - g.slice_sizes.at(a));
  }
  // Operand batching dims take the batch coordinate of their indices' dim (the indices' dims less the vector dim
  // are the output's batch dims, in order).
  for (size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
    int64_t ia = g.start_indices_batching_dims[k];
    size_t pos = static_cast<size_t>(vector_dim && ia > g.index_vector_dim ? ia - 1 : ia);
    xm[static_cast<size_t>(g.operand_batching_dims[k])] = batch.at(pos);
  }
  size_t oi = 0;
  for (int64_t a = 0; a < static_cast<int64_t>(xd.size()); ++a) {
    if (has(g.collapsed_slice_dims, a) || has(g.operand_batching_dims, a)) continue;
    auto od = static_cast<size_t>(g.offset_dims.at(oi++));
    xm[static_cast<size_t>(a)] = b_.CreateAdd(xm[static_cast<size_t>(a)], out[od]);
  }
  return gen(x, multi_index(xd, xm));
}

Value* ElementalEmitter::gen_reduce_window(const Instruction& inst, Index&) {
  throw CompileError(fmt::format("%{}: this kernel emitter has no reduce-window", inst.name));
}

Value* ElementalEmitter::gen_convolution(const Instruction& inst, Index&) {
  throw CompileError(fmt::format("%{}: this kernel emitter has no convolution", inst.name));
}

Value* ElementalEmitter::index_i64(Value* v, DType d) {
  if (is_signed(d)) return b_.CreateSExt(v, b_.getInt64Ty());
  v = b_.CreateZExt(v, b_.getInt64Ty());  // unsigned: values above INT64_MAX clamp to the top
  if (dtype_size(d) == 8) v = b_.CreateSelect(b_.CreateICmpSLT(v, i64(0)), i64(INT64_MAX), v);
  return v;
}
Value* ElementalEmitter::start_index(const Instruction* indices, int64_t index_vector_dim,
                                     const std::vector<Value*>& batch, int64_t component) {
  const auto& id = indices->shape.dims;
  bool vector_dim = index_vector_dim < static_cast<int64_t>(id.size());
  std::vector<Value*> m;
  size_t bi = 0;
  for (int64_t a = 0; a < static_cast<int64_t>(id.size()); ++a)
    m.push_back(vector_dim && a == index_vector_dim ? i64(component) : batch.at(bi++));
  return index_i64(gen(indices, multi_index(id, m)), indices->shape.dtype);
}

Value* ElementalEmitter::clamp_start(const Instruction* o, int64_t hi) {
  return clamp_i64(index_i64(gen(o, scalar_index()), o->shape.dtype), 0, hi);
}

}  // namespace jitx::cpu
