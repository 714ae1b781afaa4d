// The jit and eager executable caches stay under their configured bounds, evicting the least recently used entry.
#include "compile_log.h"
#include "dispatch/eager.h"
#include "test_util.h"

using namespace jitx;
using Catch::Matchers::Contains;

namespace {
/// Sets a config field for a scope and restores it however the scope is left.
struct SizeSetting {
  size_t& field;
  size_t was;
  SizeSetting(size_t& f, size_t v) : field(f), was(f) { f = v; }
  ~SizeSetting() { field = was; }
};
}  // namespace

TEST_CASE("the jit cache keeps at most jit_cache_size signatures, least recently used out first", "[jit][cache]") {
  SizeSetting bound(config().jit_cache_size, 2);
  testing::CompileLogCapture log;
  auto f = jit([](Array x) { return x * 2 + 1; });
  auto in = [](int64_t n) { return arange(0, static_cast<double>(n), 1, float32); };
  CHECK(f(in(3)).template to_vector<float>() == std::vector<float>{1, 3, 5});
  f(in(4)).block_until_ready();
  f(in(3)).block_until_ready();  // 3 is now the most recently used, 4 the least
  CHECK(f.num_compiles() == 2);
  f(in(5)).block_until_ready();  // evicts 4
  CHECK(f.cache_size() == 2);
  CHECK(f.num_evictions() == 1);
  CHECK_THAT(log.text, Contains("Evicted") && Contains("f32[4]"));
  f(in(3)).block_until_ready();  // still cached
  CHECK(f.num_compiles() == 3);
  CHECK(f(in(4)).template to_vector<float>() == std::vector<float>{1, 3, 5, 7});  // compiled again, right again
  CHECK(f.num_compiles() == 4);
  CHECK(f.num_evictions() == 2);
  CHECK(f.cache_size() == 2);
}

TEST_CASE("the eager op cache keeps at most eager_cache_size executables", "[eager][cache]") {
  SizeSetting bound(config().eager_cache_size, 3);
  size_t before = detail::eager_cache_evictions();
  // Eight shapes of one op: at most three executables stay; each result is still right.
  for (int64_t n = 1; n <= 8; ++n) {
    Array x = arange(0, static_cast<double>(n), 1, float32);
    std::vector<float> got = jnp::exp(x).to_vector<float>();
    REQUIRE(got.size() == static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) CHECK(got[i] == Approx(std::exp(static_cast<double>(i))).epsilon(1e-6));
    CHECK(detail::eager_cache_size() <= 3);
  }
  CHECK(detail::eager_cache_evictions() > before);
}

TEST_CASE("a call with the last call's signature is a hit, and any difference still misses", "[jit][cache]") {
  // JitCore::get first compares the call against the entry the last call used (no key built): every part of the
  // signature must still count there.
  auto f = jit([](Array x, Array y) { return x * y + 1; });
  Array a = arange(0, 3, 1, float32), b = arange(0, 4, 1, float32);
  CHECK(f(a, a).to_vector<float>() == std::vector<float>{1, 2, 5});
  CHECK(f(a, a).to_vector<float>() == std::vector<float>{1, 2, 5});  // the last entry again
  CHECK(f.num_compiles() == 1);
  CHECK(f(b, b).to_vector<float>() == std::vector<float>{1, 2, 5, 10});  // another shape
  CHECK(f(a, a).to_vector<float>() == std::vector<float>{1, 2, 5});      // back: a hit in the map
  CHECK(f.num_compiles() == 2);
  f(a, Array(2.0f)).block_until_ready();                 // a weak scalar: another signature
  f(a, ones({})).block_until_ready();                    // a strong one: another again
  CHECK(f.num_compiles() == 4);
  f(a, a.astype(float64)).block_until_ready();  // another dtype
  CHECK(f.num_compiles() == 5);
  bool was = config().allow_excess_precision;
  config().allow_excess_precision = !was;  // the config is part of the key
  f(a, a).block_until_ready();
  CHECK(f.num_compiles() == 6);
  config().allow_excess_precision = was;
  f(a, a).block_until_ready();
  CHECK(f.num_compiles() == 6);
  auto g = jit([](const std::vector<Array>& xs) { return xs[0] + xs.back(); });
  g(std::vector<Array>{a, a}).block_until_ready();
  g(std::vector<Array>{a, a, a}).block_until_ready();  // another pytree structure
  CHECK(g.num_compiles() == 2);
}
