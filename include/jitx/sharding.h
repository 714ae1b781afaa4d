// Shardings (JAX's jax.sharding): Mesh, PartitionSpec, NamedSharding, SingleDeviceSharding, and device_put of an
// array split over several devices.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "jitx/array.h"
#include "jitx/device.h"

namespace jitx {

/// Devices laid out as an n-dimensional array with named axes (jax.sharding.Mesh).
class Mesh {
 public:
  /// `devices` in row-major order over `shape` (their product must be the number of devices); a device may appear
  /// once only.
  Mesh(std::vector<Device> devices, std::vector<int64_t> shape, std::vector<std::string> axis_names,
       Loc loc = Loc::current());
  /// A 1-D mesh: Mesh(devices(), {"x"}).
  Mesh(std::vector<Device> devices, std::vector<std::string> axis_names, Loc loc = Loc::current());

  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<std::string>& axis_names() const { return axis_names_; }
  int64_t size() const { return static_cast<int64_t>(devices_.size()); }
  /// The size of the named axis; throws when the mesh has no such axis.
  int64_t axis_size(const std::string& name, Loc loc = Loc::current()) const;
  /// The position of the named axis, or -1.
  int64_t axis_index(const std::string& name) const;
  /// "Mesh('data': 2, 'model': 4)", as JAX prints it; short_str() is "(data=2, model=4)".
  std::string str() const;
  std::string short_str() const;
  bool operator==(const Mesh& o) const;

 private:
  std::vector<Device> devices_;
  std::vector<int64_t> shape_;
  std::vector<std::string> axis_names_;
};

/// A mesh of the first prod(axis_shapes) devices (of `devices`, default all), as jax.make_mesh.
Mesh make_mesh(std::vector<int64_t> axis_shapes, std::vector<std::string> axis_names, std::vector<Device> devices = {},
               Loc loc = Loc::current());

/// Which mesh axes split each array dimension (jax.sharding.PartitionSpec): P("data", nullptr) splits dimension 0
/// over the mesh axis "data" and leaves dimension 1 whole; P({"data", "model"}) splits dimension 0 over both axes
/// (major to minor). Dimensions past the spec's length are not split. A one-dimension spec of several axes is
/// written P(P::Entry{"data", "model"}): in C++ P({"data", "model"}) is ambiguous (one dimension or two).
class PartitionSpec {
 public:
  /// One dimension's entry: nullptr (None: not split), one axis name, or several.
  struct Entry {
    std::vector<std::string> axes;
    Entry(std::nullptr_t) {}                                // NOLINT(google-explicit-constructor)
    Entry(const char* axis) : axes{axis} {}                 // NOLINT(google-explicit-constructor)
    Entry(std::string axis) : axes{std::move(axis)} {}      // NOLINT(google-explicit-constructor)
    Entry(std::initializer_list<std::string> a) : axes(a) {}  // NOLINT(google-explicit-constructor)
    explicit Entry(std::vector<std::string> a) : axes(std::move(a)) {}
    bool operator==(const Entry&) const = default;
  };
  PartitionSpec() = default;
  explicit PartitionSpec(Entry a) : entries_{std::move(a)} {}
  PartitionSpec(Entry a, Entry b) : entries_{std::move(a), std::move(b)} {}
  PartitionSpec(Entry a, Entry b, Entry c) : entries_{std::move(a), std::move(b), std::move(c)} {}
  PartitionSpec(Entry a, Entry b, Entry c, Entry d)
      : entries_{std::move(a), std::move(b), std::move(c), std::move(d)} {}
  static PartitionSpec from_entries(std::vector<Entry> entries) {
    PartitionSpec p;
    p.entries_ = std::move(entries);
    return p;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  /// "P('data', None)", "P(('data', 'model'),)", "P()" as JAX prints them.
  std::string str() const;
  bool operator==(const PartitionSpec&) const = default;

 private:
  std::vector<Entry> entries_;
};
using P = PartitionSpec;

/// A mesh and a PartitionSpec over its axes (jax.sharding.NamedSharding). Throws when the spec names an axis the
/// mesh lacks or uses one axis twice.
class NamedSharding {
 public:
  NamedSharding(Mesh mesh, PartitionSpec spec, Loc loc = Loc::current());
  const Mesh& mesh() const { return mesh_; }
  const PartitionSpec& spec() const { return spec_; }
  std::string str() const;
  bool operator==(const NamedSharding&) const = default;

 private:
  Mesh mesh_;
  PartitionSpec spec_;
};

/// The whole array on one device (jax.sharding.SingleDeviceSharding).
class SingleDeviceSharding {
 public:
  explicit SingleDeviceSharding(Device device) : device_(device) {}
  Device device() const { return device_; }
  std::string str() const;
  bool operator==(const SingleDeviceSharding&) const = default;

 private:
  Device device_;
};

/// Any sharding: a NamedSharding or a SingleDeviceSharding.
class Sharding {
 public:
  Sharding(NamedSharding s) : s_(std::move(s)) {}         // NOLINT(google-explicit-constructor)
  Sharding(SingleDeviceSharding s) : s_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  bool is_named() const { return std::holds_alternative<NamedSharding>(s_); }
  /// Null unless this is a NamedSharding.
  const NamedSharding* named() const { return std::get_if<NamedSharding>(&s_); }
  const SingleDeviceSharding* single() const { return std::get_if<SingleDeviceSharding>(&s_); }
  /// The devices that hold some part of an array with this sharding, in mesh order.
  std::vector<Device> device_set() const;
  /// The devices of device_set() this process holds (jitx::distributed: its own), in mesh order.
  std::vector<Device> addressable_devices() const;
  /// Whether this process holds every device of the sharding (always, in a one-process run).
  bool is_fully_addressable() const;
  /// Whether every device holds the whole array (a spec that splits no dimension over an axis of size > 1).
  bool is_fully_replicated() const;
  /// The shape of one device's shard of an array of `global_shape` (the last shard of an uneven split is smaller).
  Shape shard_shape(const Shape& global_shape, Loc loc = Loc::current()) const;
  /// The sharding's short form, as explain_cache_misses prints it: "P('data', None) on mesh (data=2)",
  /// "replicated" (a spec that splits nothing), "device cpu:0".
  std::string short_str() const;
  std::string str() const;
  bool operator==(const Sharding&) const = default;

 private:
  std::variant<SingleDeviceSharding, NamedSharding> s_;
};

/// One device's part of an array (jax.Shard): its device, the index range it covers per dimension, which copy it is
/// when the array is replicated over some devices (replica_id 0 is the first), and its data (an Array on device).
struct Shard {
  Device device;
  std::vector<std::pair<int64_t, int64_t>> index;  // [start, stop) per dimension
  int64_t replica_id = 0;
  Array data;
};

/// The array split into per-device shards as `sharding` says (waits for the value first): each device of the mesh
/// gets a committed buffer with its part. A dimension split n ways must be divisible by n (as JAX's device_put
/// requires); the spec must not be longer than the array's rank. In a multi-process job each process passes the same
/// (global) value and keeps the shards of its own devices.
Array device_put(const Array& a, const Sharding& sharding, Loc loc = Loc::current());

/// The index ranges of one shard: [start, stop) per dimension (jax's tuple of slices).
using ShardIndex = std::vector<std::pair<int64_t, int64_t>>;

/// An array of `shape` sharded as `sharding`, built shard by shard (jax.make_array_from_callback): for each device of
/// this process, `data_callback(index)` returns that device's part (a host or device array of the shard's shape;
/// every part of one dtype). Only this process's shards are asked for, so each process supplies its own data.
Array make_array_from_callback(const Shape& shape, const Sharding& sharding,
                               const std::function<Array(const ShardIndex&)>& data_callback,
                               Loc loc = Loc::current());
/// An array of `shape` sharded as `sharding` from this process's shards (jax.make_array_from_single_device_arrays):
/// one array per device of sharding.addressable_devices(), in that order, each of the shard's shape and one dtype.
/// Each is copied to its device unless it is there already.
Array make_array_from_single_device_arrays(const Shape& shape, const Sharding& sharding, std::vector<Array> arrays,
                                           Loc loc = Loc::current());
/// A global array from each process's part of it (jax.make_array_from_process_local_data): `local_data` is the block
/// of the global array that this process's devices hold (for a batch sharded over every device, this process's rows).
/// `global_shape` defaults to the local shape scaled, per dimension, by how many processes' blocks split it.
Array make_array_from_process_local_data(const Sharding& sharding, const Array& local_data,
                                         std::optional<Shape> global_shape = std::nullopt, Loc loc = Loc::current());

namespace multihost {
/// Every process's value of `x` on every process (jax.experimental.multihost_utils.process_allgather). For an array
/// over a mesh spanning processes: its whole (global) value. For a process-local array: the processes' values stacked
/// on a new leading axis, or concatenated along axis 0 when `tiled`. Collective: every process must call it.
Array process_allgather(const Array& x, bool tiled = false, Loc loc = Loc::current());
/// Waits until every process has reached this call with the same `name` (multihost_utils.sync_global_devices).
void sync_global_devices(const std::string& name, Loc loc = Loc::current());
}  // namespace multihost

namespace debug {
/// Prints the layout of a 0-, 1- or 2-d array over its devices as a text table (jax.debug.visualize_array_sharding):
/// one cell per shard, naming the devices holding it ("CPU 0,1" for a shard replicated on cpu:0 and cpu:1).
void visualize_array_sharding(const Array& a, Loc loc = Loc::current());
/// The same table as a string.
std::string array_sharding_table(const Array& a, Loc loc = Loc::current());
}  // namespace debug

}  // namespace jitx
