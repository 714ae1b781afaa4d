// shard_map's internals shared by its eager form (shard_map.cpp: the body over the stacked blocks of every device)
// and its jaxpr form (shard_map_prim.cpp: the `shard_map` primitive holding the body's jaxpr).
#pragma once
#include <cstdint>
#include <vector>

#include "core/jaxpr.h"
#include "jitx/shard_map.h"

namespace jitx::detail {

/// The mesh dims each array dim is split over.
struct Dims {
  std::vector<std::vector<int64_t>> axes;
};

/// Checks one spec against an argument (in) or result (!in) of type aval (JAX's errors); its dims.
Dims check_spec(const Mesh& mesh, const PartitionSpec& spec, const ShapedArray& aval, size_t i, bool in);
/// The global x -> stacked blocks (mesh.size(), block...).
Array stack_blocks(const Mesh& mesh, const Array& x, const Dims& d);
/// Stacked blocks (mesh.size(), block...) -> the global result (unnamed mesh axes: the first device's block).
Array assemble(const Mesh& mesh, const Array& stacked, const Dims& d);

/// shard_map run over the stacked blocks (the batch of every device; collectives over the batch axis).
std::vector<Array> shard_map_expand(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                    const std::vector<PartitionSpec>& out_specs, const ShardMapFn& f,
                                    const std::vector<Array>& args);
/// shard_map as one equation of the enclosing jaxpr trace: f traced on per-device avals into the body jaxpr.
/// check_rep: check_replication on the traced body.
std::vector<Array> bind_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                  const std::vector<PartitionSpec>& out_specs, const ShardMapFn& f,
                                  const std::vector<Array>& args, bool check_rep);
/// The body traced on per-device avals (the function's consts as leading invars) and check_replication of it: for
/// calls that run the expansion (under vmap / grad from outside).
void check_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                     const std::vector<PartitionSpec>& out_specs, const ShardMapFn& f, const std::vector<Array>& args);

/// shard_map's check_rep: throws a TypeError (JAX's message) when a result may vary over a mesh axis its out_spec
/// leaves out (so that it would be taken from the first device along it). Variation is inferred forward from the
/// in_specs: psum / pmax / pmin / all_gather make a value the same along their axes, axis_index / ppermute /
/// psum_scatter / all_to_all make it vary; a value from control flow that holds a collective is not checked.
void check_replication(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                       const std::vector<PartitionSpec>& out_specs, const ClosedJaxpr& body);

/// The mesh size of the first shard_map equation of cj's top level (0: none). jit's StableHLO text of such a
/// program is its SPMD form (shard_map's manual region, the collectives), lowered again for the text.
int64_t shard_map_partitions(const ClosedJaxpr& cj);

}  // namespace jitx::detail
