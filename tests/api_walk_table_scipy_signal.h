// The api walk's table: jax.scipy's signal, integrate, ndimage, cluster.vq and sparse.linalg (scipy_signal.h), see
// api_walk_table.h.
#pragma once
#include "jitx/scipy_signal.h"

namespace {

Array spd4() { return jnp::add(jnp::eye(4), jitx::full({4, 4}, 0.1)); }

const std::vector<Case> kScipySignal = {
    {"scipy::signal::convolve",
     [](Walk& w) {
       w.ok("(4,) * (4,)", {f4()}, [](A a) { return scipy::signal::convolve(a[0], a[0]); }, {7});
       w.err("ranks 1 and 2", {f4(), f23()}, [](A a) { return scipy::signal::convolve(a[0], a[1]); });
       w.err("(0,3)", {z03(), f23()}, [](A a) { return scipy::signal::convolve(a[1], a[0]); });
       w.err("fft", {f4()}, [](A a) { return scipy::signal::convolve(a[0], a[0], "full", "fft"); });
       w.ok("same", {f23(), f23()}, [](A a) { return scipy::signal::convolve(a[0], a[1], "same"); }, {2, 3});
       w.invalid([](A a) { return scipy::signal::convolve(a[0], f4()); });
     }},
    {"scipy::signal::correlate",
     [](Walk& w) {
       w.ok("valid", {f23(), f23()}, [](A a) { return scipy::signal::correlate(a[0], a[1], "valid"); }, {1, 1});
       w.err("mode 'middle'", {f4()}, [](A a) { return scipy::signal::correlate(a[0], a[0], "middle"); });
       w.invalid([](A a) { return scipy::signal::correlate(f4(), a[0]); });
     }},
    {"scipy::signal::convolve2d",
     [](Walk& w) {
       w.ok("(2,3) * (2,3)", {f23()}, [](A a) { return scipy::signal::convolve2d(a[0], a[0]); }, {3, 5});
       w.err("1-d", {f4()}, [](A a) { return scipy::signal::convolve2d(a[0], a[0]); });
       w.err("boundary wrap", {f23()}, [](A a) { return scipy::signal::convolve2d(a[0], a[0], "full", "wrap"); });
       w.invalid([](A a) { return scipy::signal::convolve2d(a[0], f23()); });
     }},
    {"scipy::signal::correlate2d",
     [](Walk& w) {
       w.ok("same", {f23()}, [](A a) { return scipy::signal::correlate2d(a[0], a[0], "same"); }, {2, 3});
       w.err("fillvalue 1", {f23()}, [](A a) { return scipy::signal::correlate2d(a[0], a[0], "full", "fill", 1); });
       w.invalid([](A a) { return scipy::signal::correlate2d(f23(), a[0]); });
     }},
    {"scipy::signal::detrend",
     [](Walk& w) {
       w.ok("linear", {f23()}, [](A a) { return scipy::signal::detrend(a[0]); }, {2, 3});
       w.ok("constant, axis 0", {f23()}, [](A a) { return scipy::signal::detrend(a[0], 0, "constant"); }, {2, 3});
       w.err("axis 2", {f23()}, [](A a) { return scipy::signal::detrend(a[0], 2); });
       w.err("breakpoint 5 of 3", {f23()}, [](A a) { return scipy::signal::detrend(a[0], 1, "linear", {5}); });
       w.invalid([](A a) { return scipy::signal::detrend(a[0]); });
     }},
    {"scipy::integrate::trapezoid",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return scipy::integrate::trapezoid(a[0]); }, {2});
       w.err("axis 2", {f23()}, [](A a) { return scipy::integrate::trapezoid(a[0], std::nullopt, 1.0, 2); });
       w.invalid([](A a) { return scipy::integrate::trapezoid(a[0]); });
     }},
    {"scipy::ndimage::map_coordinates",
     [](Walk& w) {
       w.ok("linear", {f23(), f4()}, [](A a) { return scipy::ndimage::map_coordinates(a[0], {a[1], a[1]}, 1); }, {4});
       w.err("one coordinate array for 2 dimensions", {f23(), f4()},
             [](A a) { return scipy::ndimage::map_coordinates(a[0], {a[1]}, 1); });
       w.err("order 2", {f23(), f4()}, [](A a) { return scipy::ndimage::map_coordinates(a[0], {a[1], a[1]}, 2); });
       w.invalid([](A a) { return scipy::ndimage::map_coordinates(a[0], {f4(), f4()}, 1); });
     }},
    {"scipy::cluster::vq::vq",
     [](Walk& w) {
       w.ok("(2,3) vs (2,3)", {f23()}, [](A a) { return scipy::cluster::vq::vq(a[0], a[0]).first; }, {2});
       w.err("ranks 2 and 1", {f23(), f4()}, [](A a) { return scipy::cluster::vq::vq(a[0], a[1]).first; });
       w.invalid([](A a) { return scipy::cluster::vq::vq(a[0], f23()).first; });
     }},
    {"scipy::sparse::linalg::cg",
     [](Walk& w) {
       w.ok("(4,4) x = (4,)", {spd4(), f4()}, [](A a) { return scipy::sparse::linalg::cg(a[0], a[1]).first; }, {4});
       w.err("(2,3) matrix", {f23(), f4()}, [](A a) { return scipy::sparse::linalg::cg(a[0], a[1]).first; });
       w.err("x0 (2,3)", {spd4(), f4(), f23()}, [](A a) { return scipy::sparse::linalg::cg(a[0], a[1], a[2]).first; });
       w.invalid([](A a) { return scipy::sparse::linalg::cg(spd4(), a[0]).first; });
     }},
    {"scipy::sparse::linalg::bicgstab",
     [](Walk& w) {
       w.ok("(4,4) x = (4,)", {spd4(), f4()}, [](A a) { return scipy::sparse::linalg::bicgstab(a[0], a[1]).first; },
            {4});
       w.err("int b", {spd4()}, [](A a) {
         return scipy::sparse::linalg::bicgstab(a[0], jnp::array({1, 2, 3, 4})).first;
       });
       w.invalid([](A a) { return scipy::sparse::linalg::bicgstab(a[0], f4()).first; });
     }},
};

}  // namespace
