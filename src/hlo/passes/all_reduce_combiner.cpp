// The all-reduce combiner (see all_reduce_combiner.h).
#include "hlo/passes/all_reduce_combiner.h"

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"

namespace jitx::hlo {

namespace {

int64_t bytes_of(const Shape& s) { return s.num_elements() * static_cast<int64_t>(dtype_size(s.dtype)); }

/// The key all-reduces must share to be combined: reducer, dtype, groups.
std::string key_of(const Instruction& ar) {
  return std::string(reducer_name(reducer_of(ar))) + "|" + std::string(dtype_name(ar.shape.dtype)) + "|" +
         groups_str(CollectiveConfig::of(ar).replica_groups);
}

bool combine(Computation& c, const std::vector<Instruction*>& batch) {
  if (batch.size() < 2) return false;
  Instruction* root = c.root;  // add() makes each new instruction the root
  std::vector<Instruction*> flat;
  int64_t total = 0;
  DType d = batch[0]->shape.dtype;
  for (auto* ar : batch) {
    int64_t n = ar->shape.num_elements();
    flat.push_back(c.add(Opcode::kReshape, Shape(d, {n}), {ar->operand(0)}));
    total += n;
  }
  detail::Params ca;
  ca.set("dimension", int64_t{0});
  Instruction* cat = c.add(Opcode::kConcatenate, Shape(d, {total}), flat, ca);
  // The members' groups and reducer (not their shardings: the combined value is a flat vector).
  detail::Params attrs;
  CollectiveConfig::of(*batch[0]).set_on(attrs);
  attrs.set("reducer", std::string(reducer_name(reducer_of(*batch[0]))));
  Instruction* sum = c.add(Opcode::kAllReduce, Shape(d, {total}), {cat}, attrs);
  int64_t at = 0;
  for (auto* ar : batch) {
    int64_t n = ar->shape.num_elements();
    detail::Params sa;
    sa.set("start_indices", std::vector<int64_t>{at});
    sa.set("limit_indices", std::vector<int64_t>{at + n});
    sa.set("strides", std::vector<int64_t>{1});
    Instruction* piece = c.add(Opcode::kSlice, Shape(d, {n}), {sum}, sa);
    Instruction* back = c.add(Opcode::kReshape, ar->shape, {piece});
    if (auto s = sharding_of(*ar)) set_sharding(*back, *s);
    c.replace_all_uses(ar, back);
    if (root == ar) root = back;
    at += n;
  }
  c.root = root;
  return true;
}

}  // namespace

bool AllReduceCombiner::run(Module& m) {
  bool changed = false;
  for (auto& comp : m.computations) {
    Computation& c = *comp;
    c.remove_dead_instructions();  // a replaced all-reduce must not be summed again
    // Which all-reduces each instruction depends on (bit k: the k-th all-reduce in order).
    std::vector<Instruction*> ars;
    std::unordered_map<const Instruction*, std::vector<bool>> deps;
    for (auto& up : c.instructions) {
      Instruction* i = up.get();
      if (i->opcode == Opcode::kAllReduce) ars.push_back(i);
    }
    if (ars.size() < 2) continue;
    std::unordered_map<const Instruction*, size_t> index;
    for (size_t k = 0; k < ars.size(); ++k) index[ars[k]] = k;
    for (auto& up : c.instructions) {
      Instruction* i = up.get();
      std::vector<bool> d(ars.size(), false);
      for (auto* o : i->operands) {
        auto it = deps.find(o);
        if (it == deps.end()) continue;
        for (size_t k = 0; k < d.size(); ++k) d[k] = d[k] || it->second[k];
      }
      if (auto it = index.find(i); it != index.end()) d[it->second] = true;
      deps[i] = std::move(d);
    }
    // Greedy batches per key, in order: an all-reduce joins its key's open batch unless its operand depends on a
    // member (then the batch closes and a new one starts with it).
    std::map<std::string, std::vector<Instruction*>> open;
    std::map<std::string, int64_t> open_bytes;
    std::vector<std::vector<Instruction*>> batches;
    for (auto* ar : ars) {
      if (ar->operands.size() != 1 || ar->shape.is_tuple || bytes_of(ar->shape) > max_member_) continue;
      std::string k = key_of(*ar);
      auto& b = open[k];
      bool independent = true;
      for (auto* member : b) independent = independent && !deps[ar->operand(0)][index[member]];
      if (!independent || open_bytes[k] + bytes_of(ar->shape) > max_total_) {
        batches.push_back(std::move(b));
        b.clear();
        open_bytes[k] = 0;
      }
      b.push_back(ar);
      open_bytes[k] += bytes_of(ar->shape);
    }
    for (auto& [k, b] : open) batches.push_back(std::move(b));
    bool any = false;
    for (auto& b : batches) any = combine(c, b) || any;
    if (any) {
      c.sort_topologically();
      c.remove_dead_instructions();
      changed = true;
    }
  }
  return changed;
}

}  // namespace jitx::hlo
