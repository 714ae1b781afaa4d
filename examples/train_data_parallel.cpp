// Data-parallel training over several devices: an MLP regression whose global batch is split over a 1-D mesh
// ("data"), its parameters replicated. jit partitions the training step (hlo::SpmdPartitioner): each device runs
// the forward and backward pass on its rows, and the gradients meet in all-reduces.
//
// The same program runs in one process over JITX_CPU_DEVICE_COUNT CPU devices, or in several processes started by
// mpirun (--distributed; each process holds only its own devices' rows, built with
// make_array_from_process_local_data, and the collectives between processes go through Open MPI):
//
//   JITX_CPU_DEVICE_COUNT=4 train_data_parallel --check
//   JITX_CPU_DEVICE_COUNT=2 mpirun -np 2 train_data_parallel --distributed --check
//
// Every process also trains the same model on one device without sharding; --check fails unless each step's loss
// and the final parameters agree with that run to 2e-5 (relative: the sharded step sums its batch in per-device
// parts, so float rounding differs) and the optimised per-device program has its all-reduces.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "jitx/distributed.h"
#include "jitx/jitx.h"
#include "jitx/random.h"
#include "jitx/sharding.h"

using namespace jitx;

namespace {
constexpr int64_t kIn = 16, kHidden = 64, kOut = 4, kBatch = 64;
constexpr double kLearningRate = 0.05;
}  // namespace

struct Params {
  Array w1, b1, w2, b2;
};
JITX_PYTREE(Params, w1, b1, w2, b2)

namespace {

Params init_params(const Array& key) {
  Array k = random::split(key, 2);
  return {random::normal(k[0], {kIn, kHidden}) * std::sqrt(1.0 / kIn), zeros({kHidden}),
          random::normal(k[1], {kHidden, kOut}) * std::sqrt(1.0 / kHidden), zeros({kOut})};
}

Array loss_fn(const Params& p, const Array& x, const Array& y) {
  Array h = jnp::tanh(jnp::matmul(x, p.w1) + p.b1);
  Array out = jnp::matmul(h, p.w2) + p.b2;
  return jnp::mean(jnp::square(out - y));
}

/// One SGD step: the gradient of the mean loss over the (global) batch.
std::tuple<Params, Array> train_step(const Params& p, const Array& x, const Array& y) {
  auto [loss, g] = value_and_grad(loss_fn)(p, x, y);
  auto upd = [](const Array& w, const Array& dw) { return w - kLearningRate * dw; };
  return {Params{upd(p.w1, g.w1), upd(p.b1, g.b1), upd(p.w2, g.w2), upd(p.b2, g.b2)}, loss};
}

/// Batch `step` of a synthetic regression: targets from a fixed random teacher, the same on every process.
std::pair<Array, Array> batch_at(int64_t step) {
  Array key = random::fold_in(random::PRNGKey(7), Array(static_cast<int32_t>(step)));
  Array x = random::normal(key, {kBatch, kIn});
  Array teacher = random::normal(random::PRNGKey(3), {kIn, kOut});
  return {x, jnp::sin(jnp::matmul(x, teacher))};
}

double max_rel_diff(const Array& a, const Array& b) {
  auto va = a.to_vector<double>(), vb = b.to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < va.size(); ++i) m = std::max(m, std::abs(va[i] - vb[i]) / (1e-3 + std::abs(vb[i])));
  return m;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  bool distributed = false, check = false;
  int64_t steps = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--distributed")) distributed = true;
    else if (!std::strcmp(argv[i], "--check")) check = true;
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoll(argv[++i]);
    else {
      std::fprintf(stderr, "usage: train_data_parallel [--distributed] [--check] [--steps N]\n");
      return 2;
    }
  }
  try {
    if (distributed) distributed::initialize();
    const int64_t me = distributed::process_index(), nproc = distributed::process_count();
    auto say = [&](const std::string& s) {
      if (me == 0) std::printf("%s", s.c_str());
    };
    Mesh mesh = make_mesh({device_count()}, {"data"});
    NamedSharding rows(mesh, P("data")), replicated(mesh, P());
    say(fmt::format("{} devices over {} process(es): {}; global batch {} split {} ways\n", device_count(), nproc,
                    mesh.str(), kBatch, device_count()));
    if (kBatch % device_count() != 0) throw Error("the batch must divide over the devices");

    // This process's rows of a global batch: each process builds only its block.
    auto shard_batch = [&](const Array& x, const Array& y) {
      if (nproc == 1) return std::pair{device_put(x, rows), device_put(y, rows)};
      int64_t per = kBatch / nproc;
      auto mine = [&](const Array& a) {
        return make_array_from_process_local_data(rows, lax::slice(a, {me * per, 0}, {(me + 1) * per, a.shape()[1]}));
      };
      return std::pair{mine(x), mine(y)};
    };

    auto step = jit(train_step);
    Params p0 = init_params(random::PRNGKey(0));
    Params sharded_p = tree_util::tree_map([&](const Array& a) { return device_put(a, replicated); }, p0);
    Params single_p = p0;

    double worst_loss = 0, total_ms = 0;
    for (int64_t s = 0; s < steps; ++s) {
      auto [x, y] = batch_at(s);
      auto [xs, ys] = shard_batch(x, y);
      auto t0 = std::chrono::steady_clock::now();
      auto [np, loss] = step(sharded_p, xs, ys);
      loss.block_until_ready();
      if (s > 0) total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      sharded_p = np;
      auto [np1, loss1] = step(single_p, x, y);
      single_p = np1;
      double l = loss.item<double>(), l1 = loss1.item<double>();
      double rel = std::abs(l - l1) / std::abs(l1);
      worst_loss = std::max(worst_loss, rel);
      if (s % 5 == 0 || s + 1 == steps)
        say(fmt::format("step {:3d}  loss {:.6f}  (one device: {:.6f}, rel. diff {:.1e})\n", s, l, l1, rel));
    }
    // Parameters are replicated: each process reads its own copy.
    double worst_param = 0;
    auto a = tree_util::tree_leaves(sharded_p), b = tree_util::tree_leaves(single_p);
    for (size_t i = 0; i < a.size(); ++i) worst_param = std::max(worst_param, max_rel_diff(a[i], b[i]));
    auto [x0, y0] = batch_at(0);
    auto [xs0, ys0] = shard_batch(x0, y0);
    std::string hlo = step.lower(sharded_p, xs0, ys0).compile().as_text();
    // An all-reduce the optimiser overlapped with other work is an all-reduce-start ... all-reduce-done pair.
    int all_reduces = count(hlo, " all-reduce(") + count(hlo, " all-reduce-start(");
    int all_gathers = count(hlo, " all-gather(") + count(hlo, " all-gather-start(");
    say(fmt::format("per-device program: {} all-reduce(s), {} all-gather(s); {:.3f} ms per step (after the first)\n",
                    all_reduces, all_gathers, total_ms / std::max<int64_t>(steps - 1, 1)));
    say(fmt::format("largest relative difference from one device: loss {:.1e}, parameters {:.1e}\n", worst_loss,
                    worst_param));
    int rc = 0;
    if (check) {
      if (worst_loss > 2e-5 || worst_param > 2e-5) {
        std::printf("process %lld: FAIL: the sharded run differs from one device by more than 2e-5\n",
                    static_cast<long long>(me));
        rc = 1;
      }
      if (device_count() > 1 && all_reduces == 0) {
        std::printf("process %lld: FAIL: the partitioned step has no all-reduce\n", static_cast<long long>(me));
        rc = 1;
      }
      if (rc == 0) say("check passed\n");
    }
    if (distributed) {
      multihost::sync_global_devices("end");
      distributed::shutdown();
    }
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_data_parallel: %s\n", e.what());
    return 1;
  }
}
