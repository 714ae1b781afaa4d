// Eager evaluation: a primitive on concrete arrays runs through a cached single-op executable.
#include "dispatch/eager.h"

#include <algorithm>
#include <atomic>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <unordered_map>

#include "core/host_callback.h"
#include "core/log.h"
#include "jitx/floating_point_error.h"
#include "core/trace.h"
#include "jitx/config.h"
#include "runtime/concrete.h"
#include "dispatch/execute.h"
#include "lowering/lower.h"
#include "runtime/runtime.h"

namespace jitx::detail {
namespace {
struct EagerKey {
  const Primitive* prim;
  Params params;
  std::vector<ShapedArray> in_avals;
  bool x64 = true;  // config().enable_x64: keyed so that flipping it compiles afresh
  bool operator==(const EagerKey& o) const {
    return prim == o.prim && params == o.params && in_avals == o.in_avals && x64 == o.x64;
  }
};
struct EagerKeyHash {
  size_t operator()(const EagerKey& k) const {
    size_t h = hash_combine(hash_combine(std::hash<const void*>{}(k.prim), k.params.hash()), k.x64);
    for (auto& a : k.in_avals) {
      h = hash_combine(h, static_cast<size_t>(a.dtype) * 2 + a.weak_type);
      for (auto d : a.shape) h = hash_combine(h, static_cast<size_t>(d));
    }
    return h;
  }
};
struct EagerEntry {
  std::shared_ptr<runtime::Executable> exe;
  std::vector<ShapedArray> out_avals;
  uint64_t last_use = 0;  // the cache's clock at the latest lookup
};

struct EagerCache {
  std::mutex mu;
  std::unordered_map<EagerKey, EagerEntry, EagerKeyHash> entries;
  uint64_t clock = 0;
  size_t evictions = 0;

  /// With mu held: drops least recently used executables until one more fits under config().eager_cache_size.
  void evict_for_one_more() {
    size_t limit = std::max<size_t>(1, config().eager_cache_size);
    while (entries.size() >= limit) {
      auto victim = entries.begin();
      for (auto it = entries.begin(); it != entries.end(); ++it)
        if (it->second.last_use < victim->second.last_use) victim = it;
      if (config().log_compiles)
        log_line(fmt::format("[jitx] Evicted the eager executable of '{}' for ({}) (limit {} entries, "
                             "JITX_EAGER_CACHE_SIZE)", victim->first.prim->name, avals_str(victim->first.in_avals),
                             limit));
      entries.erase(victim);
      ++evictions;
    }
  }
};
EagerCache& eager_cache() {
  static auto* c = new EagerCache();  // never destroyed: executables may run while the process exits
  return *c;
}
}  // namespace

size_t eager_cache_evictions() {
  std::lock_guard<std::mutex> l(eager_cache().mu);
  return eager_cache().evictions;
}
size_t eager_cache_size() {
  std::lock_guard<std::mutex> l(eager_cache().mu);
  return eager_cache().entries.size();
}

namespace {
/// A host callback run eagerly: the function on the inputs' values, now (nothing to compile).
std::vector<Array> eval_host_callback(const Primitive& p, std::span<const Array> inputs, const Params& params) {
  std::vector<ShapedArray> in_avals;
  for (auto& a : inputs) in_avals.push_back(a.aval());
  (void)p.abstract_eval(in_avals, params);
  std::vector<Literal> args;
  for (auto& a : inputs) args.push_back(a.impl()->host_literal(p.name));
  std::vector<Array> out;
  for (auto& l : call_host_callback(params.get_int("callback_id"), std::move(args)))
    out.push_back(make_concrete(runtime::Buffer::from_literal(l, runtime::Client::get().default_device())));
  return out;
}
}  // namespace

std::optional<std::string> find_nan_or_inf(std::span<const Array> outs) {
  bool nans = config().debug_nans, infs = config().debug_infs;
  for (auto& a : outs) {
    if (!a.valid() || a.is_tracer() || !is_floating(a.dtype())) continue;
    Literal l = a.impl()->host_literal("debug_nans");
    for (int64_t i = 0, n = l.size(); i < n; ++i) {
      double v = l.get_f64(i);
      if (nans && std::isnan(v)) return "nan";
      if (infs && std::isinf(v)) return "inf";
    }
  }
  return std::nullopt;
}

bool params_cacheable(const Params& params) {
  for (auto& [k, v] : params.items())
    if (std::holds_alternative<std::shared_ptr<const ClosedJaxpr>>(v) || std::holds_alternative<JaxprList>(v) ||
        std::holds_alternative<std::shared_ptr<const OpaqueParam>>(v))
      return false;
  return true;
}

ClosedJaxpr one_equation_jaxpr(const Primitive& p, const Params& params, std::span<const ShapedArray> in_avals,
                               std::span<const ShapedArray> out_avals) {
  ClosedJaxpr cj;
  Eqn eqn;
  eqn.prim = &p;
  eqn.params = params;
  for (auto& av : in_avals) {
    Var v = new_var(av);
    cj.jaxpr.invars.push_back(v);
    eqn.inputs.push_back(Atom::of(v));
  }
  for (auto& av : out_avals) {
    Var v = new_var(av);
    eqn.outputs.push_back(v);
    cj.jaxpr.outvars.push_back(Atom::of(v));
  }
  cj.jaxpr.eqns.push_back(std::move(eqn));
  return cj;
}

namespace {
std::atomic<ShardedEvalFn> g_sharded_evaluator{nullptr};
}  // namespace

void set_sharded_evaluator(ShardedEvalFn fn) { g_sharded_evaluator.store(fn); }

std::vector<Array> eval_primitive(const Primitive& p, std::span<const Array> inputs, const Params& params) {
  if (p.name == "debug_callback") return eval_host_callback(p, inputs, params);
  std::vector<Array> outs;
  if (p.name == "pure_callback") {  // its results are checked below too: JAX names pure_callback for its NaN
    outs = eval_host_callback(p, inputs, params);
  } else {
    std::optional<std::vector<Array>> sharded;
    if (ShardedEvalFn fn = g_sharded_evaluator.load())
      if (std::any_of(inputs.begin(), inputs.end(), [](const Array& a) { return a.valid() && a.impl()->is_sharded(); }))
        sharded = fn(p, inputs, params);
    outs = sharded ? std::move(*sharded) : eval_primitive_compiled(p, inputs, params);
  }
  if (config().debug_nans || config().debug_infs) [[unlikely]]
    if (auto what = find_nan_or_inf(outs))
      throw_error<FloatingPointError>(p.name, "invalid value ({}) encountered in {}", *what, p.name);
  return outs;
}

std::vector<Array> eval_primitive_compiled(const Primitive& p, std::span<const Array> inputs, const Params& params) {
  EagerCache& cache = eager_cache();
  EagerKey key{&p, params, {}, config().enable_x64};
  for (auto& a : inputs) key.in_avals.push_back(a.aval());
  // Validate (and compute result types) before touching any buffer, so errors come first.
  std::vector<ShapedArray> out_avals = p.abstract_eval(key.in_avals, params);
  std::vector<std::shared_ptr<runtime::Buffer>> args;
  for (auto& a : inputs) args.push_back(concrete_buffer(a, p.name));

  EagerEntry entry;
  bool cacheable = params_cacheable(params);
  if (cacheable) {
    std::lock_guard<std::mutex> l(cache.mu);
    auto it = cache.entries.find(key);
    if (it != cache.entries.end()) {
      it->second.last_use = ++cache.clock;
      entry = it->second;
    }
  }
  if (!entry.exe) {
    auto module = lower_jaxpr(one_equation_jaxpr(p, params, key.in_avals, out_avals), "eager_" + p.name);
    entry.exe = runtime::Client::get().backend().compile(module);
    entry.out_avals = out_avals;
    std::lock_guard<std::mutex> l(cache.mu);
    if (cacheable && !cache.entries.count(key)) {
      cache.evict_for_one_more();
      entry.last_use = ++cache.clock;
      cache.entries.emplace(key, entry);
    }
  }
  return execute_placed(*entry.exe, args, out_avals, p.name,
                        {"operands", [](size_t i) { return fmt::format("operand {}", i); }});
}


namespace {
// Installs eval_primitive as bind's evaluator for primitives no trace claims.
const bool eager_installed = (set_eager_evaluator(&eval_primitive), true);
}  // namespace

}  // namespace jitx::detail
