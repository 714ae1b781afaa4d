// StableHLO MLIR text (as jax.jit(f).lower(...).as_text() writes it) -> hlo::Module.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"
#include "import/mlir_cursor.h"

namespace jitx::import {

/// Parses a module; malformed text throws ParseError (line, column, what was expected), an op or form jitx does
/// not support throws CompileError naming it. The entry is the public function `main` (or the only public one);
/// its root is a tuple of the results.
std::unique_ptr<hlo::Module> parse_stablehlo(std::string_view text);

// --- shared between the importer's files ---

/// A region read from text: its computation (declared block arguments first, then one parameter per value of an
/// enclosing scope it reads), the operands of its return op, and those enclosing values in parameter order.
struct Region {
  hlo::Computation* comp = nullptr;
  std::vector<hlo::Instruction*> rets;
  std::vector<hlo::Instruction*> captured;
  size_t declared() const { return comp->parameters.size() - captured.size(); }
};

/// An op as read from text, before it becomes instructions.
struct OpSyntax {
  std::string name;                          // "stablehlo.add"
  std::vector<hlo::Instruction*> operands;
  std::map<std::string, std::string> attrs;  // key -> raw value text
  std::vector<std::string> words;            // bare words of the pretty form (LT, FLOAT, ...)
  std::vector<std::string> brackets;         // bare [...] groups of the pretty form (slice ranges)
  std::vector<TensorType> operand_types, result_types;
  std::vector<hlo::Computation*> regions;    // region_info's computations
  std::vector<Region> region_info;
  std::string raw_value;                     // a constant's dense<...> text
  std::pair<int64_t, int64_t> at;            // line, column of the op
};

hlo::Shape shape_of(const TensorType& t);
/// Integers of a raw attribute: `[1, 0]`, `array<i64: 1, 0>`, `dense<[1, 0]> : tensor<2xi64>`, `3 : i64`.
std::vector<int64_t> ints_of(std::string_view raw);
/// The blobs of a `{-# dialect_resources: { builtin: { name: "0x..." } } #-}` section (name -> hex text).
std::map<std::string, std::string> read_resources(std::string_view text);
/// Makes dense_literal_of resolve dense_resource<name> in `blobs` while it lives (one import, one thread).
class ResourceScope {
 public:
  explicit ResourceScope(const std::map<std::string, std::string>* blobs);
  ~ResourceScope();
  ResourceScope(const ResourceScope&) = delete;
  ResourceScope& operator=(const ResourceScope&) = delete;

 private:
  const std::map<std::string, std::string>* prev_;
};
/// A dense<...> (or dense_resource<...>) literal of type t.
detail::Literal dense_literal_of(Cursor& c, std::string_view raw, const TensorType& t);
/// Builds the instruction(s) of one op into comp; returns its results (one per result type).
std::vector<hlo::Instruction*> build_op(hlo::Computation& comp, OpSyntax& op);
/// Ops with regions (import_regions.cpp): while, case/if, sort, scatter, reduce_window, variadic reduce; nullopt-like
/// empty `handled` when op is none of them.
std::vector<hlo::Instruction*> build_region_op(hlo::Computation& comp, OpSyntax& op, bool* handled);
/// Ops with dimension numbers or windows (import_indexed.cpp): gather, convolution, pad, dynamic_slice,
/// dynamic_update_slice, top_k.
std::vector<hlo::Instruction*> build_indexed_op(hlo::Computation& comp, OpSyntax& op, bool* handled);
/// stablehlo.rng_bit_generator expanded as XLA expands it (import_rng.cpp).
std::vector<hlo::Instruction*> build_rng_bit_generator(hlo::Computation& comp, OpSyntax& op);
/// Results of a multi-result instruction as get-tuple-elements (the instruction itself when it has one result).
std::vector<hlo::Instruction*> results_of(hlo::Computation& comp, hlo::Instruction* i, size_t n);
/// Shared helpers of the op builders.
[[noreturn]] void op_unsupported(const OpSyntax& op, std::string_view what);
[[noreturn]] void op_bad(const OpSyntax& op, std::string_view what);
const std::string* op_attr(const OpSyntax& op, std::initializer_list<std::string_view> keys);
/// The `key = value` of a `#stablehlo.gather<...>` style attribute as integers (empty when absent).
std::vector<int64_t> attr_field(const std::string& raw, std::string_view key);
/// The reducer a one-op region computes (add, multiply, maximum, minimum, and, or of its two arguments; scatter's
/// returning its second argument is replace), or CompileError.
hlo::Reducer reducer_of_region(const OpSyntax& op, const hlo::Computation& rc);

}  // namespace jitx::import
