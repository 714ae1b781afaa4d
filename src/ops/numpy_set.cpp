// Unique values (see jitx/numpy_set.h): a stable sort of the flattened input, a mask of each run's first element,
// and the runs' starts gathered (concrete count, or `size` of them), as JAX's setops.
#include "jitx/numpy_set.h"

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "jitx/lax.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::throw_error;

namespace {
UniqueResult unique_impl(const char* op, const Array& x, std::optional<int64_t> size,
                         const std::optional<Array>& fill_value, bool equal_nan) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (size && *size < 0) throw_error<ShapeError>(op, "size must be >= 0, got {}", *size);
  if (x.is_tracer() && !size)
    throw_error<TracerError>(op,
                             "the number of unique values depends on the data: pass a static size= (and "
                             "fill_value=) under jit (JAX's ConcretizationTypeError)");
  if (fill_value && (!fill_value->valid() || fill_value->ndim() != 0))
    throw_error<ShapeError>(op, "fill_value must be a scalar, got {}",
                            fill_value->valid() ? fill_value->aval().str() : "an empty Array");
  const DType it = detail::default_int_dtype();
  Array a = ravel(x);
  const int64_t n = a.size();
  UniqueResult r;
  if (n == 0) {
    if (size && *size > 0 && !fill_value)
      throw_error<TypeError>(op, "for a zero-sized input with a nonzero size, fill_value must be given (as JAX)");
    r.values = size ? lax::full({*size}, astype(*fill_value, a.dtype())) : a;
    r.indices = zeros({0}, it);
    r.inverse = zeros(x.shape(), it);
    r.counts = zeros({0}, it);
    return r;
  }
  Array perm = astype(argsort(a), it);  // stable, NaNs last: each run of equal values keeps the input's order
  Array aux = take(a, perm);
  Array hi = lax::slice(aux, {1}, {n}), lo = lax::slice(aux, {0}, {n - 1});
  Array neq = hi != lo;
  if (is_floating(a.dtype()) && equal_nan) neq = neq & logical_not(isnan(hi) & isnan(lo));
  Array mask = concatenate({lax::full({1}, Array(true)), neq}, 0);  // each run's first element
  Array ind = flatnonzero(mask, size, 0);                           // padded with 0: the smallest value
  r.values = take(aux, ind);
  if (size && fill_value)
    r.values = where(arange(*size) < sum(astype(mask, it)), r.values, astype(*fill_value, a.dtype()));
  r.indices = take(perm, ind);
  Array rank = cumsum(astype(mask, it)) - Array::scalar_int(1, it);
  r.inverse = reshape(at(zeros({n}, it), perm).set(rank), x.shape());
  Array starts = size ? flatnonzero(mask, *size + 1, 0) : append(flatnonzero(mask), Array::scalar_int(n, it));
  if (size) {  // the padding's starts (0) become n: those entries count 0
    Array tail = lax::slice(starts, {1}, {*size + 1});
    starts = concatenate({lax::slice(starts, {0}, {1}), where(tail != 0, tail, Array::scalar_int(n, it))}, 0);
  }
  r.counts = diff(starts);
  return r;
}
}  // namespace

UniqueResult unique_all(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, bool equal_nan,
                        Loc loc) {
  ApiScope s(loc);
  return unique_impl("unique", x, size, fill_value, equal_nan);
}
UniqueResult unique_all(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, Loc loc) {
  ApiScope s(loc);
  return unique_impl("unique_all", x, size, fill_value, false);
}
Array unique(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, bool equal_nan, Loc loc) {
  ApiScope s(loc);
  return unique_impl("unique", x, size, fill_value, equal_nan).values;
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

}  // namespace jitx::numpy
