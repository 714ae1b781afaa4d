// The CPU kernel planner: which instructions (and fused computations) the kernel emitters compile natively, and
// why not when they cannot (the backend then runs them on the interpreter and logs the reason); the loop space
// of a kernel, which the runtime partitions across threads.
#include "backends/cpu/kernel_planner.h"

#include <algorithm>
#include <functional>
#include <string>

#include "backends/cpu/kernels.h"
#include "core/errors.h"
#include "hlo/analysis/cost_analysis.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
using hlo::Instruction;
using hlo::Opcode;

namespace {
bool is_supported_reducer(hlo::Reducer r) {
  return r != hlo::Reducer::kArgmax && r != hlo::Reducer::kArgmin && r != hlo::Reducer::kReplace;
}

// What gen() can compute inside a kernel (top-level or fused).
std::string inner_reason(const Instruction& i, const EmitterAbilities& abilities) {
  DType d = i.shape.dtype;
  if (i.shape.is_tuple) return "tuple-shaped result";
  switch (i.opcode) {
    // The CPU backend runs these as library ops (data_ops, eigen_conv); the CUDA emitter has element-level kernels.
    case Opcode::kGather:
      return abilities.gather ? "" : "a library op on this backend (no element-level kernel)";
    case Opcode::kConvolution:
      if (!abilities.convolution) return "a library op on this backend (no element-level kernel)";
      return i.operand(0)->shape.dtype == DType::bool_ ? "a bool convolution" : "";
    case Opcode::kReduceWindow:
      if (!abilities.reduce_window) return "a library op on this backend (no element-level kernel)";
      if (i.operands.size() != 2) return "variadic reduce-window";
      if (!is_supported_reducer(hlo::reducer_of(i)))
        return "reducer " + std::string(hlo::reducer_name(hlo::reducer_of(i)));
      return "";
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kIota: case Opcode::kBroadcastInDim:
    case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kReverse: case Opcode::kSlice: case Opcode::kCopy:
    case Opcode::kPad: case Opcode::kConcatenate: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
    case Opcode::kSelect: case Opcode::kClamp: case Opcode::kCompare: case Opcode::kConvert:
      return "";
    case Opcode::kBitcastConvert:
      return hlo::is_elementwise_bitcast(i) ? "" : "bitcast-convert between types of different widths";
    case Opcode::kReduce:
      if (i.operands.size() != 2) return "variadic reduce";
      if (!is_supported_reducer(hlo::reducer_of(i)))
        return "reducer " + std::string(hlo::reducer_name(hlo::reducer_of(i)));
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

std::string computation_reason(const hlo::Computation& c, const EmitterAbilities& abilities) {
  for (auto& i : c.instructions) {
    if (i.get() == c.root && i->opcode == Opcode::kTuple) continue;
    std::string r = inner_reason(*i, abilities);
    if (!r.empty()) return fmt::format("%{} ({}): {}", i->name, hlo::opcode_name(i->opcode), r);
  }
  return "";
}
}  // namespace

std::vector<const hlo::Shape*> output_shapes(const Instruction& inst) {
  std::vector<const hlo::Shape*> out;
  if (inst.shape.is_tuple)
    for (auto& s : inst.shape.tuple_shapes) out.push_back(&s);
  else
    out.push_back(&inst.shape);
  return out;
}

Layout canonical_layout(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major) {
  Layout l, ones;
  for (auto d : minor_to_major) (dims[d] == 1 ? ones : l).push_back(d);
  if (std::is_sorted(l.begin(), l.end(), std::greater<>())) return {};
  l.insert(l.end(), ones.begin(), ones.end());
  return l;
}
Layout layout_of(const hlo::Shape& s) { return canonical_layout(s.dims, hlo::minor_to_major(s)); }
std::vector<int64_t> minor_to_major_of(const Layout& l, size_t rank) {
  if (!l.empty()) return l;
  std::vector<int64_t> m;
  for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) m.push_back(d);
  return m;
}

bool is_row_reduction(const Instruction& i, const std::vector<int64_t>& out_dims) {
  if (i.opcode != Opcode::kReduce || i.operands.size() != 2 || out_dims.empty()) return false;
  const auto& rd = hlo::dimensions_of(i);
  return i.operand(0)->shape.dims == out_dims && rd.size() == 1 &&
         rd[0] == static_cast<int64_t>(out_dims.size()) - 1;
}

std::string unsupported_reason(const Instruction& inst, const EmitterAbilities& abilities) {
  if (inst.opcode == Opcode::kFusion) {
    const hlo::Computation& fc = *inst.called.at(0);
    auto outs = output_shapes(inst);
    for (auto* s : outs) {
      if (s->is_tuple) return "nested tuple output";
      if (s->dims != outs[0]->dims) return "multi-output fusion with different output shapes";
    }
    if (fc.root->opcode == Opcode::kTuple && !inst.shape.is_tuple) return "tuple root";
    return computation_reason(fc, abilities);
  }
  for (auto* o : inst.operands)
    if (o->shape.is_tuple) return "tuple operand";
  return inner_reason(inst, abilities);
}

LoopSpace loop_space(const Instruction& inst) {
  const hlo::Shape& out = *output_shapes(inst)[0];
  const auto& dims = out.dims;
  LoopSpace s;
  // Rows and columns of the output in memory order (see KernelEmitter::emit_rows): columns along its minor-most dim.
  s.cols = dims.empty() ? 1 : dims[static_cast<size_t>(minor_to_major_of(layout_of(out), dims.size()).at(0))];
  s.rows = dims.empty() || s.cols == 0 ? (dims.empty() ? 1 : 0) : detail::num_elements(dims) / s.cols;
  int64_t out_n = std::max<int64_t>(1, s.rows * s.cols);
  int64_t in_n = 0;
  // A slice reads only what it writes, however large its operand (a scan's xs sliced per step stays one thread).
  bool slicing = inst.opcode == Opcode::kSlice || inst.opcode == Opcode::kDynamicSlice;
  for (auto* o : inst.operands) in_n = std::max(in_n, o->shape.is_tuple || slicing ? 0 : o->shape.num_elements());
  s.work_per_point = std::max<int64_t>(1, in_n / out_n);
  // Per-point transcendentals: in a fusion, one whose values are as many as the output's (not a per-row one).
  auto per_point = [&](const Instruction& i) {
    return hlo::is_transcendental(i.opcode) && !i.shape.is_tuple && i.shape.num_elements() >= out_n;
  };
  bool heavy = per_point(inst);
  if (inst.opcode == Opcode::kFusion)
    for (auto& i : inst.called.at(0)->instructions) heavy = heavy || per_point(*i);
  if (heavy) s.cost_per_point = kTranscendentalCost;
  return s;
}

}  // namespace jitx::cpu
