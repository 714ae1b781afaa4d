// jnp's functional helpers (vectorize, apply_along_axis, apply_over_axes, piecewise) against double loops over
// random inputs, and jnp.linspace / histogram_bin_edges / histogramdd / histogram2d / polyfit against JAX 0.10.2
// (tests/functional_refs.h from tools/gen_functional_refs.py, x64 on CPU), eager and under jit.
#include "jitx/numpy_functional.h"

#include <cmath>
#include <string>
#include <tuple>

#include "functional_refs.h"
#include "jitx/jitx.h"
#include "test_util.h"

namespace {
using namespace jitx;
using namespace jitx::testing;
namespace jnp = jitx::numpy;
namespace fr = functional_refs;

DType dtype_named(const std::string& n) {
  if (n == "float32") return DType::float32;
  if (n == "float64") return DType::float64;
  if (n == "float16") return DType::float16;
  return DType::bfloat16;
}
Array f64(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float64); }
std::vector<double> vals(const Array& a) { return a.astype(DType::float64).to_vector<double>(); }

/// Equal bit for bit (as doubles holding the dtype's values; NaN equals NaN).
void require_same(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK((got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))));
  }
}
/// |got - want| <= rtol * max(|want|, scale).
void require_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double scale,
                   const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(std::fabs(got[i] - want[i]) <= rtol * std::max(std::fabs(want[i]), scale));
  }
}

TEST_CASE("jnp::vectorize: gufunc signatures, broadcasting of the loop dimensions, tuples, errors", "[jnp][vmap]") {
  // Cross products over broadcast loop dimensions (2, 1, 3) x (4, 3) -> (2, 4, 3), against a double loop.
  auto cross = jnp::vectorize(
      [](const Array& u, const Array& v) {
        return jnp::stack({u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]});
      },
      "(k),(k)->(k)");
  auto ua = uniform(6, -2, 2), va = uniform(12, -2, 2);
  Array r = cross(f64(ua, {2, 1, 3}), f64(va, {4, 3}));
  REQUIRE(r.shape() == Shape{2, 4, 3});
  auto got = vals(r);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      const double* u = &ua[static_cast<size_t>(i * 3)];
      const double* v = &va[static_cast<size_t>(j * 3)];
      double want[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
      for (int c = 0; c < 3; ++c) CHECK(got[static_cast<size_t>((i * 4 + j) * 3 + c)] == want[c]);
    }
  // Matrix-vector products: one (2, 3) matrix against (4, 1, 3) vectors -> (4, 1, 2): the matrix is not mapped.
  auto mv = jnp::vectorize([](const Array& m, const Array& v) { return jnp::matmul(m, v); }, "(n,m),(m)->(n)");
  auto ma = uniform(6, -1, 1), xa = uniform(12, -1, 1);
  Array p = mv(f64(ma, {2, 3}), f64(xa, {4, 1, 3}));
  REQUIRE(p.shape() == Shape{4, 1, 2});
  auto pv = vals(p);
  for (int b = 0; b < 4; ++b)
    for (int n = 0; n < 2; ++n) {
      double s = 0;
      for (int m = 0; m < 3; ++m) s += ma[static_cast<size_t>(n * 3 + m)] * xa[static_cast<size_t>(b * 3 + m)];
      CHECK(pv[static_cast<size_t>(b * 2 + n)] == Approx(s).epsilon(1e-14));
    }
  // No signature: f sees scalars; the outputs may have any shape (here (2,) per element).
  std::vector<int> shapes_seen;
  auto pair = jnp::vectorize([&](const Array& x, const Array& y) {
    shapes_seen.push_back(static_cast<int>(x.ndim() + y.ndim()));
    return jnp::stack({x + y, x * y});
  });
  auto xs = uniform(3, -3, 3), ys = uniform(2, -3, 3);
  Array q = pair(f64(xs, {3, 1}), f64(ys, {2}));
  REQUIRE(q.shape() == Shape{3, 2, 2});
  CHECK(shapes_seen == std::vector<int>{0});  // traced once, on scalars
  auto qv = vals(q);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      CHECK(qv[static_cast<size_t>((i * 2 + j) * 2)] == xs[static_cast<size_t>(i)] + ys[static_cast<size_t>(j)]);
      CHECK(qv[static_cast<size_t>((i * 2 + j) * 2 + 1)] == xs[static_cast<size_t>(i)] * ys[static_cast<size_t>(j)]);
    }
  // Several outputs as a tuple, checked against the signature; size-1 loop dimensions come back as size 1.
  auto stats =
      jnp::vectorize([](const Array& x) { return std::make_tuple(jnp::sum(x), x - jnp::mean(x)); }, "(n)->(),(n)");
  auto za = uniform(8, -1, 1);
  auto [s, c] = stats(f64(za, {2, 1, 4}));
  REQUIRE(s.shape() == Shape{2, 1});
  REQUIRE(c.shape() == Shape{2, 1, 4});
  CHECK(vals(s)[1] == Approx(za[4] + za[5] + za[6] + za[7]).epsilon(1e-14));
  // Under jit and grad.
  auto jitted = jit([&](const Array& a, const Array& b) { return cross(a, b); });
  // (jit may contract u1 v2 - u2 v1 into an fma: a few ULPs of the inputs' scale.)
  require_close(vals(jitted(f64(ua, {2, 1, 3}), f64(va, {4, 3}))), got, 1e-15, 8.0, "cross under jit");
  Array g = grad([&](const Array& a) { return jnp::sum(std::get<0>(stats(a))); })(f64(za, {2, 4}));
  CHECK(vals(g) == std::vector<double>(8, 1.0));
  // Errors name vectorize, the signature and the caller's line.
  CHECK_THROWS_WITH(mv(jnp::ones({3}), jnp::ones({3})),
                    Catch::Contains("[vectorize] input with shape (3,) does not have enough dimensions for all core "
                                    "dimensions ('n', 'm')") &&
                        Catch::Contains("numpy_functional_test.cpp"));
  CHECK_THROWS_AS(mv(jnp::ones({2, 3}), jnp::ones({4})), ShapeError);  // 'm' is 3 and 4
  CHECK_THROWS_WITH(jnp::vectorize([](const Array& x) { return x; }, "(n)->(n")(jnp::ones({3})),
                    Catch::Contains("not a valid gufunc signature: '(n)->(n'"));
  CHECK_THROWS_WITH(jnp::vectorize([](const Array& x) { return jnp::sum(x); }, "(n)->(n)")(jnp::ones({3})),
                    Catch::Contains("output shape () does not match core dimensions ('n',)"));
  CHECK_THROWS_WITH(
      jnp::vectorize([](const Array& x, const Array&) { return x; }, "(n)->(n)")(jnp::ones({3}), jnp::ones({3})),
      Catch::Contains("wrong number of positional arguments: expected 1, got 2"));
  CHECK_THROWS_AS(cross(jnp::ones({2, 3}), jnp::ones({3, 3})), ShapeError);  // loop dimensions 2 and 3
}

TEST_CASE("jnp::apply_along_axis and apply_over_axes: every axis, results of any rank, as JAX", "[jnp][vmap]") {
  auto xa = uniform(24, -2, 2);
  Array x = f64(xa, {2, 3, 4});
  auto at = [&](int i, int j, int k) { return xa[static_cast<size_t>((i * 3 + j) * 4 + k)]; };
  auto sumsq = [](const Array& r) { return jnp::sum(r * r); };
  for (int axis : {0, 1, 2, -1}) {
    Array r = jnp::apply_along_axis(sumsq, axis, x);
    int ax = axis < 0 ? axis + 3 : axis;
    Shape want_shape = {2, 3, 4};
    want_shape.erase(want_shape.begin() + ax);
    REQUIRE(r.shape() == want_shape);
    auto rv = vals(r);
    size_t pos = 0;
    int n[3] = {2, 3, 4};
    for (int a = 0; a < n[ax == 0 ? 1 : 0]; ++a)
      for (int b = 0; b < n[ax == 2 ? 1 : 2]; ++b) {
        double s = 0;
        for (int t = 0; t < n[ax]; ++t) {
          double v = ax == 0 ? at(t, a, b) : ax == 1 ? at(a, t, b) : at(a, b, t);
          s += v * v;
        }
        INFO("axis " << axis);
        CHECK(rv[pos++] == Approx(s).epsilon(1e-14));
      }
  }
  // A 1-D result takes the axis's place: (2, 3, 4) along 1 with 2 values per slice -> (2, 2, 4).
  Array firsts = jnp::apply_along_axis([](const Array& r) { return jnp::stack({r[0], r[2] - r[1]}); }, 1, x);
  REQUIRE(firsts.shape() == Shape{2, 2, 4});
  CHECK(vals(firsts)[4 + 1] == at(0, 2, 1) - at(0, 1, 1));
  // apply_over_axes keeps the rank: the sums over axes 0 and 2 with keepdims.
  Array s = jnp::apply_over_axes([](const Array& t, int64_t ax) { return jnp::sum(t, ax); }, x, {0, 2});
  REQUIRE(s.shape() == Shape{1, 3, 1});
  for (int j = 0; j < 3; ++j) {
    double want = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) want += at(i, j, k);
    CHECK(vals(s)[static_cast<size_t>(j)] == Approx(want).epsilon(1e-14));
  }
  // A function keeping the rank (cumsum) is applied as it is.
  CHECK(jnp::apply_over_axes([](const Array& t, int64_t ax) { return jnp::cumsum(t, ax); }, x, {1}).shape() ==
        Shape{2, 3, 4});
  CHECK_THROWS_WITH(jnp::apply_over_axes([](const Array& t, int64_t) { return jnp::sum(t); }, x, {1}),
                    Catch::Contains("[apply_over_axes] function is not returning an array of the correct shape"));
  CHECK_THROWS_AS(jnp::apply_along_axis(sumsq, 3, x), ShapeError);
  // Under jit: one trace, the same values.
  auto j = jit([&](const Array& a) { return jnp::apply_along_axis(sumsq, 2, a); });
  CHECK(vals(j(x)) == vals(jnp::apply_along_axis(sumsq, 2, x)));
}

TEST_CASE("jnp::piecewise: the last true condition wins, defaults, constants, scalar conditions, grad", "[jnp]") {
  auto xa = uniform(30, -3, 3);
  Array x = make(xa, {5, 6}, DType::float32);
  auto lo = [](const Array& t) { return t * t; };
  auto hi = [](const Array& t) { return jnp::sqrt(t); };
  // Conditions -1 < x and x > 1 overlap above 1: the later one (sqrt) wins there, as in JAX (argmax of the
  // cumulative count); where neither holds the extra last entry (2.5) applies.
  Array r = jnp::piecewise(x, {x > -1.0, x > 1.0}, {lo, hi, 2.5});
  REQUIRE(r.dtype() == DType::float32);
  auto rv = vals(r);
  auto xf = vals(x);
  for (size_t i = 0; i < xf.size(); ++i) {
    double t = xf[i];
    float want = t > 1    ? std::sqrt(static_cast<float>(t))
                 : t > -1 ? static_cast<float>(t) * static_cast<float>(t)
                          : 2.5f;
    INFO("x = " << t);
    CHECK(rv[i] == static_cast<double>(want));
  }
  // len(funclist) == len(condlist): 0 where nothing holds; constants cast to x's dtype (int32 x: 7.9 -> 7).
  Array xi = jnp::array({-4, -3, -2, -1, 0, 1, 2, 3, 4});
  Array ri = jnp::piecewise(xi, {xi<-1, xi> 1}, {[](const Array& t) { return t + 1; }, 7.9});
  CHECK(ri.dtype() == DType::int32);
  CHECK(ri.to_vector<int32_t>() == std::vector<int32_t>{-3, -2, -1, 0, 0, 0, 7, 7, 7});
  // A condition array with one scalar per condition applies to all of x (JAX's doc example).
  Array rs = jnp::piecewise(xi, jnp::array({false, true, false}),
                            {[](const Array& t) { return t * 0; }, [](const Array& t) { return t * 10; },
                             [](const Array& t) { return t * 100; }});
  CHECK(rs.to_vector<int32_t>() == std::vector<int32_t>{-40, -30, -20, -10, 0, 10, 20, 30, 40});
  // A braced single condition is a list of one (not an array to split).
  Array one = jnp::piecewise(xi, {xi < 0}, {[](const Array& t) { return -t; }, [](const Array& t) { return t; }});
  CHECK(one.to_vector<int32_t>() == std::vector<int32_t>{4, 3, 2, 1, 0, 1, 2, 3, 4});
  // Under jit and grad: d/dx of the branches (2x below 1 and above -1, 1/(2 sqrt x) above 1, 0 elsewhere).
  auto f = [&](const Array& t) { return jnp::piecewise(t, {t > -1.0, t > 1.0}, {lo, hi, 2.5}); };
  CHECK(vals(jit(f)(x)) == rv);
  auto g = vals(grad([&](const Array& t) { return jnp::sum(f(t)); })(x));
  for (size_t i = 0; i < xf.size(); ++i) {
    double t = xf[i];
    double want = t > 1 ? 0.5 / std::sqrt(t) : t > -1 ? 2 * t : 0.0;
    CHECK(g[i] == Approx(want).epsilon(1e-6));
  }
  CHECK_THROWS_WITH(jnp::piecewise(xi, {xi < 0}, {0, 1, 2}),
                    Catch::Contains("[piecewise] with 1 condition(s), either 1 or 2 functions are expected; got 3"));
  CHECK_THROWS_AS(jnp::piecewise(xi, {xi < 0}, {jnp::array({1, 2})}), ShapeError);
  CHECK_THROWS_AS(jnp::piecewise(xi, std::vector<Array>{}, {0}), ShapeError);
}

TEST_CASE("jnp::linspace and histogram_bin_edges: JAX's values bit for bit in every float dtype", "[jnp]") {
  int n = 0;
  for (const auto& c : fr::kLinspace) {
    DType d = dtype_named(c.dtype);
    std::string what =
        fmt::format("linspace({}, {}, {}, endpoint={}, {})", c.start, c.stop, c.num, c.endpoint, c.dtype);
    Array got = jnp::linspace(c.start, c.stop, c.num, c.endpoint, d);
    CHECK(got.dtype() == d);
    // float64 runs may be an ULP off (XLA's loop contracts differently from about 200 points on; these are
    // shorter, where the model is exact).
    require_same(vals(got), c.values, what);
    ++n;
  }
  CHECK(n == 96);
  for (const auto& c : fr::kBinEdges) {
    DType d = dtype_named(c.dtype);
    Array a = make(c.data, d);
    std::string what = fmt::format("histogram_bin_edges(<7 {} values>, {})", c.dtype, c.bins);
    Array e = jnp::histogram_bin_edges(a, c.bins);
    CHECK(e.dtype() == d);
    require_same(vals(e), c.edges, what);
    // Under jit the data's range is traced: the same formulas in ops, float64 without fma (an ULP at most).
    int bins = c.bins;
    auto je = vals(jit([bins](const Array& v) { return jnp::histogram_bin_edges(v, bins); })(a));
    if (d == DType::float64) {  // two roundings of terms up to the range's size: 2 ULPs of the largest edge
      double scale = std::max(std::fabs(c.edges.front()), std::fabs(c.edges.back()));
      require_close(je, c.edges, 0x1p-51, scale, what + " under jit");
    } else {
      require_same(je, c.edges, what + " under jit");
    }
  }
}

TEST_CASE("jnp::histogramdd and histogram2d: counts, weights, density, ranges, given edges, as JAX", "[jnp]") {
  for (const auto& c : fr::kHistdd) {
    DType d = dtype_named(c.dtype);
    Array sample = make(c.sample, {c.n, c.d}, d);
    std::vector<jnp::HistogramBins> bins;
    for (size_t j = 0; j < c.bins.size(); ++j)
      bins.push_back(c.bins[j] ? jnp::HistogramBins(int64_t{c.bins[j]}) : jnp::HistogramBins(make(c.given[j], d)));
    std::vector<std::pair<double, double>> range;
    for (size_t j = 0; j + 1 < c.range.size(); j += 2) range.emplace_back(c.range[j], c.range[j + 1]);
    std::optional<Array> w;
    if (!c.weights.empty()) w = make(c.weights, d);
    std::string what = fmt::format("histogramdd {} n={} d={} weights={} density={}", c.dtype, c.n, c.d, !!w, c.density);
    auto [h, edges] = jnp::histogramdd(sample, bins, range, w, c.density);
    INFO(what);
    CHECK(h.dtype() == (w || c.density ? d : DType::int64));
    Shape want_shape(c.shape.begin(), c.shape.end());
    CHECK(h.shape() == want_shape);
    // Counts exactly; weighted sums and densities to the dtype's rounding (bincount adds in index order, as XLA's
    // scatter does, but a density divides by float sums).
    if (!w && !c.density)
      require_same(vals(h), c.hist, what);
    else
      require_close(vals(h), c.hist, d == DType::float32 ? 4e-6 : 1e-14, 1e-30, what);
    REQUIRE(edges.size() == c.edges.size());
    for (size_t j = 0; j < edges.size(); ++j) require_same(vals(edges[j]), c.edges[j], what + " edges");
    if (c.d == 2) {  // the same through histogram2d
      Array cols = jnp::transpose(sample);
      auto [h2, xe, ye] = jnp::histogram2d(cols[0], cols[1], bins, range, w, c.density);
      CHECK(vals(h2) == vals(h));
      CHECK(vals(ye) == vals(edges[1]));
    }
  }
  // JAX's doc example; one array of edges for both axes; a per-axis {count, edges}.
  Array x = jnp::array({1, 2, 3, 10, 11, 15, 19, 25}), y = jnp::array({2, 5, 6, 8, 13, 16, 17, 18});
  auto [h, xe, ye] = jnp::histogram2d(x, y, 5, {{0, 25}, {0, 25}});
  CHECK(vals(xe) == std::vector<double>{0, 5, 10, 15, 20, 25});
  CHECK(vals(h) == std::vector<double>{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0});
  Array e = jnp::array({0, 10, 20, 30});
  CHECK(vals(std::get<0>(jnp::histogram2d(x, y, e))) == std::vector<double>{3, 0, 0, 1, 3, 0, 0, 1, 0});
  CHECK(vals(std::get<0>(jnp::histogram2d(x, y, {3, e}))) == std::vector<double>{3, 0, 0, 1, 2, 0, 0, 2, 0});
  // A 2-element array is read as two counts (JAX's len(bins) == 2).
  CHECK(std::get<0>(jnp::histogram2d(x, y, jnp::array({2, 3}))).shape() == Shape{2, 3});
  CHECK_THROWS_AS(jnp::histogramdd(jnp::ones({4}), 3), ShapeError);
  CHECK_THROWS_WITH(jnp::histogramdd(jnp::ones({4, 2}), std::vector<jnp::HistogramBins>{3}),
                    Catch::Contains("should be a bin for each dimension"));
  CHECK_THROWS_WITH(jnp::histogramdd(jnp::ones({4, 2}), 3, {{0, 1}}),
                    Catch::Contains("range must be a sequence of 2 pairs"));
  CHECK_THROWS_WITH(jnp::histogramdd(jnp::ones({4, 2}), 3, {}, jnp::ones({3})),
                    Catch::Contains("should have one weight for each sample"));
  CHECK_THROWS_AS(jnp::histogram2d(x, jnp::ones({3}), 4), ShapeError);
}

TEST_CASE("jnp::polyfit: coefficients, full results, covariance, weights, as JAX", "[jnp][linalg]") {
  for (const auto& c : fr::kPolyfit) {
    DType d = dtype_named(c.dtype);
    Array x = make(c.x, d);
    Array y = c.k ? make(c.y, {c.m, c.k}, d) : make(c.y, d);
    std::optional<Array> w;
    if (!c.w.empty()) w = make(c.w, d);
    std::string what = fmt::format("polyfit {} m={} k={} deg={} weighted={}", c.dtype, c.m, c.k, c.deg, !!w);
    INFO(what);
    // Least squares through an SVD: float32 agrees to its rounding times the Vandermonde matrix's condition.
    double tol = d == DType::float32 ? 2e-4 : 1e-10;
    Array p = jnp::polyfit(x, y, c.deg, std::nullopt, w);
    CHECK(p.dtype() == d);
    require_close(vals(p), c.c, tol, 1.0, what + " c");
    auto full = jnp::polyfit_full(x, y, c.deg, std::nullopt, w);
    require_close(vals(full.residuals), c.resids, tol * 10, 1e-3, what + " residuals");
    CHECK(full.rank.item<int64_t>() == c.rank);
    CHECK(full.rank.dtype() == DType::int64);
    require_close(vals(full.s), c.s, tol, 1e-3, what + " s");
    CHECK(full.rcond.item<double>() == c.rcond);
    CHECK(full.rcond.weak_type());
    auto [pc, cov] = jnp::polyfit_cov(x, y, c.deg, std::nullopt, w);
    require_close(vals(cov), c.cov, tol * 10, 1e-3 * *std::max_element(c.cov.begin(), c.cov.end()), what + " cov");
    auto [pu, cov_u] = jnp::polyfit_cov(x, y, c.deg, std::nullopt, w, true);
    CHECK(cov_u.shape().size() == (c.k ? 3u : 2u));
    require_close(vals(cov_u), c.cov_unscaled, tol * 10, 1e-3, what + " cov unscaled");
    // Under jit: the same within the tolerance.
    int deg = c.deg;
    auto jp = jit([deg](const Array& a, const Array& b) { return jnp::polyfit(a, b, deg); });
    if (!w) require_close(vals(jp(x, y)), c.c, tol, 1.0, what + " under jit");
  }
  // Dtypes as JAX's: an int32 y is promoted; int weights promote the fit to float64; an integer x needs rcond.
  Array x = jnp::linspace(0.0, 1.0, 7), y = x * x;
  CHECK(jnp::polyfit(x, y.astype(DType::int32), 2).dtype() == DType::float32);
  CHECK(jnp::polyfit(x, y, 2, std::nullopt, jnp::arange(7).astype(DType::int64)).dtype() == DType::float64);
  CHECK_THROWS_WITH(jnp::polyfit(jnp::arange(7), y, 2), Catch::Contains("needs an inexact x"));
  CHECK(jnp::polyfit(jnp::arange(7), y, 2, 1e-6).dtype() == DType::float64);
  CHECK_THROWS_AS(jnp::polyfit(x, y, -1), ShapeError);
  CHECK_THROWS_AS(jnp::polyfit(x.reshape({7, 1}), y, 1), TypeError);
  CHECK_THROWS_AS(jnp::polyfit(x, jnp::ones({6}), 1), TypeError);
  CHECK_THROWS_WITH(jnp::polyfit_cov(jnp::linspace(0.0, 1.0, 3), jnp::ones({3}), 2),
                    Catch::Contains("the number of data points must exceed order"));
}

}  // namespace
