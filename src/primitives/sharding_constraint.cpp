// sharding_constraint: the identity in value, with a sharding; linear (JVP and transpose constrain the tangent and
// the cotangent alike), batched with an unsplit batch dimension.
#include "primitives/sharding_constraint.h"

#include <map>
#include <mutex>

#include "core/errors.h"
#include "core/primitive.h"
#include "hlo/ir/collectives.h"
#include "lowering/lower_ctx.h"
#include "runtime/sharded.h"
#include "transforms/ad.h"

namespace jitx::detail {

namespace {

std::mutex& table_mu() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<const Sharding>>& table() {
  static std::map<std::string, std::shared_ptr<const Sharding>> t;
  return t;
}
/// A key naming the sharding and its devices (two meshes of the same shape over other devices differ).
std::string key_of(const Sharding& s) {
  std::string k = s.str();
  for (auto& d : s.device_set()) {
    k += ' ';
    k += d.str();
  }
  return k;
}
std::string intern(const Sharding& s) {
  std::string k = key_of(s);
  std::lock_guard<std::mutex> l(table_mu());
  table().emplace(k, std::make_shared<const Sharding>(s));
  return k;
}

/// The sharding with an unsplit dimension inserted at `dim` (a vmapped operand's batch dimension).
Sharding with_unsplit_dim(const Sharding& s, int64_t dim) {
  const NamedSharding* n = s.named();
  if (!n) return s;
  auto entries = n->spec().entries();
  if (dim > static_cast<int64_t>(entries.size())) return s;
  entries.insert(entries.begin() + dim, PartitionSpec::Entry(nullptr));
  return NamedSharding(n->mesh(), PartitionSpec::from_entries(entries));
}

const Primitive& sharding_constraint_p() {
  static const Primitive& p = []() -> const Primitive& {
    Primitive q;
    q.name = "sharding_constraint";
    q.num_operands = 1;
    q.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const Sharding& s = constraint_sharding(ps);
      if (auto* n = s.named(); n && n->spec().size() > in[0].shape.size())
        throw_error<ShapeError>("with_sharding_constraint", "{} is only valid for values of rank at least {}, got {}",
                                s.str(), n->spec().size(), in[0].str());
      return std::vector<ShapedArray>{in[0]};
    };
    // In HLO the constraint is the value's `sharding` attribute (device ids; jit maps them to partition ids): the
    // partitioner reshards the value there. A parameter's sharding is its argument's, so a constraint on an argument
    // itself is left to in_shardings.
    q.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      if (a[0]->opcode != hlo::Opcode::kParameter)
        hlo::set_sharding(*a[0], tiling_of(constraint_sharding(c.params), c.in_avals[0].ndim()));
      return std::vector<hlo::Instruction*>{a[0]};
    };
    q.jvp = linear_jvp("sharding_constraint");
    q.transpose = [](std::span<const Array> ct, std::span<const LinearArg>, const Params& ps) {
      if (!ct[0].valid()) return std::vector<Array>{Array()};
      return std::vector<Array>{bind_sharding_constraint(ct[0], constraint_sharding(ps))};
    };
    q.batch = [](std::span<const Array> args, std::span<const int64_t> bdims, const Params& ps) {
      Sharding s = bdims[0] < 0 ? constraint_sharding(ps) : with_unsplit_dim(constraint_sharding(ps), bdims[0]);
      return std::make_pair(std::vector<Array>{bind_sharding_constraint(args[0], s)}, std::vector<int64_t>{bdims[0]});
    };
    return register_primitive(std::move(q));
  }();
  return p;
}
// Registered at start-up, so that jaxprs naming it parse and the primitive list knows it.
const bool kShardingConstraintRegistered = (sharding_constraint_p(), true);

}  // namespace

const Sharding& constraint_sharding(const Params& params) {
  const std::string& k = params.get_str("sharding");
  std::lock_guard<std::mutex> l(table_mu());
  auto it = table().find(k);
  JITX_ASSERT(it != table().end(), "sharding_constraint names an unknown sharding {}", k);
  return *it->second;
}

Array bind_sharding_constraint(const Array& x, const Sharding& sharding) {
  return bind1(sharding_constraint_p(), {x}, Params{{"sharding", intern(sharding)}});
}

}  // namespace jitx::detail
