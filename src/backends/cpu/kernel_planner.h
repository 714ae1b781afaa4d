// What the CPU kernel planner (kernel_planner.cpp: which instructions can be emitted, and their loop space) and the
// emitters share: dtype classes, canonical layouts, a kernel's output shapes. No LLVM types here.
#pragma once
#include <cstdint>
#include <vector>

#include "hlo/ir/hlo.h"

namespace jitx::cpu {

inline bool is_float(DType d) { return is_floating(d); }
inline bool is_signed(DType d) { return is_signed_integer(d); }
inline bool is_half(DType d) { return d == DType::float16 || d == DType::bfloat16; }

// The fused computation's output shapes, and whether they all share one loop space.
std::vector<const hlo::Shape*> output_shapes(const hlo::Instruction& inst);

// --- layouts ---------------------------------------------------------------------------------------------------
// A buffer's elements lie in the order of its shape's layout (minor_to_major). Here a layout is canonical: empty
// when memory is row-major, otherwise the dims of size > 1 from minor to major followed by the size-1 dims (which
// move no data, so two layouts order memory alike exactly when their canonical forms are equal).
using Layout = std::vector<int64_t>;
Layout canonical_layout(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major);
Layout layout_of(const hlo::Shape& s);
/// The dims from minor to major (row-major spelled out when l is empty).
std::vector<int64_t> minor_to_major_of(const Layout& l, size_t rank);

// A reduce over the last dimension only of an operand shaped like the output: its value is one per output row.
bool is_row_reduction(const hlo::Instruction& i, const std::vector<int64_t>& out_dims);

}  // namespace jitx::cpu
