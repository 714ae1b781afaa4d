// shard_map as a batch over the mesh's devices: the arguments' blocks are stacked along one device axis (row-major
// over the mesh axes) under a batch trace of size mesh.size(), f runs once on per-device tracers, and each
// collective is computed with ordinary ops over the stacked blocks (the axis viewed as the mesh's shape). The
// emitted ops are differentiable, batchable and jittable, so grad/vmap/jit of a shard_map need no rules of their own.
#include "jitx/shard_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <set>

#include "core/errors.h"
#include "core/trace.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "transforms/batching.h"

namespace jitx {
namespace {

using detail::BatchTrace;
using detail::throw_error;

/// One active shard_map on this thread.
struct Ctx {
  Mesh mesh;
  std::shared_ptr<BatchTrace> trace;
};
thread_local std::vector<Ctx*> g_stack;

struct CtxGuard {
  explicit CtxGuard(Ctx* c) { g_stack.push_back(c); }
  ~CtxGuard() { g_stack.pop_back(); }
  CtxGuard(const CtxGuard&) = delete;
  CtxGuard& operator=(const CtxGuard&) = delete;
};

std::string names_str(const std::vector<std::string>& v) {
  std::vector<std::string> q;
  for (auto& s : v) q.push_back("'" + s + "'");
  return fmt::format("[{}]", fmt::join(q, ", "));
}

/// The innermost shard_map binding every name (JAX's NameError: unbound axis name otherwise).
Ctx& ctx_for(const std::vector<std::string>& names, std::string_view op) {
  if (names.empty()) throw_error<TypeError>(op, "expected at least one axis name, got none");
  for (auto it = g_stack.rbegin(); it != g_stack.rend(); ++it) {
    bool all = true;
    for (auto& n : names) all = all && (*it)->mesh.axis_index(n) >= 0;
    if (all) return **it;
  }
  std::vector<std::string> avail;
  for (auto* c : g_stack)
    for (auto& n : c->mesh.axis_names()) avail.push_back(n);
  for (auto& n : names) {
    bool bound = std::find(avail.begin(), avail.end(), n) != avail.end();
    if (!bound)
      throw_error<TypeError>(op, "unbound axis name: {}. The following axis names (e.g. defined by shard_map) are "
                                 "available to collective operations: {}",
                             n, names_str(avail));
  }
  throw_error<TypeError>(op, "axis names {} belong to different shard_maps; one collective needs one mesh",
                         names_str(names));
}

std::vector<int64_t> mesh_dims(const Ctx& c, const std::vector<std::string>& names, std::string_view op) {
  std::vector<int64_t> j;
  for (auto& n : names) {
    int64_t d = c.mesh.axis_index(n);
    if (std::find(j.begin(), j.end(), d) != j.end())
      throw_error<TypeError>(op, "axis name {} appears twice in {}", n, names_str(names));
    j.push_back(d);
  }
  return j;
}

int64_t group_size(const Ctx& c, const std::vector<int64_t>& j) {
  int64_t n = 1;
  for (int64_t d : j) n *= c.mesh.shape()[static_cast<size_t>(d)];
  return n;
}

/// x as the stacked blocks viewed over the mesh: shape (mesh.shape..., block...).
Array to_mesh(const Ctx& c, const Array& x, std::string_view op) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (x.is_tracer()) {
    auto& t = static_cast<const detail::Tracer&>(*x.impl());
    if (t.trace.get() != c.trace.get() && t.trace->level > c.trace->level)
      throw_error<TypeError>(op, "a collective inside a transformation nested in shard_map's body ({} inside f) is "
                                 "not supported yet; apply the transformation outside shard_map",
                             t.trace->fn_name);
  }
  auto [v, d] = c.trace->unpack(x);
  Array stacked = detail::batch_at(v, d, c.mesh.size(), 0);
  Shape s = c.mesh.shape();
  for (size_t i = 1; i < stacked.shape().size(); ++i) s.push_back(stacked.shape()[i]);
  return numpy::reshape(stacked, s);
}

Array from_mesh(const Ctx& c, const Array& m) {
  Shape s{c.mesh.size()};
  for (size_t i = c.mesh.shape().size(); i < m.shape().size(); ++i) s.push_back(m.shape()[i]);
  return c.trace->make_tracer(numpy::reshape(m, s), 0);
}

int64_t check_axis(int64_t a, int64_t rank, std::string_view op, std::string_view what) {
  if (a < 0) a += rank;
  if (a < 0 || a >= rank) throw_error<ShapeError>(op, "{} {} is out of range for a block of rank {}", what, a, rank);
  return a;
}

enum class Red { kSum, kMax, kMin };

Array preduce(const Array& x, const lax::AxisNames& an, Red r, std::string_view op) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  Ctx& c = ctx_for(an.names, op);
  auto j = mesh_dims(c, an.names, op);
  Array m = to_mesh(c, x, op);
  Array red = r == Red::kSum   ? numpy::sum(m, j, true)
              : r == Red::kMax ? numpy::max(m, j, true)
                               : numpy::min(m, j, true);
  return from_mesh(c, numpy::broadcast_to(red, m.shape()));
}

/// The dims of a rank-n array listed in `order`, as a permutation (for transpose).
Array permute(const Array& x, const std::vector<int64_t>& order) { return numpy::transpose(x, order); }

}  // namespace

namespace lax {

Array psum(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  return preduce(x, a, Red::kSum, "psum");
}
Array pmax(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  return preduce(x, a, Red::kMax, "pmax");
}
Array pmin(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  return preduce(x, a, Red::kMin, "pmin");
}
Array pmean(const Array& x, const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  Ctx& c = ctx_for(a.names, "pmean");
  int64_t n = group_size(c, mesh_dims(c, a.names, "pmean"));
  return preduce(x, a, Red::kSum, "pmean") / static_cast<double>(n);
}

int64_t axis_size(const AxisNames& a, Loc loc) {
  detail::ApiScope s(loc);
  Ctx& c = ctx_for(a.names, "axis_size");
  return group_size(c, mesh_dims(c, a.names, "axis_size"));
}

Array axis_index(const std::string& name, Loc loc) {
  detail::ApiScope s(loc);
  Ctx& c = ctx_for({name}, "axis_index");
  int64_t j = c.mesh.axis_index(name);
  const Shape& ms = c.mesh.shape();
  Shape one(ms.size(), 1);
  one[static_cast<size_t>(j)] = ms[static_cast<size_t>(j)];
  Array iota = numpy::reshape(arange(ms[static_cast<size_t>(j)], DType::int32), one);
  return from_mesh(c, numpy::broadcast_to(iota, ms));
}

Array all_gather(const Array& x, const AxisNames& a, int64_t axis, bool tiled, Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "all_gather";
  Ctx& c = ctx_for(a.names, op);
  auto j = mesh_dims(c, a.names, op);
  int64_t n = group_size(c, j);
  Array m = to_mesh(c, x, op);
  auto k = static_cast<int64_t>(c.mesh.shape().size());
  int64_t b = m.ndim() - k;
  if (tiled) {
    axis = check_axis(axis, b, op, "axis");
  } else {
    if (axis < 0) axis += b + 1;
    if (axis < 0 || axis > b) throw_error<ShapeError>(op, "axis {} is out of range for a block of rank {}", axis, b);
  }
  std::vector<int64_t> order;
  for (int64_t d = 0; d < k; ++d)
    if (std::find(j.begin(), j.end(), d) == j.end()) order.push_back(d);
  for (int64_t i = 0; i < axis; ++i) order.push_back(k + i);
  for (int64_t d : j) order.push_back(d);
  for (int64_t i = axis; i < b; ++i) order.push_back(k + i);
  Array t = permute(m, order);
  // Merge the group dims into one of size n (first name outermost), then put size-1 mesh dims back and broadcast.
  Shape merged;
  int64_t rest = k - static_cast<int64_t>(j.size());
  for (int64_t i = 0; i < rest + axis; ++i) merged.push_back(t.shape()[static_cast<size_t>(i)]);
  merged.push_back(n);
  for (int64_t i = rest + axis + static_cast<int64_t>(j.size()); i < t.ndim(); ++i)
    merged.push_back(t.shape()[static_cast<size_t>(i)]);
  Array g = numpy::reshape(t, merged);
  std::vector<int64_t> sorted = j;
  std::sort(sorted.begin(), sorted.end());
  g = numpy::expand_dims(g, sorted);
  Shape full = c.mesh.shape();
  for (int64_t i = k; i < g.ndim(); ++i) full.push_back(g.shape()[static_cast<size_t>(i)]);
  g = numpy::broadcast_to(g, full);
  if (tiled) {
    Shape ts(full.begin(), full.begin() + k + axis);
    ts.push_back(n * full[static_cast<size_t>(k + axis + 1)]);
    for (size_t i = static_cast<size_t>(k + axis + 2); i < full.size(); ++i) ts.push_back(full[i]);
    g = numpy::reshape(g, ts);
  }
  return from_mesh(c, g);
}

Array psum_scatter(const Array& x, const AxisNames& a, int64_t sd, bool tiled, Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "psum_scatter";
  Ctx& c = ctx_for(a.names, op);
  auto j = mesh_dims(c, a.names, op);
  int64_t n = group_size(c, j);
  Array m = to_mesh(c, x, op);
  auto k = static_cast<int64_t>(c.mesh.shape().size());
  int64_t b = m.ndim() - k;
  sd = check_axis(sd, b, op, "scatter_dimension");
  int64_t len = m.shape()[static_cast<size_t>(k + sd)];
  if (tiled ? len % n != 0 : len != n)
    throw_error<ShapeError>(op, "scatter_dimension {} has size {}, which {} the group size {} of axes {}", sd, len,
                            tiled ? "is not a multiple of" : "is not equal to (tiled=false)", n, names_str(a.names));
  Array r = numpy::sum(m, j, false);  // (rest mesh..., block...)
  int64_t rest = k - static_cast<int64_t>(j.size());
  Shape split(r.shape().begin(), r.shape().begin() + rest + sd);
  for (int64_t d : j) split.push_back(c.mesh.shape()[static_cast<size_t>(d)]);
  split.push_back(len / n);
  for (int64_t i = rest + sd + 1; i < r.ndim(); ++i) split.push_back(r.shape()[static_cast<size_t>(i)]);
  r = numpy::reshape(r, split);
  // Dims now: rest mesh (in order), block[:sd], the group's splits (names' order), chunk, block[sd+1:].
  std::vector<int64_t> order;
  int64_t next_rest = 0;
  for (int64_t d = 0; d < k; ++d) {
    auto it = std::find(j.begin(), j.end(), d);
    if (it == j.end()) order.push_back(next_rest++);
    else order.push_back(rest + sd + (it - j.begin()));
  }
  for (int64_t i = 0; i < sd; ++i) order.push_back(rest + i);
  for (int64_t i = rest + sd + static_cast<int64_t>(j.size()); i < r.ndim(); ++i) order.push_back(i);
  r = permute(r, order);
  if (!tiled) r = numpy::squeeze(r, numpy::Axes{k + sd});
  return from_mesh(c, r);
}

Array all_to_all(const Array& x, const std::string& name, int64_t split, int64_t concat, bool tiled, Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "all_to_all";
  Ctx& c = ctx_for({name}, op);
  int64_t j = c.mesh.axis_index(name);
  int64_t n = c.mesh.shape()[static_cast<size_t>(j)];
  Array m = to_mesh(c, x, op);
  auto k = static_cast<int64_t>(c.mesh.shape().size());
  int64_t b = m.ndim() - k;
  split = check_axis(split, b, op, "split_axis");
  concat = check_axis(concat, b, op, "concat_axis");
  int64_t len = m.shape()[static_cast<size_t>(k + split)];
  if (tiled ? len % n != 0 : len != n)
    throw_error<ShapeError>(op, "split_axis {} has size {}, which {} the size {} of axis '{}'", split, len,
                            tiled ? "is not a multiple of" : "is not equal to (tiled=false)", n, name);
  // Split the split axis into (n: destination, chunk), swap the destination with the mesh dim (source).
  Shape sp(m.shape().begin(), m.shape().begin() + k + split);
  sp.push_back(n);
  sp.push_back(len / n);
  for (int64_t i = k + split + 1; i < m.ndim(); ++i) sp.push_back(m.shape()[static_cast<size_t>(i)]);
  Array t = numpy::reshape(m, sp);
  std::vector<int64_t> sw(static_cast<size_t>(t.ndim()));
  std::iota(sw.begin(), sw.end(), 0);
  std::swap(sw[static_cast<size_t>(j)], sw[static_cast<size_t>(k + split)]);
  t = permute(t, sw);  // mesh dim j: destination; dim k+split: source; k+split+1: chunk
  // Block dims without the source dim: block[:split], chunk, block[split+1:]. Move the source to the concat axis.
  int64_t src = k + split;
  std::vector<int64_t> blk;
  for (int64_t i = k; i < t.ndim(); ++i)
    if (i != src) blk.push_back(i);
  if (!tiled) blk.erase(blk.begin() + split);  // the chunk dim (size 1)
  std::vector<int64_t> order;
  for (int64_t d = 0; d < k; ++d) order.push_back(d);
  for (size_t i = 0; i < blk.size(); ++i) {
    if (static_cast<int64_t>(i) == concat) order.push_back(src);
    order.push_back(blk[i]);
  }
  if (concat >= static_cast<int64_t>(blk.size())) order.push_back(src);
  if (!tiled) order.push_back(k + split + 1);  // the size-1 chunk, squeezed below
  t = permute(t, order);
  Shape out(t.shape().begin(), t.shape().begin() + k);
  if (tiled) {
    for (int64_t i = k; i < t.ndim(); ++i) {
      if (i == k + concat) {
        out.push_back(t.shape()[static_cast<size_t>(i)] * t.shape()[static_cast<size_t>(i + 1)]);
        ++i;
      } else {
        out.push_back(t.shape()[static_cast<size_t>(i)]);
      }
    }
  } else {
    for (int64_t i = k; i < t.ndim() - 1; ++i) out.push_back(t.shape()[static_cast<size_t>(i)]);
  }
  return from_mesh(c, numpy::reshape(t, out));
}

Array ppermute(const Array& x, const std::string& name, const std::vector<std::pair<int64_t, int64_t>>& perm,
               Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "ppermute";
  Ctx& c = ctx_for({name}, op);
  int64_t j = c.mesh.axis_index(name);
  int64_t n = c.mesh.shape()[static_cast<size_t>(j)];
  std::vector<int32_t> idx(static_cast<size_t>(n), 0);
  std::vector<bool> got(static_cast<size_t>(n), false), sent(static_cast<size_t>(n), false);
  for (auto [src, dst] : perm) {
    if (src < 0 || src >= n || dst < 0 || dst >= n)
      throw_error<TypeError>(op, "perm pair ({}, {}) is out of range for axis '{}' of size {}", src, dst, name, n);
    if (sent[static_cast<size_t>(src)] || got[static_cast<size_t>(dst)])
      throw_error<TypeError>(op, "ppermute sources and destinations must be unique, got {}", fmt::join(perm, ", "));
    sent[static_cast<size_t>(src)] = got[static_cast<size_t>(dst)] = true;
    idx[static_cast<size_t>(dst)] = static_cast<int32_t>(src);
  }
  Array m = to_mesh(c, x, op);
  Array taken = numpy::take(m, array(idx), j);
  std::vector<uint8_t> mask(static_cast<size_t>(n));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = got[i] ? 1 : 0;
  Shape ms(static_cast<size_t>(m.ndim()), 1);
  ms[static_cast<size_t>(j)] = n;
  Array keep = numpy::reshape(array(mask).astype(DType::bool_), ms);
  return from_mesh(c, numpy::where(keep, taken, zeros_like(taken)));
}

}  // namespace lax

namespace {

struct Dims {
  std::vector<std::vector<int64_t>> axes;  // mesh dims per array dim
};

Dims check_spec(const Mesh& mesh, const PartitionSpec& spec, const ShapedArray& aval, size_t i, bool in) {
  const char* op = "shard_map";
  const char* which = in ? "in_specs" : "out_specs";
  const char* what = in ? "args" : "outputs";
  if (spec.size() > aval.shape.size())
    throw_error<ShapeError>(op, "{} is {} which has length {}, but the passed {}[{}] has shape {}, which has rank {} "
                                "(and {} < {}). Entries in {} must be of length no greater than the number of axes "
                                "in the corresponding array",
                            which, spec.str(), spec.size(), what, i, aval.str(), aval.shape.size(),
                            aval.shape.size(), spec.size(), which);
  Dims d;
  std::set<int64_t> seen;
  for (size_t k = 0; k < aval.shape.size(); ++k) {
    d.axes.emplace_back();
    if (k >= spec.size()) continue;
    int64_t prod = 1;
    for (auto& name : spec.entries()[k].axes) {
      int64_t a = mesh.axis_index(name);
      if (a < 0)
        throw_error<TypeError>(op, "{} argument must refer to an axis of the mesh {}, but {}[{}] refers to '{}'",
                               which, mesh.str(), which, i, name);
      if (!seen.insert(a).second)
        throw_error<TypeError>(op, "{}[{}] = {} uses mesh axis '{}' twice", which, i, spec.str(), name);
      d.axes.back().push_back(a);
      prod *= mesh.shape()[static_cast<size_t>(a)];
    }
    if (in && aval.shape[k] % prod != 0)
      throw_error<ShapeError>(op, "the passed {}[{}] of shape {}, corresponds to {} of value {}, which maps array axis "
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
    if (mesh_pos[static_cast<size_t>(a)] >= 0) order.push_back(mesh_pos[static_cast<size_t>(a)]);
    else missing.push_back(a);
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
    if (!used[static_cast<size_t>(a)])
      m = numpy::squeeze(lax::slice_in_dim(m, 0, 1, 1, a), numpy::Axes{a});
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

}  // namespace

ShardMapFn shard_map(ShardMapFn f, Mesh mesh, std::vector<PartitionSpec> in_specs,
                     std::vector<PartitionSpec> out_specs, Loc loc) {
  return [f = std::move(f), mesh = std::move(mesh), in_specs = std::move(in_specs), out_specs = std::move(out_specs),
          loc](const std::vector<Array>& args) {
    std::vector<Array> stacked;
    {
      detail::ApiScope s(loc);
      if (args.size() != in_specs.size())
        throw_error<TypeError>("shard_map", "in_specs has {} entries, but the function was called with {} arguments",
                               in_specs.size(), args.size());
      for (size_t i = 0; i < args.size(); ++i)
        if (!args[i].valid())
          throw_error<TypeError>("shard_map", "args[{}] is an empty (default-constructed) Array", i);
      for (size_t i = 0; i < args.size(); ++i)
        stacked.push_back(stack_blocks(mesh, args[i], check_spec(mesh, in_specs[i], args[i].aval(), i, true)));
    }
    Ctx ctx{mesh, std::make_shared<BatchTrace>()};
    ctx.trace->fn_name = "shard_map";
    ctx.trace->axis_size = mesh.size();
    std::vector<Array> outs;
    {
      CtxGuard g(&ctx);
      detail::TraceScope scope(ctx.trace);
      std::vector<Array> ins;
      for (auto& a : stacked) ins.push_back(ctx.trace->make_tracer(a, 0));
      for (auto& o : f(ins)) {
        if (!o.valid()) throw_error<TypeError>("shard_map", "the function returned an empty Array");
        auto [v, d] = ctx.trace->unpack(o);
        outs.push_back(detail::batch_at(v, d, mesh.size(), 0));
      }
    }
    detail::ApiScope s(loc);
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
  };
}

std::function<Array(const Array&)> shard_map(std::function<Array(const Array&)> f, Mesh mesh, PartitionSpec in_spec,
                                             PartitionSpec out_spec, Loc loc) {
  ShardMapFn g = shard_map([f = std::move(f)](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; },
                           std::move(mesh), {std::move(in_spec)}, {std::move(out_spec)}, loc);
  return [g](const Array& x) { return g({x})[0]; };
}

}  // namespace jitx
