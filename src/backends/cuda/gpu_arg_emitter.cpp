// The CUDA backend's arg-reduce kernels (see gpu_emitter_base.h): argmax/argmin as XLA's variadic reduce of (value,
// index) pairs, one thread per output element walking its reduced elements in order, as the evaluator does: the
// first of equal values wins, and so does the first NaN (a NaN beats every number and is never replaced).
#include <algorithm>

#include "backends/cuda/gpu_emitter.h"
#include "backends/cuda/gpu_emitter_base.h"

namespace jitx::cuda {
namespace gpu_detail {
namespace {

class GpuArgEmitter final : public GpuEmitterBase {
 public:
  using GpuEmitterBase::GpuEmitterBase;

  LaunchPlan emit(const Instruction& inst) {
    LaunchPlan plan;
    begin(inst, plan);
    const Instruction *x = inst.operand(0), *ind = inst.operand(1);
    DType d = x->shape.dtype, di = ind->shape.dtype;
    bool is_max = hlo::reducer_of(inst) == hlo::Reducer::kArgmax;
    std::vector<int64_t> rd = hlo::dimensions_of(inst);
    std::sort(rd.begin(), rd.end());
    const auto& xd = x->shape.dims;
    std::vector<int64_t> rext;
    for (auto a : rd) rext.push_back(xd[static_cast<size_t>(a)]);
    int64_t n = outs_[0]->num_elements(), nr = detail::num_elements(rext);
    plan.kind = KernelKind::kLoop;
    plan.block = kBlock;
    plan.grid = std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, kMaxGrid);
    Value* start = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(kBlock)),
                                sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    Value* step = b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), i64(kBlock));
    loop(start, i64(n), step, {}, [&](Value* o, const std::vector<Value*>&) {
      Index oi = out_index(o);
      std::vector<Value*> om = multi_of(oi);
      // Empty reductions give the init values (the evaluator leaves them unset).
      std::vector<Value*> init{gen(inst.operand(2), scalar_index()), gen(inst.operand(3), scalar_index()),
                               b_.getFalse()};
      std::vector<Value*> best = loop(i64(0), i64(nr), i64(1), init, [&](Value* k, const std::vector<Value*>& acc) {
        std::vector<Value*> km = delinearize(k, rext), m;
        size_t ri = 0, oo = 0;
        for (int64_t a = 0; a < static_cast<int64_t>(xd.size()); ++a)
          m.push_back(std::binary_search(rd.begin(), rd.end(), a) ? km[ri++] : om[oo++]);
        Index xi = multi_index(xd, m);
        Value* v = gen(x, xi);
        Value* i = gen(ind, xi);
        Value* better;
        if (cpu::is_float(d)) {
          Value* strict = is_max ? b_.CreateFCmpOGT(v, acc[0]) : b_.CreateFCmpOLT(v, acc[0]);
          // A NaN held is kept; a NaN seen replaces a number; otherwise strictly better.
          better = b_.CreateSelect(b_.CreateFCmpUNO(acc[0], acc[0]), b_.getFalse(),
                                   b_.CreateOr(b_.CreateFCmpUNO(v, v), strict));
        } else {
          bool sg = cpu::is_signed(d);
          better = is_max ? (sg ? b_.CreateICmpSGT(v, acc[0]) : b_.CreateICmpUGT(v, acc[0]))
                          : (sg ? b_.CreateICmpSLT(v, acc[0]) : b_.CreateICmpULT(v, acc[0]));
        }
        Value* take = b_.CreateOr(b_.CreateNot(acc[2]), better);
        return std::vector<Value*>{b_.CreateSelect(take, v, acc[0]), b_.CreateSelect(take, i, acc[1]), b_.getTrue()};
      });
      store(out_ptrs_[0], linear_in(oi, out_layouts_[0]), d, best[0]);
      store(out_ptrs_[1], linear_in(oi, out_layouts_[1]), di, best[1]);
      return std::vector<Value*>{};
    });
    b_.CreateRetVoid();
    return plan;
  }

 private:
  Value* gen_reduce(const Instruction& inst, Index&) override {
    unsupported(inst, "a reduce read by an arg-reduce kernel");
  }
};
}  // namespace

LaunchPlan emit_arg_reduce_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                                  bool allow_excess_precision) {
  GpuArgEmitter e(m, f, allow_excess_precision);
  return e.emit(inst);
}
}  // namespace gpu_detail

bool is_arg_reduce(const hlo::Instruction& inst) {
  if (inst.opcode != hlo::Opcode::kReduce || inst.operands.size() != 4 || !inst.shape.is_tuple) return false;
  hlo::Reducer r = hlo::reducer_of(inst);
  return r == hlo::Reducer::kArgmax || r == hlo::Reducer::kArgmin;
}

}  // namespace jitx::cuda
