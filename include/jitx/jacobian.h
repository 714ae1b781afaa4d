// Jacobians and Hessians with JAX's names: jacfwd (forward mode, vmap of jvp over the input basis), jacrev
// (reverse mode, vmap of vjp over the output basis) and hessian (jacfwd of jacrev).
//
// The differentiated arguments and the output are Arrays; the result for one argnum has shape
// out.shape + in.shape (as JAX), several argnums give a tuple of those.
#pragma once
#include <tuple>
#include <type_traits>
#include <utility>

#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/vmap.h"

namespace jitx {
namespace detail {
/// The identity of n x n as a (n, shape...) stack of one-hot arrays of dtype d.
Array basis_stack(const Shape& shape, DType d, bool weak = false);
/// jac (n, ...) or (..., n) reshaped to out_shape + in_shape.
Array jacobian_reshape(const Array& jac, const Shape& out_shape, const Shape& in_shape);
void check_jacobian_types(const std::string& op, const Array& in, int argnum);
void check_jacobian_output(const std::string& op, const Array& out);
/// jacfwd of an integer output: zeros of shape out.shape + x.shape in out's dtype.
Array integer_jacobian(const Array& out, const Array& x);

template <class F, int... I>
struct JacRevFn {
  F f;
  template <class... Args>
  auto operator()(const Args&... args) const {
    static_assert((std::is_same_v<Args, Array> && ...), "jacrev: the arguments must be Arrays");
    std::tuple<const Args&...> all{args...};
    (check_jacobian_types("jacrev", std::get<I>(all), I), ...);
    auto res = vjp(f, args...);
    const auto& out = res.first;
    const auto& vjp_fn = res.second;
    static_assert(std::is_same_v<std::decay_t<decltype(out)>, Array>, "jacrev: f must return an Array");
    check_jacobian_output("jacrev", out);
    Array basis = basis_stack(out.shape(), out.dtype(), out.weak_type());  // JAX: the input's type comes back
    auto cts = vmap([&vjp_fn](const Array& ct) { return vjp_fn(ct); })(basis);
    if constexpr (sizeof...(I) == 1)
      return jacobian_reshape(std::get<I...>(cts), out.shape(), std::get<I...>(all).shape());
    else
      return std::make_tuple(jacobian_reshape(std::get<I>(cts), out.shape(), std::get<I>(all).shape())...);
  }
};

template <class F, int... I>
struct JacFwdFn {
  F f;
  template <int K, class... Args>
  Array one(const Args&... args) const {
    std::tuple<Args...> primals{args...};
    const Array& x = std::get<K>(primals);
    check_jacobian_types("jacfwd", x, K);
    auto column = [&](const Array& t) {
      std::tuple<Args...> tangents{zeros_like_aval(args.aval())...};
      std::get<K>(tangents) = t;
      auto r = jvp(f, primals, tangents);
      static_assert(std::is_same_v<std::decay_t<decltype(r.second)>, Array>, "jacfwd: f must return an Array");
      return r.second;
    };
    Array out = std::apply(f, primals);
    // An integer output has no tangent: JAX's jacfwd gives zeros in its dtype.
    if (!is_floating(out.dtype()) && !is_bool(out.dtype())) return integer_jacobian(out, x);
    check_jacobian_output("jacfwd", out);
    // A weak input's basis is weak, so the columns take the output tangent's type, as JAX's.
    Array cols = vmap(column, 0, -1)(basis_stack(x.shape(), x.dtype(), x.weak_type()));  // out.shape + (n,)
    return jacobian_reshape(cols, out.shape(), x.shape());
  }
  template <class... Args>
  auto operator()(const Args&... args) const {
    static_assert((std::is_same_v<Args, Array> && ...), "jacfwd: the arguments must be Arrays");
    if constexpr (sizeof...(I) == 1) return one<I...>(args...);
    else return std::make_tuple(one<I>(args...)...);
  }
};
}  // namespace detail

/// The Jacobian of f by reverse mode (one vjp per output element, batched with vmap).
template <class F>
auto jacrev(F f) {
  return detail::JacRevFn<F, 0>{std::move(f)};
}
template <class F, int... I>
auto jacrev(F f, ArgNums<I...>) {
  return detail::JacRevFn<F, I...>{std::move(f)};
}
/// The Jacobian of f by forward mode (one jvp per input element, batched with vmap).
template <class F>
auto jacfwd(F f) {
  return detail::JacFwdFn<F, 0>{std::move(f)};
}
template <class F, int... I>
auto jacfwd(F f, ArgNums<I...>) {
  return detail::JacFwdFn<F, I...>{std::move(f)};
}
/// The Hessian of f with respect to one argument: jacfwd(jacrev(f)), shape out.shape + in.shape + in.shape.
template <class F>
auto hessian(F f) {
  return jacfwd(jacrev(std::move(f)));
}
template <class F, int I>
auto hessian(F f, ArgNums<I>) {
  return jacfwd(jacrev(std::move(f), argnums<I>), argnums<I>);
}

}  // namespace jitx
