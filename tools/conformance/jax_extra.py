"""JAX's side of tools/conformance/jitx_conformance_extra.cpp: the same cases under the same names (op -> function
of the case's input arrays). Imported by the JAX side of tools/conformance.py inside the JAX virtualenv."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

NN = jax.nn


def _uint_of(x):
    return jnp.dtype(f"uint{jnp.dtype(x.dtype).itemsize * 8}")


def _lit(x, v):
    return jnp.asarray(v).astype(x.dtype)


def _lowest(x, sign):
    """-inf / the dtype's minimum (sign -1) or +inf / its maximum (sign 1), as an array of x's dtype."""
    if x.dtype == bool:
        return np.array(sign > 0)
    if jnp.issubdtype(x.dtype, jnp.floating):
        return np.array(sign * np.inf, x.dtype)
    info = jnp.iinfo(x.dtype)
    return np.array(info.max if sign > 0 else info.min, x.dtype)


def _spd(x):
    return x @ x.T + 4.0 * jnp.eye(x.shape[0], dtype=x.dtype)


def _square(x):
    return x[:, : x.shape[0]]


def _window(x, pad):
    n = x.ndim
    return dict(window_dimensions=(2,) * n, window_strides=(1,) * n, padding=((pad, pad),) * n)


def _scatter(kind):
    def f(x):
        dn = lax.ScatterDimensionNumbers(update_window_dims=tuple(range(1, x.ndim)), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
        idx = np.array([[2], [0], [7]] if kind == "scatter" else [[1], [0], [1]], np.int32)
        upd = jnp.flip(x, 0)[:3]
        return getattr(lax, kind)(x, idx, upd, dn)
    return f


def _gather(x):
    dn = lax.GatherDimensionNumbers(offset_dims=tuple(range(1, x.ndim)), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))
    return lax.gather(x, np.array([[2], [0], [5], [-1]], np.int32), dn, (1,) + x.shape[1:],
                      mode=lax.GatherScatterMode.CLIP)


def _conv(x):
    lhs = x.reshape(1, 1, *x.shape)
    rhs = x[:2, :2].reshape(1, 1, 2, 2)
    return lax.conv_general_dilated(lhs, rhs, (1, 1), ((0, 1), (1, 0)))


def _while(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.add(c[1], c[1])), (0, x))[1]


def _scan(x):
    def body(c, v):
        s = jnp.add(c, v)
        return s, s
    return lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)[1]


EXTRA = {}
for n in ("float32", "float16", "int32", "uint8", "bool"):
    EXTRA[f"jnp.astype[{n}]"] = (lambda d: lambda x: x.astype(d))(n)
    EXTRA[f"lax.convert_element_type[{n}]"] = (lambda d: lambda x: lax.convert_element_type(x, d))(n)
EXTRA.update({
    "jnp.modf[0]": lambda x: jnp.modf(x)[0],
    "jnp.modf[1]": lambda x: jnp.modf(x)[1],
    "jnp.frexp[0]": lambda x: jnp.frexp(x)[0],
    "jnp.frexp[1]": lambda x: jnp.frexp(x)[1],
    "jnp.divmod[0]": lambda x, y: jnp.divmod(x, y)[0],
    "jnp.divmod[1]": lambda x, y: jnp.divmod(x, y)[1],
    "lax.bitcast_convert_type[uint]": lambda x: lax.bitcast_convert_type(x, _uint_of(x)),
    "jnp.broadcast_to[2+]": lambda x: jnp.broadcast_to(x, (2,) + x.shape),
    "jnp.reshape[-1,2]": lambda x: jnp.reshape(x, (-1, 2)),
    "jnp.squeeze[expand]": lambda x: jnp.squeeze(jnp.expand_dims(x, 0), 0),
    "jnp.swapaxes[0,-1]": lambda x: jnp.swapaxes(x, 0, -1),
    "jnp.slice_axis[::-2]": lambda x: x[::-2],
    "jnp.slice_axis[5:0:-2]": lambda x: x[5:0:-2],
    "jnp.slice_axis[-1:1:1]": lambda x: x[(slice(None),) * (x.ndim - 1) + (slice(1, None, 1),)],
    "jnp.repeat[2]": lambda x: jnp.repeat(x, 2),
    "jnp.repeat[2,axis=0]": lambda x: jnp.repeat(x, 2, axis=0),
    "jnp.tril[0]": lambda x: jnp.tril(x),
    "jnp.triu[1]": lambda x: jnp.triu(x, 1),
    "jnp.tril[-1]": lambda x: jnp.tril(x, -1),
    "jnp.roll[-3,axis=0]": lambda x: jnp.roll(x, -3, axis=0),
    "jnp.tile[2,1]": lambda x: jnp.tile(x, (2, 1)),
})
for m in ("constant", "edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "linear_ramp", "median"):
    EXTRA[f"jnp.pad[2,{m}]"] = (lambda m: lambda x: jnp.pad(x, 2, mode=m))(m)
for m in ("fill", "clip", "wrap"):
    EXTRA[f"jnp.take[{m}]"] = (lambda m: lambda x: jnp.take(x, np.array([0, -1, 3, 100, -100, 2]), mode=m))(m)
EXTRA.update({
    "jnp.take[axis=0,clip]": lambda x: jnp.take(x, np.array([0, -1, 5, -7]), axis=0, mode="clip"),
    "jnp.searchsorted[left]": lambda x: jnp.searchsorted(jnp.sort(x), x, side="left"),
    "jnp.searchsorted[right]": lambda x: jnp.searchsorted(jnp.sort(x), x, side="right"),
    "jnp.nonzero[size=5]": lambda x: jnp.stack(jnp.nonzero(x, size=5, fill_value=-1)),
    "jnp.argwhere[size=5]": lambda x: jnp.argwhere(x, size=5),
    "jnp.flatnonzero[size=5]": lambda x: jnp.flatnonzero(x, size=5, fill_value=7),
    "jnp.dot": jnp.dot, "jnp.matmul": jnp.matmul, "jnp.outer": jnp.outer, "jnp.isclose": jnp.isclose,
    "jnp.allclose": jnp.allclose,
    "jnp.isclose[equal_nan]": lambda a, b: jnp.isclose(a, b, equal_nan=True),
    "jnp.matmul[x@xT]": lambda x: jnp.matmul(x, jnp.transpose(x)),
    "jnp.einsum[ij,kj->ik]": lambda x: jnp.einsum("ij,kj->ik", x, x),
    "jnp.einsum[ii->i]": lambda x: jnp.einsum("ii->i", _square(x)),
    "jnp.einsum[i->]": lambda x: jnp.einsum("i->", x),
    "lax.dot[x,x]": lambda x: lax.dot(x, x),
    "lax.dot_general[x,xT]": lambda x: lax.dot_general(x, x, (((x.ndim - 1,), (x.ndim - 1,)), ((), ()))),
    "jnp.sum[initial=1]": lambda x: jnp.sum(x, initial=1),
    "jnp.max[where,initial]": lambda x: jnp.max(x, where=x != 0, initial=-5),
    "jnp.mean[where]": lambda x: jnp.mean(x, where=x != 1),
    "lax.broadcast[2]": lambda x: lax.broadcast(x, (2,)),
    "lax.broadcast_in_dim[2+]": lambda x: lax.broadcast_in_dim(x, (2,) + x.shape, tuple(range(1, x.ndim + 1))),
    "lax.reshape[-1]": lambda x: lax.reshape(x, (x.size,)),
    "lax.transpose[rev]": lambda x: lax.transpose(x, tuple(reversed(range(x.ndim)))),
    "lax.rev[0]": lambda x: lax.rev(x, (0,)),
    "lax.slice[1::2]": lambda x: lax.slice(x, (1,) * x.ndim, x.shape, (2,) * x.ndim),
    "lax.slice_in_dim[1,3]": lambda x: lax.slice_in_dim(x, 1, 3),
    "lax.concatenate[self,0]": lambda x: lax.concatenate([x, x], 0),
    "lax.pad[1,2,1]": lambda x: lax.pad(x, _lit(x, 0), ((1, 2, 1),) * x.ndim),
    "lax.pad[-1,1,0]": lambda x: lax.pad(x, _lit(x, 1), ((-1, 1, 0),) * x.ndim),
    "lax.dynamic_slice[1,2]": lambda x: lax.dynamic_slice(x, (1,) * x.ndim, (2,) * x.ndim),
    "lax.dynamic_slice[100,2]": lambda x: lax.dynamic_slice(x, (100,) * x.ndim, (2,) * x.ndim),
    "lax.dynamic_update_slice[-1]": lambda x: lax.dynamic_update_slice(
        x, lax.rev(x[(slice(0, 1),) * x.ndim], tuple(range(x.ndim))), (-1,) * x.ndim),
    "lax.iota[5]": lambda x: lax.iota(x.dtype, 5),
    "lax.broadcasted_iota[shape,0]": lambda x: lax.broadcasted_iota(x.dtype, x.shape, 0),
    "lax.full[2,3]": lambda x: lax.full((2, 3), x.reshape(-1)[0]),
    "lax.clamp[0,2]": lambda x: lax.clamp(_lit(x, 0), x, _lit(x, 2)),
    "lax.select[x!=0,x,flip]": lambda x: lax.select(x != _lit(x, 0), x, jnp.flip(x)),
    "lax.select_n[x!=0,flip,x]": lambda x: lax.select_n(x != _lit(x, 0), jnp.flip(x), x),
    "lax.gather[rows]": _gather,
})
for k in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"):
    EXTRA[f"lax.{k}[rows]"] = _scatter(k)
EXTRA.update({
    "lax.reduce_sum[0]": lambda x: lax.reduce_sum(x, (0,)),
    "lax.reduce_prod[0]": lambda x: lax.reduce_prod(x, (0,)),
    "lax.reduce_max[0]": lambda x: lax.reduce_max(x, (0,)),
    "lax.reduce_min[0]": lambda x: lax.reduce_min(x, (0,)),
    "lax.reduce_and[0]": lambda x: lax.reduce_and(x, (0,)),
    "lax.reduce_or[0]": lambda x: lax.reduce_or(x, (0,)),
    "lax.argmax[0]": lambda x: lax.argmax(x, 0, jnp.int32),
    "lax.argmin[0]": lambda x: lax.argmin(x, 0, jnp.int32),
    "lax.cumsum[0]": lambda x: lax.cumsum(x, 0),
    "lax.cumprod[0]": lambda x: lax.cumprod(x, 0),
    "lax.cummax[0]": lambda x: lax.cummax(x, 0),
    "lax.cummin[0,reverse]": lambda x: lax.cummin(x, 0, reverse=True),
    "lax.cumlogsumexp[0]": lambda x: lax.cumlogsumexp(x, 0),
    "lax.reduce_window_sum[2,pad1]": lambda x: lax.reduce_window(x, _lit(x, 0), lax.add, **_window(x, 1)),
    "lax.reduce_window_max[2]": lambda x: lax.reduce_window(x, _lowest(x, -1), lax.max, **_window(x, 0)),
    "lax.reduce_window_min[2,pad1]": lambda x: lax.reduce_window(x, _lowest(x, 1), lax.min, **_window(x, 1)),
    "lax.sort[0]": lambda x: lax.sort(x, dimension=0),
    "lax.sort[argsort]": lambda x: lax.sort((x, lax.broadcasted_iota(jnp.int32, x.shape, x.ndim - 1)),
                                            dimension=-1, num_keys=1)[1],
    "lax.top_k[2,values]": lambda x: lax.top_k(x, 2)[0],
    "lax.top_k[2,indices]": lambda x: lax.top_k(x, 2)[1],
    "lax.conv_general_dilated[2x2]": _conv,
    "lax.nextafter": lax.nextafter,
    "lax.reduce_precision[5,10]": lambda x: lax.reduce_precision(x, 5, 10),
    "lax.reduce_precision[8,7]": lambda x: lax.reduce_precision(x, 8, 7),
    "lax.cond[any>0,flip,x]": lambda x: lax.cond(jnp.any(x > _lit(x, 0)), jnp.flip, lambda v: v, x),
    "lax.switch_[7,(flip,x,neg)]": lambda x: lax.switch(7, (jnp.flip, lambda v: v, jnp.negative), x),
    "lax.while_loop[3x,x+x]": _while,
    "lax.fori_loop[0,3,x*x]": lambda x: lax.fori_loop(0, 3, lambda i, v: jnp.multiply(v, v), x),
    "lax.scan[cumsum]": _scan,
    "lax.associative_scan[add]": lambda x: lax.associative_scan(jnp.add, x),
    "jnp.zeros_like": jnp.zeros_like, "jnp.ones_like": jnp.ones_like,
    "jnp.full_like[2.5]": lambda x: jnp.full_like(x, 2.5), "jnp.empty_like": jnp.empty_like,
    "jnp.empty[shape]": lambda x: jnp.empty(x.shape, x.dtype),
    "jnp.identity[size]": lambda x: jnp.identity(x.shape[0] if x.ndim else 1, x.dtype),
    "lax.with_sharding_constraint[device]": lambda x: lax.with_sharding_constraint(
        x, jax.sharding.SingleDeviceSharding(jax.devices()[0])),
    "nn.glu": NN.glu,
    "nn.standardize": lambda x: NN.standardize(x, axis=-1),
    "nn.layer_norm": lambda x: NN.standardize(x, axis=-1, epsilon=1e-5),
    "nn.one_hot[5,float32]": lambda x: NN.one_hot(x, 5, dtype=jnp.float32),
    "linalg.norm": jnp.linalg.norm,
    "linalg.norm[1]": lambda x: jnp.linalg.norm(x, 1),
    "linalg.norm[fro]": lambda x: jnp.linalg.norm(x, "fro"),
    "linalg.det": lambda x: jnp.linalg.det(_square(x)),
    "linalg.slogdet[sign]": lambda x: jnp.linalg.slogdet(_square(x))[0],
    "linalg.slogdet[logabsdet]": lambda x: jnp.linalg.slogdet(_square(x))[1],
    "linalg.inv[spd]": lambda x: jnp.linalg.inv(_spd(x)),
    "linalg.solve[spd,x]": lambda x: jnp.linalg.solve(_spd(x), x),
    "linalg.cholesky[spd]": lambda x: jnp.linalg.cholesky(_spd(x)),
    "linalg.eigvalsh[spd]": lambda x: jnp.linalg.eigvalsh(_spd(x)),
    "linalg.eigh[spd,values]": lambda x: jnp.linalg.eigh(_spd(x))[0],
    "linalg.svdvals": jnp.linalg.svdvals,
    "linalg.svd[s]": lambda x: jnp.linalg.svd(x, full_matrices=False)[1],
    "linalg.qr[r,abs]": lambda x: jnp.abs(jnp.linalg.qr(_spd(x))[1]),
    "linalg.lstsq[spd,x]": lambda x: jnp.linalg.lstsq(_spd(x), x)[0],
    "linalg.pinv[spd]": lambda x: jnp.linalg.pinv(_spd(x)),
    "linalg.matrix_power[3]": lambda x: jnp.linalg.matrix_power(_square(x), 3),
    "linalg.triangular_solve[spd,x]": lambda x: lax.linalg.triangular_solve(_spd(x), x, left_side=True, lower=True),
    "linalg.lax_cholesky[spd]": lambda x: lax.linalg.cholesky(_spd(x)),
    "lax.qr[spd,r,abs]": lambda x: jnp.abs(lax.linalg.qr(_spd(x))[1]),
    "lax.eigh[spd,w]": lambda x: lax.linalg.eigh(_spd(x))[1],
    "lax.svd[s]": lambda x: lax.linalg.svd(x, full_matrices=False, compute_uv=False),
    "linalg.triangular_solve[spd,x[:,0]]": lambda x: lax.linalg.triangular_solve(_spd(x), x[:, 0], left_side=True,
                                                                                 lower=True),
    "linalg.lu[spd,lu]": lambda x: lax.linalg.lu(_spd(x))[0],
})
