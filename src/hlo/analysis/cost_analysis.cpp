// HloCostAnalysis-style estimates: per-op flop rules, fusion-aware byte counts.
#include "hlo/analysis/cost_analysis.h"

#include "hlo/ir/collectives.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::hlo {

bool is_transcendental(Opcode op) {
  switch (op) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kSqrt:
    case Opcode::kRsqrt: case Opcode::kCbrt: case Opcode::kTanh: case Opcode::kLogistic: case Opcode::kSin:
    case Opcode::kCos: case Opcode::kTan: case Opcode::kPower: case Opcode::kAtan2: case Opcode::kErf:
    case Opcode::kErfc: case Opcode::kErfInv: case Opcode::kLgamma: case Opcode::kDigamma: case Opcode::kAsin:
    case Opcode::kAcos: case Opcode::kAtan: case Opcode::kSinh: case Opcode::kCosh: case Opcode::kAsinh:
    case Opcode::kAcosh: case Opcode::kAtanh:
      return true;
    default:
      return false;
  }
}

namespace {
double elements(const Shape& s) {
  if (s.is_tuple) {
    double n = 0;
    for (auto& t : s.tuple_shapes) n += elements(t);
    return n;
  }
  return static_cast<double>(s.num_elements());
}

/// Flops and transcendentals of one instruction (not counting called computations other than fusions).
void op_cost(const Instruction& i, double& flops, double& trans) {
  Opcode op = i.opcode;
  if (is_transcendental(op)) {
    trans += elements(i.shape);
    return;
  }
  if (is_elementwise(op)) {
    if (op != Opcode::kConvert) flops += elements(i.shape);
    return;
  }
  switch (op) {
    case Opcode::kDot: {
      double k = 1;
      for (auto d : DotDimensionNumbers::of(i).lhs_contracting_dims)
        k *= static_cast<double>(i.operand(0)->shape.dims[d]);
      flops += 2.0 * elements(i.shape) * k;
      return;
    }
    case Opcode::kReduce:
      // One reduction step per input element and operand.
      flops += elements(i.operand(0)->shape) * static_cast<double>(i.operands.size() / 2);
      return;
    case Opcode::kReduceWindow: {
      double w = 1;
      for (auto d : Window::of(i).dimensions) w *= static_cast<double>(d);
      flops += elements(i.shape) * w;
      return;
    }
    case Opcode::kConvolution: {
      // As XLA's HloCostAnalysis: 2 flops per multiply-add that reads the input, so taps that fall on padding
      // (or between the holes of a dilated input) do not count: per spatial dimension, the (output position,
      // kernel tap) pairs that land on an input element.
      ConvConfig cc = ConvConfig::of(i);
      const auto& dn = cc.dnums;
      const Shape &in = i.operand(0)->shape, &ker = i.operand(1)->shape;
      double pairs = 1;
      for (int64_t s = 0; s < dn.num_spatial_dims(); ++s) {
        int64_t n = in.dims[dn.input_spatial_dimensions[s]], k = ker.dims[dn.kernel_spatial_dimensions[s]];
        int64_t o = i.shape.dims[dn.output_spatial_dimensions[s]];
        const auto& w = cc.window;
        auto at = [](const std::vector<int64_t>& v, int64_t j, int64_t dflt) {
          return j < static_cast<int64_t>(v.size()) ? v[j] : dflt;
        };
        int64_t stride = at(w.strides, s, 1), bd = at(w.base_dilations, s, 1), wd = at(w.window_dilations, s, 1);
        int64_t lo = s < static_cast<int64_t>(w.padding.size()) ? w.padding[s].low : 0;
        int64_t last = (n - 1) * bd;  // the dilated input's last element
        double count = 0;
        for (int64_t p = 0; p < o; ++p)
          for (int64_t t = 0; t < k; ++t) {
            int64_t pos = p * stride + t * wd - lo;
            if (pos >= 0 && pos <= last && pos % bd == 0) ++count;
          }
        pairs *= count;
      }
      double batch = static_cast<double>(i.shape.dims[dn.output_batch_dimension]);
      double out_features = static_cast<double>(ker.dims[dn.kernel_output_feature_dimension]);
      double in_features = static_cast<double>(ker.dims[dn.kernel_input_feature_dimension]);
      flops += 2.0 * batch * out_features * in_features * pairs;
      return;
    }
    case Opcode::kSort: {
      double n = elements(i.operand(0)->shape);
      flops += n * std::max(1.0, std::log2(std::max(2.0, n)));
      return;
    }
    default:
      return;
  }
}

void computation_cost(const Computation& c, double& flops, double& trans);

/// An instruction's flops and transcendentals with what it calls: a fusion's, a while's body and condition
/// counted once (as XLA counts a loop), a conditional's costliest branch, a call's computation.
void instruction_cost(const Instruction& i, double& flops, double& trans) {
  if (i.opcode == Opcode::kConditional) {
    double bf = 0, bt = 0;
    for (const Computation* b : i.called) {
      double f = 0, t = 0;
      computation_cost(*b, f, t);
      bf = std::max(bf, f), bt = std::max(bt, t);
    }
    flops += bf, trans += bt;
    return;
  }
  op_cost(i, flops, trans);
  if (i.opcode == Opcode::kFusion || i.opcode == Opcode::kWhile || i.opcode == Opcode::kCall)
    for (const Computation* b : i.called) computation_cost(*b, flops, trans);
}

void computation_cost(const Computation& c, double& flops, double& trans) {
  for (auto& up : c.instructions) instruction_cost(*up, flops, trans);
}

bool is_free(const Instruction& i) {
  if (is_layout_bitcast(i)) return true;
  Opcode op = i.opcode;
  return op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
         op == Opcode::kOptimizationBarrier || op == Opcode::kGetTupleElement || op == Opcode::kReshape ||
         op == Opcode::kBitcastConvert || is_async_collective_done(op);  // a done is its start's buffer
}

double bytes(const Shape& s) { return static_cast<double>(s.byte_size()); }
}  // namespace

CostAnalysis analyze_cost(const Module& m) {
  CostAnalysis c;
  const Computation& e = *m.entry;
  c.bytes_accessed_operand.assign(e.parameters.size(), 0);
  for (auto& up : e.instructions) {
    const Instruction& i = *up;
    if (is_free(i)) continue;
    InstructionCost ic;
    ic.name = i.name;
    ic.kind = std::string(opcode_name(i.opcode));
    if (i.opcode == Opcode::kFusion) ic.kind = fmt::format("fusion({})", fusion_kind_name(fusion_kind_of(i)));
    instruction_cost(i, ic.flops, ic.transcendentals);
    // Memory traffic: each operand read once, each output written once.
    double read = 0;
    for (auto* o : i.operands) {
      double b = bytes(o->shape);
      read += b;
      if (o->opcode == Opcode::kParameter) c.bytes_accessed_operand[o->parameter_number] += b;
    }
    ic.bytes_accessed = read + bytes(i.shape);
    if (is_collective(i.opcode))  // a start counts; its done moves nothing more
      c.collective_bytes +=
          sync_collective_of(i.opcode) == Opcode::kAllGather ? bytes(i.shape) : bytes(i.operand(0)->shape);
    c.flops += ic.flops;
    c.transcendentals += ic.transcendentals;
    c.bytes_accessed += ic.bytes_accessed;
    c.per_instruction.push_back(ic);
  }
  if (e.root) {
    const Instruction* r = e.root;
    if (r->opcode == Opcode::kTuple)
      for (auto* o : r->operands) c.bytes_accessed_output += bytes(o->shape);
    else
      c.bytes_accessed_output = bytes(r->shape);
  }
  return c;
}

std::map<std::string, double> CostAnalysis::as_map() const {
  std::map<std::string, double> m{{"flops", flops},
                                  {"transcendentals", transcendentals},
                                  {"bytes accessed", bytes_accessed},
                                  {"bytes accessedout{}", bytes_accessed_output}};
  for (size_t i = 0; i < bytes_accessed_operand.size(); ++i)
    m[fmt::format("bytes accessed{}{{}}", i)] = bytes_accessed_operand[i];
  if (collective_bytes > 0) m["bytes transferred"] = collective_bytes;
  return m;
}

std::string CostAnalysis::str() const {
  std::string s = fmt::format("flops: {:.6g}\ntranscendentals: {:.6g}\nbytes accessed: {:.6g} ({:.2f} MiB)\n", flops,
                              transcendentals, bytes_accessed, bytes_accessed / (1024.0 * 1024.0));
  for (size_t i = 0; i < bytes_accessed_operand.size(); ++i)
    s += fmt::format("bytes accessed{}{{}}: {:.6g}\n", i, bytes_accessed_operand[i]);
  s += fmt::format("bytes accessedout{{}}: {:.6g}\n", bytes_accessed_output);
  s += "per kernel:\n";
  for (auto& ic : per_instruction)
    s += fmt::format("  {:<28} {:<18} flops {:>12.6g}  transc {:>10.6g}  bytes {:>12.6g}\n", ic.name, ic.kind, ic.flops,
                     ic.transcendentals, ic.bytes_accessed);
  return s;
}

}  // namespace jitx::hlo
