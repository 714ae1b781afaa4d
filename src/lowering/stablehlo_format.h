// StableHLO text formatting without printer state: literals, floats as MLIR writes them, types and attribute lists.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"

namespace jitx::detail {

/// `array<i64: 1, 2>` (or `array<i64>`).
std::string i64_array(const std::vector<int64_t>& v);
/// `[1, 2]`, the dims list of the pretty forms.
std::string dims_list(const std::vector<int64_t>& v);
std::string scalar_type(DType d);
/// A dense literal as MLIR prints it (a splat as one element).
std::string dense_literal(const Literal& l);
/// The StableHLO op of a binary reducer.
std::string_view reducer_op(hlo::Reducer r);
/// FLOAT, SIGNED or UNSIGNED.
std::string compare_type(DType d);
/// A module name as JAX makes it and MLIR prints it.
std::string symbol_name(const std::string& name);
/// A float NaN as an MLIR dense element (its bit pattern).
std::string nan_elem(DType d);

// --- types of an instruction's operands and results ---
std::string operand_types(const hlo::Instruction& i);
std::string result_types(const hlo::Instruction& i);
/// `(operand types) -> result type`.
std::string functional_type(const hlo::Instruction& i);
/// The type of an op printed with custom<SameOperandsAndResultType>: one type when all agree.
std::string same_or_functional_type(const hlo::Instruction& i);
/// Whether i is an op with several results (a one-element tuple is a single result in MLIR).
bool multi_result(const hlo::Instruction& i);
/// The result type list: `T`, or `(T1, T2)` for several results.
std::string results_type(const hlo::Instruction& i);

}  // namespace jitx::detail
