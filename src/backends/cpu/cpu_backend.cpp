// The CPU backend: compiles a module into a CpuExecutable (cpu_executable.h). The plan runs on a copy whose layouts
// every step honours (layout_legalizer.h); the program builder (program_builder.h) makes one program per
// computation of the module (the entry, loop conditions and bodies, branches), and all kernels of a module are
// compiled together into one JITDylib (kernels.h).
#include <atomic>
#include <chrono>
#include <filesystem>

#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/layout_legalizer.h"
#include "backends/cpu/program_builder.h"
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

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  using Backend::compile;

  std::shared_ptr<Executable> compile(std::shared_ptr<const hlo::Module> module,
                                      const CompileOptions& options) override {
    hlo::verify(*module);
    auto t0 = Clock::now();
    auto exe = std::make_shared<CpuExecutable>();
    exe->module = module;
    const auto& cfg = config();
    bool nested = has_nested_tuple(module->entry->root->shape);
    for (auto& i : module->entry->instructions)
      nested = nested || has_nested_tuple(i->shape) || (i->opcode == Opcode::kParameter && i->shape.is_tuple);
    if (nested || !module->entry->root->shape.is_tuple) {
      exe->whole_module_fallback = make_backend("interpreter")->compile(module);
      if (cfg.log_compiles)
        detail::log_line(
            fmt::format("[jitx] cpu backend: '{}' runs entirely on the interpreter (nested tuples)", module->name));
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
    exe->compile_phases = {
        {"plan", plan_ms}, {"emit", t.emit_ms}, {"llvm-opt", t.optimize_ms}, {"codegen", t.codegen_ms}};
    if (cfg.log_compiles) {
      const auto& n = exe->counts;
      detail::log_line(fmt::format(
          "[jitx] cpu backend: '{}': {} programs, {} native kernels, {} Eigen dots, {} library ops, {} in-place "
          "updates, "
          "{} while loops, {} conditionals, {} interpreter fallbacks, {} layout copies; {} distinct LLVM kernels on {} "
          "threads; plan {:.2f} ms, emit {:.2f} ms, optimise {:.2f} ms, codegen {:.2f} ms",
          module->name, exe->programs.size(), n.kernels, n.dots, n.library, n.update_slices, n.whiles, n.conditionals,
          n.fallbacks.size(), n.layout_copies, exe->kernels.distinct, exe->kernels.parts, plan_ms, t.emit_ms,
          t.optimize_ms, t.codegen_ms));
      if (!n.fallbacks.empty())
        detail::log_line(fmt::format("[jitx] cpu backend: '{}' runs on the interpreter: {}", module->name,
                                     fmt::join(n.fallbacks, "; ")));
    }
    return exe;
  }
};
}  // namespace
}  // namespace cpu_backend

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<cpu_backend::CpuBackend>(); }
namespace {
const bool registered = register_backend("cpu", &make_cpu_backend);
}  // namespace

}  // namespace jitx::runtime
