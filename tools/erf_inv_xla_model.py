#!/usr/bin/env python3
"""Models XLA's f32 ErfInv (Giles' polynomial on w = -log1p(-x*x)) in numpy, with and without fused multiply-adds
and with three log variants, and counts how many of 200,000 jax.random.normal-style uniforms give a different
erf_inv bit pattern than jax.lax.erf_inv (JAX on CPU). Run with /work/venv-jax/bin/python. Measured (JAX 0.10.2):
FMA + numpy's log1p: 2,877 differ by 1-2 ULP; without FMA 11,119; with log((1-x)(1+x)) (jitx's) 31,003-36,649.
"""
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
f=np.float32
u = np.asarray(jax.random.uniform(jax.random.key(0), (200000,), jnp.float32, minval=np.nextafter(f(-1),f(1)), maxval=1.))
ref = np.asarray(jax.lax.erf_inv(jnp.asarray(u)))
lt=[2.81022636e-08,3.43273939e-07,-3.5233877e-06,-4.39150654e-06,0.00021858087,-0.00125372503,-0.00417768164,0.246640727,1.50140941]
gt=[-0.000200214257,0.000100950558,0.00134934322,-0.00367342844,0.00573950773,-0.0076224613,0.00943887047,1.00167406,2.83297682]
def fma(a,b,c): return (a.astype(np.float64)*b.astype(np.float64)+c.astype(np.float64)).astype(f)
def model(x, use_fma, logmode):
    x=x.astype(f)
    if logmode=='log1p': w = -np.log1p(-(x*x)).astype(f)
    elif logmode=='log1p64': w = (-np.log1p(-(x.astype(np.float64)**2))).astype(f)
    else: w = -np.log((f(1)-x)*(f(1)+x)).astype(f)
    less = w < f(5)
    ww = np.where(less, w - f(2.5), np.sqrt(w) - f(3)).astype(f)
    p = np.where(less, f(lt[0]), f(gt[0])).astype(f)
    for i in range(1,9):
        c = np.where(less, f(lt[i]), f(gt[i])).astype(f)
        p = fma(p, ww, c) if use_fma else (c + p*ww).astype(f)
    return (p*x).astype(f)
for use_fma in (False, True):
  for lm in ('log1p','log1p64','log'):
    m=model(u,use_fma,lm)
    print(use_fma, lm, "mismatch", np.sum(m.view(np.uint32)!=ref.view(np.uint32)))
# also normal itself
n = np.asarray(jax.random.normal(jax.random.key(0), (200000,), jnp.float32))
print("normal == sqrt2*erfinv(u)?", np.sum((f(np.sqrt(2))*ref).astype(f).view(np.uint32)!=n.view(np.uint32)))
m=model(u,True,'log1p')
d=np.abs(m.view(np.int32).astype(np.int64)-ref.view(np.int32).astype(np.int64))
print("fma+log1p ulp max", d.max(), "count", (d>0).sum())
