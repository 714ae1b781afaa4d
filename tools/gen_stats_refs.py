#!/usr/bin/env python3
"""Writes tests/stats_refs.h: jax.scipy.stats's values (JAX 0.10.2, jax_enable_x64, CPU) for every function
jitx::scipy::stats has, on points inside and outside each support, with non-default loc/scale, in float64 and
float32, and the gradients of a few log densities ("d<k>:name": of sum(name(args)) in argument k).
Run: /work/venv-jax/bin/python tools/gen_stats_refs.py [out.h]
The names must match tests/scipy_stats_test.cpp's table."""
import os
import sys
import numpy as np
import jax
import jax.numpy as jnp
import jax.scipy.stats as st

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from refs_common import vec  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/stats_refs.h"
nan, inf = np.nan, np.inf

X = [-4.0, -1.5, -0.25, 0.0, 0.3, 1.0, 2.5, 7.0, inf, -inf, nan]
LOC = [0.5] * len(X)
SCALE = [2.0, 0.5, 1.0, 3.0, 0.25, 1.5, 2.0, 1.0, 1.0, 1.0, 1.0]
Q = [0.0, 1e-6, 0.05, 0.3, 0.5, 0.75, 0.99, 1.0, -0.1, 1.2, nan]
U = [-0.5, 0.0, 0.1, 0.25, 0.5, 0.8, 0.999, 1.0, 1.5, 0.6, nan]
A = [0.5, 1.0, 2.0, 3.5, 0.7, 5.0, 1.2, 9.0, 2.0, 2.0, 2.0]
B = [0.5, 2.0, 1.0, 2.5, 3.0, 0.9, 1.2, 4.0, 2.0, -1.0, 2.0]
K = [-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 2.5, 10.0, 0.0, 1.0, nan]
MU = [1.5, 0.0, 3.0, 2.0, 0.5, 4.0, 2.0, 9.0, 1e-3, 7.0, 1.0]
PP = [0.3, 0.0, 1.0, 0.5, 0.9, 0.2, 0.4, 0.7, 0.5, 1.5, 0.5]
NN = [3.0, 0.0, 1.0, 4.0, 3.0, 10.0, 5.0, 12.0, 0.0, 2.0, 3.0]

CASES = {}
for dist in ["norm", "expon", "laplace", "logistic", "cauchy", "uniform"]:
    m = getattr(st, dist)
    for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        if hasattr(m, fn):
            CASES[f"{dist}.{fn}"] = (getattr(m, fn), [X, LOC, SCALE])
            CASES[f"{dist}.{fn}_std"] = (getattr(m, fn), [X])
    for fn in ["ppf", "isf"]:
        if hasattr(m, fn):
            CASES[f"{dist}.{fn}"] = (getattr(m, fn), [Q, LOC, SCALE])
for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
    CASES[f"gamma.{fn}"] = (getattr(st.gamma, fn), [X, A, LOC, SCALE])
    CASES[f"beta.{fn}"] = (getattr(st.beta, fn), [U, A, B])
    CASES[f"beta.{fn}_ls"] = (getattr(st.beta, fn), [X, A, B, [-4.0] * len(X), [12.0] * len(X)])
    CASES[f"chi2.{fn}"] = (getattr(st.chi2, fn), [X, A, LOC, SCALE])
for fn in ["logpdf", "pdf"]:
    CASES[f"t.{fn}"] = (getattr(st.t, fn), [X, A, LOC, SCALE])
for fn in ["logpmf", "pmf", "cdf"]:
    CASES[f"poisson.{fn}"] = (getattr(st.poisson, fn), [K, MU])
    CASES[f"poisson.{fn}_loc"] = (getattr(st.poisson, fn), [K, MU, [1.0] * len(K)])
for fn in ["logpmf", "pmf"]:
    CASES[f"bernoulli.{fn}"] = (getattr(st.bernoulli, fn), [K, PP])
    CASES[f"binom.{fn}"] = (getattr(st.binom, fn), [K, NN, PP])
    CASES[f"geom.{fn}"] = (getattr(st.geom, fn), [K, PP])
    CASES[f"geom.{fn}_loc"] = (getattr(st.geom, fn), [K, PP, [-1.0] * len(K)])
for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
    CASES[f"pareto.{fn}"] = (getattr(st.pareto, fn), [X, A, [-1.0] * len(X), SCALE])
    CASES[f"gumbel_r.{fn}"] = (getattr(st.gumbel_r, fn), [X, LOC, [s if i != 3 else -1.0 for i, s in enumerate(SCALE)]])
    CASES[f"gumbel_l.{fn}"] = (getattr(st.gumbel_l, fn), [X, LOC, [s if i != 3 else -1.0 for i, s in enumerate(SCALE)]])
CASES["pareto.ppf"] = (st.pareto.ppf, [Q, A, [-1.0] * len(Q), SCALE])
CASES["gumbel_r.ppf"] = (st.gumbel_r.ppf, [Q, LOC, SCALE])
CASES["gumbel_l.ppf"] = (st.gumbel_l.ppf, [Q, LOC, SCALE])
for fn in ["logpdf", "pdf", "cdf"]:
    CASES[f"gennorm.{fn}"] = (getattr(st.gennorm, fn), [X, A])
for fn in ["logpdf", "pdf"]:
    CASES[f"vonmises.{fn}"] = (getattr(st.vonmises, fn), [X, [k if i != 4 else 0.0 for i, k in enumerate(A)]])
for fn in ["logpmf", "pmf"]:
    CASES[f"nbinom.{fn}"] = (getattr(st.nbinom, fn), [K, NN, PP])
    CASES[f"betabinom.{fn}"] = (getattr(st.betabinom, fn), [K, NN, A, B])
TA = [-1.0, -2.0, 0.5, -0.5, -3.0, 1.0, 0.0, -1.0, -1.0, 2.0, -1.0]   # truncnorm bounds (standard units)
TB = [1.0, 3.0, 2.5, 0.5, -1.0, 4.0, 9.0, 2.0, 1.0, 1.0, 1.0]           # a >= b at index 9: NaN
for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
    CASES[f"truncnorm.{fn}"] = (getattr(st.truncnorm, fn), [X, TA, TB, LOC, SCALE])
    CASES[f"truncnorm.{fn}_std"] = (getattr(st.truncnorm, fn), [X, TA, TB])
WX = [0.0, 0.5, 1.0, 3.0, 6.0, 6.5, -0.1, 2.0, inf, 1.0, nan]
WC = [0.3, 0.5, 0.9, 0.1, 0.7, 0.5, 0.5, 0.0, 0.5, 1.2, 0.5]
for fn in ["logpdf", "pdf"]:
    CASES[f"wrapcauchy.{fn}"] = (getattr(st.wrapcauchy, fn), [WX, WC])
CASES["bernoulli.cdf"] = (st.bernoulli.cdf, [K, PP])
CASES["bernoulli.ppf"] = (st.bernoulli.ppf, [Q, PP])

GRADS = {
    "norm.logpdf": (st.norm.logpdf, [X[:8], LOC[:8], SCALE[:8]], [0, 1, 2]),
    "gamma.logpdf": (st.gamma.logpdf, [[0.3, 1.0, 2.5, 7.0], [0.5, 2.0, 3.5, 1.2], [0.0] * 4, [1.0, 2.0, 0.5, 1.5]],
                     [0, 1, 3]),
    "beta.logpdf": (st.beta.logpdf, [[0.1, 0.25, 0.5, 0.8], [0.5, 2.0, 3.5, 1.2], [3.0, 0.9, 1.2, 4.0]], [0, 1, 2]),
    "t.logpdf": (st.t.logpdf, [X[:8], A[:8], LOC[:8], SCALE[:8]], [0, 1]),
    "chi2.cdf": (st.chi2.cdf, [[0.3, 1.0, 2.5, 7.0], [0.5, 2.0, 3.5, 1.2]], [0]),
    "poisson.logpmf": (st.poisson.logpmf, [[0.0, 1.0, 3.0, 5.0], [0.5, 2.0, 3.5, 1.2]], [1]),
}


lines, halves = [], []
for dt, cname in [(np.float64, "DType::float64"), (np.float32, "DType::float32")]:
    if lines:
        halves.append(lines)
        lines = []
    for name, (f, args) in CASES.items():
        arrays = [jnp.array(a, dt) for a in args]
        r = f(*arrays)
        want_dt = "DType::float64" if r.dtype == np.float64 else "DType::float32"
        r = np.asarray(r, np.float64).ravel()
        rj = np.asarray(jax.jit(f)(*arrays), np.float64).ravel()
        # jax.jit's result where fusion (an FMA) changes it beyond rounding, else none
        same = np.all((np.isnan(r) & np.isnan(rj)) | (r == rj) | (np.abs(r - rj) <= 1e-9 * np.abs(r)))
        wj = "{}" if same else vec(rj)
        lines.append(f'    {{"{name}", {cname}, {want_dt}, {{{", ".join(vec(a) for a in args)}}}, {vec(r)}, {wj}}},')
    for name, (f, args, which) in GRADS.items():
        arrays = [jnp.array(a, dt) for a in args]
        for k in which:
            g = jax.grad(lambda t, k=k: jnp.sum(f(*[t if i == k else a for i, a in enumerate(arrays)])))(arrays[k])
            r = np.asarray(g, np.float64).ravel()
            lines.append(f'    {{"d{k}:{name}", {cname}, {cname}, {{{", ".join(vec(a) for a in args)}}}, {vec(r)}, {{}}}},')

with open(OUT, "w") as out:
    out.write("// Generated by tools/gen_stats_refs.py (JAX %s, jax_enable_x64, CPU): jax.scipy.stats's values and\n"
              "// \"d<k>:name\" gradients of sum(name(args)) in argument k. Do not edit.\n" % jax.__version__)
    out.write("#pragma once\n#include <cmath>\n#include <limits>\n#include <vector>\n\n#include \"jitx/dtype.h\"\n\n")
    out.write("namespace stats_refs {\nusing jitx::DType;\n")
    out.write("constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();\n")
    out.write("constexpr double kInf = std::numeric_limits<double>::infinity();\n")
    out.write("struct Case {\n  const char* name;\n  DType dtype;      // the arguments'\n"
              "  DType want_dtype;  // the result's\n  std::vector<std::vector<double>> args;\n"
              "  std::vector<double> want;\n  std::vector<double> want_jit;  // jax.jit's, where it differs\n};\n")
    halves.append(lines)
    # One array per dtype (each under the 300-line body limit of tools/check_sizes.py), then both.
    out.write("// clang-format off\n")
    for name, half in zip(["kCases64", "kCases32"], halves):
        out.write("inline const std::vector<Case> %s = {\n" % name)
        out.write("\n".join(half))
        out.write("\n};\n")
    out.write("// clang-format on\n")
    out.write("inline const std::vector<Case> kCases = [] {\n  std::vector<Case> all = kCases64;\n"
              "  all.insert(all.end(), kCases32.begin(), kCases32.end());\n  return all;\n}();\n")
    out.write("}  // namespace stats_refs\n")
print(f"{OUT}: {sum(len(h) for h in halves)} cases")
