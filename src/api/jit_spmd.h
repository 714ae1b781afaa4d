// jit's SPMD path: a call on sharded arguments partitioned (hlo::SpmdPartitioner), compiled once per cache entry,
// run on the mesh's devices (detail::execute_spmd), its results sharded as the partitioner chose.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hlo/ir/hlo.h"
#include "jitx/sharding.h"
#include "lowering/lower.h"
#include "runtime/runtime.h"

namespace jitx {
struct JitOptions;
}

namespace jitx::detail {
struct Key;
struct CallSignature;

struct SpmdProgram {
  std::vector<runtime::Device*> devices;  // partition p runs on devices[p]
  std::shared_ptr<hlo::Module> module;    // partitioned and optimised
  std::shared_ptr<runtime::Executable> exe;
  std::vector<std::shared_ptr<const Sharding>> out_shardings;  // per output leaf, as the partitioner chose
  std::vector<int64_t> donated;  // leaves whose buffers the program may write in place (jit's donate_argnums)
};

/// Whether some leaf is a sharded array (a call that may run partitioned).
bool any_sharded_leaf(std::span<const Array> leaves);
/// Places each unsharded argument leaf as its options.in_shardings entry says (device_put), as JAX's jit does,
/// before the call's cache key is taken; sharded leaves are left to JitCore::check_in_shardings.
void place_in_shardings(const JitOptions& options, const CallSignature& sig);
/// Makes a call's leaves fit a Compiled's signature where JAX's would accept them: an unsharded leaf where the
/// executable was lowered for a sharded one is device_put to that sharding, and a weak/strong difference alone is
/// converted (the executable is the same). Leaves that differ otherwise are left for the signature error.
void conform_to_compiled(const Key& key, const std::vector<std::shared_ptr<const Sharding>>& placement,
                         const CallSignature& sig);
struct ClosedJaxpr;
/// Whether the jaxpr has a shard_map equation (at its top level).
bool has_shard_map(const ClosedJaxpr& jaxpr);
/// Whether JITX_LOG_SHARDING asks for the partitioner's choices (and why a call runs on one device).
bool log_sharding();

/// The partitioned program of `lowered` (one entry parameter per leaf) for leaves with these shardings; null, with
/// `why` set, when the call cannot run partitioned (the caller then computes on one device).
/// `out_shardings` (jit's, one per output leaf; may be shorter) annotate the results that are NamedShardings on the
/// arguments' mesh, so the partitioner computes them in place (a reduce-scatter rather than an all-reduce and a
/// reshard afterwards).
/// `region_mesh`: the mesh of the program's shard_maps (lowered as manual regions), which the arguments' mesh must
/// be, and which places a call whose arguments are all unsharded.
/// `donated` leaves may be overwritten: the program is compiled so, and run_spmd marks their shards deleted.
std::shared_ptr<SpmdProgram> make_spmd_program(const hlo::Module& lowered, std::span<const Array> leaves,
                                               std::span<const std::optional<Sharding>> out_shardings,
                                               std::vector<int64_t> donated, std::string* why,
                                               const Mesh* region_mesh = nullptr);
/// Runs the program on the leaves; the outputs are sharded arrays.
std::vector<Array> run_spmd(const SpmdProgram& p, std::span<const Array> leaves,
                            std::span<const ShapedArray> out_avals);

struct ClosedJaxpr;
/// jit's StableHLO text (Lowered::as_text): the lowered module's, or, for a program with a shard_map (which runs its
/// expansion on one device), its SPMD form as JAX prints it: the manual region and its collectives
/// (shard_map_prim.cpp).
std::string stablehlo_text_of(const ClosedJaxpr& jaxpr, const hlo::Module& lowered, StablehloAttrs attrs = {});
/// jit's partitioned program for a call: when the jaxpr is one shard_map equation on the call's leaves, each
/// already sharded as its in_spec on the shard_map's mesh (or replicated for P()), the body's own per-device program
/// (its collectives over the mesh's partitions, no partitioner); otherwise make_spmd_program's.
std::shared_ptr<SpmdProgram> spmd_program_for(const ClosedJaxpr& jaxpr, const hlo::Module& lowered,
                                              std::span<const Array> leaves,
                                              std::span<const std::optional<Sharding>> out_shardings,
                                              std::vector<int64_t> donated, std::string* why);

}  // namespace jitx::detail
