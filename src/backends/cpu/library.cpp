// Which instructions run as library ops (the dispatch to each op's translation unit), and the one op defined
// here: a slice that is a contiguous run of its operand.
#include "backends/cpu/library.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/output_fusion.h"
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
    case hlo::Opcode::kCustomCall: return make_linalg_op(inst);
    case hlo::Opcode::kDot: return make_general_dot(inst);  // the runtime gives the blocked/Eigen dot the ones it takes
    default: return make_data_op(inst);
  }
}

}  // namespace jitx::cpu
