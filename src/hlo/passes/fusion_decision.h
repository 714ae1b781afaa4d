// Fusion decisions: which instructions may fuse, and which kind (kLoop, kInput, kOutput, kRow) a candidate group
// forms, if any, under the contract in fusion.h.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/ir/hlo.h"
#include "hlo/passes/fusion.h"

namespace jitx::hlo::fusion {
using Ints = std::vector<int64_t>;
using UserMap = std::unordered_map<const Instruction*, std::vector<Instruction*>>;

enum class Kind { kLoop, kInput, kOutput, kRow, kInvalid };
const char* kind_name(Kind k);

/// Constants of at most this many elements fuse (and are duplicated freely).
inline constexpr int64_t kSmallConstant = 16;

/// A loop op (see fusion.h): fusible into every kind, one output element from its index.
bool is_loop_op(const Instruction& i);
/// A single-operand, array-valued reduce.
bool is_simple_reduce(const Instruction& i);
/// Cheap enough to recompute in every consumer that wants it (XLA duplicates these freely).
bool is_cheap(const Instruction& i);
/// Elementwise work costly enough that recomputing it per broadcast element is a loss.
bool is_expensive(const Instruction& i);
/// A broadcast that makes more elements than it reads.
bool expands(const Instruction& i);

/// A candidate fusion: members are original instructions of the computation, in position order when sorted.
struct Group {
  std::vector<Instruction*> members;  // owned and duplicated
  std::unordered_set<const Instruction*> in, dup;
  std::vector<Instruction*> outputs;  // one, or several sibling reduces
  Kind kind = Kind::kLoop;
  bool alive = true;
};

/// Judges candidate groups of one computation; users maps each instruction to its users (each once).
class GroupRules {
 public:
  GroupRules(const Fusion::Options& o, const UserMap& users) : opt_(o), users_(users) {}
  /// The kind whose contract g satisfies, or kInvalid (the broadcast rule is checked separately).
  Kind classify(const Group& g) const;
  /// Whether g is within the size limits and satisfies the contract of some kind.
  bool acceptable(const Group& g) const;

 private:
  int64_t parameter_count(const Group& g) const;
  bool valid_output(const Group& g, const Instruction* dot) const;
  bool valid_input(const Group& g, const std::vector<const Instruction*>& reduces) const;
  bool valid_row(const Group& g, const std::vector<const Instruction*>& reduces) const;

  Fusion::Options opt_;
  const UserMap& users_;
};

/// The operand of an expanding broadcast behind which g recomputes an expensive member, or nullptr (bad for
/// per-element kernels).
const Instruction* expensive_behind_broadcast(const Group& g);
/// Whether a and b read a common non-constant, non-scalar operand from outside.
bool shares_operand(const Group& a, const Group& b);
/// Whether any member of `b` depends (through anything) on an owned member of `a`.
bool depends(const Group& a, const Group& b);

}  // namespace jitx::hlo::fusion
