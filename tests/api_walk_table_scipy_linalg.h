// The api walk's table: jax.scipy.linalg (scipy_linalg.h), see api_walk_table.h.
#pragma once
#include "jitx/scipy_linalg.h"

namespace {

Array spd3() { return jnp::add(jnp::eye(3), jitx::full({3, 3}, 0.1)); }
Array b32() { return testing::make(testing::uniform(6, -1, 1), {3, 2}, DType::float32); }

const std::vector<Case> kScipyLinalg = {
    {"scipy::linalg::cholesky",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::cholesky(a[0]); }, {3, 3});
       w.ok("(0,0)", {jnp::zeros({0, 0})}, [](A a) { return scipy::linalg::cholesky(a[0], true); }, {0, 0});
       w.err("(2,3)", {f23()}, [](A a) { return scipy::linalg::cholesky(a[0]); });
       w.err("(3,)", {f4()}, [](A a) { return scipy::linalg::cholesky(a[0]); });
       w.invalid([](A a) { return scipy::linalg::cholesky(a[0]); });
     }},
    {"scipy::linalg::cho_factor",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::cho_factor(a[0]).c; }, {3, 3});
       w.err("(2,3)", {f23()}, [](A a) { return scipy::linalg::cho_factor(a[0]).c; });
       w.invalid([](A a) { return scipy::linalg::cho_factor(a[0]).c; });
     }},
    {"scipy::linalg::cho_solve",
     [](Walk& w) {
       auto f = [](A a) { return scipy::linalg::cho_solve({a[0], false}, a[1]); };
       w.ok("(3,3), (3,2)", {spd3(), b32()}, f, {3, 2});
       w.ok("(3,3), (3,)", {spd3(), jnp::ones({3})}, f, {3});
       w.err("(3,3), (4,)", {spd3(), f4()}, f);
       w.err("(2,3), (3,)", {f23(), jnp::ones({3})}, f);
       w.invalid([](A a) { return scipy::linalg::cho_solve({a[0], true}, jnp::ones({3})); });
     }},
    {"scipy::linalg::lu",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::lu(a[0]).u; }, {2, 3});
       w.ok("(3,2) p", {jnp::transpose(f23())}, [](A a) { return scipy::linalg::lu(a[0]).p; }, {3, 3});
       w.err("(4,)", {f4()}, [](A a) { return scipy::linalg::lu(a[0]).l; });
       w.invalid([](A a) { return scipy::linalg::lu(a[0]).l; });
     }},
    {"scipy::linalg::lu_factor",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::lu_factor(a[0]).piv; }, {3});
       w.err("(4,)", {f4()}, [](A a) { return scipy::linalg::lu_factor(a[0]).lu; });
       w.invalid([](A a) { return scipy::linalg::lu_factor(a[0]).lu; });
     }},
    {"scipy::linalg::lu_solve",
     [](Walk& w) {
       auto f = [](A a) { return scipy::linalg::lu_solve(scipy::linalg::lu_factor(a[0]), a[1], 1); };
       w.ok("(3,3), (3,2)", {spd3(), b32()}, f, {3, 2});
       w.err("(3,3), (4,)", {spd3(), f4()}, f);
       w.err("trans 3", {spd3(), b32()},
             [](A a) { return scipy::linalg::lu_solve(scipy::linalg::lu_factor(a[0]), a[1], 3); });
       w.err("float pivots", {spd3(), b32()}, [](A a) { return scipy::linalg::lu_solve({a[0], a[0]}, a[1]); });
       w.invalid([](A a) { return scipy::linalg::lu_solve({a[0], Array(1)}, jnp::ones({3})); });
     }},
    {"scipy::linalg::solve_triangular",
     [](Walk& w) {
       auto f = [](A a) { return scipy::linalg::solve_triangular(a[0], a[1], 0, true); };
       w.ok("(3,3), (3,2)", {spd3(), b32()}, f, {3, 2});
       w.ok("(2,3,3), (3,2)", {jnp::stack({spd3(), spd3()}), b32()}, f, {2, 3, 2});
       w.err("(3,3), (4,)", {spd3(), f4()}, f);
       w.err("trans 5", {spd3(), b32()}, [](A a) { return scipy::linalg::solve_triangular(a[0], a[1], 5); });
       w.invalid([](A a) { return scipy::linalg::solve_triangular(a[0], jnp::ones({3})); });
     }},
    {"scipy::linalg::solve",
     [](Walk& w) {
       w.ok("pos", {spd3(), b32()}, [](A a) { return scipy::linalg::solve(a[0], a[1], false, "pos"); }, {3, 2});
       w.ok("gen", {spd3(), b32()}, [](A a) { return scipy::linalg::solve(a[0], a[1]); }, {3, 2});
       w.err("assume_a banded", {spd3(), b32()}, [](A a) { return scipy::linalg::solve(a[0], a[1], false, "banded"); });
       w.err("(3,3), (4,)", {spd3(), f4()}, [](A a) { return scipy::linalg::solve(a[0], a[1], false, "pos"); });
       w.invalid([](A a) { return scipy::linalg::solve(a[0], jnp::ones({3}), false, "pos"); });
     }},
    {"scipy::linalg::expm",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::expm(a[0]); }, {3, 3});
       w.ok("(2,3,3)", {jnp::stack({spd3(), spd3()})}, [](A a) { return scipy::linalg::expm(a[0]); }, {2, 3, 3});
       w.err("(2,3)", {f23()}, [](A a) { return scipy::linalg::expm(a[0]); });
       w.err("bf16", {spd3().astype(DType::bfloat16)}, [](A a) { return scipy::linalg::expm(a[0]); });
       w.invalid([](A a) { return scipy::linalg::expm(a[0]); });
     }},
    {"scipy::linalg::block_diag",
     [](Walk& w) {
       w.ok("(2,3), (4,), scalar", {f23(), f4(), s0()}, [](A a) { return scipy::linalg::block_diag(a); }, {4, 8});
       w.ok("none", {}, [](A) { return scipy::linalg::block_diag({}); }, {1, 0});
       w.err("(2,2,2)", {jnp::zeros({2, 2, 2})}, [](A a) { return scipy::linalg::block_diag(a); });
       w.invalid([](A a) { return scipy::linalg::block_diag(a); });
     }},
    {"scipy::linalg::toeplitz",
     [](Walk& w) {
       w.ok("(4,), (3,)", {f4(), jnp::ones({3})}, [](A a) { return scipy::linalg::toeplitz(a[0], a[1]); }, {4, 3});
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::toeplitz(a[0]); }, {2, 3, 3});
       w.ok("(0,)", {jnp::zeros({0})}, [](A a) { return scipy::linalg::toeplitz(a[0]); }, {0, 0});
       w.err("(2,3), (4,3)", {f23(), jnp::zeros({4, 3})}, [](A a) { return scipy::linalg::toeplitz(a[0], a[1]); });
       w.invalid([](A a) { return scipy::linalg::toeplitz(a[0]); });
     }},
    {"scipy::linalg::hilbert",
     [](Walk& w) {
       w.ok("3", {}, [](A) { return scipy::linalg::hilbert(3); }, {3, 3});
       w.ok("0", {}, [](A) { return scipy::linalg::hilbert(0); }, {0, 0});
       w.err("-1", {}, [](A) { return scipy::linalg::hilbert(-1); });
     }},
    {"scipy::linalg::det",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::det(a[0]); }, {});
       w.err("(2,3)", {f23()}, [](A a) { return scipy::linalg::det(a[0]); });
       w.invalid([](A a) { return scipy::linalg::det(a[0]); });
     }},
    {"scipy::linalg::inv",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::inv(a[0]); }, {3, 3});
       w.err("(2,3)", {f23()}, [](A a) { return scipy::linalg::inv(a[0]); });
       w.invalid([](A a) { return scipy::linalg::inv(a[0]); });
     }},
    {"scipy::linalg::eigh",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::eigh(a[0]).v; }, {3, 3});
       w.err("(2,3)", {f23()}, [](A a) { return scipy::linalg::eigh(a[0]).w; });
       w.invalid([](A a) { return scipy::linalg::eigh(a[0]).w; });
     }},
    {"scipy::linalg::qr",
     [](Walk& w) {
       w.ok("(2,3) economic", {f23()}, [](A a) { return scipy::linalg::qr(a[0], "economic").r; }, {2, 3});
       w.err("mode 'raw'", {f23()}, [](A a) { return scipy::linalg::qr(a[0], "raw").r; });
       w.err("pivoting", {f23()}, [](A a) { return scipy::linalg::qr(a[0], "full", true).r; });
       w.err("(3,)", {f4()}, [](A a) { return scipy::linalg::qr(a[0]).r; });
       w.invalid([](A a) { return scipy::linalg::qr(a[0]).r; });
     }},
    {"scipy::linalg::svd",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::svd(a[0], false).vh; }, {2, 3});
       w.err("(3,)", {f4()}, [](A a) { return scipy::linalg::svd(a[0]).s; });
       w.invalid([](A a) { return scipy::linalg::svd(a[0]).s; });
     }},
    {"scipy::linalg::polar",
     [](Walk& w) {
       w.ok("(3,3)", {spd3()}, [](A a) { return scipy::linalg::polar(a[0]).p; }, {3, 3});
       w.ok("(2,3) left", {f23()}, [](A a) { return scipy::linalg::polar(a[0], "left").p; }, {2, 2});
       w.err("(2,3) right with qdwh", {f23()}, [](A a) { return scipy::linalg::polar(a[0]).u; });
       w.err("side 'up'", {spd3()}, [](A a) { return scipy::linalg::polar(a[0], "up").u; });
       w.err("(3,)", {f4()}, [](A a) { return scipy::linalg::polar(a[0]).u; });
       w.invalid([](A a) { return scipy::linalg::polar(a[0]).u; });
     }},
    {"scipy::linalg::expm_frechet",
     [](Walk& w) {
       w.ok("(3,3), (3,3)", {spd3(), spd3()},
            [](A a) { return scipy::linalg::expm_frechet(a[0], a[1]).frechet; }, {3, 3});
       w.err("(3,3), (2,3)", {spd3(), f23()}, [](A a) { return scipy::linalg::expm_frechet(a[0], a[1]).expm; });
       w.invalid([](A a) { return scipy::linalg::expm_frechet(a[0], a[0]).expm; });
     }},
    {"scipy::linalg::hankel",
     [](Walk& w) {
       w.ok("(4,), (3,)", {f4(), jnp::ones({3})}, [](A a) { return scipy::linalg::hankel(a[0], a[1]); }, {4, 3});
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::hankel(a[0]); }, {2, 3, 3});
       w.err("a scalar", {s0()}, [](A a) { return scipy::linalg::hankel(a[0]); });
       w.err("(2,3), (4,3)", {f23(), jnp::zeros({4, 3})}, [](A a) { return scipy::linalg::hankel(a[0], a[1]); });
       w.invalid([](A a) { return scipy::linalg::hankel(a[0]); });
     }},
    {"scipy::linalg::circulant",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::circulant(a[0]); }, {2, 3, 3});
       w.ok("a scalar", {s0()}, [](A a) { return scipy::linalg::circulant(a[0]); }, {1, 1});
       w.invalid([](A a) { return scipy::linalg::circulant(a[0]); });
     }},
    {"scipy::linalg::companion",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::companion(a[0]); }, {2, 2, 2});
       w.err("a scalar", {s0()}, [](A a) { return scipy::linalg::companion(a[0]); });
       w.invalid([](A a) { return scipy::linalg::companion(a[0]); });
     }},
    {"scipy::linalg::convolution_matrix",
     [](Walk& w) {
       w.ok("(4,), n 3", {f4()}, [](A a) { return scipy::linalg::convolution_matrix(a[0], 3); }, {6, 3});
       w.ok("(2,3), n 2, same", {f23()}, [](A a) { return scipy::linalg::convolution_matrix(a[0], 2, "same"); },
            {2, 3, 2});
       w.err("n 0", {f4()}, [](A a) { return scipy::linalg::convolution_matrix(a[0], 0); });
       w.err("mode 'half'", {f4()}, [](A a) { return scipy::linalg::convolution_matrix(a[0], 2, "half"); });
       w.err("a scalar", {s0()}, [](A a) { return scipy::linalg::convolution_matrix(a[0], 2); });
       w.invalid([](A a) { return scipy::linalg::convolution_matrix(a[0], 2); });
     }},
    {"scipy::linalg::fiedler",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::fiedler(a[0]); }, {2, 3, 3});
       w.invalid([](A a) { return scipy::linalg::fiedler(a[0]); });
     }},
    {"scipy::linalg::fiedler_companion",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::linalg::fiedler_companion(a[0]); }, {2, 2, 2});
       w.err("(0,)", {jnp::zeros({0})}, [](A a) { return scipy::linalg::fiedler_companion(a[0]); });
       w.invalid([](A a) { return scipy::linalg::fiedler_companion(a[0]); });
     }},
    {"scipy::linalg::hadamard",
     [](Walk& w) {
       w.ok("4", {}, [](A) { return scipy::linalg::hadamard(4); }, {4, 4});
       w.err("6", {}, [](A) { return scipy::linalg::hadamard(6); });
       w.err("0", {}, [](A) { return scipy::linalg::hadamard(0); });
     }},
    {"scipy::linalg::helmert",
     [](Walk& w) {
       w.ok("3", {}, [](A) { return scipy::linalg::helmert(3); }, {2, 3});
       w.ok("3 full", {}, [](A) { return scipy::linalg::helmert(3, true); }, {3, 3});
       w.err("0", {}, [](A) { return scipy::linalg::helmert(0); });
     }},
    {"scipy::linalg::invhilbert",
     [](Walk& w) {
       w.ok("3", {}, [](A) { return scipy::linalg::invhilbert(3); }, {3, 3});
       w.err("-1", {}, [](A) { return scipy::linalg::invhilbert(-1); });
     }},
    {"scipy::linalg::leslie",
     [](Walk& w) {
       w.ok("(2,3), (2,)", {f23(), jnp::ones({2})}, [](A a) { return scipy::linalg::leslie(a[0], a[1]); }, {2, 3, 3});
       w.err("(2,3), (3,)", {f23(), jnp::ones({3})}, [](A a) { return scipy::linalg::leslie(a[0], a[1]); });
       w.invalid([](A a) { return scipy::linalg::leslie(a[0], a[0]); });
     }},
    {"scipy::linalg::pascal",
     [](Walk& w) {
       w.ok("4 upper", {}, [](A) { return scipy::linalg::pascal(4, "upper"); }, {4, 4});
       w.err("kind 'diagonal'", {}, [](A) { return scipy::linalg::pascal(4, "diagonal"); });
       w.err("-1", {}, [](A) { return scipy::linalg::pascal(-1); });
     }},
    {"scipy::linalg::invpascal",
     [](Walk& w) {
       w.ok("4 lower", {}, [](A) { return scipy::linalg::invpascal(4, "lower"); }, {4, 4});
       w.err("kind 'diagonal'", {}, [](A) { return scipy::linalg::invpascal(4, "diagonal"); });
     }},
};

}  // namespace
