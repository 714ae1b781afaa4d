// The API walk's entries for random.h's samplers beyond uniform/normal (src/api/random_samplers.cpp and friends).
// Included by api_walk_table_lax.h; uses its helpers (sampler, f23, pos23, kHuge).
#pragma once

namespace {

/// A sampler with parameters: broadcasting params to a (2, 3) shape, a float param of the wrong shape, an integer
/// output dtype where a float is wanted (or the reverse), a bad key.
template <typename F>
void param_sampler(Walk& w, F f, DType good, DType bad) {
  Array key = random::PRNGKey(0);
  w.ok("params (2, 3)", {key, pos23()}, [f, good](A a) { return f(a[0], a[1], std::nullopt, good); }, {2, 3});
  w.ok("a scalar param, shape (0, 3)", {key, Array(2.5)},
       [f, good](A a) {
         return f(a[0], a[1], Shape{0, 3}, good);
       },
       {0, 3});
  w.err("params (2, 3) for shape (4,)", {key, pos23()}, [f, good](A a) { return f(a[0], a[1], Shape{4}, good); });
  w.err(fmt::format("dtype {}", dtype_name(bad)), {key, pos23()},
        [f, bad](A a) { return f(a[0], a[1], std::nullopt, bad); });
  w.err("a key of shape (3,)", {zeros({3}, DType::uint32), pos23()},
        [f, good](A a) { return f(a[0], a[1], std::nullopt, good); });
}

using OptShape = std::optional<Shape>;

const std::vector<Case> kRandom2 = {
    {"random::exponential",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::exponential(k, s, d); }, DType::float32,
           DType::int32);
     }},
    {"random::laplace",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::laplace(k, s, d); }, DType::float64,
           DType::int32);
     }},
    {"random::logistic",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::logistic(k, s, d); }, DType::float16,
           DType::uint8);
     }},
    {"random::cauchy",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::cauchy(k, s, d); }, DType::float32,
           DType::bool_);
     }},
    {"random::maxwell",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::maxwell(k, s, d); }, DType::float32,
           DType::int64);
     }},
    {"random::rademacher",
     [](Walk& w) {
       // Every numeric dtype and bool (all true, as JAX's (2 b - 1).astype(bool)) is accepted.
       Array key = random::PRNGKey(0);
       w.ok("key, (2, 3)", {key}, [](A a) { return random::rademacher(a[0], {2, 3}); }, {2, 3});
       w.ok("bool", {key}, [](A a) { return random::rademacher(a[0], {4}, DType::bool_); }, {4});
       w.err("shape (-1, 3)", {key}, [](A a) { return random::rademacher(a[0], {-1, 3}); });
       w.err("a float key", {zeros({2})}, [](A a) { return random::rademacher(a[0], {2}); });
       w.err("DType(200)", {key}, [](A a) { return random::rademacher(a[0], {2}, static_cast<DType>(200)); });
     }},
    {"random::generalized_normal",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::generalized_normal(k, 1.5, s, d); },
           DType::float32, DType::int32);
     }},
    {"random::gamma",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::gamma(k, a, s, d); },
           DType::float32, DType::int32);
     }},
    {"random::loggamma",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::loggamma(k, a, s, d); },
           DType::float64, DType::int32);
     }},
    {"random::beta",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::beta(k, a, a, s, d); },
           DType::float32, DType::int32);
     }},
    {"random::poisson",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::poisson(k, a, s, d); },
           DType::int32, DType::float32);
     }},
    {"random::binomial",
     [](Walk& w) {
       param_sampler(
           w,
           [](const Array& k, const Array& a, OptShape s, DType d) { return random::binomial(k, a, Array(0.3), s, d); },
           DType::float32, DType::int32);
     }},
    {"random::geometric",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::geometric(k, a / 4.0, s, d); },
           DType::int32, DType::float32);
     }},
    {"random::pareto",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::pareto(k, a, s, d); },
           DType::float32, DType::int32);
     }},
    {"random::t",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::t(k, a, s, d); }, DType::float32,
           DType::int32);
     }},
    {"random::chisquare",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::chisquare(k, a, s, d); },
           DType::float32, DType::int32);
     }},
    {"random::f",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::f(k, a, a, s, d); },
           DType::float32, DType::int32);
     }},
    {"random::wald",
     [](Walk& w) {
       param_sampler(
           w, [](const Array& k, const Array& a, OptShape s, DType d) { return random::wald(k, a, s, d); },
           DType::float32, DType::int32);
     }},
    {"random::triangular",
     [](Walk& w) {
       param_sampler(
           w,
           [](const Array& k, const Array& a, OptShape s, DType d) {
             return random::triangular(k, Array(0.0), a, a * 2.0, s, d);
           },
           DType::float32, DType::int32);
     }},
    {"random::weibull_min",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.ok("params (2, 3)", {key, pos23()},
            [](A a) {
              return random::weibull_min(a[0], a[1], a[1], Shape{2, 3});
            },
            {2, 3});
       w.err("dtype int32", {key}, [](A a) { return random::weibull_min(a[0], 1.0, 2.0, Shape{2}, DType::int32); });
       w.err("shape (-1,)", {key}, [](A a) { return random::weibull_min(a[0], 1.0, 2.0, Shape{-1}); });
     }},
    {"random::dirichlet",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.ok("alpha (2, 3)", {key, pos23()}, [](A a) { return random::dirichlet(a[0], a[1]); }, {2, 3});
       w.ok("alpha (3,), shape (4,)", {key, pos23()},
            [](A a) { return random::dirichlet(a[0], a[1].reshape({6}), Shape{4}); }, {4, 6});
       w.err("a 0-d alpha", {key}, [](A a) { return random::dirichlet(a[0], Array(1.0)); });
       w.err("dtype int32", {key, pos23()},
             [](A a) { return random::dirichlet(a[0], a[1], std::nullopt, DType::int32); });
     }},
    {"random::multivariate_normal",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       Array mean = zeros({3});
       Array cov = eye(3) * 2.0;
       w.ok("mean (3,), cov (3, 3)", {key, mean, cov},
            [](A a) { return random::multivariate_normal(a[0], a[1], a[2]); }, {3});
       w.ok("shape (4,), eigh", {key, mean, cov},
            [](A a) { return random::multivariate_normal(a[0], a[1], a[2], Shape{4}, DType::float32, "eigh"); },
            {4, 3});
       w.err("cov (2, 2) for mean (3,)", {key, mean, eye(2)},
             [](A a) { return random::multivariate_normal(a[0], a[1], a[2]); });
       w.err("method \"lu\"", {key, mean, cov},
             [](A a) { return random::multivariate_normal(a[0], a[1], a[2], std::nullopt, DType::float32, "lu"); });
     }},
    {"random::orthogonal",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.ok("n 3, shape (2,)", {key}, [](A a) { return random::orthogonal(a[0], 3, {2}); }, {2, 3, 3});
       w.err("n -1", {key}, [](A a) { return random::orthogonal(a[0], -1); });
       w.err("dtype int32", {key}, [](A a) { return random::orthogonal(a[0], 3, {}, DType::int32); });
     }},
    {"random::ball",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.ok("d 3, shape (4,)", {key}, [](A a) { return random::ball(a[0], 3, 2.0, {4}); }, {4, 3});
       w.err("d -1", {key}, [](A a) { return random::ball(a[0], -1); });
       w.err("dtype int32", {key}, [](A a) { return random::ball(a[0], 3, 2.0, {4}, DType::int32); });
     }},
    {"random::choice",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       Array pop = zeros({2, 5}, DType::float32);
       w.ok("n 10, shape (4,)", {key}, [](A a) { return random::choice(a[0], 10, {4}); }, {4});
       w.ok("a (2, 5), axis 1, shape (3,), no replacement", {key, pop},
            [](A a) { return random::choice(a[0], a[1], {3}, false, std::nullopt, 1); }, {2, 3});
       w.ok("weights", {key, pop, ones({5}, DType::float32)},
            [](A a) { return random::choice(a[0], a[1], {3}, true, a[2], 1); }, {2, 3});
       w.ok("shape (0,)", {key}, [](A a) { return random::choice(a[0], 10, {0}); }, {0});
       w.err("6 draws of 5 without replacement", {key, pop},
             [](A a) { return random::choice(a[0], a[1], {6}, false, std::nullopt, 1); });
       w.err("n 0", {key}, [](A a) { return random::choice(a[0], 0, {2}); });
       w.err("a float scalar", {key}, [](A a) { return random::choice(a[0], 2.5, {2}); });
       w.err("axis 2 of a rank-2 a", {key, pop}, [](A a) { return random::choice(a[0], a[1], {2}, true, {}, 2); });
       w.err("weights of the wrong length", {key, pop, ones({4}, DType::float32)},
             [](A a) { return random::choice(a[0], a[1], {3}, true, a[2], 1); });
       w.err("a key of shape (3,)", {zeros({3}, DType::uint32)}, [](A a) { return random::choice(a[0], 10, {2}); });
     }},
    {"random::multinomial",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       Array p = full({4}, 0.25, DType::float32);
       w.ok("n 10, p (4,)", {key, p}, [](A a) { return random::multinomial(a[0], 10.0, a[1]); }, {4});
       w.ok("shape (3, 4)", {key, p}, [](A a) { return random::multinomial(a[0], 10.0, a[1], Shape{3, 4}); }, {3, 4});
       w.err("shape (3, 5) for p (4,)", {key, p},
             [](A a) { return random::multinomial(a[0], 10.0, a[1], Shape{3, 5}); });
       w.err("a 0-d p", {key}, [](A a) { return random::multinomial(a[0], 10.0, 0.5); });
       w.err("a key of shape (3,)", {zeros({3}, DType::uint32), p},
             [](A a) { return random::multinomial(a[0], 10.0, a[1]); });
     }},
};

}  // namespace
