// StableHLO MLIR text (as jax.jit(f).lower(...).as_text() writes it) -> hlo::Module.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/hlo.h"
#include "import/mlir_cursor.h"

namespace jitx::import {

/// Parses a module; malformed text throws ParseError (line, column, what was expected), an op or form jitx does
/// not support throws CompileError naming it. The entry is the public function `main` (or the only public one);
/// its root is a tuple of the results.
std::unique_ptr<hlo::Module> parse_stablehlo(std::string_view text);

// --- shared between the importer's files ---

/// An op as read from text, before it becomes instructions.
struct OpSyntax {
  std::string name;                          // "stablehlo.add"
  std::vector<hlo::Instruction*> operands;
  std::map<std::string, std::string> attrs;  // key -> raw value text
  std::vector<std::string> words;            // bare words of the pretty form (LT, FLOAT, ...)
  std::vector<std::string> brackets;         // bare [...] groups of the pretty form (slice ranges)
  std::vector<TensorType> operand_types, result_types;
  std::vector<hlo::Computation*> regions;
  std::string raw_value;                     // a constant's dense<...> text
  std::pair<int64_t, int64_t> at;            // line, column of the op
};

hlo::Shape shape_of(const TensorType& t);
/// Integers of a raw attribute: `[1, 0]`, `array<i64: 1, 0>`, `dense<[1, 0]> : tensor<2xi64>`, `3 : i64`.
std::vector<int64_t> ints_of(std::string_view raw);
/// A dense<...> literal of type t.
detail::Literal dense_literal_of(Cursor& c, std::string_view raw, const TensorType& t);
/// Builds the instruction(s) of one op into comp; returns its results (one per result type).
std::vector<hlo::Instruction*> build_op(hlo::Computation& comp, OpSyntax& op);

}  // namespace jitx::import
