// jitx::scipy's smaller modules, as JAX's jax.scipy has them: signal (N-d convolve/correlate, their 2-D forms,
// detrend), integrate (trapezoid), ndimage (map_coordinates), cluster::vq (vq) and sparse::linalg (cg, bicgstab:
// matrix-free Krylov solvers over a matvec function or a matrix). Each is composed as JAX composes it
// (src/api/scipy_signal.cpp, scipy_sparse.cpp), so jit, vmap and grad apply unchanged. The FFT methods and complex
// inputs are not built (jitx has no complex dtypes): method "fft" throws.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "jitx/array.h"

namespace jitx::scipy::signal {
/// N-d convolution of in1 and in2 (one rank; one must be at least as large as the other in every dimension, as
/// JAX's): mode "full", "same" (in1's size, centred) or "valid"; method "auto" and "direct" (lax's convolution).
/// Integers promote to floats (JAX's promote_dtypes_inexact).
Array convolve(const Array& in1, const Array& in2, std::string_view mode = "full", std::string_view method = "auto",
               Loc loc = Loc::current());
/// N-d cross-correlation: convolve(in1, flip(in2)).
Array correlate(const Array& in1, const Array& in2, std::string_view mode = "full", std::string_view method = "auto",
                Loc loc = Loc::current());
/// 2-D convolve/correlate; boundary "fill" with fillvalue 0 only, as JAX's.
Array convolve2d(const Array& in1, const Array& in2, std::string_view mode = "full", std::string_view boundary = "fill",
                 double fillvalue = 0, Loc loc = Loc::current());
Array correlate2d(const Array& in1, const Array& in2, std::string_view mode = "full",
                  std::string_view boundary = "fill", double fillvalue = 0, Loc loc = Loc::current());
/// data minus its least-squares line along axis ("linear", piecewise between the breakpoints bp) or its mean
/// ("constant").
Array detrend(const Array& data, int64_t axis = -1, std::string_view type = "linear",
              const std::vector<int64_t>& bp = {}, Loc loc = Loc::current());
}  // namespace jitx::scipy::signal

namespace jitx::scipy::integrate {
/// jax.scipy.integrate.trapezoid: the trapezoidal rule along axis (jnp::trapezoid).
Array trapezoid(const Array& y, const std::optional<Array>& x = std::nullopt, const Array& dx = 1.0, int64_t axis = -1,
                Loc loc = Loc::current());
}  // namespace jitx::scipy::integrate

namespace jitx::scipy::ndimage {
/// input interpolated at the points whose i-th coordinates are coordinates[i] (one array per dimension of input,
/// all of one shape: the result's): order 0 (nearest; halves round away from zero) or 1 (linear); mode "constant"
/// (cval outside), "nearest", "wrap", "mirror" or "reflect" (JAX's meanings: "wrap" and "constant" are SciPy's
/// "grid-wrap" and "grid-constant"). Integer inputs round the result to nearest.
Array map_coordinates(const Array& input, const std::vector<Array>& coordinates, int order,
                      std::string_view mode = "constant", double cval = 0.0, Loc loc = Loc::current());
}  // namespace jitx::scipy::ndimage

namespace jitx::scipy::cluster::vq {
/// (code, dist): the index (int32) of the nearest code_book row (K x N) for each observation (M x N; 1-D arrays are
/// N = 1), and its Euclidean distance.
std::pair<Array, Array> vq(const Array& obs, const Array& code_book, bool check_finite = true,
                           Loc loc = Loc::current());
}  // namespace jitx::scipy::cluster::vq

namespace jitx::scipy::sparse::linalg {
/// A linear operator: x -> A x (or M x for a preconditioner) on arrays of b's shape.
using LinearOperator = std::function<Array(const Array&)>;
/// (x, info) of A x = b by conjugate gradients (A symmetric positive definite), as jax.scipy.sparse.linalg.cg: from
/// x0 (default zeros) until ||r|| <= max(tol ||b||, atol) or maxiter steps (default 10 n); M a preconditioner
/// (default identity). info is always None in JAX, here an empty Array. Differentiable as JAX's (implicitly,
/// through custom_linear_solve: the gradient solves the transposed system, A's own for cg).
std::pair<Array, Array> cg(const LinearOperator& A, const Array& b, const std::optional<Array>& x0 = std::nullopt,
                           double tol = 1e-5, double atol = 0.0, std::optional<int64_t> maxiter = std::nullopt,
                           const LinearOperator& M = nullptr, Loc loc = Loc::current());
std::pair<Array, Array> cg(const Array& A, const Array& b, const std::optional<Array>& x0 = std::nullopt,
                           double tol = 1e-5, double atol = 0.0, std::optional<int64_t> maxiter = std::nullopt,
                           const LinearOperator& M = nullptr, Loc loc = Loc::current());
/// Stabilised bi-conjugate gradients (A need not be symmetric), as jax.scipy.sparse.linalg.bicgstab.
std::pair<Array, Array> bicgstab(const LinearOperator& A, const Array& b, const std::optional<Array>& x0 = std::nullopt,
                                 double tol = 1e-5, double atol = 0.0, std::optional<int64_t> maxiter = std::nullopt,
                                 const LinearOperator& M = nullptr, Loc loc = Loc::current());
std::pair<Array, Array> bicgstab(const Array& A, const Array& b, const std::optional<Array>& x0 = std::nullopt,
                                 double tol = 1e-5, double atol = 0.0, std::optional<int64_t> maxiter = std::nullopt,
                                 const LinearOperator& M = nullptr, Loc loc = Loc::current());
}  // namespace jitx::scipy::sparse::linalg
