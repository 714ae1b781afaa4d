// Shardings: Mesh, PartitionSpec, NamedSharding, device_put over several devices, shards and their assembly.
#include <catch2/catch.hpp>

#include "hlo/ir/sharding.h"
#include "jitx/jitx.h"
#include "runtime/sharded.h"
#include "test_util.h"
#include "spmd_test_util.h"

using namespace jitx;

namespace {

using testing::have;
using testing::require_error;

std::vector<float> iota_f(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f - 3.0f;
  return v;
}

}  // namespace

TEST_CASE("Mesh, make_mesh and PartitionSpec print and check as JAX's do", "[spmd]") {
  if (!have(8)) return;
  Mesh m = make_mesh({2, 4}, {"data", "model"});
  CHECK(m.str() == "Mesh('data': 2, 'model': 4)");
  CHECK(m.short_str() == "(data=2, model=4)");
  CHECK(m.size() == 8);
  CHECK(m.axis_size("model") == 4);
  CHECK(m.devices()[5] == devices()[5]);
  CHECK(P("data", nullptr).str() == "P('data', None)");
  CHECK(P({"data", "model"}, nullptr).str() == "P(('data', 'model'), None)");
  CHECK(P("data").str() == "P('data',)");
  CHECK(P().str() == "P()");
  NamedSharding ns(m, P("data", nullptr));
  CHECK(ns.str() == "NamedSharding(mesh=Mesh('data': 2, 'model': 4), spec=P('data', None))");
  CHECK(Sharding(ns).short_str() == "P('data', None) on mesh (data=2, model=4)");
  CHECK(Sharding(NamedSharding(m, P())).short_str() == "replicated");
  CHECK(Sharding(SingleDeviceSharding(devices()[1])).short_str() == "device " + devices()[1].str());

  auto ds = devices();
  require_error<Error>(
      [&] {
        Mesh({ds[0], ds[0]}, {"x"});
      },
      "[Mesh] devices must be unique, but " + ds[0].str() + " is listed twice");
  require_error<Error>([&] { Mesh({ds[0], ds[1], ds[2], ds[3]}, {2, 2}, {"x"}); }, "[Mesh] requires the ndim");
  require_error<Error>([&] { Mesh({ds[0], ds[1], ds[2]}, {2, 2}, {"x", "y"}); }, "needs 4 devices, got 3");
  require_error<Error>([&] { make_mesh({4, 4}, {"x", "y"}); }, "[make_mesh] the mesh shape (4, 4) needs 16 devices");
  require_error<Error>([&] { make_mesh({2, 4}, {"x"}); }, "[make_mesh] got 2 axis sizes");
  require_error<Error>([&] { make_mesh({2, 2}, {"x", "x"}); }, "axis names must be unique");
  require_error<Error>([&] { NamedSharding(m, P("z")); },
                       "[NamedSharding] resource axis: z of P('z',) is not found in mesh: ('data', 'model')");
  require_error<Error>([&] { NamedSharding(m, P("data", "data")); }, "has duplicate entries for `data`");
  require_error<Error>([&] { NamedSharding(m, P({"model", "data"}, "data")); }, "duplicate entries for `data`");
}

TEST_CASE("NamedSharding's tile assignment is XLA's", "[spmd]") {
  if (!have(8)) return;
  Mesh m = make_mesh({2, 4}, {"data", "model"});
  auto t = [&](PartitionSpec p, int64_t rank) { return detail::tiling_of(NamedSharding(m, p), rank).to_string(); };
  CHECK(t(P("data", "model"), 2) == "{devices=[2,4]0,1,2,3,4,5,6,7}");
  CHECK(t(P("model", "data"), 2) == "{devices=[4,2]0,4,1,5,2,6,3,7}");
  CHECK(t(P("data", nullptr), 2) == "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
  CHECK(t(P(nullptr, "model"), 2) == "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}");
  CHECK(t(P(P::Entry{"data", "model"}), 1) == "{devices=[8]0,1,2,3,4,5,6,7}");
  CHECK(t(P(P::Entry{"model", "data"}), 1) == "{devices=[8]0,4,1,5,2,6,3,7}");
  CHECK(t(P(), 2) == "{replicated}");
}

TEST_CASE("device_put splits an array into shards, reading it assembles them", "[spmd]") {
  if (!have(8)) return;
  auto ds = devices();
  Array x = array(iota_f(32), {8, 4});
  struct Case {
    std::vector<int64_t> mesh;
    PartitionSpec spec;
    Shape shard;
    bool replicated;
  };
  std::vector<Case> cases = {
      {{2}, P("a"), {4, 4}, false},
      {{4}, P(nullptr, "a"), {8, 1}, false},
      {{8}, P("a", nullptr), {1, 4}, false},
      {{2}, P(), {8, 4}, true},
      {{2, 4}, P("a", "b"), {4, 1}, false},
      {{2, 4}, P("b", "a"), {2, 2}, false},
      {{2, 2}, P(P::Entry{"a", "b"}), {2, 4}, false},
      {{2, 2}, P(nullptr, "b"), {8, 2}, false},
  };
  for (auto& c : cases) {
    std::vector<std::string> names =
        c.mesh.size() == 1 ? std::vector<std::string>{"a"} : std::vector<std::string>{"a", "b"};
    Mesh m = make_mesh(c.mesh, names);
    NamedSharding ns(m, c.spec);
    INFO(ns.str());
    Array y = device_put(x, ns);
    CHECK(y.shape() == x.shape());
    CHECK(y.to_vector<float>() == x.to_vector<float>());
    CHECK(y.is_fully_replicated() == c.replicated);
    CHECK(y.sharding() == Sharding(ns));
    CHECK(Sharding(ns).shard_shape(x.shape()) == c.shard);
    auto shards = y.addressable_shards();
    REQUIRE(shards.size() == static_cast<size_t>(m.size()));
    auto host = x.to_vector<float>();
    for (size_t i = 0; i < shards.size(); ++i) {
      auto& s = shards[i];
      CHECK(s.device == m.devices()[i]);
      CHECK(device_of(s.data) == s.device);
      CHECK(s.data.shape() == c.shard);
      // The shard's values are the box `index` of x.
      auto v = s.data.to_vector<float>();
      size_t k = 0;
      for (int64_t r = s.index[0].first; r < s.index[0].second; ++r)
        for (int64_t q = s.index[1].first; q < s.index[1].second; ++q) CHECK(v[k++] == host[size_t(r * 4 + q)]);
    }
    // An eager op on a sharded array sees the whole value.
    CHECK((y * 2.0f).to_vector<float>() == (x * 2.0f).to_vector<float>());
  }
  // Replicas of one tile are numbered in device order.
  Mesh m = make_mesh({2, 2}, {"a", "b"});
  auto shards = device_put(x, NamedSharding(m, P("a"))).addressable_shards();
  CHECK(shards[0].replica_id == 0);
  CHECK(shards[1].replica_id == 1);
  CHECK(shards[2].replica_id == 0);
  CHECK(shards[3].replica_id == 1);
  CHECK(shards[1].index == shards[0].index);
  // A SingleDeviceSharding is device_put to one device.
  Array z = device_put(x, SingleDeviceSharding(ds[3]));
  CHECK(device_of(z) == ds[3]);
  CHECK(z.sharding() == Sharding(SingleDeviceSharding(ds[3])));
  CHECK(z.addressable_shards().size() == 1);
  CHECK(z.is_fully_replicated());
  // Other dtypes and a 0-d array (replicated).
  Array i = array(std::vector<int64_t>{1, -2, 3, -4, 5, -6}, {6});
  CHECK(device_put(i, NamedSharding(make_mesh({2}, {"x"}), P("x"))).to_vector<int64_t>() == i.to_vector<int64_t>());
  Array s0 = array(2.5);
  CHECK(device_put(s0, NamedSharding(make_mesh({4}, {"x"}), P())).item<double>() == 2.5);
}

TEST_CASE("device_put refuses a sharding that does not fit, as JAX does", "[spmd]") {
  if (!have(8)) return;
  Mesh m = make_mesh({2, 4}, {"data", "model"});
  require_error<ShapeError>([&] { device_put(arange(3, DType::float32), NamedSharding(m, P("data"))); },
                            "[device_put] sharding spec P('data',) implies that array axis 0 is partitioned 2 times, "
                            "but does not evenly divide the dimension size 3");
  require_error<ShapeError>(
      [&] {
        device_put(zeros({4, 6}), NamedSharding(m, P(nullptr, "model")));
      },
      "array axis 1 is partitioned 4 times");
  require_error<ShapeError>([&] { device_put(zeros({4}), NamedSharding(m, P("data", nullptr))); },
                            "is only valid for values of rank at least 2, but was applied to a value of rank 1");
  require_error<ShapeError>(
      [&] {
        debug::array_sharding_table(zeros({2, 2, 2}));
      },
      "[visualize_array_sharding] only 0-, 1- and 2-d arrays");
  // Under a trace, device_put of a tracer to a NamedSharding is not supported (with_sharding_constraint is the way).
  CHECK_THROWS_AS(jit([&](const Array& x) { return device_put(x, NamedSharding(m, P("data"))); })(zeros({4})),
                  TracerError);
}

TEST_CASE("visualize_array_sharding draws the device layout", "[spmd]") {
  if (!have(8)) return;
  Mesh m = make_mesh({2, 4}, {"data", "model"});
  Array x = zeros({8, 4});
  if (devices()[0].platform() != "cpu") {  // the labels name the platform: "INTERPRETER 0,1"
    CHECK(debug::array_sharding_table(device_put(x, NamedSharding(make_mesh({2, 2}, {"a", "b"}), P("a"))))
              .find("│ INTERPRETER 2,3 │") != std::string::npos);
    return;
  }
  CHECK(debug::array_sharding_table(device_put(x, NamedSharding(m, P("data", "model")))) ==
        "┌───────┬───────┬───────┬───────┐\n"
        "│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │\n"
        "├───────┼───────┼───────┼───────┤\n"
        "│ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │\n"
        "└───────┴───────┴───────┴───────┘\n");
  Mesh m2 = make_mesh({2, 2}, {"a", "b"});
  CHECK(debug::array_sharding_table(device_put(x, NamedSharding(m2, P("a")))) ==
        "┌─────────┐\n"
        "│ CPU 0,1 │\n"
        "├─────────┤\n"
        "│ CPU 2,3 │\n"
        "└─────────┘\n");
  CHECK(debug::array_sharding_table(device_put(zeros({4}), NamedSharding(m2, P("b")))) ==
        "┌─────────┬─────────┐\n"
        "│ CPU 0,2 │ CPU 1,3 │\n"
        "└─────────┴─────────┘\n");
  CHECK(debug::array_sharding_table(zeros({3})) ==
        "┌───────┐\n"
        "│ CPU 0 │\n"
        "└───────┘\n");
}
