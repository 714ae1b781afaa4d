// jitx::lax control flow: cond, switch_, while_loop, fori_loop and scan over pytrees (traced once, run as real loops).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/callable.h"
#include "jitx/pytree.h"

namespace jitx::lax {

struct ScanOptions {
  std::optional<int64_t> length;  // required when xs has no leaves; else must match xs' leading axis
  bool reverse = false;           // iterate from the last slice to the first (ys are still stacked in xs' order)
  int64_t unroll = 1;             // steps per compiled loop iteration
};

}  // namespace jitx::lax

namespace jitx::detail {

/// A pytree's shape without its leaves: the structure string and each leaf's path.
struct TreeInfo {
  std::string structure;
  std::vector<std::string> paths;
};

/// What a traced user function returned, flattened: its leaves and one TreeInfo per part (scan: carry, ys).
struct FlatResult {
  std::vector<Array> leaves;
  std::vector<TreeInfo> parts;
  std::vector<size_t> part_sizes;
};
using FlatFn = std::function<FlatResult(const std::vector<Array>&)>;

std::vector<Array> cond_impl(std::string_view op, const Array& index, const std::vector<FlatFn>& branches,
                             const std::vector<std::string>& branch_names, const std::vector<Array>& operands,
                             const Loc& loc);
std::vector<Array> while_impl(const FlatFn& cond_fn, const FlatFn& body_fn, const std::vector<Array>& init,
                              const TreeInfo& init_tree, const Loc& loc);
std::vector<Array> scan_impl(const FlatFn& f, const std::vector<Array>& init, const TreeInfo& init_tree,
                             const std::vector<Array>& xs, const lax::ScanOptions& options, const Loc& loc);
/// cond's predicate as the int32 branch index (checks: scalar, bool); switch_'s index clamped to [0, n).
Array cond_index(const Array& pred, const Loc& loc);
Array switch_index(const Array& index, int64_t num_branches, const Loc& loc);
/// Whether a is a concrete (non-tracer) array; fori_loop picks scan for concrete bounds.
bool is_concrete(const Array& a);
/// fori_loop's bounds, checked as JAX's (equal dtypes, or signed integers of which one is weak). Static (concrete)
/// bounds: lo and hi, and lower is the weak index the scan starts from; traced ones: both in their common dtype.
struct ForiBounds {
  bool is_static = false;
  int64_t lo = 0, hi = 0;
  Array lower, upper;
};
ForiBounds fori_bounds(const Array& lower, const Array& upper, const Loc& loc);
/// Opens fori_loop's API scope for the returned object's lifetime, so that an error its scan or while_loop raises
/// also names fori_loop.
std::shared_ptr<void> fori_loop_scope(const Loc& loc);

template <class T>
using Traced = typename PyTree<std::decay_t<T>>::template traced<true>;

/// Flattens v (numbers become weak-typed leaves), appending to leaves; returns its tree.
template <class T>
TreeInfo flatten_tree(const T& v, const std::string& path, std::vector<Array>* leaves) {
  Flattener f;
  f.trace_scalars = true;
  PyTree<T>::flatten(v, f, path);
  if (leaves) leaves->insert(leaves->end(), f.leaves.begin(), f.leaves.end());
  return TreeInfo{f.structure, f.paths};
}

/// v's tree with its leaves replaced, in order, by leaves[pos...].
template <class T>
Traced<T> rebuild_tree(const T& v, const std::vector<Array>& leaves, size_t pos = 0) {
  Rebuilder r{&leaves, pos};
  return PyTree<T>::template rebuild<true>(v, r);
}

/// Calls f with each operand rebuilt from leaves (in order).
template <class F, class... Ops>
decltype(auto) call_with_leaves(const F& f, const std::vector<Array>& leaves, const Ops&... ops) {
  Rebuilder r{&leaves};
  // Braced initialisation evaluates left to right, so leaves are consumed in order.
  return std::apply(f, std::tuple<Traced<Ops>...>{PyTree<Ops>::template rebuild<true>(ops, r)...});
}

template <class... Ops>
std::vector<Array> operand_leaves(const Ops&... ops) {
  std::vector<Array> leaves;
  size_t i = 0;
  (flatten_tree(ops, fmt::format("operands[{}]", i++), &leaves), ...);
  return leaves;
}

/// A branch of cond/switch_ as a FlatFn; keeps the last result in *skeleton when given.
template <class R, class F, class... Ops>
FlatFn branch_fn(const F& f, std::shared_ptr<std::optional<R>> skeleton, const Ops&... ops) {
  return [&f, skeleton, &ops...](const std::vector<Array>& leaves) {
    auto result = call_with_leaves(f, leaves, ops...);
    FlatResult out;
    out.parts.push_back(flatten_tree(result, "out", &out.leaves));
    out.part_sizes.push_back(out.leaves.size());
    if constexpr (std::is_same_v<std::decay_t<decltype(result)>, R>) {
      if (skeleton) skeleton->emplace(std::move(result));
    }
    return out;
  };
}


/// associative_scan's core over flat leaves.
using AssociativeFn = std::function<std::vector<Array>(const std::vector<Array>&, const std::vector<Array>&)>;
std::vector<Array> associative_scan_flat(const AssociativeFn& fn, std::vector<Array> elems, bool reverse,
                                         int64_t axis, const std::string& op);
}  // namespace jitx::detail

namespace jitx::lax {

namespace impl {
template <class TF, class FF, class... Ops>
auto cond_checked(const ArrayLike& pred, const TF& true_fn, const FF& false_fn, const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<const TF&, detail::Traced<Ops>...>>;
  auto skeleton = std::make_shared<std::optional<R>>();
  Array index = detail::cond_index(pred.value, pred.loc);
  // JAX's order: branches = (false_fn, true_fn), indexed by int(pred).
  std::vector<detail::FlatFn> branches{detail::branch_fn<R>(false_fn, nullptr, operands...),
                                       detail::branch_fn<R>(true_fn, skeleton, operands...)};
  auto outs = detail::cond_impl("cond", index, branches, {"false_fn", "true_fn"}, detail::operand_leaves(operands...),
                                pred.loc);
  return detail::rebuild_tree(**skeleton, outs);
}
}  // namespace impl

/// cond(pred, true_fn, false_fn, operands...): true_fn(operands...) where the scalar bool pred is true, else
/// false_fn(operands...); both are traced once and must return the same types. One `cond` equation.
template <class TF, class FF, class... Ops>
auto cond(const ArrayLike& pred, const TF& true_fn, const FF& false_fn, const Ops&... operands) {
  if constexpr (!detail::check_call<detail::Api::cond, TF, Ops...>() ||
                !detail::check_call<detail::Api::cond, FF, Ops...>()) {
    return Array();  // not reached: a static_assert failed
  } else {
    return impl::cond_checked(pred, true_fn, false_fn, operands...);
  }
}

/// switch_(index, branches, operands...): branches[clamp(index, 0, n-1)](operands...). `branches` is a
/// std::tuple of callables (std::tuple{f0, f1, f2}) or a std::vector of one callable type.
template <class... Fs, class... Ops>
auto switch_(const ArrayLike& index, const std::tuple<Fs...>& branches, const Ops&... operands) {
  static_assert(sizeof...(Fs) >= 1, "switch_ needs at least one branch");
  using F0 = std::tuple_element_t<0, std::tuple<Fs...>>;
  using R = std::decay_t<std::invoke_result_t<const F0&, detail::Traced<Ops>...>>;
  if constexpr (sizeof...(Fs) == 1) {
    (void)detail::switch_index(index.value, 1, index.loc);  // one branch: checked, then called directly (as JAX)
    R r = detail::call_with_leaves(std::get<0>(branches), detail::operand_leaves(operands...), operands...);
    std::vector<Array> leaves;
    detail::flatten_tree(r, "out", &leaves);
    return detail::rebuild_tree(r, leaves);
  } else {
    auto skeleton = std::make_shared<std::optional<R>>();
    Array idx = detail::switch_index(index.value, sizeof...(Fs), index.loc);
    std::vector<detail::FlatFn> fns;
    std::vector<std::string> names;
    [&]<size_t... I>(std::index_sequence<I...>) {
      (fns.push_back(detail::branch_fn<R>(std::get<I>(branches), I == 0 ? skeleton : nullptr, operands...)), ...);
      (names.push_back(fmt::format("branches[{}]", I)), ...);
    }(std::index_sequence_for<Fs...>{});
    auto outs = detail::cond_impl("switch", idx, fns, names, detail::operand_leaves(operands...), index.loc);
    return detail::rebuild_tree(**skeleton, outs);
  }
}

template <class F, class... Ops>
auto switch_(const ArrayLike& index, const std::vector<F>& branches, const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<const F&, detail::Traced<Ops>...>>;
  if (branches.empty()) throw TypeError("[switch] needs at least one branch");
  auto skeleton = std::make_shared<std::optional<R>>();
  Array idx = detail::switch_index(index.value, static_cast<int64_t>(branches.size()), index.loc);
  std::vector<detail::FlatFn> fns;
  std::vector<std::string> names;
  for (size_t i = 0; i < branches.size(); ++i) {
    fns.push_back(detail::branch_fn<R>(branches[i], i == 0 ? skeleton : nullptr, operands...));
    names.push_back(fmt::format("branches[{}]", i));
  }
  auto outs = detail::cond_impl("switch", idx, fns, names, detail::operand_leaves(operands...), index.loc);
  return detail::rebuild_tree(**skeleton, outs);
}

namespace impl {
template <class CF, class BF, class T>
detail::Traced<T> while_checked(const CF& cond_fn, const BF& body_fn, const T& init, Loc loc) {
  std::vector<Array> leaves;
  detail::TreeInfo tree = detail::flatten_tree(init, "carry", &leaves);
  detail::FlatFn c = [&](const std::vector<Array>& args) {
    auto r = cond_fn(detail::rebuild_tree(init, args));
    detail::FlatResult out;
    out.parts.push_back(detail::flatten_tree(r, "cond_fn output", &out.leaves));
    out.part_sizes.push_back(out.leaves.size());
    return out;
  };
  detail::FlatFn b = [&](const std::vector<Array>& args) {
    auto r = body_fn(detail::rebuild_tree(init, args));
    detail::FlatResult out;
    out.parts.push_back(detail::flatten_tree(r, "carry", &out.leaves));
    out.part_sizes.push_back(out.leaves.size());
    return out;
  };
  auto outs = detail::while_impl(c, b, leaves, tree, loc);
  return detail::rebuild_tree(init, outs);
}
}  // namespace impl

/// while_loop(cond_fn, body_fn, init): carry = init; while (cond_fn(carry)) carry = body_fn(carry). The carry is
/// any pytree; body_fn must return the carry's exact types. One `while` equation.
template <class CF, class BF, class T>
detail::Traced<T> while_loop(const CF& cond_fn, const BF& body_fn, const T& init, Loc loc = Loc::current()) {
  if constexpr (!detail::check_call<detail::Api::while_cond, CF, T>() ||
                !detail::check_call<detail::Api::while_body, BF, T>()) {
    throw 0;  // not reached: a static_assert failed
  } else {
    return impl::while_checked(cond_fn, body_fn, init, loc);
  }
}

namespace impl {
template <class F, class C, class X>
auto scan_checked(const F& f, const C& init, const X& xs, ScanOptions options, Loc loc) {
  using Out = std::decay_t<std::invoke_result_t<const F&, detail::Traced<C>, detail::Traced<X>>>;
  using Y = std::decay_t<std::tuple_element_t<1, Out>>;
  std::vector<Array> init_leaves, xs_leaves;
  detail::TreeInfo tree = detail::flatten_tree(init, "carry", &init_leaves);
  detail::flatten_tree(xs, "xs", &xs_leaves);
  auto y_skeleton = std::make_shared<std::optional<Y>>();
  size_t n_carry = init_leaves.size();
  detail::FlatFn body = [&](const std::vector<Array>& args) {
    Out r = f(detail::rebuild_tree(init, args), detail::rebuild_tree(xs, args, n_carry));
    detail::FlatResult out;
    out.parts.push_back(detail::flatten_tree(std::get<0>(r), "carry", &out.leaves));
    out.part_sizes.push_back(out.leaves.size());
    out.parts.push_back(detail::flatten_tree(std::get<1>(r), "ys", &out.leaves));
    out.part_sizes.push_back(out.leaves.size() - out.part_sizes[0]);
    y_skeleton->emplace(std::get<1>(r));
    return out;
  };
  // Slices of xs as the body sees them: the template rebuilds xs' tree over the per-step leaves.
  auto outs = detail::scan_impl(body, init_leaves, tree, xs_leaves, options, loc);
  return std::make_pair(detail::rebuild_tree(init, outs), detail::rebuild_tree(**y_skeleton, outs, n_carry));
}
}  // namespace impl

/// scan(f, init, xs, options) -> (carry, ys): f(carry, x) returns (carry', y) for each slice x of xs along its
/// leading axis; the ys are stacked along a new leading axis. xs may be any pytree (std::tuple<>{} for none, with
/// options.length). One `scan` equation.
template <class F, class C, class X>
auto scan(const F& f, const C& init, const X& xs, ScanOptions options = {}, Loc loc = Loc::current()) {
  if constexpr (!detail::check_call<detail::Api::scan, F, C, X>()) {
    return std::pair<Array, Array>();  // not reached: a static_assert failed
  } else {
    using Out = std::decay_t<std::invoke_result_t<const F&, detail::Traced<C>, detail::Traced<X>>>;
    if constexpr (!detail::is_pair_like<Out>::value) {
      static_assert(detail::is_pair_like<Out>::value,
                    "jitx::lax::scan: a scan body returns (carry, y): return std::pair{new_carry, y}, or "
                    "std::pair{new_carry, std::tuple<>{}} when there is no per-step output");
      return std::pair<Array, Array>();
    } else {
      return impl::scan_checked(f, init, xs, options, loc);
    }
  }
}

namespace impl {
template <class BF, class T>
detail::Traced<T> fori_checked(const Array& lower, const Array& upper, const BF& body_fn, const T& init, Loc loc) {
  auto scope = detail::fori_loop_scope(loc);
  detail::ForiBounds b = detail::fori_bounds(lower, upper, loc);
  if (b.is_static) {
    int64_t lo = b.lo, hi = b.hi;
    auto carry = std::make_pair(b.lower, init);
    auto [c, ys] = scan(
        [&](const std::pair<Array, detail::Traced<T>>& ix, const std::tuple<>&) {
          return std::make_pair(std::make_pair(ix.first + 1, detail::Traced<T>(body_fn(ix.first, ix.second))),
                                std::tuple<>{});
        },
        carry, std::tuple<>{}, ScanOptions{.length = std::max<int64_t>(hi - lo, 0)}, loc);
    return c.second;
  }
  auto carry = std::make_tuple(b.lower, b.upper, init);
  auto out = while_loop([](const auto& c) { return std::get<0>(c) < std::get<1>(c); },
                        [&](const auto& c) {
                          return std::make_tuple(std::get<0>(c) + 1, std::get<1>(c),
                                                 detail::Traced<T>(body_fn(std::get<0>(c), std::get<2>(c))));
                        },
                        carry, loc);
  return std::get<2>(out);
}
}  // namespace impl

/// fori_loop(lower, upper, body_fn, init): for (i = lower; i < upper; ++i) x = body_fn(i, x). With static (C++ or
/// concrete) bounds it is a scan of upper - lower steps; with traced bounds a while_loop.
template <class BF, class T>
detail::Traced<T> fori_loop(const Array& lower, const Array& upper, const BF& body_fn, const T& init,
                            Loc loc = Loc::current()) {
  if constexpr (!detail::check_call<detail::Api::fori, BF, Array, T>()) {
    throw 0;  // not reached: a static_assert failed
  } else {
    return impl::fori_checked(lower, upper, body_fn, init, loc);
  }
}

/// associative_scan(fn, elems, reverse, axis): the inclusive prefix "sums" of elems (a pytree of arrays with one
/// length along axis) under an associative fn(a, b), computed by JAX's parallel-prefix recursion (O(log n)
/// sequential levels of slices, fn calls, pads and concatenations, all differentiable and batchable). fn takes
/// and returns pytrees with elems' structure, each leaf keeping its shape; reverse scans from the end.
template <class F, class T>
detail::Traced<T> associative_scan(const F& fn, const T& elems, bool reverse = false, int64_t axis = 0) {
  auto leaves = tree_leaves(elems);
  detail::AssociativeFn flat = [&](const std::vector<Array>& a, const std::vector<Array>& b) {
    return tree_leaves(fn(detail::rebuild_tree(elems, a), detail::rebuild_tree(elems, b)));
  };
  return detail::rebuild_tree(elems, detail::associative_scan_flat(flat, leaves, reverse, axis, "associative_scan"));
}

}  // namespace jitx::lax
