// jit's cache key: what a call's signature compiles for (the pytree structure, each leaf's shape, dtype, weak type
// and sharding, static values, the config that changes code), how keys compare, and how a miss is explained
// (JAX's explain_cache_misses). JitCore (jit.cpp) keys its executables on it; a Compiled checks calls against it.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/literal.h"
#include "jitx/jit.h"

namespace jitx::detail {

/// A static argument's array leaf: keyed by its value.
struct StaticLeaf {
  ShapedArray aval;
  Literal value;
  bool operator==(const StaticLeaf& o) const;
};

struct Key {
  std::string structure;
  std::vector<ShapedArray> avals;
  std::vector<std::string> paths;  // not part of equality: for explanations
  std::vector<int> leaf_args;      // the top-level argument of each leaf (donation)
  std::vector<std::shared_ptr<StaticValue>> statics;
  std::vector<std::string> static_paths;
  std::vector<StaticLeaf> static_leaves;
  std::vector<std::string> static_leaf_paths;
  /// Per leaf: its sharding's canonical form (tile assignment and devices; empty for an array on one device) and
  /// how explanations name it ("P('data', None) on mesh (data=2)", "replicated", "unsharded").
  std::vector<std::string> shardings, sharding_msgs;
  int device = 0;
  // Configuration that changes the compiled code (not the traced function): a compile with other settings is
  // another executable, as JAX keys its caches on the relevant config.
  bool excess_precision = true;
  bool x64 = true;  // config().enable_x64 when traced: the same function traces to other dtypes without it
  size_t hash = 0;

  bool operator==(const Key& o) const;
};
struct KeyHash {
  size_t operator()(const Key& k) const { return k.hash; }
};

/// The key of a call; with_paths: also the leaves' paths, which only explanations and messages read.
Key make_key(const CallSignature& sig, bool with_paths = true);
/// Fills the parts of a key that only explanations and messages read (a cache hit never needs them).
void add_paths(Key& k, const CallSignature& sig);
/// make_key(sig) == k, without building the key where it can (no strings, no allocation).
bool same_signature(const Key& k, const CallSignature& sig);
/// The same answer where it needs no key (nullopt: static array leaves, sharded or empty leaves). Cheap and
/// non-blocking, so it may run under a lock: building a key waits for static leaves' values.
std::optional<bool> known_same_signature(const Key& k, const CallSignature& sig);

/// An aval as cache-miss messages print it: "f32[3]", weak types "f32[]{weak}" (one spelling everywhere).
std::string aval_msg(const ShapedArray& a);
/// "(args[0]: f32[3], args[1]: static 2)".
std::string signature_str(const Key& k);
/// Lines naming what differs between the new key and a cached one.
std::vector<std::string> differences(const Key& seen, const Key& now);
/// How far a cached key is from a new one: one point per differing property (shape, dtype, weak type, static
/// value), many for a different tree structure.
size_t distance(const Key& seen, const Key& now);

}  // namespace jitx::detail
