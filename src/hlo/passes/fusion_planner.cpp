// Fusion planning (see fusion_planner.h): greedy grouping from the root up, as XLA's InstructionFusion.
#include "hlo/passes/fusion_planner.h"

#include <algorithm>
#include <queue>

#include "core/errors.h"
#include "hlo/passes/pass.h"

namespace jitx::hlo::fusion {

FusionPlanner::FusionPlanner(Computation& c, const Fusion::Options& o, std::string_view pass)
    : c_(c), pass_(pass), rules_(o, users_) {
  for (auto& u : c.instructions) order_.push_back(u.get());
  for (size_t p = 0; p < order_.size(); ++p) pos_[order_[p]] = static_cast<int64_t>(p);
  for (auto* i : order_) {
    std::unordered_set<const Instruction*> seen;
    for (auto* o : i->operands)
      if (seen.insert(o).second) users_[o].push_back(i);
  }
}

void FusionPlanner::plan() {
  output_fusion();
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) grow_from(*it);
  merge_loop_producers();
  merge_siblings();
}

const std::vector<Instruction*>& FusionPlanner::users(const Instruction* i) {
  static const std::vector<Instruction*> none;
  auto it = users_.find(i);
  return it == users_.end() ? none : it->second;
}

bool FusionPlanner::is_output_of_computation(const Instruction* i) const { return i == c_.root; }

void FusionPlanner::sort_members(Group& g) {
  std::sort(g.members.begin(), g.members.end(), [&](auto* a, auto* b) { return pos_.at(a) < pos_.at(b); });
}

int FusionPlanner::new_group(Instruction* root) {
  Group g;
  g.members = {root};
  g.in = {root};
  g.outputs = {root};
  groups_.push_back(std::move(g));
  int id = static_cast<int>(groups_.size()) - 1;
  owner_[root] = id;
  return id;
}

void FusionPlanner::add_member(Group& g, Instruction* p, bool duplicate) {
  // Members stay in the computation's order (the validators walk them operands first).
  auto at = std::lower_bound(g.members.begin(), g.members.end(), p,
                             [&](auto* a, auto* b) { return pos_.at(a) < pos_.at(b); });
  g.members.insert(at, p);
  g.in.insert(p);
  if (duplicate) g.dup.insert(p);
}

void FusionPlanner::remove_member(Group& g, Instruction* p) {
  g.members.erase(std::find(g.members.begin(), g.members.end(), p));
  g.in.erase(p);
  g.dup.erase(p);
}

/// Whether x is or depends on `from`: a walk up x's operands that stops at instructions placed before `from`,
/// which cannot depend on it (the order is topological). memo holds the answers found so far for this `from`.
bool FusionPlanner::depends_on(const Instruction* x, const Instruction* from,
                               std::unordered_map<const Instruction*, bool>& memo) const {
  int64_t from_pos = pos_.at(from);
  auto known = [&](const Instruction* i, bool& v) {
    auto it = memo.find(i);
    if (i == from || pos_.at(i) <= from_pos || it != memo.end()) {
      v = i == from || (it != memo.end() && it->second);
      return true;
    }
    return false;
  };
  bool v = false;
  if (known(x, v)) return v;
  std::vector<std::pair<const Instruction*, size_t>> stack{{x, 0}};  // instruction, next operand to look at
  while (!stack.empty()) {
    const Instruction* i = stack.back().first;
    size_t k = stack.back().second++;
    if (k == i->operands.size()) {
      memo[i] = false;
      stack.pop_back();
    } else if (!known(i->operands[k], v)) {
      stack.push_back({i->operands[k], 0});
    } else if (v) {
      for (auto& s : stack) memo[s.first] = true;  // each is a user (transitively) of the operand
      return true;
    }
  }
  return false;
}

/// Output fusion: each dot takes the largest single-output elementwise epilogue on its dims.
void FusionPlanner::output_fusion() {
  for (auto* dot : order_) {
    if (dot->opcode != Opcode::kDot || dot->shape.is_tuple || owner_.count(dot)) continue;
    // Whether a value depends on the dot: an epilogue member may not read one of these from outside. Asked of
    // the few operands of candidates (memoised), not computed for the whole rest of the computation per dot.
    std::unordered_map<const Instruction*, bool> desc_memo;
    auto desc = [&](const Instruction* x) { return depends_on(x, dot, desc_memo); };
    std::vector<Instruction*> S{dot};
    std::unordered_set<const Instruction*> inS{dot};
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t s = 0; s < S.size(); ++s)
        for (auto* u : users(S[s])) {
          if (inS.count(u) || owner_.count(u) || !is_elementwise(u->opcode) || u->shape.is_tuple ||
              u->shape.dims != dot->shape.dims)
            continue;
          bool ok = true;
          for (auto* o : u->operands) ok = ok && (inS.count(o) || !desc(o));
          if (!ok) continue;
          S.push_back(u);
          inS.insert(u);
          grew = true;
        }
    }
    std::sort(S.begin(), S.end(), [&](auto* a, auto* b) { return pos_[a] > pos_[b]; });
    // The latest member whose ancestors inside S have no users outside them is the root.
    for (auto* r : S) {
      if (r == dot) break;
      std::unordered_set<const Instruction*> anc;
      std::vector<const Instruction*> work{r};
      while (!work.empty()) {
        const Instruction* x = work.back();
        work.pop_back();
        if (!inS.count(x) || !anc.insert(x).second) continue;
        for (auto* o : x->operands) work.push_back(o);
      }
      if (!anc.count(dot)) continue;
      bool closed = true;
      for (auto* a : anc) {
        if (a == r) continue;
        if (is_output_of_computation(a)) closed = false;
        for (auto* u : users(a)) closed = closed && anc.count(u);
      }
      if (!closed) continue;
      int id = new_group(r);
      Group& g = groups_[id];
      for (auto* x : S)
        if (x != r && anc.count(x)) {
          add_member(g, x, false);
          owner_[x] = id;
        }
      g.kind = Kind::kOutput;
      trace_line(pass_, fmt::format("%{}: output fusion of %{} with a {}-instruction epilogue (rule: dot epilogue)",
                                    r->name, dot->name, g.members.size() - 1));
      break;
    }
  }
}

bool FusionPlanner::can_root(const Instruction& i) const {
  if (i.opcode == Opcode::kConstant || i.opcode == Opcode::kParameter) return false;
  return is_loop_op(i) || is_simple_reduce(i);
}

/// Takes producers into the group of `root` (creating it), latest first, then finishes the group.
void FusionPlanner::grow_from(Instruction* root) {
  if (grown_.count(root)) return;
  int id;
  if (auto it = owner_.find(root); it != owner_.end()) {
    id = it->second;
    if (groups_[id].outputs[0] != root) return;  // a member of a group grown from its root
  } else {
    if (!can_root(*root)) return;
    id = new_group(root);
  }
  grown_.insert(root);
  auto later = [&](const Instruction* a, const Instruction* b) { return pos_.at(a) < pos_.at(b); };
  std::priority_queue<Instruction*, std::vector<Instruction*>, decltype(later)> cand(later);
  std::unordered_set<const Instruction*> decided;
  auto push_operands = [&](Instruction* i) {
    if (i->opcode == Opcode::kDot) return;  // a dot's operands stay parameters
    for (auto* o : i->operands)
      if (!groups_[id].in.count(o)) cand.push(o);
  };
  for (auto* i : groups_[id].members) push_operands(i);
  while (!cand.empty()) {
    Instruction* p = cand.top();
    cand.pop();
    Group& g = groups_[id];
    if (g.in.count(p) || !decided.insert(p).second) continue;
    if (owner_.count(p) || !(is_loop_op(*p) || is_simple_reduce(*p)) || is_output_of_computation(p)) continue;
    bool all_in = !users(p).empty();
    for (auto* u : users(p)) all_in = all_in && g.in.count(u) && !g.dup.count(u);
    if (auto r = read_by_group_.find(p); r != read_by_group_.end())
      for (int reader : r->second) all_in = all_in && reader == id;
    bool duplicate = !all_in || dup_count_[p] > 0;
    if (duplicate && !is_cheap(*p)) continue;  // never recompute a costly producer in several kernels
    add_member(g, p, duplicate);
    if (!rules_.acceptable(g)) {
      remove_member(g, p);
      continue;
    }
    if (duplicate) dup_count_[p]++;
    else owner_[p] = id;
    push_operands(p);
  }
  finish(id);
}

/// Fixes the group's kind; cuts expensive work out from behind expanding broadcasts in per-element kinds;
/// dissolves groups with fewer than two instructions that do work.
void FusionPlanner::finish(int id) {
  Group& g = groups_[id];
  for (;;) {
    sort_members(g);
    g.kind = rules_.classify(g);
    JITX_ASSERT(g.kind != Kind::kInvalid, "fusion: group of %{} became invalid", g.outputs[0]->name);
    if (g.kind != Kind::kLoop && g.kind != Kind::kInput) break;
    const Instruction* cut = expensive_behind_broadcast(g);
    if (!cut) break;
    // Remove `cut` and every member it depends on: they stay outside (and may form their own group).
    std::vector<const Instruction*> work{cut};
    std::unordered_set<const Instruction*> drop;
    while (!work.empty()) {
      const Instruction* x = work.back();
      work.pop_back();
      if (!g.in.count(x) || !drop.insert(x).second) continue;
      for (auto* o : x->operands) work.push_back(o);
    }
    trace_line(pass_, fmt::format("%{}: {} instruction(s) from %{} kept out of the {} fusion (rule: expensive "
                                  "producer behind a broadcast)",
                                  g.outputs[0]->name, drop.size(), cut->name, kind_name(g.kind)));
    for (auto* x : drop) {
      Instruction* xi = const_cast<Instruction*>(x);
      if (g.dup.count(x)) dup_count_[x]--;
      else owner_.erase(x);
      remove_member(g, xi);
    }
  }
  int64_t real = 0;
  for (auto* i : g.members) real += i->opcode != Opcode::kConstant;
  if (real < 2) {
    dissolve(id);
    return;
  }
  for (auto* i : g.members)
    for (auto* o : i->operands)
      if (!g.in.count(o)) read_by_group_[o].insert(id);
}

void FusionPlanner::dissolve(int id) {
  Group& g = groups_[id];
  for (auto* i : g.members) {
    if (g.dup.count(i)) dup_count_[i]--;
    else owner_.erase(i);
  }
  g.alive = false;
}

/// Whether one kernel for the groups `a` and `b` would wait on itself through a: some operand a reads from outside
/// both depends, through instructions or through other groups (a kernel waits for every operand of each of its
/// members), on an owned member of b. An instruction owned by a group stands for the whole group. No cut-off by
/// position: a group's members may sit on both sides of b's.
bool FusionPlanner::reaches_through_others(int a, int b) const {
  const Group& A = groups_[a];
  const Group& B = groups_[b];
  std::vector<const Instruction*> work;
  for (auto* m : A.members)
    for (auto* o : m->operands)
      if (!A.in.count(o) && !B.in.count(o)) work.push_back(o);
  std::unordered_set<const Instruction*> seen;
  std::unordered_set<int> groups_seen;
  while (!work.empty()) {
    const Instruction* x = work.back();
    work.pop_back();
    if (!seen.insert(x).second) continue;
    if (B.in.count(x) && !B.dup.count(x)) return true;
    auto g = owner_.find(x);
    if (g != owner_.end() && g->second != a && g->second != b && groups_[g->second].alive &&
        groups_seen.insert(g->second).second)
      for (auto* m : groups_[g->second].members) work.push_back(m);
    for (auto* o : x->operands) work.push_back(o);
  }
  return false;
}

/// Multi-output loop fusion (XLA's producer-consumer multi-output fusion). A kLoop group C that reads the root of
/// another kLoop group P element for element, where that root also has users outside C (so P could not join C by
/// growing), takes P in: the fusion computes P's root once per element, uses it, and also writes it out. One pass
/// instead of P writing its value and C reading it back (Adam's m, v and parameter updates; GELU's forward values
/// that the backward pass keeps). Every output has the same dims, so one loop over them serves all.
void FusionPlanner::merge_loop_producers() {
  // Lone elementwise ops (left alone by growing: a costly one with users in several places) count as one-member
  // kLoop groups here; those that merge with nothing stay plain instructions. Lone data movement (a transpose)
  // stays out: layout assignment may make it a change of layout that no kernel writes.
  std::vector<int> lone;
  for (auto* i : order_)
    if (!owner_.count(i) && can_root(*i) && is_elementwise(i->opcode) && !is_cheap(*i)) {
      lone.push_back(new_group(i));
      groups_[lone.back()].kind = Kind::kLoop;
    }
  std::vector<int> loops;
  for (size_t k = 0; k < groups_.size(); ++k)
    if (groups_[k].alive && groups_[k].kind == Kind::kLoop) loops.push_back(static_cast<int>(k));
  auto root_pos = [&](int g) { return pos_.at(groups_[g].outputs[0]); };
  std::sort(loops.begin(), loops.end(), [&](int a, int b) { return root_pos(a) > root_pos(b); });
  for (int c : loops) {
    for (bool grew = groups_[c].alive; grew;) {
      grew = false;
      const Group& C = groups_[c];
      const Ints& dims = C.outputs[0]->shape.dims;
      // Producer roots C reads, latest first.
      std::vector<Instruction*> reads;
      for (auto* m : C.members)
        for (auto* o : m->operands)
          if (!C.in.count(o) && std::find(reads.begin(), reads.end(), o) == reads.end()) reads.push_back(o);
      std::sort(reads.begin(), reads.end(), [&](auto* a, auto* b) { return pos_.at(a) > pos_.at(b); });
      for (auto* x : reads) {
        auto own = owner_.find(x);
        if (own == owner_.end() || own->second == c) continue;
        int p = own->second;
        const Group& P = groups_[p];
        if (!P.alive || P.kind != Kind::kLoop) continue;
        bool fits = std::find(P.outputs.begin(), P.outputs.end(), x) != P.outputs.end();
        for (auto* o : P.outputs) fits = fits && o->shape.dims == dims;
        // Read at the output's own index only (elementwise users of the same dims): computed once per element.
        for (auto* m : C.members)
          for (auto* o : m->operands)
            if (P.in.count(o) && !P.dup.count(o))
              fits = fits && is_elementwise(m->opcode) && m->shape.dims == dims;
        if (!fits || reaches_through_others(c, p) || reaches_through_others(p, c)) continue;
        Group merged = C;
        for (auto* m : P.members) {
          if (!merged.in.count(m)) add_member(merged, m, P.dup.count(m) > 0);
          else if (merged.dup.count(m) && !P.dup.count(m)) merged.dup.erase(m);  // C's copy of what P owns
        }
        // P's outputs that someone outside the merged group still reads.
        for (auto* o : P.outputs) {
          bool outside = is_output_of_computation(o);
          for (auto* u : users(o)) outside = outside || !merged.in.count(u) || merged.dup.count(u);
          if (outside) merged.outputs.push_back(o);
        }
        sort_members(merged);
        if (!rules_.acceptable(merged) || rules_.classify(merged) != Kind::kLoop || expensive_behind_broadcast(merged))
          continue;
        trace_line(pass_, fmt::format("%{} + %{}: a loop fusion reads the other's root element for element (rule: "
                                      "multi-output loop fusion)",
                                      C.outputs[0]->name, x->name));
        for (auto* m : P.members) {
          bool in_c = C.in.count(m) > 0, c_dup = C.dup.count(m) > 0, p_dup = P.dup.count(m) > 0;
          if (in_c && (p_dup || c_dup)) dup_count_[m]--;  // two copies, or a copy and the original, become one
          if (!merged.dup.count(m)) owner_[m] = c;
        }
        groups_[c] = std::move(merged);
        groups_[p].alive = false;
        grew = true;
        break;
      }
    }
  }
  for (int id : lone)
    if (groups_[id].alive && groups_[id].members.size() == 1) dissolve(id);
}

/// Multi-output fusion: sibling reductions of the same dims over a common operand become one kInput kernel.
void FusionPlanner::merge_siblings() {
  // Single reduces count as one-member kInput groups here.
  for (auto* i : order_)
    if (is_simple_reduce(*i) && !owner_.count(i)) {
      int id = new_group(i);
      groups_[id].kind = Kind::kInput;
      for (auto* o : i->operands)
        if (o->opcode == Opcode::kConstant && is_cheap(*o)) {
          add_member(groups_[id], o, true);
          dup_count_[o]++;
        }
      sort_members(groups_[id]);
    }
  std::vector<int> inputs;
  for (size_t k = 0; k < groups_.size(); ++k)
    if (groups_[k].alive && groups_[k].kind == Kind::kInput && groups_[k].outputs.size() == 1)
      inputs.push_back(static_cast<int>(k));
  for (size_t a = 0; a < inputs.size(); ++a) {
    Group& A = groups_[inputs[a]];
    if (!A.alive) continue;
    for (size_t b = a + 1; b < inputs.size(); ++b) {
      Group& B = groups_[inputs[b]];
      if (!B.alive || !shares_operand(A, B) || depends(A, B) || depends(B, A)) continue;
      Group merged = A;
      for (auto* x : B.members)
        if (!merged.in.count(x)) add_member(merged, x, B.dup.count(x) > 0);
        else if (merged.dup.count(x) && !B.dup.count(x)) merged.dup.erase(x);
      merged.outputs.insert(merged.outputs.end(), B.outputs.begin(), B.outputs.end());
      sort_members(merged);
      if (!rules_.acceptable(merged) || rules_.classify(merged) != Kind::kInput) continue;
      trace_line(pass_, fmt::format("%{} + %{}: sibling reductions over a common operand (rule: multi-output "
                                    "fusion)",
                                    A.outputs[0]->name, B.outputs[0]->name));
      for (auto* x : B.members)
        if (B.dup.count(x) && A.in.count(x)) dup_count_[x]--;  // one copy instead of two
      for (auto* x : B.members)
        if (!merged.dup.count(x)) owner_[x] = inputs[a];
      merged.kind = Kind::kInput;
      A = std::move(merged);
      B.alive = false;
    }
  }
  // Lone reduces that found no sibling stay plain instructions.
  for (auto& g : groups_)
    if (g.alive && g.kind == Kind::kInput && g.outputs.size() == 1) {
      int64_t real = 0;
      for (auto* i : g.members) real += i->opcode != Opcode::kConstant;
      if (real < 2) dissolve(static_cast<int>(&g - groups_.data()));
    }
}

}  // namespace jitx::hlo::fusion
