// jnp::linalg: norm composed from jnp reductions and, for ord 2/-2/"nuc", the singular values (its gradient and
// batching come from theirs), as JAX's jnp.linalg.norm composes it.
#include "jitx/linalg.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/errors.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "ops/linalg_util.h"

namespace jitx::numpy::linalg {
using detail::ApiScope;
using detail::throw_error;

namespace {
constexpr const char* kOp = "jnp.linalg.norm";
constexpr double kInf = std::numeric_limits<double>::infinity();

/// ord as JAX takes it: a number, "fro", "nuc", or none.
struct Ord {
  bool given = false;
  double p = 0;
  std::string name;  // "fro" / "nuc" when a string was given
};

std::string ord_str(const Ord& o) {
  if (!o.name.empty()) return "'" + o.name + "'";
  return fmt::format("{}", o.p);
}

/// x promoted to an inexact dtype as promote_dtypes_inexact does (int64/uint64 to float64, other ints and bool to
/// float32; float16/bfloat16 stay: the norms that are sums need no LAPACK).
Array norm_inexact(const Array& x) { return detail::linalg_util::inexact(kOp, x, true); }

/// axis normalised to [0, ndim), checked for range and repeats.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axis, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t a : axis) {
    if (a < -ndim || a >= ndim)
      throw_error<ShapeError>(kOp, "axis {} is out of range for an array of rank {}", a, ndim);
    int64_t n = a < 0 ? a + ndim : a;
    for (int64_t b : out)
      if (b == n) throw_error<ShapeError>(kOp, "axis {} is repeated in axis", a);
    out.push_back(n);
  }
  return out;
}

/// JAX's amax(..., initial=0): an empty reduction is 0, and at an all-zero input the gradient is shared with the
/// initial value (a tie).
Array max0(const Array& x, const Axes& axes, bool keepdims) {
  return numpy::max(x, axes, keepdims, numpy::ReduceOptions{std::nullopt, Array(0)});
}

Array vector_norm(const Array& x, const Ord& ord, int64_t axis, bool keepdims) {
  Axes ax{axis};
  if (!ord.name.empty())
    throw_error<TypeError>(kOp, "invalid ord {} for a vector norm (one axis); expected a number", ord_str(ord));
  double p = ord.given ? ord.p : 2.0;
  if (p == 2.0) return numpy::sqrt(numpy::sum(x * x, ax, keepdims));
  if (p == kInf) return max0(numpy::abs(x), ax, keepdims);
  if (p == -kInf) return numpy::min(numpy::abs(x), ax, keepdims);
  if (p == 0.0) return numpy::sum(numpy::astype(x != 0.0, x.dtype()), ax, keepdims);
  if (p == 1.0) return numpy::sum(numpy::abs(x), ax, keepdims);
  if (std::isnan(p)) throw_error<TypeError>(kOp, "invalid ord nan for a vector norm");
  // sum(|x|^p)^(1/p); p keeps x's dtype (a weak f64 scalar)
  return numpy::power(numpy::sum(numpy::power(numpy::abs(x), Array(p)), ax, keepdims), Array(1.0 / p));
}

Array matrix_norm(const Array& x, const Ord& ord, int64_t row, int64_t col, bool keepdims) {
  if (!ord.given || ord.name == "fro") return numpy::sqrt(numpy::sum(x * x, {row, col}, keepdims));
  if (ord.name == "nuc" || (ord.name.empty() && (ord.p == 2.0 || ord.p == -2.0))) {
    // through the singular values of the (row, col) matrices, moved to the last two axes (JAX's _multi_svd_norm)
    std::vector<int64_t> perm;
    for (int64_t k = 0; k < x.ndim(); ++k)
      if (k != row && k != col) perm.push_back(k);
    perm.push_back(row);
    perm.push_back(col);
    Array s = svdvals(numpy::transpose(x, perm));
    Axes last{s.ndim() - 1};
    Array r = !ord.name.empty() ? numpy::sum(s, last) : ord.p > 0 ? max0(s, last, false) : numpy::min(s, last);
    return keepdims ? numpy::expand_dims(r, {std::min(row, col), std::max(row, col)}) : r;
  }
  if (ord.name.empty() && (ord.p == 1.0 || ord.p == -1.0)) {
    // the largest (smallest) column sum of |x|
    int64_t c = (!keepdims && col > row) ? col - 1 : col;
    Array s = numpy::sum(numpy::abs(x), {row}, keepdims);
    return ord.p > 0 ? max0(s, {c}, keepdims) : numpy::min(s, {c}, keepdims);
  }
  if (ord.name.empty() && (ord.p == kInf || ord.p == -kInf)) {
    // the largest (smallest) row sum of |x|
    int64_t r = (!keepdims && row > col) ? row - 1 : row;
    Array s = numpy::sum(numpy::abs(x), {col}, keepdims);
    return ord.p > 0 ? max0(s, {r}, keepdims) : numpy::min(s, {r}, keepdims);
  }
  throw_error<TypeError>(kOp, "invalid ord {} for a matrix norm (two axes); expected None, 'fro', 'nuc', 1, -1, "
                          "2, -2, inf or -inf", ord_str(ord));
}

Array norm_impl(const Array& x0, const Ord& ord, const std::optional<std::vector<int64_t>>& axis, bool keepdims) {
  Array x = norm_inexact(x0);
  int64_t nd = x.ndim();
  if (!axis) {
    if (!ord.given) {  // the 2-norm of x flattened
      Array r = numpy::sqrt(numpy::sum(x * x));
      return keepdims ? numpy::reshape(r, Shape(static_cast<size_t>(nd), 1)) : r;
    }
    if (nd == 1) return vector_norm(x, ord, 0, keepdims);
    if (nd == 2) return matrix_norm(x, ord, 0, 1, keepdims);
    throw_error<ShapeError>(kOp, "improper number of dimensions to norm: an ord needs a 1-d or 2-d array or an "
                            "axis, got shape {}", detail::shape_str(x.shape()));
  }
  auto ax = normalize_axes(*axis, nd);
  if (ax.size() == 1) return vector_norm(x, ord, ax[0], keepdims);
  if (ax.size() == 2) return matrix_norm(x, ord, ax[0], ax[1], keepdims);
  throw_error<ShapeError>(kOp, "improper number of dimensions to norm: axis has {} entries, expected 1 or 2",
                          ax.size());
}
}  // namespace

Array norm(const Array& x, std::optional<double> ord, std::optional<std::vector<int64_t>> axis, bool keepdims,
           Loc loc) {
  ApiScope scope(loc);
  Ord o;
  if (ord) o = {true, *ord, ""};
  return norm_impl(x, o, axis, keepdims);
}

Array norm(const Array& x, std::string_view ord, std::optional<std::vector<int64_t>> axis, bool keepdims, Loc loc) {
  ApiScope scope(loc);
  if (ord != "fro" && ord != "nuc")
    throw_error<TypeError>(kOp, "invalid ord '{}'; expected 'fro' or 'nuc' (or a number)", ord);
  return norm_impl(x, Ord{true, 0, std::string(ord)}, axis, keepdims);
}

}  // namespace jitx::numpy::linalg
