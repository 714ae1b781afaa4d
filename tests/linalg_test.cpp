// jnp::linalg::norm: vector and matrix norms against double-precision loops, eager and jit, gradients against
// central finite differences in f64, vmap against a loop, and the errors for bad ord/axis.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The p-norm of v (double loop): p = 0 counts non-zeros, +-inf the largest/smallest |v|.
double ref_vector_norm(const std::vector<double>& v, double p) {
  if (p == kInf || p == -kInf) {
    double m = std::fabs(v[0]);
    for (double a : v) m = p > 0 ? std::max(m, std::fabs(a)) : std::min(m, std::fabs(a));
    return m;
  }
  double s = 0;
  for (double a : v) s += p == 0 ? (a != 0) : std::pow(std::fabs(a), p);
  return p == 0 ? s : std::pow(s, 1 / p);
}

/// x (rows x cols, row-major) column sums (ord=+-1) or row sums (ord=+-inf) of |x|, then their max/min.
double ref_matrix_norm(const std::vector<double>& x, int64_t rows, int64_t cols, double ord) {
  bool by_col = ord == 1 || ord == -1;
  std::vector<double> sums(static_cast<size_t>(by_col ? cols : rows), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) sums[by_col ? j : i] += std::fabs(x[i * cols + j]);
  double m = sums[0];
  for (double s : sums) m = ord > 0 ? std::max(m, s) : std::min(m, s);
  return m;
}

/// f throws E whose message names jnp.linalg.norm and contains part.
template <class E>
void expect_error(const std::function<void()>& f, const std::string& part) {
  INFO(part);
  try {
    f();
    FAIL("no exception");
  } catch (const E& e) {
    std::string msg = e.what();
    CHECK(msg.find("jnp.linalg.norm") != std::string::npos);
    CHECK(msg.find(part) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("norm: vector norms of every p along one axis", "[linalg]") {
  for (DType d : {float32, float64}) {
    auto x = rounded(uniform(15, -2, 2), d);
    x[4] = 0;  // a zero for ord=0
    for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5, -1.5}) {
      // along axis 1 of a (3, 5) array: one norm per row
      std::vector<double> rows, cols;
      for (int i = 0; i < 3; ++i) rows.push_back(ref_vector_norm({x.begin() + 5 * i, x.begin() + 5 * i + 5}, p));
      for (int j = 0; j < 5; ++j) cols.push_back(ref_vector_norm({x[j], x[5 + j], x[10 + j]}, p));
      std::string what = "p=" + std::to_string(p);
      both_close([p](auto& v) { return jnp::linalg::norm(v[0], p, std::vector<int64_t>{1}); },
                 {make(x, {3, 5}, d)}, rows, d, what + " axis=1");
      both_close([p](auto& v) { return jnp::linalg::norm(v[0], p, std::vector<int64_t>{-2}); },
                 {make(x, {3, 5}, d)}, cols, d, what + " axis=-2");
      both_close([p](auto& v) { return jnp::linalg::norm(v[0], p); }, {make(x, {15}, d)},
                 {ref_vector_norm(x, p)}, d, what + " 1-d");
    }
    Array k = jnp::linalg::norm(make(x, {3, 5}, d), 3.0, std::vector<int64_t>{1}, /*keepdims=*/true);
    CHECK(k.shape() == Shape{3, 1});
    CHECK(k.dtype() == d);
  }
}

TEST_CASE("norm: matrix norms (fro, 1, -1, inf, -inf), batched and with swapped axes", "[linalg]") {
  for (DType d : {float32, float64}) {
    auto x = rounded(uniform(24, -3, 3), d);  // (2, 3, 4): two 3x4 matrices
    for (double ord : {1.0, -1.0, kInf, -kInf}) {
      std::vector<double> ref, ref_t;
      for (int b = 0; b < 2; ++b) {
        std::vector<double> m(x.begin() + 12 * b, x.begin() + 12 * b + 12), t(12);
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 4; ++j) t[j * 3 + i] = m[i * 4 + j];
        ref.push_back(ref_matrix_norm(m, 3, 4, ord));
        ref_t.push_back(ref_matrix_norm(t, 4, 3, ord));  // axis=(2, 1): the norm of the transpose
      }
      std::string what = "ord=" + std::to_string(ord);
      both_close([ord](auto& v) { return jnp::linalg::norm(v[0], ord, std::vector<int64_t>{1, 2}); },
                 {make(x, {2, 3, 4}, d)}, ref, d, what + " axis=(1,2)");
      both_close([ord](auto& v) { return jnp::linalg::norm(v[0], ord, std::vector<int64_t>{2, 1}); },
                 {make(x, {2, 3, 4}, d)}, ref_t, d, what + " axis=(2,1)");
      std::vector<double> m0(x.begin(), x.begin() + 12);
      both_close([ord](auto& v) { return jnp::linalg::norm(v[0], ord); }, {make(m0, {3, 4}, d)},
                 {ref_matrix_norm(m0, 3, 4, ord)}, d, what + " 2-d, no axis");
      Array k = jnp::linalg::norm(make(x, {2, 3, 4}, d), ord, std::vector<int64_t>{2, 1}, true);
      CHECK(k.shape() == Shape{2, 1, 1});
      check_close(k, ref_t, d, what + " keepdims");
    }
    std::vector<double> fro;
    for (int b = 0; b < 2; ++b) {
      double s = 0;
      for (int i = 0; i < 12; ++i) s += x[12 * b + i] * x[12 * b + i];
      fro.push_back(std::sqrt(s));
    }
    both_close([](auto& v) { return jnp::linalg::norm(v[0], "fro", std::vector<int64_t>{1, 2}); },
               {make(x, {2, 3, 4}, d)}, fro, d, "fro");
    both_close([](auto& v) { return jnp::linalg::norm(v[0], std::nullopt, std::vector<int64_t>{-1, -2}); },
               {make(x, {2, 3, 4}, d)}, fro, d, "ord=None axis=(-1,-2)");
  }
}

TEST_CASE("norm: no axis flattens, int32 promotes to f32 (as JAX x64), hand-computed values", "[linalg]") {
  Array i = make_int({3, 4}, int32);
  Array n = jnp::linalg::norm(i);
  CHECK(n.dtype() == float32);  // jnp.linalg.norm of int32 is float32 in JAX with x64 (promote_dtypes_inexact)
  CHECK(n.item<double>() == 5.0);
  // a 3-d array with no ord: the 2-norm of all 8 elements, sqrt(1+4+...+64) = sqrt(204)
  std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8};
  both_close([](auto& a) { return jnp::linalg::norm(a[0]); }, {make(v, {2, 2, 2}, float32)}, {std::sqrt(204.0)},
             float32, "3-d flattened");
  Array k = jnp::linalg::norm(make(v, {2, 2, 2}, float64), std::nullopt, std::nullopt, true);
  CHECK(k.shape() == Shape{1, 1, 1});
  // [[1, -2], [3, 4]]: column sums 4, 6; row sums 3, 7
  Array m = make({1, -2, 3, 4}, {2, 2}, float64);
  CHECK(jnp::linalg::norm(m, 1.0).item<double>() == 6.0);
  CHECK(jnp::linalg::norm(m, -1.0).item<double>() == 4.0);
  CHECK(jnp::linalg::norm(m, kInf).item<double>() == 7.0);
  CHECK(jnp::linalg::norm(m, -kInf).item<double>() == 3.0);
  CHECK(jnp::linalg::norm(make({1, -2, 0, 4}, float64), 0.0).item<double>() == 3.0);
}

TEST_CASE("norm: gradients match central finite differences (f64)", "[linalg]") {
  auto x = uniform(12, 0.5, 2);
  for (int i = 0; i < 12; i += 2) x[i] = -x[i];  // mixed signs, none near 0 (|x| has a kink there)
  x[5] = 2.5;  // a unique largest |x| (inf norm) and a unique largest column sum
  x[9] = 3.5;
  struct Case {
    std::string name;
    std::function<Array(const Array&)> f;
  };
  std::vector<Case> cases{
      {"p=2", [](const Array& a) { return jnp::linalg::norm(a); }},
      {"p=3 axis=1", [](const Array& a) { return jnp::sum(jnp::linalg::norm(a, 3.0, std::vector<int64_t>{1})); }},
      {"p=0.5 axis=0", [](const Array& a) { return jnp::sum(jnp::linalg::norm(a, 0.5, std::vector<int64_t>{0})); }},
      {"p=inf", [](const Array& a) { return jnp::linalg::norm(jnp::ravel(a), kInf); }},
      {"fro", [](const Array& a) { return jnp::linalg::norm(a, "fro"); }},
      {"ord=1", [](const Array& a) { return jnp::linalg::norm(a, 1.0); }},
      {"ord=inf", [](const Array& a) { return jnp::linalg::norm(a, kInf); }},
  };
  const double h = 1e-6;
  for (auto& c : cases) {
    INFO(c.name);
    Array a = make(x, {3, 4}, float64);
    for (bool jitted : {false, true}) {
      auto g = jitted ? jit(grad(c.f))(a) : grad(c.f)(a);
      auto gv = g.to_vector<double>();
      for (size_t i = 0; i < x.size(); ++i) {
        auto xp = x, xm = x;
        xp[i] += h;
        xm[i] -= h;
        double fd = (c.f(make(xp, {3, 4}, float64)).item<double>() - c.f(make(xm, {3, 4}, float64)).item<double>()) /
                    (2 * h);
        CHECK(std::fabs(gv[i] - fd) <= 1e-6 * (1 + std::fabs(fd)));
      }
    }
  }
}

TEST_CASE("norm: vmap over a batch matches a loop", "[linalg]") {
  auto x = uniform(20, -2, 2);  // (4, 5): a vector norm per row
  Array xs = make(x, {4, 5}, float32);
  Array got = vmap([](const Array& v) { return jnp::linalg::norm(v, 3.0); })(xs);
  std::vector<double> ref;
  for (int b = 0; b < 4; ++b) ref.push_back(jnp::linalg::norm(xs[b], 3.0).item<float>());
  check_close(got, ref, float32, "vmap p=3");
  auto m = uniform(24, -2, 2);  // 2 batches of 3x4 matrices
  Array ms = make(m, {2, 3, 4}, float64);
  Array gm = jit(vmap([](const Array& v) { return jnp::linalg::norm(v, 1.0); }))(ms);
  std::vector<double> refm;
  for (int b = 0; b < 2; ++b)
    refm.push_back(ref_matrix_norm(std::vector<double>(m.begin() + 12 * b, m.begin() + 12 * b + 12), 3, 4, 1.0));
  check_close(gm, refm, float64, "jit(vmap) ord=1");
}

TEST_CASE("norm: bad ord and axis give clear errors naming jnp.linalg.norm", "[linalg]") {
  Array m = make({1, 2, 3, 4}, {2, 2}, float32);
  Array v = make({1, 2, 3}, float32);
  Array t = make(uniform(8, -1, 1), {2, 2, 2}, float32);
  expect_error<TypeError>([&] { jnp::linalg::norm(v, "fro"); }, "vector norm");
  expect_error<TypeError>([&] { jnp::linalg::norm(m, "max"); }, "'max'");
  expect_error<TypeError>([&] { jnp::linalg::norm(m, 3.0); }, "matrix norm");
  expect_error<ShapeError>([&] { jnp::linalg::norm(t, 1.0); }, "(2, 2, 2)");
  expect_error<ShapeError>([&] { jnp::linalg::norm(t, 1.0, std::vector<int64_t>{0, 1, 2}); }, "1 or 2");
  expect_error<ShapeError>([&] { jnp::linalg::norm(m, 1.0, std::vector<int64_t>{2}); }, "out of range");
  expect_error<ShapeError>([&] { jnp::linalg::norm(m, 1.0, std::vector<int64_t>{1, -1}); }, "repeated");
}
