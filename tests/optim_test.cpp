// jitx::optim: SGD/Adam steps against hand-computed values; a jitted training step compiles once.
#include "jitx/optim.h"
#include "test_util.h"

namespace {
using namespace jitx;
using jitx::testing::make;

using Params = std::map<std::string, Array>;

Array loss(const Params& p) {
  Array d = p.at("w") - make({1.0, -2.0}, DType::float32);
  return jnp::sum(d * d) + p.at("b") * p.at("b");
}

TEST_CASE("SGD with momentum and Adam take the textbook steps", "[optim]") {
  Params p{{"w", make({0.0, 0.0}, DType::float32)}, {"b", Array::scalar(3.0, DType::float32)}};
  Params g = grad(loss)(p);  // w: 2 (w - c) = (-2, 4); b: 6
  auto s = optim::sgd_init(p);
  auto [p1, s1] = optim::sgd_update(p, g, s, Array(0.1), 0.9);
  CHECK(p1.at("w").to_vector<float>() == std::vector<float>{0.2f, -0.4f});
  auto [p2, s2] = optim::sgd_update(p1, g, s1, Array(0.1), 0.9);
  CHECK(std::fabs(p2.at("b").item<float>() - (3.0f - 0.6f - 0.1f * (0.9f * 6 + 6))) < 1e-6);
  // Adam's first step is lr * sign(g) (up to eps).
  auto a = optim::adam_init(p);
  auto [q1, a1] = optim::adam_update(p, g, a, Array(0.01));
  auto w = q1.at("w").to_vector<float>();
  CHECK(std::fabs(w[0] - 0.01f) < 1e-6);
  CHECK(std::fabs(w[1] + 0.01f) < 1e-6);
  CHECK(std::get<0>(a1).dtype() == DType::int32);  // optax's count
  CHECK(std::get<0>(a1).item<int32_t>() == 1);
}

TEST_CASE("a jitted Adam training step converges and never recompiles when the learning rate changes", "[optim]") {
  Params p{{"w", make({0.0, 0.0}, DType::float32)}, {"b", Array::scalar(3.0, DType::float32)}};
  auto step = jit([](const Params& params, const optim::AdamState<Params>& st, const Array& lr) {
    auto [l, g] = value_and_grad(loss)(params);
    auto [np, ns] = optim::adam_update(params, g, st, lr);
    return std::make_tuple(np, ns, l);
  });
  auto st = optim::adam_init(p);
  Array l;
  for (int i = 0; i < 300; ++i) {
    Array lr = Array::scalar(i < 200 ? 0.1 : 0.01, DType::float32);
    std::tie(p, st, l) = step(p, st, lr);
  }
  CHECK(step.num_compiles() == 1);
  CHECK(l.item<float>() < 1e-3f);
}

}  // namespace
