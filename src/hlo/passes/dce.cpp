// DCE: dead instructions via Computation::remove_dead_instructions, dead computations by reachability.
#include "hlo/passes/dce.h"

#include <unordered_set>

namespace jitx::hlo {

bool DeadCodeElimination::run(Module& m) {
  bool changed = false;
  for (auto& c : m.computations) {
    std::vector<std::string> before;
    if (pass_trace_enabled())
      for (auto& i : c->instructions) before.push_back(i->name);
    int64_t n = c->remove_dead_instructions();
    if (n > 0) {
      changed = true;
      if (pass_trace_enabled())
        for (auto& n : before)
          if (!c->find(n)) trace_line(name(), fmt::format("%{}: dead instruction removed", n));
    }
  }
  // Computations reachable from the entry through called computations stay.
  std::unordered_set<const Computation*> live;
  std::vector<const Computation*> work;
  if (m.entry) work.push_back(m.entry);
  while (!work.empty()) {
    const Computation* c = work.back();
    work.pop_back();
    if (!live.insert(c).second) continue;
    for (auto& i : c->instructions)
      for (auto* cc : i->called) work.push_back(cc);
  }
  size_t before = m.computations.size();
  std::erase_if(m.computations, [&](auto& c) {
    if (live.count(c.get())) return false;
    trace_line(name(), fmt::format("%{}: dead computation removed", c->name));
    return true;
  });
  return changed || m.computations.size() != before;
}

}  // namespace jitx::hlo
