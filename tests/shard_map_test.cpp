// shard_map and the lax collectives: values against host loops on random inputs (1-D meshes of 2/4/8 devices and
// a 2-D ("data", "model") mesh), grad against finite differences and the same function without shard_map, vmap
// and jit of a shard_map (compiled once), and JAX's errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>

#include "jitx/jitx.h"
#include "test_util.h"
#include "spmd_test_util.h"

using namespace jitx;
using V = std::vector<double>;

namespace {

using testing::have;

Array f64(const V& v, Shape s) { return testing::make(v, std::move(s), DType::float64); }

void close(const Array& got, const V& want, double tol = 1e-12) {
  V g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) REQUIRE(std::abs(g[i] - want[i]) <= tol * (1 + std::abs(want[i])));
}

using Fn1 = std::function<Array(const Array&)>;

/// Central differences of the scalar loss L at x, every coordinate.
V finite_diff(const Fn1& L, const V& x, Shape s, double h = 1e-6) {
  V g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    V a = x, b = x;
    a[i] += h;
    b[i] -= h;
    g[i] = (L(f64(a, s)).item<double>() - L(f64(b, s)).item<double>()) / (2 * h);
  }
  return g;
}

}  // namespace

TEST_CASE("shard_map: psum, pmean, pmax, pmin on 2/4/8 devices", "[shard_map]") {
  for (int64_t n : {2, 4, 8}) {
    if (!have(static_cast<size_t>(n))) return;
    Mesh mesh = make_mesh({n}, {"i"});
    const int64_t r = 2, c = 3;
    V x = testing::uniform(static_cast<size_t>(n * r * c), -2, 2);
    Array xa = f64(x, {n * r, c});
    V sum(r * c, 0), mx(r * c, -1e300), mn(r * c, 1e300);
    for (int64_t d = 0; d < n; ++d)
      for (int64_t k = 0; k < r * c; ++k) {
        double v = x[static_cast<size_t>(d * r * c + k)];
        sum[static_cast<size_t>(k)] += v;
        mx[static_cast<size_t>(k)] = std::max(mx[static_cast<size_t>(k)], v);
        mn[static_cast<size_t>(k)] = std::min(mn[static_cast<size_t>(k)], v);
      }
    auto tiled = [&](const V& b) {
      V out;
      for (int64_t d = 0; d < n; ++d) out.insert(out.end(), b.begin(), b.end());
      return out;
    };
    V mean = sum;
    for (auto& v : mean) v /= static_cast<double>(n);
    INFO("n = " << n);
    close(shard_map([](const Array& b) { return lax::psum(b, "i"); }, mesh, P("i"), P("i"))(xa), tiled(sum));
    close(shard_map([](const Array& b) { return lax::pmean(b, "i"); }, mesh, P("i"), P("i"))(xa), tiled(mean));
    close(shard_map([](const Array& b) { return lax::pmax(b, "i"); }, mesh, P("i"), P("i"))(xa), tiled(mx));
    close(shard_map([](const Array& b) { return lax::pmin(b, "i"); }, mesh, P("i"), P("i"))(xa), tiled(mn));
    // A replicated result (out_specs P()) is the one block.
    close(shard_map([](const Array& b) { return lax::psum(b, "i"); }, mesh, P("i"), P())(xa), sum);
    // psum of an unbatched value (a constant): n times it; axis_size.
    // (b * 0.0 still varies over "i" as far as check_rep can tell, so out_specs P() needs check_rep=false, as in JAX.)
    close(shard_map([](const Array& b) { return b * 0.0 + lax::psum(Array(1.0), "i"); }, mesh, P("i"), P(),
                    false)(xa),
          V(static_cast<size_t>(r * c), static_cast<double>(n)));
    CHECK_THROWS_WITH(
        shard_map([](const Array& b) { return b * 0.0 + lax::psum(Array(1.0), "i"); }, mesh, P("i"), P())(xa),
        Catch::Contains("out_specs[0] is P() which implies that the corresponding output value is replicated across "
                        "mesh axis 'i', but the value may vary over 'i'") &&
            Catch::Contains("check_rep=false"));
    int64_t size = 0;
    shard_map([&](const Array& b) { size = lax::axis_size("i"); return b; }, mesh, P("i"), P("i"))(xa);
    CHECK(size == n);
  }
}

TEST_CASE("shard_map: psum and pmean of narrow integers and bools keep JAX's dtypes (values from JAX)",
          "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  // x = arange(8) % 3 over 4 devices: blocks [0 1] [2 0] [1 2] [0 1]; JAX's psum [3 4], pmean [0.75 1.].
  Array base = jnp::array(std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1});
  auto run = [&](auto f, const Array& x) { return shard_map(f, mesh, P("i"), P())(x); };
  auto psum = [](const Array& b) { return lax::psum(b, "i"); };
  auto pmean = [](const Array& b) { return lax::pmean(b, "i"); };
  for (DType d : {DType::int8, DType::uint8, DType::int16, DType::int32, DType::uint32, DType::int64}) {
    INFO(dtype_name(d));
    Array s = run(psum, base.astype(d));
    CHECK(s.dtype() == d);
    CHECK(s.astype(DType::int64).to_vector<int64_t>() == std::vector<int64_t>{3, 4});
    Array m = run(pmean, base.astype(d));
    CHECK(m.dtype() == (d == DType::int64 ? DType::float64 : DType::float32));
    CHECK(m.to_vector<double>() == V{0.75, 1.0});
    // And under jit, and with the sum wrapping in int8 (4 x 100 = 400 -> -112), as XLA's.
    CHECK(jit([&](const Array& x) { return run(psum, x); })(base.astype(d)).astype(DType::int64).to_vector<int64_t>() ==
          std::vector<int64_t>{3, 4});
  }
  CHECK(run(psum, jnp::full({8}, 100, DType::int8)).astype(DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{-112, -112});
  // Bools count in int32: JAX's [2 3], pmean [0.5 0.75].
  Array b = jnp::array(std::vector<bool>{false, true, true, false, true, true, false, true});
  Array sb = run(psum, b);
  CHECK(sb.dtype() == DType::int32);
  CHECK(sb.to_vector<int32_t>() == std::vector<int32_t>{2, 3});
  Array mb = run(pmean, b);
  CHECK(mb.dtype() == DType::float32);
  CHECK(mb.to_vector<double>() == V{0.5, 0.75});
  // psum of an unbatched int32 constant: the group size, in int32.
  Array c = shard_map([](const Array& x) { return x + lax::psum(Array(1), "i"); }, mesh, P("i"), P("i"))(
      jnp::zeros({4}, DType::int32));
  CHECK(c.dtype() == DType::int32);
  CHECK(c.to_vector<int32_t>() == std::vector<int32_t>{4, 4, 4, 4});
}

TEST_CASE("shard_map: a 2-D mesh (data, model): psum over one axis, both, axis_index", "[shard_map]") {
  if (!have(8)) return;
  Mesh mesh = make_mesh({2, 4}, {"data", "model"});
  V x = testing::uniform(4 * 8, -1, 1);
  Array xa = f64(x, {4, 8});  // blocks (2, 2): block (a, b) = x[2a:2a+2, 2b:2b+2]
  auto at = [&](int64_t i, int64_t j) { return x[static_cast<size_t>(i * 8 + j)]; };
  V want_model(32), want_all(32), want_data(32);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      double m = 0, a = 0, d = 0;
      for (int64_t b = 0; b < 4; ++b) m += at(i, b * 2 + j % 2);
      for (int64_t q = 0; q < 2; ++q) d += at(q * 2 + i % 2, j);
      for (int64_t q = 0; q < 2; ++q)
        for (int64_t b = 0; b < 4; ++b) a += at(q * 2 + i % 2, b * 2 + j % 2);
      want_model[static_cast<size_t>(i * 8 + j)] = m;
      want_data[static_cast<size_t>(i * 8 + j)] = d;
      want_all[static_cast<size_t>(i * 8 + j)] = a;
    }
  P spec("data", "model");
  close(shard_map([](const Array& b) { return lax::psum(b, "model"); }, mesh, spec, spec)(xa), want_model);
  close(shard_map([](const Array& b) { return lax::psum(b, "data"); }, mesh, spec, spec)(xa), want_data);
  close(shard_map([](const Array& b) { return lax::psum(b, {"data", "model"}); }, mesh, spec, spec)(xa), want_all);
  CHECK(shard_map([](const Array& b) { return lax::axis_size({"data", "model"}) + b * 0.0; }, mesh, spec, spec)(xa)
            .to_vector<double>() == V(32, 8.0));
  // axis_index: int32, this device's coordinate.
  auto idx = shard_map(
      [](const Array& b) { return (lax::axis_index("data") * 10 + lax::axis_index("model")).astype(DType::float64) +
                                  b * 0.0; },
      mesh, spec, spec)(xa);
  V want_idx(32);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) want_idx[static_cast<size_t>(i * 8 + j)] = static_cast<double>(i / 2 * 10 + j / 2);
  close(idx, want_idx);
  CHECK(shard_map([](const Array& b) { return lax::axis_index("model") + b.astype(DType::int32) * 0; }, mesh, spec,
                  spec)(xa).dtype() == DType::int32);
  // Replication over the axis a spec leaves out: x split over model only, data blocks equal.
  close(shard_map([](const Array& b) { return lax::psum(b, "data"); }, mesh, P(nullptr, "model"),
                  P(nullptr, "model"))(xa),
        [&] {
          V v = x;
          for (auto& e : v) e *= 2;
          return v;
        }());
  // Both mesh axes on one dimension (a tuple entry), data outermost.
  V y = testing::uniform(16, -1, 1);
  V want_y(16);
  for (int64_t d = 0; d < 8; ++d)
    for (int64_t t = 0; t < 2; ++t) {
      double s = 0;
      for (int64_t m = 0; m < 4; ++m) s += y[static_cast<size_t>((d / 4 * 4 + m) * 2 + t)];
      want_y[static_cast<size_t>(d * 2 + t)] = s;
    }
  P tup(P::Entry{"data", "model"});
  close(shard_map([](const Array& b) { return lax::psum(b, "model"); }, mesh, tup, tup)(f64(y, {16})), want_y);
}

TEST_CASE("shard_map: all_gather, psum_scatter, all_to_all, ppermute against host loops", "[shard_map]") {
  for (int64_t n : {2, 4, 8}) {
    if (!have(static_cast<size_t>(n))) return;
    INFO("n = " << n);
    Mesh mesh = make_mesh({n}, {"i"});
    const int64_t r = 2, c = 3, k = 2;
    auto sz = [](int64_t v) { return static_cast<size_t>(v); };
    V x = testing::uniform(sz(n * r * c), -2, 2);
    Array xa = f64(x, {n * r, c});
    auto X = [&](int64_t i, int64_t j) { return x[sz(i * c + j)]; };
    {  // all_gather axis 0, stacked: out[d*n + j] = block j
      V w;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t t = 0; t < r; ++t)
            for (int64_t q = 0; q < c; ++q) w.push_back(X(j * r + t, q));
      auto o = shard_map([](const Array& b) { return lax::all_gather(b, "i"); }, mesh, P("i"), P("i"))(xa);
      CHECK(o.shape() == Shape{n * n, r, c});
      close(o, w);
      auto ot = shard_map([](const Array& b) { return lax::all_gather(b, "i", 0, true); }, mesh, P("i"), P("i"))(xa);
      CHECK(ot.shape() == Shape{n * n * r, c});
      close(ot, w);  // the same elements in the same order, tiled
      auto ofull = shard_map([](const Array& b) { return lax::all_gather(b, "i", 0, true); }, mesh, P("i"), P())(xa);
      close(ofull, x);
    }
    {  // all_gather axis 1: per device (r, n, c), [t, j, q] = x[j*r + t, q]
      V w;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t t = 0; t < r; ++t)
          for (int64_t j = 0; j < n; ++j)
            for (int64_t q = 0; q < c; ++q) w.push_back(X(j * r + t, q));
      auto o = shard_map([](const Array& b) { return lax::all_gather(b, "i", 1); }, mesh, P("i"), P("i"))(xa);
      CHECK(o.shape() == Shape{n * r, n, c});
      close(o, w);
      // tiled on axis 1: per device (r, n*c), [t, j*c + q]
      auto ot = shard_map([](const Array& b) { return lax::all_gather(b, "i", 1, true); }, mesh, P("i"), P("i"))(xa);
      CHECK(ot.shape() == Shape{n * r, n * c});
      close(ot, w);
    }
    V y = testing::uniform(sz(n * n * k * c), -2, 2);  // blocks (n*k, c)
    Array ya = f64(y, {n * n * k, c});
    auto Y = [&](int64_t i, int64_t j) { return y[sz(i * c + j)]; };
    {  // psum_scatter tiled: device d: sum_j block_j[d*k:(d+1)*k]
      V w;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t t = 0; t < k; ++t)
          for (int64_t q = 0; q < c; ++q) {
            double s = 0;
            for (int64_t j = 0; j < n; ++j) s += Y(j * n * k + d * k + t, q);
            w.push_back(s);
          }
      auto o = shard_map([](const Array& b) { return lax::psum_scatter(b, "i", 0, true); }, mesh, P("i"), P("i"))(ya);
      CHECK(o.shape() == Shape{n * k, c});
      close(o, w, 1e-12);
    }
    {  // psum_scatter not tiled: blocks (n, c); device d gets (c) = sum_j block_j[d]
      V w;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t q = 0; q < c; ++q) {
          double s = 0;
          for (int64_t j = 0; j < n; ++j) s += Y(j * n + d, q);
          w.push_back(s);
        }
      Array y2 = f64(V(y.begin(), y.begin() + n * n * c), {n * n, c});
      auto o = shard_map([](const Array& b) { return lax::psum_scatter(b, "i"); }, mesh, P("i"), P("i"))(y2);
      CHECK(o.shape() == Shape{n * c});
      close(o, w);
    }
    {  // all_to_all tiled, split 0 concat 0: device d: [j*k + t] = block_j[d*k + t]
      V w;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t t = 0; t < k; ++t)
            for (int64_t q = 0; q < c; ++q) w.push_back(Y(j * n * k + d * k + t, q));
      auto o = shard_map([](const Array& b) { return lax::all_to_all(b, "i", 0, 0, true); }, mesh, P("i"), P("i"))(ya);
      CHECK(o.shape() == Shape{n * n * k, c});
      close(o, w);
    }
    {  // all_to_all tiled, split 1 concat 0: blocks (r, n*k); device d: (n*r, k), [j*r + t, u] = block_j[t, d*k + u]
      V z = testing::uniform(sz(n * r * n * k), -1, 1);
      Array za = f64(z, {n * r, n * k});
      V w;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t t = 0; t < r; ++t)
            for (int64_t u = 0; u < k; ++u) w.push_back(z[sz((j * r + t) * n * k + d * k + u)]);
      auto o = shard_map([](const Array& b) { return lax::all_to_all(b, "i", 1, 0, true); }, mesh, P("i"), P("i"))(za);
      CHECK(o.shape() == Shape{n * n * r, k});
      close(o, w);
    }
    {  // all_to_all not tiled, split 0 concat 1: blocks (n, c); device d: (c, n), [q, j] = block_j[d, q]
      Array y2 = f64(V(y.begin(), y.begin() + n * n * c), {n * n, c});
      V w;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t q = 0; q < c; ++q)
          for (int64_t j = 0; j < n; ++j) w.push_back(Y(j * n + d, q));
      auto o = shard_map([](const Array& b) { return lax::all_to_all(b, "i", 0, 1); }, mesh, P("i"), P("i"))(y2);
      CHECK(o.shape() == Shape{n * c, n});
      close(o, w);
    }
    {  // ppermute: a ring shift, and one pair (the others get zeros)
      std::vector<std::pair<int64_t, int64_t>> ring;
      for (int64_t j = 0; j < n; ++j) ring.emplace_back(j, (j + 1) % n);
      V w, w1;
      for (int64_t d = 0; d < n; ++d)
        for (int64_t t = 0; t < r; ++t)
          for (int64_t q = 0; q < c; ++q) {
            w.push_back(X(((d + n - 1) % n) * r + t, q));
            w1.push_back(d == n - 1 ? X(t, q) : 0.0);
          }
      close(shard_map([&](const Array& b) { return lax::ppermute(b, "i", ring); }, mesh, P("i"), P("i"))(xa), w);
      close(shard_map([&](const Array& b) { return lax::ppermute(b, "i", {{0, n - 1}}); }, mesh, P("i"), P("i"))(xa),
            w1);
    }
  }
}

TEST_CASE("shard_map: collectives on one axis of a 2-D mesh", "[shard_map]") {
  if (!have(8)) return;
  Mesh mesh = make_mesh({2, 4}, {"data", "model"});
  V x = testing::uniform(2 * 8 * 3, -1, 1);
  Array xa = f64(x, {2, 8 * 3});  // blocks (1, 6): block (a, b) = x[a, 6b:6b+6]
  // all_gather over model, tiled on axis 1, out P("data"): each data row gathers its model blocks = the row itself.
  close(shard_map([](const Array& b) { return lax::all_gather(b, "model", 1, true); }, mesh, P("data", "model"),
                  P("data"))(xa),
        x);
  // ppermute over model by one: block (a, b) <- block (a, b-1).
  std::vector<std::pair<int64_t, int64_t>> ring{{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  V w(x.size());
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t e = 0; e < 6; ++e)
        w[static_cast<size_t>(a * 24 + b * 6 + e)] = x[static_cast<size_t>(a * 24 + ((b + 3) % 4) * 6 + e)];
  close(shard_map([&](const Array& b) { return lax::ppermute(b, "model", ring); }, mesh, P("data", "model"),
                  P("data", "model"))(xa),
        w);
}

TEST_CASE("shard_map: grad against finite differences and the same function without shard_map", "[shard_map]") {
  if (!have(4)) return;
  const int64_t n = 4;
  Mesh mesh = make_mesh({n}, {"i"});
  V x = testing::uniform(8 * 3, -1.5, 1.5);
  Shape s{8, 3};
  V wv = testing::uniform(8 * 3, -1, 1);
  Array W = f64(wv, s);
  std::vector<std::pair<int64_t, int64_t>> ring{{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  std::vector<std::pair<std::string, Fn1>> losses = {
      {"psum", [&](const Array& a) {
         return shard_map([](const Array& b) { return lax::psum(jnp::sum(jnp::sin(b) * b), "i"); }, mesh, P("i"),
                          P())(a);
       }},
      {"pmean then square", [&](const Array& a) {
         auto f = shard_map([](const Array& b) { return lax::pmean(b * b, "i"); }, mesh, P("i"), P("i"));
         return jnp::sum(f(a) * f(a) * W);
       }},
      {"pmax", [&](const Array& a) {
         return jnp::sum(shard_map([](const Array& b) { return lax::pmax(b, "i"); }, mesh, P("i"), P("i"))(a) * W);
       }},
      {"all_gather", [&](const Array& a) {
         auto f = shard_map([](const Array& b) { return lax::all_gather(jnp::sin(b), "i", 0, true); }, mesh, P("i"),
                            P("i"));
         return jnp::sum(f(a) * jnp::concatenate({W, W, W, W}, 0));
       }},
      {"psum_scatter", [&](const Array& a) {
         auto f = shard_map([](const Array& b) { return lax::psum_scatter(b * b, "i", 0, true); }, mesh, P(), P("i"));
         return jnp::sum(f(a) * W);
       }},
      {"all_to_all", [&](const Array& a) {
         auto f = shard_map([](const Array& b) { return lax::all_to_all(jnp::tanh(b), "i", 0, 0, true); }, mesh,
                            P(nullptr, nullptr), P("i"));
         Array o = f(jnp::concatenate({a, a, a, a}, 0));
         return jnp::sum(o * o * 0.5 + o);
       }},
      {"ppermute", [&](const Array& a) {
         auto f = shard_map([&](const Array& b) { return lax::ppermute(b * b, "i", ring); }, mesh, P("i"), P("i"));
         return jnp::sum(f(a) * W);
       }},
  };
  for (auto& [name, L] : losses) {
    INFO(name);
    Array g = grad(L)(f64(x, s));
    close(g, finite_diff(L, x, s), 1e-6);
  }
  // JAX 0.10.2 (check_vma True or False): grad of sum(shard_map(psum, P('i'), P('i'))) on 4 devices is 4 everywhere.
  Fn1 sum_psum = [&](const Array& a) {
    return jnp::sum(shard_map([](const Array& b) { return lax::psum(b, "i"); }, mesh, P("i"), P("i"))(a));
  };
  close(grad(sum_psum)(f64(x, s)), V(x.size(), 4.0));
  // The same functions written without shard_map: the gradients agree to rounding.
  Fn1 plain_psum = [](const Array& a) { return jnp::sum(jnp::sin(a) * a); };
  close(grad(losses[0].second)(f64(x, s)), grad(plain_psum)(f64(x, s)).to_vector<double>());
  Fn1 plain_perm = [&](const Array& a) {  // block d goes to d+1: the product pairs x's block d with W's block d+1
    Array rolled = jnp::concatenate({jnp::take(W, arange(2, 8), 0), jnp::take(W, arange(0, 2), 0)}, 0);
    return jnp::sum(a * a * rolled);
  };
  close(grad(losses[6].second)(f64(x, s)), grad(plain_perm)(f64(x, s)).to_vector<double>());
}

TEST_CASE("shard_map: jit compiles once, vmap of a shard_map", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  auto sm = shard_map([](const Array& b) { return lax::psum(b * 2.0, "i") + lax::all_gather(b, "i", 0, true)[0]; },
                      mesh, P("i"), P("i"));
  auto jf = jit([sm](const Array& a) { return sm(a); });
  V x = testing::uniform(8 * 2, -1, 1);
  Array xa = f64(x, {8, 2});
  Array want = sm(xa);
  close(jf(xa), want.to_vector<double>());
  Array other = f64(testing::uniform(16, -1, 1), {8, 2});
  close(jf(other), sm(other).to_vector<double>());
  CHECK(jf.num_compiles() == 1);
  // vmap over a leading batch axis equals a loop over the examples.
  V xs = testing::uniform(3 * 8 * 2, -1, 1);
  Array xsa = f64(xs, {3, 8, 2});
  Array vm = vmap(sm)(xsa);
  V want_v;
  for (int64_t e = 0; e < 3; ++e) {
    V one(xs.begin() + e * 16, xs.begin() + (e + 1) * 16);
    V r = sm(f64(one, {8, 2})).to_vector<double>();
    want_v.insert(want_v.end(), r.begin(), r.end());
  }
  close(vm, want_v);
}

TEST_CASE("shard_map: JAX's errors", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  auto id = [](const Array& b) { return b; };
  CHECK_THROWS_WITH(shard_map(id, mesh, P("i", nullptr), P("i"))(zeros({8})),
                    Catch::Contains("in_specs is P('i', None) which has length 2") && Catch::Contains("rank 1"));
  CHECK_THROWS_AS(shard_map(id, mesh, P("i"), P("i"))(zeros({6})), ShapeError);
  CHECK_THROWS_WITH(shard_map(id, mesh, P("i"), P("i"))(zeros({6})),
                    Catch::Contains("array axis 0 (of size 6)") && Catch::Contains("does not evenly divide"));
  CHECK_THROWS_WITH(shard_map(id, mesh, P("q"), P("i"))(zeros({8})), Catch::Contains("refers to 'q'"));
  CHECK_THROWS_WITH(shard_map(id, mesh, P("i"), P("i", nullptr))(zeros({8})), Catch::Contains("out_specs"));
  // Unbound axis names: outside any shard_map, and a name the mesh lacks.
  CHECK_THROWS_WITH(lax::psum(zeros({2}), "i"), Catch::Contains("[psum] unbound axis name: i"));
  CHECK_THROWS_WITH(shard_map([](const Array& b) { return lax::psum(b, "z"); }, mesh, P("i"), P("i"))(zeros({8})),
                    Catch::Contains("unbound axis name: z") && Catch::Contains("['i']"));
  CHECK_THROWS_WITH(lax::axis_index("i"), Catch::Contains("[axis_index] unbound axis name: i"));
  CHECK_THROWS_AS(shard_map([](const Array& b) { return lax::psum_scatter(b, "i"); }, mesh, P("i"), P("i"))(
                      zeros({8})),
                  ShapeError);
  CHECK_THROWS_WITH(
      shard_map([](const Array& b) { return lax::ppermute(b, "i", {{0, 1}, {1, 1}}); }, mesh, P("i"), P("i"))(
          zeros({8})),
      Catch::Contains("unique"));
}

TEST_CASE("shard_map: make_jaxpr of a shard_map shows a shard_map equation holding psum", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  auto sm = shard_map([](const Array& b) { return lax::psum(b, "i"); }, mesh, P("i"), P());
  std::string text = make_jaxpr([sm](const Array& a) { return sm(a); })(zeros({8}, DType::float32)).str();
  INFO(text);
  CHECK(text.find("shard_map[") != std::string::npos);
  CHECK(text.find("psum[axes=('i',)") != std::string::npos);
  CHECK(text.find("f32[2] = psum") != std::string::npos);  // the body sees the per-device block
  CHECK(text.find("reduce_sum") == std::string::npos);
}

// The README's shard_map example (run by hand: ./build/tests/jitx_tests "[.shard_map_readme]" -s).
TEST_CASE("shard_map: the README example", "[.shard_map_readme]") {
  Mesh mesh = make_mesh({2, 4}, {"data", "model"});
  Array x = jnp::reshape(arange(16, DType::float32), {2, 8});
  auto f = shard_map(
      [](const Array& b) {  // b: this device's (1, 2) block
        Array total = lax::psum(b, "model");                      // sum over the 4 model blocks
        Array who = lax::axis_index("model").astype(DType::float32);
        return total + 100.0f * who;
      },
      mesh, P("data", "model"), P("data", "model"));
  std::cout << f(x) << "\n";
  auto rows = shard_map([](const Array& b) { return lax::all_gather(b, "model", 1, /*tiled=*/true); }, mesh,
                        P("data", "model"), P("data"));  // each device: (1, 8), the whole row
  std::cout << rows(x) << "\n";
  std::cout << make_jaxpr([&](const Array& a) {
    return shard_map([](const Array& b) { return lax::psum(b, "model"); }, mesh, P("data", "model"), P("data"))(a);
  })(x) << "\n";
  auto g = grad([&](const Array& a) {
    return jnp::sum(shard_map([](const Array& b) { return lax::psum(jnp::sum(b * b), "data"); }, mesh,
                              P("data", "model"), P())(a));
  });
  std::cout << g(x) << "\n";
  try {
    lax::psum(x, "model");
  } catch (const Error& e) {
    std::cout << e.what() << "\n";
  }
  try {
    shard_map([](const Array& b) { return b; }, mesh, P("data"), P("data"))(zeros({3}));
  } catch (const Error& e) {
    std::cout << e.what() << "\n";
  }
}

TEST_CASE("shard_map: all_gather and psum_scatter over a tuple of axes (first name outermost)", "[shard_map]") {
  if (!have(8)) return;
  Mesh mesh = make_mesh({2, 4}, {"data", "model"});
  V y = testing::uniform(16 * 3, -1, 1);
  Array ya = f64(y, {16, 3});
  V y8 = y;
  for (auto& v : y8) v *= 8;
  for (bool data_first : {true, false}) {
    INFO("data first: " << data_first);
    lax::AxisNames names = data_first ? lax::AxisNames{"data", "model"} : lax::AxisNames{"model", "data"};
    P spec(data_first ? P::Entry{"data", "model"} : P::Entry{"model", "data"});
    close(shard_map([&](const Array& b) { return lax::all_gather(b, names, 0, true); }, mesh, spec, P())(ya), y);
    auto st = shard_map([&](const Array& b) { return lax::all_gather(b, names); }, mesh, spec, P())(ya);
    CHECK(st.shape() == Shape{8, 2, 3});
    close(st, y);
    close(shard_map([&](const Array& b) { return lax::psum_scatter(b, names, 0, true); }, mesh, P(), spec)(ya), y8);
  }
  // Gathering in the other order than the blocks were laid out permutes them: block (a, m) lands at m * 2 + a.
  auto o = shard_map([](const Array& b) { return lax::all_gather(b, {"model", "data"}, 0, true); }, mesh,
                     P(P::Entry{"data", "model"}), P())(ya);
  V w;
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t e = 0; e < 6; ++e) w.push_back(y[static_cast<size_t>((a * 4 + m) * 6 + e)]);
  close(o, w);
}

TEST_CASE("shard_map inside a larger jitted program runs on the mesh's devices", "[shard_map]") {
  // Ops before and after a shard_map (and a second one), sharded and unsharded arguments, 1-D and 2-D meshes: the
  // program is partitioned as a whole (the regions' collectives are all-reduces of the per-device program, not an
  // expansion on one device), with the eager values.
  std::vector<Mesh> meshes;
  for (int64_t n : {2, 4, 8})
    if (have(static_cast<size_t>(n))) meshes.push_back(make_mesh({n}, {"i"}));
  if (have(8)) meshes.push_back(make_mesh({4, 2}, {"i", "j"}));
  for (const Mesh& mesh : meshes) {
    INFO(mesh.str());
    Fn1 norm = shard_map([](const Array& b) { return b / jnp::sqrt(lax::psum(jnp::sum(b * b, {0}), "i")); }, mesh,
                         P("i"), P("i"));
    Fn1 total = shard_map([](const Array& b) { return lax::psum(jnp::sum(b, {0}), "i"); }, mesh, P("i"), P());
    auto f = [&](const Array& x, const Array& w) { return total(jnp::tanh(norm(jnp::matmul(x, w)))) * 3.0; };
    Array x = f64(testing::uniform(16 * 5, -1, 1), {16, 5}), w = f64(testing::uniform(5 * 3, -1, 1), {5, 3});
    V want = f(x, w).to_vector<double>();
    auto jf = jit(f);
    close(jf(x, w), want, 1e-12);  // unsharded arguments
    Array xs = device_put(x, NamedSharding(mesh, P("i")));
    Array got = jf(xs, w);
    close(got, want, 1e-12);
    CHECK(got.sharding().named());
    std::string text = jf.lower(xs, w).compile().as_text();
    INFO(text);
    CHECK(testing::collective_count(text, "all-reduce") > 0);
    CHECK(text.find("SPMDFullToShardShape") == std::string::npos);  // the regions are gone: per-device code
    // grad and vmap of the jitted program, against the same transformations of the eager function.
    auto loss = [&](const Array& a) { return jnp::sum(jf(a, w)); };
    close(grad(loss)(xs), grad([&](const Array& a) { return jnp::sum(f(a, w)); })(x).to_vector<double>(), 1e-10);
    Array xb = f64(testing::uniform(2 * 16 * 5, -1, 1), {2, 16, 5});
    V vw;
    for (int64_t e = 0; e < 2; ++e) {
      V r = f(xb[e], w).to_vector<double>();
      vw.insert(vw.end(), r.begin(), r.end());
    }
    close(vmap([&](const Array& a) { return jf(a, w); })(xb), vw, 1e-12);
  }
}

TEST_CASE("shard_map: an eager call runs on the mesh's devices", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  auto sm = shard_map([](const Array& b) { return b - lax::pmean(b, "i"); }, mesh, P("i"), P("i"));
  V xv = testing::uniform(8 * 3, -1, 1);
  Array y = sm(f64(xv, {8, 3}));
  // Each device's 2 rows minus the mean of the four devices' blocks.
  V want(xv.size());
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 3; ++c) {
      double m = 0;
      for (int64_t d = 0; d < 4; ++d) m += xv[static_cast<size_t>((d * 2 + r) * 3 + c)] / 4;
      for (int64_t d = 0; d < 4; ++d)
        want[static_cast<size_t>((d * 2 + r) * 3 + c)] = xv[static_cast<size_t>((d * 2 + r) * 3 + c)] - m;
    }
  close(y, want, 1e-12);
  REQUIRE(y.sharding().named());
  CHECK(y.sharding().named()->mesh() == mesh);
  CHECK(y.sharding().shard_shape({8, 3}) == Shape{2, 3});  // split as out_specs P("i")
  CHECK(y.addressable_shards().size() == 4);
  // Another shape compiles another program; the same one again reuses it.
  close(sm(f64(xv, {4, 6})), sm(f64(xv, {4, 6})).to_vector<double>(), 0);
}

TEST_CASE("shard_map: check_rep infers which mesh axes a result may vary over", "[shard_map]") {
  if (!have(8)) return;
  Mesh mesh = make_mesh({2, 4}, {"data", "model"});
  Array x = f64(testing::uniform(4 * 8, -1, 1), {4, 8});
  auto run = [&](std::function<Array(const Array&)> f, PartitionSpec out) {
    return shard_map(std::move(f), mesh, P("data", "model"), std::move(out))(x);
  };
  const char* msg = "which implies that the corresponding output value is replicated across mesh axis";
  // Reduced over an axis: the same along it. Over one axis only: still varying along the other.
  CHECK_NOTHROW(run([](const Array& b) { return lax::psum(b, {"data", "model"}); }, P()));
  CHECK_NOTHROW(run([](const Array& b) { return lax::pmax(b, "model"); }, P("data")));
  CHECK_THROWS_WITH(run([](const Array& b) { return lax::psum(b, "model"); }, P()),
                    Catch::Contains(msg) && Catch::Contains("may vary over 'data'"));
  CHECK_NOTHROW(run([](const Array& b) { return lax::all_gather(b, "model", 1, true); }, P("data")));
  // axis_index and ppermute make a value vary; a constant does not.
  CHECK_THROWS_WITH(run([](const Array& b) { return b * 0.0 + lax::axis_index("model").astype(DType::float64); },
                        P("data")),
                    Catch::Contains("may vary over 'model'"));
  CHECK_NOTHROW(run([](const Array& b) { return jnp::zeros_like(lax::psum(b, {"data", "model"})) + 2.0; }, P()));
  CHECK_THROWS_WITH(
      run([](const Array& b) { return lax::ppermute(lax::psum(b, "data"), "model", {{0, 1}, {1, 0}}); }, P()),
      Catch::Contains("may vary over 'model'"));
  // Under jit and under grad from outside (the expansion path) the same check applies.
  auto bad = shard_map([](const Array& b) { return lax::psum(b, "model"); }, mesh, P("data", "model"), P());
  CHECK_THROWS_WITH(jit(bad)(x), Catch::Contains(msg));
  CHECK_THROWS_WITH(grad([&](const Array& a) { return jnp::sum(bad(a)); })(x), Catch::Contains(msg));
  // A collective inside control flow in the body: check_rep does not infer through it (and does not refuse it).
  // The loop runs: each device's block becomes the mean of all blocks.
  Array mean = run(
      [](const Array& b) {
        return lax::fori_loop(0, 2, [](const Array&, const Array& c) { return lax::pmean(c, {"data", "model"}); },
                              b);
      },
      P());
  V xv = x.to_vector<double>(), want(4, 0.0);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 2; ++c)
          want[static_cast<size_t>(r * 2 + c)] += xv[static_cast<size_t>((2 * a + r) * 8 + 2 * b + c)] / 8;
  close(mean, want, 1e-12);
}

TEST_CASE("shard_map: collectives inside loops and conds in the body, eager, jit, vmap and grad", "[shard_map]") {
  if (!have(4)) return;
  Mesh mesh = make_mesh({4}, {"i"});
  // A ring: each step passes the block to the next device and accumulates (a ring all-reduce by ppermute).
  Fn1 ring = shard_map(
      [](const Array& b) {
        auto step = [](const Array&, const std::pair<Array, Array>& c) {
          Array moved = lax::ppermute(c.first, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
          return std::pair{moved, c.second + moved};
        };
        return lax::fori_loop(0, 3, step, std::pair{b, b}).second;
      },
      mesh, P("i"), P("i"));
  V xv = testing::uniform(8 * 3, -1, 1);
  Array x = f64(xv, {8, 3});
  // Every device ends with the sum of the four blocks: psum's value.
  V want = shard_map([](const Array& b) { return lax::psum(b, "i"); }, mesh, P("i"), P("i"))(x).to_vector<double>();
  close(ring(x), want, 1e-12);
  close(jit(ring)(x), want, 1e-12);
  close(vmap(ring)(jnp::stack({x, x * 2.0})), [&] {
    V w = want;
    for (double v : want) w.push_back(2 * v);
    return w;
  }(), 1e-12);
  // d/dx sum(ring(x)): every element reaches all four devices' sums once.
  close(grad([&](const Array& a) { return jnp::sum(ring(a)); })(x), V(xv.size(), 4.0), 1e-12);
  // A cond whose branches hold collectives.
  Fn1 branchy = shard_map(
      [](const Array& b) {
        return lax::cond(
            lax::axis_index("i") < 2, [](const Array& v) { return lax::pmax(v, "i"); },
            [](const Array& v) { return lax::pmax(v, "i") * 2.0; }, b);
      },
      mesh, P("i"), P("i"));
  V mx = shard_map([](const Array& b) { return lax::pmax(b, "i"); }, mesh, P("i"), P("i"))(x).to_vector<double>();
  for (size_t k = mx.size() / 2; k < mx.size(); ++k) mx[k] *= 2;
  close(branchy(x), mx, 1e-12);
  close(jit(branchy)(x), mx, 1e-12);
}
