// Global arrays built shard by shard (make_array_from_callback / _single_device_arrays / _process_local_data) and
// the multi-process helpers (multihost::process_allgather, sync_global_devices).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>

#include "api/sharding_internal.h"
#include "core/communicator_mpi.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/sharding.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"
#include "runtime/sharded.h"

namespace jitx {

namespace {

using detail::Literal;

std::string index_str(const ShardIndex& index) {
  std::string s;
  for (auto& [lo, hi] : index) s += fmt::format("{}{}:{}", s.empty() ? "" : ", ", lo, hi);
  return "[" + s + "]";
}

/// The ranges of the device at mesh position `i` of `sharding` for an array of `shape`.
ShardIndex range_of(const hlo::HloSharding& tiling, const Shape& shape, const Device& d) {
  return tiling.shard_range(shape, tiling.replicated ? 0 : tiling.position_of(d.id()));
}

/// Builds the array from one host literal per addressable device (null for the others), in device_set() order.
Array assemble(const Sharding& sharding, const Shape& shape, std::vector<std::shared_ptr<runtime::Buffer>> shards,
               DType dtype) {
  ShapedArray aval{shape, dtype, false};
  return detail::make_sharded(std::make_shared<const Sharding>(sharding), std::move(shards), aval);
}

/// Waits for everything this process has enqueued: a collective called from the user's thread holds the MPI lock,
/// so programs still in flight (whose collectives need it too) must finish first, on every process alike.
void drain_local_streams() {
  for (auto* d : runtime::Client::get().devices()) d->stream.synchronize();
}

}  // namespace

Array make_array_from_callback(const Shape& shape, const Sharding& sharding,
                               const std::function<Array(const ShardIndex&)>& data_callback, Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "make_array_from_callback";
  detail::check_sharding_fits(sharding, shape, op);
  if (!data_callback) detail::throw_error<TypeError>(op, "data_callback is empty");
  auto devices = sharding.device_set();
  auto tiling = detail::tiling_of(sharding, static_cast<int64_t>(shape.size()));
  std::vector<std::shared_ptr<runtime::Buffer>> shards;
  std::optional<DType> dtype;
  for (auto& d : devices) {
    if (!d.is_addressable()) {
      shards.emplace_back();
      continue;
    }
    ShardIndex index = range_of(tiling, shape, d);
    Array part = data_callback(index);
    if (!part.valid())
      detail::throw_error<TypeError>(op, "data_callback returned an empty Array for {}", index_str(index));
    Shape want;
    for (auto& [lo, hi] : index) want.push_back(hi - lo);
    if (part.shape() != want)
      detail::throw_error<ShapeError>(op, "data_callback returned shape {} for the shard {} of device {}, expected {}",
                                      detail::shape_str(part.shape()), index_str(index), d.str(),
                                      detail::shape_str(want));
    if (dtype && part.dtype() != *dtype)
      detail::throw_error<TypeError>(op, "data_callback returned {} for the shard {} but {} for an earlier one",
                                     dtype_name(part.dtype()), index_str(index), dtype_name(*dtype));
    dtype = part.dtype();
    auto buf = runtime::Buffer::from_literal(part.impl()->host_literal(op), d.get());
    buf->committed = true;
    shards.push_back(std::move(buf));
  }
  if (!dtype)
    detail::throw_error<RuntimeError>(op, "none of the devices of {} belongs to this process (process {})",
                                      sharding.str(), runtime::Client::get().default_device()->process_index);
  return assemble(sharding, shape, std::move(shards), *dtype);
}

Array make_array_from_single_device_arrays(const Shape& shape, const Sharding& sharding, std::vector<Array> arrays,
                                           Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "make_array_from_single_device_arrays";
  detail::check_sharding_fits(sharding, shape, op);
  auto local = sharding.addressable_devices();
  if (arrays.size() != local.size())
    detail::throw_error<ShapeError>(op, "got {} arrays, but {} has {} devices in this process (one array each, in "
                                    "the order of sharding.addressable_devices())",
                                    arrays.size(), sharding.str(), local.size());
  if (local.empty())
    detail::throw_error<RuntimeError>(op, "none of the devices of {} belongs to this process", sharding.str());
  auto tiling = detail::tiling_of(sharding, static_cast<int64_t>(shape.size()));
  std::vector<std::shared_ptr<runtime::Buffer>> shards;
  size_t next = 0;
  DType dtype = arrays[0].dtype();
  for (auto& d : sharding.device_set()) {
    if (!d.is_addressable()) {
      shards.emplace_back();
      continue;
    }
    const Array& a = arrays[next++];
    ShardIndex index = range_of(tiling, shape, d);
    Shape want;
    for (auto& [lo, hi] : index) want.push_back(hi - lo);
    if (!a.valid() || a.is_tracer())
      detail::throw_error<TypeError>(op, "arrays[{}] must be a concrete array", next - 1);
    if (a.shape() != want || a.dtype() != dtype)
      detail::throw_error<ShapeError>(op, "arrays[{}] for device {} is {}, expected {} (the shard {} of {})",
                                      next - 1, d.str(), a.aval().str(), ShapedArray{want, dtype, false}.str(),
                                      index_str(index), detail::shape_str(shape));
    const auto& buf = detail::concrete_buffer(a, op);
    if (buf->device == d.get()) {
      buf->committed = true;
      shards.push_back(buf);
    } else {
      shards.push_back(detail::concrete_buffer(device_put(a, d, loc), op));
    }
  }
  return assemble(sharding, shape, std::move(shards), dtype);
}

Array make_array_from_process_local_data(const Sharding& sharding, const Array& local_data,
                                         std::optional<Shape> global_shape, Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "make_array_from_process_local_data";
  if (!local_data.valid()) detail::throw_error<TypeError>(op, "local_data is an empty Array");
  const Shape& lshape = local_data.shape();
  int64_t rank = static_cast<int64_t>(lshape.size());
  auto local = sharding.addressable_devices();
  if (local.empty())
    detail::throw_error<RuntimeError>(op, "none of the devices of {} belongs to this process", sharding.str());
  auto tiling = detail::tiling_of(sharding, rank);
  // Per dimension: how many of its tiles this process's devices hold. The process's block spans that many tiles.
  Shape gshape = lshape;
  if (!global_shape) {
    for (int64_t dim = 0; dim < rank; ++dim) {
      std::set<int64_t> mine;
      for (auto& d : local) mine.insert(tiling.replicated ? 0 : tiling.tile_index(tiling.position_of(d.id()))[dim]);
      int64_t t = tiling.tiles(dim), m = static_cast<int64_t>(mine.size());
      gshape[static_cast<size_t>(dim)] = lshape[static_cast<size_t>(dim)] * t / m;
    }
  } else {
    gshape = *global_shape;
  }
  if (static_cast<int64_t>(gshape.size()) != rank)
    detail::throw_error<ShapeError>(op, "global_shape {} has another rank than local_data's shape {}",
                                    detail::shape_str(gshape), detail::shape_str(lshape));
  detail::check_sharding_fits(sharding, gshape, op);
  // The process's block: from the smallest start to the largest stop of its shards, per dimension.
  std::vector<int64_t> lo(static_cast<size_t>(rank), INT64_MAX), hi(static_cast<size_t>(rank), 0);
  for (auto& d : local) {
    auto r = range_of(tiling, gshape, d);
    for (size_t k = 0; k < r.size(); ++k) {
      lo[k] = std::min(lo[k], r[k].first);
      hi[k] = std::max(hi[k], r[k].second);
    }
  }
  for (size_t k = 0; k < lo.size(); ++k)
    if (hi[k] - lo[k] != lshape[k])
      detail::throw_error<ShapeError>(op,
                                      "local_data has shape {}, but this process's devices hold the block {} of the "
                                      "global shape {} (dimension {} needs {} elements)",
                                      detail::shape_str(lshape), index_str([&] {
                                        ShardIndex b;
                                        for (size_t j = 0; j < lo.size(); ++j) b.emplace_back(lo[j], hi[j]);
                                        return b;
                                      }()),
                                      detail::shape_str(gshape), k, hi[k] - lo[k]);
  Literal whole = local_data.impl()->host_literal(op);
  return make_array_from_callback(
      gshape, sharding,
      [&](const ShardIndex& index) {
        ShardIndex rel;
        for (size_t k = 0; k < index.size(); ++k) rel.emplace_back(index[k].first - lo[k], index[k].second - lo[k]);
        auto buf = runtime::Buffer::from_literal(detail::slice_literal(whole, rel),
                                                 runtime::Client::get().default_device());
        return detail::make_concrete(buf, false);
      },
      loc);
}

namespace multihost {

Array process_allgather(const Array& x, bool tiled, Loc loc) {
  detail::ApiScope s(loc);
  const char* op = "process_allgather";
  if (!x.valid() || x.is_tracer()) detail::throw_error<TypeError>(op, "needs a concrete array");
  auto* sa = detail::as_sharded(x);
  drain_local_streams();
  if (sa && !sa->fully_addressable()) {
    // A global array: each process sends its distinct shards ((start, stop) per dimension, then the bytes).
    std::vector<char> mine;
    std::set<ShardIndex> sent;
    for (auto& sh : x.addressable_shards(loc)) {
      if (!sent.insert(sh.index).second) continue;
      Literal lit = sh.data.impl()->host_literal(op);
      for (auto& [a, b] : sh.index) {
        mine.insert(mine.end(), reinterpret_cast<const char*>(&a), reinterpret_cast<const char*>(&a) + 8);
        mine.insert(mine.end(), reinterpret_cast<const char*>(&b), reinterpret_cast<const char*>(&b) + 8);
      }
      auto* p = static_cast<const char*>(lit.data());
      mine.insert(mine.end(), p, p + lit.nbytes());
    }
    Literal out = Literal::make(x.dtype(), x.shape());
    for (auto& bytes : detail::mpi_allgather_bytes(mine)) {
      size_t at = 0;
      while (at < bytes.size()) {
        ShardIndex index;
        for (int64_t k = 0; k < x.ndim(); ++k) {
          int64_t a, b;
          std::memcpy(&a, bytes.data() + at, 8);
          std::memcpy(&b, bytes.data() + at + 8, 8);
          at += 16;
          index.emplace_back(a, b);
        }
        std::vector<int64_t> dims;
        for (auto& [a, b] : index) dims.push_back(b - a);
        Literal part = Literal::make(x.dtype(), dims);
        std::memcpy(part.data(), bytes.data() + at, part.nbytes());
        at += part.nbytes();
        detail::paste_literal(out, part, index);
      }
    }
    return detail::make_concrete(runtime::Buffer::from_literal(out, runtime::Client::get().default_device()),
                                 x.weak_type());
  }
  // A process-local value: stacked (or concatenated) over processes, in process order.
  Literal lit = x.impl()->host_literal(op);
  std::vector<char> mine(static_cast<const char*>(lit.data()), static_cast<const char*>(lit.data()) + lit.nbytes());
  auto all = detail::mpi_allgather_bytes(mine);
  for (size_t p = 0; p < all.size(); ++p)
    if (all[p].size() != mine.size())
      detail::throw_error<ShapeError>(op, "process {} has {} bytes of {} but this process has {} ({}): every process "
                                      "must pass the same shape",
                                      p, all[p].size(), dtype_name(x.dtype()), mine.size(),
                                      detail::shape_str(x.shape()));
  Shape shape = x.shape();
  int64_t np = static_cast<int64_t>(all.size());
  if (tiled) {
    if (shape.empty()) detail::throw_error<ShapeError>(op, "tiled=true needs an array of rank >= 1, got a scalar");
    shape[0] *= np;
  } else {
    shape.insert(shape.begin(), np);
  }
  Literal out = Literal::make(x.dtype(), shape);
  for (size_t p = 0; p < all.size(); ++p)
    if (!mine.empty()) std::memcpy(static_cast<char*>(out.data()) + p * mine.size(), all[p].data(), mine.size());
  return detail::make_concrete(runtime::Buffer::from_literal(out, runtime::Client::get().default_device()),
                               x.weak_type());
}

void sync_global_devices(const std::string& name, Loc loc) {
  detail::ApiScope s(loc);
  drain_local_streams();
  std::vector<char> mine(name.begin(), name.end());
  auto all = detail::mpi_allgather_bytes(mine);
  for (size_t p = 0; p < all.size(); ++p)
    if (all[p] != mine)
      detail::throw_error<RuntimeError>("sync_global_devices", "process {} reached sync_global_devices(\"{}\") while "
                                        "this process reached sync_global_devices(\"{}\")",
                                        p, std::string(all[p].begin(), all[p].end()), name);
}

}  // namespace multihost

}  // namespace jitx
