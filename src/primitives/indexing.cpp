// Indexing primitives: gather, scatter (replace/add/mul/min/max), sort and top_k, with StableHLO's dimension numbers.
#include <algorithm>
#include <numeric>

#include "core/primitive.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using hlo::Opcode;
using Outs = std::vector<ShapedArray>;
using Insts = std::vector<hlo::Instruction*>;
using Ints = std::vector<int64_t>;
using Arrays = std::vector<Array>;
using A = const Array&;

bool contains(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// --- JVP and transpose rules -------------------------------------------------------------------------
const Primitive& prim(const char* name) { return *find_primitive(name); }

/// The largest valid start of each index-vector entry (operand size minus window size), shaped to
/// broadcast against the indices along index_vector_dim; starts are clamped (gather) or windows dropped
/// (scatter) beyond it.
Array start_bounds(A idx, int64_t ivd, const Ints& index_map, const Shape& operand, const Ints& window) {
  std::vector<int64_t> b;
  for (auto d : index_map) b.push_back(operand[d] - window[d]);
  Array v = array(b, Shape{static_cast<int64_t>(b.size())}, idx.dtype());
  if (ivd == idx.ndim()) return lax::reshape(v, {});
  return lax::broadcast_in_dim(v, idx.shape(), {ivd});
}

Params scatter_params_of_gather(const Params& g) {
  return Params{{"update_window_dims", g.get_ints("offset_dims")},
                {"inserted_window_dims", g.get_ints("collapsed_slice_dims")},
                {"input_batching_dims", g.get_ints("operand_batching_dims")},
                {"scatter_indices_batching_dims", g.get_ints("start_indices_batching_dims")},
                {"scatter_dims_to_operand_dims", g.get_ints("start_index_map")},
                {"index_vector_dim", g.get_int("index_vector_dim")},
                {"indices_are_sorted", g.get_bool("indices_are_sorted", false)},
                {"unique_indices", false}};
}

/// The gather that reads back each update window of a scatter, and its slice sizes.
Params gather_params_of_scatter(const Params& s, const Shape& operand, const Shape& updates) {
  const auto& uwd = s.get_ints("update_window_dims");
  const auto& iwd = s.get_ints("inserted_window_dims");
  const auto& ibd = s.get_ints("input_batching_dims");
  Ints sizes;
  size_t pos = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(operand.size()); ++i)
    sizes.push_back(contains(iwd, i) || contains(ibd, i) ? 1 : updates[uwd[pos++]]);
  return Params{{"offset_dims", uwd},
                {"collapsed_slice_dims", iwd},
                {"operand_batching_dims", ibd},
                {"start_indices_batching_dims", s.get_ints("scatter_indices_batching_dims")},
                {"start_index_map", s.get_ints("scatter_dims_to_operand_dims")},
                {"index_vector_dim", s.get_int("index_vector_dim")},
                {"slice_sizes", sizes},
                {"indices_are_sorted", s.get_bool("indices_are_sorted", false)}};
}

/// gather's transpose: a scatter-add of the cotangent into zeros at the same starts. As JAX's (gather's default
/// mode promises in-bounds indices; its transpose is a scatter that drops a window out of bounds): the forward
/// pass clamps an out-of-range start, the backward pass drops its cotangent (x.at[5].get() of a 5-vector reads
/// x[4], and its gradient is zero). jnp's clip and wrap modes clamp or wrap the indices before the gather.
std::vector<Array> gather_transpose(std::span<const Array> ct, std::span<const LinearArg> args, const Params& ps) {
  const auto& op = args[0].aval;
  const Array& idx = args[1].value;
  return {bind1(prim("scatter-add"), {zeros_like_aval(op), idx, ct[0]}, scatter_params_of_gather(ps)), Array()};
}

/// Whether each update window of a scatter lies inside the operand (others are dropped), shaped as updates.
Array windows_in_bounds(A idx, const Params& ps, const Shape& operand, const Shape& updates) {
  Params g = gather_params_of_scatter(ps, operand, updates);
  int64_t ivd = ps.get_int("index_vector_dim");
  Array hi = start_bounds(idx, ivd, ps.get_ints("scatter_dims_to_operand_dims"), operand, g.get_ints("slice_sizes"));
  Array ok = lax::bitwise_and(lax::ge(idx, Array::scalar_int(0, idx.dtype())), lax::le(idx, hi));
  if (ivd < idx.ndim()) ok = lax::reduce_and(ok, {ivd});
  Ints batch_pos;
  const auto& uwd = ps.get_ints("update_window_dims");
  for (int64_t d = 0; d < static_cast<int64_t>(updates.size()); ++d)
    if (!contains(uwd, d)) batch_pos.push_back(d);
  return lax::broadcast_in_dim(ok, updates, batch_pos);
}

/// scatter-add's transpose: the operand's cotangent passes through; each update gets the cotangent of
/// its window (zero for windows the scatter dropped).
std::vector<Array> scatter_add_transpose(std::span<const Array> ct, std::span<const LinearArg> args,
                                         const Params& ps) {
  if (args[1].is_linear()) not_differentiable("scatter-add", "its indices must be known");
  Arrays out(3);
  if (args[0].is_linear()) out[0] = ct[0];
  if (args[2].is_linear()) {
    const auto& upd = args[2].aval.shape;
    Array g = bind1(prim("gather"), {ct[0], args[1].value}, gather_params_of_scatter(ps, args[0].aval.shape, upd));
    out[2] = lax::select(windows_in_bounds(args[1].value, ps, args[0].aval.shape, upd), g, zeros_like_aval(g.aval()));
  }
  return out;
}

/// scatter (replace), JAX's scheme: scatter ids of the updates, gather them back to see which update won
/// each position, then a scatter-add of the masked operand and winning updates (and of their tangents).
JvpResult scatter_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  const Array &operand = x[0], &idx = x[1], &updates = x[2];
  Array out = bind1(prim("scatter"), {operand, idx, updates}, ps);
  const auto& uwd = ps.get_ints("update_window_dims");
  Shape ids_shape = updates.shape();
  for (auto d : uwd) ids_shape[d] = 1;
  int64_t n = 1;
  for (auto d : ids_shape) n *= d;
  Ints keep(updates.ndim());
  std::iota(keep.begin(), keep.end(), 0);
  Array ids = lax::broadcast_in_dim(
      lax::add(lax::reshape(lax::iota(DType::int64, n), ids_shape), Array::scalar_int(1, DType::int64)),
      updates.shape(), keep);
  Array scattered = bind1(prim("scatter"), {zeros_like_aval({operand.shape(), DType::int64}), idx, ids}, ps);
  Array gathered =
      bind1(prim("gather"), {scattered, idx}, gather_params_of_scatter(ps, operand.shape(), updates.shape()));
  Array keep_op = lax::eq(scattered, Array::scalar_int(0, DType::int64));
  Array won = lax::eq(ids, gathered);
  auto masked = [](A pred, A v) { return lax::select(pred, v, zeros_like_aval(v.aval())); };
  Array t_op = instantiate(t[0], operand.aval()), t_upd = instantiate(t[2], updates.aval());
  Array t_out = bind1(prim("scatter-add"), {masked(keep_op, t_op), idx, masked(won, t_upd)}, ps);
  return JvpResult{{out}, {t_out}};
}

/// scatter-mul: linear in the operand (its tangent is scattered with the same updates); the updates' tangent,
/// as in JAX, only with unique_indices (then out = operand * updates at each index, and the tangent is the
/// operand times the scattered update tangents).
JvpResult scatter_mul_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  Array out = bind1(prim("scatter-mul"), {x[0], x[1], x[2]}, ps);
  Array t_out;
  if (t[0].valid()) t_out = bind1(prim("scatter-mul"), {t[0], x[1], x[2]}, ps);
  if (t[2].valid()) {
    if (!ps.get_bool("unique_indices", false))
      not_differentiable("scatter-mul",
                         "the derivative with respect to the updates is only implemented with unique_indices=true "
                         "(as in JAX); pass unique_indices to lax::scatter_mul when no index repeats, or differentiate "
                         "only with respect to the operand");
    Array scattered = bind1(prim("scatter-add"), {zeros_like_aval(x[0].aval()), x[1], t[2]}, ps);
    t_out = add_tangents(t_out, lax::mul(x[0], scattered));
  }
  return JvpResult{{out}, {t_out}};
}

/// scatter-mul's transpose in the operand: each position is multiplied by the product of its updates, which
/// are known.
std::vector<Array> scatter_mul_transpose(std::span<const Array> ct, std::span<const LinearArg> args,
                                         const Params& ps) {
  if (!args[0].is_linear() || args[1].is_linear() || args[2].is_linear())
    not_differentiable("scatter-mul", "it is linear only in its operand (indices and updates known)");
  return {bind1(prim("scatter-mul"), {ct[0], args[1].value, args[2].value}, ps), Array(), Array()};
}

/// scatter-min/max, JAX's rule: each position's tangent is the average of the tangents of the values that
/// attain the result there (the operand's if it is kept, and every update equal to it), as max's ties are.
JvpFn scatter_extremal_jvp(const char* name) {
  return [name](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
    const Array &operand = x[0], &idx = x[1], &updates = x[2];
    Array out = bind1(prim(name), {operand, idx, updates}, ps);
    if (!t[0].valid() && !t[2].valid()) return JvpResult{{out}, {Array()}};
    auto indicator = [](A pred, A like) {
      return lax::select(pred, broadcast_to(scalar_like(like, 1.0), like.shape()), zeros_like_aval(like.aval()));
    };
    Array at = bind1(prim("gather"), {out, idx}, gather_params_of_scatter(ps, operand.shape(), updates.shape()));
    Array won = indicator(lax::eq(updates, at), updates);
    Array kept = indicator(lax::eq(operand, out), operand);
    Array zeros = zeros_like_aval(operand.aval());
    Array count = lax::add(kept, bind1(prim("scatter-add"), {zeros, idx, won}, ps));
    Array t_op = instantiate(t[0], operand.aval()), t_upd = instantiate(t[2], updates.aval());
    Array sum = lax::add(lax::mul(t_op, kept), bind1(prim("scatter-add"), {zeros, idx, lax::mul(t_upd, won)}, ps));
    return JvpResult{{out}, {lax::div(sum, count)}};
  };
}

/// t gathered at idx along axis, with every other axis indexed by its own position (take_along_axis);
/// idx has t's shape except along axis.
Array take_along_axis(A t, A idx, int64_t axis) {
  int64_t r = t.ndim();
  // Nothing to take from an empty t (a slice size of 1 would not fit it): the result is empty like idx.
  if (t.size() == 0 || idx.size() == 0)
    return lax::broadcast_in_dim(lax::convert_element_type(Array(0), t.dtype()), idx.shape(), {});
  Shape s = idx.shape(), s1 = s;
  s1.push_back(1);
  Arrays cols;
  for (int64_t d = 0; d < r; ++d) {
    Array c = d == axis ? idx : lax::broadcasted_iota(idx.dtype(), s, d);
    cols.push_back(lax::reshape(c, s1));
  }
  Ints all(r);
  std::iota(all.begin(), all.end(), 0);
  lax::GatherDimensionNumbers dn;
  dn.collapsed_slice_dims = all;
  dn.start_index_map = all;
  dn.index_vector_dim = r;
  return lax::gather(t, lax::concatenate(cols, r), dn, Ints(r, 1));
}

/// sort (JAX's rule): sort an iota along with the operands, then take every tangent along that permutation.
JvpResult sort_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  int64_t d = ps.get_int("dimension");
  Arrays ins(x.begin(), x.end());
  ins.push_back(lax::broadcasted_iota(DType::int32, x[0].shape(), d));
  Arrays outs = bind(prim("sort"), ins, ps);
  Array perm = outs.back();
  outs.pop_back();
  Arrays touts;
  for (auto& ti : t) touts.push_back(ti.valid() ? take_along_axis(ti, perm, d) : Array());
  return JvpResult{outs, touts};
}

// --- batching rules ------------------------------------------------------------------------------------
using Dims = std::span<const int64_t>;
using Ins = std::span<const Array>;

/// gather. Operand batched only: its batch axis (in front) is one more window axis, of the whole batch, placed
/// first in the result. Indices batched: their batch axis (in front) is one more batch axis of the result, first
/// too; when the operand is batched as well, the two pair up as StableHLO batching dimensions (each example reads
/// its own operand).
BatchResult gather_batch(Ins args, Dims dims, const Params& ps) {
  Params q = ps;
  const auto& offset = ps.get_ints("offset_dims");
  const auto& collapsed = ps.get_ints("collapsed_slice_dims");
  const auto& obd = ps.get_ints("operand_batching_dims");
  const auto& sibd = ps.get_ints("start_indices_batching_dims");
  const auto& sim = ps.get_ints("start_index_map");
  const auto& sizes = ps.get_ints("slice_sizes");
  if (dims[1] == not_mapped) {
    Array x = move_axis(args[0], dims[0], 0);
    q.set("offset_dims", prepended(0, shifted(offset)));
    q.set("collapsed_slice_dims", shifted(collapsed));
    q.set("operand_batching_dims", shifted(obd));
    q.set("start_index_map", shifted(sim));
    q.set("slice_sizes", prepended(x.shape()[0], sizes));
    return {{bind1(prim("gather"), {x, args[1]}, q)}, {0}};
  }
  Array idx = move_axis(args[1], dims[1], 0);
  q.set("index_vector_dim", ps.get_int("index_vector_dim") + 1);
  q.set("offset_dims", shifted(offset));
  q.set("start_indices_batching_dims", shifted(sibd));
  if (dims[0] == not_mapped) return {{bind1(prim("gather"), {args[0], idx}, q)}, {0}};
  Array x = move_axis(args[0], dims[0], 0);
  q.set("collapsed_slice_dims", shifted(collapsed));
  q.set("start_index_map", shifted(sim));
  q.set("operand_batching_dims", prepended(0, shifted(obd)));
  q.set("start_indices_batching_dims", prepended(0, shifted(sibd)));
  q.set("slice_sizes", prepended(1, sizes));
  return {{bind1(prim("gather"), {x, idx}, q)}, {0}};
}

/// scatter*: the operand and updates get the batch axis in front (broadcast when unbatched). Unbatched indices:
/// it is one more window axis of the updates. Batched indices: one more scatter axis, paired with the operand's
/// as StableHLO batching dimensions, so each example writes only its own operand.
BatchFn scatter_batch(std::string name) {
  return [name](Ins args, Dims dims, const Params& ps) -> BatchResult {
    int64_t n = batch_size(args, dims);
    Params q = ps;
    Array x = batch_at(args[0], dims[0], n), u = batch_at(args[2], dims[2], n);
    const auto& uwd = ps.get_ints("update_window_dims");
    q.set("inserted_window_dims", shifted(ps.get_ints("inserted_window_dims")));
    q.set("scatter_dims_to_operand_dims", shifted(ps.get_ints("scatter_dims_to_operand_dims")));
    const auto& ibd = ps.get_ints("input_batching_dims");
    if (dims[1] == not_mapped) {
      q.set("update_window_dims", prepended(0, shifted(uwd)));
      q.set("input_batching_dims", shifted(ibd));
      return {{bind1(prim(name.c_str()), {x, args[1], u}, q)}, {0}};
    }
    Array idx = move_axis(args[1], dims[1], 0);
    q.set("update_window_dims", shifted(uwd));
    q.set("index_vector_dim", ps.get_int("index_vector_dim") + 1);
    q.set("input_batching_dims", prepended(0, shifted(ibd)));
    q.set("scatter_indices_batching_dims", prepended(0, shifted(ps.get_ints("scatter_indices_batching_dims"))));
    return {{bind1(prim(name.c_str()), {x, idx, u}, q)}, {0}};
  };
}

/// sort: every operand with the batch axis in front (broadcast when unbatched), sorted along the shifted axis.
BatchResult sort_batch(Ins args, Dims dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  Arrays xs;
  for (size_t i = 0; i < args.size(); ++i) xs.push_back(batch_at(args[i], dims[i], n));
  Params q = ps;
  q.set("dimension", ps.get_int("dimension") + 1);
  Arrays outs = detail::bind(prim("sort"), xs, q);
  return {outs, std::vector<int64_t>(outs.size(), 0)};
}

/// Each entry of v in [0, bound), no repeats (and increasing when sorted is set).
void check_dims(std::string_view op, std::string_view what, const Ints& v, int64_t bound, bool sorted) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] >= bound)
      throw_error<ShapeError>(op, "{} {} has entry {} outside [0, {})", what, shape_str(v), v[i], bound);
    for (size_t j = 0; j < i; ++j)
      if (v[j] == v[i]) throw_error<ShapeError>(op, "{} {} repeats {}", what, shape_str(v), v[i]);
    if (sorted && i > 0 && v[i] < v[i - 1])
      throw_error<ShapeError>(op, "{} {} must be sorted in increasing order", what, shape_str(v));
  }
}

void check_disjoint(std::string_view op, std::string_view wa, const Ints& a, std::string_view wb, const Ints& b) {
  for (auto x : a)
    if (contains(b, x))
      throw_error<ShapeError>(op, "{} {} and {} {} must not share an axis (both have {})", wa, shape_str(a), wb,
                              shape_str(b), x);
}

/// Checks the index array and the batching-dimension pairs shared by gather and scatter; returns the index
/// array's batch shape (its dims without index_vector_dim).
Ints check_indices(std::string_view op, const ShapedArray& operand, const ShapedArray& idx, int64_t ivd,
                   const Ints& index_map, std::string_view index_map_name, const Ints& op_batching,
                   std::string_view op_batching_name, const Ints& idx_batching, std::string_view idx_batching_name) {
  if (!is_integer(idx.dtype))
    throw_error<TypeError>(op, "indices must have an integer dtype, got {}", idx.str());
  if (ivd < 0 || ivd > idx.ndim())
    throw_error<ShapeError>(op, "index_vector_dim {} is outside [0, {}] for indices {}", ivd, idx.ndim(), idx.str());
  int64_t nvec = ivd < idx.ndim() ? idx.shape[ivd] : 1;
  if (static_cast<int64_t>(index_map.size()) != nvec)
    throw_error<ShapeError>(op, "{} {} has {} entries; the index vectors of {} (index_vector_dim {}) have {}",
                            index_map_name, shape_str(index_map), index_map.size(), idx.str(), ivd, nvec);
  check_dims(op, index_map_name, index_map, operand.ndim(), false);
  check_dims(op, op_batching_name, op_batching, operand.ndim(), true);
  check_disjoint(op, op_batching_name, op_batching, index_map_name, index_map);
  check_dims(op, idx_batching_name, idx_batching, idx.ndim(), false);
  if (contains(idx_batching, ivd))
    throw_error<ShapeError>(op, "{} {} must not contain index_vector_dim {}", idx_batching_name,
                            shape_str(idx_batching), ivd);
  if (op_batching.size() != idx_batching.size())
    throw_error<ShapeError>(op, "{} {} and {} {} must have the same length", op_batching_name, shape_str(op_batching),
                            idx_batching_name, shape_str(idx_batching));
  for (size_t i = 0; i < op_batching.size(); ++i)
    if (operand.shape[op_batching[i]] != idx.shape[idx_batching[i]])
      throw_error<ShapeError>(op, "batching axes differ in size: operand {} axis {} is {}, indices {} axis {} is {}",
                              operand.str(), op_batching[i], operand.shape[op_batching[i]], idx.str(), idx_batching[i],
                              idx.shape[idx_batching[i]]);
  Ints batch;
  for (int64_t d = 0; d < idx.ndim(); ++d)
    if (d != ivd) batch.push_back(idx.shape[d]);
  return batch;
}

Outs gather_abstract_eval(std::span<const ShapedArray> in, const Params& ps) {
  const std::string_view op = "gather";
  if (in.size() != 2) throw_error<ShapeError>(op, "takes (operand, start_indices), got {} operands", in.size());
  const auto &x = in[0], &idx = in[1];
  const auto& offset = ps.get_ints("offset_dims");
  const auto& collapsed = ps.get_ints("collapsed_slice_dims");
  const auto& obd = ps.get_ints("operand_batching_dims");
  const auto& sibd = ps.get_ints("start_indices_batching_dims");
  const auto& sim = ps.get_ints("start_index_map");
  const auto& sizes = ps.get_ints("slice_sizes");
  int64_t ivd = ps.get_int("index_vector_dim");
  if (static_cast<int64_t>(sizes.size()) != x.ndim())
    throw_error<ShapeError>(op, "slice_sizes {} needs one entry per axis of the operand {}", shape_str(sizes), x.str());
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.shape[d])
      throw_error<ShapeError>(op, "slice_sizes {} axis {}: {} is outside [0, {}] for operand {}", shape_str(sizes), d,
                              sizes[d], x.shape[d], x.str());
  Ints batch = check_indices(op, x, idx, ivd, sim, "start_index_map", obd, "operand_batching_dims", sibd,
                             "start_indices_batching_dims");
  check_dims(op, "collapsed_slice_dims", collapsed, x.ndim(), true);
  check_disjoint(op, "collapsed_slice_dims", collapsed, "operand_batching_dims", obd);
  // JAX's rule: a collapsed axis takes exactly one element; a batching axis 0 or 1 (0 gives zeros, see lax::gather).
  for (auto d : collapsed)
    if (sizes[d] != 1)
      throw_error<ShapeError>(op, "collapsed_slice_dims axis {} has slice size {}, expected 1 (a collapsed axis "
                              "takes one element)", d, sizes[d]);
  for (auto d : obd)
    if (sizes[d] > 1)
      throw_error<ShapeError>(op, "operand_batching_dims axis {} has slice size {}, expected 0 or 1", d, sizes[d]);
  if (static_cast<int64_t>(offset.size() + collapsed.size() + obd.size()) != x.ndim())
    throw_error<ShapeError>(op,
                            "offset_dims {}, collapsed_slice_dims {} and operand_batching_dims {} must together have "
                            "one entry per operand axis ({})",
                            shape_str(offset), shape_str(collapsed), shape_str(obd), x.ndim());
  int64_t rank = static_cast<int64_t>(batch.size() + offset.size());
  check_dims(op, "offset_dims", offset, rank, true);
  Ints offset_sizes;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!contains(collapsed, d) && !contains(obd, d)) offset_sizes.push_back(sizes[d]);
  Shape s;
  size_t bi = 0, oi = 0;
  for (int64_t d = 0; d < rank; ++d) s.push_back(contains(offset, d) ? offset_sizes[oi++] : batch[bi++]);
  return Outs{ShapedArray{s, x.dtype, x.weak_type}};
}

Outs scatter_abstract_eval(const std::string& op, std::span<const ShapedArray> in, const Params& ps) {
  if (in.size() != 3)
    throw_error<ShapeError>(op, "takes (operand, scatter_indices, updates), got {} operands", in.size());
  const auto &x = in[0], &idx = in[1], &upd = in[2];
  const auto& uwd = ps.get_ints("update_window_dims");
  const auto& iwd = ps.get_ints("inserted_window_dims");
  const auto& ibd = ps.get_ints("input_batching_dims");
  const auto& sibd = ps.get_ints("scatter_indices_batching_dims");
  const auto& sdod = ps.get_ints("scatter_dims_to_operand_dims");
  int64_t ivd = ps.get_int("index_vector_dim");
  if (upd.dtype != x.dtype)
    throw_error<TypeError>(op, "updates dtype {} differs from the operand's {}", dtype_name(upd.dtype),
                           dtype_name(x.dtype));
  Ints batch = check_indices(op, x, idx, ivd, sdod, "scatter_dims_to_operand_dims", ibd, "input_batching_dims", sibd,
                             "scatter_indices_batching_dims");
  check_dims(op, "inserted_window_dims", iwd, x.ndim(), true);
  check_disjoint(op, "inserted_window_dims", iwd, "input_batching_dims", ibd);
  if (static_cast<int64_t>(uwd.size() + iwd.size() + ibd.size()) != x.ndim())
    throw_error<ShapeError>(op,
                            "update_window_dims {}, inserted_window_dims {} and input_batching_dims {} must together "
                            "have one entry per operand axis ({})",
                            shape_str(uwd), shape_str(iwd), shape_str(ibd), x.ndim());
  if (upd.ndim() != static_cast<int64_t>(batch.size() + uwd.size()))
    throw_error<ShapeError>(op, "updates {} must have rank {} ({} scatter axes from indices {} plus {} window axes)",
                            upd.str(), batch.size() + uwd.size(), batch.size(), idx.str(), uwd.size());
  check_dims(op, "update_window_dims", uwd, upd.ndim(), true);
  Ints window_bounds;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!contains(iwd, d) && !contains(ibd, d)) window_bounds.push_back(x.shape[d]);
  size_t bi = 0, wi = 0;
  for (int64_t d = 0; d < upd.ndim(); ++d) {
    if (contains(uwd, d)) {
      if (upd.shape[d] > window_bounds[wi])
        throw_error<ShapeError>(op, "updates {} window axis {} has size {}, larger than the operand's {}", upd.str(), d,
                                upd.shape[d], window_bounds[wi]);
      ++wi;
    } else if (upd.shape[d] != batch[bi++]) {
      throw_error<ShapeError>(op, "updates {} axis {} has size {}; the scatter axes of indices {} are {}", upd.str(), d,
                              upd.shape[d], idx.str(), shape_str(batch));
    }
  }
  return Outs{ShapedArray{x.shape, x.dtype, x.weak_type}};
}

void register_scatter(const std::string& name, const std::string& reducer, JvpFn jvp, TransposeFn transpose = nullptr) {
  Primitive p;
  p.name = name;
  p.num_operands = 3;
  p.jvp = std::move(jvp);
  p.transpose = std::move(transpose);
  p.batch = scatter_batch(name);
  p.abstract_eval = [name](std::span<const ShapedArray> in, const Params& ps) {
    return scatter_abstract_eval(name, in, ps);
  };
  p.lower = [reducer](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    const auto& ps = c.params;
    Params attrs{{"update_window_dims", ps.get_ints("update_window_dims")},
                 {"inserted_window_dims", ps.get_ints("inserted_window_dims")},
                 {"input_batching_dims", ps.get_ints("input_batching_dims")},
                 {"scatter_indices_batching_dims", ps.get_ints("scatter_indices_batching_dims")},
                 {"scatter_dims_to_operand_dims", ps.get_ints("scatter_dims_to_operand_dims")},
                 {"index_vector_dim", ps.get_int("index_vector_dim")},
                 {"indices_are_sorted", ps.get_bool("indices_are_sorted", false)},
                 {"unique_indices", ps.get_bool("unique_indices", false)},
                 {"reducer", reducer}};
    return Insts{c.comp->add(Opcode::kScatter, hlo_shape(c.out_avals[0]), {a[0], a[1], a[2]}, attrs)};
  };
  register_primitive(std::move(p));
}

/// A tuple-shaped instruction's elements as separate values (one value stays as it is).
Insts unpack(LowerCtx& c, hlo::Instruction* inst) {
  if (!inst->shape.is_tuple) return Insts{inst};
  Insts out;
  for (size_t k = 0; k < inst->shape.tuple_shapes.size(); ++k)
    out.push_back(c.comp->add(Opcode::kGetTupleElement, inst->shape.tuple_shapes[k], {inst},
                              Params{{"index", static_cast<int64_t>(k)}}));
  return out;
}

const bool kIndexingRegistered = [] {
  {
    // gather[offset_dims collapsed_slice_dims operand_batching_dims start_indices_batching_dims start_index_map
    //        index_vector_dim slice_sizes indices_are_sorted]; out-of-range starts are clamped, as XLA does.
    Primitive p;
    p.name = "gather";
    p.num_operands = 2;
    p.jvp = [](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
      Array out = bind1(prim("gather"), {x[0], x[1]}, ps);
      return JvpResult{{out}, {t[0].valid() ? bind1(prim("gather"), {t[0], x[1]}, ps) : Array()}};
    };
    p.transpose = gather_transpose;
    p.batch = gather_batch;
    p.abstract_eval = gather_abstract_eval;
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      const auto& ps = c.params;
      Params attrs{{"offset_dims", ps.get_ints("offset_dims")},
                   {"collapsed_slice_dims", ps.get_ints("collapsed_slice_dims")},
                   {"operand_batching_dims", ps.get_ints("operand_batching_dims")},
                   {"start_indices_batching_dims", ps.get_ints("start_indices_batching_dims")},
                   {"start_index_map", ps.get_ints("start_index_map")},
                   {"index_vector_dim", ps.get_int("index_vector_dim")},
                   {"slice_sizes", ps.get_ints("slice_sizes")},
                   {"indices_are_sorted", ps.get_bool("indices_are_sorted", false)}};
      return Insts{c.comp->add(Opcode::kGather, hlo_shape(c.out_avals[0]), {a[0], a[1]}, attrs)};
    };
    register_primitive(std::move(p));
  }
  // scatter*: out-of-range update windows are dropped (JAX's FILL_OR_DROP default for scatters).
  register_scatter("scatter", "replace", scatter_jvp);
  register_scatter("scatter-add", "add",
                   [](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
                     Array out = bind1(prim("scatter-add"), {x[0], x[1], x[2]}, ps);
                     if (!t[0].valid() && !t[2].valid()) return JvpResult{{out}, {Array()}};
                     return JvpResult{{out}, {bind1(prim("scatter-add"), {instantiate(t[0], x[0].aval()), x[1],
                                                                         instantiate(t[2], x[2].aval())}, ps)}};
                   },
                   scatter_add_transpose);
  register_scatter("scatter-mul", "mul", scatter_mul_jvp, scatter_mul_transpose);
  register_scatter("scatter-min", "min", scatter_extremal_jvp("scatter-min"));
  register_scatter("scatter-max", "max", scatter_extremal_jvp("scatter-max"));
  {
    // sort[dimension is_stable num_keys]: ascending, lexicographic over the first num_keys operands; floats in a
    // total order with -0.0 == 0.0 and every NaN last, as jnp.sort.
    Primitive p;
    p.name = "sort";
    p.jvp = sort_jvp;
    p.batch = sort_batch;
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      if (in.empty()) throw_error<ShapeError>("sort", "needs at least one operand");
      const auto& f = in[0];
      for (auto& a : in)
        if (a.shape != f.shape)
          throw_error<ShapeError>("sort", "operands must share a shape, got {}", avals_str(in));
      if (f.ndim() == 0) throw_error<ShapeError>("sort", "needs operands of rank at least 1, got {}", f.str());
      int64_t d = ps.get_int("dimension");
      if (d < 0 || d >= f.ndim())
        throw_error<ShapeError>("sort", "dimension {} is out of range for operands of rank {}", d, f.ndim());
      int64_t nk = ps.get_int("num_keys", 1);
      if (nk < 1 || nk > static_cast<int64_t>(in.size()))
        throw_error<ShapeError>("sort", "num_keys {} must be in [1, {}] (the number of operands)", nk, in.size());
      return Outs(in.begin(), in.end());
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      std::vector<hlo::Shape> shapes;
      for (auto& av : c.out_avals) shapes.push_back(hlo_shape(av));
      hlo::Shape s = shapes.size() == 1 ? shapes[0] : hlo::Shape::tuple(shapes);
      auto* sort = c.comp->add(Opcode::kSort, s, {a.begin(), a.end()},
                               Params{{"dimension", c.params.get_int("dimension")},
                                      {"is_stable", c.params.get_bool("is_stable", true)},
                                      {"num_keys", c.params.get_int("num_keys", 1)}});
      return unpack(c, sort);
    };
    register_primitive(std::move(p));
  }
  {
    // top_k[k]: the k largest entries along the last axis in IEEE's total order (as XLA's TopK: +NaN largest, -NaN
    // smallest, +0 above -0), ties to the lower index.
    Primitive p;
    p.name = "top_k";
    p.num_operands = 1;
    p.batch = leading_batch("top_k", [](Params&, int64_t) {});  // along the last axis, which stays last
    // The tangent taken at the chosen indices (JAX's rule).
    p.jvp = [](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
      Arrays outs = bind(prim("top_k"), {x[0]}, ps);
      return JvpResult{outs, {take_along_axis(t[0], outs[1], x[0].ndim() - 1), Array()}};
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& x = in[0];
      int64_t k = ps.get_int("k");
      if (x.ndim() == 0) throw_error<ShapeError>("top_k", "needs an operand of rank at least 1, got {}", x.str());
      if (is_bool(x.dtype)) throw_error<TypeError>("top_k", "needs a numeric operand, got {}", x.str());
      if (k < 0 || k > x.shape.back())
        throw_error<ShapeError>("top_k", "k = {} must be in [0, {}] (the last axis of {})", k, x.shape.back(), x.str());
      Shape s = x.shape;
      s.back() = k;
      return Outs{ShapedArray{s, x.dtype, x.weak_type}, ShapedArray{s, DType::int32, false}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      auto* tk = c.comp->add(Opcode::kTopK, hlo::Shape::tuple({hlo_shape(c.out_avals[0]), hlo_shape(c.out_avals[1])}),
                             {a[0]}, Params{{"k", c.params.get_int("k")}});
      return unpack(c, tk);
    };
    register_primitive(std::move(p));
  }
  return true;
}();
}  // namespace
}  // namespace jitx::detail
