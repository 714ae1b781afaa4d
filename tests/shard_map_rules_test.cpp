// The rules of shard_map's collective primitives, used from inside the body: vmap inside the body (the ordinary
// batching rule), grad inside the body (JVP + transpose, JAX's check_rep=False semantics: psum's transpose is a
// psum), the transpose rules checked by the adjoint identity <ct, A x> = <A^T ct, x> summed over the devices, and
// make_jaxpr / lowering of jit(shard_map) (a shard_map equation holding the collectives).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "jitx/jitx.h"
#include "test_util.h"
#include "spmd_test_util.h"

using namespace jitx;
using V = std::vector<double>;

namespace {

using testing::have;

Array f64(const V& v, Shape s) { return testing::make(v, std::move(s), DType::float64); }

void close(const Array& got, const Array& want, double tol = 1e-12) {
  REQUIRE(got.shape() == want.shape());
  V g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) REQUIRE(std::abs(g[i] - w[i]) <= tol * (1 + std::abs(w[i])));
}

using Fn1 = std::function<Array(const Array&)>;

}  // namespace

TEST_CASE("shard_map rules: vmap inside the body equals the collective on the whole block", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  Array x = f64(testing::uniform(4 * 2 * 3, -2, 2), {8, 3});
  auto both = [&](const Fn1& inner, const Fn1& whole, PartitionSpec out) {
    Array a = shard_map([&](const Array& b) { return vmap(inner)(b); }, mesh, P("i"), out)(x);
    Array w = shard_map(whole, mesh, P("i"), out)(x);
    close(a, w);
  };
  both([](const Array& r) { return lax::psum(r, "i"); }, [](const Array& b) { return lax::psum(b, "i"); }, P("i"));
  both([](const Array& r) { return lax::pmax(r * r, "i"); }, [](const Array& b) { return lax::pmax(b * b, "i"); },
       P("i"));
  // all_gather of each row (3,) -> (4, 3); vmapped: (2, 4, 3), the gather of the block along axis 1.
  both([](const Array& r) { return lax::all_gather(r, "i"); },
       [](const Array& b) { return lax::all_gather(b, "i", 1); }, P("i"));
  both(
      [](const Array& r) {
        return lax::ppermute(r, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
      },
      [](const Array& b) {
        return lax::ppermute(b, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
      },
      P("i"));
  // A row of 4 split over the 4 devices: all_to_all per row (tiled) equals the block's with axes shifted.
  Array y = f64(testing::uniform(4 * 2 * 4, -2, 2), {8, 4});
  Array a = shard_map(
      [](const Array& b) { return vmap([](const Array& r) { return lax::all_to_all(r, "i", 0, 0, true); })(b); }, mesh,
      P("i"), P("i"))(y);
  Array w = shard_map([](const Array& b) { return lax::all_to_all(b, "i", 1, 1, true); }, mesh, P("i"), P("i"))(y);
  close(a, w);
  Array ps = shard_map(
      [](const Array& b) { return vmap([](const Array& r) { return lax::psum_scatter(r, "i", 0, true); })(b); }, mesh,
      P("i"), P("i"))(y);
  Array pw = shard_map([](const Array& b) { return lax::psum_scatter(b, "i", 1, true); }, mesh, P("i"), P("i"))(y);
  close(ps, pw);
}

TEST_CASE("shard_map rules: grad inside the body (JAX's check_rep=False semantics)", "[shard_map]") {
  if (!have(4)) return;
  const int64_t n = 4;
  Mesh mesh = make_mesh({n}, {"i"});
  V xv = testing::uniform(8 * 3, -2, 2);
  Array x = f64(xv, {8, 3});
  // L(r) = sum(sin(psum(r))): the cotangent cos(s) psummed again (psum's transpose): n * cos(s) on every device.
  Array g = shard_map(
      [](const Array& b) { return grad([](const Array& r) { return jnp::sum(jnp::sin(lax::psum(r, "i"))); })(b); },
      mesh, P("i"), P("i"))(x);
  Array s = shard_map([](const Array& b) { return lax::psum(b, "i"); }, mesh, P("i"), P("i"))(x);
  close(g, jnp::cos(s) * static_cast<double>(n));
  // L(r) = sum(w * ppermute(r)) with w = this device's index + 1: the gradient is the inverse shift of w.
  Array gp = shard_map(
      [](const Array& b) {
        return grad([](const Array& r) {
          Array w = lax::axis_index("i").astype(DType::float64) + 1.0;
          return jnp::sum(w * lax::ppermute(r, "i", {{0, 1}, {1, 2}, {2, 3}}));  // device 3 sends nothing
        })(b);
      },
      mesh, P("i"), P("i"))(x);
  V want(xv.size());
  for (int64_t d = 0; d < n; ++d)
    for (int64_t k = 0; k < 6; ++k) want[static_cast<size_t>(d * 6 + k)] = d < 3 ? static_cast<double>(d + 2) : 0.0;
  close(gp, f64(want, {8, 3}));
  // L(r) = sum(c * all_gather(r, tiled)) with c the same (8, 3) on every device: the gradient is reduce_scatter of
  // c, n copies of this device's rows of c.
  V cv = testing::uniform(8 * 3, -1, 1);
  Array c = f64(cv, {8, 3});
  Array ga = shard_map(
      [c](const Array& b) {
        return grad([c](const Array& r) { return jnp::sum(c * lax::all_gather(r, "i", 0, true)); })(b);
      },
      mesh, P("i"), P("i"))(x);
  close(ga, c * static_cast<double>(n));
  // pmax has no differentiation rule inside the body (as in JAX): a clear error.
  CHECK_THROWS_WITH(
      shard_map([](const Array& b) { return grad([](const Array& r) { return jnp::sum(lax::pmax(r, "i")); })(b); },
                mesh, P("i"), P("i"))(x),
      Catch::Contains("pmax"));
}

TEST_CASE("shard_map rules: transpose rules satisfy <ct, A x> = <A^T ct, x> over the devices", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  std::vector<std::pair<std::string, Fn1>> ops = {
      {"psum", [](const Array& r) { return lax::psum(r, "i"); }},
      {"all_gather", [](const Array& r) { return lax::all_gather(r, "i", 1); }},
      {"all_gather tiled", [](const Array& r) { return lax::all_gather(r, "i", 0, true); }},
      {"psum_scatter", [](const Array& r) { return lax::psum_scatter(r, "i", 1, true); }},
      {"all_to_all", [](const Array& r) { return lax::all_to_all(r, "i", 1, 0, true); }},
      {"all_to_all stacked", [](const Array& r) { return lax::all_to_all(r, "i", 1, 0, false); }},
      {"ppermute",
       [](const Array& r) {
         return lax::ppermute(r, "i", {{0, 2}, {2, 1}, {1, 0}});
       }},
  };
  Array x = f64(testing::uniform(4 * 2 * 4, -2, 2), {8, 4});
  for (auto& [name, A] : ops) {
    INFO(name);
    auto pair = shard_map(
        [A = A](const std::vector<Array>& in) {
          const Array& r = in[0];
          auto [y, back] = vjp(A, r);
          Array ct = jnp::sin(jnp::reshape(arange(y.size(), DType::float64), y.shape()) +
                              lax::axis_index("i").astype(DType::float64));
          Array at = std::get<0>(back(ct));
          return std::vector<Array>{lax::psum(jnp::sum(ct * y), "i"), lax::psum(jnp::sum(at * r), "i")};
        },
        mesh, {P("i")}, {P(), P()})({x});
    double lhs = pair[0].item<double>(), rhs = pair[1].item<double>();
    CHECK(std::abs(lhs - rhs) <= 1e-10 * (1 + std::abs(lhs)));
    CHECK(std::abs(lhs) > 1e-3);  // not trivially zero
  }
}

TEST_CASE("shard_map rules: jit(shard_map) is one shard_map equation, its values, grad and vmap", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  Array x = f64(testing::uniform(8 * 4, -2, 2), {8, 4});
  Array c = f64(testing::uniform(4, -1, 1), {4});  // closed over by the body: a replicated operand
  Fn1 body = [c](const Array& b) {
    Array g = lax::all_gather(b, "i", 0, true);                         // (8, 4)
    Array s = lax::psum_scatter(g * c, "i", 0, true);                   // (2, 4)
    Array t = lax::all_to_all(b, "i", 1, 1, true);                      // (2, 4)
    Array p = lax::ppermute(b, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});  // (2, 4)
    Array w = lax::axis_index("i").astype(DType::float64);
    return jnp::sin(s) + t * p + w + lax::pmean(b, "i") + lax::pmax(b, "i") - lax::pmin(b, "i");
  };
  Fn1 sm = shard_map(body, mesh, P("i"), P("i"));
  std::string text = make_jaxpr(sm)(x).str();
  INFO(text);
  for (const char* prim : {"shard_map[", "all_gather[", "reduce_scatter[", "all_to_all[", "ppermute[", "axis_index[",
                           "psum[", "pmax[", "pmin["})
    CHECK(text.find(prim) != std::string::npos);
  CHECK(text.find("f64[8,4] = all_gather") != std::string::npos);
  Array eager = sm(x);
  close(jit(sm)(x), eager);
  // grad of the jitted shard_map (its JVP runs the expansion) equals the eager grad, which finite differences
  // check in shard_map_test.cpp; here also against central differences on a few coordinates.
  Fn1 L = [sm](const Array& a) { return jnp::sum(jnp::square(sm(a))); };
  Array g_eager = grad(L)(x);
  Array g_jit = grad(jit(L))(x);
  close(g_jit, g_eager, 1e-10);
  close(jit(grad(L))(x), g_eager, 1e-10);
  V xv = x.to_vector<double>(), gv = g_eager.to_vector<double>();
  for (size_t i : {0u, 5u, 17u, 31u}) {
    V a = xv, b = xv;
    a[i] += 1e-6;
    b[i] -= 1e-6;
    double fd = (L(f64(a, {8, 4})).item<double>() - L(f64(b, {8, 4})).item<double>()) / 2e-6;
    CHECK(std::abs(fd - gv[i]) <= 1e-5 * (1 + std::abs(fd)));
  }
  // vmap of the jitted shard_map: a loop over the examples.
  Array xs = f64(testing::uniform(3 * 8 * 4, -2, 2), {3, 8, 4});
  Array vm = vmap(jit(sm))(xs);
  for (int64_t e = 0; e < 3; ++e) {
    Array xe = jnp::reshape(lax::slice_in_dim(xs, e, e + 1, 1, 0), {8, 4});
    close(jnp::reshape(lax::slice_in_dim(vm, e, e + 1, 1, 0), {8, 4}), sm(xe));
  }
}

TEST_CASE("shard_map rules: jit(shard_map).lower().as_text() is the SPMD form with StableHLO collectives",
          "[shard_map]") {
  if (!have(8)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  Array x = f64(testing::uniform(16 * 2, -2, 2), {16, 2});
  Fn1 body = [](const Array& b) {
    Array g = lax::all_gather(b, "i", 0, true);
    Array s = lax::psum_scatter(g, "i", 0, true);
    Array t = lax::all_to_all(b, "i", 0, 0, true);
    Array p = lax::ppermute(b, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
    Array w = lax::axis_index("i").astype(DType::float64);
    return lax::psum(b, "i") + lax::pmax(b, "i") + s + t + p + w;
  };
  Fn1 sm = shard_map(body, mesh, P("i"), P("i"));
  std::string text = jit(sm).lower(x).as_text();
  if (std::getenv("JITX_PRINT_SHARD_MAP_TEXT")) std::cout << text << "\n";
  INFO(text);
  for (const char* s :
       {"mhlo.num_partitions = 4 : i32",
        "stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[4,1]0,1,2,3}\"} : "
        "(tensor<16x2xf64>) -> tensor<16x2xf64>",
        "@SPMDFullToShardShape", "{mhlo.sharding = \"{manual}\"} : (tensor<16x2xf64>) -> tensor<4x2xf64>",
        "@SPMDShardToFullShape",
        "\"stablehlo.all_reduce\"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, "
        "replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}>",
        "stablehlo.maximum", "\"stablehlo.all_gather\"(%1) <{all_gather_dim = 0 : i64",
        ": (tensor<4x2xf64>) -> tensor<16x2xf64>", "\"stablehlo.reduce_scatter\"", "scatter_dimension = 0 : i64",
        "\"stablehlo.all_to_all\"", "split_count = 4 : i64", "\"stablehlo.collective_permute\"",
        "source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>",
        "stablehlo.partition_id : tensor<ui32>"})
    CHECK(text.find(s) != std::string::npos);
  // What runs (the manual region partitioned on the mesh): the same values as eager.
  close(jit(sm)(x), sm(x));
  // A 2-D mesh: the groups of partition ids along each axis (row-major over (data, model)).
  Mesh m2 = make_mesh({2, 4}, {"data", "model"});
  Array y = f64(testing::uniform(4 * 8, -2, 2), {4, 8});
  auto t2 = [&](const char* axis) {
    Fn1 f =
        shard_map([axis](const Array& b) { return lax::psum(b, axis); }, m2, P("data", "model"), P("data", "model"));
    return jit(f).lower(y).as_text();
  };
  CHECK(t2("model").find("replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>") !=
        std::string::npos);
  CHECK(t2("data").find("replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>") !=
        std::string::npos);
  // split_axis != concat_axis: the exchange goes through a leading chunk axis (reshape, transpose, all_to_all).
  Fn1 a2a = shard_map([](const Array& b) { return lax::all_to_all(b, "i", 0, 1, true); }, mesh, P("i"), P("i"));
  std::string a2a_text = jit(a2a).lower(x).as_text();
  CHECK(a2a_text.find("stablehlo.all_to_all") != std::string::npos);
  CHECK(a2a_text.find("stablehlo.transpose") != std::string::npos);
  close(jit(a2a)(x), a2a(x));
}

TEST_CASE("shard_map rules: jit(shard_map) on arguments sharded as its in_specs runs on the mesh's devices",
          "[shard_map][spmd]") {
  if (!have(8)) return;
  for (int64_t n : {2, 4, 8}) {
    INFO("devices " << n);
    Mesh mesh = make_mesh({n}, {"i"});
    Array x = f64(testing::uniform(static_cast<size_t>(n * 2 * n), -2, 2), {n * 2, n});
    Fn1 body = [n](const Array& b) {               // b: (2, n)
      Array g = lax::all_gather(b, "i", 0, true);  // (2n, n)
      Array s = lax::psum_scatter(g * g, "i", 0, true);
      Array t = lax::all_to_all(b, "i", 1, 1, true);
      std::vector<std::pair<int64_t, int64_t>> ring;
      for (int64_t d = 0; d < n; ++d) ring.emplace_back(d, (d + 1) % n);
      Array p = lax::ppermute(b, "i", ring);
      Array w = lax::axis_index("i").astype(DType::float64);
      return lax::psum(b, "i") * s + t - p + w + lax::pmax(b, "i");
    };
    Fn1 sm = shard_map(body, mesh, P("i"), P("i"));
    Array want = sm(x);  // eager: the expansion on one device
    Array xs = device_put(x, NamedSharding(mesh, P("i")));
    auto jf = jit(sm);
    Array got = jf(xs);
    close(got, want);
    // The result is sharded over the mesh (an unsharded call would give a one-device array).
    CHECK(got.addressable_shards().size() == static_cast<size_t>(n));
    CHECK(got.sharding().str().find("P('i'") != std::string::npos);
    // The program each partition runs holds the collectives.
    std::string hlo = jf.lower(xs).compile().as_text();
    INFO(hlo);
    for (const char* c : {"all-reduce", "all-gather", "reduce-scatter", "collective-permute", "partition-id"})
      CHECK(hlo.find(c) != std::string::npos);
    close(jf(device_put(x * 2.0, NamedSharding(mesh, P("i")))), sm(x * 2.0));
  }
  // A 2-D mesh, psum over one axis and a replicated result axis.
  Mesh m2 = make_mesh({2, 4}, {"data", "model"});
  Array y = f64(testing::uniform(4 * 8, -2, 2), {4, 8});
  Fn1 f =
      shard_map([](const Array& b) { return lax::psum(b, "model") + lax::axis_index("data").astype(DType::float64); },
                m2, P("data", "model"), P("data", "model"));
  Array ys = device_put(y, NamedSharding(m2, P("data", "model")));
  close(jit(f)(ys), f(y));
  CHECK(jit(f)(ys).addressable_shards().size() == 8);
}

TEST_CASE("shard_map rules: jit(shard_map(all_to_all)) on sharded arguments, any split and concat axes, untiled",
          "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  Array x = f64(testing::uniform(16 * 8, -2, 2), {16, 8});
  Array xs = device_put(x, NamedSharding(mesh, P("i")));
  auto a2a = [&](int64_t sp, int64_t ca, bool tiled) {
    return shard_map([=](const Array& b) { return lax::all_to_all(b, "i", sp, ca, tiled); }, mesh, P("i"), P("i"));
  };
  // By hand: device j's result block is every device's columns [2j, 2j + 2) stacked, so the (64, 2) result holds
  // x[:, 2j:2j+2] at rows [16 j, 16 j + 16).
  Array r = jit(a2a(1, 0, true))(xs);
  REQUIRE(r.shape() == Shape{64, 2});
  V got = r.to_vector<double>(), xv = x.to_vector<double>();
  for (int j = 0; j < 4; ++j)
    for (int row = 0; row < 16; ++row)
      for (int k = 0; k < 2; ++k) CHECK(got[(16 * j + row) * 2 + k] == xv[row * 8 + 2 * j + k]);
  // Every other form against the eager program (the direct SPMD path lowered only split == concat, tiled).
  for (auto [sp, ca] : {std::pair<int64_t, int64_t>{0, 1}, {1, 1}, {0, 0}})
    close(jit(a2a(sp, ca, true))(xs), a2a(sp, ca, true)(x));
  Array y = f64(testing::uniform(16 * 4, -2, 2), {16, 4});
  Array ys = device_put(y, NamedSharding(mesh, P("i")));
  for (auto [sp, ca] : {std::pair<int64_t, int64_t>{1, 0}, {0, 1}, {1, 1}, {0, 0}})
    close(jit(a2a(sp, ca, false))(ys), a2a(sp, ca, false)(y));
}
