// jitx::scipy::linalg (jitx/scipy_linalg.h): the decompositions jax.scipy.linalg wraps (det, inv, eigh, qr, svd,
// polar, expm_frechet) and its special matrices (hankel ... pascal), composed as JAX composes each so that dtypes
// and values agree.
#include <cmath>

#include "api/scipy_linalg_internal.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_linalg.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/scipy_linalg.h"
#include "jitx/scipy_special.h"
#include "ops/numpy_stats_util.h"

namespace jitx::scipy::linalg {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
namespace lx = jitx::lax::linalg;

namespace {
Array valid(std::string_view op, const Array& x) { return internal::valid_arg(op, x); }
Array inexact(std::string_view op, const Array& x) { return internal::inexact_of(op, x); }
Shape batch_of(const Array& x) { return Shape(x.shape().begin(), x.shape().end() - 1); }
Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}
/// iota(n)[:, None] op iota(m)[None, :] as an (n, m) int32 matrix.
Array rows(int64_t n, int64_t m) { return lax::broadcasted_iota(DType::int32, {n, m}, 0); }
Array cols(int64_t n, int64_t m) { return lax::broadcasted_iota(DType::int32, {n, m}, 1); }
/// x[..., idx] for an index matrix idx: the (..., n, m) gather along x's last axis.
Array take_last(const Array& x, const Array& idx) {
  Shape out = batch_of(x);
  out.insert(out.end(), idx.shape().begin(), idx.shape().end());
  return jnp::reshape(jnp::take(x, jnp::reshape(idx, {-1}), -1), out);
}
/// The n x n binomials exp(lgamma(i + 1) - lgamma(i - j + 1) - lgamma(j + 1)) of JAX's _binom, in a's dtype.
Array binom_matrix(const Array& a) {
  Array i = jnp::expand_dims(a, {1}), j = jnp::expand_dims(a, {0});
  Array x = lax::lgamma(i + 1.0), y = lax::lgamma(i - j + 1.0), z = lax::lgamma(j + 1.0);
  return lax::exp(x - y - z);
}
void check_kind(std::string_view op, std::string_view kind) {
  if (kind != "symmetric" && kind != "lower" && kind != "upper")
    throw_error<TypeError>(op, "kind must be one of 'symmetric', 'lower', 'upper', got '{}'", kind);
}
}  // namespace

// --- decompositions ---
Array det(const Array& a, Loc loc) {
  ApiScope s(loc);
  return jnp::linalg::det(valid("scipy.linalg.det", a));
}
Array inv(const Array& a, Loc loc) {
  ApiScope s(loc);
  return jnp::linalg::inv(valid("scipy.linalg.inv", a));
}

Eigh eigh(const Array& a, bool lower, bool eigvals_only, Loc loc) {
  ApiScope s(loc);
  auto r = lx::eigh(inexact("scipy.linalg.eigh", a), lower);
  return eigvals_only ? Eigh{r.w, Array()} : Eigh{r.w, r.v};
}

QR qr(const Array& a, std::string_view mode, bool pivoting, Loc loc) {
  ApiScope s(loc);
  if (mode != "full" && mode != "economic" && mode != "r")
    throw_error<TypeError>("scipy.linalg.qr", "unsupported mode '{}', expected 'full', 'economic' or 'r'", mode);
  if (pivoting)
    throw_error<CompileError>("scipy.linalg.qr", "pivoting=true (column-pivoted QR) is not implemented in jitx yet");
  auto r = lx::qr(inexact("scipy.linalg.qr", a), mode != "economic");
  return mode == "r" ? QR{Array(), r.r} : QR{r.q, r.r};
}

SVD svd(const Array& a, bool full_matrices, bool compute_uv, Loc loc) {
  ApiScope s(loc);
  auto r = lx::svd(inexact("scipy.linalg.svd", a), full_matrices, compute_uv);
  return {r.u, r.s, r.vh};
}

Polar polar(const Array& a, std::string_view side, std::string_view method, Loc loc) {
  ApiScope s(loc);
  valid("scipy.linalg.polar", a);
  if (a.ndim() < 2)
    throw_error<ShapeError>("scipy.linalg.polar", "the input a must be at least a 2-D array, got {}",
                            shape_str(a.shape()));
  if (side != "right" && side != "left")
    throw_error<TypeError>("scipy.linalg.polar", "side must be 'right' or 'left', got '{}'", side);
  if (method != "qdwh" && method != "svd")
    throw_error<TypeError>("scipy.linalg.polar", "unknown method '{}', expected 'qdwh' or 'svd'", method);
  int64_t m = a.dim(-2), n = a.dim(-1);
  if (method == "qdwh" && !((m >= n && side == "right") || (m < n && side == "left")))
    throw_error<TypeError>("scipy.linalg.polar",
                           "method='qdwh' supports m x n matrices with m >= n for side='right' and m < n for "
                           "side='left' (as JAX), got {} with side='{}'",
                           shape_str(a.shape()), side);
  Array x = inexact("scipy.linalg.polar", a);
  auto r = lx::svd(x, false);
  Array sv = lax::convert_element_type(r.s, r.u.dtype());
  Array u = jnp::matmul(r.u, r.vh);
  Array p = side == "right" ? jnp::matmul(jnp::linalg::matrix_transpose(r.vh) * jnp::expand_dims(sv, {-2}), r.vh)
                            : jnp::matmul(r.u * jnp::expand_dims(sv, {-2}), jnp::linalg::matrix_transpose(r.u));
  return {u, p};
}

ExpmFrechet expm_frechet(const Array& A, const Array& E, Loc loc) {
  ApiScope s(loc);
  valid("scipy.linalg.expm_frechet", A);
  valid("scipy.linalg.expm_frechet", E);
  if (A.ndim() < 2 || A.dim(-2) != A.dim(-1))
    throw_error<ShapeError>("scipy.linalg.expm_frechet", "expected A to be a (batched) square matrix, got A.shape={}",
                            shape_str(A.shape()));
  if (E.ndim() < 2 || E.dim(-2) != E.dim(-1))
    throw_error<ShapeError>("scipy.linalg.expm_frechet", "expected E to be a (batched) square matrix, got E.shape={}",
                            shape_str(E.shape()));
  if (A.shape() != E.shape())
    throw_error<ShapeError>("scipy.linalg.expm_frechet",
                            "expected A and E to be the same shape, got A.shape={} E.shape={}", shape_str(A.shape()),
                            shape_str(E.shape()));
  auto [e, f] = jvp([](const Array& x) { return expm(x, false, 16); }, std::tuple<Array>{A}, std::tuple<Array>{E});
  return {e, f};
}

// --- special matrices ---
Array hankel(const Array& c_in, const std::optional<Array>& r_in, Loc loc) {
  ApiScope s(loc);
  Array c = valid("scipy.linalg.hankel", c_in);
  Array r = r_in ? valid("scipy.linalg.hankel", *r_in) : jnp::zeros_like(c);
  if (c.ndim() == 0) throw_error<ShapeError>("scipy.linalg.hankel", "c must be at least 1-dimensional, got a scalar");
  if (r.ndim() == 0) throw_error<ShapeError>("scipy.linalg.hankel", "r must be at least 1-dimensional, got a scalar");
  DType d = jnp::result_type({c, r});
  int64_t m = c.dim(-1), n = r.dim(-1);
  Shape batch = jnp::broadcast_shapes({batch_of(c), batch_of(r)}, "scipy.linalg.hankel");
  if (m == 0 || n == 0) return jnp::zeros(with(batch, {m, n}), d);
  c = jnp::broadcast_to(lax::convert_element_type(c, d), with(batch, {m}));
  r = jnp::broadcast_to(lax::convert_element_type(r, d), with(batch, {n}));
  Array v = jnp::concatenate({c, lax::slice_in_dim(r, 1, n, 1, r.ndim() - 1)}, -1);
  return take_last(v, rows(m, n) + cols(m, n));
}

Array circulant(const Array& c_in, Loc loc) {
  ApiScope s(loc);
  Array c = jnp::atleast_1d(valid("scipy.linalg.circulant", c_in));
  int64_t n = c.dim(-1);
  if (n == 0) return jnp::zeros(with(batch_of(c), {0, 0}), c.dtype());
  return take_last(c, jnp::remainder(rows(n, n) - cols(n, n), Array(int32_t(n))));
}

Array companion(const Array& a_in, Loc loc) {
  ApiScope s(loc);
  Array a = jnp::atleast_1d(inexact("scipy.linalg.companion", a_in));
  int64_t n = a.dim(-1);
  if (n < 2)
    throw_error<ShapeError>("scipy.linalg.companion",
                            "the length of a along the last axis must be at least 2, got shape {}",
                            shape_str(a.shape()));
  int64_t ax = a.ndim() - 1, m = n - 1;
  Array first = -lax::slice_in_dim(a, 1, n, 1, ax) / lax::slice_in_dim(a, 0, 1, 1, ax);
  Array sub = jnp::broadcast_to(jnp::eye(m, m, -1, a.dtype()), with(batch_of(a), {m, m}));
  return jnp::concatenate({jnp::expand_dims(first, {-2}), lax::slice_in_dim(sub, 1, m, 1, ax)}, -2);
}

Array convolution_matrix(const Array& a, int64_t n, std::string_view mode, Loc loc) {
  ApiScope s(loc);
  valid("scipy.linalg.convolution_matrix", a);
  if (n <= 0) throw_error<ShapeError>("scipy.linalg.convolution_matrix", "n must be a positive integer, got {}", n);
  if (a.ndim() == 0)
    throw_error<ShapeError>("scipy.linalg.convolution_matrix", "a must be at least 1-dimensional, got a scalar");
  int64_t m = a.dim(-1);
  if (m < 1)
    throw_error<ShapeError>("scipy.linalg.convolution_matrix", "len(a) must be at least 1, got shape {}",
                            shape_str(a.shape()));
  if (mode != "full" && mode != "valid" && mode != "same")
    throw_error<TypeError>("scipy.linalg.convolution_matrix", "mode must be one of 'full', 'valid', 'same', got '{}'",
                           mode);
  int64_t ax = a.ndim() - 1, len = m + n - 1, tb = 0, te = 0;
  if (mode == "same") {
    int64_t trim = std::min(n, m) - 1;
    tb = trim / 2;
    te = trim - tb;
  } else if (mode == "valid") {
    tb = te = std::min(n, m) - 1;
  }
  std::vector<std::pair<int64_t, int64_t>> pads(static_cast<size_t>(a.ndim()), {0, 0});
  pads.back() = {0, n - 1};
  Array az = jnp::pad(a, pads), raz = jnp::pad(jnp::flip(a, std::vector<int64_t>{-1}), pads);
  Array col = lax::slice_in_dim(az, tb, len - te, 1, ax);
  Array row = lax::slice_in_dim(raz, len - n - tb, len - tb, 1, ax);
  return toeplitz(col, row);
}

Array fiedler(const Array& a_in, Loc loc) {
  ApiScope s(loc);
  Array a = jnp::atleast_1d(valid("scipy.linalg.fiedler", a_in));
  return jnp::abs(jnp::expand_dims(a, {-1}) - jnp::expand_dims(a, {-2}));
}

Array fiedler_companion(const Array& a_in, Loc loc) {
  ApiScope s(loc);
  Array a = jnp::atleast_1d(inexact("scipy.linalg.fiedler_companion", a_in));
  if (a.dim(-1) == 0)
    throw_error<ShapeError>("scipy.linalg.fiedler_companion",
                            "requires the last axis of a to have nonzero length, got shape {}", shape_str(a.shape()));
  int64_t n = a.dim(-1) - 1, ax = a.ndim() - 1;
  Shape batch = batch_of(a);
  if (n == 0) return jnp::zeros(with(batch, {0, 0}), a.dtype());
  a = a / lax::slice_in_dim(a, 0, 1, 1, ax);
  if (n == 1) return jnp::reshape(-lax::slice_in_dim(a, 1, 2, 1, ax), with(batch, {1, 1}));
  Array i = rows(n, n), j = cols(n, n);
  auto at = [&](const Array& idx) { return -take_last(a, jnp::minimum(idx, Array(int32_t(n)))); };
  Array super = at(i + 2), sub = at(i + 1);
  Array even = jnp::equal(jnp::remainder(i, Array(2)), Array(0)), odd = jnp::logical_not(even);
  Array one = jnp::ones(with(batch, {n, n}), a.dtype()), zero = jnp::zeros(with(batch, {n, n}), a.dtype());
  Array a1 = jnp::broadcast_to(jnp::expand_dims(-lax::slice_in_dim(a, 1, 2, 1, ax), {-1}), with(batch, {n, n}));
  // jnp.select: the first condition that holds picks its choice.
  std::vector<std::pair<Array, Array>> cases = {
      {jnp::logical_and(i == Array(0), j == Array(0)), a1},
      {jnp::logical_and(i == Array(1), j == Array(0)), one},
      {jnp::logical_and(j == i + 1, even), super},
      {jnp::logical_and(j == i + 2, even), one},
      {jnp::logical_and(jnp::logical_and(j == i - 1, even), i >= Array(2)), sub},
      {jnp::logical_and(jnp::logical_and(j == i - 2, odd), i >= Array(3)), one},
  };
  Array out = zero;
  for (auto it = cases.rbegin(); it != cases.rend(); ++it) out = jnp::where(it->first, it->second, out);
  return out;
}

Array hadamard(int64_t n, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (n < 1 || (n & (n - 1)) != 0)
    throw_error<ShapeError>("scipy.linalg.hadamard", "n must be a positive power of 2, got {}", n);
  Array h = jnp::ones({1, 1}, dtype);
  for (int64_t k = 1; k < n; k *= 2)
    h = jnp::concatenate({jnp::concatenate({h, h}, 1), jnp::concatenate({h, -h}, 1)}, 0);
  return h;
}

Array helmert(int64_t n, bool full, Loc loc) {
  ApiScope s(loc);
  if (n < 1) throw_error<ShapeError>("scipy.linalg.helmert", "n must be a positive integer, got {}", n);
  Array i = lax::broadcasted_iota(DType::int64, {n - 1, 1}, 0), j = lax::broadcasted_iota(DType::int64, {1, n}, 1);
  Array k = i + int64_t{1};
  Array kf = lax::convert_element_type(k, DType::float64);
  Array denom = jnp::sqrt(kf * (kf + 1.0));
  Array h = jnp::where(j <= i, Array(1.0) / denom, jnp::where(j == k, -kf / denom, jnp::zeros_like(denom)));
  if (full) {
    Array first = jnp::full({1, n}, 1.0 / std::sqrt(static_cast<double>(n)), h.dtype());
    h = jnp::concatenate({first, h}, 0);
  }
  return h;
}

Array invhilbert(int64_t n, Loc loc) {
  ApiScope s(loc);
  if (n < 0) throw_error<ShapeError>("scipy.linalg.invhilbert", "n must be non-negative, got {}", n);
  Array a = lax::iota(DType::float64, n);
  Array i = jnp::expand_dims(a, {1}), j = jnp::expand_dims(a, {0});
  Array sum = i + j;
  Array nf = Array(static_cast<double>(n));
  Array c1 = special::comb(nf + i, nf - j - 1.0), c2 = special::comb(nf + j, nf - i - 1.0);
  Array c3 = special::comb(sum, i);
  return jnp::power(Array(-1.0), sum) * (sum + 1.0) * c1 * c2 * jnp::power(c3, Array(2));
}

Array leslie(const Array& f_in, const Array& s_in, Loc loc) {
  ApiScope s(loc);
  Array f = jnp::atleast_1d(valid("scipy.linalg.leslie", f_in)),
        sv = jnp::atleast_1d(valid("scipy.linalg.leslie", s_in));
  int64_t n = f.dim(-1);
  if (n < 2)
    throw_error<ShapeError>("scipy.linalg.leslie",
                            "the length of f along the last axis must be at least 2, got shape {}",
                            shape_str(f.shape()));
  if (sv.dim(-1) != n - 1)
    throw_error<ShapeError>("scipy.linalg.leslie",
                            "the length of s along the last axis must be one less than the length of f, got f shape {} "
                            "and s shape {}",
                            shape_str(f.shape()), shape_str(sv.shape()));
  DType d = jnp::result_type({f, sv});  // promote_dtypes
  Shape batch = jnp::broadcast_shapes({batch_of(f), batch_of(sv)}, "scipy.linalg.leslie");
  f = jnp::broadcast_to(lax::convert_element_type(f, d), with(batch, {n}));
  sv = jnp::broadcast_to(lax::convert_element_type(sv, d), with(batch, {n - 1}));
  // Rows 1.. of diag(s, -1): s[i - 1] at column i - 1.
  Array i = rows(n - 1, n) + 1, j = cols(n - 1, n);
  Array below = jnp::where(j == i - 1, take_last(sv, jnp::maximum(i - 1, Array(0))), Array(0));
  return jnp::concatenate({jnp::expand_dims(f, {-2}), lax::convert_element_type(below, d)}, -2);
}

Array pascal(int64_t n, std::string_view kind, Loc loc) {
  ApiScope s(loc);
  check_kind("scipy.linalg.pascal", kind);
  if (n < 0) throw_error<ShapeError>("scipy.linalg.pascal", "n must be non-negative, got {}", n);
  Array l = binom_matrix(lax::iota(DType::float32, n));
  if (kind == "lower") return l;
  if (kind == "upper") return jnp::transpose(l);
  return jnp::dot(l, jnp::transpose(l));
}

Array invpascal(int64_t n, std::string_view kind, Loc loc) {
  ApiScope s(loc);
  check_kind("scipy.linalg.invpascal", kind);
  if (n < 0) throw_error<ShapeError>("scipy.linalg.invpascal", "n must be non-negative, got {}", n);
  Array a = lax::iota(DType::float64, n);
  Array i = jnp::expand_dims(a, {1}), j = jnp::expand_dims(a, {0});
  Array l = jnp::power(Array(-1.0), i - j) * binom_matrix(a);
  if (kind == "lower") return l;
  if (kind == "upper") return jnp::transpose(l);
  return jnp::dot(jnp::transpose(l), l);
}

}  // namespace jitx::scipy::linalg
