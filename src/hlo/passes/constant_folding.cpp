// Constant folding: each foldable instruction is evaluated alone in a scratch computation by the interpreter.
#include "hlo/passes/constant_folding.h"

#include <optional>

#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/custom_call.h"
#include "core/errors.h"

namespace jitx::hlo {
namespace {

bool foldable(const Instruction& i, int64_t max_elements) {
  switch (i.opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kBroadcastInDim:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kAllReduce:  // collectives exchange values between partitions: never a constant
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
      return false;
    case Opcode::kCustomCall:  // only jitx's linalg ones, which the interpreter evaluates
      if (!is_pure_custom_call(i)) return false;
      break;
    default:
      break;
  }
  if (i.operands.empty() || !i.called.empty() || i.shape.is_tuple || i.shape.num_elements() > max_elements)
    return false;
  for (auto* o : i.operands)
    if (o->opcode != Opcode::kConstant) return false;
  return true;
}

/// The value of i given its constant operands, or nothing if the interpreter cannot evaluate it.
std::optional<detail::Literal> evaluate_alone(const Instruction& i) {
  Computation scratch;  // no module: its instructions are named by opcode only
  std::vector<Instruction*> params;
  std::vector<evaluator::Value> args;
  for (size_t k = 0; k < i.operands.size(); ++k) {
    params.push_back(scratch.add_parameter(static_cast<int64_t>(k), i.operands[k]->shape));
    args.push_back(evaluator::Value{*i.operands[k]->literal, {}, false});
  }
  Instruction* copy = scratch.add(i.opcode, i.shape, params, i.attrs);
  scratch.root = copy;
  try {
    evaluator::Value v = evaluator::evaluate(scratch, args);
    if (v.is_tuple) return std::nullopt;
    return v.array;
  } catch (const CompileError&) {  // "not supported by the interpreter": leave the instruction alone
    return std::nullopt;
  }
}

}  // namespace

bool ConstantFolding::run(Module& m) {
  bool changed = false;
  for (auto& c : m.computations) {
    std::vector<Instruction*> order;
    for (auto& u : c->instructions) order.push_back(u.get());
    for (Instruction* i : order) {
      if (!foldable(*i, max_elements_)) continue;
      auto value = evaluate_alone(*i);
      if (!value) continue;
      // op(constants...) => constant
      Instruction* k = c->insert_constant_before(i, std::move(*value));
      k->shape.layout = i->shape.layout;
      if (c->replace_all_uses(i, k)) {
        trace_rewrite(name(), *i, fmt::format("op(constants) => constant (now %{})", k->name));
        changed = true;
      } else {
        c->remove_instruction(k);
      }
    }
  }
  return changed;
}

}  // namespace jitx::hlo
