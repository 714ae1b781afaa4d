// Eager evaluation of one primitive on concrete arrays (what bind does when no trace claims the primitive).
#pragma once
#include <span>
#include <vector>

#include "core/primitive.h"

namespace jitx::detail {

/// Runs one primitive eagerly on concrete arrays, through a single-op executable cached per (primitive, params,
/// input types). Installed as bind's eager evaluator at start-up.
std::vector<Array> eval_primitive(const Primitive& p, std::span<const Array> inputs, const Params& params);

/// The eager executable cache's size and how many entries it has evicted (config().eager_cache_size bounds it).
size_t eager_cache_size();
size_t eager_cache_evictions();

}  // namespace jitx::detail
