// shard_map (JAX's jax.experimental.shard_map): f runs on per-device blocks of its arguments, with explicit
// collectives over the mesh's named axes (lax::psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all,
// ppermute, axis_index, axis_size). check_rep (on by default, as JAX's): an out_spec that leaves out a mesh axis the
// result may vary over is a TypeError; with check_rep=false such a result is taken from the first device along it.
//
// The collectives are jaxpr primitives with JVP, transpose and batching rules (vmap/grad inside the body work).
// An eager call runs as a jitted program on the mesh's devices; under vmap/grad from outside a shard_map runs as a
// batch over the mesh's devices (the blocks stacked on one device, each collective computed over the stacked
// blocks); under jit/make_jaxpr it is one `shard_map` equation holding the body's jaxpr, whose StableHLO text is the
// SPMD form (manual region, stablehlo collectives), and which the SPMD partitioner runs on the mesh's devices. A jit
// inside the body that reaches a collective throws a jitx::Error.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/lax_parallel.h"
#include "jitx/sharding.h"

namespace jitx {

using ShardMapFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

/// shard_map(f, mesh, in_specs, out_specs): one spec per argument and per result. Errors as JAX's: a spec longer
/// than its argument's rank, a dimension not divisible by its mesh axes' sizes, an axis not in the mesh, and (with
/// check_rep) a result claimed replicated over an axis it may vary over.
ShardMapFn shard_map(ShardMapFn f, Mesh mesh, std::vector<PartitionSpec> in_specs,
                     std::vector<PartitionSpec> out_specs, bool check_rep = true, Loc loc = Loc::current());
/// One argument, one result.
std::function<Array(const Array&)> shard_map(std::function<Array(const Array&)> f, Mesh mesh, PartitionSpec in_spec,
                                             PartitionSpec out_spec, bool check_rep = true,
                                             Loc loc = Loc::current());

}  // namespace jitx
