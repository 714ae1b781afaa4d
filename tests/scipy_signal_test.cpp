// jax.scipy's signal, integrate, ndimage, cluster.vq and sparse.linalg modules (scipy_signal.h): convolutions
// against double loops over random inputs, JAX 0.10.2's own values (x64, CPU) for the documented examples and the
// orientation quirks of correlate2d, map_coordinates in every mode against JAX, vq against brute force, cg and
// bicgstab against a direct solve, with their gradients against finite differences.
#include "jitx/scipy_signal.h"

#include <fmt/ranges.h>

#include <cmath>
#include <string>

#include "jitx/jitx.h"
#include "test_util.h"

namespace {
using namespace jitx;
using namespace jitx::testing;
namespace jnp = jitx::numpy;
namespace sg = jitx::scipy::signal;
namespace sl = jitx::scipy::sparse::linalg;

std::vector<double> vals(const Array& a) { return a.astype(DType::float64).to_vector<double>(); }
Array f64(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float64); }

/// Full N-d convolution in double: out[i] = sum_j a[i - j] b[j].
std::vector<double> conv_full(const std::vector<double>& a, const Shape& sa, const std::vector<double>& b,
                              const Shape& sb, Shape* so) {
  size_t nd = sa.size();
  so->assign(nd, 0);
  for (size_t d = 0; d < nd; ++d) (*so)[d] = sa[d] + sb[d] - 1;
  auto strides = [](const Shape& s) {
    std::vector<int64_t> st(s.size(), 1);
    for (int64_t d = static_cast<int64_t>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
    return st;
  };
  auto ta = strides(sa), tb = strides(sb), to = strides(*so);
  std::vector<double> out(static_cast<size_t>(to[0] * (*so)[0]), 0.0);
  std::vector<int64_t> ia(nd), ib(nd);
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t d = 0; d < nd; ++d) ia[d] = (static_cast<int64_t>(i) / ta[d]) % sa[d];
    for (size_t j = 0; j < b.size(); ++j) {
      int64_t o = 0;
      for (size_t d = 0; d < nd; ++d) o += (ia[d] + (static_cast<int64_t>(j) / tb[d]) % sb[d]) * to[d];
      out[static_cast<size_t>(o)] += a[i] * b[j];
    }
  }
  return out;
}
/// The block of full (shape sf) starting at start with shape s.
std::vector<double> block(const std::vector<double>& full, const Shape& sf, const std::vector<int64_t>& start,
                          const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0, stride = 1;
    std::vector<int64_t> idx(s.size());
    for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
      idx[d] = rem % s[d];
      rem /= s[d];
    }
    for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
      off += (idx[d] + start[d]) * stride;
      stride *= sf[d];
    }
    out.push_back(full[static_cast<size_t>(off)]);
  }
  return out;
}

void close(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(tol).epsilon(tol));
  }
}

TEST_CASE("scipy::signal::convolve and correlate: N-d, every mode, both orders, against double loops", "[scipy]") {
  struct Case {
    Shape a, b;
  };
  for (const Case& c :
       {Case{{9}, {4}}, Case{{3}, {7}}, Case{{6, 5}, {3, 2}}, Case{{2, 3}, {4, 5}}, Case{{4, 3, 5}, {2, 3, 2}}}) {
    int64_t na = 1, nb = 1;
    for (int64_t v : c.a) na *= v;
    for (int64_t v : c.b) nb *= v;
    auto av = uniform(static_cast<size_t>(na), -2, 2), bv = uniform(static_cast<size_t>(nb), -2, 2);
    Array a = f64(av, c.a), b = f64(bv, c.b);
    Shape sf;
    auto full = conv_full(av, c.a, bv, c.b, &sf);
    std::vector<int64_t> same_start, valid_start;
    Shape valid_shape;
    for (size_t d = 0; d < c.a.size(); ++d) {
      same_start.push_back((c.b[d] - 1) / 2);
      valid_start.push_back(std::min(c.a[d], c.b[d]) - 1);
      valid_shape.push_back(std::abs(c.a[d] - c.b[d]) + 1);
    }
    std::string what = fmt::format("shapes ({}) and ({})", fmt::join(c.a, ", "), fmt::join(c.b, ", "));
    close(vals(sg::convolve(a, b)), full, 1e-12, what + " full");
    close(vals(sg::convolve(a, b, "same")), block(full, sf, same_start, c.a), 1e-12, what + " same");
    close(vals(sg::convolve(a, b, "valid")), block(full, sf, valid_start, valid_shape), 1e-12, what + " valid");
    // correlate(a, b) = convolve(a, flip(b)).
    close(vals(sg::correlate(a, b, "same")), vals(sg::convolve(a, jnp::flip(b), "same")), 0, what + " correlate");
    // Under jit, and float32 inputs promote to float32, int32 to float32.
    auto j = jit([](const Array& x, const Array& y) { return sg::convolve(x, y); });
    close(vals(j(a, b)), full, 1e-12, what + " jit");
  }
  Array x = jnp::array({1, 2, 3, 2, 1}), y = jnp::array({1, 3, 2});
  Array r = sg::convolve(x, y);
  CHECK(r.dtype() == DType::float32);
  CHECK(vals(r) == std::vector<double>{1, 5, 11, 15, 13, 7, 2});  // JAX's values
  CHECK(vals(sg::correlate(x, y, "same")) == std::vector<double>{7, 13, 15, 11, 5});
  CHECK(vals(sg::correlate(y, x, "same")) == std::vector<double>{11, 15, 13});
  // Errors as JAX's.
  CHECK_THROWS_WITH(sg::convolve(x, y, "full", "fft"), Catch::Contains("method='fft' is not built"));
  CHECK_THROWS_AS(sg::convolve(x, y, "middle"), TypeError);
  CHECK_THROWS_AS(sg::convolve(x, jnp::ones({2, 2})), ShapeError);
  CHECK_THROWS_WITH(sg::convolve(jnp::ones({2, 5}), jnp::ones({3, 2})),
                    Catch::Contains("one input must be smaller than the other in every dimension"));
  CHECK_THROWS_AS(sg::convolve(jnp::ones({0}), y), ShapeError);
}

TEST_CASE("scipy::signal::convolve2d and correlate2d: JAX's values, including correlate2d's orientations", "[scipy]") {
  Array a = jnp::array({2, 1, 3, 1, 3, 1, 4, 1, 2}).reshape({3, 3}), b = jnp::array({1, 3, 4, 2}).reshape({2, 2});
  // JAX 0.10.2's outputs for these inputs.
  CHECK(vals(sg::correlate2d(a, b)) == std::vector<double>{4, 10, 10, 12, 8, 15, 24, 7, 11, 28, 14, 9, 12, 7, 7, 2});
  CHECK(vals(sg::correlate2d(a, b, "same")) == std::vector<double>{15, 24, 7, 28, 14, 9, 7, 7, 2});
  CHECK(vals(sg::correlate2d(a, b, "valid")) == std::vector<double>{15, 24, 28, 14});
  CHECK(vals(sg::correlate2d(b, a, "valid")) == std::vector<double>{14, 28, 24, 15});
  CHECK(vals(sg::correlate2d(b, a)) == std::vector<double>{2, 7, 7, 12, 9, 14, 28, 11, 7, 24, 15, 8, 12, 10, 10, 4});
  CHECK(vals(sg::convolve2d(a, b, "same")) == std::vector<double>{2, 7, 6, 9, 14, 24, 8, 27, 15});
  CHECK_THROWS_WITH(sg::convolve2d(a, b, "full", "wrap"), Catch::Contains("only boundary='fill', fillvalue=0"));
  CHECK_THROWS_AS(sg::correlate2d(a, b, "full", "fill", 1.0), TypeError);
  CHECK_THROWS_AS(sg::convolve2d(jnp::ones({3}), jnp::ones({2})), ShapeError);
}

TEST_CASE("scipy::signal::detrend: linear (with breakpoints) and constant, along an axis", "[scipy]") {
  auto dv = uniform(21, -3, 3);
  Array d = f64(dv, {3, 7});
  // Along axis 1 with breakpoints {3}: each row's segments [0, 3) and [3, 7) lose their least-squares lines.
  auto got = vals(sg::detrend(d, 1, "linear", {3}));
  for (int r = 0; r < 3; ++r)
    for (auto [lo, hi] : {std::pair{0, 3}, std::pair{3, 7}}) {
      // Least squares of y on (1, t) by the normal equations, in double.
      double n = hi - lo, st = 0, stt = 0, sy = 0, sty = 0;
      for (int i = lo; i < hi; ++i) {
        double t = i - lo, y = dv[static_cast<size_t>(r * 7 + i)];
        st += t, stt += t * t, sy += y, sty += t * y;
      }
      double slope = (n * sty - st * sy) / (n * stt - st * st), icept = (sy - slope * st) / n;
      for (int i = lo; i < hi; ++i) {
        double want = dv[static_cast<size_t>(r * 7 + i)] - (icept + slope * (i - lo));
        CHECK(got[static_cast<size_t>(r * 7 + i)] == Approx(want).margin(1e-12));
      }
    }
  // Constant along axis 0: minus the column means.
  auto cst = vals(sg::detrend(d, 0, "constant"));
  for (int c = 0; c < 7; ++c) {
    double m = (dv[c] + dv[7 + c] + dv[14 + c]) / 3;
    CHECK(cst[static_cast<size_t>(7 + c)] == Approx(dv[7 + c] - m).margin(1e-14));
  }
  // JAX's doc example: an integer series detrends in float32.
  Array ex = sg::detrend(jnp::array({1, 4, 8, 8, 9}));
  CHECK(ex.dtype() == DType::float32);
  close(vals(ex), {-1, 0, 2, 0, -1}, 1e-5, "doc example");
  CHECK_THROWS_AS(sg::detrend(d, 1, "quadratic"), TypeError);
  CHECK_THROWS_WITH(sg::detrend(d, 1, "linear", {9}), Catch::Contains("breakpoints must be non-negative"));
  CHECK(vals(scipy::integrate::trapezoid(d, std::nullopt, 0.5, 1)) == vals(jnp::trapezoid(d, std::nullopt, 0.5, 1)));
}

TEST_CASE("scipy::ndimage::map_coordinates: orders 0 and 1 in every mode, as JAX", "[scipy]") {
  Array in = jnp::arange(12.0).reshape({3, 4}).astype(DType::float32);
  std::vector<Array> c = {jnp::array({0.5, 1.5, -0.7, 2.6}), jnp::array({1.5, 2.5, 3.9, -1.2})};
  // JAX 0.10.2's values (cval 9).
  struct Want {
    const char* mode;
    std::vector<double> linear, nearest;
  };
  for (const Want& w :
       {Want{"constant", {3.5, 8.5, 8.82, 9}, {6, 11, 9, 9}}, Want{"nearest", {3.5, 8.5, 3, 8}, {6, 11, 3, 8}},
        Want{"wrap", {3.5, 8.5, 5.9, 6}, {6, 11, 8, 3}}, Want{"mirror", {3.5, 8.5, 4.9, 6.8}, {6, 11, 6, 5}},
        Want{"reflect", {3.5, 8.5, 3, 8.2}, {6, 11, 3, 8}}}) {
    Array lin = scipy::ndimage::map_coordinates(in, c, 1, w.mode, 9.0);
    CHECK(lin.dtype() == DType::float32);
    close(vals(lin), w.linear, 2e-6, std::string(w.mode) + " linear");
    close(vals(scipy::ndimage::map_coordinates(in, c, 0, w.mode, 9.0)), w.nearest, 0, std::string(w.mode) + " nearest");
  }
  // Inside the grid, linear interpolation of a random 2-D field against the bilinear formula in double.
  auto fv = uniform(20, -1, 1);
  Array field = f64(fv, {4, 5});
  auto rv = uniform(12, 0, 3), cv = uniform(12, 0, 4);
  auto got = vals(scipy::ndimage::map_coordinates(field, {f64(rv, {12}), f64(cv, {12})}, 1));
  for (size_t i = 0; i < 12; ++i) {
    int r0 = static_cast<int>(std::floor(rv[i])), c0 = static_cast<int>(std::floor(cv[i]));
    double fr = rv[i] - r0, fc = cv[i] - c0;
    auto at = [&](int r, int cc) { return r < 4 && cc < 5 ? fv[static_cast<size_t>(r * 5 + cc)] : 0.0; };
    double want = (1 - fr) * (1 - fc) * at(r0, c0) + (1 - fr) * fc * at(r0, c0 + 1) + fr * (1 - fc) * at(r0 + 1, c0) +
                  fr * fc * at(r0 + 1, c0 + 1);
    CHECK(got[i] == Approx(want).margin(1e-14));
  }
  // Integer input rounds half away from zero; gradients flow to the coordinates.
  Array ii = jnp::array({0, 10, 20});
  CHECK(scipy::ndimage::map_coordinates(ii, {jnp::array({0.25, 0.75})}, 1).to_vector<int32_t>() ==
        std::vector<int32_t>{3, 8});
  Array g = grad([&](const Array& t) {
    return jnp::sum(scipy::ndimage::map_coordinates(field, {t, t}, 1));
  })(f64({0.5, 1.25}, {2}));
  CHECK(std::isfinite(vals(g)[0]));
  CHECK_THROWS_WITH(scipy::ndimage::map_coordinates(in, {c[0]}, 1),
                    Catch::Contains("coordinates must be a sequence of length input.ndim, but 1 != 2"));
  CHECK_THROWS_AS(scipy::ndimage::map_coordinates(in, c, 3), TypeError);
  CHECK_THROWS_AS(scipy::ndimage::map_coordinates(in, c, 1, "grid-wrap"), TypeError);
}

TEST_CASE("scipy::cluster::vq::vq: the nearest code and its distance, against brute force", "[scipy]") {
  auto ov = uniform(30, -2, 2), cv = uniform(12, -2, 2);
  Array obs = make(ov, {10, 3}, DType::float32), cb = make(cv, {4, 3}, DType::float32);
  auto [code, dist] = scipy::cluster::vq::vq(obs, cb);
  auto cd = vals(code), dd = vals(dist);
  auto ovf = vals(obs), cvf = vals(cb);
  for (int i = 0; i < 10; ++i) {
    int best = 0;
    double bestd = INFINITY;
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int j = 0; j < 3; ++j)
        s += std::pow(ovf[static_cast<size_t>(i * 3 + j)] - cvf[static_cast<size_t>(k * 3 + j)], 2);
      if (std::sqrt(s) < bestd) bestd = std::sqrt(s), best = k;
    }
    CHECK(cd[static_cast<size_t>(i)] == best);
    CHECK(dd[static_cast<size_t>(i)] == Approx(bestd).epsilon(1e-6));
  }
  CHECK(dist.dtype() == DType::float32);
  // 1-D: each entry one observation.
  CHECK(vals(scipy::cluster::vq::vq(jnp::array({0.1, 2.9}), jnp::array({0.0, 1.0, 3.0})).first) ==
        std::vector<double>{0, 2});
  CHECK_THROWS_AS(scipy::cluster::vq::vq(obs, jnp::ones({4})), ShapeError);
  CHECK_THROWS_AS(scipy::cluster::vq::vq(obs, jnp::ones({4, 2})), ShapeError);
}

TEST_CASE("scipy::sparse::linalg::cg and bicgstab: solutions, preconditioning, maxiter, gradients", "[scipy]") {
  const int n = 6;
  auto mv = uniform(n * n, -1, 1);
  Array m = f64(mv, {n, n});
  Array spd = jnp::add(jnp::matmul(m, jnp::transpose(m)),
                       jnp::multiply(Array(0.5), jnp::eye(n, -1, 0, DType::float64)));     // SPD
  Array gen = jnp::add(m, jnp::multiply(Array(3.0), jnp::eye(n, -1, 0, DType::float64)));  // nonsymmetric
  Array b = f64(uniform(n, -1, 1), {n});
  auto direct_spd = vals(jnp::linalg::solve(spd, b)), direct_gen = vals(jnp::linalg::solve(gen, b));
  close(vals(sl::cg(spd, b, std::nullopt, 1e-12).first), direct_spd, 1e-9, "cg, matrix");
  close(vals(sl::cg([&](const Array& x) { return jnp::matmul(spd, x); }, b, std::nullopt, 1e-12).first), direct_spd,
        1e-9, "cg, function");
  close(vals(sl::bicgstab(gen, b, std::nullopt, 1e-12).first), direct_gen, 1e-9, "bicgstab");
  // A Jacobi preconditioner and a starting point change the path, not the answer.
  Array dinv = jnp::divide(Array(1.0), jnp::diagonal(spd));
  close(vals(sl::cg(spd, b, jnp::ones({n}, DType::float64), 1e-12, 0.0, std::nullopt,
                    [dinv](const Array& r) { return jnp::multiply(dinv, r); })
                 .first),
        direct_spd, 1e-9, "cg, preconditioned");
  // maxiter = 1 from 0: one CG step is the steepest-descent step alpha b, alpha = b.b / b.A b.
  auto bv = vals(b);
  auto abv = vals(jnp::matmul(spd, b));
  double bb = 0, bab = 0;
  for (int i = 0; i < n; ++i) bb += bv[i] * bv[i], bab += bv[i] * abv[i];
  std::vector<double> step;
  for (int i = 0; i < n; ++i) step.push_back(bb / bab * bv[i]);
  close(vals(sl::cg(spd, b, std::nullopt, 1e-12, 0.0, 1).first), step, 1e-12, "cg, one step");
  // Under jit; info is empty (None in JAX).
  auto j = jit([&](const Array& bb2) { return sl::cg(spd, bb2, std::nullopt, 1e-12).first; });
  close(vals(j(b)), direct_spd, 1e-9, "cg under jit");
  CHECK_FALSE(sl::cg(spd, b).second.valid());
  // Gradients (implicit, for a matrix A) against central differences of the direct solve.
  auto loss = [](const Array& a, const Array& rhs) {
    return jnp::sum(jnp::sin(sl::cg(a, rhs, std::nullopt, 1e-12).first));
  };
  auto gb = vals(grad([&](const Array& rhs) { return loss(spd, rhs); })(b));
  auto ga = vals(grad([&](const Array& a) { return loss(a, b); })(spd));
  auto direct_loss = [&](const std::vector<double>& av, const std::vector<double>& rv) {
    return jnp::sum(jnp::sin(jnp::linalg::solve(f64(av, {n, n}), f64(rv, {n})))).item<double>();
  };
  auto av = vals(spd);
  for (int i = 0; i < n; ++i) {
    auto p = bv, q = bv;
    p[i] += 1e-6, q[i] -= 1e-6;
    CHECK(gb[static_cast<size_t>(i)] == Approx((direct_loss(av, p) - direct_loss(av, q)) / 2e-6).epsilon(1e-5));
  }
  for (int i : {0, 7, 20, 35}) {
    auto p = av, q = av;
    p[i] += 1e-6, q[i] -= 1e-6;
    CHECK(ga[static_cast<size_t>(i)] == Approx((direct_loss(p, bv) - direct_loss(q, bv)) / 2e-6).epsilon(1e-5));
  }
  // Errors.
  CHECK_THROWS_WITH(sl::cg(jnp::ones({2, 3}), b), Catch::Contains("must be a square matrix"));
  CHECK_THROWS_WITH(sl::cg(spd, b, jnp::ones({3})), Catch::Contains("x0 and b must have matching shapes"));
  CHECK_THROWS_WITH(sl::cg([](const Array& x) { return jnp::sum(x); }, b), Catch::Contains("A must map b's shape"));
  CHECK_THROWS_AS(sl::bicgstab(spd, jnp::array({1, 2, 3, 4, 5, 6})), TypeError);
  CHECK_THROWS_WITH(grad([&](const Array& rhs) {
                      return jnp::sum(sl::cg([&](const Array& x) { return jnp::matmul(spd, x); }, rhs).first);
                    })(b),
                    Catch::Contains("Reverse-mode differentiation does not work for lax::while_loop"));
}

}  // namespace
