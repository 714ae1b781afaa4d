// The partitioner's control flow and layout rules through jit (issue 17): a scan over layers with the batch split
// (the loop's carry keeps its tiles, the body's reduction ends in an all-reduce, no all-gather), a cond whose
// branches see split operands, reshapes that keep a major tiled dimension, and dynamic slices of whole tiled
// dimensions. Each on 2, 4 and 8 devices and a 2x4 mesh, against the same function on one device.
#include <catch2/catch.hpp>

#include <cmath>

#include "jitx/jitx.h"
#include "jitx/random.h"
#include "runtime/runtime.h"
#include "test_util.h"
#include "spmd_test_util.h"

using namespace jitx;

namespace {

using testing::have;

size_t count(const std::string& text, const std::string& op) { return testing::collective_count(text, op); }

/// The largest |a - b| / (1 + |b|) over the elements (f32 results: a sharded sum adds in another order).
double rel_diff(const Array& a, const Array& b) {
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  REQUIRE(x.size() == y.size());
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]) / (1 + std::abs(y[i])));
  return m;
}

std::vector<Mesh> meshes() {
  std::vector<Mesh> out;
  for (int64_t n : {2, 4, 8})
    if (have(static_cast<size_t>(n))) out.push_back(make_mesh({n}, {"d"}));
  if (have(8)) out.push_back(make_mesh({2, 4}, {"d", "m"}));
  return out;
}

}  // namespace

TEST_CASE("partitioner: a scan over layers with the batch split keeps its carry split", "[spmd][spmd_control]") {
  auto f = jit([](const Array& x, const Array& w) {
    auto body = [](const Array& h, const Array& wl) {
      Array nh = jnp::tanh(jnp::matmul(h, wl));
      return std::pair{nh, jnp::sum(nh)};
    };
    return lax::scan(body, x, w);
  });
  Array x = random::normal(random::PRNGKey(1), {16, 8});
  Array w = random::normal(random::PRNGKey(2), {3, 8, 8}) * 0.4;
  auto [c0, y0] = f(x, w);
  for (const Mesh& m : meshes()) {
    INFO(m.str());
    Array xs = device_put(x, NamedSharding(m, P("d")));
    auto [c1, y1] = f(xs, w);
    CHECK(rel_diff(c1, c0) < 1e-6);
    CHECK(rel_diff(y1, y0) < 1e-5);
    CHECK(c1.sharding().named());
    CHECK(!c1.is_fully_replicated());  // the carry came out split
    std::string text = f.lower(xs, w).compile().as_text();
    INFO(text);
    CHECK(count(text, "while") == 1);
    CHECK(count(text, "all-reduce") == 1);  // the per-layer sum
    CHECK(count(text, "all-gather") == 0);
  }
}

TEST_CASE("partitioner: a carry that starts replicated takes the tiles the loop body gives it",
          "[spmd][spmd_control]") {
  // acc starts as zeros (replicated); the body adds a split value to it each step.
  auto f = jit([](const Array& x) {
    return lax::fori_loop(0, 4, [&](const Array& i, const Array& acc) { return acc + x * i.astype(float32); },
                          jnp::zeros_like(x));
  });
  Array x = random::normal(random::PRNGKey(3), {8, 6});
  Array want = f(x);
  for (const Mesh& m : meshes()) {
    INFO(m.str());
    Array xs = device_put(x, NamedSharding(m, P("d")));
    CHECK(rel_diff(f(xs), want) < 1e-6);
    std::string text = f.lower(xs).compile().as_text();
    INFO(text);
    CHECK(count(text, "all-gather") == 0);
  }
}

TEST_CASE("partitioner: cond branches run on the split operands", "[spmd][spmd_control]") {
  auto f = jit([](const Array& x, const Array& w) {
    return lax::cond(
        jnp::sum(x) > 0.0f, [](const Array& a, const Array& b) { return jnp::matmul(a, b); },
        [](const Array& a, const Array&) { return jnp::exp(a) * 2.0f; }, x, w);
  });
  Array w = random::normal(random::PRNGKey(4), {6, 6});
  for (uint32_t seed : {5u, 6u}) {  // one draw takes each branch
    Array x = random::normal(random::PRNGKey(seed), {8, 6}) + (seed == 5 ? 0.5f : -0.5f);
    Array want = f(x, w);
    for (const Mesh& m : meshes()) {
      INFO(m.str() << " seed " << seed);
      Array xs = device_put(x, NamedSharding(m, P("d")));
      CHECK(rel_diff(f(xs, w), want) < 1e-6);
      std::string text = f.lower(xs, w).compile().as_text();
      INFO(text);
      CHECK(count(text, "conditional") == 1);
      CHECK(count(text, "all-gather") == 0);
    }
  }
}

TEST_CASE("partitioner: reshapes keep a major tiled dimension, dynamic slices of whole tiled dimensions are local",
          "[spmd][spmd_control]") {
  auto split = jit([](const Array& x) { return jnp::reshape(x, {4, 4, 6}).sum({2}); });
  auto merge = jit([](const Array& x) { return jnp::reshape(x, {96}) * 3.0f; });
  auto minor = jit([](const Array& x) { return jnp::reshape(jnp::transpose(x), {96}); });
  auto dslice = jit([](const Array& x, const Array& i) { return lax::dynamic_slice(x, {Array(0), i}, {16, 2}); });
  Array x = random::normal(random::PRNGKey(7), {16, 6});
  for (const Mesh& m : meshes()) {
    INFO(m.str());
    Array xs = device_put(x, NamedSharding(m, P("d")));
    CHECK(rel_diff(split(xs), split(x)) < 1e-6);
    // 16 rows split d ways become 4 blocks of 4: local when d divides 4 (8 ways would need two tiled dimensions).
    CHECK(count(split.lower(xs).compile().as_text(), "all-gather") == (m.axis_size("d") <= 4 ? 0u : 1u));
    CHECK(rel_diff(merge(xs), merge(x)) == 0);
    CHECK(count(merge.lower(xs).compile().as_text(), "all-gather") == 0);
    CHECK(rel_diff(minor(xs), minor(x)) == 0);  // moves the tiled dimension: resharded (all-gathered)
    CHECK(count(minor.lower(xs).compile().as_text(), "all-gather") >= 1);
    CHECK(rel_diff(dslice(xs, Array(3)), dslice(x, Array(3))) == 0);
    CHECK(count(dslice.lower(xs, Array(3)).compile().as_text(), "all-gather") == 0);
  }
}

TEST_CASE("partitioner: a sharding constraint on an unevenly divisible value pads its tiles", "[spmd][spmd_control]") {
  // 6 rows (a slice of 8) constrained to split over the mesh's first axis: 2, 4 or 8 ways (3, 2 or 1 rows per tile;
  // the last tiles padded or empty). The sum and the matmul over the split rows must not count the padding.
  Array x = random::normal(random::PRNGKey(8), {8, 5});
  Array w = random::normal(random::PRNGKey(9), {6, 3});
  for (const Mesh& m : meshes()) {
    INFO(m.str());
    NamedSharding split(m, P("d"));
    auto f = jit([&](const Array& a, const Array& b) {
      Array s = lax::with_sharding_constraint(jnp::exp(lax::slice(a, {0, 0}, {6, 5})), split);
      return std::pair{jnp::sum(s), jnp::matmul(jnp::transpose(s), b)};
    });
    Array xs = device_put(x, NamedSharding(m, P("d")));
    auto [s1, d1] = f(xs, w);
    Array e = jnp::exp(lax::slice(x, {0, 0}, {6, 5}));
    CHECK(rel_diff(s1, jnp::sum(e)) < 1e-6);
    CHECK(rel_diff(d1, jnp::matmul(jnp::transpose(e), w)) < 1e-6);
    std::string text = f.lower(xs, w).compile().as_text();  // partitioned, not run on one device
    INFO(text);
    CHECK(count(text, "all-reduce") >= 1);  // the sum's and the matmul's (combined when small)
    if (6 % m.axis_size("d") != 0) CHECK(text.find("select(") != std::string::npos);  // the padding masked
  }
}

TEST_CASE("partitioner: a finite difference over split rows exchanges one halo row", "[spmd][spmd_control]") {
  auto f = jit([](const Array& x) {
    Array d = lax::slice(x, {1, 0}, {16, 3}) - lax::slice(x, {0, 0}, {15, 3});
    return std::pair{d, jnp::sum(d * d, {0})};
  });
  Array x = random::normal(random::PRNGKey(10), {16, 3});
  auto [d0, s0] = f(x);
  for (const Mesh& m : meshes()) {
    INFO(m.str());
    Array xs = device_put(x, NamedSharding(m, P("d")));
    auto [d1, s1] = f(xs);
    CHECK(rel_diff(d1, d0) == 0);
    CHECK(rel_diff(s1, s0) < 1e-6);
    std::string text = f.lower(xs).compile().as_text();
    INFO(text);
    CHECK(count(text, "collective-permute") == 1);
  }
}

TEST_CASE("cost and memory analysis of a partitioned call describe the per-device program", "[spmd][spmd_control]") {
  if (!have(4)) return;
  Mesh m = make_mesh({4}, {"d"});
  auto f = jit([](const Array& x, const Array& w) { return jnp::matmul(x, w); });
  Array x = random::normal(random::PRNGKey(11), {64, 32}), w = random::normal(random::PRNGKey(12), {32, 16});
  auto one = f.lower(x, w).compile().cost_analysis();
  // Split on the contracting dimension: a quarter of the flops per device, and a 64x16 f32 all-reduce.
  Array xs = device_put(x, NamedSharding(m, P(nullptr, "d"))), ws = device_put(w, NamedSharding(m, P("d")));
  auto c = f.lower(xs, ws).compile();
  auto cost = c.cost_analysis();
  CHECK(cost.at("flops") == Approx(one.at("flops") / 4));
  CHECK(cost.at("bytes transferred") == 64 * 16 * 4);
  CHECK(c.memory_analysis().argument_size_in_bytes == (64 * 8 + 8 * 16) * 4);
}

TEST_CASE("partitioner: an embedding lookup and its gradient with the batch split", "[spmd][spmd_control]") {
  // gather: the indices' batch tiles, the table whole (no communication); its gradient, a scatter-add of split
  // updates into the whole table: local scatters into zeros and one all-reduce.
  auto loss = [](const Array& table, const Array& idx) {
    return jnp::sum(jnp::tanh(jnp::take(table, idx, 0)) * 3.0);
  };
  auto lookup = jit([](const Array& table, const Array& idx) { return jnp::take(table, idx, 0); });
  auto g = jit(grad(loss));
  Array table = random::normal(random::PRNGKey(13), {10, 4});
  std::vector<int32_t> iv{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
  Array idx = array(iv.data(), {16});
  Array want_l = lookup(table, idx), want_g = g(table, idx);
  for (const Mesh& m : meshes()) {
    INFO(m.str());
    Array is = device_put(idx, NamedSharding(m, P("d")));
    CHECK(rel_diff(lookup(table, is), want_l) == 0);
    CHECK(rel_diff(g(table, is), want_g) < 1e-6);
    std::string lt = lookup.lower(table, is).compile().as_text(), gt = g.lower(table, is).compile().as_text();
    INFO(lt << gt);
    CHECK(count(lt, "all-gather") == 0);
    CHECK(count(gt, "all-gather") == 0);
    CHECK(count(gt, "all-reduce") == 1);
  }
  // The table split on its feature dimension (which the lookup takes whole): the result keeps that split.
  if (have(4)) {
    Mesh m = make_mesh({4}, {"d"});
    Array ts = device_put(table, NamedSharding(m, P(nullptr, "d")));
    Array r = lookup(ts, idx);
    CHECK(rel_diff(r, want_l) == 0);
    CHECK(r.sharding().shard_shape({16, 4}) == Shape{16, 1});
    CHECK(count(lookup.lower(ts, idx).compile().as_text(), "all-gather") == 0);
    // Its gradient: the scatter's updates arrive split on the feature (window) dimension; the scatter must not
    // drop them at the window's start (gathered instead), and the values are one device's.
    CHECK(rel_diff(g(ts, idx), want_g) < 1e-6);
  }
}

TEST_CASE("partitioner: a data-parallel CNN step: local convolutions, one all-reduce for the kernel gradients",
          "[spmd][spmd_control]") {
  // Forward and input-gradient convolutions keep the batch split; the kernel gradients contract the batch, so each
  // partition convolves its rows and the partial kernels are summed (the combiner merges the two small ones).
  auto dn = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  auto loss = [dn](const std::vector<Array>& p, const Array& x) {
    Array h = jnp::tanh(lax::conv_general_dilated(x, p[0], {1, 1}, {{1, 1}, {1, 1}}, {}, {}, dn));
    h = jnp::tanh(lax::conv_general_dilated(h, p[1], {1, 1}, {{1, 1}, {1, 1}}, {}, {}, dn));
    return jnp::mean(jnp::square(h));
  };
  auto g = jit(grad(loss));
  auto k = random::split(random::PRNGKey(21), 3);
  std::vector<Array> p{random::normal(k[0], {3, 3, 3, 4}) * 0.3, random::normal(k[1], {3, 3, 4, 4}) * 0.3};
  Array x = random::normal(k[2], {16, 6, 6, 3});
  auto want = g(p, x);
  for (const Mesh& m : meshes()) {
    INFO(m.str());
    Array xs = device_put(x, NamedSharding(m, P("d", nullptr, nullptr, nullptr)));
    auto got = g(p, xs);
    for (size_t j = 0; j < 2; ++j) CHECK(rel_diff(got[j], want[j]) < 1e-5);
    std::string text = g.lower(p, xs).compile().as_text();
    INFO(text);
    CHECK(count(text, "all-gather") == 0);
    CHECK(count(text, "all-reduce") == 1);
  }
  // Rows split instead: the convolutions exchange halos with their neighbours and give one device's values.
  if (have(2)) {
    Mesh m = make_mesh({2}, {"d"});
    auto fwd = jit([dn](const Array& x, const Array& w) {
      return jnp::tanh(lax::conv_general_dilated(x, w, {1, 1}, {{1, 1}, {1, 1}}, {}, {}, dn));
    });
    Array xs = device_put(x, NamedSharding(m, P(nullptr, "d", nullptr, nullptr)));
    CHECK(rel_diff(fwd(xs, p[0]), fwd(x, p[0])) < 1e-6);
    std::string text = fwd.lower(xs, p[0]).compile().as_text();
    CHECK(count(text, "collective-permute") == 2);
    CHECK(count(text, "all-gather") == 0);
  }
}

TEST_CASE("partitioner: review cases (combined all-reduces of split values, strided slices, pass-through regions)",
          "[spmd][spmd_control]") {
  if (!have(8)) return;
  Mesh m2 = make_mesh({2, 4}, {"data", "model"});
  // Two small contractions over "model", their results split on "data": two all-reduces of tiled values, combined.
  auto two = jit([](const Array& x, const Array& w, const Array& v) {
    return std::pair{jnp::matmul(x, w), jnp::matmul(x, v)};
  });
  Array x = random::normal(random::PRNGKey(20), {8, 16}), w = random::normal(random::PRNGKey(21), {16, 3}),
        v = random::normal(random::PRNGKey(22), {16, 5});
  auto [a0, b0] = two(x, w, v);
  Array xs = device_put(x, NamedSharding(m2, P("data", "model")));
  Array ws = device_put(w, NamedSharding(m2, P("model"))), vs = device_put(v, NamedSharding(m2, P("model")));
  auto [a1, b1] = two(xs, ws, vs);
  CHECK(rel_diff(a1, a0) < 1e-6);
  CHECK(rel_diff(b1, b0) < 1e-6);
  CHECK(count(two.lower(xs, ws, vs).compile().as_text(), "all-reduce") == 1);
  // A strided slice of a split dimension's neighbour: no halo form, the right values.
  Mesh m4 = make_mesh({4}, {"d"});
  auto strided = jit([](const Array& a) { return lax::slice(a, {1, 0}, {8, 6}, {1, 2}); });
  Array y = random::normal(random::PRNGKey(23), {8, 6});
  CHECK(rel_diff(strided(device_put(y, NamedSharding(m4, P("d")))), strided(y)) == 0);
  // A shard_map passing its (whole) operand through as a split result, next to the operand itself.
  auto pass = shard_map([](const Array& b) { return b; }, m4, P(), P("d"));
  auto both = jit([&](const Array& a) { return std::pair{a * 1.0f, pass(a)}; });
  Array z = random::normal(random::PRNGKey(24), {8});
  auto [z1, z4] = both(z);
  CHECK(rel_diff(z1, z) == 0);
  CHECK(rel_diff(z4, jnp::tile(z, {4})) == 0);
}

TEST_CASE("shard_map: dropping a shard_map frees its eagerly compiled program", "[spmd][spmd_control]") {
  if (!have(4)) return;
  Mesh m4 = make_mesh({4}, {"d"});
  Array x = random::normal(random::PRNGKey(25), {8, 2});
  int64_t with = 0;
  {
    auto sm = shard_map([](const Array& b) { return lax::psum(b, "d"); }, m4, P("d"), P("d"));
    sm(x).block_until_ready();
    with = runtime::live_executables();
  }
  CHECK(runtime::live_executables() < with);
}
