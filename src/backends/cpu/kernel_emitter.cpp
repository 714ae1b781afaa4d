// The CPU backend's IR emitter: one LLVM function per instruction (or fusion), a loop nest over the output with
// each element computed by inlining the (fused) computation, XLA's elemental-emitter style.
//
// The jobs are split as XLA:CPU splits them: what one element computes (elemental_emitter.h; the arithmetic of its
// ops, elementwise_emitter.h, with f32 math in math_emitter.cpp), loops, streaming stores, prefetch and staged ops
// (loop_emitter.h), reductions and the row cache (reduction_emitter.h), column reductions
// (column_reduction_emitter.h), what can be emitted at all (kernel_planner.cpp). This file binds a kernel's buffers, picks its loop nest and emits it, and adds the
// functions the JIT exports.
#include <algorithm>
#include <unordered_set>
#include <utility>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>

#include "backends/cpu/kernels.h"
#include "backends/cpu/llvm_emit.h"
#include "backends/cpu/column_reduction_emitter.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
namespace {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

/// One kernel: its buffers bound to the function's arguments, then a column reduction or the output's loop nest.
class KernelEmitter final : public ColumnReductionEmitter {
 public:
  using ColumnReductionEmitter::ColumnReductionEmitter;

  void emit(const Instruction& inst) {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f_);
    b_.SetInsertPoint(entry);
    auto args = f_->arg_begin();
    std::vector<Value*> ptrs;
    for (size_t k = 0; k < num_ptrs_; ++k) ptrs.push_back(&*(args + k));
    Value *r0 = &*(args + num_ptrs_), *r1 = &*(args + num_ptrs_ + 1), *c0 = &*(args + num_ptrs_ + 2),
          *c1 = &*(args + num_ptrs_ + 3);
    auto outs = output_shapes(inst);
    std::vector<const Instruction*> roots = bind_buffers(inst, outs, ptrs);
    std::vector<Layout> out_layouts;
    for (auto* o : outs) out_layouts.push_back(layout_of(*o));
    if (column_reduction(roots, out_layouts)) {
      emit_column_reduction(roots, outs, ptrs, r0, r1, c0, c1);
      b_.CreateRetVoid();
      return;
    }
    emit_rows(inst, roots, outs, out_layouts, ptrs, r0, r1, c0, c1);
    b_.CreateRetVoid();
  }

  size_t num_ptrs_ = 0;

 private:
  // The kernel's operand buffers (a fusion's parameters) as the function's pointer arguments; returns the roots,
  // the values the kernel stores, one per output.
  std::vector<const Instruction*> bind_buffers(const Instruction& inst, const std::vector<const hlo::Shape*>& outs,
                                               const std::vector<Value*>& ptrs) {
    std::vector<const Instruction*> roots;
    if (inst.opcode == Opcode::kFusion) {
      const hlo::Computation& fc = *inst.called.at(0);
      // in_place_parameter (set by output fusions): that parameter is read through the output pointer, since
      // it is the same buffer (one pointer, so noalias holds and the read-then-write per element is plain).
      int64_t in_place = hlo::in_place_parameter_of(inst);
      for (auto* p : fc.parameters) {
        buffers_[p] = p->parameter_number == in_place ? ptrs.at(0) : ptrs.at(outs.size() + p->parameter_number);
        buffer_layouts_[p] = p->parameter_number == in_place ? layout_of(*outs[0])
                                                             : layout_of(inst.operand(p->parameter_number)->shape);
      }
      if (fc.root->opcode == Opcode::kTuple) roots.assign(fc.root->operands.begin(), fc.root->operands.end());
      else roots.push_back(fc.root);
    } else {
      for (size_t k = 0; k < inst.operands.size(); ++k) {
        buffers_[inst.operand(k)] = ptrs.at(outs.size() + k);
        buffer_layouts_[inst.operand(k)] = layout_of(inst.operand(k)->shape);
      }
      roots.push_back(&inst);
    }
    return roots;
  }

  // The loop nest walks the first output in memory order (its layout): rows over its major dims, the inner loop
  // along its minor-most dim, so stores are contiguous and vectorise. order[j] is the dim at memory position j
  // (major to minor).
  void emit_rows(const Instruction& inst, const std::vector<const Instruction*>& roots,
                 const std::vector<const hlo::Shape*>& outs, const std::vector<Layout>& out_layouts,
                 const std::vector<Value*>& ptrs, Value* r0, Value* r1, Value* c0, Value* c1) {
    const auto& dims = outs[0]->dims;
    int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> order = minor_to_major_of(out_layouts[0], dims.size());
    std::reverse(order.begin(), order.end());
    int64_t cols = rank == 0 ? 1 : dims[order.back()];
    std::vector<int64_t> row_dims;
    for (int64_t j = 0; j + 1 < rank; ++j) row_dims.push_back(dims[order[j]]);
    // Streaming stores and the row cache index outputs and cached rows row-major: they are used when every buffer
    // of the kernel is row-major (the common case); a kernel with other layouts takes the plain path.
    bool plain = true;
    for (auto& l : out_layouts) plain = plain && l.empty();
    for (auto& [i, l] : buffer_layouts_) plain = plain && l.empty();
    if (plain) plan_row_cache(roots, dims);
    std::unordered_set<const Instruction*> cached;
    for (auto& [i, rc] : row_cache_) cached.insert(i);
    bool streaming = plain && streaming_stores(inst, outs, roots, cached);
    if (streaming) {
      auto ip = b_.saveIP();
      b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
      for (auto* o : outs) {
        auto* a = b_.CreateAlloca(llvm::ArrayType::get(stype(o->dtype), kStreamBlock));
        a->setAlignment(llvm::Align(64));
        stream_tmp_.push_back(a);
      }
      b_.restoreIP(ip);
    }
    if (plain && row_cache_.empty()) plan_stages(roots, dims);
    bool prefetch_rows = streaming && prefetch_next_rows(roots, dims, cols);
    loop(r0, r1, nullptr, [&](Value* r, Value*) {
      std::vector<Value*> row_multi = delinearize(r, row_dims);
      // Reductions whose index does not change along the row are emitted here, once per row (see hoist()).
      hoist_bb_ = llvm::BasicBlock::Create(ctx_, "row", f_);
      b_.CreateBr(hoist_bb_);
      b_.SetInsertPoint(hoist_bb_);
      row_linear_ = plain ? r : nullptr;  // see at_current_row: row-major rows only
      row_key_ = nonunit(row_dims, row_multi);
      prime_row_reductions(row_multi);
      row_memo_ = memo_;
      collect_ = true;
      Value* row_start = b_.CreateMul(r, i64(cols), "", true, true);
      // The output index at column c (its loop's current element).
      auto index_at = [&](Value* c) {
        Index idx;
        idx.dims = dims;
        idx.linear = b_.CreateAdd(row_start, c, "", true, true);
        idx.layout = out_layouts[0];
        idx.multi.resize(dims.size());
        for (int64_t j = 0; j + 1 < rank; ++j) idx.multi[order[j]] = row_multi[j];
        if (rank) idx.multi[order.back()] = c;
        idx.has_multi = true;
        loop_linear_ = idx.linear;
        loop_col_ = c;
        return idx;
      };
      // One element of every root at column c; with `bases`, stored there (indexed from column `from`). Every root
      // is computed before any is stored: an output may share a parameter's buffer (in place), which another
      // root still reads at this element.
      auto element = [&](Value* c, const std::vector<Value*>* bases, Value* from) {
        Index idx = index_at(c);
        std::vector<Value*> vals;
        for (auto* r : roots) vals.push_back(gen(r, idx));
        for (size_t k = 0; k < roots.size(); ++k) {
          Value* v = vals[k];
          if (bases) store((*bases)[k], b_.CreateSub(c, from), outs[k]->dtype, v);
          else store(ptrs[k], linear_in(idx, out_layouts[k]), outs[k]->dtype, v);
        }
        loop_linear_ = loop_col_ = nullptr;
        return nullptr;
      };
      if (!streaming && staged_.empty()) {
        loop(c0, c1, nullptr, [&](Value* c, Value*) { return element(c, nullptr, nullptr); });
      } else {
        // Blocks of kStreamBlock columns. Streaming: each block is computed into small stack arrays (plain stores,
        // which the vectoriser widens as usual and which stay in L1), then copied out by stream_out. The loop
        // vectoriser does not widen non-temporal stores it cannot prove aligned, and a column loop's start is not
        // aligned. Staged ops: a first loop over the block stores their stage-1 values (see plan_stages). Row
        // prefetch: each block prefetches the same columns of the next row (see prefetch_next_rows).
        Value* nblocks = b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(c1, c0), i64(kStreamBlock - 1)), i64(kStreamBlock));
        loop(i64(0), nblocks, nullptr, [&](Value* blk, Value*) {
          Value* lo = b_.CreateAdd(c0, b_.CreateMul(blk, i64(kStreamBlock)));
          Value* hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(lo, i64(kStreamBlock)), c1);
          if (prefetch_rows) prefetch_next(dims, b_.CreateAdd(row_start, b_.CreateAdd(lo, i64(cols))), kStreamBlock);
          if (!staged_.empty()) {
            loop(lo, hi, nullptr, [&](Value* c, Value*) {
              Index idx = index_at(c);
              for (auto& [inst, st] : staged_) {
                Value* x = gen(st.arg, idx);
                std::vector<Value*> parts = emit_float_math_stage1(b_, inst->opcode, x, st.scale);
                JITX_ASSERT(parts.size() == st.arrays.size(), "cpu emitter: stage-1 value count");
                for (size_t k = 0; k < parts.size(); ++k)
                  b_.CreateStore(parts[k], b_.CreateInBoundsGEP(b_.getFloatTy(), st.arrays[k], b_.CreateSub(c, lo)));
              }
              loop_linear_ = loop_col_ = nullptr;
              return nullptr;
            });
            stage_lo_ = lo;
          }
          loop(lo, hi, nullptr, [&](Value* c, Value*) {
            return element(c, streaming ? &stream_tmp_ : nullptr, lo);
          }, staged_.empty() ? 1 : kStagedInterleave);
          stage_lo_ = nullptr;
          if (streaming)
            for (size_t k = 0; k < roots.size(); ++k)
              stream_out(stream_tmp_[k], ptrs[k], b_.CreateAdd(row_start, lo), b_.CreateSub(hi, lo), outs[k]->dtype);
          return nullptr;
        });
      }
      collect_ = false;
      hoist_bb_ = nullptr;
      row_linear_ = nullptr;
      return nullptr;
    });
    // Streaming stores are weakly ordered: fence them before the kernel returns and another thread reads them.
    if (streaming && llvm::Triple(m_.getTargetTriple()).isX86())
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::x86_sse_sfence));
  }
};
}  // namespace

std::string kernel_symbol(size_t i) { return fmt::format("jitx_kernel_{}", i); }

void emit_kernels(llvm::Module& m, const std::vector<const Instruction*>& insts, bool allow_excess_precision) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  for (size_t k = 0; k < insts.size(); ++k) {
    const Instruction& inst = *insts[k];
    size_t nptr = output_shapes(inst).size() + inst.operands.size();
    // The body takes noalias pointers (so the vectoriser needs no runtime checks); a wrapper unpacks bufs.
    std::vector<llvm::Type*> params(nptr, ptr);
    params.insert(params.end(), 4, i64);
    auto* body_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
    auto* body = llvm::Function::Create(body_ty, llvm::GlobalValue::InternalLinkage,
                                        kernel_symbol(k) + "." + inst.name, m);
    for (size_t p = 0; p < nptr; ++p) {
      body->addParamAttr(static_cast<unsigned>(p), llvm::Attribute::NoAlias);
      body->addParamAttr(static_cast<unsigned>(p), llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
    }
    body->addFnAttr(llvm::Attribute::NoUnwind);
    KernelEmitter e(m, body, allow_excess_precision);
    e.num_ptrs_ = nptr;
    e.emit(inst);

    auto* wrap_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64, i64, i64}, false);
    auto* wrap = llvm::Function::Create(wrap_ty, llvm::GlobalValue::ExternalLinkage, kernel_symbol(k), m);
    wrap->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrap));
    std::vector<Value*> args;
    for (size_t p = 0; p < nptr; ++p)
      args.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, wrap->getArg(0), p)));
    for (unsigned a = 1; a <= 4; ++a) args.push_back(wrap->getArg(a));
    b.CreateCall(body, args);
    b.CreateRetVoid();
  }
}

}  // namespace jitx::cpu
