"""The JAX/XLA peer: the same workloads as jitx_bench.cpp, timed the same way (block_until_ready,
compile excluded and reported apart). Prints JSON lines like jitx_bench.

    jax_bench.py [--smoke] [--quick] [--only WORKLOAD] [--max-call-s SECONDS]
"""
import argparse
import functools
import json
import math
import time

import jax
import jax.numpy as jnp
import numpy as np


def measure(fn, min_time_s=0.3, min_reps=5, warmup=2, slow_s=0.5):
    # As bench::measure: a first call slower than slow_s cuts the warm-up to it and the repeats to 3.
    if warmup > 0:
        s = time.perf_counter()
        fn()
        first = time.perf_counter() - s
        if MAX_CALL_S and first > 5 * MAX_CALL_S:  # as bench::g_stop_after_s: one very slow call is the result
            ms = first * 1e3
            return dict(median_ms=ms, min_ms=ms, p10_ms=ms, p90_ms=ms, reps=1)
        if first > slow_s:
            warmup, min_reps, min_time_s = 1, min(min_reps, 3), 0
    for _ in range(1, warmup):
        fn()
    t = []
    start = time.perf_counter()
    while len(t) < min_reps or time.perf_counter() - start < min_time_s:
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
        if len(t) > 100000:
            break
    t.sort()
    q = lambda f: t[min(len(t) - 1, int(f * len(t)))]
    return dict(median_ms=q(0.5), min_ms=t[0], p10_ms=q(0.1), p90_ms=q(0.9), reps=len(t))


MAX_CALL_S = 2.0
_last = {}  # (workload, dtype) -> (work, median ms), as bench::Budget


def emit(workload, size, dtype, stats, bytes_=0, flops=0, compile_ms=-1, note=""):
    r = dict(workload=workload, size=size, dtype=dtype, system="jax", bytes=bytes_, flops=flops,
             compile_ms=compile_ms, note=note)
    r.update(stats)
    if r.get("reps"):
        _last[(workload, dtype)] = (flops or bytes_, r["median_ms"])
    print(json.dumps(r), flush=True)


def skipped(workload, size, dtype, bytes_, flops, compile_ms=-1):
    """Emits a "skipped" line when a call is predicted (from the previous size) to exceed MAX_CALL_S."""
    work = flops or bytes_
    last = _last.get((workload, dtype))
    if not MAX_CALL_S or not last or not last[0] or not work:
        return False
    predicted = last[1] * 1e-3 * work / last[0]
    if predicted <= MAX_CALL_S:
        return False
    emit(workload, size, dtype, dict(median_ms=0, min_ms=0, p10_ms=0, p90_ms=0, reps=0), bytes_, flops, compile_ms,
         note=f"skipped: ~{predicted:.0f} s per call predicted from the previous size")
    return True


def block(x, w, b):
    h = jax.nn.gelu(x @ w + b)
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    return (h - mu) * jax.lax.rsqrt(var + 1e-5)


DT = {"f32": jnp.float32, "bf16": jnp.bfloat16}


def run(workload, size, dtype, f, args, bytes_, flops, min_time, always_compile=False):
    if not always_compile and skipped(workload, size, dtype, bytes_, flops):
        return
    t0 = time.perf_counter()
    compiled = jax.jit(f).lower(*args).compile()
    compile_ms = (time.perf_counter() - t0) * 1e3
    if always_compile and skipped(workload, size, dtype, bytes_, flops, compile_ms):
        return
    st = measure(lambda: jax.block_until_ready(compiled(*args)), min_time)
    emit(workload, size, dtype, st, bytes_, flops, compile_ms)


# --- a training step: MLP forward + backward + Adam (as jitx::optim::adam_update), params and state donated --
CLASSES = 10


def mlp_loss(p, x, y):
    h = jax.nn.gelu(x @ p["w1"] + p["b1"])
    h = jax.nn.gelu(h @ p["w2"] + p["b2"])
    logp = jax.nn.log_softmax(h @ p["w3"] + p["b3"])
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, CLASSES), -1))


def adam_update(p, g, state, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    # weight_decay > 0: AdamW (decoupled decay scaled by lr, on every parameter), as jitx::optim::adam_update.
    count, mu, nu = state
    t = count + 1  # an int32 count, as optax's and jitx::optim's
    m = jax.tree.map(lambda m0, gi: m0 * b1 + gi * (1 - b1), mu, g)
    v = jax.tree.map(lambda v0, gi: v0 * b2 + gi * gi * (1 - b2), nu, g)
    c1, c2 = 1.0 - b1 ** t, 1.0 - b2 ** t

    def upd(pi, mi, vi):
        u = (mi / c1) / (jnp.sqrt(vi / c2) + eps)
        return pi - lr * (u + pi * weight_decay if weight_decay else u)

    new = jax.tree.map(upd, p, m, v)
    return new, (t, m, v)


def train_step(p, state, x, y):
    loss, g = jax.value_and_grad(mlp_loss)(p, x, y)
    p, state = adam_update(p, g, state, 1e-3)
    return p, state, loss


def bench_train_step(B, H, rng, min_time):
    D, C = H, CLASSES
    size = f"{B}x{H}"
    fwd = 2.0 * B * (D * H + H * H + H * C)
    n_params = D * H + H + H * H + H + H * C + C
    flops, bytes_ = 3.0 * fwd + 12.0 * n_params, 4.0 * (7.0 * n_params + B * D + B)
    if skipped("train_step", size, "f32", bytes_, flops):
        return
    dense = lambda i, o: jnp.asarray(rng.standard_normal((i, o)) * math.sqrt(2.0 / (i + o)), jnp.float32)
    p = dict(w1=dense(D, H), b1=jnp.zeros(H), w2=dense(H, H), b2=jnp.zeros(H), w3=dense(H, C), b3=jnp.zeros(C))
    state = adam_init(p)
    x = jnp.asarray(rng.standard_normal((B, D)), jnp.float32)
    y = jnp.asarray((np.arange(B) * 7) % C, jnp.int32)
    t0 = time.perf_counter()
    step = jax.jit(train_step, donate_argnums=(0, 1)).lower(p, state, x, y).compile()
    compile_ms = (time.perf_counter() - t0) * 1e3
    carry = [p, state]

    def once():
        carry[0], carry[1], loss = step(carry[0], carry[1], x, y)
        jax.block_until_ready((carry[0], carry[1], loss))

    emit("train_step", size, "f32", measure(once, min_time), bytes_, flops, compile_ms, "donated params + Adam state")


# --- a stack of residual MLP layers: lax.scan over stacked weights vs the unrolled Python loop ---------------
def stack_block(x, w1, w2):
    h = x + jax.nn.gelu(x @ w1) @ w2
    mu = h.mean(-1, keepdims=True)
    return (h - mu) * jax.lax.rsqrt(((h - mu) ** 2).mean(-1, keepdims=True) + 1e-5)


def stack_scan(x, w1, w2):
    return jax.lax.scan(lambda h, w: (stack_block(h, w[0], w[1]), None), x, (w1, w2))[0]


def stack_unrolled(x, w1, w2):
    for i in range(w1.shape[0]):
        x = stack_block(x, w1[i], w2[i])
    return x


def bench_layers(depth, batch, d, rng, min_time):
    size = f"depth {depth} {batch}x{d}"
    x = jnp.asarray(rng.standard_normal((batch, d)), jnp.float32)
    w1 = jnp.asarray(rng.standard_normal((depth, d, 4 * d)) / math.sqrt(d), jnp.float32)
    w2 = jnp.asarray(rng.standard_normal((depth, 4 * d, d)) / (2 * math.sqrt(d)), jnp.float32)
    flops = depth * 2.0 * (2.0 * batch * d * 4 * d)
    bytes_ = 4.0 * (depth * 8.0 * d * d + 2.0 * batch * d)
    # Compile time is this workload's point: measured at every depth, even where running is skipped.
    run("scan_layers", size, "f32", stack_scan, (x, w1, w2), bytes_, flops, min_time, always_compile=True)
    run("unrolled_layers", size, "f32", stack_unrolled, (x, w1, w2), bytes_, flops, min_time, always_compile=True)


# --- a decoder-only transformer (examples/train_transformer.cpp's model, as jitx_bench's): training step, inference
TF_LR, TF_B1, TF_B2, TF_EPS, TF_WD = 1e-3, 0.9, 0.98, 1e-8, 0.01


def tf_size(c):
    return f"{c['batch']}x{c['seq']} d{c['d']} h{c['heads']} L{c['layers']} V{c['vocab']}"


def tf_forward_flops(c):
    # Per token and layer 24 d^2 + 4 T d, plus the head's 2 d V (as TfConfig::forward_flops).
    b, t, d, L, V = c["batch"], c["seq"], c["d"], c["layers"], c["vocab"]
    return float(b * t) * (L * (24.0 * d * d + 4.0 * t * d) + 2.0 * d * V)


def tf_n_params(c):
    d, L, V, t = c["d"], c["layers"], c["vocab"], c["seq"]
    return float(V * d + t * d + L * (12 * d * d + 9 * d) + 2 * d + d * V)


def tf_init(c, rng):
    """As jitx_bench's tf_init (examples/train_transformer.cpp's scheme), numpy's normal draws."""
    L, d, V, t = c["layers"], c["d"], c["vocab"], c["seq"]
    m, s, deep = 4 * d, 1.0 / math.sqrt(d), math.sqrt(2.0 * L)
    normal = lambda shape, scale: jnp.asarray(rng.standard_normal(shape) * scale, jnp.float32)
    layers = dict(ln1_scale=jnp.ones((L, d)), ln1_bias=jnp.zeros((L, d)), w_qkv=normal((L, d, 3 * d), s),
                  w_out=normal((L, d, d), s / deep), ln2_scale=jnp.ones((L, d)), ln2_bias=jnp.zeros((L, d)),
                  w_up=normal((L, d, m), s), b_up=jnp.zeros((L, m)), w_down=normal((L, m, d), 1.0 / math.sqrt(m) / deep),
                  b_down=jnp.zeros((L, d)))
    return dict(tok_embed=normal((V, d), 0.5), pos_embed=normal((t, d), 0.5), layers=layers, lnf_scale=jnp.ones(d),
                lnf_bias=jnp.zeros(d), w_head=normal((d, V), s))


def tf_batch(c):
    # Tokens (i * 7 + 3) mod V over the flattened [B, T] positions, each target the next position's token.
    i = np.arange(c["batch"] * c["seq"]).reshape(c["batch"], c["seq"])
    return jnp.asarray((i * 7 + 3) % c["vocab"], jnp.int32), jnp.asarray((i * 7 + 10) % c["vocab"], jnp.int32)


def layer_norm(x, scale, bias):
    # jitx's nn::layer_norm: the variance as mean(x^2) - mean^2 (jax.nn.standardize's default "fast").
    return jax.nn.standardize(x, axis=-1, epsilon=1e-5) * scale + bias


def tf_attention(h, l, heads):
    b, t, d = h.shape
    qkv = h @ l["w_qkv"]
    q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(b, t, heads, d // heads) for i in range(3))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / math.sqrt(d // heads))
    causal = jax.lax.broadcasted_iota(jnp.int32, (t, t), 0) >= jax.lax.broadcasted_iota(jnp.int32, (t, t), 1)
    attn = jax.nn.softmax(jnp.where(causal, scores, jnp.float32(-1e9)), -1)
    return jnp.einsum("bhqk,bkhd->bqhd", attn, v).reshape(b, t, d) @ l["w_out"]


def tf_block(h, l, heads):
    a = h + tf_attention(layer_norm(h, l["ln1_scale"], l["ln1_bias"]), l, heads)
    m = jax.nn.gelu(layer_norm(a, l["ln2_scale"], l["ln2_bias"]) @ l["w_up"] + l["b_up"])
    return a + m @ l["w_down"] + l["b_down"]


def tf_forward(p, tokens, heads):
    h = jnp.take(p["tok_embed"], tokens, axis=0) + p["pos_embed"]
    h = jax.lax.scan(lambda c, l: (tf_block(c, l, heads), None), h, p["layers"])[0]
    return layer_norm(h, p["lnf_scale"], p["lnf_bias"]) @ p["w_head"]


def tf_loss(p, tokens, targets, heads):
    logp = jax.nn.log_softmax(tf_forward(p, tokens, heads))
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(targets, p["w_head"].shape[1]), -1))


def tf_train_step(p, state, tokens, targets, heads):
    loss, g = jax.value_and_grad(tf_loss)(p, tokens, targets, heads)
    p, state = adam_update(p, g, state, TF_LR, TF_B1, TF_B2, TF_EPS, TF_WD)
    return p, state, loss


def adam_init(p):
    return jnp.zeros((), jnp.int32), jax.tree.map(jnp.zeros_like, p), jax.tree.map(jnp.zeros_like, p)


def tf_step_fn(heads):
    return jax.jit(functools.partial(tf_train_step, heads=heads), donate_argnums=(0, 1))


def bench_transformer_step(c, rng, min_time):
    n = tf_n_params(c)
    size, bytes_, flops = tf_size(c), 4.0 * (7.0 * n + 2.0 * c["batch"] * c["seq"]), 3.0 * tf_forward_flops(c)
    if skipped("transformer_step", size, "f32", bytes_, flops):
        return
    p = tf_init(c, rng)
    state = adam_init(p)
    tokens, targets = tf_batch(c)
    t0 = time.perf_counter()
    step = tf_step_fn(c["heads"]).lower(p, state, tokens, targets).compile()
    compile_ms = (time.perf_counter() - t0) * 1e3
    carry = [p, state]

    def once():
        carry[0], carry[1], loss = step(carry[0], carry[1], tokens, targets)
        jax.block_until_ready((carry[0], carry[1], loss))

    emit("transformer_step", size, "f32", measure(once, min_time), bytes_, flops, compile_ms,
         f"decoder-only pre-norm transformer, layers in lax.scan, vocab {c['vocab']}, AdamW, params + state donated")


def bench_transformer_infer(c, rng, min_time):
    size, flops = tf_size(c), tf_forward_flops(c)
    bytes_ = 4.0 * (tf_n_params(c) + c["batch"] * c["seq"] * (1.0 + c["vocab"]))
    if skipped("transformer_infer", size, "f32", bytes_, flops):
        return
    p = tf_init(c, rng)
    tokens, _ = tf_batch(c)
    t0 = time.perf_counter()
    fwd = jax.jit(functools.partial(tf_forward, heads=c["heads"])).lower(p, tokens).compile()
    compile_ms = (time.perf_counter() - t0) * 1e3
    emit("transformer_infer", size, "f32", measure(lambda: jax.block_until_ready(fwd(p, tokens)), min_time), bytes_,
         flops, compile_ms, "transformer_step's model, forward only: logits of every position")


# --- a small CNN training step: two 3x3 convolutions (SAME, stride 1) + ReLU + 2x2 max pooling, a dense head -----
CNN_LR, CNN_MOMENTUM = 0.01, 0.9


def cnn_size(c):
    return f"{c['batch']}x{c['hw']}x{c['hw']}x{c['channels']} c{c['c1']},{c['c2']}"


def cnn_dense_in(c):
    return (c["hw"] // 4) * (c["hw"] // 4) * c["c2"]


def cnn_forward_flops(c):
    b, hw, ch, c1, c2 = c["batch"], c["hw"], c["channels"], c["c1"], c["c2"]
    return 2.0 * b * (float(hw * hw) * c1 * 9 * ch + float(hw * hw // 4) * c2 * 9 * c1 + float(cnn_dense_in(c)) * CLASSES)


def cnn_n_params(c):
    ch, c1, c2 = c["channels"], c["c1"], c["c2"]
    return float(9 * ch * c1 + c1 + 9 * c1 * c2 + c2 + cnn_dense_in(c) * CLASSES + CLASSES)


def cnn_init(c, rng):
    """As jitx_bench's cnn_init: He-normal HWIO kernels, the head std sqrt(2 / (in + out)), biases 0."""
    ch, c1, c2, di = c["channels"], c["c1"], c["c2"], cnn_dense_in(c)
    normal = lambda shape, scale: jnp.asarray(rng.standard_normal(shape) * scale, jnp.float32)
    return dict(w1=normal((3, 3, ch, c1), math.sqrt(2.0 / (9 * ch))), b1=jnp.zeros(c1),
                w2=normal((3, 3, c1, c2), math.sqrt(2.0 / (9 * c1))), b2=jnp.zeros(c2),
                w3=normal((di, CLASSES), math.sqrt(2.0 / (di + CLASSES))), b3=jnp.zeros(CLASSES))


def cnn_conv_pool(x, w, b):
    y = jax.nn.relu(jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC")) + b)
    return jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def cnn_loss(p, x, y):
    h = cnn_conv_pool(cnn_conv_pool(x, p["w1"], p["b1"]), p["w2"], p["b2"])
    logp = jax.nn.log_softmax(h.reshape(h.shape[0], -1) @ p["w3"] + p["b3"])
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, CLASSES), -1))


def cnn_train_step(p, v, x, y):
    # SGD with momentum, as jitx::optim::sgd_update: v = momentum v + g; p -= lr v.
    loss, g = jax.value_and_grad(cnn_loss)(p, x, y)
    v = jax.tree.map(lambda m, gi: m * CNN_MOMENTUM + gi, v, g)
    p = jax.tree.map(lambda pi, vi: pi - CNN_LR * vi, p, v)
    return p, v, loss


def cnn_batch(c, rng):
    x = jnp.asarray(rng.standard_normal((c["batch"], c["hw"], c["hw"], c["channels"])), jnp.float32)
    return x, jnp.asarray((np.arange(c["batch"]) * 7) % CLASSES, jnp.int32)


def bench_cnn_step(c, rng, min_time):
    size, flops = cnn_size(c), 3.0 * cnn_forward_flops(c)
    bytes_ = 4.0 * (5.0 * cnn_n_params(c) + c["batch"] * (c["hw"] * c["hw"] * c["channels"] + 1.0))
    if skipped("cnn_step", size, "f32", bytes_, flops):
        return
    p = cnn_init(c, rng)
    v = jax.tree.map(jnp.zeros_like, p)
    x, y = cnn_batch(c, rng)
    t0 = time.perf_counter()
    step = jax.jit(cnn_train_step, donate_argnums=(0, 1)).lower(p, v, x, y).compile()
    compile_ms = (time.perf_counter() - t0) * 1e3
    carry = [p, v]

    def once():
        carry[0], carry[1], loss = step(carry[0], carry[1], x, y)
        jax.block_until_ready((carry[0], carry[1], loss))

    emit("cnn_step", size, "f32", measure(once, min_time), bytes_, flops, compile_ms,
         "NHWC/HWIO conv 3x3 SAME + ReLU + 2x2 max pool, twice; dense head; SGD momentum, params + momenta donated")


def main():
    global MAX_CALL_S
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--max-call-s", type=float, default=2.0)
    a = ap.parse_args()
    MAX_CALL_S = 0 if a.smoke else a.max_call_s
    want = lambda w: not a.only or a.only == w
    min_time = 0 if a.smoke else 0.3
    full = not a.smoke and not a.quick
    rng = np.random.default_rng(0)
    if a.smoke:
        mlp_sizes, elems, rows = [(8, 16, 16)], [256], [(8, 32)]
        train_sizes, depths, layer_dims = [(8, 16)], [2], (4, 8)
    elif a.quick:
        mlp_sizes, elems, rows = [(64, 128, 128)], [1 << 16], [(64, 256)]
        train_sizes, depths, layer_dims = [(64, 128)], [8], (32, 64)
    else:
        mlp_sizes = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 1024, 1024), (2048, 2048, 2048),
                     (4096, 4096, 4096)]
        elems, rows = [1 << 16, 1 << 20, 1 << 24], [(n, n) for n in (256, 1024, 4096)]
        train_sizes, depths, layer_dims = [(64, 256), (256, 512), (1024, 1024)], [4, 16, 64], (64, 128)
    if want("matmul"):
        for dn in (["f32"] if a.quick else ["f32", "bf16"]):
            dt = DT[dn]
            es = jnp.dtype(dt).itemsize
            for (m, k, n) in ([(16, 16, 16)] if a.smoke else [(256, 256, 256)] if a.quick else mlp_sizes):
                x = jnp.asarray(rng.standard_normal((m, k)), dt)
                w = jnp.asarray(rng.standard_normal((k, n)) / math.sqrt(k), dt)
                run("matmul", f"{m}x{k}x{n}", dn, jnp.matmul, (x, w), es * (m * k + k * n + m * n), 2.0 * m * k * n,
                    min_time)
    if want("mlp_block"):
        for dn in (["f32"] if a.quick else ["f32", "bf16"]):
            dt = DT[dn]
            es = jnp.dtype(dt).itemsize
            for (m, k, n) in mlp_sizes:
                x = jnp.asarray(rng.standard_normal((m, k)), dt)
                w = jnp.asarray(rng.standard_normal((k, n)) / math.sqrt(k), dt)
                b = jnp.asarray(rng.standard_normal((n,)) * 0.1, dt)
                run("mlp_block", f"{m}x{k}x{n}", dn, block, (x, w, b), es * (m * k + k * n + n + m * n),
                    2.0 * m * n * k, min_time)
    if want("gelu_chain"):
        for n_elem in elems:
            x = jnp.asarray(rng.standard_normal((n_elem,)), jnp.float32)
            run("gelu_chain", str(n_elem), "f32", jax.nn.gelu, (x,), 8.0 * n_elem, 0, min_time)
    if want("rows"):
        for r, c in rows:
            x = jnp.asarray(rng.standard_normal((r, c)), jnp.float32)
            size = f"{r}x{c}"
            run("softmax", size, "f32", lambda v: jax.nn.softmax(v, -1), (x,), 8.0 * r * c, 0, min_time)
            ln = lambda v: (v - v.mean(-1, keepdims=True)) * jax.lax.rsqrt(v.var(-1, keepdims=True) + 1e-5)
            run("layer_norm", size, "f32", ln, (x,), 8.0 * r * c, 0, min_time)
            run("column_sum", size, "f32", lambda v: v.sum(0), (x,), 4.0 * r * c + 4.0 * c, 0, min_time)
    if want("dispatch"):
        # Dispatch overhead: a cached jitted call on three tiny arrays from Python.
        f = jax.jit(lambda p, q, s: p * q + s)
        t = [jnp.asarray([1.0, 2, 3]), jnp.asarray([4.0, 5, 6]), jnp.asarray([7.0, 8, 9])]
        f(*t).block_until_ready()
        emit("dispatch", "3x3", "f32", measure(lambda: f(*t).block_until_ready(), min_time, 100, 10),
             note="call + block_until_ready")
        emit("dispatch_enqueue", "3x3", "f32", measure(lambda: f(*t), min_time, 100, 10), note="enqueue only")
    if want("train_step"):
        for B, H in train_sizes:
            bench_train_step(B, H, rng, min_time)
    if want("scan_layers"):
        for depth in depths:
            bench_layers(depth, *layer_dims, rng, min_time)
    # The transformer at d 256, 4 heads, 4 layers, sequence 128, vocabulary 256 (the step at batch 16, inference at
    # batch 1), the CNN at batch 64 on 32x32x3; smoke mode tiny ones. As jitx_bench, quick mode runs the full sizes.
    tf = dict(vocab=16, seq=8, d=16, heads=2, layers=2, batch=2) if a.smoke else \
        dict(vocab=256, seq=128, d=256, heads=4, layers=4, batch=16)
    if want("transformer_step"):
        bench_transformer_step(tf, rng, min_time)
    if want("cnn_step"):
        bench_cnn_step(dict(batch=2, hw=8, channels=3, c1=4, c2=8) if a.smoke else
                       dict(batch=64, hw=32, channels=3, c1=32, c2=64), rng, min_time)
    if want("transformer_infer"):
        bench_transformer_infer(dict(tf, batch=1), rng, min_time)
    print(json.dumps(dict(workload="_meta", system="jax", note=f"jax {jax.__version__}, devices {jax.devices()}")),
          flush=True)


if __name__ == "__main__":
    main()
