// The primitive registry, bind (the one dispatch point) and eager evaluation of single primitives.
#include <map>
#include <mutex>
#include <unordered_map>

#include "core/trace.h"
#include "lowering/lower.h"
#include "primitives/primitive.h"
#include "runtime/runtime.h"

namespace jitx::detail {
namespace {
std::map<std::string, std::unique_ptr<Primitive>, std::less<>>& registry() {
  static auto* r = new std::map<std::string, std::unique_ptr<Primitive>, std::less<>>();
  return *r;
}
}  // namespace

const Primitive& register_primitive(Primitive p) {
  auto& r = registry();
  JITX_ASSERT(!r.count(p.name), "primitive {} registered twice", p.name);
  auto name = p.name;
  auto [it, ok] = r.emplace(name, std::make_unique<Primitive>(std::move(p)));
  return *it->second;
}

const Primitive* find_primitive(std::string_view name) {
  auto& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : it->second.get();
}

const Primitive& primitive(std::string_view name) {
  const Primitive* p = find_primitive(name);
  JITX_ASSERT(p, "primitive {} is not registered", name);
  return *p;
}

std::vector<const Primitive*> all_primitives() {
  std::vector<const Primitive*> out;
  for (auto& [k, v] : registry()) out.push_back(v.get());
  return out;
}

std::vector<Array> bind(const Primitive& p, std::vector<Array> inputs, const Params& params) {
  Trace* t = find_top_trace(inputs, p.name);
  if (!t) return eval_primitive(p, inputs, params);
  return t->process_primitive(p, inputs, params);
}

// --- eager evaluation ------------------------------------------------------------------------------
namespace {
struct EagerKey {
  const Primitive* prim;
  Params params;
  std::vector<ShapedArray> in_avals;
  bool operator==(const EagerKey& o) const { return prim == o.prim && params == o.params && in_avals == o.in_avals; }
};
struct EagerKeyHash {
  size_t operator()(const EagerKey& k) const {
    size_t h = hash_combine(std::hash<const void*>{}(k.prim), k.params.hash());
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
};
}  // namespace

std::vector<Array> eval_primitive(const Primitive& p, std::span<const Array> inputs, const Params& params) {
  static std::mutex mu;
  static std::unordered_map<EagerKey, EagerEntry, EagerKeyHash> cache;
  EagerKey key{&p, params, {}};
  for (auto& a : inputs) key.in_avals.push_back(a.aval());
  // Validate (and compute result types) before touching any buffer, so errors come first.
  std::vector<ShapedArray> out_avals = p.abstract_eval(key.in_avals, params);
  std::vector<std::shared_ptr<runtime::Buffer>> args;
  for (auto& a : inputs) args.push_back(concrete_buffer(a, p.name));

  EagerEntry entry;
  // Params holding jaxprs are keyed by pointer: caching them would only grow the cache, never hit.
  bool cacheable = true;
  for (auto& [k, v] : params.items())
    if (std::holds_alternative<std::shared_ptr<const ClosedJaxpr>>(v) || std::holds_alternative<JaxprList>(v))
      cacheable = false;
  if (cacheable) {
    std::lock_guard<std::mutex> l(mu);
    auto it = cache.find(key);
    if (it != cache.end()) entry = it->second;
  }
  if (!entry.exe) {
    ClosedJaxpr cj;
    Eqn eqn;
    eqn.prim = &p;
    eqn.params = params;
    for (auto& av : key.in_avals) {
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
    auto module = lower_jaxpr(cj, "eager_" + p.name);
    entry.exe = runtime::Client::get().backend().compile(module);
    entry.out_avals = out_avals;
    std::lock_guard<std::mutex> l(mu);
    if (cacheable) cache.emplace(key, entry);
  }
  runtime::Placement at = runtime::place(args);
  if (at.second >= 0)
    throw_error<RuntimeError>(p.name, "got operands committed to different devices: operand {} is on {}, operand {} "
                              "is on {} (device_put them onto one device)", at.first, args[at.first]->device->str(),
                              at.second, args[at.second]->device->str());
  auto outs = entry.exe->execute(args, at.device);
  if (at.committed)
    for (auto& o : outs) o->committed = true;
  std::vector<Array> result;
  for (size_t i = 0; i < outs.size(); ++i) result.push_back(make_concrete(outs[i], out_avals[i].weak_type));
  return result;
}

// --- helpers -----------------------------------------------------------------------------------------
int64_t canonical_axis(int64_t axis, int64_t rank, std::string_view op) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1) || (rank == 0))
    throw_error<ShapeError>(op, "axis {} is out of bounds for an array of rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::string avals_str(std::span<const ShapedArray> avals) {
  std::vector<std::string> s;
  for (auto& a : avals) s.push_back(a.str());
  return fmt::format("{}", fmt::join(s, ", "));
}

hlo::Shape hlo_shape(const ShapedArray& a) { return hlo::Shape(a.dtype, a.shape); }

}  // namespace jitx::detail
