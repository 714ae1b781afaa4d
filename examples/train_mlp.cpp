// Training an MLP classifier end to end: a synthetic three-arm spiral made with jitx::random, a
// jitted train_step(params, opt_state, batch) -> (params, opt_state, loss) with Adam from optim.h
// that donates the parameters and the optimiser state, and a loss that is printed every N steps
// without a sync per step.
//
//   train_mlp [--steps N] [--print-every N] [--check] [--save FILE] [--resume FILE] [--stop-at N]
//
// --save FILE writes a checkpoint (parameters, optimiser state and step count: one pytree in an .npz file) when
// the run ends; --stop-at N ends it after step N of the --steps schedule; --resume FILE continues a saved run;
// --compare FILE checks that the final state equals a saved checkpoint's bit for bit.
// Resuming is bit-exact: 100 steps, saved, then resumed to 200 gives the same bytes as 200 steps at once (CTest
// `example_train_mlp_resume`).
//
// --check turns the run into a test (CTest `example_train_mlp`): train_step must compile exactly
// once (counted from the compile log and from the jit cache), the final loss must be well below the
// initial one, and the accuracy, recomputed on the host in double precision from the trained
// weights, must be high.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "jitx/jitx.h"
#include "jitx/optim.h"
#include "jitx/random.h"

using namespace jitx;

namespace {

constexpr int64_t kClasses = 3, kPerClass = 512, kN = kClasses * kPerClass;
constexpr int64_t kBatch = 128, kStepsPerEpoch = kN / kBatch;
constexpr int64_t kHidden = 32;
constexpr double kLearningRate = 2e-2;

}  // namespace

struct Params {
  Array w1, b1, w2, b2, w3, b3;  // 2 -> 32 -> 32 -> 3
};
JITX_PYTREE(Params, w1, b1, w2, b2, w3, b3)

struct Batch {
  Array x;  // f32[B, 2]
  Array y;  // i32[B]
};
JITX_PYTREE(Batch, x, y)

namespace {

using OptState = optim::AdamState<Params>;
/// What a checkpoint holds: everything the loop needs to continue (the data and the keys are recomputed).
using Checkpoint = std::tuple<Params, OptState, Array>;  // (params, optimiser state, i64 next step)

/// n points per class on three interleaved spiral arms, with Gaussian jitter: a problem no linear
/// model solves.
Batch make_spiral(const Array& key, int64_t n_per_class) {
  int64_t n = n_per_class * kClasses;
  Array keys = random::split(key, 2);
  Array label = arange(n) % static_cast<int32_t>(kClasses);
  Array t = random::uniform(keys[0], {n}, float32, 0.05, 1.0);
  Array theta = label.astype(float32) * (2.0 * M_PI / kClasses) + t * (1.25 * 2.0 * M_PI) +
                random::normal(keys[1], {n}) * 0.12;
  Array x = jnp::stack({t * jnp::cos(theta), t * jnp::sin(theta)}, 1);
  return {x, label};
}

/// Glorot-style initialisation from a key.
Params init_params(const Array& key) {
  Array k = random::split(key, 3);
  auto dense = [](const Array& kk, int64_t in, int64_t out) {
    return random::normal(kk, {in, out}) * std::sqrt(2.0 / static_cast<double>(in + out));
  };
  return {dense(k[0], 2, kHidden),        zeros({kHidden}),
          dense(k[1], kHidden, kHidden),  zeros({kHidden}),
          dense(k[2], kHidden, kClasses), zeros({kClasses})};
}

Array logits(const Params& p, const Array& x) {
  Array h = nn::relu(jnp::matmul(x, p.w1) + p.b1);
  h = nn::relu(jnp::matmul(h, p.w2) + p.b2);
  return jnp::matmul(h, p.w3) + p.b3;
}

/// Mean softmax cross-entropy.
Array loss_fn(const Params& p, const Batch& b) {
  Array logp = nn::log_softmax(logits(p, b.x));
  return -jnp::mean(jnp::sum(logp * nn::one_hot(b.y, kClasses), {-1}));
}

/// One step: forward, backward and Adam, compiled together. The learning rate follows a cosine
/// decay computed from the optimiser's (traced) step counter, so the schedule never causes a
/// recompile.
std::tuple<Params, OptState, Array> train_step(const Params& params, const OptState& opt_state,
                                               const Batch& batch, int64_t total_steps) {
  auto [loss, grads] = value_and_grad(loss_fn)(params, batch);
  Array progress =
      jnp::minimum(std::get<0>(opt_state).astype(DType::float32) / static_cast<double>(total_steps), Array(1.0f));
  Array lr = (0.1 + 0.9 * 0.5 * (1.0 + jnp::cos(progress * M_PI))) * kLearningRate;
  auto [new_params, new_state] = optim::adam_update(params, grads, opt_state, lr);
  return {new_params, new_state, loss};
}

/// Batch `start / kBatch` of an epoch that visits the dataset in the order perm (the start is
/// traced: one compile).
Batch batch_at(const Batch& data, const Array& perm, const Array& start) {
  Array idx = lax::dynamic_slice(perm, {start}, {kBatch});
  return {jnp::take(data.x, idx, 0), jnp::take(data.y, idx, 0)};
}

Array accuracy(const Params& p, const Batch& data) {
  return jnp::mean((jnp::argmax(logits(p, data.x), -1) == data.y).astype(float32));
}

/// The same classifier evaluated on the host in double precision: an independent check of the
/// accuracy.
double host_accuracy(const Params& p, const Batch& data) {
  auto w1 = p.w1.to_vector<double>(), b1 = p.b1.to_vector<double>(), w2 = p.w2.to_vector<double>(),
       b2 = p.b2.to_vector<double>(), w3 = p.w3.to_vector<double>(), b3 = p.b3.to_vector<double>();
  auto x = data.x.to_vector<double>();
  auto y = data.y.to_vector<int32_t>();
  int64_t correct = 0;
  std::vector<double> h1(kHidden), h2(kHidden);
  for (size_t i = 0; i < y.size(); ++i) {
    for (int64_t j = 0; j < kHidden; ++j)
      h1[j] = std::max(0.0, x[2 * i] * w1[j] + x[2 * i + 1] * w1[kHidden + j] + b1[j]);
    for (int64_t j = 0; j < kHidden; ++j) {
      double s = b2[j];
      for (int64_t k = 0; k < kHidden; ++k) s += h1[k] * w2[k * kHidden + j];
      h2[j] = std::max(0.0, s);
    }
    int best = 0;
    double best_v = -1e300;
    for (int c = 0; c < kClasses; ++c) {
      double s = b3[c];
      for (int64_t k = 0; k < kHidden; ++k) s += h2[k] * w3[k * kClasses + c];
      if (s > best_v) best_v = s, best = c;
    }
    correct += best == y[i];
  }
  return static_cast<double>(correct) / static_cast<double>(y.size());
}

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 500, print_every = 100;
  int64_t stop_at = -1;
  bool check = false;
  std::string save_path, resume_path, compare_path;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--print-every") && i + 1 < argc)
      print_every = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--check"))
      check = true;
    else if (!std::strcmp(argv[i], "--save") && i + 1 < argc)
      save_path = argv[++i];
    else if (!std::strcmp(argv[i], "--resume") && i + 1 < argc)
      resume_path = argv[++i];
    else if (!std::strcmp(argv[i], "--compare") && i + 1 < argc)
      compare_path = argv[++i];
    else if (!std::strcmp(argv[i], "--stop-at") && i + 1 < argc)
      stop_at = std::stoll(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: train_mlp [--steps N] [--print-every N] [--check] [--save FILE] [--resume FILE] "
                   "[--stop-at N] [--compare FILE]\n");
      return 2;
    }
  }
  // Count the compile log's lines for train_step (the log goes to our sink instead of stderr).
  int train_step_compiles_logged = 0;
  const bool verbose =
      config().log_compiles;  // JITX_LOG_COMPILES=1 shows every compile, not just train_step's
  config().log_compiles = true;
  set_log_sink([&](const std::string& line) {
    bool mine = line.find("Compiled 'train_step'") != std::string::npos;
    train_step_compiles_logged += mine;
    if (mine || verbose) std::printf("%s\n", line.c_str());
  });

  Array key = random::PRNGKey(0);
  Array keys = random::split(key, 4);
  auto make_data =
      jit([](const Array& k) { return make_spiral(k, kPerClass); }, {.name = "make_spiral"});
  Batch train = make_data(keys[0]), test = make_data(keys[1]);
  Params params = init_params(keys[2]);
  OptState opt_state = optim::adam_init(params);
  int64_t start = 0;
  if (!resume_path.empty()) {
    Array next_step;
    std::tie(params, opt_state, next_step) =
        load(resume_path, Checkpoint{params, opt_state, Array::scalar_int(0, int64)});
    start = next_step.item<int64_t>();
    std::printf("resumed from %s at step %lld\n", resume_path.c_str(), (long long)start);
  }
  int64_t end = stop_at >= 0 ? std::min(stop_at, steps) : steps;

  // Parameters and optimiser state are donated: each step writes its new values over the old
  // buffers.
  auto step = jit([steps](const Params& p, const OptState& s,
                          const Batch& b) { return train_step(p, s, b, steps); },
                  {.donate_argnums = {0, 1}, .name = "train_step"});
  auto batch = jit(batch_at, {.name = "batch_at"});
  auto permutation =
      jit([](const Array& k) { return random::permutation(k, kN); }, {.name = "permutation"});
  auto eval = jit(accuracy, {.name = "accuracy"});

  std::printf(
      "training a 2-%lld-%lld-%lld MLP on a %lld-point spiral, batch %lld, %lld steps (platform "
      "%s)\n",
      (long long)kHidden, (long long)kHidden, (long long)kClasses, (long long)kN, (long long)kBatch,
      (long long)steps, default_platform().c_str());
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Array> losses;  // read only when printing: no sync per step
  losses.reserve(static_cast<size_t>(steps));
  Array perm;
  double first_loss = -1, last_window = -1;
  for (int64_t s = start; s < end; ++s) {
    int64_t i = s % kStepsPerEpoch;
    if (i == 0 || s == start)  // an epoch's permutation (recomputed when resuming mid-epoch)
      perm = permutation(random::fold_in(keys[3], Array(static_cast<int32_t>(s / kStepsPerEpoch))));
    Array loss;
    std::tie(params, opt_state, loss) =
        step(params, opt_state, batch(train, perm, Array(static_cast<int32_t>(i * kBatch))));
    losses.push_back(loss);
    if ((s + 1) % print_every == 0 || s + 1 == end) {
      // Average the window's losses; reading them waits only for this window's last step.
      int64_t from = std::max<int64_t>(start, s + 1 - print_every);
      double sum = 0;
      for (int64_t k = from; k <= s; ++k) sum += losses[k - start].item<float>();
      last_window = sum / static_cast<double>(s + 1 - from);
      if (first_loss < 0) first_loss = losses[0].item<float>();
      std::printf("step %5lld  loss %.4f\n", (long long)(s + 1), last_window);
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!save_path.empty()) {
    save(save_path, Checkpoint{params, opt_state, Array::scalar_int(end, int64)});
    std::printf("saved a checkpoint at step %lld to %s\n", (long long)end, save_path.c_str());
  }
  double train_acc = eval(params, train).item<float>(), test_acc = eval(params, test).item<float>();
  double host_train_acc = host_accuracy(params, train), host_test_acc = host_accuracy(params, test);
  std::printf("first loss %.4f, final loss (mean of the last %lld steps) %.4f\n", first_loss,
              (long long)print_every, last_window);
  std::printf(
      "accuracy: train %.3f, test %.3f (host double-precision reference: train %.3f, test %.3f)\n",
      train_acc, test_acc, host_train_acc, host_test_acc);
  std::printf(
      "%lld steps in %.2f s including the compile (%.0f steps/s); train_step compiled %zu time(s), "
      "logged %d\n",
      (long long)(end - start), secs, static_cast<double>(end - start) / secs, step.num_compiles(),
      train_step_compiles_logged);
  set_log_sink(nullptr);
  if (!compare_path.empty()) {
    Checkpoint now{params, opt_state, Array::scalar_int(end, int64)};
    std::vector<Array> a = tree_leaves(now), b = tree_leaves(load(compare_path, now));
    size_t differ = 0;
    for (size_t k = 0; k < a.size(); ++k) differ += npy_bytes(a[k]) != npy_bytes(b[k]);
    std::printf("compared with %s: %zu of %zu arrays differ\n", compare_path.c_str(), differ, a.size());
    if (differ) return 1;
  }

  if (check) {
    std::vector<std::string> failures;
    if (step.num_compiles() != 1 || step.cache_size() != 1 || train_step_compiles_logged != 1)
      failures.push_back("train_step must compile exactly once");
    if (!(last_window < 0.25 * first_loss))
      failures.push_back("the loss must fall below a quarter of the first loss");
    if (!(host_test_acc > 0.9 && host_train_acc > 0.9))
      failures.push_back("accuracy must exceed 0.9");
    if (std::fabs(train_acc - host_train_acc) > 3.0 / kN ||
        std::fabs(test_acc - host_test_acc) > 3.0 / kN)
      failures.push_back("jitx's accuracy must match the host reference");
    for (auto& f : failures) std::printf("CHECK FAILED: %s\n", f.c_str());
    if (!failures.empty()) return 1;
    std::printf("checks passed\n");
  }
  return 0;
}
