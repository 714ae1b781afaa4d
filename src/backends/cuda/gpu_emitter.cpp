// The CUDA kernel emitter (see gpu_emitter.h): grid-stride loops over output elements, and rows reduced by a warp
// or a block (warp shuffles, then shared memory). What one element computes is the CPU backend's ElementalEmitter.
#include "backends/cuda/gpu_emitter.h"

#include <algorithm>
#include <unordered_map>

#include "backends/cuda/gpu_emitter_base.h"

namespace jitx::cuda {
using namespace gpu_detail;
namespace {

/// One kernel: a loop kernel or a row kernel (see cuda_codegen.h's KernelKind).
class GpuEmitter final : public GpuWindowEmitter {
 public:
  using GpuWindowEmitter::GpuWindowEmitter;

  LaunchPlan emit(const Instruction& inst) {
    LaunchPlan plan;
    std::vector<const Instruction*> roots = begin(inst, plan);
    if (row_plan(inst, roots))
      emit_rows(roots, plan);
    else
      emit_loop(inst, roots, plan);
    b_.CreateRetVoid();
    return plan;
  }

 private:
  // The row kernel's state: the reduced dims' common operand shape, the reductions (operands first), the current
  // row (its multi-index over the row dims and its linear index) and each reduction's value there.
  std::vector<int64_t> row_x_dims_;
  std::vector<const Instruction*> row_reduces_;
  std::vector<Value*> row_multi_;
  Value* row_ = nullptr;
  std::unordered_map<const Instruction*, Value*> row_values_;

  // --- loop kernels: one thread per element of the output, grid-stride ---
  void emit_loop(const Instruction& inst, const std::vector<const Instruction*>& roots, LaunchPlan& plan) {
    for (auto* o : outs_)
      if (o->dims != outs_[0]->dims) unsupported(inst, "a multi-output loop fusion with outputs of different shapes");
    int64_t n = outs_[0]->num_elements();
    // Each thread computes `vec` consecutive elements (row-major outputs whose count it divides): 16 bytes of the
    // widest buffer, at most 8 elements, so that loads and stores at consecutive linear positions become 128-bit
    // accesses (NVPTX's load/store vectoriser merges them; buffers are 16-byte aligned).
    size_t widest = 1;
    for (auto* o : outs_) widest = std::max(widest, dtype_size(o->dtype));
    for (auto* o : inst.operands) widest = std::max(widest, o->shape.is_tuple ? size_t{8} : dtype_size(o->shape.dtype));
    int64_t vec = std::min<int64_t>(8, 16 / static_cast<int64_t>(widest));
    bool row_major = true;
    for (auto& l : out_layouts_) row_major = row_major && l.empty();
    if (!row_major || n % vec != 0 || n < vec * kBlock) vec = 1;
    plan.kind = KernelKind::kLoop;
    plan.block = kBlock;
    plan.grid = std::clamp<int64_t>((n / vec + kBlock - 1) / kBlock, 1, kMaxGrid);
    Value* start = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                             sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    Value* step = b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                               sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    loop(start, i64(n / vec), step, {}, [&](Value* g, const std::vector<Value*>&) {
      // Every value before any store: an output may share the buffer of a parameter another root reads.
      std::vector<Index> idx;
      std::vector<std::vector<Value*>> vals(roots.size());
      // A group within one row (the minor dim a multiple of vec): the elements' multi-indices are the first's with
      // the minor coordinate counted up, so that operands read along the minor dim (broadcasts of a row, slices)
      // are seen to be contiguous too.
      const auto& dims = outs_[0]->dims;
      bool in_row = vec > 1 && !dims.empty() && dims.back() % vec == 0;
      Value* first = vec == 1 ? g : b_.CreateMul(g, i64(vec), "", true, true);
      std::vector<Value*> base = in_row ? delinearize(first, dims) : std::vector<Value*>{};
      for (int64_t e = 0; e < vec; ++e) {
        Value* i = e == 0 ? first : b_.CreateAdd(first, i64(e), "", true, true);
        if (in_row) {
          Index x;
          x.dims = dims;
          x.linear = i;
          x.multi = base;
          if (e) x.multi.back() = b_.CreateAdd(base.back(), i64(e), "", true, true);
          x.has_multi = true;
          idx.push_back(x);
        } else {
          idx.push_back(out_index(i));
        }
        for (size_t k = 0; k < roots.size(); ++k) vals[k].push_back(gen(roots[k], idx.back()));
      }
      for (size_t k = 0; k < roots.size(); ++k)
        for (int64_t e = 0; e < vec; ++e)
          store(out_ptrs_[k], linear_in(idx[static_cast<size_t>(e)], out_layouts_[k]), outs_[k]->dtype,
                vals[k][static_cast<size_t>(e)]);
      return std::vector<Value*>{};
    });
  }

  // One output element of a reduce, as a sequential loop over its reduced elements (a loop kernel's reductions:
  // column and middle reductions, one thread per output element, whose neighbours read neighbouring columns).
  Value* gen_reduce(const Instruction& inst, Index& idx) override {
    const std::string r(hlo::reducer_name(hlo::reducer_of(inst)));
    const Instruction* x = inst.operand(0);
    DType d = x->shape.dtype;
    std::vector<int64_t> rdims = hlo::dimensions_of(inst);
    std::sort(rdims.begin(), rdims.end());
    const auto& xd = x->shape.dims;
    std::vector<int64_t> rext;
    for (auto k : rdims) rext.push_back(xd[k]);
    int64_t n = detail::num_elements(rext);
    Value* init = gen(inst.operand(1), scalar_index());
    std::vector<Value*> outm = multi_of(idx);  // before the loop, so that it dominates it
    auto element = [&](Value* k) {
      std::vector<Value*> rm = delinearize(k, rext), m;
      size_t ri = 0, oi = 0;
      for (int64_t a = 0; a < static_cast<int64_t>(xd.size()); ++a) {
        if (ri < rdims.size() && rdims[ri] == a)
          m.push_back(rm[ri++]);
        else
          m.push_back(outm[oi++]);
      }
      return gen(x, multi_index(xd, m));
    };
    auto sum = [&](Value* lo, Value* hi) {
      return loop(lo, hi, i64(1), {identity(r, d)}, [&](Value* k, const std::vector<Value*>& p) {
        return std::vector<Value*>{combine(r, d, p[0], element(k), false)};
      })[0];
    };
    Value* acc;
    constexpr int64_t kSumBlock = 256;
    if (cpu::is_float(d) && r == "add" && n > kSumBlock) {
      // Float sums in blocks whose sums are added in double, as the CPU backend does: the error of one block.
      int64_t nb = (n + kSumBlock - 1) / kSumBlock;
      Value* zero = fconst(b_.getDoubleTy(), 0.0);
      acc = loop(i64(0), i64(nb), i64(1), {zero}, [&](Value* blk, const std::vector<Value*>& t) {
        Value* lo = b_.CreateMul(blk, i64(kSumBlock));
        Value* hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(lo, i64(kSumBlock)), i64(n));
        return std::vector<Value*>{b_.CreateFAdd(t[0], b_.CreateFPExt(sum(lo, hi), b_.getDoubleTy()))};
      })[0];
      acc = b_.CreateFPTrunc(acc, ctype(d));
    } else {
      acc = sum(i64(0), i64(n));
    }
    return round(d, combine(r, d, init, acc, false));
  }

  // --- row kernels ---
  // A row kernel when every reduce in the kernel reduces the last dim of one common row-major operand shape [R.., C]
  // and every output is [R..] (the reductions' results) or [R.., C] (an elementwise function of the row and its
  // reductions: softmax, layer norm), all row-major.
  bool row_plan(const Instruction& inst, const std::vector<const Instruction*>& roots) {
    std::vector<const Instruction*> reduces;
    if (inst.opcode == Opcode::kReduce) reduces.push_back(&inst);
    if (inst.opcode == Opcode::kFusion)
      for (auto& i : inst.called.at(0)->instructions)
        if (i->opcode == Opcode::kReduce) reduces.push_back(i.get());
    if (reduces.empty()) return false;
    const auto& xd = reduces[0]->operand(0)->shape.dims;
    if (xd.empty()) return false;
    std::vector<int64_t> rows(xd.begin(), xd.end() - 1);
    for (auto* r : reduces) {
      const auto& rd = hlo::dimensions_of(*r);
      if (r->operand(0)->shape.dims != xd || r->shape.dims != rows || rd.size() != 1 ||
          rd[0] != static_cast<int64_t>(xd.size()) - 1)
        return false;
    }
    for (auto* o : outs_)
      if (o->dims != rows && o->dims != xd) return false;
    for (auto& l : out_layouts_)
      if (!l.empty()) return false;
    for (auto& [i, l] : buffer_layouts_)
      if (!l.empty()) return false;
    row_x_dims_ = xd;
    row_reduces_ = reduces;  // in the computation's order: operands first
    (void)roots;
    return true;
  }

  Value* held_value(const Instruction* inst, const Index& idx) override {
    auto it = row_values_.find(inst);
    if (it == row_values_.end()) return nullptr;
    // Only at the current row (the index Values the row loop made); elsewhere gen_reduce computes it.
    if (idx.has_multi) return idx.multi == row_multi_ ? it->second : nullptr;
    return idx.linear == row_ ? it->second : nullptr;
  }

  void emit_rows(const std::vector<const Instruction*>& roots, LaunchPlan& plan) {
    int64_t cols = row_x_dims_.back();
    std::vector<int64_t> rdims(row_x_dims_.begin(), row_x_dims_.end() - 1);
    int64_t nrows = detail::num_elements(rdims);
    bool by_block = cols >= kBlockRowCols;
    int64_t per_row = by_block ? kBlock : kWarp;
    int64_t rows_per_block = kBlock / per_row;
    plan.kind = KernelKind::kRowReduction;
    plan.block = kBlock;
    plan.grid = std::clamp<int64_t>((nrows + rows_per_block - 1) / rows_per_block, 1, kMaxGrid);
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* lane = by_block ? tid : b_.CreateURem(tid, i64(kWarp));
    Value* first = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(rows_per_block)),
                                by_block ? i64(0) : b_.CreateUDiv(tid, i64(kWarp)));
    Value* step = b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), i64(rows_per_block));
    // A block-per-row kernel's threads all run the same rows (barriers need them all); a warp's lanes do likewise.
    loop(first, i64(nrows), step, {}, [&](Value* row, const std::vector<Value*>&) {
      row_ = row;
      row_multi_ = delinearize(row, rdims);
      auto at = [&](Value* c) {
        std::vector<Value*> m = row_multi_;
        m.push_back(c);
        Index idx = multi_index(row_x_dims_, m);
        idx.linear = b_.CreateAdd(b_.CreateMul(row, i64(cols), "", true, true), c, "", true, true);
        return idx;
      };
      for (const Instruction* red : row_reduces_) {
        const std::string r(hlo::reducer_name(hlo::reducer_of(*red)));
        DType d = red->operand(0)->shape.dtype;
        auto part = loop(lane, i64(cols), i64(per_row), {identity(r, d)}, [&](Value* c, const std::vector<Value*>& p) {
          Index idx = at(c);
          return std::vector<Value*>{combine(r, d, p[0], gen(red->operand(0), idx), false)};
        });
        Value* all = by_block ? block_reduce(r, d, part[0], tid) : warp_reduce(r, d, part[0]);
        Value* init = gen(red->operand(1), scalar_index());
        row_values_[red] = round(d, combine(r, d, init, all, false));
      }
      for (size_t k = 0; k < roots.size(); ++k) {
        if (outs_[k]->dims == row_x_dims_) {
          loop(lane, i64(cols), i64(per_row), {}, [&](Value* c, const std::vector<Value*>&) {
            Index idx = at(c);
            store(out_ptrs_[k], idx.linear, outs_[k]->dtype, gen(roots[k], idx));
            return std::vector<Value*>{};
          });
        } else {
          when(b_.CreateICmpEQ(lane, i64(0)), [&] {
            Index idx = multi_index(rdims, row_multi_);
            idx.linear = row;
            store(out_ptrs_[k], row, outs_[k]->dtype, gen(roots[k], idx));
          });
        }
      }
      row_values_.clear();
      return std::vector<Value*>{};
    });
    row_ = nullptr;
  }
};
}  // namespace

LaunchPlan emit_gpu_kernel(llvm::Module& m, const std::string& name, const hlo::Instruction& inst,
                           bool allow_excess_precision) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* ptr = llvm::PointerType::get(ctx, 0);
  size_t nscratch = 0;
  if (inst.opcode == Opcode::kFusion)
    for (auto& i : inst.called.at(0)->instructions) nscratch += i->opcode == Opcode::kDot;
  size_t nptr = cpu::output_shapes(inst).size() + inst.operands.size() + nscratch;
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), std::vector<llvm::Type*>(nptr, ptr), false);
  auto* f = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, name, m);
  for (unsigned p = 0; p < nptr; ++p) {
    // In-place output fusions read a parameter through output 0's pointer: still one pointer per buffer.
    f->addParamAttr(p, llvm::Attribute::NoAlias);
    f->addParamAttr(p, llvm::Attribute::getWithAlignment(ctx, llvm::Align(16)));
  }
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "kernel"),
                          llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))};
  m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
  LaunchPlan plan;
  if (inst.opcode == Opcode::kDot || inst.opcode == Opcode::kScatter) {
    plan = emit_indexed_kernel(m, f, inst, allow_excess_precision);
  } else if (is_arg_reduce(inst)) {
    plan = emit_arg_reduce_kernel(m, f, inst, allow_excess_precision);
  } else if (inst.opcode == Opcode::kSort || inst.opcode == Opcode::kTopK) {
    plan = emit_sort_kernel(m, f, inst, allow_excess_precision);
  } else if (std::optional<LaunchPlan> col = emit_column_kernel(m, f, inst, allow_excess_precision)) {
    plan = *col;
  } else {
    GpuEmitter e(m, f, allow_excess_precision);
    plan = e.emit(inst);
  }
  if (plan.block > 0) {
    llvm::Metadata* mt[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "maxntidx"),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx),
                                                                              static_cast<uint64_t>(plan.block)))};
    m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, mt));
  }
  return plan;
}

}  // namespace jitx::cuda
