// Shardings on jit's path: the cache key and explain_cache_misses, in_shardings / out_shardings, and
// lax::with_sharding_constraint under jit, grad and vmap.
#include <catch2/catch.hpp>
#include <mutex>

#include "jitx/jitx.h"
#include "test_util.h"
#include "spmd_test_util.h"

using namespace jitx;

namespace {

using testing::have;

struct Log {
  std::mutex mu;
  std::string text;
  Log() {
    config().log_compiles = true;
    config().explain_cache_misses = true;
    set_log_sink([this](const std::string& s) {
      std::lock_guard<std::mutex> l(mu);
      text += s + "\n";
    });
  }
  ~Log() {
    config().log_compiles = false;
    config().explain_cache_misses = false;
    set_log_sink(nullptr);
  }
};

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i) - 1.0f;
  return v;
}

}  // namespace

TEST_CASE("jit: shardings are part of the cache key, and explain_cache_misses names a sharding change", "[spmd]") {
  if (!have(4)) return;
  Mesh m = make_mesh({2}, {"data"});
  Mesh m4 = make_mesh({4}, {"data"});
  auto f = jit([](const Array& x) { return jnp::sin(x) * 2.0f; });
  Array host = array(ramp(8), {4, 2});
  Array want = jnp::sin(host) * 2.0f;
  Array a = device_put(host, NamedSharding(m, P("data", nullptr)));
  Array b = device_put(host, NamedSharding(m, P()));
  Array c = device_put(host, NamedSharding(m4, P("data")));
  Log log;
  CHECK(f(a).to_vector<float>() == want.to_vector<float>());
  CHECK(f(a).to_vector<float>() == want.to_vector<float>());  // a hit
  CHECK(f.num_compiles() == 1);
  CHECK(f(b).to_vector<float>() == want.to_vector<float>());
  CHECK(f.num_compiles() == 2);
  CHECK(log.text.find("args[0] (sharding): seen P('data', None) on mesh (data=2), now replicated") !=
        std::string::npos);
  CHECK(f(c).to_vector<float>() == want.to_vector<float>());
  CHECK(f(host).to_vector<float>() == want.to_vector<float>());
  CHECK(f.num_compiles() == 4);
  CHECK(log.text.find("now unsharded") != std::string::npos);
  // The same spec on other devices is another key.
  auto ds = devices();
  Mesh other({ds[2], ds[3]}, {"data"});
  f(device_put(host, NamedSharding(other, P("data", nullptr))));
  CHECK(f.num_compiles() == 5);
  auto f2 = jit([](const Array& x) { return x * 3.0f; });
  f2(a);
  f2(device_put(host, NamedSharding(other, P("data", nullptr))));
  CHECK(f2.num_compiles() == 2);
  CHECK(log.text.find("seen P('data', None) on mesh (data=2), now P('data', None) on mesh (data=2) on other "
                      "devices") != std::string::npos);
  CHECK(f(a).to_vector<float>() == want.to_vector<float>());
  CHECK(f.num_compiles() == 5);  // still cached
}

TEST_CASE("jit: out_shardings place the results, in_shardings check the arguments", "[spmd]") {
  if (!have(8)) return;
  Mesh m = make_mesh({2, 4}, {"data", "model"});
  NamedSharding rows(m, P("data", nullptr)), cols(m, P(nullptr, "model"));
  Array x = array(ramp(32), {8, 4}), y = array(ramp(16), {4, 4});
  auto f = jit([](const Array& a, const Array& b) { return std::make_tuple(jnp::matmul(a, b), a.sum({1})); },
               JitOptions{}.set_out_shardings({rows, std::nullopt}).set_in_shardings({rows, std::nullopt}));
  auto [p, s] = f(device_put(x, rows), y);
  CHECK(p.sharding() == Sharding(rows));
  CHECK(p.addressable_shards().size() == 8);
  CHECK(p.addressable_shards()[4].index == std::vector<std::pair<int64_t, int64_t>>{{4, 8}, {0, 4}});
  auto ref = jnp::matmul(x, y).to_vector<float>();
  auto got = p.to_vector<float>();
  for (size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == Approx(ref[i]).epsilon(1e-6));
  // The row sums keep the rows' split (the partitioner's choice: no communication).
  CHECK(s.sharding() == Sharding(NamedSharding(m, P("data"))));
  // An unsharded argument is accepted (placed per in_shardings); one sharded otherwise is an error.
  CHECK_NOTHROW(f(x, y));
  CHECK_THROWS_WITH(f(device_put(x, cols), y), Catch::Contains("is sharded as") && Catch::Contains("in_shardings"));
  // in_shardings that do not fit the argument: JAX's divisibility error.
  auto g = jit([](const Array& a) { return a + 1.0f; }, JitOptions{}.set_in_shardings({NamedSharding(m, P("model"))}));
  CHECK_THROWS_WITH(g(zeros({6})), Catch::Contains("partitioned 4 times"));
  auto h = jit([](const Array& a) { return a; }, JitOptions{}.set_out_shardings({rows, rows}));
  CHECK_THROWS_WITH(h(x), Catch::Contains("out_shardings has 2 entries, but the function returns 1"));
}

TEST_CASE("lax::with_sharding_constraint: the identity in value under jit, grad and vmap", "[spmd]") {
  if (!have(2)) return;
  Mesh m = make_mesh({2}, {"data"});
  NamedSharding s(m, P("data"));
  Array x = array(ramp(8), {8});
  auto f = [&](const Array& a) { return jnp::sum(lax::with_sharding_constraint(a * a, s) * 3.0f); };
  CHECK(jit(f)(x).item<float>() == Approx(jnp::sum(x * x * 3.0f).item<float>()));
  std::string jaxpr = make_jaxpr(f)(x).str();
  CHECK(jaxpr.find("sharding_constraint[sharding=") != std::string::npos);
  // grad: d/dx sum(3 x^2) = 6 x; the transpose keeps the constraint on the cotangent.
  auto g = grad(f)(x).to_vector<float>();
  auto xs = x.to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) CHECK(g[i] == Approx(6.0f * xs[i]));
  std::string gj = make_jaxpr(grad(f))(x).str();
  size_t n = 0;
  for (size_t at = 0; (at = gj.find("sharding_constraint", at)) != std::string::npos; ++at) ++n;
  CHECK(n == 2);  // forward and its transpose
  // vmap over a leading axis: the batch dimension is not split, the constraint moves to the next one.
  Array xb = array(ramp(16), {2, 8});
  auto vb = vmap([&](const Array& a) { return lax::with_sharding_constraint(a, s) + 1.0f; })(xb);
  CHECK(vb.to_vector<float>() == (xb + 1.0f).to_vector<float>());
  std::string vj = make_jaxpr(vmap([&](const Array& a) { return lax::with_sharding_constraint(a, s); }))(xb).str();
  CHECK(vj.find("P(None, 'data')") != std::string::npos);
  // Eagerly it is device_put.
  Array e = lax::with_sharding_constraint(x, s);
  CHECK(e.sharding() == Sharding(s));
  CHECK(e.to_vector<float>() == xs);
  CHECK_THROWS_WITH(
      jit([&](const Array& a) { return lax::with_sharding_constraint(a, NamedSharding(m, P("data", nullptr))); })(x),
      Catch::Contains("[with_sharding_constraint]") && Catch::Contains("rank at least 2"));
}

TEST_CASE("jit: sharded arguments run partitioned on their devices, results carry the partitioner's shardings",
          "[spmd]") {
  for (int64_t n : {2, 4, 8}) {
    if (!have(size_t(n))) return;
    INFO("devices: " << n);
    Mesh m = make_mesh({n}, {"data"});
    NamedSharding rows(m, P("data", nullptr));
    Array x = array(ramp(64), {16, 4});
    Array w = array(ramp(12), {4, 3}) * 0.1f;
    Array xs = device_put(x, rows);
    // Forward: the product keeps x's rows split, with no communication.
    auto mm = jit([](const Array& a, const Array& b) { return jnp::tanh(jnp::matmul(a, b)); });
    Array y = mm(xs, w);
    CHECK(y.sharding() == Sharding(rows));
    auto want_y = jnp::tanh(jnp::matmul(x, w)).to_vector<float>();
    auto got_y = y.to_vector<float>();
    for (size_t i = 0; i < want_y.size(); ++i) CHECK(got_y[i] == Approx(want_y[i]).epsilon(1e-5));
    std::string fwd = mm.lower(xs, w).compile().as_text();
    CHECK(testing::collective_count(fwd, "all-reduce") == 0);
    CHECK(testing::collective_count(fwd, "all-gather") == 0);
    CHECK(fwd.find(fmt::format("sharding={{devices=[{},1]", n)) != std::string::npos);
    CHECK(fwd.find(fmt::format(", num_partitions={}\n", n)) < fwd.find('\n') + 1);  // in the header, as XLA's
    // The lowered text carries the mesh and the shardings as JAX 0.10.2 lowers them (Shardy), and imports back.
    std::string low = mm.lower(xs, w).as_text();
    INFO(low);
    CHECK(low.find(fmt::format("mhlo.num_partitions = {} : i32", n)) != std::string::npos);
    CHECK(low.find(fmt::format("  sdy.mesh @mesh = <[\"data\"={}]>\n", n)) != std::string::npos);
    CHECK(low.find("%arg0: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}, "
                   "%arg1: tensor<4x3xf32>)") != std::string::npos);
    CHECK(low.find("{jax.result_info = \"result\", sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}") !=
          std::string::npos);
    CHECK(import_stablehlo(low).compile()(x, w)[0].to_vector<float>() == mm(x, w).to_vector<float>());
    // The gradient of a data-parallel loss: one all-reduce for the weight's gradient, which ends up replicated.
    auto loss = [](const Array& w_, const Array& x_) { return jnp::sum(jnp::tanh(jnp::matmul(x_, w_))); };
    auto g = jit(grad(loss));
    Array gw = g(w, xs);
    CHECK(gw.is_fully_replicated());
    CHECK(gw.addressable_shards().size() == size_t(n));
    auto want = grad(loss)(w, x).to_vector<float>();
    auto got = gw.to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-4));
    std::string text = g.lower(w, xs).compile().as_text();
    INFO(text);
    CHECK(testing::collective_count(text, "all-reduce") == 1);
    CHECK(testing::collective_count(text, "all-gather") == 0);
  }
}

TEST_CASE("jit: a sharding constraint reshards inside the partitioned program, loops run partitioned",
          "[spmd]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"data"});
  NamedSharding rows(m, P("data", nullptr)), all(m, P());
  Array x = array(ramp(32), {8, 4});
  Array xs = device_put(x, rows);
  // The constraint asks for the whole value on every device: one all-gather, and the result is replicated.
  auto f = jit([&](const Array& a) { return lax::with_sharding_constraint(jnp::exp(a), all) + 1.0f; });
  Array y = f(xs);
  CHECK(y.is_fully_replicated());
  auto want = (jnp::exp(x) + 1.0f).to_vector<float>();
  auto got = y.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-6));
  std::string text = f.lower(xs).compile().as_text();
  CHECK(testing::collective_count(text, "all-gather") > 0);
  CHECK(text.find("sharding={replicated}") != std::string::npos);
  // Control flow is partitioned: the loop runs on the four devices, its carry split as the argument.
  auto loop = jit([](const Array& a) {
    return lax::fori_loop(0, 3, [](const Array&, const Array& c) { return c * 2.0f; }, a);
  });
  Array z = loop(xs);
  CHECK(z.to_vector<float>() == (x * 8.0f).to_vector<float>());
  CHECK(z.addressable_shards().size() == 4);
  CHECK(z.sharding() == Sharding(rows));
}

TEST_CASE("jit: in_shardings place unsharded arguments, and a Compiled places as it was lowered (as JAX)",
          "[spmd][jit]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"i"});
  Array a8 = jnp::arange(8).astype(DType::float64);
  std::vector<double> twice{0, 2, 4, 6, 8, 10, 12, 14};
  // JAX: jax.jit(lambda x: x * 2, in_shardings=NamedSharding(m, P('i')))(a8).sharding is P('i',).
  auto f = jit([](const Array& x) { return x * 2; }, JitOptions{}.set_in_shardings({NamedSharding(m, P("i"))}));
  Array r = f(a8);
  CHECK(r.sharding() == Sharding(NamedSharding(m, P("i"))));
  CHECK(r.to_vector<double>() == twice);
  CHECK(f(a8).to_vector<double>() == twice);
  CHECK(f.num_compiles() == 1);
  // A SingleDeviceSharding moves the argument there, committed elsewhere or not.
  auto g = jit([](const Array& x) { return x * 2; },
               JitOptions{}.set_in_shardings({SingleDeviceSharding(devices()[2])}));
  CHECK(device_of(g(a8)) == devices()[2]);
  CHECK(device_of(g(device_put(a8, devices()[1]))) == devices()[2]);
  // A Compiled lowered for a sharded argument takes an unsharded one (placed), and a strong f64 scalar where it
  // was lowered with a weak one (the same executable); another dtype is still an error.
  auto c = jit([](const Array& x) { return x * 2; }).lower(device_put(a8, NamedSharding(m, P("i")))).compile();
  Array rc = c(a8);
  CHECK(rc.sharding() == Sharding(NamedSharding(m, P("i"))));
  CHECK(rc.to_vector<double>() == twice);
  auto c2 = jit([](const Array& x, const Array& y) { return x * y; }).lower(a8, 2.0).compile();
  CHECK(c2(a8, jnp::array(3.0)).to_vector<double>() == std::vector<double>{0, 3, 6, 9, 12, 15, 18, 21});
  CHECK_THROWS_AS(c2(a8, jnp::array(3.0f)), TypeError);
}

TEST_CASE("jit: in_shardings has one entry per non-static positional argument, as JAX's jit", "[spmd][jit]") {
  if (!have(3)) return;
  Array a = jnp::arange(4).astype(DType::float32);
  SingleDeviceSharding on2(devices()[2]);
  // JAX: "pjit in_shardings ... is the wrong length" for too many and too few entries.
  auto many = jit([](const Array& x) { return x + 1; }, JitOptions{}.set_in_shardings({on2, on2}));
  CHECK_THROWS_WITH(many(a), Catch::Contains("in_shardings has 2 entries") && Catch::Contains("1 non-static"));
  auto few = jit([](const Array& x, const Array& y) { return x + y; }, JitOptions{}.set_in_shardings({on2}));
  CHECK_THROWS_AS(few(a, a), TypeError);
  // A static argument has no entry: jax.jit(f, static_argnums=0, in_shardings=(s,))(2, x) places x by s.
  auto st = jit([](int n, const Array& x) { return x * float(n); },
                JitOptions{}.set_static_argnums({0}).set_in_shardings({on2}));
  Array r = st(3, a);
  CHECK(device_of(r) == devices()[2]);
  CHECK(r.to_vector<float>() == std::vector<float>{0, 3, 6, 9});
  auto st2 = jit([](int n, const Array& x) { return x * float(n); },
                 JitOptions{}.set_static_argnums({0}).set_in_shardings({on2, on2}));
  CHECK_THROWS_AS(st2(3, a), TypeError);
}

TEST_CASE("eager ops on sharded arrays give sharded results, as JAX's", "[spmd]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"i"});
  Array x = jnp::arange(32).astype(DType::float32).reshape({8, 4});
  Array xs = device_put(x, NamedSharding(m, P("i")));
  // JAX: (xs * 2).sharding is NamedSharding(mesh, P('i',)); jnp.sum(xs) is replicated on the mesh.
  Array y = xs * 2.0f;
  CHECK(y.addressable_shards().size() == 4);
  CHECK(y.sharding().named() != nullptr);
  CHECK(y.to_vector<float>() == (x * 2.0f).to_vector<float>());
  Array t = jnp::sum(xs);
  CHECK(t.addressable_shards().size() == 4);
  CHECK(t.item<float>() == 496.0f);
  Array col = jnp::sum(xs, {0});  // a reduction over the split axis: replicated
  CHECK(col.to_vector<float>() == std::vector<float>{112, 120, 128, 136});
  Array mixed = xs + jnp::ones({8, 4});  // a sharded and an unsharded operand
  CHECK(mixed.addressable_shards().size() == 4);
  CHECK(jnp::sum(mixed).item<float>() == 528.0f);
}
