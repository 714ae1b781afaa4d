// Custom-calls jitx itself emits: the linear-algebra ops (custom_call_target="jitx.linalg.<name>") are pure
// functions of their operands, which CSE may merge, constant folding evaluate, LICM hoist and DCE remove.
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

}  // namespace jitx::hlo
