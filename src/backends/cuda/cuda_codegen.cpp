// The CUDA backend's compiler (see cuda_codegen.h): a kernel's LLVM module for nvptx64, the C library calls of the
// element-level emitter mapped to libdevice (linked as bitcode), the O3 pipeline and NVPTX's PTX printer.
#include "backends/cuda/cuda_codegen.h"

#include <dlfcn.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
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
#include <xxhash.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_set>

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
  static const std::unordered_set<std::string> s{"exp",  "expm1", "log",   "log1p",  "cbrt", "tanh",  "sin",  "cos",
                                                 "tan",  "erf",   "erfc",  "lgamma", "asin", "acos",  "atan", "sinh",
                                                 "cosh", "asinh", "acosh", "atanh",  "pow",  "atan2", "fmod"};
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
    throw CompileError(
        "cuda backend: this kernel needs libdevice (f64 or uncommon math), and libdevice.10.bc was not "
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

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::kLoop:
      return "loop";
    case KernelKind::kRowReduction:
      return "row_reduction";
    case KernelKind::kColumnReduction:
      return "column_reduction";
  }
  return "?";
}

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

// --- the kernel cache ---
namespace {
// What makes a kernel's code: this build of jitx (its version and the shared object's identity, so that a rebuilt
// emitter never loads another build's PTX), the target and the instruction's canonical text.
std::string build_identity() {
  static const std::string id = [] {
    std::string s = fmt::format("jitx {} LLVM {}", JITX_CUDA_VERSION, LLVM_VERSION_STRING);
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&compile_module), &info) && info.dli_fname) {
      std::error_code ec;
      auto size = std::filesystem::file_size(info.dli_fname, ec);
      auto time = std::filesystem::last_write_time(info.dli_fname, ec);
      s += fmt::format(" {} {} {}", info.dli_fname, size, time.time_since_epoch().count());
    }
    return s;
  }();
  return id;
}
struct KernelCache {
  std::mutex mu;
  std::map<std::string, GpuKernel> kernels;  // key -> kernel (named after the key's hash)
  KernelCacheStats stats;
};
KernelCache& kernel_cache() {
  static auto* c = new KernelCache;  // never destroyed: compiles may run while the process exits
  return *c;
}
constexpr const char* kKernelFileMagic = "jitx-cuda-kernel 1";

std::string kernel_file(const std::string& dir, uint64_t hash) {
  return fmt::format("{}/cuda/{:016x}.ptxk", dir, hash);
}
// The file: magic, the key (its length, then the text), the launch plan, the PTX (length, then the text).
std::string encode_kernel(const std::string& key, const GpuKernel& k) {
  const LaunchPlan& p = k.plan;
  std::string s =
      fmt::format("{}\n{}\n{}\n{} {} {} {} {} {} {}", kKernelFileMagic, key.size(), key, static_cast<int>(p.kind),
                  p.block, p.grid, p.num_outputs, p.num_operands, p.num_scratch, p.scratch_bytes.size());
  for (int64_t b : p.scratch_bytes) s += fmt::format(" {}", b);
  s += fmt::format("\n{}\n{}", k.ptx.size(), k.ptx);
  return s;
}
// nullopt for a file that is not exactly such an entry for `key` (corrupt, truncated, another key).
std::optional<GpuKernel> decode_kernel(const std::string& bytes, const std::string& key) {
  std::istringstream in(bytes);
  std::string magic;
  std::getline(in, magic);
  size_t key_len = 0;
  if (magic != kKernelFileMagic || !(in >> key_len) || in.get() != '\n' || key_len != key.size()) return {};
  std::string stored(key_len, '\0');
  if (!in.read(stored.data(), static_cast<std::streamsize>(key_len)) || stored != key) return {};
  GpuKernel k;
  int kind = 0;
  size_t nscratch_bytes = 0, ptx_len = 0;
  LaunchPlan& p = k.plan;
  if (!(in >> kind >> p.block >> p.grid >> p.num_outputs >> p.num_operands >> p.num_scratch >> nscratch_bytes) ||
      kind < 0 || kind > static_cast<int>(KernelKind::kColumnReduction) || p.block <= 0 || p.grid <= 0 ||
      nscratch_bytes != p.num_scratch)
    return {};
  p.kind = static_cast<KernelKind>(kind);
  p.scratch_bytes.resize(nscratch_bytes);
  for (auto& b : p.scratch_bytes)
    if (!(in >> b)) return {};
  if (!(in >> ptx_len) || in.get() != '\n' || ptx_len > (size_t{1} << 30)) return {};
  k.ptx.resize(ptx_len);
  if (!in.read(k.ptx.data(), static_cast<std::streamsize>(ptx_len)) || in.peek() != EOF) return {};
  return k;
}
// Written under a temporary name and renamed: a reader never sees half a file; a failure leaves no file behind.
void store_kernel_file(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  static std::atomic<uint64_t> seq{0};  // one temporary per writer: threads of a process never share one
  std::string tmp = fmt::format("{}.tmp{}.{}", path, static_cast<unsigned long>(getpid()), seq++);
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

// The kernel of `inst`: from this process's cache, the disk cache (config().compilation_cache_dir), or compiled.
GpuKernel cached_kernel(const Instruction& inst, const GpuTarget& target, bool allow_excess_precision) {
  std::string key = fmt::format("{}\n{} {} excess={}\n{}", build_identity(), target.arch, target.features,
                                allow_excess_precision ? 1 : 0, hlo::print_instruction_canonical(inst));
  uint64_t hash = XXH3_64bits(key.data(), key.size());
  KernelCache& c = kernel_cache();
  auto finish = [&](GpuKernel k) {  // the kernel as this instruction's
    k.instruction = inst.name;
    k.computation = inst.parent ? inst.parent->name : "";
    return k;
  };
  {
    std::lock_guard<std::mutex> l(c.mu);
    auto it = c.kernels.find(key);
    if (it != c.kernels.end()) {
      ++c.stats.memory_hits;
      return finish(it->second);
    }
  }
  const std::string name = fmt::format("jitx_k_{:016x}", hash);
  const std::string dir = config().compilation_cache_dir;
  std::optional<GpuKernel> k;
  if (!dir.empty()) {
    std::ifstream f(kernel_file(dir, hash), std::ios::binary);
    if (f) {
      std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      k = decode_kernel(bytes, key);
      if (k) {
        k->name = name;
      }
    }
  }
  bool loaded = k.has_value();
  if (!loaded) {  // outside the lock: other threads' compiles go on meanwhile (the file is written atomically)
    k = compile_kernel(inst, target, allow_excess_precision, name);
    if (!dir.empty()) store_kernel_file(kernel_file(dir, hash), encode_kernel(key, *k));
  }
  std::lock_guard<std::mutex> l(c.mu);
  ++(loaded ? c.stats.disk_hits : c.stats.compiled);
  c.kernels.emplace(key, *k);  // a kernel another thread stored first is the same code
  return finish(*k);
}

KernelCacheStats kernel_cache_stats() {
  std::lock_guard<std::mutex> l(kernel_cache().mu);
  return kernel_cache().stats;
}
void clear_kernel_cache_for_testing() {
  std::lock_guard<std::mutex> l(kernel_cache().mu);
  kernel_cache().kernels.clear();
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
        case Opcode::kParameter:
        case Opcode::kTuple:
        case Opcode::kGetTupleElement:
        case Opcode::kConstant:
          continue;  // buffers, not work
        case Opcode::kWhile:
        case Opcode::kConditional:
        case Opcode::kCall:
          out.no_kernel.emplace_back(i->name, "control flow: run by the host over its computations' kernels");
          continue;
        case Opcode::kDot:  // the executable compiles a dot kernel (cached_kernel) where cuBLASLt cannot do it
          out.library.emplace_back(i->name, "cuBLASLt matmul, or a generated dot kernel");
          continue;
        default:
          break;
      }
      bool output_fusion = i->opcode == Opcode::kFusion && hlo::fusion_kind_of(*i) == hlo::FusionKind::kOutput;
      std::string why;  // "" when the emitter writes a kernel for it
      if (i->opcode == Opcode::kFusion && hlo::in_place_parameter_of(*i) >= 0) {
        // The CPU backend's in-place epilogues read a parameter through the output's buffer; device outputs are
        // fresh allocations. (The optimiser does not hand such fusions to backends; a parsed module might.)
        out.no_kernel.emplace_back(i->name, "a fusion with an in_place_parameter (the output read as an operand)");
        continue;
      }
      if (i->opcode == Opcode::kScatter)
        why = scatter_unsupported_reason(*i);
      else if (i->opcode == Opcode::kSort || i->opcode == Opcode::kTopK)
        why = sort_unsupported_reason(*i);
      else if (!output_fusion && !is_arg_reduce(*i))
        why = cpu::unsupported_reason(*i, {.gather = true, .reduce_window = true, .convolution = true});
      if (!why.empty()) {
        out.no_kernel.emplace_back(i->name, why);
        continue;
      }
      if (output_fusion) out.library.emplace_back(i->name, "cuBLASLt matmul, then the epilogue kernel");
      // With dumps on, each kernel is compiled (its LLVM IR written too); else through the kernel cache.
      GpuKernel k = dump.empty()
                        ? cached_kernel(*i, target, allow_excess_precision)
                        : compile_kernel(*i, target, allow_excess_precision, fmt::format("jitx_kernel_{}", seq++));
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
