// Derivatives at the ends of their ranges and at JAX's conventions for kinks (relu, softplus, pow at 0): forward and
// reverse mode, eagerly and under jit. Reference values are JAX 0.10's (jax_enable_x64, CPU) unless a comment says
// otherwise.
#include <cmath>
#include <functional>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {

using Unary = std::function<Array(const Array&)>;

/// The elementwise derivative of f at x four ways: jvp with a tangent of ones and grad of the sum, each eagerly and
/// under jit.
std::vector<std::pair<std::string, Array>> derivatives(const Unary& f, const Array& x) {
  auto fwd = [f](Array a) { return jvp([f](Array b) { return f(b); }, a, ones_like(a)).second; };
  auto rev = [f](Array a) { return grad([f](Array b) { return jnp::sum(f(b)); })(a); };
  return {{"jvp", fwd(x)}, {"jit(jvp)", jit(fwd)(x)}, {"grad", rev(x)}, {"jit(grad)", jit(rev)(x)}};
}

/// Each derivative within rtol of want, relative to it, or within atol (results that underflow); NaN for NaN.
void check_derivatives(const Unary& f, const Array& x, const std::vector<double>& want, double rtol, double atol,
                       const std::string& what) {
  for (auto& [how, d] : derivatives(f, x)) {
    INFO(what << " by " << how << " dtype=" << dtype_name(x.dtype()));
    auto g = d.to_vector<double>();
    REQUIRE(g.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
      if (std::isnan(want[i])) CHECK(std::isnan(g[i]));
      else if (std::isinf(want[i])) CHECK(g[i] == want[i]);
      else CHECK(std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]));
    }
  }
}
double rtol_of(DType d) { return d == DType::float32 ? 2e-5 : 1e-13; }
double atol_of(DType d) { return d == DType::float32 ? 1e-37 : 1e-300; }

}  // namespace

TEST_CASE("numerics: gelu's derivative holds at the ends of the range, in both forms", "[numerics][autodiff]") {
  // Before (tanh form, f32): gelu'(1e4) = -12758, gelu'(-1e4) = 12759, gelu'(100) = 0.987, gelu'(-10) = 1.4e-5 (tanh
  // overshooting 1 made 1 - tanh^2 negative). References: 50-digit mpmath derivatives of both forms (JAX's f32 tanh
  // form is 0 from x = -5 on: 1 + tanh(u) cancels).
  std::vector<double> x{-1e4, -100, -30, -10, -5, -1, -0.5, 0, 0.5, 1, 5, 10, 30, 100, 1e4};
  std::vector<double> tanh_form{-0.0, -0.0, -0.0, -2.7576380638540315e-36, -1.5463619875325946e-06,
                                -0.08296408384578255, 0.1326300964653577, 0.5, 0.8673699035346423, 1.0829640838457826,
                                1.0000015463619876, 1.0, 1.0, 1.0, 1.0};
  std::vector<double> erf_form{-0.0, -0.0, -4.416031690708495e-195, -7.618400096464814e-22, -7.146946001792295e-06,
                               -0.0833154705876863, 0.13250487534383715, 0.5, 0.8674951246561629, 1.0833154705876864,
                               1.000007146946002, 1.0, 1.0, 1.0, 1.0};
  for (DType d : {DType::float32, DType::float64}) {
    check_derivatives([](const Array& a) { return nn::gelu(a, true); }, make(x, d), tanh_form, rtol_of(d), atol_of(d),
                      "gelu (tanh form)");
    check_derivatives([](const Array& a) { return nn::gelu(a, false); }, make(x, d), erf_form, rtol_of(d), atol_of(d),
                      "gelu (erf form)");
    // JAX's at the infinities and NaN: inf * 0 for the tanh form at +inf (and for both at -inf).
    check_derivatives([](const Array& a) { return nn::gelu(a, true); }, make({INFINITY, -INFINITY, NAN}, d),
                      {NAN, NAN, NAN}, 0, 0, "gelu (tanh form) at the ends");
  }
}

TEST_CASE("numerics: relu'(0) = 0 and softplus'(0) = 1/2, as JAX defines them", "[numerics][autodiff]") {
  // Before: relu'(0) = 1/2 (max's rule for a tie), softplus'(0) = 0 (max's 1/2 and abs's -1/2). JAX: relu's custom
  // rule is [x > 0]; softplus is logaddexp(x, 0), whose rule is exp(x - softplus(x)).
  std::vector<double> x{0.0, -0.0, 1, -1, 30, -30, 100, INFINITY, -INFINITY, NAN};
  check_derivatives([](const Array& a) { return nn::relu(a); }, make(x, DType::float32),
                    {0, 0, 1, 0, 1, 0, 1, 1, 0, 0}, 0, 0, "relu");
  check_derivatives([](const Array& a) { return nn::softplus(a); }, make(x, DType::float32),
                    {0.5, 0.5, 0.7310585379600525, 0.26894140243530273, 1.0, 9.357622912219837e-14, 1.0, 1.0, 0.0, NAN},
                    2e-6, 1e-7, "softplus");
  check_derivatives([](const Array& a) { return nn::softplus(a); }, make(x, DType::float64),
                    {0.5, 0.5, 0.731058578630005, 0.2689414213699951, 0.9999999999999076, 9.35762296883931e-14, 1.0,
                     1.0, 0.0, NAN},
                    1e-12, 1e-300, "softplus");
  // The rules' outputs are the functions' own, so second derivatives apply the rules again (JAX: softplus''(0) = 1/4,
  // softplus''(1) = sigmoid'(1), the primal output's derivative in relu's rule is relu's, 0 at 0).
  Array zero = Array::scalar(0.0, DType::float32), one = Array::scalar(1.0, DType::float32);
  auto softplus2 = grad(grad([](Array a) { return nn::softplus(a); }));
  CHECK(softplus2(zero).item<double>() == 0.25);
  CHECK(jit(softplus2)(zero).item<double>() == 0.25);
  CHECK(std::fabs(softplus2(one).item<double>() - 0.19661193324148185) < 1e-6);
  auto relu_primal = [](Array a) { return jvp([](Array b) { return nn::relu(b); }, a, ones_like(a)).first; };
  CHECK(jvp(relu_primal, zero, ones_like(zero)).second.item<double>() == 0.0);
  // The values are JAX's too (relu(NaN) is NaN, relu(-0) is 0).
  both_close([](auto& a) { return nn::relu(a[0]); }, {make(x, DType::float32)},
             {0, 0, 1, 0, 30, 0, 100, INFINITY, 0, NAN}, DType::float32, "relu");
  both_close([](auto& a) { return nn::softplus(a[0]); }, {make(x, DType::float64)},
             {0.6931471805599453, 0.6931471805599453, 1.3132616875182228, 0.3132616875182228, 30.000000000000092,
              9.357622968839737e-14, 100.0, INFINITY, 0.0, NAN},
             DType::float64, "softplus");
}

TEST_CASE("numerics: tanh', logistic', sin' and cos' at the ends of the range", "[numerics][autodiff]") {
  // f32 tanh rounds to +-1 from |x| = 9.1 on, so 1 - tanh^2 is 0 there (before: -2.4e-7, from tanh = 1 + 2^-23).
  check_derivatives([](const Array& a) { return lax::tanh(a); },
                    make({9.5, 10, -10, 30, 100, -100, INFINITY}, DType::float32), {0, 0, 0, 0, 0, 0, 0}, 0, 0, "tanh");
  check_derivatives([](const Array& a) { return lax::logistic(a); },
                    make({30, -30, 100, 1e4, INFINITY, -INFINITY}, DType::float32),
                    {0.0, 9.357623589846195e-14, 0.0, 0.0, 0.0, 0.0}, 2e-6, 1e-37, "logistic");
  // sin' = cos and cos' = -sin of large arguments (JAX's f32 values).
  Array big = make({1e20, -1e30, 3.4028235e38}, DType::float32);
  check_derivatives([](const Array& a) { return lax::sin(a); }, big,
                    {0.7542592883110046, -0.6116048097610474, 0.8530210256576538}, 2e-6, 1e-7, "sin");
  check_derivatives([](const Array& a) { return lax::cos(a); }, big,
                    {-0.6565766930580139, -0.791163444519043, 0.5218765139579773}, 2e-6, 1e-7, "cos");
}

TEST_CASE("numerics: pow's partial derivatives at 0 follow JAX's conventions", "[numerics][autodiff]") {
  // Float exponents (lax::pow): d/dx = y x^(y-1), NaN at (0, 0) (before: 0); d/dy = log(x) x^y with log(0) read as 0.
  struct Case {
    double x, y, dx, dy;
  };
  for (const Case& c : std::vector<Case>{{0, 0, NAN, 0},
                                         {0, 1, 1, 0},
                                         {0, 2, 0, 0},
                                         {0, 0.5, INFINITY, 0},
                                         {0, -1, -INFINITY, NAN},
                                         {2, 0, 0, 0.6931471805599453},
                                         {-2, 2, -4, NAN}}) {
    INFO("pow at x = " << c.x << ", y = " << c.y);
    Array x = make({c.x}, {}, DType::float64), y = make({c.y}, {}, DType::float64);
    auto f = [](Array a, Array b) { return lax::pow(a, b); };
    for (bool jitted : {false, true}) {
      auto g = jitted ? jit(grad(f, argnums<0, 1>))(x, y) : grad(f, argnums<0, 1>)(x, y);
      double dx = std::get<0>(g).item<double>(), dy = std::get<1>(g).item<double>();
      if (std::isnan(c.dx)) CHECK(std::isnan(dx));
      else CHECK(dx == c.dx);
      if (std::isnan(c.dy)) CHECK(std::isnan(dy));
      else CHECK(std::fabs(dy - c.dy) <= 1e-15);
    }
  }
  // Integer exponents (jnp::power): JAX's rule for them is 0 where y = 0, at x = 0 too; a float 0 exponent gives NaN.
  Array zeros = make({0, 0}, DType::float64);
  Array ints = make_int({0, 1}, DType::int32);
  check_derivatives([ints](const Array& a) { return jnp::power(a, ints); }, zeros, {0, 1}, 0, 0, "power(x, [0, 1])");
  check_derivatives([](const Array& a) { return jnp::power(a, Array(0)); }, zeros, {0, 0}, 0, 0, "power(x, 0)");
  check_derivatives([](const Array& a) { return jnp::power(a, Array(2)); }, make({0, 3}, DType::float64), {0, 6}, 0, 0,
                    "power(x, 2)");
  check_derivatives([](const Array& a) { return jnp::power(a, Array::scalar(0.0, DType::float64)); }, zeros,
                    {NAN, NAN}, 0, 0, "power(x, 0.0)");
  // The values stay x^y: 0^0 = 1, NaN^0 = 1.
  both_close([](auto& a) { return jnp::power(a[0], a[1]); }, {make({0, NAN, 2, -2}, DType::float32),
             make_int({0, 0, 3, 3}, DType::int32)}, {1, 1, 8, -8}, DType::float32, "power(x, int)");
}
