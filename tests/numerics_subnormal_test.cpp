// Subnormals: jitx keeps IEEE subnormal inputs and results on every platform (XLA:CPU, and so JAX on CPU, flushes
// them to zero: there log(1e-45f) = -inf and sign(1e-40f) = 0). Eager, jit and the interpreter (this file runs
// under each JITX_PLATFORM) must all give the IEEE values below, computed by hand or with <cmath> in double.
#include <cmath>
#include <functional>
#include <limits>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
using Unary = std::function<Array(const Array&)>;

void check_both(const Unary& f, const Array& x, const std::vector<double>& want, double rtol, const std::string& what) {
  for (int jitted = 0; jitted < 2; ++jitted) {
    Array r = jitted ? jit([f](Array a) { return f(a); })(x) : f(x);
    auto g = r.to_vector<double>();
    REQUIRE(g.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO(what << (jitted ? " (jit)" : " (eager)") << " element " << i << ": got " << g[i] << ", want " << want[i]);
      if (std::isinf(want[i]) || want[i] == 0) CHECK(g[i] == want[i]);
      else CHECK(std::fabs(g[i] - want[i]) <= rtol * std::fabs(want[i]));
      if (want[i] == 0) CHECK(std::signbit(g[i]) == std::signbit(want[i]));
    }
  }
}
}  // namespace

TEST_CASE("numerics: subnormal inputs and results are kept, eagerly and under jit", "[numerics][lax_extra]") {
  const double tiny32 = std::ldexp(1.0, -149), tiny64 = std::numeric_limits<double>::denorm_min();
  // f32: the smallest subnormal, 1e-40 (rounded to f32), the largest subnormal, and a normal for contrast.
  std::vector<double> xs{tiny32, double(1e-40f), std::ldexp(1.0, -126) - tiny32, 1.0};
  Array x = make(xs, DType::float32);
  std::vector<double> logs, sqrts;
  for (double v : xs) {
    logs.push_back(std::log(v));
    sqrts.push_back(std::sqrt(v));
  }
  check_both([](const Array& a) { return jnp::log(a); }, x, logs, 2e-7, "log");
  check_both([](const Array& a) { return jnp::sqrt(a); }, x, sqrts, 2e-7, "sqrt");
  check_both([](const Array& a) { return jnp::sign(a); }, x, {1, 1, 1, 1}, 0, "sign");
  check_both([](const Array& a) { return jnp::astype(jnp::equal(a, Array::scalar(0.0, DType::float32)),
                                                     DType::float32); },
             x, {0, 0, 0, 0}, 0, "== 0");
  // Exact subnormal arithmetic: 3 * 2^-149, 2^-149 / 2 = 0 (ties to even), the largest subnormal + 2^-149 = 2^-126.
  check_both([](const Array& a) { return a * Array::scalar(3.0, DType::float32); }, make({tiny32}, DType::float32),
             {3 * tiny32}, 0, "mul");
  check_both([](const Array& a) { return a / Array::scalar(2.0, DType::float32); }, make({tiny32}, DType::float32),
             {0.0}, 0, "div");
  check_both([&](const Array& a) { return a + Array::scalar(tiny32, DType::float32); },
             make({std::ldexp(1.0, -126) - tiny32}, DType::float32), {std::ldexp(1.0, -126)}, 0, "add");
  // Subnormal results of exp: exp(-100) = 3.72e-44 in f32.
  check_both([](const Array& a) { return jnp::exp(a); }, make({-100.0}, DType::float32), {std::exp(-100.0)}, 0.03,
             "exp");
  // f64: log of the smallest subnormal, sign and a product.
  check_both([](const Array& a) { return jnp::log(a); }, make({tiny64}, DType::float64), {std::log(tiny64)}, 1e-15,
             "log f64");
  check_both([](const Array& a) { return jnp::sign(a); }, make({-tiny64}, DType::float64), {-1}, 0, "sign f64");
  check_both([](const Array& a) { return a * Array::scalar(5.0, DType::float64); }, make({tiny64}, DType::float64),
             {5 * tiny64}, 0, "mul f64");
}

TEST_CASE("numerics: promotion follows JAX with jax_enable_x64 (the README's dtype rules)", "[numerics][lax_extra]") {
  // i32 = jnp.ones(2, jnp.int32) etc.; (i32 + 1.5).dtype, (u32 * i32).dtype, (f32 + 1.5).dtype, (i8 + 1).dtype,
  // (bf16 + f16).dtype, (u64 + i64).dtype, (f32 + i64).dtype, (u32 + 1).dtype under jax_enable_x64:
  // float64 int64 float32 int8 float32 float64 float32 uint32
  auto ones = [](DType d) { return jnp::astype(make({1., 1.}, DType::float32), d); };
  Array i32 = ones(DType::int32), u32 = ones(DType::uint32), f32 = ones(DType::float32), i8 = ones(DType::int8);
  CHECK((i32 + 1.5).dtype() == DType::float64);
  CHECK((u32 * i32).dtype() == DType::int64);
  CHECK((f32 + 1.5).dtype() == DType::float32);
  CHECK((i8 + 1).dtype() == DType::int8);
  CHECK((ones(DType::bfloat16) + ones(DType::float16)).dtype() == DType::float32);
  // Before: u64 + i64 gave f32. JAX's result is a weak f64: jnp.ones(2, jnp.float32) + (u64 + i64) is float32.
  Array ui = ones(DType::uint64) + ones(DType::int64);
  CHECK(ui.dtype() == DType::float64);
  CHECK((f32 + ui).dtype() == DType::float32);
  CHECK((ones(DType::int32) + ones(DType::uint64)).dtype() == DType::float64);
  CHECK((f32 + ones(DType::int64)).dtype() == DType::float32);
  CHECK((u32 + 1).dtype() == DType::uint32);
  CHECK(jit([](Array a) { return a + 1.5; })(i32).dtype() == DType::float64);
}
