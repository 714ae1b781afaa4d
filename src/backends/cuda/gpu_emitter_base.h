// The CUDA kernel emitters' common base (internal to the backend's LLVM translation units: gpu_emitter.cpp's loop and
// row kernels, gpu_indexed_emitter.cpp's dot and scatter kernels): a kernel's buffers, counted and conditional code,
// thread indices, warp and block reductions of one value.
#pragma once
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/elemental_emitter.h"
#include "backends/cuda/cuda_codegen.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "jitx/error.h"

namespace jitx::cuda::gpu_detail {
using cpu::Index;
using cpu::Layout;
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

inline constexpr int64_t kBlock = 256;  // threads per block
inline constexpr int64_t kWarp = 32;
inline constexpr int64_t kMaxGrid = 1 << 16;  // blocks; grid-stride loops cover the rest
inline constexpr int64_t kBlockRowCols =
    1024;  // rows at least this long are reduced by a whole block, shorter by a warp

[[noreturn]] inline void unsupported(const Instruction& inst, const std::string& why) {
  throw CompileError(fmt::format("cuda backend: cannot emit a kernel for %{} ({}): {}", inst.name,
                                 hlo::opcode_name(inst.opcode), why));
}

// What every GPU kernel needs: its buffers, counted and conditional code, thread indices, warp and block
// reductions of one value.
class GpuEmitterBase : public cpu::ElementalEmitter {
 public:
  using ElementalEmitter::ElementalEmitter;

 protected:
  // The kernel's entry block, outputs and buffers, and the plan's counts; returns the roots (one per output).
  std::vector<const Instruction*> begin(const Instruction& inst, LaunchPlan& plan) {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f_);
    b_.SetInsertPoint(entry);
    outs_ = cpu::output_shapes(inst);
    std::vector<const Instruction*> roots = bind(inst);
    plan.num_outputs = outs_.size();
    plan.num_operands = inst.operands.size();
    plan.num_scratch = scratch_.size();
    for (auto* s : scratch_) plan.scratch_bytes.push_back(s->shape.byte_size());
    for (auto* o : outs_) out_layouts_.push_back(cpu::layout_of(*o));
    return roots;
  }

  std::vector<const hlo::Shape*> outs_;
  std::vector<Layout> out_layouts_;
  std::vector<Value*> out_ptrs_;
  std::vector<const Instruction*> scratch_;  // dots of an output fusion, read from scratch buffers

  Value* sreg(llvm::Intrinsic::ID id) { return b_.CreateZExt(b_.CreateIntrinsic(id, {}, {}), b_.getInt64Ty()); }

  // The kernel's buffers bound to its parameters; returns the roots (one per output).
  std::vector<const Instruction*> bind(const Instruction& inst) {
    auto args = f_->arg_begin();
    size_t nout = outs_.size();
    for (size_t k = 0; k < nout; ++k) out_ptrs_.push_back(&*(args + k));
    std::vector<const Instruction*> roots;
    if (inst.opcode != Opcode::kFusion) {
      for (size_t k = 0; k < inst.operands.size(); ++k) {
        buffers_[inst.operand(k)] = &*(args + nout + k);
        buffer_layouts_[inst.operand(k)] = cpu::layout_of(inst.operand(k)->shape);
      }
      roots.push_back(&inst);
      return roots;
    }
    const hlo::Computation& fc = *inst.called.at(0);
    int64_t in_place = hlo::in_place_parameter_of(inst);
    for (auto* p : fc.parameters) {
      bool ip = p->parameter_number == in_place;
      buffers_[p] = ip ? out_ptrs_.at(0) : &*(args + nout + p->parameter_number);
      buffer_layouts_[p] = ip ? cpu::layout_of(*outs_[0]) : cpu::layout_of(inst.operand(p->parameter_number)->shape);
    }
    // An output fusion's dots are the GEMM library's: the epilogue reads their results from scratch buffers.
    size_t next = nout + inst.operands.size();
    for (auto& i : fc.instructions) {
      if (i->opcode != Opcode::kDot) continue;
      if (hlo::fusion_kind_of(inst) != hlo::FusionKind::kOutput) unsupported(inst, "a dot inside a non-output fusion");
      buffers_[i.get()] = &*(args + next++);
      buffer_layouts_[i.get()] = cpu::layout_of(i->shape);
      scratch_.push_back(i.get());
    }
    if (fc.root->opcode == Opcode::kTuple)
      roots.assign(fc.root->operands.begin(), fc.root->operands.end());
    else
      roots.push_back(fc.root);
    return roots;
  }

  // A counted loop lo, lo + step, ... < hi carrying `accs`; body(i, accs) returns the next values.
  template <class F>
  std::vector<Value*> loop(Value* lo, Value* hi, Value* step, std::vector<Value*> accs0, F body) {
    auto saved = memo_;  // values made inside the loop do not dominate what follows it
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "loop", f_);
    auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", f_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2);
    i->addIncoming(lo, pre);
    std::vector<Value*> acc;
    for (Value* a0 : accs0) {
      llvm::PHINode* phi = b_.CreatePHI(a0->getType(), 2);
      phi->addIncoming(a0, pre);
      acc.push_back(phi);
    }
    b_.CreateCondBr(b_.CreateICmpSLT(i, hi), bodyb, exit);
    b_.SetInsertPoint(bodyb);
    std::vector<Value*> next = body(i, acc);
    i->addIncoming(b_.CreateAdd(i, step, "", true, true), b_.GetInsertBlock());
    for (size_t k = 0; k < acc.size(); ++k)
      llvm::cast<llvm::PHINode>(acc[k])->addIncoming(next[k], b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
    memo_ = std::move(saved);
    return acc;
  }
  template <class F>
  void when(Value* cond, F body) {
    auto saved = memo_;
    auto* then = llvm::BasicBlock::Create(ctx_, "then", f_);
    auto* done = llvm::BasicBlock::Create(ctx_, "done", f_);
    b_.CreateCondBr(cond, then, done);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    memo_ = std::move(saved);
  }

  // The output element at linear position `lin` of output 0's memory order.
  Index out_index(Value* lin) {
    Index idx;
    idx.dims = outs_[0]->dims;
    idx.linear = lin;
    idx.layout = out_layouts_[0];
    if (!idx.layout.empty()) {  // the multi-index in memory order (major to minor)
      std::vector<int64_t> order = cpu::minor_to_major_of(idx.layout, idx.dims.size());
      std::reverse(order.begin(), order.end());
      std::vector<int64_t> ext;
      for (auto d : order) ext.push_back(idx.dims[d]);
      std::vector<Value*> m = delinearize(lin, ext);
      idx.multi.resize(idx.dims.size());
      for (size_t j = 0; j < order.size(); ++j) idx.multi[order[j]] = m[j];
      idx.has_multi = true;
    }
    return idx;
  }

  // A value of any scalar type as 32-bit words, for shuffles and shared memory.
  std::vector<Value*> words(Value* v) {
    llvm::Type* t = v->getType();
    unsigned bits = t->getPrimitiveSizeInBits();
    Value* iv = t->isIntegerTy() ? v : b_.CreateBitCast(v, b_.getIntNTy(bits));
    if (bits <= 32) return {b_.CreateZExt(iv, b_.getInt32Ty())};
    return {b_.CreateTrunc(iv, b_.getInt32Ty()), b_.CreateTrunc(b_.CreateLShr(iv, 32), b_.getInt32Ty())};
  }
  Value* from_words(const std::vector<Value*>& w, llvm::Type* t) {
    unsigned bits = t->getPrimitiveSizeInBits();
    Value* iv;
    if (bits <= 32)
      iv = b_.CreateTrunc(w[0], b_.getIntNTy(bits));
    else
      iv = b_.CreateOr(b_.CreateZExt(w[0], b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(w[1], b_.getInt64Ty()), 32));
    return t->isIntegerTy() ? iv : b_.CreateBitCast(iv, t);
  }
  // Every lane of the warp gets the warp's combined value (a butterfly: deterministic, the same on every lane).
  Value* warp_reduce(const std::string& r, DType d, Value* v) {
    for (int mask = 16; mask >= 1; mask /= 2) {
      std::vector<Value*> w = words(v), o;
      for (Value* x : w)
        o.push_back(b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                                       {b_.getInt32(0xffffffffu), x, b_.getInt32(mask), b_.getInt32(0x1f)}));
      v = combine(r, d, v, from_words(o, v->getType()), false);
    }
    return v;
  }
  // Every thread of the block gets the block's combined value: warp values through shared memory, combined in
  // warp order by every thread.
  Value* block_reduce(const std::string& r, DType d, Value* v, Value* tid) {
    v = warp_reduce(r, d, v);
    size_t nw = words(v).size();
    auto* arr = llvm::ArrayType::get(b_.getInt32Ty(), static_cast<uint64_t>(kBlock / kWarp) * nw);
    auto* shm = new llvm::GlobalVariable(m_, arr, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(arr),
                                         "shm", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    Value* warp = b_.CreateUDiv(tid, i64(kWarp));
    std::vector<Value*> w = words(v);
    when(b_.CreateICmpEQ(b_.CreateURem(tid, i64(kWarp)), i64(0)), [&] {
      for (size_t q = 0; q < nw; ++q)
        b_.CreateStore(
            w[q], b_.CreateInBoundsGEP(
                      arr, shm, {i64(0), b_.CreateAdd(b_.CreateMul(warp, i64(nw)), i64(static_cast<int64_t>(q)))}));
    });
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    Value* acc = nullptr;
    for (int64_t k = 0; k < kBlock / kWarp; ++k) {
      std::vector<Value*> x;
      for (size_t q = 0; q < nw; ++q)
        x.push_back(b_.CreateLoad(
            b_.getInt32Ty(),
            b_.CreateInBoundsGEP(arr, shm, {i64(0), i64(k * static_cast<int64_t>(nw) + static_cast<int64_t>(q))})));
      Value* xv = from_words(x, v->getType());
      acc = acc ? combine(r, d, acc, xv, false) : xv;
    }
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});  // before the next row overwrites the array
    return acc;
  }
};

/// The base of kernels whose elements may be reduce-windows or convolutions (gpu_window_emitter.cpp): each output
/// element's loops over its window.
class GpuWindowEmitter : public GpuEmitterBase {
 public:
  using GpuEmitterBase::GpuEmitterBase;

 protected:
  Value* gen_reduce_window(const Instruction& inst, Index& idx) override;
  Value* gen_convolution(const Instruction& inst, Index& idx) override;
};

/// A column-reduction kernel for inst into f (gpu_column_emitter.cpp), or nullopt (nothing emitted) when inst is not
/// one: every reduce reducing the leading dims of one row-major shape, every output of the kept shape.
std::optional<LaunchPlan> emit_column_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                                             bool allow_excess_precision);

/// The kernel of an argmax/argmin (is_arg_reduce; gpu_arg_emitter.cpp) into f.
LaunchPlan emit_arg_reduce_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                                  bool allow_excess_precision);

/// The kernel of a sort (gpu_sort_emitter.cpp) into f.
LaunchPlan emit_sort_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                            bool allow_excess_precision);

/// The kernel of a dot or scatter (gpu_indexed_emitter.cpp) into f.
LaunchPlan emit_indexed_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                               bool allow_excess_precision);

}  // namespace jitx::cuda::gpu_detail
