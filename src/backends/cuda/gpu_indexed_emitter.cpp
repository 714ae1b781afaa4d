// The CUDA backend's dot and scatter kernels (see gpu_emitter_base.h): a tiled dot through shared memory for any
// dot_general (where cuBLASLt is missing or has no matmul for it), and scatters whose threads own disjoint output
// positions (deterministic, no atomics).
#include <algorithm>

#include "backends/cuda/gpu_emitter.h"
#include "backends/cuda/gpu_emitter_base.h"

namespace jitx::cuda {
namespace gpu_detail {
namespace {

class GpuIndexedEmitter final : public GpuEmitterBase {
 public:
  using GpuEmitterBase::GpuEmitterBase;

  LaunchPlan emit(const Instruction& inst) {
    LaunchPlan plan;
    begin(inst, plan);
    if (inst.opcode == Opcode::kDot)
      emit_dot(inst, plan);
    else
      emit_scatter(inst, plan);
    b_.CreateRetVoid();
    return plan;
  }

 private:
  Value* gen_reduce(const Instruction& inst, Index&) override {
    unsupported(inst, "a reduce read by a dot or scatter kernel");
  }

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

  // --- scatter kernels (see scatter_unsupported_reason) ---
  // Every operand dim the indices address ("indexed") has a window of 1, so an update element's position is its
  // window coordinates in the other dims plus its start in the indexed dims (its batch coordinate in batching dims).
  // A thread owns one point of the other ("window") dims and every output position there: it copies the operand's
  // values at them, then applies every update that lands there, in update order, as the evaluator does. No two
  // threads write one position and no thread reads another's: deterministic, no atomics, no grid-wide barrier.
  void emit_scatter(const Instruction& inst, LaunchPlan& plan) {
    auto sd = hlo::ScatterDimensionNumbers::of(inst);
    const Instruction *x = inst.operand(0), *ind = inst.operand(1), *upd = inst.operand(2);
    const auto &xd = x->shape.dims, &id = ind->shape.dims, &ud = upd->shape.dims;
    const std::string r(hlo::reducer_name(hlo::reducer_of(inst)));
    DType d = outs_[0]->dtype;
    auto has = [](const std::vector<int64_t>& v, int64_t a) { return std::find(v.begin(), v.end(), a) != v.end(); };
    std::vector<int64_t> window_axes, other_axes;  // operand dims: neither indexed nor batching; the rest
    for (int64_t a = 0; a < static_cast<int64_t>(xd.size()); ++a)
      (has(sd.scatter_dims_to_operand_dims, a) || has(sd.input_batching_dims, a) ? other_axes : window_axes)
          .push_back(a);
    // The operand dims an update's window dims walk (neither inserted nor batching), in order.
    std::vector<int64_t> walked;
    for (int64_t a = 0; a < static_cast<int64_t>(xd.size()); ++a)
      if (!has(sd.inserted_window_dims, a) && !has(sd.input_batching_dims, a)) walked.push_back(a);
    std::vector<int64_t> scatter_axes;  // the updates' dims that are not window dims
    for (int64_t a = 0; a < static_cast<int64_t>(ud.size()); ++a)
      if (!has(sd.update_window_dims, a)) scatter_axes.push_back(a);
    auto extents = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& axes) {
      std::vector<int64_t> e;
      for (auto a : axes) e.push_back(dims[static_cast<size_t>(a)]);
      return e;
    };
    std::vector<int64_t> wext = extents(xd, window_axes), oext = extents(xd, other_axes),
                         sext = extents(ud, scatter_axes);
    int64_t owners = detail::num_elements(wext), nother = detail::num_elements(oext),
            nupdates = detail::num_elements(sext);
    plan.kind = KernelKind::kLoop;
    plan.block = kBlock;
    plan.grid = std::clamp<int64_t>((owners + kBlock - 1) / kBlock, 1, kMaxGrid);
    Value* start = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(kBlock)),
                                sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    Value* step = b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), i64(kBlock));
    bool vector_dim = sd.index_vector_dim < static_cast<int64_t>(id.size());
    loop(start, i64(owners), step, {}, [&](Value* t, const std::vector<Value*>&) {
      std::vector<Value*> wm = delinearize(t, wext);
      auto position = [&](const std::vector<Value*>& other) {  // the output multi-index from both parts
        std::vector<Value*> m(xd.size());
        for (size_t j = 0; j < window_axes.size(); ++j) m[static_cast<size_t>(window_axes[j])] = wm[j];
        for (size_t j = 0; j < other_axes.size(); ++j) m[static_cast<size_t>(other_axes[j])] = other[j];
        return m;
      };
      loop(i64(0), i64(nother), i64(1), {}, [&](Value* p, const std::vector<Value*>&) {
        Index o = multi_index(xd, position(delinearize(p, oext)));
        Value* v = gen(x, o);
        store(out_ptrs_[0], linear_in(o, out_layouts_[0]), d, v);
        return std::vector<Value*>{};
      });
      loop(i64(0), i64(nupdates), i64(1), {}, [&](Value* s, const std::vector<Value*>&) {
        std::vector<Value*> sm = delinearize(s, sext);  // this update's scatter coordinates
        auto index_at = [&](int64_t component) { return start_index(ind, sd.index_vector_dim, sm, component); };
        std::vector<Value*> other(other_axes.size());
        Value* inside = b_.getTrue();
        for (size_t k = 0; k < sd.scatter_dims_to_operand_dims.size(); ++k) {
          int64_t a = sd.scatter_dims_to_operand_dims[k];
          size_t j = static_cast<size_t>(std::find(other_axes.begin(), other_axes.end(), a) - other_axes.begin());
          Value* v = index_at(static_cast<int64_t>(k));
          inside = b_.CreateAnd(
              inside, b_.CreateAnd(b_.CreateICmpSGE(v, i64(0)), b_.CreateICmpSLT(v, i64(xd[static_cast<size_t>(a)]))));
          other[j] = v;
        }
        for (size_t k = 0; k < sd.input_batching_dims.size(); ++k) {
          int64_t ia = sd.scatter_indices_batching_dims[k];
          size_t pos = static_cast<size_t>(vector_dim && ia > sd.index_vector_dim ? ia - 1 : ia);
          size_t j = static_cast<size_t>(std::find(other_axes.begin(), other_axes.end(), sd.input_batching_dims[k]) -
                                         other_axes.begin());
          other[j] = sm.at(pos);
        }
        // The owner's window coordinates must lie inside the update's window (which may be smaller than the operand
        // in a dim the indices do not address): positions past it are left alone.
        for (size_t j = 0; j < sd.update_window_dims.size(); ++j) {
          int64_t a = walked.at(j);
          auto wa = std::find(window_axes.begin(), window_axes.end(), a);
          int64_t extent = ud[static_cast<size_t>(sd.update_window_dims[j])];
          if (wa != window_axes.end() && extent < xd[static_cast<size_t>(a)])
            inside =
                b_.CreateAnd(inside, b_.CreateICmpULT(wm[static_cast<size_t>(wa - window_axes.begin())], i64(extent)));
        }
        when(inside, [&] {  // a window that does not fit is dropped, as XLA's scatter
          std::vector<Value*> om = position(other);
          // The update element: its scatter coordinates, and its window coordinates (the walked dims' positions).
          std::vector<Value*> um(ud.size());
          for (size_t j = 0; j < scatter_axes.size(); ++j) um[static_cast<size_t>(scatter_axes[j])] = sm[j];
          for (size_t j = 0; j < sd.update_window_dims.size(); ++j) {
            auto a = static_cast<size_t>(walked.at(j));
            bool indexed = has(sd.scatter_dims_to_operand_dims, static_cast<int64_t>(a));
            um[static_cast<size_t>(sd.update_window_dims[j])] = indexed ? i64(0) : om[a];
          }
          Value* u = gen(upd, multi_index(ud, um));
          Index o = multi_index(xd, om);
          Value* lin = linear_in(o, out_layouts_[0]);
          Value* v = r == "replace" ? u : round(d, combine(r, d, load(out_ptrs_[0], lin, d), u, false));
          store(out_ptrs_[0], lin, d, v);
        });
        return std::vector<Value*>{};
      });
      return std::vector<Value*>{};
    });
  }
};
}  // namespace

LaunchPlan emit_indexed_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                               bool allow_excess_precision) {
  GpuIndexedEmitter e(m, f, allow_excess_precision);
  return e.emit(inst);
}
}  // namespace gpu_detail

std::string scatter_unsupported_reason(const hlo::Instruction& inst) {
  if (inst.operands.size() != 3 || inst.shape.is_tuple) return "a variadic scatter";
  hlo::Reducer r = hlo::reducer_of(inst);
  if (r == hlo::Reducer::kArgmax || r == hlo::Reducer::kArgmin) return "an arg-reducing scatter";
  auto sd = hlo::ScatterDimensionNumbers::of(inst);
  const auto& ud = inst.operand(2)->shape.dims;
  // The window extent of each operand dim the indices address must be 1 (see emit_scatter): the update window dim
  // that walks it, if any, has extent 1.
  size_t j = 0;
  for (int64_t a = 0; a < static_cast<int64_t>(inst.operand(0)->shape.dims.size()); ++a) {
    auto has = [&](const std::vector<int64_t>& v) { return std::find(v.begin(), v.end(), a) != v.end(); };
    if (has(sd.inserted_window_dims) || has(sd.input_batching_dims)) continue;
    int64_t extent = ud[static_cast<size_t>(sd.update_window_dims.at(j++))];
    if (has(sd.scatter_dims_to_operand_dims) && extent != 1)
      return fmt::format("operand dim {} is both indexed and a window of {} (overlapping windows)", a, extent);
  }
  return "";
}

}  // namespace jitx::cuda
