// The CPU backend: compiles a module into a CpuExecutable (cpu_executable.h). The plan runs on a copy whose layouts
// every step honours (layout_legalizer.h); the program builder (program_builder.h) makes one program per
// computation of the module (the entry, loop conditions and bodies, branches), and all kernels of a module are
// compiled together into one JITDylib (kernels.h).
#include <atomic>
#include <chrono>
#include <filesystem>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/layout_legalizer.h"
#include "backends/cpu/program_builder.h"
#include "core/bytes.h"
#include "core/errors.h"
#include "core/log.h"
#include "jitx/config.h"
#include "runtime/runtime.h"

namespace jitx::runtime {
namespace cpu_backend {
namespace {
using hlo::Instruction;
using hlo::Opcode;
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

/// The plan: the module's copy with legal layouts, the programs and the kernels they need (no code yet).
struct Plan {
  std::shared_ptr<CpuExecutable> exe;
  std::vector<const hlo::Instruction*> kernel_insts;
  bool fallback = false;  // the interpreter runs the whole module
  double ms = 0;
};

Plan make_plan(std::shared_ptr<const hlo::Module> module, const CompileOptions& options) {
  hlo::verify(*module);
  auto t0 = Clock::now();
  Plan plan;
  auto exe = plan.exe = std::make_shared<CpuExecutable>();
  exe->module = module;
  bool nested = has_nested_tuple(module->entry->root->shape);
  for (auto& i : module->entry->instructions)
    nested = nested || has_nested_tuple(i->shape) || (i->opcode == Opcode::kParameter && i->shape.is_tuple);
  if (nested || !module->entry->root->shape.is_tuple) {
    exe->whole_module_fallback = make_backend("interpreter")->compile(module);
    plan.fallback = true;
    if (config().log_compiles)
      detail::log_line(
          fmt::format("[jitx] cpu backend: '{}' runs entirely on the interpreter (nested tuples)", module->name));
    return plan;
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
  plan.kernel_insts = std::move(builder.kernel_insts);
  plan.ms = ms_since(t0);
  return plan;
}

/// Hands each library op its kernels (compiled or loaded with the rest).
void bind_library_ops(CpuExecutable& exe) {
  for (auto& prog : exe.programs)
    for (auto& st : prog->steps)
      if (st.library) {
        auto first = exe.kernels.fns.begin() + static_cast<std::ptrdiff_t>(st.kernel);
        st.library->bind({first, first + static_cast<std::ptrdiff_t>(st.library->kernels().size())});
      }
}

/// A digest of the kernels a plan needs, in order: a serialised executable's kernels fit the plan remade from
/// its module only when this agrees.
uint64_t kernels_digest(const std::vector<const hlo::Instruction*>& insts) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  for (auto* i : insts) {
    std::string t = hlo::print_instruction_canonical(*i);
    XXH3_64bits_update(st, t.data(), t.size());
    XXH3_64bits_update(st, "\0", 1);
  }
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

void log_plan(const CpuExecutable& exe, const std::string& name, double plan_ms, const std::string& tail) {
  const auto& n = exe.counts;
  detail::log_line(fmt::format(
      "[jitx] cpu backend: '{}': {} programs, {} native kernels, {} Eigen dots, {} library ops, {} in-place "
      "updates, {} while loops, {} conditionals, {} interpreter fallbacks, {} layout copies; {} distinct LLVM "
      "kernels ({} small) on {} threads; plan {:.2f} ms, {}",
      name, exe.programs.size(), n.kernels, n.dots, n.library, n.update_slices, n.whiles, n.conditionals,
      n.fallbacks.size(), n.layout_copies, exe.kernels.distinct, exe.kernels.small, exe.kernels.parts, plan_ms,
      tail));
  if (!n.fallbacks.empty())
    detail::log_line(
        fmt::format("[jitx] cpu backend: '{}' runs on the interpreter: {}", name, fmt::join(n.fallbacks, "; ")));
}

constexpr uint32_t kPayloadVersion = 1;

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  using Backend::compile;

  std::shared_ptr<Executable> compile(std::shared_ptr<const hlo::Module> module,
                                      const CompileOptions& options) override {
    Plan plan = make_plan(module, options);
    auto& exe = plan.exe;
    if (plan.fallback) return exe;
    const auto& cfg = config();
    cpu::JitOptions jo;
    jo.module_name = module->name;
    jo.allow_excess_precision = cfg.allow_excess_precision;
    jo.keep_objects = options.serializable;
    if (!cfg.dump_to.empty()) {
      std::filesystem::create_directories(cfg.dump_to);
      static std::atomic<int64_t> seq{0};
      jo.dump_prefix = fmt::format("{}/{}.cpu.{:04d}", cfg.dump_to, module->name, seq++);
    }
    exe->kernels = cpu::compile_kernels(plan.kernel_insts, jo);
    if (options.serializable) exe->kernels_digest = kernels_digest(plan.kernel_insts);
    bind_library_ops(*exe);
    const auto& t = exe->kernels.times;
    exe->compile_phases = {
        {"plan", plan.ms}, {"emit", t.emit_ms}, {"llvm-opt", t.optimize_ms}, {"codegen", t.codegen_ms}};
    if (cfg.log_compiles)
      log_plan(*exe, module->name, plan.ms,
               fmt::format("emit {:.2f} ms, optimise {:.2f} ms, codegen {:.2f} ms", t.emit_ms, t.optimize_ms,
                           t.codegen_ms));
    return exe;
  }

  bool can_serialize() const override { return true; }
  TargetInfo target() const override {
    const auto& h = cpu::host_target();
    return {h.compiler, h.triple, h.cpu, h.features};
  }

  // The payload: its version, whether the interpreter runs the whole module, the object files, the distinct
  // kernel count, each kernel step's distinct kernel and the digest of the kernels' instructions. The programs,
  // buffer assignments and library ops are remade from the module at load (the plan: deterministic, about a tenth
  // of a millisecond for the MLP block), and the digest checks that they need the kernels the objects hold.
  std::string serialize(const Executable& e) const override {
    const auto* exe = dynamic_cast<const CpuExecutable*>(&e);
    if (!exe) throw RuntimeError("[cpu backend] serialize: not an executable of the cpu backend");
    detail::ByteWriter w;
    w.u32(kPayloadVersion);
    w.u32(exe->whole_module_fallback ? 1 : 0);
    if (!exe->whole_module_fallback) {
      const auto& k = exe->kernels;
      if (k.which.size() != k.fns.size())
        throw RuntimeError("[cpu backend] serialize: this executable was compiled without its object code "
                           "(CompileOptions::serializable); jit's compiles keep it");
      w.u64(k.objects.size());
      for (auto& o : k.objects) w.str(o);
      w.u64(k.distinct);
      w.u64(k.which.size());
      for (auto x : k.which) w.u64(x);
      w.u64(exe->kernels_digest);
    }
    return std::move(w.out);
  }

  std::shared_ptr<Executable> deserialize(std::shared_ptr<const hlo::Module> module, const CompileOptions& options,
                                          std::string_view payload) override {
    detail::ByteReader r(payload, "the cpu backend's part of the serialised executable");
    if (uint32_t v = r.u32(); v != kPayloadVersion)
      throw RuntimeError(fmt::format("[cpu backend] serialised executable: payload version {}, this jitx reads {}", v,
                                     kPayloadVersion));
    bool fallback = r.u32() != 0;
    Plan plan = make_plan(module, options);
    if (plan.fallback != fallback)
      throw RuntimeError("[cpu backend] serialised executable: the plan of its module differs from the stored one");
    auto& exe = plan.exe;
    if (fallback) return exe;
    auto t0 = Clock::now();
    std::vector<std::string> objects(r.count(8));
    for (auto& o : objects) o = r.str();
    size_t distinct = r.u64();
    std::vector<size_t> which(r.count(8));
    for (auto& x : which) x = r.u64();
    uint64_t digest = r.u64();
    if (which.size() != plan.kernel_insts.size() || digest != kernels_digest(plan.kernel_insts))
      throw RuntimeError(fmt::format("[cpu backend] serialised executable: its {} kernels are not the {} its module's "
                                     "plan needs", which.size(), plan.kernel_insts.size()));
    exe->kernels = cpu::load_kernels(std::move(objects), std::move(which), distinct);
    exe->kernels_digest = digest;
    bind_library_ops(*exe);
    double load_ms = ms_since(t0);
    exe->compile_phases = {{"plan", plan.ms}, {"load", load_ms}};
    if (config().log_compiles)
      log_plan(*exe, module->name, plan.ms, fmt::format("object code loaded in {:.2f} ms", load_ms));
    return exe;
  }
};
}  // namespace
}  // namespace cpu_backend

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<cpu_backend::CpuBackend>(); }
namespace {
const bool kCpuBackendRegistered = register_backend("cpu", &make_cpu_backend);
}  // namespace

}  // namespace jitx::runtime
