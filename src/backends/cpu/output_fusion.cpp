// Output fusions (kOutput: a dot with an elementwise epilogue, e.g. gelu(x @ w + b)): the GEMM runs an emitted
// epilogue kernel on each output tile as soon as the tile is done, while it is in cache, so the product is never
// written to memory and read back as a whole.
//
// The epilogue kernel is an ordinary kLoop fusion built from the fused computation with the dot replaced by a new
// last parameter, the product, in the accumulation type (f32 for f32/bf16/f16 dots, f64 for f64). For a bf16/f16
// dot the epilogue first converts the product to the dot's dtype, rounding it exactly where the unfused dot would
// round it (f16/bf16 round after every op, see elementwise_emitter.h). When the product's type is also the fusion's result
// type (f32), the GEMM writes each tile straight into the result buffer and the epilogue rewrites it in place (the
// kernel reads its product parameter through the output pointer). Otherwise (a bf16 result, say) the GEMM accumulates
// each tile in a per-thread strip and the epilogue reads it from there: no f32 copy of the whole product.
//
// The kernel's loop space is [rows, cols] of the result (cols its last dimension); a GEMM tile is a rectangle of
// it when cols is the dot's N (the product of the rhs's free dimensions: true when it has exactly one). For
// other dots (no rhs free dimension, f64 through Eigen) the whole product is computed first, into the result or a
// temporary, and the epilogue runs over it once.
#include "backends/cpu/output_fusion.h"

#include <algorithm>
#include <unordered_map>

#include "backends/cpu/gemm.h"
#include "backends/cpu/parallel.h"
#include "core/errors.h"
#include "core/storage.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
namespace {
using hlo::Instruction;
using hlo::Opcode;

const Instruction* find_dot(const hlo::Computation& c) {
  const Instruction* dot = nullptr;
  for (auto& i : c.instructions)
    if (i->opcode == Opcode::kDot) {
      if (dot) return nullptr;  // exactly one dot per output fusion
      dot = i.get();
    }
  return dot;
}

class OutputFusion : public LibraryOp {
 public:
  OutputFusion(const Instruction& fusion, const Instruction& dot) : fusion_(fusion), dot_(dot) {
    acc_ = dot.shape.dtype == DType::float64 ? DType::float64 : DType::float32;
    in_place_ = fusion.shape.dtype == acc_ && dot.shape.dtype == acc_;
    build_epilogue();
    space_ = loop_space(*epilogue_);
    // Per-tile epilogues need the GEMM's rows and columns to be the kernel's: N == cols (then rows == batch * M).
    if (blocked::handles(dot)) {
      auto dn = hlo::DotDimensionNumbers::of(dot);
      const auto &rc = dn.rhs_contracting_dims, &rb = dn.rhs_batch_dims;
      const auto& rd = dot.operand(1)->shape.dims;
      int64_t n = 1;
      for (int64_t d = 0; d < static_cast<int64_t>(rd.size()); ++d)
        if (std::find(rc.begin(), rc.end(), d) == rc.end() && std::find(rb.begin(), rb.end(), d) == rb.end())
          n *= rd[d];
      per_tile_ = n == space_.cols;
      plan_ = blocked::plan_dot(dot);
    }
  }

  std::vector<const Instruction*> kernels() const override { return {epilogue_}; }
  /// The product at 16 multiply-adds per instruction (as is_small counts a dot) and the epilogue's elements.
  int64_t inline_work() const override {
    int64_t k = 1;
    for (auto d : hlo::DotDimensionNumbers::of(dot_).lhs_contracting_dims) k *= dot_.operand(0)->shape.dims.at(d);
    return dot_.shape.num_elements() * k / 16 + space_.work();
  }
  void bind(const std::vector<KernelFn>& fns) override { fn_ = fns.at(0); }

  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    JITX_ASSERT(fn_, "output fusion %{}: epilogue kernel not bound", fusion_.name);
    const void* lhs = ins[static_cast<size_t>(dot_.operand(0)->parameter_number)];
    const void* rhs = ins[static_cast<size_t>(dot_.operand(1)->parameter_number)];
    if (per_tile_) return run_per_tile(lhs, rhs, ins, outs[0]);
    std::shared_ptr<detail::Storage> tmp;
    void* product = outs[0];
    if (!in_place_) {
      tmp = detail::Storage::allocate(static_cast<size_t>(dot_.shape.num_elements()) * dtype_size(acc_));
      product = tmp->data();
    }
    run_dot_unrounded(dot_, lhs, rhs, product, plan_.get());
    std::vector<void*> bufs{outs[0]};
    for (auto* p : ins) bufs.push_back(const_cast<void*>(p));
    bufs.push_back(product);  // unused by the kernel when in place (it reads the output pointer)
    run_kernel(fn_, bufs.data(), space_);
  }

 private:
  void run_per_tile(const void* lhs, const void* rhs, std::span<const void* const> ins, void* out) const {
    auto dp = blocked::dot_problem(dot_, plan_.get(), lhs, rhs);
    JITX_ASSERT(dp, "output fusion %{}: the GEMM does not take its dot", fusion_.name);
    const blocked::Problem& p = dp->problem;
    size_t nbufs = ins.size() + 2;
    auto epilogue = [&](float* product, int64_t b, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
      // {result, the fusion's operands..., product}; on the stack unless the fusion has many operands.
      void* small[16];
      std::vector<void*> large(nbufs > 16 ? nbufs : 0);
      void** bufs = nbufs > 16 ? large.data() : small;
      bufs[0] = out;
      for (size_t k = 0; k < ins.size(); ++k) bufs[k + 1] = const_cast<void*>(ins[k]);
      bufs[nbufs - 1] = product;  // unused by the kernel when in place (it reads the output pointer)
      fn_(bufs, b * p.m + i0, b * p.m + i1, j0, j1);
    };
    blocked::multiply(p, in_place_ ? static_cast<float*>(out) : nullptr, blocked::tile_fn(epilogue));
  }

  // epilogue_ = fusion(fusion's operands..., product), kind=kLoop, calling a copy of the fused computation whose
  // dot is the new last parameter.
  void build_epilogue() {
    const hlo::Computation& fc = *fusion_.called.at(0);
    holder_ = std::make_unique<hlo::Module>(fusion_.name + ".epilogue");
    hlo::Computation* body = holder_->add_computation(fusion_.name + ".epilogue_body");
    hlo::Shape pshape(acc_, dot_.shape.dims);
    int64_t product_param = static_cast<int64_t>(fusion_.operands.size());
    std::unordered_map<const Instruction*, Instruction*> map;
    for (auto* p : fc.parameters) map[p] = body->add_parameter(p->parameter_number, p->shape, p->name);
    for (auto& up : fc.instructions) {
      const Instruction& i = *up;
      if (i.opcode == Opcode::kParameter) continue;
      if (&i == &dot_) {
        Instruction* p = body->add_parameter(product_param, pshape, "product");
        map[&i] = dot_.shape.dtype == acc_ ? p : body->add(Opcode::kConvert, dot_.shape, {p}, {}, "product_rounded");
        continue;
      }
      std::vector<Instruction*> ops;
      for (auto* o : i.operands) ops.push_back(map.at(o));
      Instruction* c = body->add(i.opcode, i.shape, ops, i.attrs, i.name);
      c->literal = i.literal;
      c->called = i.called;
      map[&i] = c;
    }
    body->root = map.at(fc.root);
    hlo::Computation* outer = holder_->add_computation(fusion_.name + ".epilogue_outer");
    std::vector<Instruction*> operands;
    for (size_t k = 0; k < fusion_.operands.size(); ++k)
      operands.push_back(outer->add_parameter(static_cast<int64_t>(k), fusion_.operand(k)->shape));
    operands.push_back(outer->add_parameter(product_param, pshape));
    detail::Params attrs;
    attrs.set("kind", std::string("kLoop"));
    if (in_place_) attrs.set("in_place_parameter", product_param);
    epilogue_ = outer->add(Opcode::kFusion, fusion_.shape, operands, attrs, fusion_.name + ".epilogue");
    epilogue_->called = {body};
    outer->root = epilogue_;
    holder_->entry = outer;
  }

  const Instruction& fusion_;
  const Instruction& dot_;
  DType acc_;
  bool in_place_ = false;
  bool per_tile_ = false;  // the GEMM runs the epilogue on each tile
  std::shared_ptr<const blocked::DotPlan> plan_;  // the GEMM's problem from the shapes (nullptr: not the blocked GEMM)
  std::unique_ptr<hlo::Module> holder_;
  Instruction* epilogue_ = nullptr;
  LoopSpace space_;
  KernelFn fn_ = nullptr;
};
}  // namespace

std::unique_ptr<LibraryOp> make_output_fusion(const Instruction& fusion) {
  if (fusion.opcode != Opcode::kFusion || hlo::fusion_kind_of(fusion) != hlo::FusionKind::kOutput ||
      fusion.shape.is_tuple)
    return nullptr;
  const hlo::Computation& fc = *fusion.called.at(0);
  const Instruction* dot = find_dot(fc);
  if (!dot || !dot_supported(*dot) || dot->operand(0)->opcode != Opcode::kParameter ||
      dot->operand(1)->opcode != Opcode::kParameter || fusion.shape.dims != dot->shape.dims)
    return nullptr;
  auto op = std::make_unique<OutputFusion>(fusion, *dot);
  // The epilogue must be something the emitter compiles; otherwise the whole fusion falls back.
  if (!unsupported_reason(*op->kernels().at(0)).empty()) return nullptr;
  return op;
}

}  // namespace jitx::cpu
