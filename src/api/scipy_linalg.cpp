// jitx::scipy::linalg (jitx/scipy_linalg.h): jax.scipy.linalg over jitx's lax.linalg primitives (cholesky, lu,
// triangular_solve), composed as JAX composes each.
#include "jitx/scipy_linalg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_control.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/vmap.h"
#include "api/scipy_linalg_internal.h"
#include "ops/numpy_stats_util.h"

namespace jitx::scipy::linalg {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
namespace lx = jitx::lax::linalg;
using internal::inexact_of;

namespace {

/// a and b in one inexact dtype.
std::pair<Array, Array> inexact_pair(std::string_view op, const Array& a, const Array& b) {
  Array x = inexact_of(op, a), y = inexact_of(op, b);
  DType d = jnp::stats_util::stats_inexact_of(jnp::result_type({x, y}));
  return {lax::convert_element_type(x, d), lax::convert_element_type(y, d)};
}
void check_square(std::string_view op, const Array& a, const char* what = "a") {
  if (a.ndim() < 2 || a.shape()[size_t(a.ndim() - 1)] != a.shape()[size_t(a.ndim() - 2)])
    throw_error<ShapeError>(op, "{} must be a (batch of) square matrices, got shape {}", what, shape_str(a.shape()));
}
Array swap_last(const Array& a) { return jnp::swapaxes(a, -1, -2); }

/// op(a) x = b on the left for b (n,) or (..., n, k), a (..., n, n) broadcast against b's batch (JAX's vectorize
/// with signature (n,n),(n)->(n) or (n,n),(n,k)->(n,k)).
Array triangular_left(std::string_view op, const Array& a, const Array& b, bool lower, bool transpose_a,
                      bool unit_diagonal) {
  check_square(op, a);
  int64_t n = a.shape().back();
  bool vec = b.ndim() == 1;
  Array bm = vec ? jnp::expand_dims(b, -1) : b;
  if (bm.ndim() < 2 || bm.shape()[size_t(bm.ndim() - 2)] != n)
    throw_error<ShapeError>(op, "b must have {} rows to match a of shape {}, got shape {}", n, shape_str(a.shape()),
                            shape_str(b.shape()));
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(bm.shape().begin(), bm.shape().end() - 2);
  Shape batch = jnp::broadcast_shapes({ab, bb}, op);
  Shape as = batch, bs = batch;
  as.insert(as.end(), {n, n});
  bs.insert(bs.end(), {n, bm.shape().back()});
  Array x = lx::triangular_solve(jnp::broadcast_to(a, as), jnp::broadcast_to(bm, bs), true, lower, transpose_a, false,
                                 unit_diagonal);
  return vec ? jnp::squeeze(x, -1) : x;
}

/// The permutation (..., m) that LAPACK's pivots (..., k) describe: rows i and piv[i] swapped in turn.
Array pivots_to_permutation(const Array& piv, int64_t m) {
  Shape ps = piv.shape();
  int64_t k = ps.back();
  Shape out = ps;
  out.back() = m;
  Array iota = lax::broadcasted_iota(DType::int32, out, int64_t(out.size()) - 1);
  auto body = [&](const Array& i, const Array& perm) {
    Array ii = jnp::broadcast_to(lax::convert_element_type(i, DType::int32), Shape(ps.begin(), ps.end() - 1));
    Array j = jnp::take_along_axis(piv, jnp::expand_dims(ii, -1), -1);  // (..., 1)
    Array pi = jnp::take_along_axis(perm, jnp::expand_dims(ii, -1), -1), pj = jnp::take_along_axis(perm, j, -1);
    Array at_i = lax::eq(iota, jnp::broadcast_to(jnp::expand_dims(ii, -1), out));
    Array at_j = lax::eq(iota, jnp::broadcast_to(j, out));
    return jnp::where(at_i, jnp::broadcast_to(pj, out), jnp::where(at_j, jnp::broadcast_to(pi, out), perm));
  };
  return lax::fori_loop(Array(int64_t{0}), Array(k), body, iota);
}

// --- expm (JAX's _calc_P_Q, _pade*, _squaring) ---
Array mm(const Array& a, const Array& b) { return jnp::matmul(a, b); }
Array lin(std::initializer_list<std::pair<double, Array>> terms) {
  Array r;
  for (const auto& [c, m] : terms) {
    Array t = jnp::multiply(Array::scalar(c, m.dtype()), m);
    r = r.valid() ? jnp::add(r, t) : t;
  }
  return r;
}
/// (U, V) of the Pade approximant of degree 3, 5, 7, 9 or 13: P = U + V, Q = V - U.
std::vector<Array> pade(const Array& A, int degree) {
  int64_t n = A.shape().back();
  Array I = jnp::eye(n, n, 0, A.dtype());
  Array A2 = mm(A, A);
  if (degree == 3) {
    const std::array<double, 4> b{120., 60., 12., 1.};
    return {mm(A, lin({{b[3], A2}, {b[1], I}})), lin({{b[2], A2}, {b[0], I}})};
  }
  Array A4 = mm(A2, A2);
  if (degree == 5) {
    const std::array<double, 6> b{30240., 15120., 3360., 420., 30., 1.};
    return {mm(A, lin({{b[5], A4}, {b[3], A2}, {b[1], I}})), lin({{b[4], A4}, {b[2], A2}, {b[0], I}})};
  }
  Array A6 = mm(A4, A2);
  if (degree == 7) {
    const std::array<double, 8> b{17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
    return {mm(A, lin({{b[7], A6}, {b[5], A4}, {b[3], A2}, {b[1], I}})),
            lin({{b[6], A6}, {b[4], A4}, {b[2], A2}, {b[0], I}})};
  }
  if (degree == 9) {
    const std::array<double, 10> b{17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                                   2162160.,     110880.,     3960.,       90.,        1.};
    Array A8 = mm(A6, A2);
    return {mm(A, lin({{b[9], A8}, {b[7], A6}, {b[5], A4}, {b[3], A2}, {b[1], I}})),
            lin({{b[8], A8}, {b[6], A6}, {b[4], A4}, {b[2], A2}, {b[0], I}})};
  }
  const std::array<double, 14> b{64764752532480000.,
                                 32382376266240000.,
                                 7771770303897600.,
                                 1187353796428800.,
                                 129060195264000.,
                                 10559470521600.,
                                 670442572800.,
                                 33522128640.,
                                 1323241920.,
                                 40840800.,
                                 960960.,
                                 16380.,
                                 182.,
                                 1.};
  Array U = mm(A, jnp::add(mm(A6, lin({{b[13], A6}, {b[11], A4}, {b[9], A2}})),
                           lin({{b[7], A6}, {b[5], A4}, {b[3], A2}, {b[1], I}})));
  Array V = jnp::add(mm(A6, lin({{b[12], A6}, {b[10], A4}, {b[8], A2}})),
                     lin({{b[6], A6}, {b[4], A4}, {b[2], A2}, {b[0], I}}));
  return {U, V};
}

Array expm_2d(const Array& A0, bool upper_triangular, int64_t max_squarings) {
  DType d = A0.dtype();
  bool f64 = d == DType::float64;
  Array norm1 = jnp::max(jnp::sum(jnp::abs(A0), {0}));  // the 1-norm: the largest absolute column sum
  double maxnorm = f64 ? 5.371920351148152 : 3.925724783138660;
  Array s = jnp::maximum(Array::scalar(0, d), jnp::floor(jnp::log2(jnp::divide(norm1, Array::scalar(maxnorm, d)))));
  Array A = jnp::divide(A0, jnp::power(Array::scalar(2, d), s));
  std::vector<double> conds = f64 ? std::vector<double>{1.495585217958292e-002, 2.539398330063230e-001,
                                                        9.504178996162932e-001, 2.097847961257068e+000}
                                  : std::vector<double>{4.258730016922831e-001, 1.880152677804762e+000};
  // jnp.digitize(norm, conds): the number of thresholds at or below the norm.
  Array idx = Array::scalar(0, DType::int32);
  for (double c : conds)
    idx = jnp::add(idx, lax::convert_element_type(jnp::greater_equal(norm1, Array::scalar(c, d)), DType::int32));
  std::vector<std::function<std::vector<Array>(const Array&)>> branches;
  for (int deg : f64 ? std::vector<int>{3, 5, 7, 9, 13} : std::vector<int>{3, 5, 7})
    branches.push_back([deg](const Array& a) { return pade(a, deg); });
  std::vector<Array> uv = lax::switch_(idx, branches, A);
  Array P = jnp::add(uv[0], uv[1]), Q = jnp::subtract(uv[1], uv[0]);
  Array R = upper_triangular ? triangular_left("expm", Q, P, false, false, false) : jnp::linalg::solve(Q, P);
  // s squarings (at most max_squarings; beyond that the result is NaN, as JAX's).
  auto body = [&](const Array& i, const Array& r) {
    return jnp::where(jnp::less(lax::convert_element_type(i, d), s), mm(r, r), r);
  };
  R = lax::fori_loop(Array(int64_t{0}), Array(max_squarings), body, R);
  return jnp::where(jnp::greater(s, Array::scalar(double(max_squarings), d)), jnp::full_like(R, NAN), R);
}

}  // namespace

Array cholesky(const Array& a, bool lower, Loc loc) {
  ApiScope s(loc);
  Array x = inexact_of("cholesky", a);
  check_square("cholesky", x);
  if (lower) return lx::cholesky(x, false);
  return swap_last(lx::cholesky(swap_last(x), false));
}

ChoFactor cho_factor(const Array& a, bool lower, Loc loc) {
  ApiScope s(loc);
  return {cholesky(a, lower), lower};
}

Array cho_solve(const ChoFactor& cl, const Array& b, Loc loc) {
  ApiScope s(loc);
  auto [c, bb] = inexact_pair("cho_solve", cl.c, b);
  // c c^T x = b (lower) or c^T c x = b (upper): two triangular solves.
  Array y = triangular_left("cho_solve", c, bb, cl.lower, !cl.lower, false);
  return triangular_left("cho_solve", c, y, cl.lower, cl.lower, false);
}

PLU lu(const Array& a, Loc loc) {
  ApiScope s(loc);
  Array x = inexact_of("lu", a);
  if (x.ndim() != 2) throw_error<ShapeError>("lu", "a must be a 2-d matrix, got shape {}", shape_str(x.shape()));
  int64_t m = x.shape()[0], n = x.shape()[1], k = std::min(m, n);
  auto r = lx::lu(x);
  DType d = x.dtype();
  // p[i, j] = (permutation[j] == i): a = p l u.
  Array p = lax::convert_element_type(
      jnp::equal(jnp::expand_dims(r.permutation, 0), jnp::expand_dims(jnp::arange(m, DType::int32), 1)), d);
  Array l = jnp::add(lax::slice(jnp::tril(r.lu, -1), {0, 0}, {m, k}), jnp::eye(m, k, 0, d));
  Array u = lax::slice(jnp::triu(r.lu), {0, 0}, {k, n});
  return {p, l, u};
}

LuFactor lu_factor(const Array& a, Loc loc) {
  ApiScope s(loc);
  Array x = inexact_of("lu_factor", a);
  auto r = lx::lu(x);
  return {r.lu, r.pivots};
}

Array lu_solve(const LuFactor& f, const Array& b, int trans, Loc loc) {
  ApiScope s(loc);
  if (trans < 0 || trans > 2) throw_error<TypeError>("lu_solve", "trans must be 0, 1 or 2, got {}", trans);
  auto [lu_m, bb] = inexact_pair("lu_solve", f.lu, b);
  check_square("lu_solve", lu_m, "lu");
  if (!f.piv.valid() || !is_integer(f.piv.dtype()))
    throw_error<TypeError>("lu_solve", "piv must be an integer array (lu_factor's pivots)");
  int64_t n = lu_m.shape().back();
  Array perm = pivots_to_permutation(lax::convert_element_type(f.piv, DType::int32), n);  // (..., n)
  bool vec = bb.ndim() == 1;
  Array bm = vec ? jnp::expand_dims(bb, -1) : bb;
  if (bm.ndim() < 2 || bm.shape()[size_t(bm.ndim() - 2)] != n)
    throw_error<ShapeError>("lu_solve", "b must have {} rows, got shape {}", n, shape_str(b.shape()));
  Shape batch = jnp::broadcast_shapes(
      {Shape(lu_m.shape().begin(), lu_m.shape().end() - 2), Shape(bm.shape().begin(), bm.shape().end() - 2)},
      "lu_solve");
  Shape bs = batch, ps = batch;
  bs.insert(bs.end(), {n, bm.shape().back()});
  ps.push_back(n);
  bm = jnp::broadcast_to(bm, bs);
  Array pidx = jnp::expand_dims(jnp::broadcast_to(perm, ps), -1);  // (..., n, 1)
  Array x;
  if (trans == 0) {  // a = P^T L U with a[perm] = L U: L U x = b[perm]
    Array pb = jnp::take_along_axis(bm, jnp::broadcast_to(pidx, bs), -2);
    Array y = triangular_left("lu_solve", lu_m, pb, true, false, true);
    x = triangular_left("lu_solve", lu_m, y, false, false, false);
  } else {  // a^T x = b: U^T L^T (x[perm]) = b, then x = that scattered back through perm
    Array z = triangular_left("lu_solve", lu_m, bm, false, true, false);
    Array w = triangular_left("lu_solve", lu_m, z, true, true, true);
    Array inv = jnp::expand_dims(jnp::argsort(jnp::broadcast_to(perm, ps), -1), -1);
    x = jnp::take_along_axis(w, jnp::broadcast_to(inv, bs), -2);
  }
  return vec ? jnp::squeeze(x, -1) : x;
}

Array solve_triangular(const Array& a, const Array& b, int trans, bool lower, bool unit_diagonal, Loc loc) {
  ApiScope s(loc);
  if (trans < 0 || trans > 2) throw_error<TypeError>("solve_triangular", "Invalid 'trans' value {}", trans);
  auto [x, y] = inexact_pair("solve_triangular", a, b);
  return triangular_left("solve_triangular", x, y, lower, trans != 0, unit_diagonal);
}

Array solve(const Array& a, const Array& b, bool lower, std::string_view assume_a, Loc loc) {
  ApiScope s(loc);
  if (assume_a != "gen" && assume_a != "sym" && assume_a != "her" && assume_a != "pos")
    throw_error<TypeError>("solve", "Expected assume_a to be one of ['gen', 'sym', 'her', 'pos']; got '{}'", assume_a);
  if (assume_a != "pos") return jnp::linalg::solve(a, b);
  auto [x, y] = inexact_pair("solve", a, b);
  // As JAX's custom_linear_solve: the factorisation is not differentiated; x's tangent is the solve of
  // (db - da x), so the gradient in a is the full -(a^-1 g) x^T, not one triangle's.
  auto f = [lower](const Array& av, const Array& bv) { return cho_solve(cho_factor(av, lower), bv); };
  auto rule = [lower](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
    const auto& [av, bv] = p;
    const auto& [ta, tb] = t;
    ChoFactor c = cho_factor(av, lower);
    Array xv = cho_solve(c, bv);
    bool vec = bv.ndim() == 1;  // as cho_solve: a 1-d b is one vector
    Array rhs = tb.valid() ? tb : jnp::zeros_like(xv);
    if (ta.valid()) {
      Array ax = vec ? jnp::squeeze(jnp::matmul(ta, jnp::expand_dims(xv, -1)), -1) : jnp::matmul(ta, xv);
      rhs = jnp::subtract(rhs, ax);
    }
    return std::make_pair(xv, cho_solve(c, rhs));
  };
  return custom_jvp(f, rule, symbolic_zeros)(x, y);
}

Array expm(const Array& a, bool upper_triangular, int64_t max_squarings, Loc loc) {
  ApiScope s(loc);
  Array x = inexact_of("expm", a);
  if (x.ndim() < 2 || x.shape().back() != x.shape()[size_t(x.ndim() - 2)])
    throw_error<ShapeError>("expm", "Expected A to be a (batched) square matrix, got A.shape={}", shape_str(x.shape()));
  if (x.dtype() != DType::float32 && x.dtype() != DType::float64)
    throw_error<TypeError>("expm", "A.dtype={} is not supported (float32 and float64 are)", dtype_name(x.dtype()));
  if (x.size() == 0) return x;  // 0 x 0 matrices (or an empty batch): nothing to exponentiate
  if (x.ndim() == 2) return expm_2d(x, upper_triangular, max_squarings);
  return vmap([upper_triangular, max_squarings](const Array& m) {
           return expm_2d(m, upper_triangular, max_squarings);
         })(jnp::reshape(x, {-1, x.shape().back(), x.shape().back()}))
      .reshape(x.shape());
}

Array block_diag(const std::vector<Array>& arrs_in, Loc loc) {
  ApiScope s(loc);
  std::vector<Array> arrs = arrs_in.empty() ? std::vector<Array>{jnp::zeros({1, 0})} : arrs_in;
  for (size_t i = 0; i < arrs.size(); ++i) {
    if (!arrs[i].valid())
      throw_error<TypeError>("block_diag", "argument {} is an empty (default-constructed) Array", i);
    if (arrs[i].ndim() > 2)
      throw_error<ShapeError>("block_diag", "arguments must have at most 2 dimensions, got shape {} at argument {}",
                              shape_str(arrs[i].shape()), i);
  }
  DType d = jnp::result_type(arrs);
  int64_t total = 0;
  std::vector<Array> m2;
  for (const Array& a : arrs) {
    m2.push_back(jnp::stats_util::stats_strong(lax::convert_element_type(jnp::atleast_2d(a), d)));
    total += m2.back().shape()[1];
  }
  std::vector<Array> rows;
  int64_t col = 0;
  for (const Array& m : m2) {
    int64_t c = m.shape()[1];
    rows.push_back(lax::pad(m, Array::scalar(0, d), {{0, 0, 0}, {col, total - c - col, 0}}));
    col += c;
  }
  return jnp::concatenate(rows, 0);
}

Array toeplitz(const Array& c_in, const std::optional<Array>& r_in, Loc loc) {
  ApiScope s(loc);
  if (!c_in.valid() || (r_in && !r_in->valid()))
    throw_error<TypeError>("toeplitz", "got an empty (default-constructed) Array");
  Array c = jnp::atleast_1d(c_in), r = jnp::atleast_1d(r_in ? *r_in : c_in);
  DType d = jnp::result_type({c, r});
  c = lax::convert_element_type(c, d);
  r = lax::convert_element_type(r, d);
  int64_t m = c.shape().back(), n = r.shape().back();
  Shape batch = jnp::broadcast_shapes(
      {Shape(c.shape().begin(), c.shape().end() - 1), Shape(r.shape().begin(), r.shape().end() - 1)}, "toeplitz");
  Shape out = batch;
  out.insert(out.end(), {m, n});
  if (m == 0 || n == 0) return jnp::zeros(out, d);
  // T[i, j] = c[i - j] on and below the diagonal, r[j - i] above it.
  Array i = lax::broadcasted_iota(DType::int32, {m, n}, 0), j = lax::broadcasted_iota(DType::int32, {m, n}, 1);
  Array below = jnp::greater_equal(i, j);
  Array ci = jnp::where(below, jnp::subtract(i, j), Array(0)), ri = jnp::where(below, Array(0), jnp::subtract(j, i));
  Array tc = jnp::take(c, jnp::reshape(ci, {-1}), -1), tr = jnp::take(r, jnp::reshape(ri, {-1}), -1);
  Shape flat = Shape(c.shape().begin(), c.shape().end() - 1);
  flat.insert(flat.end(), {m, n});
  Shape flat_r = Shape(r.shape().begin(), r.shape().end() - 1);
  flat_r.insert(flat_r.end(), {m, n});
  return jnp::where(below, jnp::broadcast_to(jnp::reshape(tc, flat), out),
                    jnp::broadcast_to(jnp::reshape(tr, flat_r), out));
}

Array hilbert(int64_t n, Loc loc) {
  ApiScope s(loc);
  if (n < 0) throw_error<ShapeError>("hilbert", "n must be non-negative, got {}", n);
  DType d = detail::default_float_dtype();
  Array i = lax::broadcasted_iota(d, {n, 1}, 0);
  return jnp::divide(Array(1.0), jnp::add(jnp::add(i, jnp::transpose(i)), Array(1.0)));
}

}  // namespace jitx::scipy::linalg
