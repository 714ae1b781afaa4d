// Indexing, gathers, windows and cumulative ops as JAX 0.10.2 (x64) gives them: cases outside probes found
// different. Expected values are JAX's, written here (tools: jax.vjp / jax.grad / lax.gather on the same inputs);
// each case runs eagerly and under jit where the function takes arrays.
#include "test_util.h"

using namespace jitx;

namespace {
std::vector<double> doubles(const Array& a) { return a.astype(DType::float64).to_vector<double>(); }
Array f64(std::vector<double> v, Shape s = {}) {
  if (s.empty()) s = {static_cast<int64_t>(v.size())};
  return testing::make(v, std::move(s), DType::float64);
}
}  // namespace

TEST_CASE("cummax/cummin gradients share ties as JAX's associative_scan does", "[jax_parity][cumulative]") {
  // max's JVP gives half of a tie to each side, so the scan's tree decides the shares (JAX: lax.associative_scan's
  // odd/even recursion). A Hillis-Steele scan has the same sums but other shares.
  auto cummax0 = [](const Array& a) { return lax::cummax(a, 0); };
  auto [o, f] = vjp(cummax0, f64({1, 1, 1, 1}));
  CHECK(doubles(std::get<0>(f(f64({1, 10, 100, 1000})))) == std::vector<double>{281, 280, 300, 250});
  auto weighted = [](const Array& a) { return jnp::sum(lax::cummax(a, 0) * f64({1, 10, 100})); };
  CHECK(doubles(grad(weighted)(f64({1, 1, 1}))) == std::vector<double>{31, 30, 50});
  CHECK(doubles(jit(grad(weighted))(f64({1, 1, 1}))) == std::vector<double>{31, 30, 50});
  auto [o2, f2] = vjp([](const Array& a) { return lax::cummin(a, 0, true); }, f64({1, 1, 1, 1}));
  CHECK(doubles(std::get<0>(f2(f64({1, 10, 100, 1000})))) == std::vector<double>{0.25, 5.25, 52.75, 1052.75});
  auto [o3, f3] = vjp(cummax0, f64({2, 2, 1, 3, 3, 3, 0}));
  CHECK(doubles(std::get<0>(f3(f64({1, 2, 4, 8, 16, 32, 64})))) == std::vector<double>{4, 3, 0, 64, 32, 24, 0});
  // cumprod's JVP through the same scan (no ties: only rounding could differ).
  auto [p, t] = jvp([](const Array& a) { return lax::cumprod(a, 0); }, std::tuple{f64({1.5, -2, 0.5, 3, 0.25})},
                    std::tuple{f64({1, 2, 3, 4, 5})});
  CHECK(doubles(t) == std::vector<double>{1, 1, -8.5, -31.5, -30.375});
}

TEST_CASE("max/min pooling gradients pick XLA's select_and_scatter element, NaN included", "[jax_parity][window]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Array x = f64({1, nan, 3, -2, nan, nan});
  lax::WindowConfig w{{2}, {1}, {{0, 0}}, {}, {}};
  auto mp = [&](const Array& a) { return lax::reduce_window_max(a, w); };
  // JAX: the cotangent of a window goes to the NaN, or to the number after it; none is lost.
  auto [o, f] = vjp(mp, x);
  CHECK(doubles(std::get<0>(f(f64({1, 10, 100, 1000, 10000})))) == std::vector<double>{0, 1, 110, 0, 1000, 10000});
  auto [p, t] = jvp(mp, std::tuple{x}, std::tuple{f64({1, 10, 100, 1000, 10000, 100000})});
  CHECK(doubles(t) == std::vector<double>{10, 100, 100, 10000, 100000});
  auto sum_min = [&](const Array& a) { return jnp::sum(lax::reduce_window_min(a, w)); };
  CHECK(doubles(grad(sum_min)(x)) == std::vector<double>{0, 1, 1, 1, 1, 1});
  CHECK(doubles(jit(grad(sum_min))(x)) == std::vector<double>{0, 1, 1, 1, 1, 1});
  // 2-D with padding (never selected) and NaNs.
  Array x2 = f64({1, nan, 2, nan, 5, -1, 0.5, 7, nan}, {3, 3});
  lax::WindowConfig w2{{2, 2}, {1, 1}, {{1, 0}, {0, 1}}, {}, {}};
  auto mp2 = [&](const Array& a) { return lax::reduce_window_max(a, w2); };
  auto [o2, f2] = vjp(mp2, x2);
  Array ct = (jnp::arange(1.0, 10.0, 1.0, DType::float64) * 10.0).reshape({3, 3});
  CHECK(doubles(std::get<0>(f2(ct))) == std::vector<double>{0, 10, 110, 0, 90, 0, 0, 70, 80});
  // Ties still go to the first maximum, as before.
  auto [o3, f3] = vjp(mp, f64({4, 4, 1, 4, 2, 2}));
  CHECK(doubles(std::get<0>(f3(f64({1, 10, 100, 1000, 10000})))) == std::vector<double>{1, 10, 0, 1100, 10000, 0});
}

TEST_CASE("lax.gather: a collapsed axis takes exactly one element, a batching axis of size 0 gives zeros",
          "[jax_parity][gather]") {
  lax::GatherDimensionNumbers dn{{1}, {0}, {}, {}, {0}, -1};
  Array idx = jnp::array({1, 3}).reshape({2, 1});
  // JAX: TypeError "Gather op can only collapse slice dims with bound 1, but bound is 0" (jitx read past the end).
  CHECK_THROWS_WITH(lax::gather(jnp::zeros({0, 4}, DType::float32), idx, dn, {0, 4}),
                    Catch::Contains("collapsed_slice_dims") && Catch::Contains("expected 1"));
  CHECK_THROWS_AS(lax::gather(jnp::arange(20.0).reshape({5, 4}), idx, dn, {0, 4}), ShapeError);
  Array x354 = jnp::arange(60.0).reshape({3, 5, 4});
  lax::GatherDimensionNumbers dnb{{2}, {1}, {0}, {0}, {1}, -1};
  Array bidx = jnp::array({1, 4, 0, 2, 2, 3}).reshape({3, 2, 1});
  auto g0 = [&](const Array& a, const Array& i) { return lax::gather(a, i, dnb, {0, 1, 4}); };
  for (const Array& r : {g0(x354, bidx), jit(g0)(x354, bidx)}) {
    CHECK(r.shape() == Shape{3, 2, 4});
    CHECK(doubles(r) == std::vector<double>(24, 0.0));
  }
  Array r1 = lax::gather(x354, bidx, dnb, {1, 1, 4});
  CHECK(doubles(r1[1]) == std::vector<double>{20, 21, 22, 23, 28, 29, 30, 31});
}

TEST_CASE("take: wrap takes unsigned indices modulo n, boolean indices are 0 and 1", "[jax_parity][take]") {
  Array x = f64({0.5, -1.25, 2, 3.5, -4});
  Array u = jnp::array({UINT64_MAX, UINT64_MAX - 5, uint64_t{1} << 63});
  REQUIRE(u.dtype() == DType::uint64);
  auto wrap = [](const Array& a, const Array& i) { return jnp::take(a, i, 0, "wrap"); };
  CHECK(doubles(wrap(x, u)) == std::vector<double>{0.5, 0.5, 3.5});
  CHECK(doubles(jit(wrap)(x, u)) == std::vector<double>{0.5, 0.5, 3.5});
  Array b = jnp::array({true, false});
  CHECK(doubles(jnp::take(x, b)) == std::vector<double>{-1.25, 0.5});
}

TEST_CASE("at[]: no index, a scalar boolean, and empty selections as JAX", "[jax_parity][at]") {
  Array x = jnp::arange(12.0).reshape({3, 4});
  // x.at[True] is x[None]; x.at[False] its empty slice.
  CHECK(jnp::at(x, Array(true)).get().shape() == Shape{1, 3, 4});
  CHECK(jnp::at(x, Array(false)).get().shape() == Shape{0, 3, 4});
  CHECK(doubles(jnp::at(x, Array(true)).set(9.0)) == std::vector<double>(12, 9.0));
  CHECK(doubles(jnp::at(x, Array(false)).set(9.0)) == doubles(x));
  // x.at[()] is the whole array.
  CHECK(jnp::at(x, std::vector<Array>{}).get().shape() == Shape{3, 4});
  Array added = jnp::at(x, std::vector<Array>{}).add(1.0);
  CHECK(doubles(added) == doubles(x + 1.0));
  Array row = f64({1, 2, 3, 4});
  CHECK(doubles(jnp::at(x, std::vector<Array>{}).set(row)[1]) == std::vector<double>{1, 2, 3, 4});
  // Nothing selected: gets an empty array (the axis may be empty), updates leave x as it is (values unchecked).
  Array none = jnp::zeros({0}, DType::int32);
  Array e = jnp::at(jnp::zeros({0, 3}, DType::float32), none).get();
  CHECK(e.shape() == Shape{0, 3});
  CHECK(e.dtype() == DType::float32);
  Array ones = jnp::ones({3, 4}, DType::float64);
  CHECK(doubles(jnp::at(ones, none).set(f64({1, 2, 3}))) == std::vector<double>(12, 1.0));
  CHECK(jit([&](const Array& a) { return jnp::at(a, Array(true)).add(2.0); })(x).shape() == Shape{3, 4});
}

TEST_CASE("slices with steps near INT64_MAX, and a window of no elements is refused", "[jax_parity][slice]") {
  Array x = f64({0.5, -1.25, 2, 3.5, -4});
  int64_t big = std::numeric_limits<int64_t>::max();
  CHECK(doubles(jnp::slice_axis(x, 0, std::nullopt, std::nullopt, -big)) == std::vector<double>{-4});
  CHECK(doubles(jnp::slice_axis(x, 0, std::nullopt, std::nullopt, big)) == std::vector<double>{0.5});
  CHECK(doubles(jnp::slice_axis(x, 0, std::nullopt, std::nullopt, std::numeric_limits<int64_t>::min())) ==
        std::vector<double>{-4});
  CHECK(doubles(lax::slice(x, {1}, {5}, {big})) == std::vector<double>{-1.25});
  // JAX: ValueError "expects window to have positive value" (jitx gave zeros).
  CHECK_THROWS_WITH(lax::conv_general_dilated(jnp::ones({1, 1, 4}, DType::float32),
                                              jnp::zeros({1, 1, 0}, DType::float32), {1}, {{0, 0}}),
                    Catch::Contains("conv_general_dilated") && Catch::Contains("size 0"));
}

TEST_CASE("cumulative ops on long axes: a running value, the window's order kept", "[jax_parity][cumulative]") {
  // A cumsum is a reduce_window of the whole axis; it ran in O(n^2) (6 s for 32k elements). The running value adds
  // in the window's order (in double, rounded once per output), so the values are those of the window and of a
  // double-precision loop.
  const int64_t n = 60000;
  std::vector<double> v(n);
  uint64_t s = 12345;
  for (auto& e : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    e = static_cast<double>(static_cast<int64_t>(s >> 11) % 2001 - 1000) / 37.0;
  }
  Array x = testing::make(v, DType::float64);
  std::vector<double> want(n);
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) want[i] = acc += v[i];
  CHECK(doubles(jnp::cumsum(x)) == want);
  CHECK(doubles(jit([](const Array& a) { return lax::cumsum(a, 0); })(x)) == want);
  // float32: accumulated in double, each output rounded once.
  Array x32 = x.astype(DType::float32);
  std::vector<float> v32 = x32.to_vector<float>();
  std::vector<double> want32(n);
  acc = 0;
  for (int64_t i = 0; i < n; ++i) want32[i] = static_cast<float>(acc += v32[i]);
  CHECK(doubles(lax::cumsum(x32, 0)) == want32);
  // reverse max (order-free: the running value goes backwards) on a 2-D array along axis 0.
  Array m = x.reshape({n / 4, 4});
  std::vector<double> mv = doubles(m), wantm(mv.size());
  for (int64_t c = 0; c < 4; ++c) {
    double best = -INFINITY;
    for (int64_t r = n / 4 - 1; r >= 0; --r) wantm[r * 4 + c] = best = std::max(best, mv[r * 4 + c]);
  }
  CHECK(doubles(lax::cummax(m, 0, true)) == wantm);
  // reverse float sums and products: the forward window of the reversed axis (x[n-1] + ... + x[i], a backward
  // running value), linear too (the reverse window was O(n^2): minutes for 200k elements); so is cumsum's gradient.
  std::vector<double> wantr(n);
  acc = 0;
  for (int64_t i = n - 1; i >= 0; --i) wantr[i] = acc += v[i];
  CHECK(doubles(lax::cumsum(x, 0, true)) == wantr);
  CHECK(doubles(jit([](const Array& a) { return lax::cumsum(a, 0, true); })(x)) == wantr);
  std::vector<double> g = doubles(grad([](const Array& a) { return jnp::sum(lax::cumsum(a, 0) * a); })(x));
  // d/dx_k sum_i x_i cumsum(x)_i = cumsum(x)_k + sum_{i >= k} x_i
  CHECK(std::abs(g[0] - (want[0] + wantr[0])) <= 1e-9 * std::abs(wantr[0]) + 1e-9);
  CHECK(std::abs(g[n / 2] - (want[n / 2] + wantr[n / 2])) <= 1e-9 * std::abs(wantr[n / 2]) + 1e-9);
  Array small = testing::make({1.5, 0.75, -1.25, 2.0, 0.5, 1.125}, DType::float64);
  std::vector<double> sv = doubles(small), wantp(6);
  acc = 1;
  for (int i = 5; i >= 0; --i) wantp[i] = acc *= sv[i];
  CHECK(doubles(lax::cumprod(small, 0, true)) == wantp);
  // integer cumsum wraps as the dtype does
  Array ints = lax::full({n}, jnp::array(int32_t{100000}));
  CHECK(lax::cumsum(ints, 0).to_vector<int32_t>().back() == static_cast<int32_t>(int64_t{100000} * n));
}

TEST_CASE("searchsorted is a binary search (large inputs fit), NaNs last, either side", "[jax_parity][searchsorted]") {
  // The reference: std::lower_bound / upper_bound under the order NaNs-last (JAX's sort order).
  auto less_nan_last = [](double p, double q) { return p < q || (!std::isnan(p) && std::isnan(q)); };
  uint64_t s = 99;
  auto next = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>(s >> 33);
  };
  for (int64_t n : {0, 1, 2, 7, 64, 1000, 200000}) {
    std::vector<double> av(static_cast<size_t>(n)), vv(2000);
    for (auto& e : av) e = static_cast<double>(next() % 50) / 4.0;  // duplicates
    if (n > 3) av[0] = NAN, av[1] = -INFINITY, av[2] = INFINITY;
    std::sort(av.begin(), av.end(), less_nan_last);
    for (auto& e : vv) e = static_cast<double>(next() % 60 - 5) / 4.0;
    vv[0] = NAN, vv[1] = INFINITY, vv[2] = -INFINITY;
    Array a = testing::make(av, DType::float64), v = testing::make(vv, DType::float64);
    for (const char* side : {"left", "right"}) {
      std::vector<int32_t> want;
      for (double x : vv) {
        auto it = std::string_view(side) == "left" ? std::lower_bound(av.begin(), av.end(), x, less_nan_last)
                                                   : std::upper_bound(av.begin(), av.end(), x, less_nan_last);
        want.push_back(static_cast<int32_t>(it - av.begin()));
      }
      INFO("n " << n << " side " << side);
      Array got = jnp::searchsorted(a, v, side);
      CHECK(got.dtype() == DType::int32);
      CHECK(got.to_vector<int32_t>() == want);
      if (n <= 1000)
        CHECK(jit([side](const Array& p, const Array& q) { return jnp::searchsorted(p, q, side); })(a, v)
                  .to_vector<int32_t>() == want);
    }
  }
}

TEST_CASE("roll broadcasts shifts with axes, pad takes mode empty, eye refuses a negative M", "[jax_parity][shape]") {
  Array x = jnp::arange(8.0).reshape({2, 4});
  // JAX: jnp.roll(x, (1, 2), (1,)) rolls axis 1 by 1 and by 2.
  CHECK(doubles(jnp::roll(x, {1, 2}, {1})) == std::vector<double>{1, 2, 3, 0, 5, 6, 7, 4});
  // JAX: jnp.pad(x, (2, 1), mode="empty") fills with zeros.
  CHECK(doubles(jnp::pad(jnp::array({1.0, 2.0}), jnp::PadWidth{{2, 1}}, "empty")) ==
        std::vector<double>{0, 0, 1, 2, 0});
  // JAX: jnp.eye(2, -2) is a ValueError; M = -1 is jitx's spelling of "M = N" (the default).
  CHECK_THROWS_AS(jnp::eye(2, -2), ShapeError);
  CHECK(jnp::eye(2, -1).shape() == Shape{2, 2});
}
