// SimplifyFpConversions: convert_f32(op_bf16(...)) -> op_f32(convert_f32(...)) (see the header).
#include "hlo/passes/simplify_fp_conversions.h"

#include "jitx/config.h"

namespace jitx::hlo {
namespace {
/// Whether i is a bf16 elementwise op computed in f32 and rounded, whose f32 value a convert to f32 may keep.
bool hoistable_bf16_op(const Instruction& i) {
  if (i.shape.dtype != DType::bfloat16 || !is_elementwise(i.opcode)) return false;
  switch (i.opcode) {
    case Opcode::kConvert: case Opcode::kBitcastConvert: case Opcode::kCompare: case Opcode::kSelect:
    case Opcode::kClamp:
      return false;
    default: break;
  }
  for (const Instruction* o : i.operands)
    if (o->shape.dtype != DType::bfloat16) return false;
  return !i.operands.empty();
}
}  // namespace

bool SimplifyFpConversions::run(Module& m) {
  if (!config().allow_excess_precision) return false;
  bool changed = false;
  for (auto& c : m.computations) {
    std::vector<Instruction*> order;
    for (auto& u : c->instructions) order.push_back(u.get());
    for (Instruction* cv : order) {
      if (cv->opcode != Opcode::kConvert || cv->shape.dtype != DType::float32) continue;
      Instruction* op = cv->operand(0);
      if (!hoistable_bf16_op(*op)) continue;
      std::vector<Instruction*> wide;
      for (Instruction* o : op->operands)
        wide.push_back(c->insert_before(cv, Opcode::kConvert, Shape(DType::float32, o->shape.dims), {o}));
      Instruction* f32op = c->insert_before(cv, op->opcode, Shape(DType::float32, op->shape.dims), wide, op->attrs);
      if (c->replace_all_uses(cv, f32op)) {
        trace_rewrite(name(), *cv, fmt::format("convert_f32 of bf16 %{} keeps its f32 value (now %{})", op->name,
                                               f32op->name));
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace jitx::hlo
