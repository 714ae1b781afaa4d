// Result dtypes that JAX with jax_enable_x64 gives and the conformance run (tools/conformance.py) found jitx
// disagreeing on: index results are int64, sums/products of bools and narrow ints accumulate in int64/uint64,
// jax.nn activations of ints are float64, and the integer ops jnp defines on bools run in int32. Values are
// hand-computed; the dtypes are JAX 0.10.2's, from
//   JAX_ENABLE_X64=1 python -c "import jax.numpy as jnp, jax; x = jnp.array([1, 0], 'int32'); print(jnp.sum(x).dtype)"
// and the like for each op below (the notes of branch h-random list the outputs).
#include <cmath>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

TEST_CASE("x64 dtypes: argmax, argmin and argsort give int64 indices", "[x64_dtypes]") {
  Array v = make({3, -1, 7, 7, 0}, float32);
  both_exact([](auto& a) { return jnp::argmax(a[0]); }, {v}, {2}, int64, "argmax");
  both_exact([](auto& a) { return jnp::argmin(a[0]); }, {v}, {1}, int64, "argmin");
  both_exact([](auto& a) { return jnp::argsort(a[0]); }, {v}, {1, 4, 0, 2, 3}, int64, "argsort");
  Array m = make_int({4, 1, 9, 2, 8, 3}, {2, 3}, int32);
  both_exact([](auto& a) { return jnp::argmax(a[0], 0); }, {m}, {0, 1, 0}, int64, "argmax axis 0");
  both_exact([](auto& a) { return jnp::argmin(a[0], 1, true); }, {m}, {1, 0}, int64, "argmin axis 1 keepdims");
  both_exact([](auto& a) { return jnp::argsort(a[0], 1); }, {m}, {1, 0, 2, 0, 2, 1}, int64, "argsort axis 1");
  Array b = make_int({0, 1, 1, 0}, bool_);
  both_exact([](auto& a) { return jnp::argmax(a[0]); }, {b}, {1}, int64, "argmax of bool");
}

TEST_CASE("x64 dtypes: sum and prod of bools and narrow ints accumulate in int64/uint64", "[x64_dtypes]") {
  Array b = make_int({1, 0, 1, 1}, bool_);
  both_exact([](auto& a) { return jnp::sum(a[0]); }, {b}, {3}, int64, "sum bool");
  both_exact([](auto& a) { return jnp::prod(a[0]); }, {b}, {0}, int64, "prod bool");
  both_exact([](auto& a) { return jnp::nansum(a[0]); }, {b}, {3}, int64, "nansum bool");
  // Values that would wrap in the input dtype (and in int32) show the accumulation is really 64-bit.
  both_exact([](auto& a) { return jnp::sum(a[0]); }, {make_int({100, 100, 100}, int8)}, {300}, int64, "sum int8");
  both_exact([](auto& a) { return jnp::sum(a[0]); }, {make_int({200, 200}, uint8)}, {400}, uint64, "sum uint8");
  int64_t g = int64_t(1) << 30;
  both_exact([](auto& a) { return jnp::sum(a[0]); }, {make_int({g, g, g}, int32)}, {3 * g}, int64, "sum int32");
  both_exact([](auto& a) { return jnp::nansum(a[0]); }, {make_int({g, g, g}, int32)}, {3 * g}, int64,
             "nansum int32");
  both_exact([](auto& a) { return jnp::prod(a[0]); }, {make_int({70000, 70000}, int32)}, {4900000000}, int64,
             "prod int32");
  both_exact([](auto& a) { return jnp::prod(a[0]); }, {make_int({300, 300}, uint16)}, {90000}, uint64,
             "prod uint16");
  Array m = make_int({1, 2, 3, 4, 5, 6}, {2, 3}, int32);
  both_exact([](auto& a) { return jnp::sum(a[0], {0}); }, {m}, {5, 7, 9}, int64, "sum int32 axis 0");
  both_exact([](auto& a) { return jnp::prod(a[0], {-1}, true); }, {m}, {6, 120}, int64, "prod int32 keepdims");
  // 64-bit ints and floats keep their dtype.
  both_exact([](auto& a) { return jnp::sum(a[0]); }, {make_int({5, -7}, int64)}, {-2}, int64, "sum int64");
  both_exact([](auto& a) { return jnp::sum(a[0]); }, {make_int({5, 7}, uint64)}, {12}, uint64, "sum uint64");
  both_close([](auto& a) { return jnp::sum(a[0]); }, {make({0.5, 0.25}, float32)}, {0.75}, float32, "sum f32");
}

TEST_CASE("x64 dtypes: cumsum/cumprod of bool are int64, of ints keep the dtype, mean of ints", "[x64_dtypes]") {
  Array b = make_int({1, 0, 1, 1}, bool_);
  both_exact([](auto& a) { return jnp::cumsum(a[0]); }, {b}, {1, 1, 2, 3}, int64, "cumsum bool");
  both_exact([](auto& a) { return jnp::cumprod(a[0]); }, {b}, {1, 0, 0, 0}, int64, "cumprod bool");
  Array bm = make_int({1, 1, 0, 1}, {2, 2}, bool_);
  both_exact([](auto& a) { return jnp::cumsum(a[0], 0); }, {bm}, {1, 1, 1, 2}, int64, "cumsum bool axis 0");
  // JAX keeps integer dtypes in cumulative ops (cumsum of int8 wraps there too).
  both_exact([](auto& a) { return jnp::cumsum(a[0]); }, {make_int({100, 27, 1}, int8)}, {100, 127, -128}, int8,
             "cumsum int8");
  both_exact([](auto& a) { return jnp::cumprod(a[0]); }, {make_int({2, 3, 4}, int32)}, {2, 6, 24}, int32,
             "cumprod int32");
  // mean/var of ints up to 32 bits are float32 in JAX x64, of int64 float64 (promote_dtypes_inexact).
  Array i32 = make_int({1, 2, 3, 4}, int32), i64 = make_int({1, 2, 3, 4}, int64);
  both_close([](auto& a) { return jnp::mean(a[0]); }, {i32}, {2.5}, float32, "mean int32");
  both_close([](auto& a) { return jnp::mean(a[0]); }, {i64}, {2.5}, float64, "mean int64");
  both_close([](auto& a) { return jnp::var(a[0]); }, {i32}, {1.25}, float32, "var int32");
  both_close([](auto& a) { return jnp::var(a[0]); }, {i64}, {1.25}, float64, "var int64");
  both_close([](auto& a) { return jnp::mean(a[0]); }, {make_int({1, 0, 1, 1}, bool_)}, {0.75}, float32, "mean bool");
  // Transcendentals of int64 are float64 (of int32 float32).
  std::vector<double> sines = {std::sin(1.0), std::sin(2.0), std::sin(3.0), std::sin(4.0)};
  both_close([](auto& a) { return jnp::sin(a[0]); }, {i64}, sines, float64, "sin int64");
  both_close([](auto& a) { return jnp::sin(a[0]); }, {i32}, sines, float32, "sin int32");
}

TEST_CASE("x64 dtypes: jax.nn activations of ints and bools", "[x64_dtypes]") {
  Array i = make_int({-3, -1, 0, 2, 9}, int32);
  Array b = make_int({1, 0}, bool_);
  // Python float literals meet the int array: float64.
  both_close([](auto& a) { return nn::elu(a[0]); }, {i}, {std::expm1(-3.0), std::expm1(-1.0), 0, 2, 9}, float64,
             "elu int32");
  both_close([](auto& a) { return nn::selu(a[0]); }, {b}, {1.0507009873554804934, 0}, float64, "selu bool");
  both_close([](auto& a) { return nn::celu(a[0]); }, {i}, {std::expm1(-3.0), std::expm1(-1.0), 0, 2, 9}, float64,
             "celu int32");
  both_close([](auto& a) { return nn::relu6(a[0]); }, {i}, {0, 0, 0, 2, 6}, float64, "relu6 int32");
  both_close([](auto& a) { return nn::leaky_relu(a[0]); }, {i}, {-0.03, -0.01, 0, 2, 9}, float64, "leaky_relu int32");
  both_close([](auto& a) { return nn::hard_sigmoid(a[0]); }, {i}, {0, 2.0 / 6, 0.5, 5.0 / 6, 1}, float64,
             "hard_sigmoid int32");
  both_close([](auto& a) { return nn::hard_silu(a[0]); }, {i}, {0, -2.0 / 6, 0, 10.0 / 6, 9}, float64,
             "hard_silu int32");
  both_close([](auto& a) { return nn::sparse_plus(a[0]); }, {i}, {0, 0, 0.25, 2, 9}, float64, "sparse_plus int32");
  both_close([](auto& a) { return nn::sparse_sigmoid(a[0]); }, {i}, {0, 0, 0.5, 1, 1}, float64,
             "sparse_sigmoid int32");
  // A bool meets a Python int as int64 (relu, hard_tanh), then, through a float function, float64.
  both_exact([](auto& a) { return nn::relu(a[0]); }, {b}, {1, 0}, int64, "relu bool");
  both_exact([](auto& a) { return nn::hard_tanh(a[0]); }, {b}, {1, 0}, int64, "hard_tanh bool");
  both_exact([](auto& a) { return nn::hard_tanh(a[0]); }, {i}, {-1, -1, 0, 1, 1}, int32, "hard_tanh int32");
  both_close([](auto& a) { return nn::softplus(a[0]); }, {b}, {std::log1p(std::exp(1.0)), std::log(2.0)}, float64,
             "softplus bool");
  double sp1 = std::log1p(std::exp(1.0));
  both_close([](auto& a) { return nn::mish(a[0]); }, {b}, {std::tanh(sp1), 0}, float64, "mish bool");
  both_close([](auto& a) { return nn::soft_sign(a[0]); }, {b}, {0.5, 0}, float64, "soft_sign bool");
  // promote_args_inexact: int32 -> float32.
  both_close([](auto& a) { return nn::soft_sign(a[0]); }, {i}, {-0.75, -0.5, 0, 2.0 / 3, 0.9}, float32,
             "soft_sign int32");
  both_close([](auto& a) { return nn::softplus(a[0]); }, {make_int({0}, int32)}, {std::log(2.0)}, float32,
             "softplus int32");
  // squareplus squares in the int dtype (46341^2 wraps to a negative int32: NaN), then float32, as JAX's does.
  both_close([](auto& a) { return nn::squareplus(a[0]); }, {make_int({3, 46341}, int32)},
             {(3 + std::sqrt(13.0)) / 2, NAN}, float32, "squareplus int32");
  both_close([](auto& a) { return nn::gelu(a[0], false); }, {make_int({0, 1}, bool_)},
             {0, 0.5 * std::erfc(-std::sqrt(0.5))}, float32, "gelu bool");
}

TEST_CASE("x64 dtypes: jnp integer ops on bools run in int32, sign/round reject bool", "[x64_dtypes]") {
  Array x = make_int({1, 0, 1}, bool_), y = make_int({1, 1, 1}, bool_);
  both_exact([](auto& a) { return jnp::floor_divide(a[0], a[1]); }, {x, y}, {1, 0, 1}, int32, "floor_divide bool");
  both_exact([](auto& a) { return jnp::remainder(a[0], a[1]); }, {x, y}, {0, 0, 0}, int32, "remainder bool");
  both_exact([](auto& a) { return jnp::mod(a[0], a[1]); }, {x, y}, {0, 0, 0}, int32, "mod bool");
  both_exact([](auto& a) { return jnp::fmod(a[0], a[1]); }, {x, y}, {0, 0, 0}, int32, "fmod bool");
  both_exact([](auto& a) { return jnp::power(a[0], a[1]); }, {x, y}, {1, 0, 1}, int32, "power bool");
  both_exact([](auto& a) { return jnp::left_shift(a[0], a[1]); }, {x, y}, {2, 0, 2}, int32, "left_shift bool");
  both_exact([](auto& a) { return jnp::right_shift(a[0], a[1]); }, {x, y}, {0, 0, 0}, int32, "right_shift bool");
  both_exact([](auto& a) { return jnp::square(a[0]); }, {x}, {1, 0, 1}, int32, "square bool");
  // add/multiply of bools are logical or/and; lax.add/mul refuse bools, as JAX's.
  Array z = make_int({0, 0, 1}, bool_);
  both_exact([](auto& a) { return jnp::add(a[0], a[1]); }, {x, z}, {1, 0, 1}, bool_, "add bool");
  both_exact([](auto& a) { return jnp::multiply(a[0], a[1]); }, {x, z}, {0, 0, 1}, bool_, "multiply bool");
  REQUIRE_THROWS_AS(lax::add(x, z), TypeError);
  REQUIRE_THROWS_AS(eager_and_jit([](auto& a) { return lax::mul(a[0], a[1]); }, {x, z}), TypeError);
  REQUIRE_THROWS_AS(jnp::sign(x), TypeError);
  REQUIRE_THROWS_AS(jnp::round(x), TypeError);
  REQUIRE_THROWS_AS(eager_and_jit([](auto& a) { return jnp::round(a[0]); }, {x}), TypeError);
}
