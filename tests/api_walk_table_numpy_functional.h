// The api walk's table, numpy_functional.h and the histogramdd/histogram2d/polyfit part of numpy_stats.h (see
// api_walk_table.h).
#pragma once
#include "jitx/numpy_functional.h"
#include "jitx/numpy_stats.h"

namespace {

const std::vector<Case> kNumpyFunctional = {
    {"jnp::histogramdd",
     [](Walk& w) {
       w.err("1-d sample", {f4()}, [](A a) { return jnp::histogramdd(a[0], 3).first; });
       w.err("bins for 1 of 3 dimensions", {f23()},
             [](A a) { return jnp::histogramdd(a[0], std::vector<jnp::HistogramBins>{2}).first; });
       w.err("weights (4,) for 2 points", {f23(), f4()}, [](A a) { return jnp::histogramdd(a[0], 2, {}, a[1]).first; });
       w.err("a range for 1 of 3 dimensions", {f23()}, [](A a) { return jnp::histogramdd(a[0], 2, {{0, 1}}).first; });
       w.ok("2 bins per dimension", {f23()}, [](A a) { return jnp::histogramdd(a[0], 2).first; }, {2, 2, 2});
       w.ok("edges (4,) for each", {f23(), f4()},
            [](A a) { return jnp::histogramdd(a[0], {a[1], 2, a[1]}, {}, std::nullopt, true).first; }, {3, 2, 3});
       w.invalid([](A a) { return jnp::histogramdd(a[0], 2).first; });
     }},
    {"jnp::histogram2d",
     [](Walk& w) {
       w.err("x (4,), y (2,3)", {f4(), f23()}, [](A a) { return std::get<0>(jnp::histogram2d(a[0], a[1], 3)); });
       w.err("3 bins entries", {f4(), f4()},
             [](A a) { return std::get<0>(jnp::histogram2d(a[0], a[1], std::vector<jnp::HistogramBins>{2, 2, 2})); });
       w.ok("3 bins", {f4(), f4()}, [](A a) { return std::get<0>(jnp::histogram2d(a[0], a[1], 3)); }, {3, 3});
       w.ok("edges for both", {f4(), f4(), f4()}, [](A a) { return std::get<0>(jnp::histogram2d(a[0], a[1], a[2])); },
            {3, 3});
       w.invalid([](A a) { return std::get<0>(jnp::histogram2d(a[0], a[0], 3)); });
     }},
    {"jnp::polyfit",
     [](Walk& w) {
       w.err("deg -1", {f4(), f4()}, [](A a) { return jnp::polyfit(a[0], a[1], -1); });
       w.err("2-d x", {f23(), f23()}, [](A a) { return jnp::polyfit(a[0], a[1], 1); });
       w.err("y of another length", {f4(), f23()}, [](A a) { return jnp::polyfit(a[0], a[1], 1); });
       w.err("int x without rcond", {i23(), f23()}, [](A a) { return jnp::polyfit(a[0].reshape({6}), a[1], 1); });
       w.ok("deg 2", {f4(), f4()}, [](A a) { return jnp::polyfit(a[0], a[1], 2); }, {3});
       w.ok("2-d y", {f4(), ones({4, 2})}, [](A a) { return jnp::polyfit(a[0], a[1], 1); }, {2, 2});
       w.invalid([](A a) { return jnp::polyfit(a[0], f4(), 1); });
     }},
    {"jnp::polyfit_full",
     [](Walk& w) {
       w.err("w of another length", {f4(), f4(), f23()},
             [](A a) { return jnp::polyfit_full(a[0], a[1], 1, std::nullopt, a[2].reshape({6})).c; });
       w.ok("deg 1: s", {f4(), f4()}, [](A a) { return jnp::polyfit_full(a[0], a[1], 1).s; }, {2});
       w.invalid([](A a) { return jnp::polyfit_full(a[0], f4(), 1).c; });
     }},
    {"jnp::polyfit_cov",
     [](Walk& w) {
       w.err("4 points, order 4", {f4(), f4()}, [](A a) { return jnp::polyfit_cov(a[0], a[1], 3).second; });
       w.ok("deg 1", {f4(), f4()}, [](A a) { return jnp::polyfit_cov(a[0], a[1], 1).second; }, {2, 2});
       w.ok("unscaled, 2-d y", {f4(), ones({4, 3})},
            [](A a) { return jnp::polyfit_cov(a[0], a[1], 1, std::nullopt, std::nullopt, true).second; }, {2, 2, 1});
       w.invalid([](A a) { return jnp::polyfit_cov(a[0], f4(), 1).second; });
     }},
    {"jnp::vectorize",
     [](Walk& w) {
       auto mv = [](A a, const char* sig) {
         return jnp::vectorize([](const Array& m, const Array& v) { return jnp::matmul(m, v); }, sig)(a[0], a[1]);
       };
       w.err("too few core dimensions", {f4(), f4()}, [=](A a) { return mv(a, "(n,m),(m)->(n)"); });
       w.err("core sizes 3 and 4", {f23(), f4()}, [=](A a) { return mv(a, "(n,m),(m)->(n)"); });
       w.err("a bad signature", {f23(), f4()}, [=](A a) { return mv(a, "(n,m),(m)->"); });
       w.err("loop dimensions 2 and 4", {f23(), ones({4, 3})}, [=](A a) { return mv(a, "(m),(m)->()"); });
       w.ok("(n,m),(m)->(n)", {f23(), ones({4, 3})}, [=](A a) { return mv(a, "(n,m),(m)->(n)"); }, {4, 2});
       w.ok("scalars", {f23(), f4().reshape({4, 1, 1})},
            [](A a) { return jnp::vectorize([](const Array& x, const Array& y) { return x * y; })(a[0], a[1]); },
            {4, 2, 3});
       w.invalid([](A a) { return jnp::vectorize([](const Array& x) { return x; })(a[0]); });
     }},
    {"jnp::apply_along_axis",
     [](Walk& w) {
       auto f = [](const Array& r) { return jnp::sum(r); };
       w.err("axis 2 of 2", {f23()}, [=](A a) { return jnp::apply_along_axis(f, 2, a[0]); });
       w.ok("axis 1", {f23()}, [=](A a) { return jnp::apply_along_axis(f, 1, a[0]); }, {2});
       w.ok("axis 0 of an empty (0, 3)", {z03()}, [=](A a) { return jnp::apply_along_axis(f, 0, a[0]); }, {3});
       w.invalid([=](A a) { return jnp::apply_along_axis(f, 0, a[0]); });
     }},
    {"jnp::apply_over_axes",
     [](Walk& w) {
       auto f = [](const Array& x, int64_t ax) { return jnp::sum(x, ax); };
       w.err("axis 2 of 2", {f23()}, [=](A a) { return jnp::apply_over_axes(f, a[0], {2}); });
       w.err("a full reduction", {f23()}, [](A a) {
         return jnp::apply_over_axes([](const Array& x, int64_t) { return jnp::sum(x); }, a[0], {0});
       });
       w.ok("axes 0 and 1", {f23()}, [=](A a) { return jnp::apply_over_axes(f, a[0], {0, 1}); }, {1, 1});
       w.invalid([=](A a) { return jnp::apply_over_axes(f, a[0], {0}); });
     }},
    {"jnp::piecewise",
     [](Walk& w) {
       auto sq = [](const Array& t) { return t * t; };
       w.err("3 functions for 1 condition", {f23()},
             [=](A a) { return jnp::piecewise(a[0], {a[0] > 0}, {sq, 1.0, 2.0}); });
       w.err("a (2,) constant", {f23()}, [](A a) { return jnp::piecewise(a[0], {a[0] > 0}, {ones({2})}); });
       w.err("conditions of two shapes", {f23()},
             [](A a) { return jnp::piecewise(a[0], {a[0] > 0, Array(true)}, {1.0, 2.0}); });
       w.ok("2 conditions and a default", {f23()},
            [=](A a) { return jnp::piecewise(a[0], {a[0] > 0, a[0] > 1}, {sq, 0.5, -1.0}); }, {2, 3});
       w.ok("an empty x", {z03()}, [=](A a) { return jnp::piecewise(a[0], {a[0] > 0}, {sq, 0.5}); }, {0, 3});
       w.invalid([=](A a) { return jnp::piecewise(a[0], {Array(true)}, {sq}); });
     }},
};

}  // namespace
