// The collective primitives (see collectives.h): shape rules, JVP/transpose/batching rules, and their named
// batching over a mesh (the eager shard_map: every collective computed with ordinary ops over the stacked blocks).
#include "primitives/collectives.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "core/errors.h"
#include "hlo/ir/collectives.h"
#include "jitx/numpy.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"

namespace jitx::detail {

namespace {

thread_local std::vector<CollectiveScope*> t_scopes;

const char* const kCollectives[] = {"psum",           "pmax",       "pmin",     "all_gather",
                                    "reduce_scatter", "all_to_all", "ppermute", "axis_index"};

/// The innermost scope binding every name, or null.
CollectiveScope* scope_for(const std::vector<std::string>& names) {
  for (auto it = t_scopes.rbegin(); it != t_scopes.rend(); ++it) {
    bool all = !names.empty();
    for (auto& n : names)
      all = all && std::find((*it)->axis_names.begin(), (*it)->axis_names.end(), n) != (*it)->axis_names.end();
    if (all) return *it;
  }
  return nullptr;
}

std::vector<int64_t> mesh_dims_of(const std::vector<std::string>& mesh_names, const std::vector<std::string>& names) {
  std::vector<int64_t> j;
  for (auto& n : names) j.push_back(std::find(mesh_names.begin(), mesh_names.end(), n) - mesh_names.begin());
  return j;
}

int64_t norm_axis(int64_t a, int64_t rank, std::string_view op, std::string_view what) {
  int64_t r = a < 0 ? a + rank : a;
  if (r < 0 || r >= rank) throw_error<ShapeError>(op, "{} {} is out of range for a block of rank {}", what, a, rank);
  return r;
}

// --- shape rules ----------------------------------------------------------------------------------------------

std::vector<ShapedArray> same_aval(std::span<const ShapedArray> in, const Params&) { return {in[0]}; }

std::vector<ShapedArray> all_gather_aval(std::span<const ShapedArray> in, const Params& ps) {
  ShapedArray a = in[0];
  int64_t n = ps.get_int("axis_size"), d = ps.get_int("all_gather_dimension");
  auto b = static_cast<int64_t>(a.shape.size());
  if (ps.get_bool("tiled")) {
    d = norm_axis(d, b, "all_gather", "axis");
    a.shape[static_cast<size_t>(d)] *= n;
  } else {
    if (d < 0) d += b + 1;
    if (d < 0 || d > b) throw_error<ShapeError>("all_gather", "axis {} is out of range for a block of rank {}", d, b);
    a.shape.insert(a.shape.begin() + d, n);
  }
  return {a};
}

std::vector<ShapedArray> reduce_scatter_aval(std::span<const ShapedArray> in, const Params& ps) {
  ShapedArray a = in[0];
  int64_t n = ps.get_int("axis_size");
  bool tiled = ps.get_bool("tiled");
  auto b = static_cast<int64_t>(a.shape.size());
  int64_t sd = norm_axis(ps.get_int("scatter_dimension"), b, "psum_scatter", "scatter_dimension");
  int64_t len = a.shape[static_cast<size_t>(sd)];
  if (tiled ? len % n != 0 : len != n)
    throw_error<ShapeError>("psum_scatter", "scatter_dimension {} has size {}, which {} the group size {} of axes {}",
                            sd, len, tiled ? "is not a multiple of" : "is not equal to (tiled=false)", n,
                            ps.get_str("axis_name"));
  if (tiled)
    a.shape[static_cast<size_t>(sd)] = len / n;
  else
    a.shape.erase(a.shape.begin() + sd);
  return {a};
}

std::vector<ShapedArray> all_to_all_aval(std::span<const ShapedArray> in, const Params& ps) {
  ShapedArray a = in[0];
  int64_t n = ps.get_int("axis_size");
  bool tiled = ps.get_bool("tiled");
  auto b = static_cast<int64_t>(a.shape.size());
  int64_t split = norm_axis(ps.get_int("split_axis"), b, "all_to_all", "split_axis");
  int64_t concat = norm_axis(ps.get_int("concat_axis"), b, "all_to_all", "concat_axis");
  int64_t len = a.shape[static_cast<size_t>(split)];
  if (tiled ? len % n != 0 : len != n)
    throw_error<ShapeError>("all_to_all", "split_axis {} has size {}, which {} the size {} of axis '{}'", split, len,
                            tiled ? "is not a multiple of" : "is not equal to (tiled=false)", n,
                            parse_axes(ps.get_str("axis_name"))[0]);
  if (tiled) {
    a.shape[static_cast<size_t>(split)] /= n;
    a.shape[static_cast<size_t>(concat)] *= n;
  } else {
    a.shape.erase(a.shape.begin() + split);
    a.shape.insert(a.shape.begin() + concat, n);
  }
  return {a};
}

// --- named batching: x viewed over the mesh, shape (mesh..., block...) ----------------------------------------

struct View {
  const Shape& ms;
  std::vector<int64_t> j;  // the collective's mesh dims, in the names' order
  int64_t k() const { return static_cast<int64_t>(ms.size()); }
  int64_t n() const {
    int64_t s = 1;
    for (int64_t d : j) s *= ms[static_cast<size_t>(d)];
    return s;
  }
};

Array named_reduce(const std::string& prim, const View& v, const Array& m) {
  // lax's reductions, in the operand's dtype (jnp::sum would widen narrow integers to int64, as jnp.sum does).
  Array red = prim == "psum"   ? lax::reduce_sum(m, v.j)
              : prim == "pmax" ? lax::reduce_max(m, v.j)
                               : lax::reduce_min(m, v.j);
  Shape kept = m.shape();
  for (int64_t d : v.j) kept[static_cast<size_t>(d)] = 1;
  return numpy::broadcast_to(numpy::reshape(red, kept), m.shape());
}

Array named_all_gather(const View& v, const Array& m, int64_t axis, bool tiled) {
  int64_t k = v.k(), n = v.n(), b = m.ndim() - k;
  axis = tiled ? norm_axis(axis, b, "all_gather", "axis") : (axis < 0 ? axis + b + 1 : axis);
  const auto& j = v.j;
  std::vector<int64_t> order;
  for (int64_t d = 0; d < k; ++d)
    if (std::find(j.begin(), j.end(), d) == j.end()) order.push_back(d);
  for (int64_t i = 0; i < axis; ++i) order.push_back(k + i);
  for (int64_t d : j) order.push_back(d);
  for (int64_t i = axis; i < b; ++i) order.push_back(k + i);
  Array t = numpy::transpose(m, order);
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
  Shape full = v.ms;
  for (int64_t i = k; i < g.ndim(); ++i) full.push_back(g.shape()[static_cast<size_t>(i)]);
  g = numpy::broadcast_to(g, full);
  if (tiled) {
    Shape ts(full.begin(), full.begin() + k + axis);
    ts.push_back(n * full[static_cast<size_t>(k + axis + 1)]);
    for (size_t i = static_cast<size_t>(k + axis + 2); i < full.size(); ++i) ts.push_back(full[i]);
    g = numpy::reshape(g, ts);
  }
  return g;
}

Array named_reduce_scatter(const View& v, const Array& m, int64_t sd, bool tiled) {
  int64_t k = v.k(), n = v.n(), b = m.ndim() - k;
  const auto& j = v.j;
  sd = norm_axis(sd, b, "psum_scatter", "scatter_dimension");
  int64_t len = m.shape()[static_cast<size_t>(k + sd)];
  Array r = numpy::sum(m, j, false);  // (rest mesh..., block...)
  int64_t rest = k - static_cast<int64_t>(j.size());
  Shape split(r.shape().begin(), r.shape().begin() + rest + sd);
  for (int64_t d : j) split.push_back(v.ms[static_cast<size_t>(d)]);
  split.push_back(len / n);
  for (int64_t i = rest + sd + 1; i < r.ndim(); ++i) split.push_back(r.shape()[static_cast<size_t>(i)]);
  r = numpy::reshape(r, split);
  // Dims now: rest mesh (in order), block[:sd], the group's splits (names' order), chunk, block[sd+1:].
  std::vector<int64_t> order;
  int64_t next_rest = 0;
  for (int64_t d = 0; d < k; ++d) {
    auto it = std::find(j.begin(), j.end(), d);
    if (it == j.end())
      order.push_back(next_rest++);
    else
      order.push_back(rest + sd + (it - j.begin()));
  }
  for (int64_t i = 0; i < sd; ++i) order.push_back(rest + i);
  for (int64_t i = rest + sd + static_cast<int64_t>(j.size()); i < r.ndim(); ++i) order.push_back(i);
  r = numpy::transpose(r, order);
  if (!tiled) r = numpy::squeeze(r, numpy::Axes{k + sd});
  return r;
}

Array named_all_to_all(const View& v, const Array& m, int64_t split, int64_t concat, bool tiled) {
  int64_t k = v.k(), n = v.n(), b = m.ndim() - k, j = v.j[0];
  split = norm_axis(split, b, "all_to_all", "split_axis");
  concat = norm_axis(concat, b, "all_to_all", "concat_axis");
  int64_t len = m.shape()[static_cast<size_t>(k + split)];
  // Split the split axis into (n: destination, chunk), swap the destination with the mesh dim (source).
  Shape sp(m.shape().begin(), m.shape().begin() + k + split);
  sp.push_back(n);
  sp.push_back(len / n);
  for (int64_t i = k + split + 1; i < m.ndim(); ++i) sp.push_back(m.shape()[static_cast<size_t>(i)]);
  Array t = numpy::reshape(m, sp);
  std::vector<int64_t> sw(static_cast<size_t>(t.ndim()));
  std::iota(sw.begin(), sw.end(), 0);
  std::swap(sw[static_cast<size_t>(j)], sw[static_cast<size_t>(k + split)]);
  t = numpy::transpose(t, sw);  // mesh dim j: destination; dim k+split: source; k+split+1: chunk
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
  t = numpy::transpose(t, order);
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
  return numpy::reshape(t, out);
}

Array named_ppermute(const View& v, const Array& m, const std::vector<int64_t>& perm) {
  int64_t j = v.j[0], n = v.n();
  std::vector<int32_t> idx(static_cast<size_t>(n), 0);
  std::vector<uint8_t> mask(static_cast<size_t>(n), 0);
  for (size_t i = 0; i + 1 < perm.size(); i += 2) {
    idx[static_cast<size_t>(perm[i + 1])] = static_cast<int32_t>(perm[i]);
    mask[static_cast<size_t>(perm[i + 1])] = 1;
  }
  Array taken = numpy::take(m, array(idx), j);
  Shape ms(static_cast<size_t>(m.ndim()), 1);
  ms[static_cast<size_t>(j)] = n;
  Array keep = numpy::reshape(array(mask).astype(DType::bool_), ms);
  return numpy::where(keep, taken, zeros_like(taken));
}

Array named_axis_index(const View& v) {
  int64_t j = v.j[0];
  Shape one(v.ms.size(), 1);
  one[static_cast<size_t>(j)] = v.ms[static_cast<size_t>(j)];
  Array iota = numpy::reshape(arange(v.ms[static_cast<size_t>(j)], DType::int32), one);
  return numpy::broadcast_to(iota, v.ms);
}

// --- rules ------------------------------------------------------------------------------------------------------

/// The JVP rule of a collective linear in its operand.
JvpFn collective_linear_jvp(std::string prim) {
  return [prim](std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
    Array out = bind_collective(prim, {primals[0]}, ps)[0];
    if (!tangents[0].valid()) return JvpResult{{out}, {Array()}};
    return JvpResult{{out}, bind_collective(prim, {tangents[0]}, ps)};
  };
}

TransposeFn collective_transpose(std::function<std::vector<Array>(const Array& ct, const Params&)> f) {
  return [f](std::span<const Array> ct, std::span<const LinearArg>, const Params& ps) {
    if (!ct[0].valid()) return std::vector<Array>{Array()};
    return f(ct[0], ps);
  };
}

/// vmap of a collective inside the body: the batch axis goes in front, the params' block axes shift by one.
BatchFn collective_batch(std::string prim, std::vector<std::string> axis_params) {
  return [prim, axis_params](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
    Params q = ps;
    for (auto& name : axis_params) {
      int64_t a = ps.get_int(name), r = args[0].ndim() - 1;
      if (name == "all_gather_dimension" && !ps.get_bool("tiled")) r += 1;
      q.set(name, (a < 0 ? a + r : a) + 1);
    }
    Array x = move_axis(args[0], dims[0], 0);
    return BatchResult{bind_collective(prim, {x}, q), {0}};
  };
}

thread_local const ManualMesh* t_manual = nullptr;

/// Partition ids grouped over the mesh dims j (first name outermost), one group per position on the other dims.
std::vector<std::vector<int64_t>> groups_over(const Shape& ms, const std::vector<int64_t>& j) {
  int64_t total = 1;
  for (int64_t d : ms) total *= d;
  std::vector<std::vector<int64_t>> groups;
  std::vector<int64_t> keys;
  for (int64_t p = 0; p < total; ++p) {
    std::vector<int64_t> coord(ms.size());
    int64_t rest = p;
    for (size_t d = ms.size(); d-- > 0;) {
      coord[d] = rest % ms[d];
      rest /= ms[d];
    }
    int64_t key = 0, pos = 0;
    for (size_t d = 0; d < ms.size(); ++d)
      if (std::find(j.begin(), j.end(), static_cast<int64_t>(d)) == j.end()) key = key * ms[d] + coord[d];
    for (int64_t d : j) pos = pos * ms[static_cast<size_t>(d)] + coord[static_cast<size_t>(d)];
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      groups.emplace_back();
      it = keys.end() - 1;
    }
    auto& g = groups[static_cast<size_t>(it - keys.begin())];
    if (g.size() <= static_cast<size_t>(pos)) g.resize(static_cast<size_t>(pos) + 1, -1);
    g[static_cast<size_t>(pos)] = p;
  }
  return groups;
}

/// The HLO collective of a collective equation inside shard_map's manual region.
std::vector<hlo::Instruction*> lower_manual(const std::string& n, LowerCtx& c, std::span<hlo::Instruction* const> a) {
  const ManualMesh& mm = *t_manual;
  auto j = mesh_dims_of(mm.names, collective_axes(c.params));
  hlo::CollectiveConfig cfg;
  cfg.replica_groups = groups_over(mm.shape, j);
  const ShapedArray& out = c.out_avals[0];
  auto attrs = [&](const char* reducer) {
    Params ps;
    cfg.set_on(ps);
    if (reducer) ps.set("reducer", std::string(reducer));
    return ps;
  };
  auto* comp = c.comp;
  if (n == "psum" || n == "pmax" || n == "pmin") {
    const char* r = n == "psum" ? "add" : n == "pmax" ? "max" : "min";
    return {comp->add(hlo::Opcode::kAllReduce, hlo_shape(out), {a[0]}, attrs(r))};
  }
  if (n == "all_gather") {
    bool tiled = c.params.get_bool("tiled");
    int64_t rank = c.in_avals[0].ndim(), d = c.params.get_int("all_gather_dimension");
    d = d < 0 ? d + rank + (tiled ? 0 : 1) : d;
    hlo::Instruction* x = a[0];
    if (!tiled) {  // a new axis of size 1, then gathered along it (as JAX lowers it)
      Shape s = c.in_avals[0].shape;
      s.insert(s.begin() + d, 1);
      x = comp->add(hlo::Opcode::kReshape, hlo::Shape(out.dtype, s), {x});
    }
    cfg.dimension = d;
    return {comp->add(hlo::Opcode::kAllGather, hlo_shape(out), {x}, attrs(nullptr))};
  }
  if (n == "reduce_scatter") {
    bool tiled = c.params.get_bool("tiled");
    int64_t rank = c.in_avals[0].ndim(), d = c.params.get_int("scatter_dimension");
    cfg.dimension = d < 0 ? d + rank : d;
    Shape s = c.in_avals[0].shape;
    s[static_cast<size_t>(cfg.dimension)] /= c.params.get_int("axis_size");
    auto* r = comp->add(hlo::Opcode::kReduceScatter, hlo::Shape(out.dtype, s), {a[0]}, attrs("add"));
    if (tiled) return {r};
    return {comp->add(hlo::Opcode::kReshape, hlo_shape(out), {r})};
  }
  if (n == "all_to_all") {
    int64_t rank = c.in_avals[0].ndim(), sp = c.params.get_int("split_axis"), ca = c.params.get_int("concat_axis");
    sp = sp < 0 ? sp + rank : sp;
    ca = ca < 0 ? ca + rank : ca;
    const ShapedArray& in = c.in_avals[0];
    if (sp == ca) {  // untiled too: the split axis has the group's size and keeps it
      cfg.dimension = sp;
      return {comp->add(hlo::Opcode::kAllToAll, hlo_shape(out), {a[0]}, attrs(nullptr))};
    }
    // HLO's all-to-all splits and concatenates along one dimension. Another concat axis, or an untiled exchange
    // (JAX's: the split axis, of the group's size, is removed and a new one inserted at the concat axis), goes
    // through a leading chunk axis: x's split axis as (chunk, rest), the chunk axis moved to the front, exchanged
    // along it (it then numbers the source devices), moved before the concat axis and merged into it.
    Shape xs = in.shape;
    int64_t groups = 1;  // the exchange's group size: the product of the named mesh axes
    for (int64_t d : j) groups *= mm.shape[static_cast<size_t>(d)];
    hlo::Instruction* x = a[0];
    if (!c.params.get_bool("tiled")) {
      // A size-1 axis at the concat position; the split axis (after it, when it was at or past it) is tiled over.
      xs.insert(xs.begin() + ca + (sp < ca ? 1 : 0), 1);
      if (sp >= ca) ++sp;
      else ++ca;
      x = comp->add(hlo::Opcode::kReshape, hlo::Shape(in.dtype, xs), {x});
    }
    Shape chunked = xs;  // (..., groups, split / groups, ...)
    chunked[static_cast<size_t>(sp)] /= groups;
    chunked.insert(chunked.begin() + sp, groups);
    x = comp->add(hlo::Opcode::kReshape, hlo::Shape(in.dtype, chunked), {x});
    std::vector<int64_t> front{sp};
    Shape fs{groups};
    for (int64_t k = 0; k < static_cast<int64_t>(chunked.size()); ++k)
      if (k != sp) front.push_back(k), fs.push_back(chunked[static_cast<size_t>(k)]);
    x = comp->add(hlo::Opcode::kTranspose, hlo::Shape(in.dtype, fs), {x}, Params{{"permutation", front}});
    cfg.dimension = 0;
    x = comp->add(hlo::Opcode::kAllToAll, hlo::Shape(in.dtype, fs), {x}, attrs(nullptr));
    // fs is (source, rest...) with rest in x's axis order: move the source axis before rest's concat axis.
    std::vector<int64_t> back;
    Shape bs;
    for (int64_t k = 0; k < static_cast<int64_t>(fs.size()) - 1; ++k) {
      if (k == ca) back.push_back(0), bs.push_back(groups);
      back.push_back(k + 1), bs.push_back(fs[static_cast<size_t>(k + 1)]);
    }
    x = comp->add(hlo::Opcode::kTranspose, hlo::Shape(in.dtype, bs), {x}, Params{{"permutation", back}});
    Shape merged = bs;
    merged[static_cast<size_t>(ca)] *= merged[static_cast<size_t>(ca) + 1];
    merged.erase(merged.begin() + ca + 1);
    x = comp->add(hlo::Opcode::kReshape, hlo::Shape(in.dtype, merged), {x});
    if (hlo_shape(out).dims != merged)  // untiled: the exhausted split axis (size 1 now) goes
      x = comp->add(hlo::Opcode::kReshape, hlo_shape(out), {x});
    return {x};
  }
  if (n == "ppermute") {
    // Pairs of positions along the axis, for every group: partition ids.
    auto perm = c.params.get_ints("perm");
    for (auto& g : cfg.replica_groups)
      for (size_t i = 0; i + 1 < perm.size(); i += 2)
        cfg.source_target_pairs.emplace_back(g[static_cast<size_t>(perm[i])], g[static_cast<size_t>(perm[i + 1])]);
    cfg.replica_groups.clear();
    return {comp->add(hlo::Opcode::kCollectivePermute, hlo_shape(out), {a[0]}, attrs(nullptr))};
  }
  // axis_index: (partition_id / stride) % size, as JAX lowers it.
  int64_t d = j[0], stride = 1;
  for (size_t k = static_cast<size_t>(d) + 1; k < mm.shape.size(); ++k) stride *= mm.shape[k];
  hlo::Shape u32(DType::uint32, {});
  auto* pid = comp->add(hlo::Opcode::kPartitionId, u32, {});
  auto* st = comp->add_scalar_constant(DType::uint32, static_cast<double>(stride));
  auto* sz = comp->add_scalar_constant(DType::uint32, static_cast<double>(mm.shape[static_cast<size_t>(d)]));
  auto* q = comp->add(hlo::Opcode::kDivide, u32, {pid, st});
  auto* r = comp->add(hlo::Opcode::kRemainder, u32, {q, sz});
  return {comp->add(hlo::Opcode::kConvert, hlo::Shape(DType::int32, {}), {r})};
}

Primitive collective(std::string name, AbstractEvalFn ae) {
  Primitive p;
  p.name = std::move(name);
  p.num_operands = p.name == "axis_index" ? 0 : 1;
  p.abstract_eval = std::move(ae);
  p.lower = [n = p.name](LowerCtx& c, std::span<hlo::Instruction* const> a) -> std::vector<hlo::Instruction*> {
    if (t_manual) return lower_manual(n, c, a);
    throw_error<TypeError>(n,
                           "{} outside shard_map's own lowering (a jit inside shard_map's body) is not supported "
                           "yet; apply jit outside shard_map",
                           n);
  };
  return p;
}

const bool kCollectivesRegistered = [] {
  for (const char* r : {"psum", "pmax", "pmin"}) {
    Primitive p = collective(r, same_aval);
    std::string rs = r;
    if (rs == "psum") {
      p.jvp = collective_linear_jvp("psum");
      // JAX (check_rep=False): psum is psum + pbroadcast, so its transpose psums the cotangent again.
      p.transpose =
          collective_transpose([](const Array& ct, const Params& ps) { return bind_collective("psum", {ct}, ps); });
    } else {
      p.jvp = [rs](std::span<const Array>, std::span<const Array>, const Params&) -> JvpResult {
        not_differentiable(rs, "JAX has no differentiation rule for " + rs +
                                   " inside shard_map's body either; "
                                   "differentiate the shard_map from outside");
      };
    }
    p.batch = collective_batch(rs, {});
    register_primitive(std::move(p));
  }
  {
    Primitive p = collective("all_gather", all_gather_aval);
    p.jvp = collective_linear_jvp("all_gather");
    p.transpose = collective_transpose([](const Array& ct, const Params& ps) {
      return bind_collective("reduce_scatter", {ct},
                             Params{{"axis_name", ps.get_str("axis_name")},
                                    {"axis_size", ps.get_int("axis_size")},
                                    {"scatter_dimension", ps.get_int("all_gather_dimension")},
                                    {"tiled", ps.get_bool("tiled")}});
    });
    p.batch = collective_batch("all_gather", {"all_gather_dimension"});
    register_primitive(std::move(p));
  }
  {
    Primitive p = collective("reduce_scatter", reduce_scatter_aval);
    p.jvp = collective_linear_jvp("reduce_scatter");
    p.transpose = collective_transpose([](const Array& ct, const Params& ps) {
      return bind_collective("all_gather", {ct},
                             Params{{"axis_name", ps.get_str("axis_name")},
                                    {"axis_size", ps.get_int("axis_size")},
                                    {"all_gather_dimension", ps.get_int("scatter_dimension")},
                                    {"tiled", ps.get_bool("tiled")}});
    });
    p.batch = collective_batch("reduce_scatter", {"scatter_dimension"});
    register_primitive(std::move(p));
  }
  {
    Primitive p = collective("all_to_all", all_to_all_aval);
    p.jvp = collective_linear_jvp("all_to_all");
    p.transpose = collective_transpose([](const Array& ct, const Params& ps) {
      Params q = ps;
      q.set("split_axis", ps.get_int("concat_axis"));
      q.set("concat_axis", ps.get_int("split_axis"));
      return bind_collective("all_to_all", {ct}, q);
    });
    p.batch = collective_batch("all_to_all", {"split_axis", "concat_axis"});
    register_primitive(std::move(p));
  }
  {
    Primitive p = collective("ppermute", same_aval);
    p.jvp = collective_linear_jvp("ppermute");
    p.transpose = collective_transpose([](const Array& ct, const Params& ps) {
      std::vector<int64_t> inv = ps.get_ints("perm");
      for (size_t i = 0; i + 1 < inv.size(); i += 2) std::swap(inv[i], inv[i + 1]);
      Params q = ps;
      q.set("perm", inv);
      return bind_collective("ppermute", {ct}, q);
    });
    p.batch = collective_batch("ppermute", {});
    register_primitive(std::move(p));
  }
  {
    Primitive p = collective("axis_index", [](std::span<const ShapedArray>, const Params&) {
      return std::vector<ShapedArray>{ShapedArray{{}, DType::int32}};
    });
    p.jvp = zero_jvp("axis_index");
    register_primitive(std::move(p));
  }
  return true;
}();

}  // namespace

const std::vector<CollectiveScope*>& collective_scopes() { return t_scopes; }
const ManualMesh* manual_mesh() { return t_manual; }
ManualMeshScope::ManualMeshScope(const ManualMesh* m) : prev_(t_manual) { t_manual = m; }
ManualMeshScope::~ManualMeshScope() { t_manual = prev_; }
bool& spmd_text_lowering() {
  thread_local bool on = false;
  return on;
}
CollectiveScopeGuard::CollectiveScopeGuard(CollectiveScope* s) { t_scopes.push_back(s); }
CollectiveScopeGuard::~CollectiveScopeGuard() { t_scopes.pop_back(); }

bool is_collective(const Primitive& p) {
  return std::find(std::begin(kCollectives), std::end(kCollectives), p.name) != std::end(kCollectives);
}

std::string axes_text(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (auto& s : names) q.push_back("'" + s + "'");
  return names.size() == 1 ? "(" + q[0] + ",)" : fmt::format("({})", fmt::join(q, ", "));
}

std::vector<std::string> parse_axes(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool in = false;
  for (char c : text) {
    if (c == '\'') {
      if (in) out.push_back(cur);
      cur.clear();
      in = !in;
    } else if (in) {
      cur += c;
    }
  }
  return out;
}

std::vector<std::string> collective_axes(const Params& params) {
  return parse_axes(params.get_str(params.has("axes") ? "axes" : "axis_name"));
}

std::vector<Array> bind_collective(std::string_view prim, std::vector<Array> inputs, const Params& params) {
  const Primitive& p = primitive(prim);
  CollectiveScope* s = scope_for(collective_axes(params));
  if (s && s->trace) {
    Trace* top = inputs.empty() ? nullptr : find_top_trace(inputs, prim);
    if (!top || top->level < s->trace->level) return s->trace->process_primitive(p, inputs, params);
  }
  return bind(p, std::move(inputs), params);
}

std::vector<Array> ShardMapTrace::process_primitive(const Primitive& p, std::span<const Array> inputs,
                                                    const Params& params) {
  if (!is_collective(p)) {
    // A primitive holding a jaxpr (a loop, a cond) batches it over the mesh axis: with a shard_map trace, so the
    // collectives in its body are computed over the devices' blocks as they are here.
    int64_t devices = 1;
    for (int64_t d : mesh_shape) devices *= d;
    BatchTraceFactory same_mesh = [this, devices](int64_t n) -> std::shared_ptr<BatchTrace> {
      if (n != devices) return nullptr;
      auto t = std::make_shared<ShardMapTrace>();
      t->mesh_shape = mesh_shape;
      t->axis_names = axis_names;
      return t;
    };
    BatchTraceFactoryScope scope(&same_mesh);
    return BatchTrace::process_primitive(p, inputs, params);
  }
  auto names = collective_axes(params);
  for (auto& n : names)
    if (std::find(axis_names.begin(), axis_names.end(), n) == axis_names.end())
      return BatchTrace::process_primitive(p, inputs, params);  // another shard_map's axis: an ordinary batch
  std::vector<ShapedArray> in_avals;
  for (auto& a : inputs) in_avals.push_back(a.aval());
  std::vector<ShapedArray> want = p.abstract_eval(in_avals, params);  // the shape errors, before any work
  View v{mesh_shape, mesh_dims_of(axis_names, names)};
  int64_t total = 1;
  for (int64_t d : mesh_shape) total *= d;
  Array m;
  if (!inputs.empty()) {
    auto [val, d] = unpack(inputs[0]);
    Array stacked = batch_at(val, d, total, 0);
    Shape s = mesh_shape;
    s.insert(s.end(), stacked.shape().begin() + 1, stacked.shape().end());
    m = numpy::reshape(stacked, s);
  }
  Array r;
  const std::string& n = p.name;
  if (n == "psum" || n == "pmax" || n == "pmin")
    r = named_reduce(n, v, m);
  else if (n == "all_gather")
    r = named_all_gather(v, m, params.get_int("all_gather_dimension"), params.get_bool("tiled"));
  else if (n == "reduce_scatter")
    r = named_reduce_scatter(v, m, params.get_int("scatter_dimension"), params.get_bool("tiled"));
  else if (n == "all_to_all")
    r = named_all_to_all(v, m, params.get_int("split_axis"), params.get_int("concat_axis"), params.get_bool("tiled"));
  else if (n == "ppermute")
    r = named_ppermute(v, m, params.get_ints("perm"));
  else
    r = named_axis_index(v);
  Shape s{total};
  s.insert(s.end(), r.shape().begin() + static_cast<int64_t>(mesh_shape.size()), r.shape().end());
  Array t = make_tracer(numpy::reshape(r, s), 0);
  JITX_ASSERT(t.shape() == want[0].shape && t.dtype() == want[0].dtype, "shard_map's {} gave {} for {}", n,
              t.aval().str(), want[0].str());
  return {t};
}

}  // namespace jitx::detail
