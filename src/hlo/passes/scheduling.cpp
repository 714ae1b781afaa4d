// Scheduling pass: wraps schedule_for_memory and reports before/after peak live bytes.
#include "hlo/passes/scheduling.h"

#include "hlo/analysis/buffer_assignment.h"

namespace jitx::hlo {

bool Scheduling::run(Module& m) {
  if (!m.entry) return false;
  std::vector<const Instruction*> before;
  for (auto& i : m.entry->instructions) before.push_back(i.get());
  auto [b, a] = schedule_for_memory(m);
  peak_before = b;
  peak_after = a;
  bool changed = false;
  for (size_t k = 0; k < before.size(); ++k) changed = changed || m.entry->instructions[k].get() != before[k];
  trace_line(name(), fmt::format("peak live bytes {} -> {} ({} instructions{})", b, a, before.size(),
                                 changed ? ", reordered" : ", order kept"));
  return changed;
}

}  // namespace jitx::hlo
