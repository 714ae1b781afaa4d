// jax.random.lognormal, rayleigh and double_sided_maxwell against JAX 0.10.2 (x64) draws for two keys: the
// normal/uniform/rademacher bits are JAX's exactly, and exp/log/sqrt are jitx's own (within a few ULP of XLA's), so
// the draws agree to 1e-5 relative (float32) and 1e-12 (float64), eagerly and under jit.
#include <cmath>
#include <functional>

#include "jitx/random.h"
#include "test_util.h"

using namespace jitx;

namespace {
void check_draws(const std::string& what, const std::function<Array(const Array&)>& f, uint32_t seed, DType dtype,
                 const Shape& shape, const std::vector<double>& want) {
  INFO(what);
  Array key = random::PRNGKey(seed);
  for (bool jitted : {false, true}) {
    INFO((jitted ? "under jit" : "eagerly"));
    Array got = jitted ? jit([f](Array k) { return f(k); })(key) : f(key);
    REQUIRE(got.dtype() == dtype);
    REQUIRE(got.shape() == shape);
    std::vector<double> g = got.astype(DType::float64).to_vector<double>();
    double tol = dtype == DType::float64 ? 1e-12 : 1e-5;
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("element " << i << ": got " << g[i] << ", JAX " << want[i]);
      CHECK(std::abs(g[i] - want[i]) <= tol * std::abs(want[i]));
    }
  }
}
}  // namespace

// clang-format off
TEST_CASE("random::lognormal, rayleigh, double_sided_maxwell draw JAX's values", "[random][samplers_more]") {
  check_draws("lognormal f32, key 0", [](const Array& k) { return random::lognormal(k, Array(0.5), Shape{5},
      DType::float32); }, 0, DType::float32, {5},
              {2.2508795261383057, 2.752837896347046, 0.8050932288169861, 0.961453914642334, 1.0920377969741821});
  check_draws("lognormal f64 sigma array, key 0", [](const Array& k) { return random::lognormal(k,
      jnp::array<double>({0.1, 1.0, 2.0}), std::nullopt, DType::float64); }, 0, DType::float64, {3},
              {0.9796261948112769, 0.45622654827539666, 37.7948687227661});
  check_draws("rayleigh f32, key 0", [](const Array& k) { return random::rayleigh(k, Array(2.0), Shape{5},
      DType::float32); }, 0, DType::float32, {5},
              {0.6557566523551941, 0.41620054841041565, 2.9688284397125244, 2.4622910022735596, 2.120969772338867});
  check_draws("rayleigh f64, key 0", [](const Array& k) { return random::rayleigh(k, jnp::array<double>({1.0, 3.0}),
      Shape{2, 2}, DType::float64); }, 0, DType::float64, {2, 2},
              {1.3199855114875836, 5.249759926883046, 0.2656844473613091, 3.1585719159067542});
  check_draws("dsm f32, key 0", [](const Array& k) { return random::double_sided_maxwell(k, Array(1.0), Array(2.0),
      {4}, DType::float32); }, 0, DType::float32, {4},
              {4.091442108154297, -2.1482551097869873, -3.1650609970092773, -3.584834575653076});
  check_draws("dsm f64 arrays, key 0", [](const Array& k) { return random::double_sided_maxwell(k,
      jnp::array<double>({0.0, 10.0}), jnp::array<double>({1.0, 0.5}), {}, DType::float64); }, 0, DType::float64, {2,
      2},
              {1.984612042376157, 8.760896300655842, -1.6334815033244856, 9.008894604138753});
  check_draws("lognormal f32, key 7", [](const Array& k) { return random::lognormal(k, Array(0.5), Shape{5},
      DType::float32); }, 7, DType::float32, {5},
              {1.253096342086792, 2.655745506286621, 0.7725027203559875, 0.9319555759429932, 1.3603585958480835});
  check_draws("lognormal f64 sigma array, key 7", [](const Array& k) { return random::lognormal(k,
      jnp::array<double>({0.1, 1.0, 2.0}), std::nullopt, DType::float64); }, 7, DType::float64, {3},
              {1.1064405305946046, 0.18432386941212447, 0.2207040577688317});
  check_draws("rayleigh f32, key 7", [](const Array& k) { return random::rayleigh(k, Array(2.0), Shape{5},
      DType::float32); }, 7, DType::float32, {5},
              {1.776269793510437, 0.4535268545150757, 3.0913283824920654, 2.5487630367279053, 1.583659052848816});
  check_draws("rayleigh f64, key 7", [](const Array& k) { return random::rayleigh(k, jnp::array<double>({1.0, 3.0}),
      Shape{2, 2}, DType::float64); }, 7, DType::float64, {2, 2},
              {0.5821959811448513, 7.460253891422973, 1.727265590096855, 7.026490837200745});
  check_draws("dsm f32, key 7", [](const Array& k) { return random::double_sided_maxwell(k, Array(1.0), Array(2.0),
      {4}, DType::float32); }, 7, DType::float32, {4},
              {3.4771909713745117, 6.170105457305908, -1.7603445053100586, -3.8724093437194824});
  check_draws("dsm f64 arrays, key 7", [](const Array& k) { return random::double_sided_maxwell(k,
      jnp::array<double>({0.0, 10.0}), jnp::array<double>({1.0, 0.5}), {}, DType::float64); }, 7, DType::float64, {2,
      2},
              {1.2074504775210062, 10.725657862502096, -1.7884215955908989, 9.236858495692926});
}
// clang-format on

TEST_CASE("random::lognormal, rayleigh, double_sided_maxwell: bad arguments name them", "[random][samplers_more]") {
  using Catch::Matchers::Contains;
  Array k = random::PRNGKey(1);
  CHECK_THROWS_WITH(random::lognormal(k, Array(1.0), Shape{3}, DType::int32), Contains("lognormal"));
  CHECK_THROWS_WITH(random::rayleigh(k, jnp::ones({3}), Shape{2}), Contains("rayleigh"));
  CHECK_THROWS_WITH(random::double_sided_maxwell(k, jnp::ones({2}), jnp::ones({3})), Contains("double_sided_maxwell"));
  CHECK_THROWS_AS(random::lognormal(k, Array()), TypeError);
}
