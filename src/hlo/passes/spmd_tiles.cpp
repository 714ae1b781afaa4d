// The SPMD partitioner's tile arithmetic (see spmd_tiles.h).
#include "hlo/passes/spmd_tiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "core/errors.h"
#include "core/shape_util.h"

namespace jitx::hlo::spmd {

namespace {
[[noreturn]] void fail(const Instruction& i, const std::string& why) {
  throw CompileError(fmt::format("[spmd-partitioner] %{} ({}): {}", i.name, opcode_name(i.opcode), why));
}
}  // namespace

Tiles replicated(int64_t rank, int64_t n) {
  Tiles t;
  t.dims.assign(static_cast<size_t>(rank), 1);
  t.dims.push_back(n);
  for (int64_t p = 0; p < n; ++p) t.devices.push_back(p);
  return t;
}

Tiles tiles_of(const HloSharding& s, int64_t rank, int64_t n, const Instruction& at) {
  if (s.replicated) return replicated(rank, n);
  if (s.rank() != rank) fail(at, fmt::format("sharding {} does not fit rank {}", s.to_string(), rank));
  Tiles t;
  t.dims = s.tile_dims;
  if (!s.last_tile_replicate) t.dims.push_back(1);
  t.devices = s.devices;
  std::vector<int64_t> sorted = t.devices;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t p = 0; p < static_cast<int64_t>(sorted.size()); ++p)
    if (sorted[static_cast<size_t>(p)] != p || static_cast<int64_t>(sorted.size()) != n)
      fail(at, fmt::format("sharding {} is not over partitions 0..{}", s.to_string(), n - 1));
  return t;
}

HloSharding to_sharding(const Tiles& t) { return HloSharding::tiled(t.dims, t.devices, true); }

Tiles regroup(const Tiles& t, const std::vector<int64_t>& keep) {
  std::vector<int64_t> order;
  std::vector<bool> used(t.dims.size(), false);
  Tiles o;
  for (auto k : keep) {
    if (k < 0) {
      o.dims.push_back(1);
      continue;
    }
    order.push_back(k);
    used[static_cast<size_t>(k)] = true;
    o.dims.push_back(t.dims[static_cast<size_t>(k)]);
  }
  int64_t rep = 1;
  for (size_t d = 0; d < t.dims.size(); ++d)
    if (!used[d]) {
      order.push_back(static_cast<int64_t>(d));
      rep *= t.dims[d];
    }
  o.dims.push_back(rep);
  auto strides = detail::row_major_strides(t.dims);
  std::vector<int64_t> shape;
  for (auto d : order) shape.push_back(t.dims[static_cast<size_t>(d)]);
  detail::IndexCounter it(shape);
  for (size_t k = 0; k < t.devices.size(); ++k, it.next()) {
    int64_t flat = 0;
    for (size_t j = 0; j < order.size(); ++j) flat += it.idx[j] * strides[static_cast<size_t>(order[j])];
    o.devices.push_back(t.devices[static_cast<size_t>(flat)]);
  }
  if (!o.tiled()) return replicated(o.rank(), static_cast<int64_t>(o.devices.size()));  // one canonical form
  return o;
}

Groups groups_over(const Tiles& t, const std::vector<int64_t>& dims) {
  std::vector<int64_t> keep;  // every other dimension first, then dims: groups are the trailing blocks
  for (int64_t d = 0; d < static_cast<int64_t>(t.dims.size()); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) keep.push_back(d);
  for (auto d : dims) keep.push_back(d);
  // Transpose the tile array to `keep` order (regroup without a replication group of its own).
  auto strides = detail::row_major_strides(t.dims);
  std::vector<int64_t> shape;
  for (auto d : keep) shape.push_back(t.dims[static_cast<size_t>(d)]);
  int64_t size = 1;
  for (auto d : dims) size *= t.dims[static_cast<size_t>(d)];
  Groups g;
  detail::IndexCounter it(shape);
  for (size_t k = 0; k < t.devices.size(); ++k, it.next()) {
    int64_t flat = 0;
    for (size_t j = 0; j < keep.size(); ++j) flat += it.idx[j] * strides[static_cast<size_t>(keep[j])];
    if (k % static_cast<size_t>(size) == 0) g.emplace_back();
    g.back().push_back(t.devices[static_cast<size_t>(flat)]);
  }
  return g;
}

int64_t tile_index(const Tiles& t, int64_t p, int64_t d) {
  auto pos = std::find(t.devices.begin(), t.devices.end(), p) - t.devices.begin();
  int64_t rem = pos;
  for (int64_t k = static_cast<int64_t>(t.dims.size()) - 1; k > d; --k) rem /= t.dims[static_cast<size_t>(k)];
  return rem % t.dims[static_cast<size_t>(d)];
}

bool same_placement(const Tiles& a, const Tiles& b) {
  if (a == b) return true;
  if (a.rank() != b.rank() || a.devices.size() != b.devices.size()) return false;
  for (int64_t d = 0; d < a.rank(); ++d)
    if (a.dims[static_cast<size_t>(d)] != b.dims[static_cast<size_t>(d)]) return false;
  for (int64_t p : a.devices)
    for (int64_t d = 0; d < a.rank(); ++d)
      if (tile_index(a, p, d) != tile_index(b, p, d)) return false;
  return true;
}

bool refines(const Tiles& from, const Tiles& to) {
  if (from.rank() != to.rank()) return false;
  for (int64_t d = 0; d < from.rank(); ++d) {
    int64_t f = from.dims[static_cast<size_t>(d)], t = to.dims[static_cast<size_t>(d)];
    if (t % f != 0) return false;
    for (int64_t p : to.devices)
      if (tile_index(to, p, d) / (t / f) != tile_index(from, p, d)) return false;
  }
  return true;
}

std::optional<Tiles> combined_dot_tiles(const Tiles& l, const Tiles& r, const DotDimensionNumbers& dn, int64_t lr,
                                        int64_t rr, int64_t n) {
  auto in = [](const std::vector<int64_t>& v, int64_t d) { return std::find(v.begin(), v.end(), d) != v.end(); };
  std::vector<int64_t> lfree, rfree;
  for (int64_t d = 0; d < lr; ++d)
    if (!in(dn.lhs_batch_dims, d) && !in(dn.lhs_contracting_dims, d)) lfree.push_back(d);
  for (int64_t d = 0; d < rr; ++d)
    if (!in(dn.rhs_batch_dims, d) && !in(dn.rhs_contracting_dims, d)) rfree.push_back(d);
  std::vector<int64_t> dims;
  for (auto d : dn.lhs_batch_dims) dims.push_back(l.dims[static_cast<size_t>(d)]);
  for (auto d : lfree) dims.push_back(l.dims[static_cast<size_t>(d)]);
  for (auto d : rfree) dims.push_back(r.dims[static_cast<size_t>(d)]);
  for (auto d : dn.lhs_contracting_dims) dims.push_back(l.dims[static_cast<size_t>(d)]);
  int64_t tiles = 1;
  for (auto d : dims) tiles *= d;
  if (tiles <= 1 || n % tiles != 0) return std::nullopt;
  // Each partition's index in the combined array; the batch and contracting indices must agree.
  std::map<std::vector<int64_t>, std::vector<int64_t>> by_index;
  for (int64_t p = 0; p < n; ++p) {
    for (size_t k = 0; k < dn.lhs_batch_dims.size(); ++k)
      if (tile_index(l, p, dn.lhs_batch_dims[k]) != tile_index(r, p, dn.rhs_batch_dims[k])) return std::nullopt;
    for (size_t k = 0; k < dn.lhs_contracting_dims.size(); ++k)
      if (tile_index(l, p, dn.lhs_contracting_dims[k]) != tile_index(r, p, dn.rhs_contracting_dims[k]))
        return std::nullopt;
    std::vector<int64_t> idx;
    for (auto d : dn.lhs_batch_dims) idx.push_back(tile_index(l, p, d));
    for (auto d : lfree) idx.push_back(tile_index(l, p, d));
    for (auto d : rfree) idx.push_back(tile_index(r, p, d));
    for (auto d : dn.lhs_contracting_dims) idx.push_back(tile_index(l, p, d));
    by_index[idx].push_back(p);
  }
  if (static_cast<int64_t>(by_index.size()) != tiles) return std::nullopt;
  Tiles t;
  t.dims = dims;
  t.dims.push_back(n / tiles);
  for (auto& [idx, ps] : by_index) {  // row-major over the indices (std::map orders them so)
    if (static_cast<int64_t>(ps.size()) != n / tiles) return std::nullopt;
    t.devices.insert(t.devices.end(), ps.begin(), ps.end());
  }
  return t;
}

bool is_identity(const Instruction& init, Reducer r) {
  if (init.opcode != Opcode::kConstant || !init.shape.dims.empty()) return false;
  const auto& l = *init.literal;
  DType d = l.dtype;
  if (is_floating(d)) {
    double v = l.get_f64(0);
    switch (r) {
      case Reducer::kAdd:
        return v == 0;
      case Reducer::kMul:
        return v == 1;
      case Reducer::kMax:
        return v == -std::numeric_limits<double>::infinity();
      case Reducer::kMin:
        return v == std::numeric_limits<double>::infinity();
      default:
        return false;
    }
  }
  int64_t v = l.get_i64(0);
  switch (r) {
    case Reducer::kAdd:
      return v == 0;
    case Reducer::kMul:
      return v == 1;
    case Reducer::kAnd:
      return d == DType::bool_ ? v != 0 : v == -1;
    case Reducer::kOr:
      return v == 0;
    default:
      return false;  // integer max/min identities: resharded instead
  }
}

}  // namespace jitx::hlo::spmd
