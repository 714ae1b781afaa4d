// The reduction emitter (see reduction_emitter.h): a reduce's loop over its reduced elements, the row cache and
// staged row reductions.
#include "backends/cpu/reduction_emitter.h"

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_set>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "backends/cpu/llvm_emit.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

// --- the element-level emitter's hooks ---
// A reduce at the current row is one value however its index was reached (through a reshape: linear only;
// through a broadcast: the row's multi-index): one key, so that it is emitted once per row.
Value* ReductionEmitter::shared_key(const Instruction& inst, const Index& idx) {
  return inst.opcode == Opcode::kReduce && at_current_row(idx) ? row_linear_ : nullptr;
}

// The second stage of a staged op (in the output loop or a row reduction's block), or a reduction whose index is
// the same along the whole row, emitted before the row's loop.
Value* ReductionEmitter::substitute(const Instruction* inst, Index& idx) {
  Value* v = staged_value(inst, idx);
  if (!v) v = reduce_staged_value(inst, idx);
  if (!v && inst->opcode == Opcode::kReduce && collect_ && hoist_bb_ && row_level(idx)) v = hoist(inst, idx);
  return v;
}

// --- the row cache ---
void ReductionEmitter::plan_row_cache(const std::vector<const Instruction*>& roots,
                                      const std::vector<int64_t>& dims) {
  std::vector<const Instruction*> order = computed_order(roots);
  std::unordered_set<const Instruction*> seen(order.begin(), order.end());
  std::vector<const Instruction*> reductions;
  for (auto* i : order) {
    if (!is_row_reduction(*i, dims)) continue;
    reductions.push_back(i);
    const Instruction* e = i->operand(0);
    switch (e->opcode) {  // cheap to recompute: not worth a store and a load
      case Opcode::kParameter: case Opcode::kConstant: case Opcode::kBroadcastInDim: case Opcode::kReshape:
      case Opcode::kCopy: case Opcode::kConvert: case Opcode::kIota:
        continue;
      default: break;
    }
    if (!seen.count(e) || row_cache_.count(e)) continue;
    bool read_elsewhere = false;  // by something other than a reduce
    for (auto* u : e->users()) read_elsewhere = read_elsewhere || (seen.count(u) && u->opcode != Opcode::kReduce);
    if (!read_elsewhere) continue;
    RowCache rc{i};
    rc.type = ctype(e->shape.dtype);
    if (rc.type->isIntegerTy(1) || dims.back() * (rc.type->getPrimitiveSizeInBits() / 8) > kRowCacheBytes) continue;
    auto ip = b_.saveIP();
    b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    rc.array = b_.CreateAlloca(llvm::ArrayType::get(rc.type, static_cast<uint64_t>(dims.back())));
    b_.restoreIP(ip);
    row_cache_[e] = rc;
  }
  if (!row_cache_.empty()) row_reductions_ = std::move(reductions);
}

// With a row cache: every row reduction, operands first, before the row's output loop (so the cached rows are
// stored before that loop reads them, and a reduction inside another's operand is emitted once, before it).
void ReductionEmitter::prime_row_reductions(const std::vector<Value*>& row_multi) {
  if (row_reductions_.empty()) return;
  for (auto& [e, rc] : row_cache_) rc.filled = false;
  for (auto* red : row_reductions_) {
    const Instruction* e = red->operand(0);
    auto rc = row_cache_.find(e);
    bool fill = rc != row_cache_.end() && rc->second.filler == red;
    filling_ = fill ? e : nullptr;
    Index ri = multi_index(red->shape.dims, row_multi);
    ri.linear = row_linear_;
    gen(red, ri);
    filling_ = nullptr;
    if (fill) rc->second.filled = true;
  }
  hoist_bb_ = b_.GetInsertBlock();
}

// The cached row value of inst at the output loop's own index, or nullptr.
Value* ReductionEmitter::row_cached(const Instruction* inst, const Index& idx) {
  if (row_cache_.empty() || !loop_linear_ || idx.linear != loop_linear_) return nullptr;
  auto it = row_cache_.find(inst);
  if (it == row_cache_.end() || !it->second.filled) return nullptr;
  return b_.CreateLoad(it->second.type, b_.CreateInBoundsGEP(it->second.type, it->second.array, loop_col_));
}

// --- staged row reductions ---
std::vector<std::pair<const Instruction*, std::vector<Value*>>> ReductionEmitter::plan_reduce_stages(
    const Instruction* x, int64_t block) {
  std::vector<std::pair<const Instruction*, std::vector<Value*>>> out;
  std::unordered_set<const Instruction*> seen;
  std::function<void(const Instruction*)> visit = [&](const Instruction* i) {
    if (buffers_.count(i) || !seen.insert(i).second || i->shape.dims != x->shape.dims) return;
    if (!hlo::is_elementwise(i->opcode)) return;
    int parts = two_stage_math_parts(i->opcode, ctype(i->shape.dtype));
    if (parts > 0 && i->operands.size() == 1) {
      std::vector<Value*> arrays;
      auto ip = b_.saveIP();
      b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
      for (int q = 0; q < parts; ++q) {
        auto* a = b_.CreateAlloca(llvm::ArrayType::get(b_.getFloatTy(), static_cast<uint64_t>(block)));
        a->setAlignment(llvm::Align(64));
        arrays.push_back(a);
      }
      b_.restoreIP(ip);
      out.emplace_back(i, std::move(arrays));
      return;  // its operand is computed in the staging loop
    }
    for (auto* o : i->operands) visit(o);
  };
  visit(x);
  return out;
}

// A staged op of the current row reduction block at the summing loop's element (stage 2), or nullptr.
Value* ReductionEmitter::reduce_staged_value(const Instruction* inst, Index& idx) {
  if (!red_stage_.lo || !red_stage_.k || idx.linear != red_stage_.linear) return nullptr;
  for (auto& [op, arrays] : *red_stage_.ops) {
    if (op != inst) continue;
    std::vector<Value*> parts;
    Value* at = b_.CreateSub(red_stage_.k, red_stage_.lo);
    for (Value* a : arrays)
      parts.push_back(b_.CreateLoad(b_.getFloatTy(), b_.CreateInBoundsGEP(b_.getFloatTy(), a, at)));
    return round(inst->shape.dtype, emit_float_math_stage2(b_, inst->opcode, parts));
  }
  return nullptr;
}

// --- reductions ---
// The layout in which x's elements are cheapest to read in order: that of the buffer it is (or, through
// elementwise ops on its shape, is computed from); row-major otherwise.
Layout ReductionEmitter::read_layout(const Instruction* x, int depth) const {
  if (buffers_.count(x)) return buffer_layout(x);
  if (depth > 8 || !(hlo::is_elementwise(x->opcode) || x->opcode == Opcode::kCopy)) return {};
  for (auto* o : x->operands)
    if (o->shape.dims == x->shape.dims)
      if (Layout l = read_layout(o, depth + 1); !l.empty()) return l;
  return {};
}

// One output element of a reduce: a loop over the reduced elements. Float sums (f32 accumulators for
// bf16/f16) run in blocks of 256 whose partial sums may be reassociated (vectorised lanes); block sums are added
// in double: error ~ 256 / lanes ulp instead of n ulp.
Value* ReductionEmitter::gen_reduce(const Instruction& inst, Index& idx) {
  // A reduction inside another's summing loop starts without the outer one's staging, and gives it back.
  ReduceStage outer = std::exchange(red_stage_, ReduceStage{});
  Value* v = gen_reduce_body(inst, idx);
  red_stage_ = outer;
  return v;
}
Value* ReductionEmitter::gen_reduce_body(const Instruction& inst, Index& idx) {
  const std::string r(hlo::reducer_name(hlo::reducer_of(inst)));
  const Instruction* x = inst.operand(0);
  DType d = x->shape.dtype;
  std::vector<int64_t> rdims = hlo::dimensions_of(inst);
  std::sort(rdims.begin(), rdims.end());
  const auto& xd = x->shape.dims;
  int64_t rank = static_cast<int64_t>(xd.size());
  std::vector<int64_t> rext;
  for (auto k : rdims) rext.push_back(xd[k]);
  int64_t n = detail::num_elements(rext);
  // A row reduction when the reduced dims are the minor-most in the order x is read from memory (row-major, or
  // the layout of the buffer x comes from): element k of output element o is then at o * n + k in that order.
  Layout lx = read_layout(x);
  std::vector<int64_t> xorder = minor_to_major_of(lx, xd.size());
  size_t nr = rdims.size();
  bool trailing =
      nr <= xorder.size() &&
      std::is_permutation(xorder.begin(), xorder.begin() + static_cast<std::ptrdiff_t>(nr), rdims.begin(), rdims.end());
  std::vector<int64_t> rorder(xorder.rend() - static_cast<std::ptrdiff_t>(nr), xorder.rend()),
      rorder_ext;  // major to minor
  for (auto k : rorder) rorder_ext.push_back(xd[k]);
  Value* init = gen(inst.operand(1), scalar_index());
  Value* base = nullptr;
  if (trailing) {
    // The kept dims' order in lx, as a layout of the output.
    std::vector<int64_t> kept, out_m2m;
    for (int64_t a = 0; a < rank; ++a)
      if (!std::binary_search(rdims.begin(), rdims.end(), a)) kept.push_back(a);
    for (size_t j = nr; j < xorder.size(); ++j)
      out_m2m.push_back(std::find(kept.begin(), kept.end(), xorder[j]) - kept.begin());
    base = b_.CreateMul(linear_in(idx, canonical_layout(idx.dims, out_m2m)), i64(n));
  }
  const std::vector<Value*>* outm = &multi_of(idx);  // before the loops, so that it dominates them
  // x's index at reduced element k of a trailing (row) reduction. The multi-index too, so that per-row values
  // reached from the element (the mean inside a variance) see the output's own index Values and are found in
  // the memo, not recomputed per element.
  auto row_index = [&](Value* k) {
    Index xi;
    xi.dims = xd;
    xi.linear = b_.CreateAdd(base, k);
    xi.layout = lx;
    std::vector<Value*> rm = delinearize(k, rorder_ext);
    size_t oi = 0;
    for (int64_t a = 0; a < rank; ++a) {
      auto at = std::find(rorder.begin(), rorder.end(), a);
      xi.multi.push_back(at != rorder.end() ? rm[static_cast<size_t>(at - rorder.begin())] : (*outm)[oi++]);
    }
    xi.has_multi = true;
    return xi;
  };
  auto element = [&](Value* k) {
    if (trailing) {
      Index xi = row_index(k);
      if (red_stage_.lo) red_stage_.linear = xi.linear;  // see reduce_staged_value
      Value* v = gen(x, xi);
      if (x == filling_) {  // this row's values, for the output loop (see prime_row_reductions)
        RowCache& rc = row_cache_.at(x);
        b_.CreateStore(v, b_.CreateInBoundsGEP(rc.type, rc.array, k));
      }
      return v;
    }
    std::vector<Value*> rm = delinearize(k, rext), m;
    size_t ri = 0, oi = 0;
    for (int64_t a = 0; a < rank; ++a) {
      if (ri < rdims.size() && rdims[ri] == a) m.push_back(rm[ri++]);
      else m.push_back((*outm)[oi++]);
    }
    return gen(x, multi_index(xd, m));
  };
  Value* acc;
  constexpr int64_t kBlock = 256;
  if (is_float(d) && (r == "add") && n > kBlock) {
    int64_t nb = (n + kBlock - 1) / kBlock;
    // Block sums are added in double, so the error is that of one block.
    // Transcendentals in the summed expression are staged per block, as in elementwise kernels (see Staged):
    // a first loop stores their stage-1 values, the summing loop finishes them (softmax's exp).
    std::vector<std::pair<const Instruction*, std::vector<Value*>>> staged =
        trailing ? plan_reduce_stages(x, kBlock) : decltype(staged){};
    acc = loop(i64(0), i64(nb), fconst(b_.getDoubleTy(), 0.0), [&](Value* blk, Value* total) {
      Value* lo = b_.CreateMul(blk, i64(kBlock));
      Value* hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(lo, i64(kBlock)), i64(n));
      if (!staged.empty()) {
        // The staged block is compute-bound (softmax's exp) on a row already in cache, and memory would idle
        // meanwhile: large inputs prefetch the same block of the next row. Softmax on 4096^2 f32, alternating
        // runs: 9.3-9.6 -> 8.3-8.4 ms; on 2048^2 1.20-1.21 -> 1.04-1.11 ms. (Prefetching in the output pass
        // instead was slower; see prefetch_next_rows.) Rows over 8 KiB prefetch into L2, not L1: the row, its row
        // cache and the staged arrays (a 4096-column f32 row: 16 + 16 + 3 KiB) already fill L1, which evicted
        // prefetched lines before the next row's first pass read them. Alternating runs, f32: 4096^2 6.0-6.5 ->
        // 5.7-5.9 ms, 2048x8192 6.7-6.9 -> 5.9-6.3 ms; 8192x1024 (4 KiB rows) was 5% slower with L2.
        if (trailing && prefetches_next_row(xd)) {
          bool wide = n * static_cast<int64_t>(dtype_size(x->shape.dtype)) > 8192;
          prefetch_next(xd, b_.CreateAdd(base, b_.CreateAdd(lo, i64(n))), kBlock, wide ? 2 : 3);
        }
        loop(lo, hi, nullptr, [&](Value* k, Value*) {
          Index xi = row_index(k);
          for (auto& [op, arrays] : staged) {
            std::vector<Value*> parts = emit_float_math_stage1(b_, op->opcode, gen(op->operand(0), xi));
            for (size_t q = 0; q < parts.size(); ++q)
              b_.CreateStore(parts[q], b_.CreateInBoundsGEP(b_.getFloatTy(), arrays[q], b_.CreateSub(k, lo)));
          }
          return nullptr;
        });
        red_stage_ = {&staged, lo, nullptr, nullptr};
      }
      Value* part = loop(lo, hi, identity(r, d), [&](Value* k, Value* p) {
        if (red_stage_.lo) red_stage_.k = k;
        return combine(r, d, p, element(k), true);
      });
      red_stage_ = {};
      return b_.CreateFAdd(total, b_.CreateFPExt(part, b_.getDoubleTy()));
    });
    acc = b_.CreateFPTrunc(acc, ctype(d));
  } else if (is_float(d) && (r == "max" || r == "min")) {
    // maxnum/minnum (which the vectoriser reduces in vector lanes, unlike NaN-propagating maximum/minimum)
    // plus an "any NaN" flag: the result is NaN if any element is, as maximum/minimum give; and, as nsz leaves
    // the sign of a zero result open, an "any +0" (max) or "any -0" (min) flag that sets it as maximum/minimum
    // would (a zero max is +0 iff some element is +0). The NaN flag is the largest magnitude's bits (an integer
    // max of the bits without the sign: above infinity's iff some element is a NaN), as wide as the element: an
    // i1 flag (or a mask, which LLVM narrows the same way) vectorises into lanes packed on every iteration, 5 more
    // instructions per vector on AVX2. The zero flag is computed only when the result is a zero, by a second loop
    // over the elements. The first loop is a load, a max, an and and an integer max per vector.
    bool mx = r == "max";
    llvm::Type* t = ctype(d);
    unsigned bits = t->getPrimitiveSizeInBits();
    llvm::Type* it = b_.getIntNTy(bits);
    Value* zero_bits = b_.CreateBitCast(fconst(t, mx ? 0.0 : -0.0), it);
    Value* none = llvm::ConstantInt::get(it, 0);
    auto accs = loop_n(i64(0), i64(n), {identity(r, d), none}, [&](Value* k, const std::vector<Value*>& p) {
      Value* x = element(k);
      Value* m = mx ? b_.CreateMaxNum(p[0], x) : b_.CreateMinNum(p[0], x);
      // nnan/nsz let the vectoriser reduce it; a NaN makes the lanes poison, which the select below discards.
      llvm::FastMathFlags fmf;
      fmf.setNoNaNs();
      fmf.setNoSignedZeros();
      llvm::cast<llvm::Instruction>(m)->setFastMathFlags(fmf);
      Value* magnitude = b_.CreateAnd(b_.CreateBitCast(x, it), llvm::APInt::getSignedMaxValue(bits));
      return std::vector<Value*>{m, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, p[1], magnitude)};
    });
    Value* is_zero = b_.CreateFCmpOEQ(accs[0], fconst(t, 0.0));
    Value* flag = when_rarely(is_zero, 1 << 10, [&] {
      return loop(i64(0), i64(n), none, [&](Value* k, Value* p) {
        return b_.CreateOr(p, b_.CreateSExt(b_.CreateICmpEQ(b_.CreateBitCast(element(k), it), zero_bits), it));
      });
    }, none);
    Value* zero = b_.CreateSelect(b_.CreateICmpNE(flag, none), fconst(t, mx ? 0.0 : -0.0), fconst(t, mx ? -0.0 : 0.0));
    acc = b_.CreateSelect(is_zero, zero, accs[0]);
    Value* inf_bits = b_.CreateBitCast(llvm::ConstantFP::getInfinity(t), it);
    acc = b_.CreateSelect(b_.CreateICmpSGT(accs[1], inf_bits), llvm::ConstantFP::getNaN(t), acc);
  } else {
    acc = loop(i64(0), i64(n), identity(r, d), [&](Value* k, Value* p) {
      return combine(r, d, p, element(k), is_float(d) && r == "add");
    });
  }
  return round(d, combine(r, d, init, acc, false));
}

}  // namespace jitx::cpu
