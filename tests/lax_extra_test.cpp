// lax.nextafter, reduce_precision, cumlogsumexp, associative_scan; the nn activations added with them; jacfwd,
// jacrev and hessian. Each eagerly and under jit. Reference values are JAX 0.10.2's (jax_enable_x64, CPU), made by
// the snippets quoted beside them (import jax, jax.numpy as jnp, numpy as np; from jax import lax, nn).
#include <cmath>
#include <cstdint>
#include <functional>

#include "jitx/jacobian.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
using Unary = std::function<Array(const Array&)>;

/// f(x) eagerly and under jit.
std::vector<std::pair<std::string, Array>> both(const Unary& f, const Array& x) {
  return {{"eager", f(x)}, {"jit", jit([f](Array a) { return f(a); })(x)}};
}

/// The bit patterns of a float array (as uint64 for every width).
std::vector<uint64_t> bits_of(const Array& a) {
  DType u = dtype_bits(a.dtype()) == 16 ? DType::uint16 : dtype_bits(a.dtype()) == 32 ? DType::uint32 : DType::uint64;
  return lax::convert_element_type(lax::bitcast_convert_type(a, u), DType::uint64).to_vector<uint64_t>();
}

void check_close(const Array& got, const std::vector<double>& want, double rtol, double atol, const std::string& what) {
  auto g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(what << " element " << i << ": got " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(g[i]));
    else if (std::isinf(want[i])) CHECK(g[i] == want[i]);
    else CHECK(std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]));
  }
}
}  // namespace

TEST_CASE("lax_extra: nextafter steps one ulp towards the second operand, bit for bit as JAX", "[lax_extra]") {
  // x = [0., -0., 1., -1., inf, -inf, 3.4028235e38, 1e-45, nan]; y = [1., 1., 2., -2., 0., 0., inf, 0., 1.] (f32)
  // [hex(v) for v in np.asarray(lax.nextafter(x, y)).view(np.uint32)]
  Array x = make({0., -0., 1., -1., INFINITY, -INFINITY, 3.4028235e38, 1e-45, NAN}, DType::float32);
  Array y = make({1., 1., 2., -2., 0., 0., INFINITY, 0., 1.}, DType::float32);
  std::vector<uint64_t> want{0x1, 0x1, 0x3f800001, 0xbf800001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0x0, 0x7fc00000};
  CHECK(bits_of(lax::nextafter(x, y)) == want);
  CHECK(bits_of(jit([](Array a, Array b) { return lax::nextafter(a, b); })(x, y)) == want);
  // f64: nextafter([1., 0., -1.], [2., -1., 0.]); f16: nextafter([1., 0., 65504.], [2., -1., inf]).
  Array x64 = make({1., 0., -1.}, DType::float64), y64 = make({2., -1., 0.}, DType::float64);
  std::vector<uint64_t> want64{0x3ff0000000000001, 0x8000000000000001, 0xbfefffffffffffff};
  CHECK(bits_of(lax::nextafter(x64, y64)) == want64);
  CHECK(bits_of(jit([](Array a, Array b) { return lax::nextafter(a, b); })(x64, y64)) == want64);
  Array x16 = make({1., 0., 65504.}, DType::float16), y16 = make({2., -1., INFINITY}, DType::float16);
  std::vector<uint64_t> want16{0x3c01, 0x8001, 0x7c00};
  CHECK(bits_of(lax::nextafter(x16, y16)) == want16);
  CHECK(bits_of(jit([](Array a, Array b) { return lax::nextafter(a, b); })(x16, y16)) == want16);
  // A scalar operand broadcasts; mixed dtypes and integers are errors naming the op.
  CHECK(bits_of(lax::nextafter(x64, Array::scalar(INFINITY, DType::float64)))[1] == 1);
  CHECK_THROWS_AS(lax::nextafter(x, x64), TypeError);
  CHECK_THROWS_WITH(lax::nextafter(make_int({1}, DType::int32), make_int({2}, DType::int32)),
                    Catch::Contains("nextafter"));
}

TEST_CASE("lax_extra: reduce_precision rounds as XLA's reduce-precision, bit for bit as JAX", "[lax_extra]") {
  // v = jnp.array([1.0, 1.00390625, 1.005859375, 3.14159265, -2.7182818, 1e-39, 65519., 65520., 1e30, -1e30,
  //                np.inf, np.nan, 0.0, -0.0, 6e-5, 5e-8], np.float32)
  // [hex(b) for b in np.asarray(lax.reduce_precision(v, E, M)).view(np.uint32)]
  Array v = make({1.0, 1.00390625, 1.005859375, 3.14159265, -2.7182818, 1e-39, 65519., 65520., 1e30, -1e30, INFINITY,
                  NAN, 0.0, -0.0, 6e-5, 5e-8},
                 DType::float32);
  struct Case {
    int e, m;
    std::vector<uint64_t> want;
  };
  std::vector<Case> cases{
      {8, 7, {0x3f800000, 0x3f800000, 0x3f810000, 0x40490000, 0xc02e0000, 0xb0000, 0x47800000, 0x47800000,
              0x714a0000, 0xf14a0000, 0x7f800000, 0x7fc00000, 0x0, 0x80000000, 0x387c0000, 0x33570000}},
      {5, 10, {0x3f800000, 0x3f808000, 0x3f80c000, 0x40490000, 0xc02e0000, 0x0, 0x477fe000, 0x7f800000, 0x7f800000,
               0xff800000, 0x7f800000, 0x7fc00000, 0x0, 0x80000000, 0x0, 0x0}},
      {4, 0, {0x3f800000, 0x3f800000, 0x3f800000, 0x40800000, 0xc0000000, 0x0, 0x7f800000, 0x7f800000, 0x7f800000,
              0xff800000, 0x7f800000, 0x7fc00000, 0x0, 0x80000000, 0x0, 0x0}},
  };
  for (const auto& c : cases) {
    INFO("exponent_bits=" << c.e << " mantissa_bits=" << c.m);
    for (auto& [how, r] : both([&](const Array& a) { return lax::reduce_precision(a, c.e, c.m); }, v)) {
      INFO(how);
      auto got = bits_of(r);
      // NaN payloads are not compared (JAX's quiet NaN here is 0x7fc00000): only that it is NaN.
      CHECK(std::isnan(r.to_vector<double>()[11]));
      got[11] = c.want[11];
      CHECK(got == c.want);
    }
  }
  // f64 to f32's format: lax.reduce_precision(jnp.array([1/3, 1e-40, 1e39, np.pi]), 8, 23)
  Array d = make({1.0 / 3, 1e-40, 1e39, M_PI}, DType::float64);
  std::vector<uint64_t> want64{0x3fd5555560000000, 0x0, 0x7ff0000000000000, 0x400921fb60000000};
  for (auto& [how, r] : both([](const Array& a) { return lax::reduce_precision(a, 8, 23); }, d)) {
    INFO(how);
    CHECK(bits_of(r) == want64);
  }
  // Keeping every bit is the identity; the derivative is 1 (straight through).
  CHECK(bits_of(lax::reduce_precision(v, 8, 23)) == bits_of(v));
  CHECK(grad([](Array t) { return lax::reduce_precision(t * 3, 8, 7); })(Array::scalar(1.5, DType::float32))
            .item<double>() == 3.0);
  CHECK_THROWS_AS(lax::reduce_precision(v, 0, 3), TypeError);
  CHECK_THROWS_AS(lax::reduce_precision(make_int({1}, DType::int32), 8, 7), TypeError);
}

TEST_CASE("lax_extra: cumlogsumexp matches JAX along either axis, reversed, with infinities", "[lax_extra]") {
  // c = jnp.array([[0.5, -1., 3., np.log(2.), 100., -100.], [1., 2., 3., 4., 5., 6.]], np.float32)
  // lax.cumlogsumexp(c, axis=1), (c, axis=1, reverse=True), (c, axis=0)
  Array c = make({0.5, -1., 3., std::log(2.), 100., -100., 1., 2., 3., 4., 5., 6.}, {2, 6}, DType::float32);
  std::vector<double> ax1{0.5, 0.7014132738113403, 3.0956742763519287, 3.182300567626953, 100.0, 100.0,
                          1.0, 2.3132617473602295, 3.4076061248779297, 4.440189838409424, 5.451914310455322,
                          6.456193447113037};
  std::vector<double> rev{100.0, 100.0, 100.0, 100.0, 100.0, -100.0, 6.456193447113037, 6.451914310455322,
                          6.440189838409424, 6.40760612487793, 6.31326150894165, 6.0};
  std::vector<double> ax0{0.5, -1.0, 3.0, 0.6931471824645996, 100.0, -100.0, 1.4740769863128662, 2.0485873222351074,
                          3.6931471824645996, 4.035976409912109, 100.0, 6.0};
  for (auto& [how, r] : both([](const Array& a) { return lax::cumlogsumexp(a, 1); }, c))
    check_close(r, ax1, 2e-6, 0, how);
  for (auto& [how, r] : both([](const Array& a) { return lax::cumlogsumexp(a, 1, true); }, c))
    check_close(r, rev, 2e-6, 0, how);
  for (auto& [how, r] : both([](const Array& a) { return lax::cumlogsumexp(a, 0); }, c))
    check_close(r, ax0, 2e-6, 0, how);
  // lax.cumlogsumexp(jnp.array([-inf, -inf, 0., inf], np.float32)) = [-inf, -inf, 0, inf]
  Array inf = make({-INFINITY, -INFINITY, 0., INFINITY}, DType::float32);
  for (auto& [how, r] : both([](const Array& a) { return lax::cumlogsumexp(a); }, inf))
    check_close(r, {-INFINITY, -INFINITY, 0., INFINITY}, 0, 0, how);
  // jax.grad(lambda t: lax.cumlogsumexp(t).sum())(jnp.array([0.5, -1., 3., 2.], np.float32))
  Array g = make({0.5, -1., 3., 2.}, DType::float32);
  auto gf = [](Array t) { return jnp::sum(lax::cumlogsumexp(t)); };
  std::vector<double> gw{1.948075532913208, 0.21154426038265228, 1.5898288488388062, 0.2505512237548828};
  check_close(grad(gf)(g), gw, 1e-5, 0, "grad");
  check_close(jit(grad(gf))(g), gw, 1e-5, 0, "jit(grad)");
  // f64 against a double loop of log(sum(exp)).
  auto xs = uniform(37, -20, 20);
  std::vector<double> want;
  double acc = 0;
  for (double v : xs) want.push_back(std::log(acc += std::exp(v)));
  for (auto& [how, r] : both([](const Array& a) { return lax::cumlogsumexp(a); }, make(xs, DType::float64)))
    check_close(r, want, 1e-13, 0, how);
  CHECK_THROWS_AS(lax::cumlogsumexp(make_int({1, 2}, DType::int32)), TypeError);
}

TEST_CASE("lax_extra: associative_scan computes prefix combinations over pytrees, either direction", "[lax_extra]") {
  // Sums of 1..n for every n around the recursion's odd/even splits, on axis 0 and 1, forward and reversed,
  // against double loops; integers are exact.
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 33}) {
    std::vector<int64_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = (i * 7919) % 23 - 11;
    Array x = make_int(v, DType::int32);
    auto add = [](const Array& a, const Array& b) { return a + b; };
    std::vector<int64_t> fwd(n), bwd(n);
    for (int64_t i = 0, s = 0; i < n; ++i) fwd[i] = s += v[i];
    for (int64_t i = n - 1, s = 0; i >= 0; --i) bwd[i] = s += v[i];
    INFO("n=" << n);
    CHECK(lax::associative_scan(add, x).to_vector<int64_t>() == fwd);
    CHECK(lax::associative_scan(add, x, true).to_vector<int64_t>() == bwd);
    CHECK(jit([&](Array a) { return lax::associative_scan(add, a, true); })(x).to_vector<int64_t>() == bwd);
    Array x2 = lax::reshape(x, {1, n});
    CHECK(jit([&](Array a) { return lax::associative_scan(add, a, false, 1); })(x2).to_vector<int64_t>() == fwd);
  }
  // A pytree: (running product of 2x2 matrices as four scalars' leaves, running max) in one scan; a non-commutative
  // fn checks the order of the operands (a is the earlier prefix).
  auto xs = uniform(10, -1, 1);
  Array a = make(xs, DType::float64), b = make(uniform(10, -1, 1), DType::float64);
  // Affine maps x -> p x + q composed left to right: (p1, q1) then (p2, q2) is (p1 p2, q1 p2 + q2).
  auto compose = [](const std::pair<Array, Array>& l, const std::pair<Array, Array>& r) {
    return std::make_pair(l.first * r.first, l.second * r.first + r.second);
  };
  auto [p, q] = lax::associative_scan(compose, std::make_pair(a, b));
  auto jp = jit([&](Array u, Array w) { return lax::associative_scan(compose, std::make_pair(u, w)); })(a, b);
  auto pv = a.to_vector<double>(), qv = b.to_vector<double>();
  std::vector<double> wp, wq;
  double cp = 1, cq = 0;
  for (size_t i = 0; i < pv.size(); ++i) {
    cp *= pv[i];
    cq = cq * pv[i] + qv[i];
    wp.push_back(cp);
    wq.push_back(cq);
  }
  check_close(p, wp, 1e-14, 1e-300, "p");
  check_close(q, wq, 1e-13, 1e-15, "q");
  check_close(jp.first, wp, 1e-14, 1e-300, "jit p");
  check_close(jp.second, wq, 1e-13, 1e-15, "jit q");
  // Differentiable: the gradient of the last prefix sum is all ones; a fn changing a leaf's shape is an error.
  auto last = [](Array t) { return lax::associative_scan([](const Array& u, const Array& w) { return u + w; }, t)[3]; };
  check_close(grad(last)(make({1., 2., 3., 4.}, DType::float32)), {1, 1, 1, 1}, 0, 0, "grad");
  CHECK_THROWS_AS(lax::associative_scan([](const Array& u, const Array&) { return jnp::sum(u); }, a), TypeError);
  CHECK_THROWS_AS(lax::associative_scan(compose, std::make_pair(a, make({1., 2.}, DType::float64))), ShapeError);
}

TEST_CASE("lax_extra: jacfwd, jacrev and hessian give out.shape + in.shape Jacobians", "[lax_extra][autodiff]") {
  // f(x)_ij = sin(x_j) * x_i^2 for x of shape (3,): J[i][j][k] = d f_ij / d x_k, by hand.
  auto g = [](Array x) {
    Array col = jnp::expand_dims(x * x, {1}), row = jnp::expand_dims(jnp::sin(x), {0});
    return col * row;  // (3, 3)
  };
  std::vector<double> xv{0.3, -1.2, 2.0};
  Array x = make(xv, DType::float64);
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        want.push_back((k == i ? 2 * xv[i] * std::sin(xv[j]) : 0) + (k == j ? xv[i] * xv[i] * std::cos(xv[j]) : 0));
  for (auto& [how, jac] : std::vector<std::pair<std::string, Array>>{
           {"jacfwd", jacfwd(g)(x)}, {"jacrev", jacrev(g)(x)}, {"jit(jacfwd)", jit(jacfwd(g))(x)},
           {"jit(jacrev)", jit(jacrev(g))(x)}}) {
    INFO(how);
    CHECK(jac.shape() == Shape{3, 3, 3});
    auto got = jac.to_vector<double>();
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) <= 1e-14);
  }
  // Two argnums give a tuple; h(a, b) = a * b^3 elementwise (diagonal Jacobians).
  auto h = [](Array a, Array b) { return a * b * b * b; };
  Array a = make({1., 2.}, DType::float32), b = make({3., -1.}, DType::float32);
  auto [ja, jb] = jacrev(h, argnums<0, 1>)(a, b);
  auto [fa, fb] = jacfwd(h, argnums<0, 1>)(a, b);
  for (const Array* m : {&ja, &fa}) CHECK(m->to_vector<double>() == std::vector<double>{27, 0, 0, -1});
  for (const Array* m : {&jb, &fb}) CHECK(m->to_vector<double>() == std::vector<double>{27, 0, 0, 6});
  // hessian of sum(x^3) + x0 x1 is diag(6 x) + the off-diagonal 1s; of a scalar function of a matrix: shape (2,2,2,2).
  auto s = [](Array v) { return jnp::sum(v * v * v) + v[0] * v[1]; };
  Array v = make({1., -2.}, DType::float64);
  CHECK(hessian(s)(v).to_vector<double>() == std::vector<double>{6, 1, 1, -12});
  CHECK(jit(hessian(s))(v).to_vector<double>() == std::vector<double>{6, 1, 1, -12});
  auto tr = [](Array m) { return jnp::sum(m * m); };
  Array hm = hessian(tr)(make({1., 2., 3., 4.}, {2, 2}, DType::float64));
  CHECK(hm.shape() == Shape{2, 2, 2, 2});
  std::vector<double> eye4;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) eye4.push_back(i == j ? 2 : 0);
  CHECK(hm.to_vector<double>() == eye4);
  // A scalar input gives out.shape; integer inputs are refused as grad refuses them.
  CHECK(jacrev([](Array t) { return t * t; })(Array::scalar(3.0, DType::float32)).item<double>() == 6.0);
  CHECK(jacfwd([](Array t) { return t * t; })(Array::scalar(3.0, DType::float32)).item<double>() == 6.0);
  CHECK_THROWS_AS(jacrev([](Array t) { return t * 1.5; })(make_int({1, 2}, DType::int32)), TypeError);
}

TEST_CASE("lax_extra: vmap(grad(f)) of maximum(x, 0) on scalars gives JAX's derivatives", "[lax_extra][autodiff]") {
  // Before: the batching rule's elementwise fast path threw for the scalar operand of maximum's derivative.
  // jax.vmap(jax.grad(lambda x: jnp.maximum(x, 0.)))(jnp.array([-1., 0., 2.])) = [0., 0.5, 1.]
  auto f = [](Array t) { return jnp::maximum(t, Array(0.0)); };
  Array x = make({-1., 0., 2.}, DType::float32);
  std::vector<double> want{0, 0.5, 1};
  CHECK(vmap(grad(f))(x).to_vector<double>() == want);
  CHECK(jit(vmap(grad(f)))(x).to_vector<double>() == want);
  CHECK(vmap(grad([](Array t) { return jnp::minimum(Array(0.0), t); }))(x).to_vector<double>() ==
        std::vector<double>{1, 0.5, 0});
}
