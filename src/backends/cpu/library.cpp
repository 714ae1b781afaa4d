// Which instructions run as library ops (the dispatch to each op's translation unit), and the one op defined
// here: a slice that is a contiguous run of its operand.
#include "backends/cpu/library.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/output_fusion.h"
#include "backends/cpu/parallel.h"
#include "core/host_callback.h"
#include "hlo/evaluator/evaluator_collectives.h"
#include "hlo/ir/collectives.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/custom_call.h"

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

/// A host callback (core/host_callback.h): copies its operands into host literals, calls the function and copies
/// a pure callback's results out. It runs on the executing thread, between the steps before and after it.
class HostCallbackOp : public LibraryOp {
 public:
  explicit HostCallbackOp(const hlo::Instruction& inst) : id_(inst.attrs.get_int("callback_id")) {
    for (auto* o : inst.operands) in_.push_back({o->shape.dtype, o->shape.dims});
    if (inst.shape.is_tuple)
      for (auto& t : inst.shape.tuple_shapes) out_bytes_.push_back(static_cast<size_t>(t.byte_size()));
    else
      out_bytes_.push_back(static_cast<size_t>(inst.shape.byte_size()));
  }
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    std::vector<detail::Literal> args;
    for (size_t k = 0; k < in_.size(); ++k) {
      auto lit = detail::Literal::make(in_[k].first, in_[k].second);
      if (lit.nbytes()) std::memcpy(lit.data(), ins[k], lit.nbytes());
      args.push_back(std::move(lit));
    }
    std::vector<detail::Literal> res = detail::call_host_callback(id_, std::move(args));
    for (size_t k = 0; k < res.size() && k < outs.size(); ++k)
      if (out_bytes_[k]) std::memcpy(outs[k], res[k].data(), out_bytes_[k]);
  }

 private:
  int64_t id_;
  std::vector<std::pair<DType, std::vector<int64_t>>> in_;
  std::vector<size_t> out_bytes_;
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

namespace {
/// A collective (or partition-id) run on the buffers through the partition's communicator, rather than on the
/// interpreter with its literal copies.
class CollectiveOp final : public LibraryOp {
 public:
  explicit CollectiveOp(const hlo::Instruction& inst) : inst_(inst) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    evaluator::run_collective(inst_, ins.empty() ? nullptr : ins[0], outs[0]);
  }

 private:
  const hlo::Instruction& inst_;
};

/// An asynchronous collective's start: handed to the thread's collective queue, the program goes on.
class CollectiveStartOp final : public LibraryOp {
 public:
  explicit CollectiveStartOp(const hlo::Instruction& inst) : inst_(inst) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    evaluator::start_collective(inst_, ins[0], outs[0]);
  }

 private:
  const hlo::Instruction& inst_;
};

/// Its done: waits for the collective its operand started (the result is already in the start's buffer).
class CollectiveDoneOp final : public LibraryOp {
 public:
  explicit CollectiveDoneOp(const hlo::Instruction& inst) : start_(*inst.operand(0)) {}
  void run(std::span<const void* const>, std::span<void* const>) const override {
    evaluator::finish_collective(start_);
  }

 private:
  const hlo::Instruction& start_;
};
}  // namespace

std::unique_ptr<LibraryOp> make_library_op(const hlo::Instruction& inst) {
  for (auto* o : inst.operands)
    if (o->shape.is_tuple) return nullptr;
  if (hlo::is_async_collective_done(inst.opcode)) return std::make_unique<CollectiveDoneOp>(inst);
  if (hlo::is_async_collective_start(inst.opcode))
    return evaluator::collective_runs_in_place(inst) ? std::make_unique<CollectiveStartOp>(inst) : nullptr;
  if (evaluator::collective_runs_in_place(inst)) return std::make_unique<CollectiveOp>(inst);
  switch (inst.opcode) {
    case hlo::Opcode::kFusion:
      if (auto op = make_contiguous_slice(inst)) return op;
      return make_output_fusion(inst);
    case hlo::Opcode::kConvolution: return make_convolution(inst);
    case hlo::Opcode::kSlice:
      if (auto op = make_contiguous_slice(inst)) return op;
      return make_data_op(inst);
    case hlo::Opcode::kCustomCall:
      if (hlo::is_host_callback(inst)) return std::make_unique<HostCallbackOp>(inst);
      return make_linalg_op(inst);
    case hlo::Opcode::kDot: return make_general_dot(inst);  // the runtime gives the blocked/Eigen dot the ones it takes
    default: return make_data_op(inst);
  }
}

}  // namespace jitx::cpu
