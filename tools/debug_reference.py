"""JAX's behaviour that tests/debug_test.cpp follows: jax.debug.print under vmap/grad, pure_callback errors, and
jax_debug_nans/jax_debug_infs on NaN-producing and NaN-passing functions. Run: /work/venv-jax/bin/python
tools/debug_reference.py (JAX 0.10.2 printed what the test file's comments quote)."""
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def f(x):
    jax.debug.print("x = {}", x)
    return x * 2


jax.vmap(f)(jnp.arange(3.0))
jax.effects_barrier()
print(jax.grad(lambda x: (jax.debug.print("g {} {}", x, 3), x * x)[1])(2.0))
jax.effects_barrier()
jax.vmap(lambda x, y: (jax.debug.print("{} {}", x, y), x)[1], in_axes=(0, None))(jnp.arange(2.0), 5.0)
jax.effects_barrier()
try:
    jax.grad(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float64), x))(1.0)
except Exception as e:
    print(type(e).__name__, e)

a = jnp.array([1.0, np.nan])
nan = jnp.array(np.nan)
jax.config.update("jax_debug_nans", True)


def t(name, fn, *args):
    try:
        print(name, "OK", fn(*args))
    except Exception as e:
        print(name, type(e).__name__, "|", str(e).split("\n")[0][:300])


t("identity", jax.jit(lambda x: x), nan)
t("add", jax.jit(lambda x: x + 1.0), nan)
t("where", jax.jit(lambda x: jnp.where(x > 0, x, 0.0)), a)
t("log", jax.jit(lambda x: jnp.sin(jnp.log(x)) + 1), -1.0)
t("scan", jax.jit(lambda x: jax.lax.scan(lambda c, _: (jnp.log(c - 2.0), c), x, None, length=3)[0]), 5.0)
jax.config.update("jax_debug_nans", False)
jax.config.update("jax_debug_infs", True)
t("div", jax.jit(lambda x: 1.0 / x), jnp.array(0.0))
t("nan-with-infs-only", jax.jit(lambda x: jnp.log(x)), -1.0)
