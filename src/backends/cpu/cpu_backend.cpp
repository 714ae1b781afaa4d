// The CPU backend: executables of native kernels (LLVM ORC), Eigen dots and interpreter fallbacks, run over one
// buffer assignment on the device's stream.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "backends/cpu/kernels.h"
#include "backends/cpu/parallel.h"
#include "backends/interpreter/evaluator.h"
#include "core/errors.h"
#include "hlo/analysis/buffer_assignment.h"
#include "jitx/config.h"
#include "runtime/runtime.h"

namespace jitx::detail {
void log_line(const std::string& s);  // api/jit.cpp: the log sink shared with compile logs
}

namespace jitx::runtime {
namespace {
using hlo::Instruction;
using hlo::Opcode;
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

/// Where a value lives: an allocation of the buffer assignment and an offset in it.
struct Slice {
  int64_t alloc = -1, offset = 0, size = 0;
};

struct Step {
  enum class Kind { kKernel, kDot, kFallback } kind = Kind::kKernel;
  const Instruction* inst = nullptr;
  std::vector<Slice> outs;                 // the result's leaves
  std::vector<std::vector<Slice>> ins;     // each operand's leaves
  size_t kernel = 0;
  cpu::LoopSpace space;
  const hlo::Computation* fallback = nullptr;
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

class CpuExecutable : public Executable, public std::enable_shared_from_this<CpuExecutable> {
 public:
  std::shared_ptr<Executable> whole_module_fallback;  // modules the runtime cannot lay out (nested tuples)
  hlo::BufferAssignment ba;
  std::vector<Step> steps;
  std::vector<Slice> results;
  std::vector<const void*> constant_data;  // per allocation
  cpu::CompiledKernels kernels;
  std::unique_ptr<hlo::Module> fallbacks;  // one-instruction computations run by the interpreter

  std::vector<std::shared_ptr<Buffer>> execute(std::span<const std::shared_ptr<Buffer>> args, Device* device) override {
    if (whole_module_fallback) return whole_module_fallback->execute(args, device);
    const hlo::Shape& result = module->entry->root->shape;
    std::vector<std::shared_ptr<Buffer>> outs;
    for (auto& s : result.tuple_shapes) outs.push_back(Buffer::pending(s.dtype, s.dims, device));
    std::vector<std::shared_ptr<Buffer>> ins(args.begin(), args.end());
    // The closure keeps this executable (its code and plan) alive until the work has run.
    auto self = shared_from_this();
    device->stream.enqueue([self, ins, outs] {
      try {
        self->run(ins, outs);
      } catch (...) {
        for (auto& o : outs) o->ready->set_error(std::current_exception());
      }
    });
    return outs;
  }

 private:
  void run(const std::vector<std::shared_ptr<Buffer>>& ins, const std::vector<std::shared_ptr<Buffer>>& outs) {
    for (auto& b : ins) b->ready->wait();
    std::vector<char*> base(ba.allocations.size(), nullptr);
    std::vector<std::shared_ptr<detail::Storage>> owned(ba.allocations.size());
    for (auto& a : ba.allocations) {
      switch (a.kind) {
        case hlo::Allocation::Kind::kParameter:
          base[a.index] = static_cast<char*>(ins.at(a.parameter_number)->storage->data());
          break;
        case hlo::Allocation::Kind::kConstant: base[a.index] = const_cast<char*>(static_cast<const char*>(constant_data[a.index])); break;
        default:
          owned[a.index] = detail::Storage::allocate(static_cast<size_t>(a.size));
          base[a.index] = static_cast<char*>(owned[a.index]->data());
      }
    }
    auto ptr = [&](const Slice& s) { return base[s.alloc] + s.offset; };
    for (auto& st : steps) {
      try {
        run_step(st, ptr);
      } catch (...) {
        rethrow_with_op(*st.inst);
      }
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      const Slice& s = results[i];
      const auto& a = ba.allocations[s.alloc];
      if (a.kind == hlo::Allocation::Kind::kOutput && s.offset == 0) {
        outs[i]->storage = owned[s.alloc];
      } else {  // an input or a constant returned as it is: outputs own their storage
        auto st = detail::Storage::allocate(static_cast<size_t>(s.size));
        std::memcpy(st->data(), ptr(s), static_cast<size_t>(s.size));
        outs[i]->storage = st;
      }
    }
    for (auto& o : outs) o->ready->set();
  }

  template <class Ptr>
  void run_step(const Step& st, Ptr ptr) {
    switch (st.kind) {
      case Step::Kind::kKernel: {
        std::vector<void*> bufs;
        for (auto& s : st.outs) bufs.push_back(ptr(s));
        for (auto& op : st.ins) bufs.push_back(ptr(op.at(0)));
        cpu::KernelFn fn = kernels.fns[st.kernel];
        const auto& sp = st.space;
        int64_t work = sp.rows * sp.cols * sp.work_per_point;
        int threads = cpu::pool_threads();
        constexpr int64_t kMinWorkPerThread = 1 << 16;
        int64_t parts = std::min<int64_t>(threads, work / kMinWorkPerThread);
        if (parts <= 1) {
          fn(bufs.data(), 0, sp.rows, 0, sp.cols);
        } else if (sp.rows >= parts) {
          cpu::parallel_for(parts, [&](int64_t p) {
            fn(bufs.data(), sp.rows * p / parts, sp.rows * (p + 1) / parts, 0, sp.cols);
          });
        } else {
          cpu::parallel_for(parts, [&](int64_t p) {
            int64_t lo = sp.cols * p / parts / 16 * 16, hi = p + 1 == parts ? sp.cols : sp.cols * (p + 1) / parts / 16 * 16;
            fn(bufs.data(), 0, sp.rows, lo, hi);
          });
        }
        return;
      }
      case Step::Kind::kDot:
        cpu::run_dot(*st.inst, ptr(st.ins[0][0]), ptr(st.ins[1][0]), ptr(st.outs[0]));
        return;
      case Step::Kind::kFallback: {
        std::vector<interpreter::Value> args;
        for (size_t k = 0; k < st.ins.size(); ++k) {
          const hlo::Shape& s = st.inst->operand(k)->shape;
          auto leaf = [&](const hlo::Shape& ls, const Slice& sl) {
            auto lit = detail::Literal::make(ls.dtype, ls.dims);
            std::memcpy(lit.data(), ptr(sl), lit.nbytes());
            return interpreter::Value{lit, {}, false};
          };
          if (!s.is_tuple) {
            args.push_back(leaf(s, st.ins[k][0]));
          } else {
            interpreter::Value t;
            t.is_tuple = true;
            for (size_t e = 0; e < s.tuple_shapes.size(); ++e) t.tuple.push_back(leaf(s.tuple_shapes[e], st.ins[k][e]));
            args.push_back(t);
          }
        }
        interpreter::Value v = interpreter::evaluate(*st.fallback, args);
        auto put = [&](const interpreter::Value& x, const Slice& sl) {
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
};

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }

  std::shared_ptr<Executable> compile(std::shared_ptr<const hlo::Module> module) override {
    hlo::verify(*module);
    auto t0 = Clock::now();
    auto exe = std::make_shared<CpuExecutable>();
    exe->module = module;
    const hlo::Computation& entry = *module->entry;
    const auto& cfg = config();
    bool nested = has_nested_tuple(entry.root->shape);
    for (auto& i : entry.instructions) nested = nested || has_nested_tuple(i->shape) || (i->opcode == Opcode::kParameter && i->shape.is_tuple);
    if (nested || !entry.root->shape.is_tuple) {
      exe->whole_module_fallback = make_interpreter_backend()->compile(module);
      if (cfg.log_compiles)
        detail::log_line(fmt::format("[jitx] cpu backend: '{}' runs entirely on the interpreter (nested tuples)", module->name));
      return exe;
    }
    exe->ba = hlo::assign_buffers(*module);
    const auto& ba = exe->ba;
    exe->constant_data.assign(ba.allocations.size(), nullptr);
    for (auto& a : ba.allocations)
      if (a.kind == hlo::Allocation::Kind::kConstant)
        exe->constant_data[a.index] = ba.values[a.values.at(0).first].defining->literal->data();

    auto slice = [&](int64_t v) {
      auto [alloc, off] = ba.slice_of.at(v);
      return Slice{alloc, off, ba.values[v].size};
    };
    std::unordered_map<const Instruction*, std::vector<Slice>> leaves;
    std::vector<const Instruction*> kernel_insts;
    std::vector<std::string> fallback_notes;
    exe->fallbacks = std::make_unique<hlo::Module>(module->name + ".fallbacks");
    int n_dots = 0;
    for (auto& up : entry.instructions) {
      const Instruction& i = *up;
      std::vector<Slice> mine;
      if (i.opcode == Opcode::kTuple || i.opcode == Opcode::kOptimizationBarrier) {
        for (auto* o : i.operands) mine.insert(mine.end(), leaves.at(o).begin(), leaves.at(o).end());
      } else if (i.opcode == Opcode::kGetTupleElement) {
        mine.push_back(leaves.at(i.operand(0)).at(i.attrs.get_int("index")));
      } else if (!i.shape.is_tuple) {
        mine.push_back(slice(ba.value_of.at(&i)));
      } else {
        mine.resize(i.shape.tuple_shapes.size());
        for (size_t v = 0; v < ba.values.size(); ++v)
          if (ba.values[v].defining == &i) mine.at(ba.values[v].tuple_index) = slice(static_cast<int64_t>(v));
      }
      leaves[&i] = mine;
      bool alias = i.opcode == Opcode::kReshape ||
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
      if (i.opcode == Opcode::kDot && cpu::dot_supported(i)) {
        st.kind = Step::Kind::kDot;
        ++n_dots;
      } else if ((why = cpu::unsupported_reason(i)).empty()) {
        st.kind = Step::Kind::kKernel;
        st.kernel = kernel_insts.size();
        st.space = cpu::loop_space(i);
        kernel_insts.push_back(&i);
      } else {
        st.kind = Step::Kind::kFallback;
        st.fallback = make_fallback(*exe->fallbacks, i);
        fallback_notes.push_back(fmt::format("%{} ({}): {}", i.name, hlo::opcode_name(i.opcode), why));
      }
      exe->steps.push_back(std::move(st));
    }
    exe->results = leaves.at(entry.root);
    double plan_ms = ms_since(t0);

    cpu::JitOptions jo;
    jo.module_name = module->name;
    if (!cfg.dump_to.empty()) {
      std::filesystem::create_directories(cfg.dump_to);
      static std::atomic<int64_t> seq{0};
      jo.dump_prefix = fmt::format("{}/{}.cpu.{:04d}", cfg.dump_to, module->name, seq++);
    }
    exe->kernels = cpu::compile_kernels(kernel_insts, jo);
    if (cfg.log_compiles) {
      const auto& t = exe->kernels.times;
      detail::log_line(fmt::format(
          "[jitx] cpu backend: '{}': {} native kernels, {} Eigen dots, {} interpreter fallbacks; plan {:.2f} ms, "
          "emit {:.2f} ms, optimise {:.2f} ms, codegen {:.2f} ms",
          module->name, kernel_insts.size(), n_dots, fallback_notes.size(), plan_ms, t.emit_ms, t.optimize_ms,
          t.codegen_ms));
      if (!fallback_notes.empty())
        detail::log_line(fmt::format("[jitx] cpu backend: '{}' runs on the interpreter: {}", module->name,
                                     fmt::join(fallback_notes, "; ")));
    }
    return exe;
  }

 private:
  // A computation of parameters and a copy of inst, for the interpreter.
  static const hlo::Computation* make_fallback(hlo::Module& m, const Instruction& inst) {
    hlo::Computation* c = m.add_computation(m.unique_name(inst.name));
    std::vector<Instruction*> params;
    for (size_t k = 0; k < inst.operands.size(); ++k)
      params.push_back(c->add_parameter(static_cast<int64_t>(k), inst.operand(k)->shape));
    Instruction* copy = c->add(inst.opcode, inst.shape, params, inst.attrs, inst.name);
    copy->called = inst.called;
    copy->literal = inst.literal;
    c->root = copy;
    return c;
  }
};
}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace jitx::runtime
