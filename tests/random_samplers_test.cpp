// jitx::random's samplers beyond uniform/normal (exponential ... ball) against jax.random 0.10.2 (x64, CPU):
// tests/random_samplers_refs.h holds JAX's draws for 3 keys per sampler and dtype (tools/gen_sampler_refs.py).
// The samplers listed in kExact must match JAX bit for bit, eagerly and under jit; the rest (their algorithms
// pass through exp, pow, tan, lgamma or a decomposition, which jitx computes its own way) must agree to a
// tolerance per dtype.
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "random_samplers_refs.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {

constexpr int64_t N = kSamplerN;

std::vector<double> linspace(double a, double b, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = a + (b - a) * static_cast<double>(i) / static_cast<double>(n - 1);
  return v;
}

// choice's population arange(10) * 1.5 - 3 and its weights linspace(0.1, 1, 10) (as tools/gen_sampler_refs.py).
Array a10(DType d) { return lax::iota(d, 10) * 1.5 - 3; }
Array p10() { return make(linspace(0.1, 1.0, 10), DType::float64); }

using Sampler = std::function<Array(const Array&, DType)>;
const std::map<std::string, Sampler>& samplers() {
  static const std::map<std::string, Sampler> m = {
      {"exponential", [](const Array& k, DType d) { return random::exponential(k, {N}, d); }},
      {"laplace", [](const Array& k, DType d) { return random::laplace(k, {N}, d); }},
      {"logistic", [](const Array& k, DType d) { return random::logistic(k, {N}, d); }},
      {"cauchy", [](const Array& k, DType d) { return random::cauchy(k, {N}, d); }},
      {"maxwell", [](const Array& k, DType d) { return random::maxwell(k, {N}, d); }},
      {"rademacher", [](const Array& k, DType d) { return random::rademacher(k, {N}, d); }},
      {"weibull_min", [](const Array& k, DType d) { return random::weibull_min(k, 2.0, 1.5, {N}, d); }},
      {"pareto", [](const Array& k, DType d) { return random::pareto(k, 3.0, Shape{N}, d); }},
      {"geometric_f32p",
       [](const Array& k, DType d) { return random::geometric(k, Array::scalar(0.3, DType::float32), Shape{N}, d); }},
      {"geometric_f64p",
       [](const Array& k, DType d) { return random::geometric(k, Array::scalar(0.05, DType::float64), Shape{N}, d); }},
      {"triangular", [](const Array& k, DType d) { return random::triangular(k, -1.0, 0.5, 2.0, Shape{N}, d); }},
      {"wald", [](const Array& k, DType d) { return random::wald(k, 1.5, Shape{N}, d); }},
      {"gamma", [](const Array& k,
                   DType d) { return random::gamma(k, make(linspace(0.15, 6.0, N), DType::float64), Shape{N}, d); }},
      {"loggamma",
       [](const Array& k, DType d) {
         return random::loggamma(k, make(linspace(0.15, 6.0, N), DType::float64), Shape{N}, d);
       }},
      {"beta", [](const Array& k, DType d) { return random::beta(k, 0.7, 2.5, Shape{N}, d); }},
      {"dirichlet",
       [](const Array& k, DType d) {
         return lax::reshape(random::dirichlet(k, make({0.5, 1.0, 2.0}, DType::float64), Shape{N / 4}, d), {N / 4 * 3});
       }},
      {"t", [](const Array& k, DType d) { return random::t(k, 3.0, Shape{N}, d); }},
      {"chisquare", [](const Array& k, DType d) { return random::chisquare(k, 4.5, Shape{N}, d); }},
      {"f", [](const Array& k, DType d) { return random::f(k, 3.0, 5.0, Shape{N}, d); }},
      {"generalized_normal", [](const Array& k, DType d) { return random::generalized_normal(k, 1.5, {N}, d); }},
      {"ball", [](const Array& k, DType d) { return lax::reshape(random::ball(k, 3, 2.0, {N / 4}, d), {N / 4 * 3}); }},
      {"poisson",
       [](const Array& k, DType d) {
         return random::poisson(k, make(linspace(0.0, 40.0, N), DType::float64), Shape{N}, d);
       }},
      {"binomial_f32p",
       [](const Array& k, DType d) {
         return random::binomial(k, make(linspace(0.0, 80.0, N), DType::float64), Array::scalar(0.3, DType::float32),
                                 Shape{N}, d);
       }},
      {"binomial_f64p",
       [](const Array& k, DType d) {
         return random::binomial(k, make(linspace(0.0, 80.0, N), DType::float64), 0.7, Shape{N}, d);
       }},
      {"binomial_edge",
       [](const Array& k, DType d) {
         Array n = make({-3.0, NAN, 0.0, 7.5}, {4, 1}, DType::float64);
         Array p = make({0.0, 1.0, 0.5, 0.9, NAN, -0.1, 1.2, 0.05}, {8}, DType::float64);
         return lax::reshape(random::binomial(k, n, p, std::nullopt, d), {N});
       }},
      {"binomial_big",
       [](const Array& k, DType d) {
         Array n = make({5.0, 20.0, 100.0, 1000.0}, {4, 1}, DType::float64);
         Array p = make({0.01, 0.2, 0.5, 0.6, 0.95, 0.3, 0.999, 0.45}, {8}, DType::float32);
         return lax::reshape(random::binomial(k, n, p, std::nullopt, d), {N});
       }},
      {"multivariate_normal",
       [](const Array& k, DType d) {
         Array mean = make({1.0, -2.0, 0.5}, d);
         Array cov = make({2.0, 0.5, 0.1, 0.5, 1.0, 0.3, 0.1, 0.3, 1.5}, {3, 3}, d);
         return lax::reshape(random::multivariate_normal(k, mean, cov, Shape{N / 4}, d), {N / 4 * 3});
       }},
      {"orthogonal", [](const Array& k, DType d) { return lax::reshape(random::orthogonal(k, 3, {2}, d), {18}); }},
      {"choice_replace", [](const Array& k, DType d) { return random::choice(k, a10(d), {N}); }},
      {"choice_noreplace",
       [](const Array& k, DType d) {
         return random::choice(k, lax::convert_element_type(lax::iota(d, 40), d) * 0.5, {N}, false);
       }},
      {"choice_p", [](const Array& k, DType d) { return random::choice(k, a10(d), {N}, true, p10()); }},
      {"choice_p_f32",
       [](const Array& k, DType d) { return random::choice(k, a10(d), {N}, true, p10().astype(DType::float32)); }},
      {"choice_p_noreplace",
       [](const Array& k, DType d) {
         std::vector<double> p = linspace(1.0, 4.0, 40);
         for (auto& x : p) x *= x;
         return random::choice(k, lax::iota(d, 40), {N}, false, make(p, DType::float64));
       }},
      {"choice_axis",
       [](const Array& k, DType d) {
         return lax::reshape(random::choice(k, lax::reshape(lax::iota(d, 32), {4, 8}), {8}, false, std::nullopt, 1),
                             {N});
       }},
      {"multinomial",
       [](const Array& k, DType d) {
         Array n = make({5.0, 20.0, 100.0, 7.0}, DType::float64);
         Array p = make({0.05, 0.1, 0.2, 0.0, 0.25, 0.15, 0.05, 0.2}, DType::float64);
         return lax::reshape(random::multinomial(k, n, p, Shape{4, 8}, d), {N});
       }},
  };
  return m;
}

DType dtype_named(const std::string& s) {
  static const std::map<std::string, DType> m = {{"float32", DType::float32},   {"float64", DType::float64},
                                                 {"bfloat16", DType::bfloat16}, {"float16", DType::float16},
                                                 {"int32", DType::int32},       {"int64", DType::int64}};
  if (m.count(s)) return m.at(s);
  throw std::runtime_error("unknown dtype " + s);
}

std::vector<uint64_t> bits_of(const Array& x) {
  int b = dtype_bits(x.dtype());
  DType u = b == 16 ? DType::uint16 : b == 32 ? DType::uint32 : DType::uint64;
  return lax::bitcast_convert_type(x, u).to_vector<uint64_t>();
}

double value_of(uint64_t bits, DType d) {
  switch (d) {
    case DType::float64: {
      double v;
      std::memcpy(&v, &bits, 8);
      return v;
    }
    case DType::float32: {
      uint32_t b = static_cast<uint32_t>(bits);
      float v;
      std::memcpy(&v, &b, 4);
      return v;
    }
    case DType::bfloat16: {
      uint32_t b = static_cast<uint32_t>(bits) << 16;
      float v;
      std::memcpy(&v, &b, 4);
      return v;
    }
    case DType::float16: {
      Array a = lax::bitcast_convert_type(Array::scalar_int(static_cast<int64_t>(bits), DType::uint16), DType::float16);
      return a.item<double>();
    }
    case DType::int32:
      return static_cast<int32_t>(static_cast<uint32_t>(bits));
    default:
      return static_cast<double>(static_cast<int64_t>(bits));
  }
}

// Bit-exact with JAX on this host (cpu and interpreter, eager and jit), per (sampler, dtype).
const std::set<std::string> kExact = {
#include "random_samplers_exact.inc"
};

}  // namespace

namespace {
/// Every draw of kSamplerRefs whose name is in names against jitx's, eagerly and under jit (one TEST_CASE per
/// group of samplers, so that ctest runs them in parallel).
void check_samplers(const std::set<std::string>& names) {
  std::map<std::string, std::pair<int64_t, int64_t>> tally;  // "name dtype" -> (differing, total)
  for (const auto& ref : kSamplerRefs) {
    if (!names.count(ref.name)) continue;
    DType d = dtype_named(ref.dtype);
    std::string id = std::string(ref.name) + " " + ref.dtype;
    const Sampler& f = samplers().at(ref.name);
    std::vector<Array> r;
    try {
      r = eager_and_jit([&](const std::vector<Array>& a) { return f(a[0], d); }, {random::PRNGKey(ref.seed)});
    } catch (const std::exception& e) {
      FAIL_CHECK(id << " threw: " << e.what());
      continue;
    }
    for (int j = 0; j < 2; ++j) {
      INFO(id << " seed " << ref.seed << (j ? " (jit)" : " (eager)"));
      REQUIRE(r[j].dtype() == d);
      auto got = bits_of(r[j]);
      REQUIRE(got.size() == ref.bits.size());
      for (size_t i = 0; i < got.size(); ++i) {
        bool same = got[i] == ref.bits[i];
        tally[id].first += same ? 0 : 1;
        tally[id].second += 1;
        if (kExact.count(id)) {
          INFO("element " << i << " got " << std::hex << got[i] << " want " << ref.bits[i]);
          CHECK(same);
        } else if (!same) {
          double g = value_of(got[i], d), w = value_of(ref.bits[i], d);
          double tol = d == DType::float64 ? 1e-9 : d == DType::float32 ? 2e-4 : 4e-2;
          INFO("element " << i << " got " << g << " want " << w);
          CHECK(std::abs(g - w) <= tol * std::max(1.0, std::abs(w)));
        }
      }
    }
  }
  CHECK(tally.size() >= names.size());  // every sampler of the group has reference draws
  for (auto& [id, t] : tally) WARN(id << ": " << t.first << " of " << t.second << " differ");
}
}  // namespace

namespace {
const std::vector<std::set<std::string>> kGroups = {
    {"exponential", "laplace", "logistic", "cauchy", "maxwell", "rademacher"},
    {"weibull_min", "pareto", "geometric_f32p", "geometric_f64p", "triangular", "wald"},
    {"gamma", "loggamma"},
    {"beta", "dirichlet"},
    {"t", "chisquare", "f"},
    {"generalized_normal", "ball"},
    {"poisson"},
    {"binomial_f32p", "binomial_f64p", "binomial_edge", "binomial_big"},
    {"multivariate_normal", "orthogonal"},
    {"choice_replace", "choice_noreplace", "choice_p", "choice_p_f32", "choice_p_noreplace", "choice_axis"},
    {"multinomial"},
};
}  // namespace

TEST_CASE("random samplers: every reference draw belongs to one test group", "[random_samplers]") {
  for (const auto& ref : kSamplerRefs) {
    int in = 0;
    for (const auto& g : kGroups) in += g.count(ref.name) ? 1 : 0;
    INFO(ref.name);
    CHECK(in == 1);
  }
}
TEST_CASE("random samplers: exponential, laplace, logistic, cauchy, maxwell, rademacher match jax.random",
          "[random_samplers]") {
  check_samplers(kGroups[0]);
}
TEST_CASE("random samplers: weibull_min, pareto, geometric, triangular, wald match jax.random", "[random_samplers]") {
  check_samplers(kGroups[1]);
}
TEST_CASE("random samplers: gamma, loggamma match jax.random", "[random_samplers]") { check_samplers(kGroups[2]); }
TEST_CASE("random samplers: beta, dirichlet match jax.random", "[random_samplers]") { check_samplers(kGroups[3]); }
TEST_CASE("random samplers: t, chisquare, f match jax.random", "[random_samplers]") { check_samplers(kGroups[4]); }
TEST_CASE("random samplers: generalized_normal, ball match jax.random", "[random_samplers]") {
  check_samplers(kGroups[5]);
}
TEST_CASE("random samplers: poisson matches jax.random", "[random_samplers]") { check_samplers(kGroups[6]); }
TEST_CASE("random samplers: binomial matches jax.random (inversion, BTRS, edges, broadcasting)",
          "[random_samplers][binomial]") {
  check_samplers(kGroups[7]);
}
TEST_CASE("random samplers: multivariate_normal, orthogonal match jax.random", "[random_samplers]") {
  check_samplers(kGroups[8]);
}

TEST_CASE("random samplers: choice (with and without replacement, weights, an axis) matches jax.random",
          "[random_samplers]") {
  check_samplers(kGroups[9]);
}
TEST_CASE("random samplers: multinomial matches jax.random", "[random_samplers]") { check_samplers(kGroups[10]); }

TEST_CASE("random samplers: binomial's edges (n = inf, p = 0 or 1, n = 0) and its errors",
          "[random_samplers][binomial]") {
  // n = inf never ends JAX's own BTRS loop; jitx gives +inf there (JAX's final select), NaN where p is invalid.
  Array n = make({INFINITY, INFINITY, INFINITY, 0.0, 12.0, 12.0}, {6}, DType::float64);
  Array p = make({0.3, 0.0, NAN, 0.4, 0.0, 1.0}, {6}, DType::float64);
  for (DType d : {DType::float32, DType::float64}) {
    auto r =
        eager_and_jit([d](const std::vector<Array>& a) { return random::binomial(a[0], a[1], a[2], std::nullopt, d); },
                      {random::PRNGKey(3), n, p});
    for (int j = 0; j < 2; ++j) {
      INFO(dtype_name(d) << (j ? " (jit)" : " (eager)"));
      REQUIRE(r[j].dtype() == d);
      auto v = r[j].to_vector<double>();
      CHECK(v[0] == INFINITY);
      CHECK(v[1] == INFINITY);
      CHECK(std::isnan(v[2]));
      CHECK(v[3] == 0.0);
      CHECK(v[4] == 0.0);
      CHECK(v[5] == 12.0);
    }
  }
  Array key = random::PRNGKey(0);
  CHECK_THROWS_WITH(random::binomial(key, 5.0, 0.5, Shape{3}, DType::int32),
                    Catch::Contains("binomial") && Catch::Contains("float dtype"));
  CHECK_THROWS_WITH(
      random::binomial(key, make({1.0, 2.0}, {2}, DType::float32), make({0.1, 0.2, 0.3}, {3}, DType::float32)),
      Catch::Contains("binomial"));
  CHECK_THROWS_WITH(random::binomial(key, make({1.0, 2.0}, {2}, DType::float32), 0.5, Shape{3}),
                    Catch::Contains("binomial") && Catch::Contains("broadcast"));
  CHECK_THROWS_WITH(random::binomial(key, Array(), 0.5), Catch::Contains("binomial") && Catch::Contains("n must be"));
}

TEST_CASE("random: beta, chisquare and t differentiate in float32 as JAX's, weibull_min broadcasts its parameters",
          "[random_samplers]") {
  // JAX 0.10.2 (x64), key PRNGKey(42), a = [0.1, 1, 5, 100] in float32: jax.grad of the samples' sum in the
  // parameter. jitx's float32 samplers round each op as XLA does; their derivative was zero (the roundings').
  Array key = random::PRNGKey(42), a = jnp::array({0.1f, 1.0f, 5.0f, 100.0f});
  auto check = [](const Array& got, const std::vector<float>& want) {
    auto g = got.to_vector<float>();
    REQUIRE(g.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(g[i] - want[i]) <= 1e-5f * std::abs(want[i]));
  };
  auto beta = [&](const Array& x) {
    return jnp::sum(random::beta(key, x, Array::scalar(2.0, DType::float32), std::nullopt, DType::float32));
  };
  auto chisq = [&](const Array& x) { return jnp::sum(random::chisquare(key, x, std::nullopt, DType::float32)); };
  auto t = [&](const Array& x) { return jnp::sum(random::t(key, x, std::nullopt, DType::float32)); };
  check(grad(beta)(a), {3.3440828e-01f, 3.1883165e-01f, 1.8554596e-02f, 5.0830116e-05f});
  check(grad(chisq)(a), {0.008841597f, 1.3462014f, 1.3690077f, 0.9677189f});
  check(jit(grad(t))(a), {-2.8552697e+05f, 1.2807324e+02f, -1.0725484e-01f, -2.7262591e-04f});
  // jax.random.weibull_min(key, [1, 2, .5], [.5, 1, 3], dtype=f32): one draw of shape () for the three parameters.
  Array w = random::weibull_min(key, jnp::array({1.0f, 2.0f, 0.5f}), jnp::array({0.5f, 1.0f, 3.0f}));
  CHECK(w.to_vector<float>() == std::vector<float>{0.4499961f, 1.341635f, 0.43769488f});
  CHECK_THROWS_AS(random::weibull_min(key, jnp::ones({3}), jnp::ones({2})), ShapeError);
}

TEST_CASE("random: rademacher of bool is all true, as JAX's (2 b - 1).astype(bool)", "[random_samplers]") {
  Array r = random::rademacher(random::PRNGKey(3), {6}, DType::bool_);
  CHECK(r.dtype() == DType::bool_);
  CHECK(r.to_vector<bool>() == std::vector<bool>(6, true));
  std::vector<int32_t> v = random::rademacher(random::PRNGKey(3), {6}).to_vector<int32_t>();
  for (int32_t e : v) CHECK((e == 1 || e == -1));
}
