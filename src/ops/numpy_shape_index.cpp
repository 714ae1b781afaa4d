// jitx::numpy products and index helpers: take_along_axis, tensordot/inner/vdot, kron, cross, diagflat, tri, vander,
// the *_indices functions, unravel_index and ravel_multi_index, composed from jnp/lax so grad, vmap and jit apply.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_more.h"
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

std::vector<int64_t> index_range(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t i = lo; i < hi; ++i) v.push_back(i);
  return v;
}

/// x[..., i]: component i of the last axis, that axis dropped.
Array component(const Array& x, int64_t i) {
  Shape s(x.shape().begin(), x.shape().end() - 1);
  return lax::reshape(lax::slice_in_dim(x, i, i + 1, 1, x.ndim() - 1), s);
}

/// take's fill for out-of-range reads: NaN for floats, the minimum of signed integers, the maximum of unsigned
/// ones, true for bool; or `value` converted to the dtype (as JAX converts fill_value).
Array fill_scalar(DType dt, std::optional<double> value) {
  if (value) return lax::convert_element_type(Array::scalar(*value, DType::float64), dt);
  if (is_floating(dt)) return Array::scalar(std::numeric_limits<double>::quiet_NaN(), dt);
  if (is_bool(dt)) return Array::scalar_int(1, dt);
  if (is_unsigned_integer(dt)) return lax::bitwise_not(Array::scalar_int(0, dt));
  return Array::scalar_int(std::numeric_limits<int64_t>::min() >> (64 - dtype_bits(dt)), dt);
}

/// The dot_general of tensordot with the contracting axes already canonical: JAX's result dtype (the promoted
/// one, weak when the promotion is) unless preferred_element_type says otherwise.
Array contract(const Array& a, const Array& b, std::vector<int64_t> lc, std::vector<int64_t> rc,
               std::optional<DType> pref) {
  bool weak = false;
  DType d = canonicalize_dtype(promote_types(a.dtype(), a.weak_type(), b.dtype(), b.weak_type(), &weak));
  if (pref) {
    if (!is_valid_dtype(*pref)) throw_error<TypeError>("tensordot", "preferred_element_type is not a valid dtype");
    d = canonicalize_dtype(*pref);
    weak = false;
  }
  Array x = detail::convert_weak(a, d, false), y = detail::convert_weak(b, d, false);
  return detail::convert_weak(lax::dot_general(x, y, {std::move(lc), std::move(rc), {}, {}}), d, weak);
}
}  // namespace

// --- take_along_axis --------------------------------------------------------------------------------------------
Array take_along_axis(const Array& arr, const Array& indices, std::optional<int64_t> axis, std::string_view mode,
                      std::optional<double> fill_value, Loc loc) {
  ApiScope s(loc);
  const std::string_view op = "take_along_axis";
  stats_check_valid(op, arr);
  stats_check_valid(op, indices);
  if (mode != "fill" && mode != "drop" && mode != "clip" && mode != "promise_in_bounds" && mode != "one_hot")
    throw_error<TypeError>(op, "mode must be \"fill\", \"drop\", \"clip\", \"promise_in_bounds\" or \"one_hot\", "
                               "got \"{}\"", mode);
  if (!is_integer(indices.dtype()))
    throw_error<TypeError>(op, "indices must be integers, got {}", indices.aval().str());
  Array a = arr;
  if (!axis) {
    if (indices.ndim() != 1)
      throw_error<ShapeError>(op, "indices must be 1-D when axis is None, got shape {}", shape_str(indices.shape()));
    a = ravel(arr);
  }
  int64_t r = a.ndim();
  if (r != indices.ndim())
    throw_error<ShapeError>(op, "indices and arr must have the same rank, got shapes {} and {}",
                            shape_str(indices.shape()), shape_str(a.shape()));
  int64_t ax = detail::canonical_axis(axis.value_or(0), r, op);
  Shape arr_shape = a.shape();
  int64_t n = arr_shape[ax];
  arr_shape[ax] = 1;
  Shape out = broadcast_shapes({indices.shape(), arr_shape}, op);
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  // An empty axis gives zeros (JAX's lax.full); so does an empty result (there is nothing for the gather to read).
  if (n == 0 || total == 0) return lax::full(out, detail::convert_weak(Array(0), a.dtype(), false));
  // Indices as int32 or int64, keeping their values (uint32 as int64); uint64 past int64's range count as past
  // the end (README: jitx's index arrays keep their values).
  DType it = dtype_bits(indices.dtype()) == 64 || indices.dtype() == DType::uint32 ? DType::int64 : DType::int32;
  Array idx = indices.dtype() == DType::uint64
                  ? lax::min(indices, Array::scalar_int(std::numeric_limits<int64_t>::max(), DType::uint64))
                  : indices;
  idx = lax::convert_element_type(idx, it);
  Array zero = Array::scalar_int(0, it), size = Array::scalar_int(n, it);
  if (mode != "promise_in_bounds") idx = lax::select(lax::lt(idx, zero), lax::add(idx, size), idx);
  std::optional<Array> valid;
  if (mode == "fill" || mode == "drop" || mode == "one_hot")
    valid = lax::bitwise_and(lax::ge(idx, zero), lax::lt(idx, size));
  // The gather reads every output element at its full coordinates: the index along axis, its own position along
  // the other axes (0 where arr has size 1 there and broadcasts).
  Shape col = out;
  col.push_back(1);
  std::vector<Array> coords;
  for (int64_t d = 0; d < r; ++d) {
    Array c = d == ax ? broadcast_to(lax::clamp(zero, idx, Array::scalar_int(n - 1, it)), out)
              : a.shape()[d] == 1 ? lax::full(out, zero)
                                  : lax::broadcasted_iota(it, out, d);
    coords.push_back(lax::reshape(c, col));
  }
  lax::GatherDimensionNumbers dn;
  dn.collapsed_slice_dims = index_range(0, r);
  dn.start_index_map = index_range(0, r);
  dn.index_vector_dim = r;
  Array got = lax::gather(a, lax::concatenate(coords, r), dn, Shape(static_cast<size_t>(r), 1));
  if (!valid) return got;
  // JAX's "one_hot" mode sums one-hot products: an index out of range reads 0.
  Array fill = mode == "one_hot" ? detail::convert_weak(Array(0), a.dtype(), false)
                                 : fill_scalar(a.dtype(), fill_value);
  fill = detail::convert_weak(fill, a.dtype(), got.weak_type());
  return lax::select(broadcast_to(*valid, out), got, lax::broadcast_in_dim(fill, out, {}));
}

// --- tensordot, inner, vdot, kron, cross -----------------------------------------------------------------------
Array tensordot(const Array& a, const Array& b, int64_t axes, std::optional<DType> pref, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("tensordot", a);
  stats_check_valid("tensordot", b);
  if (axes > std::min(a.ndim(), b.ndim()))
    throw_error<ShapeError>("tensordot", "cannot contract {} axes of arrays of shapes {} and {}", axes,
                            shape_str(a.shape()), shape_str(b.shape()));
  // A negative count contracts nothing (JAX's and NumPy's empty ranges): the outer product.
  int64_t k = std::max<int64_t>(axes, 0);
  return contract(a, b, index_range(a.ndim() - k, a.ndim()), index_range(0, k), pref);
}
Array tensordot(const Array& a, const Array& b, const std::pair<Axes, Axes>& axes, std::optional<DType> pref,
                Loc loc) {
  ApiScope s(loc);
  stats_check_valid("tensordot", a);
  stats_check_valid("tensordot", b);
  if (axes.first.size() != axes.second.size())
    throw_error<ShapeError>("tensordot", "the axes lists must have equal lengths, got {} and {}",
                            shape_str(axes.first), shape_str(axes.second));
  std::vector<int64_t> lc, rc;
  for (int64_t x : axes.first) lc.push_back(detail::canonical_axis(x, a.ndim(), "tensordot"));
  for (int64_t x : axes.second) rc.push_back(detail::canonical_axis(x, b.ndim(), "tensordot"));
  return contract(a, b, lc, rc, pref);
}

Array inner(const Array& a, const Array& b, std::optional<DType> pref, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("inner", a);
  stats_check_valid("inner", b);
  if (a.ndim() == 0 || b.ndim() == 0) return pref ? multiply(astype(a, *pref), astype(b, *pref)) : multiply(a, b);
  return contract(a, b, {a.ndim() - 1}, {b.ndim() - 1}, pref);
}

Array vdot(const Array& a, const Array& b, std::optional<DType> pref, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("vdot", a);
  stats_check_valid("vdot", b);
  if (a.size() != b.size())
    throw_error<ShapeError>("vdot", "needs arrays of the same size, got shapes {} and {}", shape_str(a.shape()),
                            shape_str(b.shape()));
  return contract(ravel(a), ravel(b), {0}, {0}, pref);
}

Array kron(const Array& a, const Array& b, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("kron", a);
  stats_check_valid("kron", b);
  bool weak = false;
  DType d = canonicalize_dtype(promote_types(a.dtype(), a.weak_type(), b.dtype(), b.weak_type(), &weak));
  Array x = detail::convert_weak(a, d, weak), y = detail::convert_weak(b, d, weak);
  int64_t r = std::max(x.ndim(), y.ndim());
  Shape xs = x.shape(), ys = y.shape();
  xs.insert(xs.begin(), static_cast<size_t>(r - x.ndim()), 1);
  ys.insert(ys.begin(), static_cast<size_t>(r - y.ndim()), 1);
  // x's axis i and y's axis i interleave as axes 2i and 2i + 1 of the product, then merge.
  Shape big, out;
  std::vector<int64_t> xd, yd;
  for (int64_t i = 0; i < r; ++i) {
    big.push_back(xs[i]);
    big.push_back(ys[i]);
    xd.push_back(2 * i);
    yd.push_back(2 * i + 1);
    out.push_back(xs[i] * ys[i]);
  }
  detail::checked_num_elements(big, d, "kron");
  Array p = lax::mul(lax::broadcast_in_dim(lax::reshape(x, xs), big, xd),
                     lax::broadcast_in_dim(lax::reshape(y, ys), big, yd));
  return lax::reshape(p, out);
}

Array cross(const Array& a, const Array& b, int64_t axisa, int64_t axisb, int64_t axisc, std::optional<int64_t> axis,
            Loc loc) {
  ApiScope s(loc);
  stats_check_valid("cross", a);
  stats_check_valid("cross", b);
  if (axis) axisa = axisb = axisc = *axis;
  if (a.ndim() == 0 || b.ndim() == 0)
    throw_error<ShapeError>("cross", "needs arrays of at least 1 dimension, got shapes {} and {}",
                            shape_str(a.shape()), shape_str(b.shape()));
  Array x = moveaxis(a, axisa, -1), y = moveaxis(b, axisb, -1);
  int64_t nx = x.shape().back(), ny = y.shape().back();
  if ((nx != 2 && nx != 3) || (ny != 2 && ny != 3))
    throw_error<ShapeError>("cross", "the vector axes must have 2 or 3 elements, got {} and {}", nx, ny);
  Array x0 = component(x, 0), x1 = component(x, 1), y0 = component(y, 0), y1 = component(y, 1);
  if (nx == 2 && ny == 2) return subtract(multiply(x0, y1), multiply(x1, y0));
  Array x2 = nx == 3 ? component(x, 2) : zeros_like(x0), y2 = ny == 3 ? component(y, 2) : zeros_like(y0);
  Array c = stack({subtract(multiply(x1, y2), multiply(x2, y1)), subtract(multiply(x2, y0), multiply(x0, y2)),
                   subtract(multiply(x0, y1), multiply(x1, y0))});
  return stats_strong(moveaxis(c, 0, axisc));  // JAX stacks them with jnp.array: a strong result
}

// --- diagflat, tri, vander ---------------------------------------------------------------------------------------
Array diagflat(const Array& v, int64_t k, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("diagflat", v);
  Array flat = ravel(v);
  int64_t len = flat.size(), ak = 0, n = 0, nn = 0;
  if (k == std::numeric_limits<int64_t>::min() || __builtin_add_overflow(len, k < 0 ? -k : k, &n) ||
      __builtin_mul_overflow(n, n, &nn))
    throw_error<ShapeError>("diagflat", "a diagonal of {} elements at offset {} does not fit an int64 size", len, k);
  ak = k < 0 ? -k : k;
  detail::checked_num_elements(std::vector<int64_t>{n, n}, v.dtype(), "diagflat");
  Array zero = detail::convert_weak(Array(0), v.dtype(), false);
  if (len == 0) return lax::full({n, n}, zero);
  // v's elements spread out by interior padding: element i lands at flat position i * (n + 1) + first, the
  // position of (i, i + k) (or (i - k, i) below the diagonal) in the n x n result.
  int64_t first = k >= 0 ? ak : ak * n;
  int64_t high = nn - first - (len - 1) * (n + 1) - 1;
  return lax::reshape(lax::pad(stats_strong(flat), zero, {{first, high, n}}), {n, n});
}

Array tri(int64_t N, std::optional<int64_t> M, int64_t k, DType dtype, Loc loc) {
  ApiScope s(loc);
  int64_t m = M.value_or(N);
  if (N < 0 || m < 0) throw_error<ShapeError>("tri", "N and M must be >= 0, got {} and {}", N, m);
  if (!is_valid_dtype(dtype)) throw_error<TypeError>("tri", "dtype {} is not a valid dtype", int(dtype));
  detail::checked_num_elements(std::vector<int64_t>{N, m}, dtype, "tri");
  // col - row <= k, with k clamped into [-N, M] (so a huge k fits the int32 of 32-bit mode and never overflows).
  k = std::clamp<int64_t>(k, -N - 1, m + 1);
  DType it = N + m + 2 < (int64_t{1} << 31) ? DType::int32 : DType::int64;
  Array d = lax::sub(lax::broadcasted_iota(it, {N, m}, 1), lax::broadcasted_iota(it, {N, m}, 0));
  return lax::convert_element_type(lax::le(d, Array::scalar_int(k, it)), dtype);
}

Array vander(const Array& x, std::optional<int64_t> N, bool increasing, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("vander", x);
  if (x.ndim() != 1) throw_error<ShapeError>("vander", "x must be 1-D, got shape {}", shape_str(x.shape()));
  if (is_bool(x.dtype())) throw_error<TypeError>("vander", "x must be numeric, got bool (JAX: iota refuses it)");
  int64_t n = N.value_or(x.shape()[0]);
  if (n < 0) throw_error<ShapeError>("vander", "N must be >= 0, got {}", n);
  detail::checked_num_elements(std::vector<int64_t>{x.shape()[0], n}, x.dtype(), "vander");
  Array p = lax::iota(x.dtype(), n);
  if (!increasing) p = lax::sub(lax::convert_element_type(Array(n - 1), x.dtype()), p);
  return power(expand_dims(x, {1}), expand_dims(p, {0}));
}

// --- index helpers ---------------------------------------------------------------------------------------------
namespace {
std::pair<Array, Array> triangle_indices(int64_t n, int64_t k, std::optional<int64_t> m_opt, bool lower,
                                         std::string_view op) {
  int64_t m = m_opt.value_or(n);
  if (n < 0 || m < 0) throw_error<ShapeError>(op, "n and m must be >= 0, got {} and {}", n, m);
  detail::checked_num_elements(std::vector<int64_t>{n, m}, DType::int64, op);
  k = std::clamp<int64_t>(k, -n - 1, m + 1);
  // Row i holds the columns j with j - i <= k (lower) or j - i >= k (upper): one range per row.
  auto columns = [&](int64_t i) {
    return lower ? std::pair<int64_t, int64_t>{0, std::clamp<int64_t>(i + k + 1, 0, m)}
                 : std::pair<int64_t, int64_t>{std::clamp<int64_t>(i + k, 0, m), m};
  };
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += columns(i).second - columns(i).first;
  std::vector<int64_t> rows, cols;
  try {
    rows.reserve(static_cast<size_t>(count));
    cols.reserve(static_cast<size_t>(count));
  } catch (const std::exception&) {
    throw_error<RuntimeError>(op, "cannot allocate the {} indices of the triangle", count);
  }
  for (int64_t i = 0; i < n; ++i) {
    auto [lo, hi] = columns(i);
    for (int64_t j = lo; j < hi; ++j) {
      rows.push_back(i);
      cols.push_back(j);
    }
  }
  Shape sh{static_cast<int64_t>(rows.size())};
  DType it = detail::default_int_dtype();
  return {array(rows, sh, it), array(cols, sh, it)};
}
}  // namespace

std::pair<Array, Array> tril_indices(int64_t n, int64_t k, std::optional<int64_t> m, Loc loc) {
  ApiScope s(loc);
  return triangle_indices(n, k, m, true, "tril_indices");
}
std::pair<Array, Array> triu_indices(int64_t n, int64_t k, std::optional<int64_t> m, Loc loc) {
  ApiScope s(loc);
  return triangle_indices(n, k, m, false, "triu_indices");
}

std::vector<Array> diag_indices(int64_t n, int64_t ndim, Loc loc) {
  ApiScope s(loc);
  if (n < 0) throw_error<ShapeError>("diag_indices", "n must be >= 0, got {}", n);
  if (ndim < 0) throw_error<ShapeError>("diag_indices", "ndim must be >= 0, got {}", ndim);
  if (ndim > (int64_t{1} << 20)) throw_error<ShapeError>("diag_indices", "ndim {} is too large", ndim);
  if (ndim == 0) return {};
  return std::vector<Array>(static_cast<size_t>(ndim), lax::iota(detail::default_int_dtype(), n));
}

std::vector<Array> indices(Shape dimensions, DType dtype, bool sparse, Loc loc) {
  ApiScope s(loc);
  if (!is_valid_dtype(dtype)) throw_error<TypeError>("indices", "dtype {} is not a valid dtype", int(dtype));
  if (is_bool(dtype)) throw_error<TypeError>("indices", "dtype must be numeric, got bool (JAX: iota refuses it)");
  for (int64_t d : dimensions)
    if (d < 0) throw_error<ShapeError>("indices", "dimensions must be >= 0, got {}", shape_str(dimensions));
  detail::checked_num_elements(dimensions, dtype, "indices");
  std::vector<Array> out;
  int64_t r = static_cast<int64_t>(dimensions.size());
  for (int64_t i = 0; i < r; ++i) {
    Shape sh = sparse ? Shape(static_cast<size_t>(r), 1) : dimensions;
    sh[i] = dimensions[i];
    out.push_back(lax::broadcasted_iota(dtype, sh, i));
  }
  return out;
}
Array indices(Shape dimensions, DType dtype, Loc loc) {
  ApiScope s(loc);
  std::vector<Array> grids = indices(dimensions, dtype, false, loc);
  if (grids.empty()) return zeros({0}, dtype);
  return stack(grids, 0);
}


std::vector<Array> unravel_index(const Array& indices, Shape shape, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("unravel_index", indices);
  // JAX's divmod from the last axis; what is left over says whether the index was past the end (> 0) or before
  // the start (< -1: -1 itself is the last element), which clamp to the last or first element.
  std::vector<Array> out(shape.size());
  Array rest = indices;
  for (size_t i = shape.size(); i-- > 0;) std::tie(rest, out[i]) = divmod(rest, Array(shape[i]));  // jnp.divmod
  Array past = greater(rest, Array(0));
  std::optional<Array> before;
  if (!is_unsigned_integer(rest.dtype())) before = less(rest, Array(-1));
  for (size_t i = 0; i < shape.size(); ++i) {
    Array v = before ? where(*before, Array(0), out[i]) : out[i];
    out[i] = where(past, Array(shape[i] - 1), v);
  }
  return out;
}

Array ravel_multi_index(const std::vector<Array>& multi_index, Shape dims, std::string_view mode,
                        std::string_view order, std::optional<DType> dtype, Loc loc) {
  ApiScope s(loc);
  const std::string_view op = "ravel_multi_index";
  for (const Array& i : multi_index) stats_check_valid(op, i);
  if (multi_index.size() != dims.size())
    throw_error<ShapeError>(op, "got {} index arrays for {} dimensions {}", multi_index.size(), dims.size(),
                            shape_str(dims));
  if (mode != "raise" && mode != "wrap" && mode != "clip" && mode != "ignore")
    throw_error<TypeError>(op, "mode must be 'raise', 'wrap', 'clip' or 'ignore', got '{}'", mode);
  if (order != "C" && order != "F") throw_error<TypeError>(op, "order must be 'C' or 'F', got '{}'", order);
  // JAX: result_type(int, *multi_index), a weak int joined with the indices' dtypes.
  DType d = DType::int64;
  bool weak = true;
  for (const Array& i : multi_index) d = promote_types(d, weak, i.dtype(), i.weak_type(), &weak);
  if (dtype) {
    if (!is_valid_dtype(*dtype)) throw_error<TypeError>(op, "dtype {} is not a valid dtype", int(*dtype));
    d = *dtype;
  }
  d = canonicalize_dtype(d);
  if (!is_integer(d)) throw_error<TypeError>(op, "the result dtype must be an integer type, got {}", dtype_name(d));
  int64_t total = 1;
  bool overflow = false;
  for (int64_t n : dims) overflow = overflow || __builtin_mul_overflow(total, n, &total);
  int bits = dtype_bits(d) - (is_signed_integer(d) ? 1 : 0);
  if (overflow || (bits < 63 && total - 1 > (int64_t{1} << bits) - 1))
    throw_error<TypeError>(op, "dtype {} cannot hold the flat indices of dims {}; pass a wider dtype",
                           dtype_name(d), shape_str(dims));
  std::vector<Array> idx;
  for (size_t k = 0; k < multi_index.size(); ++k) {
    const Array& i = multi_index[k];
    if (mode == "raise" && i.is_tracer())
      throw_error<TracerError>(op, "mode 'raise' checks the indices' values, so it needs concrete arrays (JAX's "
                                   "ConcretizationTypeError under jit); use mode 'wrap' or 'clip'");
    if (!is_integer(i.dtype())) throw_error<TypeError>(op, "indices must be integers, got {}", i.aval().str());
    Array n(dims[k]);
    if (mode == "raise" && any(logical_or(less(i, Array(0)), greater_equal(i, n))).item<bool>())
      throw_error<ShapeError>(op, "index array {} has an entry outside [0, {})", k, dims[k]);
    idx.push_back(mode == "clip" ? clip(i, Array(0), Array(dims[k] - 1)) : mode == "wrap" ? remainder(i, n) : i);
  }
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t k = 1; k < dims.size(); ++k) {
    if (order == "C") strides[dims.size() - 1 - k] = strides[dims.size() - k] * dims[dims.size() - k];
    else strides[k] = strides[k - 1] * dims[k - 1];
  }
  Array result = lax::convert_element_type(Array(0), d);
  for (size_t k = 0; k < idx.size(); ++k) result = add(result, multiply(astype(idx[k], d), Array(strides[k])));
  return result;
}

}  // namespace jitx::numpy
