"""Shared by the tools/gen_*_refs.py generators: C++ literals for float64 values (NaN and infinities by name)."""
import numpy as np


def num(v):
    """One value as a C++ double literal (kNaN, kInf, -kInf for the non-finite ones)."""
    v = float(v)
    if np.isnan(v):
        return "kNaN"
    if np.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(v)


def vec(vs):
    """Values as a C++ braced list."""
    return "{" + ", ".join(num(v) for v in np.asarray(vs, np.float64).ravel()) + "}"
