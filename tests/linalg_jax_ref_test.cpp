// jnp::linalg and lax::linalg against values written by JAX 0.10.2 (x64, CPU): det and its gradient at singular
// matrices (JAX's closed forms for 2x2 and 3x3 give the cofactor matrix), and lax.linalg's qr, eigh and svd with
// JAX's signatures and result order, eager and jit, on whichever JITX_PLATFORM runs.
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
