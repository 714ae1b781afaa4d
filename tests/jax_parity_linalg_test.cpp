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
  return testing::make(
             {-1.181, 0.057, 1.047, 0.621, 0.43, -0.058, -0.689, 0.2, -0.552, -1.923, 0.3, 1.1, 0.4, -0.7, 0.25},
             {5, 3}, DType::float64) *
         scale;
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
  check_near(doubles(grad(s)(a)), {-0.6246950475544245, 0.78086880944303, 0.78086880944303, 0.6246950475544243}, 1e-12);
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
  std::vector<double> f32 = {0x1.99999ap-4, 0x1.99999ap-1, 0x1.8p+0, 0x1.199998p+1, 0x1.733332p+1,
                             0x1.ccccccp+1, 0x1.133332p+2, 0x1.4p+2, 0x1.6cccccp+2, 0x1.999998p+2,
                             0x1.c66666p+2, 0x1.f33332p+2, 0x1.1p+3, 0x1.266666p+3, 0x1.3ccccep+3};
  std::vector<double> f64 = {0x1.999999999999ap-4, 0x1.9999999999999p-1, 0x1.8p+0,
                             0x1.1999999999999p+1, 0x1.7333333333333p+1, 0x1.ccccccccccccdp+1,
                             0x1.1333333333332p+2, 0x1.3ffffffffffffp+2, 0x1.6ccccccccccccp+2,
                             0x1.9999999999999p+2, 0x1.c666666666666p+2, 0x1.f333333333332p+2,
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
  const std::vector<double> want_wide = {1.7071097011045853,  0.8797416577254631,   0.5902144712342258,
                                         0.4441594573693074,  0.00451784034950145,  -0.27691783698012196,
                                         -0.2748221903881348, -0.11490715390719666, 0.7723721933379368,
                                         0.7875621183734014,  0.6819153396902434,   0.8727777177681453};
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

TEST_CASE("jnp.linalg's composed functions as JAX: matrix_rank, cond, multi_dot, tensorinv, tensorsolve, norms",
          "[jax_parity][linalg]") {
  // Expected values: JAX 0.10.2 (x64) on the same inputs (LAPACK there, Eigen here: compared to 1e-12 relative).
  Array a = testing::make({1, 2, 3, 4, 5, 6, 7, 8, 10}, {3, 3}, DType::float64);
  Array sing = testing::make({1, 2, 2, 4}, {2, 2}, DType::float64);
  Array b = jnp::arange(12.0, DType::float64).reshape({3, 4}) * 0.25 - 1.0;
  Array c = jnp::arange(8.0, DType::float64).reshape({4, 2}) - 3.0;
  auto near = [](const Array& got, double want) { CHECK(got.item<double>() == Approx(want).epsilon(1e-12)); };
  CHECK(LA::matrix_rank(a).dtype() == DType::int64);
  CHECK(LA::matrix_rank(a).item<int64_t>() == 3);
  CHECK(LA::matrix_rank(sing).item<int64_t>() == 1);
  CHECK(LA::matrix_rank(a, 1.0).item<int64_t>() == 1);  // rtol given: an absolute threshold, as JAX's
  CHECK(LA::matrix_rank(jnp::array({0.0, 1.0})).dtype() == DType::int32);
  near(LA::cond(a), 88.4482799206987);
  near(LA::cond(a, -2.0), 0.011306042366189414);
  near(LA::cond(a, 1.0), 133.0);
  near(LA::cond(a, INFINITY), 158.33333333333334);
  near(LA::cond(a, "fro"), 90.78423749626242);
  CHECK(std::isinf(LA::cond(sing, 1.0).item<double>()));  // NaN from inf * 0 becomes inf, as JAX
  CHECK_THROWS_AS(LA::cond(b, 1.0), ShapeError);
  CHECK(doubles(LA::multi_dot({a, b, c})) == std::vector<double>{15, 32, 37.5, 68, 62.5, 112});
  near(LA::multi_dot({jnp::array({1.0, -1.0, 2.0}), b, jnp::array({0.5, 1.0, -1.0, 2.0})}), 5.0);
  CHECK_THROWS_AS(LA::multi_dot({a, c}), ShapeError);
  Array t =
      jnp::arange(16.0, DType::float64).reshape({4, 2, 2}) + eye(4, 4, 0, DType::float64).reshape({4, 2, 2}) * 3.0;
  check_near(doubles(LA::tensorinv(t, 1)),
             {1.3157894736842097, 0.5087719298245608, 0.035087719298245466, -0.43859649122806965, 0.35087719298245595,
              0.4912280701754384, -0.035087719298245675, -0.22807017543859637, -0.28070175438596484,
              -0.19298245614035084, 0.22807017543859642, -0.017543859649122792, -0.9122807017543855,
              -0.5438596491228066, -0.17543859649122787, 0.5263157894736837},
             1e-13);
  CHECK(LA::tensorinv(t, 1).shape() == Shape{2, 2, 4});
  Array aa = jnp::arange(36.0, DType::float64).reshape({6, 6}) * 0.01 + eye(6, 6, 0, DType::float64);
  check_near(doubles(LA::tensorsolve(aa.reshape({2, 3, 6}), jnp::arange(6.0, DType::float64).reshape({2, 3}))),
             {-0.2767991947659789, 0.3019627579265223, 0.8807247106190235, 1.4594866633115249, 2.0382486160040267,
              2.6170105686965277},
             1e-13);
  Array v = testing::make({3, -4, 0, 1, 2, -2}, {2, 3}, DType::float64);
  near(LA::vector_norm(v), 5.830951894845301);
  CHECK(doubles(LA::vector_norm(v, std::vector<int64_t>{1})) == std::vector<double>{5, 3});
  near(LA::vector_norm(v, std::nullopt, false, INFINITY), 4);
  CHECK(doubles(LA::vector_norm(v, std::vector<int64_t>{0}, true, -INFINITY)) == std::vector<double>{1, 2, 0});
  near(LA::vector_norm(v, std::nullopt, false, 0), 5);
  check_near(doubles(LA::vector_norm(v, std::vector<int64_t>{1}, false, 3)), {4.497941445275415, 2.571281590658235},
             1e-15);
  Array half = LA::vector_norm(v.astype(DType::float32), std::nullopt, false, 0.5);
  CHECK(half.dtype() == DType::float32);
  CHECK(half.item<float>() == 57.160831451416016f);
  near(LA::matrix_norm(a), 17.435595774162696);
  near(LA::matrix_norm(a, false, "nuc"), 18.48453303803646);
  CHECK(LA::matrix_norm(a, true, 2.0).shape() == Shape{1, 1});
  CHECK(doubles(LA::outer(jnp::array({1.0, 2.0}), jnp::array({3.0, 4.0, 5.0}))) ==
        std::vector<double>{3, 4, 5, 6, 8, 10});
  CHECK(doubles(LA::vecdot(b, b)) == std::vector<double>{1.875, 0.875, 7.875});
  CHECK(doubles(LA::vecdot(b, jnp::array({1.0, 2.0, 3.0}).reshape({3, 1}), 0)) == std::vector<double>{2, 3.5, 5, 6.5});
  CHECK(LA::matrix_transpose(b).shape() == Shape{4, 3});
  CHECK(doubles(LA::diagonal(a, 1)) == std::vector<double>{2, 6});
  CHECK(LA::trace(a).item<double>() == 16);
  CHECK(doubles(LA::cross(jnp::array({1.0, 0.0, 0.0}), jnp::array({0.0, 1.0, 0.0}))) == std::vector<double>{0, 0, 1});
  CHECK_THROWS_AS(LA::cross(jnp::array({1.0, 0.0}), jnp::array({0.0, 1.0})), ShapeError);  // jnp.cross takes 2-vectors
  CHECK(doubles(LA::tensordot(a, a, 2)) == std::vector<double>{jnp::sum(a * a).item<double>()});
  // cond's gradient (through the SVD), JAX's values
  check_near(doubles(grad([](const Array& x) { return LA::cond(x); })(a)),
             {-21.263105747668238, 61.06905986714533, -33.10366291490638, 117.33488737984243, -321.4419555756557,
              182.40664087569564, -62.416349587590325, 181.35945587694724, -97.20948420396138},
             1e-11);
}
