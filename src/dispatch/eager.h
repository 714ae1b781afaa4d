// Eager evaluation of one primitive on concrete arrays (what bind does when no trace claims the primitive).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/jaxpr.h"
#include "core/primitive.h"

namespace jitx::detail {

/// Runs one primitive eagerly on concrete arrays, through a single-op executable cached per (primitive, params,
/// input types). Installed as bind's eager evaluator at start-up.
/// Host callbacks run at once; with config().debug_nans/debug_infs, a NaN/inf in a result is a
/// FloatingPointError naming the primitive and the caller's line.
std::vector<Array> eval_primitive(const Primitive& p, std::span<const Array> inputs, const Params& params);
/// eval_primitive without the host-callback and NaN handling: always through a compiled single-op executable.
std::vector<Array> eval_primitive_compiled(const Primitive& p, std::span<const Array> inputs, const Params& params);
/// "nan" or "inf" when a floating array of outs holds one that config().debug_nans/debug_infs asks about (waits
/// for the values); nothing otherwise.
std::optional<std::string> find_nan_or_inf(std::span<const Array> outs);

/// Whether an eager program with these params can be cached: params holding jaxprs or opaque values are keyed by
/// pointer, so caching them would only grow a cache, never hit.
bool params_cacheable(const Params& params);

/// The jaxpr of one equation of p on fresh variables of these types (an eager op's program).
ClosedJaxpr one_equation_jaxpr(const Primitive& p, const Params& params, std::span<const ShapedArray> in_avals,
                               std::span<const ShapedArray> out_avals);

/// Evaluates a primitive with a sharded operand as a partitioned program, so that its result is sharded as JAX's
/// eager ops' results are; nothing when it cannot (the operands are then assembled on one device). The api layer
/// installs it (src/api/eager_spmd.cpp): partitioning is above this layer.
using ShardedEvalFn = std::optional<std::vector<Array>> (*)(const Primitive& p, std::span<const Array> inputs,
                                                            const Params& params);
void set_sharded_evaluator(ShardedEvalFn fn);

/// The eager executable cache's size and how many entries it has evicted (config().eager_cache_size bounds it).
size_t eager_cache_size();
size_t eager_cache_evictions();

}  // namespace jitx::detail
