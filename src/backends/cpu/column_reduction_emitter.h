// The CPU backend's column reduction emitter: reductions over leading dimensions only, every output tile's
// accumulators in an array while the reduced rows are walked in memory order (the layer between the reduction
// emitter and the kernel emitter).
#pragma once
#include <vector>

#include "backends/cpu/reduction_emitter.h"

namespace jitx::cpu {

class ColumnReductionEmitter : public ReductionEmitter {
 public:
  using ReductionEmitter::ReductionEmitter;

 protected:
  // Reductions over leading dimensions only (a column sum), every root alike: walking each output's reduced
  // elements would stride through memory once per output. Instead each output tile of kColumnTile consecutive
  // elements keeps its accumulators in an array (16 KiB of doubles: L1), and the reduced rows are walked in memory
  // order, each updating the whole tile (long contiguous runs of vectorised loads; 256-wide tiles, 1 KiB runs 16
  // KiB apart, prefetched badly), eight rows per pass (see rows_into_tile). Float sums accumulate in double.
  static constexpr int64_t kColumnTile = 2048;
  bool column_reduction(const std::vector<const Instruction*>& roots, const std::vector<Layout>& out_layouts) const;
  void emit_column_reduction(const std::vector<const Instruction*>& roots, const std::vector<const hlo::Shape*>& outs,
                             const std::vector<Value*>& ptrs, Value* r0, Value* r1, Value* c0, Value* c1);
};

}  // namespace jitx::cpu
