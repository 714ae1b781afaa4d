// The async-collectives pass (async_collectives.h): a list scheduler over start and done events.
#include "hlo/passes/async_collectives.h"

#include <deque>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>

#include "core/errors.h"
#include "hlo/ir/collectives.h"
#include "hlo/ir/custom_call.h"

namespace jitx::hlo {
namespace {

/// Whether running i takes time a collective can hide: anything but bookkeeping and other collectives.
bool does_work(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kReshape:
    case Opcode::kOptimizationBarrier:
    case Opcode::kPartitionId:
      return false;
    default:
      return !is_collective(i.opcode) && !is_async_collective_done(i.opcode) && !is_layout_bitcast(i);
  }
}

/// One entry of the new schedule: an instruction as it is, or a collective's start or done.
struct Event {
  enum class Kind { kRun, kStart, kDone };
  Kind kind;
  Instruction* inst;
};

class Scheduler {
 public:
  explicit Scheduler(Computation& c) : c_(c) {
    for (auto& up : c.instructions) order_.push_back(up.get());
    for (size_t p = 0; p < order_.size(); ++p) pos_[order_[p]] = p;
  }

  /// Returns (converted, kept).
  std::pair<int64_t, int64_t> run() {
    bool any = false;
    for (auto* i : order_) any = any || is_async_candidate(*i);
    if (!any) return {0, 0};
    schedule();
    return rewrite();
  }

 private:
  static bool is_async_candidate(const Instruction& i) {
    return is_collective(i.opcode) && !is_async_collective_start(i.opcode) && collective_runs_on_buffers(i);
  }

  void schedule() {
    // Predecessors: operands, and the previous instruction with a side effect (effects keep their order).
    std::unordered_map<const Instruction*, std::vector<Instruction*>> users;
    std::unordered_map<const Instruction*, int64_t> waiting;
    const Instruction* last_effect = nullptr;
    for (auto* i : order_) {
      std::set<const Instruction*> preds(i->operands.begin(), i->operands.end());
      if (has_side_effect(*i)) {
        if (last_effect) preds.insert(last_effect);
        last_effect = i;
      }
      waiting[i] = static_cast<int64_t>(preds.size());
      for (auto* p : preds) users[p].push_back(i);
    }
    // Ready instructions by memory-order position, those feeding a collective first (its start comes sooner).
    std::unordered_map<const Instruction*, bool> feeds;
    for (auto* i : order_)
      for (auto* u : users[i]) feeds[i] = feeds[i] || is_async_candidate(*u);
    using Key = std::pair<bool, size_t>;
    using Heap = std::priority_queue<Key, std::vector<Key>, std::greater<Key>>;
    Heap ready, ready_collectives;
    auto make_ready = [&](Instruction* i) {
      (is_async_candidate(*i) ? ready_collectives : ready).push({!feeds[i], pos_.at(i)});
    };
    auto finished = [&](const Instruction* i) {  // i's result can be read
      for (auto* u : users[i])
        if (--waiting[u] == 0) make_ready(u);
    };
    for (auto* i : order_)
      if (waiting[i] == 0) make_ready(i);
    std::deque<Instruction*> in_flight;
    while (events_.size() < order_.size() + starts_) {  // n instructions, and a done per start
      if (!ready_collectives.empty() && in_flight.size() < AsyncCollectives::kMaxInFlight) {
        Instruction* col = order_[ready_collectives.top().second];
        ready_collectives.pop();
        events_.push_back({Event::Kind::kStart, col});
        ++starts_;
        in_flight.push_back(col);
      } else if (!ready.empty()) {
        Instruction* i = order_[ready.top().second];
        ready.pop();
        events_.push_back({Event::Kind::kRun, i});
        finished(i);
      } else {
        JITX_ASSERT(!in_flight.empty(), "async-collectives: nothing ready in %{}", c_.name);
        Instruction* col = in_flight.front();
        in_flight.pop_front();
        events_.push_back({Event::Kind::kDone, col});
        finished(col);
      }
    }
  }

  /// Makes the events the computation's order: starts and dones with work between them become pairs, the rest
  /// stay synchronous collectives (at their done's place).
  std::pair<int64_t, int64_t> rewrite() {
    std::unordered_map<const Instruction*, size_t> start_at;
    std::set<const Instruction*> overlapped;
    for (size_t k = 0; k < events_.size(); ++k) {
      auto& e = events_[k];
      if (e.kind == Event::Kind::kStart) start_at[e.inst] = k;
      if (e.kind != Event::Kind::kDone) continue;
      for (size_t q = start_at.at(e.inst) + 1; q < k; ++q)
        if (events_[q].kind == Event::Kind::kRun && does_work(*events_[q].inst)) {
          overlapped.insert(e.inst);
          break;
        }
    }
    std::vector<Instruction*> order;
    std::vector<Instruction*> removed;
    Instruction* root = c_.root;
    for (auto& e : events_) {
      bool async = overlapped.count(e.inst) > 0;
      if (e.kind == Event::Kind::kRun || (e.kind == Event::Kind::kDone && !async)) {
        order.push_back(e.inst);
      } else if (e.kind == Event::Kind::kStart && async) {
        Instruction* col = e.inst;
        Instruction* start = c_.add(async_start_of(col->opcode), col->shape, col->operands, col->attrs);
        order.push_back(start);
        started_[col] = start;
      } else if (e.kind == Event::Kind::kDone && async) {
        Instruction* col = e.inst;
        detail::Params attrs;
        if (col->attrs.has("sharding")) attrs.set("sharding", col->attrs.get_str("sharding"));
        Instruction* done = c_.add(async_done_of(col->opcode), col->shape, {started_.at(col)}, attrs);
        c_.root = root;  // add() made the done the root
        c_.replace_all_uses(col, done);
        if (root == col) root = done;
        order.push_back(done);
        removed.push_back(col);
      }
    }
    std::unordered_map<const Instruction*, size_t> rank;
    for (size_t k = 0; k < order.size(); ++k) rank[order[k]] = k;
    std::stable_sort(c_.instructions.begin(), c_.instructions.end(), [&](const auto& a, const auto& b) {
      auto ra = rank.find(a.get()), rb = rank.find(b.get());
      return (ra == rank.end() ? SIZE_MAX : ra->second) < (rb == rank.end() ? SIZE_MAX : rb->second);
    });
    for (auto* col : removed) c_.remove_instruction(col);
    auto converted = static_cast<int64_t>(overlapped.size());
    return {converted, static_cast<int64_t>(starts_) - converted};
  }

  Computation& c_;
  std::vector<Instruction*> order_;
  std::unordered_map<const Instruction*, size_t> pos_;
  std::vector<Event> events_;
  size_t starts_ = 0;
  std::unordered_map<const Instruction*, Instruction*> started_;
};

void collect(Computation* c, std::vector<Computation*>& out, std::set<Computation*>& seen) {
  if (!seen.insert(c).second) return;
  out.push_back(c);
  for (auto& i : c->instructions)
    if (i->opcode == Opcode::kWhile || i->opcode == Opcode::kConditional || i->opcode == Opcode::kCall)
      for (auto* callee : i->called) collect(callee, out, seen);
}

}  // namespace

bool AsyncCollectives::run(Module& m) {
  converted = kept = 0;
  if (!m.entry) return false;
  std::vector<Computation*> comps;
  std::set<Computation*> seen;
  collect(m.entry, comps, seen);
  for (auto* c : comps) {
    auto [made, stayed] = Scheduler(*c).run();
    converted += made;
    kept += stayed;
  }
  if (converted + kept > 0)
    trace_line(name(), fmt::format("{} collectives made asynchronous, {} kept synchronous (nothing to overlap)",
                                   converted, kept));
  return converted > 0;
}

}  // namespace jitx::hlo
