// jnp::linalg's decompositions and solvers: values against JAX's (sign-invariant outputs: det, slogdet, inv, solve,
// cholesky, eigenvalues, singular values, triangular_solve, lstsq, pinv, matrix_power), invariants for the vectors
// whose signs differ between LAPACK and Eigen (reconstruction, orthogonality, ordering), batches, f32 and f64,
// eager and jit; singular inputs as JAX; the errors.
//
// The JAX numbers come from (JAX 0.10.2, /work/venv-jax):
//   JAX_ENABLE_X64=1 python -c "import jax, jax.numpy as jnp
//   A = jnp.array([[4., 1, 2], [1, 5, 3], [2, 3, 6]]); M = jnp.array([[2., -1, 0.5], [1, 3, 2], [-0.5, 1, 4]])
//   B = jnp.array([[1., 2], [3, -1], [0.5, 4]])
//   R = jnp.array([[1., 2, 3], [4, 5, 6.5], [7, 8, 10], [-1, 0.5, 2]])
//   print(jnp.linalg.det(M), jnp.linalg.slogdet(M), jnp.linalg.inv(M), jnp.linalg.solve(M, B), ...)"
// (one print per reference below, named after it; the script is in the h-linalg2 notes).
#include <cmath>
#include <limits>

#include "jitx/linalg.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kA{4, 1, 2, 1, 5, 3, 2, 3, 6};          // symmetric positive definite
const std::vector<double> kM{2, -1, 0.5, 1, 3, 2, -0.5, 1, 4};    // general, det 26.25
const std::vector<double> kB{1, 2, 3, -1, 0.5, 4};                // 3 x 2
const std::vector<double> kR{1, 2, 3, 4, 5, 6.5, 7, 8, 10, -1, 0.5, 2};  // 4 x 3

/// Tolerance of a decomposition's result against a reference: the algorithms differ from LAPACK's and compound
/// rounding over O(n) steps scaled by the condition number (< 300 here).
Tol lt(DType d) { return d == float64 ? Tol{1e-10, 1e-12} : Tol{2e-4, 2e-5}; }

void close(const Array& got, const std::vector<double>& ref, DType d, const std::string& what, double scale = 1) {
  INFO(what << " dtype=" << dtype_name(d));
  REQUIRE(got.dtype() == d);
  REQUIRE(got.size() == static_cast<int64_t>(ref.size()));
  auto g = got.to_vector<double>();
  Tol t = lt(d);
  double mx = 0;
  for (double r : ref) mx = std::isfinite(r) ? std::max(mx, std::fabs(r)) : mx;
  for (size_t i = 0; i < ref.size(); ++i) {
    double bound = scale * (t.atol * (1 + mx) + t.rtol * std::fabs(ref[i]));
    bool ok = std::isnan(ref[i])   ? std::isnan(g[i])
              : std::isinf(ref[i]) ? g[i] == ref[i]
                                   : std::fabs(g[i] - ref[i]) <= bound;
    if (!ok) FAIL_CHECK("element " << i << ": got " << g[i] << ", want " << ref[i]);
  }
}

/// Eager and jit of f on xs, each checked against ref.
void both(const Fn& f, const std::vector<Array>& xs, const std::vector<double>& ref, DType d, const std::string& what,
          double scale = 1) {
  auto r = eager_and_jit(f, xs);
  close(r[0], ref, d, what + " (eager)", scale);
  close(r[1], ref, d, what + " (jit)", scale);
}

/// Host matmul of row-major (r x k) and (k x c).
std::vector<double> hmm(const std::vector<double>& a, const std::vector<double>& b, int64_t r, int64_t k, int64_t c) {
  std::vector<double> out(static_cast<size_t>(r * c), 0.0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t l = 0; l < k; ++l) out[i * c + j] += a[i * k + l] * b[l * c + j];
  return out;
}
std::vector<double> htrans(const std::vector<double>& a, int64_t r, int64_t c) {
  std::vector<double> t(a.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t[j * r + i] = a[i * c + j];
  return t;
}
std::vector<double> heye(int64_t n) {
  std::vector<double> e(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) e[i * n + i] = 1;
  return e;
}
/// Batch b's (r x c) matrix of x.
std::vector<double> part(const Array& x, int64_t b, int64_t r, int64_t c) {
  auto v = x.to_vector<double>();
  return {v.begin() + b * r * c, v.begin() + (b + 1) * r * c};
}
/// A random (batch, n, n) matrix plus n I (well conditioned), or X X^T + n I when spd.
std::vector<double> random_square(int64_t batch, int64_t n, bool spd) {
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b) {
    auto x = uniform(static_cast<size_t>(n * n), -1, 1);
    std::vector<double> m = spd ? hmm(x, htrans(x, n, n), n, n, n) : x;
    for (int64_t i = 0; i < n; ++i) m[i * n + i] += static_cast<double>(n);
    out.insert(out.end(), m.begin(), m.end());
  }
  return out;
}

template <class E>
void expect_error(const std::function<void()>& f, const std::string& op, const std::string& part) {
  INFO(op << ": " << part);
  try {
    f();
    FAIL("no exception");
  } catch (const E& e) {
    std::string msg = e.what();
    CHECK(msg.find("[" + op + "]") != std::string::npos);
    CHECK(msg.find(part) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("linalg: det, slogdet, inv, solve against JAX", "[linalg]") {
  for (DType d : {float32, float64}) {
    Array m = make(kM, {3, 3}, d), b = make(kB, {3, 2}, d);
    both([](auto& x) { return jnp::linalg::det(x[0]); }, {m}, {26.25}, d, "det");
    both([](auto& x) { return jnp::linalg::slogdet(x[0]).sign; }, {m}, {1.0}, d, "slogdet sign");
    both([](auto& x) { return jnp::linalg::slogdet(x[0]).logabsdet; }, {m}, {3.267665989037633}, d, "slogdet log");
    both([](auto& x) { return jnp::linalg::inv(x[0]); }, {m},
         {0.38095238095238093, 0.17142857142857143, -0.13333333333333333, -0.19047619047619047, 0.3142857142857143,
          -0.13333333333333333, 0.09523809523809523, -0.05714285714285714, 0.26666666666666666},
         d, "inv");
    both([](auto& x) { return jnp::linalg::solve(x[0], x[1]); }, {m, b},
         {0.8285714285714285, 0.05714285714285727, 0.6857142857142856, -1.2285714285714284, 0.05714285714285715,
          1.3142857142857143},
         d, "solve matrix b");
    Array v = make({1, 3, 0.5}, d);
    both([](auto& x) { return jnp::linalg::solve(x[0], x[1]); }, {m, v},
         {0.8285714285714285, 0.6857142857142856, 0.05714285714285715}, d, "solve vector b");
    // det of a permutation-needing matrix: sign from the pivots ([[0, 1], [1, 0]] has det -1)
    both([](auto& x) { return jnp::linalg::det(x[0]); }, {make({0, 1, 1, 0}, {2, 2}, d)}, {-1.0}, d, "det swap");
  }
  // integers promote as JAX's to_inexact_dtype with x64: int32 -> float32 (det([[1, 2], [3, 4]]) = -2.0 f32),
  // int64 -> float64
  Array mi = make_int({1, 2, 3, 4}, {2, 2}, int32);
  CHECK(jnp::linalg::det(mi).dtype() == float32);
  CHECK(jnp::linalg::det(make_int({1, 2, 3, 4}, {2, 2}, DType::int64)).dtype() == float64);
  close(jnp::linalg::det(mi), {-2.0}, float32, "det int");
  close(jnp::linalg::slogdet(mi).sign, {-1.0}, float32, "slogdet int sign");
  close(jnp::linalg::slogdet(mi).logabsdet, {std::log(2.0)}, float32, "slogdet int");
}

TEST_CASE("linalg: batched det/inv/solve with broadcasting batch axes match per-matrix loops", "[linalg]") {
  for (DType d : {float32, float64}) {
    auto av = random_square(6, 4, false);
    Array a = make(av, {2, 3, 4, 4}, d);
    Array b = make(uniform(2 * 4 * 2, -1, 1), {2, 1, 4, 2}, d);  // batch (2, 1) broadcasts against (2, 3)
    auto r = eager_and_jit([](auto& x) { return jnp::linalg::solve(x[0], x[1]); }, {a, b});
    auto dets = eager_and_jit([](auto& x) { return jnp::linalg::det(x[0]); }, {a});
    auto invs = eager_and_jit([](auto& x) { return jnp::linalg::inv(x[0]); }, {a});
    for (int64_t k = 0; k < 6; ++k) {
      Array ak = make(part(a, k, 4, 4), {4, 4}, d), bk = make(part(b, k / 3, 4, 2), {4, 2}, d);
      for (int w = 0; w < 2; ++w) {
        close(make(part(r[w], k, 4, 2), {4, 2}, d), jnp::linalg::solve(ak, bk).to_vector<double>(), d, "solve");
        close(make(part(dets[w], k, 1, 1), {1}, d), {jnp::linalg::det(ak).item<double>()}, d, "det");
        // inv against a x = e: a inv(a) = I
        auto prod = hmm(part(a, k, 4, 4), part(invs[w], k, 4, 4), 4, 4, 4);
        close(make(prod, {4, 4}, float64), heye(4), float64, "a inv(a)", d == float32 ? 1e6 : 100);
      }
    }
    CHECK(r[0].shape() == Shape{2, 3, 4, 2});
  }
}

TEST_CASE("linalg: singular matrices give inf/nan as JAX, no exception", "[linalg]") {
  for (DType d : {float32, float64}) {
    Array s = make({1, 2, 2, 4}, {2, 2}, d);
    both([](auto& x) { return jnp::linalg::det(x[0]); }, {s}, {0.0}, d, "det singular");
    both([](auto& x) { return jnp::linalg::inv(x[0]); }, {s}, {-kInf, kInf, kInf, -kInf}, d, "inv singular");
    both([](auto& x) { return jnp::linalg::slogdet(x[0]).sign; }, {s}, {0.0}, d, "slogdet sign singular");
    both([](auto& x) { return jnp::linalg::slogdet(x[0]).logabsdet; }, {s}, {-kInf}, d, "slogdet singular");
    // not positive definite: NaN in the lower triangle, zeros above ([[nan, 0], [nan, nan]] in JAX)
    double nan = std::numeric_limits<double>::quiet_NaN();
    both([](auto& x) { return jnp::linalg::cholesky(x[0]); }, {make({1, 2, 2, 1}, {2, 2}, d)}, {nan, 0, nan, nan}, d,
         "cholesky not pd");
  }
}

TEST_CASE("linalg: cholesky and triangular_solve against JAX", "[linalg]") {
  for (DType d : {float32, float64}) {
    Array a = make(kA, {3, 3}, d), m = make(kM, {3, 3}, d), b = make(kB, {3, 2}, d);
    Array bt = make(htrans(kB, 3, 2), {2, 3}, d);
    std::vector<double> l{2.0, 0, 0, 0.5, 2.179449471770337, 0, 1.0, 1.1470786693528088, 1.9194297398747862};
    both([](auto& x) { return jnp::linalg::cholesky(x[0]); }, {a}, l, d, "cholesky");
    both([](auto& x) { return jnp::linalg::cholesky(x[0], true); }, {a}, htrans(l, 3, 3), d, "cholesky upper");
    both([](auto& x) { return lax::linalg::cholesky(x[0]); }, {a}, l, d, "lax cholesky");
    namespace ll = lax::linalg;
    both([](auto& x) { return ll::triangular_solve(x[0], x[1], true, true); }, {m, b},
         {0.5, 1.0, 0.8333333333333333, -0.6666666666666666, -0.020833333333333315, 1.2916666666666665}, d,
         "left lower");
    both([](auto& x) { return ll::triangular_solve(x[0], x[1], true, false, true, false, true); }, {m, b},
         {1.0, 2.0, 4.0, 1.0, -8.0, 1.0}, d, "left upper transpose unit");
    both([](auto& x) { return ll::triangular_solve(x[0], x[1], false, true); }, {m, bt},
         {0.05208333333333337, 0.9583333333333333, 0.125, 1.5833333333333333, -0.6666666666666666, 1.0}, d,
         "right lower");
    both([](auto& x) { return ll::triangular_solve(x[0], x[1], false, false, true); }, {m, bt},
         {0.9270833333333333, 0.9166666666666666, 0.125, 0.25, -1.0, 1.0}, d, "right upper transpose");
  }
  // batched cholesky: L L^T = a, L lower
  auto av = random_square(4, 5, true);
  Array a = make(av, {2, 2, 5, 5}, float64);
  auto ls = eager_and_jit([](auto& x) { return jnp::linalg::cholesky(x[0]); }, {a});
  for (auto& lb : ls)
    for (int64_t k = 0; k < 4; ++k) {
      auto l = part(lb, k, 5, 5);
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = i + 1; j < 5; ++j) CHECK(l[i * 5 + j] == 0.0);
      close(make(hmm(l, htrans(l, 5, 5), 5, 5, 5), {5, 5}, float64), part(a, k, 5, 5), float64, "L L^T");
    }
}

TEST_CASE("linalg: qr modes reconstruct with orthonormal Q and upper-triangular R", "[linalg]") {
  for (DType d : {float32, float64}) {
    for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{4, 3}, {3, 3}, {3, 5}}) {
      Array a = make(uniform(static_cast<size_t>(2 * m * n), -2, 2), {2, m, n}, d);
      for (std::string mode : {"reduced", "complete"}) {
        INFO(m << "x" << n << " " << mode);
        int64_t k = mode == "complete" ? m : std::min(m, n);
        for (bool jitted : {false, true}) {
          auto f = [mode](const Array& x) {
            auto r = jnp::linalg::qr(x, mode);
            return std::vector<Array>{r.Q, r.R};
          };
          auto qr = jitted ? jit(f)(a) : f(a);
          REQUIRE(qr[0].shape() == Shape{2, m, k});
          REQUIRE(qr[1].shape() == Shape{2, k, n});
          for (int64_t b = 0; b < 2; ++b) {
            auto q = part(qr[0], b, m, k), r = part(qr[1], b, k, n);
            for (int64_t i = 0; i < k; ++i)
              for (int64_t j = 0; j < std::min(i, n); ++j) CHECK(r[i * n + j] == 0.0);
            close(make(hmm(q, r, m, k, n), {m, n}, float64), part(a, b, m, n), float64, "Q R = a",
                  d == float32 ? 1e6 : 1);
            close(make(hmm(htrans(q, m, k), q, k, m, k), {k, k}, float64), heye(k), float64, "Q^T Q = I",
                  d == float32 ? 1e6 : 1);
          }
        }
      }
      auto r_only = jnp::linalg::qr(a, "r");
      CHECK(!r_only.Q.valid());
      auto full = jnp::linalg::qr(a);
      // R is unique up to the signs of its rows
      auto r1 = r_only.R.to_vector<double>(), r2 = full.R.to_vector<double>();
      REQUIRE(r1.size() == r2.size());
      for (size_t i = 0; i < r1.size(); ++i) CHECK(std::fabs(std::fabs(r1[i]) - std::fabs(r2[i])) < 1e-4);
    }
  }
}

TEST_CASE("linalg: eigh eigenvalues against JAX, vectors orthonormal and reconstructing", "[linalg]") {
  for (DType d : {float32, float64}) {
    Array a = make(kA, {3, 3}, d);
    std::vector<double> w{2.1943971674224088, 3.386770156607549, 9.418832675970037};
    both([](auto& x) { return jnp::linalg::eigh(x[0]).eigenvalues; }, {a}, w, d, "eigh values");
    both([](auto& x) { return jnp::linalg::eigvalsh(x[0]); }, {a}, w, d, "eigvalsh");
    // UPLO and symmetrize_input on a non-symmetric matrix: which triangle is read (JAX's values)
    Array ns = make({1, 100, 2, 3}, {2, 2}, d);
    both([](auto& x) { return jnp::linalg::eigh(x[0], "U", false).eigenvalues; }, {ns},
         {-98.00499987500626, 102.00499987500623}, d, "UPLO=U no symmetrize");
    both([](auto& x) { return jnp::linalg::eigh(x[0], "L", false).eigenvalues; }, {ns},
         {-0.2360679774997897, 4.23606797749979}, d, "UPLO=L no symmetrize");
    both([](auto& x) { return jnp::linalg::eigh(x[0]).eigenvalues; }, {ns}, {-49.0098029794274, 53.0098029794274}, d,
         "symmetrized");
    // batched: ascending, V diag(w) V^T = a, V^T V = I
    auto av = random_square(3, 6, true);
    for (int64_t i = 0; i < 3; ++i)  // some negative eigenvalues
      for (int64_t j = 0; j < 6; ++j) av[i * 36 + j * 7] -= 8;
    Array ab = make(av, {3, 6, 6}, d);
    for (bool jitted : {false, true}) {
      auto f = [](const Array& x) {
        auto r = jnp::linalg::eigh(x);
        return std::vector<Array>{r.eigenvalues, r.eigenvectors};
      };
      auto r = jitted ? jit(f)(ab) : f(ab);
      for (int64_t b = 0; b < 3; ++b) {
        auto wv = part(r[0], b, 1, 6), v = part(r[1], b, 6, 6);
        for (int64_t k = 0; k + 1 < 6; ++k) CHECK(wv[k] <= wv[k + 1]);
        std::vector<double> vw = v;
        for (int64_t i = 0; i < 6; ++i)
          for (int64_t k = 0; k < 6; ++k) vw[i * 6 + k] *= wv[k];
        double s = d == float32 ? 1e6 : 100;
        close(make(hmm(vw, htrans(v, 6, 6), 6, 6, 6), {6, 6}, float64), part(ab, b, 6, 6), float64, "V W V^T", s);
        close(make(hmm(htrans(v, 6, 6), v, 6, 6, 6), {6, 6}, float64), heye(6), float64, "V^T V", s);
      }
    }
  }
}

TEST_CASE("linalg: svd singular values against JAX, factors orthonormal and reconstructing", "[linalg]") {
  for (DType d : {float32, float64}) {
    Array r = make(kR, {4, 3}, d), rt = make(htrans(kR, 4, 3), {3, 4}, d);
    std::vector<double> s{17.632274007264982, 2.1439106248400916, 0.08099731739606138};
    both([](auto& x) { return jnp::linalg::svdvals(x[0]); }, {r}, s, d, "svdvals tall");
    both([](auto& x) { return jnp::linalg::svdvals(x[0]); }, {rt}, s, d, "svdvals wide");
    both([](auto& x) { return jnp::linalg::svd(x[0], true, false).S; }, {r}, s, d, "svd compute_uv=false");
    both([](auto& x) { return jnp::linalg::norm(x[0], 2.0); }, {r}, {17.632274007264982}, d, "norm 2");
    both([](auto& x) { return jnp::linalg::norm(x[0], -2.0); }, {r}, {0.08099731739606138}, d, "norm -2", 10);
    both([](auto& x) { return jnp::linalg::norm(x[0], "nuc"); }, {r}, {19.857181949501136}, d, "norm nuc");
    for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{5, 3}, {3, 3}, {2, 4}}) {
      Array a = make(uniform(static_cast<size_t>(2 * m * n), -2, 2), {2, m, n}, d);
      for (bool full : {false, true}) {
        INFO(m << "x" << n << " full=" << full);
        int64_t k = std::min(m, n), uc = full ? m : k, vr = full ? n : k;
        auto f = [full](const Array& x) {
          auto r = jnp::linalg::svd(x, full);
          return std::vector<Array>{r.U, r.S, r.Vh};
        };
        for (bool jitted : {false, true}) {
          auto out = jitted ? jit(f)(a) : f(a);
          REQUIRE(out[0].shape() == Shape{2, m, uc});
          REQUIRE(out[2].shape() == Shape{2, vr, n});
          for (int64_t b = 0; b < 2; ++b) {
            auto u = part(out[0], b, m, uc), sv = part(out[1], b, 1, k), vh = part(out[2], b, vr, n);
            for (int64_t j = 0; j + 1 < k; ++j) CHECK(sv[j] >= sv[j + 1]);
            for (double x : sv) CHECK(x >= 0);
            // U[:, :k] diag(s) Vh[:k] = a
            std::vector<double> us(static_cast<size_t>(m * k)), vk(vh.begin(), vh.begin() + k * n);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < k; ++j) us[i * k + j] = u[i * uc + j] * sv[j];
            double sc = d == float32 ? 1e6 : 100;
            close(make(hmm(us, vk, m, k, n), {m, n}, float64), part(a, b, m, n), float64, "U S Vh", sc);
            close(make(hmm(htrans(u, m, uc), u, uc, m, uc), {uc, uc}, float64), heye(uc), float64, "U^T U", sc);
            close(make(hmm(vh, htrans(vh, vr, n), vr, n, vr), {vr, vr}, float64), heye(vr), float64, "Vh Vh^T", sc);
          }
        }
      }
    }
  }
}

TEST_CASE("linalg: lstsq, pinv, matrix_power against JAX", "[linalg]") {
  Array r = make(kR, {4, 3}, float64), y = make({1, 2, 3, 4}, float64);
  auto res = jnp::linalg::lstsq(r, y);
  close(res.x, {4.999999999999908, -13.9999999999998, 7.999999999999904}, float64, "lstsq x", 1000);
  CHECK(res.rank.dtype() == int64);
  CHECK(res.rank.item<int64_t>() == 3);
  REQUIRE(res.residuals.size() == 1);
  CHECK(std::fabs(res.residuals.to_vector<double>()[0]) < 1e-18);
  close(res.s, {17.632274007264982, 2.1439106248400916, 0.08099731739606138}, float64, "lstsq s");
  // rank-deficient: the minimum-norm solution (JAX: x = [0.8333.., 0.8333..], residual 0.6667, rank 1)
  Array ones = make({1, 1, 1, 1, 1, 1}, {3, 2}, float64);
  auto rd = jit([](Array a, Array b) {
    auto q = jnp::linalg::lstsq(a, b);
    return std::vector<Array>{q.x, q.residuals, q.rank};
  })(ones, make({1, 2, 2}, float64));
  close(rd[0], {0.8333333333333333, 0.8333333333333333}, float64, "lstsq min norm");
  close(rd[1], {0.6666666666666667}, float64, "lstsq residual");
  CHECK(rd[2].item<int64_t>() == 1);
  // A zero matrix has rank 0 and x = 0 (JAX's (s > 0) & ... mask): residuals |b|^2 = 14, no NaN.
  auto z = jnp::linalg::lstsq(jnp::zeros({3, 2}, float64), make({1, 2, 3}, float64));
  close(z.x, {0, 0}, float64, "lstsq of zeros");
  close(z.residuals, {14}, float64, "lstsq of zeros residual");
  CHECK(z.rank.item<int64_t>() == 0);
  // rcond < 0 means eps (JAX), not eps * max(m, n): both singular values of diag(1, 3e-16) count.
  auto e = jnp::linalg::lstsq(make({1, 0, 0, 3e-16}, {2, 2}, float64), make({1, 1}, float64), -1.0);
  CHECK(e.rank.item<int64_t>() == 2);
  CHECK(e.x.to_vector<double>()[1] > 3e15);
  CHECK(jnp::linalg::lstsq(make({1, 0, 0, 3e-16}, {2, 2}, float64), make({1, 1}, float64)).rank.item<int64_t>() == 1);
  both([](auto& x) { return jnp::linalg::pinv(x[0]); }, {r},
       {-3.833333333333276, -1.1333333333333198, 1.566666666666647, 1.5999999999999708, 8.333333333333211,
        2.533333333333305, -3.2666666666666244, -4.399999999999936, -3.999999999999942, -1.1999999999999866,
        1.5999999999999799, 2.3999999999999697},
       float64, "pinv", 1000);
  for (DType d : {float32, float64}) {
    Array m = make(kM, {3, 3}, d);
    both([](auto& x) { return jnp::linalg::matrix_power(x[0], 3); }, {m},
         {0.5, -15.25, -3.625, 10.75, 40.5, 80.0, -5.375, 42.25, 85.0}, d, "matrix_power 3");
    both([](auto& x) { return jnp::linalg::matrix_power(x[0], -2); }, {m},
         {0.09977324263038546, 0.12680272108843535, -0.1092063492063492, -0.14512471655328799, 0.07374149659863946,
          -0.05206349206349206, 0.07256235827664398, -0.016870748299319727, 0.06603174603174602},
         d, "matrix_power -2");
    both([](auto& x) { return jnp::linalg::matrix_power(x[0], 0); }, {m}, heye(3), d, "matrix_power 0");
  }
}

TEST_CASE("linalg: bad input gives clear errors naming the function", "[linalg]") {
  Array rect = make(uniform(6, -1, 1), {2, 3}, float32), vec = make({1, 2, 3}, float32);
  Array sq = make(kM, {3, 3}, float32);
  expect_error<ShapeError>([&] { jnp::linalg::inv(rect); }, "jnp.linalg.inv", "(2, 3)");
  expect_error<ShapeError>([&] { jnp::linalg::inv(vec); }, "jnp.linalg.inv", "[..., n, n]");
  expect_error<ShapeError>([&] { jnp::linalg::det(rect); }, "jnp.linalg.det", "square");
  expect_error<ShapeError>([&] { jnp::linalg::slogdet(vec); }, "jnp.linalg.slogdet", "(3,)");
  expect_error<ShapeError>([&] { jnp::linalg::cholesky(rect); }, "jnp.linalg.cholesky", "square");
  expect_error<ShapeError>([&] { jnp::linalg::eigh(rect); }, "jnp.linalg.eigh", "square");
  expect_error<ShapeError>([&] { jnp::linalg::svd(vec); }, "jnp.linalg.svd", "rank at least 2");
  expect_error<ShapeError>([&] { jnp::linalg::qr(vec); }, "jnp.linalg.qr", "rank at least 2");
  expect_error<ShapeError>([&] { jnp::linalg::solve(sq, make({1, 2}, float32)); }, "jnp.linalg.solve", "3 rows");
  expect_error<ShapeError>([&] { jnp::linalg::solve(sq, make(uniform(6, 0, 1), {2, 3}, float32)); },
                           "jnp.linalg.solve", "(2, 3)");
  expect_error<TypeError>([&] { jnp::linalg::qr(sq, "full"); }, "jnp.linalg.qr", "'full'");
  expect_error<TypeError>([&] { jnp::linalg::eigh(sq, "X"); }, "jnp.linalg.eigh", "UPLO");
  expect_error<TypeError>([&] { jnp::linalg::eigvalsh(sq, "lower"); }, "jnp.linalg.eigvalsh", "UPLO");
  expect_error<TypeError>([&] { jnp::linalg::inv(make({1, 0, 0, 1}, {2, 2}, float16)); }, "jnp.linalg.inv",
                          "f16");
  expect_error<TypeError>([&] { jnp::linalg::det(Array()); }, "jnp.linalg.det", "empty");
  expect_error<ShapeError>([&] { jnp::linalg::lstsq(make(uniform(8, 0, 1), {2, 2, 2}, float32), vec); },
                           "jnp.linalg.lstsq", "2-d");
  expect_error<ShapeError>([&] { jnp::linalg::matrix_power(rect, 2); }, "jnp.linalg.matrix_power", "square");
  namespace ll = lax::linalg;
  expect_error<ShapeError>([&] { ll::triangular_solve(sq, rect, true); }, "lax.linalg.triangular_solve", "(2, 3)");
  expect_error<TypeError>([&] { ll::triangular_solve(sq, make_int({1, 2, 3}, {3, 1}, int32), true); },
                          "lax.linalg.triangular_solve", "float32 or float64");
  expect_error<ShapeError>([&] { ll::lu(make({1, 2}, float32)); }, "lax.linalg.lu", "rank at least 2");
}
