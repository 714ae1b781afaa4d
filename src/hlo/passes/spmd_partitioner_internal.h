// The SPMD partitioner's pass object, shared by its files: spmd_partitioner.cpp (propagation and the per-op rules)
// and spmd_reshard.cpp (moving a value between tilings: all-gather and slice, all-to-all, padding and masks).
#pragma once
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/errors.h"
#include "core/log.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"
#include "hlo/passes/spmd_tiles.h"

namespace jitx::hlo::spmd {

inline bool log_on() {
  static const bool on = [] {
    const char* v = std::getenv("JITX_LOG_SHARDING");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

[[noreturn]] inline void unsupported(const Instruction& i, const std::string& why) {
  throw CompileError(fmt::format("[spmd-partitioner] %{} ({}): {}", i.name, opcode_name(i.opcode), why));
}

struct Local {
  Local() = default;
  Local(Instruction* value, Tiles tiles, std::vector<Tiles> elements = {})
      : v(value), t(std::move(tiles)), elems(std::move(elements)) {}
  Instruction* v = nullptr;
  Tiles t;
  std::vector<Tiles> elems;  // a tuple's (while, conditional): each element's tiles
  std::vector<int64_t> global;  // the unpartitioned dimensions (a tile of an uneven split is padded at its end)
  bool manual = false;  // inside a shard_map's manual region: already per-device code, cloned as it is
};

class Partitioner {
 public:
  Partitioner(Module& m, int64_t n) : m_(m), n_(n) {}
  void run();

 private:
  /// One partition's shape: each dimension split k ways holds ceil(size / k) elements (the tiles at the end of an
  /// uneven split are padded; what their padding holds is unspecified, and masked where it would count).
  static Shape local_shape(const Shape& global, const Tiles& t, const Instruction& at) {
    (void)at;
    Shape s(global.dtype, global.dims);
    for (size_t d = 0; d < s.dims.size(); ++d) s.dims[d] = (s.dims[d] + t.dims[d] - 1) / t.dims[d];
    return s;
  }
  static bool uneven(const std::vector<int64_t>& global, const Tiles& t, int64_t d) {
    return global[static_cast<size_t>(d)] % t.dims[static_cast<size_t>(d)] != 0;
  }
  /// v (a local value of a global shape `global` tiled as t) with the padding of its uneven tiled dimensions among
  /// `dims` replaced by the scalar `fill`: select(iota + tile offset < size, v, fill).
  Instruction* mask_padding(Instruction* v, const Tiles& t, const std::vector<int64_t>& global,
                            const std::vector<int64_t>& dims, Instruction* fill);
  /// The partition's offset along dimension d of a value tiled as t with tiles of `tile` elements (an s32 scalar);
  /// with `ratio`, the offset inside the partition's current tile (a refinement ratio times finer).
  Instruction* tile_offset(const Tiles& t, int64_t d, int64_t tile, int64_t ratio = 0);
  Instruction* add(Opcode op, Shape s, std::vector<Instruction*> ops, detail::Params attrs, const Tiles& t) {
    Instruction* i = c_->add(op, std::move(s), std::move(ops), std::move(attrs));
    set_sharding(*i, to_sharding(t));
    return i;
  }
  void note(const Instruction& i, const Tiles& t, const std::string& why) const {
    if (log_on()) detail::log_line(fmt::format("[sharding] %{}: {} ({})", i.name, to_sharding(t).to_string(), why));
  }
  /// A collective's attributes over `groups` of partitions, with the next channel id, the dimension it gathers,
  /// scatters or exchanges (-1: none) and its reducer (empty: none).
  detail::Params collective_attrs(Groups groups, int64_t dimension = -1, std::string_view reducer = {}) {
    CollectiveConfig cfg;
    cfg.channel_id = channel_++;
    cfg.dimension = dimension;
    cfg.replica_groups = std::move(groups);
    detail::Params a;
    cfg.set_on(a);
    if (!reducer.empty()) a.set("reducer", std::string(reducer));
    return a;
  }
  Instruction* zero_scalar(DType d) {
    auto lit = detail::Literal::make(d, {});
    std::memset(lit.data(), 0, lit.nbytes());
    return c_->add_constant(std::move(lit));
  }
  Instruction* s32_scalar(int64_t v) {
    auto lit = detail::Literal::make(DType::int32, {});
    lit.set_i64(0, v);
    return c_->add_constant(std::move(lit));
  }
  /// x (tiled as `from`) as tiled `to`: all-gathered along each tiled dimension, then sliced at this partition's
  /// offsets.
  Local reshard(const Local& x, const Tiles& to, const Instruction& at);
  Local reshard_uncached(const Local& x, const Tiles& to, const Instruction& at);
  /// x moved from tiles along one dimension to the same partitions' tiles along another: one all-to-all (and local
  /// reshapes), rather than an all-gather and a slice. nullopt when `to` is no such move.
  std::optional<Local> all_to_all(const Local& x, const Tiles& to, const Instruction& at);
  /// The global shape of a value of local shape `s` tiled as `t`.
  static Shape global_of(Shape s, const Tiles& t) {
    for (size_t d = 0; d < s.dims.size(); ++d) s.dims[d] *= t.dims[d];
    return s;
  }
  Local elementwise(const Instruction& i);
  Local dot(const Instruction& i);
  /// The sum of a dot's partial products `local` (its contracting dimensions `split_contracting` of `full` split):
  /// a reduce-scatter when the result is wanted split where the contraction's partitions can share it, else an
  /// all-reduce. keep_out maps the result's dimensions to full's.
  Local sum_partials(const Instruction& i, Instruction* local, const Tiles& full, const std::vector<int64_t>& keep_out,
                     const std::vector<int64_t>& split_contracting, const Tiles& out_t);
  /// The tiles `i` is annotated with, or that its users want (backward propagation: hints_), if any.
  std::optional<Tiles> wanted(const Instruction& i) const {
    if (auto s = sharding_of(i)) return tiles_of(*s, i.shape.rank(), n_, i);
    if (auto it = hints_.find(&i); it != hints_.end()) return it->second;
    return std::nullopt;
  }
  /// Backward propagation over one computation: from each annotated (or already hinted) instruction to its operands
  /// through ops that keep tiles in place (elementwise ops of the same shape, converts), when every user of the
  /// operand agrees. Fills hints_.
  void propagate_backward(const Computation& c);
  Local reduce(const Instruction& i);
  Local generic(const Instruction& i, const std::string& why);
  Local reshape(const Instruction& i);
  Local slicing(const Instruction& i);
  Local gather(const Instruction& i);   // spmd_gather.cpp
  Local scatter(const Instruction& i);  // spmd_gather.cpp
  /// A static slice of tiled dimensions that keeps their tile size: local windows plus halos from the next
  /// partitions (collective-permute); nullopt when the slice is not of that form.
  std::optional<Local> halo_slice(const Instruction& i);
  /// (p, q) pairs sending from each partition to the one whose tile along d is `step` further (the same place in
  /// every other dimension and copy).
  std::vector<std::pair<int64_t, int64_t>> shift_pairs(const Tiles& t, int64_t d, int64_t step) const;
  /// slice(v, lo, hi) with unit strides.
  Instruction* local_slice(Instruction* v, std::vector<int64_t> lo, std::vector<int64_t> hi);
  /// The `count` elements along d that the neighbouring partition holds next to this one's tile of v (tiled as t):
  /// the previous partition's last ones or the next one's first, by collective-permute; zeros at the ends.
  Instruction* halo(Instruction* v, const Tiles& t, int64_t d, int64_t count, bool from_previous);
  /// Convolutions (spmd_conv.cpp): the input split on batch and spatial dimensions, spatial splits with halos.
  Local convolution(const Instruction& i);
  Local while_loop(const Instruction& i);
  Local conditional(const Instruction& i);
  Local visit(const Instruction& i);
  /// A shard_map's manual region (custom-calls Sharding / SPMDFullToShardShape / SPMDShardToFullShape, as XLA's):
  /// the operand resharded to the region's in-spec tiles enters as its local tile, the region's per-device code is
  /// cloned as it is, and each result leaves with its out-spec tiles. nullopt for any other instruction.
  std::optional<Local> manual(const Instruction& i);
  /// The per-partition version of `old` (a new computation): its parameters tiled as `params` (null: the entry's
  /// annotations), its root tuple's elements resharded to `want_root` when given; `root_tiles` gets the root's tiles
  /// (one per tuple element).
  Computation* partition(const Computation& old, const std::vector<Tiles>* params, const std::vector<Tiles>* want_root,
                         std::vector<Tiles>* root_tiles);

  Module& m_;
  int64_t n_;
  Computation* c_ = nullptr;
  const std::vector<Tiles>* params_ = nullptr;  // the parameters' tiles of the computation being partitioned
  std::unordered_map<const Instruction*, Local> map_;
  // A value resharded once per (from, to) tiling, within the computation being partitioned.
  std::map<std::pair<const Instruction*, std::string>, Local> reshards_;
  std::unordered_map<const Instruction*, Tiles> hints_;  // tiles an instruction's users want (propagate_backward)
  int64_t channel_ = 1;
};

}  // namespace jitx::hlo::spmd
