// The HLO text parser: reads exactly what print_hlo writes back into an hlo::Module.
#pragma once
#include <memory>
#include <string_view>

#include "hlo/ir/hlo.h"

namespace jitx::hlo {

/// Parses HLO text (HloModule header, computations, ENTRY, `%name = shape{layout} opcode(operands), attr=value,
/// calls=%c`); throws CompileError naming the line on malformed text. print_hlo(*parse_hlo(print_hlo(m))) ==
/// print_hlo(m). The result is not verified: call verify() to check it.
std::unique_ptr<Module> parse_hlo(std::string_view text);

}  // namespace jitx::hlo
