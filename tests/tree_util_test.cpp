// jitx::tree_util: flatten/unflatten/map/structure over vectors, tuples, maps, optionals and JITX_PYTREE structs,
// with JAX's leaf order (checked against jax.tree_util on the same nesting, order noted per case).
#include <catch2/catch.hpp>

#include "jitx/jitx.h"
#include "test_util.h"

using namespace jitx;

namespace {
struct Layer {
  Array w, b;
  double scale = 1.0;  // a number field: static, part of the structure
};
}  // namespace
JITX_PYTREE(Layer, w, b, scale)

namespace {
using Tree = std::tuple<std::map<std::string, Array>, std::vector<Layer>, std::optional<Array>>;
Array v(float x) { return testing::make({x}, float32); }
Tree sample() {
  // jax.tree_util.tree_leaves(({'z': 1, 'a': 2}, [{'w': 3, 'b': 4}, {'w': 5, 'b': 6}], 7)) == [2, 1, 3, 4, 5, 6, 7]
  return {{{"z", v(1)}, {"a", v(2)}}, {Layer{v(3), v(4), 2.0}, Layer{v(5), v(6), 3.0}}, v(7)};
}
std::vector<float> values(const std::vector<Array>& xs) {
  std::vector<float> out;
  for (auto& x : xs) out.push_back(x.item<float>());
  return out;
}
}  // namespace

TEST_CASE("tree_util: leaves in JAX's order, paths, flatten/unflatten round trip", "[tree_util]") {
  Tree t = sample();
  CHECK(values(tree_util::tree_leaves(t)) == std::vector<float>{2, 1, 3, 4, 5, 6, 7});
  auto [leaves, def] = tree_util::tree_flatten(t);
  CHECK(def.num_leaves() == 7);
  CHECK(def.paths() == std::vector<std::string>{"[0]['a']", "[0]['z']", "[1][0].w", "[1][0].b", "[1][1].w",
                                                "[1][1].b", "[2]"});
  for (auto& x : leaves) x = x * 10.0f;
  Tree u = tree_util::tree_unflatten(def, leaves);
  CHECK(std::get<0>(u).at("z").item<float>() == 10);
  CHECK(std::get<1>(u)[1].b.item<float>() == 60);
  CHECK(std::get<1>(u)[1].scale == 3.0);  // static values come from the structure
  CHECK(std::get<2>(u)->item<float>() == 70);
  CHECK_THROWS_WITH(tree_util::tree_unflatten(def, std::vector<Array>{v(1)}),
                    Catch::Contains("[tree_unflatten]") && Catch::Contains("has 7 leaves, got 1"));
  auto with_path = tree_util::tree_leaves_with_path(t);
  CHECK(with_path[2].first == "[1][0].w");
  CHECK(with_path[2].second.item<float>() == 3);
}

TEST_CASE("tree_util: tree_map over one and several trees, eager and under jit", "[tree_util]") {
  Tree t = sample();
  Tree sq = tree_util::tree_map([](const Array& x) { return x * x; }, t);
  CHECK(values(tree_util::tree_leaves(sq)) == std::vector<float>{4, 1, 9, 16, 25, 36, 49});
  Tree s3 = tree_util::tree_map([](const Array& a, const Array& b, const Array& c) { return a + 2.0f * b - c; }, t,
                                sq, t);
  CHECK(values(tree_util::tree_leaves(s3)) == std::vector<float>{8, 2, 18, 32, 50, 72, 98});
  auto f = jit([](const std::vector<Layer>& ls) {
    return tree_util::tree_map([](const Array& x) { return jnp::exp(x) - 1.0f; }, ls);
  });
  std::vector<Layer> out = f(std::get<1>(t));
  CHECK(out[0].w.item<float>() == Approx(std::exp(3.0f) - 1).epsilon(1e-6));
  CHECK(out[1].b.item<float>() == Approx(std::exp(6.0f) - 1).epsilon(1e-6));
  float total = tree_util::tree_reduce([](float acc, const Array& x) { return acc + x.item<float>(); }, t, 0.0f);
  CHECK(total == 28);
}

TEST_CASE("tree_util: structures compare, mismatched trees are a TypeError naming both", "[tree_util]") {
  Tree a = sample(), b = sample();
  CHECK(tree_util::tree_structure(a) == tree_util::tree_structure(b));
  std::get<1>(b).pop_back();
  CHECK_FALSE(tree_util::tree_structure(a) == tree_util::tree_structure(b));
  CHECK_THROWS_WITH(tree_util::tree_map([](const Array& x, const Array& y) { return x + y; }, a, b),
                    Catch::Contains("[tree_map] tree 1 has a different structure"));
  Tree c = sample();
  std::get<1>(c)[0].scale = 5.0;  // a different static value is a different structure, as in JAX
  CHECK_FALSE(tree_util::tree_structure(a) == tree_util::tree_structure(c));
  std::get<2>(c).reset();
  CHECK(tree_util::tree_structure(c).num_leaves() == 6);
}
