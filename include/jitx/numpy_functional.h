// jitx::numpy, the functional part of jnp: vectorize (generalised ufuncs with broadcasting, through vmap),
// apply_along_axis, apply_over_axes and piecewise, with JAX's semantics: each is a vmap (piecewise a vmap of
// lax::switch_, so every branch runs on every element and a select picks, as under JAX's vectorize), never a
// C++ loop over elements. src/api/numpy_functional.cpp holds the non-template parts.
//
//   auto cross = jnp::vectorize([](const Array& a, const Array& b) { ... }, "(k),(k)->(k)");
//   Array c = cross(a, b);                        // a: (2, 3), b: (3,) -> (2, 3)
//   Array s = jnp::apply_along_axis([](const Array& r) { return jnp::sum(r * r); }, 1, x);
//   Array y = jnp::piecewise(x, {x < 0, x > 1}, {0.0, [](const Array& t) { return t * t; }, 1.0});
#pragma once
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jitx/numpy.h"
#include "jitx/tree_util.h"
#include "jitx/vmap.h"

namespace jitx::detail {
/// What vectorize does with its arguments: each argument's size-1 loop dimensions squeezed away, the vmap in_axes
/// of every loop level (innermost, i.e. the last loop dimension, first), the loop dimensions no argument maps
/// (expanded into the results afterwards), and the signature's core dimensions for checking the outputs.
struct VectorizePlan {
  std::vector<Array> args;
  std::vector<std::vector<Axis>> level_axes;
  std::vector<int64_t> dims_to_expand;
  bool has_signature = false;
  std::vector<std::vector<std::string>> out_core;
  std::vector<std::pair<std::string, int64_t>> dim_sizes;
  std::string context;  // "on vectorized function with signature=..."
};
VectorizePlan vectorize_plan(const std::optional<std::string>& signature, std::vector<Array> args, const Loc& loc);
/// Checks f's output leaves (inside the innermost vmap, so their shapes are one example's) against the signature.
void vectorize_check_outputs(const VectorizePlan& plan, const std::vector<Array>& outs, const Loc& loc);
/// The nested vmaps over plan's levels of inner (which takes one example's arguments), then the expansion.
std::vector<Array> vectorize_run(const std::function<std::vector<Array>(const std::vector<Array>&)>& inner,
                                 const VectorizePlan& plan, const Loc& loc);

template <class F>
struct VectorizeFn {
  F f;
  std::optional<std::string> signature;
  Loc loc;

  template <class... A>
  auto operator()(const A&... args) const {
    constexpr size_t N = sizeof...(A);
    std::vector<Array> xs{Array(args)...};
    VectorizePlan plan = vectorize_plan(signature, std::move(xs), loc);
    using R = std::decay_t<std::invoke_result_t<const F&, decltype((void)sizeof(A), std::declval<const Array&>())...>>;
    auto def = std::make_shared<std::optional<tree_util::PyTreeDef<R>>>();
    auto inner = [this, &plan, def](const std::vector<Array>& v) -> std::vector<Array> {
      R r = [&]<size_t... I>(std::index_sequence<I...>) { return f(v[I]...); }
      (std::make_index_sequence<N>{});
      auto [leaves, d] = tree_util::tree_flatten(r);
      vectorize_check_outputs(plan, leaves, loc);
      def->emplace(std::move(d));
      return leaves;
    };
    std::vector<Array> outs = vectorize_run(inner, plan, loc);
    return tree_util::tree_unflatten(**def, outs);
  }
};
}  // namespace jitx::detail

namespace jitx::numpy {

/// jnp.vectorize: f, written for one example (scalars, or the core shapes of a generalised-ufunc signature such as
/// "(m,n),(n)->(m)"), applied over the broadcast leading (loop) dimensions of its arguments by nested vmaps, as
/// JAX does (size-1 loop dimensions are not materialised). f takes Arrays and returns an Array or a pytree of them
/// (a std::tuple for several outputs of a signature). Without a signature, f's outputs may have any shape; with
/// one, their core shapes are checked (ValueError-style ShapeError naming the signature). JAX's `excluded` is what
/// a C++ capture does.
template <class F>
auto vectorize(F f, std::optional<std::string> signature = std::nullopt, Loc loc = Loc::current()) {
  return detail::VectorizeFn<F>{std::move(f), std::move(signature), loc};
}

/// func1d applied to every 1-D slice of arr along axis (a vmap over the other axes, as JAX's): the slices'
/// results, of any rank, take axis's place.
Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int64_t axis, const Array& arr,
                       Loc loc = Loc::current());

/// func(a, axis) for each axis in turn, the result keeping a's rank (a result one rank lower gets axis back as a
/// size-1 dimension); as JAX's, for reductions such as `[](const Array& x, int64_t ax) { return jnp::sum(x, ax); }`.
Array apply_over_axes(const std::function<Array(const Array&, int64_t)>& func, const Array& a,
                      const std::vector<int64_t>& axes, Loc loc = Loc::current());

/// One entry of piecewise's funclist: a function of one element (called on scalars of x's dtype, as under JAX's
/// vectorize; its result is cast to x's dtype) or a constant.
struct Piece {
  std::function<Array(const Array&)> fn;
  std::optional<Array> value;
  Piece(double v) : value(Array(v)) {}  // NOLINT(google-explicit-constructor)
  Piece(const Array& v) : value(v) {}   // NOLINT(google-explicit-constructor)
  template <std::integral T>
  Piece(T v) : value(Array(static_cast<int64_t>(v))) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires(std::is_invocable_r_v<Array, const F&, const Array&> && !std::is_convertible_v<F, Array> &&
           !std::is_arithmetic_v<F>) Piece(F f)
      : fn(std::move(f)) {}  // NOLINT(google-explicit-constructor)
};

/// jnp.piecewise: where condlist[i] holds, funclist[i] of x (the last true condition wins); where none holds,
/// funclist's extra last entry if it has len(condlist) + 1 entries, else 0. condlist's entries broadcast with x
/// (a scalar condition selects for all of x). The result has x's dtype and the broadcast shape.
Array piecewise(const Array& x, const std::vector<Array>& condlist, const std::vector<Piece>& funclist,
                Loc loc = Loc::current());
}  // namespace jitx::numpy
namespace jitx::detail {
Array piecewise_array(const Array& x, const Array& condlist, const std::vector<numpy::Piece>& funclist, const Loc& loc);
}
namespace jitx::numpy {
/// condlist as one array whose leading axis enumerates the conditions (as JAX's asarray(condlist)). A template, so
/// that a braced `{cond}` still means a list of one condition (the overload above), as JAX's `[cond]`.
template <class C>
requires std::same_as<C, Array> Array piecewise(const Array& x, const C& condlist, const std::vector<Piece>& funclist,
                                                Loc loc = Loc::current()) {
  return detail::piecewise_array(x, condlist, funclist, loc);
}

}  // namespace jitx::numpy
