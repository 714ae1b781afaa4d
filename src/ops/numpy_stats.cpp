// jitx::numpy statistics: quantiles, average, cov/corrcoef, the NaN-aware reductions and the array API's cumulative
// ops, composed from existing jnp/lax functions (as JAX composes them) so that grad, vmap and jit apply unchanged.
#include "jitx/numpy_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "ops/convert.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
using stats_util::stats_check_valid;
using stats_util::stats_inexact;
using stats_util::stats_inexact_of;
using stats_util::axes_in_order;
using stats_util::stats_lit;
using stats_util::stats_strong;

namespace {


/// JAX's promoted dtype and weak type of two operands (lattice_result_type: an integer array next to a weak float
/// gives a weak float), read from promote_and_broadcast on 0-d stand-ins.
std::pair<DType, bool> promoted(const Array& x, const Array& y, std::string_view op) {
  Array a = detail::convert_weak(Array(0), x.dtype(), x.weak_type());
  Array b = detail::convert_weak(Array(0), y.dtype(), y.weak_type());
  Array r = promote_and_broadcast(a, b, op).first;
  return {r.dtype(), r.weak_type()};
}


/// a with its reduced axes moved last and merged: (rows, n), rows the product of the kept axes.
struct Merged {
  Array x;
  Shape rest;  // the kept axes' sizes, in order
  Shape keep;  // a's shape with the reduced axes as 1 (keepdims)
  int64_t rows = 1, n = 1;
};
Merged merge_reduced(const Array& a, const Axes& axes, std::string_view op) {
  std::vector<int64_t> ax = axes_in_order(a, axes, op);
  std::sort(ax.begin(), ax.end());
  Merged m;
  m.keep = a.shape();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < a.ndim(); ++i)
    if (!std::binary_search(ax.begin(), ax.end(), i)) {
      perm.push_back(i);
      m.rest.push_back(a.shape()[i]);
      m.rows *= a.shape()[i];
    }
  for (int64_t i : ax) {
    perm.push_back(i);
    m.n *= a.shape()[i];
    m.keep[i] = 1;
  }
  // JAX ravels a 0-d a and keeps the raveled axis with keepdims: shape (1,), not ().
  if (a.ndim() == 0) m.keep = {1};
  m.x = lax::reshape(lax::transpose(a, perm), {m.rows, m.n});
  return m;
}

bool known_method(std::string_view m) {
  return m == "linear" || m == "lower" || m == "higher" || m == "nearest" || m == "midpoint" || m == "inverted_cdf";
}

/// The weights of a weighted quantile on a's shape: a's own shape, or (axes given) the reduced axes' sizes in the
/// order the axes are given, broadcast along the kept ones (JAX's broadcast_in_dim with the axes as dimensions).
Array quantile_weights(const Array& a, const Array& w, const Axes& axes, std::string_view op) {
  if (w.shape() == a.shape()) return w;
  if (axes.empty())
    throw_error<ShapeError>(op, "weights of shape {} must have a's shape {} when no axes are given (as JAX)",
                            shape_str(w.shape()), shape_str(a.shape()));
  std::vector<int64_t> ax = axes_in_order(a, axes, op);
  Shape want;
  for (int64_t i : ax) want.push_back(a.shape()[static_cast<size_t>(i)]);
  if (w.shape() != want)
    throw_error<ShapeError>(op, "weights of shape {} must have a's shape {} or the reduced axes' sizes {}",
                            shape_str(w.shape()), shape_str(a.shape()), shape_str(want));
  std::vector<int64_t> order(ax.size());  // w's dims by ascending axis
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return ax[x] < ax[y]; });
  std::vector<int64_t> dims;
  for (int64_t k : order) dims.push_back(ax[static_cast<size_t>(k)]);
  return lax::broadcast_in_dim(lax::transpose(w, order), a.shape(), dims);
}

/// JAX's inverted_cdf method: the first sorted value whose cumulative weight reaches q times the slice's total
/// weight (every weight 1 without weights). A negative or NaN weight makes its slice NaN; so does a NaN value
/// (quantile), or a slice of NaNs only (nanquantile, whose NaNs weigh 0). q is taken in a's dtype (JAX requires
/// the two to match).
Array inverted_cdf(const Array& a, const Array& q, const std::optional<Array>& w, const Axes& axes, bool keepdims,
                   bool squash_nans, std::string_view op) {
  Merged m = merge_reduced(a, axes, op);
  if (m.n == 0)
    throw_error<ShapeError>(op, "cannot take a quantile over an empty axis: a has shape {}", shape_str(a.shape()));
  const DType ad = a.dtype(), it = DType::int64;
  Array x = m.x;
  Array nan_mask = isnan(x);
  x = where(squash_nans ? nan_mask : any(nan_mask, {1}, true), stats_lit(NAN, ad), x);
  Array wx;
  if (w) {  // sorted with the values (a stable sort on the values only)
    std::vector<Array> sorted = lax::sort({x, merge_reduced(*w, axes, op).x}, 1, true, 1);
    x = sorted[0];
    wx = sorted[1];
  } else {
    x = sort(x, 1);
    wx = full_like(x, 1.0);
  }
  Array zero = stats_lit(0, ad);
  Array bad = logical_or(less(wx, zero), isnan(wx));
  Array nan_data = isnan(x);
  Array cum = cumsum(where(logical_or(bad, nan_data), zero, wx), 1);
  Array total = lax::reshape(lax::slice(cum, {0, m.n - 1}, {m.rows, m.n}), {m.rows});
  Array qa = astype(q, ad);
  Array target = multiply(q.ndim() == 1 ? lax::reshape(qa, {q.shape()[0], 1}) : qa, total);  // q.shape + (rows,)
  Array idx = sum(astype(less(cum, expand_dims(target, {target.ndim()})), it), {-1});
  Array valid = squash_nans ? sum(astype(logical_not(nan_data), it), {1}) : Array::scalar_int(m.n, it);
  idx = maximum(Array::scalar_int(0, it), minimum(idx, subtract(valid, Array::scalar_int(1, it))));
  Array row_start = multiply(lax::iota(it, m.rows), Array::scalar_int(m.n, it));
  Array r = take(lax::reshape(x, {m.rows * m.n}), add(idx, row_start), 0, "clip");
  Array no_data = squash_nans ? equal(valid, Array::scalar_int(0, it)) : any(nan_data, {1});
  Array force_nan = logical_or(any(bad, {1}), no_data);
  r = where(force_nan, stats_lit(NAN, ad), r);
  Shape out = q.shape();
  const Shape& tail = keepdims ? m.keep : m.rest;
  out.insert(out.end(), tail.begin(), tail.end());
  return lax::reshape(r, out);
}

/// JAX's _quantile: sort each slice, read the two order statistics around q * (n - 1) with one flat gather (so
/// the derivative is the gather's and the sort's, as JAX's), and combine them by method. squash_nans (nanquantile)
/// counts the non-NaN values of each slice (NaNs sort last) instead of making a slice with a NaN all NaN.
/// weights: only for inverted_cdf (as JAX); a and the weights are promoted together to an inexact dtype.
Array quantile_impl(const Array& a0, const Array& q, const Axes& axes, std::string_view method, bool keepdims,
                    bool squash_nans, std::string_view op, const std::optional<Array>& weights = std::nullopt) {
  stats_check_valid(op, a0);
  stats_check_valid(op, q, "a q that is an");
  if (weights) stats_check_valid(op, *weights, "weights that are an");
  if (q.ndim() > 1) throw_error<ShapeError>(op, "q must be a scalar or 1-D, got shape {}", shape_str(q.shape()));
  if (!known_method(method))
    throw_error<TypeError>(op,
                           "method must be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf', "
                           "got '{}'",
                           method);
  if (weights && method != "inverted_cdf")
    throw_error<TypeError>(op, "method '{}' takes no weights: only 'inverted_cdf' does (as JAX)", method);
  if (!is_floating(q.dtype()))
    throw_error<TypeError>(op, "q must be a floating-point scalar or array, got {} (JAX's floor refuses it)",
                           dtype_name(q.dtype()));
  if (method == "inverted_cdf") {
    if (!weights) return inverted_cdf(stats_inexact(a0), q, std::nullopt, axes, keepdims, squash_nans, op);
    DType d = stats_inexact_of(result_type({a0, *weights}));
    Array a = astype(a0, d);
    return inverted_cdf(a, q, quantile_weights(a, astype(*weights, d), axes, op), axes, keepdims, squash_nans, op);
  }
  Array a = stats_inexact(a0);
  Merged m = merge_reduced(a, axes, op);
  if (m.n == 0)
    throw_error<ShapeError>(op, "cannot take a quantile over an empty axis: a has shape {}", shape_str(a.shape()));
  DType ad = a.dtype(), qd = q.dtype();
  Array x = m.x;
  Array nan_mask = isnan(x);
  // Without squash_nans a slice holding a NaN is all NaN (JAX's where(any(isnan))); with it the NaNs themselves are
  // replaced (JAX's where(isnan), which sorts them last). Either where also zeroes the NaNs' gradient.
  x = where(squash_nans ? nan_mask : any(nan_mask, {1}, true), stats_lit(NAN, ad), x);
  Array sorted = sort(x, 1);
  // q as a column against the rows: positions of shape q.shape + (rows,), or q's shape for a common n.
  Array qc = q.ndim() == 1 ? lax::reshape(q, {q.shape()[0], 1}) : q;
  Array last;  // n - 1 in q's dtype (JAX converts n first, then subtracts: f16 rounds n itself)
  if (squash_nans)
    last = subtract(sum(astype(logical_not(nan_mask), qd), {1}), stats_lit(1, qd));
  else
    last = lax::sub(stats_lit(static_cast<double>(m.n), qd), stats_lit(1, qd));
  Array pos = multiply(qc, last);
  Array low = floor(pos), high = ceil(pos);
  Array hw = subtract(pos, low);
  Array lw = subtract(stats_lit(1, qd), hw);
  // nanquantile clamps as max(0, min(i, count - 1)) so that an all-NaN slice (count 0) reads index 0; a NaN q
  // reads index 0 too (XLA converts NaN to the integer 0; the interpolation weights keep "linear" NaN).
  Array pos_nan = isnan(pos);
  low = where(pos_nan, stats_lit(0, qd), maximum(stats_lit(0, qd), minimum(low, last)));
  high = where(pos_nan, stats_lit(0, qd), maximum(stats_lit(0, qd), minimum(high, last)));
  Array row_start = multiply(lax::iota(DType::int64, m.rows), Array::scalar_int(m.n, DType::int64));
  Array flat = lax::reshape(sorted, {m.rows * m.n});
  Array lv = take(flat, add(astype(low, DType::int64), row_start), 0, "clip");
  Array hv = take(flat, add(astype(high, DType::int64), row_start), 0, "clip");
  Array r;
  if (method == "linear")
    r = add(multiply(astype(lv, qd), lw), multiply(astype(hv, qd), hw));
  else if (method == "lower")
    r = lv;
  else if (method == "higher")
    r = hv;
  else if (method == "nearest")
    r = where(less_equal(hw, stats_lit(0.5, qd)), lv, hv);
  else
    r = multiply(add(lv, hv), stats_lit(0.5, ad));
  r = detail::convert_weak(r, ad, false);
  Shape out = q.shape();
  const Shape& tail = keepdims ? m.keep : m.rest;
  out.insert(out.end(), tail.begin(), tail.end());
  // r is q.shape + (rows,): the gathers' indices broadcast q's column against the rows.
  return lax::reshape(r, out);
}

Array percentile_impl(const Array& a, const Array& q, const Axes& axes, std::string_view method, bool keepdims,
                      bool squash_nans, std::string_view op, const std::optional<Array>& weights) {
  stats_check_valid(op, a);
  stats_check_valid(op, q, "a q that is an");
  // q / 100 as XLA computes it in JAX's jitted percentile: a multiply by the reciprocal rounded to q's dtype.
  Array qf = stats_inexact(q);
  return quantile_impl(a, multiply(qf, detail::convert_weak(Array(0.01), qf.dtype(), qf.weak_type())), axes, method,
                       keepdims, squash_nans, op, weights);
}
}  // namespace

Array quantile(const Array& a, const Array& q, Axes axes, std::string_view method, bool keepdims,
               std::optional<Array> weights, Loc loc) {
  ApiScope s(loc);
  return quantile_impl(a, q, axes, method, keepdims, false, "quantile", weights);
}
Array nanquantile(const Array& a, const Array& q, Axes axes, std::string_view method, bool keepdims,
                  std::optional<Array> weights, Loc loc) {
  ApiScope s(loc);
  return quantile_impl(a, q, axes, method, keepdims, true, "nanquantile", weights);
}
Array percentile(const Array& a, const Array& q, Axes axes, std::string_view method, bool keepdims,
                 std::optional<Array> weights, Loc loc) {
  ApiScope s(loc);
  return percentile_impl(a, q, axes, method, keepdims, false, "percentile", weights);
}
Array nanpercentile(const Array& a, const Array& q, Axes axes, std::string_view method, bool keepdims,
                    std::optional<Array> weights, Loc loc) {
  ApiScope s(loc);
  return percentile_impl(a, q, axes, method, keepdims, true, "nanpercentile", weights);
}
Array median(const Array& a, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return quantile_impl(a, Array(0.5), axes, "midpoint", keepdims, false, "median");
}
Array nanmedian(const Array& a, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return quantile_impl(a, Array(0.5), axes, "midpoint", keepdims, true, "nanmedian");
}

namespace {
/// JAX's _average. With weights, a and weights are promoted to one float dtype; weights of another shape than a
/// must have the sizes of the axes in the order listed, and are laid along them.
std::pair<Array, Array> average_impl(const Array& a, const Axes& axes, const std::optional<Array>& weights,
                                     bool keepdims, std::string_view op) {
  stats_check_valid(op, a);
  std::vector<int64_t> ax = axes_in_order(a, axes, op);
  if (!weights) {
    Array avg = stats_strong(mean(stats_inexact(a), axes, keepdims));
    int64_t count = 1;
    for (int64_t i : ax) count *= a.shape()[i];
    return {avg, full({}, static_cast<double>(count), avg.dtype())};
  }
  stats_check_valid(op, *weights, "weights that are an");
  auto [pd, weak] = promoted(a, *weights, op);
  DType d = stats_inexact_of(pd);
  Array x = detail::convert_weak(a, d, weak), w = detail::convert_weak(*weights, d, weak);
  if (x.shape() != w.shape()) {
    if (axes.empty())
      throw_error<ShapeError>(op, "weights of shape {} for a of shape {}: pass the axes when the shapes differ",
                              shape_str(w.shape()), shape_str(x.shape()));
    Shape along;
    for (int64_t i : ax) along.push_back(x.shape()[i]);
    if (w.shape() != along)
      throw_error<ShapeError>(op, "weights of shape {} do not fit a of shape {} along axes {}: expected shape {}",
                              shape_str(w.shape()), shape_str(x.shape()), shape_str(axes), shape_str(along));
    // The weights' axes in ascending order of the axes they lie along (JAX's reshape with argsort(axes)).
    std::vector<int64_t> order(ax.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return ax[i] < ax[j]; });
    Shape laid(static_cast<size_t>(x.ndim()), 1);
    for (int64_t i : ax) laid[i] = x.shape()[i];
    w = lax::reshape(lax::transpose(w, order), laid);
  }
  Array wsum = sum(w, axes, keepdims);
  return {stats_strong(divide(sum(multiply(x, w), axes, keepdims), wsum)), stats_strong(wsum)};
}
}  // namespace

Array average(const Array& a, Axes axes, const std::optional<Array>& weights, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return average_impl(a, axes, weights, keepdims, "average").first;
}
std::pair<Array, Array> average_returned(const Array& a, Axes axes, const std::optional<Array>& weights, bool keepdims,
                                         Loc loc) {
  ApiScope s(loc);
  auto [avg, wsum] = average_impl(a, axes, weights, keepdims, "average_returned");
  if (wsum.shape() != avg.shape()) wsum = broadcast_to(wsum, avg.shape());
  return {avg, wsum};
}

Array count_nonzero(const Array& a, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("count_nonzero", a);
  Array nz = lax::ne(a, detail::convert_weak(Array(0), a.dtype(), false));
  return astype(sum(nz, axes, keepdims), detail::default_int_dtype());
}

Array ptp(const Array& a, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("ptp", a);
  if (is_bool(a.dtype())) throw_error<TypeError>("ptp", "bool input has no subtraction (as JAX's sub); got bool");
  return stats_strong(lax::sub(max(a, axes, keepdims), min(a, axes, keepdims)));
}

namespace {
/// JAX's atleast_2d: () -> (1, 1), (n,) -> (1, n).
Array as_2d(const Array& x) {
  if (x.ndim() >= 2) return x;
  return lax::reshape(x, x.ndim() == 0 ? Shape{1, 1} : Shape{1, x.shape()[0]});
}

Array check_obs_weights(const Array& w, int64_t n, const char* name) {
  stats_check_valid("cov", w, name);
  if (w.ndim() != 1)
    throw_error<ShapeError>("cov", "{} must be 1-D (one weight per observation), got shape {}", name,
                            shape_str(w.shape()));
  if (w.shape()[0] != n) throw_error<ShapeError>("cov", "got {} {} for {} observations", w.shape()[0], name, n);
  return abs(w);  // JAX takes |w| where NumPy refuses negative weights
}
}  // namespace

Array cov(const Array& m, const std::optional<Array>& y, bool rowvar, bool bias, std::optional<int64_t> ddof,
          const std::optional<Array>& fweights, const std::optional<Array>& aweights, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("cov", m);
  if (y) stats_check_valid("cov", *y, "a y that is an");
  // promote_args_inexact: one float dtype, and, for operands of different ranks, shapes that broadcast together
  // (JAX's rank promotion checks it even though cov does not broadcast them).
  DType d = stats_inexact_of(y ? result_type({m, *y}) : m.dtype());
  if (y && y->ndim() != m.ndim()) broadcast_shapes({m.shape(), y->shape()}, "cov");
  if (y && y->ndim() > 2)
    throw_error<ShapeError>("cov", "y has more than 2 dimensions: shape {}", shape_str(y->shape()));
  if (m.ndim() > 2) throw_error<ShapeError>("cov", "m has more than 2 dimensions: shape {}", shape_str(m.shape()));
  Array X = as_2d(astype(m, d));
  if (!rowvar && m.ndim() != 1) X = transpose(X);
  if (X.shape()[0] == 0) return zeros({0, 0}, detail::default_float_dtype());  // JAX's array([]).reshape(0, 0)
  if (y) {
    Array Y = as_2d(astype(*y, d));
    if (!rowvar && Y.shape()[0] != 1) Y = transpose(Y);
    X = concatenate({X, Y}, 0);
  }
  int64_t vars = X.shape()[0], n = X.shape()[1];
  if (n == 0) return full(vars == 1 ? Shape{} : Shape{vars, vars}, NAN, X.dtype());
  int64_t dd = ddof.value_or(bias ? 0 : 1);
  std::optional<Array> w, aw;
  if (fweights) {
    Array f = check_obs_weights(*fweights, n, "fweights");
    if (!is_integer(fweights->dtype()))
      throw_error<TypeError>("cov", "fweights must be integers, got {}", dtype_name(fweights->dtype()));
    w = f;
  }
  if (aweights) {
    aw = check_obs_weights(*aweights, n, "aweights");
    w = w ? multiply(*w, *aw) : *aw;
  }
  auto [avg, wsum_all] = average_impl(X, {1}, w, false, "cov");
  // JAX's w_sum[0] (the sum broadcast to the rows, or the common count without weights).
  Array wsum = wsum_all.ndim() == 0 ? wsum_all : lax::reshape(lax::slice_in_dim(wsum_all, 0, 1, 1, 0), {});
  X = subtract(X, expand_dims(avg, {1}));
  Array XT = transpose(w ? multiply(X, *w) : X);
  Array prod = dot(X, XT);
  // Without weights JAX divides by the constant n - ddof, which XLA turns into a multiply by its reciprocal.
  if (!w) return squeeze(multiply(prod, stats_lit(1.0 / static_cast<double>(n - dd), prod.dtype())));
  Array f;  // the normalisation: the weight sum, less ddof (times the aweights' share with both weights)
  if (dd == 0)
    f = wsum;
  else if (!aw)
    f = subtract(wsum, Array(dd));
  else
    f = subtract(wsum, divide(multiply(Array(dd), sum(multiply(*w, *aw))), wsum));
  return squeeze(true_divide(prod, f));
}

Array corrcoef(const Array& x, const std::optional<Array>& y, bool rowvar, Loc loc) {
  ApiScope s(loc);
  Array c = cov(x, y, rowvar);
  if (c.ndim() == 0) return divide(c, c);  // NaN for nan/inf/0 variances, 1 otherwise (as JAX)
  // The diagonal as a gather of flat positions i * (n + 1).
  int64_t n = c.shape()[0];
  Array diag = take(lax::reshape(c, {n * n}),
                    multiply(lax::iota(DType::int64, n), Array::scalar_int(n + 1, DType::int64)), 0, "clip");
  Array sd = sqrt(diag);
  c = divide(divide(c, expand_dims(sd, {1})), expand_dims(sd, {0}));
  return clip(c, stats_lit(-1, c.dtype()), stats_lit(1, c.dtype()));
}

Array nanvar(const Array& x, Axes axes, bool keepdims, int64_t ddof, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("nanvar", x);
  axes_in_order(x, axes, "nanvar");  // checks them here, so the error names nanvar
  // _var_promote_types: integers as their float type; float16/bfloat16 computed in float32 and rounded once.
  DType out = stats_inexact_of(x.dtype());
  DType comp = out == DType::float16 || out == DType::bfloat16 ? DType::float32 : out;
  Array a = astype(x, comp);
  Array nan_mask = isnan(a);
  Array mu = nanmean(a, axes, true);
  // The double where: a NaN's centred value is 0 before squaring, so its gradient is 0, not NaN.
  Array c = where(nan_mask, stats_lit(0, comp), subtract(a, mu));
  Array normalizer = subtract(sum(logical_not(nan_mask), axes, keepdims), Array(ddof));
  Array none = lax::le(normalizer, Array::scalar_int(0, normalizer.dtype()));
  Array r = where(none, stats_lit(NAN, comp), sum(multiply(c, c), axes, keepdims));
  Array divisor = where(none, Array::scalar_int(1, normalizer.dtype()), normalizer);
  return astype(divide(r, astype(divisor, comp)), out);
}
Array nanstd(const Array& x, Axes axes, bool keepdims, int64_t ddof, Loc loc) {
  ApiScope s(loc);
  return sqrt(nanvar(x, axes, keepdims, ddof));
}

Array nanprod(const Array& x, Axes axes, bool keepdims, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("nanprod", x);
  if (!is_floating(x.dtype())) return stats_strong(prod(x, axes, keepdims));
  return stats_strong(prod(where(isnan(x), stats_lit(1, x.dtype()), x), axes, keepdims));
}

namespace {
/// JAX's _cumulative_reduction with fill_nan: axis nullopt, or a weak scalar (JAX's Python scalar), runs over the
/// flattened x; a 0-d array with an axis is refused, as JAX's.
Array nan_cumulative(const Array& x, std::optional<int64_t> axis, bool is_sum, std::string_view op) {
  stats_check_valid(op, x);
  Array in = !axis || (x.ndim() == 0 && x.weak_type()) ? lax::reshape(x, {x.size()}) : x;
  int64_t a = detail::canonical_axis(axis.value_or(0), in.ndim(), op);
  if (is_floating(in.dtype())) in = where(isnan(in), stats_lit(is_sum ? 0 : 1, in.dtype()), in);
  return is_sum ? cumsum(in, a) : cumprod(in, a);
}

/// JAX's nanargmax/nanargmin: NaNs as -inf/+inf, -1 for an all-NaN slice.
Array nan_arg(const Array& x, std::optional<int64_t> axis, bool keepdims, bool is_max, std::string_view op) {
  stats_check_valid(op, x);
  if (!is_floating(x.dtype())) return is_max ? argmax(x, axis, keepdims) : argmin(x, axis, keepdims);
  if (axis) detail::canonical_axis(*axis, x.ndim(), op);
  Array nan_mask = isnan(x);
  Array filled = where(nan_mask, stats_lit(is_max ? -INFINITY : INFINITY, x.dtype()), x);
  Array r = is_max ? argmax(filled, axis, keepdims) : argmin(filled, axis, keepdims);
  Axes ax = axis ? Axes{*axis} : Axes{};
  return where(all(nan_mask, ax, keepdims), Array::scalar_int(-1, r.dtype()), r);
}

/// The array API's cumulative_sum/cumulative_prod.
Array cumulative(const Array& x, std::optional<int64_t> axis, bool include_initial, bool is_sum, std::string_view op) {
  stats_check_valid(op, x);
  if (x.ndim() == 0) throw_error<ShapeError>(op, "needs an array of at least 1 dimension, got a 0-d one");
  if (!axis && x.ndim() > 1)
    throw_error<ShapeError>(op, "axis may be omitted only for a 1-D array, got shape {}", shape_str(x.shape()));
  int64_t a = detail::canonical_axis(axis.value_or(0), x.ndim(), op);
  Array in = x;
  DType d = x.dtype();
  if (is_bool(d)) {
    in = astype(x, detail::default_int_dtype());
  } else if (is_sum && is_integer(d)) {  // cumulative_sum widens narrow integers; cumulative_prod does not
    DType to = is_unsigned_integer(d) ? detail::default_uint_dtype() : detail::default_int_dtype();
    if (dtype_bits(d) < dtype_bits(to)) in = astype(x, to);
  }
  Array out = stats_strong(is_sum ? cumsum(in, a) : cumprod(in, a));
  if (!include_initial) return out;
  Shape first = out.shape();
  first[a] = 1;
  return lax::concatenate({full(first, is_sum ? 0.0 : 1.0, out.dtype()), out}, a);
}
}  // namespace

Array nancumsum(const Array& x, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  return nan_cumulative(x, axis, true, "nancumsum");
}
Array nancumprod(const Array& x, std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  return nan_cumulative(x, axis, false, "nancumprod");
}
Array nanargmax(const Array& x, std::optional<int64_t> axis, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return nan_arg(x, axis, keepdims, true, "nanargmax");
}
Array nanargmin(const Array& x, std::optional<int64_t> axis, bool keepdims, Loc loc) {
  ApiScope s(loc);
  return nan_arg(x, axis, keepdims, false, "nanargmin");
}
Array cumulative_sum(const Array& x, std::optional<int64_t> axis, bool include_initial, Loc loc) {
  ApiScope s(loc);
  return cumulative(x, axis, include_initial, true, "cumulative_sum");
}
Array cumulative_prod(const Array& x, std::optional<int64_t> axis, bool include_initial, Loc loc) {
  ApiScope s(loc);
  return cumulative(x, axis, include_initial, false, "cumulative_prod");
}

}  // namespace jitx::numpy
