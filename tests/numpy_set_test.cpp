// jnp's unique values (numpy_set.h: unique, unique_all/values/counts/inverse, union1d) against JAX 0.10.2 (x64, CPU):
//   x = jnp.array([[3., 1., 2.], [1., nan, 3.], [nan, 0., -0.]], jnp.float32)
//   jnp.unique(x, return_index=True, return_inverse=True, return_counts=True), with equal_nan=False, size=8 (and
//   fill_value=-5), size=3; jnp.unique_all(jnp.array([3., 1., 2., 2., nan, nan])); jnp.union1d(...).
#include "jitx/numpy_set.h"

#include <cmath>

#include "exact_check.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
using Catch::Matchers::Contains;

namespace {
const double kNaN = NAN;
Array sample() { return array<float>({3, 1, 2, 1, NAN, 3, NAN, 0, -0.0f}, {3, 3}); }
}  // namespace

TEST_CASE("jnp::unique gives JAX's values, first indices, inverse and counts", "[jnp][unique]") {
  for (bool jitted : {false, true}) {
    INFO((jitted ? "under jit (size given)" : "eagerly"));
    auto all = [&](std::optional<int64_t> size, std::optional<Array> fill, bool equal_nan) {
      if (!jitted) return jnp::unique_all(sample(), size, fill, equal_nan);
      auto f = jit([=](Array v) {
        auto r = jnp::unique_all(v, size, fill, equal_nan);
        return std::make_tuple(r.values, r.indices, r.inverse, r.counts);
      });
      auto [v, i, inv, c] = f(sample());
      return jnp::UniqueResult{v, i, inv, c};
    };
    if (!jitted) {
      auto r = all(std::nullopt, std::nullopt, true);
      check_exact(r.values, DType::float32, {5}, {0, 1, 2, 3, kNaN});
      check_exact(r.indices, DType::int64, {5}, {7, 1, 2, 0, 4});
      check_exact(r.inverse, DType::int64, {3, 3}, {3, 1, 2, 1, 4, 3, 4, 0, 0});
      check_exact(r.counts, DType::int64, {5}, {2, 2, 1, 2, 2});
      check_exact(jnp::unique(sample(), std::nullopt, std::nullopt, false), DType::float32, {6},
                 {0, 1, 2, 3, kNaN, kNaN});
    }
    // size pads with the smallest value (its index, count 0), or with fill_value; a smaller size truncates.
    auto r8 = all(8, std::nullopt, true);
    check_exact(r8.values, DType::float32, {8}, {0, 1, 2, 3, kNaN, 0, 0, 0});
    auto f8 = all(8, Array(-5), true);
    check_exact(f8.values, DType::float32, {8}, {0, 1, 2, 3, kNaN, -5, -5, -5});
    check_exact(f8.indices, DType::int64, {8}, {7, 1, 2, 0, 4, 7, 7, 7});
    check_exact(f8.inverse, DType::int64, {3, 3}, {3, 1, 2, 1, 4, 3, 4, 0, 0});
    check_exact(f8.counts, DType::int64, {8}, {2, 2, 1, 2, 2, 0, 0, 0});
    auto r3 = all(3, std::nullopt, true);
    check_exact(r3.values, DType::float32, {3}, {0, 1, 2});
    check_exact(r3.counts, DType::int64, {3}, {2, 2, 1});
  }
  // Integers and bools keep their dtype; jit with a size pads with the minimum ([2, 2, 7, 1] -> [1, 2, 7, 1]).
  auto [v, c] = jnp::unique_counts(array<int32_t>({2, 2, 7, 1}));
  check_exact(v, DType::int32, {3}, {1, 2, 7});
  check_exact(c, DType::int64, {3}, {1, 2, 1});
  check_exact(jit([](Array a) { return jnp::unique(a, 4); })(array<int32_t>({2, 2, 7, 1})), DType::int32, {4},
             {1, 2, 7, 1});
  check_exact(jnp::unique(array<bool>({true, false, true})), DType::bool_, {2}, {0, 1});
  // The array API's forms: every NaN its own value.
  auto ua = jnp::unique_all(array<double>({3, 1, 2, 2, kNaN, kNaN}));
  check_exact(ua.values, DType::float64, {5}, {1, 2, 3, kNaN, kNaN});
  check_exact(ua.indices, DType::int64, {5}, {1, 2, 0, 4, 5});
  check_exact(ua.inverse, DType::int64, {6}, {2, 0, 1, 1, 3, 4});
  check_exact(ua.counts, DType::int64, {5}, {1, 2, 1, 1, 1});
  auto [iv, inv] = jnp::unique_inverse(array<int32_t>({5, 3, 5}));
  check_exact(iv, DType::int32, {2}, {3, 5});
  check_exact(inv, DType::int64, {3}, {1, 0, 1});
  check_exact(jnp::unique_values(array<float>({kNaN, 1, kNaN})), DType::float32, {3}, {1, kNaN, kNaN});
  // union1d promotes and dedupes NaNs: [3, 1, 2] with [2.5, 5] -> f64 [1, 2, 2.5, 3, 5].
  check_exact(jnp::union1d(array<int64_t>({3, 1, 2}), array<double>({2.5, 5})), DType::float64, {5}, {1, 2, 2.5, 3, 5});
  check_exact(jnp::union1d(array<double>({3, 1, 2, 2, kNaN, kNaN}), array<double>({2, 5, kNaN, 7}), 7), DType::float64,
             {7}, {1, 2, 3, 5, 7, kNaN, 1});
}

TEST_CASE("jnp::unique: empty inputs, and what needs a size under jit", "[jnp][unique]") {
  auto e = jnp::unique_all(zeros({0}), std::nullopt, std::nullopt, true);
  check_exact(e.values, DType::float32, {0}, {});
  check_exact(e.indices, DType::int64, {0}, {});
  check_exact(e.counts, DType::int64, {0}, {});
  check_exact(jnp::unique(zeros({0, 3}), 2, Array(7)), DType::float32, {2}, {7, 7});
  CHECK_THROWS_WITH(jnp::unique(zeros({0}), 2), Contains("[unique]") && Contains("fill_value"));
  CHECK_THROWS_AS(jit([](Array a) { return jnp::unique(a); })(array<int32_t>({2, 2, 7, 1})), TracerError);
  CHECK_THROWS_WITH(jit([](Array a) { return jnp::unique(a); })(array<int32_t>({1})),
                    Contains("[unique]") && Contains("size="));
  CHECK_THROWS_WITH(jnp::unique(sample(), 2, array<float>({1, 2})), Contains("fill_value must be a scalar"));
}
