// jitx::scipy::stats (jitx/scipy_stats.h): truncnorm and wrapcauchy, and the sample statistics mode, rankdata and
// sem, each composed as jax.scipy.stats composes it (same formulas, dtypes and edge values).
#include <cmath>
#include <numbers>

#include "api/scipy_util.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_extra.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/numpy_stats.h"
#include "jitx/scipy_special.h"
#include "jitx/scipy_stats.h"
#include "jitx/vmap.h"

namespace jitx::scipy::stats {
using detail::ApiScope;
using detail::throw_error;
using scipy_util::scipy_finish;
using scipy_util::scipy_promote;
namespace sp = jitx::scipy::special;

namespace {
Array inf_like(const Array& v, double x) { return jnp::full_like(v, x); }

// --- truncnorm's pieces (JAX's _log_diff, _log_gauss_mass) ---
/// log(exp(x) - exp(y)) as logsumexp([x, y], b = [1, -1]).
Array log_diff(const Array& x, const Array& y) {
  return sp::logsumexp(jnp::stack({x, y}), {0}, jnp::stack({jnp::ones_like(x), -jnp::ones_like(y)}));
}
/// log of the standard normal mass on [a, b], by the tail that keeps precision.
Array log_gauss_mass(const Array& a0, const Array& b0) {
  Shape sh = jnp::broadcast_shapes({a0.shape(), b0.shape()});
  Array a = jnp::broadcast_to(a0, sh), b = jnp::broadcast_to(b0, sh);
  Array left = b <= Array(0), right = a > Array(0);
  Array central = jnp::logical_not(jnp::logical_or(left, right));
  Array a_tail = jnp::where(right, -b, a), b_tail = jnp::where(right, -a, b);
  Array tail = log_diff(sp::log_ndtr(b_tail), sp::log_ndtr(a_tail));
  Array mid = jnp::log1p(-sp::ndtr(a) - sp::ndtr(-b));
  return jnp::where(central, mid, tail);
}
}  // namespace

namespace truncnorm {
namespace {
Array logpdf_impl(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale) {
  Array val = lax::sub(norm::logpdf(x, loc, scale), log_gauss_mass(a, b));
  Array xs = lax::div(lax::sub(x, loc), scale);
  val = jnp::where(jnp::logical_or(xs<a, xs> b), inf_like(val, -INFINITY), val);
  return jnp::where(a >= b, inf_like(val, NAN), val);
}
Array logcdf_impl(const Array& x0, const Array& a, const Array& b, const Array& loc, const Array& scale) {
  Array x = lax::div(lax::sub(x0, loc), scale);
  Array lgm = log_gauss_mass(a, b);
  Array lc = log_gauss_mass(a, x) - lgm, ls = log_gauss_mass(x, b) - lgm;
  // jnp.select([x >= b, x <= a, logcdf > -0.1, x > a], [0, -inf, log1p(-exp(logsf)), logcdf]).
  Array out = jnp::where(x > a, lc, jnp::zeros_like(lc));
  out = jnp::where(lc > Array(-0.1), jnp::log1p(-jnp::exp(ls)), out);
  out = jnp::where(x <= a, inf_like(lc, -INFINITY), out);
  out = jnp::where(x >= b, jnp::zeros_like(lc), out);
  return jnp::where(a >= b, inf_like(out, NAN), out);
}
}  // namespace
Array logpdf(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("truncnorm.logpdf", {x, a, b, loc, scale});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1], p.v[2], p.v[3], p.v[4]));
}
Array pdf(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("truncnorm.pdf", {x, a, b, loc, scale});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1], p.v[2], p.v[3], p.v[4])));
}
Array logcdf(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("truncnorm.logcdf", {x, a, b, loc, scale});
  return scipy_finish(p, logcdf_impl(p.v[0], p.v[1], p.v[2], p.v[3], p.v[4]));
}
Array cdf(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("truncnorm.cdf", {x, a, b, loc, scale});
  return scipy_finish(p, lax::exp(logcdf_impl(p.v[0], p.v[1], p.v[2], p.v[3], p.v[4])));
}
Array logsf(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("truncnorm.logsf", {x, a, b, loc, scale});
  return scipy_finish(p, logcdf_impl(-p.v[0], -p.v[2], -p.v[1], -p.v[3], p.v[4]));
}
Array sf(const Array& x, const Array& a, const Array& b, const Array& loc, const Array& scale, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("truncnorm.sf", {x, a, b, loc, scale});
  return scipy_finish(p, lax::exp(logcdf_impl(-p.v[0], -p.v[2], -p.v[1], -p.v[3], p.v[4])));
}
}  // namespace truncnorm

namespace wrapcauchy {
namespace {
Array logpdf_impl(const Array& x, const Array& c) {
  auto k = [&](double v) { return Array::scalar(v, x.dtype()); };
  Array c_ok = jnp::logical_and(lax::gt(c, k(0)), lax::lt(c, k(1)));
  Array x_ok = jnp::logical_and(lax::ge(x, k(0)), lax::le(x, k(2 * std::numbers::pi)));
  Array val =
      jnp::log(k(1) - c * c) - jnp::log(k(2 * std::numbers::pi)) - jnp::log(k(1) + c * c - k(2) * c * jnp::cos(x));
  return jnp::where(c_ok, jnp::where(x_ok, val, inf_like(val, -INFINITY)), inf_like(val, NAN));
}
}  // namespace
Array logpdf(const Array& x, const Array& c, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("wrapcauchy.logpdf", {x, c});
  return scipy_finish(p, logpdf_impl(p.v[0], p.v[1]));
}
Array pdf(const Array& x, const Array& c, Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("wrapcauchy.pdf", {x, c});
  return scipy_finish(p, lax::exp(logpdf_impl(p.v[0], p.v[1])));
}
}  // namespace wrapcauchy

// --- sample statistics ---
namespace {
void check_nan_policy(std::string_view op, std::string_view nan_policy) {
  if (nan_policy != "propagate" && nan_policy != "omit" && nan_policy != "raise")
    throw_error<TypeError>(op, "illegal nan_policy value '{}', expected one of 'propagate', 'omit', 'raise'",
                           nan_policy);
  if (nan_policy != "propagate")
    throw_error<CompileError>(op, "nan_policy='{}' is not implemented (as in JAX: under jit a NaN cannot be {})",
                              nan_policy, nan_policy == "omit" ? "dropped from a static shape" : "raised on");
}
/// The most common value of a vector (the smallest among ties, NaNs counting as one value, as jnp.unique with
/// equal_nan) and its count (int64): runs of the sorted vector.
std::vector<Array> mode_1d(const Array& x) {
  Array s = jnp::sort(x);
  int64_t n = s.dim(0);
  Array prev = lax::slice_in_dim(s, 0, n - 1), next = lax::slice_in_dim(s, 1, n);
  Array differ = jnp::logical_and(next != prev, jnp::logical_not(jnp::logical_and(jnp::isnan(next), jnp::isnan(prev))));
  Array starts = jnp::concatenate({jnp::ones({1}, DType::bool_), differ});
  Array id = jnp::cumsum(lax::convert_element_type(starts, DType::int32)) - int32_t{1};
  Array counts = jnp::at(jnp::zeros({n}, DType::int64), id).add(Array::scalar_int(1, DType::int64));
  Array best = jnp::argmax(counts);
  Array first = jnp::argmax(id == lax::convert_element_type(best, DType::int32));
  return {jnp::take(s, first), jnp::max(counts)};
}
}  // namespace

ModeResult mode(const Array& a, std::optional<int64_t> axis, std::string_view nan_policy, bool keepdims, Loc at) {
  ApiScope s(at);
  if (!a.valid()) throw_error<TypeError>("mode", "got an empty (default-constructed) Array");
  check_nan_policy("mode", nan_policy);
  Array x = jnp::atleast_1d(a);
  Shape out;
  int64_t ax = 0;
  if (axis) {
    ax = detail::canonical_axis(*axis, x.ndim(), "mode");
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (i != ax || keepdims) out.push_back(i == ax ? 1 : x.dim(i));
  } else {
    if (keepdims) out.assign(static_cast<size_t>(x.ndim()), 1);
    x = jnp::ravel(x);
  }
  x = jnp::moveaxis(x, ax, 0);
  int64_t n = x.dim(0), m = x.size() / std::max<int64_t>(n, 1);
  if (n == 0) {
    // JAX's empty case: NaN and a count of 0, both in the default float dtype.
    return {jnp::full(out, NAN, DType::float64), jnp::zeros(out, DType::float64)};
  }
  if (m == 0) return {jnp::zeros(out, x.dtype()), jnp::zeros(out, DType::int64)};
  x = jnp::reshape(x, {n, m});
  auto r = vmap([](const Array& col) { return mode_1d(col); }, 1)(x);
  return {jnp::reshape(r[0], out), jnp::reshape(r[1], out)};
}

namespace {
/// JAX's _rankdata of a vector: ranks from the sort permutation, ties by method; float64 (the default float).
Array rank_1d(const Array& a, std::string_view method) {
  int64_t n = a.dim(0);
  constexpr DType f64 = DType::float64;
  auto [arr, sorter] = lax::sort_key_val(a, lax::iota(DType::int32, n));
  Array inv = jnp::at(jnp::zeros({n}, DType::int32), sorter).set(lax::iota(DType::int32, n));
  if (method == "ordinal") return lax::convert_element_type(inv + int32_t{1}, f64);
  Array obs = jnp::concatenate(
      {jnp::ones({1}, DType::bool_), lax::slice_in_dim(arr, 1, n) != lax::slice_in_dim(arr, 0, n - 1)});
  Array dense = jnp::take(jnp::cumsum(lax::convert_element_type(obs, DType::int32)), inv);
  if (method == "dense") return lax::convert_element_type(dense, f64);
  // count = nonzero(obs, size = n + 1, fill_value = n): the start of each run, then n.
  Array count = lax::convert_element_type(jnp::nonzero(obs, n + 1, n)[0], f64);
  Array hi = jnp::take(count, dense), lo = jnp::take(count, dense - int32_t{1});
  if (method == "max") return hi;
  if (method == "min") return lo + 1.0;
  return 0.5 * (hi + lo + 1.0);
}
}  // namespace

Array rankdata(const Array& a, std::string_view method, std::optional<int64_t> axis, std::string_view nan_policy,
               Loc at) {
  ApiScope s(at);
  if (!a.valid()) throw_error<TypeError>("rankdata", "got an empty (default-constructed) Array");
  check_nan_policy("rankdata", nan_policy);
  if (method != "average" && method != "min" && method != "max" && method != "dense" && method != "ordinal")
    throw_error<TypeError>("rankdata", "unknown method '{}', expected 'average', 'min', 'max', 'dense' or 'ordinal'",
                           method);
  std::string m(method);
  // A vector with a NaN ranks as all NaN (JAX's lax.cond on any(isnan)).
  auto one = [m](const Array& v) {
    if (v.dim(0) == 0) return jnp::zeros({0}, DType::float64);
    Array r = rank_1d(v, m);
    Array has_nan = jnp::any(jnp::isnan(v));
    return jnp::where(has_nan, jnp::full_like(r, NAN), r);
  };
  if (!axis) return one(jnp::ravel(a));
  int64_t ax = detail::canonical_axis(*axis, a.ndim(), "rankdata");
  // apply_along_axis: each 1-D slice along axis, the result in its place.
  Array x = jnp::moveaxis(a, ax, -1);
  Shape sh = x.shape();
  int64_t n = sh.back(), rows = x.size() / std::max<int64_t>(n, 1);
  Array r = n == 0 || rows == 0 ? jnp::zeros({rows, n}, DType::float64) : vmap(one, 0)(jnp::reshape(x, {rows, n}));
  return jnp::moveaxis(jnp::reshape(r, sh), -1, ax);
}

Array sem(const Array& a, std::optional<int64_t> axis, int64_t ddof, std::string_view nan_policy, bool keepdims,
          Loc at) {
  ApiScope s(at);
  auto p = scipy_promote("sem", {a});
  Array b = p.v[0];
  jnp::Axes axes;
  if (axis) axes = {detail::canonical_axis(*axis, b.ndim(), "sem")};
  if (nan_policy == "propagate") {
    int64_t size = axis ? b.dim(axes[0]) : b.size();
    Array root = lax::convert_element_type(jnp::sqrt(Array(size)), b.dtype());
    return scipy_finish(p, jnp::std(b, axes, keepdims, ddof) / root);
  }
  if (nan_policy == "omit") {
    Array count = jnp::sum(jnp::logical_not(jnp::isnan(b)), axes, keepdims);
    Array root = lax::convert_element_type(jnp::sqrt(count), b.dtype());
    return scipy_finish(p, jnp::nanstd(b, axes, keepdims, ddof) / root);
  }
  throw_error<TypeError>("sem", "nan_policy '{}' is not supported, expected 'propagate' or 'omit'", nan_policy);
}

}  // namespace jitx::scipy::stats
