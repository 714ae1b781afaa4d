// jitx::optim: SGD with momentum and Adam/AdamW as pure functions over pytrees of parameters (optax-style
// init/update). Learning rates and step counts are Arrays, so under jit changing them never recompiles.
#pragma once
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/pytree.h"
#include "jitx/tree_util.h"

namespace jitx::optim {

namespace detail {
using tree_util::tree_map;
/// A scalar in x's dtype (so f32 parameters stay f32 whatever the hyperparameter's type).
inline Array like(const Array& x, const Array& v) { return lax::convert_element_type(v, x.dtype()); }
}  // namespace detail

// --- SGD with (optionally Nesterov) momentum ----------------------------------------------------------
/// The momentum buffers: zeros shaped like the parameters.
template <class P>
P sgd_init(const P& params) {
  return detail::tree_map([](const Array& p) { return zeros_like(p); }, params);
}
/// One step: v = momentum * v + g; p -= lr * v (or lr * (g + momentum * v) with nesterov). Returns (params, state).
template <class P>
std::pair<P, P> sgd_update(const P& params, const P& grads, const P& state, const Array& lr, double momentum = 0.0,
                           bool nesterov = false) {
  P v = detail::tree_map([&](const Array& m, const Array& g) { return m * momentum + g; }, state, grads);
  P step = nesterov ? detail::tree_map([&](const Array& g, const Array& m) { return g + m * momentum; }, grads, v) : v;
  P out = detail::tree_map([&](const Array& p, const Array& s) { return p - detail::like(p, lr) * s; }, params, step);
  return {out, v};
}

// --- Adam / AdamW -------------------------------------------------------------------------------------
/// (step count, first moments, second moments). The count is an int32, as optax's.
template <class P>
using AdamState = std::tuple<Array, P, P>;

template <class P>
AdamState<P> adam_init(const P& params) {
  return {Array::scalar_int(0, DType::int32), sgd_init(params), sgd_init(params)};
}
/// One Adam step with bias correction; weight_decay > 0 gives AdamW (decoupled decay, scaled by lr).
template <class P>
std::pair<P, AdamState<P>> adam_update(const P& params, const P& grads, const AdamState<P>& state, const Array& lr,
                                       double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                                       double weight_decay = 0.0) {
  const auto& [count, mu, nu] = state;
  // As optax: the count saturates at int32's maximum (safe_int32_increment), and the bias corrections 1 - b^t are
  // computed in float64 and then converted to each moment's dtype (in float32, 1 - 0.999f is 1.3e-5 off).
  Array t = jnp::where(count < Array::scalar_int(2147483647, count.dtype()), count + 1, count);
  Array tf = lax::convert_element_type(t, DType::float64);
  P m = detail::tree_map([&](const Array& m0, const Array& g) { return m0 * b1 + g * (1 - b1); }, mu, grads);
  P v = detail::tree_map([&](const Array& v0, const Array& g) { return v0 * b2 + g * g * (1 - b2); }, nu, grads);
  Array c1 = 1.0 - jnp::power(Array::scalar(b1, DType::float64), tf);
  Array c2 = 1.0 - jnp::power(Array::scalar(b2, DType::float64), tf);
  P out = detail::tree_map(
      [&](const Array& p, const Array& mi, const Array& vi) {
        Array mhat = mi / detail::like(mi, c1), vhat = vi / detail::like(vi, c2);
        Array upd = mhat / (jnp::sqrt(vhat) + eps);
        if (weight_decay != 0.0) upd = upd + p * weight_decay;
        return p - detail::like(p, lr) * upd;
      },
      params, m, v);
  return {out, AdamState<P>{t, m, v}};
}

}  // namespace jitx::optim
