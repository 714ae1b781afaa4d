// The api walk's table, numpy_stats.h (see api_walk_table.h).
#pragma once
#include "jitx/numpy_set.h"
#include "jitx/numpy_stats.h"

namespace {

// jnp statistics and math (numpy_stats.h)
const std::vector<Case> kNumpyStats = {
    JITX_R(jnp, median, false),
    JITX_R(jnp, nanmedian, false),
    JITX_R(jnp, average, true),
    JITX_R(jnp, count_nonzero, true),
    JITX_R(jnp, ptp, false),
    JITX_R(jnp, nanvar, true),
    JITX_R(jnp, nanstd, true),
    JITX_R(jnp, nanprod, true),
    JITX_AX(jnp, nancumsum, Shape({2, 3})),
    JITX_AX(jnp, nancumprod, Shape({2, 3})),
    JITX_AX(jnp, nanargmax, {2}),
    JITX_AX(jnp, nanargmin, {2}),
    JITX_AX(jnp, cumulative_sum, Shape({2, 3})),
    JITX_AX(jnp, cumulative_prod, Shape({2, 3})),
    JITX_B(jnp, hypot, false),
    JITX_B(jnp, copysign, false),
    JITX_B(jnp, heaviside, false),
    JITX_B(jnp, float_power, false),
    JITX_BI(jnp, gcd),
    JITX_BI(jnp, lcm),
    JITX_U(jnp, signbit),
    JITX_U(jnp, sinc),
    JITX_U(jnp, deg2rad),
    JITX_U(jnp, rad2deg),
    JITX_U(jnp, radians),
    JITX_U(jnp, degrees),
    {"jnp::quantile",
     [](Walk& w) {
       w.err("axis 2 of rank 2", {f23()}, [](A a) { return jnp::quantile(a[0], 0.5, {2}); });
       w.err("axes (1, -1)", {f23()}, [](A a) { return jnp::quantile(a[0], 0.5, {1, -1}); });
       w.err("method 'cubic'", {f23()}, [](A a) { return jnp::quantile(a[0], 0.5, {1}, "cubic"); });
       w.err("an integer q", {f23()}, [](A a) { return jnp::quantile(a[0], 1); });
       w.err("q of shape (2, 3)", {f23(), pos23()}, [](A a) { return jnp::quantile(a[0], a[1]); });
       w.err("f32[0,3] over its empty axis 0", {z03()}, [](A a) { return jnp::quantile(a[0], 0.5, {0}); });
       w.ok("q f32[4], axis 1", {f23(), f4()}, [](A a) { return jnp::quantile(a[0], a[1], {1}); }, {4, 2});
       w.ok("f32[0,3] axis 1, keepdims", {z03()}, [](A a) { return jnp::quantile(a[0], 0.5, {1}, "lower", true); },
            {0, 1});
       w.ok("i32[2,3]", {i23()}, [](A a) { return jnp::quantile(a[0], 0.25); }, {});
       w.invalid([](A a) { return jnp::quantile(a[0], 0.5); });
       w.invalid([](A) { return jnp::quantile(f23(), Array()); });
     }},
    {"jnp::nanquantile",
     [](Walk& w) {
       w.err("axis -3 of rank 2", {f23()}, [](A a) { return jnp::nanquantile(a[0], 0.5, {-3}); });
       w.err("method 'bogus'", {f23()}, [](A a) { return jnp::nanquantile(a[0], 0.5, {}, "bogus"); });
       w.err("f32[0,3] over its empty axis 0", {z03()}, [](A a) { return jnp::nanquantile(a[0], 0.5, {0}); });
       w.ok("q f32[4], axes (0, 1), keepdims", {f23(), f4()},
            [](A a) {
              return jnp::nanquantile(a[0], a[1], {0, 1}, "nearest", true);
            },
            {4, 1, 1});
       w.invalid([](A a) { return jnp::nanquantile(a[0], 0.5); });
     }},
    {"jnp::percentile",
     [](Walk& w) {
       w.err("axis 2 of rank 2", {f23()}, [](A a) { return jnp::percentile(a[0], 50, {2}); });
       w.err("q of shape (2, 3)", {f23()}, [](A a) { return jnp::percentile(a[0], a[0]); });
       w.ok("an integer q", {f23()}, [](A a) { return jnp::percentile(a[0], 30, {0}); }, {3});
       w.invalid([](A a) { return jnp::percentile(a[0], 50); });
     }},
    {"jnp::nanpercentile",
     [](Walk& w) {
       w.err("method 'cubic'", {f23()}, [](A a) { return jnp::nanpercentile(a[0], 50, {}, "cubic"); });
       w.ok("q f32[4]", {f23(), f4()}, [](A a) { return jnp::nanpercentile(a[0], a[1], {1}); }, {4, 2});
       w.invalid([](A a) { return jnp::nanpercentile(a[0], 50); });
     }},
    {"jnp::average_returned",
     [](Walk& w) {
       w.err("weights (4,) for a (2,3)", {f23(), f4()},
             [](A a) { return jnp::average_returned(a[0], {}, a[1]).first; });
       w.err("weights (4,) along axis 1", {f23(), f4()},
             [](A a) { return jnp::average_returned(a[0], {1}, a[1]).second; });
       w.err("axis 2", {f23()}, [](A a) { return jnp::average_returned(a[0], {2}).first; });
       w.ok("weights (3,) along axis 1", {f23(), ones({3})},
            [](A a) { return jnp::average_returned(a[0], {1}, a[1]).second; }, {2});
       w.ok("f32[0,3] axis 0", {z03()}, [](A a) { return jnp::average_returned(a[0], {0}).second; }, {3});
       w.invalid([](A a) { return jnp::average_returned(a[0]).first; });
     }},
    {"jnp::cov",
     [](Walk& w) {
       w.err("3-d m", {ones({2, 2, 2})}, [](A a) { return jnp::cov(a[0]); });
       w.err("y (2,4) for m (2,3)", {f23(), ones({2, 4})}, [](A a) { return jnp::cov(a[0], a[1]); });
       w.err("float fweights", {f23(), ones({3})},
             [](A a) { return jnp::cov(a[0], std::nullopt, true, false, std::nullopt, a[1]); });
       w.err("aweights (4,) for 3 observations", {f23(), f4()},
             [](A a) { return jnp::cov(a[0], std::nullopt, true, false, std::nullopt, std::nullopt, a[1]); });
       w.ok("f32[2,3]", {f23()}, [](A a) { return jnp::cov(a[0]); }, {2, 2});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::cov(a[0]); }, {0, 0});
       w.ok("f32[3,0] rowvar false", {zeros({0, 3})}, [](A a) { return jnp::cov(a[0], std::nullopt, false); }, {3, 3});
       w.ok("i32 fweights", {f23(), testing::make({1, 2, 3}, DType::int32)},
            [](A a) { return jnp::cov(a[0], std::nullopt, true, false, 0, a[1]); }, {2, 2});
       w.invalid([](A a) { return jnp::cov(a[0]); });
     }},
    {"jnp::corrcoef",
     [](Walk& w) {
       w.err("3-d x", {ones({2, 2, 2})}, [](A a) { return jnp::corrcoef(a[0]); });
       w.ok("f32[2,3]", {f23()}, [](A a) { return jnp::corrcoef(a[0]); }, {2, 2});
       w.ok("f32[4]", {f4()}, [](A a) { return jnp::corrcoef(a[0]); }, {});
       w.invalid([](A a) { return jnp::corrcoef(a[0]); });
     }},
    {"jnp::ldexp",
     [](Walk& w) {
       Array e = testing::make({1, -2, 3}, DType::int32);
       w.err("a float exponent", {f23(), f23()}, [](A a) { return jnp::ldexp(a[0], a[1]); });
       w.err("(2,3) and (4,)", {f23(), testing::make({1, 2, 3, 4}, DType::int32)},
             [](A a) { return jnp::ldexp(a[0], a[1]); });
       w.ok("f32[2,3], i32[3]", {f23(), e}, [](A a) { return jnp::ldexp(a[0], a[1]); }, {2, 3});
       w.ok("f32[0,3], i32[3]", {z03(), e}, [](A a) { return jnp::ldexp(a[0], a[1]); }, {0, 3});
       w.ok("i32, bool", {i23(), b23()}, [](A a) { return jnp::ldexp(a[0], a[1]); }, {2, 3});
       w.invalid([](A a) { return jnp::ldexp(a[0], Array(1)); });
     }},
    {"jnp::polyval",
     [](Walk& w) {
       w.err("0-d p", {s0(), f4()}, [](A a) { return jnp::polyval(a[0], a[1]); });
       w.err("p (2,3) at x (4,)", {f23(), f4()}, [](A a) { return jnp::polyval(a[0], a[1]); });
       w.ok("p (4,) at x (2,3)", {f4(), f23()}, [](A a) { return jnp::polyval(a[0], a[1]); }, {2, 3});
       w.ok("p (0,3) at x ()", {z03(), s0()}, [](A a) { return jnp::polyval(a[0], a[1]); }, {3});
       w.invalid([](A a) { return jnp::polyval(a[0], Array(1.0f)); });
     }},
    {"jnp::interp",
     [](Walk& w) {
       w.err("xp (4,), fp (2,3)", {f23(), f4(), f23()}, [](A a) { return jnp::interp(a[0], a[1], a[2]); });
       w.err("empty xp", {f23(), zeros({0}), zeros({0})}, [](A a) { return jnp::interp(a[0], a[1], a[2]); });
       w.err("left 'nearest'", {f23(), f4(), f4()}, [](A a) { return jnp::interp(a[0], a[1], a[2], "nearest"); });
       w.err("period (4,)", {f23(), f4(), f4()}, [](A a) { return jnp::interp(a[0], a[1], a[2], {}, {}, a[1]); });
       w.ok("x (2,3), period", {f23(), f4(), f4()},
            [](A a) { return jnp::interp(a[0], a[1], a[2], {}, {}, Array(2.0)); }, {2, 3});
       w.ok("x f32[0,3], extrapolate", {z03(), f4(), f4()},
            [](A a) { return jnp::interp(a[0], a[1], a[2], "extrapolate", "extrapolate"); }, {0, 3});
       w.invalid([](A a) { return jnp::interp(a[0], ones({2}), ones({2})); });
     }},
    {"jnp::trapezoid",
     [](Walk& w) {
       w.err("axis 2", {f23()}, [](A a) { return jnp::trapezoid(a[0], std::nullopt, 1.0, 2); });
       w.err("0-d y", {s0()}, [](A a) { return jnp::trapezoid(a[0]); });
       w.err("f32[0,3] along its empty axis 0", {z03()},
             [](A a) { return jnp::trapezoid(a[0], std::nullopt, 1.0, 0); });
       w.err("x (4,) for y (2,3)", {f23(), f4()}, [](A a) { return jnp::trapezoid(a[0], a[1]); });
       w.ok("x (3,)", {f23(), ones({3})}, [](A a) { return jnp::trapezoid(a[0], a[1]); }, {2});
       w.ok("f32[0,3] axis 1", {z03()}, [](A a) { return jnp::trapezoid(a[0]); }, {0});
       w.invalid([](A a) { return jnp::trapezoid(a[0]); });
     }},
    {"jnp::convolve",
     [](Walk& w) {
       w.err("2-d input", {f23(), f4()}, [](A a) { return jnp::convolve(a[0], a[1]); });
       w.err("an empty input", {f4(), zeros({0})}, [](A a) { return jnp::convolve(a[0], a[1]); });
       w.err("mode 'circular'", {f4(), f4()}, [](A a) { return jnp::convolve(a[0], a[1], "circular"); });
       w.ok("(4,), (3,) same", {f4(), ones({3})}, [](A a) { return jnp::convolve(a[0], a[1], "same"); }, {4});
       w.ok("i32 and bool", {testing::make({1, 2}, DType::int32), testing::make({1, 0, 1}, DType::bool_)},
            [](A a) { return jnp::convolve(a[0], a[1]); }, {4});
       w.invalid([](A a) { return jnp::convolve(a[0], ones({2})); });
     }},
    {"jnp::correlate",
     [](Walk& w) {
       w.err("0-d input", {s0(), f4()}, [](A a) { return jnp::correlate(a[0], a[1]); });
       w.err("mode 'bogus'", {f4(), f4()}, [](A a) { return jnp::correlate(a[0], a[1], "bogus"); });
       w.ok("(3,), (4,) valid", {ones({3}), f4()}, [](A a) { return jnp::correlate(a[0], a[1]); }, {2});
       w.invalid([](A a) { return jnp::correlate(a[0], ones({2})); });
     }},
    {"jnp::bincount",
     [](Walk& w) {
       Array x = testing::make({0, 3, 1, -2}, DType::int32);
       w.err("float x", {f4()}, [](A a) { return jnp::bincount(a[0], std::nullopt, 0, 4); });
       w.err("2-d x", {i23()}, [](A a) { return jnp::bincount(a[0], std::nullopt, 0, 4); });
       w.err("weights (3,) for x (4,)", {x, ones({3})}, [](A a) { return jnp::bincount(a[0], a[1], 0, 4); });
       w.err("length -1", {x}, [](A a) { return jnp::bincount(a[0], std::nullopt, 0, -1); });
       w.err("length 2^62", {x}, [](A a) { return jnp::bincount(a[0], std::nullopt, 0, kHuge); });
       w.ok("length 2", {x, f4()}, [](A a) { return jnp::bincount(a[0], a[1], 0, 2); }, {2});
       w.ok("empty x, length 3", {zeros({0}, DType::int32)},
            [](A a) { return jnp::bincount(a[0], std::nullopt, 0, 3); }, {3});
       w.invalid([](A a) { return jnp::bincount(a[0]); });
     }},
    {"jnp::digitize",
     [](Walk& w) {
       w.err("2-d bins", {f4(), f23()}, [](A a) { return jnp::digitize(a[0], a[1]); });
       w.ok("x (2,3), bins (4,)", {f23(), f4()}, [](A a) { return jnp::digitize(a[0], a[1], true); }, {2, 3});
       w.ok("empty bins", {f23(), zeros({0})}, [](A a) { return jnp::digitize(a[0], a[1]); }, {2, 3});
       w.ok("x f32[0,3]", {z03(), f4()}, [](A a) { return jnp::digitize(a[0], a[1]); }, {0, 3});
       w.invalid([](A a) { return jnp::digitize(a[0], ones({2})); });
     }},
    {"jnp::histogram",
     [](Walk& w) {
       w.err("bins -1", {f23()}, [](A a) { return jnp::histogram(a[0], -1).first; });
       w.err("bins 2^62", {f23()}, [](A a) { return jnp::histogram(a[0], kHuge, std::make_pair(0.0, 1.0)).first; });
       w.err("2-d edges", {f4(), f23()}, [](A a) { return jnp::histogram(a[0], a[1]).first; });
       w.err("weights (4,) for a (2,3)", {f23(), f4()},
             [](A a) { return jnp::histogram(a[0], 3, std::nullopt, a[1]).first; });
       w.err("empty a without range", {z03()}, [](A a) { return jnp::histogram(a[0], 3).first; });
       w.ok("3 bins", {f23()}, [](A a) { return jnp::histogram(a[0], 3).first; }, {3});
       w.ok("edges (4,), density", {f23(), ones({4})},
            [](A a) { return jnp::histogram(a[0], a[1], std::nullopt, true).second; }, {4});
       w.ok("empty a with range", {z03()}, [](A a) { return jnp::histogram(a[0], 2, std::make_pair(0.0, 1.0)).first; },
            {2});
       w.invalid([](A a) { return jnp::histogram(a[0]).first; });
     }},
    {"jnp::histogram_bin_edges",
     [](Walk& w) {
       w.err("bins -2", {f23()}, [](A a) { return jnp::histogram_bin_edges(a[0], -2); });
       w.err("2-d edges", {f4(), f23()}, [](A a) { return jnp::histogram_bin_edges(a[0], a[1]); });
       w.ok("4 bins", {f23()}, [](A a) { return jnp::histogram_bin_edges(a[0], 4); }, {5});
       w.ok("i32 edges", {f4(), testing::make({1, 2}, DType::int32)},
            [](A a) { return jnp::histogram_bin_edges(a[0], a[1]); }, {2});
       w.invalid([](A a) { return jnp::histogram_bin_edges(a[0]); });
     }},
    {"jnp::isin",
     [](Walk& w) {
       w.ok("(2,3) in (4,)", {f23(), f4()}, [](A a) { return jnp::isin(a[0], a[1]); }, {2, 3});
       w.ok("f32[0,3] in (4,), invert", {z03(), f4()}, [](A a) { return jnp::isin(a[0], a[1], false, true); }, {0, 3});
       w.ok("0-d in empty", {s0(), zeros({0})}, [](A a) { return jnp::isin(a[0], a[1]); }, {});
       w.invalid([](A a) { return jnp::isin(a[0], ones({2})); });
     }},
    {"jnp::unique",
     [](Walk& w) {
       w.ok("(2,3), size 4", {f23()}, [](A a) { return jnp::unique(a[0], 4); }, {4});
       w.ok("(0,3), size 2, fill", {z03()}, [](A a) { return jnp::unique(a[0], 2, Array(1.0f)); }, {2});
       w.err("(0,3), size 2, no fill", {z03()}, [](A a) { return jnp::unique(a[0], 2); });
       w.err("size -1", {f23()}, [](A a) { return jnp::unique(a[0], -1); });
       w.err("fill of shape (4,)", {f23()}, [](A a) { return jnp::unique(a[0], 3, f4()); });
       w.ok("(2,3) axis 1, size 4", {f23()}, [](A a) { return jnp::unique(a[0], 4, std::nullopt, true, 1); }, {2, 4});
       w.ok("(0,3) axis 1, size 2 (as JAX: one empty slice)", {z03()},
            [](A a) { return jnp::unique(a[0], 2, std::nullopt, true, 1); }, {0, 1});
       w.err("(2,3) axis 2", {f23()}, [](A a) { return jnp::unique(a[0], 2, std::nullopt, true, 2); });
       w.err("0-d axis 0", {s0()}, [](A a) { return jnp::unique(a[0], 1, std::nullopt, true, 0); });
       w.invalid([](A a) { return jnp::unique(a[0]); });
     }},
    {"jnp::unique_all",
     [](Walk& w) {
       w.ok("(2,3) size 5: inverse", {f23()}, [](A a) { return jnp::unique_all(a[0], 5).inverse; }, {2, 3});
       w.ok("0-d, size 1: counts", {s0()}, [](A a) { return jnp::unique_all(a[0], 1, std::nullopt, true).counts; },
            {1});
       w.err("size -2", {f23()}, [](A a) { return jnp::unique_all(a[0], -2).values; });
       w.invalid([](A a) { return jnp::unique_all(a[0]).values; });
     }},
    {"jnp::unique_values",
     [](Walk& w) {
       w.ok("(4,) size 2", {f4()}, [](A a) { return jnp::unique_values(a[0], 2); }, {2});
       w.invalid([](A a) { return jnp::unique_values(a[0]); });
     }},
    {"jnp::unique_counts",
     [](Walk& w) {
       w.ok("(4,) size 6", {f4()}, [](A a) { return jnp::unique_counts(a[0], 6).second; }, {6});
       w.invalid([](A a) { return jnp::unique_counts(a[0]).first; });
     }},
    {"jnp::unique_inverse",
     [](Walk& w) {
       w.ok("(2,3) size 1", {f23()}, [](A a) { return jnp::unique_inverse(a[0], 1).second; }, {2, 3});
       w.invalid([](A a) { return jnp::unique_inverse(a[0]).first; });
     }},
    {"jnp::union1d",
     [](Walk& w) {
       w.ok("(2,3) and (4,), size 10", {f23(), f4()}, [](A a) { return jnp::union1d(a[0], a[1], 10); }, {10});
       w.err("size -1", {f23(), f4()}, [](A a) { return jnp::union1d(a[0], a[1], -1); });
       w.invalid([](A a) { return jnp::union1d(a[0], f4()); });
     }},
    {"jnp::logspace",
     [](Walk& w) {
       w.err("num -1", {}, [](A) { return jnp::logspace(0.0, 1.0, -1); });
       w.err("axis 1", {}, [](A) { return jnp::logspace(0.0, 1.0, 3, true, 10.0, DType::float32, 1); });
       w.err("DType(200)", {}, [](A) { return jnp::logspace(0.0, 1.0, 3, true, 10.0, DType(200)); });
       w.err("num 2^62", {}, [](A) { return jnp::logspace(0.0, 1.0, kHuge); });
       w.ok("num 0", {}, [](A) { return jnp::logspace(0.0, 1.0, 0); }, {0});
       w.ok("int32, axis -1", {}, [](A) { return jnp::logspace(0.0, 2.0, 3, true, 10.0, DType::int32, -1); }, {3});
     }},
    {"jnp::geomspace",
     [](Walk& w) {
       w.err("num -5", {}, [](A) { return jnp::geomspace(1.0, 2.0, -5); });
       w.err("axis -2", {}, [](A) { return jnp::geomspace(1.0, 2.0, 3, true, DType::float32, -2); });
       w.ok("bool dtype", {}, [](A) { return jnp::geomspace(1.0, 2.0, 3, true, DType::bool_); }, {3});
       w.ok("num 1", {}, [](A) { return jnp::geomspace(1.0, 8.0, 1); }, {1});
       w.ok("signs differ (NaN)", {}, [](A) { return jnp::geomspace(-1.0, 8.0, 4, false); }, {4});
     }},
};

}  // namespace
