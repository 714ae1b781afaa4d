// jax.scipy.linalg (jitx/scipy_linalg.h) against JAX 0.10.2 (tests/scipy_linalg_refs.h, from
// tools/gen_scipy_linalg_refs.py) on fixed random matrices: Cholesky forms, LU (p, l, u of wide and tall matrices;
// lax.linalg.lu's packed factors, pivots and permutation of both), lu_solve in both transposes, solve_triangular,
// solve, expm (small, moderate and large norms, float32, the triangular path, NaN past max_squarings, and its
// gradient), block_diag, toeplitz and hilbert, eagerly and under jit. Tolerances: float64 1e-12 relative to the
// largest entry (expm of a large-norm matrix: 1e-11), float32 2e-6. Then properties on random matrices: a = p l u,
// op(a) x = b, expm(a) expm(-a) = I and expm of a diagonal matrix. And the wrappers (det, inv, eigh, qr, svd),
// polar, expm_frechet and the special matrices (hankel ... invpascal) against JAX, with their dtypes and errors.
#include "jitx/scipy_linalg.h"

#include <cmath>

#include "jitx/numpy_shape.h"
#include "scipy_linalg_refs.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
namespace sl = jitx::scipy::linalg;

namespace {
const std::vector<double>& ref(const std::string& n) { return scipy_linalg_refs::kValues.at(n); }
Array mat(const std::string& n, Shape s) { return make(ref(n), s, DType::float64); }

/// got against JAX's values: |got - want| <= rtol * max(1, max |want|), NaN for NaN.
void near(const Array& got, const std::string& name, double rtol = 1e-12) {
  INFO(name);
  const auto& want = ref(name);
  REQUIRE(got.size() == int64_t(want.size()));
  auto g = got.astype(DType::float64).to_vector<double>();
  double scale = 1;
  for (double w : want) scale = std::isnan(w) ? scale : std::max(scale, std::fabs(w));
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want[i])) {
      CHECK(std::isnan(g[i]));
      continue;
    }
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    CHECK(std::fabs(g[i] - want[i]) <= rtol * scale);
  }
}
}  // namespace

TEST_CASE("scipy.linalg: JAX's results", "[scipy_linalg]") {
  Array A = mat("A", {4, 4}), S = mat("S", {4, 4}), B = mat("B", {4, 2}), b = mat("b", {4}), R = mat("R", {3, 5});
  near(sl::cholesky(S), "chol_u");
  near(sl::cholesky(S, true), "chol_l");
  near(sl::cho_solve(sl::cho_factor(S), B), "cho_solve");
  near(sl::cho_solve(sl::cho_factor(S, true), b), "cho_solve_l");
  auto w = sl::lu(R);
  near(w.p, "lu_p");
  near(w.l, "lu_l");
  near(w.u, "lu_u");
  auto t = sl::lu(jnp::transpose(R));
  near(t.p, "luT_p");
  near(t.l, "luT_l");
  near(t.u, "luT_u");
  // lax.linalg.lu of non-square matrices: the packed factors and the full row permutation (a tall matrix's rows
  // below its pivots follow LAPACK's swaps; the padding the lowering adds must be zeros).
  for (auto [name, x] : {std::pair{"lax_lu_tall", jnp::transpose(R)}, std::pair{"lax_lu_wide", R}}) {
    auto r = lax::linalg::lu(x);
    near(r.lu, name);
    near(r.pivots, std::string(name) + "_piv", 0);
    near(r.permutation, std::string(name) + "_perm", 0);
  }
  auto f = sl::lu_factor(A);
  near(f.lu, "lu_factor_lu");
  near(f.piv, "lu_factor_piv", 0);
  near(sl::lu_solve(f, B), "lu_solve0");
  near(sl::lu_solve(f, b, 1), "lu_solve1");
  near(sl::solve_triangular(jnp::tril(A), B, 0, true), "st_l");
  near(sl::solve_triangular(jnp::triu(A), b, 1), "st_u_t");
  near(sl::solve_triangular(jnp::tril(A), B, 0, true, true), "st_unit");
  near(sl::solve(S, B, false, "pos"), "solve_pos");
  near(sl::solve(A, b), "solve_gen");
  near(sl::expm(A * 0.01), "expm_small");
  near(sl::expm(A), "expm");
  near(sl::expm(A * 10.0), "expm_big", 1e-11);
  near(sl::expm(A.astype(DType::float32)), "expm32", 2e-6);
  CHECK(sl::expm(A.astype(DType::float32)).dtype() == DType::float32);
  near(sl::expm(jnp::triu(A), true), "expm_ut");
  near(sl::expm(A * 1e6, false, 4), "expm_nan");
  near(sl::block_diag({jitx::array({{1., 2.}, {3., 4.}}), jitx::array({5.}), Array(7.0), jitx::array({{8.}, {9.}})}),
       "block_diag", 0);
  near(sl::toeplitz(jitx::array({1., 2., 3.}), jitx::array({1., 4., 5., 6.})), "toeplitz", 0);
  near(sl::toeplitz(jitx::array({1., 2., 3.})), "toeplitz1", 0);
  near(sl::hilbert(3), "hilbert", 0);
  near(grad([](const Array& a) { return jnp::sum(jnp::sin(sl::expm(a))); })(A * 0.3), "d_expm", 1e-11);
  near(grad([&](const Array& s) {
         Array x = sl::solve(s, B, false, "pos");
         return jnp::sum(x * x);
       })(S),
       "d_cho_solve", 1e-11);
  // Under jit (expm's Pade degree and squaring count are traced).
  near(jit([](Array a) { return sl::expm(a); })(A * 10.0), "expm_big", 1e-11);
  near(jit([](Array a, Array v) { return sl::lu_solve(sl::lu_factor(a), v, 1); })(A, b), "lu_solve1");
  near(jit([](Array s, Array v) { return sl::cho_solve(sl::cho_factor(s), v); })(S, B), "cho_solve");
}

TEST_CASE("scipy.linalg: properties on random matrices", "[scipy_linalg]") {
  const DType f64 = DType::float64;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 5}, {7, 3}, {3, 6}}) {
    Array a = make(uniform(size_t(m * n), -2, 2), {m, n}, f64);
    auto r = sl::lu(a);
    Array diff = jnp::subtract(jnp::matmul(r.p, jnp::matmul(r.l, r.u)), a);
    INFO(m << "x" << n);
    CHECK(jnp::max(jnp::abs(diff)).item<double>() < 1e-13);
  }
  // Batched solves: op(a) x = b for each of a batch of 3.
  Array a = jnp::add(make(uniform(48, -1, 1), {3, 4, 4}, f64), jnp::multiply(Array(4.0), jnp::eye(4, 4, 0, f64)));
  Array bb = make(uniform(24, -1, 1), {3, 4, 2}, f64);
  for (int trans : {0, 1}) {
    Array x = sl::lu_solve(sl::lu_factor(a), bb, trans);
    Array op = trans ? jnp::swapaxes(a, -1, -2) : a;
    CHECK(jnp::max(jnp::abs(jnp::subtract(jnp::matmul(op, x), bb))).item<double>() < 1e-13);
  }
  Array spd = jnp::add(jnp::matmul(a, jnp::swapaxes(a, -1, -2)), jnp::eye(4, 4, 0, f64));
  Array xc = sl::cho_solve(sl::cho_factor(spd, true), bb);
  CHECK(jnp::max(jnp::abs(jnp::subtract(jnp::matmul(spd, xc), bb))).item<double>() < 1e-12);
  // expm(a) expm(-a) = I, batched; expm of a diagonal matrix is exp of its diagonal.
  Array e = sl::expm(a), ei = sl::expm(jnp::negative(a));
  CHECK(jnp::max(jnp::abs(jnp::subtract(jnp::matmul(e, ei), jnp::eye(4, 4, 0, f64)))).item<double>() < 1e-9);
  auto dv = uniform(5, -3, 3);
  auto ed = sl::expm(jnp::diagflat(make(dv, f64))).to_vector<double>();
  for (size_t i = 0; i < 5; ++i)
    for (size_t j = 0; j < 5; ++j) CHECK(std::fabs(ed[i * 5 + j] - (i == j ? std::exp(dv[i]) : 0.0)) < 1e-13 * 30);
  // Empty shapes, as JAX's.
  CHECK(sl::expm(jnp::zeros({0, 0}, f64)).shape() == Shape{0, 0});
  CHECK(sl::expm(jnp::zeros({2, 0, 0}, f64)).shape() == Shape{2, 0, 0});
  CHECK(sl::lu(jnp::zeros({0, 3}, f64)).p.shape() == Shape{0, 0});
  CHECK(sl::toeplitz(jnp::zeros({0}, f64)).shape() == Shape{0, 0});
  CHECK(sl::block_diag({}).shape() == Shape{1, 0});
  CHECK(sl::solve_triangular(jnp::eye(2, 2, 0, f64), jnp::zeros({2, 0}, f64)).shape() == Shape{2, 0});
  // Errors.
  CHECK_THROWS_AS(sl::solve(a, bb, false, "banded"), TypeError);
  CHECK_THROWS_AS(sl::expm(make(uniform(6, 0, 1), {2, 3}, f64)), ShapeError);
  CHECK_THROWS_AS(sl::lu(a), ShapeError);  // 2-d only, as JAX's
  CHECK_THROWS_AS(sl::solve_triangular(jnp::eye(3), make(uniform(4, 0, 1), {4}, f64)), ShapeError);
  CHECK_THROWS_AS(sl::block_diag({make(uniform(8, 0, 1), {2, 2, 2}, f64)}), ShapeError);
}

TEST_CASE("scipy.linalg: det, inv, eigh, qr, svd, polar and expm_frechet as JAX's", "[scipy_linalg]") {
  Array A = mat("A", {4, 4}), S = mat("S", {4, 4}), R = mat("R", {3, 5});
  near(sl::det(A), "det");
  near(sl::inv(A), "inv");
  // Eigen- and singular vectors have free signs: the values against JAX's, the vectors by what they must satisfy.
  auto e = sl::eigh(S);
  near(e.w, "eigh_w");
  CHECK(jnp::allclose(jnp::matmul(S, e.v), e.v * jnp::expand_dims(e.w, {0}), 1e-12, 1e-12).item<bool>());
  CHECK(!sl::eigh(S, true, true).v.valid());
  auto q = sl::qr(jnp::transpose(R), "economic");
  CHECK(q.q.shape() == Shape{5, 3});
  near(jnp::abs(q.r), "qr_r_abs");
  CHECK(jnp::allclose(jnp::matmul(q.q, q.r), jnp::transpose(R), 1e-12, 1e-12).item<bool>());
  CHECK(sl::qr(R).q.shape() == Shape{3, 3});
  CHECK(!sl::qr(R, "r").q.valid());
  auto sv = sl::svd(R, false);
  near(sv.s, "svd_s");
  CHECK(jnp::allclose(jnp::matmul(sv.u * jnp::expand_dims(sv.s, {0}), sv.vh), R, 1e-12, 1e-12).item<bool>());
  CHECK(!sl::svd(R, true, false).u.valid());
  // polar is unique for full-rank matrices: JAX's qdwh factors to rounding.
  auto p = sl::polar(jnp::transpose(R));
  near(p.u, "polar_u", 1e-10);
  near(p.p, "polar_p", 1e-10);
  auto pl = sl::polar(R, "left");
  near(pl.u, "polar_left_u", 1e-10);
  near(pl.p, "polar_left_p", 1e-10);
  auto ps = sl::polar(A, "right", "svd");
  near(ps.u, "polar_svd_u", 1e-12);
  near(ps.p, "polar_svd_p", 1e-12);
  auto f = jit([](const Array& a, const Array& b) {
    auto r = sl::expm_frechet(a, b);
    return std::make_pair(r.expm, r.frechet);
  })(A * 0.5, S * 0.1);
  near(f.first, "frechet_e");
  near(f.second, "frechet_f", 1e-11);
  CHECK_THROWS_WITH(sl::qr(A, "full", true), Catch::Contains("pivoting") && Catch::Contains("not implemented"));
  CHECK_THROWS_WITH(sl::qr(A, "raw"), Catch::Contains("unsupported mode 'raw'"));
  CHECK_THROWS_WITH(sl::polar(R), Catch::Contains("qdwh") && Catch::Contains("m >= n"));
  CHECK_THROWS_WITH(sl::polar(mat("b", {4})), Catch::Contains("at least a 2-D array"));
  CHECK_THROWS_WITH(sl::expm_frechet(A, R), Catch::Contains("E to be a (batched) square matrix"));
}

TEST_CASE("scipy.linalg: special matrices as JAX's (values, dtypes, batching)", "[scipy_linalg]") {
  auto f64 = [](std::vector<double> v, Shape s) { return make(v, s, DType::float64); };
  auto check = [](const Array& got, const std::string& name, Shape shape, DType d, double rtol = 1e-12) {
    INFO(name);
    CHECK(got.shape() == shape);
    CHECK(got.dtype() == d);
    near(got, name, rtol);
  };
  for (bool jitted : {false, true}) {
    INFO((jitted ? "jit" : "eager"));
    auto run = [&](auto fn) { return jitted ? jit(fn)() : fn(); };
    check(run([&] { return sl::hankel(f64({1, 2, 3}, {3}), f64({9, 4, 5, 6, 8, 7, 6, 5}, {2, 4})); }), "hankel",
          {2, 3, 4}, DType::float64);
    check(run([&] { return sl::hankel(make_int({1, 2, 3, 4}, {4}, DType::int64)); }), "hankel1", {4, 4},
          DType::int64);
    check(run([&] { return sl::circulant(f64({1, 2, 3, 4, 5, 6}, {2, 3})); }), "circulant", {2, 3, 3},
          DType::float64);
    check(run([&] { return sl::companion(f64({2, -3, 1, 5, 1, 0, 0, -8}, {2, 4})); }), "companion", {2, 3, 3},
          DType::float64);
    check(run([&] { return sl::convolution_matrix(f64({1, 2, 3, 4}, {4}), 3); }), "conv_full", {6, 3},
          DType::float64);
    check(run([&] { return sl::convolution_matrix(f64({1, 2, 3, 4, 5, 6}, {2, 3}), 5, "same"); }), "conv_same",
          {2, 5, 5}, DType::float64);
    check(run([&] { return sl::convolution_matrix(f64({1, -2, 3, 4, 5}, {5}), 3, "valid"); }), "conv_valid", {3, 3},
          DType::float64);
    check(run([&] { return sl::fiedler(f64({1, 4, 12, -2, 0, 3}, {2, 3})); }), "fiedler", {2, 3, 3}, DType::float64);
    check(run([&] { return sl::fiedler_companion(f64({2, 3}, {2})); }), "fiedler_companion1", {1, 1},
          DType::float64);
    check(run([&] { return sl::fiedler_companion(f64({2, -3, 1, 5, 7, -1, 1, 2, 3, 4, 5, 6}, {2, 6})); }),
          "fiedler_companion", {2, 5, 5}, DType::float64);
    check(run([&] { return sl::leslie(f64({0.1, 2, 1, 0.1, 0.2, 1, 3, 0}, {2, 4}), f64({0.2, 0.8, 0.7}, {3})); }),
          "leslie", {2, 4, 4}, DType::float64);
  }
  check(sl::hadamard(8), "hadamard", {8, 8}, DType::int64);
  check(sl::helmert(5), "helmert", {4, 5}, DType::float64);
  check(sl::helmert(4, true), "helmert_full", {4, 4}, DType::float64);
  check(sl::invhilbert(5), "invhilbert", {5, 5}, DType::float64);
  // JAX's pascal is float32 binomials through exp(lgamma): 0.99999905 where the integer is 1; jitx's lgamma and exp
  // are its own, so to float32 rounding of those (2e-6), not bit for bit.
  check(sl::pascal(5), "pascal", {5, 5}, DType::float32, 2e-6);
  check(sl::pascal(5, "lower"), "pascal_lower", {5, 5}, DType::float32, 2e-6);
  check(sl::invpascal(5), "invpascal", {5, 5}, DType::float64, 1e-12);
  check(sl::invpascal(5, "upper"), "invpascal_upper", {5, 5}, DType::float64, 1e-12);
  CHECK(sl::hadamard(4, DType::float32).dtype() == DType::float32);
  CHECK(sl::hankel(jnp::zeros({0}, DType::float64)).shape() == Shape{0, 0});
  CHECK_THROWS_WITH(sl::hadamard(6), Catch::Contains("power of 2") && Catch::Contains("got 6"));
  CHECK_THROWS_WITH(sl::hankel(Array(1.0)), Catch::Contains("c must be at least 1-dimensional"));
  CHECK_THROWS_WITH(sl::companion(f64({1}, {1})), Catch::Contains("at least 2"));
  CHECK_THROWS_WITH(sl::convolution_matrix(f64({1, 2}, {2}), 0), Catch::Contains("positive integer"));
  CHECK_THROWS_WITH(sl::convolution_matrix(f64({1, 2}, {2}), 2, "half"), Catch::Contains("mode must be one of"));
  CHECK_THROWS_WITH(sl::leslie(f64({1, 2, 3}, {3}), f64({1}, {1})), Catch::Contains("one less than"));
  CHECK_THROWS_WITH(sl::pascal(3, "diagonal"), Catch::Contains("kind must be one of"));
  CHECK_THROWS_WITH(sl::fiedler_companion(jnp::zeros({0}, DType::float64)), Catch::Contains("nonzero length"));
}
