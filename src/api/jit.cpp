// JitCore: the signature-keyed cache, compile logs, cache-miss explanations, tracing, lowering, dispatch.
#include "jitx/jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include "api/jit_key.h"
#include "api/jit_spmd.h"
#include "api/pytree_str.h"
#include "cache/compilation_cache.h"
#include "core/bytes.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/trace.h"
#include "api/debug_nans.h"
#include "jitx/floating_point_error.h"
#include "dispatch/eager.h"
#include "dispatch/execute.h"
#include "hlo/ir/hlo_parser.h"
#include "hlo/passes/pipeline.h"
#include "jitx/config.h"
#include "hlo/analysis/buffer_assignment.h"
#include "hlo/analysis/cost_analysis.h"
#include "lowering/lower.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"
#include "runtime/sharded.h"

namespace jitx {
namespace detail {

bool tracing_active() { return current_trace() != nullptr; }

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

void write_file_atomically(const std::filesystem::path& p, const std::string& text) {
  auto tmp = p;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw RuntimeError(fmt::format("[dump] cannot write {}", tmp.string()));
    f << text;
  }
  std::filesystem::rename(tmp, p);
}

std::atomic<int64_t> g_module_seq{0};

/// The entry parameters (flattened leaves) of the donated top-level arguments.
std::vector<int64_t> donated_parameters(const Key& key, const std::vector<int>& donate_argnums) {
  std::vector<int64_t> donated;
  for (size_t k = 0; k < key.leaf_args.size(); ++k)
    for (int d : donate_argnums)
      if (d == key.leaf_args[k]) donated.push_back(static_cast<int64_t>(k));
  return donated;
}
}  // namespace

struct CompiledEntry {
  Key key;
  std::string name;
  uint64_t last_use = 0;  // the cache's clock at the latest lookup (least recently used entries go first)
  std::once_flag traced_once;
  std::mutex compile_mu;
  ClosedJaxpr jaxpr;
  bool shard_map = false;  // the jaxpr holds a shard_map: calls run on its mesh (set once, when traced)
  std::shared_ptr<hlo::Module> module;     // as lowered (Lowered::as_text)
  std::shared_ptr<hlo::Module> optimized;  // what the backend compiles (Compiled::as_text)
  std::shared_ptr<runtime::Executable> exe;
  std::shared_ptr<void> skeleton;
  std::vector<ShapedArray> out_avals;
  std::vector<int> donate_argnums;  // the jit option, for the buffer assignment dump
  // lower()'s leaves' shardings (null: unsharded): a Compiled places an unsharded argument so, as JAX's does.
  std::vector<std::shared_ptr<const Sharding>> in_placement;
  double trace_ms = 0, lower_ms = 0, compile_ms = 0;
  std::vector<CompilePhase> phases;  // trace, lower, hlo.<pass>..., the backend's phases
  int64_t seq = 0;
  // The partitioned program for sharded arguments (made at the first call, or by lower()); null when the call
  // cannot run partitioned and computes on one device instead.
  mutable std::mutex spmd_mu;
  mutable bool spmd_tried = false;
  mutable std::shared_ptr<SpmdProgram> spmd;
};

namespace {
/// Whether a call may run partitioned: a shard_map (on its mesh's devices) or a sharded argument.
bool is_spmd(const CompiledEntry& e, const CallSignature& s) { return e.shard_map || any_sharded_leaf(s.flat.leaves); }
std::shared_ptr<SpmdProgram> spmd_program(const CompiledEntry& e, const CallSignature& sig,
                                          const std::vector<std::optional<Sharding>>& out_shardings) {
  std::lock_guard<std::mutex> l(e.spmd_mu);
  if (!e.spmd_tried) {
    e.spmd_tried = true;
    std::string why;
    e.spmd = spmd_program_for(e.jaxpr, *e.module, sig.flat.leaves, out_shardings,
                              donated_parameters(e.key, e.donate_argnums), &why);
    if (!e.spmd && log_sharding())
      log_line(fmt::format("[sharding] '{}' runs on one device (its sharded arguments assembled there): {}", e.name,
                           why));
  }
  return e.spmd;
}
}  // namespace

struct JitCore::Impl {
  mutable std::mutex mu;
  std::unordered_map<Key, std::shared_ptr<CompiledEntry>, KeyHash> cache;
  // The entry the last call hit or made (guarded by mu; null once evicted): a loop calling with one signature is
  // matched against it without building a key (known_same_signature), a fifth of a small call's dispatch.
  std::shared_ptr<CompiledEntry> last;
  uint64_t clock = 0;  // guarded by mu
  std::atomic<size_t> compiles{0};
  std::atomic<size_t> evictions{0};
};

JitCore::JitCore(std::string name, JitOptions options)
    : impl_(std::make_unique<Impl>()), name_(std::move(name)), options_(std::move(options)) {
  if (name_.empty()) name_ = "fn";
  auto check = [&](const std::vector<int>& nums, std::string_view what) {
    for (size_t i = 0; i < nums.size(); ++i) {
      if (nums[i] < 0)
        throw_error<TypeError>("jit", "{} of '{}' has {}: jitx counts argument positions from 0 and takes no negative "
                               "positions", what, name_, nums[i]);
      for (size_t k = 0; k < i; ++k)
        if (nums[k] == nums[i]) throw_error<TypeError>("jit", "{} of '{}' lists {} twice", what, name_, nums[i]);
    }
  };
  check(options_.static_argnums, "static_argnums");
  check(options_.donate_argnums, "donate_argnums");
  for (int s : options_.static_argnums)
    if (is_donated(static_cast<size_t>(s)))
      throw_error<TypeError>("jit", "argument {} of '{}' is in both static_argnums and donate_argnums; a static "
                             "argument has no buffer to donate (as JAX: they cannot overlap)", s, name_);
}

void JitCore::check_arity(size_t nargs, const Loc& loc) const {
  auto check = [&](const std::vector<int>& nums, std::string_view what) {
    for (int n : nums)
      if (static_cast<size_t>(n) >= nargs) {
        ApiScope s(loc);
        throw_error<TypeError>(name_, "was jitted with {} containing {}, but called with {} argument{}; expected "
                               "positions below {}", what, n, nargs, nargs == 1 ? "" : "s", nargs);
      }
  };
  check(options_.static_argnums, "static_argnums");
  check(options_.donate_argnums, "donate_argnums");
}
JitCore::~JitCore() = default;

bool JitCore::is_static(size_t i) const {
  for (int s : options_.static_argnums)
    if (static_cast<size_t>(s) == i) return true;
  return false;
}
bool JitCore::is_donated(size_t i) const {
  for (int s : options_.donate_argnums)
    if (static_cast<size_t>(s) == i) return true;
  return false;
}
size_t JitCore::num_compiles() const { return impl_->compiles.load(); }
size_t JitCore::num_evictions() const { return impl_->evictions.load(); }

// Called with impl_->mu held, before an insertion: drops least recently used entries until one more fits under
// config().jit_cache_size. A call still running an evicted executable keeps it alive (entries are shared_ptrs).
void JitCore::evict_for_one_more() {
  size_t limit = std::max<size_t>(1, config().jit_cache_size);
  while (impl_->cache.size() >= limit) {
    auto victim = impl_->cache.begin();
    for (auto it = impl_->cache.begin(); it != impl_->cache.end(); ++it)
      if (it->second->last_use < victim->second->last_use) victim = it;
    if (config().log_compiles)
      log_line(fmt::format("[jitx] Evicted '{}' for signature {} from its jit cache (limit {} entries, "
                           "JITX_JIT_CACHE_SIZE); a call with it compiles again", name_,
                           signature_str(victim->first), limit));
    if (impl_->last == victim->second) impl_->last.reset();
    impl_->cache.erase(victim);
    impl_->evictions++;
  }
}
size_t JitCore::cache_size() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->cache.size();
}
const std::shared_ptr<void>& JitCore::skeleton(const CompiledEntry& e) { return e.skeleton; }

namespace {
void trace_and_lower(CompiledEntry& e, const JitCore::TraceFn& trace) {
  auto t0 = Clock::now();
  std::vector<ShapedArray> in_avals = e.key.avals;
  std::shared_ptr<void> skeleton;
  e.jaxpr = trace_to_jaxpr(e.name, in_avals, [&](const std::vector<Array>& tracers) {
    // The user's function runs without jit's call site, so its ops' errors name their own lines.
    CallSiteReset reset;
    return trace(tracers, skeleton);
  });
  e.skeleton = skeleton;
  e.shard_map = has_shard_map(e.jaxpr);
  e.out_avals = e.jaxpr.out_avals();
  e.trace_ms = ms_since(t0);
  auto t1 = Clock::now();
  e.module = lower_jaxpr(e.jaxpr, "jit_" + e.name);
  hlo::verify(*e.module);
  e.lower_ms = ms_since(t1);
  e.seq = g_module_seq++;
  const auto& dir = config().dump_to;
  if (!dir.empty()) {
    std::filesystem::create_directories(dir);
    std::string base = fmt::format("{}/{}.{:04d}", dir, e.module->name, e.seq);
    write_file_atomically(base + ".jaxpr.txt", print_jaxpr(e.jaxpr.jaxpr) + "\n");
    write_file_atomically(base + ".stablehlo.mlir", print_stablehlo(*e.module));
    write_file_atomically(base + ".before_optimizations.hlo", hlo::print_hlo(*e.module));
  }
}
}  // namespace

namespace {
/// "trace 0.10, lower 0.20, hlo 1.50 [algsimp 0.10, ...], plan 0.05, ..." (consecutive "hlo.<pass>" phases grouped).
std::string phases_str(const std::vector<CompilePhase>& phases) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < phases.size();) {
    if (!phases[k].name.starts_with("hlo.")) {
      parts.push_back(fmt::format("{} {:.2f}", phases[k].name, phases[k].ms));
      ++k;
      continue;
    }
    double total = 0;
    std::vector<std::string> passes;
    for (; k < phases.size() && phases[k].name.starts_with("hlo."); ++k) {
      total += phases[k].ms;
      passes.push_back(fmt::format("{} {:.2f}", phases[k].name.substr(4), phases[k].ms));
    }
    parts.push_back(fmt::format("hlo {:.2f} [{}]", total, fmt::join(passes, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}
}  // namespace

namespace {
constexpr const char* kSignatureSection = "signature";

void write_avals(ByteWriter& w, const std::vector<ShapedArray>& avals) {
  w.u64(avals.size());
  for (auto& a : avals) {
    w.u32(static_cast<uint32_t>(a.dtype));
    w.u32(a.weak_type ? 1 : 0);
    w.u64(a.shape.size());
    for (auto d : a.shape) w.u64(static_cast<uint64_t>(d));
  }
}
std::vector<ShapedArray> read_avals(ByteReader& r) {
  std::vector<ShapedArray> out(r.count(16));
  for (auto& a : out) {
    uint32_t dtype = r.u32();
    if (dtype >= static_cast<uint32_t>(kNumDTypes))
      throw RuntimeError(fmt::format("the executable's signature is corrupted: dtype code {}", dtype));
    a.dtype = static_cast<DType>(dtype);
    a.weak_type = r.u32() != 0;
    a.shape.resize(r.count(8));
    for (auto& d : a.shape) d = static_cast<int64_t>(r.u64());
  }
  return out;
}

/// A signature that is not the module's would let calls pass arguments the code does not expect.
void check_signature(const hlo::Module& m, const std::vector<ShapedArray>& in, const std::vector<ShapedArray>& out,
                     const std::vector<int64_t>& donated) {
  auto same = [](const hlo::Shape& s, const ShapedArray& a) { return !s.is_tuple && s.dtype == a.dtype &&
                                                                    s.dims == a.shape; };
  const auto& params = m.entry->parameters;
  bool ok = params.size() == in.size();
  for (size_t k = 0; ok && k < params.size(); ++k)
    ok = params[k]->parameter_number == static_cast<int64_t>(k) && same(params[k]->shape, in[k]);
  const hlo::Shape& root = m.entry->root->shape;
  std::vector<hlo::Shape> results = root.is_tuple ? root.tuple_shapes : std::vector<hlo::Shape>{root};
  ok = ok && results.size() == out.size();
  for (size_t k = 0; ok && k < results.size(); ++k) ok = same(results[k], out[k]);
  if (!ok)
    throw RuntimeError(fmt::format("the executable is corrupted: its signature ({} arguments, {} results) is not "
                                   "its module's ({} parameters, root {})", in.size(), out.size(), params.size(),
                                   root.str()));
  for (int64_t p : donated)
    if (p < 0 || p >= static_cast<int64_t>(in.size()))
      throw RuntimeError(fmt::format("the executable is corrupted: donated argument {} of {}", p, in.size()));
}

/// What a serialised executable needs beside its module and code to be called: its name, the flattened
/// arguments' and results' types, and the donated arguments.
std::string signature_section(const CompiledEntry& e, const std::vector<int64_t>& donated) {
  ByteWriter w;
  w.str(e.name);
  write_avals(w, e.key.avals);
  write_avals(w, e.out_avals);
  w.u64(donated.size());
  for (auto d : donated) w.u64(static_cast<uint64_t>(d));
  return std::move(w.out);
}
}  // namespace

void JitCore::compile(CompiledEntry& e) {
  std::lock_guard<std::mutex> l(e.compile_mu);
  if (e.exe) return;
  auto t0 = Clock::now();
  // The lowered module stays as it is; the HLO pass pipeline optimises a clone, which the backend compiles.
  std::shared_ptr<hlo::Module> opt = e.module->clone();
  std::vector<std::pair<std::string, double>> pass_times;
  hlo::PipelineOptions po;
  po.times = &pass_times;
  po.verify = config().verify_passes;
  const auto& dir = config().dump_to;
  std::string base = dir.empty() ? "" : fmt::format("{}/{}.{:04d}", dir, e.module->name, e.seq);
  if (!dir.empty() && config().dump_passes) po.dump_prefix = base + ".pass";
  hlo::optimize(*opt, po);
  auto tv = Clock::now();
  hlo::verify(*opt);
  pass_times.emplace_back("verify", ms_since(tv));
  runtime::CompileOptions co;
  co.donated_parameters = donated_parameters(e.key, e.donate_argnums);
  if (!dir.empty()) {
    write_file_atomically(base + ".after_optimizations.hlo", hlo::print_hlo(*opt));
    write_file_atomically(base + ".buffer_assignment.txt", hlo::buffer_assignment_report(*opt, co.donated_parameters));
  }
  e.optimized = opt;
  // Through the persistent compilation cache when config().compilation_cache_dir is set; the entry keeps the call
  // signature too, so that deserialize_executable reads it.
  co.serializable = true;
  cache::CacheResult cr;
  e.exe = cache::compile(runtime::Client::get().backend(), e.optimized, co,
                         {{kSignatureSection, signature_section(e, co.donated_parameters)}}, &cr);
  e.compile_ms = ms_since(t0);
  e.phases = {{"trace", e.trace_ms}, {"lower", e.lower_ms}};
  for (auto& [name, ms] : pass_times) e.phases.push_back({"hlo." + name, ms});
  for (auto& [name, ms] : e.exe->compile_phases) e.phases.push_back({name, ms});
  if (config().log_compiles && cr.loaded)
    log_line(fmt::format("[jitx] Loaded '{}' for {}: loaded from cache ({:.2f} ms) {} (trace {:.2f} ms, lower {:.2f} ms, "
                         "hlo passes and load {:.2f} ms): {} ms",
                         e.name, signature_str(e.key), cr.ms, cr.path, e.trace_ms, e.lower_ms, e.compile_ms,
                         phases_str(e.phases)));
  else if (config().log_compiles)
    log_line(
        fmt::format("[jitx] Compiled '{}' for {} in {:.2f} ms (trace {:.2f} ms, lower {:.2f} ms, compile {:.2f} ms): "
                    "{} ms",
                    e.name, signature_str(e.key), e.trace_ms + e.lower_ms + e.compile_ms, e.trace_ms, e.lower_ms,
                    e.compile_ms, phases_str(e.phases)));
}

std::shared_ptr<CompiledEntry> JitCore::lower(const CallSignature& sig, const TraceFn& trace, const Loc& loc) {
  ApiScope s(loc);
  place_in_shardings(options_, sig);
  auto e = std::make_shared<CompiledEntry>();
  e->key = make_key(sig);
  for (const Array& leaf : sig.flat.leaves) {
    const auto* sh = as_sharded(leaf);
    e->in_placement.push_back(sh ? sh->sharding : nullptr);
  }
  e->name = name_;
  e->donate_argnums = options_.donate_argnums;
  trace_and_lower(*e, trace);
  if (is_spmd(*e, sig)) spmd_program(*e, sig, options_.out_shardings);
  return e;
}

std::shared_ptr<CompiledEntry> JitCore::get(const CallSignature& sig, const TraceFn& trace, const Loc& loc) {
  ApiScope s(loc);
  place_in_shardings(options_, sig);
  // One trace and compile per signature, even when several threads miss at once (the others wait for it).
  auto compile_once = [&](CompiledEntry& entry) {
    std::call_once(entry.traced_once, [&] {
      trace_and_lower(entry, trace);
      compile(entry);
      impl_->compiles++;
    });
  };
  std::shared_ptr<CompiledEntry> e;
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    if (impl_->last && known_same_signature(impl_->last->key, sig).value_or(false)) {
      e = impl_->last;
      e->last_use = ++impl_->clock;
    }
  }
  if (e) {
    compile_once(*e);
    return e;
  }
  Key key = make_key(sig, /*with_paths=*/false);
  bool miss = false;
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    auto it = impl_->cache.find(key);
    if (it != impl_->cache.end()) {
      e = it->second;
      e->last_use = ++impl_->clock;
      impl_->last = e;
    } else {
      miss = true;
      add_paths(key, sig);
      if (config().explain_cache_misses) {
        std::string msg = fmt::format("[jitx] TRACING CACHE MISS at {} because: ", format_location(loc));
        if (impl_->cache.empty()) {
          msg += fmt::format("this is the first call of '{}' (signature {})", name_, signature_str(key));
        } else {
          // The closest cached signature: fewest differences.
          const Key* closest = nullptr;
          for (auto& [k, v] : impl_->cache)
            if (!closest || distance(k, key) < distance(*closest, key)) closest = &k;
          std::vector<std::string> best = differences(*closest, key);
          msg += fmt::format("for '{}', never seen input signature {}; the closest seen signature has {} mismatch{}:",
                             name_, signature_str(key), best.size(), best.size() == 1 ? "" : "es");
          for (auto& d : best) msg += "\n  * " + d;
        }
        log_line(msg);
      }
      e = std::make_shared<CompiledEntry>();
      e->key = key;
      e->name = name_;
      e->donate_argnums = options_.donate_argnums;
      e->last_use = ++impl_->clock;
      evict_for_one_more();
      impl_->cache.emplace(key, e);
      impl_->last = e;
    }
  }
  try {
    compile_once(*e);
  } catch (...) {
    if (miss) {
      std::lock_guard<std::mutex> l(impl_->mu);
      if (impl_->last == e) impl_->last.reset();
      impl_->cache.erase(key);
    }
    throw;
  }
  return e;
}


void JitCore::check_signature(const CompiledEntry& e, const CallSignature& sig, const Loc& loc) {
  ApiScope s(loc, nullptr);
  if (same_signature(e.key, sig)) return;
  conform_to_compiled(e.key, e.in_placement, sig);
  if (same_signature(e.key, sig)) return;
  Key k = make_key(sig);
  if (!(k == e.key)) {
    auto d = differences(e.key, k);
    throw_error<TypeError>("Compiled", "was compiled for signature {} but called with {}: {}", signature_str(e.key),
                           signature_str(k), fmt::join(d, "; "));
  }
}

std::vector<Array> JitCore::execute(const CompiledEntry& e, const CallSignature& sig, const Loc& loc) {
  ApiScope s(loc);
  if (!e.exe) throw_error<RuntimeError>(e.name, "is not compiled yet");
  check_in_shardings(sig, e.name);
  if (is_spmd(e, sig))
    if (auto prog = spmd_program(e, sig, options_.out_shardings))
      return reshard_outputs(run_spmd(*prog, sig.flat.leaves, e.out_avals), loc);
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;
  bufs.reserve(sig.flat.leaves.size());
  // A sharded leaf the partitioner could not take is assembled on one device; results reshard to out_shardings.
  for (auto& a : sig.flat.leaves) bufs.push_back(concrete_buffer(a, e.name));
  // The leaves whose buffers the call may overwrite (empty without donate_argnums).
  std::vector<uint8_t> donated;
  if (!options_.donate_argnums.empty()) {
    donated.resize(bufs.size());
    for (size_t i = 0; i < bufs.size(); ++i)
      donated[i] = sig.flat.leaf_args[i] >= 0 && is_donated(static_cast<size_t>(sig.flat.leaf_args[i]));
  }
  std::vector<Array> result = execute_placed(*e.exe, bufs, e.out_avals, e.name,
                                             {"arguments", [&](size_t i) { return sig.flat.paths[i]; }}, donated);
  // Donated arguments cannot be used again (their buffers belong to the call now).
  for (size_t i = 0; i < donated.size(); ++i) bufs[i]->deleted = bufs[i]->deleted || donated[i];
  if (config().debug_nans || config().debug_infs) [[unlikely]]
    if (auto what = find_nan_or_inf(result)) {
      if (!donated.empty()) throw_error<FloatingPointError>(e.name, "invalid value ({}) in the output", *what);
      deoptimized_rerun(e.jaxpr, sig.flat.leaves, e.name, *what);
    }
  return reshard_outputs(std::move(result), loc);
}

std::string jaxpr_text(const ClosedJaxpr& j) { return print_jaxpr(j.jaxpr); }
std::string entry_jaxpr_text(const CompiledEntry& e, bool source_info) {
  return print_jaxpr(e.jaxpr.jaxpr, 0, source_info);
}
namespace {
/// The leaves of the entry's result (a tuple's elements, or the root).
std::vector<const hlo::Instruction*> result_leaves(const hlo::Module& m) {
  const hlo::Instruction* root = m.entry->root;
  if (root->opcode == hlo::Opcode::kTuple) return {root->operands.begin(), root->operands.end()};
  return {root};
}

/// A sharding as Shardy prints it on the mesh `@mesh`: #sdy.sharding<@mesh, [{"data"}, {}]> (each dimension's
/// axes, major to minor; every dimension listed).
std::string sdy_sharding(const NamedSharding& s, int64_t rank) {
  std::vector<std::string> dims;
  const auto& entries = s.spec().entries();
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<std::string> axes;
    if (static_cast<size_t>(d) < entries.size())
      for (const auto& a : entries[static_cast<size_t>(d)].axes) axes.push_back(fmt::format("\"{}\"", a));
    dims.push_back(fmt::format("{{{}}}", fmt::join(axes, ", ")));
  }
  return fmt::format("sdy.sharding = #sdy.sharding<@mesh, [{}]>", fmt::join(dims, ", "));
}

/// The mesh of a lowering's sharded arguments, as JAX lowers it: `sdy.mesh @mesh = <["x"=4]>` declared in the
/// module, mhlo.num_partitions its size, each argument (and result) on it annotated with its sharding.
void add_shardings(const CompiledEntry& e, StablehloAttrs& attrs) {
  const NamedSharding* mesh_of = nullptr;
  for (const auto& sh : e.in_placement)
    if (sh && sh->named()) {
      mesh_of = sh->named();
      break;
    }
  if (!mesh_of) return;
  const Mesh& mesh = mesh_of->mesh();
  std::vector<std::string> axes, ids;
  for (size_t a = 0; a < mesh.axis_names().size(); ++a)
    axes.push_back(fmt::format("\"{}\"={}", mesh.axis_names()[a], mesh.shape()[a]));
  bool iota = true;
  for (size_t d = 0; d < mesh.devices().size(); ++d) {
    ids.push_back(std::to_string(mesh.devices()[d].id()));
    iota = iota && mesh.devices()[d].id() == static_cast<int>(d);
  }
  attrs.declarations = fmt::format("  sdy.mesh @mesh = <[{}]{}>\n", fmt::join(axes, ", "),
                                   iota ? "" : fmt::format(", device_ids=[{}]", fmt::join(ids, ", ")));
  attrs.num_partitions = mesh.size();
  auto annotate = [&](std::string& into, const std::shared_ptr<const Sharding>& sh, int64_t rank) {
    if (!sh || !sh->named() || !(sh->named()->mesh() == mesh)) return;
    into += (into.empty() ? "" : ", ") + sdy_sharding(*sh->named(), rank);
  };
  const hlo::Computation& c = *e.module->entry;
  attrs.args.resize(c.parameters.size());
  for (size_t k = 0; k < e.in_placement.size() && k < c.parameters.size(); ++k)
    annotate(attrs.args[k], e.in_placement[k], static_cast<int64_t>(c.parameters[k]->shape.dims.size()));
  std::lock_guard<std::mutex> l(e.spmd_mu);
  if (!e.spmd) return;
  std::vector<const hlo::Instruction*> results = result_leaves(*e.module);
  attrs.results.resize(results.size());
  for (size_t k = 0; k < results.size() && k < e.spmd->out_shardings.size(); ++k)
    annotate(attrs.results[k], e.spmd->out_shardings[k], static_cast<int64_t>(results[k]->shape.dims.size()));
}
}  // namespace

std::string entry_stablehlo_text(const CompiledEntry& e) {
  // Donation as JAX lowers it (_set_up_aliases): each result, in order, takes the first donated argument of its
  // shape and dtype that no earlier result took; that argument gets {tf.aliasing_output = result}. (jitx keeps
  // unused arguments, which JAX drops from the module: their numbering differs from JAX's there.)
  const hlo::Computation& c = *e.module->entry;
  StablehloAttrs sa;
  add_shardings(e, sa);
  std::vector<std::string>& attrs = sa.args;
  attrs.resize(c.parameters.size());
  std::vector<int64_t> free = donated_parameters(e.key, e.donate_argnums);
  std::vector<const hlo::Instruction*> results = result_leaves(*e.module);
  for (size_t k = 0; k < results.size(); ++k)
    for (auto it = free.begin(); it != free.end(); ++it) {
      const hlo::Instruction* p = c.parameters.at(static_cast<size_t>(*it));
      if (p->shape.is_tuple || !p->shape.same_type(results[k]->shape)) continue;
      std::string& a = attrs.at(static_cast<size_t>(p->parameter_number));
      a = fmt::format("tf.aliasing_output = {} : i32", k) + (a.empty() ? "" : ", " + a);
      free.erase(it);
      break;
    }
  return stablehlo_text_of(e.jaxpr, *e.module, sa);
}
namespace {
/// What as_text() and the analyses describe: the optimised module the backend runs (the lowered one before
/// compile()); for a partitioned call, the program each device runs.
const hlo::Module& analysed_module(const CompiledEntry& e) {
  std::lock_guard<std::mutex> l(e.spmd_mu);
  if (e.spmd) return *e.spmd->module;
  return e.optimized ? *e.optimized : *e.module;
}
}  // namespace

std::string entry_hlo_text(const CompiledEntry& e) {
  const hlo::Module& m = analysed_module(e);
  std::string text = hlo::print_hlo(m);
  {
    // A partitioned program's header says for how many partitions it is, as XLA's: num_partitions=4.
    std::lock_guard<std::mutex> l(e.spmd_mu);
    if (e.spmd && e.spmd->devices.size() > 1)
      text.insert(text.find('\n'), fmt::format(", num_partitions={}", e.spmd->devices.size()));
  }
  std::vector<int64_t> donated = donated_parameters(e.key, e.donate_argnums);
  if (donated.empty()) return text;
  // The results written over donated arguments, as XLA prints them in the module's header:
  // input_output_alias={ {result index}: (parameter, {}, may-alias), ... } (the buffer assignment's choice).
  auto ba = hlo::assign_buffers(m, donated);
  bool tuple = m.entry->root->opcode == hlo::Opcode::kTuple;
  std::vector<std::string> pairs;
  for (size_t k = 0; k < ba.output_aliases.size(); ++k)
    if (ba.output_aliases[k] >= 0)
      pairs.push_back(
          fmt::format("{{{}}}: ({}, {{}}, may-alias)", tuple ? std::to_string(k) : "", ba.output_aliases[k]));
  if (pairs.empty()) return text;
  size_t at = text.find(", entry_computation_layout=");
  if (at == std::string::npos || at > text.find('\n')) return text;
  text.insert(at, fmt::format(", input_output_alias={{ {} }}", fmt::join(pairs, ", ")));
  return text;
}

std::map<std::string, double> entry_cost_analysis(const CompiledEntry& e) {
  return hlo::analyze_cost(analysed_module(e)).as_map();
}
std::string entry_cost_analysis_text(const CompiledEntry& e) { return hlo::analyze_cost(analysed_module(e)).str(); }

CompiledMemoryStats entry_memory_analysis(const CompiledEntry& e, const std::vector<int>& donate_argnums) {
  auto ba = hlo::assign_buffers(analysed_module(e), donated_parameters(e.key, donate_argnums));
  CompiledMemoryStats s;
  s.argument_size_in_bytes = ba.argument_size;
  s.output_size_in_bytes = ba.output_size;
  s.alias_size_in_bytes = ba.alias_size;
  s.temp_size_in_bytes = ba.temp_size;
  s.temp_unshared_size_in_bytes = ba.temp_values_total;
  return s;
}

std::vector<CompilePhase> entry_compile_phases(const CompiledEntry& e) {
  if (!e.exe) throw_error<RuntimeError>(e.name, "is not compiled yet");
  return e.phases;
}

std::string entry_serialize(const CompiledEntry& e, const std::vector<int>& donate_argnums) {
  if (!e.exe) throw_error<RuntimeError>(e.name, "is not compiled yet");
  auto& backend = runtime::Client::get().backend();
  if (!backend.can_serialize())
    throw_error<RuntimeError>("Compiled.serialize", "the {} backend cannot serialise executables (jitx serialises "
                              "the cpu backend's; set JITX_PLATFORM=cpu)", backend.name());
  runtime::CompileOptions co;
  co.donated_parameters = donated_parameters(e.key, donate_argnums);
  cache::Sections sections;
  sections[cache::kHloSection] = hlo::print_hlo(*e.optimized);
  sections[cache::kBackendSection] = backend.serialize(*e.exe);
  sections[kSignatureSection] = signature_section(e, co.donated_parameters);
  return cache::encode(cache::current_header(backend, *e.optimized, co), sections);
}

std::map<std::string, int64_t> entry_executable_stats(const CompiledEntry& e) {
  if (!e.exe) throw_error<RuntimeError>(e.name, "is not compiled yet");
  return e.exe->stats();
}
// --- imported modules (src/api/import.cpp): an entry made from a module rather than a trace ---
std::shared_ptr<CompiledEntry> make_module_entry(std::shared_ptr<hlo::Module> m, std::vector<ShapedArray> in_avals,
                                                 std::vector<ShapedArray> out_avals) {
  auto e = std::make_shared<CompiledEntry>();
  e->name = m->name;
  e->key.avals = std::move(in_avals);
  e->out_avals = std::move(out_avals);
  e->module = std::move(m);
  e->seq = g_module_seq++;
  return e;
}
void compile_module_entry(CompiledEntry& e) { JitCore::compile(e); }
const std::vector<ShapedArray>& entry_in_avals(const CompiledEntry& e) { return e.key.avals; }
const std::vector<ShapedArray>& entry_out_avals(const CompiledEntry& e) { return e.out_avals; }
const hlo::Module& entry_module(const CompiledEntry& e) { return *e.module; }
std::vector<Array> execute_module_entry(const CompiledEntry& e, const std::vector<Array>& args) {
  if (!e.exe) throw_error<RuntimeError>(e.name, "is not compiled yet");
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;
  for (auto& a : args) bufs.push_back(concrete_buffer(a, e.name));
  return execute_placed(*e.exe, bufs, e.out_avals, e.name,
                        {"arguments", [](size_t i) { return fmt::format("argument {}", i); }});
}

}  // namespace detail

LoadedExecutable deserialize_executable(std::string_view bytes) {
  using namespace detail;
  auto t0 = Clock::now();
  auto fail = [](const std::string& why) -> void { throw_error<RuntimeError>("deserialize_executable", "{}", why); };
  cache::Decoded d;
  try {
    d = cache::decode(bytes);
  } catch (const RuntimeError& err) {
    fail(err.what());
  }
  for (const char* s : {cache::kHloSection, cache::kBackendSection, kSignatureSection})
    if (!d.sections.count(s)) fail(fmt::format("the executable has no '{}' section", s));
  ByteReader r(d.sections[kSignatureSection], "the executable's signature");
  auto e = std::make_shared<CompiledEntry>();
  e->name = r.str();
  e->key.avals = read_avals(r);
  e->out_avals = read_avals(r);
  runtime::CompileOptions co;
  co.donated_parameters.resize(r.count(8));
  for (auto& p : co.donated_parameters) p = static_cast<int64_t>(r.u64());
  for (size_t k = 0; k < e->key.avals.size(); ++k) e->key.leaf_args.push_back(static_cast<int>(k));
  for (auto p : co.donated_parameters) e->donate_argnums.push_back(static_cast<int>(p));
  std::shared_ptr<hlo::Module> module = hlo::parse_hlo(d.sections[cache::kHloSection]);
  hlo::verify(*module);
  check_signature(*module, e->key.avals, e->out_avals, co.donated_parameters);
  double parse_ms = ms_since(t0);
  auto& backend = runtime::Client::get().backend();
  cache::ExecutableHeader now = cache::current_header(backend, *module, co);
  auto why = cache::incompatibilities(d.header, now, /*settings=*/false);
  if (!why.empty())
    fail(fmt::format("the executable '{}' cannot run in this process: {}", e->name, fmt::join(why, "; ")));
  // (The module text is covered by the file's checksum, and the backend checks that the code fits its plan.)
  co.serializable = true;
  e->exe = backend.deserialize(module, co, d.sections[cache::kBackendSection]);
  e->module = e->optimized = module;
  e->phases = {{"parse", parse_ms}};
  for (auto& [name, ms] : e->exe->compile_phases) e->phases.push_back({name, ms});
  e->compile_ms = ms_since(t0);
  return LoadedExecutable(e);
}

CompiledMemoryStats LoadedExecutable::memory_analysis() const {
  return detail::entry_memory_analysis(*e_, e_->donate_argnums);
}
std::string LoadedExecutable::serialize() const { return detail::entry_serialize(*e_, e_->donate_argnums); }
const std::vector<ShapedArray>& LoadedExecutable::in_avals() const { return e_->key.avals; }
const std::vector<ShapedArray>& LoadedExecutable::out_avals() const { return e_->out_avals; }

std::vector<Array> LoadedExecutable::call(const std::vector<Array>& args, const Loc& loc) const {
  using namespace detail;
  ApiScope s(loc);
  const auto& in = e_->key.avals;
  if (args.size() != in.size())
    throw_error<TypeError>(e_->name, "(a deserialised executable) takes {} arguments, got {}", in.size(),
                           args.size());
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].valid()) throw_error<TypeError>(e_->name, "argument {} is an empty Array", i);
    const ShapedArray a = args[i].aval();
    if (a.dtype != in[i].dtype || a.shape != in[i].shape)
      throw_error<TypeError>(e_->name, "(a deserialised executable) argument {}: expected {}, got {}", i,
                             in[i].str(), a.str());
    bufs.push_back(concrete_buffer(args[i], e_->name));
  }
  std::vector<uint8_t> donated(bufs.size(), 0);
  for (int p : e_->donate_argnums) donated[static_cast<size_t>(p)] = 1;
  auto out = execute_placed(*e_->exe, bufs, e_->out_avals, e_->name,
                            {"arguments", [](size_t i) { return fmt::format("argument {}", i); }}, donated);
  for (size_t i = 0; i < donated.size(); ++i)
    if (donated[i]) bufs[i]->deleted = true;
  return out;
}

std::string CompiledMemoryStats::str() const {
  return fmt::format(
      "CompiledMemoryStats(argument_size_in_bytes={}, output_size_in_bytes={}, alias_size_in_bytes={}, "
      "temp_size_in_bytes={}, generated_code_size_in_bytes={}) [temporaries unshared: {} bytes]",
      argument_size_in_bytes, output_size_in_bytes, alias_size_in_bytes, temp_size_in_bytes,
      generated_code_size_in_bytes, temp_unshared_size_in_bytes);
}
namespace detail {

}  // namespace detail
}  // namespace jitx
