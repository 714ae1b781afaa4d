// jax.nn.dot_product_attention (its "xla" implementation) written with jnp ops: the query heads grouped by key head
// (grouped-query attention as one more einsum dim instead of JAX's vmap over the groups), the masks combined into
// one where, softmax in float32.
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/nn.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"

namespace jitx::nn {
using detail::ApiScope;
using detail::throw_error;

namespace {
constexpr const char* kAttention = "dot_product_attention";

Array at_least_4d(const Array& t) {
  if (t.ndim() >= 4) return t;
  std::vector<int64_t> lead;
  for (int64_t i = 0; i < 4 - t.ndim(); ++i) lead.push_back(i);
  return jnp::expand_dims(t, lead);
}

// bias or mask [tB, tN, tT, tS] as [tB, K or 1, G or 1, tT, tS] against the grouped logits [B, K, G, T, S].
Array grouped(const Array& t, int64_t N, int64_t K, int64_t G, const char* name) {
  if (t.ndim() != 4) throw_error<ShapeError>(kAttention, "{} must be 4-d (or less), got {}", name, t.aval().str());
  const Shape& s = t.shape();
  if (s[1] == 1) return jnp::reshape(t, {s[0], 1, 1, s[2], s[3]});
  if (s[1] != N)
    throw_error<ShapeError>(kAttention, "{} must have 1 or {} (the query heads) heads on axis 1, got {}", name, N,
                            t.aval().str());
  return jnp::reshape(t, {s[0], K, G, s[2], s[3]});
}

void check_seq_lengths(const std::optional<Array>& l, int64_t B, const char* name) {
  if (!l) return;
  if (!l->valid()) throw_error<TypeError>(kAttention, "{} is an empty (default-constructed) Array", name);
  if (l->dtype() != DType::int32 || l->shape() != Shape{B})
    throw_error<ShapeError>(kAttention, "{} must be int32 [{}] (one length per batch entry), got {}", name, B,
                            l->aval().str());
}
}  // namespace

Array dot_product_attention(const Array& query, const Array& key, const Array& value, std::optional<Array> bias,
                            std::optional<Array> mask, const AttentionOptions& o, Loc loc) {
  ApiScope scope(loc);
  for (const Array* a : {&query, &key, &value})
    if (!a->valid()) throw_error<TypeError>(kAttention, "got an empty (default-constructed) Array");
  if (bias && !bias->valid()) throw_error<TypeError>(kAttention, "bias is an empty (default-constructed) Array");
  if (mask && !mask->valid()) throw_error<TypeError>(kAttention, "mask is an empty (default-constructed) Array");
  const Shape out_shape = query.shape();
  Array q = at_least_4d(query), k = at_least_4d(key), v = at_least_4d(value);
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4)
    throw_error<ShapeError>(kAttention, "query, key and value must be [B, T, N, H] and [B, S, K, H], got {}, {} and {}",
                            query.aval().str(), key.aval().str(), value.aval().str());
  const int64_t B = k.shape()[0], S = k.shape()[1], K = k.shape()[2], H = k.shape()[3];
  const int64_t T = q.shape()[1], N = q.shape()[2];
  if (v.shape() != k.shape() || v.dtype() != k.dtype())
    throw_error<ShapeError>(kAttention, "value must have key's shape and dtype {}, got {}", k.aval().str(),
                            v.aval().str());
  if (q.shape()[0] != B || q.shape()[3] != H || q.dtype() != k.dtype())
    throw_error<ShapeError>(kAttention, "query must be [{}, T, N, {}] of key's dtype, got {} (key {})", B, H,
                            query.aval().str(), key.aval().str());
  if (!is_floating(q.dtype())) throw_error<TypeError>(kAttention, "takes float arrays, got {}", query.aval().str());
  if (K == 0 || N % K != 0)
    throw_error<ShapeError>(kAttention, "the number of query heads must be a multiple of key/value heads, got {} vs {}",
                            N, K);
  if (mask && mask->dtype() != DType::bool_)
    throw_error<TypeError>(kAttention, "mask must be bool, got {}", mask->aval().str());
  check_seq_lengths(o.query_seq_lengths, B, "query_seq_lengths");
  check_seq_lengths(o.key_value_seq_lengths, B, "key_value_seq_lengths");
  const int64_t G = N / K;
  const double scale = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(H));
  // Logits in query's dtype promoted with float32 (bf16/f16 products are exact in float32: JAX's BF16_BF16_F32).
  const DType ld = q.dtype() == DType::float64 ? DType::float64 : DType::float32;
  Array qg = jnp::reshape(q, {B, T, K, G, H});
  Array logits = jnp::einsum("btkgh,bskh->bkgts", {jnp::astype(qg, ld), jnp::astype(k, ld)});
  logits = jnp::multiply(logits, Array::scalar(scale, ld));
  if (bias) logits = jnp::astype(jnp::add(logits, grouped(at_least_4d(*bias), N, K, G, "bias")), ld);
  std::optional<Array> keep;
  auto both = [&](const Array& m) { keep = keep ? jnp::logical_and(*keep, m) : m; };
  if (mask) both(grouped(at_least_4d(*mask), N, K, G, "mask"));
  Array tpos = jnp::reshape(jnp::arange(static_cast<double>(T), DType::int32), {T, 1});
  Array spos = jnp::reshape(jnp::arange(static_cast<double>(S), DType::int32), {1, S});
  if (o.is_causal) both(jnp::less_equal(spos, tpos));  // tril(ones(T, S))
  if (o.local_window_size) {
    auto [left, right] = *o.local_window_size;
    both(jnp::logical_and(jnp::less_equal(tpos, jnp::add(spos, Array::scalar_int(left, DType::int32))),
                          jnp::greater_equal(tpos, jnp::subtract(spos, Array::scalar_int(right, DType::int32)))));
  }
  if (o.query_seq_lengths)
    both(jnp::reshape(jnp::less(jnp::reshape(tpos, {1, T}), jnp::reshape(*o.query_seq_lengths, {B, 1})),
                      {B, 1, 1, T, 1}));
  if (o.key_value_seq_lengths)
    both(jnp::reshape(jnp::less(spos, jnp::reshape(*o.key_value_seq_lengths, {B, 1})), {B, 1, 1, 1, S}));
  if (keep) {
    // JAX's large negative: -0.7 times the dtype's largest value, capped at float32's (the softmax runs in f32).
    const double big = static_cast<double>(std::numeric_limits<float>::max());
    logits = jnp::where(*keep, logits, Array::scalar(-0.7 * big, ld));
  }
  Array probs = jnp::astype(softmax(jnp::astype(logits, DType::float32), -1), k.dtype());
  Array enc = jnp::einsum("bkgts,bskh->btkgh", {probs, v});
  if (o.query_seq_lengths) {
    Array valid = jnp::less(jnp::reshape(tpos, {1, T}), jnp::reshape(*o.query_seq_lengths, {B, 1}));
    enc = jnp::multiply(enc, jnp::astype(jnp::reshape(valid, {B, T, 1, 1, 1}), enc.dtype()));
  }
  return jnp::reshape(enc, out_shape);
}

}  // namespace jitx::nn
