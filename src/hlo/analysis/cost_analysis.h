// Cost analysis: flops, transcendentals and bytes accessed of an HLO module (XLA's HloCostAnalysis).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "hlo/ir/hlo.h"

namespace jitx::hlo {

struct InstructionCost {
  std::string name;        // instruction (or fusion) name
  std::string kind;        // opcode, or "fusion(kLoop)" etc.
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;  // operands read + outputs written, as a kernel sees them
};

struct CostAnalysis {
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;
  std::vector<double> bytes_accessed_operand;  // per entry parameter
  double bytes_accessed_output = 0;
  std::vector<InstructionCost> per_instruction;  // one line per top-level kernel of the entry
  /// Bytes each partition sends through collectives (all-reduce, reduce-scatter, all-to-all, collective-permute:
  /// the operand; all-gather: the result); as_map's "bytes transferred" when not zero.
  double collective_bytes = 0;
  /// JAX-style keys: "flops", "transcendentals", "bytes accessed", "bytes accessed0{}", "bytes accessedout{}".
  std::map<std::string, double> as_map() const;
  std::string str() const;
};

/// Estimates the cost of running m's entry computation. Instructions inside a fusion count their
/// flops, but only the fusion's operands and outputs count as memory traffic (fused values stay in
/// registers). Reshapes, tuples, parameters and constants are free.
CostAnalysis analyze_cost(const Module& m);

/// True for the opcodes XLA counts as transcendental (exp, log, tanh, erf, pow, ...).
bool is_transcendental(Opcode op);

}  // namespace jitx::hlo
