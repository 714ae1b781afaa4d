// The loop emitter (see loop_emitter.h): the output loop's position, row-level hoisting, streaming stores, software
// prefetch and staged ops.
#include "backends/cpu/loop_emitter.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "backends/cpu/llvm_emit.h"
#include "core/errors.h"
#include "hlo/analysis/cost_analysis.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

std::vector<std::pair<int64_t, Value*>> LoopEmitter::nonunit(const std::vector<int64_t>& dims,
                                                                    const std::vector<Value*>& m) {
  std::vector<std::pair<int64_t, Value*>> out;
  for (size_t k = 0; k < dims.size(); ++k)
    if (dims[k] != 1) out.emplace_back(dims[k], m[k]);
  return out;
}
bool LoopEmitter::at_current_row(const Index& idx) const {
  if (!row_linear_) return false;
  if (idx.linear) return idx.linear == row_linear_;
  return idx.has_multi && nonunit(idx.dims, idx.multi) == row_key_;
}

bool LoopEmitter::row_level(const Index& idx) {
  if (!idx.has_multi && !idx.linear) return false;
  std::vector<Value*> vs = idx.multi;
  if (idx.linear) vs.push_back(idx.linear);
  for (Value* v : vs) {
    auto* i = llvm::dyn_cast<llvm::Instruction>(v);
    if (i && inner_blocks_.count(i->getParent())) return false;
  }
  return true;
}

// Emits a reduction whose index is the same along the whole row before the row's loop (a row fusion's mean and
// variance are computed once per row, not once per element).
Value* LoopEmitter::hoist(const Instruction* inst, Index& idx) {
  auto ip = b_.saveIP();
  llvm::Instruction* term = hoist_bb_->getTerminator();
  llvm::BasicBlock* succ = term->getSuccessor(0);
  term->eraseFromParent();
  b_.SetInsertPoint(hoist_bb_);
  std::swap(memo_, row_memo_);
  collect_ = false;
  Value* v = gen(inst, idx);
  collect_ = true;
  std::swap(memo_, row_memo_);
  llvm::BasicBlock* end = b_.GetInsertBlock();
  b_.CreateBr(succ);
  if (end != hoist_bb_)
    for (auto& phi : succ->phis()) phi.replaceIncomingBlockWith(hoist_bb_, end);
  hoist_bb_ = end;
  b_.restoreIP(ip);
  return v;
}

// Post-order of what the kernel computes, from the roots: operands before users; buffers (the kernel's operands,
// a fusion's parameters) are loaded, not computed, so the walk stops there.
std::vector<const Instruction*> LoopEmitter::computed_order(const std::vector<const Instruction*>& roots) const {
  std::vector<const Instruction*> order;
  std::unordered_set<const Instruction*> seen;
  std::function<void(const Instruction*)> visit = [&](const Instruction* i) {
    if (buffers_.count(i) || !seen.insert(i).second) return;
    for (auto* o : i->operands) visit(o);
    order.push_back(i);
  };
  for (auto* r : roots) visit(r);
  return order;
}

// --- streaming stores ---
// For large outputs: plain stores first read every output line from memory (write-allocate), a third more traffic
// for a kernel that reads one array and writes one. Softmax, whose exp is computed in the sum's pass and loaded
// from the row cache, went from 6.7-7.6 to 4.7-5.0 ms on 4096^2 f32 (alternating runs; 8192x4096 16.9-17.0 ->
// 11.5-11.8 ms; 2048^2, which this VM's 480 MiB L3 holds, 1.07 -> 1.20 ms).
//
// The copy-out (stream_out) writes whole 64-byte lines. With 32-byte non-temporal stores, the bursts stalled any
// kernel that evaluates a transcendental per output element while they drained, and such kernels kept plain stores
// (GELU on 16M f32: 7.0 ms streaming, 5.0 plain). With 64-byte stores, those whose transcendentals run in two
// stages (exp, logistic: two_stage_math_parts) gain too, 4096^2 f32 in alternating runs: exp(x - max) 6.8-8.1 ->
// 4.1-4.9 ms, GELU 5.9-6.5 -> 5.4-6.3 ms. One that evaluates another (tanh: a division in one long chain per
// element) still lost (6.1-6.6 -> 6.3-7.2 ms) and keeps plain stores. What a row reduction's pass or the row
// cache computes is not in the output loop.
bool LoopEmitter::streaming_stores(const Instruction& inst, const std::vector<const hlo::Shape*>& outs,
                                   const std::vector<const Instruction*>& roots,
                                   const std::unordered_set<const Instruction*>& loaded) {
  if (inst.opcode == Opcode::kFusion && hlo::in_place_parameter_of(inst) >= 0) return false;  // the output is read too
  const auto& dims = outs[0]->dims;
  std::unordered_set<const Instruction*> seen;
  bool heavy = false;  // a transcendental without a two-stage form, per output element, in the output loop
  std::function<void(const Instruction*)> visit = [&](const Instruction* i) {
    if (buffers_.count(i) || loaded.count(i) || is_row_reduction(*i, dims) || !seen.insert(i).second) return;
    heavy = heavy || (hlo::is_transcendental(i->opcode) && i->shape.num_elements() >= outs[0]->num_elements() &&
                      two_stage_math_parts(i->opcode, ctype(i->shape.dtype)) == 0);
    for (auto* o : i->operands) visit(o);
  };
  for (auto* r : roots) visit(r);
  if (heavy) return false;
  if (outs[0]->dims.empty() || outs[0]->dims.back() < 256) return false;  // rows too short for an aligned loop
  int64_t bytes = 0;
  for (auto* s : outs) bytes += s->num_elements() * static_cast<int64_t>(dtype_size(s->dtype));
  return bytes >= kStreamingStoreBytes;
}

Value* LoopEmitter::when_rarely(Value* cond, uint32_t odds, const std::function<Value*()>& body, Value* otherwise) {
  llvm::BasicBlock* from = b_.GetInsertBlock();
  auto* rare = llvm::BasicBlock::Create(ctx_, "rare", f_);
  auto* join = llvm::BasicBlock::Create(ctx_, "rare.join", f_);
  if (collect_) inner_blocks_.insert({rare, join});  // as a loop's blocks (see loop_n)
  b_.CreateCondBr(cond, rare, join, llvm::MDBuilder(ctx_).createBranchWeights(1, odds));
  b_.SetInsertPoint(rare);
  Value* v = body();
  llvm::BasicBlock* ran = b_.GetInsertBlock();  // body may have added blocks (a loop)
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  if (!v) return nullptr;
  llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
  phi->addIncoming(otherwise, from);
  phi->addIncoming(v, ran);
  return phi;
}

// out[start, start + len) = tmp[0, len): a plain copy up to the first 64-byte boundary of out, then aligned
// 64-byte vectors (a whole line each) with non-temporal stores, then a plain copy of the rest. The two plain parts
// (under 64 bytes each) are memcpy calls, not loops: as loops, LLVM vectorised each (with runtime checks and an
// epilogue loop), or recognised them as memcpy at the cost of its loop passes, which made compile time grow once
// outputs were large enough to stream (a 4096x4096 MLP block compiled in twice the time of a 2048x2048 one).
void LoopEmitter::stream_out(Value* tmp, Value* out, Value* start, Value* len, DType d) {
  int64_t size = static_cast<int64_t>(dtype_size(d)), lanes = 64 / size;
  llvm::Type* st = b_.getIntNTy(static_cast<unsigned>(size * 8));  // copied as bits (halves, bools alike)
  Value* dst = b_.CreateInBoundsGEP(st, out, start);
  Value* to_line = b_.CreateAnd(b_.CreateSub(i64(0), b_.CreatePtrToInt(dst, b_.getInt64Ty())), i64(63));
  Value* head = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateUDiv(to_line, i64(size)), len);
  // Elements [from, to): a call to memcpy only where there is something to copy (none at all for rows of whole
  // lines), in a block of its own, so that the vector registers the loops keep are spilled and reloaded around the
  // call there, not on every block of the row.
  auto copy = [&](Value* from, Value* to) {
    when_rarely(b_.CreateICmpSLT(from, to), 64, [&]() -> Value* {
      b_.CreateMemCpy(b_.CreateInBoundsGEP(st, dst, from), llvm::Align(size), b_.CreateInBoundsGEP(st, tmp, from),
                      llvm::Align(size), b_.CreateMul(b_.CreateSub(to, from), i64(size)));
      return nullptr;
    });
  };
  copy(i64(0), head);
  auto* vt = llvm::FixedVectorType::get(st, static_cast<unsigned>(lanes));
  Value* vectors = b_.CreateUDiv(b_.CreateSub(len, head), i64(lanes));
  loop(i64(0), vectors, nullptr, [&](Value* v, Value*) {
    Value* j = b_.CreateAdd(head, b_.CreateMul(v, i64(lanes)));
    Value* x = b_.CreateAlignedLoad(vt, b_.CreateInBoundsGEP(st, tmp, j), llvm::Align(size));
    auto* store = b_.CreateAlignedStore(x, b_.CreateInBoundsGEP(st, dst, j), llvm::Align(64));
    store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                       llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
    return nullptr;
  });
  copy(b_.CreateAdd(head, b_.CreateMul(vectors, i64(lanes))), len);
}

// --- software prefetch ---
// Software prefetch, only where the hardware prefetcher falls idle: a memory-bound (streaming) kernel with row
// reductions reads each row from memory in its first pass and again from cache in the next ones (layer norm:
// mean, variance, output), and the hardware prefetcher, which runs a short way ahead of demand misses, leaves
// memory idle during those passes. So each block of the row's last pass prefetches the same block of the next row
// (16 lines at a time: the whole next row at the row's start, as before, stalled on the miss buffers). Measured
// in-process A/B against the triad, 4096^2 f32: layer norm 4.1-4.3 ms with, 4.5-4.8 without; softmax (exp per
// element, not streaming) was slower with it, 11.6-12.9 vs 9.9-12.0 ms. Elementwise kernels read sequentially
// and are left to the hardware (prefetching blocks ahead made x * 2 + 1 on 16M f32 slower, 3.1 vs 2.9 ms).
bool LoopEmitter::prefetch_next_rows(const std::vector<const Instruction*>& roots,
                                     const std::vector<int64_t>& dims, int64_t cols) const {
  if (dims.size() < 2 || cols < kStreamBlock) return false;
  bool reduces = false;
  for (auto* i : computed_order(roots)) reduces = reduces || is_row_reduction(*i, dims);
  return reduces && prefetches_next_row(dims);
}

bool LoopEmitter::prefetches_next_row(const std::vector<int64_t>& dims) const {
  int64_t bytes = 0;  // inputs of this shape: large enough to come from memory
  for (auto& [inst, ptr] : buffers_)
    if (inst->shape.dims == dims && inst->opcode != Opcode::kConstant)
      bytes += inst->shape.num_elements() * static_cast<int64_t>(dtype_size(inst->shape.dtype));
  return dims.size() >= 2 && bytes >= kStreamingStoreBytes;
}

// Prefetches `count` elements from linear index `next` of every input read at the output's own index.
// Prefetching past the end of a buffer is harmless (no faults).
void LoopEmitter::prefetch_next(const std::vector<int64_t>& dims, Value* next, int64_t count, int locality) {
  auto* pf = llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::prefetch, {b_.getPtrTy()});
  std::vector<std::pair<const Instruction*, Value*>> inputs;
  for (auto& [inst, ptr] : buffers_)
    if (inst->shape.dims == dims && inst->opcode != Opcode::kConstant) inputs.emplace_back(inst, ptr);
  // In a fixed order: the same IR on every compile.
  std::sort(inputs.begin(), inputs.end(), [](auto& a, auto& b) { return a.first->name < b.first->name; });
  for (auto& [inst, ptr] : inputs) {
    int64_t size = static_cast<int64_t>(dtype_size(inst->shape.dtype));
    Value* base = b_.CreateGEP(b_.getInt8Ty(), ptr, b_.CreateMul(next, i64(size)));
    loop(i64(0), i64((count * size + 63) / 64), nullptr, [&](Value* j, Value*) {
      // read, the given temporal locality (3: into L1, 2: L2), data cache
      b_.CreateCall(pf, {b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(j, i64(64))), b_.getInt32(0),
                         b_.getInt32(locality), b_.getInt32(1)});
      return nullptr;
    });
  }
}

// --- staged ops ---
void LoopEmitter::plan_stages(const std::vector<const Instruction*>& roots, const std::vector<int64_t>& dims) {
  if (dims.empty() || dims.back() < 256) return;  // short rows: blocks would be mostly overhead
  std::vector<const Instruction*> staged;
  for (auto* i : computed_order(roots)) {
    if (i->opcode == Opcode::kReduce || i->opcode == Opcode::kReduceWindow) return;
    if (i->shape.dims == dims && i->operands.size() == 1 && i->operand(0)->shape.dims == dims &&
        two_stage_math_parts(i->opcode, ctype(i->shape.dtype)) > 0)
      staged.push_back(i);
  }
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> users;
  for (auto* i : computed_order(roots))
    for (auto* o : i->operands) users[o].push_back(i);
  for (auto* i : staged) {
    Staged st;
    st.arg = i->operand(0);
    if (i->opcode == Opcode::kLogistic) fold_multiplies(i, dims, roots, users, st);
    auto ip = b_.saveIP();
    b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    for (int k = 0; k < two_stage_math_parts(i->opcode, ctype(i->shape.dtype)); ++k) {
      auto* a = b_.CreateAlloca(llvm::ArrayType::get(b_.getFloatTy(), kStreamBlock));
      a->setAlignment(llvm::Align(64));
      st.arrays.push_back(a);
    }
    b_.restoreIP(ip);
    staged_.emplace_back(i, std::move(st));
  }
}

// The multiplies that fold into a staged logistic (see Staged).
void LoopEmitter::fold_multiplies(const Instruction* i, const std::vector<int64_t>& dims,
                                  const std::vector<const Instruction*>& roots,
                                  std::unordered_map<const Instruction*, std::vector<const Instruction*>>& users,
                                  Staged& st) {
  // f16/bf16 products are rounded before the logistic and after it (per-op rounding): nothing folds.
  if (is_half(i->shape.dtype)) return;
  const Instruction* m = i->operand(0);
  if (m->opcode == Opcode::kMultiply && !buffers_.count(m)) {
    for (size_t k = 0; k < 2; ++k) {
      double v = 0;
      if (scalar_float_constant(m->operand(k), v) && std::isfinite(v) && v != 0 &&
          m->operand(1 - k)->shape.dims == dims) {
        st.arg = m->operand(1 - k);
        st.scale = v;
        break;
      }
    }
  }
  const auto& u = users[i];
  bool is_root = std::find(roots.begin(), roots.end(), i) != roots.end();
  if (u.size() != 1 || is_root || u[0]->opcode != Opcode::kMultiply || u[0]->shape.dtype != i->shape.dtype) return;
  const Instruction* mul = u[0];
  size_t other = mul->operand(0) == i ? 1 : 0;
  if (mul->operand(other) == i || mul->operand(other)->shape.dims != dims) return;
  st.times = mul;
  st.times_other = other;
}

// Whether inst is a float scalar constant, or a broadcast of one; its value in v.
bool LoopEmitter::scalar_float_constant(const Instruction* inst, double& v) {
  while (inst->opcode == Opcode::kBroadcastInDim || inst->opcode == Opcode::kReshape) inst = inst->operand(0);
  if (inst->opcode != Opcode::kConstant || !inst->literal || inst->literal->size() != 1 ||
      !is_float(inst->shape.dtype))
    return false;
  v = inst->literal->get_f64(0);
  return true;
}

// A staged op's value at the element loop's own index (stage 2 from the stored values), or the value of the
// multiply folded into one, or nullptr.
Value* LoopEmitter::staged_value(const Instruction* inst, Index& idx) {
  if (!stage_lo_ || !loop_linear_ || idx.linear != loop_linear_) return nullptr;
  auto it = std::find_if(staged_.begin(), staged_.end(),
                         [&](auto& s) { return s.first == inst || s.second.times == inst; });
  if (it == staged_.end()) return nullptr;
  const Staged& st = it->second;
  Value* times = st.times == inst ? operand_at(*inst, st.times_other, idx) : nullptr;
  std::vector<Value*> parts;
  Value* at = b_.CreateSub(loop_col_, stage_lo_);
  for (Value* a : st.arrays)
    parts.push_back(b_.CreateLoad(b_.getFloatTy(), b_.CreateInBoundsGEP(b_.getFloatTy(), a, at)));
  return round(inst->shape.dtype, emit_float_math_stage2(b_, it->first->opcode, parts, times));
}

}  // namespace jitx::cpu
