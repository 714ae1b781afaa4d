// jitx::random: choice and multinomial, composed as jax.random composes them (randint and take, a permutation's
// first slices, the inverse CDF by searchsorted, Gumbel top-k, a scan of binomials), so that the draws are JAX's.
#include <numeric>

#include "api/random_internal.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_control.h"
#include "jitx/lax_extra.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/random.h"
#include "ops/linalg_util.h"

namespace jitx::random {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
using namespace internal;

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace, const std::optional<Array>& p,
             int64_t axis, Loc loc) {
  ApiScope s(loc);
  key_words(key, "choice");
  check_shape(shape, "choice");
  if (!a.valid()) throw_error<TypeError>("choice", "got an empty (default-constructed) Array for a");
  int64_t n_inputs;
  if (a.ndim() == 0) {
    if (a.is_tracer() || !(is_integer(a.dtype()) || is_bool(a.dtype())))
      throw_error<TypeError>("choice", "a must be a concrete integer or an array of rank >= 1, got {}{}",
                             a.aval().str(), a.is_tracer() ? " (a tracer)" : "");
    n_inputs = a.item<int64_t>();
  } else {
    axis = detail::canonical_axis(axis, a.ndim(), "choice");
    n_inputs = a.dim(axis);
  }
  int64_t n_draws = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  // As JAX: a's dtype when nothing is drawn (an integer a: its dtype, int32 for a C++ int).
  if (n_draws == 0) return jnp::zeros(shape, a.dtype());
  if (n_inputs <= 0)
    throw_error<ShapeError>("choice", "a must be greater than 0 unless no samples are taken, got {}", n_inputs);
  if (!replace && n_draws > n_inputs)
    throw_error<ShapeError>("choice",
                            "cannot take a larger sample (size {}) than population (size {}) when replace=false",
                            n_draws, n_inputs);
  Array result;
  if (!p) {
    if (replace) {
      Array ind = randint(key, shape, Array(0), Array(n_inputs));
      result = a.ndim() == 0 ? ind : jnp::take(a, ind, axis);
    } else {
      Array perm = a.ndim() == 0 ? permutation(key, n_inputs) : permutation(key, a, axis);
      result = lax::slice_in_dim(perm, 0, n_draws, 1, a.ndim() == 0 ? 0 : axis);
    }
  } else {
    if (!p->valid()) throw_error<TypeError>("choice", "got an empty (default-constructed) Array for p");
    DType pd = detail::linalg_util::inexact_dtype(p->dtype());
    Array pa = lax::convert_element_type(*p, pd);
    if (pa.shape() != Shape{n_inputs})
      throw_error<ShapeError>("choice",
                              "p must be a 1D vector with the same size as a.shape[axis]: p has shape {} and "
                              "a.shape[axis] is {}",
                              shape_str(pa.shape()), n_inputs);
    Array ind;
    if (replace) {
      Array cuml = jnp::cumsum(pa);
      Array r = lax::index_in_dim(cuml, -1, 0, false) * (Array(1) - uniform(key, shape, cuml.dtype()));
      ind = lax::convert_element_type(jnp::searchsorted(cuml, r), DType::int32);
    } else {
      // Gumbel top-k: sampling without replacement by the k largest perturbed log-probabilities.
      Array g = gumbel(key, {n_inputs}, pd) + jnp::log(pa);
      ind = lax::convert_element_type(lax::top_k(g, n_draws).second, DType::int32);
    }
    result = a.ndim() == 0 ? ind : jnp::take(a, ind, axis);
  }
  Shape out = shape;
  if (a.ndim() != 0) {
    out.assign(a.shape().begin(), a.shape().begin() + axis);
    out.insert(out.end(), shape.begin(), shape.end());
    out.insert(out.end(), a.shape().begin() + axis + 1, a.shape().end());
  }
  return lax::reshape(result, out);
}

Array multinomial(const Array& key, const Array& n, const Array& p, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "multinomial");
  check_dtype_value(dtype, "multinomial");
  if (!n.valid() || !p.valid()) throw_error<TypeError>("multinomial", "got an empty (default-constructed) Array");
  // promote_dtypes_inexact(n, p): one inexact dtype for both.
  DType d = detail::linalg_util::inexact_dtype(jnp::result_type({n, p}));
  Array nn = lax::convert_element_type(n, d), pp = lax::convert_element_type(p, d);
  Shape sh = shape ? *shape : pp.shape();
  if (sh.empty())
    throw_error<ShapeError>("multinomial", "needs at least one axis (the categories), got shape {}", shape_str(sh));
  check_shape(sh, "multinomial");
  Shape batch(sh.begin(), sh.end() - 1);
  nn = jnp::broadcast_to(nn, batch);
  pp = jnp::broadcast_to(pp, sh);
  pp = jnp::moveaxis(pp, -1, 0);
  Array remaining = lax::cumsum(pp, 0, true);
  Array ratios = pp / jnp::where(remaining == Array(0), Array(1), remaining);
  Array keys = split(key, ratios.dim(0));
  auto [rest, counts] = lax::scan(
      [](const Array& remainder, const std::pair<Array, Array>& rk) {
        Array count =
            binomial(rk.second, remainder, jnp::clip(rk.first, Array(0), Array(1)), std::nullopt, remainder.dtype());
        return std::pair{remainder - count, count};
      },
      nn, std::pair{ratios, keys});
  (void)rest;  // zero when p sums to 1
  return lax::convert_element_type(jnp::moveaxis(counts, 0, -1), dtype);
}

namespace {
/// Raw threefry2x32 key words: uint32 with a last axis of 2 (JAX's invalid-key errors otherwise).
Array checked_key_words(const Array& k, std::string_view op) {
  if (!k.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (k.dtype() != DType::uint32)
    throw_error<TypeError>(op, "invalid PRNG key data: expected key_data.dtype = uint32; got dtype={}",
                           dtype_name(k.dtype()));
  if (k.ndim() == 0 || k.shape().back() != 2)
    throw_error<TypeError>(op, "invalid PRNG key data: expected key_data.shape to end with (2,); got shape={}",
                           shape_str(k.shape()));
  return k;
}
}  // namespace

Array key_data(const Array& keys, Loc loc) {
  ApiScope s(loc);
  return checked_key_words(keys, "key_data");
}
Array wrap_key_data(const Array& key_bits, std::string_view impl, Loc loc) {
  ApiScope s(loc);
  if (impl != "threefry2x32")
    throw_error<TypeError>("wrap_key_data", "impl '{}' is not built: jitx keys are threefry2x32's", impl);
  return checked_key_words(key_bits, "wrap_key_data");
}
Array clone(const Array& key, Loc loc) {
  ApiScope s(loc);
  return checked_key_words(key, "clone");
}

}  // namespace jitx::random
