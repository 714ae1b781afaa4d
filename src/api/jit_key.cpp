// jit's cache key (see jit_key.h): built from a call's signature, compared, and explained when it misses.
#include "api/jit_key.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "api/pytree_str.h"
#include "core/errors.h"
#include "jitx/config.h"
#include "runtime/concrete.h"
#include "runtime/sharded.h"

namespace jitx::detail {

bool StaticLeaf::operator==(const StaticLeaf& o) const {
  return aval == o.aval && value.nbytes() == o.value.nbytes() &&
         std::memcmp(value.data(), o.value.data(), value.nbytes()) == 0;
}

bool Key::operator==(const Key& o) const {
  if (hash != o.hash || structure != o.structure || avals != o.avals || device != o.device ||
      shardings != o.shardings || excess_precision != o.excess_precision || x64 != o.x64 ||
      statics.size() != o.statics.size() || !(static_leaves == o.static_leaves))
    return false;
  for (size_t i = 0; i < statics.size(); ++i)
    if (!statics[i]->equals(*o.statics[i])) return false;
  return true;
}

/// Fills the parts of a key that only explanations and messages read (a cache hit never needs them).
void add_paths(Key& k, const CallSignature& sig) {
  k.paths = sig.flat.paths;
  k.static_paths = sig.flat.static_paths;
  k.static_leaf_paths = sig.static_leaf_paths;
}

Key make_key(const CallSignature& sig, bool with_paths) {
  Key k;
  k.structure = sig.flat.structure;
  if (with_paths) add_paths(k, sig);
  k.leaf_args = sig.flat.leaf_args;
  k.excess_precision = config().allow_excess_precision;
  k.x64 = config().enable_x64;
  size_t h = hash_combine(hash_combine(std::hash<std::string>{}(k.structure), k.excess_precision), k.x64);
  for (auto& a : sig.flat.leaves) {
    if (!a.valid()) throw_error<TypeError>("jit", "an argument Array is empty (default-constructed)");
    k.avals.push_back(a.aval());
    if (auto* sh = as_sharded(a)) {
      std::string devs;
      for (auto* d : sh->devices) devs += fmt::format(" {}", d->id);
      k.shardings.push_back(sh->tiling.to_string() + devs);
      k.sharding_msgs.push_back(sh->sharding->short_str());
    } else {
      k.shardings.emplace_back();
      k.sharding_msgs.emplace_back("unsharded");
    }
    h = hash_combine(h, std::hash<std::string>{}(k.shardings.back()));
    const auto& av = k.avals.back();
    h = hash_combine(h, static_cast<size_t>(av.dtype) * 2 + av.weak_type);
    for (auto d : av.shape) h = hash_combine(h, static_cast<size_t>(d));
  }
  k.statics = sig.flat.statics;
  for (auto& s : k.statics) h = hash_combine(h, s->hash());
  for (size_t i = 0; i < sig.static_leaves.size(); ++i) {
    const Array& a = sig.static_leaves[i];
    auto lit = concrete_buffer(a, "jit static argument")->literal();
    k.static_leaves.push_back(StaticLeaf{a.aval(), lit});
    const auto* p = static_cast<const unsigned char*>(lit.data());
    size_t bh = 1469598103934665603ULL;
    for (size_t b = 0; b < lit.nbytes(); ++b) bh = (bh ^ p[b]) * 1099511628211ULL;
    h = hash_combine(h, bh);
  }
  k.hash = h;
  return k;
}

/// An aval as cache-miss messages print it: "f32[3]", weak types "f32[]{weak}" (one spelling everywhere).
std::string aval_msg(const ShapedArray& a) { return a.str() + (a.weak_type ? "{weak}" : ""); }

std::string signature_str(const Key& k) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < k.avals.size(); ++i)
    parts.push_back(fmt::format("{}: {}", k.paths[i], aval_msg(k.avals[i])));
  for (size_t i = 0; i < k.statics.size(); ++i)
    parts.push_back(fmt::format("{}: static {}", k.static_paths[i], k.statics[i]->str()));
  for (size_t i = 0; i < k.static_leaves.size(); ++i)
    parts.push_back(fmt::format("{}: static {} = {}", k.static_leaf_paths[i], k.static_leaves[i].aval.str(),
                                k.static_leaves[i].value.values_str(8)));
  return fmt::format("({})", fmt::join(parts, ", "));
}

namespace {
/// The leaf paths in one key and not the other ("args[0][2]"), at most 4, for the structure-change message.
std::string paths_missing(const std::vector<std::string>& from, const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (auto& p : from)
    if (std::find(in.begin(), in.end(), p) == in.end() && out.size() < 5) out.push_back(p);
  if (out.size() == 5) out.back() = "...";
  return fmt::format("{}", fmt::join(out, ", "));
}

std::string differences_structure(const Key& seen, const Key& now) {
  std::string msg = fmt::format("the pytree structure of the arguments changed: seen {}, now {}",
                                detail::structure_str(seen.structure), detail::structure_str(now.structure));
  std::string added = paths_missing(now.paths, seen.paths), gone = paths_missing(seen.paths, now.paths);
  if (!added.empty()) msg += fmt::format("; new leaves {}", added);
  if (!gone.empty()) msg += fmt::format("; leaves no longer given {}", gone);
  return msg;
}

}  // namespace

/// Lines naming what differs between the new key and a cached one (JAX's explain_cache_misses).
std::vector<std::string> differences(const Key& seen, const Key& now) {
  std::vector<std::string> out;
  if (seen.structure != now.structure) {
    out.push_back(differences_structure(seen, now));
    return out;
  }
  for (size_t i = 0; i < now.avals.size() && i < seen.avals.size(); ++i) {
    const auto &a = seen.avals[i], &b = now.avals[i];
    if (a == b) continue;
    std::string what = a.shape != b.shape ? "shape" : a.dtype != b.dtype ? "dtype" : "weak type";
    std::string line = fmt::format("{} ({}): seen {}, but now given {}", now.paths[i], what, aval_msg(a), aval_msg(b));
    if (a.weak_type && b.weak_type && a.shape == b.shape && a.dtype != b.dtype)
      line += " (a C++ float and a C++ double, or int and int64_t, are weak scalars of different widths and compile "
              "separately: pass the same C++ type to share one executable)";
    out.push_back(line);
  }
  for (size_t i = 0; i < now.shardings.size() && i < seen.shardings.size(); ++i)
    if (seen.shardings[i] != now.shardings[i])
      out.push_back(fmt::format("{} (sharding): seen {}, now {}", now.paths[i], seen.sharding_msgs[i],
                                now.sharding_msgs[i] == seen.sharding_msgs[i] ? now.sharding_msgs[i] + " on other devices"
                                                                              : now.sharding_msgs[i]));
  for (size_t i = 0; i < now.statics.size() && i < seen.statics.size(); ++i)
    if (!seen.statics[i]->equals(*now.statics[i]))
      out.push_back(fmt::format("{} (static value): seen {}, but now given {}", now.static_paths[i],
                                seen.statics[i]->str(), now.statics[i]->str()));
  for (size_t i = 0; i < now.static_leaves.size() && i < seen.static_leaves.size(); ++i)
    if (!(seen.static_leaves[i] == now.static_leaves[i]))
      out.push_back(fmt::format("{} (static value): seen {}, but now given {}", now.static_leaf_paths[i],
                                seen.static_leaves[i].value.values_str(8), now.static_leaves[i].value.values_str(8)));
  if (seen.device != now.device) out.push_back(fmt::format("device: seen {}, now {}", seen.device, now.device));
  if (seen.excess_precision != now.excess_precision)
    out.push_back(fmt::format("config().allow_excess_precision: seen {}, now {}", seen.excess_precision,
                              now.excess_precision));
  if (seen.x64 != now.x64)
    out.push_back(fmt::format("config().enable_x64: seen {}, now {}", seen.x64, now.x64));
  return out;
}

/// How far a cached key is from a new one: one point per differing property (shape, dtype, weak type,
/// static value), many for a different tree structure.
size_t distance(const Key& seen, const Key& now) {
  if (seen.structure != now.structure) return 1000;
  size_t d = (seen.device != now.device) + (seen.excess_precision != now.excess_precision) + (seen.x64 != now.x64);
  for (size_t i = 0; i < now.avals.size() && i < seen.avals.size(); ++i) {
    d += seen.avals[i].shape != now.avals[i].shape;
    d += seen.avals[i].dtype != now.avals[i].dtype;
    d += seen.avals[i].weak_type != now.avals[i].weak_type;
  }
  for (size_t i = 0; i < now.shardings.size() && i < seen.shardings.size(); ++i)
    d += seen.shardings[i] != now.shardings[i];
  for (size_t i = 0; i < now.statics.size() && i < seen.statics.size(); ++i)
    d += !seen.statics[i]->equals(*now.statics[i]);
  for (size_t i = 0; i < now.static_leaves.size() && i < seen.static_leaves.size(); ++i)
    d += !(seen.static_leaves[i] == now.static_leaves[i]);
  return d;
}

std::optional<bool> known_same_signature(const Key& k, const CallSignature& sig) {
  const auto& leaves = sig.flat.leaves;
  if (!sig.static_leaves.empty() || !k.static_leaves.empty()) return std::nullopt;  // keyed by value
  if (k.structure != sig.flat.structure || k.avals.size() != leaves.size() ||
      k.excess_precision != config().allow_excess_precision || k.x64 != config().enable_x64 ||
      k.statics.size() != sig.flat.statics.size())
    return false;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].valid() || as_sharded(leaves[i])) return std::nullopt;  // an error, or a sharding's canonical form
    if (!k.shardings[i].empty() || !(leaves[i].aval() == k.avals[i])) return false;
  }
  for (size_t i = 0; i < k.statics.size(); ++i)
    if (!k.statics[i]->equals(*sig.flat.statics[i])) return false;
  return true;
}

bool same_signature(const Key& k, const CallSignature& sig) {
  std::optional<bool> known = known_same_signature(k, sig);
  return known ? *known : make_key(sig, false) == k;
}

}  // namespace jitx::detail
