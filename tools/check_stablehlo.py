#!/usr/bin/env python3
"""Checks jitx's StableHLO text with JAX's own MLIR parser and verifier (a conformance tool, not a CI step).

Usage:
  JITX_STABLEHLO_CORPUS=/tmp/corpus ./build/tests/jitx_tests "[stablehlo]"
  /work/venv-jax/bin/python tools/check_stablehlo.py /tmp/corpus [--compare] [--jax-out DIR]

For every *.mlir file in the directory: parse it in an MLIR context with the dialects JAX registers
(func, stablehlo, chlo, ...), run the verifier, and check that the parsed module prints back and parses
again (round trip); also report whether the text is byte-identical to MLIR's own printing of the
parsed module (the form JAX's as_text() shows). Each failure is reported with the file and the parser's message; the exit code is 1
if any file fails, 2 if there was nothing to check.

With --compare, a few of the corpus programs are also written in JAX (the MLP block of
examples/mlp_block.cpp among them), lowered with jax.jit(f).lower(...).as_text(), and compared with
jitx's text: the op histogram of each side and a unified diff are printed (informational: JAX makes
different op choices in places, e.g. private functions for argmax/cumsum). The JAX texts are verified
too and saved under --jax-out when given.
"""
from __future__ import annotations

import argparse
import collections
import difflib
import pathlib
import re
import sys


def make_context():
    """An MLIR context with the dialects JAX uses when it lowers (stablehlo, chlo, func, sdy, ...)."""
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


def check_text(text: str, ctx) -> tuple[str | None, bool]:
    """(None if text parses, verifies and round-trips, else the error message;
    whether text is exactly MLIR's own printing of the parsed module, i.e. what JAX's as_text() would show)."""
    from jax._src.lib.mlir import ir

    try:
        module = ir.Module.parse(text, context=ctx)
    except Exception as e:  # MLIRError carries the parser's diagnostics
        return f"parse: {e}", False
    try:
        if not module.operation.verify():
            return "verify: the verifier failed", False
    except Exception as e:
        return f"verify: {e}", False
    try:
        printed = module.operation.get_asm(enable_debug_info=False)
        again = ir.Module.parse(printed, context=ctx)
        again.operation.verify()
    except Exception as e:
        return f"round trip: {e}", False
    return None, printed == text


def op_histogram(text: str) -> collections.Counter:
    ops = re.findall(r'(?:=|^)\s*"?((?:stablehlo|chlo|func)\.[a-z_]+|call)\b', text, flags=re.M)
    return collections.Counter(ops)


# --- JAX versions of some corpus programs, for --compare ---------------------------------------------------
def jax_programs():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    f32_23 = jnp.array([[0.5, -1.25, 2.0], [0.75, -0.5, 3.0]], jnp.float32)

    def mlp_block(x, w, b):
        h = jax.nn.gelu(jnp.matmul(x, w) + b, approximate=True)
        mu = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(h - mu), axis=-1, keepdims=True)
        return (h - mu) * lax.rsqrt(var + 1e-5)

    def golden(x, y):
        s = lax.reduce_sum(x * y + jnp.float32(1.0), (1,))
        am = lax.argmax(x, 1, jnp.int32)
        rw = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 1), [(0, 0), (1, 0)])
        return s, am, x > y, rw

    def signature(x, y):
        return lax.add(x, y)

    def multi_output(x, s):
        return lax.reduce_sum(x, (0, 1)), x, s * s, jnp.exp(x)

    def reductions(x, i, p, u):
        return (lax.reduce_sum(x, (1,)), lax.reduce_prod(x, (0,)), lax.reduce_max(x, (0, 1)),
                lax.reduce_min(x, (1,)), lax.reduce_and(p, (0,)), lax.reduce_or(p, (0,)),
                lax.reduce_max(i, (1,)), lax.reduce_min(i, (0,)), lax.reduce_min(u, (0,)),
                lax.reduce_sum(i, (0, 1)))

    def shape_ops(x, i, j):
        return (lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)), x.reshape(3, 2), x.T, lax.rev(x, (0, 1)),
                lax.slice(x, (0, 1), (2, 3), (1, 2)), lax.slice(x, (1, 0), (2, 3)),
                lax.dynamic_slice(x, (i, j), (1, 2)),
                lax.dynamic_update_slice(x, lax.slice(x, (0, 0), (1, 2)), (i, j)),
                lax.concatenate([x, x, x], 1), lax.pad(x, jnp.float32(0), [(1, 2, 0), (-1, 0, 1)]),
                lax.iota(jnp.int32, 5), lax.broadcasted_iota(jnp.float32, (2, 3), 1))

    one = jnp.ones
    return {
        "mlp_block": (mlp_block, (one((8, 16), jnp.float32), one((16, 16), jnp.float32), one((16,), jnp.float32))),
        "golden": (golden, (f32_23, f32_23)),
        "signature": (signature, (f32_23, f32_23)),
        "multi_output": (multi_output, (f32_23, jnp.float32(2.0))),
        "reductions": (reductions, (f32_23, jnp.ones((2, 3), jnp.int32), jnp.ones((4,), bool),
                                    jnp.ones((4,), jnp.uint8))),
        "shape_ops": (shape_ops, (f32_23, np.int32(1), np.int32(0))),
    }


def compare(directory: pathlib.Path, ctx, jax_out: pathlib.Path | None) -> int:
    import jax

    failures = 0
    for name, (fn, args) in jax_programs().items():
        fn.__name__ = name
        ours_path = directory / f"{name}.mlir"
        theirs = jax.jit(fn).lower(*args).as_text()
        err, _ = check_text(theirs, ctx)
        if err:
            print(f"JAX TEXT FAILS? {name}: {err}")
            failures += 1
        if jax_out:
            jax_out.mkdir(parents=True, exist_ok=True)
            (jax_out / f"{name}.mlir").write_text(theirs)
        print(f"=== compare {name} (jitx: {ours_path.name}) ===")
        if not ours_path.exists():
            print("  (no jitx text in the corpus)")
            continue
        ours = ours_path.read_text()
        ho, hj = op_histogram(ours), op_histogram(theirs)
        for op in sorted(set(ho) | set(hj)):
            mark = "" if ho[op] == hj[op] else "   <-- differs"
            print(f"  {op:40s} jitx {ho[op]:3d}  jax {hj[op]:3d}{mark}")
        diff = list(difflib.unified_diff(theirs.splitlines(), ours.splitlines(), "jax", "jitx", lineterm="", n=0))
        print(f"  identical text: {ours == theirs}; diff (jax -> jitx), {len(diff)} lines:")
        for line in diff[:80]:
            print("    " + line)
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", type=pathlib.Path, help="directory of .mlir files (the corpus)")
    ap.add_argument("--compare", action="store_true", help="also lower some programs with JAX and diff the texts")
    ap.add_argument("--require-canonical", action="store_true",
                    help="also fail when a file is not byte-identical to MLIR's printing of it")
    ap.add_argument("--jax-out", type=pathlib.Path, help="where --compare writes JAX's texts")
    args = ap.parse_args()

    import jax
    import jaxlib

    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
    ctx = make_context()
    files = sorted(args.directory.glob("*.mlir"))
    if not files:
        print(f"no .mlir files in {args.directory}")
        return 2
    failed, canonical = [], 0
    for f in files:
        err, same = check_text(f.read_text(), ctx)
        if err:
            failed.append(f)
            print(f"FAIL {f}: {err}")
        else:
            canonical += same
            print(f"ok   {f}{'' if same else '  (parses, but MLIR prints it differently)'}")
    print(f"{len(files) - len(failed)}/{len(files)} files parse, verify and round-trip; "
          f"{canonical}/{len(files)} are exactly MLIR's own printing of themselves")
    if args.compare:
        compare(args.directory, ctx, args.jax_out)
    if args.require_canonical and canonical != len(files):
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
