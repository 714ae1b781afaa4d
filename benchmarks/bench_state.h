// What jitx_bench's files share: the run's mode and options and how a result is reported (jitx_bench.cpp), and
// the realistic-model workloads (models_bench.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "harness.h"
#include "jitx/jitx.h"

namespace jbench {
extern bool g_smoke, g_quick;
extern double g_min_time;
/// Prints r as a JSON line and records its time for the skip predictions.
void emit(const bench::Result& r);
/// True (and a "skipped" line out) when this system's call at this size is predicted to take too long.
bool skipped(const bench::Result& r);

/// Compiles the jitted training step jf(p, s, batch) -> (p, s, loss) (its time in r.compile_ms, apart), times
/// calls that carry p and s forward (waiting for all three), and emits r.
template <class J, class P, class S, class B>
void run_train_step(bench::Result r, J&& jf, P& p, S& s, const B& batch) {
  auto t0 = bench::Clock::now();
  auto step = jf.lower(p, s, batch).compile();
  r.compile_ms = bench::seconds_since(t0) * 1e3;
  jitx::Array loss;
  r.stats = bench::measure(
      [&] {
        std::tie(p, s, loss) = step(p, s, batch);
        jitx::block_until_ready(std::make_tuple(p, s, loss));
      },
      g_min_time);
  emit(r);
}

constexpr int64_t kTrainClasses = 10;  // the classifiers' classes (train_step, cnn_step)

/// The model's shape: vocabulary, sequence length, width, heads, layers, batch.
struct TfConfig {
  int64_t vocab, seq, d, heads, layers, batch;
  std::string size() const { return fmt::format("{}x{} d{} h{} L{} V{}", batch, seq, d, heads, layers, vocab); }
  /// The forward pass's matmul flops: per token and layer 24 d^2 (QKV 6 d^2, attention output 2 d^2, MLP 16 d^2)
  /// and 4 T d (scores and weighted values over all T keys, the causal mask's zeros included), plus the head's
  /// 2 d V per token.
  double forward_flops() const {
    return static_cast<double>(batch * seq) *
           (static_cast<double>(layers) * (24.0 * d * d + 4.0 * seq * d) + 2.0 * d * vocab);
  }
  /// Per layer 12 d^2 + 9 d (two layer norms, QKV, output, MLP up and down with biases); embeddings, final layer
  /// norm and head.
  double n_params() const {
    return static_cast<double>(vocab * d + seq * d + layers * (12 * d * d + 9 * d) + 2 * d + d * vocab);
  }
};
void bench_transformer_step(const TfConfig& c);
void bench_transformer_infer(const TfConfig& c);

/// The small CNN training step's shape.
struct CnnConfig {
  int64_t batch, hw, channels, c1, c2;  // NHWC input [batch, hw, hw, channels]; conv output channels c1, c2
  std::string size() const { return fmt::format("{}x{}x{}x{} c{},{}", batch, hw, hw, channels, c1, c2); }
  int64_t dense_in() const { return (hw / 4) * (hw / 4) * c2; }
  /// The convolutions' and the head's multiply-adds, twice.
  double forward_flops() const {
    return 2.0 * batch *
           (static_cast<double>(hw * hw) * c1 * 9 * channels + static_cast<double>(hw * hw / 4) * c2 * 9 * c1 +
            static_cast<double>(dense_in()) * kTrainClasses);
  }
  double n_params() const {
    return static_cast<double>(9 * channels * c1 + c1 + 9 * c1 * c2 + c2 + dense_in() * kTrainClasses +
                               kTrainClasses);
  }
};
void bench_cnn_step(const CnnConfig& c);
}  // namespace jbench
