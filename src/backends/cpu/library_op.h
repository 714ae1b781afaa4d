// The interface every CPU library op implements (library.h says which instructions are library ops): an
// instruction prepared at compile time and run by a typed C++ routine, with the native kernels it needs.
#pragma once
#include <span>
#include <vector>

#include "backends/cpu/kernels.h"
#include "hlo/ir/hlo.h"

namespace jitx::cpu {

/// One instruction of an entry computation, prepared at compile time and run once per execution.
class LibraryOp {
 public:
  virtual ~LibraryOp() = default;
  /// Instructions this op needs compiled as native kernels with the rest of the executable (an output fusion's
  /// epilogue); the backend compiles them and hands their functions to bind(), in the same order.
  virtual std::vector<const hlo::Instruction*> kernels() const { return {}; }
  virtual void bind(const std::vector<KernelFn>& /*fns*/) {}
  /// Whether the op only copies its result's bytes (a contiguous slice): cheap enough to run inline when small.
  virtual bool is_copy() const { return false; }
  /// Its cost in element operations (as is_small counts them) when it is cheap enough that a small program holding
  /// it may run inline on the caller's thread; -1: never (the default).
  virtual int64_t inline_work() const { return is_copy() ? 0 : -1; }
  /// ins: one pointer per operand (arrays only), outs: one per leaf of the result, all row-major (the backend
  /// copies operands to row-major first, see LayoutLegalizer), except that an output fusion reads its operands
  /// through their layouts.
  virtual void run(std::span<const void* const> ins, std::span<void* const> outs) const = 0;
};

}  // namespace jitx::cpu
