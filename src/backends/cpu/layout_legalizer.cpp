// The layout legaliser (see layout_legalizer.h): which steps read and write which layouts, and the copies to
// row-major where a step would otherwise read memory in another order than it is in.
#include "backends/cpu/layout_legalizer.h"

#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/library.h"
#include "backends/cpu/parallel.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::runtime::cpu_backend {
using hlo::Instruction;
using hlo::Opcode;

namespace {
void clear_layout(hlo::Shape& s) {
  s.layout.clear();
  for (auto& t : s.tuple_shapes) clear_layout(t);
}

/// How the step made for an instruction treats layouts: an emitted kernel reads and writes any layout, an Eigen
/// dot or output fusion reads its operands through their layouts and writes row-major, everything else (library
/// data ops, in-place updates, loops and branches, interpreter fallbacks) reads and writes row-major only.
enum class LayoutUse { kAny, kReadsAny, kRowMajor };
LayoutUse layout_use(const Instruction& i) {
  if (i.opcode == Opcode::kWhile || i.opcode == Opcode::kConditional) return LayoutUse::kRowMajor;
  if (i.opcode == Opcode::kDot && cpu::dot_supported(i)) return LayoutUse::kReadsAny;
  if (is_native_update_slice(i)) return LayoutUse::kRowMajor;
  if (cpu::make_library_op(i)) return i.opcode == Opcode::kFusion ? LayoutUse::kReadsAny : LayoutUse::kRowMajor;
  return cpu::unsupported_reason(i).empty() ? LayoutUse::kAny : LayoutUse::kRowMajor;
}
}  // namespace

void LayoutLegalizer::run(hlo::Computation& c) {
  if (!done_.insert(&c).second) return;
  for (auto* p : c.parameters) clear_layout(p->shape);  // callers hand over row-major buffers
  std::vector<Instruction*> order;
  for (auto& up : c.instructions) order.push_back(up.get());
  for (Instruction* i : order) {
    switch (i->opcode) {
      case Opcode::kParameter: continue;
      case Opcode::kConstant: clear_layout(i->shape); continue;  // a literal is row-major
      case Opcode::kTuple:
      case Opcode::kOptimizationBarrier:
        for (size_t k = 0; k < i->operands.size(); ++k) i->shape.tuple_shapes.at(k) = i->operand(k)->shape;
        continue;
      case Opcode::kGetTupleElement:
        i->shape = i->operand(0)->shape.tuple_shapes.at(static_cast<size_t>(hlo::tuple_index_of(*i)));
        continue;
      default: break;
    }
    if (hlo::is_layout_bitcast(*i)) continue;  // an alias of its operand's buffer, read through its layout
    bool alias = i->opcode == Opcode::kReshape || (i->opcode == Opcode::kBitcastConvert &&
                                                   i->shape.byte_size() == i->operand(0)->shape.byte_size());
    if (i->opcode == Opcode::kWhile || i->opcode == Opcode::kConditional)
      for (auto* callee : i->called) run(*callee);
    LayoutUse use = alias ? LayoutUse::kRowMajor : layout_use(*i);
    if (use == LayoutUse::kRowMajor)
      for (auto*& o : i->operands) o = to_row_major(c, i, o);
    if (use != LayoutUse::kAny) clear_layout(i->shape);
    if (i->opcode == Opcode::kFusion) mirror(*i);
  }
  // The computation's result leaves are row-major too.
  if (c.root->opcode == Opcode::kTuple) {
    for (size_t k = 0; k < c.root->operands.size(); ++k) {
      c.root->operands[k] = to_row_major(c, c.root, c.root->operands[k]);
      c.root->shape.tuple_shapes.at(k) = c.root->operand(k)->shape;
    }
  } else if (!all_row_major(c.root->shape) && !c.root->shape.is_tuple) {
    Instruction* copy = to_row_major(c, nullptr, c.root);
    c.root = copy;
  }
  JITX_ASSERT(all_row_major(c.root->shape), "cpu backend: %{} returns a non-row-major tuple", c.name);
}

/// v itself when it is row-major (or a tuple), otherwise one copy of it to row-major, placed before `user`
/// (appended when null) and shared by every user.
Instruction* LayoutLegalizer::to_row_major(hlo::Computation& c, const Instruction* user, Instruction* v) {
  if (v->shape.is_tuple ? all_row_major(v->shape) : row_major(v->shape)) return v;
  auto it = copy_of_.find(v);
  if (it != copy_of_.end()) return it->second;
  if (v->shape.is_tuple) {  // a tuple of arrays: the same tuple of row-major copies
    if (v->opcode != Opcode::kTuple)
      throw CompileError(fmt::format("[cpu] %{}: a tuple with non-row-major elements not made by a tuple op", v->name));
    std::vector<Instruction*> ops;
    hlo::Shape ts = v->shape;
    for (size_t k = 0; k < v->operands.size(); ++k) {
      ops.push_back(to_row_major(c, user, v->operand(k)));
      ts.tuple_shapes.at(k) = ops.back()->shape;
    }
    Instruction* t = user ? c.insert_before(user, Opcode::kTuple, ts, ops) : c.add(Opcode::kTuple, ts, ops);
    copy_of_[v] = t;
    return t;
  }
  hlo::Shape rm = v->shape;
  rm.layout.clear();
  std::string name = v->name + ".row_major";
  Instruction* copy = user ? c.insert_before(user, Opcode::kCopy, rm, {v}, {}, name)
                           : c.add(Opcode::kCopy, rm, {v}, {}, name);
  copies++;
  copy_of_[v] = copy;
  return copy;
}

/// A fusion's parameters and root carry its operands' and result's layouts (layout assignment's rule 4).
void LayoutLegalizer::mirror(Instruction& f) {
  hlo::Computation& fc = *f.called.at(0);
  for (size_t k = 0; k < f.operands.size(); ++k) fc.parameters.at(k)->shape.layout = f.operand(k)->shape.layout;
  if (!f.shape.is_tuple) {
    fc.root->shape.layout = f.shape.layout;
  } else if (fc.root->opcode == Opcode::kTuple) {
    for (size_t k = 0; k < f.shape.tuple_shapes.size(); ++k)
      fc.root->operand(k)->shape.layout = f.shape.tuple_shapes[k].layout;
    fc.root->shape = f.shape;
  }
}

}  // namespace jitx::runtime::cpu_backend
