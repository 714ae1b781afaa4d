// Liveness from the schedule, a list scheduler driven by buffer sizes, and heap-style buffer packing.
#include "hlo/analysis/buffer_assignment.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <set>
#include <unordered_set>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"
#include "hlo/ir/custom_call.h"

namespace jitx::hlo {
namespace {

bool aliases_operand(const Instruction& i) {
  // These produce no new buffer: a reshape of a row-major array is a bitcast, and so is a transpose or copy
  // whose layout orders memory as its operand's does (layout assignment makes them).
  // A collective's -done is the buffer its -start fills.
  return i.opcode == Opcode::kReshape || is_layout_bitcast(i) || i.opcode == Opcode::kGetTupleElement ||
         i.opcode == Opcode::kTuple || i.opcode == Opcode::kOptimizationBarrier ||
         is_async_collective_done(i.opcode) ||
         (i.opcode == Opcode::kBitcastConvert && i.shape.byte_size() == i.operand(0)->shape.byte_size());
}

/// The value ids an instruction's result consists of (after following aliases).
struct ValueMap {
  std::unordered_map<const Instruction*, std::vector<int64_t>> ids;
};

void build_values(const Computation& c, BufferAssignment& ba, ValueMap& vm) {
  std::unordered_map<const Instruction*, int64_t> pos;
  for (size_t p = 0; p < c.instructions.size(); ++p) pos[c.instructions[p].get()] = static_cast<int64_t>(p);
  for (auto& up : c.instructions) {
    const Instruction& i = *up;
    std::vector<int64_t> ids;
    if (i.opcode == Opcode::kTuple || i.opcode == Opcode::kOptimizationBarrier) {
      for (auto* o : i.operands) {
        auto& oi = vm.ids.at(o);
        ids.insert(ids.end(), oi.begin(), oi.end());
      }
    } else if (i.opcode == Opcode::kGetTupleElement) {
      ids.push_back(vm.ids.at(i.operand(0)).at(tuple_index_of(i)));
    } else if (aliases_operand(i)) {
      ids = vm.ids.at(i.operand(0));
    } else if (i.shape.is_tuple) {
      for (size_t k = 0; k < i.shape.tuple_shapes.size(); ++k) {
        ids.push_back(static_cast<int64_t>(ba.values.size()));
        ba.values.push_back(BufferValue{&i, static_cast<int64_t>(k), i.shape.tuple_shapes[k].byte_size(),
                                        i.opcode == Opcode::kParameter ? -1 : pos[&i], 0, false});
      }
    } else {
      ids.push_back(static_cast<int64_t>(ba.values.size()));
      ba.values.push_back(
          BufferValue{&i, -1, i.shape.byte_size(), i.opcode == Opcode::kParameter ? -1 : pos[&i], 0, false});
    }
    vm.ids[&i] = ids;
  }
  for (auto& v : ba.values) v.end = v.start;
  // A value lives until the last instruction that reads it (through any alias).
  for (auto& up : c.instructions) {
    const Instruction& i = *up;
    if (is_async_collective_done(i.opcode)) {
      // The collective reads its operand until it is done, and writes its result buffer until then.
      for (auto* o : i.operand(0)->operands)
        for (auto id : vm.ids.at(o)) ba.values[id].end = std::max(ba.values[id].end, pos[&i]);
      for (auto id : vm.ids.at(i.operand(0))) ba.values[id].end = std::max(ba.values[id].end, pos[&i]);
      continue;
    }
    if (aliases_operand(i)) continue;
    for (auto* o : i.operands)
      for (auto id : vm.ids.at(o)) ba.values[id].end = std::max(ba.values[id].end, pos[&i]);
  }
  for (auto id : vm.ids.at(c.root)) {
    ba.values[id].live_out = true;
    ba.values[id].end = INT64_MAX;
  }
  for (auto& [inst, ids] : vm.ids)
    if (ids.size() == 1 && !inst->shape.is_tuple) ba.value_of[inst] = ids[0];
}

/// First-fit packing of temporaries into one arena, freeing at last use.
class Arena {
 public:
  int64_t allocate(int64_t size) {
    size = (size + 63) / 64 * 64;  // 64-byte aligned slices
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= size) {
        int64_t off = it->first;
        int64_t rest = it->second - size;
        free_.erase(it);
        if (rest > 0) free_[off + size] = rest;
        return off;
      }
    }
    // Grow: if the last free chunk touches the end, extend it.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        int64_t off = last->first;
        free_.erase(last);
        top_ = off + size;
        return off;
      }
    }
    int64_t off = top_;
    top_ += size;
    return off;
  }
  void release(int64_t off, int64_t size) {
    size = (size + 63) / 64 * 64;
    free_[off] = size;
    // Coalesce neighbours.
    auto it = free_.find(off);
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
        it = prev;
      }
    }
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
  }
  int64_t size() const { return top_; }

 private:
  std::map<int64_t, int64_t> free_;
  int64_t top_ = 0;
};
}  // namespace

/// Whether arrays of the same dims a and b lay their elements out in the same order (size-1 dims aside).
static bool same_memory_order(const Shape& a, const Shape& b) {
  auto order = [](const Shape& s) {
    std::vector<int64_t> o;
    for (auto d : minor_to_major(s))
      if (s.dims[d] != 1) o.push_back(d);
    return o;
  };
  return order(a) == order(b);
}

bool can_share_operand_buffer(const Instruction& inst, size_t k, int64_t leaf) {
  const Shape& o = inst.operand(k)->shape;
  if (inst.shape.is_tuple != (leaf >= 0)) return false;
  const Shape& r = leaf >= 0 ? inst.shape.tuple_shapes.at(static_cast<size_t>(leaf)) : inst.shape;
  if (o.is_tuple || r.is_tuple || o.byte_size() != r.byte_size() || o.dims != r.dims) return false;
  // Element e is read from and written to the same address only when both are laid out alike.
  if (!same_memory_order(o, r)) return false;
  if (leaf < 0 && is_elementwise(inst.opcode)) return true;
  if (leaf < 0 && inst.opcode == Opcode::kDynamicUpdateSlice && k == 0) return true;  // an update in place
  if (inst.opcode == Opcode::kFusion && fusion_kind_of(inst) == FusionKind::kLoop) {
    // Safe when every instruction of the fusion that depends on that parameter, directly or through others, is
    // elementwise on the output's shape: element e of the output then reads only element e of the parameter.
    // (Checking only the parameter's direct users let p*p + reverse(p*p) overwrite p while the reverse still
    // read it: the differential fuzzer's loop-carry bug.) A multi-output loop fusion's outputs all have those
    // dims, and its kernels compute every output of element e before storing any (so a sibling output still
    // reads the old element).
    const Computation* f = inst.called.at(0);
    std::set<const Instruction*> reached{f->parameters.at(k)};
    for (auto& fi : f->instructions) {
      if (fi->opcode == Opcode::kTuple && fi.get() == f->root) continue;
      bool depends = false;
      for (auto* op : fi->operands) depends = depends || reached.count(op) > 0;
      if (!depends) continue;
      if (!(is_elementwise(fi->opcode) && fi->shape.dims == o.dims)) return false;
      reached.insert(fi.get());
    }
    return true;
  }
  return false;
}

namespace {
/// Whether result leaf `t` of inst (-1: an array result) may be written over operand k's buffer when that
/// operand dies at inst: elementwise and in-place updates for arrays; a while's carry k over its operand k.
bool shares_operand(const Instruction& inst, int64_t t, size_t k) {
  if (inst.opcode == Opcode::kWhile)
    return t == static_cast<int64_t>(k) && !inst.operand(k)->shape.is_tuple;
  return can_share_operand_buffer(inst, k, t);
}

/// Places root leaves in parameters' buffers (donation, loop carries) and pulls the temporaries that feed them
/// (or a while's live-out results) in place into the same buffer.
class InPlacePlanner {
 public:
  InPlacePlanner(const Computation& c, BufferAssignment& ba, const ValueMap& vm) : ba_(ba), vm_(vm) {
    for (size_t p = 0; p < c.instructions.size(); ++p) pos_[c.instructions[p].get()] = static_cast<int64_t>(p);
  }

  /// Whether value v may be written while `holder` (a value already in v's buffer; -1 for none) is still there:
  /// holder is read for the last time before v's definition, or by v's defining instruction in place.
  bool may_overwrite(int64_t v, int64_t holder) const {
    if (holder < 0) return true;
    const BufferValue& h = ba_.values[holder];
    const BufferValue& bv = ba_.values[v];
    if (h.live_out) return false;
    int64_t p = pos_.at(bv.defining);
    if (h.end < p) return true;
    if (h.end > p) return false;
    for (size_t k = 0; k < bv.defining->operands.size(); ++k) {
      const auto& ids = vm_.ids.at(bv.defining->operand(k));
      if (std::find(ids.begin(), ids.end(), holder) == ids.end()) continue;
      if (ids.size() != 1 || !shares_operand(*bv.defining, bv.tuple_index, k)) return false;
    }
    return true;
  }

  /// Whether v is computed by an instruction of the computation (not a parameter, constant or alias) and unplaced.
  bool placeable(int64_t v) const {
    const Instruction* d = ba_.values[v].defining;
    return ba_.slice_of[v].first < 0 && d->opcode != Opcode::kParameter && d->opcode != Opcode::kConstant;
  }

  /// After v went into an allocation whose previous occupant is `holder`: the operand v's instruction updates in
  /// place, if it dies there and is a temporary, goes into the same buffer (and so on up the chain), so the update
  /// writes no copy.
  void pull_in_place(int64_t v, int64_t holder, const std::function<void(int64_t)>& place) {
    const BufferValue& bv = ba_.values[v];
    const Instruction& d = *bv.defining;
    int64_t p = pos_.at(&d);
    for (size_t k = 0; k < d.operands.size(); ++k) {
      if (!shares_operand(d, bv.tuple_index, k)) continue;
      const auto& ids = vm_.ids.at(d.operand(k));
      if (ids.size() != 1) continue;
      int64_t u = ids[0];
      const BufferValue& ub = ba_.values[u];
      if (!placeable(u) || ub.live_out || ub.end != p || ub.size != bv.size || !may_overwrite(v, u)) continue;
      // Used by no other operand of d (a while reading it twice copies it into two carries).
      int uses = 0;
      for (auto* o : d.operands) uses += vm_.ids.at(o) == ids;
      if (uses != 1 || !may_overwrite(u, holder)) continue;
      place(u);
      pull_in_place(u, holder, place);
      return;
    }
  }

 private:
  BufferAssignment& ba_;
  const ValueMap& vm_;
  std::unordered_map<const Instruction*, int64_t> pos_;
};
}  // namespace

BufferAssignment assign_buffers(const Module& m, const std::vector<int64_t>& donated) {
  BufferOptions o;
  o.donated_parameters = donated;
  return assign_buffers(*m.entry, o);
}

BufferAssignment assign_buffers(const Computation& c, const BufferOptions& options) {
  BufferAssignment ba;
  ba.computation = &c;
  ValueMap vm;
  build_values(c, ba, vm);
  // A value live anywhere in a kept span stays live to its end: the CPU backend runs the span's kernels block by
  // block, so all of them are in flight at once (row_groups.h). Parameters are left alone (a run writing over one,
  // in place or donated, is the backend's to refuse).
  for (auto [first, last] : options.keep_live_spans)
    for (auto& v : ba.values)
      if (!v.live_out && v.defining->opcode != Opcode::kParameter && v.start <= last && v.end >= first &&
          v.end < last)
        v.end = last;
  ba.slice_of.assign(ba.values.size(), {-1, 0});
  auto new_alloc = [&](Allocation::Kind kind, int64_t size) {
    Allocation a;
    a.index = static_cast<int64_t>(ba.allocations.size());
    a.kind = kind;
    a.size = size;
    ba.allocations.push_back(a);
    return a.index;
  };
  auto place = [&](int64_t value, int64_t alloc, int64_t off) {
    ba.slice_of[value] = {alloc, off};
    ba.allocations[alloc].values.push_back({value, off});
  };
  // Parameters and constants have their own allocations.
  std::unordered_map<int64_t, int64_t> param_alloc;
  for (size_t v = 0; v < ba.values.size(); ++v) {
    auto& bv = ba.values[v];
    if (bv.defining->opcode == Opcode::kParameter) {
      int64_t a = new_alloc(Allocation::Kind::kParameter, bv.size);
      ba.allocations[a].parameter_number = bv.defining->parameter_number;
      param_alloc[bv.defining->parameter_number] = a;
      place(static_cast<int64_t>(v), a, 0);
      ba.argument_size += bv.size;
    } else if (bv.defining->opcode == Opcode::kConstant) {
      place(static_cast<int64_t>(v), new_alloc(Allocation::Kind::kConstant, bv.size), 0);
      ba.constant_size += bv.size;
    }
  }
  ba.root_values = vm.ids.at(c.root);
  ba.output_aliases.assign(ba.root_values.size(), -1);
  for (size_t v = 0; v < ba.values.size(); ++v)
    if (ba.values[v].live_out && ba.slice_of[v].first < 0) ba.output_size += ba.values[v].size;
  InPlacePlanner planner(c, ba, vm);
  // Root leaves written over a parameter's buffer: a donated one of the same type, or a loop body's carry k.
  std::unordered_set<int64_t> params_used;
  auto try_alias = [&](size_t leaf, int64_t p) {
    const Instruction* param = c.parameters.at(p);
    int64_t pv = vm.ids.at(param).size() == 1 ? vm.ids.at(param)[0] : -1;
    int64_t v = ba.root_values[leaf];
    if (pv < 0 || params_used.count(p) || param->shape.is_tuple) return false;
    const BufferValue& bv = ba.values[v];
    const Shape& s = bv.tuple_index < 0 ? bv.defining->shape : bv.defining->shape.tuple_shapes[bv.tuple_index];
    if (!param->shape.same_type(s) || param->shape.byte_size() != bv.size) return false;
    if (v != pv) {
      if (!planner.placeable(v) || !planner.may_overwrite(v, pv)) return false;
      place(v, param_alloc.at(p), 0);
      planner.pull_in_place(v, pv, [&](int64_t u) { place(u, param_alloc.at(p), 0); });
      ba.alias_size += bv.size;
    }
    params_used.insert(p);
    ba.output_aliases[leaf] = p;
    return true;
  };
  for (size_t leaf = 0; leaf < ba.root_values.size(); ++leaf) {
    if (options.carry_in_place) {
      if (leaf < c.parameters.size()) try_alias(leaf, static_cast<int64_t>(leaf));
      continue;
    }
    for (int64_t p : options.donated_parameters)
      if (try_alias(leaf, p)) break;
  }
  // The other outputs have their own allocations; a while's result pulls its initial value in place.
  for (size_t v = 0; v < ba.values.size(); ++v) {
    auto& bv = ba.values[v];
    if (!bv.live_out || ba.slice_of[v].first >= 0) continue;
    int64_t a = new_alloc(Allocation::Kind::kOutput, bv.size);
    place(static_cast<int64_t>(v), a, 0);
    if (bv.defining->opcode == Opcode::kWhile)
      planner.pull_in_place(static_cast<int64_t>(v), -1, [&](int64_t u) { place(u, a, 0); });
  }
  // Temporaries: walk the schedule, allocating at definition and freeing after the last use.
  Arena arena;
  int64_t temp_alloc = -1;
  std::vector<int64_t> temp_off(ba.values.size(), -1);
  std::map<int64_t, std::vector<int64_t>> dies_at;  // position -> temp values whose last use is there
  for (size_t v = 0; v < ba.values.size(); ++v)
    if (ba.slice_of[v].first < 0) {
      ba.temp_values_total += ba.values[v].size;
      dies_at[ba.values[v].end].push_back(static_cast<int64_t>(v));
    }
  std::vector<std::pair<int64_t, int64_t>> temp_slices;  // value -> offset, resolved later
  for (size_t p = 0; p < c.instructions.size(); ++p) {
    const Instruction& i = *c.instructions[p];
    auto it = vm.ids.find(&i);
    std::vector<int64_t> dying =
        dies_at.count(static_cast<int64_t>(p)) ? dies_at[static_cast<int64_t>(p)] : std::vector<int64_t>{};
    std::unordered_set<int64_t> reused;
    if (!aliases_operand(i) && i.opcode != Opcode::kParameter && i.opcode != Opcode::kConstant) {
      for (auto id : it->second) {
        if (ba.slice_of[id].first >= 0 || ba.values[id].defining != &i) continue;
        int64_t off = -1;
        // In place: take the buffer of an operand that dies here.
        for (size_t k = 0; k < i.operands.size() && off < 0; ++k) {
          auto& oids = vm.ids.at(i.operand(k));
          if (oids.size() != 1 || !shares_operand(i, ba.values[id].tuple_index, k)) continue;
          int64_t ov = oids[0];
          if (temp_off[ov] >= 0 && ba.values[ov].end == static_cast<int64_t>(p) && !reused.count(ov) &&
              ba.values[ov].size == ba.values[id].size) {
            off = temp_off[ov];
            reused.insert(ov);
            ba.reused_in_place++;
          }
        }
        if (off < 0) off = arena.allocate(ba.values[id].size);
        temp_off[id] = off;
        temp_slices.push_back({id, off});
      }
    }
    for (auto v : dying)
      if (temp_off[v] >= 0 && !reused.count(v)) arena.release(temp_off[v], ba.values[v].size);
  }
  // A temporary that nobody reads still needs its own space for the instant it is written.
  ba.temp_size = arena.size();
  if (!temp_slices.empty()) {
    temp_alloc = new_alloc(Allocation::Kind::kTemp, ba.temp_size);
    for (auto [v, off] : temp_slices) place(v, temp_alloc, off);
  }
  return ba;
}

std::string BufferAssignment::str() const {
  static const char* kinds[] = {"parameter", "constant", "output", "temp"};
  std::string s = fmt::format(
      "BufferAssignment: arguments {} B, outputs {} B (aliased {} B), constants {} B, temp {} B (unshared total {} B), "
      "{} in-place reuses\n",
      argument_size, output_size, alias_size, constant_size, temp_size, temp_values_total, reused_in_place);
  for (size_t k = 0; k < output_aliases.size(); ++k)
    if (output_aliases[k] >= 0) s += fmt::format("output {} is written over parameter {}\n", k, output_aliases[k]);
  for (auto& a : allocations) {
    s += fmt::format("allocation {}: size {}, {}", a.index, a.size, kinds[static_cast<int>(a.kind)]);
    if (a.parameter_number >= 0) s += fmt::format(", parameter {}", a.parameter_number);
    s += "\n";
    for (auto [v, off] : a.values) {
      auto& bv = values[v];
      s += fmt::format("  value {}: %{}{} [{}, {}) live [{}, {}]\n", v, bv.defining->name,
                       bv.tuple_index >= 0 ? fmt::format("{{{}}}", bv.tuple_index) : "", off, off + bv.size, bv.start,
                       bv.live_out ? std::string("out") : std::to_string(bv.end));
    }
  }
  return s;
}

std::string buffer_assignment_report(const Module& m, const std::vector<int64_t>& donated) {
  std::string s = assign_buffers(m, donated).str();
  std::unordered_set<const Computation*> seen;
  // Sub-computations in the order they are reached: (computation, whether it is a loop body).
  std::vector<std::pair<const Computation*, bool>> reached;
  auto visit = [&](const Computation& c) {
    for (auto& i : c.instructions) {
      if (i->opcode == Opcode::kWhile) {
        reached.push_back({i->called.at(0), false});
        reached.push_back({i->called.at(1), true});
      } else if (i->opcode == Opcode::kConditional) {
        for (auto* b : i->called) reached.push_back({b, false});
      }
    }
  };
  visit(*m.entry);
  for (size_t next = 0; next < reached.size(); ++next) {
    auto [c, in_place] = reached[next];
    if (!seen.insert(c).second) continue;
    BufferOptions o;
    o.carry_in_place = in_place;
    s += fmt::format("\n%{}{}:\n{}", c->name, in_place ? " (loop body: carries in place where safe)" : "",
                     assign_buffers(*c, o).str());
    visit(*c);
  }
  return s;
}

int64_t peak_live_bytes(const Computation& c) {
  Module tmp("peak");
  BufferAssignment ba;
  ValueMap vm;
  build_values(c, ba, vm);
  int64_t n = static_cast<int64_t>(c.instructions.size());
  std::vector<int64_t> delta(n + 2, 0);
  for (auto& v : ba.values) {
    if (v.defining->opcode == Opcode::kParameter || v.defining->opcode == Opcode::kConstant) continue;
    int64_t end = v.live_out ? n : v.end;
    delta[v.start] += v.size;
    delta[end + 1] -= v.size;
  }
  int64_t live = 0, peak = 0;
  for (int64_t p = 0; p <= n; ++p) {
    live += delta[p];
    peak = std::max(peak, live);
  }
  return peak;
}

std::pair<int64_t, int64_t> schedule_for_memory(Module& m) {
  Computation& c = *m.entry;
  int64_t before = peak_live_bytes(c);
  size_t n = c.instructions.size();
  std::unordered_map<const Instruction*, size_t> index;
  for (size_t p = 0; p < n; ++p) index[c.instructions[p].get()] = p;
  std::vector<std::vector<size_t>> users(n);
  std::vector<int> pending(n, 0);
  for (size_t p = 0; p < n; ++p) {
    std::unordered_set<const Instruction*> seen;
    for (auto* o : c.instructions[p]->operands)
      if (seen.insert(o).second) {
        users[index[o]].push_back(p);
        pending[p]++;
      }
  }
  // Effects keep their program order: each waits for the one before it (an ordering edge, not a use).
  std::vector<std::vector<size_t>> effect_next(n);
  for (size_t p = 0, last = n; p < n; ++p)
    if (has_side_effect(*c.instructions[p])) {
      if (last != n) {
        effect_next[last].push_back(p);
        pending[p]++;
      }
      last = p;
    }
  std::vector<int> remaining_uses(n);
  for (size_t p = 0; p < n; ++p) remaining_uses[p] = static_cast<int>(users[p].size());
  auto defined_bytes = [&](size_t p) {
    const Instruction& i = *c.instructions[p];
    if (aliases_operand(i) || i.opcode == Opcode::kParameter || i.opcode == Opcode::kConstant) return int64_t{0};
    return i.shape.byte_size();
  };
  std::vector<size_t> order;
  std::vector<bool> done(n, false);
  std::vector<size_t> ready;
  for (size_t p = 0; p < n; ++p)
    if (pending[p] == 0) ready.push_back(p);
  const Instruction* root = c.root;
  while (!ready.empty()) {
    // Priority: bytes freed minus bytes defined; the root goes last; ties keep the original order.
    size_t best = 0;
    int64_t best_score = INT64_MIN;
    for (size_t r = 0; r < ready.size(); ++r) {
      size_t p = ready[r];
      const Instruction& i = *c.instructions[p];
      int64_t freed = 0;
      std::unordered_set<const Instruction*> seen;
      for (auto* o : i.operands)
        if (seen.insert(o).second && remaining_uses[index[o]] == 1 && o->opcode != Opcode::kParameter)
          freed += defined_bytes(index[o]);
      int64_t score = (&i == root && ready.size() > 1) ? INT64_MIN + 1 : freed - defined_bytes(p);
      if (i.opcode == Opcode::kParameter) score = INT64_MAX;
      if (score > best_score || (score == best_score && p < ready[best])) {
        best_score = score;
        best = r;
      }
    }
    size_t p = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    order.push_back(p);
    done[p] = true;
    std::unordered_set<const Instruction*> seen;
    for (auto* o : c.instructions[p]->operands)
      if (seen.insert(o).second) remaining_uses[index[o]]--;
    for (auto u : users[p])
      if (--pending[u] == 0) ready.push_back(u);
    for (auto u : effect_next[p])
      if (--pending[u] == 0) ready.push_back(u);
  }
  JITX_ASSERT(order.size() == n, "scheduler did not place every instruction");
  std::vector<std::unique_ptr<Instruction>> old;
  old.swap(c.instructions);
  std::vector<std::unique_ptr<Instruction>> fresh;
  for (auto p : order) fresh.push_back(std::move(old[p]));
  c.instructions.swap(fresh);
  int64_t after = peak_live_bytes(c);
  if (after > before) {
    // Keep the original order when the list schedule is worse.
    std::vector<std::unique_ptr<Instruction>> back(n);
    for (size_t k = 0; k < n; ++k) back[order[k]] = std::move(c.instructions[k]);
    c.instructions.swap(back);
    after = before;
  }
  return {before, after};
}

}  // namespace jitx::hlo
