// The SPMD partitioner's tile arithmetic (spmd_partitioner.cpp): a sharding as a full tile array over partition
// ids, regrouping it across an op's dimension mapping, the collective groups over some of its dimensions, and the
// placement tests behind resharding and dot partitioning.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/sharding.h"

namespace jitx::hlo::spmd {

using Groups = std::vector<std::vector<int64_t>>;

/// A sharding as its full tile array: one extent per array dimension plus the replication group (1 when none), and
/// the partition ids in row-major order over it.
struct Tiles {
  std::vector<int64_t> dims;
  std::vector<int64_t> devices;
  int64_t rank() const { return static_cast<int64_t>(dims.size()) - 1; }
  bool operator==(const Tiles&) const = default;
  bool tiled() const {
    for (int64_t d = 0; d < rank(); ++d)
      if (dims[static_cast<size_t>(d)] > 1) return true;
    return false;
  }
  int64_t num_tiles() const {
    int64_t t = 1;
    for (int64_t d = 0; d < rank(); ++d) t *= dims[static_cast<size_t>(d)];
    return t;
  }
};

/// Every partition holding the whole array: rank dimensions of 1, a replication group of all n partitions.
Tiles replicated(int64_t rank, int64_t n);
/// The tiles of sharding s (device ids must be partitions 0..n-1) for a rank-`rank` value of `at`; throws a
/// CompileError naming `at` otherwise.
Tiles tiles_of(const HloSharding& s, int64_t rank, int64_t n, const Instruction& at);
HloSharding to_sharding(const Tiles& t);
/// The tiles of a value whose dimension j comes from dimension keep[j] of a value tiled as t (-1: a new, unsplit
/// dimension); t's other dimensions join the replication group (their partitions then hold equal values).
Tiles regroup(const Tiles& t, const std::vector<int64_t>& keep);
/// The groups of partitions whose tiles differ only in the dimensions `dims` (each in row-major order over them).
Groups groups_over(const Tiles& t, const std::vector<int64_t>& dims);
/// The tile index along dimension d of partition p.
int64_t tile_index(const Tiles& t, int64_t p, int64_t d);
/// Whether every partition holds the same tile of the array under a and b (the replication groups may list their
/// partitions in another order).
bool same_placement(const Tiles& a, const Tiles& b);
/// Whether `to` splits each of from's tiles further, every partition's new tile lying inside the tile it holds: then
/// a local slice reshards, with no communication.
bool refines(const Tiles& from, const Tiles& to);
/// Both dot operands' tiles (ranks lr, rr) as one tile array over (batch, lhs free, rhs free, contracting)
/// dimensions, when they agree on every partition's batch and contracting tiles (each partition then multiplies the
/// tiles it holds); nullopt otherwise.
std::optional<Tiles> combined_dot_tiles(const Tiles& l, const Tiles& r, const DotDimensionNumbers& dn, int64_t lr,
                                        int64_t rr, int64_t n);

/// Whether v is the identity of reducer r (a partial reduction then combines without counting it twice).
bool is_identity(const Instruction& init, Reducer r);

}  // namespace jitx::hlo::spmd
