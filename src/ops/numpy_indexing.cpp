// jitx::numpy indexing and sorting: take, integer-array and slice indexing, sort and argsort.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/primitive.h"
#include "core/trace.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "ops/convert.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;

namespace {
/// Integer indices as int32 or int64 (the index dtypes gather takes).
Array signed_index(const Array& i, std::string_view op) {
  if (!is_integer(i.dtype()))
    throw_error<TypeError>(op, "indices must be integers, got {}", i.aval().str());
  DType d = dtype_bits(i.dtype()) == 64 ? DType::int64 : DType::int32;
  if (is_unsigned_integer(i.dtype()) && i.dtype() != DType::uint64) d = DType::int64;
  return lax::convert_element_type(i, d);
}

/// Integer indices in a common dtype, negative ones counted from the end of an axis of size n.
Array normalize_index(const Array& i, int64_t n, std::string_view op) {
  Array c = signed_index(i, op);
  if (i.dtype() == DType::uint64) return c;
  DType d = c.dtype();
  return where(less(c, Array::scalar_int(0, d)), add(c, Array::scalar_int(n, d)), c);
}

/// A boolean mask index stands for the indices of its true elements, one integer array per axis it covers, as in
/// NumPy and JAX; only a concrete mask can (the count of true elements is the result's shape). JAX raises
/// NonConcreteBooleanIndexError for a traced one.
std::vector<Array> expand_boolean_indices(const Array& x, const std::vector<Array>& indices, std::string_view op) {
  std::vector<Array> out;
  int64_t axis = 0;  // the first axis of x that index i covers
  for (const Array& i : indices) {
    if (!i.valid() || !is_bool(i.dtype())) {
      out.push_back(i);
      ++axis;
      continue;
    }
    if (i.is_tracer())
      throw_error<TracerError>(op, "boolean indices must be concrete, got a traced {} (the number of selected "
                                   "elements would decide the shape); use jnp::where(mask, new, x) instead",
                               i.aval().str());
    if (i.ndim() == 0)
      throw_error<TypeError>(op, "a scalar boolean index is not supported, got {}", i.aval().str());
    Shape covered;
    for (int64_t d = axis; d < axis + i.ndim() && d < x.ndim(); ++d) covered.push_back(x.dim(d));
    if (covered != i.shape())
      throw_error<ShapeError>(op, "boolean index did not match the shape of the indexed array at axis {}: got {}, "
                                  "expected {}", axis, shape_str(i.shape()), shape_str(covered));
    axis += i.ndim();
    for (Array& n : nonzero(i)) out.push_back(std::move(n));
  }
  return out;
}

/// The indices for the leading axes of x stacked into one array of shape broadcast(index shapes) + [k].
Array stack_indices(const Array& x, const std::vector<Array>& given, std::string_view op) {
  const std::vector<Array> indices = expand_boolean_indices(x, given, op);
  if (indices.empty()) throw_error<TypeError>(op, "needs at least one index array");
  if (static_cast<int64_t>(indices.size()) > x.ndim())
    throw_error<ShapeError>(op, "got {} index arrays for an array of rank {}", indices.size(), x.ndim());
  std::vector<Shape> shapes;
  for (auto& i : indices) {
    if (!i.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) index Array");
    shapes.push_back(i.shape());
  }
  Shape b = broadcast_shapes(shapes, op);
  std::vector<Array> cols;
  bool wide = false;
  for (size_t k = 0; k < indices.size(); ++k) {
    cols.push_back(normalize_index(indices[k], x.dim(static_cast<int64_t>(k)), op));
    wide = wide || cols.back().dtype() == DType::int64;
  }
  for (auto& c : cols) {
    if (wide) c = lax::convert_element_type(c, DType::int64);
    c = lax::reshape(broadcast_to(c, b), [&] { Shape s = b; s.push_back(1); return s; }());
  }
  return cols.size() == 1 ? cols[0] : lax::concatenate(cols, static_cast<int64_t>(b.size()));
}

std::vector<int64_t> range(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t i = lo; i < hi; ++i) v.push_back(i);
  return v;
}
}  // namespace

Array take(const Array& x, const Array& indices, std::optional<int64_t> axis, std::string_view mode, Loc loc) {
  ApiScope s(loc);
  if (mode != "fill" && mode != "clip" && mode != "wrap")
    throw_error<TypeError>("take", "mode must be \"fill\", \"clip\" or \"wrap\", got \"{}\"", mode);
  Array a = axis ? x : ravel(x);
  int64_t ax = detail::canonical_axis(axis.value_or(0), a.ndim(), "take");
  if (indices.valid() && is_bool(indices.dtype()))  // JAX takes boolean indices as the integers 0 and 1
    return take(x, lax::convert_element_type(indices, DType::int32), axis, mode, loc);
  int64_t n = a.dim(ax);
  if (n == 0) {
    // As JAX: nothing taken from an empty axis is an empty result; anything else cannot be taken.
    if (indices.size() != 0)
      throw_error<ShapeError>("take", "cannot take {} indices from the empty axis {} of shape {}", indices.size(), ax,
                              shape_str(a.shape()));
    Shape out = a.shape();
    out.erase(out.begin() + ax);
    out.insert(out.begin() + ax, indices.shape().begin(), indices.shape().end());
    return zeros(out, a.dtype());
  }
  // The index in [0, n) that gather reads: "wrap" takes it modulo n; "clip" clamps it as it is (-1 reads element 0,
  // as in NumPy and JAX); "fill" counts negative indices from the end, lets gather clamp the rest
  // and then replaces what indices outside [-n, n) read.
  Array idx;
  std::optional<Array> valid;
  if (mode == "wrap" && indices.valid() && indices.dtype() == DType::uint64) {
    // The unsigned value modulo n (as NumPy and JAX), not its int64 bits' (2^64 - 1 would count as -1).
    idx = lax::convert_element_type(lax::rem(indices, Array::scalar_int(n, DType::uint64)), DType::int64);
  } else if (mode == "wrap") {
    idx = normalize_index(indices, n, "take");
    Array nn = Array::scalar_int(n, idx.dtype());
    idx = lax::rem(lax::add(lax::rem(idx, nn), nn), nn);
  } else if (mode == "clip") {
    // uint64 indices past int64's range saturate (they are past the end), rather than wrap to negative.
    Array i = indices.dtype() == DType::uint64
                  ? lax::min(indices, Array::scalar_int(std::numeric_limits<int64_t>::max(), DType::uint64))
                  : indices;
    // Clamped here, not left to gather: the gradient then lands on the clamped element, as JAX's clip mode
    // (gather's own clamping drops it in the backward pass).
    idx = signed_index(i, "take");
    idx = lax::clamp(Array::scalar_int(0, idx.dtype()), idx, Array::scalar_int(n - 1, idx.dtype()));
  } else {
    idx = normalize_index(indices, n, "take");
    if (mode == "fill")
      valid = lax::bitwise_and(lax::ge(idx, Array::scalar_int(0, idx.dtype())),
                               lax::lt(idx, Array::scalar_int(n, idx.dtype())));
  }
  int64_t r = idx.ndim();
  Shape is = idx.shape();
  is.push_back(1);
  idx = lax::reshape(idx, is);
  lax::GatherDimensionNumbers dn;
  dn.offset_dims = range(0, ax);
  for (int64_t d = ax + 1; d < a.ndim(); ++d) dn.offset_dims.push_back(d - 1 + r);
  dn.collapsed_slice_dims = {ax};
  dn.start_index_map = {ax};
  dn.index_vector_dim = r;
  Shape sizes = a.shape();
  sizes[ax] = 1;
  Array out = lax::gather(a, idx, dn, sizes);
  if (!valid) return out;
  // JAX's fill values: NaN for inexact dtypes, the minimum of signed integers, the maximum of unsigned ones, true.
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < r; ++d) dims.push_back(ax + d);
  Array mask = lax::broadcast_in_dim(*valid, out.shape(), dims);
  DType dt = a.dtype();
  Array fill = is_floating(dt) ? Array::scalar(std::numeric_limits<double>::quiet_NaN(), dt)
               : is_bool(dt)   ? Array::scalar_int(1, dt)
               : is_unsigned_integer(dt)
                   ? lax::bitwise_not(Array::scalar_int(0, dt))
                   : Array::scalar_int(std::numeric_limits<int64_t>::min() >> (64 - dtype_bits(dt)), dt);
  fill = detail::convert_weak(fill, dt, a.weak_type());  // the result keeps x's weak type, as JAX's
  return lax::select(mask, out, lax::broadcast_in_dim(fill, out.shape(), {}));
}

Array sort(const Array& x, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  if (!axis) return lax::sort(ravel(x), 0);
  return lax::sort(x, detail::canonical_axis(*axis, x.ndim(), "sort"));
}

Array argsort(const Array& x, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  Array a = axis ? x : ravel(x);
  int64_t ax = detail::canonical_axis(axis.value_or(0), a.ndim(), "argsort");
  Array iota = lax::broadcasted_iota(detail::default_int_dtype(), a.shape(), ax);
  return lax::sort({a, iota}, ax, true, 1)[1];
}

IndexUpdateRef at(const Array& x, const Array& index) { return IndexUpdateRef(x, {index}); }
IndexUpdateRef at(const Array& x, std::vector<Array> indices) { return IndexUpdateRef(x, std::move(indices)); }

namespace {
/// The index forms without an index array, as JAX reads them: x.at[()] is the whole array, and a scalar boolean
/// index adds an axis (x[True] is x[None], x[False] its empty slice). Both become x with a new leading axis of size
/// 1, indexed by 0 (no index), by [0] (true) or by [] (false); `lifted` says the result's leading axis goes again.
struct Indexed {
  Array x;
  std::vector<Array> indices;
  bool lifted = false;
};
Indexed lift_scalar_forms(const Array& x, const std::vector<Array>& indices, std::string_view op) {
  bool scalar_bool = indices.size() == 1 && indices[0].valid() && is_bool(indices[0].dtype()) && indices[0].ndim() == 0;
  if (!x.valid() || (!indices.empty() && !scalar_bool)) return {x, indices, false};
  if (scalar_bool && indices[0].is_tracer())
    throw_error<TracerError>(op, "boolean indices must be concrete, got a traced {} (the number of selected elements "
                                 "would decide the shape); use jnp::where(mask, new, x) instead",
                             indices[0].aval().str());
  Shape s = x.shape();
  s.insert(s.begin(), 1);
  Array index = indices.empty()            ? Array::scalar_int(0, DType::int32)
                : indices[0].item<bool>() ? zeros({1}, DType::int32)
                                          : zeros({0}, DType::int32);
  return {lax::reshape(x, s), {index}, true};
}
/// The shape x.at[indices] selects: the broadcast index shape, then the axes no index covers.
Shape selected_shape(const Array& x, const Array& idx) {
  int64_t k = idx.shape().back();
  Shape out(idx.shape().begin(), idx.shape().end() - 1);
  for (int64_t d = k; d < x.ndim(); ++d) out.push_back(x.dim(d));
  return out;
}
bool empty_shape(const Shape& s) {
  return std::any_of(s.begin(), s.end(), [](int64_t d) { return d == 0; });
}
}  // namespace

Array IndexUpdateRef::get(Loc loc) const {
  ApiScope s(loc);
  Indexed in = lift_scalar_forms(x_, indices_, "at.get");
  const Array& x = in.x;
  Array idx = stack_indices(x, in.indices, "at.get");
  int64_t k = idx.shape().back(), r = idx.ndim() - 1;  // k: index arrays after boolean masks expand
  Shape out = selected_shape(x, idx);
  if (empty_shape(out))  // as JAX's _gather: nothing to read (the gather could not take a slice of an empty axis)
    return lax::full(out, detail::convert_weak(Array(0), x.dtype(), x.weak_type()));
  lax::GatherDimensionNumbers dn;
  dn.offset_dims = range(r, r + x.ndim() - k);
  dn.collapsed_slice_dims = range(0, k);
  dn.start_index_map = range(0, k);
  dn.index_vector_dim = r;
  Shape sizes(static_cast<size_t>(k), 1);
  for (int64_t d = k; d < x.ndim(); ++d) sizes.push_back(x.dim(d));
  return lax::gather(x, idx, dn, sizes);
}

Array IndexUpdateRef::update(std::string_view kind, const Array& values) const {
  std::string op = fmt::format("at.{}", kind);
  auto [x, indices, lifted] = lift_scalar_forms(x_, indices_, op);
  Array idx = stack_indices(x, indices, op);
  int64_t k = idx.shape().back(), r = idx.ndim() - 1;  // k: index arrays after boolean masks expand
  Shape ushape = selected_shape(x, idx);
  if (!values.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) values Array");
  if (empty_shape(ushape)) return x_;  // as JAX's _scatter_impl: nothing selected, x unchanged (values unchecked)
  // As JAX's _scatter_impl: x and the values promoted together, the scatter in that dtype, the result converted
  // back to x's (so int32 x .add(0.6f) twice adds 1.2 before truncating, and f32 updates into bf16 add in f32).
  bool weak = false;
  DType d = promote_types(x.dtype(), x.weak_type(), values.dtype(), values.weak_type(), &weak);
  Array xp = detail::convert_weak(x, d, weak);
  Array v = broadcast_to(detail::convert_weak(values, d, weak), ushape);
  lax::ScatterDimensionNumbers dn;
  dn.update_window_dims = range(r, r + x.ndim() - k);
  dn.inserted_window_dims = range(0, k);
  dn.scatter_dims_to_operand_dims = range(0, k);
  dn.index_vector_dim = r;
  Array out = kind == "set"   ? lax::scatter(xp, idx, v, dn)
              : kind == "add" ? lax::scatter_add(xp, idx, v, dn)
              : kind == "mul" ? lax::scatter_mul(xp, idx, v, dn)
              : kind == "min" ? lax::scatter_min(xp, idx, v, dn)
                              : lax::scatter_max(xp, idx, v, dn);
  if (lifted) out = lax::reshape(out, x_.shape());
  return detail::convert_weak(out, x_.dtype(), x_.weak_type());
}

Array IndexUpdateRef::set(const Array& v, Loc loc) const { ApiScope s(loc); return update("set", v); }
Array IndexUpdateRef::add(const Array& v, Loc loc) const { ApiScope s(loc); return update("add", v); }
Array IndexUpdateRef::mul(const Array& v, Loc loc) const { ApiScope s(loc); return update("mul", v); }
Array IndexUpdateRef::min(const Array& v, Loc loc) const { ApiScope s(loc); return update("min", v); }
Array IndexUpdateRef::max(const Array& v, Loc loc) const { ApiScope s(loc); return update("max", v); }

}  // namespace jitx::numpy
