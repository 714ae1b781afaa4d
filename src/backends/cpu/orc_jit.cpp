// LLVM ORC for the CPU backend: one process-wide LLJIT for the host CPU, one JITDylib per executable, one kernel per
// distinct instruction, the kernels shared out between threads (one module, context and target machine each) that
// run a pass pipeline cut from O2 (no loop unrolling) and code generation to object files, which JITLink links;
// IR/assembly dumps. llvm::Error never crosses out of this file: it becomes jitx::CompileError.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Config/llvm-config.h>
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
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;  // the host's settings, for target machines
  std::mutex pool_mu;
  std::vector<std::unique_ptr<llvm::TargetMachine>> pool;  // idle target machines (see TargetMachineLease)
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
    // are one RIP-relative load. The same settings go to the target machines that optimise, generate code and
    // write assembly dumps, so dumps show the code that runs (unset, a JIT target machine defaults to the large
    // code model: movabs + load for every constant).
    jtmb.setCodeModel(llvm::CodeModel::Small);
    jtmb.setRelocationModel(llvm::Reloc::PIC_);
    jj->jtmb = std::make_unique<llvm::orc::JITTargetMachineBuilder>(jtmb);
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

/// A target machine for one thread's optimisation and code generation (LLVM's TargetMachine is not thread-safe):
/// taken from the process's pool of idle ones, or made (about a millisecond) when none is idle, and given back.
class TargetMachineLease {
 public:
  TargetMachineLease() {
    Jit& j = jit();
    {
      std::lock_guard<std::mutex> l(j.pool_mu);
      if (!j.pool.empty()) {
        tm_ = std::move(j.pool.back());
        j.pool.pop_back();
      }
    }
    if (!tm_) tm_ = unwrap(j.jtmb->createTargetMachine(), "creating a target machine");
  }
  ~TargetMachineLease() {
    Jit& j = jit();
    std::lock_guard<std::mutex> l(j.pool_mu);
    j.pool.push_back(std::move(tm_));
  }
  TargetMachineLease(const TargetMachineLease&) = delete;
  TargetMachineLease& operator=(const TargetMachineLease&) = delete;
  llvm::TargetMachine& operator*() const { return *tm_; }
  llvm::TargetMachine* get() const { return tm_.get(); }

 private:
  std::unique_ptr<llvm::TargetMachine> tm_;
};

// The kernels' pass pipeline (opt_level 2, the default): the parts of LLVM's O2 that kernels need, run once per
// function. Kernels are loop nests with no calls to other kernels, no switches, exceptions, globals to optimise or
// recursion, so O2's interprocedural passes, its CGSCC walk (which re-simplifies every function it inlines into)
// and its second and third rounds of scalar clean-up (jump threading, value propagation, dead store elimination,
// instcombine eight times) find nothing to do here but took half of the optimiser's time (O2: 30 ms on the bf16
// MLP block's two kernels on a 2-core VM; this pipeline: 15 ms). What stays, in O2's order:
//  - always-inline: the kernel body into its wrapper (build() marks bodies alwaysinline: no inline cost analysis);
//  - SROA, early CSE (the elemental emitter recomputes shared subexpressions), instcombine, simplifycfg,
//    reassociate (constant operands together);
//  - LICM, loop rotation (the vectoriser wants rotated loops) and LICM again; loop idiom recognition (a fill or
//    copy loop, such as a column reduction's accumulator tile, becomes memset/memcpy: less code to generate than
//    the vectorised loop would be) and induction variable simplification (constant trip counts the vectoriser
//    then sees: no scalar remainder loop where the count is a multiple of the vector width); GVN for the loads
//    LICM and CSE left, instcombine and LICM;
//  - the loop and SLP vectorisers with the clean-up O2 runs after them.
// Checked against O2 on a third of the distinct modules of the [cpu] tests and the benchmarks' smoke run (310): the
// innermost loops are the same, instruction for instruction, in most, the MLP block's included; the rest differ
// by a few instructions either way, and LLVM's time is about half.
constexpr const char* kSimplifyCfg =
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;"
    "no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch>";
constexpr const char* kInstCombine = "instcombine<max-iterations=1;no-verify-fixpoint>";

std::string kernel_pipeline() {
  return fmt::format(
      "always-inline,function(sroa<modify-cfg>,early-cse<memssa>,{ic},{cfg},reassociate,"
      "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
      "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>),{cfg},loop(loop-idiom,indvars),gvn<>,"
      "{ic},"
      "loop-mssa(licm<allowspeculation>),{cfg},"
      "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only>,infer-alignment,{ic},{cfg},"
      "slp-vectorizer,vector-combine,{ic},loop-mssa(licm<allowspeculation>),{cfg})",
      fmt::arg("ic", kInstCombine), fmt::arg("cfg", kSimplifyCfg));
}

// The small tier's pipeline (see is_small_kernel): the wrapper's body inlined, its values out of memory, shared
// subexpressions and the emitter's constant arithmetic folded; no loop passes, no vectorisers.
constexpr const char* kSmallPipeline =
    "always-inline,function(sroa<modify-cfg>,early-cse<memssa>,instcombine<max-iterations=1;no-verify-fixpoint>,"
    "simplifycfg)";  // (kernel_pipeline's first passes)

void optimize(llvm::Module& m, llvm::TargetMachine* tm, int level, bool small) {
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
  if (small) {
    llvm::ModulePassManager mpm;
    check(pb.parsePassPipeline(mpm, kSmallPipeline), "building the small kernels' pass pipeline");
    mpm.run(m, mam);
  } else if (level == 2) {
    static const std::string pipeline = kernel_pipeline();
    llvm::ModulePassManager mpm;
    check(pb.parsePassPipeline(mpm, pipeline), "building the kernel pass pipeline");
    mpm.run(m, mam);
  } else {
    auto ol = level >= 3 ? llvm::OptimizationLevel::O3 : llvm::OptimizationLevel::O1;
    pb.buildPerModuleDefaultPipeline(ol).run(m, mam);
  }
  // Masked vector variants of helper functions (sin/cos of large arguments, math_emitter.cpp) inline into the
  // vectorised loops, and the unused ones go.
  if (has_vector_variants(m)) {
    llvm::ModulePassManager post;
    check(pb.parsePassPipeline(post, "always-inline,globaldce"), "building the post-vectorisation pipeline");
    post.run(m, mam);
  }
}

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

/// Emits, verifies and optimises the kernels insts (kernel_symbol(first), ...) as one module, in its own context.
Built build(const std::vector<const hlo::Instruction*>& insts, size_t first, const JitOptions& o,
            llvm::TargetMachine& tm, bool small = false) {
  Built r;
  auto t0 = Clock::now();
  r.ctx = std::make_unique<llvm::LLVMContext>();
  r.mod = std::make_unique<llvm::Module>(o.module_name.empty() ? "jitx" : o.module_name, *r.ctx);
  r.mod->setDataLayout(tm.createDataLayout());
  r.mod->setTargetTriple(tm.getTargetTriple().str());
  emit_kernels(*r.mod, insts, o.allow_excess_precision);
  // The pipeline inlines each kernel's body (the module's internal functions) into its wrapper with always-inline,
  // which skips the inliner's cost analysis. Helpers the math emitter marks noinline stay calls.
  for (llvm::Function& f : *r.mod)
    if (f.hasInternalLinkage() && !f.isDeclaration() && !f.hasFnAttribute(llvm::Attribute::NoInline))
      f.addFnAttr(llvm::Attribute::AlwaysInline);
  std::string width = std::to_string(preferred_vector_width());
  for (llvm::Function& f : *r.mod)
    if (!f.isDeclaration()) f.addFnAttr("prefer-vector-width", width);
  // Kernels are numbered across the parts of an executable: this part's from `first`. Renamed from the last, each
  // name is free when it is taken (the part's own names are 0 .. size-1, below first + i for i not yet renamed).
  if (first > 0)
    for (size_t i = insts.size(); i-- > 0;) r.mod->getFunction(kernel_symbol(i))->setName(kernel_symbol(first + i));
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(*r.mod, &es))
    throw CompileError(fmt::format("[cpu backend] emitted invalid LLVM IR for '{}': {}", o.module_name, err));
  if (!o.dump_prefix.empty()) write(o.dump_prefix + ".ll", to_text(*r.mod));
  r.times.emit_ms = ms_since(t0);
  auto t1 = Clock::now();
  optimize(*r.mod, &tm, o.opt_level, small);
  r.times.optimize_ms = ms_since(t1);
  if (!o.dump_prefix.empty()) {
    write(o.dump_prefix + ".opt.ll", to_text(*r.mod));
    // Assembly from a clone, so the module handed to code generation stays untouched.
    auto clone = llvm::CloneModule(*r.mod);
    llvm::SmallString<0> asm_text;
    llvm::raw_svector_ostream os(asm_text);
    llvm::legacy::PassManager pm;
    if (!tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
      pm.run(*clone);
      write(o.dump_prefix + ".s", std::string(asm_text.str()));
    }
  }
  return r;
}

/// One share of an executable's kernels compiled to an object file on one thread.
struct Part {
  std::vector<const hlo::Instruction*> insts;
  size_t first = 0;  // insts[i] is kernel_symbol(first + i)
  bool small = false;  // the small tier (see is_small_kernel)
  std::unique_ptr<llvm::MemoryBuffer> object;
  CompileTimes times;
  std::exception_ptr error;
};

void compile_part(Part& p, const JitOptions& o) {
  try {
    TargetMachineLease tm;
    Built b = build(p.insts, p.first, o, *tm, p.small);
    auto t = Clock::now();
    p.object = unwrap(llvm::orc::SimpleCompiler(*tm)(*b.mod), "generating code");
    p.times = b.times;
    p.times.codegen_ms = ms_since(t);
  } catch (...) {
    p.error = std::current_exception();
  }
}

/// A rough size of inst's kernel (the instructions it fuses), for sharing kernels out evenly between threads.
int64_t kernel_weight(const hlo::Instruction& inst) {
  int64_t w = 1;
  for (const hlo::Computation* c : inst.called)
    for (auto& i : c->instructions) w += kernel_weight(*i);
  return w;
}

// Small kernels: every array a kernel reads, writes or computes inside has at most kSmallKernelElements elements,
// so it runs in about a microsecond however it is compiled, while LLVM's full pipeline took 13-20 ms for it (a 2x3
// multiply-add: 15 ms, mostly the fixed costs of the loop passes and the vectorisers, and of generating code for
// a vector loop with its scalar remainder). They compile in a tier of their own, the light pipeline above (no loop
// passes, no vectorisers), with the same code generation: 5.5 ms for that kernel. Code generation at -O0 would
// make it 1.4 ms, but its fast instruction selection does not fuse a multiply into the add it feeds, so small and
// large arrays would round differently (cpu_excess_precision_test.cpp). What the tier costs at run time, on a
// 2-core AMD EPYC (Zen 1) with tanh(a) * b + exp(a) / 2 and a cached jit call: 64 elements 1.70 -> 2.32 us per
// call (scalar math, not vectorised); at 256 elements it would be 2.18 -> 4.05 us, which is why the bound is 64.
// Most of the test suite's compiles are such kernels (the public function walk: 87 -> 43 s). No loop in a kernel
// runs longer than its arrays are big (reductions, windows, convolutions, sorts and dots loop over their
// operands), so the bound holds for the work too. opt_level other than 2 (the default) turns the tier off.
constexpr int64_t kSmallKernelElements = 64;

int64_t largest_array(const hlo::Shape& s) {
  if (!s.is_tuple) return s.num_elements();
  int64_t m = 0;
  for (const hlo::Shape& t : s.tuple_shapes) m = std::max(m, largest_array(t));
  return m;
}

bool is_small_kernel(const hlo::Instruction& inst) {
  if (largest_array(inst.shape) > kSmallKernelElements) return false;
  for (const hlo::Instruction* op : inst.operands)
    if (largest_array(op->shape) > kSmallKernelElements) return false;
  for (const hlo::Computation* c : inst.called)
    for (auto& i : c->instructions)
      if (!is_small_kernel(*i)) return false;
  return true;
}

/// The distinct kernels shared out between up to one thread per core (at most kMaxParts): LLVM's time is almost
/// all per function (the pass pipeline and code generation), so kernels compile independently, each part in its
/// own context with its own target machine. Heaviest kernels first, each to the lightest part so far. Kernels are
/// renumbered so that each part's are consecutive (`number` maps the old numbers to the new). The small kernels
/// (is_small_kernel) make one part of their own, compiled in the small tier. One part when dumping, so the dump
/// is one module (in the small tier only when every kernel is small).
constexpr size_t kMaxParts = 8;

std::vector<Part> share_out(const std::vector<const hlo::Instruction*>& distinct, const JitOptions& o,
                            std::vector<size_t>& number) {
  std::vector<bool> small(distinct.size(), false);
  size_t n_small = 0;
  if (o.opt_level == 2)
    for (size_t k = 0; k < distinct.size(); ++k) n_small += (small[k] = is_small_kernel(*distinct[k]));
  if (!o.dump_prefix.empty() && n_small < distinct.size()) {
    small.assign(distinct.size(), false);
    n_small = 0;
  }
  size_t hw = std::max(1u, std::thread::hardware_concurrency());
  size_t n = std::min({distinct.size() - n_small, kMaxParts, hw});
  if (!o.dump_prefix.empty()) n = std::min<size_t>(n, 1);
  std::vector<size_t> order;
  std::vector<int64_t> weight(distinct.size());
  for (size_t k = 0; k < distinct.size(); ++k) {
    if (small[k]) continue;
    order.push_back(k);
    weight[k] = kernel_weight(*distinct[k]);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  std::vector<int64_t> load(n, 0);
  std::vector<std::vector<size_t>> members(n);
  for (size_t k : order) {
    size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[p] += weight[k];
    members[p].push_back(k);
  }
  if (n_small > 0) {  // the small tier's part
    members.emplace_back();
    for (size_t k = 0; k < distinct.size(); ++k)
      if (small[k]) members.back().push_back(k);
  }
  std::vector<Part> parts(members.size());
  number.assign(distinct.size(), 0);
  size_t next = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    std::sort(members[p].begin(), members[p].end());
    parts[p].small = n_small > 0 && p + 1 == parts.size();
    parts[p].first = next;
    for (size_t k : members[p]) {
      parts[p].insts.push_back(distinct[k]);
      number[k] = next++;
    }
  }
  return parts;
}

struct Dylib {
  llvm::orc::JITDylib* jd = nullptr;
  ~Dylib() {
    if (!jd) return;
    if (auto e = jit().lljit->getExecutionSession().removeJITDylib(*jd)) llvm::consumeError(std::move(e));
  }
};

/// Links object files into a new JITDylib and looks up kernel_symbol(0 .. n-1) in it; the result owns the code.
std::shared_ptr<Dylib> link(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects, size_t n,
                            std::vector<KernelFn>& fns) {
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
  for (auto& obj : objects) check(j.lljit->addObjectFile(*dylib->jd, std::move(obj)), "adding code to the JIT");
  for (size_t k = 0; k < n; ++k) {
    auto addr = unwrap(j.lljit->lookup(*dylib->jd, kernel_symbol(k)), "looking up a kernel");
    fns.push_back(addr.toPtr<KernelFn>());
  }
  return dylib;
}
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
  std::vector<size_t> number;
  std::vector<Part> parts = share_out(distinct, o, number);
  for (auto& w : which) w = number[w];
  double key_ms = ms_since(t0);
  {
    // Parts but the first on threads of their own (not the runtime's pool: a compile may run on one of its
    // workers, which would then wait for itself); the first on this thread.
    std::vector<std::thread> threads;
    for (size_t p = 1; p < parts.size(); ++p) {
      try {
        threads.emplace_back(compile_part, std::ref(parts[p]), std::cref(o));
      } catch (const std::system_error&) {  // no thread to be had: this one compiles the part
        compile_part(parts[p], o);
      }
    }
    compile_part(parts[0], o);
    for (auto& t : threads) t.join();
  }
  for (auto& p : parts)
    if (p.error) std::rethrow_exception(p.error);
  // The phases of the part that took longest (the parts ran side by side), so they add up to the time spent.
  const Part* slowest = &parts[0];
  auto total = [](const CompileTimes& t) { return t.emit_ms + t.optimize_ms + t.codegen_ms; };
  for (auto& p : parts)
    if (total(p.times) > total(slowest->times)) slowest = &p;
  out.times = slowest->times;
  out.times.emit_ms += key_ms;
  out.distinct = distinct.size();
  out.parts = parts.size();
  out.small = parts.back().small ? parts.back().insts.size() : 0;
  auto t1 = Clock::now();
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  for (auto& p : parts) {
    if (o.keep_objects) out.objects.emplace_back(p.object->getBufferStart(), p.object->getBufferSize());
    objects.push_back(std::move(p.object));
  }
  std::vector<KernelFn> fns;
  out.owner = link(std::move(objects), distinct.size(), fns);
  for (size_t k : which) out.fns.push_back(fns[k]);
  if (o.keep_objects) out.which = which;
  out.times.codegen_ms += ms_since(t1);  // linking
  return out;
}

CompiledKernels load_kernels(std::vector<std::string> objects, std::vector<size_t> which, size_t distinct) {
  CompiledKernels out;
  if (which.empty()) return out;
  for (size_t k : which)
    if (k >= distinct) throw CompileError(fmt::format("[cpu backend] kernel {} of {} does not exist", k, distinct));
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;
  for (auto& obj : objects) buffers.push_back(llvm::MemoryBuffer::getMemBufferCopy(obj, "jitx-cached-kernels"));
  std::vector<KernelFn> fns;
  out.owner = link(std::move(buffers), distinct, fns);
  for (size_t k : which) out.fns.push_back(fns[k]);
  out.distinct = distinct;
  out.parts = objects.size();
  out.objects = std::move(objects);
  out.which = std::move(which);
  return out;
}

// LLVM's x86 tuning keeps the loop vectoriser at 256-bit vectors on AVX-512 CPUs (TuningPrefer256Bit, from
// Skylake-X, where 512-bit code lowered the clock). On this project's machine (a Sapphire Rapids VM) 512-bit
// vectors were faster wherever the vectoriser decides the width, measured with jitx_bench in alternating runs:
// softmax 256^2 0.037-0.040 -> 0.028 ms, 1024^2 0.33-0.39 -> 0.26 ms, 4096^2 12.0-12.3 -> 10.5-12.0 ms; GELU on
// 1M f32 0.179 -> 0.145 ms, on 16M 7.9 -> 5.5 ms; the 1024 training step 48.8-49.2 -> 44.7-46.7 ms; matmuls and MLP
// blocks the same within noise (their GEMM micro-kernels choose their own width). JITX_CPU_VECTOR_WIDTH=256 (or
// 128) sets it; it is part of the target's features, so the persistent cache keys on it.
int preferred_vector_width() {
  static const int w = [] {
    if (const char* e = std::getenv("JITX_CPU_VECTOR_WIDTH"); e && *e) {
      int v = std::atoi(e);
      if (v == 128 || v == 256 || v == 512) return v;
      throw RuntimeError(
          fmt::format("[cpu backend] JITX_CPU_VECTOR_WIDTH={} is not a vector width in bits (128, 256 or 512)", e));
    }
    return jit().jtmb->getFeatures().getString().find("+avx512f") != std::string::npos ? 512 : 256;
  }();
  return w;
}

const HostTarget& host_target() {
  static const HostTarget t = [] {
    const auto& b = *jit().jtmb;
    return HostTarget{"LLVM " LLVM_VERSION_STRING, b.getTargetTriple().str(), b.getCPU(),
                      b.getFeatures().getString() + fmt::format(",prefer-vector-width={}", preferred_vector_width())};
  }();
  return t;
}

std::string optimized_ir(const std::vector<const hlo::Instruction*>& insts, int opt_level,
                         bool allow_excess_precision) {
  JitOptions o;
  o.module_name = "ir";
  o.opt_level = opt_level;
  o.allow_excess_precision = allow_excess_precision;
  TargetMachineLease tm;
  Built b = build(insts, 0, o, *tm);
  return to_text(*b.mod);
}

}  // namespace jitx::cpu
