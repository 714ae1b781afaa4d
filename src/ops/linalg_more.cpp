// jnp.linalg's functions built on the decompositions (jitx/linalg.h): matrix_rank, cond, multi_dot, tensorinv,
// tensorsolve, vector_norm, matrix_norm, matrix_transpose, outer and vecdot, as jax/_src/numpy/linalg.py composes
// them, so values, dtypes and errors follow JAX's.
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/errors.h"
#include "core/literal.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_extra.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "ops/linalg_util.h"

namespace jitx::numpy::linalg {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;

namespace {
Array last_two_swapped(const Array& x) { return swapaxes(x, -1, -2); }
int64_t prod(const Shape& s, size_t lo, size_t hi) {
  int64_t p = 1;
  for (size_t i = lo; i < hi; ++i) p *= s[i];
  return p;
}
/// JAX's cond ending: NaN (a singular matrix's inf * 0) becomes inf where x itself has no NaN.
Array nan_to_inf(const Array& r, const Array& x) {
  Array x_nan = any(isnan(x), {x.ndim() - 2, x.ndim() - 1});
  return where(logical_and(isnan(r), logical_not(x_nan)), full_like(r, INFINITY), r);
}
void check_cond_input(const Array& x) {
  if (!x.valid() || x.ndim() < 2)
    throw_error<ShapeError>("jnp.linalg.cond", "input array must be at least 2D; got shape {}",
                            x.valid() ? shape_str(x.shape()) : "none");
  if (x.shape().back() == 0 || x.shape()[x.shape().size() - 2] == 0)
    throw_error<ShapeError>("jnp.linalg.cond", "input array must not be empty; got shape {}", shape_str(x.shape()));
}
void check_square_for(const Array& x, const std::string& p) {
  if (x.shape().back() != x.shape()[x.shape().size() - 2])
    throw_error<ShapeError>("jnp.linalg.cond", "for p={}, array must be square; got shape {}", p, shape_str(x.shape()));
}
}  // namespace

Array matrix_rank(const Array& a, std::optional<double> rtol, Loc loc) {
  ApiScope s(loc);
  Array m = detail::linalg_util::inexact("jnp.linalg.matrix_rank", a);
  if (m.ndim() < 2) return astype(any(not_equal(m, Array(0))), DType::int32);
  Array sv = svdvals(m);
  Array tol;
  if (rtol) {
    tol = astype(Array(*rtol), sv.dtype());
  } else {
    double eps = sv.dtype() == DType::float64 ? std::numeric_limits<double>::epsilon()
                                              : static_cast<double>(std::numeric_limits<float>::epsilon());
    int64_t big = std::max(m.shape().back(), m.shape()[m.shape().size() - 2]);
    tol = max(sv, {-1}) * astype(Array(static_cast<double>(big)), sv.dtype()) * astype(Array(eps), sv.dtype());
  }
  return sum(greater(sv, expand_dims(tol, {tol.ndim()})), {-1});
}

Array cond(const Array& a, std::optional<double> p, Loc loc) {
  ApiScope s(loc);
  check_cond_input(a);
  if (!p || *p == 2) {
    Array sv = svdvals(a);
    int64_t k = sv.shape().back();
    return lax::index_in_dim(sv, 0, -1, false) / lax::index_in_dim(sv, k - 1, -1, false);
  }
  Array r;
  if (*p == -2) {
    Array sv = svdvals(a);
    int64_t k = sv.shape().back();
    r = lax::index_in_dim(sv, k - 1, -1, false) / lax::index_in_dim(sv, 0, -1, false);
  } else {
    check_square_for(a, fmt::format("{}", *p));
    std::vector<int64_t> ax{-2, -1};
    r = norm(a, *p, ax) * norm(inv(a), *p, ax);
  }
  return nan_to_inf(r, a);
}

Array cond(const Array& a, std::string_view p, Loc loc) {
  ApiScope s(loc);
  check_cond_input(a);
  check_square_for(a, std::string(p));
  std::vector<int64_t> ax{-2, -1};
  return nan_to_inf(norm(a, p, ax) * norm(inv(a), p, ax), a);
}

Array multi_dot(const std::vector<Array>& arrays, Loc loc) {
  ApiScope s(loc);
  if (arrays.size() < 2) throw_error<ShapeError>("multi_dot", "requires at least two arrays; got {}", arrays.size());
  std::vector<std::string> shapes;
  for (const Array& x : arrays) shapes.push_back(x.valid() ? shape_str(x.shape()) : "none");
  bool ranks = arrays.front().valid() && arrays.back().valid() && arrays.front().ndim() >= 1 &&
               arrays.front().ndim() <= 2 && arrays.back().ndim() >= 1 && arrays.back().ndim() <= 2;
  for (size_t i = 1; i + 1 < arrays.size(); ++i) ranks = ranks && arrays[i].valid() && arrays[i].ndim() == 2;
  if (!ranks)
    throw_error<ShapeError>("multi_dot",
                            "input arrays must all be two-dimensional, except for the first and last "
                            "array which may be 1 or 2 dimensional; got shapes {}",
                            fmt::join(shapes, ", "));
  for (size_t i = 0; i + 1 < arrays.size(); ++i)
    if (arrays[i].shape().back() != arrays[i + 1].shape()[0])
      throw_error<ShapeError>("multi_dot",
                              "last dimension of each array must match first dimension of the "
                              "following array; got shapes {}",
                              fmt::join(shapes, ", "));
  // One einsum with the chain's labels, as JAX (operand i has labels (i, i+1)).
  std::string spec, out;
  auto label = [](size_t i) { return std::string(1, static_cast<char>(i < 26 ? 'a' + i : 'A' + (i - 26))); };
  if (arrays.size() > 50) throw_error<ShapeError>("multi_dot", "at most 50 arrays, got {}", arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string l = label(i) + label(i + 1);
    if (i == 0 && arrays[i].ndim() == 1) l = label(i + 1);
    if (i + 1 == arrays.size() && arrays[i].ndim() == 1) l = label(i);
    spec += (i ? "," : "") + l;
  }
  if (arrays.front().ndim() == 2) out += label(0);
  if (arrays.back().ndim() == 2) out += label(arrays.size());
  return einsum(spec + "->" + out, arrays);
}

Array tensorinv(const Array& a, int64_t ind, Loc loc) {
  ApiScope s(loc);
  if (ind <= 0) throw_error<ShapeError>("tensorinv", "ind must be a positive integer; got ind={}", ind);
  if (!a.valid() || ind > a.ndim())
    throw_error<ShapeError>("tensorinv", "ind={} is more than the rank of a, shape {}", ind,
                            a.valid() ? shape_str(a.shape()) : "none");
  const Shape& sh = a.shape();
  auto k = static_cast<size_t>(ind);
  int64_t rows = prod(sh, 0, k), cols = prod(sh, k, sh.size());
  if (rows != cols)
    throw_error<ShapeError>("tensorinv",
                            "is only possible when the product of the first `ind` dimensions equals "
                            "that of the remaining dimensions; got shape {} with ind={}",
                            shape_str(sh), ind);
  Shape out(sh.begin() + ind, sh.end());
  out.insert(out.end(), sh.begin(), sh.begin() + ind);
  return reshape(inv(reshape(a, {rows, cols})), out);
}

Array tensorsolve(const Array& a, const Array& b, std::optional<std::vector<int64_t>> axes, Loc loc) {
  ApiScope s(loc);
  Array x = a;
  if (axes) {  // jnp.moveaxis(a, axes, (ndim - 1,) * len(axes)): each axis to the end, in order
    std::vector<int64_t> src;
    for (int64_t ax : *axes) src.push_back(detail::canonical_axis(ax, a.ndim(), "tensorsolve"));
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < a.ndim(); ++d)
      if (std::find(src.begin(), src.end(), d) == src.end()) perm.push_back(d);
    perm.insert(perm.end(), src.begin(), src.end());
    x = lax::transpose(a, perm);
  }
  const Shape& xs = x.shape();
  if (b.ndim() > x.ndim() || !std::equal(b.shape().begin(), b.shape().end(), xs.begin()))
    throw_error<ShapeError>("tensorsolve",
                            "after moving axes to end, leading shape of a must match shape of b; got "
                            "a.shape={}, b.shape={}",
                            shape_str(xs), shape_str(b.shape()));
  Shape out(xs.begin() + b.ndim(), xs.end());
  int64_t n = prod(out, 0, out.size());
  if (b.size() != n)
    throw_error<ShapeError>("tensorsolve",
                            "input arrays must have prod(a.shape[:b.ndim]) == "
                            "prod(a.shape[b.ndim:]); got a.shape={}, b.ndim={}",
                            shape_str(xs), b.ndim());
  return reshape(solve(reshape(x, {b.size(), n}), ravel(b)), out);
}

Array vector_norm(const Array& x, std::optional<std::vector<int64_t>> axis, bool keepdims, double ord, Loc loc) {
  ApiScope s(loc);
  Axes ax = axis.value_or(Axes{});
  if (axis && axis->empty()) {  // JAX: an empty tuple reduces nothing
    ax.clear();
  }
  auto red_all = [&](auto f, const Array& v) {
    if (axis && axis->empty()) return v;
    return f(v, ax, keepdims);
  };
  auto sum_ = [&](const Array& v) { return red_all([](const Array& a, Axes b, bool k) { return sum(a, b, k); }, v); };
  if (ord == 2) return sqrt(sum_(x * x));
  if (std::isinf(ord) && ord > 0) {
    if (axis && axis->empty()) return abs(x);
    return max(abs(x), ax, keepdims, ReduceOptions{.where = std::nullopt, .initial = Array(0)});
  }
  if (std::isinf(ord)) return red_all([](const Array& a, Axes b, bool k) { return min(a, b, k); }, abs(x));
  if (ord == 0) {
    DType d = is_floating(x.dtype()) ? x.dtype() : detail::linalg_util::inexact_dtype(x.dtype());
    return astype(sum_(astype(not_equal(x, Array(0)), d)), d);
  }
  if (ord == 1) return sum_(abs(x));
  // JAX: abs(x) ** p summed, to the power 1 / p, both constants in abs(x)'s dtype (1 / p computed from the rounded
  // p, as lax._const(abs_x, 1. / ord_arr) does).
  Array ax_abs = abs(x);
  auto rounded = [&](double v) {  // v in abs(x)'s dtype, on the host (a traced astype has no value)
    auto lit = detail::Literal::make(ax_abs.dtype(), {});
    lit.set_f64(0, v);
    return lit.get_f64(0);
  };
  double p_d = rounded(ord);
  Array p = astype(Array(p_d), ax_abs.dtype()), pinv = astype(Array(rounded(1.0 / p_d)), ax_abs.dtype());
  return power(sum_(power(ax_abs, p)), pinv);
}

Array matrix_norm(const Array& x, bool keepdims, std::string_view ord, Loc loc) {
  ApiScope s(loc);
  return norm(x, ord, std::vector<int64_t>{-2, -1}, keepdims);
}

Array matrix_norm(const Array& x, bool keepdims, double ord, Loc loc) {
  ApiScope s(loc);
  return norm(x, ord, std::vector<int64_t>{-2, -1}, keepdims);
}

Array matrix_transpose(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (!x.valid() || x.ndim() < 2)
    throw_error<ShapeError>("matrix_transpose", "requires at least 2 dimensions; got shape {}",
                            x.valid() ? shape_str(x.shape()) : "none");
  return last_two_swapped(x);
}

Array outer(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  if (!x1.valid() || !x2.valid() || x1.ndim() != 1 || x2.ndim() != 1)
    throw_error<ShapeError>("jnp.linalg.outer",
                            "input arrays must be one-dimensional, but they are x1.ndim={} "
                            "x2.ndim={}",
                            x1.valid() ? x1.ndim() : -1, x2.valid() ? x2.ndim() : -1);
  return expand_dims(x1, {1}) * expand_dims(x2, {0});
}

Array vecdot(const Array& x1, const Array& x2, int64_t axis, Loc loc) {
  ApiScope s(loc);
  int64_t a1 = detail::canonical_axis(axis, x1.ndim(), "vecdot"),
          a2 = detail::canonical_axis(axis, x2.ndim(), "vecdot");
  if (x1.shape()[static_cast<size_t>(a1)] != x2.shape()[static_cast<size_t>(a2)])
    throw_error<ShapeError>("vecdot", "axes must match; got shapes {} and {} with axis={}", shape_str(x1.shape()),
                            shape_str(x2.shape()), axis);
  auto to_end = [](const Array& x, int64_t a) {
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < x.ndim(); ++d)
      if (d != a) perm.push_back(d);
    perm.push_back(a);
    return lax::transpose(x, perm);
  };
  // vdot of each pair of vectors (the batch axes broadcast): a batched matmul of a row by a column.
  Array u = expand_dims(to_end(x1, a1), {-2}), v = expand_dims(to_end(x2, a2), {-1});
  Array r = matmul(u, v);
  return squeeze(r, {-2, -1});
}

Array diagonal(const Array& x, int64_t offset, Loc loc) {
  ApiScope s(loc);
  return numpy::diagonal(x, offset, -2, -1);
}

Array trace(const Array& x, int64_t offset, std::optional<DType> dtype, Loc loc) {
  ApiScope s(loc);
  return numpy::trace(x, offset, -2, -1, dtype);
}

Array cross(const Array& x1, const Array& x2, int64_t axis, Loc loc) {
  ApiScope s(loc);
  int64_t a1 = detail::canonical_axis(axis, x1.ndim(), "cross"), a2 = detail::canonical_axis(axis, x2.ndim(), "cross");
  if (x1.shape()[static_cast<size_t>(a1)] != 3 || x2.shape()[static_cast<size_t>(a2)] != 3)
    throw_error<ShapeError>("cross",
                            "both input arrays must be (arrays of) 3-dimensional vectors, but they have "
                            "x1.shape[axis]={} and x2.shape[axis]={}",
                            x1.shape()[static_cast<size_t>(a1)], x2.shape()[static_cast<size_t>(a2)]);
  return numpy::cross(x1, x2, -1, -1, -1, axis);
}

Array matmul(const Array& x1, const Array& x2, Loc loc) {
  ApiScope s(loc);
  return numpy::matmul(x1, x2);
}

Array tensordot(const Array& x1, const Array& x2, int64_t axes, Loc loc) {
  ApiScope s(loc);
  return numpy::tensordot(x1, x2, axes);
}

}  // namespace jitx::numpy::linalg
