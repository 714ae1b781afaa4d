// Issue 19 (usability), continued: Array's method-style reductions and reshapes, integer and multi-axis nn
// functions, and AOT Compiled calls whose signature errors name the caller's line.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "jitx/jitx.h"
#include "tolerances.h"

using namespace jitx;

namespace {
constexpr double kSum = jitx::testing::kF32Tolerances.sum.rtol;

std::vector<double> randoms(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-1.5, 1.5);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
/// Row r, column c of a 3x4 row-major array.
double at(const std::vector<double>& v, int r, int c) { return v[r * 4 + c]; }
}  // namespace

TEST_CASE("Array has JAX's method-style reductions, with an integer axis", "[usability]") {
  auto v = randoms(12, 7);
  Array x = array_from_data(v.data(), float64, {3, 4}, float64);
  for (int mode = 0; mode < 2; ++mode) {
    INFO((mode ? "under jit" : "eagerly"));
    auto run = [&](auto f) { return mode ? jit([f](const Array& a) { return f(a); })(x) : f(x); };
    Array s = run([](const Array& a) { return a.sum(1); });
    Array m = run([](const Array& a) { return a.mean(-1, true); });
    Array p = run([](const Array& a) { return a.prod(0); });
    Array mx = run([](const Array& a) { return a.max(0); });
    Array mn = run([](const Array& a) { return a.min(); });
    Array vr = run([](const Array& a) { return a.var(1); });
    Array sd = run([](const Array& a) { return a.std(); });
    Array am = run([](const Array& a) { return a.argmax(1); });
    Array an = run([](const Array& a) { return a.argmin(); });
    Array cs = run([](const Array& a) { return a.cumsum(0); });
    Array al = run([](const Array& a) { return (a > -1.4).all(1); });
    Array ay = run([](const Array& a) { return (a > 1.0).any(); });
    CHECK(s.shape() == Shape{3});
    CHECK(m.shape() == Shape{3, 1});
    CHECK(am.shape() == Shape{3});
    CHECK(an.ndim() == 0);
    CHECK(cs.shape() == Shape{3, 4});
    double all_min = *std::min_element(v.begin(), v.end());
    CHECK(mn.item<double>() == all_min);
    CHECK(an.item<int64_t>() == std::min_element(v.begin(), v.end()) - v.begin());
    double total = 0, total2 = 0;
    for (double e : v) total += e;
    for (double e : v) total2 += (e - total / 12) * (e - total / 12);
    CHECK(sd.item<double>() == Approx(std::sqrt(total2 / 12)).epsilon(1e-12));
    bool any_ref = std::any_of(v.begin(), v.end(), [](double e) { return e > 1.0; });
    CHECK(ay.item<bool>() == any_ref);
    for (int r = 0; r < 3; ++r) {
      double sr = 0, best = -1e9, sq = 0;
      int arg = 0;
      bool all_ref = true;
      for (int c = 0; c < 4; ++c) {
        sr += at(v, r, c);
        if (at(v, r, c) > best) best = at(v, r, c), arg = c;
        all_ref = all_ref && at(v, r, c) > -1.4;
      }
      for (int c = 0; c < 4; ++c) sq += (at(v, r, c) - sr / 4) * (at(v, r, c) - sr / 4);
      CHECK(s.to_vector<double>()[r] == Approx(sr).epsilon(1e-12));
      CHECK(m.to_vector<double>()[r] == Approx(sr / 4).epsilon(1e-12));
      CHECK(vr.to_vector<double>()[r] == Approx(sq / 4).epsilon(1e-12));
      CHECK(am.to_vector<int64_t>()[r] == arg);
      CHECK(al.to_vector<bool>()[r] == all_ref);
    }
    for (int c = 0; c < 4; ++c) {
      double pr = 1, best = -1e9, run_sum = 0;
      for (int r = 0; r < 3; ++r) {
        pr *= at(v, r, c);
        best = std::max(best, at(v, r, c));
        run_sum += at(v, r, c);
        CHECK(cs.to_vector<double>()[r * 4 + c] == Approx(run_sum).epsilon(1e-12));
      }
      CHECK(p.to_vector<double>()[c] == Approx(pr).epsilon(1e-12));
      CHECK(mx.to_vector<double>()[c] == best);
    }
  }
  CHECK(x.sum({0, 1}).ndim() == 0);  // a braced list is still a list of axes
  CHECK(x.sum({}).ndim() == 0);
  CHECK_THROWS_AS(x.sum(2), Error);
  CHECK_THROWS_AS(x.argmax(-3), Error);
}

TEST_CASE("Array's flatten, ravel and squeeze", "[usability]") {
  Array x = array({{{1.f, 2.f, 3.f}}, {{4.f, 5.f, 6.f}}});  // (2, 1, 3)
  CHECK(x.flatten().shape() == Shape{6});
  CHECK(x.ravel().to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(x.squeeze().shape() == Shape{2, 3});
  CHECK(x.squeeze(1).shape() == Shape{2, 3});
  CHECK(x.squeeze(-2).shape() == Shape{2, 3});
  CHECK(x.squeeze({1}).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_AS(x.squeeze(0), Error);  // axis 0 has size 2
  CHECK(x.T().shape() == Shape{3, 1, 2});
  CHECK(x.reshape({3, 2}).astype(int32).dtype() == int32);
}

TEST_CASE("nn::logsumexp, softmax, log_softmax and standardize take an integer axis or several axes", "[usability]") {
  auto v = randoms(12, 11);
  Array x = array_from_data(v.data(), float64, {3, 4}, float64);
  // An integer axis means the one-axis list.
  CHECK(nn::logsumexp(x, 0).to_vector<double>() == nn::logsumexp(x, {0}).to_vector<double>());
  CHECK(nn::logsumexp(x, -1, true).shape() == Shape{3, 1});
  CHECK(nn::standardize(x, 0).to_vector<double>() == nn::standardize(x, {0}).to_vector<double>());
  // Over both axes, against double loops.
  double mx = *std::max_element(v.begin(), v.end()), z = 0;
  for (double e : v) z += std::exp(e - mx);
  double lse = std::log(z) + mx;
  CHECK(nn::logsumexp(x, {0, 1}).item<double>() == Approx(lse).epsilon(1e-13));
  auto sm = jit([](const Array& a) { return nn::softmax(a, std::vector<int64_t>{0, 1}); })(x).to_vector<double>();
  auto lsm = nn::log_softmax(x, std::vector<int64_t>{0, 1}).to_vector<double>();
  double total = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    CHECK(sm[i] == Approx(std::exp(v[i] - lse)).epsilon(1e-13));
    CHECK(lsm[i] == Approx(v[i] - lse).epsilon(1e-13).margin(1e-15));
    total += sm[i];
  }
  CHECK(total == Approx(1.0).epsilon(1e-14));
  // The one-axis forms still agree with the int64 overload.
  CHECK(nn::softmax(x, std::vector<int64_t>{1}).to_vector<double>() == nn::softmax(x, 1).to_vector<double>());
  CHECK_THROWS_AS(nn::softmax(x, std::vector<int64_t>{0, 2}), Error);
  (void)kSum;
}

TEST_CASE("an AOT-compiled call with the wrong signature names the caller's line", "[usability][jit]") {
  auto f = jit([](const Array& a, const Array& b) { return a * b; });
  auto c = f.lower(zeros({3}), zeros({3})).compile();
  CHECK(c(ones({3}), ones({3})).to_vector<float>() == std::vector<float>{1, 1, 1});
  // The message of the TypeError f throws (a call with the wrong number of arguments does not compile).
  auto message = [](const std::function<void()>& g) -> std::string {
    try {
      g();
    } catch (const TypeError& e) {
      return e.what();
    }
    return "no TypeError";
  };
  auto here = [](int line) { return "usability_methods_test.cpp:" + std::to_string(line); };
  int line_shape = __LINE__ + 1;
  std::string m_shape = message([&] { c(ones({4}), ones({3})); });
  int line_dtype = __LINE__ + 1;
  std::string m_dtype = message([&] { c(ones({3}, int32), ones({3})); });
  int line_call = __LINE__ + 1;
  std::string m_call = message([&] { c.call(Loc::current(), ones({2}), ones({3})); });
  CHECK_THAT(m_shape, Catch::Contains("[Compiled] was compiled for signature") && Catch::Contains(here(line_shape)));
  CHECK_THAT(m_dtype, Catch::Contains("[Compiled]") && Catch::Contains(here(line_dtype)));
  CHECK_THAT(m_call, Catch::Contains(here(line_call)));
  CHECK_THAT(m_shape, !Catch::Contains("jit.h"));
}

TEST_CASE("an AOT-compiled call checks every part of its signature on every call", "[usability][jit]") {
  // The check has a fast path (no key built) for unsharded arguments: each difference still throws, and an
  // identical signature runs.
  auto f = jit([](const Array& a, int k) { return a * static_cast<float>(k); }, {.static_argnums = {1}});
  Array x = random::normal(random::PRNGKey(3), {2, 3});
  auto c = f.lower(x, 2).compile();
  auto want = x.to_vector<float>();
  auto got = c(x, 2).to_vector<float>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == want[i] * 2.0f);
  CHECK_THROWS_AS(c(x, 3), TypeError);                                               // another static value
  CHECK_THROWS_AS(c(jnp::reshape(x, {3, 2}), 2), TypeError);                          // another shape
  CHECK_THROWS_AS(c(x.astype(DType::float64), 2), TypeError);                         // another dtype
  auto s = jit([](const Array& a, const Array& b) { return a + b; });
  auto cs = s.lower(ones({}), Array(1.5f)).compile();
  CHECK(cs(ones({}), Array(0.5f)).item<float>() == 1.5f);
  CHECK(cs(Array(2.0f), Array(0.5f)).item<float>() == 2.5f);  // weak vs strong f32 alone: accepted, as JAX's
  CHECK_THROWS_AS(cs(ones({}), ones({1})), TypeError);                               // a rank differs
  CHECK_THROWS_AS(cs(ones({}), Array(1.5)), TypeError);                              // weak f64 scalar vs f32
  auto v = jit([](const std::vector<Array>& xs) { return xs[0] + xs.back(); });
  auto cv = v.lower(std::vector<Array>{ones({2}), ones({2})}).compile();
  CHECK(cv(std::vector<Array>{ones({2}), ones({2})}).to_vector<float>() == std::vector<float>{2, 2});
  CHECK_THROWS_AS(cv(std::vector<Array>{ones({2}), ones({2}), ones({2})}), TypeError);  // another structure
  CHECK_THROWS_AS(c(Array(), 2), TypeError);                                          // an empty Array
}
