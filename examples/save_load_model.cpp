// Saving a trained model and using it in another process: `train` fits a small MLP regressor to sin(3x) with SGD,
// saves its parameters (an .npz checkpoint of the pytree, which numpy.load also reads) and its predictions on a
// fixed grid; `predict`, run in a fresh process, loads the parameters into a freshly initialised model of the same
// structure and checks that its predictions on the grid are bit-identical to the saved ones.
//
//   save_load_model train DIR      save_load_model predict DIR
#include <cstdio>
#include <cstring>
#include <string>

#include "jitx/jitx.h"

using namespace jitx;

struct Model {
  Array w1, b1, w2, b2;  // 1 -> 64 -> 1
};
JITX_PYTREE(Model, w1, b1, w2, b2)

namespace {
Model init(const Array& key) {
  Array k = random::split(key, 2);
  return {random::normal(k[0], {1, 64}), zeros({64}), random::normal(k[1], {64, 1}) * 0.1, zeros({1})};
}
Array predict(const Model& m, const Array& x) {
  return (jnp::matmul(jnp::tanh(jnp::matmul(x, m.w1) + m.b1), m.w2) + m.b2).reshape({-1});
}
Array loss(const Model& m, const Array& x, const Array& y) { return jnp::mean(jnp::square(predict(m, x) - y)); }
Array grid() { return linspace(-1, 1, 101).reshape({101, 1}); }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "train") && std::strcmp(argv[1], "predict"))) {
    std::fprintf(stderr, "usage: save_load_model train|predict DIR\n");
    return 2;
  }
  std::string dir = argv[2];
  auto f = jit(predict);
  if (!std::strcmp(argv[1], "train")) {
    Array x = random::uniform(random::PRNGKey(1), {256, 1}, float32, -1.0, 1.0);
    Array y = jnp::sin(x.reshape({-1}) * 3.0f);
    Model m = init(random::PRNGKey(0));
    auto step = jit([](const Model& m, const Array& x, const Array& y) {
      auto [l, g] = value_and_grad(loss)(m, x, y);
      return std::pair{optim::sgd_update(m, g, m, Array(0.1f)).first, l};
    });
    Array l;
    for (int i = 0; i < 500; ++i) std::tie(m, l) = step(m, x, y);
    std::printf("trained: loss %.5f\n", l.item<float>());
    save(dir + "/model.npz", m);
    save(dir + "/predictions.npy", f(m, grid()));
    std::printf("saved %s/model.npz and %s/predictions.npy\n", dir.c_str(), dir.c_str());
    return 0;
  }
  Model fresh = init(random::PRNGKey(42));  // a different initialisation: only the structure matters
  Model m = load(dir + "/model.npz", fresh);
  auto want = load(dir + "/predictions.npy").to_vector<float>();
  auto got = f(m, grid()).to_vector<float>();
  bool same = want.size() == got.size() && std::memcmp(want.data(), got.data(), got.size() * sizeof(float)) == 0;
  std::printf("loaded %s/model.npz: predictions at x=-0.5, 0, 0.5: %.5f %.5f %.5f (sin(3x): %.5f 0 %.5f)\n",
              dir.c_str(), got[25], got[50], got[75], std::sin(-1.5), std::sin(1.5));
  std::printf("%s\n", same ? "predictions identical to the saved ones" : "PREDICTIONS DIFFER");
  return same ? 0 : 1;
}
