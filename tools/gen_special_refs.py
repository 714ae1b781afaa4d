#!/usr/bin/env python3
"""Writes tests/special_refs.h: the values (and gradients) of jax.lax's special functions and jax.scipy.special's
functions (JAX 0.10.2, jax_enable_x64, CPU) on edge and ordinary inputs, in float64 and float32.
Run: /work/venv-jax/bin/python tools/gen_special_refs.py [out.h]
Each case is (name, dtype, arguments, result); "d<k>:name" is the gradient of sum(name(args)) in argument k. The
names must match tests/special_functions_test.cpp's table."""
import os
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
import jax.scipy.special as sp

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from refs_common import vec  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/special_refs.h"
nan, inf = np.nan, np.inf

GAMMA_A = [0.5, 1, 2, 5, 10, 0.1, 3, 100, 0, 1, 0, -1, inf, 2, 1, nan, 30, 1e-3]
GAMMA_X = [0.3, 1, 3, 4, 20, 0.01, 3, 90, 0, 0, 1, 1, 1, inf, -1, 1, 31, 5]
BETA_A = [0.5, 1, 2, 5, 10, 0.1, 3, 100, 0, 1, 0, 2, inf, 2, 1, 2, 0.01, 50]
BETA_B = [0.5, 2, 3, 1, 0.5, 7, 3, 100, 0, 0, 1, 1, 1, inf, 1, 2, 0.01, 40]
BETA_X = [0.3, 0.5, 0.9, 0.2, 0.99, 0.01, 0.5, 0.5, 0.5, 0.5, 0.5, 0, 1, 0.5, 1.5, nan, 0.5, 0.6]
ZETA_X = [2, 3, 1.5, 10, 2, 1, 0.5, 2, 2, 2, 3, 2.5, 4, 50]
ZETA_Q = [1, 2, 0.5, 3, 100, 1, 1, 0, -1, -1.5, -2, -1.5, 1e-3, 1]
POLY_M = [0, 1, 2, 1.5, -1, 3, 1, 2, 3, 4, 5, 1]
POLY_X = [1, 2, 3, 4, 5, -1, -1.5, 0, -2, 1e-3, 7.5, 100]
BESSEL = [0, 1, -1, 10, -50, inf, nan, 7.9, 8.1, 1e-6, 300, -3]
REAL = [-3.5, -2, -1.5, -0.5, -0.0, 0, 0.25, 0.5, 1, 2.5, 7, 30, 171.5, nan, inf, -inf]
UNIT = [0, 1e-30, 1e-10, 0.001, 0.1, 0.135, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999999, 1, -0.5, 1.5, nan]
PA = [0.5, 1, 2, 5, 10, 0.1, 3, 100, 1e6, 20, 8, 7.5]
PB = [0.5, 2, 3, 1, 0.5, 7, 3, 100, 1e6, 1e-3, 9, 0.25]
EP = [0, 0, 1, -1, 2, nan, 0, 0.5]
EQ = [0, 1, 0, 1, -1, 1, nan, 2]
GA = [0.5, 1, 2, 5, 10, 0.3, 3, 7.5]
GX = [0.3, 1, 3, 4, 20, 0.01, 3, 9]
GU = [0.3, 0.5, 0.9, 0.2, 0.99, 0.01, 0.5, 0.6]
GN = [0, 1, 2, 3, 1, 2, 0, 4]
GS = [-3.5, -1.5, -0.5, 0.25, 0.5, 1, 2.5, 7, 12]

# name -> (function of arrays, argument lists)
VALUES = {
    "lax.igamma": (lax.igamma, [GAMMA_A, GAMMA_X]),
    "lax.igammac": (lax.igammac, [GAMMA_A, GAMMA_X]),
    "lax.igamma_grad_a": (lax.igamma_grad_a, [GAMMA_A, GAMMA_X]),
    "lax.random_gamma_grad": (lax.random_gamma_grad, [GAMMA_A, GAMMA_X]),
    "lax.betainc": (lax.betainc, [BETA_A, BETA_B, BETA_X]),
    "lax.zeta": (lax.zeta, [ZETA_X, ZETA_Q]),
    "lax.polygamma": (lax.polygamma, [POLY_M, POLY_X]),
    "lax.bessel_i0e": (lax.bessel_i0e, [BESSEL]),
    "lax.bessel_i1e": (lax.bessel_i1e, [BESSEL]),
    "log_ndtr1": (lambda x: sp.log_ndtr(x, 1), [REAL]),
    "comb_rep": (lambda a, b: sp.comb(a, b, repetition=True), [PA, PB]),
    "zeta": (sp.zeta, [[a + 1 for a in PA], PB]),
    "multigammaln3": (lambda a: sp.multigammaln(a, 3), [[a + 3 for a in PA]]),
}
for n in ["gammaln", "gammasgn", "gamma", "loggamma", "digamma", "factorial", "erf", "erfc", "ndtr", "log_ndtr",
          "expit", "entr", "i0", "i1", "i0e", "i1e"]:
    VALUES[n] = (getattr(sp, n), [REAL])
for n in ["ndtri", "logit", "erfinv"]:
    VALUES[n] = (getattr(sp, n), [UNIT])
for n in ["betaln", "beta", "poch", "xlogy", "xlog1py", "rel_entr", "kl_div", "boxcox", "boxcox1p"]:
    VALUES[n] = (getattr(sp, n), [PA, PB])
VALUES["comb"] = (sp.comb, [PB, PA])
EI_X = [-50, -5, -1, -0.5, -0.02, 0, 1e-3, 0.5, 1, 2, 2.5, 4, 7, 8, 15, 16, 30, 40, 64, 70, 100, inf, -inf, nan]
E1_X = [0, 0.01, 0.5, 1, 1.5, 5, 20, 100, 800, inf, -1, nan]
EN_N = [0, 1, 2, 3, 5, 0, 2, 10, 5000, 6000, -1, 1, 3, 2, 50, 1, 4.5, 1]
EN_X = [0.5, 0.5, 0.25, 1, 2, 0, 0, 3, 0.5, 2, 1, -1, 0.05, 30, 0.9, nan, 0.7, 0.01]
VALUES["expi"] = (sp.expi, [EI_X])
VALUES["exp1"] = (sp.exp1, [E1_X])
VALUES["expn"] = (sp.expn, [EN_N, EN_X])
for n in ["xlogy", "rel_entr", "kl_div"]:
    VALUES[n + "_edge"] = (getattr(sp, n), [EP, EQ])
VALUES["gammainc"] = (sp.gammainc, [GAMMA_A, GAMMA_X])
VALUES["gammaincc"] = (sp.gammaincc, [GAMMA_A, GAMMA_X])
VALUES["betainc"] = (sp.betainc, [BETA_A, BETA_B, BETA_X])
# (not x in (9.1, 9.42) for float32: XLA flushes erfc's subnormal result there to 0, so JAX's erfcx is 0)
ERFCX_X = REAL + [5, 9.5, 10, 26, 27, 1e3, -10, -26.7]
SPENCE_X = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 10, 1e6, -1, nan, inf]
SICI_X = [0, 0.5, -0.5, 1, 3.9, 4, 4.1, 7.9, 8, 8.1, 20, -20, 1e3, 1e9, 2e9, inf, -inf, nan]
OWENS_H = [0.5, 0, 1, 2, 0.3, 5, -1, 0.2, 1.5, 0, nan, 0.67, 3, 0.1, -2, 10]
OWENS_A = [0.3, 0.7, 1, 1, 2, 0.5, -0.4, 3, 10, 5, 1, 1.0001, -1.5, 100, 0, 0.9]
VALUES["erfcx"] = (sp.erfcx, [ERFCX_X])
VALUES["dawsn"] = (sp.dawsn, [REAL + [3.2, 3.3, 6.2, 6.3, 100, -4]])
VALUES["spence"] = (sp.spence, [SPENCE_X])
VALUES["sici_si"] = (lambda x: sp.sici(x)[0], [SICI_X])
VALUES["sici_ci"] = (lambda x: sp.sici(x)[1], [SICI_X])
VALUES["owens_t"] = (sp.owens_t, [OWENS_H, OWENS_A])
# jax.scipy.special.polygamma takes an integer n (the test passes argument 0 as int64)
VALUES["polygamma"] = (lambda n, x: sp.polygamma(n.astype(np.int64), x), [[0, 1, 2, 1, -1, 3, 1, 2, 3, 4, 5, 1], POLY_X])

GRADS = {  # name -> (function, arguments, which arguments to differentiate)
    "gammainc": (sp.gammainc, [GA, GX], [0, 1]),
    "expi": (sp.expi, [[-3.0, -0.5, 0.25, 1.5, 3, 9, 20, 0.01]], [0]),
    "expn": (sp.expn, [[1.0, 2, 3, 1, 5, 2, 1, 4], [0.3, 1, 3, 4, 20, 0.01, 3, 0.9]], [1]),
    "gammaincc": (sp.gammaincc, [GA, GX], [0, 1]),
    "betainc": (sp.betainc, [GA, GX, GU], [2]),
    "polygamma": (lambda n, x: sp.polygamma(n.astype(np.int64), x), [GN, GX], [1]),
    "log_ndtr": (sp.log_ndtr, [[4 * s for s in GS]], [0]),
    "zeta": (sp.zeta, [[a + 1.5 for a in GA], GX], [0, 1]),
    "boxcox": (sp.boxcox, [GA, [x - 3 for x in GX]], [0, 1]),
    "multigammaln4": (lambda t: sp.multigammaln(t, 4), [[a + 2 for a in GA]], [0]),
}
GRADS["owens_t"] = (sp.owens_t, [[g - 2 for g in GX], [u * 3 - 1 for u in GU]], [0, 1])
GRADS["sici_si"] = (lambda x: sp.sici(x)[0], [GS], [0])
GRADS["sici_ci"] = (lambda x: sp.sici(x)[1], [GS], [0])
GRADS["spence"] = (sp.spence, [GX], [0])
for n in ["i0e", "i1e", "i0", "i1", "gammaln", "digamma", "gamma", "ndtr", "expit", "erfcx", "dawsn"]:
    GRADS[n] = (getattr(sp, n), [GS], [0])
for n in ["entr", "logit", "ndtri", "erfinv"]:
    GRADS[n] = (getattr(sp, n), [GU], [0])
for n in ["xlogy", "xlog1py", "rel_entr", "kl_div", "betaln", "beta", "poch"]:
    GRADS[n] = (getattr(sp, n), [GA, GX], [0, 1])


lines = []
for dt, cname in [(np.float64, "DType::float64"), (np.float32, "DType::float32")]:
    for name, (f, args) in VALUES.items():
        arrays = [jnp.array(a, dt) for a in args]
        r = np.asarray(f(*arrays), np.float64).ravel()
        lines.append(f'    {{"{name}", {cname}, {{{", ".join(vec(a) for a in args)}}}, {vec(r)}}},')
    for name, (f, args, which) in GRADS.items():
        arrays = [jnp.array(a, dt) for a in args]
        for k in which:
            g = jax.grad(lambda t, k=k: jnp.sum(f(*[t if i == k else a for i, a in enumerate(arrays)])))(arrays[k])
            r = np.asarray(g, np.float64).ravel()
            lines.append(f'    {{"d{k}:{name}", {cname}, {{{", ".join(vec(a) for a in args)}}}, {vec(r)}}},')

with open(OUT, "w") as out:
    out.write("// Generated by tools/gen_special_refs.py (JAX %s, jax_enable_x64, CPU): jax.lax's special functions and\n"
              "// jax.scipy.special's values, and \"d<k>:name\" gradients of sum(name(args)) in argument k. Do not edit.\n"
              % jax.__version__)
    out.write("#pragma once\n#include <cmath>\n#include <limits>\n#include <vector>\n\n#include \"jitx/dtype.h\"\n\n")
    out.write("namespace special_refs {\nusing jitx::DType;\n")
    out.write("constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();\n")
    out.write("constexpr double kInf = std::numeric_limits<double>::infinity();\n")
    out.write("struct Case {\n  const char* name;\n  DType dtype;\n  std::vector<std::vector<double>> args;\n"
              "  std::vector<double> want;\n};\n")
    out.write("// clang-format off\ninline const std::vector<Case> kCases = {\n")
    out.write("\n".join(lines))
    out.write("\n};\n// clang-format on\n}  // namespace special_refs\n")
print(f"{OUT}: {len(lines)} cases")
