// Issue 19 (usability): library functions passed directly to transformations, nested-list arrays, integer axes,
// jnp creation names, JitOptions setters, cache-miss messages (the caller's line, readable pytree structures, one
// weak-type spelling) and NumPy-style summarised printing. The compile-error side is tests/compile_fail/.
#include <catch2/catch.hpp>

#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "jitx/jitx.h"
#include "tolerances.h"

using namespace jitx;

namespace {
constexpr double kOp = jitx::testing::kF32Tolerances.op.rtol, kSum = jitx::testing::kF32Tolerances.sum.rtol;

struct MissLog {
  std::mutex mu;
  std::string text;
  MissLog() {
    config().explain_cache_misses = true;
    set_log_sink([this](const std::string& s) {
      std::lock_guard<std::mutex> l(mu);
      text += s + "\n";
    });
  }
  ~MissLog() {
    config().explain_cache_misses = false;
    set_log_sink(nullptr);
  }
};

std::vector<float> randoms(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.5f, 1.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
}  // namespace

TEST_CASE("library functions pass directly to jit, grad, vmap, jvp and vjp", "[usability]") {
  auto xs = randoms(5, 1);
  Array x = array(xs, {5});
  auto t = jit(jnp::tanh)(x).to_vector<float>();
  auto e = vmap(jnp::exp)(x).to_vector<float>();
  auto m = jit(jnp::multiply)(x, x).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    CHECK(t[i] == Approx(std::tanh(double(xs[i]))).epsilon(kOp));
    CHECK(e[i] == Approx(std::exp(double(xs[i]))).epsilon(kOp));
    CHECK(m[i] == Approx(double(xs[i]) * xs[i]).epsilon(kOp));
  }
  Array s = array(xs[0]);
  CHECK(grad(jnp::sin)(s).item<float>() == Approx(std::cos(double(xs[0]))).epsilon(kOp));
  auto [v, g] = value_and_grad(jnp::sin)(s);
  CHECK(v.item<float>() == Approx(std::sin(double(xs[0]))).epsilon(kOp));
  CHECK(g.item<float>() == Approx(std::cos(double(xs[0]))).epsilon(kOp));
  CHECK(jit(grad(jnp::tanh))(s).item<float>() ==
        Approx(1.0 - std::pow(std::tanh(double(xs[0])), 2)).epsilon(kSum));
  auto [y, dy] = jvp(jnp::sin, s, Array(2.0f));
  CHECK(dy.item<float>() == Approx(2.0 * std::cos(double(xs[0]))).epsilon(kOp));
  auto [out, back] = vjp(jnp::exp, s);
  CHECK(std::get<0>(back(Array(1.0f))).item<float>() == Approx(std::exp(double(xs[0]))).epsilon(kOp));
  CHECK(checkpoint(jnp::cos)(s).item<float>() == Approx(std::cos(double(xs[0]))).epsilon(kOp));
  (void)y, (void)out;
}

TEST_CASE("nested initializer lists give the nesting's shape, as jnp.array([[1, 2], [3, 4]])", "[usability]") {
  Array a = array({{1.f, 2.f}, {3.f, 4.f}});
  CHECK(a.shape() == Shape{2, 2});
  CHECK(a.dtype() == DType::float32);
  CHECK(a.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  Array b = array({{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12}}});
  CHECK(b.shape() == Shape{2, 2, 3});
  CHECK(b.dtype() == DType::int32);
  CHECK(b.to_vector<int32_t>()[11] == 12);
  CHECK(jnp::sum(b, {0, 1}).to_vector<int32_t>() == std::vector<int32_t>{22, 26, 30});
  Array r = array({{1.0, 2.0, 3.0}});  // one row: (1, 3), double -> f64
  CHECK(r.shape() == Shape{1, 3});
  CHECK(r.dtype() == DType::float64);
  CHECK_THROWS_AS(array({{1.f, 2.f}, {3.f}}), ShapeError);
  CHECK_THROWS_WITH(array({{{1.f}, {2.f}}, {{3.f}}}), Catch::Contains("different lengths"));
  Array s = array(3.5f);  // jnp.array(3.5): 0-d and strongly typed
  CHECK(s.ndim() == 0);
  CHECK_FALSE(s.weak_type());
  CHECK(s.item<float>() == 3.5f);
  // Under jit as well.
  auto f = jit([](const Array& x) { return x * array({{2.f, 0.f}, {0.f, 3.f}}); });
  CHECK(f(a).to_vector<float>() == std::vector<float>{2, 0, 0, 12});
}

TEST_CASE("an integer axis is accepted where one axis is meant", "[usability]") {
  auto v = randoms(12, 3);
  Array h = array(v, {3, 4});
  Array m = jnp::mean(h, -1, true);
  CHECK(m.shape() == Shape{3, 1});
  for (int r = 0; r < 3; ++r) {
    double ref = 0;
    for (int c = 0; c < 4; ++c) ref += v[r * 4 + c];
    CHECK(m.to_vector<float>()[r] == Approx(ref / 4).epsilon(kSum));
  }
  CHECK(jnp::sum(h, 0).shape() == Shape{4});
  CHECK(jnp::max(h, 1).shape() == Shape{3});
  CHECK(jnp::var(h, -1).shape() == Shape{3});
  CHECK(jnp::expand_dims(h, 0).shape() == Shape{1, 3, 4});
  CHECK(jnp::sum(h, {}).ndim() == 0);  // {} still means every axis
  auto f = jit([](const Array& x) { return jnp::mean(x, -1, true); });
  CHECK(f(h).to_vector<float>() == m.to_vector<float>());
}

TEST_CASE("jnp has JAX's creation functions and dtype names", "[usability]") {
  CHECK(jnp::zeros({2, 3}, jnp::float32).shape() == Shape{2, 3});
  CHECK(jnp::ones({2}, jnp::int32).to_vector<int32_t>() == std::vector<int32_t>{1, 1});
  CHECK(jnp::full({2}, 7.0, jnp::float64).to_vector<double>() == std::vector<double>{7, 7});
  Array a = jnp::arange(4);
  CHECK(a.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(jnp::zeros_like(a).dtype() == DType::int32);
  CHECK(jnp::ones_like(a, jnp::float32).to_vector<float>() == std::vector<float>{1, 1, 1, 1});
  CHECK(jnp::full_like(a, 2.0, jnp::float16).dtype() == DType::float16);
  CHECK(jnp::eye(2).to_vector<float>() == std::vector<float>{1, 0, 0, 1});
  CHECK(jnp::identity(3, jnp::int8).to_vector<int8_t>() == std::vector<int8_t>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(jnp::linspace(0, 1, 5).to_vector<float>() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1});
  CHECK(jnp::empty({3}, jnp::bfloat16).dtype() == DType::bfloat16);
  CHECK(jnp::array({1, 2}).dtype() == jnp::int32);
  CHECK(jnp::astype(a, jnp::uint8).dtype() == DType::uint8);
}

TEST_CASE("JitOptions setters take any order", "[usability]") {
  auto f = jit([](const Array& x, int n) { return x * float(n); },
               JitOptions{}.set_donate_argnums({0}).set_static_argnums({1}).set_name("scaled"));
  CHECK(f(array({1.f, 2.f}), 3).to_vector<float>() == std::vector<float>{3, 6});
  CHECK(f(array({1.f, 2.f}), 4).to_vector<float>() == std::vector<float>{4, 8});
  CHECK(f.num_compiles() == 2);  // n is static
  CHECK(f.core()->options().donate_argnums == std::vector<int>{0});
  CHECK(f.core()->options().name == "scaled");
}

TEST_CASE("cache misses name the caller's line, the user's tree structure and one weak-type spelling",
          "[usability][jit]") {
  MissLog log;
  auto f = jit([](const std::vector<Array>& xs, const Array& s) {
    Array t = s;
    for (auto& x : xs) t = t + jnp::sum(x);
    return t;
  }, {.name = "tree"});
  Array x = array({1.f, 2.f});
  int line1 = __LINE__ + 1;
  CHECK(f(std::vector<Array>{x, x}, Array(1.0f)).item<float>() == 7.0f);
  int line2 = __LINE__ + 1;
  CHECK(f(std::vector<Array>{x, x, x}, Array(1.0f)).item<float>() == 10.0f);
  int line3 = __LINE__ + 1;
  CHECK(f(std::vector<Array>{x, x}, Array(1.0)).item<float>() == 7.0f);
  INFO(log.text);
  CHECK_THAT(log.text,
             Catch::Contains("at usability_test.cpp:" + std::to_string(line1) + " because: this is the first"));
  CHECK_THAT(log.text, Catch::Contains("at usability_test.cpp:" + std::to_string(line2) + " because"));
  CHECK_THAT(log.text, Catch::Contains("at usability_test.cpp:" + std::to_string(line3) + " because"));
  CHECK_THAT(log.text, !Catch::Contains("jit.h:"));
  CHECK_THAT(log.text, Catch::Contains("the pytree structure of the arguments changed: seen ([*, *], *), now "
                                       "([*, *, *], *); new leaves args[0][2]"));
  CHECK_THAT(log.text, Catch::Contains("args[1] (dtype): seen f32[]{weak}, but now given f64[]{weak} (a C++ float and "
                                       "a C++ double"));
  CHECK_THAT(log.text, !Catch::Contains("weak_type=True"));
  CHECK_THAT(log.text, Catch::Contains("args[1]: f32[]{weak}"));  // the first call's signature
}

struct Pair2 {
  Array a, b;
};
JITX_PYTREE(Pair2, a, b)

TEST_CASE("structure changes print structs, maps, optionals and statics readably", "[usability][jit]") {
  MissLog log;
  auto f = jit([](const Pair2& p, const std::map<std::string, Array>& m, const std::optional<Array>& o, int k) {
    Array r = p.a + p.b + float(k);
    for (auto& [key, v] : m) r = r + v;
    if (o) r = r + *o;
    return r;
  });
  Array x = array({1.f});
  std::map<std::string, Array> m{{"w", x}};
  f(Pair2{x, x}, m, std::optional<Array>{}, 1);
  m["b"] = x;
  f(Pair2{x, x}, m, std::optional<Array>{x}, 1);
  INFO(log.text);
  CHECK_THAT(log.text, Catch::Contains("seen (Pair2{*, *}, {'w': *}, None, static), now (Pair2{*, *}, {'b': *, "
                                       "'w': *}, *, static)"));
  CHECK_THAT(log.text, Catch::Contains("new leaves args[1]['b'], args[2]"));
}

TEST_CASE("large arrays print summarised with ..., as NumPy (threshold 1000, edgeitems 3)", "[usability]") {
  // JAX's repr strings (jax 0.10.2, numpy's array2string: integers padded to the widest shown).
  CHECK(jnp::arange(2000).to_string() == "Array([   0,    1,    2, ..., 1997, 1998, 1999], dtype=int32)");
  std::string s1000 = jnp::arange(1000).to_string();  // at the threshold: printed whole (and wrapped at 75 columns)
  CHECK(s1000.find("...") == std::string::npos);
  // The dtype would pass the line width after the last line: JAX writes six spaces before it.
  CHECK(s1000.size() > 40);
  CHECK(s1000.substr(s1000.size() - 40) == ", 996, 997, 998, 999],      dtype=int32)");
  CHECK(jnp::arange(1001).to_string().rfind("Array([   0,    1,    2, ...,  998,  999, 1000], dtype=int32", 0) == 0);
  std::string m = jnp::reshape(jnp::arange(2000), {40, 50}).to_string();
  CHECK(m.rfind("Array([[   0,    1,    2, ...,   47,   48,   49],\n"
                "       [  50,   51,   52, ...,   97,   98,   99],\n",
                0) == 0);
  CHECK(m.find("[1900, 1901, 1902, ..., 1947, 1948, 1949],\n       [1950, 1951, 1952, ..., 1997, 1998, 1999]], "
               "dtype=int32)") != std::string::npos);
  // Only axes longer than 2 * edgeitems are cut.
  std::string t = jnp::zeros({2, 600}).to_string();
  CHECK(t == "Array([[0., 0., 0., ..., 0., 0., 0.],\n       [0., 0., 0., ..., 0., 0., 0.]], dtype=float32)");
}

TEST_CASE("arrays print as JAX's repr: shortest digits per dtype, aligned, scientific past 1e-4..1e8", "[usability]") {
  // Each expected string is repr() of the same array in JAX 0.10.2 (x64).
  CHECK(array<float>({1e-5f, 1.0f}).to_string() == "Array([1.e-05, 1.e+00], dtype=float32)");
  CHECK(array<float>({{1, 22.5, 333}, {0.001, 5, 6}}).to_string() ==
        "Array([[1.00e+00, 2.25e+01, 3.33e+02],\n       [1.00e-03, 5.00e+00, 6.00e+00]], dtype=float32)");
  CHECK(array<int32_t>({1, -100, 1000}).to_string() == "Array([   1, -100, 1000], dtype=int32)");
  CHECK(array<double>({NAN, INFINITY, -INFINITY, 1.5}).to_string() ==
        "Array([ nan,  inf, -inf,  1.5], dtype=float64)");
  CHECK(array({true, false}).to_string() == "Array([ True, False], dtype=bool)");
  CHECK(array<double>({1.0 / 3, 2.0 / 3}).to_string() == "Array([0.33333333, 0.66666667], dtype=float64)");
  CHECK(array<float>({1.0f / 3}).to_string() == "Array([0.33333334], dtype=float32)");
  CHECK(array<float>({0.1f, 0.2f, 0.3f}).astype(DType::float16).to_string() ==
        "Array([0.1, 0.2, 0.3], dtype=float16)");
  CHECK(array<float>({1e-3f, 65504.0f}).astype(DType::float16).to_string() ==
        "Array([1.00e-03, 6.55e+04], dtype=float16)");
  CHECK(array<float>({1.5f, 3.14159f, -2.0f}).astype(DType::bfloat16).to_string() ==
        "Array([1.5, 3.14062, -2], dtype=bfloat16)");
  CHECK(jnp::zeros({2, 0, 3}).to_string() == "Array([], shape=(2, 0, 3), dtype=float32)");
  CHECK(jnp::zeros({0}).to_string() == "Array([], shape=(0,), dtype=float32)");
  CHECK(jnp::arange(8.0, DType::float64).reshape({2, 2, 2}).to_string() ==
        "Array([[[0., 1.],\n        [2., 3.]],\n\n       [[4., 5.],\n        [6., 7.]]], dtype=float64)");
  CHECK(Array::scalar(1.0 / 3, DType::float64).to_string() == "Array(0.33333333, dtype=float64)");
  CHECK(Array(2.0).to_string() == "Array(2., dtype=float64, weak_type=True)");
  CHECK(Array::scalar(-0.0, DType::float64).to_string() == "Array(-0., dtype=float64)");
  CHECK(array<double>({-1.5, 2.0, NAN}).to_string() == "Array([-1.5,  2. ,  nan], dtype=float64)");
  // Rows wrap at 75 columns; past the width, the dtype follows six spaces (JAX's own spacing).
  CHECK((jnp::arange(20.0f) * 1.1f).to_string() ==
        "Array([ 0.       ,  1.1      ,  2.2      ,  3.3000002,  4.4      ,\n"
        "        5.5      ,  6.6000004,  7.7000003,  8.8      ,  9.900001 ,\n"
        "       11.       , 12.1      , 13.200001 , 14.3      , 15.400001 ,\n"
        "       16.5      , 17.6      , 18.7      , 19.800001 , 20.9      ],      dtype=float32)");
}
