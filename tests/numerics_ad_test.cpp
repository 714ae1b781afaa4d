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
}  // namespace

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

