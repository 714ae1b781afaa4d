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
