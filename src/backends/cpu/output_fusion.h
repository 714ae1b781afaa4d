// Output fusions: a dot with an elementwise epilogue run as the blocked GEMM calling an emitted epilogue kernel on
// each finished tile (output_fusion.cpp). A library op (library_op.h) that the library's dispatch picks.
#pragma once
#include <memory>

#include "backends/cpu/library_op.h"
#include "hlo/ir/hlo.h"

namespace jitx::cpu {

/// The library op for a kOutput fusion of one dot and its epilogue, or nullptr when it is not one or the epilogue
/// cannot be emitted (the fusion then falls back as a whole).
std::unique_ptr<LibraryOp> make_output_fusion(const hlo::Instruction& fusion);

}  // namespace jitx::cpu
