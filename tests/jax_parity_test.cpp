// What JAX 0.10.2 (x64) accepts jitx accepts, with JAX's values, and what JAX refuses jitx refuses: cases outside
// probes found different. Expected values are JAX's, written here; each case runs eagerly and under jit.
#include "test_util.h"

using namespace jitx;

namespace {
std::vector<float> floats(const Array& a) { return a.astype(DType::float32).to_vector<float>(); }
}  // namespace

TEST_CASE("lax: broadcast_in_dim takes broadcast_dimensions in any order, as JAX", "[lax]") {
  Array x = jnp::array({{0.0f, 1.0f, 2.0f}, {3.0f, 4.0f, 5.0f}});
  auto f = [](const Array& a) { return lax::broadcast_in_dim(a, {3, 4, 2}, {2, 0}); };
  // JAX: lax.broadcast_in_dim(x, (3, 4, 2), (2, 0))[:, 0, :] == x.T; the middle axis is the broadcast one.
  for (const Array& r : {f(x), jit(f)(x)}) {
    REQUIRE(r.shape() == Shape{3, 4, 2});
    std::vector<float> v = floats(r);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 2; ++k) CHECK(v[(i * 4 + j) * 2 + k] == float(k * 3 + i));
  }
  CHECK(floats(lax::broadcast_in_dim(x, {3, 2}, {1, 0})) == std::vector<float>{0, 3, 1, 4, 2, 5});
  // Its gradient is the transposed sum over the broadcast axis.
  Array g = grad([&](const Array& a) { return jnp::sum(f(a) * jnp::arange(24.0f).reshape({3, 4, 2})); })(x);
  // d/dx[k, i] = sum_j w[i, j, k], w = arange(24).reshape(3, 4, 2), summed by hand (JAX 0.10.2's own transpose
  // rule fails here: "Expected cotangent type float32[2,3] but got float32[3,2]").
  CHECK(floats(g) == std::vector<float>{12, 44, 76, 16, 48, 80});
  CHECK_THROWS_AS(lax::broadcast_in_dim(x, {3, 3}, {1, 1}), ShapeError);
  CHECK_THROWS_AS(lax::broadcast_in_dim(x, {3, 2}, {2, 0}), ShapeError);
}

TEST_CASE("lax: select_n and select take an integer predicate, as JAX lowers it (case1 where which >= 1)", "[lax]") {
  Array which = jnp::array({1, 0, 3, -2});
  Array a = jnp::array({10.0f, 20.0f, 30.0f, 40.0f}), b = jnp::array({-1.0f, -2.0f, -3.0f, -4.0f});
  auto f = [](const Array& w, const Array& c0, const Array& c1) { return lax::select_n(w, c0, c1); };
  for (const Array& r : {f(which, a, b), jit(f)(which, a, b)})
    CHECK(floats(r) == std::vector<float>{-1, 20, -3, 40});
  CHECK(floats(lax::select(which.astype(DType::uint8), a, b)) == std::vector<float>{10, -2, 30, 40});
  CHECK(floats(lax::select_n(Array(int32_t{0}), a, b)) == floats(a));
  CHECK_THROWS_AS(lax::select_n(jnp::array({1.0f, 0.0f, 1.0f, 0.0f}), a, b), TypeError);
}

TEST_CASE("lax: cumulative ops refuse negative axes, as JAX's lax (jnp's accept them)", "[lax]") {
  Array x = jnp::arange(6.0f).reshape({2, 3});
  CHECK_THROWS_AS(lax::cumsum(x, -1), ShapeError);
  CHECK_THROWS_AS(lax::cumprod(x, -1), ShapeError);
  CHECK_THROWS_AS(lax::cummax(x, -2, true), ShapeError);
  CHECK_THROWS_AS(lax::cummin(x, -1), ShapeError);
  CHECK_THROWS_AS(lax::cumlogsumexp(x, -1), ShapeError);
  CHECK(floats(jnp::cumsum(x, -1)) == std::vector<float>{0, 1, 3, 3, 7, 12});
  CHECK(floats(jnp::cumprod(x + 1.0f, -2)) == std::vector<float>{1, 2, 3, 4, 10, 18});
  CHECK(floats(lax::cumsum(x, 1, true)) == std::vector<float>{3, 3, 2, 12, 9, 5});
}

TEST_CASE("lax: dynamic_slice and dynamic_update_slice indices share one dtype, and a literal takes the others'",
          "[lax]") {
  Array x = jnp::arange(6.0f).reshape({2, 3});
  // JAX: "index arguments to dynamic_slice must be integers of the same type, got: int32, int64".
  Array i64 = Array(int64_t{1}).astype(DType::int64), u8 = Array(int32_t{1}).astype(DType::uint8);
  CHECK_THROWS_AS(lax::dynamic_slice(x, {Array(int32_t{0}).astype(DType::int32), i64}, {1, 2}), TypeError);
  CHECK_THROWS_AS(lax::dynamic_update_slice(x, x, {u8, Array(int32_t{0}).astype(DType::int32)}), TypeError);
  // A weak literal (JAX's Python int) next to a strong int64 or uint8 index takes its dtype.
  CHECK(floats(lax::dynamic_slice(x, {0, i64}, {1, 2})) == std::vector<float>{1, 2});
  CHECK(floats(lax::dynamic_slice(x, {u8, 1}, {1, 2})) == std::vector<float>{4, 5});
  auto f = [](const Array& a, const Array& i) { return lax::dynamic_update_slice(a, -jnp::ones({1, 3}), {i, 0}); };
  CHECK(floats(jit(f)(x, i64)) == std::vector<float>{0, 1, 2, -1, -1, -1});
}

TEST_CASE("jnp: .at[] takes a concrete boolean mask (its true elements' indices), refuses a traced one", "[numpy]") {
  Array x = jnp::arange(5.0f);
  Array m = jnp::array({true, false, true, false, true});
  CHECK(floats(jnp::at(x, m).set(9.0f)) == std::vector<float>{9, 1, 9, 3, 9});
  CHECK(floats(jnp::at(x, m).add(jnp::array({1.0f, 2.0f, 3.0f}))) == std::vector<float>{1, 1, 4, 3, 7});
  CHECK(floats(jnp::at(x, m).get()) == std::vector<float>{0, 2, 4});
  // A 2-d mask covers two axes; a mask before an integer index covers the first.
  Array y = jnp::arange(6.0f).reshape({2, 3});
  Array m2 = jnp::array({{false, true, false}, {true, false, true}});
  CHECK(floats(jnp::at(y, m2).mul(-1.0f)) == std::vector<float>{0, -1, 2, -3, 4, -5});
  CHECK(floats(jnp::at(y, {jnp::array({false, true}), jnp::array({2})}).set(7.0f)) ==
        std::vector<float>{0, 1, 2, 3, 4, 7});
  // JAX: "boolean index did not match shape of indexed array in index 0: got (4,), expected (5,)".
  CHECK_THROWS_AS(jnp::at(x, jnp::array({true, false, true, false})).set(1.0f), ShapeError);
  // JAX: NonConcreteBooleanIndexError under jit.
  auto traced = [](const Array& a, const Array& mask) { return jnp::at(a, mask).set(0.0f); };
  CHECK_THROWS_AS(jit(traced)(x, m), TracerError);
}

// --- control flow under transformations (an outside probe of cond/while/scan/fori under vmap and grad) ---

TEST_CASE("vmap of cond with a batched predicate: an untaken branch gets no derivative, as JAX's (no NaN)",
          "[control][vmap][autodiff]") {
  auto sq = [](Array x) {
    return lax::cond(x > 0.0, [](Array v) { return jnp::sqrt(v); }, [](Array v) { return v * 0.0; }, x);
  };
  auto loss = [&](Array x) { return jnp::sum(vmap(sq)(x)); };
  Array xv = array<double>({4.0, -1.0, 0.0});
  // JAX: jax.grad(lambda x: jnp.sum(jax.vmap(sq)(x)))(jnp.array([4.0, -1.0, 0.0])) == [0.25, 0., 0.]
  for (const Array& g : {grad(loss)(xv), jit(grad(loss))(xv)})
    CHECK(g.to_vector<double>() == std::vector<double>{0.25, 0.0, 0.0});
  auto sw = [](Array i, Array x) {
    return lax::switch_(i, std::tuple{[](Array v) { return jnp::sqrt(v); }, [](Array v) { return v * 3.0; }}, x);
  };
  // Index 7 clamps to the last branch (switch_), so its example takes v * 3.
  Array gs = grad([&](Array x) { return jnp::sum(vmap(sw)(array<int32_t>({0, 1, 7}), x)); })(
      array<double>({4.0, -1.0, -2.0}));
  CHECK(gs.to_vector<double>() == std::vector<double>{0.25, 3.0, 3.0});
  // Inside a scan: JAX [nan, 8.0] (the first example's own branch is sqrt at -1).
  auto scanned = [](Array x) {
    auto [c, ys] = lax::scan(
        [](Array c, Array xi) {
          Array n = lax::cond(xi > 0.0, [](Array v) { return v * v; }, [](Array v) { return jnp::sqrt(v); }, xi);
          return std::make_pair(c + n, n);
        },
        Array(0.0), jnp::stack({x, x}));
    return c;
  };
  Array gn = grad([&](Array x) { return jnp::sum(vmap(scanned)(x)); })(array<double>({-1.0, 2.0}));
  std::vector<double> v = gn.to_vector<double>();
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == 8.0);
  // The values themselves are unchanged.
  CHECK(vmap(sq)(xv).to_vector<double>() == std::vector<double>{2.0, 0.0, 0.0});
}

TEST_CASE("loops: a weak init carry whose body returns a strong value of its dtype comes back strong, as JAX's",
          "[control]") {
  Array w = lax::while_loop([](Array c) { return c < 3; }, [](Array c) { return c + array(int64_t(1)); },
                            Array(int64_t(0)));
  CHECK_FALSE(w.weak_type());
  CHECK((w + array(int32_t(5))).dtype() == DType::int64);
  auto [c, ys] = lax::scan([](Array c, Array x) { return std::make_pair(c + array(1.0), x); }, Array(0.0),
                           array<double>({1, 2}));
  CHECK_FALSE(c.weak_type());
  CHECK((c + array(1.0f)).dtype() == DType::float64);
  Array fl = lax::fori_loop(0, 2, [](Array, Array c) { return c + array(1.0); }, Array(0.0));
  CHECK_FALSE(fl.weak_type());
  CHECK(fl.item<double>() == 2.0);
  // A weak body keeps the carry weak.
  CHECK(lax::fori_loop(0, 2, [](Array, Array c) { return c + 1.0; }, Array(0.0)).weak_type());
}

TEST_CASE("cond and switch_: the result's weak type is the first branch's (cond's false_fn), as JAX's",
          "[control]") {
  auto f = [](Array p) { return lax::cond(p, []() { return array(2.0); }, []() { return Array(1.0); }); };
  for (const Array& r : {f(Array(true)), jit(f)(Array(true))}) {
    CHECK(r.weak_type());
    CHECK(r.item<double>() == 2.0);
    CHECK((r + array(1.0f)).dtype() == DType::float32);
  }
  Array g = lax::cond(Array(true), []() { return Array(2.0); }, []() { return array(1.0); });
  CHECK_FALSE(g.weak_type());
  Array s = lax::switch_(Array(1), std::tuple{[]() { return Array(1.0); }, []() { return array(2.0); }});
  CHECK(s.weak_type());
  CHECK((s + array(1.0f)).dtype() == DType::float32);
}

TEST_CASE("fori_loop: JAX's bound rules (equal dtypes, or signed with one weak) and a weak index for static bounds",
          "[control]") {
  auto add_i = [](Array i, Array x) { return x + i; };
  // Static bounds: the index is weak (JAX's Python int), so an int8 carry stays int8.
  Array r = lax::fori_loop(array(int32_t(0)), array(int32_t(3)), add_i, array(int8_t(0)));
  CHECK(r.dtype() == DType::int8);
  CHECK(r.astype(DType::int32).item<int32_t>() == 3);
  // Mixed dtypes: "lower and upper arguments to fori_loop must have equal types, got int32 and int64".
  CHECK_THROWS_AS(lax::fori_loop(array(int32_t(0)), array(int64_t(4)), add_i, array(0.0)), TypeError);
  auto traced = [&](Array lo, Array hi) { return lax::fori_loop(lo, hi, add_i, array(0.0)); };
  CHECK_THROWS_AS(jit(traced)(array(int32_t(0)), array(int64_t(4))), TypeError);
  CHECK_THROWS_AS(lax::fori_loop(array(uint8_t(1)), 4, add_i, array(0.0)), TypeError);
  // A weak signed bound takes the other's dtype (static and traced).
  CHECK(lax::fori_loop(1, array(int64_t(4)), add_i, array(0.0)).item<double>() == 6.0);
  CHECK(jit([&](Array hi) { return lax::fori_loop(1, hi, add_i, array(0.0)); })(array(int64_t(4))).item<double>() ==
        6.0);
  // Concrete float bounds count from int(lower), as JAX's static path: 0 + 1 + 2.
  Array fr = lax::fori_loop(0.0, 3.0, add_i, array(0.0f));
  CHECK(fr.dtype() == DType::float32);
  CHECK(fr.item<float>() == 3.0f);
}

TEST_CASE("scan takes unroll = 0 (one step per iteration), and while_loop's cond_fn must return a bare bool",
          "[control]") {
  auto [c, ys] = lax::scan([](Array c, Array x) { return std::make_pair(c + x, c); }, array(0.0f),
                           array<float>({1, 2, 3}), {.unroll = 0});
  CHECK(c.item<float>() == 6.0f);
  CHECK(ys.to_vector<float>() == std::vector<float>{0, 1, 3});
  CHECK_THROWS_AS(lax::scan([](Array c, Array x) { return std::make_pair(c + x, c); }, array(0.0f),
                            array<float>({1, 2, 3}), {.unroll = -1}),
                  TypeError);
  // JAX: "cond_fun must return a boolean scalar, but got pytree PyTreeDef([*])". The message names the caller's
  // line and no implementation function (it said "in while_impl").
  CHECK_THROWS_AS(lax::while_loop([](Array c) { return std::vector<Array>{c.sum() < 10.0f}; },
                                  [](Array c) { return c * 2.0f; }, array<float>({1, 2, 3})),
                  TypeError);
  CHECK_THROWS_WITH(lax::while_loop([](Array c) { return std::vector<Array>{c.sum() < 10.0f}; },
                                    [](Array c) { return c * 2.0f; }, array<float>({1, 2, 3})),
                    Catch::Contains("jax_parity_test.cpp") && !Catch::Contains("_impl"));
}

// --- nn, optim, jacobians (an outside probe against jax.nn, optax and jax.jacfwd/jacrev) ---

TEST_CASE("optim: Adam's count is an int32 and its bias corrections are exact, as optax's", "[optim]") {
  Array p = array<double>({1.0, -2.0, 0.5}), g = array<double>({0.3, -0.7, 2.0});
  auto [p1, s1] = optim::adam_update(p, g, optim::adam_init(p), Array::scalar(0.1, DType::float64));
  // optax.adam(0.1), one step: [0.9000000033333332, -1.9000000014285714, 0.4000000005].
  std::vector<double> want{0.9000000033333332, -1.9000000014285714, 0.4000000005}, got = p1.to_vector<double>();
  for (int i = 0; i < 3; ++i) CHECK(std::fabs(got[i] - want[i]) <= 1e-15);
  CHECK(std::get<0>(s1).dtype() == DType::int32);
  // f32 parameters, six steps against a float64 reference loop of optax's formulas.
  Array q = array<float>({0.5f, -1.5f}), gq = array<float>({0.25f, -3.0f});
  auto st = optim::adam_init(q);
  std::vector<double> ref{0.5, -1.5}, m(2, 0.0), v(2, 0.0), gv{0.25, -3.0};
  for (int t = 1; t <= 6; ++t) {
    std::tie(q, st) = optim::adam_update(q, gq, st, Array::scalar(0.01, DType::float32));
    for (int i = 0; i < 2; ++i) {
      m[i] = 0.9 * m[i] + 0.1 * gv[i];
      v[i] = 0.999 * v[i] + 0.001 * gv[i] * gv[i];
      double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
      ref[i] -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
    }
  }
  std::vector<float> qv = q.to_vector<float>();
  // f32 rounding of six steps stays within 1e-6 relative; the float32 bias correction drifted 4.6e-6.
  for (int i = 0; i < 2; ++i) CHECK(std::fabs(qv[i] - ref[i]) <= 1e-6 * std::fabs(ref[i]));
}

TEST_CASE("nn: activations keep JAX's weak types (a weak scalar in, a weak result out)", "[nn]") {
  Array f = array<float>({1.0f});
  for (const Array& r : {nn::relu6(Array(2.0)), nn::leaky_relu(Array(-1.0)), nn::elu(Array(-1.0)),
                         nn::celu(Array(-1.0)), nn::selu(Array(-1.0)), nn::hard_tanh(Array(3.0)),
                         nn::hard_sigmoid(Array(0.5)), nn::hard_silu(Array(0.5)), nn::sparse_plus(Array(0.5)),
                         nn::sparse_sigmoid(Array(0.5)), nn::softplus(Array(0.5))}) {
    CHECK(r.weak_type());
    CHECK((r + f).dtype() == DType::float32);
  }
  CHECK(nn::relu6(Array(7.0)).item<double>() == 6.0);
  // Integer inputs: a weak float result (JAX: elu(i32) + f32 is f32); bool: a weak int (relu(bool) + i8 is i8).
  CHECK((nn::elu(array<int32_t>({-1, 2})) + f).dtype() == DType::float32);
  Array rb = nn::relu(array({true, false})) + array<int8_t>({1, 1});
  CHECK(rb.dtype() == DType::int8);
  CHECK(rb.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{2, 1});
  Array bf = nn::selu(Array(-1.0)) + array<float>({1.0f}).astype(DType::bfloat16);
  CHECK(bf.dtype() == DType::bfloat16);
  // Values are unchanged: elu(-1) = e^-1 - 1.
  CHECK(std::fabs(nn::elu(Array(-1.0)).item<double>() - (std::exp(-1.0) - 1.0)) < 1e-15);
}

TEST_CASE("jacfwd and jacrev: JAX's types (jacfwd the output tangent's, jacrev the input's), integer outputs",
          "[autodiff]") {
  Array f = array<float>({1.0f, 1.0f});
  Array jf = jacfwd([](const Array& a) { return a * a; })(Array(3.0));
  CHECK(jf.weak_type());
  CHECK(jf.item<double>() == 6.0);
  CHECK((jf + f).dtype() == DType::float32);
  CHECK(jacrev([](const Array& a) { return a * a; })(Array(3.0)).weak_type());
  // a * f32 is a strong f32: jacfwd gives f32 (strong), jacrev the weak f64 input's type.
  auto mulf = [&](const Array& a) { return a * f; };
  Array jf2 = jacfwd(mulf)(Array(3.0)), jr2 = jacrev(mulf)(Array(3.0));
  CHECK(jf2.dtype() == DType::float32);
  CHECK_FALSE(jf2.weak_type());
  CHECK(jr2.dtype() == DType::float64);
  CHECK(jr2.weak_type());
  // JAX: jax.jacfwd(lambda a: a.astype(jnp.int32))(g) is int32 zeros of shape (3, 3).
  Array ji = jacfwd([](const Array& a) { return a.astype(DType::int32); })(array<double>({0.3, -0.7, 2.0}));
  CHECK(ji.shape() == Shape{3, 3});
  CHECK(ji.dtype() == DType::int32);
  CHECK(ji.to_vector<int32_t>() == std::vector<int32_t>(9, 0));
}

TEST_CASE("jacfwd of a custom_vjp function says forward mode is not supported (not a missing batching rule)",
          "[autodiff]") {
  auto cv = custom_vjp([](const Array& x) { return jnp::sin(x); },
                       [](const Array& x) { return std::make_pair(jnp::sin(x), jnp::cos(x)); },
                       [](const Array& c, const Array& ct) { return std::make_tuple(c * ct); });
  Array g = array<double>({0.3, -0.7});
  CHECK_THROWS_WITH(jacfwd([&](const Array& a) { return cv(a); })(g), Catch::Contains("forward-mode"));
  // Reverse mode works: jacrev is diag(cos g).
  std::vector<double> jr = jacrev([&](const Array& a) { return cv(a); })(g).to_vector<double>();
  CHECK(std::fabs(jr[0] - std::cos(0.3)) < 1e-15);
  CHECK(jr[1] == 0.0);
}

// --- jnp edge semantics (an outside probe of numpy.h / numpy_extra.h against jax.numpy) ---

TEST_CASE("jnp: isclose and allclose compare integers as floats with the tolerances, and equal values always",
          "[numpy]") {
  auto bools = [](const Array& a) { return a.astype(DType::int32).to_vector<int32_t>(); };
  // JAX: [True, False, False]; rtol=1e-2 -> True; atol=2.5 -> True; allclose -> True.
  CHECK(bools(jnp::isclose(jnp::array({100000, 1000, 5}), jnp::array({100001, 1001, 7}))) ==
        std::vector<int32_t>{1, 0, 0});
  CHECK(bools(jnp::isclose(jnp::array({1000}), jnp::array({1001}), 1e-2, 0.0)) == std::vector<int32_t>{1});
  CHECK(bools(jnp::isclose(jnp::array({5}), jnp::array({7}), 0.0, 2.5)) == std::vector<int32_t>{1});
  CHECK(jnp::allclose(jnp::array({1000}), jnp::array({1001}), 1e-2).item<bool>());
  // int32 goes through float32, as JAX's: 2^31 - 1 and 2^31 - 2 are the same float.
  CHECK(jnp::isclose(Array(int32_t{2147483647}).astype(DType::int32), Array(int32_t{2147483646}).astype(DType::int32),
                     0.0, 0.0)
            .item<bool>());
  // uint8: JAX [F, F, T].
  Array u = jnp::array({0, 255, 10}).astype(DType::uint8), v = jnp::array({255, 0, 12}).astype(DType::uint8);
  CHECK(bools(jnp::isclose(u, v, 0.0, 3.0)) == std::vector<int32_t>{0, 0, 1});
  // Negative tolerances: equal values are still close (JAX and NumPy: True); infinities only to themselves.
  CHECK(jnp::isclose(array<float>({1.0f}), array<float>({1.0f}), -1.0, -1.0).item<bool>());
  CHECK(bools(jnp::isclose(array<double>({INFINITY, INFINITY, 1.0}), array<double>({INFINITY, 1e308, NAN}))) ==
        std::vector<int32_t>{1, 0, 0});
}

TEST_CASE("jnp: round(x, decimals) as JAX's _round_float (float16 in float32, no-op past the dtype's range)",
          "[numpy]") {
  Array h = jnp::array({0.005, 1.0, 0.333}).astype(DType::float16);
  auto f32 = [](const Array& a) { return a.astype(DType::float32).to_vector<float>(); };
  // JAX: [0.01, 1., 0.33] (float16 values 0.010002136, 1, 0.33007812).
  CHECK(f32(jnp::round(h, 2)) == std::vector<float>{0.010002136f, 1.0f, 0.33007812f});
  CHECK(f32(jnp::round(h, 5)) == f32(h));
  CHECK(jnp::round(array<float>({1.0f, 0.333f}), 40).to_vector<float>() == std::vector<float>{1.0f, 0.333f});
  CHECK(jnp::round(array<double>({1.0, 0.333}), 400).to_vector<double>() == std::vector<double>{1.0, 0.333});
  Array big = jnp::array({65504.0}).astype(DType::float16);
  auto r10 = [](const Array& x) { return jnp::round(x, -1); };
  CHECK(f32(r10(big)) == std::vector<float>{65504.0f});
  CHECK(f32(jit(r10)(big)) == std::vector<float>{65504.0f});
  Array w = jnp::round(Array(2.25), 1);
  CHECK(w.weak_type());
  CHECK((w + array<float>({1.0f})).dtype() == DType::float32);
}

TEST_CASE("jnp: linspace gives JAX's values (as XLA computes its _linspace), integer dtypes floor them", "[numpy]") {
  // JAX: linspace(10, 1, 4, dtype=int32) == [10, 6, 3, 1] (exact quotients would give 10, 7, 4, 1).
  CHECK(jnp::linspace(10, 1, 4, true, DType::int32).to_vector<int32_t>() == std::vector<int32_t>{10, 6, 3, 1});
  CHECK(jnp::linspace(100, -100, 11, true, DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{100, 80, 60, 40, 20, 0, -21, -40, -60, -80, -100});
  CHECK(jnp::linspace(-78.0, 66.0, 10, true, DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{-78, -62, -46, -30, -15, 2, 18, 34, 50, 66});
  CHECK(jnp::linspace(-5, 5, 6, false, DType::float32).to_vector<float>() ==
        std::vector<float>{-5.0f, -3.3333332538604736f, -1.6666662693023682f, 1.1920928955078125e-07f,
                           1.6666669845581055f, 3.333333730697632f});
  std::vector<double> d = jnp::linspace(-73.0, -49.0, 17, false, DType::float64).to_vector<double>();
  CHECK(d[1] == -71.58823529411765);
  CHECK(d[16] == -50.411764705882355);
  std::vector<float> g = jnp::linspace(52.2, 85.3, 33, true, DType::float32).to_vector<float>();
  CHECK(g[1] == 53.234375f);
  CHECK(g[32] == 85.30000305175781f);
}

TEST_CASE("jnp: arange in an integer dtype wraps as JAX's (and refuses bool), and eye's far diagonals are empty",
          "[numpy]") {
  CHECK(jnp::arange(250.0, 260.0, 3.0, DType::uint8).astype(DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{250, 253, 0, 3});
  CHECK(jnp::arange(120.0, 130.0, 3.0, DType::int8).astype(DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{120, 123, 126, -127});
  CHECK(jnp::arange(-2.5, 2.0, 1.0, DType::int32).to_vector<int32_t>() == std::vector<int32_t>{-2, -1, 0, 1, 2});
  CHECK_THROWS_AS(jnp::arange(0.0, 2.0, 1.0, DType::bool_), TypeError);
  for (int64_t k : {INT64_MIN, INT64_MAX, int64_t{3}, int64_t{-3}})
    CHECK(jnp::eye(3, 3, k).to_vector<float>() == std::vector<float>(9, 0.0f));
  CHECK(jnp::eye(3, 3, -1).to_vector<float>() == std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1, 0});
}

TEST_CASE("jnp: fmod and logaddexp keep weak types, as JAX's", "[numpy]") {
  Array i8 = jnp::array({1, 2}).astype(DType::int8);
  Array e1 = jnp::fmod(Array(int64_t{7}), Array(int64_t{3})) + i8;  // JAX: int8 [2, 3]
  CHECK(e1.dtype() == DType::int8);
  CHECK(e1.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{2, 3});
  CHECK((jnp::logaddexp(Array(int64_t{1}), Array(int64_t{1})) + array<float>({1.0f})).dtype() == DType::float32);
}

TEST_CASE("jnp: einsum broadcasts size-1 dimensions, pad takes per-axis constants, huge sizes are jitx errors",
          "[numpy]") {
  Array y = jnp::arange(6.0f).reshape({2, 3}), r = array<float>({{1.0f, 10.0f, 100.0f}});
  CHECK(jnp::einsum("ij,ij->ij", {y, r}).to_vector<float>() == std::vector<float>{0, 10, 200, 3, 40, 500});
  CHECK(jnp::einsum("ij,j->i", {y, array<float>({2.0f})}).to_vector<float>() == std::vector<float>{6, 24});
  CHECK_THROWS_AS(jnp::einsum("ij,ij->ij", {y, jnp::ones({2, 2})}), ShapeError);
  // A byte outside ASCII is shown escaped (the message stays valid UTF-8).
  CHECK_THROWS_WITH(jnp::einsum("\xc3\xa9->", {jnp::ones({2})}), Catch::Contains("\\xc3"));
  // JAX: jnp.pad(x, 1, constant_values=[[1, 2], [3, 4]]) for x = [[1, 2]]: [[3,1,1,4],[3,1,2,4],[3,2,2,4]].
  Array p = jnp::pad(array<float>({{1.0f, 2.0f}}), {{1, 1}}, "constant", array<float>({{1.0f, 2.0f}, {3.0f, 4.0f}}));
  CHECK(p.shape() == Shape{3, 4});
  CHECK(p.to_vector<float>() == std::vector<float>{3, 1, 1, 4, 3, 1, 2, 4, 3, 2, 2, 4});
  Array p2 = jnp::pad(array<float>({1.0f, 2.0f}), {{1, 2}}, "constant", array<float>({7.0f, 8.0f}));
  CHECK(p2.to_vector<float>() == std::vector<float>{7, 1, 2, 8, 8});
  CHECK_THROWS_AS(jnp::pad(array<float>({1.0f}), {{1, 1}}, "constant", jnp::ones({3})), ShapeError);
  CHECK_THROWS_AS(jnp::repeat(jnp::ones({2, 3}), std::vector<int64_t>{int64_t{1} << 62, int64_t{1} << 62,
                                                                      int64_t{1} << 62},
                              1),
                  Error);
  CHECK_THROWS_AS(jnp::pad(jnp::ones({2, 3}), {{0, 0}, {1000000000000LL, 0}}, "reflect"), Error);
}

// --- vmap batching rules (an outside probe of jax.vmap on lax/jnp/nn/linalg/random ops) ---

TEST_CASE("vmap of dynamic_slice and dynamic_update_slice counts a negative start from the end once, as JAX",
          "[vmap]") {
  Array a = array<double>({10, 11, 12, 13});
  Array a2 = jnp::stack({a, a * 2.0});
  // JAX: start -6 on an axis of 4 is -2, clamped to 0: [[10, 11], [20, 22]].
  auto ds = [](const Array& x) { return lax::dynamic_slice(x, {Array(-6)}, {2}); };
  for (const Array& r : {vmap(ds)(a2), jit(vmap(ds))(a2)})
    CHECK(r.to_vector<double>() == std::vector<double>{10, 11, 20, 22});
  Array u = vmap([](const Array& x) { return lax::dynamic_update_slice(x, array<double>({0, 1}), {Array(-6)}); })(a2);
  CHECK(u.to_vector<double>() == std::vector<double>{0, 1, 12, 13, 0, 1, 24, 26});
  Array u2 = vmap([&](const Array& v) { return lax::dynamic_update_slice(a, v, {Array(-5)}); })(
      array<double>({0, 1, 2, 3}, {2, 2}));
  CHECK(u2.to_vector<double>() == std::vector<double>{0, 1, 12, 13, 2, 3, 12, 13});
  // The gradient lands where the values came from: JAX [[1, 2, 0, 0], [1, 2, 0, 0]].
  Array g = grad([&](const Array& x) { return jnp::sum(vmap(ds)(x) * array<double>({1, 2})); })(a2);
  CHECK(g.to_vector<double>() == std::vector<double>{1, 2, 0, 0, 1, 2, 0, 0});
  // Zero examples: empty results, as JAX's.
  CHECK(vmap([](const Array& x, const Array& i) { return lax::dynamic_slice(x, {i}, {2}); })(
            jnp::zeros({0, 4}), jnp::zeros({0}, DType::int32))
            .shape() == Shape{0, 2});
}

TEST_CASE("vmap of grouped convolutions (feature and batch groups) equals the per-example convolutions", "[vmap]") {
  auto rnd = [](Shape s, uint32_t seed) { return random::normal(random::PRNGKey(seed), s, DType::float64); };
  auto close = [](const Array& got, const Array& want) {
    REQUIRE(got.shape() == want.shape());
    std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) CHECK(std::fabs(g[i] - w[i]) <= 1e-12 * (1 + std::fabs(w[i])));
  };
  struct Groups { int64_t g, b; Shape lhs, rhs; };
  // lhs (N, C, W), rhs (O, I, W): feature groups 2 (C = 4 = 2 I, O = 4), batch groups 2 (N = 2, O = 4).
  for (const Groups& gr : {Groups{2, 1, {1, 4, 6}, {4, 2, 3}}, Groups{1, 2, {2, 3, 5}, {4, 3, 2}}}) {
    auto conv = [gr](const Array& l, const Array& r) {
      return lax::conv_general_dilated(l, r, {1}, {{1, 0}}, {}, {}, {}, gr.g, gr.b);
    };
    Shape lb = gr.lhs, rb = gr.rhs;
    lb.insert(lb.begin(), 3);
    rb.insert(rb.begin(), 3);
    Array L = rnd(lb, 1), R = rnd(rb, 2), l0 = rnd(gr.lhs, 3), r0 = rnd(gr.rhs, 4);
    std::vector<Array> both, lhs_only, rhs_only;
    for (int64_t e = 0; e < 3; ++e) {
      both.push_back(conv(L[e], R[e]));
      lhs_only.push_back(conv(L[e], r0));
      rhs_only.push_back(conv(l0, R[e]));
    }
    close(vmap(conv)(L, R), jnp::stack(both));
    close(vmap(conv, {0, std::nullopt})(L, r0), jnp::stack(lhs_only));
    close(vmap(conv, {std::nullopt, 0})(l0, R), jnp::stack(rhs_only));
    close(jit(vmap(conv, {0, std::nullopt}))(L, r0), jnp::stack(lhs_only));
    // Per-example gradients through the grouped convolution.
    auto loss = [&](const Array& l, const Array& r) { return jnp::sum(jnp::sin(conv(l, r))); };
    std::vector<Array> gl;
    for (int64_t e = 0; e < 3; ++e) gl.push_back(grad(loss)(L[e], r0));
    close(vmap(grad(loss), {0, std::nullopt})(L, r0), jnp::stack(gl));
    // Zero examples: the empty result of the unbatched shape (was a SIGFPE).
    Shape l_empty = lb, r_empty = rb;
    l_empty[0] = 0, r_empty[0] = 0;
    CHECK(vmap(conv, {0, std::nullopt})(jnp::zeros(l_empty, DType::float64), r0).shape()[0] == 0);
    CHECK(vmap(conv)(jnp::zeros(l_empty, DType::float64), jnp::zeros(r_empty, DType::float64)).shape()[0] == 0);
  }
}

TEST_CASE("nn: gelu of a weak scalar is strong, as JAX's (its constants are arrays of x's dtype)", "[nn]") {
  // JAX 0.10.2 (x64): jax.nn.gelu(1.5) is a strong float64 1.3995715769802328 (approximate=False:
  // 1.399789198096713).
  for (bool approximate : {true, false}) {
    Array r = nn::gelu(Array(1.5), approximate);
    Array j = jit([approximate](const Array& a) { return nn::gelu(a, approximate); })(Array(1.5));
    for (const Array& v : {r, j}) {
      CHECK(v.dtype() == DType::float64);
      CHECK_FALSE(v.weak_type());
      CHECK(v.item<double>() == (approximate ? 1.3995715769802328 : 1.399789198096713));
    }
  }
}
