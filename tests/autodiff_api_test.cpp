// grad, value_and_grad, vjp, jvp, linearize over pytrees, composed with each other and with jit; errors.
#include <map>

#include "test_util.h"

namespace {
using namespace jitx;
using jitx::testing::make;
using jitx::testing::make_int;
using jitx::testing::uniform;

Array f64(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float64); }
void check_near(const Array& got, const std::vector<double>& want, double tol, const std::string& what) {
  INFO(what);
  auto g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(std::fabs(g[i] - want[i]) <= tol * (1 + std::fabs(want[i])));
}

TEST_CASE("grad of simple functions matches hand-computed derivatives", "[autodiff]") {
  Array x = f64({0.3, -1.2, 2.0}, {3});
  auto g = grad([](const Array& a) { return jnp::sum(jnp::sin(a) * a); })(x);
  std::vector<double> want;
  for (double v : x.to_vector<double>()) want.push_back(std::cos(v) * v + std::sin(v));
  check_near(g, want, 1e-14, "d/dx sum(sin(x) x)");
  // A C++ number is traced when f takes an Array, and its gradient is an Array.
  Array gs = grad([](const Array& a) { return a * a * a; })(2.0);
  CHECK(gs.item<double>() == 12.0);
}

TEST_CASE("argnums pick the differentiated arguments, several give a tuple", "[autodiff]") {
  Array x = f64({1, 2}, {2}), y = f64({3, 4}, {2});
  auto f = [](const Array& a, const Array& b) { return jnp::sum(a * a * b); };
  Array gy = grad(f, argnums<1>)(x, y);
  CHECK(gy.to_vector<double>() == std::vector<double>{1, 4});
  auto [gx, gy2] = grad(f, argnums<0, 1>)(x, y);
  CHECK(gx.to_vector<double>() == std::vector<double>{6, 16});
  CHECK(gy2.to_vector<double>() == std::vector<double>{1, 4});
}

TEST_CASE("value_and_grad with has_aux returns ((value, aux), grad)", "[autodiff]") {
  Array x = f64({1, 2, 3}, {3});
  auto f = [](const Array& a) {
    Array sq = a * a;
    return std::make_pair(jnp::sum(sq), std::map<std::string, Array>{{"sq", sq}, {"n", Array(3.0)}});
  };
  auto [va, g] = value_and_grad(f, has_aux)(x);
  auto& [v, aux] = va;
  CHECK(v.item<double>() == 14.0);
  CHECK(aux.at("sq").to_vector<double>() == std::vector<double>{1, 4, 9});
  CHECK(!aux.at("sq").is_tracer());
  CHECK(g.to_vector<double>() == std::vector<double>{2, 4, 6});
  auto [g2, aux2] = grad(f, has_aux)(x);
  CHECK(g2.to_vector<double>() == std::vector<double>{2, 4, 6});
  CHECK(aux2.at("n").item<double>() == 3.0);
}

TEST_CASE("grad of grad gives second derivatives", "[autodiff]") {
  auto f = [](const Array& a) { return a * a * a + lax::sin(a); };
  auto d2 = grad(grad(f));
  for (double v : {0.5, -1.3, 2.0}) {
    double got = d2(f64({v}, {})).item<double>();
    CHECK(std::fabs(got - (6 * v - std::sin(v))) < 1e-12);
  }
  // Third derivative of tanh through three nested levels.
  auto d3 = grad(grad(grad([](const Array& a) { return lax::tanh(a); })));
  double v = 0.4, t = std::tanh(v);
  CHECK(std::fabs(d3(f64({v}, {})).item<double>() - (-2 * (1 - t * t) * (1 - 3 * t * t))) < 1e-12);
  // Hessian-vector product of a vector function: grad of <grad f, w>.
  Array x = f64({0.2, 0.7, -0.4}, {3}), w = f64({1, -2, 0.5}, {3});
  auto hvp = grad([&](const Array& a) {
    return jnp::sum(grad([](const Array& b) { return jnp::sum(jnp::exp(b) * b); })(a) * w);
  })(x);
  std::vector<double> want;
  auto xv = x.to_vector<double>(), wv = w.to_vector<double>();
  for (size_t i = 0; i < 3; ++i) want.push_back(std::exp(xv[i]) * (xv[i] + 2) * wv[i]);
  check_near(hvp, want, 1e-13, "hvp");
}

TEST_CASE("grad of jit and jit of grad give the same numbers, jit of grad compiles once", "[autodiff]") {
  auto f = [](const Array& a, const Array& b) { return jnp::sum(jnp::tanh(jnp::matmul(a, b)) * a); };
  Array a = f64(uniform(6, -1, 1), {2, 3}), b = f64(uniform(9, -1, 1), {3, 3});
  auto g_eager = grad(f)(a, b);
  auto g_of_jit = grad(jit(f))(a, b);
  auto jit_of_g = jit(grad(f));
  auto g1 = jit_of_g(a, b);
  auto g2 = jit_of_g(a * 2.0, b);
  CHECK(jit_of_g.num_compiles() == 1);
  auto e = g_eager.to_vector<double>(), gj = g_of_jit.to_vector<double>(), jg = g1.to_vector<double>();
  for (size_t i = 0; i < e.size(); ++i) {
    CHECK(gj[i] == e[i]);
    CHECK(std::fabs(jg[i] - e[i]) <= 1e-14 * (1 + std::fabs(e[i])));
  }
  (void)g2;
  // Forward and backward are one program: the jaxpr holds the tanh and its transposed matmuls.
  std::string text = make_jaxpr(grad(f))(a, b).str();
  CHECK(text.find("tanh") != std::string::npos);
  CHECK(text.find("dot_general") != std::string::npos);
  CHECK(text.find("transpose") != std::string::npos);
}

struct Mlp {
  Array w1, b1, w2, b2;
};
}  // namespace
JITX_PYTREE(Mlp, w1, b1, w2, b2)
namespace {

Array mlp_loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = jnp::tanh(jnp::matmul(x, p.w1) + p.b1);
  Array out = jnp::matmul(h, p.w2) + p.b2;
  return jnp::mean((out - y) * (out - y));
}

TEST_CASE("an MLP's parameter gradients (a pytree) match finite differences", "[autodiff]") {
  Mlp p{f64(uniform(12, -1, 1), {4, 3}), f64(uniform(3, -1, 1), {3}), f64(uniform(6, -1, 1), {3, 2}),
        f64(uniform(2, -1, 1), {2})};
  Array x = f64(uniform(20, -1, 1), {5, 4}), y = f64(uniform(10, -1, 1), {5, 2});
  auto [loss, g] = value_and_grad(mlp_loss)(p, x, y);
  CHECK(std::fabs(loss.item<double>() - mlp_loss(p, x, y).item<double>()) < 1e-15);
  auto leaves = tree_leaves(p), gl = tree_leaves(g);
  REQUIRE(gl.size() == 4);
  const double eps = 1e-6;
  for (size_t k = 0; k < leaves.size(); ++k) {
    auto v = leaves[k].to_vector<double>(), gv = gl[k].to_vector<double>();
    REQUIRE(gl[k].shape() == leaves[k].shape());
    for (size_t i = 0; i < v.size(); ++i) {
      auto perturbed = [&](double d) {
        auto w = v;
        w[i] += d;
        auto ls = leaves;
        ls[k] = f64(w, leaves[k].shape());
        Mlp q{ls[0], ls[1], ls[2], ls[3]};
        return mlp_loss(q, x, y).item<double>();
      };
      double fd = (perturbed(eps) - perturbed(-eps)) / (2 * eps);
      CHECK(std::fabs(gv[i] - fd) < 1e-8);
    }
  }
  // The same through jit, in one compiled program.
  auto step = jit([](const Mlp& q, const Array& xb, const Array& yb) { return value_and_grad(mlp_loss)(q, xb, yb); });
  auto [l2, g2] = step(p, x, y);
  CHECK(std::fabs(l2.item<double>() - loss.item<double>()) < 1e-14);
  check_near(g2.w1, g.w1.to_vector<double>(), 1e-13, "jit grad w1");
}

TEST_CASE("jvp, linearize and vjp agree and take pytrees", "[autodiff]") {
  auto f = [](const std::vector<Array>& v) { return std::make_tuple(v[0] * v[1], jnp::sum(jnp::exp(v[0]))); };
  std::vector<Array> x{f64({0.1, 0.2}, {2}), f64({3, 4}, {2})}, t{f64({1, 0}, {2}), f64({0.5, 2}, {2})};
  auto [y, ty] = jvp(f, std::tuple{x}, std::tuple{t});
  auto [y2, f_jvp] = linearize(f, x);
  auto ty2 = f_jvp(t);
  CHECK(std::get<0>(ty).to_vector<double>() == std::get<0>(ty2).to_vector<double>());
  CHECK(std::get<1>(ty).item<double>() == std::get<1>(ty2).item<double>());
  check_near(std::get<0>(ty), {3 + 0.1 * 0.5, 0.2 * 2}, 1e-15, "jvp product");
  auto [y3, f_vjp] = vjp(f, x);
  auto [ct] = f_vjp(std::make_tuple(f64({1, 1}, {2}), f64({2}, {})));
  check_near(ct[0], {3 + 2 * std::exp(0.1), 4 + 2 * std::exp(0.2)}, 1e-14, "vjp x0");
  check_near(ct[1], {0.1, 0.2}, 1e-15, "vjp x1");
}

TEST_CASE("integer inputs get zero tangents and zero cotangents", "[autodiff]") {
  Array x = f64({1.5, 2.5}, {2});
  Array n = make_int({3, 4}, DType::int32);
  auto f = [](const Array& a, const Array& k) { return a * lax::convert_element_type(k, DType::float64); };
  auto [y, ty] = jvp(f, std::tuple{x, n}, std::tuple{f64({1, 1}, {2}), make_int({7, 7}, DType::int32)});
  CHECK(ty.to_vector<double>() == std::vector<double>{3, 4});
  auto [y2, f_vjp] = vjp(f, x, n);
  auto [cx, cn] = f_vjp(f64({1, 1}, {2}));
  CHECK(cx.to_vector<double>() == std::vector<double>{3, 4});
  CHECK(cn.dtype() == DType::int32);
  CHECK(cn.to_vector<int64_t>() == std::vector<int64_t>{0, 0});
  // An integer output has a zero tangent.
  auto [yi, ti] = jvp([](const Array& a) { return lax::convert_element_type(a, DType::int32); }, x, f64({1, 1}, {2}));
  CHECK(ti.to_vector<int64_t>() == std::vector<int64_t>{0, 0});
}

TEST_CASE("C++ control flow on values works under grad (not under jit)", "[autodiff]") {
  auto f = [](const Array& x) { return (x > 0) ? x * x : -x; };
  CHECK(grad(f)(2.0).item<double>() == 4.0);
  CHECK(grad(f)(-1.0).item<double>() == -1.0);
  CHECK(grad(grad(f))(3.0).item<double>() == 2.0);
  CHECK_THROWS_AS(jit(grad(f))(2.0), TracerError);
}

TEST_CASE("stop_gradient blocks derivatives (also under jit)", "[autodiff]") {
  auto f = [](const Array& a) { return jnp::sum(a * stop_gradient(a)); };
  Array x = f64({1, -2}, {2});
  CHECK(stop_gradient(x).to_vector<double>() == x.to_vector<double>());
  CHECK(jit([](const Array& a) { return stop_gradient(a) * 1.0; })(x).to_vector<double>() == x.to_vector<double>());
  CHECK(grad(f)(x).to_vector<double>() == std::vector<double>{1, -2});
  CHECK(jit(grad(f))(x).to_vector<double>() == std::vector<double>{1, -2});
}

TEST_CASE("autodiff errors are clear jitx::Errors", "[autodiff]") {
  Array x = f64({1, 2}, {2});
  try {
    grad([](const Array& a) { return a * 2.0; })(x);
    FAIL("grad of a non-scalar output should throw");
  } catch (const TypeError& e) {
    CHECK(std::string(e.what()).find("[grad]") != std::string::npos);
    CHECK(std::string(e.what()).find("scalar") != std::string::npos);
  }
  try {
    grad([](const Array& a) { return jnp::sum(a); })(make_int({1, 2}, DType::int32));
    FAIL("grad with respect to an integer input should throw");
  } catch (const TypeError& e) {
    CHECK(std::string(e.what()).find("i32[2]") != std::string::npos);
    CHECK(std::string(e.what()).find("floating") != std::string::npos);
  }
  CHECK_THROWS_AS(jvp([](const Array& a) { return a; }, x, f64({1, 2, 3}, {3})), TypeError);
  auto [y, f_vjp] = vjp([](const Array& a) { return a * 2.0; }, x);
  CHECK_THROWS_AS(f_vjp(f64({1}, {1})), TypeError);
}

}  // namespace
