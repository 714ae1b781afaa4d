#!/usr/bin/env python3
"""Writes the inputs and JAX reference values for tools/erf_inv64_xla_model.c (u.bin, e.bin, n.bin, here).

Run with JAX_ENABLE_X64=1 /work/venv-jax/bin/python."""
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
us=[];ns=[];es=[]
for seed in (0,1,42):
    k=jax.random.PRNGKey(seed)
    u=np.asarray(jax.random.uniform(k,(200000,),jnp.float64,np.nextafter(-1.,0.),1.))
    n=np.asarray(jax.random.normal(k,(200000,),jnp.float64))
    e=np.asarray(jax.lax.erf_inv(jnp.asarray(u)))
    us.append(u);ns.append(n);es.append(e)
# edge inputs for erf_inv
edge=np.array([0.0,-0.0,1e-300,-1e-300,5e-324,1e-17,0.5,-0.5,0.9,0.99,0.999999,1-2**-52,-(1-2**-53),1.0,-1.0,2.0,np.nan,np.inf,-np.inf]+list(np.linspace(-1,1,10001)))
ee=np.asarray(jax.lax.erf_inv(jnp.asarray(edge)))
np.concatenate(us+[edge]).tofile('u.bin'); np.concatenate(ns).tofile('n.bin'); np.concatenate(es+[ee]).tofile('e.bin')
