// What JAX 0.10.2 (x64) accepts jitx accepts, with JAX's values, and what JAX refuses jitx refuses: cases outside
// probes found different. Expected values are JAX's, written here; each case runs eagerly and under jit.
#include "test_util.h"

using namespace jitx;

namespace {
std::vector<float> floats(const Array& a) { return a.astype(DType::float32).to_vector<float>(); }
}  // namespace

TEST_CASE("lax: broadcast_in_dim takes broadcast_dimensions in any order, as JAX", "[lax]") {
  Array x = jnp::array({{0.0f, 1.0f, 2.0f}, {3.0f, 4.0f, 5.0f}});
  auto f = [](const Array& a) { return lax::broadcast_in_dim(a, {3, 4, 2}, {2, 0}); };
  // JAX: lax.broadcast_in_dim(x, (3, 4, 2), (2, 0))[:, 0, :] == x.T; the middle axis is the broadcast one.
  for (const Array& r : {f(x), jit(f)(x)}) {
    REQUIRE(r.shape() == Shape{3, 4, 2});
    std::vector<float> v = floats(r);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 2; ++k) CHECK(v[(i * 4 + j) * 2 + k] == float(k * 3 + i));
  }
  CHECK(floats(lax::broadcast_in_dim(x, {3, 2}, {1, 0})) == std::vector<float>{0, 3, 1, 4, 2, 5});
  // Its gradient is the transposed sum over the broadcast axis.
  Array g = grad([&](const Array& a) { return jnp::sum(f(a) * jnp::arange(24.0f).reshape({3, 4, 2})); })(x);
  // d/dx[k, i] = sum_j w[i, j, k], w = arange(24).reshape(3, 4, 2), summed by hand (JAX 0.10.2's own transpose
  // rule fails here: "Expected cotangent type float32[2,3] but got float32[3,2]").
  CHECK(floats(g) == std::vector<float>{12, 44, 76, 16, 48, 80});
  CHECK_THROWS_AS(lax::broadcast_in_dim(x, {3, 3}, {1, 1}), ShapeError);
  CHECK_THROWS_AS(lax::broadcast_in_dim(x, {3, 2}, {2, 0}), ShapeError);
}

TEST_CASE("lax: select_n and select take an integer predicate, as JAX lowers it (case1 where which >= 1)", "[lax]") {
  Array which = jnp::array({1, 0, 3, -2});
  Array a = jnp::array({10.0f, 20.0f, 30.0f, 40.0f}), b = jnp::array({-1.0f, -2.0f, -3.0f, -4.0f});
  auto f = [](const Array& w, const Array& c0, const Array& c1) { return lax::select_n(w, c0, c1); };
  for (const Array& r : {f(which, a, b), jit(f)(which, a, b)})
    CHECK(floats(r) == std::vector<float>{-1, 20, -3, 40});
  CHECK(floats(lax::select(which.astype(DType::uint8), a, b)) == std::vector<float>{10, -2, 30, 40});
  CHECK(floats(lax::select_n(Array(int32_t{0}), a, b)) == floats(a));
  CHECK_THROWS_AS(lax::select_n(jnp::array({1.0f, 0.0f, 1.0f, 0.0f}), a, b), TypeError);
}

TEST_CASE("lax: cumulative ops refuse negative axes, as JAX's lax (jnp's accept them)", "[lax]") {
  Array x = jnp::arange(6.0f).reshape({2, 3});
  CHECK_THROWS_AS(lax::cumsum(x, -1), ShapeError);
  CHECK_THROWS_AS(lax::cumprod(x, -1), ShapeError);
  CHECK_THROWS_AS(lax::cummax(x, -2, true), ShapeError);
  CHECK_THROWS_AS(lax::cummin(x, -1), ShapeError);
  CHECK_THROWS_AS(lax::cumlogsumexp(x, -1), ShapeError);
  CHECK(floats(jnp::cumsum(x, -1)) == std::vector<float>{0, 1, 3, 3, 7, 12});
  CHECK(floats(jnp::cumprod(x + 1.0f, -2)) == std::vector<float>{1, 2, 3, 4, 10, 18});
  CHECK(floats(lax::cumsum(x, 1, true)) == std::vector<float>{3, 3, 2, 12, 9, 5});
}

TEST_CASE("lax: dynamic_slice and dynamic_update_slice indices share one dtype, and a literal takes the others'",
          "[lax]") {
  Array x = jnp::arange(6.0f).reshape({2, 3});
  // JAX: "index arguments to dynamic_slice must be integers of the same type, got: int32, int64".
  Array i64 = Array(int64_t{1}).astype(DType::int64), u8 = Array(int32_t{1}).astype(DType::uint8);
  CHECK_THROWS_AS(lax::dynamic_slice(x, {Array(int32_t{0}).astype(DType::int32), i64}, {1, 2}), TypeError);
  CHECK_THROWS_AS(lax::dynamic_update_slice(x, x, {u8, Array(int32_t{0}).astype(DType::int32)}), TypeError);
  // A weak literal (JAX's Python int) next to a strong int64 or uint8 index takes its dtype.
  CHECK(floats(lax::dynamic_slice(x, {0, i64}, {1, 2})) == std::vector<float>{1, 2});
  CHECK(floats(lax::dynamic_slice(x, {u8, 1}, {1, 2})) == std::vector<float>{4, 5});
  auto f = [](const Array& a, const Array& i) { return lax::dynamic_update_slice(a, -jnp::ones({1, 3}), {i, 0}); };
  CHECK(floats(jit(f)(x, i64)) == std::vector<float>{0, 1, 2, -1, -1, -1});
}

TEST_CASE("jnp: .at[] takes a concrete boolean mask (its true elements' indices), refuses a traced one", "[numpy]") {
  Array x = jnp::arange(5.0f);
  Array m = jnp::array({true, false, true, false, true});
  CHECK(floats(jnp::at(x, m).set(9.0f)) == std::vector<float>{9, 1, 9, 3, 9});
  CHECK(floats(jnp::at(x, m).add(jnp::array({1.0f, 2.0f, 3.0f}))) == std::vector<float>{1, 1, 4, 3, 7});
  CHECK(floats(jnp::at(x, m).get()) == std::vector<float>{0, 2, 4});
  // A 2-d mask covers two axes; a mask before an integer index covers the first.
  Array y = jnp::arange(6.0f).reshape({2, 3});
  Array m2 = jnp::array({{false, true, false}, {true, false, true}});
  CHECK(floats(jnp::at(y, m2).mul(-1.0f)) == std::vector<float>{0, -1, 2, -3, 4, -5});
  CHECK(floats(jnp::at(y, {jnp::array({false, true}), jnp::array({2})}).set(7.0f)) ==
        std::vector<float>{0, 1, 2, 3, 4, 7});
  // JAX: "boolean index did not match shape of indexed array in index 0: got (4,), expected (5,)".
  CHECK_THROWS_AS(jnp::at(x, jnp::array({true, false, true, false})).set(1.0f), ShapeError);
  // JAX: NonConcreteBooleanIndexError under jit.
  auto traced = [](const Array& a, const Array& mask) { return jnp::at(a, mask).set(0.0f); };
  CHECK_THROWS_AS(jit(traced)(x, m), TracerError);
}
