// The CPU executable at run time (see cpu_executable.h): its entry's buffers, each program's steps in order, the
// in-place dynamic-update-slice, while loops over carried buffers, branches, interpreter fallbacks.
#include "backends/cpu/cpu_executable.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "backends/cpu/parallel.h"
#include "backends/cpu/row_groups.h"
#include "core/collective_queue.h"
#include "core/errors.h"
#include "hlo/evaluator/evaluator.h"

namespace jitx::runtime::cpu_backend {
using hlo::Instruction;
using hlo::Opcode;

namespace {
/// n pointers, on the stack when there are few: steps run per loop iteration and should not allocate.
template <class T, size_t N = 16>
class SmallArray {
 public:
  explicit SmallArray(size_t n) {
    if (n > N) {
      heap_.resize(n);
      data_ = heap_.data();
    }
  }
  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  T inline_[N];
  std::vector<T> heap_;
  T* data_ = inline_;
};

// Rethrows e with "[cpu] <op> %<name>: " in front, keeping jitx's exception type.
[[noreturn]] void rethrow_with_op(const Instruction& inst) {
  std::string prefix = fmt::format("[cpu] {} %{}: ", hlo::opcode_name(inst.opcode), inst.name);
  try {
    throw;
  } catch (const TypeError& e) {
    throw TypeError(prefix + e.what());
  } catch (const ShapeError& e) {
    throw ShapeError(prefix + e.what());
  } catch (const CompileError& e) {
    throw CompileError(prefix + e.what());
  } catch (const std::exception& e) {
    throw RuntimeError(prefix + e.what());
  }
}

int64_t read_index(const void* p, DType d) {
  switch (d) {
    case DType::int8: return *static_cast<const int8_t*>(p);
    case DType::int16: return *static_cast<const int16_t*>(p);
    case DType::int32: return *static_cast<const int32_t*>(p);
    case DType::int64: return *static_cast<const int64_t*>(p);
    case DType::uint8: return *static_cast<const uint8_t*>(p);
    case DType::uint16: return *static_cast<const uint16_t*>(p);
    case DType::uint32: return *static_cast<const uint32_t*>(p);
    case DType::uint64: {
      uint64_t v = *static_cast<const uint64_t*>(p);
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
    case DType::bool_: return *static_cast<const uint8_t*>(p) != 0;
    default: throw RuntimeError(fmt::format("[cpu] an index of dtype {} is not an integer", dtype_name(d)));
  }
}

/// out = operand with update written at the clamped start indices (row-major). When out is operand's buffer
/// (the update in place), only the update's bytes move.
void update_slice(const Instruction& i, char* out, const char* operand, const char* update, const char* const* starts) {
  const auto& dims = i.shape.dims;
  const auto& udims = i.operand(1)->shape.dims;
  size_t esize = dtype_size(i.shape.dtype);
  if (out != operand) std::memcpy(out, operand, static_cast<size_t>(i.shape.byte_size()));
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t n_upd = i.operand(1)->shape.num_elements();
  if (n_upd == 0) return;
  int64_t start[kMaxNativeRank], stride[kMaxNativeRank], idx[kMaxNativeRank];
  for (int64_t d = 0; d < rank; ++d) stride[d] = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = read_index(starts[d], i.operand(2 + d)->shape.dtype);
    start[d] = std::clamp<int64_t>(s, 0, dims[d] - udims[d]);
  }
  for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
  if (rank == 0) {
    std::memcpy(out, update, esize);
    return;
  }
  // Rows of the update (its minor dimension) are contiguous in both arrays.
  int64_t row = udims[rank - 1];
  int64_t rows = n_upd / row;
  for (int64_t d = 0; d < rank; ++d) idx[d] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off = start[rank - 1];
    for (int64_t d = 0; d < rank - 1; ++d) off += (start[d] + idx[d]) * stride[d];
    std::memcpy(out + off * esize, update + r * row * esize, static_cast<size_t>(row) * esize);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < udims[d]) break;
      idx[d] = 0;
    }
  }
}
}  // namespace

bool row_major(const hlo::Shape& s) {
  int64_t last = INT64_MAX;
  for (auto d : hlo::minor_to_major(s)) {
    if (s.dims[d] == 1) continue;
    if (d > last) return false;
    last = d;
  }
  return true;
}
bool all_row_major(const hlo::Shape& s) {
  if (!s.is_tuple) return row_major(s);
  for (auto& t : s.tuple_shapes)
    if (!all_row_major(t)) return false;
  return true;
}

bool is_native_update_slice(const Instruction& i) {
  if (i.opcode != Opcode::kDynamicUpdateSlice || i.shape.is_tuple || i.shape.dims.size() > kMaxNativeRank) return false;
  for (size_t k = 0; k < 2; ++k)
    if (i.operand(k)->shape.is_tuple || !row_major(i.operand(k)->shape)) return false;
  return row_major(i.shape) && i.operand(0)->shape.byte_size() == i.shape.byte_size();
}

std::map<std::string, int64_t> CpuExecutable::stats() const {
  if (whole_module_fallback) return {{"whole_module_fallback", 1}};
  return {{"native_kernels", counts.kernels},
          {"llvm_kernels", static_cast<int64_t>(kernels.distinct)},  // compiled: equal instructions share one
          {"llvm_parts", static_cast<int64_t>(kernels.parts)},       // threads they were compiled on
          {"llvm_small_kernels", static_cast<int64_t>(kernels.small)},  // of llvm_kernels: the small tier
          {"eigen_dots", counts.dots},
          {"library_ops", counts.library},
          {"update_slices", counts.update_slices},
          {"while_loops", counts.whiles},
          {"conditionals", counts.conditionals},
          {"interpreter_fallbacks", static_cast<int64_t>(counts.fallbacks.size())},
          {"layout_copies", counts.layout_copies},
          {"row_groups", counts.row_groups},
          {"row_group_kernels", counts.row_group_kernels},
          {"programs", static_cast<int64_t>(programs.size())},
          {"whole_module_fallback", 0}};
}

std::vector<std::shared_ptr<Buffer>> CpuExecutable::execute(std::span<const std::shared_ptr<Buffer>> args,
                                                            Device* device) {
  if (whole_module_fallback) return whole_module_fallback->execute(args, device);
  const hlo::Shape& result = module->entry->root->shape;
  std::vector<std::shared_ptr<Buffer>> outs;
  outs.reserve(result.tuple_shapes.size());
  for (auto& s : result.tuple_shapes) outs.push_back(Buffer::pending(s.dtype, s.dims, device));
  if (runs_inline) {
    bool ready = true;
    for (auto& a : args) ready = ready && a->ready->is_ready();
    auto work = [&] {
      try {
        run_entry(args, outs);
      } catch (...) {
        for (auto& o : outs) o->ready->set_error(std::current_exception());
      }
    };
    if (ready && device->stream.try_run_inline(work)) return outs;
  }
  std::vector<std::shared_ptr<Buffer>> ins(args.begin(), args.end());
  // The closure keeps this executable (its code and plan) alive until the work has run.
  auto self = shared_from_this();
  device->stream.enqueue([self, ins, outs] {
    try {
      self->run_entry(ins, outs);
    } catch (...) {
      for (auto& o : outs) o->ready->set_error(std::current_exception());
    }
  });
  return outs;
}

void CpuExecutable::run_entry(std::span<const std::shared_ptr<Buffer>> ins,
                              const std::vector<std::shared_ptr<Buffer>>& outs) {
  for (auto& b : ins) b->ready->wait();
  const Program& entry = *programs[0];
  std::vector<void*> params(ins.size()), results(outs.size());
  for (size_t k = 0; k < ins.size(); ++k) params[k] = ins[k]->storage->data();
  std::vector<std::shared_ptr<detail::Storage>> storages(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    int64_t p = entry.ba.output_aliases[k];
    if (p >= 0) {
      // A donated input: written in place when nothing else holds its memory (an array's literal, a module
      // constant, another argument, memory the user still sees); otherwise the output starts from a copy of it.
      auto& st = ins[p]->storage;
      bool shared = st.use_count() > 1 || !st->reusable();
      for (size_t j = 0; j < ins.size() && !shared; ++j) shared = j != static_cast<size_t>(p) && ins[j]->storage == st;
      if (shared) {
        auto copy = detail::Storage::allocate(static_cast<size_t>(entry.results[k].size));
        std::memcpy(copy->data(), st->data(), static_cast<size_t>(entry.results[k].size));
        params[p] = copy->data();
        storages[k] = copy;
      } else {
        storages[k] = st;
      }
    } else {
      storages[k] = detail::Storage::allocate(static_cast<size_t>(entry.results[k].size));
    }
    results[k] = storages[k]->data();
  }
  // The frame (temporaries, loop scratch) is kept between calls: a training step's is hundreds of MB, and fresh
  // pages cost the kernel's zeroing on first touch (a fifth of a transformer step). A call finding it taken (by
  // a concurrent call on another device) allocates its own.
  std::shared_ptr<detail::Storage> frame;
  if (entry.frame_size > 0) {
    {
      std::lock_guard<std::mutex> l(frame_mu_);
      frame = std::move(spare_frame_);
    }
    if (!frame) frame = detail::Storage::allocate(static_cast<size_t>(entry.frame_size));
  }
  try {
    run_program(entry, params.data(), results.data(), frame ? static_cast<char*>(frame->data()) : nullptr);
  } catch (...) {
    // Collectives still in flight read and write the frame and the outputs: stop and wait for them first.
    detail::abandon_collectives(std::current_exception());
    throw;
  }
  if (frame) {
    std::lock_guard<std::mutex> l(frame_mu_);
    if (!spare_frame_) spare_frame_ = std::move(frame);
  }
  for (size_t k = 0; k < outs.size(); ++k) outs[k]->storage = storages[k];
  for (auto& o : outs) o->ready->set();
}

void CpuExecutable::run_program(const Program& p, void* const* params, void* const* outputs, char* frame) const {
  SmallArray<char*, 32> base(p.ba.allocations.size());
  for (auto& a : p.ba.allocations) {
    switch (a.kind) {
      case hlo::Allocation::Kind::kParameter: base[a.index] = static_cast<char*>(params[a.parameter_number]); break;
      case hlo::Allocation::Kind::kConstant:
        base[a.index] = const_cast<char*>(static_cast<const char*>(p.constant_data[a.index]));
        break;
      case hlo::Allocation::Kind::kOutput: base[a.index] = static_cast<char*>(outputs[p.output_leaf[a.index]]); break;
      case hlo::Allocation::Kind::kTemp: base[a.index] = frame; break;
    }
  }
  auto ptr = [&](const Slice& s) { return base[s.alloc] + s.offset; };
  for (auto& st : p.steps) {
    try {
      run_step(p, st, ptr, frame);
    } catch (...) {
      if (is_control_flow(st.kind)) throw;  // the failing step inside has named itself
      rethrow_with_op(*st.inst);
    }
  }
  // Leaves not computed into their output buffer (a parameter or constant returned, a value returned twice).
  for (size_t k = 0; k < p.results.size(); ++k) {
    const char* src = ptr(p.results[k]);
    if (src != outputs[k]) std::memmove(outputs[k], src, static_cast<size_t>(p.results[k].size));
  }
}

template <class Ptr>
void CpuExecutable::run_step(const Program& p, const Step& st, Ptr ptr, char* frame) const {
  switch (st.kind) {
    case Step::Kind::kKernel: {
      SmallArray<void*> buf_array(st.outs.size() + st.ins.size());
      void** bufs = buf_array.data();
      size_t b = 0;
      for (auto& s : st.outs) bufs[b++] = ptr(s);
      for (auto& op : st.ins) bufs[b++] = ptr(op.at(0));
      cpu::run_kernel(kernels.fns[st.kernel], bufs, st.space);
      return;
    }
    case Step::Kind::kRowGroup: {
      size_t n = 0;
      for (auto& s : st.group) n += s.outs.size() + s.ins.size();
      SmallArray<void*, 64> buf_array(n);
      SmallArray<void* const*> per_step(st.group.size());
      size_t b = 0;
      for (size_t k = 0; k < st.group.size(); ++k) {
        per_step[k] = buf_array.data() + b;
        for (auto& s : st.group[k].outs) buf_array[b++] = ptr(s);
        for (auto& op : st.group[k].ins) buf_array[b++] = ptr(op.at(0));
      }
      run_row_group(st, kernels.fns, per_step.data());
      return;
    }
    case Step::Kind::kDot:
      cpu::run_dot(*st.inst, ptr(st.ins[0][0]), ptr(st.ins[1][0]), ptr(st.outs[0]), st.dot_plan.get());
      return;
    case Step::Kind::kLibrary: {  // no heap allocation: library steps may run once per loop iteration
      SmallArray<const void*> in(st.ins.size());
      SmallArray<void*> out(st.outs.size());
      for (size_t k = 0; k < st.ins.size(); ++k) in[k] = ptr(st.ins[k].at(0));
      for (size_t k = 0; k < st.outs.size(); ++k) out[k] = ptr(st.outs[k]);
      st.library->run({in.data(), st.ins.size()}, {out.data(), st.outs.size()});
      return;
    }
    case Step::Kind::kUpdateSlice: {
      const char* starts[kMaxNativeRank];
      for (size_t k = 2; k < st.ins.size(); ++k) starts[k - 2] = ptr(st.ins[k][0]);
      update_slice(*st.inst, ptr(st.outs[0]), ptr(st.ins[0][0]), ptr(st.ins[1][0]), starts);
      return;
    }
    case Step::Kind::kWhile: return run_while(p, st, ptr, frame);
    case Step::Kind::kConditional: {
      const char* idx = ptr(st.ins[0][0]);
      int64_t n = static_cast<int64_t>(st.programs.size());
      int64_t b;
      // A pred picks branch 0 when true (XLA's true_computation); an s32 index out of range picks the last.
      if (st.inst->operand(0)->shape.dtype == DType::bool_) {
        b = *reinterpret_cast<const uint8_t*>(idx) ? 0 : 1;
      } else {
        b = read_index(idx, st.inst->operand(0)->shape.dtype);
        if (b < 0 || b >= n) b = n - 1;
      }
      SmallArray<void*> params(st.ins.size()), outputs(st.outs.size());
      for (size_t k = 1; k < st.ins.size(); ++k) params[k - 1] = ptr(st.ins[k][0]);
      for (size_t k = 0; k < st.outs.size(); ++k) outputs[k] = ptr(st.outs[k]);
      run_program(*programs[st.programs[b]], params.data(), outputs.data(), frame + p.scratch_offset);
      return;
    }
    case Step::Kind::kFallback: {
      std::vector<evaluator::Value> args;
      for (size_t k = 0; k < st.ins.size(); ++k) {
        const hlo::Shape& s = st.inst->operand(k)->shape;
        auto leaf = [&](const hlo::Shape& ls, const Slice& sl) {
          auto lit = detail::Literal::make(ls.dtype, ls.dims);
          std::memcpy(lit.data(), ptr(sl), lit.nbytes());
          return evaluator::Value{lit, {}, false};
        };
        if (!s.is_tuple) {
          args.push_back(leaf(s, st.ins[k][0]));
        } else {
          evaluator::Value t;
          t.is_tuple = true;
          for (size_t e = 0; e < s.tuple_shapes.size(); ++e) t.tuple.push_back(leaf(s.tuple_shapes[e], st.ins[k][e]));
          args.push_back(t);
        }
      }
      evaluator::Value v = evaluator::evaluate(*st.fallback, args);
      auto put = [&](const evaluator::Value& x, const Slice& sl) {
        std::memcpy(ptr(sl), x.array.data(), x.array.nbytes());
      };
      if (v.is_tuple)
        for (size_t e = 0; e < st.outs.size(); ++e) put(v.tuple.at(e), st.outs[e]);
      else
        put(v, st.outs.at(0));
      return;
    }
  }
}

/// The loop: the carries live in the while's result buffers (or straight in the operands, for carries the body
/// never changes); the body writes each carry in place when its buffer assignment allows, otherwise into a second
/// buffer that is swapped in after each iteration. Nothing is allocated per iteration.
template <class Ptr>
void CpuExecutable::run_while(const Program& p, const Step& st, Ptr ptr, char* frame) const {
  const Program& cond = *programs[st.programs[0]];
  const Program& body = *programs[st.programs[1]];
  char* scratch = frame + p.scratch_offset;
  size_t n = st.outs.size();
  std::vector<void*> cur(n), other(n), body_out(n);
  for (size_t k = 0; k < n; ++k) {
    char* in = ptr(st.ins[k][0]);
    char* out = ptr(st.outs[k]);
    bool in_is_an_out = false;  // an operand sharing a carry's buffer must not be read in place
    for (size_t j = 0; j < n && !in_is_an_out; ++j) in_is_an_out = in == ptr(st.outs[j]) && j != k;
    if (st.invariant[k] && !in_is_an_out) {
      cur[k] = in;
    } else {
      cur[k] = out;
      if (in != out) std::memcpy(out, in, static_cast<size_t>(st.outs[k].size));
    }
    other[k] = st.other[k] >= 0 ? scratch + st.other[k] : nullptr;
  }
  void* pred = scratch + st.pred_offset;
  for (;;) {
    run_program(cond, cur.data(), &pred, scratch);
    if (*static_cast<const uint8_t*>(pred) == 0) break;
    for (size_t k = 0; k < n; ++k) body_out[k] = other[k] ? other[k] : cur[k];
    run_program(body, cur.data(), body_out.data(), scratch);
    for (size_t k = 0; k < n; ++k)
      if (other[k]) std::swap(cur[k], other[k]);
  }
  for (size_t k = 0; k < n; ++k) {
    char* out = ptr(st.outs[k]);
    if (st.used[k] && cur[k] != out) std::memcpy(out, cur[k], static_cast<size_t>(st.outs[k].size));
  }
}

}  // namespace jitx::runtime::cpu_backend
