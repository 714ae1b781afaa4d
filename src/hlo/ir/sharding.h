// HloSharding: how an array is tiled over devices (XLA's tile-assignment form), with its text form and parser.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitx::hlo {

/// XLA's HloSharding, the replicated and tiled forms: `{replicated}`, `{devices=[2,1]0,1}`, and
/// `{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}` (the last tile dimension lists devices holding the same tile).
/// `devices` is the tile assignment in row-major order over `tile_dims`; device ids are the runtime's.
struct HloSharding {
  bool replicated = true;
  std::vector<int64_t> tile_dims;  // one per array dimension, plus the replication group when last_tile_replicate
  std::vector<int64_t> devices;
  bool last_tile_replicate = false;

  static HloSharding replicate() { return HloSharding{}; }
  /// A tiled sharding (normalised: all tile counts 1 -> replicated, a trailing group of 1 dropped).
  static HloSharding tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices, bool last_tile_replicate);
  /// Parses "{replicated}" / "{devices=[..]..[ last_tile_dim_replicate]}"; throws ParseError-free jitx::Error
  /// ("[hlo sharding] ...") on bad text.
  static HloSharding parse(std::string_view text);
  std::string to_string() const;

  /// The number of array dimensions the tiling covers (tile_dims without the replication group).
  int64_t rank() const { return static_cast<int64_t>(tile_dims.size()) - (last_tile_replicate ? 1 : 0); }
  /// Tiles along array dimension d (1 when replicated).
  int64_t tiles(int64_t d) const { return replicated ? 1 : tile_dims[static_cast<size_t>(d)]; }
  int64_t num_devices() const { return static_cast<int64_t>(devices.size()); }
  /// The tile index per array dimension of the device at position `pos` of `devices` (rank entries).
  std::vector<int64_t> tile_index(int64_t pos) const;
  /// The shape of one tile of an array of `shape` (ceil division: the last tile may be smaller, or empty).
  std::vector<int64_t> shard_shape(const std::vector<int64_t>& shape) const;
  /// [start, stop) per dimension of the part of `shape` the device at position `pos` holds.
  std::vector<std::pair<int64_t, int64_t>> shard_range(const std::vector<int64_t>& shape, int64_t pos) const;
  /// The position of device id `device` in `devices`, or -1.
  int64_t position_of(int64_t device) const;
  bool operator==(const HloSharding&) const = default;
};

}  // namespace jitx::hlo
