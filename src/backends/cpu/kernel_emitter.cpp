// The CPU backend's IR emitter: one LLVM function per instruction (or fusion), a loop nest over the output with
// each element computed by inlining the (fused) computation, XLA's elemental-emitter style.
//
// Every element is generated on demand by gen(instruction, index): elementwise ops at the same index, data
// movement as index math, a reduce as a loop over its reduced dimensions. So a loop fusion, an input (reduction)
// fusion and a row fusion are all "evaluate the fused computation per output element".
//
// f16/bf16 values are computed in f32. By default (excess precision, XLA's xla_allow_excess_precision, which XLA
// and JAX turn on) they stay in f32 through the whole fused computation and are rounded to their type only where
// they are written to memory (the kernel's outputs): XLA's float normalization computes bf16 ops in f32 and its
// simplify-fp-conversions pass then drops the f32 -> bf16 -> f32 round trips between them, so this is the value
// XLA computes. It is also cheaper (a round to nearest even is ~6 integer ops per value, more than most ops it
// follows) and more accurate (one rounding instead of one per op). With config().allow_excess_precision off, each
// op's result is rounded to its type, as the interpreter rounds after every op (then the two agree bit for bit).
// Excess precision also lets a multiply and the add that consumes it fuse into an FMA (see contractible).
// A convert to f16/bf16 inside a fusion is such an op too: like XLA, which drops f32 -> bf16 -> f32 pairs however
// they arose, excess precision does not round it unless it is stored.
//
// For memory-bound kernels: a row fusion computes a value that a row reduction and the output both read once
// (the row cache: softmax's exp), column reductions walk rows in memory order over tiles of accumulators, and
// outputs of 16 MiB or more are written with non-temporal (streaming) stores.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <unordered_map>
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
#include "core/errors.h"
#include "hlo/analysis/cost_analysis.h"

namespace jitx::cpu {
namespace {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

bool is_float(DType d) { return is_floating(d); }
bool is_signed(DType d) { return is_signed_integer(d); }
bool is_half(DType d) { return d == DType::float16 || d == DType::bfloat16; }

bool is_supported_reducer(const std::string& r) {
  return r == "add" || r == "mul" || r == "max" || r == "min" || r == "and" || r == "or";
}

// What gen() can compute inside a kernel (top-level or fused).
std::string inner_reason(const Instruction& i) {
  DType d = i.shape.dtype;
  if (i.shape.is_tuple) return "tuple-shaped result";
  switch (i.opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kIota: case Opcode::kBroadcastInDim:
    case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kReverse: case Opcode::kSlice: case Opcode::kCopy:
    case Opcode::kPad: case Opcode::kConcatenate: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
    case Opcode::kSelect: case Opcode::kClamp: case Opcode::kCompare: case Opcode::kConvert:
      return "";
    case Opcode::kBitcastConvert:
      return hlo::is_elementwise_bitcast(i) ? "" : "bitcast-convert between types of different widths";
    case Opcode::kReduce:
      if (i.operands.size() != 2) return "variadic reduce";
      if (!is_supported_reducer(i.attrs.get_str("reducer"))) return "reducer " + i.attrs.get_str("reducer");
      return "";
    default: break;
  }
  if (hlo::is_elementwise(i.opcode)) {
    DType in = i.operands.empty() ? d : i.operand(0)->shape.dtype;
    if (is_float(in)) {
      switch (i.opcode) {
        case Opcode::kNot: case Opcode::kPopcnt: case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
        case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
          return "bitwise op on floats";
        default: return "";
      }
    }
    switch (i.opcode) {
      case Opcode::kAbs: case Opcode::kNegate: case Opcode::kSign: case Opcode::kNot: case Opcode::kPopcnt:
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
      case Opcode::kRemainder: case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kAnd: case Opcode::kOr:
      case Opcode::kXor: case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
      case Opcode::kShiftRightLogical: case Opcode::kPower:
        return "";
      default: return fmt::format("{} on integers", hlo::opcode_name(i.opcode));
    }
  }
  return "not implemented natively";
}

// The fused computation's output shapes, and whether they all share one loop space.
std::vector<const hlo::Shape*> output_shapes(const Instruction& inst) {
  std::vector<const hlo::Shape*> out;
  if (inst.shape.is_tuple)
    for (auto& s : inst.shape.tuple_shapes) out.push_back(&s);
  else
    out.push_back(&inst.shape);
  return out;
}

// --- layouts ---------------------------------------------------------------------------------------------------
// A buffer's elements lie in the order of its shape's layout (minor_to_major). Here a layout is canonical: empty
// when memory is row-major, otherwise the dims of size > 1 from minor to major followed by the size-1 dims (which
// move no data, so two layouts order memory alike exactly when their canonical forms are equal).
using Layout = std::vector<int64_t>;
Layout canonical_layout(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major) {
  Layout l, ones;
  for (auto d : minor_to_major) (dims[d] == 1 ? ones : l).push_back(d);
  if (std::is_sorted(l.begin(), l.end(), std::greater<>())) return {};
  l.insert(l.end(), ones.begin(), ones.end());
  return l;
}
Layout layout_of(const hlo::Shape& s) { return canonical_layout(s.dims, hlo::minor_to_major(s)); }
/// The dims from minor to major (row-major spelled out when l is empty).
std::vector<int64_t> minor_to_major_of(const Layout& l, size_t rank) {
  if (!l.empty()) return l;
  std::vector<int64_t> m;
  for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// --- the emitter ---------------------------------------------------------------------------------------------
// An element's index: the multi-index and/or `linear`, its position in memory ordered by `layout` (row-major when
// empty). An index with a non-row-major layout always carries its multi-index.
struct Index {
  std::vector<int64_t> dims;
  Value* linear = nullptr;
  std::vector<Value*> multi;
  bool has_multi = false;
  Layout layout;
};

class Emitter {
 public:
  Emitter(llvm::Module& m, llvm::Function* f, bool excess_precision)
      : m_(m), ctx_(m.getContext()), b_(ctx_), f_(f), excess_precision_(excess_precision) {}

  void emit(const Instruction& inst) {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f_);
    b_.SetInsertPoint(entry);
    auto args = f_->arg_begin();
    std::vector<Value*> ptrs;
    for (size_t k = 0; k < num_ptrs_; ++k) ptrs.push_back(&*(args + k));
    Value *r0 = &*(args + num_ptrs_), *r1 = &*(args + num_ptrs_ + 1), *c0 = &*(args + num_ptrs_ + 2),
          *c1 = &*(args + num_ptrs_ + 3);
    auto outs = output_shapes(inst);
    std::vector<const Instruction*> roots;
    if (inst.opcode == Opcode::kFusion) {
      const hlo::Computation& fc = *inst.called.at(0);
      // in_place_parameter (set by output fusions): that parameter is read through the output pointer, since
      // it is the same buffer (one pointer, so noalias holds and the read-then-write per element is plain).
      int64_t in_place = inst.attrs.get_int("in_place_parameter", -1);
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
    std::vector<Layout> out_layouts;
    for (auto* o : outs) out_layouts.push_back(layout_of(*o));
    if (column_reduction(roots, out_layouts)) {
      emit_column_reduction(roots, outs, ptrs, r0, r1, c0, c1);
      b_.CreateRetVoid();
      return;
    }
    // The loop nest walks the first output in memory order (its layout): rows over its major dims, the inner loop
    // along its minor-most dim, so stores are contiguous and vectorise. order[j] is the dim at memory position j
    // (major to minor).
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
    bool streaming = plain && streaming_stores(inst, outs);
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
    if (plain) plan_row_cache(roots, dims);
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
      // One element of every root at column c; with `bases`, stored there (indexed from column `from`).
      auto element = [&](Value* c, const std::vector<Value*>* bases, Value* from) {
        Index idx = index_at(c);
        for (size_t k = 0; k < roots.size(); ++k) {
          Value* v = gen(roots[k], idx);
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
    b_.CreateRetVoid();
  }

  size_t num_ptrs_ = 0;

 private:
  // --- streaming stores ---
  // Outputs at least this large (all of a kernel's outputs together) are written with non-temporal stores: they
  // cannot stay in the last-level cache for their consumer anyway (half of a 32 MiB L3), and plain stores would
  // first read every output line from memory (write-allocate), a third more traffic for an elementwise kernel.
  static constexpr int64_t kStreamingStoreBytes = int64_t{16} << 20;

  // Only for memory-bound kernels: one that evaluates a transcendental per output element is compute-bound, and
  // its streaming stores, issued in bursts per block (stream_out), stall the computation while they drain (GELU on
  // 16M f32: 7.0 ms streaming, 5.0 ms with plain stores; softmax on 4096^2: 11.9 vs 9.5 ms; layer norm, whose
  // only transcendental is per row: 5.1 vs 6.0 ms).
  static bool streaming_stores(const Instruction& inst, const std::vector<const hlo::Shape*>& outs) {
    if (inst.attrs.get_int("in_place_parameter", -1) >= 0) return false;  // the output is read too
    std::vector<const Instruction*> computed{&inst};
    if (inst.opcode == Opcode::kFusion) {
      computed.clear();
      for (auto& i : inst.called.at(0)->instructions) computed.push_back(i.get());
    }
    for (auto* i : computed)
      if (hlo::is_transcendental(i->opcode) && i->shape.num_elements() >= outs[0]->num_elements()) return false;
    if (outs[0]->dims.empty() || outs[0]->dims.back() < 256) return false;  // rows too short for an aligned loop
    int64_t bytes = 0;
    for (auto* s : outs) bytes += s->num_elements() * static_cast<int64_t>(dtype_size(s->dtype));
    return bytes >= kStreamingStoreBytes;
  }

  static constexpr int64_t kStreamBlock = 256;  // columns computed per block before they are streamed out
  // Software prefetch, only where the hardware prefetcher falls idle: a memory-bound (streaming) kernel with row
  // reductions reads each row from memory in its first pass and again from cache in the next ones (layer norm:
  // mean, variance, output), and the hardware prefetcher, which runs a short way ahead of demand misses, leaves
  // memory idle during those passes. So each block of the row's last pass prefetches the same block of the next row
  // (16 lines at a time: the whole next row at the row's start, as before, stalled on the miss buffers). Measured
  // in-process A/B against the triad, 4096^2 f32: layer norm 4.1-4.3 ms with, 4.5-4.8 without; softmax (exp per
  // element, not streaming) was slower with it, 11.6-12.9 vs 9.9-12.0 ms. Elementwise kernels read sequentially
  // and are left to the hardware (prefetching blocks ahead made x * 2 + 1 on 16M f32 slower, 3.1 vs 2.9 ms).
  bool prefetch_next_rows(const std::vector<const Instruction*>& roots, const std::vector<int64_t>& dims,
                          int64_t cols) const {
    if (dims.size() < 2 || cols < kStreamBlock) return false;
    bool reduces = false;
    for (auto* i : computed_order(roots)) reduces = reduces || is_row_reduction(*i, dims);
    if (!reduces) return false;
    int64_t bytes = 0;  // inputs read at the output's index: large enough to come from memory
    for (auto& [inst, ptr] : buffers_)
      if (inst->shape.dims == dims && inst->opcode != Opcode::kConstant)
        bytes += inst->shape.num_elements() * static_cast<int64_t>(dtype_size(inst->shape.dtype));
    return bytes >= kStreamingStoreBytes;
  }

  // Prefetches `count` elements from linear index `next` of every input read at the output's own index.
  // Prefetching past the end of a buffer is harmless (no faults).
  void prefetch_next(const std::vector<int64_t>& dims, Value* next, int64_t count) {
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
        // read, high temporal locality (into L1), data cache
        b_.CreateCall(pf, {b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(j, i64(64))), b_.getInt32(0),
                           b_.getInt32(3), b_.getInt32(1)});
        return nullptr;
      });
    }
  }
  std::vector<Value*> stream_tmp_;               // one block per output

  // out[start, start + len) = tmp[0, len): a plain copy up to the first 64-byte boundary of out, then aligned
  // 32-byte vectors with non-temporal stores, then a plain copy of the rest. The two plain parts (under 64 bytes
  // each) are memcpy calls, not loops: as loops, LLVM vectorised each (with runtime checks and an epilogue loop),
  // or recognised them as memcpy at the cost of its loop passes, which made compile time grow once outputs were
  // large enough to stream (a 4096x4096 MLP block compiled in twice the time of a 2048x2048 one).
  void stream_out(Value* tmp, Value* out, Value* start, Value* len, DType d) {
    int64_t size = static_cast<int64_t>(dtype_size(d)), lanes = 32 / size;
    llvm::Type* st = b_.getIntNTy(static_cast<unsigned>(size * 8));  // copied as bits (halves, bools alike)
    Value* dst = b_.CreateInBoundsGEP(st, out, start);
    Value* to_line = b_.CreateAnd(b_.CreateSub(i64(0), b_.CreatePtrToInt(dst, b_.getInt64Ty())), i64(63));
    Value* head = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateUDiv(to_line, i64(size)), len);
    auto copy = [&](Value* from, Value* to) {  // elements [from, to)
      b_.CreateMemCpy(b_.CreateInBoundsGEP(st, dst, from), llvm::Align(size), b_.CreateInBoundsGEP(st, tmp, from),
                      llvm::Align(size), b_.CreateMul(b_.CreateSub(to, from), i64(size)));
    };
    copy(i64(0), head);
    auto* vt = llvm::FixedVectorType::get(st, static_cast<unsigned>(lanes));
    Value* vectors = b_.CreateUDiv(b_.CreateSub(len, head), i64(lanes));
    loop(i64(0), vectors, nullptr, [&](Value* v, Value*) {
      Value* j = b_.CreateAdd(head, b_.CreateMul(v, i64(lanes)));
      Value* x = b_.CreateAlignedLoad(vt, b_.CreateInBoundsGEP(st, tmp, j), llvm::Align(size));
      auto* store = b_.CreateAlignedStore(x, b_.CreateInBoundsGEP(st, dst, j), llvm::Align(32));
      store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                         llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
      return nullptr;
    });
    copy(b_.CreateAdd(head, b_.CreateMul(vectors, i64(lanes))), len);
  }

  // --- the row cache ---
  // A row fusion whose row reduction reads an expensive value that the output reads too (softmax: sum(exp(x - m))
  // and exp(x - m) / sum) would compute it twice per element. Instead the reduction, emitted first for each row
  // (prime_row_reductions), stores the row of values in a stack array as it goes, and the output loop loads them:
  // each element is computed once, and the array stays in L1/L2 between the two passes.
  static constexpr int64_t kRowCacheBytes = int64_t{64} << 10;  // per cached value: one row, on the stack
  struct RowCache {
    const Instruction* filler;  // the reduce whose pass stores the row
    Value* array = nullptr;
    llvm::Type* type = nullptr;
    bool filled = false;  // the current row's values are stored (emission order)
  };
  std::unordered_map<const Instruction*, RowCache> row_cache_;
  const Instruction* filling_ = nullptr;  // the instruction whose row gen_reduce stores now
  Value* loop_linear_ = nullptr;          // the output loop's linear index and column, while emitting its body
  Value* loop_col_ = nullptr;
  std::vector<const Instruction*> row_reductions_;  // trailing row reductions, operands first (when caching)

  // A reduce over the last dimension only of an operand shaped like the output: its value is one per output row.
  static bool is_row_reduction(const Instruction& i, const std::vector<int64_t>& out_dims) {
    if (i.opcode != Opcode::kReduce || i.operands.size() != 2 || out_dims.empty()) return false;
    const auto& rd = i.attrs.get_ints("dimensions");
    return i.operand(0)->shape.dims == out_dims && rd.size() == 1 &&
           rd[0] == static_cast<int64_t>(out_dims.size()) - 1;
  }

  // Post-order of what the kernel computes, from the roots: operands before users; buffers (the kernel's operands,
  // a fusion's parameters) are loaded, not computed, so the walk stops there.
  std::vector<const Instruction*> computed_order(const std::vector<const Instruction*>& roots) const {
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

  void plan_row_cache(const std::vector<const Instruction*>& roots, const std::vector<int64_t>& dims) {
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
  void prime_row_reductions(const std::vector<Value*>& row_multi) {
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

  // The output loop's current row: its linear index, and the (extent, index) of its dimensions larger than 1.
  Value* row_linear_ = nullptr;
  std::vector<std::pair<int64_t, Value*>> row_key_;
  static std::vector<std::pair<int64_t, Value*>> nonunit(const std::vector<int64_t>& dims,
                                                         const std::vector<Value*>& m) {
    std::vector<std::pair<int64_t, Value*>> out;
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k] != 1) out.emplace_back(dims[k], m[k]);
    return out;
  }
  // Whether idx is element row_linear_ of its (row-shaped) value.
  bool at_current_row(const Index& idx) const {
    if (!row_linear_) return false;
    if (idx.linear) return idx.linear == row_linear_;
    return idx.has_multi && nonunit(idx.dims, idx.multi) == row_key_;
  }

  // The cached row value of inst at the output loop's own index, or nullptr.
  Value* row_cached(const Instruction* inst, const Index& idx) {
    if (row_cache_.empty() || !loop_linear_ || idx.linear != loop_linear_) return nullptr;
    auto it = row_cache_.find(inst);
    if (it == row_cache_.end() || !it->second.filled) return nullptr;
    return b_.CreateLoad(it->second.type, b_.CreateInBoundsGEP(it->second.type, it->second.array, loop_col_));
  }

  // --- staged ops ---
  // A transcendental's dependency chain is long (logistic: ~50 cycles of latency from operand to result), and the
  // out-of-order core holds only so many waiting instructions: in one loop it overlaps a few elements' chains and
  // stalls (GELU ran at half the FMA units' throughput). An op with a two-stage lowering (two_stage_math_parts) in a
  // kernel that walks its output in blocks is computed in two loops per block of kStreamBlock columns: the first
  // computes its operand and stage 1, storing the stage-1 values in stack arrays (1 KiB each: L1); the second, the
  // kernel's usual element loop, loads them and runs stage 2. Each loop's chain is half as long. Only for ops
  // shaped like the output (one value per element of the loop) in kernels without reductions (no row-level
  // hoisting between the loops).
  //
  // Two multiplies fold into a staged logistic (f32): one of its operand by a scalar constant (stage 1 takes the
  // constant: GELU's logistic(c u) reduces u directly), and the one that is its only user when the other factor is
  // shaped like the output (stage 2 divides that factor instead of 1: x * logistic(.) is x / (1 + e)), unless per-op
  // rounding of f16/bf16 is asked for (the product would then be rounded once instead of twice).
  struct Staged {
    std::vector<Value*> arrays;  // one float array of kStreamBlock per stage-1 value
    const Instruction* arg = nullptr;    // stage 1's operand: the op's, or the factor of a folded constant multiply
    double scale = 1.0;                  // the folded constant (1: none)
    const Instruction* times = nullptr;  // the multiply folded into stage 2, or nullptr
    size_t times_other = 0;              // the multiply's other operand's index
  };
  std::vector<std::pair<const Instruction*, Staged>> staged_;  // in the computation's order (deterministic IR)
  Value* stage_lo_ = nullptr;  // the current block's first column, while its second loop is emitted
  static constexpr int kStagedInterleave = 2;  // vectors per iteration of the second loop

  void plan_stages(const std::vector<const Instruction*>& roots, const std::vector<int64_t>& dims) {
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
  void fold_multiplies(const Instruction* i, const std::vector<int64_t>& dims,
                       const std::vector<const Instruction*>& roots,
                       std::unordered_map<const Instruction*, std::vector<const Instruction*>>& users, Staged& st) {
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
    if (is_half(i->shape.dtype) && !excess_precision_) return;
    const Instruction* mul = u[0];
    size_t other = mul->operand(0) == i ? 1 : 0;
    if (mul->operand(other) == i || mul->operand(other)->shape.dims != dims) return;
    st.times = mul;
    st.times_other = other;
  }

  // Whether inst is a float scalar constant, or a broadcast of one; its value in v.
  static bool scalar_float_constant(const Instruction* inst, double& v) {
    while (inst->opcode == Opcode::kBroadcastInDim || inst->opcode == Opcode::kReshape) inst = inst->operand(0);
    if (inst->opcode != Opcode::kConstant || !inst->literal || inst->literal->size() != 1 ||
        !is_float(inst->shape.dtype))
      return false;
    v = inst->literal->get_f64(0);
    return true;
  }

  // A staged op's value at the element loop's own index (stage 2 from the stored values), or the value of the
  // multiply folded into one, or nullptr.
  Value* staged_value(const Instruction* inst, Index& idx) {
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

  // Staging inside a row reduction's blocks (gen_reduce): the two-stage ops of the summed expression x that are
  // evaluated at x's own index (reached from x through elementwise ops of x's shape), with their stack arrays.
  struct ReduceStage {
    const std::vector<std::pair<const Instruction*, std::vector<Value*>>>* ops = nullptr;
    Value* lo = nullptr;      // the block's first reduced element
    Value* k = nullptr;       // the summing loop's reduced element
    Value* linear = nullptr;  // x's linear index at k, as element() built it
  };
  ReduceStage red_stage_;

  std::vector<std::pair<const Instruction*, std::vector<Value*>>> plan_reduce_stages(const Instruction* x,
                                                                                      int64_t block) {
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
  Value* reduce_staged_value(const Instruction* inst, Index& idx) {
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

  // Reductions over leading dimensions only (a column sum), every root alike: walking each output's reduced
  // elements would stride through memory once per output. Instead each output tile of kColumnTile consecutive
  // elements keeps its accumulators in an array (16 KiB of doubles: L1), and the reduced rows are walked in memory
  // order, each updating the whole tile (long contiguous runs of vectorised loads; 256-wide tiles, 1 KiB runs 16
  // KiB apart, prefetched badly), four rows per pass (see rows_into_tile). Float sums accumulate in double.
  static constexpr int64_t kColumnTile = 2048;

  bool column_reduction(const std::vector<const Instruction*>& roots, const std::vector<Layout>& out_layouts) const {
    for (auto& l : out_layouts)
      if (!l.empty()) return false;  // the tiles are written row-major
    for (auto* r : roots) {
      if (r->opcode != Opcode::kReduce || r->operands.size() != 2) return false;
      // ... and the reduced rows read row-major (an operand whose layout puts the reduced dims minor is a row
      // reduction, see gen_reduce).
      if (!read_layout(r->operand(0)).empty()) return false;
      const auto& xd = r->operand(0)->shape.dims;
      const auto& rd = r->attrs.get_ints("dimensions");
      if (xd != roots[0]->operand(0)->shape.dims || rd != roots[0]->attrs.get_ints("dimensions")) return false;
      if (rd.empty() || rd.size() >= xd.size()) return false;
      for (size_t k = 0; k < rd.size(); ++k)
        if (rd[k] != static_cast<int64_t>(k)) return false;
    }
    return !roots.empty();
  }

  void emit_column_reduction(const std::vector<const Instruction*>& roots, const std::vector<const hlo::Shape*>& outs,
                             const std::vector<Value*>& ptrs, Value* r0, Value* r1, Value* c0, Value* c1) {
    const auto& dims = outs[0]->dims;
    int64_t cols = dims.back(), out_n = detail::num_elements(dims);
    const auto& xd = roots[0]->operand(0)->shape.dims;
    int64_t n = out_n == 0 ? 0 : detail::num_elements(xd) / out_n;
    struct Acc {
      const Instruction* root;
      std::string r;
      DType d;
      bool wide;  // a float sum, accumulated in double
      llvm::Type* type;
      Value* array;
      Value* init;
    };
    std::vector<Acc> accs;
    auto ip = b_.saveIP();
    b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    for (auto* root : roots) {
      Acc a{root, root->attrs.get_str("reducer"), root->operand(0)->shape.dtype, false, nullptr, nullptr, nullptr};
      a.wide = is_float(a.d) && a.r == "add";
      a.type = a.wide ? b_.getDoubleTy() : ctype(a.d);
      if (a.type->isIntegerTy(1)) a.type = b_.getInt8Ty();  // bool accumulators live in memory as bytes
      a.array = b_.CreateAlloca(llvm::ArrayType::get(a.type, kColumnTile));
      accs.push_back(a);
    }
    b_.restoreIP(ip);
    for (auto& a : accs) a.init = gen(a.root->operand(1), scalar_index());
    auto slot = [&](Acc& a, Value* j) { return b_.CreateInBoundsGEP(a.type, a.array, j); };
    auto get = [&](Acc& a, Value* j) {
      Value* v = b_.CreateLoad(a.type, slot(a, j));
      return a.type == b_.getInt8Ty() && a.d == DType::bool_ ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
    };
    auto put = [&](Acc& a, Value* j, Value* v) {
      if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, b_.getInt8Ty());
      b_.CreateStore(v, slot(a, j));
    };
    loop(r0, r1, nullptr, [&](Value* r, Value*) {
      Value* width = b_.CreateSub(c1, c0);
      Value* tiles = b_.CreateUDiv(b_.CreateAdd(width, i64(kColumnTile - 1)), i64(kColumnTile));
      loop(i64(0), tiles, nullptr, [&](Value* t, Value*) {
        Value* lo = b_.CreateAdd(c0, b_.CreateMul(t, i64(kColumnTile)));
        Value* len = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, i64(kColumnTile), b_.CreateSub(c1, lo));
        Value* base = b_.CreateAdd(b_.CreateMul(r, i64(cols)), lo);  // the tile's first output element
        loop(i64(0), len, nullptr, [&](Value* j, Value*) {
          for (auto& a : accs) put(a, j, a.wide ? fconst(b_.getDoubleTy(), 0.0) : identity(a.r, a.d));
          return nullptr;
        });
        // Reduced rows k0 .. k0 + count - 1 into the tile: their elements are combined first (a sum in double),
        // then into the accumulator, so each accumulator is loaded and stored once per `count` rows and `count`
        // rows are read as parallel streams.
        auto rows_into_tile = [&](Value* k0, int64_t count) {
          std::vector<Value*> xbase;
          for (int64_t q = 0; q < count; ++q)
            xbase.push_back(b_.CreateAdd(b_.CreateMul(b_.CreateAdd(k0, i64(q)), i64(out_n)), base));
          loop(i64(0), len, nullptr, [&](Value* j, Value*) {
            std::vector<Index> xi(count);
            for (int64_t q = 0; q < count; ++q) {
              xi[q].dims = xd;
              xi[q].linear = b_.CreateAdd(xbase[q], j);
            }
            for (auto& a : accs) {
              Value* part = nullptr;
              for (int64_t q = 0; q < count; ++q) {
                Value* x = gen(a.root->operand(0), xi[q]);
                if (a.wide) x = b_.CreateFPExt(x, b_.getDoubleTy());
                part = !part ? x : a.wide ? b_.CreateFAdd(part, x) : combine(a.r, a.d, part, x, false);
              }
              Value* cur = get(a, j);
              put(a, j, a.wide ? b_.CreateFAdd(cur, part) : combine(a.r, a.d, cur, part, false));
            }
            return nullptr;
          });
        };
        constexpr int64_t kRowsPerPass = 4;
        loop(i64(0), i64(n / kRowsPerPass), nullptr, [&](Value* k, Value*) {
          rows_into_tile(b_.CreateMul(k, i64(kRowsPerPass)), kRowsPerPass);
          return nullptr;
        });
        loop(i64(n / kRowsPerPass * kRowsPerPass), i64(n), nullptr, [&](Value* k, Value*) {
          rows_into_tile(k, 1);
          return nullptr;
        });
        loop(i64(0), len, nullptr, [&](Value* j, Value*) {
          for (size_t k = 0; k < accs.size(); ++k) {
            Acc& a = accs[k];
            Value* v = get(a, j);
            if (a.wide) v = b_.CreateFPTrunc(v, ctype(a.d));
            store(ptrs[k], b_.CreateAdd(base, j), outs[k]->dtype, round(a.d, combine(a.r, a.d, a.init, v, false)));
          }
          return nullptr;
        });
        return nullptr;
      });
      return nullptr;
    });
  }

  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* f_;
  bool excess_precision_;  // f16/bf16 values are rounded only when stored (see the file comment)
  std::unordered_map<const Instruction*, Value*> buffers_;
  // The layouts of the kernel's operand buffers (those of the instruction's operands: a fusion's parameters may
  // carry a stale copy); buffers not listed (constants) are row-major.
  std::unordered_map<const Instruction*, Layout> buffer_layouts_;
  Layout buffer_layout(const Instruction* i) const {
    auto it = buffer_layouts_.find(i);
    return it == buffer_layouts_.end() ? Layout{} : it->second;
  }
  std::map<std::pair<const Instruction*, std::vector<Value*>>, Value*> memo_;
  // Row-level hoisting: the block before the loop along a row, the blocks inside that loop, and what is known there.
  llvm::BasicBlock* hoist_bb_ = nullptr;
  std::unordered_set<llvm::BasicBlock*> inner_blocks_;
  bool collect_ = false;
  std::map<std::pair<const Instruction*, std::vector<Value*>>, Value*> row_memo_;

  bool row_level(const Index& idx) {
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
  Value* hoist(const Instruction* inst, Index& idx) {
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

  Value* i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  // A counted loop [lo, hi) with one optional loop-carried value; returns its final value.
  template <class F>
  Value* loop(Value* lo, Value* hi, Value* acc0, F body, int interleave = 1) {
    std::vector<Value*> accs0;
    if (acc0) accs0.push_back(acc0);
    auto r = loop_n(lo, hi, accs0, [&](Value* i, const std::vector<Value*>& acc) {
      Value* next = body(i, acc.empty() ? nullptr : acc[0]);
      return acc.empty() ? std::vector<Value*>{} : std::vector<Value*>{next};
    }, interleave);
    return r.empty() ? nullptr : r[0];
  }

  // A counted loop [lo, hi) carrying several values: body(i, current) returns the next ones; returns the last.
  template <class F>
  std::vector<Value*> loop_n(Value* lo, Value* hi, const std::vector<Value*>& accs0, F body, int interleave = 1) {
    auto saved = memo_;  // values made inside the loop do not dominate what follows it
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "loop", f_);
    auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", f_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", f_);
    if (collect_) inner_blocks_.insert({header, bodyb, exit});
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2);
    std::vector<Value*> acc;
    for (Value* a0 : accs0) {
      llvm::PHINode* phi = b_.CreatePHI(a0->getType(), 2);
      phi->addIncoming(a0, pre);
      acc.push_back(phi);
    }
    i->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(i, hi), bodyb, exit);
    b_.SetInsertPoint(bodyb);
    std::vector<Value*> next = body(i, acc);
    Value* inext = b_.CreateAdd(i, i64(1), "", true, true);
    i->addIncoming(inext, b_.GetInsertBlock());
    for (size_t k = 0; k < acc.size(); ++k) llvm::cast<llvm::PHINode>(acc[k])->addIncoming(next[k], b_.GetInsertBlock());
    auto* latch = b_.CreateBr(header);
    if (interleave > 1) {
      // llvm.loop metadata asking the vectoriser to interleave (its cost model picks 1 for long bodies).
      llvm::Metadata* count[] = {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                                 llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<uint32_t>(interleave)))};
      llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(ctx_, count)};
      auto* md = llvm::MDNode::getDistinct(ctx_, ops);
      md->replaceOperandWith(0, md);
      latch->setMetadata(llvm::LLVMContext::MD_loop, md);
    }
    b_.SetInsertPoint(exit);
    memo_ = std::move(saved);
    return acc;
  }

  std::vector<Value*> delinearize(Value* lin, const std::vector<int64_t>& dims) {
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
  Value* linear_in(Index& idx, const Layout& layout) {
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
  Value* linear_of(Index& idx) { return linear_in(idx, {}); }  // row-major
  const std::vector<Value*>& multi_of(Index& idx) {
    if (!idx.has_multi) {
      JITX_ASSERT(idx.layout.empty(), "cpu emitter: an index ordered by a layout without its multi-index");
      idx.multi = delinearize(idx.linear, idx.dims);
      idx.has_multi = true;
    }
    return idx.multi;
  }
  Index multi_index(std::vector<int64_t> dims, std::vector<Value*> multi) {
    Index i;
    i.dims = std::move(dims);
    i.multi = std::move(multi);
    i.has_multi = true;
    return i;
  }
  Index scalar_index() {
    Index i;
    i.linear = i64(0);
    i.has_multi = true;
    return i;
  }

  // --- types and memory ---
  llvm::Type* ctype(DType d) {
    if (d == DType::bool_) return b_.getInt1Ty();
    if (d == DType::float64) return b_.getDoubleTy();
    if (is_float(d)) return b_.getFloatTy();
    return b_.getIntNTy(static_cast<unsigned>(dtype_size(d) * 8));
  }
  llvm::Type* stype(DType d) {
    switch (d) {
      case DType::bool_: return b_.getInt8Ty();
      case DType::float16: return b_.getHalfTy();
      case DType::bfloat16: return b_.getInt16Ty();
      case DType::float32: return b_.getFloatTy();
      case DType::float64: return b_.getDoubleTy();
      default: return b_.getIntNTy(static_cast<unsigned>(dtype_size(d) * 8));
    }
  }
  Value* from_storage(DType d, Value* v) {
    switch (d) {
      case DType::bool_: return b_.CreateICmpNE(v, b_.getInt8(0));
      case DType::float16: return b_.CreateFPExt(v, b_.getFloatTy());
      case DType::bfloat16:
        return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
      default: return v;
    }
  }
  Value* to_storage(DType d, Value* v) {
    switch (d) {
      case DType::bool_: return b_.CreateZExt(v, b_.getInt8Ty());
      case DType::float16: return b_.CreateFPTrunc(v, b_.getHalfTy());
      case DType::bfloat16: {  // round to nearest even; NaNs stay quiet NaNs
        Value* u = b_.CreateBitCast(v, b_.getInt32Ty());
        Value* lsb = b_.CreateAnd(b_.CreateLShr(u, 16), 1);
        Value* r = b_.CreateLShr(b_.CreateAdd(u, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
        Value* nan = b_.CreateOr(b_.CreateLShr(u, 16), 0x40);
        return b_.CreateTrunc(b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, r), b_.getInt16Ty());
      }
      default: return v;
    }
  }
  // An op's result of type d: rounded to d only without excess precision (with it, f16/bf16 values keep their f32
  // precision until store() rounds them). Values kept in the kernel's own stack arrays (the row cache, column
  // accumulators) are f32 and unrounded alike: only what is written to a buffer is rounded.
  Value* round(DType d, Value* v) { return is_half(d) && !excess_precision_ ? from_storage(d, to_storage(d, v)) : v; }
  Value* load(Value* ptr, Value* linear, DType d) {
    Value* p = b_.CreateInBoundsGEP(stype(d), ptr, linear);
    return from_storage(d, b_.CreateLoad(stype(d), p));
  }
  void store(Value* ptr, Value* linear, DType d, Value* v) {
    Value* p = b_.CreateInBoundsGEP(stype(d), ptr, linear);
    b_.CreateStore(to_storage(d, v), p);
  }
  Value* constant_global(const Instruction& c) {
    const detail::Literal& lit = *c.literal;
    llvm::StringRef raw(static_cast<const char*>(lit.data()), lit.nbytes());
    llvm::Constant* data = llvm::ConstantDataArray::getRaw(raw, static_cast<uint64_t>(lit.size()), stype(lit.dtype));
    auto* g = new llvm::GlobalVariable(m_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data, "const");
    g->setAlignment(llvm::Align(64));
    return g;
  }
  Value* fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

  // --- element generation ---
  Value* gen(const Instruction* inst, Index idx) {
    auto bit = buffers_.find(inst);
    if (bit != buffers_.end()) return load(bit->second, linear_in(idx, buffer_layout(inst)), inst->shape.dtype);
    if (Value* cached = row_cached(inst, idx)) return cached;
    std::vector<Value*> key{idx.linear};
    if (idx.has_multi) key.insert(key.end(), idx.multi.begin(), idx.multi.end());
    // A reduce at the current row is one value however its index was reached (through a reshape: linear only;
    // through a broadcast: the row's multi-index): one key, so that it is emitted once per row.
    if (inst->opcode == Opcode::kReduce && at_current_row(idx)) key = {row_linear_};
    auto mk = std::make_pair(inst, key);
    auto it = memo_.find(mk);
    if (it != memo_.end()) return it->second;
    Value* v = staged_value(inst, idx);
    if (!v) v = reduce_staged_value(inst, idx);
    if (!v)
      v = inst->opcode == Opcode::kReduce && collect_ && hoist_bb_ && row_level(idx) ? hoist(inst, idx)
                                                                                   : gen_uncached(*inst, idx);
    memo_[mk] = v;
    return v;
  }

  Value* operand_at(const Instruction& inst, size_t k, Index& idx) {
    const Instruction* o = inst.operand(k);
    if (o->shape.dims.empty() && !idx.dims.empty()) return gen(o, scalar_index());
    return gen(o, idx);
  }

  Value* scalar_i64(const Instruction* o) {
    Value* v = gen(o, scalar_index());
    return b_.CreateIntCast(v, b_.getInt64Ty(), is_signed(o->shape.dtype));
  }
  Value* clamp_i64(Value* v, int64_t lo, int64_t hi) {
    v = b_.CreateSelect(b_.CreateICmpSLT(v, i64(lo)), i64(lo), v);
    return b_.CreateSelect(b_.CreateICmpSGT(v, i64(hi)), i64(hi), v);
  }

  Value* gen_uncached(const Instruction& inst, Index& idx) {
    const auto& a = inst.attrs;
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
        Value* m = multi_of(idx).at(a.get_int("iota_dimension"));
        if (is_float(d)) return round(d, b_.CreateUIToFP(m, ctype(d)));
        if (d == DType::bool_) return b_.CreateICmpNE(m, i64(0));
        return b_.CreateIntCast(m, ctype(d), false);
      }
      case Opcode::kBroadcastInDim: {
        const auto& bd = a.get_ints("broadcast_dimensions");
        const auto& od = inst.operand(0)->shape.dims;
        std::vector<Value*> m;
        for (size_t j = 0; j < bd.size(); ++j) m.push_back(od[j] == 1 ? i64(0) : multi_of(idx)[bd[j]]);
        return gen(inst.operand(0), multi_index(od, m));
      }
      case Opcode::kReshape: {
        Index o;
        o.dims = inst.operand(0)->shape.dims;
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
        const auto& perm = a.get_ints("permutation");
        std::vector<Value*> m(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) m[perm[i]] = multi_of(idx)[i];
        return gen(inst.operand(0), multi_index(inst.operand(0)->shape.dims, m));
      }
      case Opcode::kSlice: {
        const auto& st = a.get_ints("start_indices");
        const auto& sd = a.get_ints("strides");
        std::vector<Value*> m;
        for (size_t i = 0; i < st.size(); ++i)
          m.push_back(b_.CreateAdd(b_.CreateMul(multi_of(idx)[i], i64(sd[i])), i64(st[i])));
        return gen(inst.operand(0), multi_index(inst.operand(0)->shape.dims, m));
      }
      case Opcode::kReverse: {
        std::vector<Value*> m = multi_of(idx);
        for (auto k : a.get_ints("dimensions")) m[k] = b_.CreateSub(i64(idx.dims[k] - 1), m[k]);
        return gen(inst.operand(0), multi_index(idx.dims, m));
      }
      case Opcode::kPad: {
        const auto& lo = a.get_ints("edge_padding_low");
        const auto& in = a.get_ints("interior_padding");
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
        int64_t dim = a.get_int("dimension");
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

  Value* clamp_start(const Instruction* o, int64_t hi) {
    Value* v = gen(o, scalar_index());
    if (is_signed(o->shape.dtype)) v = b_.CreateSExt(v, b_.getInt64Ty());
    else {  // unsigned: values above INT64_MAX clamp to the top
      v = b_.CreateZExt(v, b_.getInt64Ty());
      if (dtype_size(o->shape.dtype) == 8) v = b_.CreateSelect(b_.CreateICmpSLT(v, i64(0)), i64(INT64_MAX), v);
    }
    return clamp_i64(v, 0, hi);
  }

  // --- reductions ---
  Value* identity(const std::string& r, DType d) {
    llvm::Type* t = ctype(d);
    if (is_float(d)) {
      if (r == "add") return fconst(t, 0.0);
      if (r == "mul") return fconst(t, 1.0);
      return fconst(t, r == "max" ? -INFINITY : INFINITY);
    }
    unsigned bits = t->getIntegerBitWidth();
    if (r == "add" || r == "or") return llvm::ConstantInt::get(t, 0);
    if (r == "mul") return llvm::ConstantInt::get(t, 1);
    if (r == "and") return llvm::ConstantInt::getAllOnesValue(t);
    bool sg = is_signed(d);
    if (r == "max") return llvm::ConstantInt::get(t->getContext(), sg ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt(bits, 0));
    return llvm::ConstantInt::get(t->getContext(), sg ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits));
  }
  Value* combine(const std::string& r, DType d, Value* acc, Value* x, bool reassoc) {
    if (is_float(d)) {
      Value* v;
      if (r == "add") v = b_.CreateFAdd(acc, x);
      else if (r == "mul") v = b_.CreateFMul(acc, x);
      else if (r == "max") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, acc, x);
      else return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, acc, x);
      if (reassoc) llvm::cast<llvm::Instruction>(v)->setHasAllowReassoc(true);
      return v;
    }
    bool sg = is_signed(d);
    if (r == "add") return d == DType::bool_ ? b_.CreateOr(acc, x) : b_.CreateAdd(acc, x);
    if (r == "mul") return d == DType::bool_ ? b_.CreateAnd(acc, x) : b_.CreateMul(acc, x);
    if (r == "and") return b_.CreateAnd(acc, x);
    if (r == "or") return b_.CreateOr(acc, x);
    if (r == "max") return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, acc, x);
    return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, acc, x);
  }

  // The layout in which x's elements are cheapest to read in order: that of the buffer it is (or, through
  // elementwise ops on its shape, is computed from); row-major otherwise.
  Layout read_layout(const Instruction* x, int depth = 0) const {
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
  Value* gen_reduce(const Instruction& inst, Index& idx) {
    // A reduction inside another's summing loop starts without the outer one's staging, and gives it back.
    ReduceStage outer = std::exchange(red_stage_, ReduceStage{});
    Value* v = gen_reduce_body(inst, idx);
    red_stage_ = outer;
    return v;
  }
  Value* gen_reduce_body(const Instruction& inst, Index& idx) {
    const std::string& r = inst.attrs.get_str("reducer");
    const Instruction* x = inst.operand(0);
    DType d = x->shape.dtype;
    std::vector<int64_t> rdims = inst.attrs.get_ints("dimensions");
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
    bool trailing = nr <= xorder.size() && std::is_permutation(xorder.begin(), xorder.begin() + static_cast<std::ptrdiff_t>(nr), rdims.begin(), rdims.end());
    std::vector<int64_t> rorder(xorder.rend() - static_cast<std::ptrdiff_t>(nr), xorder.rend()), rorder_ext;  // major to minor
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
      // would (a zero max is +0 iff some element is +0).
      bool mx = r == "max";
      llvm::Type* t = ctype(d);
      llvm::Type* it = b_.getIntNTy(t->getPrimitiveSizeInBits());
      Value* zero_bits = b_.CreateBitCast(fconst(t, mx ? 0.0 : -0.0), it);
      auto accs = loop_n(i64(0), i64(n), {identity(r, d), b_.getFalse(), b_.getFalse()},
                         [&](Value* k, const std::vector<Value*>& p) {
        Value* x = element(k);
        Value* m = mx ? b_.CreateMaxNum(p[0], x) : b_.CreateMinNum(p[0], x);
        // nnan/nsz let the vectoriser reduce it; a NaN makes the lanes poison, which the select below discards.
        llvm::FastMathFlags fmf;
        fmf.setNoNaNs();
        fmf.setNoSignedZeros();
        llvm::cast<llvm::Instruction>(m)->setFastMathFlags(fmf);
        Value* zero = b_.CreateICmpEQ(b_.CreateBitCast(x, it), zero_bits);
        return std::vector<Value*>{m, b_.CreateOr(p[1], b_.CreateFCmpUNO(x, x)), b_.CreateOr(p[2], zero)};
      });
      Value* zero = b_.CreateSelect(accs[2], fconst(t, mx ? 0.0 : -0.0), fconst(t, mx ? -0.0 : 0.0));
      acc = b_.CreateSelect(b_.CreateFCmpOEQ(accs[0], fconst(t, 0.0)), zero, accs[0]);
      acc = b_.CreateSelect(accs[1], llvm::ConstantFP::getNaN(t), acc);
    } else {
      acc = loop(i64(0), i64(n), identity(r, d), [&](Value* k, Value* p) {
        return combine(r, d, p, element(k), is_float(d) && r == "add");
      });
    }
    return round(d, combine(r, d, init, acc, false));
  }

  // --- elementwise ---
  Value* convert(Value* v, DType from, DType to) {
    if (from == to) return v;
    llvm::Type* t = ctype(to);
    if (to == DType::bool_) return is_float(from) ? b_.CreateFCmpUNE(v, fconst(v->getType(), 0.0)) : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    if (is_float(to)) {
      // To f16/bf16 (computed in f32: t is float) from f64 or an integer this rounds to f32 and then to the half
      // type, as XLA converts (and as the interpreter does).
      Value* r;
      if (is_float(from)) r = b_.CreateFPCast(v, t);
      else if (is_signed(from)) r = b_.CreateSIToFP(v, t);
      else r = b_.CreateUIToFP(v, t);
      return round(to, r);
    }
    if (is_float(from)) {
      auto id = is_signed(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
      return b_.CreateIntrinsic(id, {t, v->getType()}, {v});
    }
    return b_.CreateIntCast(v, t, is_signed(from));
  }

  Value* elementwise(const Instruction& inst, std::vector<Value*>& ops) {
    Opcode op = inst.opcode;
    DType d = inst.shape.dtype;
    DType in = inst.operand(0)->shape.dtype;
    if (op == Opcode::kConvert) return convert(ops[0], in, d);
    if (op == Opcode::kSelect) return b_.CreateSelect(ops[0], ops[1], ops[2]);
    if (op == Opcode::kCompare) return compare(inst.attrs.get_str("direction"), in, ops[0], ops[1]);
    if (op == Opcode::kClamp) {
      DType cd = inst.operand(1)->shape.dtype;
      Value *lo = ops[0], *x = ops[1], *hi = ops[2];
      if (is_float(cd)) {  // XLA's min(max(x, lo), hi): NaN from any operand, -0 below +0
        Value* m = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, lo);
        return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, m, hi);
      }
      Value* m = b_.CreateSelect(lt(cd, x, lo), lo, x);  // std::max(x, lo)
      return b_.CreateSelect(lt(cd, hi, m), hi, m);       // std::min(m, hi)
    }
    if (is_float(in)) return round(d, float_op(op, ops));
    return int_op(op, in, ops);
  }

  Value* lt(DType d, Value* x, Value* y) {
    if (is_float(d)) return b_.CreateFCmpOLT(x, y);
    return is_signed(d) ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
  }

  Value* compare(const std::string& dir, DType d, Value* x, Value* y) {
    using P = llvm::CmpInst::Predicate;
    P p;
    if (is_float(d)) {
      p = dir == "EQ" ? P::FCMP_OEQ : dir == "NE" ? P::FCMP_UNE : dir == "LT" ? P::FCMP_OLT : dir == "LE" ? P::FCMP_OLE
        : dir == "GT" ? P::FCMP_OGT : P::FCMP_OGE;
      return b_.CreateFCmp(p, x, y);
    }
    bool sg = is_signed(d);
    p = dir == "EQ" ? P::ICMP_EQ : dir == "NE" ? P::ICMP_NE : dir == "LT" ? (sg ? P::ICMP_SLT : P::ICMP_ULT)
      : dir == "LE" ? (sg ? P::ICMP_SLE : P::ICMP_ULE) : dir == "GT" ? (sg ? P::ICMP_SGT : P::ICMP_UGT)
      : (sg ? P::ICMP_SGE : P::ICMP_UGE);
    return b_.CreateICmp(p, x, y);
  }

  // With excess precision allowed (the default), a fused multiply and the add or subtract that consumes it may be
  // one fused multiply-add: one rounding instead of two, as XLA:CPU compiles every kernel ("always allow FMA
  // fusion: this increases precision"). Off, every op rounds, as the interpreter does.
  Value* contractible(Value* v) {
    if (auto* i = llvm::dyn_cast<llvm::Instruction>(v); i && excess_precision_) i->setHasAllowContract(true);
    return v;
  }

  Value* float_op(Opcode op, std::vector<Value*>& o) {
    Value* x = o[0];
    llvm::Type* t = x->getType();
    auto intr = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
    switch (op) {
      case Opcode::kAbs: return intr(llvm::Intrinsic::fabs);
      case Opcode::kNegate: return b_.CreateFNeg(x);
      case Opcode::kSign: {
        Value* s = b_.CreateSelect(b_.CreateFCmpOGT(x, fconst(t, 0)), fconst(t, 1),
                                   b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(t, 0)), fconst(t, -1), x));
        return s;  // NaN and +-0 map to themselves
      }
      case Opcode::kFloor: return intr(llvm::Intrinsic::floor);
      case Opcode::kCeil: return intr(llvm::Intrinsic::ceil);
      case Opcode::kRoundNearestAfz: return intr(llvm::Intrinsic::round);
      case Opcode::kRoundNearestEven: return intr(llvm::Intrinsic::roundeven);
      case Opcode::kSqrt: return intr(llvm::Intrinsic::sqrt);
      case Opcode::kRsqrt: return b_.CreateFDiv(fconst(t, 1.0), intr(llvm::Intrinsic::sqrt));
      case Opcode::kIsFinite: return b_.CreateFCmpOLT(intr(llvm::Intrinsic::fabs), fconst(t, INFINITY));
      case Opcode::kAdd: return contractible(b_.CreateFAdd(x, o[1]));
      case Opcode::kSubtract: return contractible(b_.CreateFSub(x, o[1]));
      case Opcode::kMultiply: return contractible(b_.CreateFMul(x, o[1]));
      case Opcode::kDivide: return b_.CreateFDiv(x, o[1]);
      case Opcode::kMaximum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, o[1]);
      case Opcode::kMinimum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, o[1]);
      default: break;
    }
    Value* r = emit_float_math(b_, op, x, o.size() > 1 ? o[1] : nullptr);
    JITX_ASSERT(r, "cpu emitter: no float lowering for {}", hlo::opcode_name(op));
    return r;
  }

  // Integer ops with XLA's semantics (interpreter/evaluator.cpp binary_int): division by zero, overflow, wide shifts.
  Value* int_op(Opcode op, DType d, std::vector<Value*>& o) {
    Value* x = o[0];
    llvm::Type* t = x->getType();
    unsigned bits = t->getIntegerBitWidth();
    bool sg = is_signed(d), is_b = d == DType::bool_;
    auto C = [&](int64_t v) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true); };
    switch (op) {
      case Opcode::kNegate: return b_.CreateNeg(x);
      case Opcode::kAbs: return sg ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse()) : x;
      case Opcode::kSign:
        if (!sg) return b_.CreateZExt(b_.CreateICmpNE(x, C(0)), t);
        return b_.CreateSub(b_.CreateZExt(b_.CreateICmpSGT(x, C(0)), t), b_.CreateZExt(b_.CreateICmpSLT(x, C(0)), t));
      case Opcode::kNot: return b_.CreateNot(x);
      case Opcode::kPopcnt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
      default: break;
    }
    Value* y = o[1];
    Value* zero = C(0);
    switch (op) {
      case Opcode::kAdd: return is_b ? b_.CreateOr(x, y) : b_.CreateAdd(x, y);
      case Opcode::kSubtract: return b_.CreateSub(x, y);
      case Opcode::kMultiply: return is_b ? b_.CreateAnd(x, y) : b_.CreateMul(x, y);
      case Opcode::kAnd: return b_.CreateAnd(x, y);
      case Opcode::kOr: return b_.CreateOr(x, y);
      case Opcode::kXor: return b_.CreateXor(x, y);
      case Opcode::kMaximum:
        return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
      case Opcode::kMinimum:
        return b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
      case Opcode::kDivide:
      case Opcode::kRemainder: {
        bool div = op == Opcode::kDivide;
        Value* yz = b_.CreateICmpEQ(y, zero);
        if (is_b) return div ? b_.CreateOr(b_.CreateNot(y), x) : b_.CreateAnd(x, b_.CreateNot(y));
        if (sg) {
          Value* ovf = b_.CreateAnd(b_.CreateICmpEQ(x, llvm::ConstantInt::get(t->getContext(), llvm::APInt::getSignedMinValue(bits))),
                                    b_.CreateICmpEQ(y, C(-1)));
          Value* safe = b_.CreateSelect(b_.CreateOr(yz, ovf), C(1), y);
          Value* q = div ? b_.CreateSDiv(x, safe) : b_.CreateSRem(x, safe);
          q = b_.CreateSelect(ovf, div ? x : zero, q);
          return b_.CreateSelect(yz, div ? C(-1) : x, q);
        }
        Value* safe = b_.CreateSelect(yz, C(1), y);
        Value* q = div ? b_.CreateUDiv(x, safe) : b_.CreateURem(x, safe);
        return b_.CreateSelect(yz, div ? C(-1) : x, q);
      }
      case Opcode::kShiftLeft:
      case Opcode::kShiftRightLogical: {
        Value* big = b_.CreateICmpUGE(y, C(bits));
        Value* safe = b_.CreateSelect(big, zero, y);
        Value* s = op == Opcode::kShiftLeft ? b_.CreateShl(x, safe) : b_.CreateLShr(x, safe);
        return b_.CreateSelect(big, zero, s);
      }
      case Opcode::kShiftRightArithmetic:
        return b_.CreateAShr(x, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, y, C(bits - 1)));
      case Opcode::kPower: {
        // Square-and-multiply over all `bits` exponent bits (straight-line, so it vectorises), wrapping as the
        // interpreter's 64-bit loop does once truncated; a negative signed exponent gives 1, +-1 or 0.
        Value* r = C(1);
        Value* base = x;
        for (unsigned k = 0; k < bits; ++k) {
          Value* bit = b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(y, C(k)), C(1)), zero);
          r = b_.CreateSelect(bit, b_.CreateMul(r, base), r);
          if (k + 1 < bits) base = b_.CreateMul(base, base);
        }
        if (!sg) return r;
        Value* odd = b_.CreateICmpNE(b_.CreateAnd(y, C(1)), zero);
        Value* neg_pow = b_.CreateSelect(b_.CreateICmpEQ(x, C(1)), C(1),
                                         b_.CreateSelect(b_.CreateICmpEQ(x, C(-1)), b_.CreateSelect(odd, C(-1), C(1)), zero));
        return b_.CreateSelect(b_.CreateICmpSLT(y, zero), neg_pow, r);
      }
      default: break;
    }
    JITX_ASSERT(false, "cpu emitter: integer {}", hlo::opcode_name(op));
    return nullptr;
  }
};

std::string computation_reason(const hlo::Computation& c) {
  for (auto& i : c.instructions) {
    if (i.get() == c.root && i->opcode == Opcode::kTuple) continue;
    std::string r = inner_reason(*i);
    if (!r.empty()) return fmt::format("%{} ({}): {}", i->name, hlo::opcode_name(i->opcode), r);
  }
  return "";
}
}  // namespace

std::string unsupported_reason(const Instruction& inst) {
  if (inst.opcode == Opcode::kFusion) {
    const hlo::Computation& fc = *inst.called.at(0);
    auto outs = output_shapes(inst);
    for (auto* s : outs) {
      if (s->is_tuple) return "nested tuple output";
      if (s->dims != outs[0]->dims) return "multi-output fusion with different output shapes";
    }
    if (fc.root->opcode == Opcode::kTuple && !inst.shape.is_tuple) return "tuple root";
    return computation_reason(fc);
  }
  for (auto* o : inst.operands)
    if (o->shape.is_tuple) return "tuple operand";
  return inner_reason(inst);
}

LoopSpace loop_space(const Instruction& inst) {
  const hlo::Shape& out = *output_shapes(inst)[0];
  const auto& dims = out.dims;
  LoopSpace s;
  // Rows and columns of the output in memory order (see Emitter::emit): columns along its minor-most dim.
  s.cols = dims.empty() ? 1 : dims[static_cast<size_t>(minor_to_major_of(layout_of(out), dims.size()).at(0))];
  s.rows = dims.empty() || s.cols == 0 ? (dims.empty() ? 1 : 0) : detail::num_elements(dims) / s.cols;
  int64_t out_n = std::max<int64_t>(1, s.rows * s.cols);
  int64_t in_n = 0;
  // A slice reads only what it writes, however large its operand (a scan's xs sliced per step stays one thread).
  bool slicing = inst.opcode == Opcode::kSlice || inst.opcode == Opcode::kDynamicSlice;
  for (auto* o : inst.operands) in_n = std::max(in_n, o->shape.is_tuple || slicing ? 0 : o->shape.num_elements());
  s.work_per_point = std::max<int64_t>(1, in_n / out_n);
  return s;
}

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
    Emitter e(m, body, allow_excess_precision);
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
