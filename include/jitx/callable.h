// Compile-time checks of the functions given to jit, grad, vmap and the control-flow ops (a mistake gives one
// static_assert whose message says what to do: tests/compile_fail/ checks each), and passing jitx's own functions
// directly (their hidden trailing `Loc` parameter is filled in): jit(jnp::tanh), grad(jnp::sin), vmap(jnp::exp).
#pragma once
#include <concepts>
#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "jitx/array.h"
#include "jitx/pytree.h"

namespace jitx::detail {

/// The types a function receives for arguments of types Args (S: C++ numbers arrive as Arrays).
template <bool S, class F, class... Args>
inline constexpr bool invocable_traced =
    std::is_invocable_v<const F&, typename PyTree<std::decay_t<Args>>::template traced<S>...>;
/// ... and whether it could be called with them as lvalues (it takes a non-const reference).
template <bool S, class F, class... Args>
inline constexpr bool invocable_lvalues =
    std::is_invocable_v<const F&, typename PyTree<std::decay_t<Args>>::template traced<S>&...>;

template <class F, class... Args>
inline constexpr bool traced_callable = invocable_traced<true, F, Args...> || invocable_traced<false, F, Args...>;
template <class F, class... Args>
inline constexpr bool takes_mutable_ref =
    !traced_callable<F, Args...> && (invocable_lvalues<true, F, Args...> || invocable_lvalues<false, F, Args...>);

enum class Api { jit, transform, cond, while_cond, while_body, scan, fori };

// One static_assert per API and mistake, so the message (a string literal) names the API. Returns false so
// callers can stop before the code that would fail with template noise.
#define JITX_CALL_CHECK_(A, api, called_as)                                                                       \
  if constexpr (Api::A == K) {                                                                                   \
    static_assert(!ByRef, "jitx::" api ": the function takes a parameter as a non-const reference (e.g. "       \
                          "`Array&`); traced arguments are temporaries: take `Array` or `const Array&` (or a "   \
                          "const reference to your pytree type)");                                              \
    static_assert(ByRef, "jitx::" api ": the function cannot be called " called_as                               \
                         "; check its parameter count and types (an Array leaf arrives as `Array`, a C++ "     \
                         "number as `Array` or as the number, a pytree with its own type)");                   \
  }

template <Api K, bool ByRef>
constexpr bool report_bad_call() {
  JITX_CALL_CHECK_(jit, "jit", "with the arguments given to the jitted function")
  JITX_CALL_CHECK_(transform, "grad/value_and_grad/vmap/jvp/vjp/checkpoint",
                   "with the arguments given to the transformed function")
  JITX_CALL_CHECK_(cond, "lax::cond", "as branch(operands...) with the operands given to cond")
  JITX_CALL_CHECK_(while_cond, "lax::while_loop", "as cond_fn(carry) with the carry's type")
  JITX_CALL_CHECK_(while_body, "lax::while_loop", "as body_fn(carry) with the carry's type")
  JITX_CALL_CHECK_(scan, "lax::scan", "as body(carry, x) with init's type and one slice of xs")
  JITX_CALL_CHECK_(fori, "lax::fori_loop", "as body_fn(i, carry) (i an Array, carry init's type); a fori_loop "
                                           "body takes (const Array& i, carry) and returns the carry")
  return false;
}
#undef JITX_CALL_CHECK_

/// True when f can take the (traced) arguments; otherwise one static_assert says why.
template <Api K, class F, class... Args>
constexpr bool check_call() {
  if constexpr (traced_callable<F, Args...>) return true;
  else return report_bad_call<K, takes_mutable_ref<F, Args...>>();
}

template <class T>
struct is_pair_like : std::false_type {};
template <class A, class B>
struct is_pair_like<std::pair<A, B>> : std::true_type {};
template <class A, class B>
struct is_pair_like<std::tuple<A, B>> : std::true_type {};

/// A plain function whose last parameter is a defaulted `Loc` (jitx's own functions): called without it.
template <class T>
struct TrailingLoc : std::false_type {};
template <class R, class... Ps>
  requires(sizeof...(Ps) > 0)
struct TrailingLoc<R (*)(Ps...)>
    : std::is_same<std::decay_t<std::tuple_element_t<sizeof...(Ps) - 1, std::tuple<Ps...>>>, Loc> {
  static constexpr size_t kKept = sizeof...(Ps) - 1;  // the parameters the adapted callable takes
};

template <class R, class... Ps, size_t... I>
auto drop_loc(R (*f)(Ps...), Loc loc, std::index_sequence<I...>) {
  using P = std::tuple<Ps...>;
  return [f, loc](std::tuple_element_t<I, P>... a) -> R {
    return f(std::forward<std::tuple_element_t<I, P>>(a)..., loc);
  };
}

/// f itself, or for a function with a trailing Loc parameter a callable that passes `loc` (the place the user
/// handed it to jit/grad/vmap) for it.
template <class F>
auto adapt_callable(F&& f, Loc loc) {
  using D = std::decay_t<F>;
  if constexpr (TrailingLoc<D>::value) {
    return drop_loc(static_cast<D>(f), loc, std::make_index_sequence<TrailingLoc<D>::kKept>{});
  } else {
    return D(std::forward<F>(f));
  }
}

template <class F>
using Adapted = decltype(adapt_callable(std::declval<F>(), Loc::current()));

}  // namespace jitx::detail
