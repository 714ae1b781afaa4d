// vmap: the vectorising map, with JAX's names and semantics (jax.vmap).
//
// vmap(f, in_axes, out_axes)(args...) computes f on every slice of the mapped arguments along their mapped axes
// and stacks the results along out_axes, without a loop: f is traced once, and every primitive it applies is
// rewritten by its batching rule into one operation over the whole batch. It takes and returns pytrees and
// composes with jit (jit(vmap(f)) traces to a batched jaxpr, vmap(jit(f)) works), with grad (vmap(grad(f)) gives
// per-example gradients, grad of vmap works) and with itself (nested vmap).
#pragma once
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/autodiff.h"
#include "jitx/pytree.h"

namespace jitx {

/// A mapped axis (negative counts from the end), or std::nullopt: not mapped.
using Axis = std::optional<int64_t>;

/// vmap's in_axes. One axis for every argument (`0`, or `std::nullopt` for none: then give axis_size), one per
/// positional argument (`{0, std::nullopt, 1}`, as JAX's tuple), or one per leaf of the flattened arguments
/// (`InAxes::per_leaf({...})`, for arguments that are pytrees with leaves mapped differently).
struct InAxes {
  enum class Kind { kAll, kPerArgument, kPerLeaf };
  Kind kind = Kind::kAll;
  Axis all = 0;
  std::vector<Axis> axes;

  template <std::integral T>
  InAxes(T axis) : all(static_cast<int64_t>(axis)) {}  // NOLINT(google-explicit-constructor)
  InAxes(std::nullopt_t) : all(std::nullopt) {}        // NOLINT(google-explicit-constructor)
  InAxes(std::initializer_list<Axis> per_argument) : kind(Kind::kPerArgument), axes(per_argument) {}
  explicit InAxes(std::vector<Axis> per_argument) : kind(Kind::kPerArgument), axes(std::move(per_argument)) {}
  static InAxes per_leaf(std::vector<Axis> leaves) {
    InAxes a(std::move(leaves));
    a.kind = Kind::kPerLeaf;
    return a;
  }
};

/// vmap's out_axes: one axis for every output leaf (default 0; std::nullopt: the outputs are not mapped, which
/// is only allowed for outputs that do not depend on a mapped input), or one per output leaf (`{0, 1}`).
struct OutAxes {
  bool per_leaf = false;
  Axis all = 0;
  std::vector<Axis> axes;

  template <std::integral T>
  OutAxes(T axis) : all(static_cast<int64_t>(axis)) {}  // NOLINT(google-explicit-constructor)
  OutAxes(std::nullopt_t) : all(std::nullopt) {}        // NOLINT(google-explicit-constructor)
  OutAxes(std::initializer_list<Axis> leaves) : per_leaf(true), axes(leaves) {}
  explicit OutAxes(std::vector<Axis> leaves) : per_leaf(true), axes(std::move(leaves)) {}
};

namespace detail {
/// vmap over flat leaves: checks the axes against the arguments (errors name each argument's path), runs fn
/// under a batch trace and moves (or broadcasts) each output's batch axis to its out axis.
std::vector<Array> vmap_flat(const LeafFn& fn, const std::vector<Array>& leaves, const std::vector<std::string>& paths,
                             const std::vector<int>& leaf_args, size_t num_args, const InAxes& in_axes,
                             const OutAxes& out_axes, std::optional<int64_t> axis_size, const Loc& loc);

template <class F>
struct VmapFn {
  F f;
  InAxes in_axes;
  OutAxes out_axes;
  std::optional<int64_t> axis_size;
  Loc loc;  // where vmap(f) was written: vmap's own errors name it

  template <class... Args>
  auto operator()(const Args&... args) const {
    using C = FlatCall<F, Args...>;
    using R = typename C::Result;
    Flattener fl;
    fl.trace_scalars = C::S;
    int i = 0;
    auto one = [&](const auto& a) {
      fl.current_arg = i;
      PyTree<std::decay_t<decltype(a)>>::flatten(a, fl, "args[" + std::to_string(i) + "]");
      ++i;
    };
    (one(args), ...);
    std::optional<R> skeleton;
    LeafFn fn = [&](const std::vector<Array>& l) {
      R r = C::call(f, l, args...);
      auto outs = output_leaves(r);
      skeleton.emplace(std::move(r));
      return outs;
    };
    auto outs =
        vmap_flat(fn, fl.leaves, fl.paths, fl.leaf_args, sizeof...(Args), in_axes, out_axes, axis_size, loc);
    return replace_leaves(*skeleton, outs);
  }
};
}  // namespace detail

/// vmap(f, in_axes = 0, out_axes = 0, axis_size): f mapped over the in_axes of its arguments, its outputs stacked
/// along out_axes. Unmapped arguments (std::nullopt) are shared by every example; outputs that do not depend on a
/// mapped argument are broadcast, as JAX does. axis_size gives the batch size when no argument is mapped.
template <class F>
auto vmap(F f, InAxes in_axes = 0, OutAxes out_axes = 0, std::optional<int64_t> axis_size = std::nullopt,
          Loc loc = Loc::current()) {
  return detail::VmapFn<detail::Adapted<F>>{detail::adapt_callable(std::move(f), loc), std::move(in_axes),
                                            std::move(out_axes), axis_size, loc};
}

}  // namespace jitx
