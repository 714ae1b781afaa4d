// The compiler IR: hlo::Module of Computations of Instructions, StableHLO's op set, shapes with layouts.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/literal.h"
#include "core/params.h"
#include "jitx/dtype.h"

namespace jitx::hlo {

enum class Opcode : uint16_t {
#define X(e, text, mlir, arity, kind) e,
#include "hlo/ir/opcodes.def"
#undef X
  kNumOpcodes
};

std::string_view opcode_name(Opcode op);       // "add"
std::string_view opcode_mlir_name(Opcode op);  // "stablehlo.add"
int opcode_arity(Opcode op);                   // -1 for variadic
bool is_elementwise(Opcode op);                // U, B and T kinds
bool is_unary_elementwise(Opcode op);
bool is_binary_elementwise(Opcode op);
Opcode opcode_from_name(std::string_view name);  // throws on unknown

/// An array shape (dtype, dims, layout as minor_to_major) or a tuple of shapes.
struct Shape {
  DType dtype = DType::float32;
  std::vector<int64_t> dims;
  std::vector<int64_t> layout;  // minor_to_major; empty means row-major (default)
  std::vector<Shape> tuple_shapes;
  bool is_tuple = false;

  Shape() = default;
  Shape(DType d, std::vector<int64_t> ds) : dtype(d), dims(std::move(ds)) {}
  static Shape tuple(std::vector<Shape> elems);
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t num_elements() const;
  int64_t byte_size() const;  // of an array shape (sum of elements for tuples)
  bool same_type(const Shape& o) const;  // dtype and dims (and tuple structure), ignoring layout
  /// "f32[8,4]{1,0}" (layout only with with_layout), tuples "(f32[8], s32[])".
  std::string str(bool with_layout = false) const;
  /// MLIR type "tensor<8x4xf32>"; tuples are not MLIR types and assert.
  std::string mlir() const;
};

/// XLA's element type spelling in HLO text: pred, s32, u8, f32, bf16.
std::string_view hlo_dtype_name(DType d);
/// The bit pattern HLO text prints as plain `nan` for a floating dtype (others print as nan(0x<bits>)).
uint64_t canonical_nan_bits(DType d);

class Computation;

class Instruction {
 public:
  Opcode opcode;
  Shape shape;
  std::vector<Instruction*> operands;
  std::vector<Computation*> called;  // fusion, while (cond, body), conditional branches, call
  detail::Params attrs;
  std::shared_ptr<detail::Literal> literal;  // constants
  int64_t parameter_number = -1;
  std::string name;
  Computation* parent = nullptr;

  Instruction* operand(size_t i) const { return operands.at(i); }
  /// The users of this instruction inside its computation (computed on demand).
  std::vector<Instruction*> users() const;
};

class Computation {
 public:
  std::string name;
  std::vector<std::unique_ptr<Instruction>> instructions;  // in a valid (topological) order
  std::vector<Instruction*> parameters;
  Instruction* root = nullptr;
  class Module* parent = nullptr;

  /// Appends an instruction and names it "<opcode>.<n>" unless named.
  Instruction* add(Opcode op, Shape shape, std::vector<Instruction*> operands, detail::Params attrs = {},
                   std::string name = "");
  Instruction* add_parameter(int64_t number, Shape shape, std::string name = "");
  Instruction* add_constant(detail::Literal lit);
  /// A scalar constant of dtype d holding v (converted).
  Instruction* add_scalar_constant(DType d, double v);

  // --- editing (hlo_utils.cpp); these keep `instructions` in a valid topological order ---
  /// Inserts a new instruction just before `before` (its operands must be defined before `before`); the root
  /// is left alone, unlike add().
  Instruction* insert_before(const Instruction* before, Opcode op, Shape shape, std::vector<Instruction*> operands,
                             detail::Params attrs = {}, std::string name = "");
  Instruction* insert_constant_before(const Instruction* before, detail::Literal lit);
  /// Makes every user of old_inst (and the root, if it is old_inst) use new_inst instead; returns whether anything
  /// changed. new_inst must have old_inst's type and be defined before old_inst's first user.
  bool replace_all_uses(Instruction* old_inst, Instruction* new_inst);
  /// Erases an instruction that has no users, is not the root and is not a parameter.
  void remove_instruction(Instruction* inst);
  /// Erases every instruction the root does not depend on (parameters stay); returns how many were removed.
  int64_t remove_dead_instructions();
  /// Reorders `instructions` so operands come first, keeping the current order where it is already valid.
  void sort_topologically();
  Instruction* find(std::string_view name) const;  // nullptr if absent
};

class Module {
 public:
  explicit Module(std::string name) : name(std::move(name)) {}
  std::string name;
  std::vector<std::unique_ptr<Computation>> computations;
  Computation* entry = nullptr;

  Computation* add_computation(std::string name);
  std::string unique_name(std::string_view base);
  /// Keeps unique_name() from ever returning `name` (used by the parser for names read from text).
  void reserve_name(std::string_view name);

  /// A deep copy (computations, instructions, attributes); constant literals are shared, as they are immutable.
  std::unique_ptr<Module> clone() const;
  /// XXH3-128 of the canonical text (instruction and computation names renumbered, module name left out), as 32
  /// hex digits: equal for modules that compute the same thing with the same structure, whatever they are named.
  std::string fingerprint() const;
  Computation* find_computation(std::string_view name) const;  // nullptr if absent

 private:
  int64_t next_id_ = 0;
};

/// XLA-style HLO text of a module (HloModule ..., ENTRY ..., fusion computations, layouts). Every constant value
/// is printed so that parse_hlo (hlo_parser.h) reads back the same module.
std::string print_hlo(const Module& m);
/// The text print_hlo writes with names made canonical (%c<k> computations, %i<k> instructions in order, no
/// module name): what Module::fingerprint hashes.
std::string print_hlo_canonical(const Module& m);

/// The text of one instruction and of the computations it calls (transitively), with canonical names: operands
/// %a<k> by first occurrence, with their types; computations %c<k>; their instructions %i<k>. Equal texts mean
/// the same function of the same operand buffers, whatever the names (the CPU backend compiles one kernel for
/// all instructions with equal text).
std::string print_instruction_canonical(const Instruction& inst);

/// A new computation of `m` that computes `inst` alone: one parameter per operand and a copy of inst (its attributes,
/// called computations and literal), as its root. What backends hand the reference evaluator for one instruction.
Computation* add_single_instruction_computation(Module& m, const Instruction& inst);

/// The layout of an array shape as minor_to_major, with the default (empty) spelled out as row-major.
std::vector<int64_t> minor_to_major(const Shape& s);
/// Whether a kTranspose or kCopy moves no data: its result's layout orders memory exactly as its operand's does
/// (layout assignment makes transposes so; backends and buffer assignment treat them as bitcasts).
bool is_layout_bitcast(const Instruction& i);

/// Whether a kBitcastConvert reinterprets each element's bits as another type of the same width (not bool): an
/// elementwise op, which fusion fuses and backends compute in place of a value conversion.
bool is_elementwise_bitcast(const Instruction& i);

/// Checks every instruction's operands, arities and shapes; throws CompileError naming the instruction.
void verify(const Module& m);

}  // namespace jitx::hlo
