// Sharded arrays: an Array whose value is split over several devices, one buffer per device.
#pragma once
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "hlo/ir/sharding.h"
#include "jitx/sharding.h"
#include "runtime/concrete.h"

namespace jitx::detail {

/// A concrete array held as one buffer per device of its sharding. `buffer` (the ConcreteArray's) stays empty until
/// an eager op or a single-device computation needs the whole array: assembled() builds it then (on the host,
/// waiting for the shards), once. Host reads assemble the shards directly.
struct ShardedArray : ConcreteArray {
  std::shared_ptr<const Sharding> sharding;
  hlo::HloSharding tiling;                           // device ids as the runtime numbers them
  std::vector<std::shared_ptr<runtime::Buffer>> shards;  // in the order of `devices`; null on other processes' devices
  std::vector<runtime::Device*> devices;             // the sharding's devices, in mesh order
  bool is_sharded() const override { return true; }

  /// The whole value; throws (naming `op`) when a shard lives in another process and the array is not replicated.
  Literal host_literal(std::string_view op) const override;
  /// Whether this process holds every shard (false when the mesh spans other processes' devices).
  bool fully_addressable() const;
  /// Waits until every shard this process holds is computed.
  void wait_local() const;
  /// The whole array in one (uncommitted) buffer on the default device.
  const std::shared_ptr<runtime::Buffer>& assembled(std::string_view op);

 private:
  std::mutex mu_;
};

/// The tiling of `sharding` for an array of rank `rank` (checks nothing: NamedSharding's constructor did).
hlo::HloSharding tiling_of(const Sharding& sharding, int64_t rank);
/// The shard of `whole` that covers `range`, as a new literal.
Literal slice_literal(const Literal& whole, const std::vector<std::pair<int64_t, int64_t>>& range);
/// Copies `part` into `whole` at the offsets `range` starts at.
void paste_literal(Literal& whole, const Literal& part, const std::vector<std::pair<int64_t, int64_t>>& range);
/// An Array from per-device shards (in the order of sharding's device_set()).
Array make_sharded(std::shared_ptr<const Sharding> sharding, std::vector<std::shared_ptr<runtime::Buffer>> shards,
                   const ShapedArray& aval);
/// The ShardedArray behind `a`, or null (a plain single-device array, or a tracer).
ShardedArray* as_sharded(const Array& a);

}  // namespace jitx::detail
