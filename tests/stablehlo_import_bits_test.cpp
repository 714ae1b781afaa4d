// import_stablehlo's ops that become bit arithmetic on a float's integer image: chlo.next_after and
// stablehlo.reduce_precision (pretty `format = e5m10` and generic exponent_bits/mantissa_bits), against
// std::nextafter and against a round trip through float16, on edge values (zeros, equal operands, NaN, overflow).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "jitx/import.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {
// As JAX prints jax.jit(jnp.nextafter).lower(x, y).as_text() (JAX 0.10.2), for f32[8] and f64[8].
std::string next_after_module(const char* t) {
  return fmt::format(R"(module @jit_nextafter {{
  func.func public @main(%arg0: tensor<8x{0}>, %arg1: tensor<8x{0}>) -> (tensor<8x{0}> {{jax.result_info = "result"}}) {{
    %0 = chlo.next_after %arg0, %arg1 : tensor<8x{0}>, tensor<8x{0}> -> tensor<8x{0}>
    return %0 : tensor<8x{0}>
  }}
}}
)", t);
}

template <class T>
void check_next_after(const char* mlir_type) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> x = {1.5, -2.25, 0.0, -0.0, 3.0, inf, 7.0, nan};
  std::vector<T> y = {2.0, 5.0, -1.0, 1.0, 3.0, 0.0, nan, 1.0};
  auto c = import_stablehlo(next_after_module(mlir_type)).compile();
  auto got = c(array(x, {8}), array(y, {8}))[0].template to_vector<T>();
  for (size_t k = 0; k < x.size(); ++k) {
    INFO("nextafter(" << x[k] << ", " << y[k] << ")");
    T want = std::nextafter(x[k], y[k]);
    if (std::isnan(want)) {
      CHECK(std::isnan(got[k]));
    } else {
      CHECK(got[k] == want);
      CHECK(std::signbit(got[k]) == std::signbit(want));
    }
  }
}
}  // namespace

TEST_CASE("import_stablehlo: chlo.next_after matches std::nextafter", "[import]") {
  check_next_after<float>("f32");
  check_next_after<double>("f64");
}

TEST_CASE("import_stablehlo: reduce_precision to e5m10 matches a round trip through float16", "[import]") {
  // Normal float16 values round to nearest even; above 65504 they overflow to infinity (70000 is past the
  // rounding midpoint), below float16's smallest subnormal they become signed zeros, NaN stays NaN.
  std::vector<float> x = {1.0f, 0.1f, -3.14159f, 1.00048828125f, 1.00146484375f, 70000.0f, -1e-9f, 65504.0f};
  const char* pretty = R"(module @jit_f {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
)";
  const char* generic = R"(func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.reduce_precision"(%arg0) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
)";
  Array a = array(x, {8});
  auto want = a.astype(DType::float16).astype(DType::float32).to_vector<float>();
  CHECK(want[5] == std::numeric_limits<float>::infinity());
  CHECK(want[3] == 1.0f);  // a tie rounds to even
  for (const char* text : {pretty, generic}) {
    auto got = import_stablehlo(text).compile()(a)[0].to_vector<float>();
    for (size_t k = 0; k < x.size(); ++k) {
      INFO(x[k]);
      CHECK(got[k] == want[k]);
      CHECK(std::signbit(got[k]) == std::signbit(want[k]));
    }
  }
  auto nan = import_stablehlo(pretty).compile()(array(std::vector<float>(8, std::nanf("")), {8}))[0];
  CHECK(std::isnan(nan.to_vector<float>()[0]));
}
