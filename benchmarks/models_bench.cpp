// jitx_bench's realistic models (bench_state.h): a decoder-only transformer's training step and its inference
// at batch 1, and a small CNN's training step; benchmarks/jax_bench.py has the same models in JAX.
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "bench_state.h"
#include "jitx/jitx.h"
#include "jitx/optim.h"

using namespace jitx;
using bench::Result;
using bench::randn;

/// The transformer workloads' weights, as examples/train_transformer.cpp's: one pre-norm block's weights, each
/// with a leading [layers] axis that lax::scan walks.
struct TfLayer {
  Array ln1_scale, ln1_bias, w_qkv, w_out, ln2_scale, ln2_bias, w_up, b_up, w_down, b_down;
};
JITX_PYTREE(TfLayer, ln1_scale, ln1_bias, w_qkv, w_out, ln2_scale, ln2_bias, w_up, b_up, w_down, b_down)
struct TfParams {
  Array tok_embed, pos_embed;  // [vocab, d], [seq, d]
  TfLayer layers;              // stacked: [layers, ...]
  Array lnf_scale, lnf_bias, w_head;
};
JITX_PYTREE(TfParams, tok_embed, pos_embed, layers, lnf_scale, lnf_bias, w_head)
struct TfBatch {
  Array tokens, targets;  // i32[B, T]: the input and the next token at each position
};
JITX_PYTREE(TfBatch, tokens, targets)
/// The CNN training step's weights (HWIO convolution kernels, NHWC activations) and batch.
struct CnnParams {
  Array w1, b1, w2, b2, w3, b3;  // [3, 3, C, c1], [c1], [3, 3, c1, c2], [c2], [H/4 * W/4 * c2, 10], [10]
};
JITX_PYTREE(CnnParams, w1, b1, w2, b2, w3, b3)
struct CnnBatch {
  Array x, y;  // f32[B, H, W, C], i32[B]
};
JITX_PYTREE(CnnBatch, x, y)

namespace jbench {
// --- a decoder-only transformer (examples/train_transformer.cpp's model): a training step and inference
// ------------------
constexpr double kTfLr = 1e-3, kTfB1 = 0.9, kTfB2 = 0.98, kTfEps = 1e-8, kTfWeightDecay = 0.01;

/// examples/train_transformer.cpp's initialisation: normal weights of std 1/sqrt(d) (the attention output and MLP
/// down projections scaled by 1/sqrt(2 layers) more, the latter from its fan-in 4d), embeddings of std 0.5, layer
/// norm scales 1, biases 0.
TfParams tf_init(const TfConfig& c) {
  const int64_t L = c.layers, d = c.d, m = 4 * d;
  const float s = 1.0f / std::sqrt(static_cast<float>(d)), deep = std::sqrt(2.0f * static_cast<float>(L));
  auto normal = [](Shape shape, float scale, uint32_t seed) {
    int64_t n = 1;
    for (int64_t k : shape) n *= k;
    return array(randn(static_cast<size_t>(n), scale, seed), shape);
  };
  TfLayer l{ones({L, d}),
            zeros({L, d}),
            normal({L, d, 3 * d}, s, 31),
            normal({L, d, d}, s / deep, 32),
            ones({L, d}),
            zeros({L, d}),
            normal({L, d, m}, s, 33),
            zeros({L, m}),
            normal({L, m, d}, 1.0f / std::sqrt(static_cast<float>(m)) / deep, 34),
            zeros({L, d})};
  return {normal({c.vocab, d}, 0.5f, 35), normal({c.seq, d}, 0.5f, 36), l, ones({d}), zeros({d}),
          normal({d, c.vocab}, s, 37)};
}

/// Tokens (i * 7 + 3) mod V over the flattened [B, T] positions; each position's target is the next one's token.
TfBatch tf_batch(const TfConfig& c) {
  std::vector<int32_t> tokens(c.batch * c.seq), targets(c.batch * c.seq);
  for (int64_t i = 0; i < c.batch * c.seq; ++i) {
    tokens[i] = static_cast<int32_t>((i * 7 + 3) % c.vocab);
    targets[i] = static_cast<int32_t>((i * 7 + 10) % c.vocab);
  }
  return {array(tokens, {c.batch, c.seq}), array(targets, {c.batch, c.seq})};
}

/// Causal multi-head self-attention of h: [B, T, d].
Array tf_attention(const Array& h, const TfLayer& l, int64_t heads) {
  const int64_t b = h.dim(0), t = h.dim(1), d = h.dim(2), hd = d / heads;
  Array qkv = jnp::matmul(h, l.w_qkv);  // [B, T, 3d]
  auto part = [&](int64_t i) { return jnp::slice_axis(qkv, 2, i * d, (i + 1) * d).reshape({b, t, heads, hd}); };
  Array q = part(0), k = part(1), v = part(2);
  Array scores = jnp::einsum("bqhd,bkhd->bhqk", {q, k}) * (1.0 / std::sqrt(static_cast<double>(hd)));
  Array causal = lax::broadcasted_iota(int32, {t, t}, 0) >= lax::broadcasted_iota(int32, {t, t}, 1);
  Array attn = nn::softmax(jnp::where(causal, scores, Array(-1e9f)), -1);
  return jnp::matmul(jnp::einsum("bhqk,bkhd->bqhd", {attn, v}).reshape({b, t, d}), l.w_out);
}

/// One pre-norm block: h + attn(ln(h)), then h + mlp(ln(h)).
Array tf_block(const Array& h, const TfLayer& l, int64_t heads) {
  Array a = h + tf_attention(nn::layer_norm(h, l.ln1_scale, l.ln1_bias), l, heads);
  Array m = nn::gelu(jnp::matmul(nn::layer_norm(a, l.ln2_scale, l.ln2_bias), l.w_up) + l.b_up);
  return a + jnp::matmul(m, l.w_down) + l.b_down;
}

/// Logits [B, T, vocab], the layers one lax::scan over the stacked weights.
Array tf_forward(const TfParams& p, const Array& tokens, int64_t heads) {
  Array h = jnp::take(p.tok_embed, tokens, 0) + p.pos_embed;
  h = lax::scan(
          [heads](const Array& c, const TfLayer& l) { return std::make_pair(tf_block(c, l, heads), std::tuple<>{}); },
          h, p.layers)
          .first;
  return jnp::matmul(nn::layer_norm(h, p.lnf_scale, p.lnf_bias), p.w_head);
}

/// Mean next-token cross-entropy over every position.
Array tf_loss(const TfParams& p, const TfBatch& b, int64_t heads) {
  Array logp = nn::log_softmax(tf_forward(p, b.tokens, heads));
  return -jnp::mean(jnp::sum(logp * nn::one_hot(b.targets, p.w_head.dim(1)), {-1}));
}

using TfOpt = optim::AdamState<TfParams>;
std::tuple<TfParams, TfOpt, Array> tf_train_step(const TfParams& p, const TfOpt& s, const TfBatch& b,
                                                 int64_t heads) {
  auto [loss, g] =
      value_and_grad([heads](const TfParams& q, const TfBatch& bb) { return tf_loss(q, bb, heads); })(p, b);
  auto [np, ns] =
      optim::adam_update(p, g, s, Array(static_cast<float>(kTfLr)), kTfB1, kTfB2, kTfEps, kTfWeightDecay);
  return {np, ns, loss};
}

/// The jitted training step, parameters and AdamW state donated.
auto tf_step_fn(int64_t heads) {
  return jit([heads](const TfParams& p, const TfOpt& s,
                     const TfBatch& b) { return tf_train_step(p, s, b, heads); },
             {.donate_argnums = {0, 1}, .name = "transformer_step"});
}

void bench_transformer_step(const TfConfig& c) {
  const double n = c.n_params();
  // Bytes: parameters, gradients and both moments read, three written back, and the batch.
  Result r{"transformer_step", c.size(), "f32", "jitx", {}, 4.0 * (7.0 * n + 2.0 * c.batch * c.seq),
           3.0 * c.forward_flops(), -1,
           fmt::format("decoder-only pre-norm transformer, layers in lax::scan, vocab {}: causal attention + GELU "
                       "MLP + layer norms, mean cross-entropy, value_and_grad, AdamW (lr 1e-3, b1 0.9, b2 0.98, "
                       "eps 1e-8, wd 0.01), params + state donated; flops = 3 x forward matmul flops, forward = "
                       "B T (L (24 d^2 + 4 T d) + 2 d V)",
                       c.vocab)};
  if (skipped(r)) return;
  TfParams p = tf_init(c);
  TfOpt s = optim::adam_init(p);
  TfBatch batch = tf_batch(c);
  run_train_step(r, tf_step_fn(c.heads), p, s, batch);
}

/// The forward pass alone (logits of every position) at c's batch: latency per call.
void bench_transformer_infer(const TfConfig& c) {
  Result r{"transformer_infer", c.size(), "f32", "jitx", {}, 4.0 * (c.n_params() + c.batch * c.seq * (1.0 + c.vocab)),
           c.forward_flops(), -1,
           fmt::format("transformer_step's model, forward only: logits [B, T, {}] of every position; flops = B T "
                       "(L (24 d^2 + 4 T d) + 2 d V)",
                       c.vocab)};
  if (skipped(r)) return;
  TfParams p = tf_init(c);
  Array tokens = tf_batch(c).tokens;
  const int64_t heads = c.heads;
  auto t0 = bench::Clock::now();
  auto fwd = jit([heads](const TfParams& q, const Array& t) { return tf_forward(q, t, heads); },
                 {.name = "transformer_infer"})
                 .lower(p, tokens)
                 .compile();
  r.compile_ms = bench::seconds_since(t0) * 1e3;
  r.stats = bench::measure([&] { fwd(p, tokens).block_until_ready(); }, g_min_time);
  emit(r);
}

// --- a small CNN training step: two 3x3 convolutions (SAME, stride 1) + ReLU + 2x2 max pooling, a dense head
// ------------------
constexpr double kCnnLr = 0.01, kCnnMomentum = 0.9;

/// He-normal convolution kernels (std sqrt(2 / fan_in), fan_in = 9 x input channels), the head as train_step's
/// dense layers (std sqrt(2 / (in + out))), biases 0.
CnnParams cnn_init(const CnnConfig& c) {
  auto normal = [](Shape shape, double scale, uint32_t seed) {
    int64_t n = 1;
    for (int64_t k : shape) n *= k;
    return array(randn(static_cast<size_t>(n), static_cast<float>(scale), seed), shape);
  };
  return {normal({3, 3, c.channels, c.c1}, std::sqrt(2.0 / (9.0 * c.channels)), 41),
          zeros({c.c1}),
          normal({3, 3, c.c1, c.c2}, std::sqrt(2.0 / (9.0 * c.c1)), 42),
          zeros({c.c2}),
          normal({c.dense_in(), kTrainClasses}, std::sqrt(2.0 / static_cast<double>(c.dense_in() + kTrainClasses)),
                 43),
          zeros({kTrainClasses})};
}

/// relu(conv(x, w) + b) (3x3, stride 1, SAME), then 2x2 max pooling (stride 2); NHWC activations, HWIO kernels.
Array cnn_conv_pool(const Array& x, const Array& w, const Array& b) {
  static const lax::ConvDimensionNumbers dn = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  Array y = nn::relu(lax::conv_general_dilated(x, w, {1, 1}, {{1, 1}, {1, 1}}, {}, {}, dn) + b);
  return lax::reduce_window_max(y, {.window_dimensions = {1, 2, 2, 1}, .window_strides = {1, 2, 2, 1}});
}

Array cnn_loss(const CnnParams& p, const CnnBatch& b) {
  Array h = cnn_conv_pool(cnn_conv_pool(b.x, p.w1, p.b1), p.w2, p.b2);
  h = h.reshape({h.dim(0), h.dim(1) * h.dim(2) * h.dim(3)});
  Array logp = nn::log_softmax(jnp::matmul(h, p.w3) + p.b3);
  return -jnp::mean(jnp::sum(logp * nn::one_hot(b.y, kTrainClasses), {-1}));
}

/// One step of SGD with momentum (optim::sgd_update: v = 0.9 v + g, p -= 0.01 v); returns the loss before it.
std::tuple<CnnParams, CnnParams, Array> cnn_train_step(const CnnParams& p, const CnnParams& v, const CnnBatch& b) {
  auto [loss, g] = value_and_grad(cnn_loss)(p, b);
  auto [np, nv] = optim::sgd_update(p, g, v, Array(static_cast<float>(kCnnLr)), kCnnMomentum);
  return {np, nv, loss};
}

auto cnn_step_fn() { return jit(cnn_train_step, {.donate_argnums = {0, 1}, .name = "cnn_step"}); }

CnnBatch cnn_batch(const CnnConfig& c) {
  std::vector<int32_t> labels(c.batch);
  for (int64_t i = 0; i < c.batch; ++i) labels[i] = static_cast<int32_t>((i * 7) % kTrainClasses);
  return {array(randn(c.batch * c.hw * c.hw * c.channels, 1.0f, 44), {c.batch, c.hw, c.hw, c.channels}),
          array(labels, {c.batch})};
}

void bench_cnn_step(const CnnConfig& c) {
  const double n = c.n_params();
  // Bytes: parameters, gradients and momenta read, two written back, and the batch.
  Result r{"cnn_step", c.size(), "f32", "jitx", {}, 4.0 * (5.0 * n + c.batch * (c.hw * c.hw * c.channels + 1.0)),
           3.0 * c.forward_flops(), -1,
           "NHWC/HWIO conv_general_dilated 3x3 SAME + ReLU + 2x2 max pool (reduce_window_max), twice; dense head to "
           "10 classes, softmax cross-entropy, value_and_grad, SGD momentum 0.9 lr 0.01, params + momenta donated; "
           "flops = 3 x forward conv and dense flops"};
  if (skipped(r)) return;
  CnnParams p = cnn_init(c);
  CnnParams v = optim::sgd_init(p);
  CnnBatch batch = cnn_batch(c);
  run_train_step(r, cnn_step_fn(), p, v, batch);
}
}  // namespace jbench
