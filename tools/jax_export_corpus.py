#!/usr/bin/env python3
"""Exports a corpus of JAX programs as StableHLO text with their inputs and JAX's outputs (issue 18).

    tools/jax_export_corpus.py --out DIR [--venv PATH] [--filter SUBSTR]

For every case it writes DIR/<name>.mlir (jax.jit(f, keep_unused=True).lower(*args).as_text()), the same module
in MLIR's generic form as DIR/<name>__generic.mlir, DIR/<name>.in<k>.npy for the flattened inputs and
DIR/<name>.out<k>.npy for JAX's flattened outputs, and lines `<module> <num_inputs> <num_outputs> [<npy prefix>]`
in DIR/MANIFEST. A case JAX itself cannot export is listed in
DIR/EXPORT_FAILURES and skipped. Without jax importable it creates a virtualenv (pip's jax and numpy) in a temporary
folder, or uses --venv PATH (created there when missing), and re-runs itself inside it. jax_enable_x64 is on, as
jitx follows JAX with x64. tests/stablehlo_jax_corpus_test.cpp (JITX_IMPORT_CORPUS=DIR) imports and runs them.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def ensure_jax(args):
    try:
        import jax  # noqa: F401
        import numpy  # noqa: F401
        return
    except ImportError:
        pass
    venv = args.venv or os.path.join(tempfile.mkdtemp(prefix="jitx-jax-venv-"), "venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "jax==0.10.2", "numpy"])
    os.execv(py, [py] + sys.argv)


def cases():
    """(name, function, args) triples."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    rng = np.random.default_rng(18)
    out = []

    def add(name, f, *a):
        out.append((name, f, a))

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def f64(*s):
        return rng.standard_normal(s)

    def pos(*s, dt=np.float32):
        return (rng.random(s) + 0.5).astype(dt)

    def i32(*s, lo=-5, hi=6):
        return rng.integers(lo, hi, s).astype(np.int32)

    def i64(*s, lo=-5, hi=6):
        return rng.integers(lo, hi, s).astype(np.int64)

    def u8(*s):
        return rng.integers(0, 255, s).astype(np.uint8)

    def unit(*s, dt=np.float32):
        return (rng.random(s) * 1.8 - 0.9).astype(dt)

    # --- elementwise: unary over several shapes and dtypes ---
    unary_any = {"sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "tanh": jnp.tanh, "exp": jnp.exp, "expm1": jnp.expm1,
                 "abs": jnp.abs, "neg": jnp.negative, "sign": jnp.sign, "floor": jnp.floor, "ceil": jnp.ceil,
                 "round": jnp.round, "sinh": jnp.sinh, "cosh": jnp.cosh, "arctan": jnp.arctan,
                 "arcsinh": jnp.arcsinh, "logistic": jax.nn.sigmoid, "erf": jax.scipy.special.erf,
                 "erfc": jax.scipy.special.erfc, "square": jnp.square, "exp2": jnp.exp2, "isfinite": jnp.isfinite,
                 "relu": jax.nn.relu, "gelu": jax.nn.gelu, "gelu_exact": lambda x: jax.nn.gelu(x, approximate=False),
                 "silu": jax.nn.silu, "softplus": jax.nn.softplus, "elu": jax.nn.elu, "selu": jax.nn.selu,
                 "leaky_relu": jax.nn.leaky_relu, "celu": jax.nn.celu, "mish": jax.nn.mish,
                 "hard_tanh": jax.nn.hard_tanh, "log_sigmoid": jax.nn.log_sigmoid, "cbrt": jnp.cbrt,
                 "trunc": jnp.trunc, "signbit": jnp.signbit, "rint": jnp.rint}
    unary_pos = {"log": jnp.log, "log1p": jnp.log1p, "sqrt": jnp.sqrt, "rsqrt": lax.rsqrt, "log2": jnp.log2,
                 "log10": jnp.log10, "lgamma": jax.scipy.special.gammaln, "digamma": jax.scipy.special.digamma,
                 "reciprocal": jnp.reciprocal, "arccosh": lambda x: jnp.arccosh(x + 1.0)}
    unary_unit = {"arcsin": jnp.arcsin, "arccos": jnp.arccos, "arctanh": jnp.arctanh,
                  "erf_inv": jax.scipy.special.erfinv}
    for n, f in unary_any.items():
        add(f"unary_{n}_f32_4x5", f, f32(4, 5))
        add(f"unary_{n}_f64_7", f, f64(7))
    for n, f in unary_pos.items():
        add(f"unary_{n}_f32_3x4", f, pos(3, 4))
        add(f"unary_{n}_f64_6", f, pos(6, dt=np.float64))
    for n, f in unary_unit.items():
        add(f"unary_{n}_f32_8", f, unit(8))
        add(f"unary_{n}_f64_2x3", f, unit(2, 3, dt=np.float64))
    for n, f in {"abs": jnp.abs, "neg": jnp.negative, "sign": jnp.sign, "square": jnp.square,
                 "invert": jnp.invert, "popcount": lax.population_count}.items():
        add(f"unary_{n}_i32_6", f, i32(6))
        add(f"unary_{n}_i64_2x3", f, i64(2, 3))
    add("unary_bitwise_not_u8", jnp.invert, u8(9))
    add("unary_logical_not", jnp.logical_not, f32(5) > 0)
    add("unary_abs_f16", jnp.abs, f32(6).astype(np.float16))
    add("unary_exp_bf16", jnp.exp, f32(6).astype(jnp.bfloat16))

    # --- binary ---
    binary = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide, "max": jnp.maximum,
              "min": jnp.minimum, "pow": lambda a, b: jnp.power(jnp.abs(a) + 0.5, b), "atan2": jnp.arctan2,
              "rem": jnp.remainder, "fmod": jnp.fmod, "hypot": jnp.hypot, "logaddexp": jnp.logaddexp,
              "copysign": jnp.copysign, "nextafter": jnp.nextafter, "floor_divide": jnp.floor_divide,
              "greater": jnp.greater, "less_equal": jnp.less_equal, "equal": jnp.equal, "not_equal": jnp.not_equal,
              "where": lambda a, b: jnp.where(a > b, a, b)}
    for n, f in binary.items():
        add(f"binary_{n}_f32_3x4", f, f32(3, 4), f32(3, 4))
        add(f"binary_{n}_f64_bcast", f, f64(2, 3), f64(3))
    ibinary = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum, "min": jnp.minimum,
               "and": jnp.bitwise_and, "or": jnp.bitwise_or, "xor": jnp.bitwise_xor,
               "floor_divide": lambda a, b: jnp.floor_divide(a, jnp.where(b == 0, 1, b)),
               "rem": lambda a, b: jnp.remainder(a, jnp.where(b == 0, 1, b)),
               "shift_left": lambda a, b: jnp.left_shift(a, jnp.abs(b)),
               "shift_right": lambda a, b: jnp.right_shift(a, jnp.abs(b)), "less": jnp.less}
    for n, f in ibinary.items():
        add(f"binary_{n}_i32_5", f, i32(5), i32(5))
        add(f"binary_{n}_i64_2x2", f, i64(2, 2), i64(2, 2))
    add("binary_add_u8", jnp.add, u8(6), u8(6))
    add("binary_logical_and", jnp.logical_and, f32(6) > 0, f32(6) > 0)
    add("binary_integer_pow", lambda x: lax.integer_pow(x, 3), f32(5))
    add("clamp", lambda x: jnp.clip(x, -0.5, 0.5), f32(3, 3))
    add("clamp_i32", lambda x: jnp.clip(x, -2, 2), i32(7))
    add("select_n", lambda p, a, b: lax.select(p, a, b), f32(4) > 0, f32(4), f32(4))

    # --- dtype conversions ---
    add("convert_f32_i32", lambda x: x.astype(jnp.int32), f32(6) * 10)
    add("convert_i32_f64", lambda x: x.astype(jnp.float64), i32(6))
    add("convert_f32_bf16", lambda x: x.astype(jnp.bfloat16).astype(jnp.float32), f32(6))
    add("convert_f32_f16", lambda x: x.astype(jnp.float16), f32(6))
    add("convert_bool_f32", lambda x: (x > 0).astype(jnp.float32), f32(6))
    add("convert_i64_u8", lambda x: x.astype(jnp.uint8), i64(6, lo=0, hi=200))
    add("bitcast_f32_i32", lambda x: lax.bitcast_convert_type(x, jnp.int32), f32(4))

    # --- shapes and data movement ---
    add("reshape", lambda x: x.reshape(3, 8), f32(2, 3, 4))
    add("transpose", lambda x: x.transpose(2, 0, 1), f32(2, 3, 4))
    add("swapaxes", lambda x: jnp.swapaxes(x, 0, 1), f64(3, 5))
    add("broadcast_to", lambda x: jnp.broadcast_to(x, (4, 3)), f32(3))
    add("expand_squeeze", lambda x: jnp.squeeze(jnp.expand_dims(x, 0)), f32(3, 1))
    add("concatenate", lambda a, b: jnp.concatenate([a, b], axis=1), f32(2, 3), f32(2, 2))
    add("stack", lambda a, b: jnp.stack([a, b]), i32(3), i32(3))
    add("slice_basic", lambda x: x[1:3, ::2], f32(4, 6))
    add("slice_neg_step", lambda x: x[::-1], f32(5))
    add("reverse", lambda x: jnp.flip(x, axis=(0, 1)), f32(3, 4))
    add("pad_const", lambda x: jnp.pad(x, ((1, 2), (0, 1))), f32(2, 3))
    add("pad_interior", lambda x: lax.pad(x, np.float32(0.0), [(1, 0, 2), (-1, 1, 0)]), f32(3, 4))
    add("pad_edge", lambda x: jnp.pad(x, 2, mode="edge"), f32(3))
    add("pad_reflect", lambda x: jnp.pad(x, 2, mode="reflect"), f32(5))
    add("tile", lambda x: jnp.tile(x, (2, 3)), f32(2, 2))
    add("repeat", lambda x: jnp.repeat(x, 2, axis=0), i32(3, 2))
    add("roll", lambda x: jnp.roll(x, 2), f32(6))
    add("iota_arange", lambda x: x + jnp.arange(5, dtype=jnp.float32), f32(5))
    add("eye", lambda x: x * jnp.eye(3), f32(3, 3))
    add("tril", jnp.tril, f32(4, 4))
    add("triu", lambda x: jnp.triu(x, 1), f64(3, 4))
    add("meshgrid", lambda a, b: jnp.stack(jnp.meshgrid(a, b)), f32(3), f32(2))
    add("where_scalar", lambda x: jnp.where(x > 0, x, 0.0), f32(6))
    add("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, np.int32(1)), (2, 2)), f32(4, 4), np.int32(1))
    add("dynamic_slice_clamped", lambda x, i: lax.dynamic_slice(x, (i,), (3,)), f32(5), np.int32(4))
    add("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(0))), f32(4, 3), f32(2, 3),
        np.int32(1))
    add("dynamic_index", lambda x, i: x[i], f32(5, 3), np.int32(2))

    # --- reductions ---
    for n, f in {"sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min, "mean": jnp.mean,
                 "var": jnp.var, "std": jnp.std, "logsumexp": jax.scipy.special.logsumexp,
                 "argmax": jnp.argmax, "argmin": jnp.argmin}.items():
        add(f"reduce_{n}_all_f32", f, f32(3, 4))
        add(f"reduce_{n}_axis1_f64", lambda x, f=f: f(x, axis=1), f64(3, 5))
    for n, f in {"sum": jnp.sum, "max": jnp.max, "min": jnp.min, "prod": jnp.prod, "argmax": jnp.argmax}.items():
        add(f"reduce_{n}_i32", lambda x, f=f: f(x, axis=0), i32(4, 3))
    add("reduce_any", lambda x: jnp.any(x > 1.0, axis=0), f32(4, 3))
    add("reduce_all", lambda x: jnp.all(x > -1.0), f32(4, 3))
    add("reduce_sum_keepdims", lambda x: jnp.sum(x, axis=(0, 2), keepdims=True), f32(2, 3, 4))
    add("softmax", lambda x: jax.nn.softmax(x, axis=-1), f32(3, 5))
    add("log_softmax", lambda x: jax.nn.log_softmax(x), f64(2, 6))
    add("normalize", lambda x: jax.nn.standardize(x, axis=-1), f32(3, 8))
    add("one_hot", lambda i: jax.nn.one_hot(i, 5), i32(6, lo=0, hi=5))
    add("cumsum", lambda x: jnp.cumsum(x), f32(7))
    add("cumsum_axis", lambda x: jnp.cumsum(x, axis=1), i32(3, 5))
    add("cumprod", lambda x: jnp.cumprod(x, axis=0), f32(4, 2))
    add("cummax", lambda x: lax.cummax(x, axis=0), f32(6))
    add("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=0), f32(5))
    add("cumlogsumexp_f64_axis1", lambda x: lax.cumlogsumexp(x, axis=1), f64(3, 6))
    add("cumlogsumexp_reverse", lambda x: lax.cumlogsumexp(x, axis=0, reverse=True), f32(4, 3))
    add("norm", jnp.linalg.norm, f32(4, 3))

    # --- contractions ---
    add("matmul_f32", jnp.matmul, f32(3, 4), f32(4, 5))
    add("matmul_f64", jnp.matmul, f64(2, 3), f64(3, 2))
    add("matmul_i32", jnp.matmul, i32(2, 3), i32(3, 4))
    add("matvec", jnp.dot, f32(3, 4), f32(4))
    add("vdot", jnp.vdot, f32(6), f32(6))
    add("batched_matmul", jnp.matmul, f32(2, 3, 4), f32(2, 4, 2))
    add("einsum_bij_bjk", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), f32(2, 2, 3), f32(2, 3, 2))
    add("einsum_outer", lambda a, b: jnp.einsum("i,j->ij", a, b), f32(3), f32(4))
    add("einsum_trace", lambda a: jnp.einsum("ii->", a), f32(4, 4))
    add("tensordot", lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), f32(2, 3, 4), f32(3, 4, 2))
    add("dot_bf16", lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32),
        f32(2, 3).astype(jnp.bfloat16), f32(3, 2).astype(jnp.bfloat16))

    # --- convolutions ---
    add("conv2d_nhwc", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                             dimension_numbers=("NHWC", "HWIO", "NHWC")),
        f32(1, 5, 5, 2), f32(3, 3, 2, 3))
    add("conv2d_nchw_stride", lambda x, w: lax.conv_general_dilated(x, w, (2, 2), "VALID"),
        f32(2, 2, 6, 6), f32(4, 2, 3, 3))
    add("conv1d_dilated", lambda x, w: lax.conv_general_dilated(x, w, (1,), [(2, 2)], rhs_dilation=(2,)),
        f32(1, 3, 8), f32(2, 3, 3))
    add("conv2d_lhs_dilation", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), [(1, 1), (1, 1)],
                                                                     lhs_dilation=(2, 2)),
        f32(1, 1, 3, 3), f32(1, 1, 2, 2))
    add("conv2d_grouped", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2),
        f32(1, 4, 4, 4), f32(6, 2, 3, 3))
    add("conv2d_depthwise", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=3,
                                                                  dimension_numbers=("NHWC", "HWIO", "NHWC")),
        f32(1, 4, 4, 3), f32(3, 3, 1, 3))
    add("conv_transpose", lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME",
                                                          dimension_numbers=("NHWC", "HWIO", "NHWC")),
        f32(1, 3, 3, 2), f32(3, 3, 2, 2))
    add("conv1d_f64", lambda x, w: jnp.convolve(x, w), f64(9), f64(3))

    # --- windows (pooling) ---
    add("max_pool", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
        f32(1, 4, 4, 2))
    add("avg_pool_same", lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 3), (1, 1), "SAME") / 9.0, f32(5, 5))
    add("min_pool_i32", lambda x: lax.reduce_window(x, np.int32(2**31 - 1), lax.min, (2,), (1,), "VALID"),
        i32(6))
    add("max_pool_grad", jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2),
                                                              "VALID").sum()), f32(4, 4))

    # --- sort family ---
    add("sort_f32", jnp.sort, f32(9))
    add("sort_axis0_f64", lambda x: jnp.sort(x, axis=0), f64(4, 3))
    add("sort_i32", jnp.sort, i32(10))
    add("sort_descending", lambda x: jnp.sort(x, descending=True), f32(6))
    add("argsort", jnp.argsort, f32(8))
    add("argsort_i32_stable", lambda x: jnp.argsort(x, stable=True), i32(8, lo=0, hi=3))
    add("lax_sort_multi", lambda a, b: lax.sort((a, b), num_keys=2), i32(7, lo=0, hi=3), f32(7))
    add("top_k", lambda x: lax.top_k(x, 3), f32(10))
    add("top_k_2d", lambda x: lax.top_k(x, 2), f32(3, 5))
    add("median", jnp.median, f32(7))
    add("unique_size", lambda x: jnp.unique(x, size=5, fill_value=0), i32(8, lo=0, hi=4))
    add("searchsorted", lambda a, v: jnp.searchsorted(a, v), np.sort(f32(8)), f32(4))

    # --- gathers and scatters ---
    add("gather_take", lambda x, i: jnp.take(x, i, axis=0), f32(5, 3), i32(4, lo=0, hi=5))
    add("gather_take_axis1", lambda x, i: jnp.take(x, i, axis=1), f32(3, 5), i32(2, lo=0, hi=5))
    add("gather_fancy", lambda x, i, j: x[i, j], f32(4, 5), i32(3, lo=0, hi=4), i32(3, lo=0, hi=5))
    add("gather_negative", lambda x, i: x[i], f32(6), i32(4, lo=-6, hi=6))
    add("gather_take_along", lambda x, i: jnp.take_along_axis(x, i, axis=1), f32(3, 4), i32(3, 2, lo=0, hi=4))
    add("gather_embedding", lambda e, i: e[i], f32(10, 4), i32(2, 3, lo=0, hi=10))
    add("scatter_set", lambda x, i, u: x.at[i].set(u), f32(6), i32(3, lo=0, hi=6), f32(3))
    add("scatter_add", lambda x, i, u: x.at[i].add(u), f32(5, 2), i32(4, lo=0, hi=5), f32(4, 2))
    add("scatter_mul", lambda x, i, u: x.at[i].multiply(u), f32(5), i32(3, lo=0, hi=5), f32(3))
    add("scatter_max", lambda x, i, u: x.at[i].max(u), f32(5), i32(4, lo=0, hi=5), f32(4))
    add("scatter_min_i32", lambda x, i, u: x.at[i].min(u), i32(5), i32(4, lo=0, hi=5), i32(4))
    add("scatter_set_2d", lambda x, i, j, u: x.at[i, j].set(u), f32(3, 4), i32(2, lo=0, hi=3),
        i32(2, lo=0, hi=4), f32(2))
    add("scatter_slice_set", lambda x, u: x.at[1:3].set(u), f32(5, 2), f32(2, 2))
    add("segment_sum", lambda d, s: jax.ops.segment_sum(d, s, num_segments=4), f32(7), i32(7, lo=0, hi=4))
    add("bincount", lambda x: jnp.bincount(x, length=5), i32(9, lo=0, hi=5))
    add("gather_grad", jax.grad(lambda x, i: (x[i] ** 2).sum()), f32(5), i32(3, lo=0, hi=5))

    # --- control flow ---
    add("while_loop", lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1],
        f32(3))
    add("while_capture", lambda x, y: lax.while_loop(lambda c: jnp.sum(c) < 100.0, lambda c: c * 2.0 + y, x),
        pos(3), pos(3))
    add("fori_loop", lambda x: lax.fori_loop(0, 4, lambda i, c: c + i * x, x), f32(4))
    add("fori_loop_dynamic", lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 0.9 + 1.0, x), f32(3), np.int32(5))
    add("cond", lambda p, x: lax.cond(p > 0, lambda v: v * 2.0, lambda v: v - 1.0, x), np.float32(1.0), f32(3))
    add("cond_false", lambda p, x: lax.cond(p > 0, lambda v: jnp.sin(v), lambda v: jnp.cos(v), x),
        np.float32(-1.0), f32(3))
    add("cond_capture", lambda p, x, y: lax.cond(p > 0, lambda: x + y, lambda: x * y), np.float32(1.0), f32(2),
        f32(2))
    add("switch", lambda i, x: lax.switch(i, [lambda v: v + 1.0, lambda v: v * 3.0, jnp.tanh], x), np.int32(2),
        f32(4))
    add("switch_clamped", lambda i, x: lax.switch(i, [lambda v: v + 1.0, lambda v: v * 3.0], x), np.int32(7),
        f32(4))
    add("scan_cumsum", lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x), f32(6))
    add("scan_layers", lambda ws, x: lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)[0], f32(3, 4, 4),
        f32(2, 4))
    add("scan_reverse", lambda x: lax.scan(lambda c, v: (c * 0.5 + v, c), 1.0, x, reverse=True), f64(5))
    add("map", lambda x: lax.map(lambda r: jnp.sum(r ** 2), x), f32(4, 3))
    add("nested_cond_in_while", lambda x: lax.while_loop(
        lambda c: c[0] < 6, lambda c: (c[0] + 1, lax.cond(c[0] % 2 == 0, lambda v: v + 1.0, lambda v: v * 2.0,
                                                         c[1])), (0, x))[1], f32(2))
    add("vmap_cond", jax.vmap(lambda p, x: lax.cond(p > 0, lambda v: v * 2.0, lambda v: -v, x)), f32(4), f32(4))
    add("checkpoint_grad", jax.grad(lambda x: jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))(x).sum()), f32(4))

    # --- models ---
    def mlp(params, x):
        for w, b in params:
            x = jax.nn.relu(x @ w + b)
        return x

    p = [(f32(4, 8), f32(8)), (f32(8, 3), f32(3))]
    add("mlp_block", mlp, p, f32(5, 4))

    def loss(params, x, y):
        return jnp.mean((mlp(params, x) - y) ** 2)

    def train_step(params, x, y):
        lv, g = jax.value_and_grad(loss)(params, x, y)
        return lv, jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, params, g)

    add("train_step", train_step, p, f32(5, 4), f32(5, 3))
    add("grad_tanh_mlp", jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w))), f32(3, 2), f32(4, 3))
    add("jvp_sin", lambda x, t: jax.jvp(jnp.sin, (x,), (t,)), f32(4), f32(4))
    add("vmap_matvec", jax.vmap(jnp.dot, in_axes=(None, 0)), f32(3, 4), f32(5, 4))
    add("hessian", jax.hessian(lambda x: jnp.sum(x ** 3)), f32(3))

    def attention(q, k, v):
        s = q @ k.T / jnp.sqrt(q.shape[-1])
        return jax.nn.softmax(s, axis=-1) @ v

    add("attention", attention, f32(4, 8), f32(6, 8), f32(6, 8))
    add("layer_norm", lambda x, g, b: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)
        * g + b, f32(3, 6), f32(6), f32(6))
    add("cross_entropy", lambda lg, y: -jnp.mean(jnp.sum(jax.nn.log_softmax(lg) * jax.nn.one_hot(y, 4), -1)),
        f32(5, 4), i32(5, lo=0, hi=4))

    # --- random numbers (keys passed as raw uint32 data) ---
    key = np.asarray(jax.random.key_data(jax.random.PRNGKey(0)))
    add("random_uniform", lambda k: jax.random.uniform(jax.random.wrap_key_data(k), (5,)), key)
    add("random_normal", lambda k: jax.random.normal(jax.random.wrap_key_data(k), (2, 3)), key)
    add("random_bits", lambda k: jax.random.bits(jax.random.wrap_key_data(k), (4,)), key)
    add("random_split", lambda k: jax.random.key_data(jax.random.split(jax.random.wrap_key_data(k), 3)), key)
    add("random_randint", lambda k: jax.random.randint(jax.random.wrap_key_data(k), (6,), 0, 10), key)
    add("random_bernoulli", lambda k: jax.random.bernoulli(jax.random.wrap_key_data(k), 0.3, (8,)), key)
    add("random_permutation", lambda k: jax.random.permutation(jax.random.wrap_key_data(k), 6), key)
    add("dropout", lambda k, x: jnp.where(jax.random.bernoulli(jax.random.wrap_key_data(k), 0.5, x.shape),
                                          x / 0.5, 0.0), key, f32(3, 4))
    add("rng_bit_generator", lambda k: lax.rng_bit_generator(k, (4,), dtype=jnp.uint32),
        np.array([1, 2, 3, 4], dtype=np.uint32))
    # rng_bit_generator's algorithms over shapes (odd ones: XLA splits 32-bit threefry draws over an axis) and
    # widths (narrow ones take the low bits of 32-bit draws); the state counter's high word near a carry.
    state = np.array([0x9E3779B9, 0x12345678, 0xFFFFFFFE, 0xFFFFFFFF], dtype=np.uint32)
    algs = {"threefry": lax.RandomAlgorithm.RNG_THREE_FRY, "philox": lax.RandomAlgorithm.RNG_PHILOX,
            "default": lax.RandomAlgorithm.RNG_DEFAULT}
    shapes = [("u32_4", (4,), jnp.uint32), ("u32_3x5", (3, 5), jnp.uint32), ("u32_3x3", (3, 3), jnp.uint32),
              ("u32_scalar", (), jnp.uint32), ("u64_7", (7,), jnp.uint64), ("u64_2x2", (2, 2), jnp.uint64),
              ("u8_2x3", (2, 3), jnp.uint8), ("u16_5", (5,), jnp.uint16)]
    for an, alg in algs.items():
        for sn, shape, dt in shapes:
            add(f"rng_bit_generator_{an}_{sn}",
                lambda k, shape=shape, dt=dt, alg=alg: lax.rng_bit_generator(k, shape, dtype=dt, algorithm=alg), state)
    # JAX's "rbg" and "unsafe_rbg" PRNGs draw through rng_bit_generator.
    for impl in ("rbg", "unsafe_rbg"):
        kd = np.asarray(jax.random.key_data(jax.random.key(7, impl=impl)))
        add(f"random_{impl}_uniform", lambda k, impl=impl: jax.random.uniform(
            jax.random.wrap_key_data(k, impl=impl), (3, 4)), kd)
        add(f"random_{impl}_normal_f64", lambda k, impl=impl: jax.random.normal(
            jax.random.wrap_key_data(k, impl=impl), (5,), dtype=jnp.float64), kd)
        add(f"random_{impl}_bits_u16", lambda k, impl=impl: jax.random.bits(
            jax.random.wrap_key_data(k, impl=impl), (6,), dtype=jnp.uint16), kd)

    # --- misc lax ---
    add("expand_dims_iota", lambda x: lax.broadcasted_iota(jnp.int32, (3, 4), 1) + x, i32(3, 4))
    add("optimization_barrier", lambda x: lax.optimization_barrier(x) * 2.0, f32(3))
    add("reduce_precision", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10), f32(5))
    add("polyval", lambda x: jnp.polyval(jnp.array([1.0, -2.0, 3.0], jnp.float32), x), f32(4))
    add("isnan_nan_to_num", lambda x: jnp.nan_to_num(jnp.log(x)), f32(5))
    add("linspace", lambda x: x * jnp.linspace(0.0, 1.0, 5, dtype=jnp.float32), f32(5))
    return out


def storable(v):
    """numpy's own dtypes as they are; bfloat16 (no .npy code of its own) as float32 (exact)."""
    import numpy as np
    a = np.asarray(v)
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--venv", default=None, help="virtualenv to use (created when missing)")
    ap.add_argument("--filter", default=None, help="only cases whose name contains this")
    args = ap.parse_args()
    ensure_jax(args)
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import numpy as np

    os.makedirs(args.out, exist_ok=True)
    manifest, failures = [], []
    for name, f, a in cases():
        if args.filter and args.filter not in name:
            continue
        try:
            jf = jax.jit(f, keep_unused=True)
            lowered = jf.lower(*a)
            text = lowered.as_text()
            generic = lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True,
                                                                         enable_debug_info=False)
            outs = jax.tree_util.tree_leaves(jf(*a))
            ins = jax.tree_util.tree_leaves(a)
        except Exception as e:  # noqa: BLE001 - a case JAX cannot run is listed, not fatal
            failures.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        with open(os.path.join(args.out, name + ".mlir"), "w") as fh:
            fh.write(text)
        for k, v in enumerate(ins):
            np.save(os.path.join(args.out, f"{name}.in{k}.npy"), storable(v))
        for k, v in enumerate(outs):
            np.save(os.path.join(args.out, f"{name}.out{k}.npy"), storable(v))
        manifest.append(f"{name} {len(ins)} {len(outs)}")
        # The same module in MLIR's generic form (every op, func and the module as "dialect.op"(...) {...}),
        # reading the same .npy files.
        with open(os.path.join(args.out, name + "__generic.mlir"), "w") as fh:
            fh.write(generic)
        manifest.append(f"{name}__generic {len(ins)} {len(outs)} {name}")
    with open(os.path.join(args.out, "MANIFEST"), "w") as fh:
        fh.write("\n".join(manifest) + "\n")
    with open(os.path.join(args.out, "EXPORT_FAILURES"), "w") as fh:
        fh.write("\n".join(failures) + ("\n" if failures else ""))
    print(f"exported {len(manifest)} modules to {args.out}; {len(failures)} cases JAX could not export")
    for line in failures:
        print("  export failure:", line)


if __name__ == "__main__":
    main()
