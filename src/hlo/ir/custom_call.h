// Custom-calls jitx itself emits: the linear-algebra ops (custom_call_target="jitx.linalg.<name>") are pure
// functions of their operands, which CSE may merge, constant folding evaluate, LICM hoist and DCE remove. Host
// callbacks (custom_call_target="jitx.host_callback", callback_id=<n>, has_side_effect=<bool>) call back into the
// host while the program runs (core/host_callback.h): those with a side effect (debug::print, debug::callback)
// are never removed, merged, hoisted or reordered among themselves, nor is a while/conditional/call containing one.
#pragma once
#include <string>
#include <string_view>

#include "hlo/ir/hlo.h"

namespace jitx::hlo {

inline constexpr std::string_view kLinalgTargetPrefix = "jitx.linalg.";

/// A custom-call's custom_call_target ("" when it has none).
inline std::string custom_call_target(const Instruction& i) {
  return i.attrs.has("custom_call_target") ? i.attrs.get_str("custom_call_target") : std::string();
}
/// The linalg op's name ("cholesky") when i is one of jitx's linalg custom-calls, else "".
inline std::string linalg_op_name(const Instruction& i) {
  if (i.opcode != Opcode::kCustomCall) return {};
  std::string t = custom_call_target(i);
  return t.starts_with(kLinalgTargetPrefix) ? t.substr(kLinalgTargetPrefix.size()) : std::string();
}
/// Whether i is a custom-call known to be a pure function of its operands (jitx's linalg ops).
inline bool is_pure_custom_call(const Instruction& i) { return !linalg_op_name(i).empty(); }

inline constexpr std::string_view kHostCallbackTarget = "jitx.host_callback";
/// Whether i is one of jitx's host callbacks (effectful or pure).
inline bool is_host_callback(const Instruction& i) {
  return i.opcode == Opcode::kCustomCall && custom_call_target(i) == kHostCallbackTarget;
}
/// Whether i has an effect that must run, once, in program order: an effectful host callback, or an instruction
/// calling a computation that contains one.
inline bool has_side_effect(const Instruction& i) {
  if (i.opcode == Opcode::kCustomCall) return is_host_callback(i) && i.attrs.get_bool("has_side_effect", true);
  for (const Computation* c : i.called)
    for (auto& inner : c->instructions)
      if (has_side_effect(*inner)) return true;
  return false;
}
/// Whether any computation of m calls a host callback (such a module names process-local callbacks by id, so
/// the persistent compilation cache never stores or loads it).
inline bool has_host_callback(const Module& m) {
  for (auto& c : m.computations)
    for (auto& i : c->instructions)
      if (is_host_callback(*i)) return true;
  return false;
}

}  // namespace jitx::hlo
