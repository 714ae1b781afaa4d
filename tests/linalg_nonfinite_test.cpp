// jnp.linalg's SVD-based functions on non-finite and empty matrices: JAX replaces a failed LAPACK decomposition by
// NaN everywhere; the cpu backend once read past Eigen's empty results (a segfault found by tools/conformance.py).
// Values from JAX (jax_enable_x64), eager and jit, on whichever platform the suite runs.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
void check_all_nan(const Array& r, const Shape& shape, const std::string& what) {
  INFO(what);
  CHECK(r.shape() == shape);
  for (double v : r.astype(DType::float64).to_vector<double>()) CHECK(std::isnan(v));
}
}  // namespace

TEST_CASE("linalg: svd, pinv and lstsq of a matrix with inf or NaN give NaN, as JAX", "[linalg]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType d : {DType::float32, DType::float64}) {
    INFO(dtype_name(d));
    // a = [[1, 2], [inf, 3]]: jnp.linalg.svd(a, compute_uv=False) = [nan nan]; svd(a)[0], pinv(a) all NaN
    Array a = make({1, 2, inf, 3}, {2, 2}, d);
    for (bool jitted : {false, true}) {
      std::string how = jitted ? " (jit)" : " (eager)";
      auto run = [&](auto f) { return jitted ? jit(f)(a) : f(a); };
      check_all_nan(run([](Array x) { return jnp::linalg::svdvals(x); }), {2}, "svdvals" + how);
      check_all_nan(run([](Array x) { return jnp::linalg::svd(x).U; }), {2, 2}, "svd U" + how);
      check_all_nan(run([](Array x) { return jnp::linalg::svd(x).Vh; }), {2, 2}, "svd Vh" + how);
      check_all_nan(run([](Array x) { return jnp::linalg::pinv(x); }), {2, 2}, "pinv" + how);
      Array b = make({1, 2}, {2}, d);
      check_all_nan(jitted ? jit([](Array x, Array y) { return jnp::linalg::lstsq(x, y).x; })(a, b)
                           : jnp::linalg::lstsq(a, b).x,
                    {2}, "lstsq" + how);
    }
    // A tall matrix with one NaN: svd(..., full_matrices=False)[2] is all NaN.
    Array t = make({nan, 1, 2, 3, 4, 5}, {3, 2}, d);
    check_all_nan(jnp::linalg::svd(t, false).Vh, {2, 2}, "tall svd Vh");
    // A finite matrix next to it in a batch is unaffected: svdvals([[3, 0], [0, 4]]) = [4, 3].
    Array batch = make({1, 2, inf, 3, 3, 0, 0, 4}, {2, 2, 2}, d);
    auto s = jnp::linalg::svdvals(batch).astype(DType::float64).to_vector<double>();
    REQUIRE(s.size() == 4);
    CHECK(std::isnan(s[0]));
    CHECK(std::isnan(s[1]));
    CHECK(s[2] == Approx(4).epsilon(1e-6));
    CHECK(s[3] == Approx(3).epsilon(1e-6));
  }
}

TEST_CASE("linalg: lstsq and pinv of empty matrices have JAX's shapes", "[linalg]") {
  // jnp.linalg.lstsq(zeros((0, 0)), zeros((0,)))[0].shape = (0,); jnp.linalg.pinv(zeros((0, 0))).shape = (0, 0)
  Array e = zeros({0, 0}, DType::float32), b = zeros({0}, DType::float32);
  CHECK(jnp::linalg::lstsq(e, b).x.shape() == Shape{0});
  CHECK(jit([](Array x, Array y) { return jnp::linalg::lstsq(x, y).x; })(e, b).shape() == Shape{0});
  CHECK(jnp::linalg::pinv(e).shape() == Shape{0, 0});
  CHECK(jit([](Array x) { return jnp::linalg::pinv(x); })(e).shape() == Shape{0, 0});
}

TEST_CASE("linalg: svd of a matrix with a zero dimension gives JAX's identities", "[linalg]") {
  // jnp.linalg.svd(zeros((0, 3))) -> U (0, 0), S (0,), Vh = eye(3); svd(zeros((2, 0))) -> U = eye(2), Vh (0, 0)
  for (bool jitted : {false, true}) {
    auto run = [&](Shape s) {
      Array z = zeros(s, DType::float64);
      if (!jitted) return jnp::linalg::svd(z);
      auto r = jit([](Array x) {
        auto f = jnp::linalg::svd(x);
        return std::vector<Array>{f.U, f.S, f.Vh};
      })(z);
      return jnp::linalg::SVDResult{r[0], r[1], r[2]};
    };
    auto w = run({0, 3});
    CHECK(w.U.shape() == Shape{0, 0});
    CHECK(w.S.shape() == Shape{0});
    CHECK(w.Vh.to_vector<double>() == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
    auto t = run({2, 0});
    CHECK(t.U.to_vector<double>() == std::vector<double>{1, 0, 0, 1});
    CHECK(t.Vh.shape() == Shape{0, 0});
  }
}
