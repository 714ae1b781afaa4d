// Linear algebra, means and joins as JAX 0.10.2 (x64) gives them: cases an outside probe found different.
// Expected values are JAX's, written here; each case runs eagerly and under jit where the function takes arrays.
#include "test_util.h"

using namespace jitx;
namespace LA = jnp::linalg;

namespace {
std::vector<double> doubles(const Array& a) { return a.astype(DType::float64).to_vector<double>(); }
void check_near(const std::vector<double>& got, const std::vector<double>& want, double rtol) {
  REQUIRE(got.size() == want.size());
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= rtol * std::max(scale, 1e-300));
  }
}
Array r53(DType d, double scale) {
  return testing::make({-1.181, 0.057, 1.047, 0.621, 0.43, -0.058, -0.689, 0.2, -0.552, -1.923, 0.3, 1.1, 0.4, -0.7,
                        0.25},
                       {5, 3}, DType::float64) * scale;
}
}  // namespace

TEST_CASE("qr of matrices with huge or tiny entries (its norms scaled, as LAPACK's)", "[jax_parity][linalg]") {
  // JAX: |R| / scale of jnp.linalg.qr(r53 * scale), the same for 1e200 and 1e-200 (f64) and 1e25 (f32); jitx gave
  // NaN (overflow) or R = a's rows (underflow).
  const std::vector<double> want = {2.4724587, 0.32153702, 1.17595372, 0, 0.83950161, 0.35589408, 0, 0, 1.0803931};
  for (double scale : {1e200, 1e-200}) {
    Array a = r53(DType::float64, scale);
    for (const Array& r : {LA::qr(a).R, jit([](const Array& x) { return LA::qr(x).R; })(a)}) {
      INFO("scale " << scale);
      check_near(doubles(jnp::abs(r) / scale), want, 1e-7);
    }
    auto qr = LA::qr(a);
    check_near(doubles(jnp::matmul(qr.Q, qr.R) / scale), doubles(a / scale), 1e-14);
    CHECK(jnp::all(jnp::isfinite(lax::linalg::qr(a).r)).item<bool>());
  }
  for (double scale : {1e25, 1e-25}) {
    Array a = r53(DType::float64, scale).astype(DType::float32);
    INFO("f32 scale " << scale);
    check_near(doubles(jnp::abs(LA::qr(a).R).astype(DType::float64) / scale), want, 1e-6);
  }
}

TEST_CASE("pinv's gradient is JAX's formula (finite at repeated singular values)", "[jax_parity][linalg]") {
  auto f = [](const Array& a) { return jnp::sum(LA::pinv(a)); };
  CHECK(doubles(grad(f)(jnp::eye(3, 3, 0, DType::float64))) == std::vector<double>(9, -1.0));
  Array d = testing::make({1, 0, 0, 0, 0, 0, 0, 0, 0}, {3, 3}, DType::float64);
  CHECK(doubles(jit(grad(f))(d)) == std::vector<double>{-1, 1, 1, 1, 0, 0, 1, 0, 0});
  Array wide = testing::make({1, 2, 0.5, 0.3, -1, 2}, {2, 3}, DType::float64);
  auto g = [](const Array& a) { return jnp::sum(jnp::sin(LA::pinv(a))); };
  check_near(doubles(grad(g)(wide)), {-0.15681165, -0.1624392, -0.4059397, -0.05399833, -0.10074759, -0.20224597},
             1e-7);
}

TEST_CASE("matrix_power: n = INT64_MIN ends, n = 3 multiplies as JAX", "[jax_parity][linalg]") {
  Array e = LA::matrix_power(jnp::eye(2, 2, 0, DType::float64), std::numeric_limits<int64_t>::min());
  CHECK(doubles(e) == std::vector<double>{1, 0, 0, 1});
  Array m = testing::make({-0.5, 1.25, 2.0, 0.75, -1.5, 2, 1, 0.5, -0.25}, {3, 3}, DType::float64);
  CHECK(doubles(LA::matrix_power(m, 3)) ==
        std::vector<double>{-1.71875, 6.734375, 3.125, 0.890625, -6.65625, 9.875, 3.53125, 0.5, -0.765625});
}

TEST_CASE("norm's max-based ords: 0 for empty inputs, the tie at zero shared as JAX's initial=0",
          "[jax_parity][linalg]") {
  CHECK(LA::norm(jnp::zeros({0}, DType::float32), INFINITY).item<double>() == 0.0);
  CHECK(LA::norm(jnp::zeros({0, 3}, DType::float32), 2.0).item<double>() == 0.0);
  CHECK(LA::norm(jnp::zeros({0, 0}, DType::float32), 1.0).item<double>() == 0.0);
  auto f = [](const Array& x) { return LA::norm(x, INFINITY); };
  check_near(doubles(grad(f)(jnp::zeros({3}, DType::float64))), {1.0 / 6, 1.0 / 6, 1.0 / 6}, 1e-15);
  // Nonzero inputs are unchanged: the largest magnitude takes the gradient.
  CHECK(doubles(grad(f)(testing::make({1, -3, 2}, DType::float64))) == std::vector<double>{0, -1, 0});
}

TEST_CASE("solve promotes its operands jointly (float32 with int64 is float32)", "[jax_parity][linalg]") {
  Array a = jnp::eye(2, 2, 0, DType::float32) * 2.0f;
  Array b = jnp::array({int64_t{1}, int64_t{2}});
  Array x = LA::solve(a, b);
  CHECK(x.dtype() == DType::float32);
  CHECK(doubles(x) == std::vector<double>{0.5, 1.0});
}

TEST_CASE("mean and var multiply by the reciprocal as XLA's simplifier makes JAX's, eager and jit alike",
          "[jax_parity][reductions]") {
  Array x = testing::make({1, 2, 7, 4, 5}, DType::float64);
  auto mean = [](const Array& a) { return jnp::mean(a); };
  CHECK(mean(x).item<double>() == 3.8000000000000003);
  CHECK(jit(mean)(x).item<double>() == 3.8000000000000003);
  auto var1 = [](const Array& a) { return jnp::var(a, {}, false, 1); };
  CHECK(var1(x).item<double>() == 5.699999999999999);
  CHECK(jit(var1)(x).item<double>() == 5.699999999999999);
  CHECK(jnp::mean(x.astype(DType::float32)).item<float>() == 3.799999952316284f);
}

TEST_CASE("concatenate and stack keep JAX's weak type (an int32 array with a weak float is weak)",
          "[jax_parity][weak]") {
  Array weak = lax::broadcast_in_dim(Array(1.5), {1}, {});
  REQUIRE(weak.weak_type());
  Array c = jnp::concatenate({jnp::array({1, 2}), weak});
  CHECK(c.dtype() == DType::float64);
  CHECK(c.weak_type());
  Array s = jnp::stack({jnp::array(int32_t{1}), Array(1.5)});
  CHECK(s.dtype() == DType::float64);
  CHECK(s.weak_type());
  CHECK_FALSE(jnp::concatenate({jnp::array({1.0f}), jnp::array({2.0f})}).weak_type());
}

TEST_CASE("svd with full_matrices of a square matrix has JAX's derivative", "[jax_parity][linalg]") {
  Array a = testing::make({1, 2, 3, 5}, {2, 2}, DType::float64);
  auto s = [](const Array& x) { return jnp::sum(LA::svd(x, true).S); };
  check_near(doubles(grad(s)(a)), {-0.6246950475544245, 0.78086880944303, 0.78086880944303, 0.6246950475544243},
             1e-12);
  auto u = [](const Array& x) { return jnp::sum(jnp::abs(LA::svd(x, true).U)); };
  check_near(doubles(grad(u)(a)),
             {0.08589923231767653, 0.14975352890780777, -0.03724833967757652, -0.05473225422011247}, 1e-10);
  // A non-square one is still refused, as JAX refuses it.
  auto wide = [](const Array& x) { return jnp::sum(LA::svd(x, true).S); };
  CHECK_THROWS_WITH(grad(wide)(testing::make({1, 2, 3, 4, 5, 7}, {2, 3}, DType::float64)),
                    Catch::Contains("non-square"));
}

TEST_CASE("arange of floats fills as NumPy (first two values in the dtype, then first + i * delta)",
          "[jax_parity][arange]") {
  // JAX 0.10.2: jnp.arange(0.1, 10.0, 0.7, dtype) for float32 and float64 (np.arange's fill), as hex floats.
  std::vector<double> f32 = {0x1.99999ap-4,  0x1.99999ap-1,  0x1.8p+0,      0x1.199998p+1, 0x1.733332p+1,
                             0x1.ccccccp+1, 0x1.133332p+2, 0x1.4p+2,      0x1.6cccccp+2, 0x1.999998p+2,
                             0x1.c66666p+2, 0x1.f33332p+2, 0x1.1p+3,      0x1.266666p+3, 0x1.3ccccep+3};
  std::vector<double> f64 = {0x1.999999999999ap-4, 0x1.9999999999999p-1, 0x1.8p+0,             0x1.1999999999999p+1,
                             0x1.7333333333333p+1, 0x1.ccccccccccccdp+1, 0x1.1333333333332p+2, 0x1.3ffffffffffffp+2,
                             0x1.6ccccccccccccp+2, 0x1.9999999999999p+2, 0x1.c666666666666p+2, 0x1.f333333333332p+2,
                             0x1.0ffffffffffffp+3, 0x1.2666666666666p+3, 0x1.3ccccccccccccp+3};
  CHECK(doubles(jnp::arange(0.1, 10.0, 0.7, DType::float32)) == f32);
  CHECK(doubles(jnp::arange(0.1, 10.0, 0.7, DType::float64)) == f64);
  // The last of arange(0, 1, 0.1) in float32 is 0.90000004 (0x1.ccccce p-1), not 0.9f.
  CHECK(doubles(jnp::arange(0.0, 1.0, 0.1, DType::float32)).back() == 0x1.cccccep-1);
  CHECK(doubles(jnp::arange(1.1, 3.0, 0.3, DType::float16)) ==
        std::vector<double>{1.099609375, 1.400390625, 1.7001953125, 2.0, 2.30078125, 2.599609375, 2.900390625});
  CHECK(doubles(jnp::arange(-1.0, 1.0, 0.3, DType::bfloat16)) ==
        std::vector<double>{-1.0, -0.69921875, -0.400390625, -0.10009765625, 0.2001953125, 0.5, 0.80078125});
}

TEST_CASE("qr's derivative for wide matrices and complete tall ones is JAX's (was refused)", "[jax_parity][linalg]") {
  // JAX 0.10.2: jax.grad of sum(Wq * Q) + sum(Wr * R) for jnp.linalg.qr(A, "complete") (4x3) and qr(A.T) (3x4),
  // with Wq = arange(16).reshape(4, 4) / 7 - 1, Wr = arange(12).reshape(4, 3) / 5 - 1 (wide: / 4 - 1, / 6 - 1).
  Array a = testing::make({0.7, -1.2, 0.3, 0.25, 0.9, -0.6, -1.1, 0.4, 0.8, 0.5, 0.35, -0.45}, {4, 3}, DType::float64);
  auto weights = [](int64_t r, int64_t c, double div) {
    return jnp::arange(double(r * c), DType::float64).reshape({r, c}) / div - 1;
  };
  auto tall = [&](const Array& x) {
    auto f = LA::qr(x, "complete");
    return jnp::sum(weights(4, 4, 7) * f.Q) + jnp::sum(weights(4, 3, 5) * f.R);
  };
  auto wide = [&](const Array& x) {
    auto f = LA::qr(x);
    return jnp::sum(weights(3, 3, 4) * f.Q) + jnp::sum(weights(3, 4, 6) * f.R);
  };
  const std::vector<double> want_tall = {1.7322868547078327,  1.3939373797505814,  1.2589628440000036,
                                         3.239269065523227,   2.948937158740867,   3.2416863983587167,
                                         -1.0335125655454769, -0.6665039922733885, -1.0175978527432987,
                                         -3.481311581730405,  -2.6224879405649246, -3.919755141721286};
  const std::vector<double> want_wide = {1.7071097011045853, 0.8797416577254631, 0.5902144712342258, 0.4441594573693074,
                                         0.00451784034950145, -0.27691783698012196, -0.2748221903881348,
                                         -0.11490715390719666, 0.7723721933379368, 0.7875621183734014,
                                         0.6819153396902434, 0.8727777177681453};
  check_near(doubles(grad(tall)(a)), want_tall, 1e-12);
  check_near(doubles(jit(grad(tall))(a)), want_tall, 1e-12);
  Array at = jnp::transpose(a);
  check_near(doubles(grad(wide)(at)), want_wide, 1e-12);
  check_near(doubles(jit(grad(wide))(at)), want_wide, 1e-12);
}

TEST_CASE("lax.linalg.lu factors non-square matrices as JAX (pivots min(m, n), perm m) with JAX's derivative",
          "[jax_parity][linalg]") {
  // JAX 0.10.2: lax.linalg.lu(W) for W 3x4 and W.T, and jax.grad of sum(w * lu) with w = arange(12) / 3 - 1.
  Array w = testing::make({0.3, -1.2, 2.0, 0.7, 1.5, 0.4, -0.6, 0.9, -0.8, 2.2, 0.1, -1.4}, {3, 4}, DType::float64);
  struct Want {
    Array x;
    std::vector<double> lu, grad;
    std::vector<int32_t> piv, perm;
  };
  const std::vector<Want> cases = {
      {w,
       {1.5, 0.4, -0.6, 0.9, -0.5333333333333333, 2.4133333333333336, -0.22, -0.9199999999999999, 0.19999999999999998,
        -0.5303867403314917, 2.0033149171270717, 0.03204419889502763},
       {-0.10435850214855716, 2.0580110497237567, 2.333333333333334, 2.6666666666666665, -1.5125813778125978,
        -0.1405577092003027, 0.3933701657458565, 0.9321055862492328, -1.00022452170433, 1.7582084388958414,
        2.237569060773481, 2.7476979742173113},
       {1, 2, 2},
       {1, 2, 0}},
      {jnp::transpose(w),
       {2.0, -0.6, 0.1, 0.15, 1.59, -0.8150000000000001, -0.6, 0.02515723270440254, 2.280503144654088, 0.35,
        0.6981132075471699, -0.3797573083287368},
       {-0.33723115322400293, -1.157897172626863, -0.20275997128111903, 0.9706102698031313, 1.9204891104417288,
        2.110729266587749, -0.9136082579200285, -0.06409666867036137, 0.5542518130450745, 1.561597407958594,
        2.0668801261793175, 1.1693325979040263},
       {2, 2, 2},
       {2, 0, 1, 3}},
  };
  for (const auto& c : cases) {
    INFO("shape " << c.x.shape()[0] << "x" << c.x.shape()[1]);
    Array wt = jnp::arange(12.0, DType::float64).reshape(c.x.shape()) / 3.0 - 1.0;
    auto loss = [&](const Array& x) { return jnp::sum(wt * lax::linalg::lu(x).lu); };
    for (bool jitted : {false, true}) {
      auto f = lax::linalg::lu(c.x);
      auto j = jit([](const Array& x) {
        auto r = lax::linalg::lu(x);
        return std::vector<Array>{r.lu, r.pivots, r.permutation};
      })(c.x);
      const Array& lu = jitted ? j[0] : f.lu;
      check_near(doubles(lu), c.lu, 1e-14);
      CHECK((jitted ? j[1] : f.pivots).to_vector<int32_t>() == c.piv);
      CHECK((jitted ? j[2] : f.permutation).to_vector<int32_t>() == c.perm);
      check_near(doubles(jitted ? jit(grad(loss))(c.x) : grad(loss)(c.x)), c.grad, 1e-12);
    }
    CHECK(lax::linalg::lu(c.x.astype(DType::float32)).lu.dtype() == DType::float32);
  }
}

TEST_CASE("lax.linalg dtypes as JAX: cholesky/eigh promote integers only through symmetrize_input, qr refuses them",
          "[jax_parity][linalg]") {
  // JAX 0.10.2 (x64): symmetrize_input computes (x + x^T) / 2, a true division (int32 -> float32, int64 ->
  // float64, bool -> weak float64); without it, and in qr, lu, svd and triangular_solve, integers are refused.
  Array i32 = jnp::array({{4, 1}, {1, 3}});
  CHECK(lax::linalg::cholesky(i32).dtype() == DType::float32);
  CHECK(lax::linalg::cholesky(i32.astype(DType::int64)).dtype() == DType::float64);
  Array b = lax::linalg::cholesky(jnp::array({{true, false}, {false, true}}));
  CHECK(b.dtype() == DType::float64);
  CHECK(b.weak_type());
  CHECK(lax::linalg::eigh(i32).w.dtype() == DType::float32);
  CHECK(lax::linalg::eigh(i32.astype(DType::uint8)).v.dtype() == DType::float32);
  CHECK(lax::linalg::eigh(jnp::array({{true, false}, {false, true}})).w.weak_type());
  CHECK(doubles(lax::linalg::cholesky(i32)) == std::vector<double>{2, 0, 0.5, std::sqrt(2.75f)});
  CHECK_THROWS_AS(lax::linalg::cholesky(i32, false), TypeError);
  CHECK_THROWS_AS(lax::linalg::eigh(i32, true, false), TypeError);
  CHECK_THROWS_AS(lax::linalg::qr(i32), TypeError);
  CHECK_THROWS_AS(lax::linalg::lu(i32), TypeError);
  CHECK_THROWS_AS(lax::linalg::svd(i32), TypeError);
  CHECK(jnp::linalg::qr(i32).R.dtype() == DType::float32);  // jnp promotes
}
