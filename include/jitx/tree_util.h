// jitx::tree_util: JAX's jax.tree_util over the pytrees jitx knows (Array leaves; std::vector, std::array,
// std::tuple, std::pair, std::map<std::string, T>, std::optional; JITX_PYTREE structs; your PyTree specialisations).
//   auto [leaves, def] = tree_util::tree_flatten(params);       // leaves in JAX's order (map keys sorted)
//   Params p2 = tree_util::tree_unflatten(def, leaves);
//   Params g2 = tree_util::tree_map([](const Array& g) { return g * 0.5; }, grads);
// One difference from JAX, forced by C++'s static types: a C++ number inside a tree (a `double` field, an
// `int` in a tuple) is not a leaf but part of the structure (as a static value), because the tree's type cannot hold
// an Array in its place. Leaves are the tree's Arrays.
#pragma once
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "jitx/array.h"
#include "jitx/error.h"
#include "jitx/pytree.h"

namespace jitx::tree_util {

/// The structure of a pytree of type T (JAX's PyTreeDef): what tree_unflatten rebuilds from leaves.
template <class T>
class PyTreeDef {
 public:
  PyTreeDef(T skeleton, size_t num_leaves, std::string structure, std::vector<std::string> paths)
      : skeleton_(std::move(skeleton)), num_leaves_(num_leaves), structure_(std::move(structure)),
        paths_(std::move(paths)) {}
  size_t num_leaves() const { return num_leaves_; }
  /// The key path of each leaf, as JAX's keystr writes them: "['w']", "[0]", ".b" (a struct's field).
  const std::vector<std::string>& paths() const { return paths_; }
  /// "PyTreeDef(<structure>)": the encoding jit keys its cache by (equal for equal structures).
  std::string str() const { return "PyTreeDef(" + structure_ + ")"; }
  const T& skeleton() const { return skeleton_; }
  bool operator==(const PyTreeDef& o) const { return structure_ == o.structure_; }

 private:
  T skeleton_;
  size_t num_leaves_;
  std::string structure_;
  std::vector<std::string> paths_;
};

namespace detail {
template <class T>
jitx::detail::Flattener flatten(const T& tree) {
  jitx::detail::Flattener f;
  f.trace_scalars = false;  // numbers are static: part of the structure
  PyTree<T>::flatten(tree, f, "");
  return f;
}
/// The structure string without the static values' printed forms, plus them: two trees match when both agree.
inline std::string structure_key(const jitx::detail::Flattener& f) {
  std::string s = f.structure;
  for (auto& v : f.statics) {
    s += '|';
    s += v->str();
  }
  return s;
}
}  // namespace detail

/// The leaves (every Array) in order, and the structure.
template <class T>
std::pair<std::vector<Array>, PyTreeDef<T>> tree_flatten(const T& tree) {
  auto f = detail::flatten(tree);
  size_t n = f.leaves.size();
  std::string key = detail::structure_key(f);
  return {std::move(f.leaves), PyTreeDef<T>(tree, n, std::move(key), std::move(f.paths))};
}
/// The leaves (every Array) in order: depth first, vector/tuple elements in order, map entries by sorted key,
/// struct fields in their JITX_PYTREE order.
template <class T>
std::vector<Array> tree_leaves(const T& tree) {
  return detail::flatten(tree).leaves;
}
/// (key path, leaf) pairs (jax.tree_util.tree_leaves_with_path, with the paths as keystr strings).
template <class T>
std::vector<std::pair<std::string, Array>> tree_leaves_with_path(const T& tree) {
  auto f = detail::flatten(tree);
  std::vector<std::pair<std::string, Array>> out;
  for (size_t i = 0; i < f.leaves.size(); ++i) out.emplace_back(f.paths[i], f.leaves[i]);
  return out;
}
template <class T>
PyTreeDef<T> tree_structure(const T& tree) {
  return tree_flatten(tree).second;
}
/// The tree of `def`'s structure holding `leaves` (TypeError unless there are exactly def.num_leaves()).
template <class T>
T tree_unflatten(const PyTreeDef<T>& def, const std::vector<Array>& leaves) {
  if (leaves.size() != def.num_leaves())
    throw TypeError(fmt::format("[tree_unflatten] the tree structure {} has {} leaves, got {} leaves", def.str(),
                                def.num_leaves(), leaves.size()));
  T out = def.skeleton();
  jitx::detail::Rebuilder r{&leaves};
  PyTree<T>::replace(out, r);
  return out;
}

/// f applied leaf by leaf: f(leaf of tree, matching leaf of each of rest...) -> Array. Every tree in rest must
/// have tree's structure (TypeError naming the first mismatch otherwise). The result has tree's structure.
template <class F, class T, class... Rest>
T tree_map(F&& f, const T& tree, const Rest&... rest) {
  auto [leaves, def] = tree_flatten(tree);
  std::vector<std::vector<Array>> others;
  size_t which = 0;
  auto check = [&](const auto& other) {
    ++which;
    auto [ol, odef] = tree_flatten(other);
    if (odef.str() != def.str())
      throw TypeError(fmt::format("[tree_map] tree {} has a different structure from the first tree: {} vs {}",
                                  which, odef.str(), def.str()));
    others.push_back(std::move(ol));
  };
  (check(rest), ...);
  std::vector<Array> out;
  out.reserve(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    [&]<size_t... I>(std::index_sequence<I...>) { out.push_back(f(leaves[i], others[I][i]...)); }(
        std::index_sequence_for<Rest...>{});
  }
  return tree_unflatten(def, out);
}

/// f(f(f(initializer, leaf0), leaf1), ...) over the leaves in order (jax.tree_util.tree_reduce).
template <class F, class T, class Acc>
Acc tree_reduce(F&& f, const T& tree, Acc initializer) {
  for (const Array& leaf : tree_util::tree_leaves(tree)) initializer = f(std::move(initializer), leaf);
  return initializer;
}

}  // namespace jitx::tree_util
