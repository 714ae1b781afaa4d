// Eager ops on sharded arrays run as partitioned programs (dispatch/eager.h's sharded evaluator), so their results
// are sharded, as JAX's eager ops' are: x * 2 of an array split over four devices is split the same way, and a sum
// over the split axis is replicated on them. One program per (primitive, params, operand types and shardings).
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "api/jit_spmd.h"
#include "core/jaxpr.h"
#include "dispatch/eager.h"
#include "lowering/lower.h"
#include "runtime/sharded.h"

namespace jitx::detail {
namespace {

struct Programs {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<SpmdProgram>> by_key;  // null: this call cannot run partitioned
  static constexpr size_t kMax = 256;                          // dropped wholesale past this (rebuilt on demand)
};
Programs& programs() {
  static Programs* p = new Programs;  // leaked: outlives static destruction, as the eager cache
  return *p;
}

std::string program_key(const Primitive& p, std::span<const Array> inputs, const Params& params) {
  std::string key = p.name + "|" + params.str();
  for (const Array& a : inputs) {
    key += "|" + a.aval().str() + (a.weak_type() ? "w" : "");
    if (a.impl()->is_sharded()) key += "@" + static_cast<const ShardedArray&>(*a.impl()).sharding->str();
  }
  return key;
}

std::optional<std::vector<Array>> eval_sharded(const Primitive& p, std::span<const Array> inputs,
                                               const Params& params) {
  std::vector<ShapedArray> in_avals;
  for (const Array& a : inputs) in_avals.push_back(a.aval());
  std::vector<ShapedArray> out_avals = p.abstract_eval(in_avals, params);
  bool cacheable = params_cacheable(params);  // otherwise built per call
  std::string key = cacheable ? program_key(p, inputs, params) : std::string();
  Programs& ps = programs();
  std::shared_ptr<SpmdProgram> prog;
  bool known = false;
  if (cacheable) {
    std::lock_guard<std::mutex> l(ps.mu);
    if (auto it = ps.by_key.find(key); it != ps.by_key.end()) prog = it->second, known = true;
  }
  if (!known) {
    auto module = lower_jaxpr(one_equation_jaxpr(p, params, in_avals, out_avals), "eager_" + p.name);
    std::string why;
    prog = make_spmd_program(*module, inputs, {}, {}, &why);
    if (cacheable) {
      std::lock_guard<std::mutex> l(ps.mu);
      if (ps.by_key.size() >= Programs::kMax) ps.by_key.clear();
      ps.by_key.emplace(key, prog);
    }
  }
  if (!prog) return std::nullopt;
  return run_spmd(*prog, inputs, out_avals);
}

const bool kInstalled = (set_sharded_evaluator(&eval_sharded), true);

}  // namespace
}  // namespace jitx::detail
