// Running an optimised module on one CUDA device (see cuda_executable.h).
#include "backends/cuda/cuda_executable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_set>

#include "backends/cpu/layout_legalizer.h"
#include "backends/cuda/cuda_launch.h"
#include "core/errors.h"
#include "core/log.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"
#include "jitx/config.h"
#include "jitx/error.h"
#include "runtime/runtime.h"

namespace jitx::cuda {
using detail::Literal;
using hlo::Instruction;
using hlo::Opcode;

struct CudaExecutable::Val {
  std::shared_ptr<GpuArray> array;
  std::vector<Val> tuple;
  bool is_tuple = false;
};

// Host fallbacks read and write device buffers through relayout: the evaluator's literals are row-major, buffers are
// laid out as their shapes say.
Literal relayout(const Literal& in, const std::vector<int64_t>& m2m, bool to_physical) {
  size_t rank = in.dims.size();
  bool row_major = true;
  for (size_t k = 0; k < m2m.size(); ++k) row_major = row_major && m2m[k] == static_cast<int64_t>(rank - 1 - k);
  if (row_major || rank < 2) return in;
  Literal out = Literal::make(in.dtype, in.dims);
  std::vector<int64_t> stride(rank);  // the physical stride of each logical dimension
  int64_t s = 1;
  for (int64_t d : m2m) {
    stride[static_cast<size_t>(d)] = s;
    s *= in.dims[static_cast<size_t>(d)];
  }
  size_t item = dtype_size(in.dtype);
  auto* src = static_cast<const char*>(in.data());
  auto* dst = static_cast<char*>(out.data());
  std::vector<int64_t> idx(rank, 0);
  int64_t n = detail::num_elements(in.dims);
  for (int64_t i = 0; i < n; ++i) {
    int64_t phys = 0;
    for (size_t k = 0; k < rank; ++k) phys += idx[k] * stride[k];
    if (to_physical)
      std::memcpy(dst + phys * item, src + i * item, item);
    else
      std::memcpy(dst + i * item, src + phys * item, item);
    for (size_t k = rank; k-- > 0;) {  // the next row-major index
      if (++idx[k] < in.dims[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

namespace {
bool needs_no_work(Opcode op) {
  return op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
         op == Opcode::kGetTupleElement || op == Opcode::kOptimizationBarrier || op == Opcode::kWhile ||
         op == Opcode::kConditional || op == Opcode::kCall;
}
}  // namespace

CudaExecutable::CudaExecutable(std::shared_ptr<const hlo::Module> module, const GpuTarget& target)
    : source_(std::move(module)) {
  for (auto& c : source_->computations)
    for (auto& i : c->instructions)
      if (hlo::is_collective(i->opcode) || i->opcode == Opcode::kPartitionId)
        throw CompileError(
            fmt::format("cuda backend: %{} ({}) in {}: collectives and SPMD programs do not run on "
                        "CUDA devices yet",
                        i->name, hlo::opcode_name(i->opcode), source_->name));
  for (auto* p : source_->entry->parameters)
    if (p->shape.is_tuple)
      throw CompileError(
          fmt::format("cuda backend: {} takes a tuple parameter (%{}), which CUDA devices do not run "
                      "yet",
                      source_->name, p->name));
  module_ = source_->clone();
  runtime::cpu_backend::LayoutLegalizer legalizer;
  legalizer.run(*module_->entry);
  code_ = compile_module(*module_, target, config().allow_excess_precision);
  blas_ = Blas::get(&blas_why_);
  for (auto& k : code_.kernels) {
    const hlo::Computation* c = module_->find_computation(k.computation);
    const Instruction* i = c ? c->find(k.instruction) : nullptr;
    JITX_ASSERT(i, "cuda backend: kernel {} computes %{} of {}, which the module lacks", k.name, k.instruction,
                k.computation);
    if (k.plan.num_scratch == 0) {
      kernel_of_[i] = &k;
      continue;
    }
    // An output fusion that is one of cuBLASLt's epilogues (bias, then none, ReLU or GELU) is one matmul writing
    // the fusion's result: no scratch buffer, no epilogue kernel.
    if (blas_ && k.plan.num_scratch == 1) {
      const hlo::Computation& fc = *i->called.at(0);
      for (auto& fi : fc.instructions) {
        if (fi->opcode != Opcode::kDot) continue;
        const Instruction *l = fi->operand(0), *r = fi->operand(1);
        std::optional<GemmPlan> gp = plan_gemm(*fi);
        if (!gp || l->opcode != Opcode::kParameter || r->opcode != Opcode::kParameter) break;
        if (std::optional<EpiloguePlan> ep = plan_epilogue(fc, *gp))
          epilogue_of_[i] = {*gp, static_cast<size_t>(l->parameter_number), static_cast<size_t>(r->parameter_number),
                             *ep};
        break;
      }
      if (epilogue_of_.count(i)) continue;
    }
    // An output fusion's epilogue kernel reads its dots' results from scratch buffers (in the order of the fused
    // computation) that cuBLASLt or a generated dot kernel writes first: each dot must read two of the fusion's
    // parameters. Otherwise the whole fusion runs on the host.
    std::vector<ScratchDot> dots;
    bool ok = true;
    for (auto& fi : i->called.at(0)->instructions) {
      if (!ok || fi->opcode != Opcode::kDot) continue;
      const Instruction *l = fi->operand(0), *r = fi->operand(1);
      ok = l->opcode == Opcode::kParameter && r->opcode == Opcode::kParameter;
      if (!ok) break;
      ScratchDot d{fi.get(), {}, static_cast<size_t>(l->parameter_number), static_cast<size_t>(r->parameter_number)};
      std::optional<GemmPlan> p = blas_ ? plan_gemm(*fi) : std::nullopt;
      if (p)
        d.plan = *p;
      else
        ok = (d.kernel = dot_kernel(*fi, target)) != nullptr;
      dots.push_back(d);
    }
    if (ok && dots.size() == k.plan.num_scratch) {
      kernel_of_[i] = &k;
      scratch_of_[i] = std::move(dots);
    }
  }
  // Everything else that computes runs on the host: a computation of parameters and a copy of the instruction.
  fallbacks_ = std::make_unique<hlo::Module>(module_->name + "_host_fallbacks");
  std::unordered_set<const hlo::Computation*> fused;  // run as their fusion's kernel (or its fallback)
  for (auto& c : module_->computations)
    for (auto& i : c->instructions)
      if (i->opcode == Opcode::kFusion) fused.insert(i->called.at(0));
  for (auto& c : module_->computations) {
    if (fused.count(c.get())) continue;
    for (auto& ip : c->instructions) {
      const Instruction& inst = *ip;
      whiles_ += inst.opcode == Opcode::kWhile;
      conds_ += inst.opcode == Opcode::kConditional;
      if (needs_no_work(inst.opcode) || kernel_of_.count(&inst) || epilogue_of_.count(&inst)) continue;
      if (inst.opcode == Opcode::kDot) {
        if (std::optional<GemmPlan> p = blas_ ? plan_gemm(inst) : std::nullopt) {
          gemm_of_[&inst] = *p;
          continue;
        }
        if (dot_kernel(inst, target)) continue;
      }
      fallback_of_[&inst] = hlo::add_single_instruction_computation(*fallbacks_, inst);
    }
  }
}

const GpuKernel* CudaExecutable::dot_kernel(const Instruction& dot, const GpuTarget& target) {
  try {
    dot_kernels_.push_back(cached_kernel(dot, target, config().allow_excess_precision));
  } catch (const CompileError&) {  // a dot the emitter does not write (a bool result): the host runs it
    return nullptr;
  }
  kernel_of_[&dot] = &dot_kernels_.back();
  return &dot_kernels_.back();
}

std::map<std::string, int64_t> CudaExecutable::stats() const {
  return {{"kernels", static_cast<int64_t>(kernel_of_.size())},
          {"library_dots", static_cast<int64_t>(gemm_of_.size() +
                                                [&] {
                                                  size_t n = 0;
                                                  for (auto& [i, ds] : scratch_of_)
                                                    for (auto& d : ds) n += d.kernel == nullptr;
                                                  n += epilogue_of_.size();
                                                  return n;
                                                }())},
          {"dot_kernels", static_cast<int64_t>(dot_kernels_.size())},
          {"cublaslt_epilogues", static_cast<int64_t>(epilogue_of_.size())},
          {"host_fallbacks", static_cast<int64_t>(fallback_of_.size())},
          {"while_loops", whiles_},
          {"conditionals", conds_}};
}

const hlo::Instruction* CudaExecutable::instruction_of(const std::string& entry, const std::string& ptx) const {
  for (auto& [inst, k] : kernel_of_)
    if (k->name == entry && k->ptx == ptx) return inst;
  return nullptr;
}

CudaExecutable::Val CudaExecutable::run_fallback(GpuDevice& gpu, const Instruction& inst,
                                                 const std::vector<const Val*>& ops) const {
  std::function<evaluator::Value(const Val&, const hlo::Shape&)> to_host = [&](const Val& v, const hlo::Shape& s) {
    evaluator::Value out;
    if (v.is_tuple) {
      out.is_tuple = true;
      for (size_t k = 0; k < v.tuple.size(); ++k) out.tuple.push_back(to_host(v.tuple[k], s.tuple_shapes.at(k)));
      return out;
    }
    out.array = relayout(gpu.fetch(v.array), hlo::minor_to_major(s), false);
    return out;
  };
  std::vector<evaluator::Value> args;
  for (size_t k = 0; k < ops.size(); ++k) args.push_back(to_host(*ops[k], inst.operand(k)->shape));
  evaluator::Value r = evaluator::evaluate(*fallback_of_.at(&inst), args);
  std::function<Val(const evaluator::Value&, const hlo::Shape&)> to_device = [&](const evaluator::Value& v,
                                                                                 const hlo::Shape& s) {
    Val out;
    if (v.is_tuple) {
      out.is_tuple = true;
      for (size_t k = 0; k < v.tuple.size(); ++k) out.tuple.push_back(to_device(v.tuple[k], s.tuple_shapes.at(k)));
      return out;
    }
    out.array = gpu.put(relayout(v.array, hlo::minor_to_major(s), true));
    return out;
  };
  return to_device(r, inst.shape);
}

CudaExecutable::Val CudaExecutable::run_computation(GpuDevice& gpu, const hlo::Computation& c,
                                                    std::vector<Val> params) const {
  std::unordered_map<const Instruction*, Val> env;
  auto fetch_scalar = [&](const Val& v) {
    Literal l = gpu.fetch(v.array);
    return l.get_i64(0);
  };
  for (auto& ip : c.instructions) {
    const Instruction& inst = *ip;
    std::vector<const Val*> ops;
    for (auto* o : inst.operands) ops.push_back(&env.at(o));
    Val v;
    switch (inst.opcode) {
      case Opcode::kParameter:
        v = params.at(static_cast<size_t>(inst.parameter_number));
        break;
      case Opcode::kConstant: {
        std::lock_guard<std::mutex> l(constants_mu_);
        std::shared_ptr<GpuArray>& a = constants_[{&inst, &gpu}];
        if (!a || a->error) a = gpu.put(relayout(*inst.literal, hlo::minor_to_major(inst.shape), true));
        v.array = a;
        break;
      }
      case Opcode::kTuple:
      case Opcode::kOptimizationBarrier:
        v.is_tuple = true;
        for (auto* o : ops) v.tuple.push_back(*o);
        break;
      case Opcode::kGetTupleElement:
        v = ops[0]->tuple.at(static_cast<size_t>(hlo::tuple_index_of(inst)));
        break;
      case Opcode::kWhile: {
        std::vector<Val> state;
        for (auto* o : ops) state.push_back(*o);
        while (fetch_scalar(run_computation(gpu, *inst.called.at(0), state)) != 0)
          state = run_computation(gpu, *inst.called.at(1), state).tuple;
        v.is_tuple = true;
        v.tuple = std::move(state);
        break;
      }
      case Opcode::kConditional: {
        // As the evaluator: a pred picks branch 0 when true; an s32 index out of range picks the last branch.
        int64_t n = static_cast<int64_t>(inst.called.size());
        int64_t b = fetch_scalar(*ops[0]);
        if (inst.operand(0)->shape.dtype == DType::bool_)
          b = b ? 0 : 1;
        else if (b < 0 || b >= n)
          b = n - 1;
        std::vector<Val> sub;
        for (size_t k = 1; k < ops.size(); ++k) sub.push_back(*ops[k]);
        v = run_computation(gpu, *inst.called.at(static_cast<size_t>(b)), std::move(sub));
        break;
      }
      case Opcode::kCall: {
        std::vector<Val> sub;
        for (auto* o : ops) sub.push_back(*o);
        v = run_computation(gpu, *inst.called.at(0), std::move(sub));
        break;
      }
      default: {
        if (auto e = epilogue_of_.find(&inst); e != epilogue_of_.end()) {
          const FusedMatmul& f = e->second;
          v.array = blas_->matmul(
              gpu, f.gemm, ops.at(f.lhs)->array, ops.at(f.rhs)->array, inst.shape,
              fmt::format("cuBLASLt matmul with a {} epilogue (%{})", epilogue_name(f.epilogue.kind), inst.name),
              Epilogue{f.epilogue.kind, ops.at(static_cast<size_t>(f.epilogue.bias_parameter))->array});
          break;
        }
        if (auto g = gemm_of_.find(&inst); g != gemm_of_.end()) {
          v.array = blas_->matmul(gpu, g->second, ops[0]->array, ops[1]->array, inst.shape,
                                  fmt::format("cuBLASLt matmul (%{})", inst.name));
          break;
        }
        auto k = kernel_of_.find(&inst);
        if (k == kernel_of_.end()) {
          v = run_fallback(gpu, inst, ops);
          break;
        }
        std::vector<hlo::Shape> outs = inst.shape.is_tuple ? inst.shape.tuple_shapes : std::vector{inst.shape};
        std::vector<std::shared_ptr<GpuArray>> ins;
        for (auto* o : ops) {
          JITX_ASSERT(!o->is_tuple, "cuda backend: kernel {} (%{}) reads a tuple", k->second->name, inst.name);
          ins.push_back(o->array);
        }
        if (auto sc = scratch_of_.find(&inst); sc != scratch_of_.end())
          for (const ScratchDot& d : sc->second) {  // the output fusion's dots first, into its scratch buffers
            std::shared_ptr<GpuArray> s;
            if (d.dot->shape.num_elements() == 0)
              s = gpu.put(Literal::make(d.dot->shape.dtype, d.dot->shape.dims));
            else if (d.kernel)
              s = gpu.launch(*d.kernel, std::vector{ins.at(d.lhs), ins.at(d.rhs)}, std::vector{d.dot->shape}).at(0);
            else
              s = blas_->matmul(gpu, d.plan, ins.at(d.lhs), ins.at(d.rhs), d.dot->shape,
                                fmt::format("cuBLASLt matmul (%{} in %{})", d.dot->name, inst.name));
            ins.push_back(std::move(s));
          }
        bool empty = true;
        for (auto& s : outs) empty = empty && s.num_elements() == 0;
        std::vector<std::shared_ptr<GpuArray>> got;
        if (empty)  // nothing to compute: no launch (a grid of zero blocks is an error)
          for (auto& s : outs) got.push_back(gpu.put(Literal::make(s.dtype, s.dims)));
        else
          got = gpu.launch(*k->second, ins, outs);
        if (!inst.shape.is_tuple) {
          v.array = got.at(0);
        } else {
          v.is_tuple = true;
          for (auto& g : got) v.tuple.push_back(Val{g, {}, false});
        }
      }
    }
    env.emplace(&inst, std::move(v));
  }
  return env.at(c.root);
}

std::vector<std::shared_ptr<GpuArray>> CudaExecutable::run(GpuDevice& gpu,
                                                           const std::vector<std::shared_ptr<GpuArray>>& args) const {
  std::vector<Val> params;
  for (auto& a : args) params.push_back(Val{a, {}, false});
  Val r = run_computation(gpu, *module_->entry, std::move(params));
  std::vector<std::shared_ptr<GpuArray>> out;
  if (!r.is_tuple) return {r.array};
  for (auto& e : r.tuple) {
    if (e.is_tuple)
      throw RuntimeError(
          fmt::format("cuda backend: {} returns a nested tuple, which CUDA devices do not run yet", module_->name));
    out.push_back(e.array);
  }
  return out;
}

// --- the execute hook ---
namespace {
struct Cached {
  std::weak_ptr<const hlo::Module> module;  // alive: the key's pointer is still this module
  std::shared_ptr<CudaExecutable> exe;
};
std::mutex g_cache_mu;
// One entry per module (and device generation) that ran on a CUDA device, looked up by the module's address (a call
// pays a map lookup, not a scan); entries of modules that died are swept when the map has doubled since the last
// sweep. Never destroyed, as the devices' registry (cuda_devices.cpp): the executables hold device arrays
// (constants), which must not be freed after the driver.
std::map<std::pair<const hlo::Module*, int>, Cached>& g_cache =
    *new std::map<std::pair<const hlo::Module*, int>, Cached>;
size_t g_swept_size = 0;

// Keyed by the device's compute capability (an int: no string built per call); compiled for its target.
std::shared_ptr<CudaExecutable> executable_for(const std::shared_ptr<const hlo::Module>& m, int cc) {
  {
    std::lock_guard<std::mutex> l(g_cache_mu);
    auto it = g_cache.find({m.get(), cc});
    if (it != g_cache.end() && it->second.module.lock() == m) return it->second.exe;
  }
  const GpuTarget t = target_for(cc);
  auto exe = std::make_shared<CudaExecutable>(m, t);  // compiled outside the lock
  if (config().log_compiles) {
    auto st = exe->stats();
    detail::log_line(fmt::format(
        "[jitx] cuda backend: '{}' for {}: {} kernels ({} generated dots), {} cuBLASLt dots, {} host fallbacks, {} "
        "while loops, {} conditionals{}",
        m->name, t.arch, st["kernels"], st["dot_kernels"], st["library_dots"], st["host_fallbacks"], st["while_loops"],
        st["conditionals"], exe->blas_missing().empty() ? "" : " (no cuBLASLt: " + exe->blas_missing() + ")"));
  }
  std::lock_guard<std::mutex> l(g_cache_mu);
  if (g_cache.size() >= 2 * g_swept_size + 16) {
    std::erase_if(g_cache, [](const auto& e) { return e.second.module.expired(); });
    g_swept_size = g_cache.size();
  }
  g_cache[{m.get(), cc}] = Cached{m, exe};  // replaces the entry of a dead module at the same address
  return exe;
}
}  // namespace

std::vector<std::shared_ptr<runtime::Buffer>> execute_on_device(const runtime::Executable& exe,
                                                                std::span<const std::shared_ptr<runtime::Buffer>> args,
                                                                runtime::Device* dev) {
  GpuDevice* gpu = gpu_of(dev);
  if (!gpu) throw RuntimeError(fmt::format("{} is not a CUDA device of this process", dev->str()));
  if (!exe.module) throw RuntimeError("cuda backend: the executable has no module to compile for a CUDA device");
  std::shared_ptr<CudaExecutable> ce = executable_for(exe.module, gpu->compute_capability());
  const hlo::Computation& entry = *exe.module->entry;
  if (args.size() != entry.parameters.size())
    throw RuntimeError(fmt::format("cuda backend: {} takes {} arguments, got {}", exe.module->name,
                                   entry.parameters.size(), args.size()));
  std::vector<hlo::Shape> out_shapes =
      entry.root->shape.is_tuple ? entry.root->shape.tuple_shapes : std::vector{entry.root->shape};
  std::vector<std::shared_ptr<runtime::Buffer>> outs;
  for (auto& s : out_shapes) outs.push_back(runtime::Buffer::pending(s.dtype, s.dims, dev));
  std::vector<std::shared_ptr<runtime::Buffer>> ins(args.begin(), args.end());
  // On the device's runtime stream, in call order: the inputs (host arrays are copied in), the launches and host
  // work (control flow and host fallbacks wait for the device), then the outputs' events. A call that only
  // enqueues device work, on inputs already there, runs on the caller's thread when the stream is idle: it waits
  // for nothing, and saves the stream thread's wake-up (JAX's dispatch does the same).
  bool inputs_ready = std::all_of(ins.begin(), ins.end(), [](const auto& b) { return b->ready->is_ready(); });
  auto work = [ce, gpu, ins = std::move(ins), outs] {
    try {
      std::vector<std::shared_ptr<GpuArray>> in_arrays;
      for (auto& b : ins) {
        b->ready->wait();
        std::shared_ptr<GpuArray> a = array_of(*b);
        in_arrays.push_back(a ? a : gpu->put(b->literal()));
      }
      std::vector<std::shared_ptr<GpuArray>> got = ce->run(*gpu, in_arrays);
      // The outputs' events fire once their work is enqueued on the device (the next call may enqueue its own at
      // once): readers wait for the device through the platform (fetch, block_until_ready), and see its errors.
      for (size_t k = 0; k < outs.size(); ++k) {
        attach(*outs[k], got.at(k), gpu);
        outs[k]->ready->set();
      }
    } catch (...) {
      for (auto& o : outs)
        if (!o->ready->is_ready()) o->ready->set_error(std::current_exception());
    }
  };
  if (!(inputs_ready && ce->launches_only() && dev->stream.try_run_inline(work))) dev->stream.enqueue(std::move(work));
  return outs;
}

const hlo::Instruction* kernel_instruction_for_testing(const std::string& entry, const std::string& ptx) {
  std::lock_guard<std::mutex> l(g_cache_mu);
  for (auto& [key, c] : g_cache)
    if (const Instruction* i = c.exe->instruction_of(entry, ptx)) return i;
  return nullptr;
}

std::vector<GpuKernel> kernels_for_testing() {
  std::lock_guard<std::mutex> l(g_cache_mu);
  std::map<std::string, GpuKernel> distinct;
  for (auto& [key, c] : g_cache) {
    for (auto& k : c.exe->code().kernels) distinct.emplace(k.name + '\n' + k.ptx, k);
    for (auto& k : c.exe->dot_kernels()) distinct.emplace(k.name + '\n' + k.ptx, k);
  }
  std::vector<GpuKernel> out;
  for (auto& [name, k] : distinct) out.push_back(k);
  return out;
}

std::map<std::string, int64_t> executables_stats_for_testing() {
  std::lock_guard<std::mutex> l(g_cache_mu);
  std::map<std::string, int64_t> sum;
  for (auto& [key, c] : g_cache)
    for (auto& [name, n] : c.exe->stats()) sum[name] += n;
  return sum;
}

}  // namespace jitx::cuda
