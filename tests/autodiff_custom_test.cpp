// custom_jvp / custom_vjp user rules, and the jaxpr-level JVP and partial evaluation (known/unknown split).
#include "core/trace.h"
#include "test_util.h"
#include "transforms/ad.h"

namespace {
using namespace jitx;
using jitx::testing::make;

Array f64(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float64); }

// JAX's example: log(1 + e^x) whose naive derivative overflows to nan in f32 for large x.
auto log1pexp = custom_jvp([](const Array& x) { return jnp::log(1.0 + jnp::exp(x)); },
                           [](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
                             const Array& x = std::get<0>(primals);
                             Array y = jnp::log(1.0 + jnp::exp(x));
                             return std::make_pair(y, std::get<0>(tangents) * (1.0 - 1.0 / (1.0 + jnp::exp(x))));
                           });

TEST_CASE("custom_jvp replaces the derivative in both modes, under jit and nested", "[autodiff]") {
  auto naive = grad([](const Array& x) { return jnp::log(1.0 + jnp::exp(x)); });
  Array big = Array::scalar(100.0, DType::float32);
  CHECK(std::isnan(naive(big).item<float>()));
  CHECK(grad(log1pexp)(big).item<float>() == 1.0f);
  CHECK(jit(grad(log1pexp))(big).item<float>() == 1.0f);
  auto [y, t] = jvp(log1pexp, f64({0.0}, {}), f64({2.0}, {}));
  CHECK(std::fabs(t.item<double>() - 1.0) < 1e-15);
  // The rule itself is differentiated for second derivatives: sigmoid'(x) = s (1 - s).
  double x = 0.7, s = 1 / (1 + std::exp(-x));
  CHECK(std::fabs(grad(grad(log1pexp))(f64({x}, {})).item<double>() - s * (1 - s)) < 1e-14);
  // Without any differentiation the plain function runs.
  CHECK(std::fabs(log1pexp(f64({0.0}, {})).item<double>() - std::log(2.0)) < 1e-15);
}

// sin with a deliberately doubled backward rule, so the test can tell the custom rule ran.
auto sin2 = custom_vjp([](const Array& x) { return jnp::sin(x); },
                       [](const Array& x) { return std::make_pair(jnp::sin(x), jnp::cos(x)); },
                       [](const Array& cos_x, const Array& g) { return std::make_tuple(cos_x * g * 2.0); });

TEST_CASE("custom_vjp runs the user's bwd in reverse mode, forward mode is a clear error", "[autodiff]") {
  Array x = f64({0.3, -1.1}, {2});
  auto g = grad([](const Array& a) { return jnp::sum(sin2(a)); })(x);
  auto xv = x.to_vector<double>();
  auto gv = g.to_vector<double>();
  for (size_t i = 0; i < 2; ++i) CHECK(std::fabs(gv[i] - 2 * std::cos(xv[i])) < 1e-15);
  auto gj = jit(grad([](const Array& a) { return jnp::sum(sin2(a)); }))(x).to_vector<double>();
  for (size_t i = 0; i < 2; ++i) CHECK(std::fabs(gj[i] - gv[i]) < 1e-15);
  // grad of grad differentiates the residuals (cos x) and bwd: d/dx 2 cos x = -2 sin x.
  double h = grad(grad([](const Array& a) { return sin2(a); }))(f64({0.4}, {})).item<double>();
  CHECK(std::fabs(h + 2 * std::sin(0.4)) < 1e-14);
  try {
    jvp(sin2, x, f64({1, 1}, {2}));
    FAIL("jvp of a custom_vjp function should throw");
  } catch (const TypeError& e) {
    CHECK(std::string(e.what()).find("custom_vjp") != std::string::npos);
  }
}

TEST_CASE("jvp_jaxpr + partial_eval_jaxpr split known from unknown, the unknown part transposes", "[autodiff]") {
  using detail::backward_pass;
  using detail::eval_jaxpr;
  using detail::PartialEval;
  ShapedArray av{{3}, DType::float64, false};
  detail::ClosedJaxpr cj = detail::trace_to_jaxpr("f", {av}, [](const std::vector<Array>& a) {
    return std::vector<Array>{jnp::sin(a[0]) * a[0]};
  });
  detail::ClosedJaxpr jj = detail::jvp_jaxpr(cj, {true}, {true}).jaxpr;
  REQUIRE(jj.jaxpr.invars.size() == 2);
  REQUIRE(jj.jaxpr.outvars.size() == 2);
  PartialEval pe = detail::partial_eval_jaxpr(jj, {false, true});
  CHECK(pe.out_unknown == std::vector<bool>{false, true});
  CHECK(pe.num_residuals > 0);
  // Every unknown equation is linear in the tangent: mul/add/neg/convert only, no sin or cos.
  std::string text = detail::print_jaxpr(pe.unknown);
  CHECK(text.find("sin") == std::string::npos);
  CHECK(text.find("cos") == std::string::npos);
  Array x = f64({0.2, -0.5, 1.3}, {3}), t = f64({1, 2, -1}, {3});
  std::vector<Array> known = eval_jaxpr(pe.known.jaxpr, pe.known.consts, std::vector<Array>{x});
  std::vector<Array> res(known.begin() + 1, known.end()), args = res;
  args.push_back(t);
  Array ty = eval_jaxpr(pe.unknown, std::vector<Array>{}, args)[0];
  auto xv = x.to_vector<double>(), tv = t.to_vector<double>(), tyv = ty.to_vector<double>();
  for (size_t i = 0; i < 3; ++i)
    CHECK(std::fabs(tyv[i] - tv[i] * (std::cos(xv[i]) * xv[i] + std::sin(xv[i]))) < 1e-15);
  std::vector<Array> bargs = res;
  bargs.push_back(Array());
  Array u = f64({0.5, 1, 2}, {3});
  std::vector<Array> cts = backward_pass(pe.unknown, std::vector<Array>{}, bargs, std::vector<Array>{u});
  auto cv = cts.back().to_vector<double>(), uv = u.to_vector<double>();
  for (size_t i = 0; i < 3; ++i)
    CHECK(std::fabs(cv[i] - uv[i] * (std::cos(xv[i]) * xv[i] + std::sin(xv[i]))) < 1e-15);
}

}  // namespace

namespace {
// sin with a tripled tangent (custom_jvp), so the test can tell the rule ran.
auto sin3 = custom_jvp([](const Array& x) { return jnp::sin(x); },
                       [](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
                         const Array& x = std::get<0>(primals);
                         return std::make_pair(jnp::sin(x), std::get<0>(tangents) * jnp::cos(x) * 3.0);
                       });
double scalar_grad(const std::function<Array(Array)>& f, double x) {
  return grad(f)(f64({x}, {})).item<double>();
}
}  // namespace

TEST_CASE("custom rules apply inside cond, switch, scan, fori_loop, while_loop's jvp and checkpoint", "[autodiff]") {
  // A custom function called where a jaxpr is traced is one equation holding its rule (JAX's custom_jvp_call), so
  // differentiating the control flow later applies it. Inlined, its rule was lost: relu'(0) came out 0.5 (max's
  // split tangent) instead of 0, sin2's and sin3's derivatives as plain cos. Values: JAX 0.10.2, x64.
  const double x = 0.5, c = std::cos(0.5);
  auto id = [](Array a) { return a; };
  CHECK(scalar_grad([&](Array a) { return lax::cond(Array(true), [](Array v) { return nn::relu(v); }, id, a); }, 0.0) ==
        0.0);
  CHECK(std::fabs(scalar_grad([&](Array a) { return lax::cond(Array(true), sin2, id, a); }, x) - 2 * c) < 1e-14);
  CHECK(std::fabs(scalar_grad([&](Array a) { return lax::cond(Array(true), sin3, id, a); }, x) - 3 * c) < 1e-14);
  CHECK(std::fabs(scalar_grad([&](Array a) {
                    return lax::switch_(Array(1), std::vector<std::function<Array(Array)>>{id, sin3}, a);
                  }, x) - 3 * c) < 1e-14);
  // scan: one step is the rule once; two steps chain it (d/dx sin2(sin2(x)) = 2 cos(sin x) * 2 cos x).
  auto scan_n = [](int n, auto fn) {
    return [n, fn](Array a) {
      return lax::scan([fn](Array carry, Array) { return std::pair{fn(carry), carry}; }, a,
                       jnp::ones({n}, DType::float64))
          .first;
    };
  };
  CHECK(std::fabs(scalar_grad(scan_n(1, sin2), x) - 2 * c) < 1e-14);
  double two = 4 * std::cos(std::sin(x)) * c;
  CHECK(std::fabs(scalar_grad(scan_n(2, sin2), x) - two) < 1e-14);
  CHECK(std::fabs(scalar_grad(scan_n(2, sin3), x) - 9 * std::cos(std::sin(x)) * c) < 1e-14);
  CHECK(scalar_grad(scan_n(1, [](Array v) { return nn::relu(v); }), 0.0) == 0.0);
  CHECK(std::fabs(scalar_grad([](Array a) { return lax::fori_loop(0, 2, [](Array, Array v) { return sin2(v); }, a); },
                              x) - two) < 1e-14);
  // checkpoint, and jit around the control flow.
  CHECK(std::fabs(scalar_grad(checkpoint([](Array a) { return sin2(a); }), x) - 2 * c) < 1e-14);
  CHECK(std::fabs(jit(grad([&](Array a) { return lax::cond(Array(true), sin3, id, a); }))(f64({x}, {})).item<double>() -
                  3 * c) < 1e-14);
  // Forward mode through a while_loop's body: one step of sin3.
  auto once = [](Array a) {
    return lax::while_loop([](Array v) { return v < 0.6; }, [](Array v) { return sin3(v) + 1.0; }, a);
  };
  auto [y, t] = jvp(once, f64({x}, {}), f64({0.5}, {}));
  CHECK(std::fabs(t.item<double>() - 1.5 * c) < 1e-14);
  // vmap of grad of a cond of relu: the rule survives the batching (0 at the kink, 1 above it).
  auto g = vmap(grad([](Array a) { return lax::cond(Array(true), [](Array v) { return nn::relu(v); },
                                                     [](Array v) { return v; }, a); }))(f64({0.0, 1.0}, {2}));
  CHECK(g.to_vector<double>() == std::vector<double>{0.0, 1.0});
  // The traced function is the equation's body: evaluated and lowered, it gives the function's values.
  auto v = jit([&](Array a) { return lax::cond(Array(true), sin3, id, a); })(f64({x}, {})).item<double>();
  CHECK(std::fabs(v - std::sin(x)) < 1e-15);
  std::string jaxpr = make_jaxpr([&](Array a) { return lax::cond(Array(true), sin3, id, a); })(f64({x}, {})).str();
  CHECK_THAT(jaxpr, Catch::Matchers::Contains("custom_jvp_call"));
}

TEST_CASE("logaddexp splits its derivative evenly at a tie, as JAX's rule does", "[autodiff]") {
  auto g = grad([](Array a, Array b) { return jnp::logaddexp(a, b); }, argnums<0, 1>);
  auto [ga, gb] = g(f64({1.0}, {}), f64({1.0}, {}));
  CHECK(ga.item<double>() == 0.5);
  CHECK(gb.item<double>() == 0.5);
  auto [ha, hb] = g(f64({2.0}, {}), f64({0.5}, {}));  // JAX: 0.81757448, 0.18242552
  CHECK(std::fabs(ha.item<double>() - 0.81757448) < 1e-8);
  CHECK(std::fabs(hb.item<double>() - 0.18242552) < 1e-8);
  CHECK(std::isinf(jnp::logaddexp(f64({INFINITY}, {}), f64({INFINITY}, {})).item<double>()));
  CHECK(jnp::logaddexp(f64({-INFINITY}, {}), f64({1.0}, {})).item<double>() == 1.0);
}
