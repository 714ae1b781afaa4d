// Sharded arrays: the tiling of a NamedSharding, slicing a value into shards and assembling it back.
#include "runtime/sharded.h"

#include <cstring>

#include "core/errors.h"

namespace jitx::detail {

hlo::HloSharding tiling_of(const Sharding& sharding, int64_t rank) {
  const NamedSharding* ns = sharding.named();
  if (!ns) return hlo::HloSharding::replicate();
  const Mesh& mesh = ns->mesh();
  const auto& spec = ns->spec().entries();
  // The mesh's axes in the order the tile assignment walks them: the axes of dimension 0 (major to minor), of
  // dimension 1, ..., then the axes no dimension uses (they replicate).
  std::vector<int64_t> order, tile_dims;
  std::vector<bool> used(mesh.shape().size(), false);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t t = 1;
    if (d < static_cast<int64_t>(spec.size()))
      for (auto& name : spec[static_cast<size_t>(d)].axes) {
        int64_t a = mesh.axis_index(name);
        JITX_ASSERT(a >= 0, "axis {} not in the mesh", name);
        order.push_back(a);
        used[static_cast<size_t>(a)] = true;
        t *= mesh.shape()[static_cast<size_t>(a)];
      }
    tile_dims.push_back(t);
  }
  int64_t rep = 1;
  for (size_t a = 0; a < used.size(); ++a)
    if (!used[a]) {
      order.push_back(static_cast<int64_t>(a));
      rep *= mesh.shape()[a];
    }
  bool last = rep > 1;
  if (last) tile_dims.push_back(rep);
  // Device ids of the mesh transposed to `order`, row-major.
  auto strides = row_major_strides(mesh.shape());
  std::vector<int64_t> tshape;
  for (auto a : order) tshape.push_back(mesh.shape()[static_cast<size_t>(a)]);
  std::vector<int64_t> devs;
  devs.reserve(static_cast<size_t>(mesh.size()));
  IndexCounter it(tshape);
  for (int64_t k = 0; k < mesh.size(); ++k, it.next()) {
    int64_t flat = 0;
    for (size_t j = 0; j < order.size(); ++j) flat += it.idx[j] * strides[static_cast<size_t>(order[j])];
    devs.push_back(mesh.devices()[static_cast<size_t>(flat)].id());
  }
  return hlo::HloSharding::tiled(std::move(tile_dims), std::move(devs), last);
}

namespace {
/// Copies the box `range` between `big` (the whole array) and `small` (its shard): to the shard when `to_small`.
void copy_box(Literal& big, Literal& small, const std::vector<std::pair<int64_t, int64_t>>& range, bool to_small) {
  size_t es = dtype_size(big.dtype);
  if (small.size() == 0) return;
  if (big.dims.empty()) {
    if (to_small)
      std::memcpy(small.data(), big.data(), es);
    else
      std::memcpy(big.data(), small.data(), es);
    return;
  }
  auto bs = row_major_strides(big.dims);
  size_t inner = static_cast<size_t>(small.dims.back()) * es;
  std::vector<int64_t> outer(small.dims.begin(), small.dims.end() - 1);
  int64_t rows = num_elements(outer);
  IndexCounter it(outer);
  auto* b = static_cast<char*>(big.data());
  auto* s = static_cast<char*>(small.data());
  for (int64_t r = 0; r < rows; ++r, it.next()) {
    int64_t off = range.back().first;
    for (size_t d = 0; d < outer.size(); ++d) off += (it.idx[d] + range[d].first) * bs[d];
    char* bp = b + static_cast<size_t>(off) * es;
    char* sp = s + static_cast<size_t>(r) * inner;
    if (to_small)
      std::memcpy(sp, bp, inner);
    else
      std::memcpy(bp, sp, inner);
  }
}
}  // namespace

Literal slice_literal(const Literal& whole, const std::vector<std::pair<int64_t, int64_t>>& range) {
  std::vector<int64_t> dims;
  for (auto& [lo, hi] : range) dims.push_back(hi - lo);
  Literal out = Literal::make(whole.dtype, dims);
  copy_box(const_cast<Literal&>(whole), out, range, true);
  return out;
}

void paste_literal(Literal& whole, const Literal& part, const std::vector<std::pair<int64_t, int64_t>>& range) {
  copy_box(whole, const_cast<Literal&>(part), range, false);
}

bool ShardedArray::fully_addressable() const {
  for (auto& s : shards)
    if (!s) return false;
  return true;
}

void ShardedArray::wait_local() const {
  for (auto& s : shards)
    if (s) s->ready->wait();
}

Literal ShardedArray::host_literal(std::string_view op) const {
  Literal out = Literal::make(aval.dtype, aval.shape);
  if (!fully_addressable() && !tiling.replicated)
    throw_error<RuntimeError>(op,
                              "fetching the value of an Array that spans non-addressable devices (devices of other "
                              "processes: {}) is not possible; use jitx::multihost::process_allgather(x) for the "
                              "whole value, or x.addressable_shards() for this process's shards",
                              sharding->str());
  for (size_t i = 0; i < shards.size(); ++i) {
    if (!shards[i]) continue;  // another process's shard (of a replicated array: any local copy will do)
    if (shards[i]->deleted)
      throw_error<RuntimeError>(op,
                                "this Array's buffer was donated to a jitted call (donate_argnums) and is no "
                                "longer valid; use the call's output instead");
    auto range = tiling.shard_range(aval.shape, tiling.replicated ? 0 : tiling.position_of(devices[i]->id));
    paste_literal(out, shards[i]->literal(), range);
    if (tiling.replicated) break;
  }
  return out;
}

const std::shared_ptr<runtime::Buffer>& ShardedArray::assembled(std::string_view op) {
  std::lock_guard<std::mutex> l(mu_);
  if (!buffer) buffer = runtime::Buffer::from_literal(host_literal(op), runtime::Client::get().default_device());
  return buffer;
}

Array make_sharded(std::shared_ptr<const Sharding> sharding, std::vector<std::shared_ptr<runtime::Buffer>> shards,
                   const ShapedArray& aval) {
  auto s = std::make_shared<ShardedArray>();
  s->aval = aval;
  s->tiling = tiling_of(*sharding, aval.ndim());
  for (auto& d : sharding->device_set()) s->devices.push_back(d.get());
  JITX_ASSERT(s->devices.size() == shards.size(), "{} shards for {} devices", shards.size(), s->devices.size());
  s->shards = std::move(shards);
  s->sharding = std::move(sharding);
  return Array(s);
}

ShardedArray* as_sharded(const Array& a) {
  if (!a.valid() || a.is_tracer()) return nullptr;
  return a.impl()->is_sharded() ? static_cast<ShardedArray*>(a.impl().get()) : nullptr;
}

}  // namespace jitx::detail
