#!/usr/bin/env python3
"""Compare the collectives XLA's SPMD partitioner emits with the ones jitx's partitioner emits.

A fixed table of programs x shardings (PROGRAMS below) is compiled by JAX on 8 fake CPU devices; the collectives
in XLA's compiled HLO text are counted and their bytes summed.  The jitx side writes a JSON file of the same
format (see JSON_FORMAT) from its own partitioner for the same table, and `--report` puts both in a markdown table.

Usage (run with the JAX venv, e.g. /work/venv-jax/bin/python):
  spmd_xla_table.py --jax-json OUT.json                  compile every program with JAX, write OUT.json
  spmd_xla_table.py --report --jax-json JAX.json --jitx-json JITX.json --out benchmarks/results/SPMD_XLA.md
  spmd_xla_table.py --print-table                        print the program table as JSON (for the C++ mirror)
  --only REGEX                                           restrict to programs whose name matches REGEX (re.search)
  --dump-hlo DIR                                         (with --jax-json) also write each compiled HLO text to DIR

JSON_FORMAT (both sides):
  {"programs": {NAME: {"collectives": {"all-reduce": n, "all-gather": n, "reduce-scatter": n,
                                       "all-to-all": n, "collective-permute": n},
                       "bytes": total_bytes_moved,                      # per device, summed over instructions
                       "ops": ["all-reduce f32[32,16]", "all-reduce (f32[32,16], f32[16]) x2", ...]}}}
  Bytes per instruction: all-reduce = bytes of its operand(s) (= result); all-gather = result;
  reduce-scatter = operand(s); all-to-all and collective-permute = result.  Shapes are per-device (shard) shapes.
"""
import os
import sys

# Must happen before jax is imported (jax is only imported lazily below, but keep this at the very top anyway).
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ["JAX_PLATFORMS"] = "cpu"

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402

# ----------------------------------------------------------------------------------------------------------------
# The program table.  This is the single source of truth; the C++ side mirrors it by hand (see --print-table).
#
#   name       program name (JSON key on both sides)
#   mesh       "mesh1" or "mesh2" (see MESHES)
#   fn         key into FUNCS (the Python function); "expr" is the same function in words
#   args       list of (arg name, shape, spec); spec is a tuple with one entry per dimension: a mesh axis name or
#              None (replicated along that dimension); () means fully replicated, i.e. P().  All args are f32.
#   out        None = out_shardings left unspecified (XLA/jitx choose); otherwise a list with one spec per output
#              (a one-element list means the function returns a single array, not a tuple).
#   shardings  short human-readable text for the report
# ----------------------------------------------------------------------------------------------------------------
MESHES = {
    "mesh1": {"shape": [8], "axes": ["x"]},
    "mesh2": {"shape": [2, 4], "axes": ["data", "model"]},
}

R = ()  # fully replicated spec, P()

_MLP_ARGS = [("x", (64, 32)), ("w1", (32, 128)), ("b1", (128,)), ("w2", (128, 32)), ("b2", (32,))]
_LN_EXPR = "(x - mean(x,-1,keepdims)) * rsqrt(var(x,-1,keepdims) + 1e-5)"
_MLP_EXPR = "gelu_tanh(x @ w1 + b1) @ w2 + b2"
_STEP_EXPR = ("loss = mean((tanh(x @ w1) @ w2 - y)**2); (l, (g1, g2)) = value_and_grad(loss)((w1, w2), x, y); "
              "return (w1 - 0.1*g1, w2 - 0.1*g2, l)")


def _mlp(specs):
    return [(n, s, sp) for (n, s), sp in zip(_MLP_ARGS, specs)]


PROGRAMS = [
    dict(name="ew_chain", mesh="mesh1", fn="ew_chain", expr="sin(x) * 2 + 1",
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None)"),
    dict(name="ew_mixed", mesh="mesh1", fn="ew_mixed", expr="x * y + y",
         args=[("x", (64, 32), ("x", None)), ("y", (64, 32), R)], out=None, shardings="x P('x',None), y P()"),
    dict(name="bias_add", mesh="mesh1", fn="bias_add", expr="x + b",
         args=[("x", (64, 32), (None, "x")), ("b", (32,), ("x",))], out=None, shardings="x P(None,'x'), b P('x')"),
    dict(name="matmul_rows", mesh="mesh1", fn="matmul", expr="x @ w",
         args=[("x", (64, 32), ("x", None)), ("w", (32, 16), R)], out=None, shardings="x P('x',None), w P()"),
    dict(name="matmul_cols", mesh="mesh1", fn="matmul", expr="x @ w",
         args=[("x", (64, 32), R), ("w", (32, 16), (None, "x"))], out=None, shardings="x P(), w P(None,'x')"),
    dict(name="matmul_contract", mesh="mesh1", fn="matmul", expr="x @ w",
         args=[("x", (64, 32), (None, "x")), ("w", (32, 16), ("x", None))], out=[R],
         shardings="x P(None,'x'), w P('x',None) -> out P()"),
    dict(name="matmul_contract_rs", mesh="mesh1", fn="matmul", expr="x @ w",
         args=[("x", (64, 32), (None, "x")), ("w", (32, 16), ("x", None))], out=[("x", None)],
         shardings="x P(None,'x'), w P('x',None) -> out P('x',None)"),
    dict(name="matmul_2d", mesh="mesh2", fn="matmul", expr="x @ w",
         args=[("x", (64, 32), ("data", "model")), ("w", (32, 16), ("model", None))], out=None,
         shardings="x P('data','model'), w P('model',None)"),
    dict(name="batched_matmul", mesh="mesh1", fn="batched_matmul", expr="einsum('bij,bjk->bik', a, b)",
         args=[("a", (8, 16, 32), ("x", None, None)), ("b", (8, 32, 16), ("x", None, None))], out=None,
         shardings="a P('x',None,None), b P('x',None,None)"),
    dict(name="sum_rows", mesh="mesh1", fn="sum_rows", expr="sum(x, axis=0)",
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None)"),
    dict(name="max_cols", mesh="mesh1", fn="max_cols", expr="max(x, axis=1)",
         args=[("x", (64, 32), (None, "x"))], out=None, shardings="x P(None,'x')"),
    dict(name="softmax_rows", mesh="mesh1", fn="softmax_rows", expr="softmax(x, axis=-1)",
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None)"),
    dict(name="softmax_sharded_axis", mesh="mesh1", fn="softmax_axis0", expr="softmax(x, axis=0)",
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None)"),
    dict(name="layer_norm_rows", mesh="mesh1", fn="layer_norm", expr=_LN_EXPR,
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None)"),
    dict(name="layer_norm_features_sharded", mesh="mesh1", fn="layer_norm", expr=_LN_EXPR,
         args=[("x", (64, 32), (None, "x"))], out=None, shardings="x P(None,'x')"),
    dict(name="transpose", mesh="mesh1", fn="transpose", expr="x.T",
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None)"),
    dict(name="reshape_flatten", mesh="mesh1", fn="reshape_flatten", expr="x.reshape(2048) * 2",
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None)"),
    dict(name="mlp_data_parallel", mesh="mesh1", fn="mlp", expr=_MLP_EXPR,
         args=_mlp([("x", None), R, R, R, R]), out=None, shardings="x P('x',None), w1 b1 w2 b2 P()"),
    dict(name="mlp_megatron", mesh="mesh1", fn="mlp", expr=_MLP_EXPR,
         args=_mlp([R, (None, "x"), ("x",), ("x", None), R]), out=[R],
         shardings="x P(), w1 P(None,'x'), b1 P('x'), w2 P('x',None), b2 P() -> out P()"),
    dict(name="mlp_2d", mesh="mesh2", fn="mlp", expr=_MLP_EXPR,
         args=_mlp([("data", None), (None, "model"), ("model",), ("model", None), R]), out=None,
         shardings="x P('data',None), w1 P(None,'model'), b1 P('model'), w2 P('model',None), b2 P()"),
    dict(name="train_step_dp", mesh="mesh1", fn="train_step", expr=_STEP_EXPR,
         args=[("w1", (32, 64), R), ("w2", (64, 8), R), ("x", (64, 32), ("x", None)), ("y", (64, 8), ("x", None))],
         out=[R, R, R], shardings="w1 w2 P(), x y P('x',None) -> (P(), P(), P())"),
    dict(name="train_step_fsdp", mesh="mesh1", fn="train_step", expr=_STEP_EXPR,
         args=[("w1", (32, 64), ("x", None)), ("w2", (64, 8), ("x", None)), ("x", (64, 32), ("x", None)),
               ("y", (64, 8), ("x", None))],
         out=[("x", None), ("x", None), R],
         shardings="w1 w2 x y P('x',None) -> (P('x',None), P('x',None), P())"),
    dict(name="scan_layers", mesh="mesh1", fn="scan_layers",
         expr="lax.scan(lambda h, wl: (tanh(h @ wl), None), x, w)[0]",
         args=[("x", (64, 32), ("x", None)), ("w", (4, 32, 32), R)], out=None, shardings="x P('x',None), w P()"),
    dict(name="with_constraint", mesh="mesh1", fn="with_constraint",
         expr="with_sharding_constraint(exp(x), NamedSharding(mesh1, P())) + 1",
         args=[("x", (64, 32), ("x", None))], out=None, shardings="x P('x',None); exp(x) constrained to P()"),
    dict(name="transpose_resharded", mesh="mesh1", fn="transpose2", expr="x.T * 2",
         args=[("x", (64, 32), ("x", None))], out=[("x", None)], shardings="x P('x',None) -> out P('x',None)"),
    dict(name="rows_to_cols", mesh="mesh1", fn="double", expr="x * 2",
         args=[("x", (64, 32), ("x", None))], out=[(None, "x")], shardings="x P('x',None) -> out P(None,'x')"),
    dict(name="conv_rows", mesh="mesh1", fn="conv_same", expr="tanh(conv(x, k, NHWC/HWIO, 3x3, SAME))",
         args=[("x", (4, 16, 16, 8), (None, "x", None, None)), ("k", (3, 3, 8, 8), R)], out=None,
         shardings="x P(None,'x',None,None) (rows), k P()"),
    dict(name="cnn_grad_dp", mesh="mesh1", fn="cnn_grad", expr="grad(mean(tanh(conv(x, k))**2), k)",
         args=[("x", (16, 8, 8, 4), ("x", None, None, None)), ("k", (3, 3, 4, 8), R)], out=[R],
         shardings="x P('x',None,None,None), k P() -> out P()"),
]

KINDS = ["all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"]


def _spec_json(spec):
    return [list(a) if isinstance(a, tuple) else a for a in spec]


def table_json(programs):
    """The table in a plain form for the C++ mirror."""
    out = []
    for p in programs:
        out.append({
            "name": p["name"],
            "mesh": {"name": p["mesh"], "shape": MESHES[p["mesh"]]["shape"], "axes": MESHES[p["mesh"]]["axes"]},
            "function": p["expr"],
            "args": [{"name": n, "shape": list(s), "dtype": "f32", "spec": _spec_json(sp)} for n, s, sp in p["args"]],
            "out_specs": None if p["out"] is None else [_spec_json(s) for s in p["out"]],
            "shardings": p["shardings"],
        })
    return {
        "notes": ("spec: one entry per dimension, a mesh axis name or null (replicated on that dim); [] = P() = fully "
                  "replicated. Mesh devices: jax.devices()[:8] reshaped row-major to mesh.shape. out_specs: null = "
                  "out_shardings unspecified; otherwise one spec per output (a one-element list = single array "
                  "output). Inputs are f32, random normal."),
        "programs": out,
    }


# ----------------------------------------------------------------------------------------------------------------
# HLO text parsing
# ----------------------------------------------------------------------------------------------------------------
ELEM_BYTES = {"f32": 4, "s32": 4, "u32": 4, "pred": 1, "bf16": 2, "f16": 2, "f64": 8, "s64": 8, "u64": 8,
              "s8": 1, "u8": 1, "s16": 2, "u16": 2, "c64": 8, "c128": 16}

# "  ROOT %name = SHAPE opcode(operands), attrs..."  (the leading % is optional in some XLA versions)
_INSTR_RE = re.compile(r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<shape>.*?)\s+"
                       r"(?P<op>[a-z][a-z0-9\-]*)\((?P<rest>.*)$")
_ARRAY_RE = re.compile(r"\b([a-z]+[0-9]*)\[([^\]]*)\]")


def parse_shapes(shape_text):
    """'f32[32,16]{1,0}' -> [('f32', [32, 16])]; '(f32[32]{0}, f32[])' -> two entries; token[] etc. skipped."""
    shapes = []
    # Drop layouts so their '{...}' cannot be mistaken for anything; arrays never nest inside them.
    text = re.sub(r"\{[^{}]*\}", "", shape_text)
    for ty, dims in _ARRAY_RE.findall(text):
        if ty not in ELEM_BYTES:
            continue
        ds = []
        for d in dims.split(","):
            d = d.strip()
            if not d:
                continue
            m = re.search(r"\d+", d)  # handles dynamic bounds like '<=8'
            ds.append(int(m.group(0)) if m else 0)
        shapes.append((ty, ds))
    return shapes


def shape_bytes(shapes):
    total = 0
    for ty, ds in shapes:
        n = 1
        for d in ds:
            n *= d
        total += n * ELEM_BYTES[ty]
    return total


def fmt_shape(ty, ds):
    return "%s[%s]" % (ty, ",".join(str(d) for d in ds))


def _operand_names(rest):
    """Names of the operands in 'a, %b), attrs' (only the part up to the matching ')')."""
    depth, end = 0, len(rest)
    for i, c in enumerate(rest):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                end = i
                break
            depth -= 1
    names = []
    for tok in rest[:end].split(","):
        tok = tok.strip()
        if not tok:
            continue
        # operands may be printed as 'f32[8]{0} %name' or just '%name'
        names.append(tok.split()[-1].lstrip("%"))
    return names


def count_collectives(hlo_text):
    """Count the collectives in an HLO module's text. Returns the JSON entry for one program."""
    instrs = []  # (name, shape_text, opcode, rest)
    shape_of = {}
    for line in hlo_text.splitlines():
        m = _INSTR_RE.match(line)
        if not m:
            continue
        instrs.append((m.group("name"), m.group("shape"), m.group("op"), m.group("rest")))
        shape_of[m.group("name")] = m.group("shape")
    # result shape of the '-done' that consumes each '-start' (the start's own shape is an async tuple)
    done_shape = {}
    for name, shape, op, rest in instrs:
        if op.endswith("-done"):
            ops = _operand_names(rest)
            if ops:
                done_shape[ops[0]] = shape
    counts = {k: 0 for k in KINDS}
    total, descr = 0, []
    for name, shape, op, rest in instrs:
        base = op[:-len("-start")] if op.endswith("-start") else op
        if base not in KINDS:
            continue
        counts[base] += 1
        if op.endswith("-start"):
            res = parse_shapes(done_shape.get(name, shape))
        else:
            res = parse_shapes(shape)
        operands = []
        for o in _operand_names(rest):
            if o in shape_of:
                operands += parse_shapes(shape_of[o])
        if base == "reduce-scatter":
            moved = operands if operands else res
        elif base == "all-reduce":
            moved = operands if (operands and not op.endswith("-start")) else res
        else:
            moved = res
        total += shape_bytes(moved)
        n = len(moved)
        if n == 1:
            descr.append("%s %s" % (base, fmt_shape(*moved[0])))
        else:
            descr.append("%s (%s) x%d" % (base, ", ".join(fmt_shape(*s) for s in moved), n))
    return {"collectives": counts, "bytes": total, "ops": descr}


# ----------------------------------------------------------------------------------------------------------------
# JAX side
# ----------------------------------------------------------------------------------------------------------------
def make_funcs():
    import jax
    import jax.numpy as jnp

    def layer_norm(x):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.var(x, axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5)

    def mlp(x, w1, b1, w2, b2):
        return jax.nn.gelu(x @ w1 + b1, approximate=True) @ w2 + b2

    def loss(params, x, y):
        w1, w2 = params
        return jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)

    def train_step(w1, w2, x, y):
        lval, (g1, g2) = jax.value_and_grad(loss)((w1, w2), x, y)
        return w1 - 0.1 * g1, w2 - 0.1 * g2, lval

    def scan_layers(x, w):
        return jax.lax.scan(lambda h, wl: (jnp.tanh(h @ wl), None), x, w)[0]

    def with_constraint_factory(meshes):
        from jax.sharding import NamedSharding, PartitionSpec as P

        def with_constraint(x):
            return jax.lax.with_sharding_constraint(jnp.exp(x), NamedSharding(meshes["mesh1"], P())) + 1
        return with_constraint

    def conv_same(x, k):
        return jnp.tanh(jax.lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (1, 1)),
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")))

    def cnn_grad(x, k):
        return jax.grad(lambda kk: jnp.mean(conv_same(x, kk) ** 2))(k)

    funcs = {
        "conv_same": conv_same,
        "cnn_grad": cnn_grad,
        "ew_chain": lambda x: jnp.sin(x) * 2 + 1,
        "ew_mixed": lambda x, y: x * y + y,
        "bias_add": lambda x, b: x + b,
        "matmul": lambda x, w: x @ w,
        "batched_matmul": lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
        "sum_rows": lambda x: jnp.sum(x, axis=0),
        "max_cols": lambda x: jnp.max(x, axis=1),
        "softmax_rows": lambda x: jax.nn.softmax(x, axis=-1),
        "softmax_axis0": lambda x: jax.nn.softmax(x, axis=0),
        "layer_norm": layer_norm,
        "transpose": lambda x: x.T,
        "reshape_flatten": lambda x: x.reshape(2048) * 2,
        "mlp": mlp,
        "train_step": train_step,
        "scan_layers": scan_layers,
        "transpose2": lambda x: x.T * 2,
        "double": lambda x: x * 2,
    }
    return funcs, with_constraint_factory


def make_meshes():
    import jax
    import numpy as np
    from jax.sharding import Mesh
    devs = np.array(jax.devices()[:8])
    if devs.size < 8:
        raise SystemExit("need 8 devices, got %d (XLA_FLAGS=%r)" % (devs.size, os.environ.get("XLA_FLAGS")))
    out = {}
    for name, m in MESHES.items():
        out[name] = Mesh(devs.reshape(m["shape"]), tuple(m["axes"]))
    return out


def compile_program(p, meshes, funcs, wc_factory, rng):
    import jax
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = meshes[p["mesh"]]
    fn = wc_factory(meshes) if p["fn"] == "with_constraint" else funcs[p["fn"]]
    args = [rng.standard_normal(shape).astype(np.float32) for _, shape, _ in p["args"]]
    in_sh = tuple(NamedSharding(mesh, P(*spec)) for _, _, spec in p["args"])
    kw = {"in_shardings": in_sh}
    if p["out"] is not None:
        outs = [NamedSharding(mesh, P(*s)) for s in p["out"]]
        kw["out_shardings"] = outs[0] if len(outs) == 1 else tuple(outs)
    return jax.jit(fn, **kw).lower(*args).compile().as_text()


def run_jax(programs, out_path, dump_dir=None):
    import numpy as np
    meshes = make_meshes()
    funcs, wc_factory = make_funcs()
    rng = np.random.default_rng(0)
    result = {}
    for p in programs:
        text = compile_program(p, meshes, funcs, wc_factory, rng)
        if dump_dir:
            os.makedirs(dump_dir, exist_ok=True)
            with open(os.path.join(dump_dir, p["name"] + ".hlo.txt"), "w") as f:
                f.write(text)
        entry = count_collectives(text)
        result[p["name"]] = entry
        print("%-28s %-40s %6d B  %s" % (p["name"], coll_text(entry["collectives"]), entry["bytes"],
                                        "; ".join(entry["ops"])))
    import jax
    doc = {"source": "jax %s, XLA CPU, 8 host devices, compiled HLO (jit(...).lower(...).compile().as_text())"
                     % jax.__version__,
           "programs": result}
    d = os.path.dirname(out_path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    print("wrote %s (%d programs)" % (out_path, len(result)))


# ----------------------------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------------------------
def coll_text(counts):
    parts = ["%d %s" % (counts.get(k, 0), k) for k in KINDS if counts.get(k, 0)]
    extra = sorted(k for k in counts if k not in KINDS and counts[k])
    parts += ["%d %s" % (counts[k], k) for k in extra]
    return ", ".join(parts) if parts else "none"


def verdict(xla, jitx):
    if xla is None or jitx is None:
        return "missing"
    kinds = set(KINDS) | set(xla.get("collectives", {})) | set(jitx.get("collectives", {}))
    if all(xla["collectives"].get(k, 0) == jitx["collectives"].get(k, 0) for k in kinds):
        return "match"
    if jitx.get("bytes", 0) <= xla.get("bytes", 0):
        return "fewer bytes"
    return "differs"


def load_programs(path):
    with open(path) as f:
        doc = json.load(f)
    progs = doc.get("programs", doc)
    for name, e in progs.items():
        e.setdefault("collectives", {})
        e.setdefault("bytes", 0)
        e.setdefault("ops", [])
    return doc, progs


def md_escape(s):
    return s.replace("|", "\\|")


def write_report(jax_path, jitx_path, out_path, only):
    jdoc, xla = load_programs(jax_path)
    _, jitx = load_programs(jitx_path)
    table = {p["name"]: p for p in PROGRAMS}
    names = [p["name"] for p in PROGRAMS]
    names += sorted((set(xla) | set(jitx)) - set(names))
    if only:
        names = [n for n in names if re.search(only, n)]
    rows, tally, details = [], {}, []
    for n in names:
        x, j = xla.get(n), jitx.get(n)
        v = verdict(x, j)
        tally[v] = tally.get(v, 0) + 1
        sh = table[n]["shardings"] if n in table else "(not in table)"
        if n in table and table[n]["mesh"] == "mesh2":
            sh += " [2x4 data,model]"
        rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            n, md_escape(sh),
            coll_text(x["collectives"]) if x else "—", str(x["bytes"]) if x else "—",
            coll_text(j["collectives"]) if j else "—", str(j["bytes"]) if j else "—", v))
        print("%-28s %-12s XLA: %-40s jitx: %s" % (n, v, (coll_text(x["collectives"]) + " %dB" % x["bytes"])
                                                   if x else "—",
                                                   (coll_text(j["collectives"]) + " %dB" % j["bytes"]) if j else "—"))
        if x and j and (v != "match" or x["bytes"] != j["bytes"]):
            details.append("- `%s` (%s)\n  - XLA: %s\n  - jitx: %s" % (
                n, v, ("; ".join("`%s`" % o for o in x["ops"]) or "none") if x else "—",
                ("; ".join("`%s`" % o for o in j["ops"]) or "none") if j else "—"))
    summary = "%d programs: " % len(names) + ", ".join(
        "%d %s" % (tally[k], k) for k in ["match", "fewer bytes", "differs", "missing"] if k in tally)
    src = jdoc.get("source", "jax, XLA CPU")
    lines = [
        "# SPMD collectives: XLA vs jitx",
        "",
        "Collectives in the compiled programs of a fixed table of programs x shardings (8 devices; `mesh1` = 1-D "
        "mesh `x`=8, `mesh2` = 2-D mesh `data`=2 x `model`=4; all inputs f32). The table is `PROGRAMS` in "
        "`tools/spmd_xla_table.py` (`--print-table` prints it as JSON).",
        "",
        "Produced with:",
        "",
        "```",
        "/work/venv-jax/bin/python tools/spmd_xla_table.py --jax-json %s" % jax_path,
        "# jitx side: writes the same JSON format from jitx's partitioner -> %s" % jitx_path,
        "/work/venv-jax/bin/python tools/spmd_xla_table.py --report --jax-json %s --jitx-json %s --out %s"
        % (jax_path, jitx_path, out_path),
        "```",
        "",
        "XLA side: %s. Every instruction whose opcode is all-reduce, all-gather, reduce-scatter, all-to-all or "
        "collective-permute (or its async `-start` form) is counted once per textual occurrence (a collective "
        "inside a while body counts once). Bytes are per device: all-reduce = operand(s), all-gather = result, "
        "reduce-scatter = operand(s), all-to-all / collective-permute = result." % src,
        "",
        "Note: XLA's CPU pipeline combines independent all-reduces into one tuple-shaped all-reduce (counted as "
        "one instruction; its operands are listed in the details), and on CPU it keeps a reduction into a sharded "
        "output as all-reduce + dynamic-slice instead of forming a reduce-scatter. Counts per kind can therefore "
        "differ from jitx even where the communication pattern is equivalent; compare bytes too.",
        "",
        "Verdict: `match` = same number of instructions of every kind (bytes may still differ; see details); "
        "`fewer bytes` = counts differ but jitx moves no more bytes than XLA; `differs` = otherwise; `missing` = "
        "the program is absent on one side. An all-to-all on CPU is printed with one operand per peer (`xN`).",
        "",
        "| program | shardings | XLA collectives | XLA bytes | jitx collectives | jitx bytes | verdict |",
        "|---|---|---|---:|---|---:|---|",
    ] + rows + ["", "**Summary:** " + summary + "."]
    if details:
        lines += ["", "## Details (rows on both sides that are not `match` or move different bytes)", ""] + details
    d = os.path.dirname(out_path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("summary: " + summary + " -> " + out_path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jax-json", help="JAX/XLA JSON: written (default mode) or read (--report)")
    ap.add_argument("--jitx-json", help="jitx JSON to compare (--report)")
    ap.add_argument("--report", action="store_true", help="write the markdown comparison")
    ap.add_argument("--out", default="benchmarks/results/SPMD_XLA.md", help="markdown output (--report)")
    ap.add_argument("--only", help="regex filter on program names")
    ap.add_argument("--print-table", action="store_true", help="print the program table as JSON and exit")
    ap.add_argument("--dump-hlo", metavar="DIR", help="also write each compiled HLO text to DIR")
    a = ap.parse_args(argv)
    programs = [p for p in PROGRAMS if not a.only or re.search(a.only, p["name"])]
    if a.print_table:
        t = table_json(programs)
        body = ",\n".join("  " + json.dumps(q) for q in t["programs"])
        print('{"notes": %s,\n "programs": [\n%s\n]}' % (json.dumps(t["notes"]), body))
        return 0
    if a.report:
        if not a.jax_json or not a.jitx_json:
            ap.error("--report needs --jax-json and --jitx-json")
        write_report(a.jax_json, a.jitx_json, a.out, a.only)
        return 0
    if not a.jax_json:
        ap.error("give --jax-json OUT.json (compile), --report, or --print-table")
    run_jax(programs, a.jax_json, a.dump_hlo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
