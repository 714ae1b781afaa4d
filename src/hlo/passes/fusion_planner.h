// Fusion planning: forms the fusion groups of one computation (output fusion, root-up producer fusion, sibling
// reductions), deciding with GroupRules which producer may join which consumer.
#pragma once
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/passes/fusion_decision.h"

namespace jitx::hlo::fusion {

class FusionPlanner {
 public:
  FusionPlanner(Computation& c, const Fusion::Options& o, std::string_view pass);
  /// Forms the groups (see "How groups form" in fusion.h); dissolved ones are left not alive.
  void plan();
  std::vector<Group>& groups() { return groups_; }
  /// Each instruction's position in the computation's order.
  const std::unordered_map<const Instruction*, int64_t>& positions() const { return pos_; }

 private:
  const std::vector<Instruction*>& users(const Instruction* i);
  bool is_output_of_computation(const Instruction* i) const;
  void sort_members(Group& g);
  int new_group(Instruction* root);
  void add_member(Group& g, Instruction* p, bool duplicate);
  void remove_member(Group& g, Instruction* p);
  bool depends_on(const Instruction* x, const Instruction* from,
                  std::unordered_map<const Instruction*, bool>& memo) const;
  void output_fusion();
  bool can_root(const Instruction& i) const;
  void grow_from(Instruction* root);
  void finish(int id);
  void dissolve(int id);
  bool reaches_through_others(int a, int b) const;
  void merge_loop_producers();
  void merge_siblings();

  Computation& c_;
  std::string_view pass_;
  std::vector<Instruction*> order_;
  std::unordered_map<const Instruction*, int64_t> pos_;
  UserMap users_;
  GroupRules rules_;
  std::vector<Group> groups_;
  std::unordered_map<const Instruction*, int> owner_;      // owned members -> group
  std::unordered_map<const Instruction*, int> dup_count_;  // how many groups hold a copy
  // Values a finished group reads from outside (its fusion's operands). A later group may not take such a
  // value inside itself: the earlier fusion still reads it (e.g. the operand of a producer it duplicated).
  std::unordered_map<const Instruction*, std::unordered_set<int>> read_by_group_;
  std::unordered_set<const Instruction*> grown_;
};

}  // namespace jitx::hlo::fusion
