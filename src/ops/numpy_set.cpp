// Unique values and set operations (see jitx/numpy_set.h), as JAX's setops: a stable sort (of the values, or of
// the rows along an axis, lexicographically), a mask of each run's first element, and the runs' starts gathered
// (a concrete count, or `size` of them). The `size` forms follow JAX's jit-compatible formulas step for step, so
// that their padding is JAX's too.
#include "jitx/numpy_set.h"

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/literal.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_extra.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/numpy_stats.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::throw_error;

namespace {
DType set_int_dtype() { return detail::default_int_dtype(); }
Array set_iota(int64_t n, DType d) { return arange(static_cast<double>(n), d); }
Array set_scalar(int64_t v) { return Array::scalar_int(v, set_int_dtype()); }
Array set_head(const Array& a, int64_t k) { return lax::slice_in_dim(a, 0, k); }             // a[:k]
Array set_tail(const Array& a, int64_t k) { return lax::slice_in_dim(a, k, a.shape()[0]); }  // a[k:]
Array set_count(const Array& mask) { return sum(astype(mask, set_int_dtype())); }

void set_check_args(const char* op, const Array& x, std::optional<int64_t> size,
                    const std::optional<Array>& fill_value) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (size && *size < 0) throw_error<ShapeError>(op, "size must be >= 0, got {}", *size);
  if (fill_value && !fill_value->valid()) throw_error<TypeError>(op, "fill_value is an empty Array");
}
void set_check_concrete(const char* op, const std::vector<Array>& xs, std::optional<int64_t> size) {
  for (const Array& x : xs)
    if (x.is_tracer() && !size)
      throw_error<TracerError>(op,
                               "the number of results depends on the data: pass a static size= (and fill_value=) "
                               "under jit (JAX's ConcretizationTypeError)");
}

// JAX's a.at[i].get(mode='fill', fill_value=fill) for 1-D a: a[i], or fill where i is outside [0, a.size).
Array set_get_fill(const Array& a, const Array& i, const Array& fill) {
  Array f = astype(fill, a.dtype());
  if (a.size() == 0) return lax::full(i.shape(), f);
  Array ok = logical_and(i >= set_scalar(0), i < set_scalar(a.size()));
  return where(ok, take(a, i, std::nullopt, "clip"), f);
}

// JAX's _unique_sorted_mask: `a` (the unique axis first) sorted lexicographically along axis 0 (stable, NaNs
// last, -0 == 0), the mask of each run's first row, and the permutation that sorts.
struct SortedSlices {
  Array aux, mask, perm;
};
SortedSlices sorted_slices(const Array& a, bool equal_nan) {
  const Shape& s = a.shape();
  const int64_t n = s[0];
  Shape rest(s.begin() + 1, s.end());
  const int64_t m = detail::num_elements(rest);
  SortedSlices r;
  if (m == 0) {  // rows without elements: one (empty) row stands for them all, as in JAX
    Shape one = s;
    one[0] = 1;
    r.perm = zeros({1}, set_int_dtype());
    r.aux = zeros(one, a.dtype());
    r.mask = lax::full({1}, Array(false));
    return r;
  }
  if (n == 0) {
    r.perm = zeros({0}, set_int_dtype());
    r.aux = a;
    r.mask = zeros({0}, DType::bool_);
    return r;
  }
  if (m == 1) {
    r.perm = astype(argsort(ravel(a)), set_int_dtype());  // stable, NaNs last: equal values keep the input's order
  } else {
    Array flat = reshape(a, {n, m});
    std::vector<Array> keys;
    for (int64_t j = 0; j < m; ++j) keys.push_back(reshape(lax::slice(flat, {0, j}, {n, j + 1}), {n}));
    keys.push_back(set_iota(n, set_int_dtype()));
    r.perm = lax::sort(keys, 0, true, m).back();
  }
  r.aux = take(a, r.perm, 0, "clip");
  Array hi = set_tail(r.aux, 1), lo = set_head(r.aux, n - 1);
  Array neq = hi != lo;
  if (is_floating(a.dtype()) && equal_nan) neq = neq & logical_not(isnan(hi) & isnan(lo));
  if (s.size() > 1) {
    std::vector<int64_t> axes;
    for (size_t k = 1; k < s.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    neq = any(neq, axes);
  }
  r.mask = concatenate({lax::full({1}, Array(true)), neq}, 0);
  return r;
}

UniqueResult unique_impl(const char* op, const Array& x, std::optional<int64_t> size,
                         const std::optional<Array>& fill_value, bool equal_nan,
                         std::optional<int64_t> axis = std::nullopt) {
  set_check_args(op, x, size, fill_value);
  if (x.is_tracer() && !size)
    throw_error<TracerError>(op,
                             "the number of unique values depends on the data: pass a static size= (and "
                             "fill_value=) under jit (JAX's ConcretizationTypeError)");
  if (fill_value && fill_value->ndim() != 0)
    throw_error<ShapeError>(op, "fill_value must be a scalar, got {}", fill_value->aval().str());
  const DType it = set_int_dtype();
  int64_t ax = 0;
  Array a = axis ? x : ravel(x);
  if (axis) {
    if (x.ndim() == 0)
      throw_error<ShapeError>(op, "axis {} is out of bounds for a 0-d array (got {})", *axis, x.aval().str());
    ax = detail::canonical_axis(*axis, x.ndim(), op);
    a = moveaxis(x, ax, 0);
  }
  const int64_t n = a.shape()[0];
  if (n == 0 && size && *size > 0 && !fill_value)
    throw_error<TypeError>(op, "for a zero-sized input with a nonzero size, fill_value must be given (as JAX)");
  SortedSlices st = sorted_slices(a, equal_nan);
  const bool has = st.aux.size() > 0;
  const int64_t rows = st.mask.shape()[0];
  Array ind = size ? flatnonzero(st.mask, size, 0) : flatnonzero(st.mask);  // padded with 0: the smallest value
  UniqueResult r;
  r.values = has ? take(st.aux, ind, 0, "clip") : st.aux;
  if (size && fill_value) {
    Array fv = astype(*fill_value, a.dtype());
    if (r.values.shape()[0] > 0) {
      Shape vshape(static_cast<size_t>(r.values.ndim()), 1);
      vshape[0] = *size;
      Array valid = reshape(set_iota(*size, it) < set_count(st.mask), vshape);
      r.values = where(valid, r.values, fv);
    } else {
      Shape full_shape = r.values.shape();
      full_shape[0] = *size;
      r.values = lax::full(full_shape, fv);
    }
  }
  if (ax != 0) r.values = moveaxis(r.values, 0, ax);
  r.indices = has ? take(st.perm, ind, std::nullopt, "clip") : st.perm;
  if (has) {
    Array rank = cumsum(astype(st.mask, it)) - Array::scalar_int(1, it);
    r.inverse = at(zeros({rows}, it), st.perm).set(rank);
  } else {
    r.inverse = zeros({n}, it);
  }
  if (!axis) r.inverse = reshape(r.inverse, x.shape());
  if (has) {
    Array starts =
        size ? flatnonzero(st.mask, *size + 1, 0) : append(flatnonzero(st.mask), Array::scalar_int(rows, it));
    if (size) {  // the padding's starts (0) become the row count: those entries count 0
      Array tail = set_tail(starts, 1);
      starts = concatenate({set_head(starts, 1), where(tail != 0, tail, Array::scalar_int(rows, it))}, 0);
    }
    r.counts = diff(starts);
  } else {
    r.counts = n > 0 ? lax::full({1}, Array::scalar_int(n, it)) : zeros({0}, it);
  }
  return r;
}

// The unique values of a 1-D array padded to its own length (JAX's _unique(.., size=a.size,
// return_true_size=True)), and how many there are.
std::pair<UniqueResult, Array> set_unique_padded(const Array& a, std::optional<Array> fill_value) {
  UniqueResult u = unique_impl("unique", a, a.size(), fill_value, true);
  return {u, set_count(u.counts > Array::scalar_int(0, set_int_dtype()))};
}

// arr1's unique values followed by arr2's (JAX's _concat_unique, also used by intersect1d): zeros(n1 + n2) with
// u1 at 0 and u2 at num_unique1 (the rest keeps the first array's padding); returns the total count.
Array set_concat_unique(const Array& u1, const Array& nu1, const Array& u2, DType d) {
  Array arr = zeros({u1.size() + u2.size()}, d);
  arr = lax::dynamic_update_slice(arr, astype(u1, d), {set_scalar(0)});
  return lax::dynamic_update_slice(arr, astype(u2, d), {nu1});
}

// The `size` results' padding (JAX's _setxor1d_size/_intersect1d_size): entries past num_results are fill_value,
// or the smallest of the results (through the largest first, as JAX: NaN results pad with NaN).
Array set_pad_results(Array vals, const Array& num_results, const std::optional<Array>& fill_value) {
  Array valid = set_iota(vals.shape()[0], set_int_dtype()) < num_results;
  if (fill_value) return where(valid, vals, *fill_value);
  vals = where(valid, vals, max(vals));
  return where(valid, vals, min(vals));
}

struct SetPromoted {
  Array a, b;
};
SetPromoted set_promote_flat(const char* op, const Array& ar1, const Array& ar2, std::optional<int64_t> size,
                             const std::optional<Array>& fill_value) {
  set_check_args(op, ar1, size, fill_value);
  set_check_args(op, ar2, size, std::nullopt);
  set_check_concrete(op, {ar1, ar2}, size);
  DType d = result_type({ar1, ar2});
  return {ravel(astype(ar1, d)), ravel(astype(ar2, d))};
}

Array setxor_sized(const Array& arr1, const Array& arr2, bool assume_unique, int64_t size,
                   const std::optional<Array>& fill_value) {
  const DType d = arr1.dtype();
  const int64_t total = arr1.size() + arr2.size();
  if (size == 0) return zeros({0}, d);
  Array aux, flag;
  if (assume_unique) {
    aux = sort(concatenate({arr1, arr2}, 0));
    Array neq = total > 0 ? set_tail(aux, 1) != set_head(aux, total - 1) : zeros({0}, DType::bool_);
    flag = concatenate({lax::full({1}, Array(total > 0)), neq, lax::full({1}, Array(true))}, 0);
  } else {
    auto [u1, nu1] = set_unique_padded(arr1, std::nullopt);
    auto [u2, nu2] = set_unique_padded(arr2, std::nullopt);
    Array arr = set_concat_unique(u1.values, nu1, u2.values, d);
    Array num_unique = nu1 + nu2;
    Array mask = set_iota(total + 1, set_int_dtype()) < num_unique + set_scalar(1);
    aux = lax::sort({logical_not(set_tail(mask, 1)), arr}, 0, true, 2)[1];
    Array neq = total > 0 ? set_tail(aux, 1) != set_head(aux, total - 1) : zeros({0}, DType::bool_);
    flag = mask & concatenate({lax::full({1}, Array(total > 0)), neq, lax::full({1}, Array(false))}, 0);
    flag = flag | (set_iota(total + 1, set_int_dtype()) == num_unique);
  }
  Array aux_mask = set_tail(flag, 1) & set_head(flag, total);
  Array vals = total > 0 ? set_get_fill(aux, flatnonzero(aux_mask, size, total), set_scalar(0)) : zeros({size}, d);
  return set_pad_results(vals, set_count(aux_mask), fill_value);
}

Intersect1dResult intersect_sized(const Array& arr1, const Array& arr2, bool assume_unique, int64_t size,
                                  const std::optional<Array>& fill_value, bool with_indices) {
  const DType d = arr1.dtype(), it = set_int_dtype();
  const int64_t n1 = arr1.size(), n2 = arr2.size(), total = n1 + n2;
  Intersect1dResult r;
  if (size == 0) {
    r.values = zeros({0}, d);
    r.indices1 = r.indices2 = zeros({0}, it);
    return r;
  }
  Array ind1, ind2, nu1, aux, aux_sort_indices, mask;
  if (assume_unique) {
    ind1 = set_iota(n1, it);
    ind2 = set_iota(n2, it);
    nu1 = set_scalar(n1);
    auto sorted = lax::sort({concatenate({arr1, arr2}, 0), set_iota(total, it)}, 0, true, 1);
    aux = sorted[0];
    aux_sort_indices = sorted[1];
    mask = lax::full({total}, Array(true));
  } else {
    auto [u1, c1] = set_unique_padded(arr1, Array::scalar_int(0, it));
    auto [u2, c2] = set_unique_padded(arr2, Array::scalar_int(0, it));
    ind1 = u1.indices;
    ind2 = u2.indices;
    nu1 = c1;
    Array arr = set_concat_unique(u1.values, c1, u2.values, d);
    mask = set_iota(total, it) < c1 + c2;
    auto sorted = lax::sort({logical_not(mask), arr, set_iota(total, it)}, 0, true, 2);
    aux = sorted[1];
    aux_sort_indices = sorted[2];
  }
  Array aux_mask =
      total > 0 ? (set_tail(aux, 1) == set_head(aux, total - 1)) & set_tail(mask, 1) : zeros({0}, DType::bool_);
  Array num_results = set_count(aux_mask);
  Array val_indices = total > 0 ? flatnonzero(aux_mask, size, total) : zeros({0}, it);
  Array vals = total > 0 ? set_get_fill(aux, val_indices, set_scalar(0)) : zeros({size}, d);
  r.values = set_pad_results(vals, num_results, fill_value);
  if (!with_indices) return r;
  Array valid = set_iota(val_indices.shape()[0], it) < num_results;
  Array i1 = where(valid, set_get_fill(aux_sort_indices, val_indices, set_scalar(n1)), set_scalar(n1));
  Array i2 = set_get_fill(aux_sort_indices, val_indices + set_scalar(1), set_scalar(n2)) - nu1;
  i2 = where(valid, i2, set_scalar(n2));
  if (!assume_unique) {
    i1 = set_get_fill(ind1, i1, set_scalar(ind1.size()));
    i2 = set_get_fill(ind2, i2, set_scalar(ind2.size()));
  }
  r.indices1 = i1;
  r.indices2 = i2;
  return r;
}

Intersect1dResult intersect_impl(const char* op, const Array& ar1, const Array& ar2, bool assume_unique,
                                 std::optional<int64_t> size, const std::optional<Array>& fill_value,
                                 bool with_indices) {
  auto [arr1, arr2] = set_promote_flat(op, ar1, ar2, size, fill_value);
  if (size) return intersect_sized(arr1, arr2, assume_unique, *size, fill_value, with_indices);
  Array ind1, ind2;
  if (!assume_unique) {
    UniqueResult u1 = unique_impl(op, arr1, std::nullopt, std::nullopt, true);
    UniqueResult u2 = unique_impl(op, arr2, std::nullopt, std::nullopt, true);
    arr1 = u1.values;
    ind1 = u1.indices;
    arr2 = u2.values;
    ind2 = u2.indices;
  }
  const int64_t total = arr1.size() + arr2.size();
  // JAX's sort_key_val with the narrowest signed index type that holds the positions.
  const DType idx = total < (int64_t{1} << 31) ? DType::int32 : DType::int64;
  Intersect1dResult r;
  if (total == 0) {
    r.values = arr1;
    r.indices1 = r.indices2 = zeros({0}, assume_unique ? idx : set_int_dtype());
    return r;
  }
  auto sorted = lax::sort({concatenate({arr1, arr2}, 0), set_iota(total, idx)}, 0, true, 1);
  Array aux = sorted[0];
  Array where_equal = flatnonzero(set_tail(aux, 1) == set_head(aux, total - 1));  // i: aux[i] == aux[i + 1]
  r.values = take(aux, where_equal, std::nullopt, "clip");
  if (!with_indices) return r;
  r.indices1 = take(sorted[1], where_equal, std::nullopt, "clip");
  r.indices2 = take(sorted[1], where_equal + set_scalar(1), std::nullopt, "clip") - Array::scalar_int(arr1.size(), idx);
  if (!assume_unique) {
    r.indices1 = take(ind1, r.indices1, std::nullopt, "clip");
    r.indices2 = take(ind2, r.indices2, std::nullopt, "clip");
  }
  return r;
}
}  // namespace

UniqueResult unique_all(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, bool equal_nan,
                        std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  return unique_impl("unique", x, size, fill_value, equal_nan, axis);
}
UniqueResult unique_all(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  return unique_impl("unique_all", x, size, fill_value, false);
}
Array unique(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, bool equal_nan,
             std::optional<int64_t> axis, Loc loc) {
  ApiScope s(loc);
  return unique_impl("unique", x, size, fill_value, equal_nan, axis).values;
}
Array unique_values(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  return unique_impl("unique_values", x, size, fill_value, false).values;
}
std::pair<Array, Array> unique_counts(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value,
                                      Loc loc) {
  ApiScope s(loc);
  UniqueResult r = unique_impl("unique_counts", x, size, fill_value, false);
  return {r.values, r.counts};
}
std::pair<Array, Array> unique_inverse(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value,
                                       Loc loc) {
  ApiScope s(loc);
  UniqueResult r = unique_impl("unique_inverse", x, size, fill_value, false);
  return {r.values, r.inverse};
}
Array union1d(const Array& a, const Array& b, std::optional<int64_t> size, std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  if (!a.valid() || !b.valid()) throw_error<TypeError>("union1d", "got an empty (default-constructed) Array");
  return unique_impl("union1d", concatenate({ravel(a), ravel(b)}, 0), size, fill_value, true).values;
}

Array setdiff1d(const Array& ar1, const Array& ar2, bool assume_unique, std::optional<int64_t> size,
                std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  const char* op = "setdiff1d";
  set_check_args(op, ar1, size, fill_value);
  set_check_args(op, ar2, size, std::nullopt);
  set_check_concrete(op, {ar1, ar2}, size);
  if (fill_value && fill_value->ndim() != 0)
    throw_error<ShapeError>(op, "fill_value must be a scalar, got {}", fill_value->aval().str());
  Array arr1 = ravel(ar1), arr2 = ravel(ar2);
  Array fill = astype(fill_value ? *fill_value : Array::scalar_int(0, DType::int32), arr1.dtype());
  const int64_t n1 = arr1.size();
  if (n1 == 0 || (size && *size == 0)) return lax::full({size ? *size : 0}, fill);
  if (!assume_unique)
    arr1 = unique_impl(op, arr1, size ? std::optional<int64_t>(n1) : std::nullopt, std::nullopt, true).values;
  Array keep = isin(arr1, arr2, assume_unique, /*invert=*/true);
  if (!size) return take(arr1, flatnonzero(keep), std::nullopt, "clip");
  if (!assume_unique) {  // unique's padding (copies of its first value) is not a result
    Array n_unique = set_scalar(n1 + 1) - set_count(arr1 == set_head(arr1, 1));
    keep = keep & (set_iota(n1, set_int_dtype()) < n_unique);
  }
  Array vals = take(arr1, flatnonzero(keep, size, 0), std::nullopt, "clip");
  return where(set_iota(*size, set_int_dtype()) < set_count(keep), vals, fill);
}

Array setxor1d(const Array& ar1, const Array& ar2, bool assume_unique, std::optional<int64_t> size,
               std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  auto [arr1, arr2] = set_promote_flat("setxor1d", ar1, ar2, size, fill_value);
  if (size) return setxor_sized(arr1, arr2, assume_unique, *size, fill_value);
  if (!assume_unique) {
    arr1 = unique_impl("setxor1d", arr1, std::nullopt, std::nullopt, true).values;
    arr2 = unique_impl("setxor1d", arr2, std::nullopt, std::nullopt, true).values;
  }
  Array aux = concatenate({arr1, arr2}, 0);
  const int64_t total = aux.size();
  if (total == 0) return aux;
  aux = sort(aux);
  Array neq = set_tail(aux, 1) != set_head(aux, total - 1);
  Array flag = concatenate({lax::full({1}, Array(true)), neq, lax::full({1}, Array(true))}, 0);
  return take(aux, flatnonzero(set_tail(flag, 1) & set_head(flag, total)), std::nullopt, "clip");
}

Array intersect1d(const Array& ar1, const Array& ar2, bool assume_unique, std::optional<int64_t> size,
                  std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  return intersect_impl("intersect1d", ar1, ar2, assume_unique, size, fill_value, false).values;
}
Intersect1dResult intersect1d_with_indices(const Array& ar1, const Array& ar2, bool assume_unique,
                                           std::optional<int64_t> size, std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  return intersect_impl("intersect1d", ar1, ar2, assume_unique, size, fill_value, true);
}

}  // namespace jitx::numpy
