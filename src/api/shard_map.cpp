// shard_map as a batch over the mesh's devices: the arguments' blocks are stacked along one device axis (row-major
// over the mesh axes) under a batch trace of size mesh.size(), f runs once on per-device tracers, and each
// collective is computed with ordinary ops over the stacked blocks (the axis viewed as the mesh's shape). The
// emitted ops are differentiable, batchable and jittable, so grad/vmap/jit of a shard_map need no rules of their own.
// An eager call (no trace) runs instead as a jitted program of the one shard_map, on the mesh's devices.
#include "jitx/shard_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>

#include "api/shard_map_internal.h"
#include "core/errors.h"
#include "core/trace.h"
#include "jitx/jit.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "primitives/collectives.h"
#include "transforms/batching.h"

namespace jitx {
namespace {

using detail::throw_error;

using detail::CollectiveScope;

std::string quoted_names(const std::vector<std::string>& v) {
  std::vector<std::string> q;
  for (auto& s : v) q.push_back("'" + s + "'");
  return fmt::format("[{}]", fmt::join(q, ", "));
}

/// The innermost shard_map binding every name (JAX's NameError: unbound axis name otherwise).
CollectiveScope& ctx_for(const std::vector<std::string>& names, std::string_view op) {
  if (names.empty()) throw_error<TypeError>(op, "expected at least one axis name, got none");
  const auto& st = detail::collective_scopes();
  auto has = [](const CollectiveScope& c, const std::string& n) {
    return std::find(c.axis_names.begin(), c.axis_names.end(), n) != c.axis_names.end();
  };
  for (auto it = st.rbegin(); it != st.rend(); ++it) {
    bool all = true;
    for (auto& n : names) all = all && has(**it, n);
    if (all) return **it;
  }
  std::vector<std::string> avail;
  for (auto* c : st)
    for (auto& n : c->axis_names) avail.push_back(n);
  for (auto& n : names) {
    bool bound = std::find(avail.begin(), avail.end(), n) != avail.end();
    if (!bound)
      throw_error<TypeError>(op,
                             "unbound axis name: {}. The following axis names (e.g. defined by shard_map) are "
                             "available to collective operations: {}",
                             n, quoted_names(avail));
  }
  throw_error<TypeError>(op, "axis names {} belong to different shard_maps; one collective needs one mesh",
                         quoted_names(names));
}

/// The group size of the names (each at most once).
int64_t group_size(const CollectiveScope& c, const std::vector<std::string>& names, std::string_view op) {
  int64_t n = 1;
  std::vector<std::string> seen;
  for (auto& a : names) {
    if (std::find(seen.begin(), seen.end(), a) != seen.end())
      throw_error<TypeError>(op, "axis name {} appears twice in {}", a, quoted_names(names));
    seen.push_back(a);
    auto d = std::find(c.axis_names.begin(), c.axis_names.end(), a) - c.axis_names.begin();
    n *= c.mesh_shape[static_cast<size_t>(d)];
  }
  return n;
}

void check_valid(const Array& x, std::string_view op) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
}

Array reduce(const char* prim, const Array& x, const lax::AxisNames& an, std::string_view op) {
  check_valid(x, op);
  CollectiveScope& c = ctx_for(an.names, op);
  group_size(c, an.names, op);
  return detail::bind_collective(
      prim, {x}, detail::Params{{"axes", detail::axes_text(an.names)}, {"axis_index_groups", std::string("None")}})[0];
}

}  // namespace

namespace lax {

Array psum(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  check_valid(x, "psum");
  // As JAX: a sum of bools counts them in int32; other dtypes keep theirs (int8 sums wrap in int8).
  return reduce("psum", x.dtype() == DType::bool_ ? x.astype(DType::int32) : x, a, "psum");
}
Array pmax(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  return reduce("pmax", x, a, "pmax");
}
Array pmin(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  return reduce("pmin", x, a, "pmin");
}
// As JAX: psum divided by the group size.
Array pmean(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  check_valid(x, "pmean");
  int64_t n = group_size(ctx_for(a.names, "pmean"), a.names, "pmean");
  // jnp's true division by the group size: integers and bools give float32 (int64 float64), as JAX's pmean.
  Array total = reduce("psum", x.dtype() == DType::bool_ ? x.astype(DType::int32) : x, a, "pmean");
  return numpy::true_divide(total, Array(n));
}

int64_t axis_size(const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  return group_size(ctx_for(a.names, "axis_size"), a.names, "axis_size");
}

Array axis_index(const std::string& name, Loc loc) {
  detail::ApiScope s(loc);
  ctx_for({name}, "axis_index");
  return detail::bind_collective("axis_index", {}, detail::Params{{"axis_name", detail::axes_text({name})}})[0];
}

Array all_gather(const Array& x, const AxisNames& a, int64_t axis, bool tiled, Loc loc) {
  detail::ApiScope s(loc);
  check_valid(x, "all_gather");
  int64_t n = group_size(ctx_for(a.names, "all_gather"), a.names, "all_gather");
  return detail::bind_collective("all_gather", {x},
                                 detail::Params{{"all_gather_dimension", axis},
                                                {"axis_name", detail::axes_text(a.names)},
                                                {"axis_size", n},
                                                {"tiled", tiled}})[0];
}

Array psum_scatter(const Array& x, const AxisNames& a, int64_t sd, bool tiled, Loc loc) {
  detail::ApiScope s(loc);
  check_valid(x, "psum_scatter");
  int64_t n = group_size(ctx_for(a.names, "psum_scatter"), a.names, "psum_scatter");
  return detail::bind_collective(
      "reduce_scatter", {x},
      detail::Params{
          {"axis_name", detail::axes_text(a.names)}, {"axis_size", n}, {"scatter_dimension", sd}, {"tiled", tiled}})[0];
}

Array all_to_all(const Array& x, const std::string& name, int64_t split, int64_t concat, bool tiled, Loc loc) {
  detail::ApiScope s(loc);
  check_valid(x, "all_to_all");
  int64_t n = group_size(ctx_for({name}, "all_to_all"), {name}, "all_to_all");
  return detail::bind_collective("all_to_all", {x},
                                 detail::Params{{"axis_name", detail::axes_text({name})},
                                                {"axis_size", n},
                                                {"concat_axis", concat},
                                                {"split_axis", split},
                                                {"tiled", tiled}})[0];
}

Array ppermute(const Array& x, const std::string& name, const std::vector<std::pair<int64_t, int64_t>>& perm, Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "ppermute";
  check_valid(x, op);
  int64_t n = group_size(ctx_for({name}, op), {name}, op);
  std::vector<bool> got(static_cast<size_t>(n), false), sent(static_cast<size_t>(n), false);
  std::vector<int64_t> flat;
  for (auto [src, dst] : perm) {
    if (src < 0 || src >= n || dst < 0 || dst >= n)
      throw_error<TypeError>(op, "perm pair ({}, {}) is out of range for axis '{}' of size {}", src, dst, name, n);
    if (sent[static_cast<size_t>(src)] || got[static_cast<size_t>(dst)])
      throw_error<TypeError>(op, "ppermute sources and destinations must be unique, got {}", fmt::join(perm, ", "));
    sent[static_cast<size_t>(src)] = got[static_cast<size_t>(dst)] = true;
    flat.push_back(src);
    flat.push_back(dst);
  }
  return detail::bind_collective("ppermute", {x},
                                 detail::Params{{"axis_name", detail::axes_text({name})}, {"perm", flat}})[0];
}

}  // namespace lax

namespace detail {

Dims check_spec(const Mesh& mesh, const PartitionSpec& spec, const ShapedArray& aval, size_t i, bool in) {
  const char* op = "shard_map";
  const char* which = in ? "in_specs" : "out_specs";
  const char* what = in ? "args" : "outputs";
  if (spec.size() > aval.shape.size())
    throw_error<ShapeError>(op,
                            "{} is {} which has length {}, but the passed {}[{}] has shape {}, which has rank {} "
                            "(and {} < {}). Entries in {} must be of length no greater than the number of axes "
                            "in the corresponding array",
                            which, spec.str(), spec.size(), what, i, aval.str(), aval.shape.size(), aval.shape.size(),
                            spec.size(), which);
  Dims d;
  std::set<int64_t> seen;
  for (size_t k = 0; k < aval.shape.size(); ++k) {
    d.axes.emplace_back();
    if (k >= spec.size()) continue;
    int64_t prod = 1;
    for (auto& name : spec.entries()[k].axes) {
      int64_t a = mesh.axis_index(name);
      if (a < 0)
        throw_error<TypeError>(op, "{} argument must refer to an axis of the mesh {}, but {}[{}] refers to '{}'", which,
                               mesh.str(), which, i, name);
      if (!seen.insert(a).second)
        throw_error<TypeError>(op, "{}[{}] = {} uses mesh axis '{}' twice", which, i, spec.str(), name);
      d.axes.back().push_back(a);
      prod *= mesh.shape()[static_cast<size_t>(a)];
    }
    if (in && aval.shape[k] % prod != 0)
      throw_error<ShapeError>(op,
                              "the passed {}[{}] of shape {}, corresponds to {} of value {}, which maps array axis "
                              "{} (of size {}) to mesh axes of total size {}, which does not evenly divide {}",
                              what, i, aval.str(), which, spec.str(), k, aval.shape[k], prod, aval.shape[k]);
  }
  return d;
}

/// The global x -> stacked blocks (mesh.size(), block...).
Array stack_blocks(const Mesh& mesh, const Array& x, const Dims& d) {
  auto k = static_cast<int64_t>(mesh.shape().size());
  Shape split;
  std::vector<int64_t> mesh_pos(static_cast<size_t>(k), -1);  // dim in `split` holding mesh axis a
  std::vector<int64_t> block_pos;
  Shape block;
  for (size_t i = 0; i < d.axes.size(); ++i) {
    int64_t prod = 1;
    for (int64_t a : d.axes[i]) {
      mesh_pos[static_cast<size_t>(a)] = static_cast<int64_t>(split.size());
      split.push_back(mesh.shape()[static_cast<size_t>(a)]);
      prod *= mesh.shape()[static_cast<size_t>(a)];
    }
    block_pos.push_back(static_cast<int64_t>(split.size()));
    block.push_back(x.shape()[i] / prod);
    split.push_back(x.shape()[i] / prod);
  }
  Array t = numpy::reshape(x, split);
  std::vector<int64_t> order, missing;
  for (int64_t a = 0; a < k; ++a)
    if (mesh_pos[static_cast<size_t>(a)] >= 0)
      order.push_back(mesh_pos[static_cast<size_t>(a)]);
    else
      missing.push_back(a);
  for (int64_t p : block_pos) order.push_back(p);
  t = numpy::transpose(t, order);
  if (!missing.empty()) t = numpy::expand_dims(t, missing);
  Shape full = mesh.shape();
  full.insert(full.end(), block.begin(), block.end());
  t = numpy::broadcast_to(t, full);
  Shape st{mesh.size()};
  st.insert(st.end(), block.begin(), block.end());
  return numpy::reshape(t, st);
}

/// Stacked blocks (mesh.size(), block...) -> the global result (unnamed mesh axes: the first device's block).
Array assemble(const Mesh& mesh, const Array& stacked, const Dims& d) {
  auto k = static_cast<int64_t>(mesh.shape().size());
  Shape s = mesh.shape();
  s.insert(s.end(), stacked.shape().begin() + 1, stacked.shape().end());
  Array m = numpy::reshape(stacked, s);
  std::vector<bool> used(static_cast<size_t>(k), false);
  for (auto& v : d.axes)
    for (int64_t a : v) used[static_cast<size_t>(a)] = true;
  std::vector<int64_t> pos(static_cast<size_t>(k), -1);  // mesh axis -> dim after dropping unused ones
  int64_t kept = 0;
  for (int64_t a = k - 1; a >= 0; --a)
    if (!used[static_cast<size_t>(a)]) m = numpy::squeeze(lax::slice_in_dim(m, 0, 1, 1, a), numpy::Axes{a});
  for (int64_t a = 0; a < k; ++a)
    if (used[static_cast<size_t>(a)]) pos[static_cast<size_t>(a)] = kept++;
  std::vector<int64_t> order;
  Shape out;
  for (size_t i = 0; i < d.axes.size(); ++i) {
    int64_t sz = m.shape()[static_cast<size_t>(kept) + i];
    for (int64_t a : d.axes[i]) {
      order.push_back(pos[static_cast<size_t>(a)]);
      sz *= mesh.shape()[static_cast<size_t>(a)];
    }
    order.push_back(kept + static_cast<int64_t>(i));
    out.push_back(sz);
  }
  return numpy::reshape(numpy::transpose(m, order), out);
}

std::vector<Array> shard_map_expand(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                    const std::vector<PartitionSpec>& out_specs, const ShardMapFn& f,
                                    const std::vector<Array>& args) {
  std::vector<Array> stacked;
  for (size_t i = 0; i < args.size(); ++i)
    stacked.push_back(stack_blocks(mesh, args[i], check_spec(mesh, in_specs[i], args[i].aval(), i, true)));
  auto trace = std::make_shared<ShardMapTrace>();
  trace->fn_name = "shard_map";
  trace->axis_size = mesh.size();
  trace->mesh_shape = mesh.shape();
  trace->axis_names = mesh.axis_names();
  CollectiveScope ctx{mesh.shape(), mesh.axis_names(), trace};
  std::vector<Array> outs;
  {
    CollectiveScopeGuard g(&ctx);
    TraceScope scope(ctx.trace);
    std::vector<Array> ins;
    for (auto& a : stacked) ins.push_back(ctx.trace->make_tracer(a, 0));
    for (auto& o : f(ins)) {
      if (!o.valid()) throw_error<TypeError>("shard_map", "the function returned an empty Array");
      auto [v, d] = ctx.trace->unpack(o);
      outs.push_back(batch_at(v, d, mesh.size(), 0));
    }
  }
  if (outs.size() != out_specs.size())
    throw_error<TypeError>("shard_map", "out_specs has {} entries, but the function returned {} results",
                           out_specs.size(), outs.size());
  std::vector<Array> res;
  for (size_t i = 0; i < outs.size(); ++i) {
    ShapedArray block = outs[i].aval();
    block.shape.erase(block.shape.begin());
    Dims d = check_spec(mesh, out_specs[i], block, i, false);
    res.push_back(assemble(mesh, outs[i], d));
  }
  return res;
}

}  // namespace detail

ShardMapFn shard_map(ShardMapFn f, Mesh mesh, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs,
                     bool check_rep, Loc loc) {
  // Eager calls run as a jitted program of the one shard_map, on the mesh's devices (compiled once per signature).
  using EagerJit = decltype(jit(std::declval<ShardMapFn>(), JitOptions{}));
  struct Eager {
    std::once_flag once;
    std::unique_ptr<EagerJit> fn;
  };
  auto eager = std::make_shared<Eager>();
  auto self = std::make_shared<ShardMapFn>();
  *self = [f = std::move(f), mesh = std::move(mesh), in_specs = std::move(in_specs), out_specs = std::move(out_specs),
           check_rep, loc, weak_eager = std::weak_ptr<Eager>(eager),
           weak = std::weak_ptr<ShardMapFn>(self)](const std::vector<Array>& args) {
    detail::ApiScope s(loc);
    if (args.size() != in_specs.size())
      throw_error<TypeError>("shard_map", "in_specs has {} entries, but the function was called with {} arguments",
                             in_specs.size(), args.size());
    for (size_t i = 0; i < args.size(); ++i)
      if (!args[i].valid()) throw_error<TypeError>("shard_map", "args[{}] is an empty (default-constructed) Array", i);
    // Under jit/make_jaxpr (an ambient jaxpr trace on top): one shard_map equation holding the body's jaxpr.
    // Otherwise (eager, vmap, grad): the body runs over the stacked blocks of every device.
    detail::Trace* top = detail::find_top_trace(args, "shard_map");
    if (top && top->ambient && dynamic_cast<detail::JaxprTrace*>(top))
      return detail::bind_shard_map(mesh, in_specs, out_specs, f, args, check_rep);
    if (!top && !detail::tracing_active())
      if (auto me = weak.lock(); auto eager = weak_eager.lock()) {
        std::call_once(eager->once, [&] {
          JitOptions o;
          o.name = "shard_map";
          eager->fn = std::make_unique<EagerJit>(jit(*me, o));
        });
        return (*eager->fn)(args);
      }
    if (check_rep) detail::check_shard_map(mesh, in_specs, out_specs, f, args);
    return detail::shard_map_expand(mesh, in_specs, out_specs, f, args);
  };
  // The returned function owns the body and the eager jit; they only point back weakly (no cycle: both are freed
  // with it).
  return [self, eager](const std::vector<Array>& args) { return (*self)(args); };
}

std::function<Array(const Array&)> shard_map(std::function<Array(const Array&)> f, Mesh mesh, PartitionSpec in_spec,
                                             PartitionSpec out_spec, bool check_rep, Loc loc) {
  ShardMapFn g = shard_map([f = std::move(f)](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; },
                           std::move(mesh), {std::move(in_spec)}, {std::move(out_spec)}, check_rep, loc);
  return [g](const Array& x) { return g({x})[0]; };
}

}  // namespace jitx
