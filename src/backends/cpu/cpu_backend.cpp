// The CPU backend: one compiled program per computation of the module (the entry, loop conditions and bodies,
// branches), each a list of steps (native kernels from LLVM ORC, Eigen dots, in-place updates, loops and branches
// that run other programs, interpreter fallbacks) over its own buffer assignment. All kernels of a module are
// compiled together into one JITDylib.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "backends/cpu/kernels.h"
#include "backends/cpu/library.h"
#include "backends/cpu/parallel.h"
#include "hlo/evaluator/evaluator.h"
#include "core/errors.h"
#include "core/log.h"
#include "hlo/analysis/buffer_assignment.h"
#include "hlo/ir/attributes.h"
#include "jitx/config.h"
#include "runtime/runtime.h"

namespace jitx::runtime {
namespace {
using hlo::Instruction;
using hlo::Opcode;
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
int64_t align64(int64_t n) { return (n + 63) / 64 * 64; }

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

constexpr size_t kMaxNativeRank = 16;

/// Where a value lives: an allocation of its program's buffer assignment and an offset in it.
struct Slice {
  int64_t alloc = -1, offset = 0, size = 0;
};

struct Step {
  enum class Kind { kKernel, kDot, kLibrary, kUpdateSlice, kWhile, kConditional, kFallback } kind = Kind::kKernel;
  const Instruction* inst = nullptr;
  std::vector<Slice> outs;              // the result's leaves
  std::vector<std::vector<Slice>> ins;  // each operand's leaves
  size_t kernel = 0;
  cpu::LoopSpace space;
  const hlo::Computation* fallback = nullptr;
  std::shared_ptr<cpu::LibraryOp> library;  // kLibrary; its kernels are kernels.fns[kernel, kernel + n)
  // kWhile: {condition, body}; kConditional: one program per branch (indices into CpuExecutable::programs).
  std::vector<size_t> programs;
  // kWhile, per carry: the scratch offset of its second buffer (-1: the body updates it in place), whether the
  // body returns it unchanged (then it is read straight from the operand), whether anything reads it afterwards.
  std::vector<int64_t> other;
  std::vector<char> invariant, used;
  int64_t pred_offset = 0;  // kWhile: the condition's result, in scratch
};

bool is_control_flow(Step::Kind k) { return k == Step::Kind::kWhile || k == Step::Kind::kConditional; }

/// One computation compiled: its buffer assignment and steps. Runs over caller-provided parameter and output
/// pointers and a frame of frame_size bytes: the temp arena, then scratch for the loops and branches it runs
/// (their programs' frames and second carry buffers), allocated once per call of the enclosing program.
struct Program {
  const hlo::Computation* comp = nullptr;
  hlo::BufferAssignment ba;
  std::vector<Step> steps;
  std::vector<Slice> results;              // the root's leaves
  std::vector<int64_t> output_leaf;        // per allocation: the root leaf whose output buffer it is, or -1
  std::vector<const void*> constant_data;  // per allocation
  int64_t scratch_offset = 0, frame_size = 0;
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

bool has_nested_tuple(const hlo::Shape& s) {
  for (auto& t : s.tuple_shapes)
    if (t.is_tuple) return true;
  return false;
}

/// Why a computation's values cannot be laid out as flat arrays ("" when they can).
std::string layout_problem(const hlo::Computation& c) {
  for (auto* p : c.parameters)
    if (p->shape.is_tuple) return fmt::format("%{} has a tuple-shaped parameter", c.name);
  for (auto& i : c.instructions)
    if (has_nested_tuple(i->shape)) return fmt::format("%{} in %{} has a nested tuple shape", i->name, c.name);
  return "";
}

/// Whether s's memory is in row-major order (a layout that differs only in where its size-1 dims go is).
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
void clear_layout(hlo::Shape& s) {
  s.layout.clear();
  for (auto& t : s.tuple_shapes) clear_layout(t);
}

/// A dynamic-update-slice the runtime does itself: only the update is written when the result is in place.
bool is_native_update_slice(const Instruction& i) {
  if (i.opcode != Opcode::kDynamicUpdateSlice || i.shape.is_tuple || i.shape.dims.size() > kMaxNativeRank) return false;
  for (size_t k = 0; k < 2; ++k)
    if (i.operand(k)->shape.is_tuple || !row_major(i.operand(k)->shape)) return false;
  return row_major(i.shape) && i.operand(0)->shape.byte_size() == i.shape.byte_size();
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

struct Counts {
  int64_t kernels = 0, dots = 0, library = 0, update_slices = 0, whiles = 0, conditionals = 0;
  int64_t layout_copies = 0;  // copies to row-major the backend inserted (see LayoutLegalizer)
  std::vector<std::string> fallbacks;
};

class CpuExecutable : public Executable, public std::enable_shared_from_this<CpuExecutable> {
 public:
  std::shared_ptr<Executable> whole_module_fallback;  // modules the runtime cannot lay out (nested tuples)
  std::shared_ptr<const hlo::Module> planned;         // the module as planned (LayoutLegalizer), which the programs point into
  std::vector<std::unique_ptr<Program>> programs;     // programs[0] is the entry
  cpu::CompiledKernels kernels;
  std::unique_ptr<hlo::Module> fallbacks;  // one-instruction computations run by the interpreter
  Counts counts;
  bool runs_inline = false;  // small and loop-free: may run on the caller's thread when its stream is idle

  std::map<std::string, int64_t> stats() const override {
    if (whole_module_fallback) return {{"whole_module_fallback", 1}};
    return {{"native_kernels", counts.kernels},
            {"llvm_kernels", static_cast<int64_t>(kernels.distinct)},  // compiled: equal instructions share one
            {"llvm_parts", static_cast<int64_t>(kernels.parts)},       // threads they were compiled on
            {"eigen_dots", counts.dots},
            {"library_ops", counts.library},
            {"update_slices", counts.update_slices},
            {"while_loops", counts.whiles},
            {"conditionals", counts.conditionals},
            {"interpreter_fallbacks", static_cast<int64_t>(counts.fallbacks.size())},
            {"layout_copies", counts.layout_copies},
            {"programs", static_cast<int64_t>(programs.size())},
            {"whole_module_fallback", 0}};
  }

  std::vector<std::shared_ptr<Buffer>> execute(std::span<const std::shared_ptr<Buffer>> args, Device* device) override {
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

 private:
  void run_entry(std::span<const std::shared_ptr<Buffer>> ins, const std::vector<std::shared_ptr<Buffer>>& outs) {
    for (auto& b : ins) b->ready->wait();
    const Program& entry = *programs[0];
    std::vector<void*> params(ins.size()), results(outs.size());
    for (size_t k = 0; k < ins.size(); ++k) params[k] = ins[k]->storage->data();
    std::vector<std::shared_ptr<detail::Storage>> storages(outs.size());
    for (size_t k = 0; k < outs.size(); ++k) {
      int64_t p = entry.ba.output_aliases[k];
      if (p >= 0) {
        // A donated input: written in place when nothing else holds its memory (an array's literal, a module
        // constant, another argument); otherwise the output starts from a copy of it.
        auto& st = ins[p]->storage;
        bool shared = st.use_count() > 1;
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
    std::shared_ptr<detail::Storage> frame;
    if (entry.frame_size > 0) frame = detail::Storage::allocate(static_cast<size_t>(entry.frame_size));
    run_program(entry, params.data(), results.data(), frame ? static_cast<char*>(frame->data()) : nullptr);
    for (size_t k = 0; k < outs.size(); ++k) outs[k]->storage = storages[k];
    for (auto& o : outs) o->ready->set();
  }

  void run_program(const Program& p, void* const* params, void* const* outputs, char* frame) const {
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
  void run_step(const Program& p, const Step& st, Ptr ptr, char* frame) const {
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
      case Step::Kind::kDot:
        cpu::run_dot(*st.inst, ptr(st.ins[0][0]), ptr(st.ins[1][0]), ptr(st.outs[0]));
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
  void run_while(const Program& p, const Step& st, Ptr ptr, char* frame) const {
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
};

/// How the step made for an instruction treats layouts: an emitted kernel reads and writes any layout, an Eigen
/// dot or output fusion reads its operands through their layouts and writes row-major, everything else (library
/// data ops, in-place updates, loops and branches, interpreter fallbacks) reads and writes row-major only.
enum class LayoutUse { kAny, kReadsAny, kRowMajor };
LayoutUse layout_use(const Instruction& i) {
  if (i.opcode == Opcode::kWhile || i.opcode == Opcode::kConditional) return LayoutUse::kRowMajor;
  if (i.opcode == Opcode::kDot && cpu::dot_supported(i)) return LayoutUse::kReadsAny;
  if (is_native_update_slice(i)) return LayoutUse::kRowMajor;
  if (cpu::make_library_op(i)) return i.opcode == Opcode::kFusion ? LayoutUse::kReadsAny : LayoutUse::kRowMajor;
  return cpu::unsupported_reason(i).empty() ? LayoutUse::kAny : LayoutUse::kRowMajor;
}

/// Makes the layouts of a copy of the optimised module ones the runtime executes as they say. Layout assignment
/// leaves parameters, results and the operands of row-major-only steps row-major already; where a layout still
/// disagrees (a module from elsewhere, a pass's oversight) this inserts a physical copy to row-major (counted:
/// `layout_copies`) or, for a result written by a row-major-only step, declares it row-major, so no step ever reads
/// memory in another order than it is in. Computations run by loops and branches exchange row-major buffers.
class LayoutLegalizer {
 public:
  int64_t copies = 0;

  void run(hlo::Computation& c) {
    if (!done_.insert(&c).second) return;
    for (auto* p : c.parameters) clear_layout(p->shape);  // callers hand over row-major buffers
    std::vector<Instruction*> order;
    for (auto& up : c.instructions) order.push_back(up.get());
    for (Instruction* i : order) {
      switch (i->opcode) {
        case Opcode::kParameter: continue;
        case Opcode::kConstant: clear_layout(i->shape); continue;  // a literal is row-major
        case Opcode::kTuple:
        case Opcode::kOptimizationBarrier:
          for (size_t k = 0; k < i->operands.size(); ++k) i->shape.tuple_shapes.at(k) = i->operand(k)->shape;
          continue;
        case Opcode::kGetTupleElement:
          i->shape = i->operand(0)->shape.tuple_shapes.at(static_cast<size_t>(hlo::tuple_index_of(*i)));
          continue;
        default: break;
      }
      if (hlo::is_layout_bitcast(*i)) continue;  // an alias of its operand's buffer, read through its layout
      bool alias = i->opcode == Opcode::kReshape || (i->opcode == Opcode::kBitcastConvert &&
                                                     i->shape.byte_size() == i->operand(0)->shape.byte_size());
      if (i->opcode == Opcode::kWhile || i->opcode == Opcode::kConditional)
        for (auto* callee : i->called) run(*callee);
      LayoutUse use = alias ? LayoutUse::kRowMajor : layout_use(*i);
      if (use == LayoutUse::kRowMajor)
        for (auto*& o : i->operands) o = to_row_major(c, i, o);
      if (use != LayoutUse::kAny) clear_layout(i->shape);
      if (i->opcode == Opcode::kFusion) mirror(*i);
    }
    // The computation's result leaves are row-major too.
    if (c.root->opcode == Opcode::kTuple) {
      for (size_t k = 0; k < c.root->operands.size(); ++k) {
        c.root->operands[k] = to_row_major(c, c.root, c.root->operands[k]);
        c.root->shape.tuple_shapes.at(k) = c.root->operand(k)->shape;
      }
    } else if (!all_row_major(c.root->shape) && !c.root->shape.is_tuple) {
      Instruction* copy = to_row_major(c, nullptr, c.root);
      c.root = copy;
    }
    JITX_ASSERT(all_row_major(c.root->shape), "cpu backend: %{} returns a non-row-major tuple", c.name);
  }

 private:
  /// v itself when it is row-major (or a tuple), otherwise one copy of it to row-major, placed before `user`
  /// (appended when null) and shared by every user.
  Instruction* to_row_major(hlo::Computation& c, const Instruction* user, Instruction* v) {
    if (v->shape.is_tuple ? all_row_major(v->shape) : row_major(v->shape)) return v;
    auto it = copy_of_.find(v);
    if (it != copy_of_.end()) return it->second;
    if (v->shape.is_tuple) {  // a tuple of arrays: the same tuple of row-major copies
      if (v->opcode != Opcode::kTuple)
        throw CompileError(fmt::format("[cpu] %{}: a tuple with non-row-major elements not made by a tuple op", v->name));
      std::vector<Instruction*> ops;
      hlo::Shape ts = v->shape;
      for (size_t k = 0; k < v->operands.size(); ++k) {
        ops.push_back(to_row_major(c, user, v->operand(k)));
        ts.tuple_shapes.at(k) = ops.back()->shape;
      }
      Instruction* t = user ? c.insert_before(user, Opcode::kTuple, ts, ops) : c.add(Opcode::kTuple, ts, ops);
      copy_of_[v] = t;
      return t;
    }
    hlo::Shape rm = v->shape;
    rm.layout.clear();
    std::string name = v->name + ".row_major";
    Instruction* copy = user ? c.insert_before(user, Opcode::kCopy, rm, {v}, {}, name)
                             : c.add(Opcode::kCopy, rm, {v}, {}, name);
    copies++;
    copy_of_[v] = copy;
    return copy;
  }
  /// A fusion's parameters and root carry its operands' and result's layouts (layout assignment's rule 4).
  static void mirror(Instruction& f) {
    hlo::Computation& fc = *f.called.at(0);
    for (size_t k = 0; k < f.operands.size(); ++k) fc.parameters.at(k)->shape.layout = f.operand(k)->shape.layout;
    if (!f.shape.is_tuple) {
      fc.root->shape.layout = f.shape.layout;
    } else if (fc.root->opcode == Opcode::kTuple) {
      for (size_t k = 0; k < f.shape.tuple_shapes.size(); ++k)
        fc.root->operand(k)->shape.layout = f.shape.tuple_shapes[k].layout;
      fc.root->shape = f.shape;
    }
  }

  std::unordered_set<const hlo::Computation*> done_;
  std::unordered_map<const Instruction*, Instruction*> copy_of_;
};

/// Builds the executable's programs, one per computation (a loop body is built once), collecting every native
/// kernel of the module for one compile.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(CpuExecutable& exe) : exe_(exe) {
    exe_.fallbacks = std::make_unique<hlo::Module>(exe.module->name + ".fallbacks");
  }
  std::vector<const Instruction*> kernel_insts;

  size_t build(const hlo::Computation& c, const hlo::BufferOptions& options) {
    auto key = std::make_pair(&c, options.carry_in_place);
    auto it = built_.find(key);
    if (it != built_.end()) return it->second;
    size_t index = exe_.programs.size();
    exe_.programs.push_back(std::make_unique<Program>());
    built_[key] = index;
    build_into(*exe_.programs[index], c, options);  // the Program stays put while its callees are appended
    return index;
  }

 private:
  void build_into(Program& prog, const hlo::Computation& c, const hlo::BufferOptions& options) {
    prog.comp = &c;
    prog.ba = hlo::assign_buffers(c, options);
    const auto& ba = prog.ba;
    prog.constant_data.assign(ba.allocations.size(), nullptr);
    prog.output_leaf.assign(ba.allocations.size(), -1);
    for (auto& a : ba.allocations)
      if (a.kind == hlo::Allocation::Kind::kConstant)
        prog.constant_data[a.index] = ba.values[a.values.at(0).first].defining->literal->data();
    for (size_t k = 0; k < ba.root_values.size(); ++k) {
      int64_t a = ba.slice_of[ba.root_values[k]].first;
      if (ba.allocations[a].kind == hlo::Allocation::Kind::kOutput && prog.output_leaf[a] < 0)
        prog.output_leaf[a] = static_cast<int64_t>(k);
    }
    auto slice = [&](int64_t v) {
      auto [alloc, off] = ba.slice_of.at(v);
      return Slice{alloc, off, ba.values[v].size};
    };
    std::unordered_map<const Instruction*, std::vector<Slice>> leaves;
    int64_t scratch = 0;
    for (auto& up : c.instructions) {
      const Instruction& i = *up;
      std::vector<Slice> mine;
      if (i.opcode == Opcode::kTuple || i.opcode == Opcode::kOptimizationBarrier) {
        for (auto* o : i.operands) mine.insert(mine.end(), leaves.at(o).begin(), leaves.at(o).end());
      } else if (i.opcode == Opcode::kGetTupleElement) {
        mine.push_back(leaves.at(i.operand(0)).at(hlo::tuple_index_of(i)));
      } else if (!i.shape.is_tuple) {
        mine.push_back(slice(ba.value_of.at(&i)));
      } else {
        mine.resize(i.shape.tuple_shapes.size());
        for (size_t v = 0; v < ba.values.size(); ++v)
          if (ba.values[v].defining == &i) mine.at(ba.values[v].tuple_index) = slice(static_cast<int64_t>(v));
      }
      leaves[&i] = mine;
      bool alias = i.opcode == Opcode::kReshape || hlo::is_layout_bitcast(i) ||
                   (i.opcode == Opcode::kBitcastConvert && i.shape.byte_size() == i.operand(0)->shape.byte_size());
      if (i.opcode == Opcode::kParameter || i.opcode == Opcode::kConstant || i.opcode == Opcode::kTuple ||
          i.opcode == Opcode::kOptimizationBarrier ||
          i.opcode == Opcode::kGetTupleElement || alias)
        continue;
      Step st;
      st.inst = &i;
      st.outs = mine;
      for (auto* o : i.operands) st.ins.push_back(leaves.at(o));
      std::string why;
      if (i.opcode == Opcode::kWhile && (why = control_flow_problem(i)).empty()) {
        scratch = std::max(scratch, plan_while(st, ba));
        exe_.counts.whiles++;
      } else if (i.opcode == Opcode::kConditional && (why = control_flow_problem(i)).empty()) {
        st.kind = Step::Kind::kConditional;
        int64_t need = 0;
        for (auto* b : i.called) {
          st.programs.push_back(build(*b, {}));
          need = std::max(need, exe_.programs[st.programs.back()]->frame_size);
        }
        scratch = std::max(scratch, need);
        exe_.counts.conditionals++;
      } else if (i.opcode == Opcode::kWhile || i.opcode == Opcode::kConditional) {
        make_fallback(st, why);
      } else if (i.opcode == Opcode::kDot && cpu::dot_supported(i)) {
        st.kind = Step::Kind::kDot;
        exe_.counts.dots++;
      } else if (is_native_update_slice(i)) {
        st.kind = Step::Kind::kUpdateSlice;
        exe_.counts.update_slices++;
      } else if ((st.library = cpu::make_library_op(i))) {
        st.kind = Step::Kind::kLibrary;
        st.kernel = kernel_insts.size();
        for (auto* k : st.library->kernels()) kernel_insts.push_back(k);
        exe_.counts.library++;
      } else if ((why = cpu::unsupported_reason(i)).empty()) {
        st.kind = Step::Kind::kKernel;
        st.kernel = kernel_insts.size();
        st.space = cpu::loop_space(i);
        kernel_insts.push_back(&i);
        exe_.counts.kernels++;
      } else {
        make_fallback(st, why);
      }
      check_layouts(st);
      prog.steps.push_back(std::move(st));
    }
    prog.results = leaves.at(c.root);
    prog.scratch_offset = align64(ba.temp_size);
    prog.frame_size = prog.scratch_offset + scratch;
  }

  /// What LayoutLegalizer guarantees: only kernels write non-row-major results, and only kernels, dots and output
  /// fusions read non-row-major operands.
  static void check_layouts(const Step& st) {
    const Instruction& i = *st.inst;
    if (st.kind == Step::Kind::kKernel) return;
    bool reads_any = st.kind == Step::Kind::kDot || (st.kind == Step::Kind::kLibrary && i.opcode == Opcode::kFusion);
    bool ok = all_row_major(i.shape);
    for (auto* o : i.operands) ok = ok && (reads_any || all_row_major(o->shape));
    JITX_ASSERT(ok, "cpu backend: %{} ({}) would read or write memory in another order than its layout", i.name,
                hlo::opcode_name(i.opcode));
  }

  static std::string control_flow_problem(const Instruction& i) {
    size_t first = i.opcode == Opcode::kConditional ? 1 : 0;
    for (size_t k = first; k < i.operands.size(); ++k)
      if (i.operand(k)->shape.is_tuple) return "a tuple-shaped operand";
    if (has_nested_tuple(i.shape)) return "a nested tuple result";
    for (auto* c : i.called)
      if (auto p = layout_problem(*c); !p.empty()) return p;
    return "";
  }

  /// The while's programs and its scratch: the condition's and body's frames (they take turns), the predicate,
  /// then a second buffer for each carry the body cannot update in place. Returns the scratch size.
  int64_t plan_while(Step& st, const hlo::BufferAssignment& ba) {
    const Instruction& i = *st.inst;
    st.kind = Step::Kind::kWhile;
    hlo::BufferOptions body_options;
    body_options.carry_in_place = true;
    st.programs = {build(*i.called[0], {}), build(*i.called[1], body_options)};
    const Program& cond = *exe_.programs[st.programs[0]];
    const Program& body = *exe_.programs[st.programs[1]];
    int64_t off = align64(std::max(cond.frame_size, body.frame_size));
    st.pred_offset = off;
    off += 64;
    size_t n = i.operands.size();
    st.other.assign(n, -1);
    st.invariant.assign(n, 0);
    st.used.assign(n, 0);
    for (size_t k = 0; k < n; ++k) {
      int64_t rv = body.ba.root_values[k];
      st.invariant[k] = body.ba.values[rv].defining == body.comp->parameters[k];
      if (body.ba.output_aliases[k] != static_cast<int64_t>(k)) {
        st.other[k] = off;
        off += align64(st.outs[k].size);
      }
    }
    for (size_t v = 0; v < ba.values.size(); ++v)
      if (ba.values[v].defining == &i)
        st.used[ba.values[v].tuple_index] = ba.values[v].live_out || ba.values[v].end > ba.values[v].start;
    return off;
  }

  void make_fallback(Step& st, const std::string& why) {
    const Instruction& inst = *st.inst;
    st.kind = Step::Kind::kFallback;
    hlo::Module& m = *exe_.fallbacks;
    // A computation of parameters and a copy of inst, for the interpreter.
    hlo::Computation* c = m.add_computation(m.unique_name(inst.name));
    std::vector<Instruction*> params;
    for (size_t k = 0; k < inst.operands.size(); ++k)
      params.push_back(c->add_parameter(static_cast<int64_t>(k), inst.operand(k)->shape));
    Instruction* copy = c->add(inst.opcode, inst.shape, params, inst.attrs, inst.name);
    copy->called = inst.called;
    copy->literal = inst.literal;
    c->root = copy;
    st.fallback = c;
    exe_.counts.fallbacks.push_back(fmt::format("%{} ({}): {}", inst.name, hlo::opcode_name(inst.opcode), why));
  }

  CpuExecutable& exe_;
  std::map<std::pair<const hlo::Computation*, bool>, size_t> built_;
};

/// Some tens of microseconds of work at most: one program without loops, branches or interpreter fallbacks,
/// touching few elements. Such an executable may run inline on the calling thread (Stream::try_run_inline).
bool is_small(const CpuExecutable& exe) {
  // Element operations: up to some tens of microseconds, where the two wake-ups an enqueued call costs (about
  // 7 us on a 2-core VM, measured with a layer norm and a column sum of 256 x 256) are a large part of the call.
  constexpr int64_t kMaxWork = 1 << 17;
  if (exe.programs.size() != 1) return false;
  int64_t work = 0;
  for (auto& st : exe.programs[0]->steps) {
    switch (st.kind) {
      case Step::Kind::kKernel: work += st.space.rows * st.space.cols * st.space.work_per_point; break;
      case Step::Kind::kDot: {
        int64_t k = 1;
        for (auto d : hlo::DotDimensionNumbers::of(*st.inst).lhs_contracting_dims) k *= st.inst->operand(0)->shape.dims.at(d);
        work += st.inst->shape.num_elements() * k;
        break;
      }
      case Step::Kind::kUpdateSlice: work += st.inst->operand(1)->shape.num_elements(); break;
      case Step::Kind::kLibrary:
        if (!st.library->is_copy()) return false;
        work += st.inst->shape.num_elements();
        break;
      default: return false;
    }
  }
  return work <= kMaxWork;
}

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  using Backend::compile;

  std::shared_ptr<Executable> compile(std::shared_ptr<const hlo::Module> module, const CompileOptions& options) override {
    hlo::verify(*module);
    auto t0 = Clock::now();
    auto exe = std::make_shared<CpuExecutable>();
    exe->module = module;
    const auto& cfg = config();
    bool nested = has_nested_tuple(module->entry->root->shape);
    for (auto& i : module->entry->instructions) nested = nested || has_nested_tuple(i->shape) || (i->opcode == Opcode::kParameter && i->shape.is_tuple);
    if (nested || !module->entry->root->shape.is_tuple) {
      exe->whole_module_fallback = make_interpreter_backend()->compile(module);
      if (cfg.log_compiles)
        detail::log_line(fmt::format("[jitx] cpu backend: '{}' runs entirely on the interpreter (nested tuples)", module->name));
      return exe;
    }
    // The plan runs on a copy whose layouts every step honours (see LayoutLegalizer): buffers are laid out in
    // memory as their shapes' layouts say.
    std::unique_ptr<hlo::Module> planned = module->clone();
    LayoutLegalizer legalizer;
    legalizer.run(*planned->entry);
    exe->counts.layout_copies = legalizer.copies;
    if (legalizer.copies > 0) hlo::verify(*planned);  // the rewrite kept the module well formed
    exe->planned = std::move(planned);
    const hlo::Computation& entry = *exe->planned->entry;
    ProgramBuilder builder(*exe);
    hlo::BufferOptions entry_options;
    entry_options.donated_parameters = options.donated_parameters;
    builder.build(entry, entry_options);
    exe->runs_inline = is_small(*exe);
    double plan_ms = ms_since(t0);

    cpu::JitOptions jo;
    jo.module_name = module->name;
    jo.allow_excess_precision = cfg.allow_excess_precision;
    if (!cfg.dump_to.empty()) {
      std::filesystem::create_directories(cfg.dump_to);
      static std::atomic<int64_t> seq{0};
      jo.dump_prefix = fmt::format("{}/{}.cpu.{:04d}", cfg.dump_to, module->name, seq++);
    }
    exe->kernels = cpu::compile_kernels(builder.kernel_insts, jo);
    for (auto& prog : exe->programs)
      for (auto& st : prog->steps)
        if (st.library) {
          auto first = exe->kernels.fns.begin() + static_cast<std::ptrdiff_t>(st.kernel);
          st.library->bind({first, first + static_cast<std::ptrdiff_t>(st.library->kernels().size())});
        }
    const auto& t = exe->kernels.times;
    exe->compile_phases = {{"plan", plan_ms}, {"emit", t.emit_ms}, {"llvm-opt", t.optimize_ms}, {"codegen", t.codegen_ms}};
    if (cfg.log_compiles) {
      const auto& n = exe->counts;
      detail::log_line(fmt::format(
          "[jitx] cpu backend: '{}': {} programs, {} native kernels, {} Eigen dots, {} library ops, {} in-place updates, "
          "{} while loops, {} conditionals, {} interpreter fallbacks, {} layout copies; {} distinct LLVM kernels on {} "
          "threads; plan {:.2f} ms, emit {:.2f} ms, optimise {:.2f} ms, codegen {:.2f} ms",
          module->name, exe->programs.size(), n.kernels, n.dots, n.library, n.update_slices, n.whiles, n.conditionals,
          n.fallbacks.size(), n.layout_copies, exe->kernels.distinct, exe->kernels.parts, plan_ms, t.emit_ms, t.optimize_ms, t.codegen_ms));
      if (!n.fallbacks.empty())
        detail::log_line(fmt::format("[jitx] cpu backend: '{}' runs on the interpreter: {}", module->name,
                                     fmt::join(n.fallbacks, "; ")));
    }
    return exe;
  }
};
}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace jitx::runtime
