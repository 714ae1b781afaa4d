// The SPMD partitioner: sharding propagation and the rewrite of a module into the program each partition runs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Rewrites the entry computation into one per-partition program over `num_partitions` partitions (partition p
/// holds the tiles its id has in every sharding: device ids of shardings are partition ids 0..n-1).
///
/// Input: `sharding` attributes are constraints — on parameters (the arguments' shardings; none: replicated), on the
/// root (the output's; none: whatever propagation chose) and on any instruction (with_sharding_constraint). Shardings
/// propagate forward, in instruction order: elementwise ops take their most-tiled operand's sharding; broadcasts and
/// transposes carry their operand's tiles to the result's dimensions; a reduce keeps the tiles of the kept dimensions
/// (a reduced tiled dimension ends in an all-reduce); dot_general is split by batch dimension and non-contracting
/// dimension without communication, and by contracting dimension into partial products and an all-reduce (the other
/// operand is sliced locally when only one is split there). Every other op gets its operands all-gathered and runs
/// replicated ("resharded explicitly"). Between shardings, values are all-gathered along each tiled dimension and
/// sliced locally (dynamic-slice at this partition's offset, from partition-id).
///
/// Output: per-partition shapes, collectives with replica groups of partition ids, every instruction annotated
/// with the sharding chosen (the root's elements too: how to assemble the results).
///
/// Control flow: a while loop's carry takes its initial values' tiles, then the tiles its body gives them (until
/// they stay the same, at most three rounds); the condition and body are partitioned with those parameter tiles and
/// the body's results resharded to them. A conditional's branches see their operands' tiles; every branch's results
/// take branch 0's. Reshapes keep a tiled dimension that stays the major dimension of its group (splitting or
/// merging dimensions); slices and dynamic (update) slices that take whole tiled dimensions run locally.
///
/// Uneven splits (values inside the program, e.g. a sharding constraint on a slice of 6 rows over 4 partitions):
/// each tile holds ceil(size / k) elements, the last ones padded. Padding is garbage until it would count: a
/// reduction over the split dimension first replaces it by the reducer's identity, a dot contracting over it by
/// zeros on both sides, and a reshard slices the gathered tiles to the true size (and pads a value before slicing
/// uneven tiles out of it). An uneven result is gathered at the end; an uneven argument is a CompileError.
///
/// Also: a move of a split between dimensions is one all-to-all; a static slice that keeps the tile size takes a
/// halo from the next partition (collective-permute); gathers with split indices and scatter-adds of split updates
/// run locally (the latter with an all-reduce); a shard_map's manual region (custom-calls Sharding /
/// SPMDFullToShardShape / SPMDShardToFullShape) is cloned as per-device code.
///
/// Not done: tuple-shaped parameters and operands are a CompileError (jit then runs the call on one device). These
/// all-gather their operands instead (right values, more traffic): a reshape that moves a minor split dimension,
/// pads, concatenates and convolutions of split dimensions, a gather indexing a split dimension of its table.
///
/// JITX_LOG_SHARDING=1 logs each choice and where it came from ("[sharding] %dot.3: {devices=[2,1]0,1} (dot: lhs
/// batch-like dimension 0 split, no communication)") and each conflict resolved by a reshard.
class SpmdPartitioner : public HloPass {
 public:
  explicit SpmdPartitioner(int64_t num_partitions) : n_(num_partitions) {}
  std::string_view name() const override { return "spmd-partitioner"; }
  bool run(Module& m) override;

 private:
  int64_t n_;
};

}  // namespace jitx::hlo
