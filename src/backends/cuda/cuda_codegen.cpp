// The CUDA backend's compiler (see cuda_codegen.h): a kernel's LLVM module for nvptx64, the C library calls of the
// element-level emitter mapped to libdevice (linked as bitcode), the O3 pipeline and NVPTX's PTX printer.
#include "backends/cuda/cuda_codegen.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <unordered_set>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/cpu/kernels.h"
#include "backends/cuda/gpu_emitter.h"
#include "hlo/ir/attributes.h"
#include "jitx/config.h"
#include "jitx/error.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace jitx::cuda {
namespace {
using hlo::Instruction;
using hlo::Opcode;

const char* kTriple = "nvptx64-nvidia-cuda";

// The C library functions the element-level emitter calls (all on double): libdevice has each as __nv_<name>.
const std::unordered_set<std::string>& libm_names() {
  static const std::unordered_set<std::string> s{
      "exp",  "expm1", "log",  "log1p", "cbrt",  "tanh",  "sin",   "cos",   "tan", "erf", "erfc", "lgamma",
      "asin", "acos",  "atan", "sinh",  "cosh",  "asinh", "acosh", "atanh", "pow", "atan2", "fmod"};
  return s;
}

std::string print(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

llvm::TargetMachine& target_machine(const GpuTarget& t) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<llvm::TargetMachine>> tms;
  std::lock_guard<std::mutex> l(mu);
  static bool init = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    return true;
  }();
  (void)init;
  auto& tm = tms[t.arch + t.features];
  if (!tm) {
    std::string err;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, err);
    if (!target) throw CompileError("cuda backend: LLVM has no NVPTX target: " + err);
    llvm::TargetOptions opts;
    tm.reset(target->createTargetMachine(kTriple, t.arch, t.features, opts, std::nullopt, std::nullopt,
                                         llvm::CodeGenOptLevel::Aggressive));
    if (!tm) throw CompileError("cuda backend: no NVPTX target machine for " + t.arch);
  }
  return *tm;
}

// Calls to the C library become calls to libdevice's __nv_ functions, and libdevice is linked in (only what is
// used; the rest is internal and removed by the optimiser). Returns whether libdevice was needed.
bool link_libdevice(llvm::Module& m) {
  std::vector<llvm::Function*> calls;
  for (llvm::Function& f : m)
    if (f.isDeclaration() && libm_names().count(f.getName().str())) calls.push_back(&f);
  if (calls.empty()) return false;
  for (llvm::Function* f : calls) {
    llvm::FunctionCallee nv = m.getOrInsertFunction("__nv_" + f->getName().str(), f->getFunctionType());
    f->replaceAllUsesWith(nv.getCallee());
    f->eraseFromParent();
  }
  std::string path = libdevice_path();
  if (path.empty())
    throw CompileError("cuda backend: this kernel needs libdevice (f64 or uncommon math), and libdevice.10.bc was not "
                       "found (set JITX_CUDA_LIBDEVICE or CUDA_HOME)");
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) throw CompileError("cuda backend: cannot read " + path + ": " + buf.getError().message());
  auto lib = llvm::parseBitcodeFile((*buf)->getMemBufferRef(), m.getContext());
  if (!lib) {
    std::string msg = llvm::toString(lib.takeError());
    throw CompileError("cuda backend: cannot parse " + path + ": " + msg);
  }
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    throw CompileError("cuda backend: linking libdevice failed");
  return true;
}

// Everything but the kernels is internal, so that the optimiser inlines and drops it.
void internalize(llvm::Module& m) {
  for (llvm::Function& f : m)
    if (!f.isDeclaration() && f.getCallingConv() != llvm::CallingConv::PTX_Kernel)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
}

std::string to_ptx(llvm::Module& m, llvm::TargetMachine& tm) {
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es)) throw CompileError("cuda backend: the emitted kernel does not verify: " + err);
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(&tm);  // registers NVPTX's callbacks (NVVMReflect for libdevice, address-space inference)
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw CompileError("cuda backend: the NVPTX target cannot emit PTX");
  pm.run(m);
  return std::string(out.str());
}

std::string safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return s;
}
}  // namespace

const char* kernel_kind_name(KernelKind k) { return k == KernelKind::kLoop ? "loop" : "row_reduction"; }

std::string ptxas_path() {
#ifdef JITX_PTXAS
  std::string p = JITX_PTXAS;
  if (!p.empty() && p.find("NOTFOUND") == std::string::npos && std::filesystem::exists(p)) return p;
#endif
  return "";
}

std::string libdevice_path() {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("JITX_CUDA_LIBDEVICE")) candidates.push_back(e);
  if (const char* h = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(h) + "/nvvm/libdevice/libdevice.10.bc");
#ifdef JITX_CUDA_LIBDEVICE
  candidates.push_back(JITX_CUDA_LIBDEVICE);
#endif
  candidates.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  for (auto& c : candidates)
    if (std::filesystem::exists(c)) return c;
  return "";
}

GpuKernel compile_kernel(const Instruction& inst, const GpuTarget& target, bool allow_excess_precision,
                         const std::string& name) {
  llvm::TargetMachine& tm = target_machine(target);
  llvm::LLVMContext ctx;
  llvm::Module m("jitx_cuda_" + safe(inst.name), ctx);
  m.setTargetTriple(kTriple);
  m.setDataLayout(tm.createDataLayout());
  // libdevice's __nvvm_reflect("__CUDA_FTZ"): keep denormals, as the interpreter does.
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  GpuKernel k;
  k.name = name;
  k.instruction = inst.name;
  k.computation = inst.parent ? inst.parent->name : "";
  k.plan = emit_gpu_kernel(m, name, inst, allow_excess_precision);
  link_libdevice(m);
  internalize(m);
  k.llvm_ir = print(m);
  k.ptx = to_ptx(m, tm);
  return k;
}

GpuModule compile_module(const hlo::Module& mod, const GpuTarget& target, bool allow_excess_precision) {
  GpuModule out;
  const std::string& dump = config().dump_to;
  static std::atomic<int64_t> compiles{0};  // modules often share a name (jit_fn): each compile dumps apart
  int64_t compile_id = compiles++;
  size_t seq = 0;
  for (auto& c : mod.computations) {
    bool fused = false;  // fusion computations are compiled with their fusion instruction
    for (auto& other : mod.computations)
      for (auto& i : other->instructions)
        if (i->opcode == Opcode::kFusion && i->called.at(0) == c.get()) fused = true;
    if (fused) continue;
    for (auto& i : c->instructions) {
      switch (i->opcode) {
        case Opcode::kParameter: case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kConstant:
          continue;  // buffers, not work
        case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
          out.no_kernel.emplace_back(i->name, "control flow: run by the host over its computations' kernels");
          continue;
        case Opcode::kDot:
          out.library.emplace_back(i->name, "cuBLASLt matmul");
          continue;
        default: break;
      }
      bool output_fusion = i->opcode == Opcode::kFusion && hlo::fusion_kind_of(*i) == hlo::FusionKind::kOutput;
      std::string why = output_fusion ? "" : cpu::unsupported_reason(*i);
      if (!why.empty()) {
        out.no_kernel.emplace_back(i->name, why);
        continue;
      }
      if (output_fusion) out.library.emplace_back(i->name, "cuBLASLt matmul, then the epilogue kernel");
      GpuKernel k = compile_kernel(*i, target, allow_excess_precision, fmt::format("jitx_kernel_{}", seq++));
      if (!dump.empty()) {
        std::filesystem::create_directories(dump);
        std::string base =
            fmt::format("{}/{}.cuda.{:04d}.{}.{}", dump, safe(mod.name), compile_id, k.name, safe(i->name));
        std::ofstream(base + ".ll") << k.llvm_ir;
        std::ofstream(base + ".ptx") << k.ptx;
      }
      out.kernels.push_back(std::move(k));
    }
  }
  return out;
}

}  // namespace jitx::cuda
