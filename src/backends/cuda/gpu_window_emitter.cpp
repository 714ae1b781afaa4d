// The CUDA emitter's windowed ops (see gpu_emitter_base.h's GpuWindowEmitter): a reduce-window's and a
// convolution's output element as loops over its window, for the loop and row kernels.
#include "backends/cuda/gpu_emitter_base.h"

namespace jitx::cuda::gpu_detail {

// One output element of a reduce-window, as the evaluator computes it: from the init value, every window position
// in order whose place in the (padded, base-dilated) operand is an element of it (padding and dilation holes are
// skipped), combined in the reducer's type (f32 for f16/bf16) and rounded once.
Value* GpuWindowEmitter::gen_reduce_window(const Instruction& inst, Index& idx) {
  const std::string r(hlo::reducer_name(hlo::reducer_of(inst)));
  const Instruction* x = inst.operand(0);
  DType d = x->shape.dtype;
  const auto& xd = x->shape.dims;
  hlo::Window win = hlo::Window::of(inst);
  std::vector<Value*> om = multi_of(idx);  // before the loop, so that it dominates it
  Value* init = gen(inst.operand(1), scalar_index());
  int64_t wn = detail::num_elements(win.dimensions);
  return round(d, loop(i64(0), i64(wn), i64(1), {init}, [&](Value* w, const std::vector<Value*>& acc) {
                 std::vector<Value*> wm = delinearize(w, win.dimensions), src(xd.size());
                 Value* inside = b_.getTrue();
                 for (size_t a = 0; a < xd.size(); ++a) {
                   Value* pos = b_.CreateSub(b_.CreateAdd(b_.CreateMul(om[a], i64(win.strides[a])),
                                                          b_.CreateMul(wm[a], i64(win.window_dilations[a]))),
                                             i64(win.padding[a].low));
                   inside = b_.CreateAnd(inside, b_.CreateICmpSGE(pos, i64(0)));
                   int64_t bd = win.base_dilations[a];
                   if (bd != 1) {
                     inside = b_.CreateAnd(inside, b_.CreateICmpEQ(b_.CreateSRem(pos, i64(bd)), i64(0)));
                     pos = b_.CreateSDiv(pos, i64(bd));
                   }
                   inside = b_.CreateAnd(inside, b_.CreateICmpSLT(pos, i64(xd[a])));
                   src[a] = cpu::ElementalEmitter::clamp_i64(pos, 0, xd[a] - 1);  // read in bounds, then masked
                 }
                 Value* v = gen(x, multi_index(xd, src));
                 return std::vector<Value*>{b_.CreateSelect(inside, combine(r, d, acc[0], v, false), acc[0])};
               })[0]);
}

// One output element of a convolution, as the evaluator computes it: the output's batch and feature pick the
// lhs's batch (and batch group) and the feature group; each window position inside the (padded, base-dilated)
// lhs contributes the products over the group's input features. Floats accumulate in f32 (f64 for f64
// results), integers in 64 bits wrapped to the result's width.
Value* GpuWindowEmitter::gen_convolution(const Instruction& inst, Index& idx) {
  auto conv = hlo::ConvConfig::of(inst);
  const hlo::ConvDimensionNumbers& dn = conv.dnums;
  const hlo::Window& win = conv.window;
  const Instruction *lhs = inst.operand(0), *rhs = inst.operand(1);
  const auto &ld = lhs->shape.dims, &rd = rhs->shape.dims;
  DType out = inst.shape.dtype, in = lhs->shape.dtype;
  bool fl = cpu::is_float(out);
  DType acc_t = fl ? (out == DType::float64 ? DType::float64 : DType::float32) : DType::int64;
  llvm::Type* at = ctype(acc_t);
  int64_t o_feat = rd[static_cast<size_t>(dn.kernel_output_feature_dimension)];
  int64_t i_feat = rd[static_cast<size_t>(dn.kernel_input_feature_dimension)];
  int64_t out_batch = inst.shape.dims[static_cast<size_t>(dn.output_batch_dimension)];
  int64_t g = conv.feature_group_count, bg = conv.batch_group_count;
  std::vector<Value*> om = multi_of(idx);  // before the loops, so that it dominates them
  Value* b = om[static_cast<size_t>(dn.output_batch_dimension)];
  Value* f = om[static_cast<size_t>(dn.output_feature_dimension)];
  Value* fgroup = b_.CreateUDiv(f, i64(o_feat / g));
  Value* bgroup = b_.CreateUDiv(f, i64(o_feat / bg));
  Value* lb = b_.CreateAdd(b_.CreateMul(bgroup, i64(out_batch)), b);
  auto widen = [&](Value* v, DType d) {  // an operand's element in the accumulator's type
    if (fl) return convert(v, d, acc_t);
    return cpu::is_signed(d) ? b_.CreateSExt(v, at) : b_.CreateZExt(v, at);
  };
  Value* zero = fl ? fconst(at, 0.0) : llvm::ConstantInt::get(at, 0);
  int64_t wn = detail::num_elements(win.dimensions);
  size_t nsp = dn.input_spatial_dimensions.size();
  Value* acc = loop(i64(0), i64(wn), i64(1), {zero}, [&](Value* w, const std::vector<Value*>& a) {
    std::vector<Value*> wm = delinearize(w, win.dimensions);
    std::vector<Value*> lm(ld.size()), rm(rd.size());
    Value* inside = b_.getTrue();
    for (size_t k = 0; k < nsp; ++k) {
      auto isp = static_cast<size_t>(dn.input_spatial_dimensions[k]);
      Value* pos = b_.CreateSub(
          b_.CreateAdd(b_.CreateMul(om[static_cast<size_t>(dn.output_spatial_dimensions[k])], i64(win.strides[k])),
                       b_.CreateMul(wm[k], i64(win.window_dilations[k]))),
          i64(win.padding[k].low));
      inside = b_.CreateAnd(inside, b_.CreateICmpSGE(pos, i64(0)));
      if (int64_t bd = win.base_dilations[k]; bd != 1) {
        inside = b_.CreateAnd(inside, b_.CreateICmpEQ(b_.CreateSRem(pos, i64(bd)), i64(0)));
        pos = b_.CreateSDiv(pos, i64(bd));
      }
      inside = b_.CreateAnd(inside, b_.CreateICmpSLT(pos, i64(ld[isp])));
      lm[isp] = clamp_i64(pos, 0, ld[isp] - 1);  // read in bounds, then masked
      rm[static_cast<size_t>(dn.kernel_spatial_dimensions[k])] = wm[k];
    }
    lm[static_cast<size_t>(dn.input_batch_dimension)] = lb;
    rm[static_cast<size_t>(dn.kernel_output_feature_dimension)] = f;
    Value* s = loop(i64(0), i64(i_feat), i64(1), {a[0]}, [&](Value* c, const std::vector<Value*>& p) {
      lm[static_cast<size_t>(dn.input_feature_dimension)] = b_.CreateAdd(b_.CreateMul(fgroup, i64(i_feat)), c);
      rm[static_cast<size_t>(dn.kernel_input_feature_dimension)] = c;
      Value* x = widen(gen(lhs, multi_index(ld, lm)), in);
      Value* y = widen(gen(rhs, multi_index(rd, rm)), rhs->shape.dtype);
      if (fl) return std::vector<Value*>{b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {at}, {x, y, p[0]})};
      return std::vector<Value*>{b_.CreateAdd(b_.CreateMul(x, y), p[0])};
    })[0];
    return std::vector<Value*>{b_.CreateSelect(inside, s, a[0])};
  })[0];
  if (fl) return convert(acc, acc_t, out);
  return b_.CreateTrunc(acc, ctype(out));
}

}  // namespace jitx::cuda::gpu_detail
