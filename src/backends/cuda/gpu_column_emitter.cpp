// The CUDA backend's column-reduction kernels (see gpu_emitter_base.h), as XLA's reduction emitter tiles them: a
// block of 8 x 32 threads takes 32 neighbouring columns; each thread reduces every 8th row of its column (a warp
// reads 32 neighbouring elements of a row: coalesced), the 8 partial values meet in shared memory and every thread
// combines them in a fixed order (deterministic, no atomics). Blocks go round the column tiles grid-stride.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "backends/cuda/gpu_emitter.h"
#include "backends/cuda/gpu_emitter_base.h"

namespace jitx::cuda {
namespace gpu_detail {
namespace {
constexpr int64_t kCols = 32, kRows = 8;  // a block: 32 columns x 8 rows of threads
constexpr int64_t kChunk = 32;            // float sums: rows per f32 partial, partials added in double

// The reduces of a column kernel: every reduce reduces the leading dims of one row-major operand shape [R.., C..],
// every instruction is of that shape, of the kept shape [C..] or a scalar, and every output is of the kept shape.
struct ColumnPlan {
  std::vector<int64_t> x_dims, kept;
  int64_t reduced_rank = 0;
  std::vector<const Instruction*> reduces;
};

std::optional<ColumnPlan> column_plan(const Instruction& inst) {
  if (inst.opcode != Opcode::kFusion && inst.opcode != Opcode::kReduce) return std::nullopt;
  std::vector<const Instruction*> all;
  if (inst.opcode == Opcode::kReduce)
    all.push_back(&inst);
  else
    for (auto& i : inst.called.at(0)->instructions) all.push_back(i.get());
  ColumnPlan p;
  for (auto* i : all)
    if (i->opcode == Opcode::kReduce) p.reduces.push_back(i);
  // Each reduce has its [8][32] partials in shared memory (1-2 KiB): at most 16 keep a block within 48 KiB.
  if (p.reduces.empty() || p.reduces.size() > 16) return std::nullopt;
  p.x_dims = p.reduces[0]->operand(0)->shape.dims;
  std::vector<int64_t> rd = hlo::dimensions_of(*p.reduces[0]);
  std::sort(rd.begin(), rd.end());
  p.reduced_rank = static_cast<int64_t>(rd.size());
  for (int64_t k = 0; k < p.reduced_rank; ++k)
    if (rd[static_cast<size_t>(k)] != k) return std::nullopt;  // the leading dims
  if (p.reduced_rank == 0 || p.reduced_rank == static_cast<int64_t>(p.x_dims.size())) return std::nullopt;
  p.kept.assign(p.x_dims.begin() + p.reduced_rank, p.x_dims.end());
  for (auto* r : p.reduces) {
    std::vector<int64_t> d = hlo::dimensions_of(*r);
    std::sort(d.begin(), d.end());
    if (r->operands.size() != 2 || r->operand(0)->shape.dims != p.x_dims || d != rd) return std::nullopt;
  }
  for (auto* i : all) {
    if (i->opcode == Opcode::kReduceWindow || i->opcode == Opcode::kConvolution)
      return std::nullopt;  // the loop kernel's (gen_reduce_window, gen_convolution)
    if (i->shape.is_tuple && i == (inst.opcode == Opcode::kFusion ? inst.called.at(0)->root : nullptr)) continue;
    if (i->shape.is_tuple) return std::nullopt;
    if (i->shape.dims != p.x_dims && i->shape.dims != p.kept && !i->shape.dims.empty()) return std::nullopt;
  }
  for (auto* o : cpu::output_shapes(inst))
    if (o->dims != p.kept || !cpu::layout_of(*o).empty()) return std::nullopt;
  for (auto* o : inst.operands)
    if (o->shape.is_tuple || !cpu::layout_of(o->shape).empty()) return std::nullopt;
  return p;
}

class GpuColumnEmitter final : public GpuEmitterBase {
 public:
  GpuColumnEmitter(llvm::Module& m, llvm::Function* f, bool excess, ColumnPlan p)
      : GpuEmitterBase(m, f, excess), p_(std::move(p)) {}

  LaunchPlan emit(const Instruction& inst) {
    LaunchPlan plan;
    std::vector<const Instruction*> roots = begin(inst, plan);
    int64_t ncols = detail::num_elements(p_.kept),
            nrows = detail::num_elements(std::vector<int64_t>(p_.x_dims.begin(), p_.x_dims.begin() + p_.reduced_rank));
    int64_t tiles = (ncols + kCols - 1) / kCols;
    plan.kind = KernelKind::kColumnReduction;
    plan.block = kCols * kRows;
    plan.grid = std::clamp<int64_t>(tiles, 1, kMaxGrid);
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* ty = b_.CreateUDiv(tid, i64(kCols));
    Value* tx = b_.CreateURem(tid, i64(kCols));
    std::vector<int64_t> rdims(p_.x_dims.begin(), p_.x_dims.begin() + p_.reduced_rank);
    loop(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(tiles),
         sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), {}, [&](Value* tile, const std::vector<Value*>&) {
           Value* c = b_.CreateAdd(b_.CreateMul(tile, i64(kCols)), tx);
           Value* inside = b_.CreateICmpULT(c, i64(ncols));
           // Columns past the end read the last column (in bounds) and store nothing.
           col_ = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, c, i64(ncols - 1));
           col_multi_ = delinearize(col_, p_.kept);
           for (const Instruction* red : p_.reduces) col_values_[red] = reduce_column(*red, ty, tx, nrows, rdims);
           when(b_.CreateAnd(inside, b_.CreateICmpEQ(ty, i64(0))), [&] {
             for (size_t k = 0; k < roots.size(); ++k) {
               Index idx = multi_index(p_.kept, col_multi_);
               idx.linear = col_;
               store(out_ptrs_[k], col_, outs_[k]->dtype, gen(roots[k], idx));
             }
           });
           b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});  // before the next tile overwrites shared
           col_values_.clear();
           return std::vector<Value*>{};
         });
    b_.CreateRetVoid();
    return plan;
  }

 private:
  ColumnPlan p_;
  Value* col_ = nullptr;
  std::vector<Value*> col_multi_;
  std::unordered_map<const Instruction*, Value*> col_values_;

  Value* held_value(const Instruction* inst, const Index& idx) override {
    auto it = col_values_.find(inst);
    if (it == col_values_.end()) return nullptr;
    if (idx.has_multi) return idx.multi == col_multi_ ? it->second : nullptr;
    return idx.linear == col_ ? it->second : nullptr;
  }
  Value* gen_reduce(const Instruction& inst, Index&) override {
    unsupported(inst, "a reduce read at another column than its own in a column kernel");
  }

  // The reduce's value at the current column, in every thread of the column.
  Value* reduce_column(const Instruction& red, Value* ty, Value* tx, int64_t nrows, const std::vector<int64_t>& rdims) {
    const std::string r(hlo::reducer_name(hlo::reducer_of(red)));
    DType d = red.operand(0)->shape.dtype;
    bool fsum = cpu::is_float(d) && r == "add";
    llvm::Type* pt = fsum ? b_.getDoubleTy() : ctype(d);  // the partials' type
    auto element = [&](Value* row) {
      std::vector<Value*> m = delinearize(row, rdims);
      m.insert(m.end(), col_multi_.begin(), col_multi_.end());
      Index idx = multi_index(p_.x_dims, m);
      return gen(red.operand(0), idx);
    };
    Value* part;
    if (fsum) {  // f32 partials of kChunk of this thread's rows, added in double: the error of one chunk
      int64_t span = kChunk * kRows;
      part = loop(i64(0), i64(nrows), i64(span), {fconst(pt, 0.0)}, [&](Value* r0, const std::vector<Value*>& t) {
        Value* lo = b_.CreateAdd(r0, ty);
        Value* hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(r0, i64(span)), i64(nrows));
        Value* s = loop(lo, hi, i64(kRows), {identity(r, d)}, [&](Value* row, const std::vector<Value*>& a) {
          return std::vector<Value*>{combine(r, d, a[0], element(row), false)};
        })[0];
        return std::vector<Value*>{b_.CreateFAdd(t[0], b_.CreateFPExt(s, pt))};
      })[0];
    } else {
      part = loop(ty, i64(nrows), i64(kRows), {identity(r, d)}, [&](Value* row, const std::vector<Value*>& a) {
        return std::vector<Value*>{combine(r, d, a[0], element(row), false)};
      })[0];
    }
    auto* arr = llvm::ArrayType::get(llvm::ArrayType::get(pt, kCols), kRows);
    auto* shm = new llvm::GlobalVariable(m_, arr, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(arr),
                                         "col_partials", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    b_.CreateStore(part, b_.CreateInBoundsGEP(arr, shm, {i64(0), ty, tx}));
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    Value* acc = nullptr;
    for (int64_t k = 0; k < kRows; ++k) {  // in row order, the same in every thread
      Value* x = b_.CreateLoad(pt, b_.CreateInBoundsGEP(arr, shm, {i64(0), i64(k), tx}));
      acc = !acc ? x : fsum ? b_.CreateFAdd(acc, x) : combine(r, d, acc, x, false);
    }
    if (fsum) acc = b_.CreateFPTrunc(acc, ctype(d));
    Value* init = gen(red.operand(1), scalar_index());
    return round(d, combine(r, d, init, acc, false));
  }
};
}  // namespace

std::optional<LaunchPlan> emit_column_kernel(llvm::Module& m, llvm::Function* f, const hlo::Instruction& inst,
                                             bool allow_excess_precision) {
  std::optional<ColumnPlan> p = column_plan(inst);
  if (!p) return std::nullopt;
  GpuColumnEmitter e(m, f, allow_excess_precision, std::move(*p));
  return e.emit(inst);
}
}  // namespace gpu_detail
}  // namespace jitx::cuda
