// jnp results that must be JAX's exactly (dtype, weak type, values): cases an independent probe against JAX 0.10.2
// (x64) found different. Expected values are JAX's, written here.
#include <bit>

#include "test_util.h"

using namespace jitx;

namespace {
void check_type(const Array& a, DType d, bool weak) {
  CHECK(dtype_name(a.dtype()) == dtype_name(d));
  CHECK(a.weak_type() == weak);
}
Array u64s() { return jnp::array(std::vector<uint64_t>{18446744073709551615ull, 5, 9}); }
Array bools() { return jnp::array(std::vector<bool>{true, true, false}); }
Array i8s() { return jnp::array(std::vector<int>{5, -7, 9}).astype(DType::int8); }
}  // namespace

TEST_CASE("jnp: a bool next to an integer takes its type in integer arithmetic (promote, then bool as int32)",
          "[numpy]") {
  Array r = jnp::remainder(u64s(), bools());
  check_type(r, DType::uint64, false);
  CHECK(r.to_vector<uint64_t>() == std::vector<uint64_t>{0, 0, 0});
  Array q = jnp::floor_divide(u64s(), bools());
  check_type(q, DType::uint64, false);
  CHECK(q.to_vector<uint64_t>() == std::vector<uint64_t>{18446744073709551615ull, 5, 18446744073709551615ull});
  Array p = jnp::power(i8s(), bools());
  check_type(p, DType::int8, false);
  CHECK(p.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{5, -7, 1});
  Array l = jnp::left_shift(i8s(), bools());
  check_type(l, DType::int8, false);
  CHECK(l.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{10, -14, 9});
  check_type(jnp::fmod(i8s(), bools()), DType::int8, false);
  check_type(jnp::remainder(bools(), Array(int64_t{3})), DType::int64, true);
  Array bb = jnp::floor_divide(bools(), bools());  // bool with bool: int32, False // False = -1 (lax.div by 0)
  check_type(bb, DType::int32, false);
  CHECK(bb.to_vector<int32_t>() == std::vector<int32_t>{1, 1, -1});
  // Two weak scalars stay weak, so the int8 array decides: JAX's i8 + floor_divide(7, 2).
  Array w = i8s() + jnp::floor_divide(int64_t{7}, int64_t{2});
  check_type(w, DType::int8, false);
  CHECK(w.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{8, -4, 12});
  check_type(jnp::remainder(int64_t{7}, int64_t{2}), DType::int64, true);
}

TEST_CASE("jnp: arctan2 promotes its operands together before making them inexact", "[numpy]") {
  check_type(jnp::arctan2(i8s(), jnp::ones({3}, DType::float16)), DType::float16, false);
  check_type(jnp::arctan2(i8s().astype(DType::int64), jnp::ones({3}, DType::float32)), DType::float32, false);
  check_type(jnp::arctan2(i8s().astype(DType::int32), jnp::ones({3}, DType::uint32)), DType::float64, false);
  check_type(jnp::arctan2(i8s(), i8s()), DType::float32, false);
}

TEST_CASE("jnp: power with a concrete integer exponent is integer_pow: exact, and no negative powers of integers",
          "[numpy]") {
  Array a = jnp::array(std::vector<int32_t>{3, 2});
  CHECK(jnp::power(a, 64).to_vector<int32_t>() == std::vector<int32_t>{2038349057, 0});
  CHECK(jnp::power(a.astype(DType::int64), 100).to_vector<int64_t>() ==
        std::vector<int64_t>{-2984622845537545263LL, 0});
  CHECK(jnp::power(jnp::array(std::vector<int32_t>{3, -2, 7}), 65).to_vector<int32_t>() ==
        std::vector<int32_t>{1820079875, 0, 1159739911});
  CHECK_THROWS_AS(jnp::power(a, -1), TypeError);
  CHECK_THROWS_AS(jnp::power(a, Array(int64_t{-2})), TypeError);
  try {
    jnp::power(a, -1);
  } catch (const TypeError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("negative powers") && Catch::Matchers::Contains("i32 ** -1"));
  }
  // Floats take the same repeated squaring (JAX: 1.1051606 in f32, where pow gives 1.1051837), and 1 / x^n.
  CHECK(jnp::power(jnp::array(std::vector<float>{1.0001f}), 1000).item<float>() == 1.1051606f);
  auto neg = jnp::power(jnp::array(std::vector<double>{2.0, -3.0}), -3).to_vector<double>();
  CHECK(neg[0] == 0.125);
  CHECK(std::fabs(neg[1] + 1.0 / 27) < 1e-17);
  check_type(jnp::power(int64_t{3}, int64_t{2}), DType::int64, true);
  // Under jit the exponent is a traced array: lax.pow / the array path, as in JAX.
  Array j = jit([](Array x, Array y) { return jnp::power(x, y); })(a, jnp::array(std::vector<int32_t>{3, 4}));
  CHECK(j.to_vector<int32_t>() == std::vector<int32_t>{27, 16});
}

TEST_CASE("jnp: var and std are NaN where ddof leaves no degrees of freedom", "[numpy]") {
  Array x = jnp::array(std::vector<double>{1.0, 3.0});
  CHECK(std::isnan(jnp::var(x, {}, false, 2).item<double>()));
  CHECK(std::isnan(jnp::std(x, {}, false, 3).item<double>()));
  CHECK(jnp::var(x, {}, false, 1).item<double>() == 2.0);
  // JAX's gradients there: NaN at ddof = n, zeros past it.
  auto g2 = grad([](Array v) { return jnp::var(v, {}, false, 2); })(jnp::array(std::vector<double>{1.0, 2.0}));
  for (double v : g2.to_vector<double>()) CHECK(std::isnan(v));
  auto g3 = grad([](Array v) { return jnp::var(v, {}, false, 3); })(jnp::array(std::vector<double>{1.0, 2.0}));
  for (double v : g3.to_vector<double>()) CHECK(v == 0.0);
}

TEST_CASE("jnp: integer creation functions: full's integer fill, linspace floors, arange's integer steps",
          "[numpy]") {
  CHECK(jnp::full({2}, -1, DType::uint8).astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{255, 255});
  CHECK(jnp::full({2}, 300, DType::uint8).astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{44, 44});
  CHECK(jnp::full({1}, int64_t{9007199254740993}, DType::int64).item<int64_t>() == 9007199254740993LL);
  CHECK(jnp::full_like(jnp::zeros({2}, DType::uint8), -1).astype(DType::int32).to_vector<int32_t>() ==
        std::vector<int32_t>{255, 255});
  CHECK(jnp::full({2}, 2.5, DType::float32).to_vector<float>() == std::vector<float>{2.5f, 2.5f});
  CHECK(jnp::linspace(-5, 5, 4, true, DType::int32).to_vector<int32_t>() == std::vector<int32_t>{-5, -2, 1, 5});
  CHECK(jnp::linspace(0, -7, 4, true, DType::int32).to_vector<int32_t>() == std::vector<int32_t>{0, -3, -5, -7});
  CHECK(jnp::arange(-2.5, 2, 1, DType::int32).to_vector<int32_t>() == std::vector<int32_t>{-2, -1, 0, 1, 2});
  CHECK(jnp::arange(2.7, -3, -1.5, DType::int32).to_vector<int32_t>() == std::vector<int32_t>{2, 1, 0, -1});
  CHECK(jnp::arange(0.5, 3, 0.7, DType::int32).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 0});
  CHECK(jnp::arange(0.5, 3, 0.7, DType::float64).to_vector<double>().size() == 4);
  CHECK_THROWS_AS(jnp::arange(0, INFINITY, 1.0, DType::float32), ShapeError);
  CHECK_THROWS_AS(jnp::arange(0, NAN, 1.0, DType::float32), ShapeError);
  CHECK_THROWS_AS(jnp::arange(0, 1e300, 1.0, DType::float64), ShapeError);
}

TEST_CASE("jnp: C++ unsigned scalars are the Python ints of their value", "[numpy]") {
  Array f = jnp::array(std::vector<float>{1.0f, 2.0f}) + 4000000000u;
  check_type(f, DType::float32, false);
  CHECK(f.to_vector<float>() == std::vector<float>{4e9f, 4e9f});
  Array i = jnp::array(std::vector<int64_t>{1, 2}) + 4000000000u;
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{4000000001LL, 4000000002LL});
  check_type(Array(4000000000u), DType::int64, true);
  check_type(Array(7u), DType::int32, true);
  CHECK_THROWS_AS(Array(uint64_t{1} << 63), TypeError);
  CHECK(Array(uint64_t{5}).item<int64_t>() == 5);
}

TEST_CASE("jnp: round of integers to negative decimals is refused, as JAX's NotImplementedError", "[numpy]") {
  CHECK_THROWS_AS(jnp::round(jnp::array(std::vector<int32_t>{-15, 25}), -1), TypeError);
  CHECK(jnp::round(jnp::array(std::vector<int32_t>{-15, 25}), 1).to_vector<int32_t>() ==
        std::vector<int32_t>{-15, 25});
}

TEST_CASE("jnp: take from an empty axis: an empty result for no indices, an error for some", "[numpy]") {
  Array e = jnp::take(jnp::zeros({0, 3}), jnp::zeros({0}, DType::int32), 0);
  CHECK(e.shape() == Shape{0, 3});
  auto take0 = jit([](Array x, Array i) { return jnp::take(x, i, 0); });
  Array e2 = take0(jnp::zeros({0, 3}), jnp::zeros({0, 2}, DType::int32));
  CHECK(e2.shape() == Shape{0, 2, 3});
  CHECK_THROWS_WITH(jnp::take(jnp::zeros({0, 3}), jnp::zeros({2}, DType::int32), 0),
                    Catch::Contains("[take]") && Catch::Contains("empty axis 0"));
}

TEST_CASE("a null Device handle and a throwing callback give jitx errors, not crashes", "[errors]") {
  Device null(nullptr);
  CHECK(null.str() == "Device(null)");
  CHECK_THROWS_AS(null.id(), TypeError);
  auto boom = [](const Array&) -> Array { throw std::runtime_error("boom"); };
  // Eagerly as under jit: a RuntimeError that names the callback and keeps the message.
  CHECK_THROWS_WITH(pure_callback(boom, ShapeDtype(ShapedArray{{2}, DType::float32}), jnp::zeros({2})),
                    Catch::Contains("pure_callback") && Catch::Contains("boom"));
  CHECK_THROWS_AS(pure_callback(boom, ShapeDtype(ShapedArray{{2}, DType::float32}), jnp::zeros({2})), RuntimeError);
  auto f = jit([&](Array x) { return pure_callback(boom, ShapeDtype(ShapedArray{{2}, DType::float32}), x); });
  CHECK_THROWS_AS(f(jnp::zeros({2})).block_until_ready(), RuntimeError);
}

TEST_CASE("jnp: weak types as JAX's (reductions strong, and concatenate, stack, einsum, take, *_like keep them)",
          "[numpy]") {
  // JAX 0.10.2 (x64) on a = jnp.asarray(1.5) (weak f64) and v = jnp.broadcast_to(a, (3,)) (weak).
  Array a(1.5), i(int64_t{3});
  Array v = jnp::broadcast_to(a, {3}) + jnp::broadcast_to(Array(0.25), {3});
  REQUIRE(v.weak_type());
  // Strong: jnp's reductions and cumulative reductions (its _reduction ends in a strong convert).
  for (const Array& r : {jnp::sum(v), jnp::prod(v), jnp::max(v), jnp::min(v), jnp::mean(v), jnp::var(v), jnp::std(v),
                         jnp::cumsum(v), jnp::cumprod(v), jnp::nansum(v), jnp::nanmax(v), jnp::sum(i)})
    CHECK_FALSE(r.weak_type());
  CHECK_FALSE(jnp::any(v > 1.0).weak_type());
  CHECK(jnp::sum(v).item<double>() == 5.25);
  // Weak: lax's reductions, and shape ops, concatenation, einsum, take, zeros_like & co of weak inputs.
  Array idx = jnp::array(std::vector<int32_t>{2, 0});
  for (const Array& r : {lax::reduce_max(v, {0}), lax::cumsum(v, 0), jnp::concatenate({v, v}), jnp::stack({a, a}),
                         jnp::einsum("i,i->", {v, v}), jnp::einsum("i,j->ij", {v, v}), jnp::take(v, idx),
                         jnp::zeros_like(a), jnp::ones_like(v), jnp::full_like(a, 2.5), jnp::ones_like(i)})
    CHECK(r.weak_type());
  Array st = jnp::stack({a, Array(2.5)});
  check_type(st, DType::float64, true);
  CHECK(st.to_vector<double>() == std::vector<double>{1.5, 2.5});
  CHECK(jnp::take(v, idx).to_vector<double>() == std::vector<double>{1.75, 1.75});
  // So they promote as JAX's do: a weak stack next to an f32 array stays f32, a reduction of it does not.
  Array f = jnp::array(std::vector<float>{1.f, 2.f});
  check_type(f + st, DType::float32, false);
  check_type(f + jnp::sum(st), DType::float64, false);
  check_type(f + jnp::zeros_like(a), DType::float32, false);
  // Mixed weak and strong: strong.
  CHECK_FALSE(jnp::concatenate({v, jnp::array(std::vector<double>{1.0})}).weak_type());
}

TEST_CASE("lax::bitcast_convert_type between widths, as XLA's (values from JAX)", "[numpy][lax]") {
  // f32 -> i16: a new minor dimension, least significant half first.
  Array a = lax::bitcast_convert_type(jnp::array(std::vector<float>{1.0f, -2.5f}), DType::int16);
  check_type(a, DType::int16, false);
  CHECK(a.shape() == Shape{2, 2});
  CHECK(a.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{0, 16256, 0, -16352});
  // u16[2,2] -> f32[2]: combined along the minor dimension (1 + 2 * 65536 is a subnormal, kept).
  Array u = jnp::reshape(jnp::array(std::vector<int>{0, 16256, 1, 2}), {2, 2}).astype(DType::uint16);
  Array f = lax::bitcast_convert_type(u, DType::float32);
  CHECK(f.shape() == Shape{2});
  auto fv = f.to_vector<float>();
  CHECK(fv[0] == 1.0f);
  CHECK(std::bit_cast<uint32_t>(fv[1]) == 131073u);
  // f64 -> f32[1,2] and back; eight bytes -> one int64; bf16 -> u8[2]; under jit and vmap.
  Array d = jnp::array(std::vector<double>{1.0});
  CHECK(lax::bitcast_convert_type(d, DType::float32).to_vector<float>() == std::vector<float>{0.f, 1.875f});
  Array bytes = jnp::array(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}).astype(DType::uint8);
  CHECK(lax::bitcast_convert_type(bytes, DType::int64).item<int64_t>() == 578437695752307201);
  Array h = lax::bitcast_convert_type(jnp::array(3.0f).astype(DType::bfloat16), DType::uint8);
  CHECK(h.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{64, 64});
  Array v = vmap([](const Array& x) { return lax::bitcast_convert_type(x, DType::uint8); })(
      jnp::array(std::vector<float>{1.f, 2.f}).astype(DType::float16));
  CHECK(v.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{0, 60, 0, 64});
  Array r = jit([](const Array& x) {
    return lax::bitcast_convert_type(lax::bitcast_convert_type(x, DType::uint8), DType::float64);
  })(jnp::array(std::vector<double>{3.25, -1e300}));
  CHECK(r.to_vector<double>() == std::vector<double>{3.25, -1e300});
  // A minor dimension of the wrong size: JAX's ValueError, a ShapeError here.
  CHECK_THROWS_AS(lax::bitcast_convert_type(jnp::reshape(u, {4}), DType::float32), ShapeError);
  CHECK_THROWS_AS(lax::bitcast_convert_type(jnp::reshape(u, {4})[0], DType::float32), ShapeError);
}

TEST_CASE("jnp: .at[] updates promote with the values, scatter, then convert back, as JAX's _scatter_impl",
          "[numpy]") {
  auto i32 = [](std::vector<int> v) { return jnp::array(v); };
  // JAX: x.at[i32([0,0])].add(f32([.6,.6])) on int32 [1] is [2] (1 + 1.2, truncated once).
  Array a = jnp::at(i32({1}), i32({0, 0})).add(jnp::array(std::vector<float>{.6f, .6f}));
  check_type(a, DType::int32, false);
  CHECK(a.to_vector<int32_t>() == std::vector<int32_t>{2});
  CHECK(jnp::at(i32({3}), i32({0})).mul(Array(2.5f)).to_vector<int32_t>() == std::vector<int32_t>{7});
  // f32 updates into bf16 add in f32: 256 + 1 + 1 = 258 (bf16 alone would stay at 256).
  Array b = jnp::at(jnp::array(std::vector<float>{256}).astype(DType::bfloat16), i32({0, 0}))
                .add(jnp::array(std::vector<float>{1, 1}));
  check_type(b, DType::bfloat16, false);
  CHECK(b.to_vector<float>() == std::vector<float>{258});
  Array h = jnp::at(jnp::array(std::vector<float>{2048}).astype(DType::float16), i32({0, 0, 0}))
                .add(jnp::array(std::vector<float>{1, 1, 1}));
  CHECK(h.to_vector<float>() == std::vector<float>{2052});
  CHECK(jnp::at(i32({3}).astype(DType::uint8), i32({0})).add(jnp::array(std::vector<float>{-.5f}))
            .astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{2});
  Array m = jnp::at(i32({1, 2}).astype(DType::uint8), i32({0})).min(i32({-1}));
  check_type(m, DType::uint8, false);
  CHECK(m.astype(DType::int32).to_vector<int32_t>() == std::vector<int32_t>{255, 2});
  // set is unchanged by the round trip.
  CHECK(jnp::at(i32({1, 2}), i32({1})).set(Array(7.9)).to_vector<int32_t>() == std::vector<int32_t>{1, 7});
}

TEST_CASE("jnp: the gradient of an out-of-range gather index is dropped, as JAX's (the value is clamped)",
          "[numpy][autodiff]") {
  auto i32 = [](std::vector<int> v) { return jnp::array(v); };
  Array x = jnp::arange(5).astype(DType::float32);
  auto [y, pullback] = vjp([&](const Array& v) { return jnp::at(v, i32({5, -6, 1})).get(); }, x);
  CHECK(y.to_vector<float>() == std::vector<float>{4, 0, 1});  // clamped reads
  // JAX: jax.vjp(lambda x: x.at[i32([5,-6,1])].get(), x)[1](f32([1,2,3])) is [0, 3, 0, 0, 0].
  CHECK(std::get<0>(pullback(jnp::array(std::vector<float>{1, 2, 3}))).to_vector<float>() ==
        std::vector<float>{0, 3, 0, 0, 0});
  // take's clip mode clamps first: its gradient lands on the clamped element.
  Array g = grad([&](const Array& v) { return jnp::sum(jnp::take(v, i32({5, 1}), std::nullopt, "clip")); })(x);
  CHECK(g.to_vector<float>() == std::vector<float>{0, 1, 0, 0, 1});
}

TEST_CASE("lax::cumlogsumexp: at ties each side gets half the derivative, as JAX's logaddexp", "[lax][autodiff]") {
  // JAX: jax.grad(lambda x: jnp.sum(lax.cumlogsumexp(x, 0)))(jnp.zeros(4, jnp.float32))
  Array g = grad([](const Array& x) { return jnp::sum(lax::cumlogsumexp(x, 0)); })(jnp::zeros({4}, DType::float32));
  std::vector<float> want{2.0833333f, 1.0833334f, 0.5833334f, 0.25f};
  auto got = g.to_vector<float>();
  for (size_t i = 0; i < 4; ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-6f);
  // jvp at [3, 3] along [1, 0]: JAX's tangent [1, 0.5].
  auto [y, t] = jvp([](const Array& x) { return lax::cumlogsumexp(x, 0); },
                    jnp::array(std::vector<double>{3, 3}), jnp::array(std::vector<double>{1, 0}));
  CHECK(t.to_vector<double>() == std::vector<double>{1, 0.5});
}

TEST_CASE("jnp::arange: without a dtype the C++ types decide (float arguments give floats)", "[numpy]") {
  Array a = jnp::arange(0.5, 3.0, 0.5);  // jnp.arange(0.5, 3.0, 0.5) is [0.5, 1, 1.5, 2, 2.5]
  check_type(a, DType::float32, false);
  CHECK(a.to_vector<double>() == std::vector<double>{0.5, 1, 1.5, 2, 2.5});
  CHECK(jnp::arange(0.0, 1.0, 0.25).to_vector<double>() == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(jnp::arange(5.5).to_vector<double>() == std::vector<double>{0, 1, 2, 3, 4, 5});
  check_type(jnp::arange(2.0), DType::float32, false);
  check_type(jnp::arange(5), DType::int32, false);
  check_type(jnp::arange(int64_t{1}, int64_t{5}), DType::int32, false);
  CHECK(jnp::arange(2, 11, 3).to_vector<int32_t>() == std::vector<int32_t>{2, 5, 8});
  CHECK(jnp::arange(1, 2, 0.25).to_vector<double>() == std::vector<double>{1, 1.25, 1.5, 1.75});
  // An explicit dtype still decides: jnp.arange(0.5, 3, 0.7, dtype=int32) converts start and step first.
  check_type(jnp::arange(0.0, 3.0, 1.0, DType::float64), DType::float64, false);
  check_type(jnp::arange(4, DType::int64), DType::int64, false);
}

TEST_CASE("transformation errors and x[i] name the caller's line", "[errors]") {
  Array x = jnp::array(std::vector<float>{1.f, 2.f}), y = jnp::array(std::vector<float>{1.f, 2.f, 3.f});
  auto f = [](const Array& a, const Array& b) { return a + b; };
  auto here = [](const std::function<void()>& run) {
    try {
      run();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(here([&] { vmap(f)(x, y); }), Catch::Contains("inconsistent sizes") &&
                                                Catch::Contains("numpy_jax_parity_test.cpp:"));
  CHECK_THAT(here([&] { grad([](const Array& a) { return a; })(x); }),
             Catch::Contains("scalar-output") && Catch::Contains("numpy_jax_parity_test.cpp:"));
  CHECK_THAT(here([&] { jvp(f, std::tuple{x, x}, std::tuple{x, y}); }),
             Catch::Contains("same type") && Catch::Contains("numpy_jax_parity_test.cpp:"));
  CHECK_THAT(here([&] { (void)x[5]; }),
             Catch::Contains("out of bounds") && Catch::Contains("numpy_jax_parity_test.cpp:"));
  CHECK_THAT(here([&] { jit(f).lower(x, x).compile()(x, y); }),
             Catch::Contains("numpy_jax_parity_test.cpp:") && !Catch::Contains("check_signature"));
  // Errors of the user's own ops inside vmap still name the op's line, not the vmap's.
  auto g = [](const Array& a) { return a + jnp::array(std::vector<float>{1.f, 2.f, 3.f}); };
  CHECK_THAT(here([&] { vmap(g)(jnp::ones({4, 2})); }), Catch::Contains("[add]"));
}

TEST_CASE("grad keeps a weak input's weak type, as JAX's", "[autodiff]") {
  Array g = grad([](const Array& a) { return a * 2.0; })(Array(3.0));
  check_type(g, DType::float64, true);
  CHECK(g.item<double>() == 2.0);
  auto [v, gv] = value_and_grad([](const Array& a) { return a * a; })(Array(3.0));
  check_type(gv, DType::float64, true);
  CHECK(gv.item<double>() == 6.0);
  // A strong input stays strong.
  check_type(grad([](const Array& a) { return a * 2.0; })(jnp::array(3.0)), DType::float64, false);
}

TEST_CASE("random: samplers differentiate in their parameters as JAX's (f32 rounding paths, gamma's a)", "[random]") {
  auto near = [](const Array& a, double want) {
    CHECK(std::abs(a.item<double>() - want) <= 1e-6 * (1 + std::abs(want)));
  };
  // JAX 0.10.2 (x64): jax.grad(lambda lo: R.uniform(R.PRNGKey(0), (), jnp.float32, lo, 1.0))(jnp.float32(-1.))
  near(grad([](const Array& lo) {
         return random::uniform(random::PRNGKey(0), {}, DType::float32, lo, Array(1.0f));
       })(Array::scalar(-1.0, DType::float32)),
       0.052332997);
  // jax.grad(lambda b: R.pareto(R.PRNGKey(42), b, (3,), jnp.float32).sum())(jnp.float32(2.))
  near(grad([](const Array& b) {
         return jnp::sum(random::pareto(random::PRNGKey(42), b, Shape{3}, DType::float32));
       })(Array::scalar(2.0, DType::float32)),
       -1.1242162);
  // jax.grad(lambda lo: R.truncated_normal(R.PRNGKey(0), lo, jnp.float32(2.0), (3,), jnp.float32).sum())(...(-1.))
  near(grad([](const Array& lo) {
         return jnp::sum(random::truncated_normal(random::PRNGKey(0), lo, Array(2.0f), Shape{3}, DType::float32));
       })(Array::scalar(-1.0, DType::float32)),
       0.5701862);
  // gamma in its shape a: implicit reparameterization, as JAX's random_gamma_grad. JAX:
  // jax.jvp(lambda a: R.gamma(R.PRNGKey(42), a, dtype=jnp.float64), (a,), (ones,)) at a = [0.5, 1, 3, 0.1, 20].
  Array a = jnp::array(std::vector<double>{0.5, 1.0, 3.0, 0.1, 20.0});
  auto [y, t] = jvp([](const Array& v) { return random::gamma(random::PRNGKey(42), v, std::nullopt, DType::float64); },
                    a, jnp::ones_like(a));
  std::vector<double> want{0.790779430, 0.821779857, 1.51909974, 1.05042029e-05, 0.843183067};
  auto got = t.to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-8 * std::abs(want[i]));
  CHECK(std::abs(y.to_vector<double>()[2] - 6.51871942) <= 1e-7);
  // Through loggamma and beta (both draw gamma), f32 under jit: JAX's values.
  Array lg = grad([](const Array& v) {
    return jnp::sum(random::loggamma(random::PRNGKey(0), v, std::nullopt, DType::float64));
  })(jnp::array(std::vector<double>{2.0, 0.3}));
  CHECK(std::abs(lg.to_vector<double>()[0] - 0.65550449) <= 1e-7);
  CHECK(std::abs(lg.to_vector<double>()[1] - 26.64393391) <= 1e-6);
  Array bg = grad([](const Array& v) {
    return jnp::sum(random::beta(random::PRNGKey(1), v, Array(2.0), std::nullopt, DType::float64));
  })(jnp::array(std::vector<double>{0.7, 3.0}));
  CHECK(std::abs(bg.to_vector<double>()[0] - 0.23001895) <= 1e-7);
  CHECK(std::abs(bg.to_vector<double>()[1] - 0.10112951) <= 1e-7);
  Array gf = jit(grad([](const Array& v) {
    return jnp::sum(random::gamma(random::PRNGKey(0), v, std::nullopt, DType::float32));
  }))(jnp::array(std::vector<float>{2.0f, 0.3f}));
  CHECK(std::abs(gf.to_vector<float>()[0] - 0.9656762f) <= 1e-5f);
  CHECK(std::abs(gf.to_vector<float>()[1] - 2.4214957f) <= 1e-5f);
  // geometric with p = 0 never succeeds: JAX's int64 maximum (log1p(-0) is -0), as in int32.
  Array g0 = random::geometric(random::PRNGKey(42), jnp::array(std::vector<double>{0.0}), Shape{2}, DType::int64);
  CHECK(g0.to_vector<int64_t>() == std::vector<int64_t>(2, std::numeric_limits<int64_t>::max()));
}

TEST_CASE("cost_analysis counts loop bodies once and a conditional's costliest branch, as XLA's", "[aot]") {
  // JAX: jax.jit(lambda a, b: lax.fori_loop(0, 10, lambda i, c: jnp.tanh(c @ b), a)) at (64,128) x (128,128):
  // flops 2097154, transcendentals 8192 (the matmul and tanh once; jitx's loop counter adds its own few flops).
  auto c = jit([](const Array& a, const Array& b) {
             auto body = [&](const Array&, const Array& x) { return jnp::tanh(jnp::matmul(x, b)); };
             return lax::fori_loop(0, 10, body, a);
           })
               .lower(jnp::ones({64, 128}), jnp::ones({128, 128}))
               .compile();
  auto m = c.cost_analysis();
  CHECK(m.at("flops") >= 2.0 * 64 * 128 * 128);
  CHECK(m.at("flops") <= 2.0 * 64 * 128 * 128 + 64);
  CHECK(m.at("transcendentals") == 64 * 128);
  auto k = jit([](const Array& p, const Array& x) {
             return lax::cond(p, [](const Array& v) { return jnp::exp(v); }, [](const Array& v) { return v; }, x);
           })
               .lower(Array(true), jnp::ones({32}))
               .compile();
  CHECK(k.cost_analysis().at("transcendentals") == 32);
  // A SAME-padded convolution counts the taps that read the input (JAX's 101568 for 2x3x16x16 * 4x3x3x3).
  auto conv = jit([](const Array& x, const Array& w) {
                return lax::conv_general_dilated(x, w, {1, 1}, {{1, 1}, {1, 1}});
              })
                  .lower(jnp::ones({2, 3, 16, 16}), jnp::ones({4, 3, 3, 3}))
                  .compile();
  CHECK(conv.cost_analysis().at("flops") == 101568);
}

TEST_CASE("lax::slice_in_dim counts negative bounds from the end, and squeeze refuses a repeated axis",
          "[lax][numpy]") {
  Array x = jnp::reshape(jnp::arange(6), {2, 3});
  // JAX: lax.slice_in_dim(x, -2, -1, 1, 1) is [[1], [4]].
  Array s = lax::slice_in_dim(x, -2, -1, 1, 1);
  CHECK(s.shape() == Shape{2, 1});
  CHECK(s.to_vector<int32_t>() == std::vector<int32_t>{1, 4});
  // jnp.squeeze(x(2,1), (1, -1)): ValueError, dimensions are not unique.
  CHECK_THROWS_WITH(jnp::squeeze(jnp::ones({2, 1}), {1, -1}), Catch::Contains("twice"));
  CHECK(jnp::squeeze(jnp::ones({2, 1}), {-1}).shape() == Shape{2});
  // tril of a weak array stays weak (its zeros are zeros_like); dynamic_update_slice is weak only if both are.
  Array w = jnp::broadcast_to(Array(2.5), {2, 2});
  CHECK(jnp::tril(w).weak_type());
  CHECK_FALSE(lax::dynamic_update_slice(w, jnp::ones({1, 2}, DType::float64), {Array(0), Array(0)}).weak_type());
  CHECK(lax::dynamic_update_slice(w, jnp::broadcast_to(Array(1.0), {1, 2}), {Array(1), Array(0)}).weak_type());
}
