// The multi-process API in one process (issue 17): the device list (devices, local_devices, process_index), the
// make_array_from_* constructors, process_allgather and sync_global_devices without MPI, and block_until_ready of a
// sharded array. The multi-process runs of the same functions are tests/mpi/mpi_api.cpp (CTest mpi_collectives_np*).
#include <catch2/catch.hpp>

#include <cmath>

#include "jitx/jitx.h"
#include "runtime/sharded.h"
#include "test_util.h"
#include "spmd_test_util.h"

using namespace jitx;

namespace {

using testing::have;
using testing::require_error;

Array host_iota(const Shape& shape, double scale) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(std::sin(scale * double(i + 1)));
  return array(v.data(), shape);
}

}  // namespace

TEST_CASE("the device list of one process: every device local, process 0", "[spmd][multihost]") {
  auto all = devices(), mine = local_devices();
  REQUIRE(all.size() == mine.size());
  CHECK(device_count() == static_cast<int64_t>(all.size()));
  CHECK(local_device_count() == static_cast<int64_t>(mine.size()));
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i] == mine[i]);
    CHECK(all[i].id() == static_cast<int>(i));
    CHECK(all[i].process_index() == 0);
    CHECK(all[i].is_addressable());
  }
  CHECK(distributed::process_index() == 0);
  CHECK(distributed::process_count() == 1);
}

TEST_CASE("make_array_from_callback builds each device's shard from its index", "[spmd][multihost]") {
  if (!have(8)) return;
  Mesh m = make_mesh({2, 4}, {"a", "b"});
  NamedSharding s(m, P("b", "a"));
  Array whole = host_iota({8, 6}, 0.37);
  std::vector<ShardIndex> asked;
  Array x = make_array_from_callback({8, 6}, s, [&](const ShardIndex& idx) {
    asked.push_back(idx);
    return lax::slice(whole, {idx[0].first, idx[1].first}, {idx[0].second, idx[1].second});
  });
  CHECK(asked.size() == 8);  // one call per device
  CHECK(x.sharding() == Sharding(s));
  CHECK(x.to_vector<float>() == whole.to_vector<float>());
  for (auto& sh : x.addressable_shards()) {
    CHECK(sh.data.shape() == Shape{2, 3});
    CHECK(sh.data.to_vector<float>() ==
          lax::slice(whole, {sh.index[0].first, sh.index[1].first}, {sh.index[0].second, sh.index[1].second})
              .to_vector<float>());
  }
  // Replicated over "a": the callback runs for each device, and both copies hold the same block.
  Array r = make_array_from_callback({8, 6}, NamedSharding(m, P("b")), [&](const ShardIndex& idx) {
    return lax::slice(whole, {idx[0].first, 0}, {idx[0].second, 6});
  });
  CHECK(r.to_vector<float>() == whole.to_vector<float>());
  require_error<ShapeError>(
      [&] { make_array_from_callback({8, 6}, s, [&](const ShardIndex&) { return whole; }); }, "expected (2, 3)");
  require_error<ShapeError>(
      [&] { make_array_from_callback({7, 6}, s, [&](const ShardIndex&) { return whole; }); }, "evenly divide");
  require_error<TypeError>(
      [&] {
        int k = 0;
        make_array_from_callback({8, 6}, s, [&](const ShardIndex& idx) {
          Array p = lax::slice(whole, {idx[0].first, idx[1].first}, {idx[0].second, idx[1].second});
          return k++ ? p.astype(float64) : p;
        });
      },
      "f64");
}

TEST_CASE("make_array_from_single_device_arrays takes one array per addressable device", "[spmd][multihost]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"x"});
  NamedSharding s(m, P(nullptr, "x"));
  Array whole = host_iota({3, 8}, 0.11);
  std::vector<Array> parts;
  for (int64_t i = 0; i < 4; ++i) {
    Array p = lax::slice(whole, {0, 2 * i}, {3, 2 * i + 2});
    parts.push_back(i % 2 ? device_put(p, m.devices()[static_cast<size_t>(i)]) : p);  // on its device, or copied
  }
  Array x = make_array_from_single_device_arrays({3, 8}, s, parts);
  CHECK(x.to_vector<float>() == whole.to_vector<float>());
  auto shards = x.addressable_shards();
  REQUIRE(shards.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(shards[i].device == m.devices()[i]);
  require_error<ShapeError>([&] { make_array_from_single_device_arrays({3, 8}, s, {parts[0]}); }, "got 1 arrays");
  require_error<ShapeError>(
      [&] { make_array_from_single_device_arrays({3, 8}, s, {parts[0], parts[1], parts[2], whole}); },
      "expected f32[3,2]");
}

TEST_CASE("make_array_from_process_local_data: in one process the local data is the whole array",
          "[spmd][multihost]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"x"});
  Array whole = host_iota({8, 3}, 0.23);
  Array x = make_array_from_process_local_data(NamedSharding(m, P("x")), whole);
  CHECK(x.shape() == Shape{8, 3});
  CHECK(x.to_vector<float>() == whole.to_vector<float>());
  CHECK(x.addressable_shards().size() == 4);
  require_error<ShapeError>(
      [&] { make_array_from_process_local_data(NamedSharding(m, P("x")), whole, Shape{16, 3}); },
      "local_data has shape");
}

TEST_CASE("process_allgather and sync_global_devices in one process", "[spmd][multihost]") {
  if (!have(4)) return;
  Array v = host_iota({2, 3}, 0.5);
  Array st = multihost::process_allgather(v);
  CHECK(st.shape() == Shape{1, 2, 3});
  CHECK(st.to_vector<float>() == v.to_vector<float>());
  CHECK(multihost::process_allgather(v, true).shape() == Shape{2, 3});
  require_error<ShapeError>([&] { multihost::process_allgather(Array(1.0f), true); }, "rank >= 1");
  multihost::sync_global_devices("one process");
}

TEST_CASE("block_until_ready of a sharded array waits for its shards without assembling it", "[spmd][multihost]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"x"});
  Array x = device_put(host_iota({8, 3}, 0.3), NamedSharding(m, P("x")));
  auto f = jit([](const Array& a) { return jnp::exp(a) * 2.0f; });
  Array y = f(x);
  y.block_until_ready();
  auto* sa = detail::as_sharded(y);
  REQUIRE(sa);
  CHECK(!sa->buffer);  // not assembled on one device
  for (auto& s : sa->shards) CHECK(s->ready->is_ready());
  CHECK(y.is_fully_addressable());
}

TEST_CASE("donate_argnums in a partitioned call: shards written in place, the donated array invalid after",
          "[spmd][multihost]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"x"});
  NamedSharding rows(m, P("x"));
  JitOptions o;
  o.donate_argnums = {0};
  auto step = jit([](const Array& w, const Array& g) { return w - 0.5f * g; }, o);
  Array w = device_put(host_iota({8, 3}, 0.7), rows), g = device_put(host_iota({8, 3}, 0.9), rows);
  auto want = (host_iota({8, 3}, 0.7) - 0.5f * host_iota({8, 3}, 0.9)).to_vector<float>();
  std::vector<const void*> before;
  for (auto& s : detail::as_sharded(w)->shards) before.push_back(s->storage.get());
  Array w2 = step(w, g);
  CHECK(w2.to_vector<float>() == want);
  // On cpu each device's result lives in the donated shard's memory (the interpreter may ignore donation); either
  // way the donated array is gone.
  auto* s2 = detail::as_sharded(w2);
  REQUIRE(s2);
  if (default_platform() == "cpu")
    for (size_t i = 0; i < 4; ++i) CHECK(s2->shards[i]->storage.get() == before[i]);
  require_error<RuntimeError>([&] { w.to_vector<float>(); }, "donated");
  require_error<RuntimeError>([&] { step(w, g); }, "donated");
  // g was not donated: still valid, and usable again.
  CHECK(step(w2, g).to_vector<float>().size() == 24);
}
