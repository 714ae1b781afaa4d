// Regression tests for the fourth round of tools/conformance.py's findings against JAX 0.10.2 (x64), from the whole
// run (all 12 dtypes). The expected values were printed by JAX in the venv (/work/venv-jax). Each runs eagerly and
// under jit; run the file under each JITX_PLATFORM.
#include <cmath>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

TEST_CASE("conformance: softmax of uint64 is JAX's eager result (deliberate: JAX's jit casts -inf to 2^63)",
          "[conformance_fixes]") {
  // JAX (eager): jax.nn.softmax(np.uint64([[3, 2, 0, 3], [1, 3, 0, 5]])) = [[0, nan, nan, 0], [nan, nan, nan, 0]]
  // (x - max wraps in uint64 -> exp = inf; the maxima give 1 / inf = 0). jax.jit gives NaN everywhere.
  Array x = make_int({3, 2, 0, 3, 1, 3, 0, 5}, {2, 4}, DType::uint64);
  auto r = eager_and_jit([](const std::vector<Array>& v) { return nn::softmax(v[0]); }, {x});
  for (int j = 0; j < 2; ++j) {
    INFO((j ? "jit" : "eager"));
    REQUIRE(r[j].dtype() == DType::float64);
    auto v = r[j].to_vector<double>();
    const bool is_nan[8] = {false, true, true, false, true, true, true, false};
    for (int i = 0; i < 8; ++i) {
      INFO("element " << i << " = " << v[i]);
      if (is_nan[i]) {
        CHECK(std::isnan(v[i]));
      } else {
        CHECK(v[i] == 0.0);
      }
    }
  }
}
