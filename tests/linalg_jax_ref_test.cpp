// jnp::linalg and lax::linalg against values written by JAX 0.10.2 (x64, CPU): det and its gradient at singular
// matrices (JAX's closed forms for 2x2 and 3x3 give the cofactor matrix), and lax.linalg's qr, eigh and svd with
// JAX's signatures and result order, eager and jit, on whichever JITX_PLATFORM runs; jnp.linalg.qr's "raw" mode
// against JAX's values and against Q R = a.
#include <cmath>

#include "jitx/lax_linalg.h"
#include "jitx/linalg.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
/// |x| elementwise (QR, SVD and eigh vectors carry backend-chosen signs; their magnitudes are JAX's).
std::vector<double> abs_of(const Array& x) {
  auto v = x.to_vector<double>();
  for (auto& e : v) e = std::fabs(e);
  return v;
}
void check_vec(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << " want " << want[i]);
    CHECK(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])));
  }
}
}  // namespace

TEST_CASE("linalg: det and grad(det) at singular matrices match JAX", "[linalg]") {
  struct Case {
    const char* name;
    Shape shape;
    std::vector<double> a, det, grad;
  };
  // jax.numpy.linalg.det and jax.grad(jnp.linalg.det) (tools: /work/venv-jax, JAX_ENABLE_X64=1).
  const Case cases[] = {
      {"rank-2 3x3", {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {0.0}, {-3, 6, -3, 6, -12, 6, -3, 6, -3}},
      {"2x2 zero", {2, 2}, {0, 0, 0, 0}, {0.0}, {0, 0, 0, 0}},
      {"rank-1 3x3", {3, 3}, {1, 2, 3, 2, 4, 6, 3, 6, 9}, {0.0}, {0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {"2x2 [[0,0],[0,1]]", {2, 2}, {0, 0, 0, 1}, {0.0}, {1, 0, 0, 0}},
      {"regular 4x4", {4, 4}, {2, 1, 0, 3, 1, 3, 1, 0, 0, 1, 4, 1, 3, 0, 1, 5}, {-20.000000000000007},
       {52, -22, 14, -34, -22, 2, -4, 14, 14, -4, -2, -8, -34, 14, -8, 18}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Array a = make(c.a, c.shape, float64);
    auto d = eager_and_jit([](const std::vector<Array>& x) { return jnp::linalg::det(x[0]); }, {a});
    auto det_grad = grad([](const Array& m) { return jnp::linalg::det(m); });
    auto g = eager_and_jit([&](const std::vector<Array>& x) { return det_grad(x[0]); }, {a});
    for (int i = 0; i < 2; ++i) {
      INFO((i ? "jit" : "eager"));
      check_vec(d[i].to_vector<double>(), c.det, 1e-12, "det");
      check_vec(g[i].to_vector<double>(), c.grad, 1e-12, "grad");
    }
  }
  // Batched 2x2 and 3x3 (the closed forms index the last two axes).
  Array b = make({1, 2, 3, 4, 0, 0, 0, 0, 2, 0, 0, 3}, {3, 2, 2}, float64);
  check_vec(jnp::linalg::det(b).to_vector<double>(), {-2, 0, 6}, 1e-12, "batched det");
  check_vec(grad([](const Array& x) { return jnp::sum(jnp::linalg::det(x)); })(b).to_vector<double>(),
            {4, -3, -2, 1, 0, 0, 0, 0, 3, 0, 0, 2}, 1e-12, "batched grad");
}

TEST_CASE("linalg: lax::linalg qr, eigh, svd with JAX's signatures and values", "[linalg]") {
  Array x = make({4, 1, -2, 1, 2, 0.5, -2, 0.5, 3}, {3, 3}, float64);
  Array y = make({1, 2, 3, 4, 5, 7}, {3, 2}, float64);
  auto e = eager_and_jit([](const std::vector<Array>& a) { return lax::linalg::eigh(a[0]).w; }, {x});
  for (auto& w : e) check_vec(w.to_vector<double>(), {0.6539237684613841, 2.716348465618261, 5.629727765920354}, 1e-12,
                              "eigh w (ascending)");
  auto [v, w] = lax::linalg::eigh(x);  // JAX's order: vectors first
  REQUIRE(v.shape() == Shape{3, 3});
  check_vec(abs_of(v),
            {0.5323243447980562, 0.27463393193367164, 0.8007540167654305, 0.6125169868955221, 0.7778893374994162,
             0.1403962940007677, 0.5843404253513105, 0.5652118028096821, 0.5823073803970535},
            1e-10, "eigh |v|");
  // lower=false reads the upper triangle (without symmetrize_input the lower one is ignored).
  Array xu = make({4, 1, -2, 99, 2, 0.5, 99, 99, 3}, {3, 3}, float64);
  check_vec(lax::linalg::eigh(xu, false, false).w.to_vector<double>(),
            {0.6539237684613841, 2.716348465618261, 5.629727765920354}, 1e-12, "eigh upper");

  auto [q, r] = lax::linalg::qr(y);  // full_matrices defaults to true in lax (jnp's mode defaults to reduced)
  CHECK(q.shape() == Shape{3, 3});
  CHECK(r.shape() == Shape{3, 2});
  check_vec(abs_of(r), {5.916079783099616, 8.282511696339462, 0.0, 0.6324555320336759, 0.0, 0.0}, 1e-12, "qr |r|");
  check_vec(jnp::matmul(q, r).to_vector<double>(), y.to_vector<double>(), 1e-12, "q r = y");
  auto red = lax::linalg::qr(y, false);
  CHECK(red.q.shape() == Shape{3, 2});
  CHECK(red.r.shape() == Shape{2, 2});
  check_vec(abs_of(red.q),
            {0.16903085094570325, 0.9486832980505133, 0.50709255283711, 0.31622776601683833, 0.8451542547285166, 0.0},
            1e-12, "qr reduced |q|");

  auto s = lax::linalg::svd(y);
  CHECK(s.u.shape() == Shape{3, 3});
  CHECK(s.vh.shape() == Shape{2, 2});
  check_vec(s.s.to_vector<double>(), {10.191428257097224, 0.3671376859438993}, 1e-12, "svd s");
  auto only_s = lax::linalg::svd(y, true, false);
  CHECK_FALSE(only_s.u.valid());
  check_vec(only_s.s.to_vector<double>(), {10.191428257097224, 0.3671376859438993}, 1e-12, "svd compute_uv=false");
  auto sj = jit([](const Array& a) { return lax::linalg::svd(a, false).u; })(y);
  CHECK(sj.shape() == Shape{3, 2});
}

TEST_CASE("linalg: qr mode raw (geqrf's h and tau) matches JAX, f64 and f32, eager and jit", "[linalg]") {
  struct Case {
    const char* name;
    Shape shape;
    std::vector<double> a;
    Shape h_shape;
    std::vector<double> h;
    Shape tau_shape;
    std::vector<double> tau;
  };
  // jnp.linalg.qr(a, mode="raw") (/work/venv-jax, JAX_ENABLE_X64=1; a = round(normal, 3), numpy seed 7).
  const Case cases[] = {
      {"4x3", {4, 3}, {0.001, 0.299, -0.274, -0.891, -0.455, -0.992, 0.06, 1.34, -0.492, -0.62, 0.49, 0.357}, {3, 4},
       {-1.08714396470753, -0.818825476130343, 0.05513976270238, -0.569777547924594, -0.16769076214211,
       1.51789519015385, -0.826189582008967, -0.475188833623065, -0.5820185923308, -0.140006465998018,
       1.03455572477273, -0.121375463576547}, {3}, {1.00091984137563, 1.04800180865977, 1.97096375572552}},
      {"3x4", {3, 4}, {0.105, -0.93, -0.029, 0.695, -1.344, -0.458, -1.901, -1.29, -1.842, -0.235, -1.267, 0.271}, {4,
       3}, {-2.28261363353503, -0.562905145590961, -0.771481605787611, -0.416527784655155, 0.977953784496113,
       0.365877131117612, -2.14040296974552, 0.31068512393879, 0.7362614215533, -0.572831503671965, -0.36588154049583,
       1.32610737375422}, {3}, {1.04599990049012, 1.76387674343989, 0.0}},
      {"batched 2x3x3", {2, 3, 3}, {0.157, -0.187, -2.517, -0.539, -0.049, 0.113, -1.53, -0.478, -0.979, -0.809,
       1.061, -0.808, -0.033, 0.884, -0.584, -0.112, 0.11, 0.064}, {2, 3, 3}, {-1.62974537888592, -0.301665814485599,
       -0.856305558743908, -0.446936073227539, -0.257103376967218, -0.891448373161463, -0.639237278103015,
       -2.51807583665665, -0.746437393978466, 0.817382407444643, 0.0202904309890128, 0.0688644930536191,
       -1.10088129106319, -0.841033520727346, -0.0231249100295321, 0.814522057162198, 0.55861258146468,
       0.150072656488875}, {2, 3}, {1.09633406667938, 1.11440467095897, 0.0, 1.98974481543975, 1.99893104870621, 0.0}},
      {"1x1", {1, 1}, {-1.225}, {1, 1}, {-1.225}, {1}, {0.0}},
      {"zero first column", {3, 2}, {0.0, 1.0, 0.0, 2.0, 0.0, 3.0}, {2, 3}, {0.0, 0.0, 0.0, 1.0, -3.60555127546399,
       0.535183758487996}, {2}, {0.0, 1.55470019622523}},
      {"zero tail", {3, 2}, {-2.0, 1.0, 0.0, 2.0, 0.0, 3.0}, {2, 3}, {-2.0, 0.0, 0.0, 1.0, -3.60555127546399,
       0.535183758487996}, {2}, {0.0, 1.55470019622523}},
  };
  for (const auto& c : cases) {
    for (DType d : {DType::float64, DType::float32}) {
      double tol = d == DType::float64 ? 1e-13 : 2e-5;
      Array a = make(c.a, c.shape, d);
      auto raw = [](const Array& x) {
        auto r = jnp::linalg::qr(x, "raw");
        return std::vector<Array>{r.Q, r.R};
      };
      auto jitted = jit([&](std::vector<Array> xs) { return raw(xs[0]); });
      std::vector<std::pair<std::string, std::vector<Array>>> runs = {{"eager", raw(a)},
                                                                      {"jit", jitted(std::vector<Array>{a})}};
      for (const auto& run : runs) {
        const auto& r = run.second;
        std::string what = std::string(c.name) + " " + std::string(dtype_name(d)) + " " + run.first;
        REQUIRE(r[0].shape() == c.h_shape);
        REQUIRE(r[1].shape() == c.tau_shape);
        CHECK(r[0].dtype() == d);
        CHECK(r[1].dtype() == d);
        check_vec(r[0].to_vector<double>(), c.h, tol, what + " h");
        check_vec(r[1].to_vector<double>(), c.tau, tol, what + " tau");
      }
    }
  }
  // Integers become float32 (as JAX's); an empty matrix gives empty h and tau; bad modes are named.
  auto ri = jnp::linalg::qr(make_int({1, 2, 3, 4}, {2, 2}, DType::int32), "raw");
  CHECK(ri.Q.dtype() == DType::float32);
  auto re = jnp::linalg::qr(make({}, {3, 0}, DType::float64), "raw");
  CHECK(re.Q.shape() == Shape{0, 3});
  CHECK(re.R.shape() == Shape{0});
  CHECK_THROWS_WITH(jnp::linalg::qr(make({1, 2, 3, 4}, {2, 2}, DType::float64), "economic"),
                    Catch::Contains("'reduced', 'complete', 'r' or 'raw'"));
}

TEST_CASE("linalg: qr mode raw rebuilds a (Q from the reflectors times R) and has a gradient", "[linalg]") {
  const int64_t m = 5, n = 3;
  auto av = uniform(m * n, -1, 1);
  Array a = make(av, {m, n}, DType::float64);
  auto r = jnp::linalg::qr(a, "raw");
  auto h = r.Q.to_vector<double>(), tau = r.R.to_vector<double>();  // h is (n, m): h[j * m + i] = f(i, j)
  // Q = H_0 H_1 ... H_{n-1}, H_j = I - tau_j v_j v_j^T, applied to R (the upper triangle of f) from the right end.
  std::vector<double> qr(m * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i; j < n; ++j) qr[i * n + j] = h[j * m + i];
  for (int64_t k = n - 1; k >= 0; --k) {
    std::vector<double> v(m, 0.0);
    v[k] = 1;
    for (int64_t i = k + 1; i < m; ++i) v[i] = h[k * m + i];
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t i = 0; i < m; ++i) s += v[i] * qr[i * n + j];
      for (int64_t i = 0; i < m; ++i) qr[i * n + j] -= tau[k] * v[i] * s;
    }
  }
  check_vec(qr, av, 1e-13, "Q R == a");
  // R agrees with mode "r" (both are LAPACK's convention: beta = -sign(alpha) |x|).
  auto rr = jnp::linalg::qr(a, "r").R.to_vector<double>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i; j < n; ++j) CHECK(std::fabs(rr[i * n + j] - h[j * m + i]) <= 1e-13);
  check_grad_fd([](const Array& x) { return jnp::linalg::qr(x, "raw").Q; }, av, {m, n}, "grad of h");
  check_grad_fd([](const Array& x) { return jnp::linalg::qr(x, "raw").R; }, av, {m, n}, "grad of tau");
}
