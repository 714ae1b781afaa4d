// jax.scipy.sparse.linalg's cg and bicgstab (scipy_signal.h): JAX's while loops, step for step, over a matvec
// function or a square matrix. A matrix A is differentiated implicitly, as JAX's custom_linear_solve does (the
// tangent of x solves A dx = db - dA x, here with a direct solve, so that grad can transpose it); a function A is
// differentiated through the loop (forward mode; reverse mode through a while loop is refused, as in JAX).
#include <cmath>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_control.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_shape.h"
#include "jitx/scipy_signal.h"
#include "ops/convert.h"

namespace jitx::scipy::sparse::linalg {
namespace jnp = jitx::numpy;
using jitx::detail::ApiScope;
using jitx::detail::shape_str;
using jitx::detail::throw_error;

namespace {

/// JAX's _vdot_real_part for real arrays: jnp.vdot (flattened) at HIGHEST precision.
Array vdot_real(const Array& x, const Array& y) { return jnp::vdot(x, y); }

struct Solve {
  LinearOperator A, M;  // M empty: the identity
  Array x0;
  double tol, atol;
  int64_t maxiter;
  std::string_view op;
};

/// A(x0), the matvec the solve needs first anyway, checked to keep x0's shape (so a bad A fails naming the solver).
Array first_matvec(const Solve& s) {
  Array ax = s.A(s.x0);
  if (!ax.valid() || ax.shape() != s.x0.shape())
    throw_error<ShapeError>(s.op, "A must map b's shape {} to itself, got {}", shape_str(s.x0.shape()),
                            ax.valid() ? shape_str(ax.shape()) : std::string("an empty Array"));
  return ax;
}

Array precond(const Solve& s, const Array& r) { return s.M ? s.M(r) : r; }

Array cg_solve(const Solve& s, const Array& b) {
  Array bs = vdot_real(b, b);
  Array atol2 = jnp::maximum(jnp::multiply(Array(s.tol * s.tol), bs), Array(s.atol * s.atol));
  Array r0 = jnp::subtract(b, first_matvec(s));
  Array p0 = precond(s, r0);
  DType dtype = p0.dtype();
  Array gamma0 = jnp::astype(vdot_real(r0, p0), dtype);
  using Carry = std::tuple<Array, Array, Array, Array, Array>;  // x, r, gamma, p, k
  bool identity = !s.M;
  auto cond = [&s, atol2, identity](const Carry& c) {
    const auto& [x, r, gamma, p, k] = c;
    Array rs = identity ? gamma : vdot_real(r, r);
    return jnp::logical_and(jnp::greater(rs, atol2), jnp::less(k, Array(s.maxiter)));
  };
  auto body = [&s, dtype](const Carry& c) {
    const auto& [x, r, gamma, p, k] = c;
    Array ap = s.A(p);
    Array alpha = jnp::divide(gamma, jnp::astype(vdot_real(p, ap), dtype));
    Array x_ = jnp::add(x, jnp::multiply(alpha, p));
    Array r_ = jnp::subtract(r, jnp::multiply(alpha, ap));
    Array z_ = precond(s, r_);
    Array gamma_ = jnp::astype(vdot_real(r_, z_), dtype);
    Array beta = jnp::divide(gamma_, gamma);
    Array p_ = jnp::add(z_, jnp::multiply(beta, p));
    return Carry{x_, r_, gamma_, p_, jnp::add(k, Array(int64_t{1}))};
  };
  Carry init{s.x0, r0, gamma0, p0, jnp::astype(Array(0), DType::int64)};
  return std::get<0>(lax::while_loop(cond, body, init));
}

Array bicgstab_solve(const Solve& s, const Array& b) {
  Array bs = vdot_real(b, b);
  Array atol2 = jnp::maximum(jnp::multiply(Array(s.tol * s.tol), bs), Array(s.atol * s.atol));
  Array r0 = jnp::subtract(b, first_matvec(s));
  Array one = jitx::detail::convert_weak(Array(1), b.dtype(), b.weak_type());
  // x, r, rhat, alpha, omega, rho, p, q, k
  using Carry = std::tuple<Array, Array, Array, Array, Array, Array, Array, Array, Array>;
  auto cond = [&s, atol2](const Carry& c) {
    const Array& r = std::get<1>(c);
    const Array& k = std::get<8>(c);
    Array ok = jnp::logical_and(jnp::greater(vdot_real(r, r), atol2), jnp::less(k, Array(s.maxiter)));
    return jnp::logical_and(ok, jnp::greater_equal(k, Array(int64_t{0})));  // k < 0: a breakdown
  };
  auto body = [&s, atol2](const Carry& c) {
    const auto& [x, r, rhat, alpha, omega, rho, p, q, k] = c;
    Array rho_ = jnp::vdot(rhat, r);
    Array beta = jnp::multiply(jnp::divide(rho_, rho), jnp::divide(alpha, omega));
    Array p_ = jnp::add(r, jnp::multiply(beta, jnp::subtract(p, jnp::multiply(omega, q))));
    Array phat = precond(s, p_);
    Array q_ = s.A(phat);
    Array alpha_ = jnp::divide(rho_, jnp::vdot(rhat, q_));
    Array sv = jnp::subtract(r, jnp::multiply(alpha_, q_));
    Array exit_early = jnp::less(vdot_real(sv, sv), atol2);
    Array shat = precond(s, sv);
    Array t = s.A(shat);
    Array omega_ = jnp::divide(jnp::vdot(t, sv), jnp::vdot(t, t));
    Array x_ = jnp::where(exit_early, jnp::add(x, jnp::multiply(alpha_, phat)),
                          jnp::add(x, jnp::add(jnp::multiply(alpha_, phat), jnp::multiply(omega_, shat))));
    Array r_ = jnp::where(exit_early, sv, jnp::subtract(sv, jnp::multiply(omega_, t)));
    Array zero = jitx::detail::convert_weak(Array(0), omega_.dtype(), false);
    Array k_ = jnp::where(jnp::logical_or(jnp::equal(omega_, zero), jnp::equal(alpha_, zero)), Array(int64_t{-11}),
                          jnp::add(k, Array(int64_t{1})));
    k_ = jnp::where(jnp::equal(rho_, zero), Array(int64_t{-10}), k_);
    return Carry{x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_};
  };
  Carry init{s.x0, r0, r0, one, one, one, r0, r0, jnp::astype(Array(0), DType::int64)};
  return std::get<0>(lax::while_loop(cond, body, init));
}

using SolveFn = Array (*)(const Solve&, const Array&);

Solve make_solve(const LinearOperator& A, const Array& b, const std::optional<Array>& x0, double tol, double atol,
                 std::optional<int64_t> maxiter, const LinearOperator& M, std::string_view op) {
  if (!A) throw_error<TypeError>(op, "the linear operator A is empty");
  if (!b.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array for b");
  if (!is_floating(b.dtype()))
    throw_error<TypeError>(op, "b must be a float array (the solution has b's dtype), got {}", dtype_name(b.dtype()));
  Solve s{A, M, x0 ? *x0 : jnp::zeros_like(b), tol, atol, maxiter ? *maxiter : 10 * b.size(), op};
  if (!s.x0.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array for x0");
  if (s.x0.shape() != b.shape())
    throw_error<ShapeError>(op, "arrays in x0 and b must have matching shapes: {} vs {}", shape_str(s.x0.shape()),
                            shape_str(b.shape()));
  return s;
}

LinearOperator matvec_of(const Array& A, std::string_view op) {
  if (!A.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array for A");
  if (A.ndim() != 2 || A.dim(0) != A.dim(1))
    throw_error<ShapeError>(op, "linear operator must be a square matrix, but has shape: {}", shape_str(A.shape()));
  return [A](const Array& x) { return jnp::dot(A, x); };
}

std::pair<Array, Array> solve_matrix(SolveFn solve, const Array& A, const Array& b, const std::optional<Array>& x0,
                                     double tol, double atol, std::optional<int64_t> maxiter, const LinearOperator& M,
                                     std::string_view op) {
  (void)make_solve(matvec_of(A, op), b, x0, tol, atol, maxiter, M, op);  // the checks, once, outside the trace
  auto run = [=](const Array& a, const Array& bv) {
    Solve s = make_solve(matvec_of(a, op), bv, x0, tol, atol, maxiter, M, op);
    return solve(s, bv);
  };
  auto rule = [=](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
    const auto& [a, bv] = p;
    const auto& [ta, tb] = t;
    Array x = run(a, bv);
    Array rhs = tb.valid() ? tb : jnp::zeros_like(x);
    if (ta.valid()) rhs = jnp::subtract(rhs, jnp::dot(ta, x));
    bool vec = rhs.ndim() == 1;
    Array dx =
        vec ? jnp::linalg::solve(a, rhs) : jnp::reshape(jnp::linalg::solve(a, jnp::reshape(rhs, {-1, 1})), rhs.shape());
    return std::make_pair(x, dx);
  };
  return {custom_jvp(run, rule, symbolic_zeros)(A, b), Array()};
}

}  // namespace

std::pair<Array, Array> cg(const LinearOperator& A, const Array& b, const std::optional<Array>& x0, double tol,
                           double atol, std::optional<int64_t> maxiter, const LinearOperator& M, Loc loc) {
  ApiScope s(loc);
  return {cg_solve(make_solve(A, b, x0, tol, atol, maxiter, M, "cg"), b), Array()};
}
std::pair<Array, Array> cg(const Array& A, const Array& b, const std::optional<Array>& x0, double tol, double atol,
                           std::optional<int64_t> maxiter, const LinearOperator& M, Loc loc) {
  ApiScope s(loc);
  return solve_matrix(cg_solve, A, b, x0, tol, atol, maxiter, M, "cg");
}
std::pair<Array, Array> bicgstab(const LinearOperator& A, const Array& b, const std::optional<Array>& x0, double tol,
                                 double atol, std::optional<int64_t> maxiter, const LinearOperator& M, Loc loc) {
  ApiScope s(loc);
  return {bicgstab_solve(make_solve(A, b, x0, tol, atol, maxiter, M, "bicgstab"), b), Array()};
}
std::pair<Array, Array> bicgstab(const Array& A, const Array& b, const std::optional<Array>& x0, double tol,
                                 double atol, std::optional<int64_t> maxiter, const LinearOperator& M, Loc loc) {
  ApiScope s(loc);
  return solve_matrix(bicgstab_solve, A, b, x0, tol, atol, maxiter, M, "bicgstab");
}

}  // namespace jitx::scipy::sparse::linalg
