// The data-parallel training step on 1 and 2 CPU devices (issue 17), as benchmarks/spmd_bench.sh runs it against
// JAX with 2 host devices: an MLP (tanh hidden layers) trained by SGD on a global batch split over a "data" mesh,
// the parameters replicated. Prints one JSON line per configuration: the median step time (block_until_ready,
// compile excluded and reported apart) and, on 2 devices, the time the partitions spent in collectives per step
// (jitx::profiler: summed over partitions, so waiting for the slower partition counts). On 2 devices the step runs
// twice: with asynchronous collectives (the default: each gradient's all-reduce overlaps the backward pass that
// follows it; `exposed` is the time partitions waited at the -done) and with JITX_ASYNC_COLLECTIVES off.
//   spmd_bench [--batch B] [--hidden H] [--min-time S]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "harness.h"
#include "jitx/jitx.h"
#include "jitx/profiler.h"

using namespace jitx;

struct Mlp {
  Array w1, b1, w2, b2, w3, b3;
};
JITX_PYTREE(Mlp, w1, b1, w2, b2, w3, b3)

namespace {

Array loss_fn(const Mlp& p, const Array& x, const Array& y) {
  Array h = jnp::tanh(jnp::matmul(x, p.w1) + p.b1);
  h = jnp::tanh(jnp::matmul(h, p.w2) + p.b2);
  Array d = jnp::matmul(h, p.w3) + p.b3 - y;
  return jnp::mean(d * d);
}

std::tuple<Mlp, Array> step(const Mlp& p, const Array& x, const Array& y) {
  auto [loss, g] = value_and_grad(loss_fn)(p, x, y);
  return {tree_util::tree_map([](const Array& w, const Array& dw) { return w - 0.01f * dw; }, p, g), loss};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 512, hidden = 512;
  double min_time = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--hidden")) hidden = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--min-time")) min_time = std::atof(argv[i + 1]);
  }
  config().cpu_device_count = 2;  // before the first device is made
  const int64_t in = 256, out = 64;
  Array k = random::split(random::PRNGKey(0), 4);
  Mlp p0{random::normal(k[0], {in, hidden}) * 0.05, zeros({hidden}), random::normal(k[1], {hidden, hidden}) * 0.05,
         zeros({hidden}), random::normal(k[2], {hidden, out}) * 0.05, zeros({out})};
  Array x = random::normal(k[3], {batch, in});
  Array y = jnp::sin(jnp::matmul(x, random::normal(random::PRNGKey(5), {in, out}) * 0.1));
  std::string size = fmt::format("{}x{}", batch, hidden);
  struct Variant {
    int64_t n;
    bool async;
  };
  for (Variant v : {Variant{1, true}, Variant{2, true}, Variant{2, false}}) {
    int64_t n = v.n;
    config().async_collectives = v.async;  // read when the step compiles
    auto f = jit(step);
    Mlp p = p0;
    Array xs = x, ys = y;
    if (n > 1) {
      Mesh mesh = make_mesh({n}, {"data"});
      NamedSharding rows(mesh, P("data")), rep(mesh, P());
      p = tree_util::tree_map([&](const Array& a) { return device_put(a, rep); }, p0);
      xs = device_put(x, rows);
      ys = device_put(y, rows);
    }
    auto t0 = std::chrono::steady_clock::now();
    std::get<1>(f(p, xs, ys)).block_until_ready();
    double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    profiler::reset_collective_stats();
    int64_t calls = 0;
    auto stats = bench::measure([&] {
      auto [np, loss] = f(p, xs, ys);
      p = np;
      loss.block_until_ready();
      ++calls;
    }, min_time);
    auto cs = profiler::collective_stats();
    double per = calls ? 1e3 / static_cast<double>(calls) / static_cast<double>(n) : 0;
    double coll_ms = cs.seconds * per, exposed_ms = (v.async ? cs.wait_seconds : cs.seconds) * per;
    std::printf("{\"workload\": \"train_step_dp\", \"system\": \"jitx\", \"devices\": %lld, \"size\": \"%s\", "
                "\"async\": %s, \"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"reps\": %d, "
                "\"compile_ms\": %.1f, \"collective_ms_per_step\": %.4f, \"exposed_ms_per_step\": %.4f, "
                "\"async_per_step\": %.1f, \"collectives_per_step\": %.1f}\n",
                static_cast<long long>(n), size.c_str(), v.async ? "true" : "false", stats.median_ms, stats.p10_ms,
                stats.p90_ms, stats.reps, compile_ms, coll_ms, exposed_ms,
                static_cast<double>(cs.async_calls) * per / 1e3, static_cast<double>(cs.calls) * per / 1e3);
    std::fflush(stdout);
  }
  return 0;
}
