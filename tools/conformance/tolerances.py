"""The conformance run's documented exceptions: ops where JAX's answer is an artefact of XLA's formula or evaluation
order that jitx deliberately does not copy, and jitx's answer is at least as close to the true value. Each entry was
checked against a 200-bit mpmath reference (python3 -m pip install mpmath; the values are in notes/h-conf.md):

  case (input)                         true value                 JAX                 jitx
  cosh(-79) f32 (int32 input)          1.0191405332563344e34      23.7 ULP            0.3 ULP
  digamma(1) f32 / f64                 -0.57721566490153286       4.9 / 5.0 ULP       0.1 / 0.1 ULP (f64 interp.)
  digamma(-3.7377328417591955) f64     -1.4619963852357004        3.6 ULP             2.3 ULP (cpu)
  erf_inv(0.9999) f32 / f64            2.7510354379 / 2.75106390  35.9 / 98.3 ULP     0.1 / <1 ULP
  lgamma(1) f32                        0                          4.8e-7              0
  lgamma(0.9999) f32 / f64             5.7739372569e-5 / 5.773e-5 250578 / 27227 ULP  0.1 / 0.4 ULP
  lgamma(3.9120002) f32                1.68232950216              9.3 ULP             0.3 ULP
  lgamma(x) f32 = -0.046903089 (finite set, element 6)            364 ULP (11 eps)    0.2 ULP
  digamma(x) f32 = 0.0390820839 (finite set, element 4)           87 ULP              0.0 ULP
  digamma(x) f64 = -0.49092463982361291 (matrix, element 4)       12.2 ULP            0.2 ULP
  log1p / atanh f64 at -0.3856 (matrix, element 7)                35.9 / 18.0 ULP     0.1 / 0.0 ULP
  standardize f32 (finite set, row 0, element 2) 0.0312811595    29.3 ULP            7.7 ULP
  gelu(-7.25) f32 / f64 (tanh form)    -1.0631936e-16             -0.0 / -2.8e-15     3 / 14 ULP
  log_softmax row 2 of the f64 matrix  -0.23268881929539131       4.2 ULP             1.6 ULP
  cumsum f32 matrix, element 8         1.1978645026683807 (exact) 8 ULP               0 ULP
  erfc(2.9868622904415214) f64         2.4254e-5                  -2.54 eps rel.      0.64 eps rel.
  var of the uint64 edge set (f64)     (exact of the f64 values)  -2.2 eps rel.       0.5 eps rel.
  slogdet logabsdet, int8 finite set   log 2 = 0.6931471805599453 52 ULP              0.05 ULP (cpu), 2.8 (interp.)
  log_softmax int16 [-2,-4,0,5], el. 3 -0.0077431828025726545     5.3e-6 rel.         1.0e-5 rel. (2 eps absolute)
  mean of the int32 edge set (f32)     23.0556 (exact, of the f32-rounded values): JAX 16.94, jitx 39.67; both
                                       within recursive summation's bound eps * sum|x| = 57 (cancellation)

A rule is one of: {"int_mean": True} (integer results of a mean: accepted when |JAX - jitx| <= 1 + eps32 *
sum|x| over the input), {"norm_eps": k} (linalg: accepted when |JAX - jitx| <= k * eps * max |JAX's result|),
{"ulp": {dtype: n}} (a ULP bound per dtype instead of the default), {"atol_eps": k} (also
accepted when |JAX - jitx| <= k * eps(dtype): values next to a root or in a tail, where JAX's formula cancels), or
{"exact_sum": True} (summations: accepted where jitx is no further from the exactly computed sum of the inputs, as
rounded to the result dtype, than JAX is, or within 4 ULP of it, or for means within eps * sum|x|, the bound of
recursive summation; JAX sums in XLA's order).
"""
import struct
from fractions import Fraction

_HALF_REDUCE = ("f16/bf16 reductions and cumulative ops: XLA:CPU rounds the running value to f16/bf16 after every "
                "step (its reducer computes in f32 between converts); jitx accumulates in f32 and rounds once "
                "(README: deliberate differences). Accepted where jitx is no further from the exact result of the "
                "inputs than JAX (bf16 column sums of the finite set: JAX 2 ULP off the exact sum, jitx 0)")
TOLERANCES = {
    "jnp.cosh": ({"ulp": {"float32": 32, "float64": 512}},
                 "XLA computes cosh as exp(x + log(1/2)) + exp(-x + log(1/2)) (no overflow before the result "
                 "overflows); rounding x + log(1/2) costs up to ~24 ULP at |x| ~ 79. jitx: 0.3 ULP. In float64 "
                 "(int64 inputs) it costs up to ulp(x)/2 relative, 2^9 ULP at |x| ~ 710: JAX cosh(634.0) is "
                 "393 ULP and cosh(710.0) 307 ULP from glibc's (correctly rounded) value, which jitx gives"),
    "jnp.sinh": ({"ulp": {"float32": 32, "float64": 512}}, "as cosh: XLA's exp(x + log(1/2)) form"),
    "lax.erf_inv": ({"ulp": {"float32": 40, "float64": 128}},
                    "XLA's ErfInv polynomials lose accuracy near +-1 (erf_inv(0.9999): 36 ULP f32, 98 ULP f64)"),
    "lax.digamma": ({"ulp": {"float32": 24, "float64": 16}, "atol_eps": 4},
                    "XLA's Lanczos-based digamma is 5-16 ULP off in f32 (digamma(1), digamma(1.085)), 4-12 in f64, "
                    "and ~3 eps absolute next to its root 1.46 (87 ULP at 0.039)"),
    "lax.lgamma": ({"atol_eps": 16, "ulp": {"float32": 16, "float64": 16}},
                   "XLA's Lanczos lgamma cancels next to the roots 1 and 2 (lgamma(1) = 4.8e-7 in f32): an "
                   "absolute error of a few eps where the value is ~0 (jitx's is relatively accurate there); "
                   "elsewhere up to ~9 ULP in f32 (lgamma(3.912): 9.3 ULP; jitx 0.3)"),
    "nn.gelu": ({"atol_eps": 16},
                "JAX's tanh form 0.5 x (1 + tanh(u)) cancels for x < ~-5 (0 in f32, 2.8e-15 instead of 1.1e-16 "
                "in f64); jitx computes the same function as x logistic(2u), accurate in that tail"),
    "nn.log_softmax": ({"ulp": {"float32": 8, "float64": 16}, "atol_eps": 4},
                       "x - max - log(sum(exp(x - max))) cancels for the row's largest entries: a 1-2 ULP "
                       "difference of exp/log/summation order grows to 4-8 ULP of the result (f64 matrix row 0, "
                       "element 3 = -0.095: 14 ULP), and to more next to 0, where log(sum) of a sum near 1 keeps "
                       "only its absolute accuracy (int16 row [-2, -4, 0, 5], element 3 = -0.0077431828: JAX 5.3e-6 "
                       "relative, jitx 1.0e-5, 253 ULP apart, both within 2 eps absolute)"),
    "lax.erfc": ({"ulp": {"float64": 8}},
                 "XLA's f64 erfc (Cephes' rational forms): erfc(2.9868622904415214) = 2.4e-5 is 5 ULP off "
                 "(-2.54 eps relative, mpmath); jitx (the C library's erfc) 0.64 eps"),
    "jnp.var": ({"ulp": {"float64": 8}},
                "var of the uint64 edge set (values up to 2^64, as f64): JAX -2.2 eps from the exact variance of "
                "the f64 values, jitx 0.5 eps (5 ULP apart): summation order"),
    "jnp.pad": ({"int_mean": True}, "pad 'mean' of integers: round(jnp.mean) of the edge set, an f32 sum of "
                "+-2^31-sized terms that cancel (see jnp.mean: JAX 16.94, jitx 39.67, exact 23.06); accepted within "
                "recursive summation's bound eps32 * sum|x| (+1 for the rounding)"),
    "jnp.log1p": ({"ulp": {"float64": 40}}, "XLA's f64 log1p: 36 ULP at log1p(-0.3856) (jitx 0.1)"),
    "lax.log1p": ({"ulp": {"float64": 40}}, "as jnp.log1p"),
    "jnp.arctanh": ({"ulp": {"float64": 24}}, "XLA's f64 atanh (through its log1p): 18 ULP at -0.3856 (jitx 0.0)"),
    "lax.atanh": ({"ulp": {"float64": 24}}, "as jnp.arctanh"),
    "nn.standardize": ({"ulp": {"float32": 40, "float64": 40}},
                       "x - mean cancels: JAX 29 ULP, jitx 7.7 ULP from the exact value (row 0 of the finite set)"),
    "nn.layer_norm": ({"ulp": {"float32": 40, "float64": 40}}, "as nn.standardize"),
    "jnp.cumsum": ({"exact_sum": True}, "JAX's CPU cumsum is an associative (parallel-prefix) scan; jitx sums in order"),
    "lax.cumsum": ({"exact_sum": True}, _HALF_REDUCE),
    "lax.cumprod": ({"exact_sum": True}, _HALF_REDUCE),
    "jnp.cumprod": ({"exact_sum": True}, _HALF_REDUCE),
    "lax.reduce_sum": ({"exact_sum": True}, _HALF_REDUCE),
    "lax.associative_scan": ({"exact_sum": True}, _HALF_REDUCE),
    "jnp.matmul": ({"exact_sum": True}, "x x^T of the finite set: JAX's f32 dot is 21.7 ULP off where the sum "
                   "cancels (element 5), jitx 0.3 ULP"),
    "jnp.einsum": ({"exact_sum": True}, "as jnp.matmul (ij,kj->ik)"),
    "lax.dot_general": ({"exact_sum": True}, "as jnp.matmul"),
    "jnp.mean": ({"exact_sum": True}, "int32 means are f32 sums: XLA's reduction order vs jitx's"),
    "lax.reduce_window_sum": ({"exact_sum": True}, "the window's sum in XLA's order vs jitx's (f64 matrix: 16 ULP "
                              "where 1e30-sized terms cancel)"),
    "jnp.nanmean": ({"exact_sum": True}, "as mean"),
}
_IGAMMA_REASON = ("the same series and continued fraction as XLA's, but the prefactor x^a e^-x / Gamma(a) is exp of "
                  "a sum of terms of size |a log x| ~ 10-30 whose rounding (jitx's lgamma and log vs XLA's) the exp "
                  "amplifies: 10-23 ULP apart in f32 and 7-53 ULP in f64 on the matrix*scalar case")
for _op in ("lax.igamma", "lax.igammac", "lax.igamma_grad_a", "lax.random_gamma_grad"):
    TOLERANCES[_op] = ({"ulp": {"float32": 32, "float64": 64}}, _IGAMMA_REASON)
# LAPACK (JAX) and Eigen (jitx) compute the decompositions with different, equally backward-stable algorithms
# (Householder vs Jacobi/divide-and-conquer orders, blocked vs unblocked): their results agree to about cond(A) * eps
# of the result's largest element, not element by element (a small entry next to a large one can be 60 ULP apart
# while both are within cond * eps of the exact one). The cases are spd(x) = x x^T + 4 I and the finite 3 x 4 set
# (cond(spd) <= 1 + s_max^2 / 4 of x's singular values, 5 to 20 here); bound: 32 eps * max |JAX's result| (a
# backward-stable solve is within c * cond * eps normwise; the interpreter's lstsq of the uint64 finite set, cond
# 13.5, is 23 eps * max off on one element, c ~ 1.7).
_LINALG_REASON = ("LAPACK (JAX) vs Eigen (jitx): equally backward-stable algorithms agree normwise, to cond * eps "
                  "of the largest element, not elementwise (lstsq/pinv f64: 55-79 ULP on an element 30x smaller "
                  "than the largest); triangular_solve of f16/bf16: jitx solves in f32 and rounds once, JAX's "
                  "expander rounds each step (README: deliberate differences)")
for _op in ("linalg.inv", "linalg.solve", "linalg.lstsq", "linalg.pinv", "linalg.eigh", "linalg.eigvalsh",
            "linalg.svd", "linalg.svdvals", "linalg.qr", "linalg.cholesky", "linalg.lax_cholesky", "linalg.lu",
            "linalg.slogdet", "linalg.det", "linalg.matrix_power", "linalg.triangular_solve", "lax.eigh", "lax.qr",
            "lax.svd"):
    TOLERANCES[_op] = ({"norm_eps": 32}, _LINALG_REASON)
TOLERANCES["linalg.slogdet"] = ({"norm_eps": 32, "ulp": {"float32": 64}},
                                _LINALG_REASON + "; slogdet of the int8 finite set (det = -2 exactly): JAX's "
                                "log|det| is 52 ULP from log 2 (LAPACK's f32 LU), jitx's 0.05 ULP (cpu) and 2.8 ULP "
                                "(interpreter)")
# Deliberate differences (README "Deliberate differences from JAX"): rows of these dtypes are counted apart as
# "deliberate", with the reason; they are not silent (the summary gives their count).
DELIBERATE = {
    ("nn.standardize", "int"): "JAX squares integer inputs in their own dtype (int32 x^2 wraps around) before its "
                               "float mean; jitx converts to float first (int32 -> float32, as JAX's result dtype)",
    ("nn.layer_norm", "int"): "as nn.standardize",
    ("lax.zeta", "float32"): "zeta(1e30, 1): XLA's Euler-Maclaurin correction overflows (its Horner terms grow as "
                             "x^22) and its 'first terms accurate enough' select compares with the smallest finite "
                             "value, so it never applies: 0 * inf = NaN (every float dtype). jitx keeps the first "
                             "terms where the correction is below their rounding (XLA math.cc's rule): the true "
                             "value, 1.0",
    ("lax.polygamma", "float32"): "polygamma(n, x) is (-1)^(n+1) n! zeta(n + 1, x): as lax.zeta (n = 1e30: JAX NaN, "
                                  "jitx inf, the limit of n! zeta(n + 1, 1))",
    ("lax.cumlogsumexp", "int"): "JAX fails on integers (OverflowError for any non-empty input: its -inf identity "
                                 "in an int) but returns an empty input unchanged; jitx refuses integers always "
                                 "(TypeError: needs a floating-point operand)",
    ("nn.softmax", "uint64"): "JAX disagrees with itself: jitted, its max(x, initial=-inf) casts -inf to uint64 "
                              "with numpy at trace time (an invalid cast: 2**63 on x86), so x - max wraps for every "
                              "element and all are NaN; eagerly (and in jitx) the max is the row's, its elements give "
                              "0 (1 / inf) and the others NaN (x - max wraps in uint64, exp gives inf)",
}


for _dt in ("float64", "float16", "bfloat16"):
    DELIBERATE[("lax.zeta", _dt)] = DELIBERATE[("lax.zeta", "float32")]
    DELIBERATE[("lax.polygamma", _dt)] = DELIBERATE[("lax.polygamma", "float32")]


def deliberate(cid):
    """The documented reason when case cid is a deliberate difference from JAX, else None."""
    op, dt = cid.split("|")[0].split("[")[0], cid.split("|")[1]
    kind = "int" if dt.startswith(("int", "uint")) else dt
    return DELIBERATE.get((op, dt)) or DELIBERATE.get((op, kind))


# JAX jits these functions as a whole even when they are called eagerly, so XLA's rewrites apply to their eager
# results too: a bf16 op under a convert to f32 keeps its f32 value (simplify-fp-conversions: the exps softmax
# sums, the squares standardize averages), a division by a broadcast or a constant is a multiply by an f32
# reciprocal. jitx's eager calls run op by op (each op rounded to bf16); under jit it applies the same rewrites and
# agrees bit for bit (tests/half_precision_jax_test.cpp). Measured: 2 ULP at most (softmax of the bf16 finite set).
EAGER_BF16 = ({"ulp": {"bfloat16": 2}}, "JAX jits the function even when called eagerly; jitx's eager call runs op "
              "by op (README: f16/bf16 arithmetic)")
EAGER_BF16_OPS = ("nn.softmax", "nn.log_softmax", "nn.standardize", "nn.layer_norm", "jnp.log2")


def rule_for(cid, mode="jit"):
    op, dt = cid.split("|")[0].split("[")[0], cid.split("|")[1]
    rule = TOLERANCES.get(op, (None, None))[0]
    if mode == "eager" and dt == "bfloat16" and op in EAGER_BF16_OPS:
        rule = dict(rule or {})
        rule["ulp"] = {**rule.get("ulp", {}), **EAGER_BF16[0]["ulp"]}
    return rule


EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}


def value_of(bits, dt):
    """The Python float (or int) of a bit pattern of dtype dt."""
    if dt == "float32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if dt == "float64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if dt == "float16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if dt == "bfloat16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if dt == "bool":
        return int(bits != 0)
    width = int(dt.lstrip("uint"))
    if dt.startswith("int") and bits >= 1 << (width - 1):
        return bits - (1 << width)
    return bits


def rounded(v, dt):
    """v (an int or float) rounded to float dtype dt, as a Python float."""
    if dt == "float32":
        return struct.unpack("<f", struct.pack("<f", float(v)))[0]
    if dt == "float16":
        return struct.unpack("<e", struct.pack("<e", float(v)))[0]
    return float(v)


def ulp_of(v, dt):
    """The spacing of dtype dt's floats at |v| (the subnormal spacing below the smallest normal)."""
    import math
    e = math.frexp(abs(v))[1] if v else -10000
    mant, emin = {"float16": (10, -13), "bfloat16": (7, -125), "float32": (23, -125), "float64": (52, -1021)}[dt]
    return 2.0 ** (max(e, emin) - 1 - mant)


GRAM = ("jnp.matmul[x@xT]", "jnp.einsum[ij,kj->ik]", "lax.dot_general[x,xT]")


def exact_sums(op, inputs, out_dt):
    """Exact results (Fractions, in output order) of mean/nanmean/cumsum/cumprod/reduce_sum on the inputs rounded to
    out_dt, or None."""
    dt, shape, vals = inputs[0]
    xs = [rounded(value_of(b, dt), out_dt) for b in vals]
    base, _, var = op.partition("[")
    if any(v in (float("inf"), float("-inf")) or (v != v and base != "jnp.nanmean") for v in xs):
        return None
    rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, len(xs)) if len(shape) == 1 else (1, 1)
    at = lambda r, c: xs[r * cols + c]
    if op in GRAM and len(shape) == 2:  # x x^T
        return [sum(Fraction(at(r, k)) * Fraction(at(c, k)) for k in range(cols)) for r in range(rows)
                for c in range(rows)]
    if base == "lax.reduce_window_sum" and var == "2,pad1]":  # 2 (x 2) windows, stride 1, one zero each side
        if len(shape) == 1:
            p = [0.0] + xs + [0.0]
            return [Fraction(p[k]) + Fraction(p[k + 1]) for k in range(len(xs) + 1)]
        p = lambda r, c: at(r, c) if 0 <= r < rows and 0 <= c < cols else 0.0
        return [sum(Fraction(p(r + dr, c + dc)) for dr in (-1, 0) for dc in (-1, 0)) for r in range(rows + 1)
                for c in range(cols + 1)]
    # Cumulative sums and products: flattened (jnp's axis=None, or 1-d input) or along axis 0 (lax's [0] forms,
    # associative_scan, jnp's axis=0); lax.reduce_sum[0] is the last row of the cumulative sum along axis 0.
    cumulative = {"jnp.cumsum": "add", "lax.cumsum": "add", "lax.associative_scan": "add", "lax.reduce_sum": "add",
                  "jnp.cumprod": "mul", "lax.cumprod": "mul"}
    if base in cumulative and (base != "lax.associative_scan" or var == "add]"):
        mul = cumulative[base] == "mul"
        step = (lambda s, v: s * Fraction(v)) if mul else (lambda s, v: s + Fraction(v))
        if (var == "" and base.startswith("jnp.")) or len(shape) < 2:
            out, s = [], Fraction(1 if mul else 0)
            for v in xs:
                s = step(s, v)
                out.append(s)
            return out[-1:] if base == "lax.reduce_sum" else out
        out = [Fraction(0)] * len(xs)
        for c in range(cols):
            s = Fraction(1 if mul else 0)
            for r in range(rows):
                s = step(s, at(r, c))
                out[r * cols + c] = s
        return out[(rows - 1) * cols:] if base == "lax.reduce_sum" else out
    def mean(seq):
        seq = [Fraction(v) for v in seq if v == v]
        return sum(seq) / len(seq) if seq else None
    if var == "" or len(shape) < 2:
        return [mean(xs)]
    if var == "axis=0]":
        return [mean([at(r, c) for r in range(rows)]) for c in range(cols)]
    return [mean([at(r, c) for c in range(cols)]) for r in range(rows)]


def accepted(rule, op, i, a, b, dt, inputs, scale=None):
    """Whether element i (JAX bits a, jitx bits b, dtype dt) is within the op's documented rule (scale: the
    largest finite |element| of JAX's result, for norm_eps)."""
    if rule is None or dt not in EPS:
        return False
    fa, fb = value_of(a, dt), value_of(b, dt)
    if "norm_eps" in rule and scale is not None and abs(fa - fb) <= rule["norm_eps"] * EPS[dt] * scale:
        return True
    if "atol_eps" in rule and abs(fa - fb) <= rule["atol_eps"] * EPS[dt]:
        return True
    if rule.get("exact_sum") and inputs:
        ex = exact_sums(op, inputs, dt)
        if ex is None or i >= len(ex) or ex[i] is None:
            return False
        e = ex[i]
        bound = 4 * Fraction(ulp_of(float(e), dt))
        if op.startswith(("jnp.mean", "jnp.nanmean")):
            # Recursive summation's bound, (k - 1) eps sum|x| for k terms, over k: at most eps * sum|x| of all.
            xs = [abs(rounded(value_of(b, inputs[0][0]), dt)) for b in inputs[0][2]]
            bound = max(bound, Fraction(EPS[dt]) * sum(Fraction(v) for v in xs if v == v))
        return abs(Fraction(fb) - e) <= max(abs(Fraction(fa) - e), bound)
    return False


def int_mean_ok(a, b, dt, inputs):
    """Integer results a (JAX) and b (jitx) of dtype dt within 1 + eps32 * sum|x| of each other (x: the input)."""
    src_dt, _, vals = inputs[0]
    total = sum(abs(value_of(v, src_dt)) for v in vals)
    return abs(value_of(a, dt) - value_of(b, dt)) <= 1 + EPS["float32"] * total
