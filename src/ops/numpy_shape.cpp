// jitx::numpy shape functions: moveaxis, the stacks, atleast_*d, the splits, diagonal/trace, meshgrid, rot90 and
// the flips, append, diff, delete and insert, composed from existing jnp/lax functions so that grad, vmap and jit
// apply to them.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
using stats_util::stats_check_valid;
using stats_util::stats_strong;

namespace {
void require_all(const std::vector<Array>& xs, std::string_view op) {
  for (size_t i = 0; i < xs.size(); ++i)
    if (!xs[i].valid()) throw_error<TypeError>(op, "array {} is empty (default-constructed)", i);
}

Array with_shape(const Array& x, Shape s) { return x.shape() == s ? x : lax::reshape(x, std::move(s)); }

Array atleast_nd(const Array& x, int64_t n) {
  const Shape& s = x.shape();
  if (x.ndim() >= n) return x;
  if (n == 3 && x.ndim() == 1) return lax::reshape(x, {1, s[0], 1});  // NumPy's (n,) -> (1, n, 1)
  if (n == 3 && x.ndim() == 2) return lax::reshape(x, {s[0], s[1], 1});
  Shape out(static_cast<size_t>(n - x.ndim()), 1);
  out.insert(out.end(), s.begin(), s.end());
  return lax::reshape(x, out);
}

Array concat_in(const std::vector<Array>& xs, int64_t axis, std::optional<DType> dtype) {
  if (!dtype) return concatenate(xs, axis);
  std::vector<Array> cs;
  for (const Array& x : xs) cs.push_back(astype(x, *dtype));  // JAX's asarray(x, dtype): strong, in dtype
  return concatenate(cs, axis);
}

Array stack_family(const std::vector<Array>& tup, int64_t rank, std::optional<DType> dtype, std::string_view op) {
  if (tup.empty()) throw_error<ShapeError>(op, "needs at least one array");
  require_all(tup, op);
  std::vector<Array> arrs;
  for (const Array& x : tup) arrs.push_back(atleast_nd(x, rank));
  int64_t axis = rank == 1 ? (arrs[0].ndim() == 1 ? 0 : 1) : rank == 2 ? 0 : 2;
  return concat_in(arrs, axis, dtype);
}

/// ary cut along axis into pieces of the given sizes (each >= 0, adding up to the axis).
std::vector<Array> split_sizes(const Array& ary, int64_t axis, const std::vector<int64_t>& sizes) {
  std::vector<Array> out;
  int64_t start = 0;
  for (int64_t n : sizes) {
    out.push_back(lax::slice_in_dim(ary, start, start + n, 1, axis));
    start += n;
  }
  return out;
}

/// The axis hsplit/vsplit/dsplit/split name (hsplit: 1, or 0 for a 1-D array).
int64_t split_axis(const Array& ary, std::optional<int64_t> axis, std::string_view op) {
  if (ary.ndim() == 0) throw_error<ShapeError>(op, "cannot split a 0-d array");
  return detail::canonical_axis(axis.value_or(ary.ndim() == 1 ? 0 : 1), ary.ndim(), op);
}

std::vector<Array> split_at(const Array& ary, const std::vector<int64_t>& idx, std::optional<int64_t> axis,
                            std::string_view op) {
  stats_check_valid(op, ary);
  int64_t a = split_axis(ary, axis, op), n = ary.shape()[a];
  std::vector<int64_t> sizes;
  int64_t prev = 0;
  for (int64_t i : idx) {
    // JAX takes the sizes between the indices as they are (no counting from the end), so a negative, decreasing
    // or past-the-end index leaves a negative size, which lax.split refuses.
    if (i < prev || i > n)
      throw_error<ShapeError>(op, "split indices must be nondecreasing and within [0, {}] (the size of axis {}), "
                                  "got {}", n, a, shape_str(idx));
    sizes.push_back(i - prev);
    prev = i;
  }
  sizes.push_back(n - prev);
  return split_sizes(ary, a, sizes);
}

/// moveaxis's permutation, or a ShapeError naming op.
std::vector<int64_t> move_perm(int64_t rank, const Axes& source, const Axes& destination, std::string_view op) {
  if (source.size() != destination.size())
    throw_error<ShapeError>(op, "source and destination must have the same number of axes, got {} and {}",
                            shape_str(source), shape_str(destination));
  std::vector<int64_t> src, dst;
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = detail::canonical_axis(source[i], rank, op), d = detail::canonical_axis(destination[i], rank, op);
    if (std::find(src.begin(), src.end(), s) != src.end())
      throw_error<ShapeError>(op, "repeated axis in source {}", shape_str(source));
    if (std::find(dst.begin(), dst.end(), d) != dst.end())
      throw_error<ShapeError>(op, "repeated axis in destination {}", shape_str(destination));
    src.push_back(s);
    dst.push_back(d);
  }
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(src.begin(), src.end(), i) == src.end()) perm.push_back(i);
  std::vector<std::pair<int64_t, int64_t>> moves;
  for (size_t i = 0; i < src.size(); ++i) moves.emplace_back(dst[i], src[i]);
  std::sort(moves.begin(), moves.end());  // inserted in order of destination, each lands where it is asked
  for (auto [d, s] : moves) perm.insert(perm.begin() + d, s);
  return perm;
}

/// The planes' diagonal after the checks of diagonal/trace: the (axis1, axis2) planes moved last, the offset's
/// columns (or rows) sliced off, then every (cols + 1)-th element of the flattened plane.
Array plane_diagonal(const Array& a, int64_t offset, int64_t axis1, int64_t axis2, std::string_view op) {
  stats_check_valid(op, a);
  if (a.ndim() < 2)
    throw_error<ShapeError>(op, "needs an array of at least 2 dimensions, got shape {}", shape_str(a.shape()));
  int64_t a1 = detail::canonical_axis(axis1, a.ndim(), op), a2 = detail::canonical_axis(axis2, a.ndim(), op);
  if (a1 == a2) throw_error<ShapeError>(op, "axis1 and axis2 must differ, got {} and {}", axis1, axis2);
  int64_t r = a.ndim(), n1 = a.shape()[a1], n2 = a.shape()[a2];
  Array m = lax::transpose(a, move_perm(r, {a1, a2}, {r - 2, r - 1}, op));
  Shape batch(m.shape().begin(), m.shape().end() - 2);
  // min(n1 + min(k, 0), n2 - max(k, 0)) without overflow for any int64 offset.
  int64_t d = offset >= 0 ? (offset >= n2 ? 0 : std::min(n1, n2 - offset))
                          : (offset < -n1 ? 0 : std::min(n1 + offset, n2));
  Shape out = batch;
  out.push_back(d);
  if (d == 0) return with_shape(lax::slice_in_dim(m, 0, 0, 1, r - 1), out);
  m = offset >= 0 ? lax::slice_in_dim(m, offset, n2, 1, r - 1) : lax::slice_in_dim(m, -offset, n1, 1, r - 2);
  int64_t rows = m.shape()[r - 2], cols = m.shape()[r - 1];
  Shape flat = batch;
  flat.push_back(rows * cols);
  return with_shape(lax::slice_in_dim(lax::reshape(m, flat), 0, (d - 1) * (cols + 1) + 1, cols + 1, r - 2), out);
}
}  // namespace

// --- moveaxis, stacks, atleast_*d ---------------------------------------------------------------------------
Array moveaxis(const Array& a, Axes source, Axes destination, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("moveaxis", a);
  return lax::transpose(a, move_perm(a.ndim(), source, destination, "moveaxis"));
}
Array moveaxis(const Array& a, int64_t source, int64_t destination, Loc loc) {
  ApiScope s(loc);
  return moveaxis(a, Axes{source}, Axes{destination}, loc);
}

Array hstack(const std::vector<Array>& tup, std::optional<DType> dtype, Loc loc) {
  ApiScope s(loc);
  return stack_family(tup, 1, dtype, "hstack");
}
Array vstack(const std::vector<Array>& tup, std::optional<DType> dtype, Loc loc) {
  ApiScope s(loc);
  return stack_family(tup, 2, dtype, "vstack");
}
Array dstack(const std::vector<Array>& tup, std::optional<DType> dtype, Loc loc) {
  ApiScope s(loc);
  return stack_family(tup, 3, dtype, "dstack");
}
Array column_stack(const std::vector<Array>& tup, Loc loc) {
  ApiScope s(loc);
  if (tup.empty()) throw_error<ShapeError>("column_stack", "needs at least one array");
  require_all(tup, "column_stack");
  std::vector<Array> cols;
  for (const Array& x : tup) cols.push_back(x.ndim() < 2 ? lax::transpose(atleast_nd(x, 2), {1, 0}) : x);
  return concatenate(cols, 1);
}

#define JITX_ATLEAST(n)                                                            \
  Array atleast_##n##d(const Array& x, Loc loc) {                                  \
    ApiScope s(loc);                                                               \
    stats_check_valid("atleast_" #n "d", x);                                                 \
    return atleast_nd(x, n);                                                       \
  }                                                                                \
  std::vector<Array> atleast_##n##d(const std::vector<Array>& arys, Loc loc) {     \
    ApiScope s(loc);                                                               \
    require_all(arys, "atleast_" #n "d");                                          \
    std::vector<Array> out;                                                        \
    for (const Array& x : arys) out.push_back(atleast_nd(x, n));                   \
    return out;                                                                    \
  }
JITX_ATLEAST(1) JITX_ATLEAST(2) JITX_ATLEAST(3)
#undef JITX_ATLEAST

// --- splits ----------------------------------------------------------------------------------------------
std::vector<Array> split(const Array& ary, const std::vector<int64_t>& idx, int64_t axis, Loc loc) {
  ApiScope s(loc);
  return split_at(ary, idx, axis, "split");
}
std::vector<Array> array_split(const Array& ary, const std::vector<int64_t>& idx, int64_t axis, Loc loc) {
  ApiScope s(loc);
  return split_at(ary, idx, axis, "array_split");
}
std::vector<Array> hsplit(const Array& ary, const std::vector<int64_t>& idx, Loc loc) {
  ApiScope s(loc);
  return split_at(ary, idx, std::nullopt, "hsplit");
}
std::vector<Array> vsplit(const Array& ary, const std::vector<int64_t>& idx, Loc loc) {
  ApiScope s(loc);
  return split_at(ary, idx, 0, "vsplit");
}
std::vector<Array> dsplit(const Array& ary, const std::vector<int64_t>& idx, Loc loc) {
  ApiScope s(loc);
  return split_at(ary, idx, 2, "dsplit");
}

}  // namespace jitx::numpy

namespace jitx::detail {
std::vector<Array> jnp_split_sections(const Array& ary, int64_t sections, std::optional<int64_t> axis,
                                      std::string_view op, Loc loc, Loc here) {
  ApiScope s(loc, here);
  if (!ary.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  int64_t a = numpy::split_axis(ary, axis, op), n = ary.shape()[a];
  if (sections <= 0) throw_error<ShapeError>(op, "the number of sections must be > 0, got {}", sections);
  int64_t part = n / sections, rest = n % sections;
  if (rest != 0 && op != "array_split")
    throw_error<ShapeError>(op, "an axis of size {} does not split into {} equal sections (rest {}); array_split "
                                "allows that", n, sections, rest);
  // Past the axis size, every further section is an empty array: JAX's list of 2^40 sizes is a MemoryError.
  if (sections > n && sections - n > (int64_t{1} << 24))
    throw_error<ShapeError>(op, "{} sections of an axis of size {} would be {} empty arrays", sections, n,
                            sections - n);
  std::vector<int64_t> sizes(static_cast<size_t>(sections), part);
  for (int64_t i = 0; i < rest; ++i) ++sizes[static_cast<size_t>(i)];
  return numpy::split_sizes(ary, a, sizes);
}
}  // namespace jitx::detail

namespace jitx::numpy {

// --- diagonal, trace --------------------------------------------------------------------------------------
Array diagonal(const Array& a, int64_t offset, int64_t axis1, int64_t axis2, Loc loc) {
  ApiScope s(loc);
  return stats_strong(plane_diagonal(a, offset, axis1, axis2, "diagonal"));
}

Array trace(const Array& a, int64_t offset, int64_t axis1, int64_t axis2, std::optional<DType> dtype, Loc loc) {
  ApiScope s(loc);
  Array d = plane_diagonal(a, offset, axis1, axis2, "trace");
  // As jnp.sum(dtype=): the elements converted first, summed, the sum in dtype (narrow ints otherwise widen).
  if (!dtype) return stats_strong(sum(d, {-1}));
  return stats_strong(astype(sum(astype(d, *dtype), {-1}), *dtype));
}

// --- meshgrid, rot90, flips ---------------------------------------------------------------------------------
std::vector<Array> meshgrid(const std::vector<Array>& xi, bool sparse, std::string_view indexing, Loc loc) {
  ApiScope s(loc);
  require_all(xi, "meshgrid");
  if (indexing != "xy" && indexing != "ij")
    throw_error<TypeError>("meshgrid", "indexing must be 'xy' or 'ij', got '{}'", indexing);
  std::vector<Array> args = xi;
  for (const Array& a : args)
    if (a.ndim() != 1)
      throw_error<ShapeError>("meshgrid", "arguments must be 1-D, got shape {}", shape_str(a.shape()));
  bool swap = indexing == "xy" && args.size() >= 2;  // "xy": the first two axes are (y, x)
  if (swap) std::swap(args[0], args[1]);
  Shape full;
  for (const Array& a : args) full.push_back(sparse ? 1 : a.shape()[0]);
  std::vector<Array> out;
  for (size_t i = 0; i < args.size(); ++i) {
    Shape sh = full;
    sh[i] = args[i].shape()[0];
    out.push_back(lax::broadcast_in_dim(args[i], sh, {static_cast<int64_t>(i)}));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

Array rot90(const Array& m, int64_t k, std::pair<int64_t, int64_t> axes, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("rot90", m);
  if (m.ndim() < 2)
    throw_error<ShapeError>("rot90", "needs an array of at least 2 dimensions, got shape {}", shape_str(m.shape()));
  int64_t a1 = detail::canonical_axis(axes.first, m.ndim(), "rot90");
  int64_t a2 = detail::canonical_axis(axes.second, m.ndim(), "rot90");
  if (a1 == a2) throw_error<ShapeError>("rot90", "the axes must differ, got ({}, {})", axes.first, axes.second);
  k = ((k % 4) + 4) % 4;
  if (k == 0) return m;
  if (k == 2) return lax::rev(m, {a1, a2});
  std::vector<int64_t> perm(static_cast<size_t>(m.ndim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[a1], perm[a2]);
  // k = 1: transpose(flip(m, a2)); k = 3: flip(transpose(m), a2), as JAX.
  return k == 1 ? lax::transpose(lax::rev(m, {a2}), perm) : lax::rev(lax::transpose(m, perm), {a2});
}

Array fliplr(const Array& m, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("fliplr", m);
  return lax::rev(m, {detail::canonical_axis(1, m.ndim(), "fliplr")});
}
Array flipud(const Array& m, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("flipud", m);
  return lax::rev(m, {detail::canonical_axis(0, m.ndim(), "flipud")});
}

// --- append, diff ---------------------------------------------------------------------------------------------
Array append(const Array& arr, const Array& values, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("append", arr);
  stats_check_valid("append", values);
  if (!axis) return concatenate({ravel(arr), ravel(values)}, 0);
  return concatenate({arr, values}, *axis);
}

Array diff(const Array& a, int64_t n, int64_t axis, std::optional<Array> prepend, std::optional<Array> append,
           Loc loc) {
  ApiScope s(loc);
  stats_check_valid("diff", a);
  if (n == 0) return a;  // JAX returns a as it is, before any other check
  if (n < 0) throw_error<ShapeError>("diff", "order n must be >= 0, got {}", n);
  if (a.ndim() == 0) throw_error<ShapeError>("diff", "needs an array of at least 1 dimension, got a 0-d one");
  int64_t ax = detail::canonical_axis(axis, a.ndim(), "diff");
  Shape slice_shape = a.shape();
  slice_shape[ax] = 1;
  auto edge = [&](const Array& e) {
    stats_check_valid("diff", e);
    return e.ndim() == 0 ? broadcast_to(e, slice_shape) : e;
  };
  std::vector<Array> parts;
  if (prepend) parts.push_back(edge(*prepend));
  parts.push_back(a);
  if (append) parts.push_back(edge(*append));
  Array arr = parts.size() > 1 ? concatenate(parts, ax) : a;
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = arr.shape()[ax];
    if (len == 0) break;  // further differences of an empty axis change nothing (and n may be 2^62)
    Array hi = lax::slice_in_dim(arr, 1, len, 1, ax), lo = lax::slice_in_dim(arr, 0, len - 1, 1, ax);
    arr = is_bool(arr.dtype()) ? not_equal(hi, lo) : subtract(hi, lo);
  }
  return arr;
}

// --- delete, insert ---------------------------------------------------------------------------------------------
namespace {
/// Integer indices as int64 keeping their values (uint64 past int64's range saturate: out of range either way).
Array as_int64(const Array& i) {
  Array v = i.dtype() == DType::uint64
                ? lax::min(i, Array::scalar_int(std::numeric_limits<int64_t>::max(), DType::uint64))
                : i;
  return lax::convert_element_type(v, DType::int64);
}

/// JAX's delete with assume_unique_indices: the kept positions computed on the device, so traced indices work.
Array delete_unique(const Array& a, const Array& obj, int64_t ax) {
  int64_t n = a.shape()[ax], k = obj.size();
  Array o = as_int64(ravel(obj)), size = Array::scalar_int(n, DType::int64);
  o = sort(clip(where(less(o, Array(0)), add(o, size), o), Array(0), size));
  o = subtract(o, lax::iota(DType::int64, k));
  // Kept position j is j plus the number of deleted indices at or before it.
  Array j = lax::iota(DType::int64, std::max<int64_t>(n - k, 0));
  Array before = sum(greater_equal(expand_dims(j, {0}), expand_dims(o, {1})), {0});
  return take(a, add(j, before), ax, "clip");
}
}  // namespace

Array delete_(const Array& arr, const Array& obj, std::optional<int64_t> axis, bool assume_unique_indices, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("delete", arr);
  stats_check_valid("delete", obj);
  Array a = axis ? arr : ravel(arr);
  int64_t ax = detail::canonical_axis(axis.value_or(0), a.ndim(), "delete"), n = a.shape()[ax];
  if (!is_integer(obj.dtype()) && !is_bool(obj.dtype()))
    throw_error<TypeError>("delete", "obj must hold integers or bools, got {}", obj.aval().str());
  if (is_integer(obj.dtype()) && assume_unique_indices) return delete_unique(a, obj, ax);
  if (obj.is_tracer())
    throw_error<TracerError>("delete", "obj must be concrete: the number of deleted entries decides the result's "
                                       "shape (JAX's ConcretizationTypeError); pass assume_unique_indices = true for "
                                       "traced integer indices");
  std::vector<bool> keep(static_cast<size_t>(n), true);
  if (is_bool(obj.dtype())) {
    if (obj.shape() != Shape{n})
      throw_error<ShapeError>("delete", "a boolean obj must be 1-D with the axis's length {}, got shape {}", n,
                              shape_str(obj.shape()));
    std::vector<bool> m = obj.to_vector<bool>();
    for (int64_t i = 0; i < n; ++i) keep[i] = !m[i];
  } else {
    // Read on the host as they are (an op on them would be traced under jit); uint64 past int64's range is out of
    // bounds as any index past the end.
    std::vector<int64_t> v = obj.to_vector<int64_t>();
    std::vector<uint64_t> u = obj.dtype() == DType::uint64 ? obj.to_vector<uint64_t>() : std::vector<uint64_t>{};
    for (size_t k = 0; k < v.size(); ++k) {
      bool huge = !u.empty() && u[k] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      int64_t c = v[k] < 0 ? v[k] + n : v[k];
      if (huge || c < 0 || c >= n)
        throw_error<ShapeError>("delete", "index {} is out of bounds for axis {} of size {}",
                                u.empty() ? fmt::format("{}", v[k]) : fmt::format("{}", u[k]), ax, n);
      keep[static_cast<size_t>(c)] = false;
    }
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i)
    if (keep[i]) kept.push_back(i);
  if (kept.empty()) return lax::slice_in_dim(a, 0, 0, 1, ax);
  return take(a, array(kept, Shape{static_cast<int64_t>(kept.size())}, DType::int64), ax, "clip");
}
Array delete_(const Array& arr, const std::vector<int64_t>& obj, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  return delete_(arr, array(obj, Shape{static_cast<int64_t>(obj.size())}, DType::int64), axis, false, loc);
}

Array insert(const Array& arr, const Array& obj, const Array& values, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("insert", arr);
  stats_check_valid("insert", obj);
  stats_check_valid("insert", values);
  Array a = axis ? arr : ravel(arr);
  int64_t ax = detail::canonical_axis(axis.value_or(0), a.ndim(), "insert"), n = a.shape()[ax];
  if (obj.ndim() > 1)
    throw_error<ShapeError>("insert", "obj must be one index or a 1-D array, got shape {}", shape_str(obj.shape()));
  if (!is_integer(obj.dtype())) throw_error<TypeError>("insert", "obj must hold integers, got {}", obj.aval().str());
  // values in arr's dtype with leading axes up to arr's rank (JAX's array(values, ndmin=, dtype=)).
  Array v = atleast_nd(astype(values, a.dtype()), a.ndim());
  Array idx = as_int64(obj);
  if (obj.size() == 1) {  // one index: every inserted slice goes there (a scalar's values run along axis)
    if (obj.ndim() == 0) v = moveaxis(v, 0, ax);
    idx = broadcast_to(lax::reshape(idx, {}), {v.shape()[ax]});
  }
  int64_t n_insert = broadcast_shapes({idx.shape(), {v.shape()[ax]}}, "insert")[0];
  Array size = Array::scalar_int(n, DType::int64);
  idx = broadcast_to(clip(where(less(idx, Array(0)), add(idx, size), idx), Array(0), size), {n_insert});
  // The inserted slices' final positions: each index moved past the slices inserted before it (stably), then the
  // remaining positions, in order, for arr's own slices.
  Array slots = at(idx, argsort(idx)).add(lax::iota(DType::int64, n_insert));
  Array mask = at(ones({n + n_insert}, DType::bool_), slots).set(Array(false));
  Array rest = nonzero(mask, n)[0];
  Shape out_shape = moveaxis(a, ax, 0).shape();
  out_shape[0] += n_insert;
  Array out = detail::convert_weak(zeros(out_shape, a.dtype()), a.dtype(), a.weak_type());
  out = at(out, slots).set(moveaxis(v, ax, 0));
  out = at(out, rest).set(moveaxis(a, ax, 0));
  return moveaxis(out, 0, ax);
}
Array insert(const Array& arr, const std::vector<int64_t>& obj, const Array& values, std::optional<int64_t> axis,
             Loc loc) {
  ApiScope s(loc);
  return insert(arr, array(obj, Shape{static_cast<int64_t>(obj.size())}, DType::int64), values, axis, loc);
}

}  // namespace jitx::numpy
