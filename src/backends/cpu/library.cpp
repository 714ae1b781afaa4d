// Which instructions run as library ops, and the partitioned launch of a compiled kernel shared by the runtime
// and the library ops.
#include "backends/cpu/library.h"

#include <algorithm>

#include "backends/cpu/parallel.h"

namespace jitx::cpu {

std::unique_ptr<LibraryOp> make_library_op(const hlo::Instruction& inst) {
  for (auto* o : inst.operands)
    if (o->shape.is_tuple) return nullptr;
  switch (inst.opcode) {
    case hlo::Opcode::kFusion: return make_output_fusion(inst);
    case hlo::Opcode::kConvolution: return make_convolution(inst);
    default: return make_data_op(inst);
  }
}

namespace {
void clear_layout(hlo::Shape& s) {
  s.layout.clear();
  for (auto& t : s.tuple_shapes) clear_layout(t);
}
}  // namespace

std::unique_ptr<hlo::Module> without_layouts(const hlo::Module& m) {
  auto c = m.clone();
  for (auto& comp : c->computations)
    for (auto& i : comp->instructions) clear_layout(i->shape);
  return c;
}

void run_kernel(KernelFn fn, void* const* bufs, const LoopSpace& sp) {
  int64_t work = sp.rows * sp.cols * sp.work_per_point;
  int threads = pool_threads();
  constexpr int64_t kMinWorkPerThread = 1 << 16;
  int64_t parts = std::min<int64_t>(threads, work / kMinWorkPerThread);
  if (parts <= 1) {
    fn(bufs, 0, sp.rows, 0, sp.cols);
  } else if (sp.rows >= parts) {
    parallel_for(parts, [&](int64_t p) { fn(bufs, sp.rows * p / parts, sp.rows * (p + 1) / parts, 0, sp.cols); });
  } else {
    parallel_for(parts, [&](int64_t p) {
      // Column blocks of whole vectors (16 lanes), so no two threads write one cache line's worth of a vector.
      int64_t lo = sp.cols * p / parts / 16 * 16, hi = p + 1 == parts ? sp.cols : sp.cols * (p + 1) / parts / 16 * 16;
      fn(bufs, 0, sp.rows, lo, hi);
    });
  }
}

}  // namespace jitx::cpu
