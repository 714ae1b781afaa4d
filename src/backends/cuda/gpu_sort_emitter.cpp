// The CUDA backend's sort kernels (see gpu_emitter_base.h): one block sorts one line (the elements along the sort
// dimension) of up to kMaxSortLine elements in shared memory with a bitonic network over (keys..., position): the
// positions make every comparison strict, so the result is the stable sort the evaluator computes. Keys are the
// evaluator's (hlo/ir/indexing.cpp): integers by value, floats by value with -0.0 equal to +0.0 and every NaN last.
// Then every output (keys and payloads) is its operand read through the sorted positions.
#include <algorithm>

#include "backends/cuda/gpu_emitter.h"
#include "backends/cuda/gpu_emitter_base.h"

namespace jitx::cuda {
namespace gpu_detail {
namespace {
constexpr int64_t kMaxSortLine = 2048;  // elements per line: (keys + position) in shared memory per block
constexpr int64_t kMaxSortKeys = 2;

class GpuSortEmitter final : public GpuEmitterBase {
 public:
  using GpuEmitterBase::GpuEmitterBase;

  LaunchPlan emit(const Instruction& inst) {
    LaunchPlan plan;
    begin(inst, plan);
    // A top-k is a sort of the last dim by one key, largest first in IEEE total order, of which the first k are
    // kept with their positions.
    bool topk = inst.opcode == Opcode::kTopK;
    hlo::SortConfig cfg;
    if (topk)
      cfg.dimension = static_cast<int64_t>(inst.operand(0)->shape.dims.size()) - 1;
    else
      cfg = hlo::SortConfig::of(inst);
    int64_t k_out = topk ? hlo::top_k_of(inst) : 0;
    const auto& dims = inst.operand(0)->shape.dims;
    auto axis = static_cast<size_t>(cfg.dimension);
    int64_t n = dims[axis], lines = n == 0 ? 0 : detail::num_elements(dims) / n;
    int64_t padded = 1;
    while (padded < n) padded *= 2;
    std::vector<int64_t> other;  // the line's coordinates: every dim but the sorted one
    for (size_t a = 0; a < dims.size(); ++a)
      if (a != axis) other.push_back(dims[a]);
    plan.kind = KernelKind::kLoop;
    plan.block = kBlock;
    plan.grid = std::clamp<int64_t>(lines, 1, kMaxGrid);
    auto* i64t = b_.getInt64Ty();
    auto* keys_t = llvm::ArrayType::get(i64t, static_cast<uint64_t>(padded * cfg.num_keys));
    auto* pos_t = llvm::ArrayType::get(b_.getInt32Ty(), static_cast<uint64_t>(padded));
    auto* keys =
        new llvm::GlobalVariable(m_, keys_t, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(keys_t),
                                 "sort_keys", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    auto* pos =
        new llvm::GlobalVariable(m_, pos_t, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(pos_t),
                                 "sort_positions", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    auto key_slot = [&](Value* e, int64_t k) {
      return b_.CreateInBoundsGEP(keys_t, keys, {i64(0), b_.CreateAdd(b_.CreateMul(e, i64(cfg.num_keys)), i64(k))});
    };
    auto pos_slot = [&](Value* e) { return b_.CreateInBoundsGEP(pos_t, pos, {i64(0), e}); };
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    auto barrier = [&] { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); };
    loop(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(lines),
         sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), {}, [&](Value* line, const std::vector<Value*>&) {
           std::vector<Value*> om = delinearize(line, other);
           auto at = [&](Value* t) {  // the multi-index of element t of this line
             std::vector<Value*> m;
             size_t oi = 0;
             for (size_t a = 0; a < dims.size(); ++a) m.push_back(a == axis ? t : om[oi++]);
             return multi_index(dims, m);
           };
           // Keys and positions in; the padding (positions n..) sorts after every element.
           loop(tid, i64(padded), i64(kBlock), {}, [&](Value* t, const std::vector<Value*>&) {
             Value* real = b_.CreateICmpSLT(t, i64(n));
             Value* tc = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, t, i64(n - 1));
             for (int64_t k = 0; k < cfg.num_keys; ++k) {
               const Instruction* op = inst.operand(static_cast<size_t>(k));
               Value* key = topk ? b_.CreateNot(total_key(gen(op, at(tc)), op->shape.dtype))
                                 : sort_key(gen(op, at(tc)), op->shape.dtype);
               b_.CreateStore(b_.CreateSelect(real, key, llvm::ConstantInt::get(i64t, ~uint64_t{0})), key_slot(t, k));
             }
             b_.CreateStore(b_.CreateTrunc(t, b_.getInt32Ty()), pos_slot(t));
             return std::vector<Value*>{};
           });
           barrier();
           for (int64_t size = 2; size <= padded; size *= 2)
             for (int64_t stride = size / 2; stride >= 1; stride /= 2) {
               // Pair (i, i ^ stride) for i with the stride bit clear; ascending where i's `size` bit is clear.
               loop(tid, i64(padded / 2), i64(kBlock), {}, [&](Value* q, const std::vector<Value*>&) {
                 Value* lo = b_.CreateAdd(b_.CreateMul(b_.CreateUDiv(q, i64(stride)), i64(2 * stride)),
                                          b_.CreateURem(q, i64(stride)));
                 Value* hi = b_.CreateAdd(lo, i64(stride));
                 Value* up = b_.CreateICmpEQ(b_.CreateAnd(lo, i64(size)), i64(0));
                 Value* swap = b_.CreateXor(less(hi, lo, key_slot, pos_slot, cfg.num_keys), b_.CreateNot(up));
                 // swap when (hi < lo) in an ascending run, or (lo < hi) in a descending one (positions differ:
                 // never equal)
                 when(swap, [&] {
                   for (int64_t k = 0; k < cfg.num_keys; ++k) exchange(i64t, key_slot(lo, k), key_slot(hi, k));
                   exchange(b_.getInt32Ty(), pos_slot(lo), pos_slot(hi));
                 });
                 return std::vector<Value*>{};
               });
               barrier();
             }
           // Every output: its operand read at the sorted positions (a top-k: the first k values and positions).
           loop(tid, i64(topk ? k_out : n), i64(kBlock), {}, [&](Value* t, const std::vector<Value*>&) {
             Value* p32 = b_.CreateLoad(b_.getInt32Ty(), pos_slot(t));
             Value* p = b_.CreateZExt(p32, i64t);
             Index src = at(p);
             if (topk) {
               std::vector<Value*> m = om;
               m.push_back(t);
               Index dst = multi_index(outs_[0]->dims, m);
               store(out_ptrs_[0], linear_in(dst, out_layouts_[0]), outs_[0]->dtype, gen(inst.operand(0), src));
               store(out_ptrs_[1], linear_in(dst, out_layouts_[1]), outs_[1]->dtype,
                     b_.CreateIntCast(p32, ctype(outs_[1]->dtype), false));
               return std::vector<Value*>{};
             }
             Index dst = at(t);
             for (size_t k = 0; k < outs_.size(); ++k)
               store(out_ptrs_[k], linear_in(dst, out_layouts_[k]), outs_[k]->dtype, gen(inst.operand(k), src));
             return std::vector<Value*>{};
           });
           barrier();  // before the next line overwrites the keys
           return std::vector<Value*>{};
         });
    b_.CreateRetVoid();
    return plan;
  }

 private:
  Value* gen_reduce(const Instruction& inst, Index&) override { unsupported(inst, "a reduce read by a sort kernel"); }

  // The evaluator's sort key as an unsigned 64-bit integer: ascending integer order is the sort order.
  Value* sort_key(Value* v, DType d) {
    auto* i64t = b_.getInt64Ty();
    if (cpu::is_float(d)) {
      Value* x = b_.CreateFAdd(b_.CreateFPExt(v, b_.getDoubleTy()), fconst(b_.getDoubleTy(), 0.0));  // -0 -> +0
      Value* bits = b_.CreateBitCast(x, i64t);
      Value* flip = b_.CreateOr(b_.CreateAShr(bits, 63), i64(INT64_MIN));
      return b_.CreateSelect(b_.CreateFCmpUNO(x, x), llvm::ConstantInt::get(i64t, ~uint64_t{0}),
                             b_.CreateXor(bits, flip));
    }
    if (cpu::is_signed(d)) return b_.CreateXor(b_.CreateSExt(v, i64t), i64(INT64_MIN));
    return b_.CreateZExt(v, i64t);
  }
  // IEEE 754 total order as an unsigned key (XLA's TopK order: -NaN first, -0.0 below +0.0, +NaN last).
  Value* total_key(Value* v, DType d) {
    if (!cpu::is_float(d)) return sort_key(v, d);
    Value* bits = b_.CreateBitCast(b_.CreateFPExt(v, b_.getDoubleTy()), b_.getInt64Ty());
    return b_.CreateXor(bits, b_.CreateOr(b_.CreateAShr(bits, 63), i64(INT64_MIN)));
  }
  // Whether element a sorts before element b: keys lexicographically, then position.
  template <class K, class P>
  Value* less(Value* a, Value* b, K key_slot, P pos_slot, int64_t nk) {
    auto* i64t = b_.getInt64Ty();
    Value* result =
        b_.CreateICmpULT(b_.CreateLoad(b_.getInt32Ty(), pos_slot(a)), b_.CreateLoad(b_.getInt32Ty(), pos_slot(b)));
    for (int64_t k = nk - 1; k >= 0; --k) {  // from the last key out: a key that differs decides
      Value* ka = b_.CreateLoad(i64t, key_slot(a, k));
      Value* kb = b_.CreateLoad(i64t, key_slot(b, k));
      result = b_.CreateSelect(b_.CreateICmpEQ(ka, kb), result, b_.CreateICmpULT(ka, kb));
    }
    return result;
  }
  void exchange(llvm::Type* t, Value* x, Value* y) {
    Value* a = b_.CreateLoad(t, x);
    Value* c = b_.CreateLoad(t, y);
    b_.CreateStore(c, x);
    b_.CreateStore(a, y);
  }
};
}  // namespace

LaunchPlan emit_sort_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                            bool allow_excess_precision) {
  GpuSortEmitter e(m, f, allow_excess_precision);
  return e.emit(inst);
}
}  // namespace gpu_detail

std::string sort_unsupported_reason(const hlo::Instruction& inst) {
  hlo::SortConfig cfg;
  if (inst.opcode == hlo::Opcode::kTopK)
    cfg.dimension = static_cast<int64_t>(inst.operand(0)->shape.dims.size()) - 1;
  else
    cfg = hlo::SortConfig::of(inst);
  for (auto* o : inst.operands)
    if (o->shape.is_tuple) return "a tuple operand";
  int64_t n = inst.operand(0)->shape.dims.at(static_cast<size_t>(cfg.dimension));
  if (n > gpu_detail::kMaxSortLine)
    return fmt::format("lines of {} elements (a block sorts at most {} in shared memory)", n, gpu_detail::kMaxSortLine);
  if (cfg.num_keys > gpu_detail::kMaxSortKeys) return fmt::format("{} sort keys", cfg.num_keys);
  return "";
}

}  // namespace jitx::cuda
