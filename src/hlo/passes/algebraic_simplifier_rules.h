// The algebraic simplifier's rules by family (arithmetic identities, shape ops, dots), and what they share.
#pragma once
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"

namespace jitx::hlo::algsimp {
using Ints = std::vector<int64_t>;

/// Adds a rule's new instructions just before the instruction being rewritten, keeping use counts current.
class Rewriter {
 public:
  explicit Rewriter(Computation* c) : comp_(c) {}
  Computation* computation() const { return comp_; }
  /// Recounts the uses of every instruction by live ones (at the start of a sweep).
  void count_uses();
  /// How many operand slots read i.
  int64_t& uses(const Instruction* i) { return uses_[i]; }
  /// Makes i the instruction being rewritten: new instructions go just before it.
  void rewrite_at(Instruction* i) { at_ = i; }
  Instruction* add(Opcode op, Shape s, std::vector<Instruction*> ops, detail::Params attrs = {});
  /// A dtype d array of dims holding v everywhere: a scalar constant, broadcast unless dims is empty.
  Instruction* splat(DType d, const Ints& dims, double v);

 private:
  Computation* comp_;
  std::unordered_map<const Instruction*, int64_t> uses_;
  Instruction* at_ = nullptr;
};

// --- constant matching ----------------------------------------------------------------------------------
/// The constant under a chain of broadcasts, or nullptr.
const detail::Literal* splat_literal(const Instruction* i);
/// Whether every element of i is v (compared as a double, so 0 matches both +0 and -0).
bool splat_is(const Instruction* i, double v);
bool splat_is_positive_zero(const Instruction* i);
/// Whether v survives a round trip through dtype d exactly.
bool exact_in(DType d, double v);
/// Whether v is a finite power of two (so multiplying by it is exact, barring overflow and underflow).
bool is_pow2(double v);
/// i = c * A or A * c with c a floating splat constant: c's value and A, else nullptr.
Instruction* scaled_by_constant(Instruction* i, double& c);
bool is_identity(const Ints& p);
bool contains(const Ints& v, int64_t x);
/// The identity element of a reducer for dtype d, if init holds it.
bool init_is_identity(Reducer reducer, const Instruction* init, DType d);

// --- the rule families: each returns i's replacement and sets `rule` to its label, or returns nullptr ------
/// add, subtract, multiply, negate, divide, power, select.
Instruction* arithmetic_rules(Rewriter& r, Instruction* i, std::string_view& rule);
/// convert, reshape, transpose, broadcast, slice, reduce.
Instruction* shape_rules(Rewriter& r, Instruction* i, std::string_view& rule);
/// dot(transpose(A), B) and dot(A, transpose(B)).
Instruction* dot_of_transpose(Rewriter& r, Instruction* i, std::string_view& rule);
/// transpose(dot(A, B)), i the transpose.
Instruction* transpose_of_dot(Rewriter& r, Instruction* i, std::string_view& rule);

}  // namespace jitx::hlo::algsimp
