// Fusion: output fusion of dot epilogues, greedy root-up producer fusion (kLoop/kInput/kRow), sibling reductions.
#include "hlo/passes/fusion.h"

#include <algorithm>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "hlo/analysis/cost_analysis.h"
#include "hlo/ir/attributes.h"

namespace jitx::hlo {

bool is_loop_fusible(Opcode op) {
  if (is_elementwise(op)) return true;
  switch (op) {
    case Opcode::kBroadcastInDim: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kReverse:
    case Opcode::kSlice: case Opcode::kIota: case Opcode::kConstant: case Opcode::kConcatenate: case Opcode::kPad:
      return true;
    default:
      return false;
  }
}

namespace {
using Ints = std::vector<int64_t>;
enum class Kind { kLoop, kInput, kOutput, kRow, kInvalid };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kLoop: return "kLoop";
    case Kind::kInput: return "kInput";
    case Kind::kOutput: return "kOutput";
    case Kind::kRow: return "kRow";
    default: return "invalid";
  }
}

constexpr int64_t kSmallConstant = 16;

bool is_loop_op(const Instruction& i) {
  if (i.shape.is_tuple) return false;
  // A bitcast-convert between types of one width is elementwise (a reinterpretation of each element's bits): it
  // fuses, so that random bits and the floats made from them are one kernel (XLA fuses it too).
  if (i.opcode == Opcode::kBitcastConvert) return is_elementwise_bitcast(i);
  if (!is_loop_fusible(i.opcode)) return false;
  return i.opcode != Opcode::kConstant || i.shape.num_elements() <= kSmallConstant;
}
bool is_simple_reduce(const Instruction& i) {
  return i.opcode == Opcode::kReduce && i.operands.size() == 2 && !i.shape.is_tuple;
}
/// Cheap enough to recompute in every consumer that wants it (XLA duplicates these freely).
bool is_cheap(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kBroadcastInDim: case Opcode::kIota: case Opcode::kReshape: case Opcode::kConvert:
      return !i.shape.is_tuple;
    case Opcode::kConstant: return i.shape.num_elements() <= kSmallConstant;
    default: return false;
  }
}
/// Elementwise work costly enough that recomputing it per broadcast element is a loss.
bool is_expensive(const Instruction& i) {
  return is_transcendental(i.opcode) || i.opcode == Opcode::kDivide || i.opcode == Opcode::kRemainder;
}
bool expands(const Instruction& i) {
  return i.opcode == Opcode::kBroadcastInDim && i.shape.num_elements() > i.operand(0)->shape.num_elements();
}

/// A candidate fusion: members are original instructions of the computation, in position order when sorted.
struct Group {
  std::vector<Instruction*> members;  // owned and duplicated
  std::unordered_set<const Instruction*> in, dup;
  std::vector<Instruction*> outputs;  // one, or several sibling reduces
  Kind kind = Kind::kLoop;
  bool alive = true;
};

class FusionBuilder {
 public:
  FusionBuilder(Module& m, Computation& c, const Fusion::Options& o, std::string_view pass)
      : m_(m), c_(c), opt_(o), pass_(pass) {
    for (auto& u : c.instructions) order_.push_back(u.get());
    for (size_t p = 0; p < order_.size(); ++p) pos_[order_[p]] = static_cast<int64_t>(p);
    for (auto* i : order_) {
      std::unordered_set<const Instruction*> seen;
      for (auto* o : i->operands)
        if (seen.insert(o).second) users_[o].push_back(i);
    }
  }

  bool run() {
    output_fusion();
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) grow_from(*it);
    merge_siblings();
    return materialize();
  }

 private:
  Module& m_;
  Computation& c_;
  Fusion::Options opt_;
  std::string_view pass_;
  std::vector<Instruction*> order_;
  std::unordered_map<const Instruction*, int64_t> pos_;
  std::unordered_map<const Instruction*, std::vector<Instruction*>> users_;
  std::vector<Group> groups_;
  std::unordered_map<const Instruction*, int> owner_;      // owned members -> group
  std::unordered_map<const Instruction*, int> dup_count_;  // how many groups hold a copy
  // Values a finished group reads from outside (its fusion's operands). A later group may not take such a
  // value inside itself: the earlier fusion still reads it (e.g. the operand of a producer it duplicated).
  std::unordered_map<const Instruction*, std::unordered_set<int>> read_by_group_;
  std::unordered_set<const Instruction*> grown_;
  std::unordered_map<const Instruction*, int64_t> replaced_;  // fusion/GTE -> position of the output it replaced

  const std::vector<Instruction*>& users(const Instruction* i) {
    static const std::vector<Instruction*> none;
    auto it = users_.find(i);
    return it == users_.end() ? none : it->second;
  }
  bool is_output_of_computation(const Instruction* i) const { return i == c_.root; }
  void sort_members(Group& g) {
    std::sort(g.members.begin(), g.members.end(), [&](auto* a, auto* b) { return pos_.at(a) < pos_.at(b); });
  }

  // --- validation of a member set against the contract in fusion.h ------------------------------------
  int64_t parameter_count(const Group& g) const {
    std::unordered_set<const Instruction*> ext;
    for (auto* i : g.members)
      for (auto* o : i->operands)
        if (!g.in.count(o)) ext.insert(o);
    return static_cast<int64_t>(ext.size());
  }

  /// Whether an expensive member is recomputed behind an expanding broadcast (bad for per-element kernels).
  const Instruction* expensive_behind_broadcast(const Group& g) const {
    for (auto* b : g.members) {
      if (!expands(*b) || !g.in.count(b->operand(0))) continue;
      std::vector<const Instruction*> work{b->operand(0)};
      std::unordered_set<const Instruction*> seen;
      while (!work.empty()) {
        const Instruction* x = work.back();
        work.pop_back();
        if (!g.in.count(x) || !seen.insert(x).second) continue;
        if (is_expensive(*x)) return b->operand(0);
        for (auto* o : x->operands) work.push_back(o);
      }
    }
    return nullptr;
  }

  Kind classify(const Group& g) const {
    const Instruction* dot = nullptr;
    std::vector<const Instruction*> reduces;
    for (auto* i : g.members) {
      if (i->opcode == Opcode::kDot) {
        if (dot) return Kind::kInvalid;
        dot = i;
      } else if (is_simple_reduce(*i)) {
        reduces.push_back(i);
      } else if (!is_loop_op(*i)) {
        return Kind::kInvalid;
      }
    }
    if (dot) return reduces.empty() && valid_output(g, dot) ? Kind::kOutput : Kind::kInvalid;
    if (reduces.empty()) return g.outputs.size() == 1 ? Kind::kLoop : Kind::kInvalid;
    bool reduce_used_inside = false;
    for (auto* r : reduces)
      for (auto* u : const_cast<FusionBuilder*>(this)->users(r))
        if (g.in.count(u)) reduce_used_inside = true;
    if (!reduce_used_inside && valid_input(g, reduces)) return Kind::kInput;
    if (g.outputs.size() == 1 && valid_row(g, reduces)) return Kind::kRow;
    return Kind::kInvalid;
  }

  bool valid_output(const Group& g, const Instruction* dot) const {
    if (g.outputs.size() != 1) return false;
    for (auto* o : dot->operands)
      if (g.in.count(o)) return false;  // a GEMM reads its operands from memory
    std::unordered_set<const Instruction*> dep{dot};
    for (auto* i : g.members) {
      if (i == dot) continue;
      bool d = false;
      for (auto* o : i->operands) d = d || dep.count(o);
      if (!d) continue;
      if (!is_elementwise(i->opcode) || i->shape.dims != dot->shape.dims) return false;
      dep.insert(i);
    }
    return dep.count(g.outputs[0]) > 0;
  }

  bool valid_input(const Group& g, const std::vector<const Instruction*>& reduces) const {
    if (g.outputs.size() != reduces.size()) return false;
    for (auto* o : g.outputs)
      if (!is_simple_reduce(*o)) return false;
    for (auto* r : reduces) {
      if (r->operand(0)->shape.dims != reduces[0]->operand(0)->shape.dims) return false;
      if (dimensions_of(*r) != dimensions_of(*reduces[0])) return false;
    }
    return true;
  }

  bool valid_row(const Group& g, const std::vector<const Instruction*>& reduces) const {
    const Ints& D = reduces[0]->operand(0)->shape.dims;
    int64_t k = static_cast<int64_t>(D.size()) - 1;
    if (k < 0) return false;
    Ints lead(D.begin(), D.end() - 1), lead1 = lead;
    lead1.push_back(1);
    auto full = [&](const Shape& s) { return s.dims == D; };
    auto row = [&](const Shape& s) { return s.dims == lead || s.dims == lead1; };
    Ints leading_dims, leading1_dims;
    for (int64_t d = 0; d < k; ++d) leading_dims.push_back(d);
    leading1_dims = leading_dims;
    leading1_dims.push_back(k);
    for (auto* r : reduces)
      if (r->operand(0)->shape.dims != D || dimensions_of(*r) != Ints{k}) return false;
    for (auto* i : g.members) {
      const Shape& s = i->shape;
      switch (i->opcode) {
        case Opcode::kReduce: break;
        case Opcode::kConstant:
          if (!s.dims.empty()) return false;
          break;
        case Opcode::kBroadcastInDim: {
          const Shape& o = i->operand(0)->shape;
          const Ints& bd = broadcast_dimensions_of(*i);
          bool ok = o.dims.empty() && (full(s) || row(s));
          if (full(s)) {
            ok = ok || (o.dims == lead && bd == leading_dims) || (o.dims == lead1 && bd == leading1_dims) ||
                 (o.dims == Ints{D[k]} && bd == Ints{k}) || (o.dims == D);
          }
          if (!ok) return false;
          break;
        }
        case Opcode::kReshape:
          if (!((row(s) && row(i->operand(0)->shape)) || (full(s) && full(i->operand(0)->shape)))) return false;
          break;
        default:
          if (!is_elementwise(i->opcode) || !(full(s) || row(s) || s.dims.empty())) return false;
      }
    }
    const Shape& out = g.outputs[0]->shape;
    return full(out) || row(out);
  }

  /// Whether g satisfies the contract of some kind (the broadcast rule is checked when the group is finished).
  bool acceptable(const Group& g) const {
    if (static_cast<int64_t>(g.members.size()) > opt_.max_instructions) return false;
    if (parameter_count(g) > opt_.max_parameters) return false;
    return classify(g) != Kind::kInvalid;
  }

  // --- building -----------------------------------------------------------------------------------------
  int new_group(Instruction* root) {
    Group g;
    g.members = {root};
    g.in = {root};
    g.outputs = {root};
    groups_.push_back(std::move(g));
    int id = static_cast<int>(groups_.size()) - 1;
    owner_[root] = id;
    return id;
  }

  void add_member(Group& g, Instruction* p, bool duplicate) {
    // Members stay in the computation's order (the validators walk them operands first).
    auto at = std::lower_bound(g.members.begin(), g.members.end(), p,
                               [&](auto* a, auto* b) { return pos_.at(a) < pos_.at(b); });
    g.members.insert(at, p);
    g.in.insert(p);
    if (duplicate) g.dup.insert(p);
  }
  void remove_member(Group& g, Instruction* p) {
    g.members.erase(std::find(g.members.begin(), g.members.end(), p));
    g.in.erase(p);
    g.dup.erase(p);
  }

  /// Whether x is or depends on `from`: a walk up x's operands that stops at instructions placed before `from`,
  /// which cannot depend on it (the order is topological). memo holds the answers found so far for this `from`.
  bool depends_on(const Instruction* x, const Instruction* from,
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
  void output_fusion() {
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

  bool can_root(const Instruction& i) const {
    if (i.opcode == Opcode::kConstant || i.opcode == Opcode::kParameter) return false;
    return is_loop_op(i) || is_simple_reduce(i);
  }

  /// Takes producers into the group of `root` (creating it), latest first, then finishes the group.
  void grow_from(Instruction* root) {
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
      if (!acceptable(g)) {
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
  void finish(int id) {
    Group& g = groups_[id];
    for (;;) {
      sort_members(g);
      g.kind = classify(g);
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

  void dissolve(int id) {
    Group& g = groups_[id];
    for (auto* i : g.members) {
      if (g.dup.count(i)) dup_count_[i]--;
      else owner_.erase(i);
    }
    g.alive = false;
  }

  /// Multi-output fusion: sibling reductions of the same dims over a common operand become one kInput kernel.
  void merge_siblings() {
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
        if (!acceptable(merged) || classify(merged) != Kind::kInput) continue;
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

  bool shares_operand(const Group& a, const Group& b) const {
    std::unordered_set<const Instruction*> ext;
    for (auto* i : a.members)
      for (auto* o : i->operands)
        if (!a.in.count(o) && o->opcode != Opcode::kConstant && !o->shape.dims.empty()) ext.insert(o);
    for (auto* i : b.members)
      for (auto* o : i->operands)
        if (!b.in.count(o) && ext.count(o)) return true;
    return false;
  }
  /// Whether any member of `b` depends (through anything) on an owned member of `a`.
  bool depends(const Group& a, const Group& b) const {
    std::vector<const Instruction*> work(b.members.begin(), b.members.end());
    std::unordered_set<const Instruction*> seen;
    while (!work.empty()) {
      const Instruction* x = work.back();
      work.pop_back();
      if (!seen.insert(x).second) continue;
      if (a.in.count(x) && !a.dup.count(x) && !b.in.count(x)) return true;
      for (auto* o : x->operands) work.push_back(o);
    }
    return false;
  }

  // --- materialisation ----------------------------------------------------------------------------------
  // The edits are batched: emit() records each fusion's place (before its last member), the outputs it
  // replaces and the members it removes, and apply_edits() makes them all in one walk. Editing the computation
  // per fusion (insert_before, replace_all_uses, remove_instruction each walk all instructions) was quadratic
  // in an unrolled program. The result is the same, instruction for instruction and name for name.
  std::unordered_map<const Instruction*, Instruction*> replaced_by_;  // fusion output -> fusion or its GTE
  std::unordered_map<const Instruction*, std::vector<Instruction*>> before_;  // new instructions, by place
  std::unordered_set<const Instruction*> removed_;

  /// What reads of i see after the fusions emitted so far.
  Instruction* resolve(Instruction* i) const {
    for (auto it = replaced_by_.find(i); it != replaced_by_.end(); it = replaced_by_.find(i)) i = it->second;
    return i;
  }

  /// A new instruction of c_, placed just before `at` when the edits are applied.
  Instruction* add_before(const Instruction* at, Opcode op, Shape shape, std::vector<Instruction*> operands,
                          detail::Params attrs) {
    Instruction* root = c_.root;
    Instruction* i = c_.add(op, std::move(shape), std::move(operands), std::move(attrs));  // appended for now
    c_.root = root;
    before_[at].push_back(i);
    return i;
  }

  void apply_edits() {
    std::vector<std::unique_ptr<Instruction>> old = std::move(c_.instructions);
    c_.instructions.clear();
    std::unordered_map<const Instruction*, size_t> index;
    for (size_t k = 0; k < old.size(); ++k) index[old[k].get()] = k;
    for (auto& u : old) {
      if (!u) continue;  // a new instruction, already placed
      if (auto b = before_.find(u.get()); b != before_.end())
        for (auto* n : b->second) c_.instructions.push_back(std::move(old[index.at(n)]));
      if (!removed_.count(u.get())) c_.instructions.push_back(std::move(u));
    }
    for (auto& u : c_.instructions)
      for (auto*& o : u->operands) o = resolve(o);
    c_.root = resolve(c_.root);
  }

  bool materialize() {
    bool changed = false;
    std::unordered_set<Instruction*> duplicated;
    for (auto& g : groups_) {
      if (!g.alive) continue;
      sort_members(g);
      emit(g);
      for (auto* d : g.dup) duplicated.insert(const_cast<Instruction*>(d));
      changed = true;
    }
    apply_edits();
    c_.sort_topologically();
    // Only originals still in the computation: a producer copied into one fusion may have been owned (and
    // removed) by another.
    for (auto it = duplicated.begin(); it != duplicated.end();) it = removed_.count(*it) ? duplicated.erase(it) : std::next(it);
    // Originals of duplicated producers that every user now reads from a copy (users counted once each, as
    // Instruction::users() does).
    std::unordered_map<const Instruction*, int64_t> users;
    auto count_uses = [&](const Instruction* i, int64_t delta) {
      std::unordered_set<const Instruction*> seen;
      for (auto* o : i->operands)
        if (seen.insert(o).second) users[o] += delta;
    };
    for (auto& i : c_.instructions) count_uses(i.get(), 1);
    std::unordered_set<const Instruction*> dead;
    for (bool again = true; again;) {
      again = false;
      for (auto* d : std::vector<Instruction*>(duplicated.begin(), duplicated.end()))
        if (d != c_.root && users[d] == 0) {
          duplicated.erase(d);
          dead.insert(d);
          count_uses(d, -1);
          again = true;
        }
    }
    std::erase_if(c_.instructions, [&](auto& u) { return dead.count(u.get()) > 0; });
    return changed;
  }

  /// Position in the original order; instructions made by earlier emits (fusions, get-tuple-elements) sort by
  /// the position of what they replace, which their own operands precede.
  int64_t position(const Instruction* i) const {
    auto it = pos_.find(i);
    if (it != pos_.end()) return it->second;
    auto r = replaced_.find(i);
    return r == replaced_.end() ? INT64_MAX : r->second;
  }

  void emit(Group& g) {
    Computation* fc = m_.add_computation("fused_computation");
    std::unordered_map<const Instruction*, Instruction*> map;
    // Operands in the order the computation defines them (parameters first, as they are numbered).
    std::vector<Instruction*> operands;
    std::unordered_set<const Instruction*> seen;
    for (auto* i : g.members)
      for (auto* o : i->operands)
        if (!g.in.count(resolve(o)) && seen.insert(resolve(o)).second) operands.push_back(resolve(o));
    std::sort(operands.begin(), operands.end(), [&](auto* a, auto* b) { return position(a) < position(b); });
    for (size_t k = 0; k < operands.size(); ++k)
      map[operands[k]] = fc->add_parameter(static_cast<int64_t>(k), operands[k]->shape, fmt::format("param_{}", k));
    for (auto* i : g.members) {
      std::vector<Instruction*> ops;
      for (auto* o : i->operands) ops.push_back(map.at(resolve(o)));
      Instruction* ni = fc->add(i->opcode, i->shape, ops, i->attrs);
      ni->literal = i->literal;
      map[i] = ni;
    }
    Shape shape = g.outputs[0]->shape;
    if (g.outputs.size() > 1) {
      std::vector<Instruction*> outs;
      std::vector<Shape> shapes;
      for (auto* o : g.outputs) {
        outs.push_back(map.at(o));
        shapes.push_back(o->shape);
      }
      shape = Shape::tuple(shapes);
      fc->add(Opcode::kTuple, shape, outs);
    } else {
      fc->root = map.at(g.outputs[0]);
    }
    Instruction* last = g.members.back();
    Instruction* f = add_before(last, Opcode::kFusion, shape, operands,
                                detail::Params{{"kind", std::string(kind_name(g.kind))}});
    f->called = {fc};
    trace_line(pass_, fmt::format("%{}: {} fusion of {} instructions, {} operand(s), {} output(s) -> %{}",
                                  g.outputs[0]->name, kind_name(g.kind), g.members.size(), operands.size(),
                                  g.outputs.size(), f->name));
    if (g.outputs.size() == 1) {
      replaced_[f] = pos_.at(g.outputs[0]);
      replaced_by_[g.outputs[0]] = f;
    } else {
      for (size_t k = 0; k < g.outputs.size(); ++k) {
        Instruction* gte = add_before(last, Opcode::kGetTupleElement, g.outputs[k]->shape, {f},
                                      detail::Params{{"index", static_cast<int64_t>(k)}});
        replaced_[gte] = pos_.at(g.outputs[k]);
        replaced_by_[g.outputs[k]] = gte;
      }
    }
    // Owned members are used only inside the fusion now.
    for (auto* m : g.members)
      if (!g.dup.count(m)) removed_.insert(m);
  }
};

/// The computations fusion runs on: everything but fused computations (and what they call).
std::vector<Computation*> fusible_computations(Module& m) {
  std::unordered_set<const Computation*> fused;
  for (auto& c : m.computations)
    for (auto& i : c->instructions)
      if (i->opcode == Opcode::kFusion)
        for (auto* cc : i->called) fused.insert(cc);
  std::vector<Computation*> out;
  for (auto& c : m.computations)
    if (!fused.count(c.get())) out.push_back(c.get());
  return out;
}
}  // namespace

bool Fusion::run(Module& m) {
  bool changed = false;
  for (auto* c : fusible_computations(m)) {
    FusionBuilder b(m, *c, options_, name());
    changed = b.run() || changed;
  }
  return changed;
}

}  // namespace jitx::hlo
