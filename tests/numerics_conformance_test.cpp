// Regression tests for what tools/conformance.py found against JAX 0.10.2 (x64): integer power and fmod, lax.pow's
// dtype check, logsumexp of integer extremes, and the interpreter's f64 digamma / erf_inv. JAX's values were pasted
// from the venv; digamma and erf_inv from mpmath at 200 bits. Runs eagerly and under jit; run the file under each
// JITX_PLATFORM.
#include <cmath>
#include <functional>
#include <limits>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
using Fn = std::function<Array(const std::vector<Array>&)>;

Array run(const Fn& f, const std::vector<Array>& args, bool jitted) {
  return jitted ? jit([f](std::vector<Array> a) { return f(a); })(args) : f(args);
}

void check_ints(const Fn& f, const std::vector<Array>& args, const std::vector<int64_t>& want, DType d,
                const char* what) {
  for (int jitted = 0; jitted < 2; ++jitted) {
    Array r = run(f, args, jitted);
    INFO(what << (jitted ? " (jit)" : " (eager)"));
    CHECK(r.dtype() == d);
    CHECK(r.to_vector<int64_t>() == want);
  }
}

void check_close(const Fn& f, const std::vector<Array>& args, const std::vector<double>& want, double rtol,
                 const char* what) {
  for (int jitted = 0; jitted < 2; ++jitted) {
    auto g = run(f, args, jitted).to_vector<double>();
    REQUIRE(g.size() == want.size());
    for (size_t i = 0; i < g.size(); ++i) {
      INFO(what << (jitted ? " (jit)" : " (eager)") << " element " << i << ": got " << g[i] << ", want " << want[i]);
      CHECK(std::fabs(g[i] - want[i]) <= rtol * std::fabs(want[i]));
    }
  }
}
}  // namespace

TEST_CASE("conformance: jnp.power of integers is JAX's binary exponentiation (low 6 bits of the exponent)",
          "[conformance_fixes]") {
  const int64_t imin = std::numeric_limits<int32_t>::min();
  std::vector<int64_t> b{-7, 2, 2, 0, 0, 3, -1, 5, 2, -2, 1, 7}, e{imin, -1, 31, 0, 5, 64, 3, -3, 65, 7, -100, 63};
  Fn pw = [](const std::vector<Array>& a) { return jnp::power(a[0], a[1]); };
  // JAX: jnp.power(b, e) in int32 (pow(-7, INT32_MIN) = 1 and pow(2, -1) = 0: only bits 0-5 count).
  check_ints(pw, {make_int(b, DType::int32), make_int(e, DType::int32)},
             {1, 0, -2147483648, 1, 0, 1, -1, 1606239189, 2, -128, 1, 1075496887}, DType::int32, "int32");
  std::vector<int64_t> e8{-128, -1, 31, 0, 5, 64, 3, -3, 65, 7, -100, 63};
  check_ints(pw, {make_int(b, DType::int8), make_int(e8, DType::int8)}, {1, 0, 0, 1, 0, 1, -1, -43, 2, -128, 1, -73},
             DType::int8, "int8");
  check_ints(pw, {make_int({3, 2, 0, 255, 7}, DType::uint8), make_int({200, 9, 0, 2, 64}, DType::uint8)},
             {161, 0, 1, 1, 1}, DType::uint8, "uint8");
  check_ints(pw, {make_int({3, -2, 10, 2}, DType::int64), make_int({40, 63, -1, 64}, DType::int64)},
             {-6289078614652622815, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min(), 1},
             DType::int64, "int64");
}

TEST_CASE("conformance: lax.pow takes a float base only, as JAX's", "[conformance_fixes]") {
  Array i = make_int({2, 3}, DType::int32);
  CHECK_THROWS_AS(lax::pow(i, i), TypeError);
  CHECK_THROWS_AS(jit([](Array a) { return lax::pow(a, a); })(i), TypeError);
  CHECK_THROWS_AS(lax::pow(make_int({1}, DType::bool_), make_int({1}, DType::bool_)), TypeError);
  // A float base still works (an integer exponent needs jnp::power in jitx; JAX's lax.pow also takes one).
  check_close([](const std::vector<Array>& a) { return lax::pow(a[0], a[1]); },
              {make({2.0, 3.0}, DType::float32), make({3.0, -1.0}, DType::float32)}, {8.0, 1.0 / 3}, 1e-7, "f32^f32");
}

TEST_CASE("conformance: integer fmod by zero is 0, as JAX's (it divides by 1 there)", "[conformance_fixes]") {
  Fn fm = [](const std::vector<Array>& a) { return jnp::fmod(a[0], a[1]); };
  check_ints(fm, {make_int({7, -7, 0, std::numeric_limits<int32_t>::min(), 5}, DType::int32),
                  make_int({0, 0, 0, -1, 3}, DType::int32)},
             {0, 0, 0, 0, 2}, DType::int32, "int32");
  check_ints(fm, {make_int({7, 200}, DType::uint8), make_int({0, 0}, DType::uint8)}, {0, 0}, DType::uint8, "uint8");
  // bool % bool is not an integer result type in JAX: XLA's rem, so fmod(True, False) = 1 (int32 in jitx and JAX).
  check_ints(fm, {make_int({1, 1, 0}, DType::bool_), make_int({0, 1, 0}, DType::bool_)}, {1, 0, 0}, DType::int32,
             "bool");
}

TEST_CASE("conformance: logsumexp of integer extremes converts to float first (no int32 wrap-around)",
          "[conformance_fixes]") {
  Fn lse = [](const std::vector<Array>& a) { return nn::logsumexp(a[0]); };
  // JAX: 2147483648.0 in float32 (before: inf, from INT32_MIN - INT32_MAX wrapping in int32).
  Array x = make_int({2147483647, 2147483646, std::numeric_limits<int32_t>::min(), 5}, DType::int32);
  for (int jitted = 0; jitted < 2; ++jitted) {
    Array r = run(lse, {x}, jitted);
    CHECK(r.dtype() == DType::float32);
    CHECK(r.to_vector<double>() == std::vector<double>{2147483648.0});
  }
  // int64: float64, JAX 4.61168602e+18 (= 2^62 + log 2, rounded).
  check_close(lse, {make_int({int64_t{1} << 62, int64_t{1} << 62, std::numeric_limits<int64_t>::min()},
                             DType::int64)},
              {4.611686018427387904e18}, 1e-16, "int64");
}

TEST_CASE("conformance: f64 digamma and erf_inv within a few ULP of mpmath on every platform",
          "[conformance_fixes]") {
  // The interpreter's double versions were up to 179 ULP (digamma(1)) and 24 ULP (erf_inv(0.9999)) off.
  const double rtol = 4 * std::numeric_limits<double>::epsilon();
  check_close([](const std::vector<Array>& a) { return lax::digamma(a[0]); },
              {make({1.0, -3.7377328417591955, 0.5, -0.5, 1e-3, 30.5, -6.975092323916503}, DType::float64)},
              {-0.57721566490153286061, -1.4619963852357004081, -1.9635100260214234794, 0.036489973978576520559,
               -1000.5755719318102797, 3.4012436689616610844, -38.053969525134301},
              rtol, "digamma");
  check_close([](const std::vector<Array>& a) { return lax::erf_inv(a[0]); },
              {make({0.9999, -0.9999, 0.5, 1e-10, 0.999999999, -0.3}, DType::float64)},
              {2.7510639057120796917, -2.7510639057120796917, 0.47693627620446987338, 8.8622692545275804594e-11,
               4.3200053881053620459, -0.27246271472675434502},
              rtol, "erf_inv");
}

TEST_CASE("conformance: nn.standardize and layer_norm of int32 are float32, as JAX's", "[conformance_fixes]") {
  Array x = make_int({1, 2, 3, 4}, DType::int32);
  const double sd = std::sqrt(1.25 + 1e-5);
  std::vector<double> want{-1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd};
  for (int jitted = 0; jitted < 2; ++jitted) {
    Array a = run([](const std::vector<Array>& v) { return nn::standardize(v[0]); }, {x}, jitted);
    Array b = run([](const std::vector<Array>& v) { return nn::layer_norm(v[0]); }, {x}, jitted);
    CHECK(a.dtype() == DType::float32);
    CHECK(b.dtype() == DType::float32);
  }
  check_close([](const std::vector<Array>& v) { return nn::standardize(v[0]); }, {x}, want, 3e-7, "standardize");
  check_close([](const std::vector<Array>& v) { return nn::layer_norm(v[0]); }, {x}, want, 3e-7, "layer_norm");
}

TEST_CASE("conformance: nonzero/flatnonzero(size=) of an empty array give zeros, as JAX's", "[conformance_fixes]") {
  Array e = make({}, DType::float32);
  check_ints([](const std::vector<Array>& v) { return jnp::nonzero(v[0], 5, -1).at(0); }, {e}, {0, 0, 0, 0, 0},
             DType::int64, "nonzero");
  check_ints([](const std::vector<Array>& v) { return jnp::flatnonzero(v[0], 3, 7); }, {e}, {0, 0, 0}, DType::int64,
             "flatnonzero");
  // A non-empty x still pads with fill_value (JAX: [-1, -1, -1] for three zeros).
  check_ints([](const std::vector<Array>& v) { return jnp::nonzero(v[0], 3, -1).at(0); },
             {make({0.0, 0.0, 0.0}, DType::float32)}, {-1, -1, -1}, DType::int64, "nonzero of zeros");
}

TEST_CASE("conformance: the variance of a constant column is exactly 0 under jit (no FMA across a broadcast)",
          "[conformance_fixes]") {
  // The mean (sum * (1/3)) rounds to exactly 1; fused into each element's subtraction it would not, and the
  // variance came out 2^-50 (JAX: 0). Bool and f32 inputs, 3 rows (1/3 is inexact), columns of equal values.
  std::vector<uint8_t> bools{0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0};
  Array b = array(reinterpret_cast<const bool*>(bools.data()), {3, 4});
  Array f = b.astype(DType::float32) + 0.5f;  // 0.5 and 1.5: the column sums are exact
  for (const Array& x : {b, f}) {
    auto var = jit([](const Array& v) { return jnp::var(v, {0}); })(x).to_vector<float>();
    auto sd = jit([](const Array& v) { return jnp::std(v, {0}); })(x).to_vector<float>();
    CHECK(var[1] == 0.0f);  // column 1 is 1, 1, 1 (f: 1.5 three times)
    CHECK(sd[1] == 0.0f);
    CHECK(var[0] == Approx(2.0 / 9.0).epsilon(1e-6));
  }
}
