// Which instructions run as library ops, and the partitioned launch of a compiled kernel shared by the runtime
// and the library ops.
#include "backends/cpu/library.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "backends/cpu/parallel.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
namespace {
/// A slice whose result is one contiguous run of its (row-major) operand: a memcpy at an offset, no kernel. An
/// unrolled stack of layers slices its stacked weights once per layer, each slice at its own offset; as kernels they
/// would all differ (the offset is compiled in) and LLVM would compile one per layer.
class ContiguousSlice : public LibraryOp {
 public:
  ContiguousSlice(size_t operand, int64_t offset, int64_t bytes) : operand_(operand), offset_(offset), bytes_(bytes) {}
  bool is_copy() const override { return true; }
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    constexpr int64_t kChunk = 1 << 20;  // bytes per task: large copies go to the pool
    const char* from = static_cast<const char*>(ins[operand_]) + offset_;
    char* to = static_cast<char*>(outs[0]);
    parallel_chunks((bytes_ + kChunk - 1) / kChunk, kChunk / 16, [&](int64_t lo, int64_t hi) {
      int64_t b0 = lo * kChunk, b1 = std::min(bytes_, hi * kChunk);
      std::memcpy(to + b0, from + b0, static_cast<size_t>(b1 - b0));
    });
  }

 private:
  size_t operand_;
  int64_t offset_, bytes_;
};

/// inst is a slice, or a loop fusion of a slice of one parameter and reshapes of it (which move no bytes).
std::unique_ptr<LibraryOp> make_contiguous_slice(const hlo::Instruction& inst) {
  const hlo::Instruction* slice = &inst;
  size_t operand = 0;
  if (inst.opcode == hlo::Opcode::kFusion) {
    slice = inst.called.at(0)->root;
    while (slice->opcode == hlo::Opcode::kReshape && slice->shape.layout.empty()) slice = slice->operand(0);
    if (slice->opcode != hlo::Opcode::kSlice || slice->operand(0)->opcode != hlo::Opcode::kParameter) return nullptr;
    operand = static_cast<size_t>(slice->operand(0)->parameter_number);
  }
  if (slice->opcode != hlo::Opcode::kSlice) return nullptr;
  const hlo::Shape& in = slice->operand(0)->shape;
  auto config = hlo::SliceConfig::of(*slice);
  const auto &start = config.start_indices, &strides = config.strides;
  if (slice->shape.is_tuple || !slice->shape.layout.empty() || !in.layout.empty() || start.size() != in.dims.size())
    return nullptr;
  // Contiguous: unit strides, dims after some k taken whole and dims before k of size 1 in the result.
  int64_t rank = in.rank(), k = rank - 1;
  while (k >= 0 && slice->shape.dims[k] == in.dims[k]) --k;
  for (int64_t d = 0; d < rank; ++d)
    if (strides[d] != 1 || (d < k && slice->shape.dims[d] != 1)) return nullptr;
  auto row_strides = detail::row_major_strides(in.dims);
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) offset += start[d] * row_strides[d];
  auto es = static_cast<int64_t>(dtype_size(in.dtype));
  return std::make_unique<ContiguousSlice>(operand, offset * es, slice->shape.byte_size());
}
}  // namespace

std::unique_ptr<LibraryOp> make_library_op(const hlo::Instruction& inst) {
  for (auto* o : inst.operands)
    if (o->shape.is_tuple) return nullptr;
  switch (inst.opcode) {
    case hlo::Opcode::kFusion:
      if (auto op = make_contiguous_slice(inst)) return op;
      return make_output_fusion(inst);
    case hlo::Opcode::kConvolution: return make_convolution(inst);
    case hlo::Opcode::kSlice:
      if (auto op = make_contiguous_slice(inst)) return op;
      return make_data_op(inst);
    case hlo::Opcode::kDot: return make_general_dot(inst);  // the runtime gives the blocked/Eigen dot the ones it takes
    default: return make_data_op(inst);
  }
}

void run_kernel(KernelFn fn, void* const* bufs, const LoopSpace& sp) {
  int64_t work = sp.rows * sp.cols * sp.work_per_point;
  int threads = pool_threads();
  // Measured on a 2-core VM: below 1 << 16 element reads per chunk, waking a pool thread costs more than it saves.
  constexpr int64_t kMinWorkPerChunk = 1 << 16;
  // Up to 8 chunks per thread, taken dynamically: on a busy machine a thread that is descheduled for a while
  // does not hold up the kernel by a whole static share.
  int64_t chunks = std::min<int64_t>(int64_t{threads} * 8, work / kMinWorkPerChunk);
  bool by_rows = sp.rows >= chunks;
  if (!by_rows) {
    chunks = std::min(chunks, (sp.cols + 15) / 16);
    // A reduction split by columns (a column sum) reads every row once per chunk, a run as wide as the chunk:
    // one chunk per thread keeps those runs as long as they can be.
    if (sp.work_per_point > 1) chunks = std::min<int64_t>(chunks, threads);
  }
  if (threads <= 1 || chunks <= 1) {
    fn(bufs, 0, sp.rows, 0, sp.cols);
    return;
  }
  // One pointer captured, so the std::function holding the task allocates nothing.
  struct Shared {
    KernelFn fn;
    void* const* bufs;
    const LoopSpace& sp;
    int64_t chunks;
    bool by_rows;
    std::atomic<int64_t> next{0};
  } sh{fn, bufs, sp, chunks, by_rows};
  parallel_for(std::min<int64_t>(threads, chunks), [s = &sh](int64_t) {
    const LoopSpace& sp = s->sp;
    for (int64_t p, n = s->chunks; (p = s->next.fetch_add(1)) < n;) {
      if (s->by_rows) {
        s->fn(s->bufs, sp.rows * p / n, sp.rows * (p + 1) / n, 0, sp.cols);
      } else {
        // Column blocks of whole 16-lane vectors, so no two threads write one cache line's worth of a vector.
        int64_t lo = sp.cols * p / n / 16 * 16, hi = p + 1 == n ? sp.cols : sp.cols * (p + 1) / n / 16 * 16;
        s->fn(s->bufs, 0, sp.rows, lo, hi);
      }
    }
  });
}

}  // namespace jitx::cpu
