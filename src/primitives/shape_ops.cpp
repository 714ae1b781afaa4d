// Shape primitives: broadcast_in_dim, reshape, transpose, rev, slice, dynamic_slice,
// dynamic_update_slice, concatenate, pad, iota.
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
using Cts = std::span<const Array>;
using Args = std::span<const LinearArg>;
using Arrays = std::vector<Array>;

// JAX's dtype rule of dynamic_slice and dynamic_update_slice: every start index has the same integer dtype (the
// API converts weak literals to the others' dtype first).
void check_same_index_dtypes(const char* op, std::span<const ShapedArray> idx) {
  for (const auto& i : idx)
    if (i.dtype != idx[0].dtype) {
      std::string got;
      for (const auto& j : idx) got += (got.empty() ? "" : ", ") + std::string(dtype_name(j.dtype));
      throw_error<TypeError>(op, "index arguments must be integers of the same type, got {}", got);
    }
}

/// The start-index operands of dynamic_slice / dynamic_update_slice (known values).
Arrays start_indices(Args args, size_t first) {
  Arrays out;
  for (size_t i = first; i < args.size(); ++i) out.push_back(args[i].value);
  return out;
}

void check_permutation(std::string_view op, const std::vector<int64_t>& perm, int64_t rank, std::string_view what) {
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(rank);
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota)
    throw_error<ShapeError>(op, "{} {} is not a permutation of the {} axes", what, shape_str(perm), rank);
}

Insts single(hlo::Instruction* i) { return Insts{i}; }

// --- batching rules ------------------------------------------------------------------------------------
using Dims = std::span<const int64_t>;
using Ins = std::span<const Array>;

/// The start indices args[first...] of each example as one [n, k] index array (a column per axis), in one
/// integer dtype; with_example puts each example's own number in a leading column.
Array stacked_starts(Ins args, Dims dims, size_t first, int64_t n, bool with_example) {
  DType dt = args.size() > first ? args[first].dtype() : DType::int32;
  for (size_t i = first; i < args.size(); ++i)
    if (args[i].dtype() != dt) dt = DType::int64;
  Arrays cols;
  if (with_example) cols.push_back(lax::reshape(lax::iota(dt, n), {n, 1}));
  for (size_t i = first; i < args.size(); ++i) {
    Array v = args[i].dtype() == dt ? args[i] : lax::convert_element_type(args[i], dt);
    cols.push_back(lax::reshape(batch_at(v, dims[i], n), {n, 1}));
  }
  return lax::concatenate(cols, 1);
}

/// Starts [n, k] clamped into [0, dim - size] column by column (as dynamic_slice clamps), so that the gather that
/// replaces a batched dynamic_slice reads in bounds and its transpose puts the gradient at the clamped start (as
/// JAX's batching rule, a gather in clip mode; gather's own clamping would drop it in the backward pass).
Array clamp_starts(const Array& starts, const std::vector<int64_t>& hi) {
  auto k = static_cast<int64_t>(hi.size());
  Array bound = lax::broadcast_in_dim(array(hi, Shape{k}, starts.dtype()), starts.shape(), {1});
  return lax::clamp(Array::scalar_int(0, starts.dtype()), starts, bound);
}

/// The dynamic slice primitives bound as they are: their rules get starts the API already counted from the end
/// once, and lax::dynamic_slice would count a start in [-2n, -n) from the end a second time (JAX clamps it).
Array dynamic_slice_p(const Array& x, const Arrays& starts, const std::vector<int64_t>& sizes) {
  static const auto& p = *find_primitive("dynamic_slice");
  Arrays ins{x};
  ins.insert(ins.end(), starts.begin(), starts.end());
  return bind1(p, ins, Params{{"slice_sizes", sizes}});
}
Array dynamic_update_slice_p(const Array& x, const Array& update, const Arrays& starts) {
  static const auto& p = *find_primitive("dynamic_update_slice");
  Arrays ins{x, update};
  ins.insert(ins.end(), starts.begin(), starts.end());
  return bind1(p, ins, Params{});
}

/// dynamic_slice: unbatched starts slice every example at once; batched starts become a gather with one start
/// vector per example, clamped first (clamp_starts).
BatchResult dynamic_slice_batch(Ins args, Dims dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  const auto& sizes = ps.get_ints("slice_sizes");
  if (n == 0) return {{zeros(prepended(0, sizes), args[0].dtype())}, {0}};  // no examples: nothing to gather
  bool starts_batched = std::any_of(dims.begin() + 1, dims.end(), [](int64_t d) { return d != not_mapped; });
  auto r = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> window(r);
  std::iota(window.begin(), window.end(), 1);
  if (!starts_batched) {
    Arrays idx{Array::scalar_int(0, args.size() > 1 ? args[1].dtype() : DType::int32)};
    idx.insert(idx.end(), args.begin() + 1, args.end());
    return {{dynamic_slice_p(move_axis(args[0], dims[0], 0), idx, prepended(n, sizes))}, {0}};
  }
  lax::GatherDimensionNumbers dn;
  dn.offset_dims = window;
  dn.index_vector_dim = 1;
  const Shape& full = args[0].shape();
  std::vector<int64_t> hi;
  for (int64_t d = 0, a = 0; d < static_cast<int64_t>(full.size()); ++d)
    if (d != dims[0]) hi.push_back(full[d] - sizes[a++]);
  if (dims[0] == not_mapped) {  // one operand, many starts
    dn.start_index_map = shifted(window, -1);
    return {{lax::gather(args[0], clamp_starts(stacked_starts(args, dims, 1, n, false), hi), dn, sizes)}, {0}};
  }
  dn.collapsed_slice_dims = {0};
  dn.start_index_map = prepended(0, window);
  hi.insert(hi.begin(), n - 1);
  return {{lax::gather(move_axis(args[0], dims[0], 0), clamp_starts(stacked_starts(args, dims, 1, n, true), hi), dn,
                       prepended(1, sizes))},
          {0}};
}

/// dynamic_update_slice: unbatched starts update every example at once; batched starts become a scatter of each
/// example's update at its own (clamped, as dynamic_update_slice clamps) start.
BatchResult dynamic_update_slice_batch(Ins args, Dims dims, const Params&) {
  int64_t n = batch_size(args, dims);
  Array x = batch_at(args[0], dims[0], n), u = batch_at(args[1], dims[1], n);
  if (n == 0) return {{x}, {0}};  // no examples: nothing to scatter
  bool starts_batched = std::any_of(dims.begin() + 2, dims.end(), [](int64_t d) { return d != not_mapped; });
  int64_t r = x.ndim() - 1;
  if (!starts_batched) {
    Arrays idx{Array::scalar_int(0, args.size() > 2 ? args[2].dtype() : DType::int32)};
    idx.insert(idx.end(), args.begin() + 2, args.end());
    return {{dynamic_update_slice_p(x, u, idx)}, {0}};
  }
  Arrays starts(args.begin(), args.end());
  std::vector<int64_t> sdims(dims.begin(), dims.end());
  for (int64_t k = 0; k < r; ++k) {
    const Array& s = args[2 + k];
    Array hi = Array::scalar_int(x.shape()[1 + k] - u.shape()[1 + k], s.dtype());
    starts[2 + k] = lax::clamp(Array::scalar_int(0, s.dtype()), s, hi);
  }
  std::vector<int64_t> window(r);
  std::iota(window.begin(), window.end(), 1);
  lax::ScatterDimensionNumbers dn;
  dn.update_window_dims = window;
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = prepended(0, window);
  dn.index_vector_dim = 1;
  Array idx = stacked_starts(starts, sdims, 2, n, true);
  return {{lax::scatter(x, idx, u, dn, /*indices_are_sorted=*/true, /*unique_indices=*/true)}, {0}};
}

BatchResult concatenate_batch(Ins args, Dims dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  Arrays xs;
  for (size_t i = 0; i < args.size(); ++i) xs.push_back(batch_at(args[i], dims[i], n));
  return {{lax::concatenate(xs, ps.get_int("dimension") + 1)}, {0}};
}

/// pad: a batched padding value pads with zeros and then selects each example's value outside the operand.
BatchResult pad_batch(Ins args, Dims dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  Params q = ps;
  auto cfg = ps.get_ints("padding_config");
  cfg.insert(cfg.begin(), {0, 0, 0});
  q.set("padding_config", cfg);
  static const Primitive& pad = *find_primitive("pad");
  Array x = batch_at(args[0], dims[0], n);
  if (dims[1] == not_mapped) return {{bind1(pad, {x, args[1]}, q)}, {0}};
  Array padded = bind1(pad, {x, scalar_like(x, 0)}, q);
  Array inside = bind1(pad, {lax::full(x.shape(), Array(true)), Array(false)}, q);
  Array v = lax::broadcast_in_dim(move_axis(args[1], dims[1], 0), padded.shape(), {0});
  return {{lax::select(inside, padded, v)}, {0}};
}

// Broadcasting, reshaping, transposing and reversing: the ops that move no element values.
const bool registered_layout_ops = [] {
  {
    Primitive p;
    p.name = "broadcast_in_dim";
    p.num_operands = 1;
    p.batch = leading_batch("broadcast_in_dim", [](Params& q, int64_t n) {
      q.set("shape", prepended(n, q.get_ints("shape")));
      q.set("broadcast_dimensions", prepended(0, shifted(q.get_ints("broadcast_dimensions"))));
    });
    // Transpose: sum over the broadcast axes (new ones and expanded size-1 ones), then restore the operand's shape.
    p.jvp = linear_jvp("broadcast_in_dim");
    p.transpose = [](Cts ct, Args args, const Params& ps) {
      const auto& shape = ps.get_ints("shape");
      const auto& bd = ps.get_ints("broadcast_dimensions");
      const auto& av = args[0].aval;
      std::vector<int64_t> axes;
      for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
        auto it = std::find(bd.begin(), bd.end(), i);
        if (it == bd.end() || av.shape[it - bd.begin()] != shape[i]) axes.push_back(i);
      }
      Array r = axes.empty() ? ct[0] : lax::reduce_sum(ct[0], axes);
      return Arrays{lax::reshape(r, av.shape)};
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& shape = ps.get_ints("shape");
      const auto& bd = ps.get_ints("broadcast_dimensions");
      const auto& x = in[0];
      if (static_cast<int64_t>(bd.size()) != x.ndim())
        throw_error<ShapeError>("broadcast_in_dim", "broadcast_dimensions {} must have one entry per operand axis ({})",
                                shape_str(bd), x.ndim());
      for (size_t i = 0; i < bd.size(); ++i) {
        if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(shape.size()) || (i > 0 && bd[i] <= bd[i - 1]))
          throw_error<ShapeError>("broadcast_in_dim",
                                  "broadcast_dimensions {} must be distinct axes of the result {}", shape_str(bd),
                                  shape_str(shape));
        if (x.shape[i] != 1 && x.shape[i] != shape[bd[i]])
          throw_error<ShapeError>("broadcast_in_dim",
                                  "cannot broadcast operand {} to {}: axis {} has size {}, result axis {} has {}",
                                  shape_str(x.shape), shape_str(shape), i, x.shape[i], bd[i], shape[bd[i]]);
      }
      return Outs{ShapedArray{shape, x.dtype, x.weak_type}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return single(c.comp->add(Opcode::kBroadcastInDim, hlo_shape(c.out_avals[0]), {a[0]},
                                Params{{"broadcast_dimensions", c.params.get_ints("broadcast_dimensions")}}));
    };
    register_primitive(std::move(p));
  }
  {
    Primitive p;
    p.name = "reshape";
    p.num_operands = 1;
    p.batch = leading_batch("reshape",
                            [](Params& q, int64_t n) { q.set("new_sizes", prepended(n, q.get_ints("new_sizes"))); });
    p.jvp = linear_jvp("reshape");
    p.transpose = [](Cts ct, Args args, const Params&) { return Arrays{lax::reshape(ct[0], args[0].aval.shape)}; };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& ns = ps.get_ints("new_sizes");
      for (auto d : ns)
        if (d < 0) throw_error<ShapeError>("reshape", "new_sizes {} has a negative size", shape_str(ns));
      if (num_elements(ns) != in[0].size())
        throw_error<ShapeError>("reshape",
                                "cannot reshape an array of shape {} ({} elements) into shape {} ({} elements)",
                                shape_str(in[0].shape), in[0].size(), shape_str(ns), num_elements(ns));
      return Outs{ShapedArray{ns, in[0].dtype, in[0].weak_type}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return single(c.comp->add(Opcode::kReshape, hlo_shape(c.out_avals[0]), {a[0]}));
    };
    register_primitive(std::move(p));
  }
  {
    Primitive p;
    p.name = "transpose";
    p.num_operands = 1;
    p.batch = leading_batch("transpose", [](Params& q, int64_t) {
      q.set("permutation", prepended(0, shifted(q.get_ints("permutation"))));
    });
    p.jvp = linear_jvp("transpose");
    p.transpose = [](Cts ct, Args, const Params& ps) {
      const auto& perm = ps.get_ints("permutation");
      std::vector<int64_t> inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
      return Arrays{lax::transpose(ct[0], inv)};
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& perm = ps.get_ints("permutation");
      check_permutation("transpose", perm, in[0].ndim(), "permutation");
      Shape s;
      for (auto i : perm) s.push_back(in[0].shape[i]);
      return Outs{ShapedArray{s, in[0].dtype, in[0].weak_type}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return single(c.comp->add(Opcode::kTranspose, hlo_shape(c.out_avals[0]), {a[0]},
                                Params{{"permutation", c.params.get_ints("permutation")}}));
    };
    register_primitive(std::move(p));
  }
  {
    Primitive p;
    p.name = "rev";
    p.num_operands = 1;
    p.batch = leading_batch("rev", [](Params& q, int64_t) { q.set("dimensions", shifted(q.get_ints("dimensions"))); });
    p.jvp = linear_jvp("rev");
    p.transpose = [](Cts ct, Args, const Params& ps) { return Arrays{lax::rev(ct[0], ps.get_ints("dimensions"))}; };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      for (auto d : ps.get_ints("dimensions"))
        if (d < 0 || d >= in[0].ndim())
          throw_error<ShapeError>("rev", "dimension {} is out of range for rank {}", d, in[0].ndim());
      return Outs{in[0]};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return single(c.comp->add(Opcode::kReverse, hlo_shape(c.out_avals[0]), {a[0]},
                                Params{{"dimensions", c.params.get_ints("dimensions")}}));
    };
    register_primitive(std::move(p));
  }
  return true;
}();

// Slicing, dynamic slices and updates, concatenation, padding and iota.
const bool registered_slicing_ops = [] {
  {
    Primitive p;
    p.name = "slice";
    p.num_operands = 1;
    p.batch = leading_batch("slice", [](Params& q, int64_t n) {
      q.set("start_indices", prepended(0, q.get_ints("start_indices")));
      q.set("limit_indices", prepended(n, q.get_ints("limit_indices")));
      if (q.has("strides")) q.set("strides", prepended(1, q.get_ints("strides")));
    });
    // Transpose: the cotangent padded back into the operand's shape (strides become interior padding).
    p.jvp = linear_jvp("slice");
    p.transpose = [](Cts ct, Args args, const Params& ps) {
      const auto& shape = args[0].aval.shape;
      auto start = ps.get_ints("start_indices");
      auto strides = ps.get_ints("strides", std::vector<int64_t>(shape.size(), 1));
      std::vector<std::array<int64_t, 3>> cfg;
      for (size_t i = 0; i < shape.size(); ++i) {
        int64_t n = ct[0].shape()[i];
        int64_t real_limit = start[i] + (n == 0 ? 0 : 1 + (n - 1) * strides[i]);
        cfg.push_back({start[i], shape[i] - real_limit, strides[i] - 1});
      }
      return Arrays{lax::pad(ct[0], scalar_like(ct[0], 0), cfg)};
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& x = in[0];
      auto start = ps.get_ints("start_indices");
      auto limit = ps.get_ints("limit_indices");
      auto strides = ps.get_ints("strides", std::vector<int64_t>(x.ndim(), 1));
      if (static_cast<int64_t>(start.size()) != x.ndim() || limit.size() != start.size() ||
          strides.size() != start.size())
        throw_error<ShapeError>("slice", "start_indices {}, limit_indices {} and strides {} must each have {} entries",
                                shape_str(start), shape_str(limit), shape_str(strides), x.ndim());
      Shape s;
      for (int64_t i = 0; i < x.ndim(); ++i) {
        if (start[i] < 0 || limit[i] > x.shape[i] || start[i] > limit[i] || strides[i] < 1)
          throw_error<ShapeError>("slice", "axis {}: [{}:{}:{}] is not a valid slice of size {}", i, start[i], limit[i],
                                  strides[i], x.shape[i]);
        s.push_back(limit[i] > start[i] ? (limit[i] - start[i] - 1) / strides[i] + 1 : 0);  // no overflow
      }
      return Outs{ShapedArray{s, x.dtype, x.weak_type}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      auto n = c.in_avals[0].ndim();
      return single(c.comp->add(Opcode::kSlice, hlo_shape(c.out_avals[0]), {a[0]},
                                Params{{"start_indices", c.params.get_ints("start_indices")},
                                       {"limit_indices", c.params.get_ints("limit_indices")},
                                       {"strides", c.params.get_ints("strides", std::vector<int64_t>(n, 1))}}));
    };
    register_primitive(std::move(p));
  }
  {
    // dynamic_slice(operand, *start_indices)[slice_sizes]; starts are clamped into range.
    Primitive p;
    p.name = "dynamic_slice";
    p.batch = dynamic_slice_batch;
    // Tangent: the same slice of the tangent. Transpose: the cotangent written into zeros at the same start.
    p.jvp = [](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
      Arrays idx(x.begin() + 1, x.end());
      const auto& sizes = ps.get_ints("slice_sizes");
      Array out = dynamic_slice_p(x[0], idx, sizes);
      return JvpResult{{out}, {t[0].valid() ? dynamic_slice_p(t[0], idx, sizes) : Array()}};
    };
    p.transpose = [](Cts ct, Args args, const Params&) {
      Arrays out(args.size());
      out[0] = dynamic_update_slice_p(zeros_like_aval(args[0].aval), ct[0], start_indices(args, 1));
      return out;
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& x = in[0];
      const auto& sizes = ps.get_ints("slice_sizes");
      if (static_cast<int64_t>(in.size()) != x.ndim() + 1 || static_cast<int64_t>(sizes.size()) != x.ndim())
        throw_error<ShapeError>("dynamic_slice",
                                "needs one start index and one slice size per axis of {}, got {} and {}", x.str(),
                                in.size() - 1, sizes.size());
      for (size_t i = 1; i < in.size(); ++i)
        if (!in[i].shape.empty() || !is_integer(in[i].dtype))
          throw_error<TypeError>("dynamic_slice", "start index {} must be an integer scalar, got {}", i - 1,
                                 in[i].str());
      check_same_index_dtypes("dynamic_slice", in.subspan(1));
      for (int64_t i = 0; i < x.ndim(); ++i)
        if (sizes[i] < 0 || sizes[i] > x.shape[i])
          throw_error<ShapeError>("dynamic_slice", "slice size {} on axis {} exceeds the operand's size {}", sizes[i],
                                  i, x.shape[i]);
      return Outs{ShapedArray{sizes, x.dtype, x.weak_type}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return single(c.comp->add(Opcode::kDynamicSlice, hlo_shape(c.out_avals[0]), {a.begin(), a.end()},
                                Params{{"slice_sizes", c.params.get_ints("slice_sizes")}}));
    };
    register_primitive(std::move(p));
  }
  {
    Primitive p;
    p.name = "dynamic_update_slice";
    p.batch = dynamic_update_slice_batch;
    p.jvp = [](std::span<const Array> x, std::span<const Array> t, const Params&) {
      Arrays idx(x.begin() + 2, x.end());
      Array out = dynamic_update_slice_p(x[0], x[1], idx);
      if (!t[0].valid() && !t[1].valid()) return JvpResult{{out}, {Array()}};
      return JvpResult{
          {out},
          {dynamic_update_slice_p(instantiate(t[0], x[0].aval()), instantiate(t[1], x[1].aval()), idx)}};
    };
    p.transpose = [](Cts ct, Args args, const Params&) {
      Arrays out(args.size()), idx = start_indices(args, 2);
      if (args[0].is_linear()) out[0] = dynamic_update_slice_p(ct[0], zeros_like_aval(args[1].aval), idx);
      if (args[1].is_linear()) out[1] = dynamic_slice_p(ct[0], idx, args[1].aval.shape);
      return out;
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      const auto &x = in[0], &u = in[1];
      if (static_cast<int64_t>(in.size()) != x.ndim() + 2 || u.ndim() != x.ndim())
        throw_error<ShapeError>("dynamic_update_slice",
                                "operand {} and update {} need equal ranks and one start index per axis", x.str(),
                                u.str());
      if (u.dtype != x.dtype)
        throw_error<TypeError>("dynamic_update_slice", "update dtype {} differs from the operand's {}",
                               dtype_name(u.dtype), dtype_name(x.dtype));
      for (int64_t i = 0; i < x.ndim(); ++i)
        if (u.shape[i] > x.shape[i])
          throw_error<ShapeError>("dynamic_update_slice", "update {} does not fit in operand {}", shape_str(u.shape),
                                  shape_str(x.shape));
      for (size_t i = 2; i < in.size(); ++i)
        if (!in[i].shape.empty() || !is_integer(in[i].dtype))
          throw_error<TypeError>("dynamic_update_slice", "start index {} must be an integer scalar, got {}", i - 2,
                                 in[i].str());
      check_same_index_dtypes("dynamic_update_slice", in.subspan(2));
      ShapedArray out = x;
      out.weak_type = x.weak_type && in[1].weak_type;  // weak only if the update is too, as JAX's
      return Outs{out};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return single(c.comp->add(Opcode::kDynamicUpdateSlice, hlo_shape(c.out_avals[0]), {a.begin(), a.end()}));
    };
    register_primitive(std::move(p));
  }
  {
    Primitive p;
    p.name = "concatenate";
    p.batch = concatenate_batch;
    p.jvp = linear_jvp("concatenate");
    p.transpose = [](Cts ct, Args args, const Params& ps) {
      int64_t d = ps.get_int("dimension"), off = 0;
      Arrays out(args.size());
      for (size_t i = 0; i < args.size(); ++i) {
        int64_t n = args[i].aval.shape[d];
        if (args[i].is_linear()) out[i] = lax::slice_in_dim(ct[0], off, off + n, 1, d);
        off += n;
      }
      return out;
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      if (in.empty()) throw_error<ShapeError>("concatenate", "needs at least one operand");
      int64_t d = ps.get_int("dimension");
      const auto& f = in[0];
      if (d < 0 || d >= f.ndim())
        throw_error<ShapeError>("concatenate", "dimension {} is out of range for rank {}", d, f.ndim());
      Shape s = f.shape;
      s[d] = 0;
      bool weak = true;
      for (auto& a : in) {
        if (a.dtype != f.dtype)
          throw_error<TypeError>("concatenate", "operands must share a dtype, got {} and {}", dtype_name(f.dtype),
                                 dtype_name(a.dtype));
        bool ok = a.ndim() == f.ndim();
        for (int64_t i = 0; ok && i < f.ndim(); ++i) ok = i == d || a.shape[i] == f.shape[i];
        if (!ok)
          throw_error<ShapeError>("concatenate", "shapes {} and {} differ outside dimension {}", shape_str(f.shape),
                                  shape_str(a.shape), d);
        s[d] += a.shape[d];
        weak = weak && a.weak_type;
      }
      return Outs{ShapedArray{s, f.dtype, weak}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return single(c.comp->add(Opcode::kConcatenate, hlo_shape(c.out_avals[0]), {a.begin(), a.end()},
                                Params{{"dimension", c.params.get_int("dimension")}}));
    };
    register_primitive(std::move(p));
  }
  {
    // pad(operand, padding_value)[padding_config = flattened (lo, hi, interior) per axis]
    Primitive p;
    p.name = "pad";
    p.num_operands = 2;
    p.batch = pad_batch;
    // Transpose (JAX's): the operand's cotangent is the cotangent with the padding cut away (negative padding
    // becomes zero padding); the padding value's is everything else.
    p.jvp = linear_jvp("pad");
    p.transpose = [](Cts ct, Args args, const Params& ps) {
      const auto& cfg = ps.get_ints("padding_config");
      const Array& t = ct[0];
      std::vector<std::array<int64_t, 3>> grow;
      std::vector<int64_t> start, limit, strides;
      for (int64_t i = 0; i < t.ndim(); ++i) {
        int64_t lo = cfg[3 * i], hi = cfg[3 * i + 1], in = cfg[3 * i + 2];
        grow.push_back({std::max<int64_t>(-lo, 0), std::max<int64_t>(-hi, 0), 0});
        int64_t n = t.shape()[i] + grow.back()[0] + grow.back()[1];
        start.push_back(std::max<int64_t>(lo, 0));
        limit.push_back(n - std::max<int64_t>(hi, 0));
        strides.push_back(in + 1);
      }
      Array op = lax::slice(lax::pad(t, scalar_like(t, 0), grow), start, limit, strides);
      Arrays out(2);
      if (args[0].is_linear()) out[0] = op;
      if (args[1].is_linear()) {
        std::vector<int64_t> all(t.ndim()), all_op(op.ndim());
        std::iota(all.begin(), all.end(), 0);
        std::iota(all_op.begin(), all_op.end(), 0);
        out[1] = lax::sub(lax::reduce_sum(t, all), lax::reduce_sum(op, all_op));
      }
      return out;
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto &x = in[0], &v = in[1];
      const auto& cfg = ps.get_ints("padding_config");
      if (!v.shape.empty() || v.dtype != x.dtype)
        throw_error<TypeError>("pad", "the padding value must be a scalar of dtype {}, got {}", dtype_name(x.dtype),
                               v.str());
      if (static_cast<int64_t>(cfg.size()) != 3 * x.ndim())
        throw_error<ShapeError>("pad", "padding_config needs (low, high, interior) for each of {} axes", x.ndim());
      Shape s;
      for (int64_t i = 0; i < x.ndim(); ++i) {
        int64_t lo = cfg[3 * i], hi = cfg[3 * i + 1], in_ = cfg[3 * i + 2];
        if (in_ < 0) throw_error<ShapeError>("pad", "interior padding {} on axis {} is negative", in_, i);
        int64_t n = x.shape[i];
        int64_t size = 0, holes = 0;
        if (__builtin_mul_overflow(std::max<int64_t>(n - 1, 0), in_, &holes) ||
            __builtin_add_overflow(lo, hi, &size) || __builtin_add_overflow(size, n, &size) ||
            __builtin_add_overflow(size, holes, &size))
          throw_error<ShapeError>("pad", "padding ({}, {}, {}) of axis {} (size {}) overflows int64", lo, hi, in_, i,
                                  n);
        if (size < 0) throw_error<ShapeError>("pad", "padding makes axis {} negative ({})", i, size);
        s.push_back(size);
      }
      return Outs{ShapedArray{s, x.dtype, x.weak_type}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      const auto& cfg = c.params.get_ints("padding_config");
      std::vector<int64_t> lo, hi, in;
      for (size_t i = 0; i < cfg.size(); i += 3) {
        lo.push_back(cfg[i]);
        hi.push_back(cfg[i + 1]);
        in.push_back(cfg[i + 2]);
      }
      return single(c.comp->add(Opcode::kPad, hlo_shape(c.out_avals[0]), {a[0], a[1]},
                                Params{{"edge_padding_low", lo}, {"edge_padding_high", hi}, {"interior_padding", in}}));
    };
    register_primitive(std::move(p));
  }
  {
    Primitive p;
    p.name = "iota";
    p.num_operands = 0;
    p.jvp = zero_jvp("iota");
    p.abstract_eval = [](std::span<const ShapedArray>, const Params& ps) {
      const auto& shape = ps.get_ints("shape");
      int64_t d = ps.get_int("dimension");
      if (d < 0 || d >= static_cast<int64_t>(shape.size()))
        throw_error<ShapeError>("iota", "dimension {} is out of range for shape {}", d, shape_str(shape));
      if (is_bool(ps.get_dtype("dtype"))) throw_error<TypeError>("iota", "dtype must be numeric, got bool");
      return Outs{ShapedArray{shape, ps.get_dtype("dtype"), false}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const>) {
      return single(c.comp->add(Opcode::kIota, hlo_shape(c.out_avals[0]), {},
                                Params{{"iota_dimension", c.params.get_int("dimension")}}));
    };
    register_primitive(std::move(p));
  }
  return true;
}();
}  // namespace
}  // namespace jitx::detail
