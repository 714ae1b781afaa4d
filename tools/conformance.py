#!/usr/bin/env python3
"""jitx against JAX (0.10.2, x64) on the jnp/lax/nn surface: edge values, several dtypes, eager, jit, both platforms.

  python3 tools/conformance.py [--build build] [--venv /work/venv-jax] [--platforms cpu,interpreter] [--quick|--ci]
                               [--only REGEX]

Without --venv it creates a virtualenv with pip's jax in a temporary folder (network needed). It enumerates the
functions declared in include/jitx/{numpy*,lax*,nn*}.h, builds cases (unary, binary, reductions, shape ops) on the
edge-value set (random values, +-0, +-inf, NaN, huge and tiny magnitudes, subnormals, integer extremes, empty and
0-d arrays) for float16/bfloat16/float32/float64/int8/int32/int64/uint8/uint32/bool, computes JAX's results in a
subprocess, runs build/tests/jitx_conformance (eager and jit) on each platform, and prints a table of
disagreements: a value beyond the dtype's ULP tolerance, a different dtype or shape, or an error on one side only.
The exchange is a plain text file (hex bit patterns with dtype and shape), not .npy. Exit status 1 when any case
disagrees (--no-fail: 0), 2 on a set-up error. Functions in the headers that no case covers are listed.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "conformance"))
import tolerances  # noqa: E402  (tools/conformance/tolerances.py)

ROOT = pathlib.Path(__file__).resolve().parent.parent
ULP_TOL = {"float16": 1, "bfloat16": 1, "float32": 4, "float64": 4}
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64",
          "bool"]


# Public names that are not JAX functions of arrays (helpers the binary cases exercise, or results that are not
# arrays): no case of their own.
NOT_JAX = {"jnp.promote_and_broadcast", "jnp.name", "lax.name"}


def header_surface():
    """Public function names of include/jitx/{numpy*,lax*,nn,linalg}.h as jnp.X / lax.X / nn.X / linalg.X (the
    functions returning arrays, pytrees or result structs; what sits in namespace detail or impl is left out)."""
    names = set()
    ret = r"(?:Array|std::vector<Array>|std::pair<Array, Array>|\w+Result|auto|detail::Traced<T>)"
    for pat, ns in (("numpy*.h", "jnp"), ("lax*.h", "lax"), ("nn*.h", "nn"), ("linalg.h", "linalg")):
        for h in (ROOT / "include" / "jitx").glob(pat):
            text = re.sub(r"namespace (jitx::detail|impl) \{.*?\n\}  // namespace \1", "", h.read_text(), flags=re.S)
            for m in re.finditer(r"JITX_(?:JNP|LAX)_(?:UNARY|BINARY|SCATTER)\((\w+)\)", text):
                names.add(f"{ns}.{m.group(1)}")
            for m in re.finditer(r"^" + ret + r"\s+(\w+)\(", text, re.M):
                names.add(f"{ns}.{m.group(1)}")
    return names - NOT_JAX


# ----------------------------------------------------------------------------------------------- the JAX side
JAX_SIDE = r'''
import sys, numpy as np, jax, jax.numpy as jnp
from jax import lax
jax.config.update("jax_enable_x64", True)
NN = jax.nn
sys.path.insert(0, sys.argv[4])
from jax_extra import EXTRA
def fn_for(op):
    if op in EXTRA: return EXTRA[op]
    ns, _, rest = op.partition(".")
    name, _, var = rest.partition("[")
    var = var.rstrip("]")
    mod = {"jnp": jnp, "lax": lax, "nn": NN}[ns]
    if ns == "nn" and name == "logsumexp": return lambda x: NN.logsumexp(x, axis=-1)
    if name == "round" and ns == "lax": return lambda x: lax.round(x)
    f = getattr(mod, name)
    if var == "axis=0": return lambda x: f(x, axis=0)
    if var == "axis=-1,keepdims": return lambda x: f(x, axis=-1, keepdims=True)
    if name == "expand_dims": return lambda x: jnp.expand_dims(x, 0)
    if name == "concatenate": return lambda x: jnp.concatenate([x, x], 0)
    if name == "stack": return lambda x: jnp.stack([x, x], 0)
    if name == "tile": return lambda x: jnp.tile(x, 2)
    if name == "roll": return lambda x: jnp.roll(x, 1)
    if name == "clip": return lambda x: jnp.clip(x, -1, 2)
    if name in ("sort", "argsort"): return lambda x: f(x, axis=-1)
    return f
UI = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
def read(tok, i):
    dt, nd = tok[i], int(tok[i + 1]); i += 2
    shape = tuple(int(t) for t in tok[i:i + nd]); i += nd
    n = int(np.prod(shape)) if shape else 1
    bits = np.array([int(t, 16) for t in tok[i:i + n]], np.uint64); i += n
    dtype = jnp.dtype(dt)
    if dt == "bool": a = bits.astype(bool)
    else: a = bits.astype(UI[dtype.itemsize]).view(dtype)
    return a.reshape(shape), i
def write(v):
    v = np.asarray(v)
    dt = str(v.dtype)
    flat = v.reshape(-1)
    bits = flat.astype(np.uint8) if dt == "bool" else flat.view(UI[v.dtype.itemsize])
    return f"OK {dt} {v.ndim} " + " ".join(str(s) for s in v.shape) + (" " if v.ndim else "") + " ".join(format(int(b), "x") for b in bits)
EW = set(open(sys.argv[3]).read().split())  # elementwise ops: their cases are batched into one jit per op
def run_one(op, args):
    try:
        return write(fn_for(op)(*args))
    except Exception as e:
        return "ERR " + type(e).__name__ + " " + str(e).replace("\n", " ")[:200]
cases = []
for line in open(sys.argv[1]):
    tok = line.split()
    if not tok: continue
    cid, op, n = tok[0], tok[1], int(tok[2]); i = 3; args = []
    for _ in range(n):
        a, i = read(tok, i); args.append(a)
    cases.append((cid, op, args))
results = {}
groups = {}
other = {}
for cid, op, args in cases:
    if op in EW:
        groups.setdefault((op, tuple(str(a.dtype) for a in args)), []).append((cid, args))
    else:
        other.setdefault(op, []).append((cid, args))
# Other ops: the cases that trace (jax.eval_shape: no compilation) run in one jit per op; the rest eagerly (each
# records its error, or a value where only the traced form fails).
for op, members in other.items():
    f = fn_for(op)
    ok = []
    for cid, args in members:
        jargs = [jnp.asarray(a) for a in args]
        try:
            jax.eval_shape(f, *jargs)
            ok.append((cid, jargs))
        except Exception:
            results[cid] = run_one(op, jargs)
    try:
        outs = jax.jit(lambda xs: [f(*a) for a in xs])([a for _, a in ok])
        for (cid, _), o in zip(ok, outs):
            results[cid] = write(o)
    except Exception:
        for cid, jargs in ok:
            results[cid] = run_one(op, jargs)
by_op = {}
for (op, dts), members in groups.items():
    by_op.setdefault(op, []).append((dts, members))
def flat_inputs(members):
    shapes, cols = [], None
    for cid, args in members:
        b = np.broadcast_arrays(*args) if len(args) > 1 else args
        shapes.append(b[0].shape)
        cols = [[] for _ in b] if cols is None else cols
        for k, x in enumerate(b): cols[k].append(np.asarray(x).reshape(-1))
    return shapes, [np.concatenate(c) for c in cols]
for op, sigs in by_op.items():
    f = fn_for(op)
    packed = [flat_inputs(m) for _, m in sigs]
    try:
        outs = jax.jit(lambda xs: [f(*ins) for ins in xs])([[jnp.asarray(x) for x in ins] for _, ins in packed])
    except Exception:
        outs = None
    for k, (dts, members) in enumerate(sigs):
        out = None
        if outs is not None:
            out = np.asarray(outs[k])
        else:
            try:
                out = np.asarray(jax.jit(f)(*[jnp.asarray(x) for x in packed[k][1]]))
            except Exception:
                out = None
        if out is None:  # an error: each case on its own, eagerly, records it
            for cid, args in members:
                results[cid] = run_one(op, [jnp.asarray(a) for a in args])
            continue
        pos = 0
        for (cid, args), shape in zip(members, packed[k][0]):
            n = int(np.prod(shape)) if shape else 1
            results[cid] = write(out[pos:pos + n].reshape(shape)); pos += n
with open(sys.argv[2], "w") as out:
    for cid, _, _ in cases:
        out.write(f"{cid} {results[cid]}\n")
'''


def edge_values(dt, np, rng):
    """The edge-value set of a dtype as a 1-D numpy array."""
    if dt == "bool":
        return np.array([True, False, True, True, False, False, True, False])
    if dt.startswith("float") or dt == "bfloat16":
        import ml_dtypes  # shipped with jax
        t = ml_dtypes.bfloat16 if dt == "bfloat16" else np.dtype(dt)
        fi = ml_dtypes.finfo(t) if dt == "bfloat16" else np.finfo(t)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 100.0, -1000.0, np.inf, -np.inf, np.nan, float(fi.max),
                -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal), 1e-7, 0.9999, 1e30, -7.25]
        vals += list(rng.normal(0, 3, 8))
        with np.errstate(over="ignore"):
            return np.array(vals, np.float64).astype(t)
    info = np.iinfo(dt)
    vals = [0, 1, 2, 7, 100, int(info.max), int(info.max) - 1, int(info.min), int(info.min) + 1]
    if info.min < 0:
        vals += [-1, -7, -100]
    vals += [int(v) for v in rng.integers(max(int(info.min), -1000), min(int(info.max), 1000), 6)]
    return np.array(vals, dtype=dt)


def hexes(a, np):
    ui = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    flat = np.asarray(a).reshape(-1)
    bits = flat.astype(np.uint8) if flat.dtype == bool else flat.view(ui[flat.dtype.itemsize])
    return " ".join(format(int(b), "x") for b in bits)


def enc(a, np):
    dt = "bfloat16" if str(a.dtype) == "bfloat16" else str(a.dtype)
    return f"{dt} {a.ndim} " + " ".join(str(s) for s in a.shape) + (" " if a.ndim else "") + hexes(a, np)


LAX_LINALG = ("lax.eigh[", "lax.qr[", "lax.svd[")


def is_linalg(op):
    """jnp.linalg's and lax.linalg's functions (their cases: the finite matrix, see build_cases)."""
    return op.startswith("linalg.") or op.startswith(LAX_LINALG)


def keep_for_ci(cid):
    """CI's sample: float32 cases whole; of the other dtypes the edge values as a vector and as a matrix."""
    _, dt, inputs = cid.split("|")
    return dt == "float32" or inputs in ("edge", "edge*roll", "matrix") or "+" in dt or (
        is_linalg(cid) and inputs == "finite")


def build_cases(ops, np, quick):
    """(id, op, inputs) for every op on every input set of every dtype (quick: "ci" keeps CI's sample)."""
    rng = np.random.default_rng(0)
    sets = {}
    for dt in (["float32", "float64", "float16", "int32", "bool"] if quick else DTYPES):
        e = edge_values(dt, np, rng)
        m = np.resize(e[::-1], 12).reshape(3, 4)
        # "finite": ordinary values, so that the matrix functions (linalg, einsum, conv) see more than NaNs.
        if dt == "bool":
            f = rng.integers(0, 2, (3, 4)).astype(bool)
        elif e.dtype.kind in "iu":
            f = rng.integers(0 if e.dtype.kind == "u" else -5, 6, (3, 4)).astype(e.dtype)
        else:
            f = rng.normal(0, 2, (3, 4)).astype(e.dtype)
        sets[dt] = {"edge": e, "empty": e[:0], "scalar": e[2:3].reshape(()), "matrix": m, "finite": f}
    cases = []
    unary = [o for o in ops if ops[o] == 1]
    binary = [o for o in ops if ops[o] == 2]
    for op in unary:
        for dt, s in sets.items():
            for sname, a in s.items():
                # The decompositions on non-finite or huge (ill-conditioned) matrices give what LAPACK and Eigen
                # each happen to give: linalg runs on the finite set (and the norms on all).
                if is_linalg(op) and not op.startswith("linalg.norm") and sname in ("edge", "matrix"):
                    continue
                cases.append((f"{op}|{dt}|{sname}", op, [a]))
    for op in binary:
        for dt, s in sets.items():
            e = s["edge"]
            cases.append((f"{op}|{dt}|edge*roll", op, [e, np.roll(e, 3)]))
            cases.append((f"{op}|{dt}|matrix*scalar", op, [s["matrix"], s["scalar"]]))
            cases.append((f"{op}|{dt}|empty", op, [s["empty"], s["empty"]]))
        if op.startswith("jnp."):
            for a, b in (("float32", "int32"), ("int32", "uint8"), ("float16", "float32"), ("bool", "int32"),
                         ("int64", "uint64")):
                if a in sets and b in sets:
                    cases.append((f"{op}|{a}+{b}|matrix", op, [sets[a]["matrix"], sets[b]["matrix"]]))
    for dt, s in sets.items():
        c = s["edge"] if dt == "bool" else s["edge"] > s["edge"][0]
        cases.append((f"jnp.where|{dt}|edge", "jnp.where", [np.asarray(c, bool), s["edge"], np.roll(s["edge"], 1)]))
    if quick == "ci":
        cases = [c for c in cases if keep_for_ci(c[0])]
    return cases


NOT_ELEMENTWISE = {"jnp.ravel", "nn.softmax", "nn.log_softmax", "nn.logsumexp", "jnp.sort", "jnp.argsort", "jnp.flip",
                   "jnp.transpose", "jnp.where", "jnp.dot", "jnp.matmul", "jnp.outer", "jnp.allclose", "nn.glu",
                   "nn.standardize", "nn.layer_norm"}
REDUCTIONS = {"sum", "prod", "max", "min", "all", "any", "mean", "var", "std", "nansum", "nanmean", "nanmax", "nanmin",
              "argmax", "argmin", "cumsum", "cumprod"}


def arity_table(names):
    """Ops of the driver with their number of inputs (everything is unary but the binary list and where)."""
    bin_re = re.compile(r"^(jnp\.(add|subtract|multiply|divide|true_divide|floor_divide|remainder|mod|power|maximum|"
                        r"minimum|arctan2|equal|not_equal|less|less_equal|greater|greater_equal|logical_and|"
                        r"logical_or|logical_xor|bitwise_and|bitwise_or|bitwise_xor|left_shift|right_shift|fmod|"
                        r"logaddexp|fmax|fmin|logaddexp2|bitwise_left_shift|bitwise_right_shift|divmod\[[01]\])|"
                        r"lax\.(add|sub|mul|div|rem|pow|max|min|atan2|bitwise_and|bitwise_or|bitwise_xor|"
                        r"shift_left|shift_right_arithmetic|shift_right_logical|eq|ne|lt|le|gt|ge|nextafter|"
                        r"igamma|igammac|igamma_grad_a|random_gamma_grad|zeta|polygamma)|"
                        r"jnp\.(dot|matmul|outer|isclose|allclose|isclose\[equal_nan\]))$")
    out = {}
    for n in names:
        if n == "jnp.where":
            continue
        out[n] = 2 if bin_re.match(n) else 1
    return out


JITX_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16",
              "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}


def parse_result(tok):
    if tok[0] == "ERR":
        return ("ERR", tok[1], " ".join(tok[2:]))
    dt, nd = JITX_NAMES.get(tok[1], tok[1]), int(tok[2])
    shape = tuple(int(t) for t in tok[3:3 + nd])
    return ("OK", dt, shape, [int(t, 16) for t in tok[3 + nd:]])


def ulp_distance(a, b, bits):
    sign = 1 << (bits - 1)
    def ordv(v):
        m = v & (sign - 1)
        return -m if v & sign else m
    return abs(ordv(a) - ordv(b))


def is_nan(v, dt):
    e, m = {"float16": (0x7C00, 0x3FF), "bfloat16": (0x7F80, 0x7F), "float32": (0x7F800000, 0x7FFFFF),
            "float64": (0x7FF0000000000000, 0xFFFFFFFFFFFFF)}[dt]
    return (v & e) == e and (v & m) != 0


def is_subnormal(v, dt):
    """Whether bit pattern v is a subnormal of float dtype dt (exponent bits 0, mantissa not)."""
    e = {"float16": 0x7C00, "bfloat16": 0x7F80, "float32": 0x7F800000, "float64": 0x7FF0000000000000}.get(dt)
    return e is not None and (v & e) == 0 and (v & ((e & -e) - 1)) != 0


def case_has_subnormal(tok):
    """Whether any input array of a case line holds a subnormal float (JAX on CPU flushes those to zero)."""
    n, i = int(tok[2]), 3
    for _ in range(n):
        dt, nd = tok[i], int(tok[i + 1])
        shape = [int(t) for t in tok[i + 2:i + 2 + nd]]
        count = 1
        for d in shape:
            count *= d
        vals = tok[i + 2 + nd:i + 2 + nd + count]
        i += 2 + nd + count
        if any(is_subnormal(int(v, 16), dt) for v in vals):
            return True
    return False


def parse_inputs(tok):
    """The input arrays of a case line as (dtype, shape, bit patterns)."""
    out, n, i = [], int(tok[2]), 3
    for _ in range(n):
        dt, nd = tok[i], int(tok[i + 1])
        shape = [int(t) for t in tok[i + 2:i + 2 + nd]]
        count = 1
        for d in shape:
            count *= d
        out.append((dt, shape, [int(v, 16) for v in tok[i + 2 + nd:i + 2 + nd + count]]))
        i += 2 + nd + count
    return out


def compare(want, got, subnormal_inputs=False, cid="", inputs=None, mode="jit"):
    """None when they agree, else (kind, detail); kind "subnrm" when subnormals explain it (documented), "toler"
    when every difference is within the op's documented tolerance (tools/conformance/tolerances.py)."""
    rule = tolerances.rule_for(cid, mode)
    tolerated = None
    if got[0] == "ERR" and got[1] == "CRASH":
        return ("crash", "jitx_conformance died on this case: " + got[2])
    if want[0] == "ERR" or got[0] == "ERR":
        if want[0] == got[0]:
            return None
        return ("error", f"JAX {want[1] if want[0] == 'ERR' else 'ok'} / jitx {got[1] if got[0] == 'ERR' else 'ok'}"
                + (f": {got[2][:90]}" if got[0] == "ERR" else f": {want[2][:90]}"))
    if want[1] != got[1]:
        return ("dtype", f"JAX {want[1]} / jitx {got[1]}")
    if want[2] != got[2]:
        return ("shape", f"JAX {want[2]} / jitx {got[2]}")
    dt = want[1]
    scale = None
    if rule and "norm_eps" in rule and dt in ULP_TOL:
        vals = [abs(tolerances.value_of(a, dt)) for a in want[3] if not is_nan(a, dt)]
        vals = [v for v in vals if v != float("inf")]
        scale = max(vals) if vals else None
    worst, where, sub_where = 0, None, None
    for i, (a, b) in enumerate(zip(want[3], got[3])):
        if a == b:
            continue
        if dt in ULP_TOL:
            bits = 16 if dt in ("float16", "bfloat16") else 32 if dt == "float32" else 64
            if is_nan(a, dt) and is_nan(b, dt):
                continue
            if is_nan(a, dt) or is_nan(b, dt):
                d = float("inf")
            else:
                d = ulp_distance(a, b, bits)
            tol = (rule or {}).get("ulp", {}).get(dt, ULP_TOL[dt])
            if d > ULP_TOL[dt] and d <= tol or d > tol and tolerances.accepted(rule, cid.split("|")[0], i, a, b, dt,
                                                                                inputs, scale):
                tolerated = tolerated or (i, d, a, b)
                continue
            if d > tol and (subnormal_inputs or is_subnormal(a, dt) or is_subnormal(b, dt)):
                sub_where = sub_where or (i, a, b)
                continue
            if d > tol and d > worst:
                worst, where = d, (i, a, b)
        elif (rule and rule.get("int_mean") and ",mean]" in cid and inputs and dt != "bool"
              and tolerances.int_mean_ok(a, b, dt, inputs)):
            tolerated = tolerated or (i, abs(a - b), a, b)
        elif subnormal_inputs:
            sub_where = sub_where or (i, a, b)
        else:
            return ("value", f"element {i}: JAX {a:#x} / jitx {b:#x}")
    if where:
        i, a, b = where
        return ("value", f"element {i}: {worst} ulp (JAX {a:#x} / jitx {b:#x})")
    if sub_where:
        i, a, b = sub_where
        return ("subnrm", f"element {i}: JAX {a:#x} / jitx {b:#x} (subnormal input or result: JAX flushes them)")
    if tolerated:
        i, d, a, b = tolerated
        return ("toler", f"element {i}: {d} ulp (JAX {a:#x} / jitx {b:#x}), within the documented tolerance")
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=str(ROOT / "build"))
    p.add_argument("--venv", help="a virtualenv with jax 0.10.2 (default: a fresh one in a temporary folder)")
    p.add_argument("--platforms", default="cpu,interpreter")
    p.add_argument("--quick", action="store_true", help="fewer dtypes (float16/32/64, int32, bool)")
    p.add_argument("--ci", action="store_true", help="--quick's dtypes, all input sets for float32 and the edge "
                   "values only for the others (tools/ci/conformance.sh)")
    p.add_argument("--only", help="a regular expression: keep the cases whose id (op|dtype|inputs) it matches "
                   "(re.search), to iterate on a few functions or dtypes")
    p.add_argument("--no-fail", action="store_true")
    p.add_argument("--max-rows", type=int, default=400)
    p.add_argument("--reuse", help="compare the files of an earlier run's folder again (no JAX, no jitx run)")
    args = p.parse_args()
    t0 = time.time()
    driver = pathlib.Path(args.build) / "tests" / "jitx_conformance"
    if not driver.exists():
        print(f"conformance: {driver} not found (build the jitx_conformance target)", file=sys.stderr)
        return 2
    tmp = pathlib.Path(args.reuse or tempfile.mkdtemp(prefix="jitx_conformance_"))
    print(f"conformance: files in {tmp}", file=sys.stderr)
    if args.reuse:
        py = None
    elif args.venv:
        py = pathlib.Path(args.venv) / "bin" / "python"
    else:
        venv = tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = venv / "bin" / "python"
        subprocess.run([str(py), "-m", "pip", "install", "-q", "jax==0.10.2", "numpy"], check=True)
    names = subprocess.run([str(driver), "--list"], check=True, capture_output=True, text=True).stdout.split()
    ops = arity_table(names)
    cases_file, jax_file = tmp / "cases.txt", tmp / "jax.txt"
    plats = args.platforms.split(",")
    if not args.reuse:
        run_all(args, py, tmp, ops, driver, plats)
    return report(args, tmp, names, ops, plats, t0)


def run_all(args, py, tmp, ops, driver, plats):
    """Writes cases.txt, JAX's jax.txt and jitx's jitx_<platform>.txt in tmp."""
    # Case generation runs in the venv's python (numpy and ml_dtypes live there).
    gen = tmp / "gen.py"
    gen.write_text(
        "import sys, pathlib\nsys.path.insert(0, %r)\nimport numpy as np\nimport conformance as c\n"
        "ops = dict(l.split() for l in open(sys.argv[1]))\nops = {k: int(v) for k, v in ops.items()}\n"
        "import re\ncases = [x for x in c.build_cases(ops, np, %r) if re.search(%r, x[0])]\n"
        "with open(sys.argv[2], 'w') as f:\n"
        "    for cid, op, ins in cases:\n"
        "        f.write(cid + ' ' + op + ' ' + str(len(ins)) + ' ' + ' '.join(c.enc(np.asarray(a), np) for a in ins) + '\\n')\n"
        % (str(ROOT / "tools"), "ci" if args.ci else args.quick, args.only or ""))
    (tmp / "ops.txt").write_text("".join(f"{k} {v}\n" for k, v in ops.items()))
    cases_file, jax_file = tmp / "cases.txt", tmp / "jax.txt"
    t0 = time.time()
    subprocess.run([str(py), str(gen), str(tmp / "ops.txt"), str(cases_file)], check=True)
    (tmp / "jax_side.py").write_text(JAX_SIDE)
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    (tmp / "elementwise.txt").write_text("\n".join(o for o, n in ops.items() if o not in NOT_ELEMENTWISE and "[" not in o
                                                   and not is_linalg(o)
                                                   and not (o.startswith("jnp.") and o.split(".")[1] in REDUCTIONS)))
    subprocess.run([str(py), str(tmp / "jax_side.py"), str(cases_file), str(jax_file), str(tmp / "elementwise.txt"),
                    str(ROOT / "tools" / "conformance")], check=True, env=env)
    print(f"conformance: JAX side {time.time() - t0:.0f} s", file=sys.stderr)
    t1 = time.time()
    # The platforms run side by side (one process each, one thread for each platform).
    import threading
    threads = [threading.Thread(target=run_driver, args=(driver, cases_file, tmp, plat)) for plat in plats]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"conformance: jitx side {time.time() - t1:.0f} s", file=sys.stderr)


def run_driver(driver, cases_file, tmp, plat):
    """Runs the driver on the cases; when it dies (a crash in jitx), records the case it was on as a "crash" of
    both modes and goes on with the next one in a new process."""
    out_path = tmp / f"jitx_{plat}.txt"
    lines = open(cases_file).readlines()
    done, part = 0, 0
    out_path.write_text("")
    while done < len(lines):
        part_in, part_out = tmp / f"part_{plat}_{part}.txt", tmp / f"part_{plat}_{part}.out"
        part_in.write_text("".join(lines[done:]))
        rc = subprocess.run([str(driver), str(part_in), str(part_out)], env=dict(os.environ, JITX_PLATFORM=plat)).returncode
        got = [l for l in open(part_out) if l.endswith("\n") and l.strip()] if part_out.exists() else []
        ids = [l.split()[0] for l in lines[done:]]
        finished = len({l.split()[0] for l in got if l.split()[1] == "jit"})
        if rc != 0 and finished == len(ids):  # died after the last case (at exit): blame the last one
            finished -= 1
        with open(out_path, "a") as f:
            f.writelines(l for l in got if l.split()[0] in set(ids[:finished]))
            if rc != 0 and finished < len(ids):
                print(f"conformance: jitx_conformance died (exit {rc}) on {plat} at {ids[finished]}", file=sys.stderr)
                for mode in ("eager", "jit"):
                    f.write(f"{ids[finished]} {mode} ERR CRASH exit {rc}\n")
                finished += 1
        done += finished
        part += 1
        part_in.unlink()


def report(args, tmp, names, ops, plats, t0):
    """Compares jitx's results with JAX's; prints the table and the summary; the exit status."""
    cases_file, jax_file = tmp / "cases.txt", tmp / "jax.txt"
    subnormal, inputs = {}, {}
    for line in open(cases_file):
        tok = line.split()
        subnormal[tok[0]] = case_has_subnormal(tok)
        if tolerances.rule_for(tok[0]):
            inputs[tok[0]] = parse_inputs(tok)
    want = {}
    for line in open(jax_file):
        tok = line.split()
        want[tok[0]] = parse_result(tok[1:])
    rows, total = [], 0
    for plat in plats:
        out = tmp / f"jitx_{plat}.txt"
        for line in open(out):
            tok = line.split()
            cid, mode = tok[0], tok[1]
            total += 1
            d = compare(want[cid], parse_result(tok[2:]), subnormal[cid], cid, inputs.get(cid), mode)
            if d and d[0] not in ("subnrm", "toler") and tolerances.deliberate(cid):
                d = ("delib", tolerances.deliberate(cid)[:60] + " (README: deliberate differences)")
            if d:
                rows.append((cid, f"{plat}/{mode}", d[0], d[1]))
    # the documented differences last
    rows.sort(key=lambda r: (r[2] in ("subnrm", "toler", "delib"), r[2] == "subnrm", r[2] == "toler"))
    print(f"{'case (op|dtype|inputs)':<52} {'where':<18} {'kind':<6} detail")
    for r in rows[: args.max_rows]:
        print(f"{r[0]:<52} {r[1]:<18} {r[2]:<6} {r[3]}")
    if len(rows) > args.max_rows:
        print(f"... {len(rows) - args.max_rows} more rows")
    by_kind = {}
    for r in rows:
        by_kind[r[2]] = by_kind.get(r[2], 0) + 1
    documented = ("subnrm", "toler", "delib")
    ops_bad = sorted({r[0].split("|")[0] for r in rows if r[2] not in documented})
    real = [r for r in rows if r[2] not in documented]
    uncovered = sorted(n for n in header_surface() if not any(o == n or o.startswith(n + "[") for o in names))
    print(f"\nnot covered by a case ({len(uncovered)}): {' '.join(uncovered)}")
    print(f"ops with a disagreement ({len(ops_bad)}): {' '.join(ops_bad)}")
    print(f"summary: {len(want)} cases x {len(plats)} platforms x eager/jit = {total} runs, "
          f"{len(real)} disagree ({', '.join(f'{k} {v}' for k, v in sorted(by_kind.items()) if k not in documented) or 'none'}),"
          f" {by_kind.get('delib', 0)} more are deliberate differences (README; tools/conformance/tolerances.py),"
          f" {by_kind.get('toler', 0)} more within a documented per-op tolerance (tools/conformance/tolerances.py),"
          f" {by_kind.get('subnrm', 0)} more only where subnormals are involved (documented: JAX flushes them); "
          f"{len(ops)} ops; {time.time() - t0:.0f} s")
    return 1 if real and not args.no_fail else 0


if __name__ == "__main__":
    sys.exit(main())
