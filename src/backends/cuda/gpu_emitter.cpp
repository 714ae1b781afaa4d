// The CUDA kernel emitter (see gpu_emitter.h): grid-stride loops over output elements, and rows reduced by a warp
// or a block (warp shuffles, then shared memory). What one element computes is the CPU backend's ElementalEmitter.
#include "backends/cuda/gpu_emitter.h"

#include <algorithm>
#include <unordered_map>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include "backends/cpu/elemental_emitter.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "jitx/error.h"

namespace jitx::cuda {
namespace {
using cpu::Index;
using cpu::Layout;
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

constexpr int64_t kBlock = 256;      // threads per block
constexpr int64_t kWarp = 32;
constexpr int64_t kMaxGrid = 1 << 16;  // blocks; grid-stride loops cover the rest
constexpr int64_t kBlockRowCols = 1024;  // rows at least this long are reduced by a whole block, shorter by a warp

[[noreturn]] void unsupported(const Instruction& inst, const std::string& why) {
  throw CompileError(fmt::format("cuda backend: cannot emit a kernel for %{} ({}): {}", inst.name,
                                 hlo::opcode_name(inst.opcode), why));
}

// What every GPU kernel needs: its buffers, counted and conditional code, thread indices, warp and block
// reductions of one value.
class GpuEmitterBase : public cpu::ElementalEmitter {
 public:
  using ElementalEmitter::ElementalEmitter;

 protected:
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
    if (fc.root->opcode == Opcode::kTuple) roots.assign(fc.root->operands.begin(), fc.root->operands.end());
    else roots.push_back(fc.root);
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
    if (bits <= 32) iv = b_.CreateTrunc(w[0], b_.getIntNTy(bits));
    else iv = b_.CreateOr(b_.CreateZExt(w[0], b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(w[1], b_.getInt64Ty()), 32));
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
        b_.CreateStore(w[q], b_.CreateInBoundsGEP(arr, shm, {i64(0), b_.CreateAdd(b_.CreateMul(warp, i64(nw)),
                                                                                  i64(static_cast<int64_t>(q)))}));
    });
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    Value* acc = nullptr;
    for (int64_t k = 0; k < kBlock / kWarp; ++k) {
      std::vector<Value*> x;
      for (size_t q = 0; q < nw; ++q)
        x.push_back(b_.CreateLoad(b_.getInt32Ty(),
                                  b_.CreateInBoundsGEP(arr, shm, {i64(0), i64(k * static_cast<int64_t>(nw) +
                                                                              static_cast<int64_t>(q))})));
      Value* xv = from_words(x, v->getType());
      acc = acc ? combine(r, d, acc, xv, false) : xv;
    }
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});  // before the next row overwrites the array
    return acc;
  }
};

/// One kernel: a loop kernel or a row kernel (see cuda_codegen.h's KernelKind).
class GpuEmitter final : public GpuEmitterBase {
 public:
  using GpuEmitterBase::GpuEmitterBase;

  LaunchPlan emit(const Instruction& inst) {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f_);
    b_.SetInsertPoint(entry);
    outs_ = cpu::output_shapes(inst);
    std::vector<const Instruction*> roots = bind(inst);
    LaunchPlan plan;
    plan.num_outputs = outs_.size();
    plan.num_operands = inst.operands.size();
    plan.num_scratch = scratch_.size();
    for (auto* s : scratch_) plan.scratch_bytes.push_back(s->shape.byte_size());
    for (auto* o : outs_) out_layouts_.push_back(cpu::layout_of(*o));
    if (inst.opcode == Opcode::kDot) emit_dot(inst, plan);
    else if (row_plan(inst, roots)) emit_rows(roots, plan);
    else emit_loop(inst, roots, plan);
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


  // --- dot kernels (where cuBLASLt is missing or the dot is not one matmul): tiled, shared memory ---
  // Any dot_general: batch B, lhs free M, rhs free N and contracting K (each the product of its dims, in the
  // operands' order), the result [batch.., lhs free.., rhs free..]. A block of 16 x 16 threads computes a 16 x 16
  // tile of one batch: per 16-wide step of K, each thread loads one element of the lhs and one of the rhs tile into
  // shared memory (read through the operands' layouts, 0 past the edges), then accumulates its element's 16
  // products; blocks go round the tiles grid-stride. Floats accumulate in f32 (f64 for f64 results), integers in
  // the result's type, as XLA's dot.
  void emit_dot(const Instruction& inst, LaunchPlan& plan) {
    constexpr int64_t kTile = 16;
    auto dn = hlo::DotDimensionNumbers::of(inst);
    const Instruction *lhs = inst.operand(0), *rhs = inst.operand(1);
    DType out = outs_[0]->dtype;
    if (out == DType::bool_) unsupported(inst, "a dot with a bool result");
    DType acc_t = cpu::is_float(out) ? (out == DType::float64 ? DType::float64 : DType::float32) : out;
    llvm::Type* at = ctype(acc_t);
    auto free_dims = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& batch,
                        const std::vector<int64_t>& contracting) {
      std::vector<int64_t> f;
      for (int64_t a = 0; a < static_cast<int64_t>(dims.size()); ++a)
        if (std::find(batch.begin(), batch.end(), a) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), a) == contracting.end())
          f.push_back(a);
      return f;
    };
    const auto &ld = lhs->shape.dims, &rd = rhs->shape.dims;
    std::vector<int64_t> lfree = free_dims(ld, dn.lhs_batch_dims, dn.lhs_contracting_dims),
                         rfree = free_dims(rd, dn.rhs_batch_dims, dn.rhs_contracting_dims);
    auto extents = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
      std::vector<int64_t> e;
      for (auto a : which) e.push_back(dims[static_cast<size_t>(a)]);
      return e;
    };
    std::vector<int64_t> bext = extents(ld, dn.lhs_batch_dims), kext = extents(ld, dn.lhs_contracting_dims),
                         mext = extents(ld, lfree), next = extents(rd, rfree);
    int64_t nb = detail::num_elements(bext), m = detail::num_elements(mext), n = detail::num_elements(next),
            k = detail::num_elements(kext);
    int64_t tm = (m + kTile - 1) / kTile, tn = (n + kTile - 1) / kTile, tiles = nb * tm * tn;
    plan.kind = KernelKind::kLoop;
    plan.block = kTile * kTile;
    plan.grid = std::clamp<int64_t>(tiles, 1, kMaxGrid);
    // An operand's element at (batch b, free f, contracting c), each a linear index over its dims.
    auto element = [&](const Instruction* op, const std::vector<int64_t>& batch, const std::vector<int64_t>& free,
                       const std::vector<int64_t>& contracting, Value* b, Value* f, Value* c) {
      const auto& dims = op->shape.dims;
      std::vector<Value*> multi(dims.size());
      auto place = [&](const std::vector<int64_t>& axes, Value* lin) {
        std::vector<Value*> parts = delinearize(lin, extents(dims, axes));
        for (size_t j = 0; j < axes.size(); ++j) multi[static_cast<size_t>(axes[j])] = parts[j];
      };
      place(batch, b);
      place(free, f);
      place(contracting, c);
      return convert(gen(op, multi_index(dims, multi)), op->shape.dtype, acc_t);
    };
    auto tile_array = [&](const char* name) {
      auto* arr = llvm::ArrayType::get(llvm::ArrayType::get(at, kTile + 1), kTile);  // +1: no bank conflicts
      return new llvm::GlobalVariable(m_, arr, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(arr),
                                      name, nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    };
    llvm::GlobalVariable *sa = tile_array("dot_lhs_tile"), *sb = tile_array("dot_rhs_tile");
    auto slot = [&](llvm::GlobalVariable* g, Value* row, Value* col) {
      return b_.CreateInBoundsGEP(g->getValueType(), g, {i64(0), row, col});
    };
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* ty = b_.CreateUDiv(tid, i64(kTile));
    Value* tx = b_.CreateURem(tid, i64(kTile));
    Value* zero = cpu::is_float(acc_t) ? fconst(at, 0.0) : llvm::ConstantInt::get(at, 0);
    auto clamp_below = [&](Value* v, int64_t hi) {  // min(v, hi - 1): an in-bounds read whose value is masked
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v, i64(std::max<int64_t>(hi - 1, 0)));
    };
    loop(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(tiles),
         sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), {}, [&](Value* tile, const std::vector<Value*>&) {
           Value* bi = b_.CreateUDiv(tile, i64(tm * tn));
           Value* rest = b_.CreateURem(tile, i64(tm * tn));
           Value* m0 = b_.CreateMul(b_.CreateUDiv(rest, i64(tn)), i64(kTile));
           Value* n0 = b_.CreateMul(b_.CreateURem(rest, i64(tn)), i64(kTile));
           Value* mi = b_.CreateAdd(m0, ty);
           Value* ni = b_.CreateAdd(n0, tx);
           Value* acc = loop(i64(0), i64(k), i64(kTile), {zero}, [&](Value* k0, const std::vector<Value*>& a) {
             Value* ka = b_.CreateAdd(k0, tx);  // the lhs tile: row ty, column tx
             Value* kb = b_.CreateAdd(k0, ty);  // the rhs tile: row ty (contracting), column tx
             Value* va = element(lhs, dn.lhs_batch_dims, lfree, dn.lhs_contracting_dims, bi, clamp_below(mi, m),
                                 clamp_below(ka, k));
             Value* vb = element(rhs, dn.rhs_batch_dims, rfree, dn.rhs_contracting_dims, bi, clamp_below(ni, n),
                                 clamp_below(kb, k));
             Value* in_a = b_.CreateAnd(b_.CreateICmpULT(mi, i64(m)), b_.CreateICmpULT(ka, i64(k)));
             Value* in_b = b_.CreateAnd(b_.CreateICmpULT(ni, i64(n)), b_.CreateICmpULT(kb, i64(k)));
             b_.CreateStore(b_.CreateSelect(in_a, va, zero), slot(sa, ty, tx));
             b_.CreateStore(b_.CreateSelect(in_b, vb, zero), slot(sb, ty, tx));
             b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
             Value* sum = loop(i64(0), i64(kTile), i64(1), {a[0]}, [&](Value* kk, const std::vector<Value*>& s) {
               Value* x = b_.CreateLoad(at, slot(sa, ty, kk));
               Value* y = b_.CreateLoad(at, slot(sb, kk, tx));
               if (cpu::is_float(acc_t))
                 return std::vector<Value*>{b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {at}, {x, y, s[0]})};
               return std::vector<Value*>{b_.CreateAdd(b_.CreateMul(x, y), s[0])};
             })[0];
             b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});  // before the next step overwrites the tiles
             return std::vector<Value*>{sum};
           })[0];
           when(b_.CreateAnd(b_.CreateICmpULT(mi, i64(m)), b_.CreateICmpULT(ni, i64(n))), [&] {
             // The result's index: [batch.., lhs free.., rhs free..].
             std::vector<Value*> multi = delinearize(bi, bext), fm = delinearize(mi, mext), fn = delinearize(ni, next);
             multi.insert(multi.end(), fm.begin(), fm.end());
             multi.insert(multi.end(), fn.begin(), fn.end());
             Index idx = multi_index(outs_[0]->dims, multi);
             store(out_ptrs_[0], linear_in(idx, out_layouts_[0]), out, convert(acc, acc_t, out));
           });
           return std::vector<Value*>{};
         });
  }

  // --- loop kernels: one thread per element of the output, grid-stride ---
  void emit_loop(const Instruction& inst, const std::vector<const Instruction*>& roots, LaunchPlan& plan) {
    for (auto* o : outs_)
      if (o->dims != outs_[0]->dims) unsupported(inst, "a multi-output loop fusion with outputs of different shapes");
    int64_t n = outs_[0]->num_elements();
    plan.kind = KernelKind::kLoop;
    plan.block = kBlock;
    plan.grid = std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, kMaxGrid);
    Value* start = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                             sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    Value* step = b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                               sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    loop(start, i64(n), step, {}, [&](Value* i, const std::vector<Value*>&) {
      Index idx = out_index(i);
      // Every root before any store: an output may share the buffer of a parameter another root reads.
      std::vector<Value*> vals;
      for (auto* r : roots) vals.push_back(gen(r, idx));
      for (size_t k = 0; k < roots.size(); ++k) store(out_ptrs_[k], linear_in(idx, out_layouts_[k]), outs_[k]->dtype,
                                                      vals[k]);
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
        if (ri < rdims.size() && rdims[ri] == a) m.push_back(rm[ri++]);
        else m.push_back(outm[oi++]);
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
  GpuEmitter e(m, f, allow_excess_precision);
  LaunchPlan plan = e.emit(inst);
  if (plan.block > 0) {
    llvm::Metadata* mt[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "maxntidx"),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx),
                                                                               static_cast<uint64_t>(plan.block)))};
    m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, mt));
  }
  return plan;
}

}  // namespace jitx::cuda
