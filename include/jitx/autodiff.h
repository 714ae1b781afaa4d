// Automatic differentiation with JAX's names: jvp, linearize, vjp, grad, value_and_grad, stop_gradient,
// checkpoint (remat).
//
// All take and return pytrees and compose with each other and with jit (grad(jit(f)), jit(grad(f)),
// grad(grad(f))). Reverse mode is JVP + partial evaluation into a linear jaxpr + its transposition, so one
// JVP rule and one transpose rule per primitive give both modes. Integer and bool inputs get zero tangents;
// their cotangents come back as zeros of their own dtype (JAX returns float0 arrays there).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/callable.h"
#include "jitx/pytree.h"

namespace jitx {

/// The identity whose derivative is zero (JAX's lax.stop_gradient).
Array stop_gradient(const Array& x, Loc loc = Loc::current());

/// grad/value_and_grad options: which positional arguments to differentiate (grad(f, argnums<0, 2>)) and
/// whether f returns (value, aux) (grad(f, has_aux)).
template <int... I>
struct ArgNums {};
template <int... I>
inline constexpr ArgNums<I...> argnums{};
struct HasAux {};
inline constexpr HasAux has_aux{};
/// custom_jvp option (JAX's symbolic_zeros=True): the rule sees an empty (invalid) Array, not instantiated zeros,
/// for the tangent of an argument that is not being differentiated, and may return an empty Array for an output
/// tangent that is zero (custom_jvp(f, rule, symbolic_zeros)).
struct SymbolicZeros {};
inline constexpr SymbolicZeros symbolic_zeros{};

/// What a checkpointed function's forward pass may save for the backward pass (JAX's checkpoint_policies):
/// saveable(primitive name) says whether a value computed by that primitive may be saved. The function's
/// inputs are always available; every other residual is recomputed in the backward pass.
struct CheckpointPolicy {
  std::string name;
  std::function<bool(std::string_view primitive)> saveable;
};
namespace checkpoint_policies {
/// Save nothing: recompute every intermediate (JAX's default for checkpoint).
inline const CheckpointPolicy nothing_saveable{"nothing_saveable", [](std::string_view) { return false; }};
/// Save everything (as without checkpoint).
inline const CheckpointPolicy everything_saveable{"everything_saveable", [](std::string_view) { return true; }};
/// Save the results of matrix products (dot_general); recompute the cheap elementwise work around them.
inline const CheckpointPolicy dots_saveable{"dots_saveable",
                                            [](std::string_view p) { return p == "dot_general"; }};
}  // namespace checkpoint_policies

namespace detail {
struct Linearized;
using LeafFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const std::string& name, const LeafFn& fn,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);
std::shared_ptr<Linearized> linearize_flat(const std::string& name, const LeafFn& fn,
                                           const std::vector<Array>& primals, std::vector<bool> diff);
std::vector<Array> linearized_primals_out(const Linearized& lin);
std::vector<Array> linearized_jvp(const Linearized& lin, const std::vector<Array>& tangents);
std::vector<Array> linearized_vjp(const Linearized& lin, const std::vector<Array>& cts, bool zeros_for_all = true);
/// Throws the TypeError of autodiff's argument checks: "[op] msg (at the caller's file:line)".
[[noreturn]] void grad_error(const std::string& op, const std::string& msg, const Loc& loc);
[[noreturn]] void grad_error(const std::string& op, const std::string& msg);
/// Keeps loc as the call site of errors raised during its lifetime (a transformation's own checks).
std::shared_ptr<void> call_site_scope(const Loc& loc);
/// The ones cotangent grad seeds with: weak when the value is, as JAX's (grad of a weak input is weak).
Array grad_seed(const Array& value);
Array zeros_like_aval(const ShapedArray& aval);

template <class T>
std::vector<Array> output_leaves(const T& v) {
  Flattener f;
  f.trace_scalars = false;
  PyTree<T>::flatten(v, f, "out");
  return f.leaves;
}
template <class T>
T replace_leaves(T v, const std::vector<Array>& leaves) {
  Rebuilder r{&leaves};
  PyTree<T>::replace(v, r);
  return v;
}

/// Calls f on its arguments' leaves: numbers are traced when f takes Arrays for them (as jit does).
template <class F, class... Args>
struct FlatCall {
  static constexpr bool S =
      std::is_invocable_v<const F&, typename PyTree<std::decay_t<Args>>::template traced<true>...>;
  template <class A>
  static size_t count(const A& a) {
    Flattener f;
    f.trace_scalars = S;
    PyTree<A>::flatten(a, f, "");
    return f.leaves.size();
  }
  static std::vector<Array> leaves(const Args&... args) {
    Flattener f;
    f.trace_scalars = S;
    size_t i = 0;
    (PyTree<Args>::flatten(args, f, "args[" + std::to_string(i++) + "]"), ...);
    return f.leaves;
  }
  static std::string structure(const Args&... args) {
    Flattener f;
    f.trace_scalars = S;
    (PyTree<Args>::flatten(args, f, ""), ...);
    return f.structure;
  }
  static auto call(const F& f, const std::vector<Array>& leaves, const Args&... args) {
    if constexpr (!check_call<Api::transform, F, Args...>()) {
      return Array();  // not reached: check_call's static_assert failed (and names the mistake)
    } else {
      Rebuilder r{&leaves};
      // Braced initialisation rebuilds the arguments left to right.
      return std::apply(f, std::tuple<typename PyTree<Args>::template traced<S>...>{
                               PyTree<Args>::template rebuild<S>(args, r)...});
    }
  }
  using Result = decltype(call(std::declval<const F&>(), std::declval<const std::vector<Array>&>(),
                               std::declval<const Args&>()...));
  /// The arguments' structure with the given leaves (a tuple of rebuilt arguments).
  static auto rebuild(const std::vector<Array>& leaves, const Args&... args) {
    Rebuilder r{&leaves};
    return std::tuple<typename PyTree<Args>::template traced<S>...>{PyTree<Args>::template rebuild<S>(args, r)...};
  }
};

/// custom_jvp/custom_vjp cores over flat leaves: the user's rules apply when a JVP trace sees the call.
using CustomJvpRule = std::function<std::pair<std::vector<Array>, std::vector<Array>>(
    const std::vector<Array>& primals, const std::vector<Array>& tangents)>;
/// With symbolic_zeros, the rule gets an empty Array for each tangent that is zero (else zeros of the primal's type).
std::vector<Array> custom_jvp_call(const LeafFn& fn, const CustomJvpRule& rule, const std::vector<Array>& args,
                                   bool symbolic_zeros = false);
using CustomFwd = std::function<std::pair<std::vector<Array>, std::vector<Array>>(const std::vector<Array>& primals)>;
using CustomBwd = std::function<std::vector<Array>(const std::vector<Array>& residuals, const std::vector<Array>& cts)>;
std::vector<Array> custom_vjp_call(const LeafFn& fn, const CustomFwd& fwd, const CustomBwd& bwd,
                                   const std::vector<Array>& args);

/// checkpoint's core over flat leaves: under reverse mode it saves the residuals the policy allows and
/// recomputes the others in the backward pass; otherwise it calls fn.
std::vector<Array> checkpoint_call(const LeafFn& fn, const CheckpointPolicy& policy, const std::vector<Array>& args);

/// f as a function of its arguments' leaves (C is its FlatCall); the first call's result is kept in skeleton,
/// to rebuild the output's structure around the final leaves.
template <class C, class F, class R, class... Args>
LeafFn leaf_fn(const F& f, std::optional<R>& skeleton, const Args&... args) {
  return [&f, &skeleton, &args...](const std::vector<Array>& l) {
    R r = C::call(f, l, args...);
    auto outs = output_leaves(r);
    if (!skeleton) skeleton.emplace(std::move(r));
    return outs;
  };
}

template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};
}  // namespace detail

/// jvp(f, primals, tangents) -> (f(primals...), the directional derivative along tangents); primals and
/// tangents are tuples of f's arguments (a single non-tuple argument may be passed as itself).
template <class F, class... Args>
auto jvp(const F& f, const std::tuple<Args...>& primals, const std::tuple<Args...>& tangents,
         Loc loc = Loc::current()) {
  if constexpr (detail::TrailingLoc<std::decay_t<F>>::value) {
    return jvp(detail::adapt_callable(f, loc), primals, tangents, loc);
  } else {
    using C = detail::FlatCall<F, Args...>;
    using R = typename C::Result;
    auto px = std::apply([](const auto&... a) { return C::leaves(a...); }, primals);
    auto tx = std::apply([](const auto&... a) { return C::leaves(a...); }, tangents);
    auto ps = std::apply([](const auto&... a) { return C::structure(a...); }, primals);
    auto ts = std::apply([](const auto&... a) { return C::structure(a...); }, tangents);
    if (ps != ts || px.size() != tx.size())
      detail::grad_error("jvp", "primals and tangents must have the same tree structure, got " + ps + " and " + ts,
                         loc);
    for (size_t i = 0; i < px.size(); ++i)
      if (px[i].shape() != tx[i].shape() || (is_floating(px[i].dtype()) && px[i].dtype() != tx[i].dtype()))
        detail::grad_error("jvp", "primal and tangent leaf " + std::to_string(i) + " must have the same type, got " +
                               px[i].aval().str() + " and " + tx[i].aval().str(),
                           loc);
    std::optional<R> skeleton;
    detail::LeafFn fn = [&](const std::vector<Array>& leaves) {
      R r = std::apply([&](const auto&... a) { return C::call(f, leaves, a...); }, primals);
      auto outs = detail::output_leaves(r);
      skeleton.emplace(std::move(r));
      return outs;
    };
    auto [outs, touts] = detail::jvp_flat("jvp", fn, px, tx);
    for (size_t i = 0; i < touts.size(); ++i)
      if (!touts[i].valid()) touts[i] = detail::zeros_like_aval(outs[i].aval());
    return std::pair<R, R>{detail::replace_leaves(*skeleton, outs), detail::replace_leaves(*skeleton, touts)};
  }
}
template <class F, class P>
  requires(!detail::is_tuple<P>::value)
auto jvp(const F& f, const P& primal, const P& tangent, Loc loc = Loc::current()) {
  return jvp(f, std::tuple<P>{primal}, std::tuple<P>{tangent}, loc);
}

/// The function that maps tangents of the inputs to tangents of the outputs at a fixed point (linearize).
template <class C, class R, class... Args>
class LinearizedFn {
 public:
  LinearizedFn(std::shared_ptr<detail::Linearized> lin, R skeleton, std::tuple<Args...> args)
      : lin_(std::move(lin)), skeleton_(std::move(skeleton)), args_(std::move(args)) {}
  template <class... T>
  R operator()(const T&... tangents) const {
    auto leaves = C::leaves(tangents...);
    return detail::replace_leaves(skeleton_, detail::linearized_jvp(*lin_, leaves));
  }

 private:
  std::shared_ptr<detail::Linearized> lin_;
  R skeleton_;
  std::tuple<Args...> args_;
};

/// The function that maps an output cotangent to the inputs' cotangents (a tuple, one per argument).
template <class C, class R, class... Args>
class VjpFn {
 public:
  VjpFn(std::shared_ptr<detail::Linearized> lin, std::tuple<Args...> args)
      : lin_(std::move(lin)), args_(std::move(args)) {}
  auto operator()(const R& ct, Loc loc = Loc::current()) const {
    auto scope = detail::call_site_scope(loc);
    auto cts = detail::linearized_vjp(*lin_, detail::output_leaves(ct));
    return std::apply([&](const auto&... a) { return C::rebuild(cts, a...); }, args_);
  }

 private:
  std::shared_ptr<detail::Linearized> lin_;
  std::tuple<Args...> args_;
};

namespace detail {
/// Traces f at args, every leaf differentiated: (f's result, with its primal outputs, and the linearization).
/// The shared body of linearize and vjp.
template <class C, class R, class F, class... Args>
std::pair<R, std::shared_ptr<Linearized>> linearize_call(const std::string& name, const F& f, const Args&... args) {
  auto leaves = C::leaves(args...);
  std::optional<R> skeleton;
  LeafFn fn = [&](const std::vector<Array>& l) {
    R r = C::call(f, l, args...);
    auto outs = output_leaves(r);
    skeleton.emplace(std::move(r));
    return outs;
  };
  auto lin = linearize_flat(name, fn, leaves, std::vector<bool>(leaves.size(), true));
  R out = replace_leaves(*skeleton, linearized_primals_out(*lin));
  return {std::move(out), std::move(lin)};
}
}  // namespace detail

/// linearize(f, primals...) -> (f(primals...), f_jvp) where f_jvp(tangents...) is the JVP at primals,
/// evaluated from a linear jaxpr without re-running f.
template <class F, class... Args>
auto linearize(const F& f, const Args&... args) {
  if constexpr (detail::TrailingLoc<std::decay_t<F>>::value) {
    return linearize(detail::adapt_callable(f, Loc::current()), args...);
  } else {
    using C = detail::FlatCall<F, Args...>;
    using R = typename C::Result;
    auto [out, lin] = detail::linearize_call<C, R>("linearize", f, args...);
    using L = LinearizedFn<C, R, Args...>;
    return std::pair<R, L>{out, L(lin, out, std::tuple<Args...>(args...))};
  }
}

/// vjp(f, primals...) -> (f(primals...), vjp_fn) where vjp_fn(cotangent of the output) returns a tuple of
/// cotangents, one per argument, each with its argument's structure.
template <class F, class... Args>
auto vjp(const F& f, const Args&... args) {
  if constexpr (detail::TrailingLoc<std::decay_t<F>>::value) {
    return vjp(detail::adapt_callable(f, Loc::current()), args...);
  } else {
    using C = detail::FlatCall<F, Args...>;
    using R = typename C::Result;
    auto [out, lin] = detail::linearize_call<C, R>("vjp", f, args...);
    return std::pair<R, VjpFn<C, R, Args...>>{out, VjpFn<C, R, Args...>(lin, std::tuple<Args...>(args...))};
  }
}

namespace detail {
template <bool Aux, class R>
struct ValueType {
  using type = R;
};
template <class R>
struct ValueType<true, R> {
  using type = std::decay_t<std::tuple_element_t<0, R>>;
};

/// value_and_grad's work: returns (value or (value, aux), grads for argnums I...).
template <bool Aux, int... I, class F, class... Args>
auto value_and_grad_impl(const F& f, const std::string& name, const Loc& loc, const Args&... args) {
  using C = FlatCall<F, Args...>;
  using R = typename C::Result;
  static_assert(sizeof...(I) > 0, "grad needs at least one argnum");
  static_assert(((I >= 0 && I < static_cast<int>(sizeof...(Args))) && ...), "grad: an argnum is out of range");
  auto leaves = C::leaves(args...);
  std::vector<size_t> counts{C::count(args)...};
  std::vector<bool> diff(leaves.size(), false);
  size_t start = 0;
  for (size_t a = 0; a < counts.size(); ++a) {
    bool wanted = ((static_cast<int>(a) == I) || ...);
    for (size_t k = start; k < start + counts[a]; ++k) {
      if (wanted && !is_floating(leaves[k].dtype()))
        grad_error(name, "requires real-valued (floating) inputs, but argument " + std::to_string(a) +
                   " has a leaf of type " + leaves[k].aval().str() +
                       "; use vjp (integer inputs get zero cotangents), or convert the input to a float dtype",
                   loc);
      diff[k] = wanted;
    }
    start += counts[a];
  }
  std::optional<R> skeleton;
  LeafFn fn = [&](const std::vector<Array>& l) {
    R r = C::call(f, l, args...);
    std::vector<Array> outs;
    if constexpr (Aux) {
      outs = output_leaves(std::get<0>(r));
      auto aux = output_leaves(std::get<1>(r));
      outs.insert(outs.end(), aux.begin(), aux.end());
    } else {
      outs = output_leaves(r);
    }
    skeleton.emplace(std::move(r));
    return outs;
  };
  auto lin = linearize_flat(name, fn, leaves, diff);
  auto outs = linearized_primals_out(*lin);
  const Array& value = outs[0];
  static_assert(std::is_same_v<typename ValueType<Aux, R>::type, Array>,
                "grad: f must return an Array (or a pair (Array, aux) with has_aux)");
  if (value.ndim() != 0)
    grad_error(name, "is only defined for scalar-output functions; the output has type " + value.aval().str() +
                   " (use vjp or jacobians for non-scalar outputs)",
               loc);
  if (!is_floating(value.dtype()))
    grad_error(name, "requires a real-valued (floating) output, got " + value.aval().str(), loc);
  std::vector<Array> cts(outs.size());
  cts[0] = grad_seed(value);
  auto all = linearized_vjp(*lin, cts, /*zeros_for_all=*/false);
  auto rebuilt = C::rebuild(all, args...);
  auto grads = [&] {
    if constexpr (sizeof...(I) == 1) return std::get<I...>(rebuilt);
    else return std::make_tuple(std::get<I>(rebuilt)...);
  }();
  if constexpr (Aux) {
    using A = std::decay_t<decltype(std::get<1>(*skeleton))>;
    std::vector<Array> aux_leaves(outs.begin() + 1, outs.end());
    A aux = replace_leaves(std::get<1>(*skeleton), aux_leaves);
    return std::make_pair(std::make_pair(value, aux), grads);
  } else {
    return std::make_pair(value, grads);
  }
}

template <class F, bool Aux, bool WithValue, int... I>
struct GradFn {
  F f;
  Loc loc;  // where grad(f) was written: grad's own errors name it
  template <class... Args>
  auto operator()(const Args&... args) const {
    auto r = value_and_grad_impl<Aux, I...>(f, WithValue ? "value_and_grad" : "grad", loc, args...);
    if constexpr (WithValue) return r;
    else if constexpr (Aux) return std::make_pair(r.second, r.first.second);  // (grad, aux), as JAX
    else return r.second;
  }
};
}  // namespace detail

/// grad(f): the gradient of a scalar-valued f with respect to its first argument (argnums<...> for others;
/// several argnums give a tuple). With has_aux, f returns (value, aux) and grad returns (gradient, aux).
template <class F>
auto grad(F f, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, false, false, 0>{detail::adapt_callable(std::move(f), loc), loc};
}
template <class F, int... I>
auto grad(F f, ArgNums<I...>, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, false, false, I...>{detail::adapt_callable(std::move(f), loc), loc};
}
template <class F>
auto grad(F f, HasAux, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, true, false, 0>{detail::adapt_callable(std::move(f), loc), loc};
}
template <class F, int... I>
auto grad(F f, ArgNums<I...>, HasAux, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, true, false, I...>{detail::adapt_callable(std::move(f), loc), loc};
}

/// value_and_grad(f): (f(args...), grad(f)(args...)) from one forward and one backward pass; with has_aux,
/// ((value, aux), gradient).
template <class F>
auto value_and_grad(F f, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, false, true, 0>{detail::adapt_callable(std::move(f), loc), loc};
}
template <class F, int... I>
auto value_and_grad(F f, ArgNums<I...>, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, false, true, I...>{detail::adapt_callable(std::move(f), loc), loc};
}
template <class F>
auto value_and_grad(F f, HasAux, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, true, true, 0>{detail::adapt_callable(std::move(f), loc), loc};
}
template <class F, int... I>
auto value_and_grad(F f, ArgNums<I...>, HasAux, Loc loc = Loc::current()) {
  return detail::GradFn<detail::Adapted<F>, true, true, I...>{detail::adapt_callable(std::move(f), loc), loc};
}

namespace detail {
/// The primal closure of CustomJvp and CustomVjp: calls the held function on leaves, rebuilt with the held
/// arguments' structure, and keeps the first result as the output skeleton. It owns what it uses, for a jaxpr that
/// keeps it after the call (a cond branch's custom_jvp_call).
template <class C, class R, class F, class... Args>
LeafFn held_leaf_fn(std::shared_ptr<const F> f, std::shared_ptr<std::optional<R>> skeleton,
                    std::shared_ptr<const std::tuple<Args...>> held) {
  return [f, skeleton, held](const std::vector<Array>& l) {
    R r = std::apply([&](const Args&... a) { return C::call(*f, l, a...); }, *held);
    auto outs = output_leaves(r);
    if (!*skeleton) skeleton->emplace(std::move(r));
    return outs;
  };
}
}  // namespace detail

/// A function with a user JVP rule (JAX's custom_jvp): rule(primals, tangents) -> (output, output tangent),
/// primals and tangents being tuples of the arguments. Reverse mode transposes the rule's (linear) tangent.
template <class F, class Rule>
class CustomJvp {
 public:
  CustomJvp(F f, Rule rule, bool symbolic_zeros = false)
      : f_(std::move(f)), rule_(std::move(rule)), symbolic_zeros_(symbolic_zeros) {}
  template <class... Args>
  auto operator()(const Args&... args) const {
    using C = detail::FlatCall<F, Args...>;
    using R = typename C::Result;
    // The closures own what they use (the function, the rule, a copy of the arguments for their structure, a
    // shared skeleton): a jaxpr traced during the call (a cond branch's custom_jvp_call) keeps them after it.
    auto skeleton = std::make_shared<std::optional<R>>();
    auto held = std::make_shared<const std::tuple<Args...>>(args...);
    auto f = std::make_shared<const F>(f_);
    auto rule_fn = std::make_shared<const Rule>(rule_);
    detail::LeafFn fn = detail::held_leaf_fn<C>(f, skeleton, held);
    detail::CustomJvpRule rule = [rule_fn, skeleton, held](const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents) {
      auto [out, tout] = std::apply(
          [&](const Args&... a) { return (*rule_fn)(C::rebuild(primals, a...), C::rebuild(tangents, a...)); }, *held);
      auto outs = detail::output_leaves(out), touts = detail::output_leaves(tout);
      if (!*skeleton) skeleton->emplace(std::move(out));
      return std::make_pair(outs, touts);
    };
    auto outs = detail::custom_jvp_call(fn, rule, C::leaves(args...), symbolic_zeros_);
    return detail::replace_leaves(**skeleton, outs);
  }

 private:
  F f_;
  Rule rule_;
  bool symbolic_zeros_;
};
template <class F, class Rule>
auto custom_jvp(F f, Rule rule) {
  return CustomJvp<F, Rule>(std::move(f), std::move(rule));
}
template <class F, class Rule>
auto custom_jvp(F f, Rule rule, SymbolicZeros) {
  return CustomJvp<F, Rule>(std::move(f), std::move(rule), true);
}

/// A function with a user VJP (JAX's custom_vjp): fwd(args...) -> (output, residuals), bwd(residuals,
/// output cotangent) -> a tuple with one cotangent per argument. Forward mode (jvp) of it throws, as in JAX.
template <class F, class Fwd, class Bwd>
class CustomVjp {
 public:
  CustomVjp(F f, Fwd fwd, Bwd bwd) : f_(std::move(f)), fwd_(std::move(fwd)), bwd_(std::move(bwd)) {}
  template <class... Args>
  auto operator()(const Args&... args) const {
    using C = detail::FlatCall<F, Args...>;
    using R = typename C::Result;
    using FwdOut = decltype(std::apply(fwd_, C::rebuild(std::declval<const std::vector<Array>&>(), args...)));
    using Res = std::decay_t<std::tuple_element_t<1, FwdOut>>;
    // As CustomJvp's: the closures own what they use, for a jaxpr that keeps them after the call.
    auto skeleton = std::make_shared<std::optional<R>>();
    auto res_skeleton = std::make_shared<std::optional<Res>>();
    auto held = std::make_shared<const std::tuple<Args...>>(args...);
    auto f = std::make_shared<const F>(f_);
    auto fwd_fn = std::make_shared<const Fwd>(fwd_);
    auto bwd_fn = std::make_shared<const Bwd>(bwd_);
    detail::LeafFn fn = detail::held_leaf_fn<C>(f, skeleton, held);
    detail::CustomFwd fwd = [fwd_fn, skeleton, res_skeleton, held](const std::vector<Array>& primals) {
      auto [out, res] = std::apply(
          [&](const Args&... a) { return std::apply(*fwd_fn, C::rebuild(primals, a...)); }, *held);
      auto outs = detail::output_leaves(out), rs = detail::output_leaves(res);
      if (!*skeleton) skeleton->emplace(std::move(out));
      res_skeleton->emplace(std::move(res));
      return std::make_pair(outs, rs);
    };
    detail::CustomBwd bwd = [bwd_fn, skeleton, res_skeleton](const std::vector<Array>& res,
                                                             const std::vector<Array>& cts) {
      auto ct_in = (*bwd_fn)(detail::replace_leaves(**res_skeleton, res), detail::replace_leaves(**skeleton, cts));
      detail::Flattener fl;
      fl.trace_scalars = C::S;
      PyTree<decltype(ct_in)>::flatten(ct_in, fl, "bwd");
      return fl.leaves;
    };
    auto outs = detail::custom_vjp_call(fn, fwd, bwd, C::leaves(args...));
    return detail::replace_leaves(**skeleton, outs);
  }

 private:
  F f_;
  Fwd fwd_;
  Bwd bwd_;
};
template <class F, class Fwd, class Bwd>
auto custom_vjp(F f, Fwd fwd, Bwd bwd) {
  return CustomVjp<F, Fwd, Bwd>(std::move(f), std::move(fwd), std::move(bwd));
}

/// f with rematerialisation (JAX's checkpoint / remat): the same values and derivatives, but under reverse
/// mode (vjp, grad) only the residuals the policy allows are saved by the forward pass; the others are
/// recomputed from f's inputs in the backward pass, trading compute for memory. Checkpoint each layer of a
/// deep network to keep only the layer inputs alive between the passes.
template <class F>
class Checkpointed {
 public:
  Checkpointed(F f, CheckpointPolicy policy) : f_(std::move(f)), policy_(std::move(policy)) {}
  template <class... Args>
  auto operator()(const Args&... args) const {
    using C = detail::FlatCall<F, Args...>;
    std::optional<typename C::Result> skeleton;
    auto outs = detail::checkpoint_call(detail::leaf_fn<C>(f_, skeleton, args...), policy_, C::leaves(args...));
    return detail::replace_leaves(*skeleton, outs);
  }

 private:
  F f_;
  CheckpointPolicy policy_;
};
template <class F>
auto checkpoint(F f, CheckpointPolicy policy = checkpoint_policies::nothing_saveable, Loc loc = Loc::current()) {
  return Checkpointed<detail::Adapted<F>>(detail::adapt_callable(std::move(f), loc), std::move(policy));
}
/// JAX's other name for checkpoint.
template <class F>
auto remat(F f, CheckpointPolicy policy = checkpoint_policies::nothing_saveable, Loc loc = Loc::current()) {
  return Checkpointed<detail::Adapted<F>>(detail::adapt_callable(std::move(f), loc), std::move(policy));
}

/// stop_gradient over a pytree of Arrays.
template <class T>
  requires(!std::is_same_v<T, Array>)
T stop_gradient(const T& tree) {
  auto leaves = tree_leaves(tree);
  for (auto& l : leaves) l = stop_gradient(l);
  return detail::replace_leaves(tree, leaves);
}

}  // namespace jitx
