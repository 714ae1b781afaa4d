// The collective primitives of shard_map's body (JAX's names): psum, pmax, pmin, all_gather, reduce_scatter
// (lax::psum_scatter), all_to_all, ppermute, axis_index; and the trace that runs them over a mesh on one device.
//
// A collective's params name its axes (`axes=('i',)` / `axis_name=...`) and, where the per-device shape needs it,
// the group size (`axis_size`). Its rules:
// - abstract evaluation: per-device shapes;
// - named batching (ShardMapTrace, below): the mesh's devices are a batch axis of the blocks stacked on one device,
//   and a collective over the mesh's axes is computed with ordinary ops over that axis (the eager shard_map);
// - the ordinary batching rule (a user's vmap inside the body): the collective of the batched value, its axis
//   numbers shifted past the batch axis;
// - JVP: linear ones apply themselves to the tangent; pmax/pmin have none (as in JAX);
// - transpose (check_rep=False, as JAX): psum -> psum, all_gather <-> reduce_scatter, all_to_all -> all_to_all with
//   split and concat swapped, ppermute -> the inverse permutation;
// - lowering: the StableHLO collective inside shard_map's manual region (a manual lowering; see shard_map.cpp).
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/primitive.h"
#include "transforms/batching.h"

namespace jitx::detail {

/// Runs a shard_map's body on the blocks of every device stacked along one batch axis (row-major over the mesh):
/// collectives over the mesh's axes are computed over that axis; everything else is batched as vmap does.
class ShardMapTrace : public BatchTrace {
 public:
  Shape mesh_shape;
  std::vector<std::string> axis_names;
  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> inputs,
                                       const Params& params) override;
};

/// One active shard_map on this thread: its mesh, and the trace when its body runs eagerly (null while the body is
/// traced to a jaxpr: collectives are then recorded as equations).
struct CollectiveScope {
  Shape mesh_shape;
  std::vector<std::string> axis_names;
  std::shared_ptr<ShardMapTrace> trace;
};
class CollectiveScopeGuard {
 public:
  explicit CollectiveScopeGuard(CollectiveScope* s);
  ~CollectiveScopeGuard();
  CollectiveScopeGuard(const CollectiveScopeGuard&) = delete;
  CollectiveScopeGuard& operator=(const CollectiveScopeGuard&) = delete;
};
/// The active shard_maps, outermost first.
const std::vector<CollectiveScope*>& collective_scopes();

bool is_collective(const Primitive& p);
/// Binds a collective: to the eager shard_map trace that binds its axes when the inputs hold no tracer of a deeper
/// trace (constants, values from outside the body), else as bind does.
std::vector<Array> bind_collective(std::string_view prim, std::vector<Array> inputs, const Params& params);

/// "('i', 'j')" (JAX's tuple of names, as jaxprs print it) and back.
std::string axes_text(const std::vector<std::string>& names);
std::vector<std::string> parse_axes(const std::string& text);
/// The axis names a collective's params hold.
std::vector<std::string> collective_axes(const Params& params);

/// Set while a shard_map's body lowers to its SPMD form (shard_map's manual region, for the StableHLO text): the
/// collectives lower to HLO collectives whose replica_groups are partition ids of this mesh (row-major).
struct ManualMesh {
  Shape shape;
  std::vector<std::string> names;
};
const ManualMesh* manual_mesh();
class ManualMeshScope {
 public:
  explicit ManualMeshScope(const ManualMesh* m);
  ~ManualMeshScope();
  ManualMeshScope(const ManualMeshScope&) = delete;
  ManualMeshScope& operator=(const ManualMeshScope&) = delete;

 private:
  const ManualMesh* prev_;
};
/// Whether shard_map lowers to its manual region (Lowered::as_text) rather than its one-device expansion.
bool& spmd_text_lowering();

}  // namespace jitx::detail
