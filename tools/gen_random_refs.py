#!/usr/bin/env python3
"""Computes jax.random reference values for tests/random_test.cpp and writes them between its markers.

Run with a JAX 0.10.2 environment (for example /work/venv-jax/bin/python tools/gen_random_refs.py):
prints the generated block, and with --write replaces the block between "// BEGIN GENERATED" and
"// END GENERATED" in tests/random_test.cpp. Read the diff before committing.

JAX configuration: the defaults of JAX 0.10.2 (jax_default_prng_impl=threefry2x32,
jax_threefry_partitionable=True, jax_enable_x64=False). Values that need 64-bit types (uint64 bits,
float64 samples, int64 randint, seeds beyond int32) are computed inside jax.enable_x64(True), which
changes no bits: threefry's output depends only on the key, the shape and the bit width.
"""
import argparse
import pathlib
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import random

assert jax.__version__ == "0.10.2", jax.__version__
assert jax.config.jax_threefry_partitionable, "expected JAX's default jax_threefry_partitionable=True"
assert jax.config.jax_default_prng_impl == "threefry2x32"
assert not jax.config.jax_enable_x64

CTYPES = {
    "uint8": ("uint32_t", "u"), "uint16": ("uint32_t", "u"), "uint32": ("uint32_t", "u"),
    "uint64": ("uint64_t", "ull"), "int8": ("int64_t", ""), "int32": ("int64_t", ""), "int64": ("int64_t", "ll"),
    "bool": ("int64_t", ""), "float16": ("double", ""), "bfloat16": ("double", ""), "float32": ("double", ""),
    "float64": ("double", ""),
}

lines = []


def emit(name, value):
    """Appends `const std::vector<T> name = {...};` with the shape and dtype in a comment."""
    a = np.asarray(value)
    dt = str(a.dtype)
    ctype, suffix = CTYPES[dt]
    flat = a.reshape(-1)
    if dt == "float64":
        items = [repr(float(x)) for x in flat]
    elif dt.startswith("float") or dt == "bfloat16":
        items = [repr(float(np.float32(x))) for x in flat]  # the exact value of the f32/f16/bf16 number
    elif dt == "bool":
        items = [str(int(x)) for x in flat]
    elif dt == "int64" and any(x == np.iinfo(np.int64).min for x in flat):
        raise ValueError("int64 min needs special spelling")
    else:
        items = [f"{int(x)}{suffix}" for x in flat]
    body = ", ".join(items)
    lines.append(f"// {dt}{list(a.shape)}")
    lines.append(f"const std::vector<{ctype}> {name} = {{{body}}};")


k0 = random.PRNGKey(0)
k42 = random.PRNGKey(42)
k7 = random.key_data(random.key(7))

# keys
emit("key_0", k0)
emit("key_42", k42)
emit("key_7", k7)
with jax.enable_x64(True):
    emit("key_big", random.PRNGKey(2**40 + 5))   # hi word 256, lo word 5
    emit("key_neg", random.PRNGKey(-3))          # int64 -3: both words from its two's complement
emit("key_big_x32", random.PRNGKey(np.int32(2**31 - 1)))

# split and fold_in
emit("split_0_2", random.split(k0))
emit("split_42_3", random.split(k42, 3))
emit("split_42_2x3", random.split(k42, (2, 3)))
emit("split_0_1", random.split(k0, 1))
emit("fold_in_0_7", random.fold_in(k0, 7))
emit("fold_in_42_max", random.fold_in(k42, np.uint32(2**32 - 1)))
emit("fold_in_42_neg1", random.fold_in(k42, jnp.int32(-1)))
emit("fold_split", random.split(random.fold_in(random.split(k42)[1], 3), 2))

# bits
emit("bits_0_scalar", random.bits(k0, (), jnp.uint32))
emit("bits_0_5", random.bits(k0, (5,), jnp.uint32))
emit("bits_42_3x4", random.bits(k42, (3, 4), jnp.uint32))
emit("bits_42_2x3x5", random.bits(k42, (2, 3, 5), jnp.uint32))
emit("bits_7_1x1", random.bits(k7, (1, 1), jnp.uint32))
emit("bits_0_7_u8", random.bits(k0, (7,), jnp.uint8))
emit("bits_42_5_u16", random.bits(k42, (5,), jnp.uint16))
with jax.enable_x64(True):
    emit("bits_0_3_u64", random.bits(k0, (3,), jnp.uint64))
    emit("bits_42_2x3_u64", random.bits(k42, (2, 3), jnp.uint64))
big = np.asarray(random.bits(k42, (1001,), jnp.uint32))
emit("bits_42_1001_head", big[:4])
emit("bits_42_1001_tail", big[-3:])
emit("bits_42_1001_sum", np.array([int(big.astype(np.uint64).sum())], np.uint64))

# uniform
emit("uniform_0_5", random.uniform(k0, (5,)))
emit("uniform_42_2x3_m2_3", random.uniform(k42, (2, 3), minval=-2.0, maxval=3.0))
emit("uniform_7_4_bf16", random.uniform(k7, (4,), jnp.bfloat16))
emit("uniform_7_4_f16", random.uniform(k7, (4,), jnp.float16))
emit("uniform_42_3_arrmin", random.uniform(k42, (2, 3), minval=jnp.array([0.0, 10.0, 20.0]), maxval=30.0))
with jax.enable_x64(True):
    emit("uniform_0_4_f64", random.uniform(k0, (4,), jnp.float64))

# normal and truncated_normal
emit("normal_0_6", random.normal(k0, (6,)))
emit("normal_42_2x2", random.normal(k42, (2, 2)))
with jax.enable_x64(True):
    emit("normal_7_3_f64", random.normal(k7, (3,), jnp.float64))
emit("tnormal_0_6_m1_2", random.truncated_normal(k0, -1.0, 2.0, (6,)))
emit("tnormal_42_4_0_05", random.truncated_normal(k42, 0.0, 0.5, (4,)))

# bernoulli
emit("bernoulli_0_10_03", random.bernoulli(k0, 0.3, (10,)))
emit("bernoulli_42_8_default", random.bernoulli(k42, 0.5, (8,)))
emit("bernoulli_7_parr", random.bernoulli(k7, jnp.array([0.1, 0.5, 0.9, 0.99], jnp.float32)))

# categorical (gumbel-max, mode "low")
logits = jnp.array([[0.1, -1.0, 2.0, 0.5], [1.5, 1.4, -0.3, 0.0], [0.0, 0.0, 0.0, 0.0]], jnp.float32)
emit("cat_logits", logits)
emit("cat_0_axis_last", random.categorical(k0, logits))
emit("cat_42_axis_0", random.categorical(k42, logits, axis=0))
emit("cat_7_shape_5x3", random.categorical(k7, logits, shape=(5, 3)))
cat_many = np.asarray(random.categorical(k42, jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(40,)))
emit("cat_42_40", cat_many)

# permutation
emit("perm_0_10", random.permutation(k0, 10))
emit("perm_42_7", random.permutation(k42, 7))
emit("perm_7_1", random.permutation(k7, 1))
emit("perm_42_100000_head", random.permutation(k42, 100000)[:6])  # two sort rounds
emit("perm_42_arr_3x2", random.permutation(k42, jnp.arange(6, dtype=jnp.float32).reshape(3, 2)))
emit("perm_42_arr_2x3_axis1", random.permutation(k42, jnp.arange(6, dtype=jnp.int32).reshape(2, 3), axis=1))

# randint
emit("randint_0_8_0_10", random.randint(k0, (8,), 0, 10))
emit("randint_42_2x3_m5_5", random.randint(k42, (2, 3), -5, 5))
emit("randint_7_6_i8", random.randint(k7, (6,), -100, 100, jnp.int8))
emit("randint_7_4_u8_256", random.randint(k7, (4,), 0, 256, jnp.uint8))
emit("randint_0_4_empty_range", random.randint(k0, (4,), 5, 5))
with jax.enable_x64(True):
    emit("randint_42_4_i64", random.randint(k42, (4,), -(2**40), 2**40, jnp.int64))

block = "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="rewrite the generated block of tests/random_test.cpp")
    args = ap.parse_args()
    if not args.write:
        print(block)
        return
    path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "random_test.cpp"
    text = path.read_text()
    begin, end = "// BEGIN GENERATED by tools/gen_random_refs.py\n", "// END GENERATED\n"
    i, j = text.index(begin) + len(begin), text.index(end)
    path.write_text(text[:i] + block + "\n" + text[j:])
    print(f"wrote {len(lines) // 2} reference arrays to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
