// The api walk's table: jax.lax's special functions (lax_special.h) and jax.scipy.special (scipy_special.h), see
// api_walk_table.h.
#pragma once
#include "jitx/lax_special.h"
#include "jitx/numpy_special.h"
#include "jitx/scipy_special.h"

namespace {

/// A three-argument elementwise function (betainc): shapes that do not broadcast, one operand empty.
void ternary(Walk& w, std::function<Array(const Array&, const Array&, const Array&)> f) {
  auto g = [f](A a) { return f(a[0], a[1], a[2]); };
  Array u = testing::make(testing::uniform(6, 0.1, 0.9), {2, 3}, DType::float32);
  w.ok("f32[2,3] x3", {pos23(), pos23(), u}, g, {2, 3});
  w.ok("f32[2,3], f32[], f32[2,3]", {pos23(), s0(), u}, g, {2, 3});
  w.err("f32[2,3], f32[4], f32[2,3]", {pos23(), f4(), u}, g);
  w.invalid([f](A a) { return f(a[0], Array(1.0f), Array(0.5f)); });
}

/// softmax-like functions over axes (the shape kept): bad and repeated axes refused by name.
void normalizer(Walk& w, std::function<Array(const Array&, std::vector<int64_t>)> f) {
  w.err("axis 2 of rank 2", {f23()}, [f](A a) { return f(a[0], {2}); });
  w.err("axes (0, 0)", {f23()}, [f](A a) { return f(a[0], {0, 0}); });
  w.ok("all axes", {f23()}, [f](A a) { return f(a[0], {}); }, {2, 3});
  w.ok("axis 1", {f23()}, [f](A a) { return f(a[0], {1}); }, {2, 3});
  w.ok("f32[0,3] axis 0", {z03()}, [f](A a) { return f(a[0], {0}); }, {0, 3});
  w.invalid([f](A a) { return f(a[0], {0}); });
}

#define JITX_SP_U(n) JITX_U(scipy::special, n)
#define JITX_SP_B(n) JITX_B(scipy::special, n, false)

const std::vector<Case> kSpecial = {
    JITX_U(jnp, i0),
    {"jnp::kaiser",
     [](Walk& w) {
       w.ok("M = 5", {s0()}, [](A a) { return jnp::kaiser(5, a[0]); }, {5});
       w.ok("M = 0", {s0()}, [](A a) { return jnp::kaiser(0, a[0]); }, {0});
       w.either("beta of shape (2,3)", {f23()}, [](A a) { return jnp::kaiser(4, a[0]); });
       w.invalid([](A a) { return jnp::kaiser(4, a[0]); });
     }},
    JITX_B(lax, igamma, true),
    JITX_B(lax, igammac, true),
    JITX_B(lax, igamma_grad_a, true),
    JITX_B(lax, random_gamma_grad, true),
    JITX_B(lax, zeta, true),
    JITX_B(lax, polygamma, true),
    JITX_U(lax, bessel_i0e),
    JITX_U(lax, bessel_i1e),
    {"lax::betainc",
     [](Walk& w) {
       ternary(w, [](auto& a, auto& b, auto& x) { return lax::betainc(a, b, x); });
       w.err("i32 operands", {i23(), i23(), i23()}, [](A a) { return lax::betainc(a[0], a[1], a[2]); });
       w.err("f32, f32, f64", {pos23(), pos23(), pos23().astype(DType::float64)},
             [](A a) { return lax::betainc(a[0], a[1], a[2]); });
     }},
    JITX_SP_U(gammaln),
    JITX_SP_U(gammasgn),
    JITX_SP_U(gamma),
    JITX_SP_U(loggamma),
    JITX_SP_U(digamma),
    JITX_SP_U(factorial),
    JITX_SP_U(erf),
    JITX_SP_U(erfc),
    JITX_SP_U(erfinv),
    JITX_SP_U(ndtr),
    JITX_SP_U(ndtri),
    JITX_SP_U(logit),
    JITX_SP_U(expit),
    JITX_SP_U(entr),
    JITX_SP_U(i0),
    JITX_SP_U(i0e),
    JITX_SP_U(i1),
    JITX_SP_U(i1e),
    JITX_SP_U(erfcx),
    JITX_SP_U(dawsn),
    JITX_SP_U(spence),
    JITX_SP_B(owens_t),
    {"scipy::special::sici", [](Walk& w) { unary(w, [](const Array& x) { return scipy::special::sici(x).second; }); }},
    {"scipy::special::bernoulli",
     [](Walk& w) {
       w.ok("n 5", {s0()}, [](A) { return scipy::special::bernoulli(5); }, {6});
       w.ok("n 1", {s0()}, [](A) { return scipy::special::bernoulli(1); }, {2});
       w.err("n -1", {s0()}, [](A) { return scipy::special::bernoulli(-1); });
     }},
    JITX_SP_U(expi),
    JITX_SP_U(exp1),
    JITX_SP_B(expn),
    JITX_SP_B(betaln),
    JITX_SP_B(beta),
    JITX_SP_B(gammainc),
    JITX_SP_B(gammaincc),
    JITX_SP_B(poch),
    JITX_SP_B(xlogy),
    JITX_SP_B(xlog1py),
    JITX_SP_B(rel_entr),
    JITX_SP_B(kl_div),
    JITX_SP_B(boxcox),
    JITX_SP_B(boxcox1p),
    JITX_SP_B(zeta),
    {"scipy::special::log_ndtr",
     [](Walk& w) {
       unary(w, [](const Array& x) { return scipy::special::log_ndtr(x); });
       w.err("series_order -1", {f23()}, [](A a) { return scipy::special::log_ndtr(a[0], -1); });
       w.err("series_order 31", {f23()}, [](A a) { return scipy::special::log_ndtr(a[0], 31); });
     }},
    {"scipy::special::comb",
     [](Walk& w) {
       binary(
           w, [](const Array& x, const Array& y) { return scipy::special::comb(x, y); }, false);
       w.ok("repetition", {pos23(), s0()}, [](A a) { return scipy::special::comb(a[0], a[1], true); }, {2, 3});
     }},
    {"scipy::special::betainc",
     [](Walk& w) { ternary(w, [](auto& a, auto& b, auto& x) { return scipy::special::betainc(a, b, x); }); }},
    {"scipy::special::polygamma",
     [](Walk& w) {
       auto g = [](A a) { return scipy::special::polygamma(a[0], a[1]); };
       w.ok("i32[2,3], f32[2,3]", {i23(), pos23()}, g, {2, 3});
       w.ok("i32[], f32[0,3]", {Array(1), z03()}, g, {0, 3});
       w.err("f32 n", {pos23(), pos23()}, g);
       w.err("bool n", {b23(), pos23()}, g);
       w.err("i32[2,3], f32[4]", {i23(), f4()}, g);
       w.invalid([](A a) { return scipy::special::polygamma(Array(1), a[0]); });
     }},
    {"scipy::special::multigammaln",
     [](Walk& w) {
       w.ok("d = 3", {pos23()}, [](A a) { return scipy::special::multigammaln(a[0] + Array(2.0f), 3); }, {2, 3});
       w.ok("f32[0,3]", {z03()}, [](A a) { return scipy::special::multigammaln(a[0], 2); }, {0, 3});
       w.invalid([](A a) { return scipy::special::multigammaln(a[0], 2); });
     }},
    {"scipy::special::logsumexp",
     [](Walk& w) {
       reduction(
           w, [](const Array& x, std::vector<int64_t> axes) { return scipy::special::logsumexp(x, axes); }, true);
       w.ok("b of shape (3,)", {f23()}, [](A a) { return scipy::special::logsumexp(a[0], {1}, jnp::ones({3})); }, {2});
       w.err("b of shape (4,)", {f23(), f4()}, [](A a) { return scipy::special::logsumexp(a[0], {1}, a[1]); });
       w.ok("keepdims", {f23()}, [](A a) { return scipy::special::logsumexp(a[0], {0}, std::nullopt, true); }, {1, 3});
     }},
    {"scipy::special::logsumexp_with_sign",
     [](Walk& w) {
       w.ok("axis 1, b", {f23(), f23()},
            [](A a) { return scipy::special::logsumexp_with_sign(a[0], {1}, a[1]).second; }, {2});
       w.err("axis 2", {f23()}, [](A a) { return scipy::special::logsumexp_with_sign(a[0], {2}).first; });
       w.invalid([](A a) { return scipy::special::logsumexp_with_sign(a[0]).first; });
     }},
    {"scipy::special::softmax",
     [](Walk& w) { normalizer(w, [](auto& x, auto ax) { return scipy::special::softmax(x, ax); }); }},
    {"scipy::special::log_softmax",
     [](Walk& w) { normalizer(w, [](auto& x, auto ax) { return scipy::special::log_softmax(x, ax); }); }},
};

#undef JITX_SP_U
#undef JITX_SP_B

}  // namespace
