// A small decoder-only transformer trained to reverse sequences, with its layers in lax::scan over
// stacked weights.
//
// Token and position embeddings, pre-norm blocks (layer norm, causal multi-head self-attention,
// layer norm, GELU MLP), a final layer norm and a linear head. Each example is `x1 .. xL SEP xL ..
// x1`; the model reads it left to right and is scored only on the reversed half, which it can only
// get right by attending back across the separator. The dataset's size is not a multiple of the
// batch: the last batch of every epoch is padded to the full batch and its padding rows are masked
// out of the loss, so every step has the same shapes and train_step compiles exactly once.
//
//   train_transformer [--steps N] [--print-every N] [--layers N] [--lr X] [--unrolled] [--check]
//
// The full run is `train_transformer` (2 layers, 300 steps: every held-out sequence reversed
// without a mistake). CI runs a tiny configuration with --check (CTest
// `example_train_transformer`): one compile of train_step (compile log and jit cache), a loss that
// falls, and a held-out token accuracy above 0.5 (chance is 0.1). --unrolled runs the layers as a
// C++ loop instead of lax::scan.
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

constexpr int64_t kSymbols = 10;    // tokens 0..9 are data
constexpr int64_t kSep = kSymbols;  // the separator
constexpr int64_t kVocab = kSymbols + 1;
constexpr int64_t kLen = 8;         // symbols per half
constexpr int64_t kSeq = 2 * kLen;  // model input length: x1..xL SEP xL..x2 (the last target is x1)
constexpr int64_t kModel = 32, kHeads = 4, kHeadDim = kModel / kHeads, kMlp = 4 * kModel;
constexpr int64_t kBatch = 32;
constexpr int64_t kTrain = 1000;  // not a multiple of kBatch: the last batch is ragged
constexpr int64_t kTest = 256;

/// One block's weights; in Params every field gains a leading [layers] axis and lax::scan walks it.
}  // namespace

struct Layer {
  Array ln1_scale, ln1_bias, w_qkv, w_out, ln2_scale, ln2_bias, w_up, b_up, w_down, b_down;
};
JITX_PYTREE(Layer, ln1_scale, ln1_bias, w_qkv, w_out, ln2_scale, ln2_bias, w_up, b_up, w_down,
            b_down)

struct Params {
  Array tok_embed, pos_embed;  // [vocab, d], [seq, d]
  Layer layers;                // stacked: [layers, ...]
  Array lnf_scale, lnf_bias, w_head;
};
JITX_PYTREE(Params, tok_embed, pos_embed, layers, lnf_scale, lnf_bias, w_head)

struct Batch {
  Array tokens;   // i32[B, seq]: the model's input
  Array targets;  // i32[B, seq]: the next token at each position
  Array weights;  // f32[B, seq]: 1 where the loss counts (reversed half of real rows), 0 elsewhere
                  // and on padding
};
JITX_PYTREE(Batch, tokens, targets, weights)

namespace {

using OptState = optim::AdamState<Params>;

/// n examples of the reversal task: tokens, next-token targets and the loss weights of the reversed
/// half.
Batch make_data(const Array& key, int64_t n) {
  Array x = random::randint(key, {n, kLen}, 0, static_cast<int32_t>(kSymbols));
  Array sep = full({n, 1}, static_cast<double>(kSep), int32);
  Array seq = jnp::concatenate({x, sep, jnp::flip(x, {1})}, 1);  // [n, 2L + 1]
  Array pos = lax::broadcasted_iota(int32, {n, kSeq}, 1);
  // Position p predicts token p + 1; the reversed half starts at the separator (p = L).
  Array weights = (pos >= static_cast<int32_t>(kLen)).astype(float32);
  return {jnp::slice_axis(seq, 1, 0, kSeq), jnp::slice_axis(seq, 1, 1, kSeq + 1), weights};
}

Params init_params(const Array& key, int64_t layers) {
  Array k = random::split(key, 7);
  auto normal = [](const Array& kk, Shape s, double scale) {
    return random::normal(kk, s) * scale;
  };
  double s = 1.0 / std::sqrt(static_cast<double>(kModel));
  Layer l{ones({layers, kModel}),
          zeros({layers, kModel}),
          normal(k[0], {layers, kModel, 3 * kModel}, s),
          normal(k[1], {layers, kModel, kModel}, s / std::sqrt(2.0 * layers)),
          ones({layers, kModel}),
          zeros({layers, kModel}),
          normal(k[2], {layers, kModel, kMlp}, s),
          zeros({layers, kMlp}),
          normal(k[3], {layers, kMlp, kModel},
                 1.0 / std::sqrt(static_cast<double>(kMlp) * 2.0 * layers)),
          zeros({layers, kModel})};
  return {normal(k[4], {kVocab, kModel}, 0.5),
          normal(k[5], {kSeq, kModel}, 0.5),
          l,
          ones({kModel}),
          zeros({kModel}),
          normal(k[6], {kModel, kVocab}, s)};
}

/// Causal multi-head self-attention of h: [B, T, d].
Array attention(const Array& h, const Layer& l) {
  int64_t b = h.dim(0), t = h.dim(1);
  Array qkv = jnp::matmul(h, l.w_qkv);  // [B, T, 3d]
  auto head = [&](int64_t i) {
    return jnp::slice_axis(qkv, 2, i * kModel, (i + 1) * kModel).reshape({b, t, kHeads, kHeadDim});
  };
  Array q = head(0), k = head(1), v = head(2);
  Array scores =
      jnp::einsum("bqhd,bkhd->bhqk", {q, k}) * (1.0 / std::sqrt(static_cast<double>(kHeadDim)));
  // Position q sees keys k <= q only.
  Array causal = lax::broadcasted_iota(int32, {t, t}, 0) >= lax::broadcasted_iota(int32, {t, t}, 1);
  scores = jnp::where(causal, scores, Array(-1e9f));
  Array attn = nn::softmax(scores, -1);
  Array out = jnp::einsum("bhqk,bkhd->bqhd", {attn, v}).reshape({b, t, kModel});
  return jnp::matmul(out, l.w_out);
}

/// One pre-norm block: h + attn(ln(h)), then h + mlp(ln(h)).
Array block(const Array& h, const Layer& l) {
  Array a = h + attention(nn::layer_norm(h, l.ln1_scale, l.ln1_bias), l);
  Array m = nn::gelu(jnp::matmul(nn::layer_norm(a, l.ln2_scale, l.ln2_bias), l.w_up) + l.b_up);
  return a + jnp::matmul(m, l.w_down) + l.b_down;
}

/// Layer i of the stacked weights.
Layer layer_at(const Layer& stacked, int64_t i) {
  std::vector<Array> leaves = tree_leaves(stacked);
  for (auto& a : leaves) a = a[i];
  return jitx::detail::replace_leaves(stacked, leaves);
}

/// Logits [B, T, vocab]. The layers run as one lax::scan over the stacked weights (one traced
/// block, whatever the depth), or with `unrolled` as a C++ loop (one traced block per layer: the
/// reference the scan must match).
Array forward(const Params& p, const Array& tokens, bool unrolled) {
  Array h = jnp::take(p.tok_embed, tokens, 0) + p.pos_embed;
  if (unrolled) {
    for (int64_t i = 0; i < p.layers.w_qkv.dim(0); ++i) h = block(h, layer_at(p.layers, i));
  } else {
    h = lax::scan([](const Array& c,
                     const Layer& l) { return std::make_pair(block(c, l), std::tuple<>{}); },
                  h, p.layers)
            .first;
  }
  return jnp::matmul(nn::layer_norm(h, p.lnf_scale, p.lnf_bias), p.w_head);
}

/// Weighted mean cross-entropy: padding rows and the prompt half carry weight 0.
Array loss_fn(const Params& p, const Batch& b, bool unrolled) {
  Array logp = nn::log_softmax(forward(p, b.tokens, unrolled));
  Array nll = -jnp::sum(logp * nn::one_hot(b.targets, kVocab), {-1});
  return jnp::sum(nll * b.weights) / jnp::maximum(jnp::sum(b.weights), Array(1.0f));
}

std::tuple<Params, OptState, Array> train_step(const Params& params, const OptState& opt_state,
                                               const Batch& batch, double lr, bool unrolled) {
  auto loss_of = [unrolled](const Params& p, const Batch& b) { return loss_fn(p, b, unrolled); };
  auto [loss, grads] = value_and_grad(loss_of)(params, batch);
  auto [new_params, new_state] =
      optim::adam_update(params, grads, opt_state, Array(static_cast<float>(lr)), 0.9, 0.98);
  return {new_params, new_state, loss};
}

/// Token accuracy on the weighted positions, and the fraction of sequences reversed without a
/// mistake.
std::pair<Array, Array> evaluate(const Params& p, const Batch& b) {
  Array right =
      (jnp::argmax(forward(p, b.tokens, /*unrolled=*/false), -1) == b.targets).astype(float32);
  Array counted =
      right * b.weights + (1.0f - b.weights);  // positions outside the reversed half count as right
  Array tok = jnp::sum(right * b.weights) / jnp::sum(b.weights);
  Array seq = jnp::mean(jnp::min(counted, {1}));
  return {tok, seq};
}

/// Batch i of an epoch over `data` in the order `perm` ([padded rows] indices); rows past the
/// data's end are padding: they repeat row 0 with weight 0, so the batch keeps its shape.
Batch get_batch(const Batch& data, const Array& perm, const Array& start) {
  Array idx = lax::dynamic_slice(perm, {start}, {kBatch});
  Array real = (start + lax::iota(int32, kBatch)) < static_cast<int32_t>(data.tokens.dim(0));
  Array safe = jnp::where(real, idx, Array(0));
  Array w = jnp::take(data.weights, safe, 0) * real.astype(float32).reshape({kBatch, 1});
  return {jnp::take(data.tokens, safe, 0), jnp::take(data.targets, safe, 0), w};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 300, print_every = 50, layers = 2;
  double lr = 3e-3;
  bool check = false, unrolled = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--print-every") && i + 1 < argc)
      print_every = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--layers") && i + 1 < argc)
      layers = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--check"))
      check = true;
    else if (!std::strcmp(argv[i], "--lr") && i + 1 < argc)
      lr = std::stod(argv[++i]);
    else if (!std::strcmp(argv[i], "--unrolled"))
      unrolled = true;
    else {
      std::fprintf(stderr,
                   "usage: train_transformer [--steps N] [--print-every N] [--layers N] "
                   "[--lr X] [--unrolled] [--check]\n");
      return 2;
    }
  }
  int train_step_compiles_logged = 0;
  const bool verbose =
      config().log_compiles;  // JITX_LOG_COMPILES=1 shows every compile, not just train_step's
  config().log_compiles = true;
  set_log_sink([&](const std::string& line) {
    bool mine = line.find("Compiled 'train_step'") != std::string::npos;
    train_step_compiles_logged += mine;
    if (mine || verbose) std::printf("%s\n", line.c_str());
  });

  Array keys = random::split(random::PRNGKey(1), 4);
  auto data_fn = [](int64_t n) {
    return jit([n](const Array& k) { return make_data(k, n); }, {.name = "make_data"});
  };
  Batch train = data_fn(kTrain)(keys[0]), test = data_fn(kTest)(keys[1]);
  Params params = init_params(keys[2], layers);
  OptState opt_state = optim::adam_init(params);

  auto step = jit([lr, unrolled](const Params& p, const OptState& s,
                                 const Batch& b) { return train_step(p, s, b, lr, unrolled); },
                  {.donate_argnums = {0, 1}, .name = "train_step"});
  auto batch_at = jit(get_batch, {.name = "get_batch"});
  // An epoch's order, padded with indices past the end up to a whole number of batches.
  constexpr int64_t kBatches = (kTrain + kBatch - 1) / kBatch, kPadded = kBatches * kBatch;
  auto order = jit(
      [](const Array& k) {
        return jnp::concatenate({random::permutation(k, kTrain), arange(kTrain, kPadded, 1, int32)},
                                0);
      },
      {.name = "epoch_order"});
  auto eval = jit(evaluate, {.name = "evaluate"});

  std::printf(
      "reversing %lld-symbol sequences: %lld-layer transformer (d=%lld, %lld heads), %lld training "
      "sequences "
      "in batches of %lld (the last one padded from %lld rows), %lld steps (platform %s)\n",
      (long long)kLen, (long long)layers, (long long)kModel, (long long)kHeads, (long long)kTrain,
      (long long)kBatch, (long long)(kTrain % kBatch), (long long)steps,
      default_platform().c_str());
  auto [tok0, seq0] = eval(params, test);
  std::printf("before training: token accuracy %.3f (chance %.3f)\n", tok0.item<float>(),
              1.0 / kSymbols);

  auto t0 = std::chrono::steady_clock::now();
  std::vector<Array> losses;
  Array perm;
  double first_loss = -1, last_window = -1;
  for (int64_t s = 0; s < steps; ++s) {
    int64_t i = s % kBatches;
    if (i == 0) perm = order(random::fold_in(keys[3], Array(static_cast<int32_t>(s / kBatches))));
    Batch b = batch_at(train, perm, Array(static_cast<int32_t>(i * kBatch)));
    Array loss;
    std::tie(params, opt_state, loss) = step(params, opt_state, b);
    losses.push_back(loss);
    if ((s + 1) % print_every == 0 || s + 1 == steps) {
      int64_t from = std::max<int64_t>(0, s + 1 - print_every);
      double sum = 0;
      for (int64_t k = from; k <= s; ++k) sum += losses[k].item<float>();
      last_window = sum / static_cast<double>(s + 1 - from);
      if (first_loss < 0) first_loss = losses[0].item<float>();
      std::printf("step %5lld  loss %.4f\n", (long long)(s + 1), last_window);
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto [tok, seq] = eval(params, test);
  double tok_acc = tok.item<float>(), seq_acc = seq.item<float>();
  std::printf("first loss %.4f, final loss %.4f (log(vocab) = %.4f)\n", first_loss, last_window,
              std::log(double(kVocab)));
  std::printf("held-out sequences: token accuracy %.3f, fully reversed %.3f\n", tok_acc, seq_acc);
  std::printf(
      "%lld steps in %.2f s including the compile (%.1f steps/s); train_step compiled %zu time(s), "
      "logged %d\n",
      (long long)steps, secs, static_cast<double>(steps) / secs, step.num_compiles(),
      train_step_compiles_logged);
  set_log_sink(nullptr);

  if (check) {
    std::vector<std::string> failures;
    if (step.num_compiles() != 1 || step.cache_size() != 1 || train_step_compiles_logged != 1)
      failures.push_back(
          "train_step must compile exactly once (the ragged batch is padded, not reshaped)");
    if (!(last_window < 0.8 * first_loss)) failures.push_back("the loss must fall");
    if (!(tok_acc > 0.5)) failures.push_back("held-out token accuracy must be well above chance");
    for (auto& f : failures) std::printf("CHECK FAILED: %s\n", f.c_str());
    if (!failures.empty()) return 1;
    std::printf("checks passed\n");
  }
  return 0;
}
