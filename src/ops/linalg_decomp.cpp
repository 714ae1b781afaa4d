// jnp::linalg's decompositions and what is built on them (as JAX's jnp.linalg builds them): cholesky, eigh, qr,
// svd bind their primitives; solve, inv and slogdet go through lu and triangular solves; lstsq, pinv and the
// spectral norms through the SVD. Gradients and batching come from the primitives' rules.
#include <cmath>
#include <limits>
#include <string>

#include "core/errors.h"
#include "core/primitive.h"
#include "jitx/lax.h"
#include "jitx/lax_linalg.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "ops/linalg_util.h"

namespace jitx::numpy::linalg {
using detail::ApiScope;
using detail::throw_error;
using namespace jitx::detail::linalg_util;

namespace {
/// x = U^-1 L^-1 P b for the LU of a (b (..., n, k), batch axes equal to a's).
Array lu_solve(const lax::linalg::LuResult& f, const Array& b) {
  Array pb = numpy::matmul(permutation_matrix(f.permutation, b.dtype()), b);
  Array y = lax::linalg::triangular_solve(f.lu, pb, true, true, false, false, true);
  return lax::linalg::triangular_solve(f.lu, y, true, false, false, false, false);
}
/// jnp.linalg.qr(mode="raw"): LAPACK geqrf's Householder form, as JAX returns it: h = the factored matrix
/// transposed (..., n, m) (R on and above the diagonal of its transpose, each reflector's vector v below it, v's
/// leading 1 implied) and tau (..., k). Step j reflects column j's rows j.. onto beta e_j with LAPACK dlarfg's
/// convention (beta = -sign(alpha) |x|, tau = (beta - alpha) / beta, v = x_tail / (alpha - beta); tau = 0 when the
/// tail is zero) and applies I - tau v v^T to the columns after j. Written in array ops over whole-matrix masks, so
/// it runs on every platform and batches and differentiates like them.
QRResult qr_raw(const Array& a) {
  int64_t nd = a.ndim(), m = a.shape()[nd - 2], n = a.shape()[nd - 1], k = std::min(m, n);
  Array row = lax::broadcasted_iota(DType::int32, {m}, 0);  // (m,)
  Array cols = lax::broadcasted_iota(DType::int32, {m, n}, 1);                    // (m, n)
  Array h = a;
  std::vector<Array> taus;
  for (int64_t j = 0; j < k; ++j) {
    auto ji = static_cast<int32_t>(j);
    Array x = numpy::squeeze(lax::slice_in_dim(h, j, j + 1, 1, nd - 1), {nd - 1});  // column j, (..., m)
    Array alpha = numpy::squeeze(lax::slice_in_dim(x, j, j + 1, 1, nd - 2), {nd - 2});
    Array in_tail = row > ji, at_j = row == ji;
    Array tail = numpy::where(in_tail, x, numpy::zeros_like(x));
    // |x[j:]| and |x[j+1:]| scaled by their largest magnitude (no overflow or underflow in the squares).
    Array big = numpy::maximum(numpy::abs(alpha), numpy::max(numpy::abs(tail), {nd - 2}));
    Array safe = numpy::where(big == 0.0, numpy::ones_like(big), big);
    Array ts = tail / numpy::expand_dims(safe, {nd - 2});
    Array tail_sq = numpy::sum(ts * ts, {nd - 2});
    Array as = alpha / safe;
    Array norm = big * numpy::sqrt(as * as + tail_sq);
    Array nonzero = tail_sq != 0.0;
    Array beta = numpy::where(alpha >= 0.0, -norm, norm);
    Array tau = numpy::where(nonzero, (beta - alpha) / numpy::where(nonzero, beta, numpy::ones_like(beta)),
                             numpy::zeros_like(beta));
    Array inv = numpy::where(nonzero, 1.0 / numpy::where(nonzero, alpha - beta, numpy::ones_like(beta)),
                             numpy::zeros_like(beta));
    Array v = numpy::where(at_j, numpy::ones_like(x), tail * numpy::expand_dims(inv, {nd - 2}));  // (..., m)
    Array vc = numpy::expand_dims(v, {nd - 1});                                                    // (..., m, 1)
    Array w = numpy::sum(vc * h, {nd - 2}, /*keepdims=*/true);                                     // (..., 1, n)
    Array reflected = h - numpy::expand_dims(tau, {nd - 2, nd - 1}) * vc * w;
    Array diag = numpy::expand_dims(numpy::where(nonzero, beta, alpha), {nd - 2});                 // (..., 1)
    Array col = numpy::where(at_j, diag, numpy::where(in_tail, v, x));
    h = numpy::where(cols > ji, reflected, numpy::where(cols == ji, numpy::expand_dims(col, {nd - 1}), h));
    taus.push_back(tau);
  }
  Shape tshape(a.shape().begin(), a.shape().end() - 2);
  tshape.push_back(0);
  Array tau = k ? numpy::stack(taus, nd - 2) : numpy::zeros(tshape, a.dtype());
  return {numpy::swapaxes(h, nd - 2, nd - 1), tau};
}

/// The qr primitive on a scaled by a power of two per matrix where its largest magnitude is far from 1 (below 2^-40
/// or above 2^40 in float32; 2^-400, 2^400 in float64): Householder norms are square roots of sums of squares,
/// which overflowed (NaN) or underflowed (R left as a's rows) from entries near 1e+-25 in float32 and 1e+-200 in
/// float64. LAPACK's scaled norm has no such limit. A power of two scales exactly: Q is unchanged, R scaled back.
std::vector<Array> scaled_qr(const Array& a, bool full_matrices) {
  const auto& prim = detail::primitive("qr");
  detail::Params ps{{"full_matrices", full_matrices}};
  bool f32 = a.dtype() == DType::float32;
  if (a.size() == 0 || (!f32 && a.dtype() != DType::float64)) return detail::bind(prim, {a}, ps);
  int64_t nd = a.ndim();
  Array amax = numpy::max(numpy::abs(a), {nd - 2, nd - 1}, true);
  DType bits = f32 ? DType::uint32 : DType::uint64;
  Array exponent = Array::scalar_int(f32 ? int64_t{0x7f800000} : int64_t{0x7ff0000000000000}, bits);
  // 2^floor(log2(amax)) (0 for a subnormal amax; its bitcast has no derivative, so neither has the scale)
  Array p = lax::bitcast_convert_type(lax::bitwise_and(lax::bitcast_convert_type(amax, bits), exponent), a.dtype());
  double lo = f32 ? 0x1p-40 : 0x1p-400, hi = f32 ? 0x1p40 : 0x1p400;
  Array use = numpy::logical_and(numpy::logical_and(numpy::isfinite(amax), p > 0.0),
                                 numpy::logical_or(amax > hi, amax < lo));
  Array down = numpy::where(use, 1.0 / numpy::where(use, p, 1.0), 1.0), up = numpy::where(use, p, 1.0);
  auto outs = detail::bind(prim, {a * down}, ps);
  return {outs[0], outs[1] * up};
}
}  // namespace

Array cholesky(const Array& a0, bool upper, Loc loc) {
  ApiScope scope(loc);
  Array a = inexact("jnp.linalg.cholesky", a0);
  check_square("jnp.linalg.cholesky", a);
  Array l = detail::bind1(detail::primitive("cholesky"), {symmetrize(a)});
  return upper ? numpy::swapaxes(l, -1, -2) : l;
}

Array solve(const Array& a0, const Array& b0, Loc loc) {
  ApiScope scope(loc);
  constexpr const char* op = "jnp.linalg.solve";
  Array a = inexact(op, a0);
  check_square(op, a);
  Array b = inexact(op, b0);
  auto dt = common_float(a0, b0);
  a = numpy::astype(a, dt);
  b = numpy::astype(b, dt);
  int64_t n = a.shape().back();
  bool vector = b.ndim() == 1;
  if (vector) b = numpy::expand_dims(b, {1});
  if (b.ndim() < 2 || b.shape()[b.ndim() - 2] != n)
    throw_error<ShapeError>(op, "b {} does not fit a {}: b needs {} rows (a vector b must be 1-d)",
                            detail::shape_str(b0.shape()), detail::shape_str(a0.shape()), n);
  auto [ab, bb] = broadcast_batch(op, a, b);
  Array x = lu_solve(lax::linalg::lu(ab), bb);
  return vector ? numpy::squeeze(x, {x.ndim() - 1}) : x;
}

Array inv(const Array& a0, Loc loc) {
  ApiScope scope(loc);
  Array a = inexact("jnp.linalg.inv", a0);
  check_square("jnp.linalg.inv", a);
  int64_t n = a.shape().back();
  Array e = numpy::broadcast_to(eye(n, n, 0, a.dtype()), a.shape());
  return lu_solve(lax::linalg::lu(a), e);
}

SlogdetResult slogdet(const Array& a0, Loc loc) {
  ApiScope scope(loc);
  Array a = inexact("jnp.linalg.slogdet", a0);
  check_square("jnp.linalg.slogdet", a);
  auto f = lax::linalg::lu(a);
  Array d = diagonal(f.lu);
  int64_t ax = a.ndim() - 2;
  Array sign = pivot_sign(f.pivots, a.dtype()) * numpy::prod(numpy::sign(d), {ax});
  Array logabs = numpy::sum(numpy::log(numpy::abs(d)), {ax});
  return {sign, logabs};
}

QRResult qr(const Array& a0, std::string_view mode, Loc loc) {
  ApiScope scope(loc);
  constexpr const char* op = "jnp.linalg.qr";
  if (mode != "reduced" && mode != "complete" && mode != "r" && mode != "raw")
    throw_error<TypeError>(op, "unsupported QR decomposition mode '{}'; expected 'reduced', 'complete', 'r' or 'raw'",
                           mode);
  Array a = inexact_or_empty_half(op, a0);
  check_matrix(op, a);
  if (mode == "raw") return qr_raw(a);
  auto outs = scaled_qr(a, mode == "complete");
  if (mode == "r") return {Array(), outs[1]};
  return {outs[0], outs[1]};
}

EighResult eigh(const Array& a0, std::string_view UPLO, bool symmetrize_input, Loc loc) {
  ApiScope scope(loc);
  constexpr const char* op = "jnp.linalg.eigh";
  if (UPLO != "L" && UPLO != "U") throw_error<TypeError>(op, "UPLO must be 'L' or 'U', got '{}'", UPLO);
  Array a = inexact(op, a0);
  check_square(op, a);
  if (symmetrize_input) a = symmetrize(a);
  auto outs = detail::bind(detail::primitive("eigh"), {a}, detail::Params{{"lower", UPLO == "L"}});
  return {outs[1], outs[0]};
}

Array eigvalsh(const Array& a, std::string_view UPLO, Loc loc) {
  ApiScope scope(loc);
  if (UPLO != "L" && UPLO != "U")
    throw_error<TypeError>("jnp.linalg.eigvalsh", "UPLO must be 'L' or 'U', got '{}'", UPLO);
  return eigh(a, UPLO, true, loc).eigenvalues;
}

SVDResult svd(const Array& a0, bool full_matrices, bool compute_uv, Loc loc) {
  ApiScope scope(loc);
  Array a = inexact("jnp.linalg.svd", a0);
  check_matrix("jnp.linalg.svd", a);
  auto outs = detail::bind(detail::primitive("svd"), {a},
                           detail::Params{{"full_matrices", full_matrices}, {"compute_uv", compute_uv}});
  if (!compute_uv) return {Array(), outs[0], Array()};
  return {outs[1], outs[0], outs[2]};
}

Array svdvals(const Array& a, Loc loc) {
  ApiScope scope(loc);
  return svd(a, false, false, loc).S;
}

LstsqResult lstsq(const Array& a0, const Array& b0, std::optional<double> rcond, Loc loc) {
  ApiScope scope(loc);
  constexpr const char* op = "jnp.linalg.lstsq";
  Array a = inexact_or_empty_half(op, a0), b = inexact_or_empty_half(op, b0);
  if (a.ndim() != 2) throw_error<ShapeError>(op, "a must be 2-d (m, n), got {}", detail::shape_str(a.shape()));
  if (b.ndim() != 1 && b.ndim() != 2)
    throw_error<ShapeError>(op, "b must be 1-d or 2-d, got {}", detail::shape_str(b.shape()));
  // (empty f16/bf16 operands of one dtype keep it, as JAX's empty results)
  auto dt = a.dtype() == b.dtype() && a.size() == 0 ? a.dtype() : common_float(a0, b0);
  a = numpy::astype(a, dt);
  b = numpy::astype(b, dt);
  int64_t m = a.shape()[0], n = a.shape()[1];
  if (b.shape()[0] != m)
    throw_error<ShapeError>(op, "a {} and b {} need the same number of rows", detail::shape_str(a.shape()),
                            detail::shape_str(b.shape()));
  bool vector = b.ndim() == 1;
  if (vector) b = numpy::expand_dims(b, {1});
  double eps = dt == DType::float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  // As JAX: no rcond is eps * max(m, n), a negative one eps.
  double rc = !rcond ? eps * static_cast<double>(std::max(m, n)) : *rcond < 0 ? eps : *rcond;
  if (m == 0 || n == 0) {  // nothing to solve: x = 0, rank 0, the residuals are b's squared column norms
    Array x = numpy::zeros({n, b.shape()[1]}, dt);
    Array residuals = numpy::sum(b * b, {0});
    if (vector) x = numpy::squeeze(x, {1});
    return {x, residuals, Array::scalar_int(0, DType::int64), numpy::zeros({0}, dt)};
  }
  auto f = svd(a, false, true, loc);
  // Zero singular values never count (a zero matrix has rank 0 and x = 0), as JAX's (s > 0) & (s >= rcond * s[0]).
  Array mask = numpy::logical_and(f.S > 0.0, f.S >= rc * numpy::max(f.S, {0}, true));
  Array safe_s = numpy::where(mask, f.S, 1.0);
  Array s_inv = numpy::where(mask, 1.0 / safe_s, 0.0);
  Array uTb = numpy::matmul(numpy::transpose(f.U), b);
  Array x = numpy::matmul(numpy::transpose(f.Vh), numpy::expand_dims(s_inv, {1}) * uTb);
  Array rank = numpy::sum(numpy::astype(mask, DType::int64));
  // as JAX (numpy_resid=False): the squared norms of b - a x, one per column of b, whatever the rank
  Array r = b - numpy::matmul(a, x);
  Array residuals = numpy::sum(r * r, {0});
  if (vector) x = numpy::squeeze(x, {1});
  return {x, residuals, rank, f.S};
}

Array matrix_power(const Array& a0, int64_t n, Loc loc) {
  ApiScope scope(loc);
  constexpr const char* op = "jnp.linalg.matrix_power";
  if (!a0.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  check_square(op, a0);
  Array a = a0;
  int64_t k = a.shape().back();
  if (n == 0) return numpy::broadcast_to(eye(k, k, 0, a.dtype()), a.shape());
  if (n < 0) a = inv(a, loc);
  // |n| as unsigned: -INT64_MIN overflows (it looped forever).
  uint64_t m = n < 0 ? uint64_t{0} - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  if (m == 3) return numpy::matmul(numpy::matmul(a, a), a);  // JAX's order for n = 3, not a @ (a @ a)
  // binary powering, as JAX: z squared, multiplied into the result at each set bit
  Array z = a, result;
  while (m > 0) {
    if (m & 1) result = result.valid() ? numpy::matmul(result, z) : z;
    m >>= 1;
    if (m > 0) z = numpy::matmul(z, z);
  }
  return result;
}

}  // namespace jitx::numpy::linalg

namespace jitx::lax::linalg {
using detail::ApiScope;
using namespace jitx::detail::linalg_util;

QrResult qr(const Array& x0, bool full_matrices, Loc loc) {
  ApiScope scope(loc);
  // JAX's lax.linalg.qr takes floats only (jnp.linalg.qr promotes integers first).
  if (x0.valid() && !is_floating(x0.dtype()))
    detail::throw_error<TypeError>("jax.lax.linalg.qr", "does not accept dtype {} (a float is needed; "
                                   "jnp::linalg::qr promotes integers)", dtype_name(x0.dtype()));
  Array x = inexact_or_empty_half("jax.lax.linalg.qr", x0);
  check_matrix("jax.lax.linalg.qr", x);
  auto outs = jitx::numpy::linalg::scaled_qr(x, full_matrices);
  return {outs[0], outs[1]};
}

EighResult eigh(const Array& x0, bool lower, bool symmetrize_input, bool /*sort_eigenvalues*/, Loc loc) {
  ApiScope scope(loc);
  Array x = lax_symmetric_input("jax.lax.linalg.eigh", x0, symmetrize_input);
  auto outs = detail::bind(detail::primitive("eigh"), {x}, detail::Params{{"lower", lower}});
  return {outs[0], outs[1]};
}

SvdResult svd(const Array& x, bool full_matrices, bool compute_uv, Loc loc) {
  ApiScope scope(loc);
  // JAX's lax.linalg.svd takes floats only (jnp.linalg.svd promotes integers first).
  if (x.valid() && !is_floating(x.dtype()))
    detail::throw_error<TypeError>("jax.lax.linalg.svd", "does not accept dtype {} (a float is needed; jnp::linalg::svd "
                           "promotes integers)", dtype_name(x.dtype()));
  auto r = numpy::linalg::svd(x, full_matrices, compute_uv, loc);
  return {r.U, r.S, r.Vh};
}

}  // namespace jitx::lax::linalg
