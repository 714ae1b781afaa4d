// Regression tests for the third round of tools/conformance.py's findings against JAX 0.10.2 (x64), from the whole
// run (all 12 dtypes): the inexact dtype of 64-bit integers (float64, JAX's to_inexact_dtype) in jnp.logaddexp and
// in the masked (where=) mean/var. The expected values were printed by JAX in the venv (/work/venv-jax). Each runs
// eagerly and under jit; run the file under each JITX_PLATFORM.
#include <cmath>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

TEST_CASE("conformance: logaddexp of int64/uint64 is float64, of narrower ints float32 (JAX x64)",
          "[conformance_fixes]") {
  auto f = [](const std::vector<Array>& v) { return jnp::logaddexp(v[0], v[1]); };
  // JAX: jnp.logaddexp(np.int64([3, 40]), np.int64([3, -2])) = [3.6931471805599454, 40.0] (float64)
  both_close(f, {make_int({3, 40}, {2}, DType::int64), make_int({3, -2}, {2}, DType::int64)},
             {3.6931471805599454, 40.0}, DType::float64, "logaddexp int64");
  both_close(f, {make_int({3, 5}, {2}, DType::uint64), make_int({3, 5}, {2}, DType::uint64)},
             {3.6931471805599454, 5.693147180559945}, DType::float64, "logaddexp uint64");
  both_close(f, {make_int({3, 5}, {2}, DType::int32), make_int({3, 5}, {2}, DType::int32)},
             {3.6931472, 5.693147}, DType::float32, "logaddexp int32");
}

TEST_CASE("conformance: mean/var with where= of int64/uint64 are float64 (JAX x64)", "[conformance_fixes]") {
  jnp::ReduceOptions o;
  o.where = make_int({1, 1, 0}, {3}, DType::bool_);
  auto mean = [o](const std::vector<Array>& v) { return jnp::mean(v[0], {0}, false, o); };
  auto var = [o](const std::vector<Array>& v) { return jnp::var(v[0], {0}, false, 0, o); };
  // JAX: jnp.mean(np.uint64([3, 4, 100]), where=[True, True, False]) = 3.5 (float64); jnp.var(...) = 0.25
  both_close(mean, {make_int({3, 4, 100}, {3}, DType::uint64)}, {3.5}, DType::float64, "mean uint64");
  both_close(mean, {make_int({3, 4, 100}, {3}, DType::int64)}, {3.5}, DType::float64, "mean int64");
  both_close(var, {make_int({3, 4, 100}, {3}, DType::uint64)}, {0.25}, DType::float64, "var uint64");
  both_close(mean, {make_int({3, 4, 100}, {3}, DType::int32)}, {3.5}, DType::float32, "mean int32");
}

TEST_CASE("conformance: lax::abs refuses unsigned integers as jax.lax.abs (jnp::abs returns them)",
          "[conformance_fixes]") {
  for (DType d : {DType::uint8, DType::uint32, DType::uint64}) {
    Array x = make_int({1, 200}, {2}, d);
    CHECK_THROWS_AS(lax::abs(x), TypeError);
    CHECK_THROWS_AS(jit([](const Array& a) { return lax::abs(a); })(x), TypeError);
    both_exact([](const std::vector<Array>& v) { return jnp::abs(v[0]); }, {x}, {1, 200}, d, "jnp::abs unsigned");
  }
  both_exact([](const std::vector<Array>& v) { return lax::abs(v[0]); }, {make_int({-3, 4}, {2}, DType::int8)},
             {3, 4}, DType::int8, "lax::abs int8");
}

TEST_CASE("conformance: nn::sparse_plus of unsigned ints, squareplus of int64 (JAX x64)", "[conformance_fixes]") {
  // JAX: jax.nn.sparse_plus(np.uint8([0, 1, 2, 255])) = [0.25, 1, 2, 255] (float64; was all 0: -1 wrapped to 255)
  both_close([](const std::vector<Array>& v) { return nn::sparse_plus(v[0]); },
             {make_int({0, 1, 2, 255}, {4}, DType::uint8)}, {0.25, 1, 2, 255}, DType::float64, "sparse_plus uint8");
  both_close([](const std::vector<Array>& v) { return nn::sparse_plus(v[0]); },
             {make_int({-3, 0, 1, 5}, {4}, DType::int8)}, {0, 0.25, 1, 5}, DType::float64, "sparse_plus int8");
  // JAX: jax.nn.squareplus(np.int64([3, -4])) = [3.302775637731995, 0.2360679774997898] (float64, was float32)
  both_close([](const std::vector<Array>& v) { return nn::squareplus(v[0]); },
             {make_int({3, -4}, {2}, DType::int64)}, {3.302775637731995, 0.2360679774997898}, DType::float64,
             "squareplus int64");
}
