// The primitive registry and bind (the one dispatch point).
#include "core/primitive.h"

#include <map>

#include "core/trace.h"

namespace jitx::detail {
namespace {
std::map<std::string, std::unique_ptr<Primitive>, std::less<>>& registry() {
  static auto* r = new std::map<std::string, std::unique_ptr<Primitive>, std::less<>>();
  return *r;
}
}  // namespace

const Primitive& register_primitive(Primitive p) {
  // Every result type is checked once, here, whatever the rule: no dimension negative, no element count or byte
  // size that overflows int64, no invalid dtype (a later kernel would read a wrapped size's buffer).
  if (p.abstract_eval)
    p.abstract_eval = [rule = std::move(p.abstract_eval), name = p.name, arity = p.num_operands](
                          std::span<const ShapedArray> in, const Params& params) {
      if (arity >= 0 && static_cast<int64_t>(in.size()) != arity)
        throw_error<TypeError>(name, "takes {} operand{}, got {}", arity, arity == 1 ? "" : "s", in.size());
      std::vector<ShapedArray> out = rule(in, params);
      check_avals(out, name);
      return out;
    };
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

namespace {
EagerEvalFn& eager_evaluator() {
  static EagerEvalFn fn = nullptr;
  return fn;
}
}  // namespace

void set_eager_evaluator(EagerEvalFn fn) { eager_evaluator() = fn; }

std::vector<Array> bind(const Primitive& p, std::vector<Array> inputs, const Params& params) {
  if (Trace* t = find_top_trace(inputs, p.name)) return t->process_primitive(p, inputs, params);
  EagerEvalFn eager = eager_evaluator();
  JITX_ASSERT(eager, "bind({}): no eager evaluator is installed (dispatch/eager.cpp sets it at start-up)", p.name);
  return eager(p, inputs, params);
}

}  // namespace jitx::detail
