// LLVM ORC for the CPU backend: one process-wide LLJIT for the host CPU, one JITDylib per executable, a pass pipeline
// cut from O2 for kernels (no loop unrolling) with the new pass manager, code generation without loop strength
// reduction, one kernel per distinct instruction, IR/assembly dumps. llvm::Error never crosses out of this file: it becomes jitx::CompileError.
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/OptBisect.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "backends/cpu/kernels.h"
#include "backends/cpu/llvm_emit.h"
#include "core/errors.h"

namespace jitx::cpu {
namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string message(llvm::Error e) {
  std::string s;
  llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase& info) { s += info.message(); });
  return s;
}
template <class T>
T unwrap(llvm::Expected<T> v, const char* what) {
  if (!v) throw CompileError(fmt::format("[cpu backend] {}: {}", what, message(v.takeError())));
  return std::move(*v);
}
void check(llvm::Error e, const char* what) {
  if (e) throw CompileError(fmt::format("[cpu backend] {}: {}", what, message(std::move(e))));
}

struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::unique_ptr<llvm::TargetMachine> tm;  // for the optimiser and assembly dumps
  std::mutex tm_mu;                          // TargetMachine is not thread-safe
  std::atomic<int64_t> seq{0};
};

Jit& jit() {
  static Jit* j = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    auto* jj = new Jit();  // never destroyed: executables may outlive static destruction order
    auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host CPU");
    jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);  // -O3 codegen costs compile time, gains little here
    // JITLink (ObjectLinkingLayer) links the code, for the small code model, position-independent: constants
    // are one RIP-relative load. The same settings go to the target machine used for optimisation and assembly
    // dumps, so dumps show the code that runs (unset, a JIT target machine defaults to the large code model:
    // movabs + load for every constant).
    jtmb.setCodeModel(llvm::CodeModel::Small);
    jtmb.setRelocationModel(llvm::Reloc::PIC_);
    jj->tm = unwrap(jtmb.createTargetMachine(), "creating the target machine");
    jj->lljit = unwrap(llvm::orc::LLJITBuilder()
                           .setJITTargetMachineBuilder(jtmb)
                           .setObjectLinkingLayerCreator(
                               [](llvm::orc::ExecutionSession& es,
                                  const llvm::Triple&) -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                                 std::unique_ptr<llvm::orc::ObjectLayer> l =
                                     std::make_unique<llvm::orc::ObjectLinkingLayer>(es);
                                 return l;
                               })
                           .create(),
                       "creating LLJIT");
    return jj;
  }();
  return *j;
}

// The kernels' pass pipeline (opt_level 2, the default): the parts of LLVM's O2 that kernels need, run once per
// function. Kernels are loop nests with no calls to other kernels, no switches, exceptions, globals to optimise or
// recursion, so O2's interprocedural passes, its CGSCC walk (which re-simplifies every function it inlines into)
// and its second and third rounds of scalar clean-up (jump threading, value propagation, dead store and loop idiom
// passes, instcombine eight times) find nothing to do here but still take over half of LLVM's time (40 of 70 ms
// on a bf16 MLP block on a 2-core VM). What stays, in O2's order:
//  - always-inline: the kernel body into its wrapper (the body is marked alwaysinline: no inline cost analysis);
//  - SROA, early CSE (the elemental emitter recomputes shared subexpressions), instcombine, simplifycfg,
//    reassociate (constant operands together);
//  - LICM, loop rotation (the vectoriser wants rotated loops) and LICM again, GVN for the loads LICM and CSE
//    left, instcombine and LICM;
//  - the loop and SLP vectorisers with the clean-up O2 runs after them.
// Not IndVarSimplify or loop deletion: the emitter's loops already count with one i64 from lo to hi and are never
// dead, and the two took a quarter of the pipeline's time on streamed kernels (SCEV exit values). The optimised loops were compared with O2's
// on the benchmark workloads and the tests' kernels: the same vector bodies, instruction for instruction, in all
// but a few (see the commit that introduced this pipeline).
constexpr const char* kSimplifyCfg =
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;"
    "no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch>";
constexpr const char* kInstCombine = "instcombine<max-iterations=1;no-verify-fixpoint>";

std::string kernel_pipeline() {
  return fmt::format(
      "always-inline,function(sroa<modify-cfg>,early-cse<memssa>,{ic},{cfg},reassociate,"
      "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
      "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>),{cfg},gvn<>,{ic},"
      "loop-mssa(licm<allowspeculation>),{cfg},"
      "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only>,infer-alignment,{ic},{cfg},"
      "slp-vectorizer,vector-combine,{ic},loop-mssa(licm<allowspeculation>),{cfg})",
      fmt::arg("ic", kInstCombine), fmt::arg("cfg", kSimplifyCfg));
}

void optimize(llvm::Module& m, llvm::TargetMachine* tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  // No loop unrolling beyond the vectoriser's interleaving: kernels are loops with constant trip counts (row
  // lengths, reduction blocks), which the unroller expands fully or by 8, multiplying the IR that instruction
  // selection and register allocation then chew through (2-3x LLVM's time on a 2048-wide MLP block) for run
  // times within noise of the rolled loops; it also made compile time grow with the shapes.
  pto.LoopUnrolling = false;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  if (level == 2) {
    static const std::string pipeline = kernel_pipeline();
    llvm::ModulePassManager mpm;
    check(pb.parsePassPipeline(mpm, pipeline), "building the kernel pass pipeline");
    mpm.run(m, mam);
    return;
  }
  auto ol = level >= 3 ? llvm::OptimizationLevel::O3 : llvm::OptimizationLevel::O1;
  pb.buildPerModuleDefaultPipeline(ol).run(m, mam);
}

/// Skips loop strength reduction in code generation. LSR rewrites a loop's induction variables and addresses for
/// the target's addressing modes; the emitter's loops index every buffer with one i64 counter, which x86 addressing
/// takes as it is, and the vector loops came out the same or a few instructions shorter without it. It cost a
/// quarter of code generation's time (8 of 32 ms on a bf16 MLP block). A pass gate on the module's context is the
/// way to leave out one pass of LLVM's fixed code generation pipeline without touching process-wide options.
class SkipStrengthReduction : public llvm::OptPassGate {
 public:
  bool shouldRunPass(llvm::StringRef pass, llvm::StringRef) override {
    return pass != "Loop Strength Reduction" && pass != "Canonicalize Freeze Instructions in Loops";
  }
  bool isEnabled() const override { return true; }
};

std::string to_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw RuntimeError(fmt::format("[dump] cannot write {}", path));
  f << text;
}

struct Built {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> mod;
  CompileTimes times;
};

Built build(const std::vector<const hlo::Instruction*>& insts, const JitOptions& o) {
  Jit& j = jit();
  Built r;
  auto t0 = Clock::now();
  r.ctx = std::make_unique<llvm::LLVMContext>();
  static SkipStrengthReduction gate;  // stateless; outlives every context
  r.ctx->setOptPassGate(gate);
  r.mod = std::make_unique<llvm::Module>(o.module_name.empty() ? "jitx" : o.module_name, *r.ctx);
  {
    std::lock_guard<std::mutex> l(j.tm_mu);
    r.mod->setDataLayout(j.tm->createDataLayout());
    r.mod->setTargetTriple(j.tm->getTargetTriple().str());
  }
  emit_kernels(*r.mod, insts);
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(*r.mod, &es))
    throw CompileError(fmt::format("[cpu backend] emitted invalid LLVM IR for '{}': {}", o.module_name, err));
  if (!o.dump_prefix.empty()) write(o.dump_prefix + ".ll", to_text(*r.mod));
  r.times.emit_ms = ms_since(t0);
  auto t1 = Clock::now();
  {
    // The pass pipeline reads the target machine; concurrent compiles take turns (LLVM's TargetMachine is shared).
    std::lock_guard<std::mutex> l(j.tm_mu);
    optimize(*r.mod, j.tm.get(), o.opt_level);
  }
  r.times.optimize_ms = ms_since(t1);
  if (!o.dump_prefix.empty()) {
    write(o.dump_prefix + ".opt.ll", to_text(*r.mod));
    // Assembly from a clone, so the module handed to the JIT stays untouched.
    auto clone = llvm::CloneModule(*r.mod);
    llvm::SmallString<0> asm_text;
    llvm::raw_svector_ostream os(asm_text);
    llvm::legacy::PassManager pm;
    std::lock_guard<std::mutex> l(j.tm_mu);
    if (!j.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
      pm.run(*clone);
      write(o.dump_prefix + ".s", std::string(asm_text.str()));
    }
  }
  return r;
}

struct Dylib {
  llvm::orc::JITDylib* jd = nullptr;
  ~Dylib() {
    if (!jd) return;
    if (auto e = jit().lljit->getExecutionSession().removeJITDylib(*jd)) llvm::consumeError(std::move(e));
  }
};
}  // namespace

CompiledKernels compile_kernels(const std::vector<const hlo::Instruction*>& insts, const JitOptions& o) {
  CompiledKernels out;
  if (insts.empty()) return out;
  // Instructions that compute the same function of their buffers share one kernel: an unrolled stack of identical
  // layers compiles each kind of kernel once, so LLVM's time does not grow with depth.
  auto t0 = Clock::now();
  std::vector<const hlo::Instruction*> distinct;
  std::vector<size_t> which(insts.size());
  {
    std::unordered_map<std::string, size_t> seen;
    for (size_t k = 0; k < insts.size(); ++k) {
      auto [it, fresh] = seen.emplace(hlo::print_instruction_canonical(*insts[k]), distinct.size());
      if (fresh) distinct.push_back(insts[k]);
      which[k] = it->second;
    }
  }
  double key_ms = ms_since(t0);
  Built b = build(distinct, o);
  b.times.emit_ms += key_ms;
  out.times = b.times;
  out.distinct = distinct.size();
  auto t1 = Clock::now();
  Jit& j = jit();
  auto& es = j.lljit->getExecutionSession();
  auto dylib = std::make_shared<Dylib>();
  std::string name = fmt::format("jitx_exe_{}", j.seq++);
  auto jd = es.createJITDylib(name);
  if (!jd) throw CompileError(fmt::format("[cpu backend] creating a JITDylib: {}", message(jd.takeError())));
  dylib->jd = &*jd;
  // C library functions (exp, lgamma, ...) and compiler runtime helpers come from the process.
  auto gen = unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                        j.lljit->getDataLayout().getGlobalPrefix()),
                    "opening the process for symbol lookup");
  dylib->jd->addGenerator(std::move(gen));
  check(j.lljit->addIRModule(*dylib->jd, llvm::orc::ThreadSafeModule(std::move(b.mod), std::move(b.ctx))),
        "adding the module to the JIT");
  std::vector<KernelFn> fns;
  for (size_t k = 0; k < distinct.size(); ++k) {
    auto addr = unwrap(j.lljit->lookup(*dylib->jd, kernel_symbol(k)), "looking up a kernel");
    fns.push_back(addr.toPtr<KernelFn>());
  }
  for (size_t k : which) out.fns.push_back(fns[k]);
  out.times.codegen_ms = ms_since(t1);
  out.owner = dylib;
  return out;
}

std::string optimized_ir(const std::vector<const hlo::Instruction*>& insts, int opt_level) {
  JitOptions o;
  o.module_name = "ir";
  o.opt_level = opt_level;
  Built b = build(insts, o);
  return to_text(*b.mod);
}

}  // namespace jitx::cpu
