// Fusion rewriting: turns planned groups into kFusion instructions and their fused computations.
#pragma once
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/passes/fusion_decision.h"

namespace jitx::hlo::fusion {

/// The edits are batched: emit() records each fusion's place (before its last member), the outputs it
/// replaces and the members it removes, and apply_edits() makes them all in one walk. Editing the computation
/// per fusion (insert_before, replace_all_uses, remove_instruction each walk all instructions) was quadratic
/// in an unrolled program. The result is the same, instruction for instruction and name for name.
class FusionEmitter {
 public:
  /// pos: each original instruction's position in c's order.
  FusionEmitter(Module& m, Computation& c, std::string_view pass,
                const std::unordered_map<const Instruction*, int64_t>& pos)
      : m_(m), c_(c), pass_(pass), pos_(pos) {}
  /// Emits every alive group as a fusion; returns whether there was any.
  bool materialize(std::vector<Group>& groups);

 private:
  Instruction* resolve(Instruction* i) const;
  Instruction* add_before(const Instruction* at, Opcode op, Shape shape, std::vector<Instruction*> operands,
                          detail::Params attrs);
  void apply_edits();
  int64_t position(const Instruction* i) const;
  void sort_members(Group& g) const;
  void emit(Group& g);

  Module& m_;
  Computation& c_;
  std::string_view pass_;
  const std::unordered_map<const Instruction*, int64_t>& pos_;
  std::unordered_map<const Instruction*, int64_t> replaced_;  // fusion/GTE -> position of the output it replaced
  std::unordered_map<const Instruction*, Instruction*> replaced_by_;  // fusion output -> fusion or its GTE
  std::unordered_map<const Instruction*, std::vector<Instruction*>> before_;  // new instructions, by place
  std::unordered_set<const Instruction*> removed_;
};

}  // namespace jitx::hlo::fusion
