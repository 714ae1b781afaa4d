// The host emulator of CUDA kernels (see gpu_emulator.h). A kernel's module is emitted as for the device, then made
// a host module: NVPTX's special registers, bar.sync and shfl.sync become calls into this file, the entry an
// ordinary function behind a wrapper that unpacks the parameter array. Blocks run one after another. A kernel
// without barriers or shuffles runs its threads as plain calls in thread order; one with them runs each thread as a
// fiber (ucontext) that yields at every barrier and shuffle: the scheduler runs every runnable fiber until it
// blocks or exits, then releases a barrier when every live thread of the block waits there, or a warp's shuffle
// when every live lane of the warp waits at the same one, and reports a deadlock when neither happens. Every launch
// runs twice, threads in ascending then descending order, and the outputs must agree (a race otherwise).
#include "backends/cuda/gpu_emulator.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <ucontext.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/cuda/gpu_emitter.h"
#include "jitx/error.h"

namespace jitx::cuda {
namespace {
enum class Sreg : uint32_t { kTid, kNtid, kCtaid, kNctaid, kZero, kOne, kLane, kWarpSize };
enum class State { kRun, kBarrier, kShuffle, kDone };
constexpr int64_t kWarp = 32;
constexpr size_t kStackBytes = 128 * 1024;

struct Fiber {
  ucontext_t ctx{};
  State state = State::kRun;
  uint32_t value = 0, lane_mask = 0, member_mask = 0, result = 0;
  uint32_t site = 0;  // the barrier or shuffle (its call site in the kernel) the thread waits at
};

// One launch's state, reached by the kernel's calls (one launch at a time: the emulator's lock).
struct Launch {
  void (*entry)(void**) = nullptr;
  void** args = nullptr;
  int64_t grid = 1, block = 1, ctaid = 0, tid = 0;
  std::vector<Fiber> fibers;
  ucontext_t scheduler{};
  bool fibers_on = false;
  bool reversed = false;  // threads run in descending order (the second run: see emulate_kernel)
};
Launch* g_launch = nullptr;

extern "C" uint32_t jitx_emu_sreg(uint32_t which) {
  const Launch& l = *g_launch;
  switch (static_cast<Sreg>(which)) {
    case Sreg::kTid:
      return static_cast<uint32_t>(l.tid);
    case Sreg::kNtid:
      return static_cast<uint32_t>(l.block);
    case Sreg::kCtaid:
      return static_cast<uint32_t>(l.ctaid);
    case Sreg::kNctaid:
      return static_cast<uint32_t>(l.grid);
    case Sreg::kZero:
      return 0;
    case Sreg::kOne:
      return 1;
    case Sreg::kLane:
      return static_cast<uint32_t>(l.tid % kWarp);
    case Sreg::kWarpSize:
      return kWarp;
  }
  return 0;
}
// Only reached in fiber mode (a kernel that calls these runs its threads as fibers).
void yield(State s) {
  Launch& l = *g_launch;
  Fiber& f = l.fibers[static_cast<size_t>(l.tid)];
  f.state = s;
  swapcontext(&f.ctx, &l.scheduler);
}
extern "C" void jitx_emu_barrier(uint32_t site) {
  g_launch->fibers[static_cast<size_t>(g_launch->tid)].site = site;
  yield(State::kBarrier);
}
extern "C" uint32_t jitx_emu_shfl_bfly(uint32_t site, uint32_t member_mask, uint32_t value, uint32_t lane_mask,
                                       uint32_t) {
  Launch& l = *g_launch;
  Fiber& f = l.fibers[static_cast<size_t>(l.tid)];
  f.site = site;
  f.value = value;
  f.lane_mask = lane_mask;
  f.member_mask = member_mask;
  yield(State::kShuffle);
  return l.fibers[static_cast<size_t>(l.tid)].result;
}
void fiber_main() {
  Launch& l = *g_launch;
  l.entry(l.args);
  l.fibers[static_cast<size_t>(l.tid)].state = State::kDone;  // then uc_link: back to the scheduler
}

struct Compiled {
  void (*entry)(void**) = nullptr;
  bool fibers = false;                                 // the kernel synchronises its threads
  std::vector<std::pair<std::string, size_t>> shared;  // its shared-memory arrays: symbol, bytes
  std::vector<std::pair<void*, size_t>> shared_at;     // and where they are
};

struct Emulator {
  std::mutex mu;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, Compiled> kernels;  // by instruction text and precision flag
  EmulatorStats stats;
  int64_t seq = 0;
  std::vector<char> stacks;  // the fibers' stacks, reused by every launch (one at a time)
};
Emulator& emulator() {
  static auto* e = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto* em = new Emulator;  // never destroyed, as the CPU backend's JIT
    auto j = llvm::orc::LLJITBuilder().create();
    if (!j) throw Error("cuda emulator: cannot create a host JIT: " + llvm::toString(j.takeError()));
    em->jit = std::move(*j);
    llvm::orc::JITDylib& jd = em->jit->getMainJITDylib();
    auto gen =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(em->jit->getDataLayout().getGlobalPrefix());
    if (!gen) throw Error("cuda emulator: " + llvm::toString(gen.takeError()));
    jd.addGenerator(std::move(*gen));
    auto& es = em->jit->getExecutionSession();
    llvm::orc::SymbolMap syms;
    auto def = [&](const char* name, auto* fn) {
      syms[es.intern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported};
    };
    def("jitx_emu_sreg", &jitx_emu_sreg);
    def("jitx_emu_barrier", &jitx_emu_barrier);
    def("jitx_emu_shfl_bfly", &jitx_emu_shfl_bfly);
    if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(syms))))
      throw Error("cuda emulator: " + llvm::toString(std::move(err)));
    return em;
  }();
  return *e;
}

std::optional<Sreg> sreg_of(llvm::Intrinsic::ID id) {
  switch (id) {
    case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x:
      return Sreg::kTid;
    case llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x:
      return Sreg::kNtid;
    case llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x:
      return Sreg::kCtaid;
    case llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x:
      return Sreg::kNctaid;
    case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z:
      return Sreg::kZero;
    case llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z:
      return Sreg::kOne;
    case llvm::Intrinsic::nvvm_read_ptx_sreg_laneid:
      return Sreg::kLane;
    case llvm::Intrinsic::nvvm_read_ptx_sreg_warpsize:
      return Sreg::kWarpSize;
    default:
      return std::nullopt;
  }
}

// The device module of inst's kernel made a host one; returns whether it synchronises threads.
bool to_host(llvm::Module& m, llvm::Function& kernel) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::FunctionCallee sreg = m.getOrInsertFunction("jitx_emu_sreg", i32, i32);
  llvm::FunctionCallee barrier = m.getOrInsertFunction("jitx_emu_barrier", llvm::Type::getVoidTy(ctx), i32);
  llvm::FunctionCallee shfl = m.getOrInsertFunction("jitx_emu_shfl_bfly", i32, i32, i32, i32, i32, i32);
  bool syncs = false;
  uint32_t site = 0;  // each barrier and shuffle call site its own number
  std::vector<llvm::Function*> intrinsics;
  for (llvm::Function& f : m)
    if (f.isIntrinsic() && f.getName().starts_with("llvm.nvvm.")) intrinsics.push_back(&f);
  for (llvm::Function* f : intrinsics) {
    llvm::Intrinsic::ID id = f->getIntrinsicID();
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* u : f->users())
      if (auto* c = llvm::dyn_cast<llvm::CallInst>(u)) calls.push_back(c);
    for (llvm::CallInst* c : calls) {
      llvm::IRBuilder<> b(c);
      llvm::Value* v = nullptr;
      if (std::optional<Sreg> s = sreg_of(id)) {
        v = b.CreateCall(sreg, {b.getInt32(static_cast<uint32_t>(*s))});
      } else if (id == llvm::Intrinsic::nvvm_barrier0) {
        v = b.CreateCall(barrier, {b.getInt32(++site)});
        syncs = true;
      } else if (id == llvm::Intrinsic::nvvm_shfl_sync_bfly_i32) {
        v = b.CreateCall(shfl, {b.getInt32(++site), c->getArgOperand(0), c->getArgOperand(1), c->getArgOperand(2),
                                c->getArgOperand(3)});
        syncs = true;
      } else {
        throw Error(
            fmt::format("cuda emulator: the kernel calls {}, which the emulator does not provide", f->getName().str()));
      }
      if (!c->getType()->isVoidTy()) c->replaceAllUsesWith(v);
      c->eraseFromParent();
    }
    f->eraseFromParent();
  }
  kernel.setCallingConv(llvm::CallingConv::C);
  if (llvm::NamedMDNode* md = m.getNamedMetadata("nvvm.annotations")) md->eraseFromParent();
  return syncs;
}

Compiled compile(Emulator& em, const hlo::Instruction& inst, bool allow_excess_precision) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("jitx_cuda_emulated", *ctx);
  m->setTargetTriple(em.jit->getTargetTriple().str());
  m->setDataLayout(em.jit->getDataLayout());
  int64_t n = em.seq++;
  std::string kname = fmt::format("jitx_emu_kernel_{}", n), ename = fmt::format("jitx_emu_entry_{}", n);
  emit_gpu_kernel(*m, kname, inst, allow_excess_precision);
  llvm::Function* kernel = m->getFunction(kname);
  Compiled c;
  c.fibers = to_host(*m, *kernel);
  // Shared memory as host globals, named so that the emulator finds them (and poisons them before each block).
  for (llvm::GlobalVariable& g : m->globals())
    if (g.getAddressSpace() == 3) {
      std::string name = fmt::format("jitx_emu_shared_{}_{}", n, c.shared.size());
      g.setName(name);
      g.setLinkage(llvm::GlobalValue::ExternalLinkage);
      c.shared.emplace_back(name, m->getDataLayout().getTypeAllocSize(g.getValueType()).getFixedValue());
    }
  // void entry(void** params): the kernel called with the parameter array unpacked.
  auto* ptr = llvm::PointerType::get(*ctx, 0);
  auto* wrap = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(*ctx), {ptr}, false),
                                      llvm::GlobalValue::ExternalLinkage, ename, *m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*ctx, "entry", wrap));
  std::vector<llvm::Value*> args;
  for (unsigned p = 0; p < kernel->arg_size(); ++p)
    args.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, wrap->getArg(0), p)));
  b.CreateCall(kernel, args);
  b.CreateRetVoid();
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(*m, &es)) throw Error("cuda emulator: the host module does not verify: " + err);
  if (auto e = em.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    throw Error("cuda emulator: " + llvm::toString(std::move(e)));
  auto sym = em.jit->lookup(ename);
  if (!sym) throw Error("cuda emulator: " + llvm::toString(sym.takeError()));
  c.entry = sym->toPtr<void (*)(void**)>();
  for (auto& [name, bytes] : c.shared) {
    auto at = em.jit->lookup(name);
    if (!at) throw Error("cuda emulator: " + llvm::toString(at.takeError()));
    c.shared_at.emplace_back(at->toPtr<void*>(), bytes);
  }
  ++em.stats.compiled;
  return c;
}

// Runs one block's threads as fibers until all exit.
void run_fibers(Launch& l, std::vector<char>& stacks, EmulatorStats& stats) {
  auto nthreads = static_cast<size_t>(l.block);
  for (size_t t = 0; t < nthreads; ++t) {
    Fiber& f = l.fibers[t];
    f = Fiber{};
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks.data() + t * kStackBytes;
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = &l.scheduler;
    makecontext(&f.ctx, &fiber_main, 0);
  }
  for (;;) {
    for (size_t q = 0; q < nthreads; ++q) {
      size_t t = l.reversed ? nthreads - 1 - q : q;
      if (l.fibers[t].state == State::kRun) {
        l.tid = static_cast<int64_t>(t);
        swapcontext(&l.scheduler, &l.fibers[t].ctx);
      }
    }
    size_t live = 0, at_barrier = 0;
    for (auto& f : l.fibers) {
      live += f.state != State::kDone;
      at_barrier += f.state == State::kBarrier;
    }
    if (live == 0) return;
    if (at_barrier > 0 && at_barrier == live) {
      // bar.sync waits for every thread of the block at the same barrier: one that exited, or waits at another,
      // would hang a GPU (or be undefined behaviour).
      for (size_t t = 0; t < nthreads; ++t) {
        const Fiber& f = l.fibers[t];
        if (f.state == State::kDone || f.site != l.fibers[0].site)
          throw Error(fmt::format(
              "cuda emulator: block {}: thread {} {} while thread 0 waits at barrier {}", l.ctaid, t,
              f.state == State::kDone ? "has exited" : fmt::format("waits at barrier {}", f.site), l.fibers[0].site));
      }
      for (auto& f : l.fibers) f.state = State::kRun;
      ++stats.barriers;
      continue;
    }
    bool released = false;
    for (size_t w = 0; w < nthreads; w += kWarp) {
      size_t end = std::min(nthreads, w + kWarp);
      bool all = true, any = false;
      for (size_t t = w; t < end; ++t) {
        State s = l.fibers[t].state;
        all = all && (s == State::kShuffle || s == State::kDone);
        any = any || s == State::kShuffle;
      }
      if (!all || !any) continue;
      for (size_t t = w; t < end; ++t) {
        Fiber& f = l.fibers[t];
        if (f.state != State::kShuffle) continue;
        for (size_t o = w; o < end; ++o)
          if (((f.member_mask >> (o - w)) & 1u) && l.fibers[o].state != State::kShuffle)
            throw Error(
                fmt::format("cuda emulator: block {} thread {}: shfl.sync's member mask {:#x} names lane {}, "
                            "which has exited",
                            l.ctaid, t, f.member_mask, o - w));
        size_t src = w + ((t - w) ^ (f.lane_mask & 31u));
        if (src >= end) src = t;  // a lane outside the warp: the thread's own value, as PTX defines it
        if (l.fibers[src].lane_mask != f.lane_mask || l.fibers[src].site != f.site ||
            l.fibers[src].member_mask != f.member_mask)
          throw Error(
              fmt::format("cuda emulator: block {}: lanes {} and {} are at different shuffles", l.ctaid, t, src));
        f.result = l.fibers[src].value;
      }
      for (size_t t = w; t < end; ++t)
        if (l.fibers[t].state == State::kShuffle) l.fibers[t].state = State::kRun;
      ++stats.shuffles;
      released = true;
    }
    if (!released)
      throw Error(
          fmt::format("cuda emulator: deadlock in block {}: {} threads live, {} at a barrier, the rest at "
                      "shuffles whose warps are not all there",
                      l.ctaid, live, at_barrier));
  }
}
}  // namespace

void emulate_kernel(const hlo::Instruction& inst, bool allow_excess_precision, const std::vector<void*>& params,
                    int64_t grid, int64_t block) {
  Emulator& em = emulator();
  std::lock_guard<std::mutex> lock(em.mu);
  std::string key = fmt::format("{}\n{}", allow_excess_precision ? 1 : 0, hlo::print_instruction_canonical(inst));
  auto it = em.kernels.find(key);
  if (it == em.kernels.end()) it = em.kernels.emplace(key, compile(em, inst, allow_excess_precision)).first;
  const Compiled& c = it->second;
  if (grid <= 0 || block <= 0 || block > 1024)
    throw Error(fmt::format("cuda emulator: a launch of {} blocks of {} threads", grid, block));
  Launch l;
  l.entry = c.entry;
  std::vector<void*> args = params;
  l.args = args.data();
  l.grid = grid;
  l.block = block;
  l.fibers_on = c.fibers;
  g_launch = &l;
  struct Reset {
    ~Reset() { g_launch = nullptr; }
  } reset;
  ++em.stats.launches;
  em.stats.fiber_launches += c.fibers;
  std::vector<char>& stacks = em.stacks;
  if (c.fibers && stacks.size() < static_cast<size_t>(block) * kStackBytes)
    stacks.resize(static_cast<size_t>(block) * kStackBytes);
  l.fibers.resize(c.fibers ? static_cast<size_t>(block) : 0);
  auto run = [&] {
    for (l.ctaid = 0; l.ctaid < grid; ++l.ctaid) {
      for (auto& [at, bytes] : c.shared_at) std::memset(at, 0xff, bytes);  // nothing carries over between blocks
      if (c.fibers) {
        run_fibers(l, stacks, em.stats);
        continue;
      }
      for (int64_t q = 0; q < block; ++q) {
        l.tid = l.reversed ? block - 1 - q : q;
        l.entry(l.args);
      }
    }
  };
  // Twice: threads in ascending, then in descending order within each block, the outputs compared byte for byte.
  // A kernel whose threads race (read what another writes without a barrier between, or write the same place)
  // gives results that depend on that order, which a GPU does not fix.
  std::vector<std::vector<char>> first;
  std::vector<hlo::Shape> outs = inst.shape.is_tuple ? inst.shape.tuple_shapes : std::vector{inst.shape};
  run();
  for (size_t k = 0; k < outs.size(); ++k) {
    auto* p = static_cast<const char*>(params.at(k));
    first.emplace_back(p, p + outs[k].byte_size());
  }
  l.reversed = true;
  run();
  for (size_t k = 0; k < outs.size(); ++k)
    if (std::memcmp(first[k].data(), params.at(k), first[k].size()) != 0)
      throw Error(
          fmt::format("cuda emulator: output {} of %{} differs between threads run in ascending and in "
                      "descending order: the threads race",
                      k, inst.name));
}

EmulatorStats emulator_stats() {
  Emulator& em = emulator();
  std::lock_guard<std::mutex> lock(em.mu);
  return em.stats;
}

}  // namespace jitx::cuda
