// JVP and transpose rules of the linear-algebra primitives, as JAX defines them (jax/_src/lax/linalg.py): every
// tangent is a linear function of the input tangent built from matmuls, masks and triangular solves (whose
// transpose rule is below), so reverse mode follows by transposition.
#include "jitx/numpy_extra.h"
#include "ops/linalg_util.h"
#include "primitives/linalg_rules.h"
#include "transforms/ad.h"

namespace jitx::detail {
namespace {
using Arrays = std::vector<Array>;
using A = const Array&;

Array mT(A x) { return numpy::swapaxes(x, -1, -2); }
Array mm(A a, A b) { return numpy::matmul(a, b); }
Array eye_for(A x, int64_t n) { return eye(n, n, 0, x.dtype()); }
Array ts(A a, A b, bool left, bool lower, bool trans, bool unit) {
  return bind1(primitive("triangular_solve"), {a, b},
               Params{{"left_side", left}, {"lower", lower}, {"transpose_a", trans}, {"unit_diagonal", unit}});
}
Array add_tangent_pair(A x, A y) {
  if (!x.valid()) return y;
  if (!y.valid()) return x;
  return x + y;
}
}  // namespace

// JAX's rule for m x n (k = min(m, n)): L (m x m, L's k columns padded with I's) and U (n x n, U's k rows padded
// with I's) square, lu_dot = L tril(G, -1) + triu(G) U with G = L^-1 P a_dot U^-1.
JvpResult lu_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  Arrays outs = bind(primitive("lu"), {x[0]}, ps);
  if (!t[0].valid()) return {outs, {Array(), Array(), Array()}};
  A lu = outs[0];
  int64_t r = lu.ndim(), m = lu.shape()[r - 2], n = lu.shape().back(), k = std::min(m, n);
  Shape sq = lu.shape();
  sq[r - 1] = m;
  // P with P[i, j] = (perm[i] == j): (P a_dot) is a_dot's rows in the factorisation's order.
  std::vector<int64_t> lead;
  for (int64_t d = 0; d + 1 < r; ++d) lead.push_back(d);
  Array perm = lax::broadcast_in_dim(outs[2], sq, lead);
  Array p = numpy::astype(perm == lax::broadcasted_iota(DType::int32, sq, r - 1), lu.dtype());
  Array zero = numpy::astype(Array(0.0), lu.dtype());
  auto pad_to = [&](A v, int64_t axis, int64_t extra) {
    std::vector<std::array<int64_t, 3>> cfg(static_cast<size_t>(r), {0, 0, 0});
    cfg[static_cast<size_t>(axis)][1] = extra;
    return extra ? lax::pad(v, zero, cfg) : v;
  };
  Array l = pad_to(numpy::tril(lax::slice_in_dim(lu, 0, k, 1, r - 1), -1), r - 1, m - k) + eye_for(lu, m);
  Array below_k = lax::ge(lax::broadcasted_iota(DType::int32, {n, n}, 0), Array(static_cast<int32_t>(k)));
  Array u_eye = eye_for(lu, n) * numpy::astype(below_k, lu.dtype());  // I's last n - k diagonal entries
  Array u = pad_to(numpy::triu(lax::slice_in_dim(lu, 0, k, 1, r - 2)), r - 2, n - k) + u_eye;
  Array la = ts(l, mm(p, t[0]), true, true, false, true);  // L^-1 P a_dot
  Array lau = ts(u, la, false, false, false, false);      // L^-1 P a_dot U^-1
  Array lu_dot = mm(l, numpy::tril(lau, -1)) + mm(numpy::triu(lau), u);
  return {outs, {lu_dot, Array(), Array()}};
}
JvpResult cholesky_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  Array l = bind1(primitive("cholesky"), {x[0]}, ps);
  if (!t[0].valid()) return {{l}, {Array()}};
  int64_t n = l.shape().back();
  // L_dot = L phi(L^-1 sigma_dot L^-T), phi: the lower triangle with its diagonal halved.
  Array tmp = ts(l, t[0], false, true, true, false);
  Array inner = ts(l, tmp, true, true, false, false);
  Array phi = numpy::tril(inner) * (1.0 - 0.5 * eye_for(l, n));
  return {{l}, {mm(l, phi)}};
}

JvpResult triangular_solve_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  bool left = ps.get_bool("left_side", false), lower = ps.get_bool("lower", false),
       trans = ps.get_bool("transpose_a", false), unit = ps.get_bool("unit_diagonal", false);
  Array ans = bind1(primitive("triangular_solve"), {x[0], x[1]}, ps);
  Array out;
  if (t[1].valid()) out = ts(x[0], t[1], left, lower, trans, unit);
  if (t[0].valid()) {
    int64_t k = unit ? 1 : 0;
    Array ga = lower ? numpy::tril(t[0], -k) : numpy::triu(t[0], k);
    if (trans) ga = mT(ga);
    // left: x = op(a)^-1 b, dx = -op(a)^-1 op(da) x; right: x = b op(a)^-1, dx = -x op(da) op(a)^-1
    Array rhs = left ? mm(ga, ans) : mm(ans, ga);
    out = add_tangent_pair(out, -ts(x[0], rhs, left, lower, trans, unit));
  }
  return {{ans}, {out}};
}

std::vector<Array> triangular_solve_transpose(std::span<const Array> cts, std::span<const LinearArg> args,
                                              const Params& ps) {
  if (args[0].is_linear())
    throw_error<CompileError>("triangular_solve", "is linear only in b; its transpose in a is not defined");
  if (!cts[0].valid()) return {Array(), Array()};
  Params q = ps;
  q.set("transpose_a", !ps.get_bool("transpose_a", false));
  return {Array(), bind1(primitive("triangular_solve"), {args[0].value, cts[0]}, q)};
}

namespace {
// The derivative of x = q r for m >= n with q's n columns (j-towns.github.io/papers/qr-derivative.pdf): dq, dr.
std::pair<Array, Array> thin_qr_jvp(A q, A r, A dx) {
  Array dx_rinv = ts(r, dx, false, false, false, false);  // dx r^-1
  Array qt_dx_rinv = mm(mT(q), dx_rinv);
  Array low = numpy::tril(qt_dx_rinv, -1);
  Array d_omega = low - mT(low);
  return {mm(q, d_omega - qt_dx_rinv) + dx_rinv, mm(qt_dx_rinv - d_omega, r)};
}

Array cols(A x, int64_t lo, int64_t hi) { return lax::slice_in_dim(x, lo, hi, 1, x.ndim() - 1); }
Array rows(A x, int64_t lo, int64_t hi) { return lax::slice_in_dim(x, lo, hi, 1, x.ndim() - 2); }
}  // namespace

// JAX 0.10.2's rule (jax/_src/lax/linalg.py, qr_jvp_rule) in its three cases: m >= n reduced (or square), m < n
// (x = [x1 x2], r = [r1 r2]: x1 = q r1 is square, r2 = q^T x2), and full_matrices with m > n (arXiv:2409.13374,
// eqs. 32-33: q's last m - n columns from z = q_pn (q_nn - I)^-1, solved through an LU factorisation).
JvpResult qr_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  Arrays outs = bind(primitive("qr"), {x[0]}, ps);
  if (!t[0].valid()) return {outs, {Array(), Array()}};
  int64_t m = x[0].shape()[x[0].ndim() - 2], n = x[0].shape().back();
  A q = outs[0], r = outs[1];
  if (m < n) {
    auto [dq, dr1] = thin_qr_jvp(q, cols(r, 0, m), cols(t[0], 0, m));
    Array dr2 = mm(mT(dq), cols(x[0], m, n)) + mm(mT(q), cols(t[0], m, n));
    return {outs, {dq, lax::concatenate({dr1, dr2}, dr1.ndim() - 1)}};
  }
  bool full = ps.get_bool("full_matrices", false) && m != n;
  Array q_mn = full ? cols(q, 0, n) : q;
  auto [dq_mn, dr_nn] = thin_qr_jvp(q_mn, full ? rows(r, 0, n) : r, t[0]);
  if (!full) return {outs, {dq_mn, dr_nn}};
  Array q_nn = rows(q_mn, 0, n), q_pn = rows(q_mn, n, m), q_mp = cols(q, n, m);
  Array dq_nn = rows(dq_mn, 0, n), dq_pn = rows(dq_mn, n, m);
  // z (q_nn - I) = q_pn: with P (q_nn - I) = L U, z = q_pn U^-1 L^-1 P.
  Arrays f = bind(primitive("lu"), {q_nn - eye_for(q_nn, n)}, Params{});
  Array l = numpy::tril(f[0], -1) + eye_for(f[0], n), u = numpy::triu(f[0]);
  Shape sq = f[0].shape();
  std::vector<int64_t> lead;
  for (int64_t k = 0; k + 1 < f[0].ndim(); ++k) lead.push_back(k);
  Array perm = lax::broadcast_in_dim(f[2], sq, lead);
  Array p = numpy::astype(perm == lax::broadcasted_iota(DType::int32, sq, f[0].ndim() - 1), f[0].dtype());
  Array z = mm(ts(l, ts(u, q_pn, false, false, false, false), false, true, false, true), p);
  Array dq_mp = mm(dq_mn, mT(z)) - mm(q_mn + mm(q_mp, z), mT(dq_pn - mm(z, dq_nn)));
  Array dq = lax::concatenate({dq_mn, dq_mp}, dq_mn.ndim() - 1);
  Shape zs = dr_nn.shape();
  zs[zs.size() - 2] = m - n;
  Array dr = lax::concatenate({dr_nn, zeros(zs, dr_nn.dtype())}, dr_nn.ndim() - 2);
  return {outs, {dq, dr}};
}

JvpResult eigh_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  Arrays outs = bind(primitive("eigh"), {x[0]}, ps);
  if (!t[0].valid()) return {outs, {Array(), Array()}};
  A v = outs[0], w = outs[1];
  int64_t n = w.shape().back();
  Array e = eye_for(v, n);
  // F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it.
  Array f = 1.0 / (e + numpy::expand_dims(w, {w.ndim() - 1}) - numpy::expand_dims(w, {w.ndim()})) - e;
  Array vt_adot_v = mm(mm(mT(v), t[0]), v);
  Array dv = mm(v, f * vt_adot_v);
  Array dw = linalg_util::diagonal(vt_adot_v);
  return {outs, {dv, dw}};
}

JvpResult svd_jvp(std::span<const Array> x, std::span<const Array> t, const Params& ps) {
  bool compute_uv = ps.get_bool("compute_uv", true), full = ps.get_bool("full_matrices", false);
  int64_t m = x[0].shape()[x[0].ndim() - 2], n = x[0].shape().back();
  // (A square matrix's full factors are its reduced ones: JAX 0.10.2 differentiates those too.)
  if (compute_uv && full && m != n)
    throw_error<CompileError>("jnp.linalg.svd", "the derivative of an SVD with full_matrices=true of a non-square "
                              "matrix is not implemented (as in JAX), got {}x{}: use full_matrices=false", m, n);
  Arrays outs = bind(primitive("svd"), {x[0]}, ps);
  if (!t[0].valid()) return {outs, Arrays(outs.size())};
  Arrays uv = compute_uv ? outs
                         : bind(primitive("svd"), {x[0]}, Params{{"full_matrices", false}, {"compute_uv", true}});
  A s = uv[0], u = uv[1], vt = uv[2];
  A da = t[0];
  Array ut = mT(u), v = mT(vt);
  Array ds_mat = mm(mm(ut, da), v);
  Array ds = linalg_util::diagonal(ds_mat);
  if (!compute_uv) return {outs, {ds}};
  int64_t k = s.shape().back();
  Array s_row = numpy::expand_dims(s, {s.ndim() - 1});  // [.., 1, k]
  Array s_col = mT(s_row);                               // [.., k, 1]
  Array e = eye_for(s, k);
  Array s_diffs = (s_row + s_col) * (s_row - s_col);
  Array f = 1.0 / (s_diffs + e) - e;
  Array dss = s_row * ds_mat, sds = s_col * ds_mat;
  Array du = mm(u, f * (dss + mT(dss)));
  Array dv = mm(v, f * (sds + mT(sds)));
  // (m, n: da's shape, the operand's)
  if (m > n) {
    Array dav = mm(da, v);
    du = du + (dav - mm(u, mm(ut, dav))) / s_row;
  }
  if (n > m) {
    Array dahu = mm(mT(da), u);
    dv = dv + (dahu - mm(v, mm(vt, dahu))) / s_row;
  }
  return {outs, {ds, du, mT(dv)}};
}

}  // namespace jitx::detail
