// jnp's argwhere, flatnonzero, one-argument where, reductions with where=/initial=, einsum with repeated labels
// and pad mode "median": values against JAX-generated numbers (the snippets in comments, jax_enable_x64) or
// loops in the test, eager and jit; gradients against finite differences; vmap against a loop.
#include <cmath>
#include <limits>

#include "jitx/numpy_extra.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
const DType f64 = DType::float64;
const DType i64 = DType::int64;
// x = jnp.array([[0., 1.5, 0., -2.], [3., 0., 0., 4.], [0., 0., 5., 0.]])
Array x34() { return make({0, 1.5, 0, -2, 3, 0, 0, 4, 0, 0, 5, 0}, {3, 4}, f64); }
// m = jnp.array([[True, False, True, True], [False, False, True, True], [True, True, False, False]])
Array m34() {
  return array(std::vector<bool>{true, false, true, true, false, false, true, true, true, true, false, false}, {3, 4});
}
const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("jnp::argwhere, flatnonzero and one-argument where match JAX", "[numpy_extra]") {
  // jnp.argwhere(x) -> [[0,1],[0,3],[1,0],[1,3],[2,2]] int64
  Array a = jnp::argwhere(x34());
  CHECK(a.shape() == Shape{5, 2});
  check_exact(a, {0, 1, 0, 3, 1, 0, 1, 3, 2, 2}, i64, "argwhere");
  // jnp.argwhere(x, size=6, fill_value=-1); jnp.argwhere(x, size=3)
  both_exact([](auto& v) { return jnp::argwhere(v[0], 6, -1); }, {x34()}, {0, 1, 0, 3, 1, 0, 1, 3, 2, 2, -1, -1}, i64,
             "argwhere size=6");
  both_exact([](auto& v) { return jnp::argwhere(v[0], 3); }, {x34()}, {0, 1, 0, 3, 1, 0}, i64, "argwhere size=3");
  // jnp.argwhere(jnp.array(5.)).shape == (1, 0); jnp.argwhere(jnp.array(0.)).shape == (0, 0)
  CHECK(jnp::argwhere(Array(5.0)).shape() == Shape{1, 0});
  CHECK(jnp::argwhere(Array(0.0)).shape() == Shape{0, 0});
  // jnp.flatnonzero(x) -> [1,3,4,7,10]; jnp.flatnonzero(x, size=7, fill_value=9) -> [1,3,4,7,10,9,9]
  check_exact(jnp::flatnonzero(x34()), {1, 3, 4, 7, 10}, i64, "flatnonzero");
  both_exact([](auto& v) { return jnp::flatnonzero(v[0], 7, 9); }, {x34()}, {1, 3, 4, 7, 10, 9, 9}, i64,
             "flatnonzero size=7");
  // jnp.where(x > 0, size=5, fill_value=-7) -> ([0,1,1,2,-7], [1,0,3,2,-7])
  auto w = jnp::where(jnp::greater(x34(), Array(0.0)), {.size = 5, .fill_value = -7});
  REQUIRE(w.size() == 2);
  check_exact(w[0], {0, 1, 1, 2, -7}, i64, "where(c) rows");
  check_exact(w[1], {1, 0, 3, 2, -7}, i64, "where(c) cols");
  both_exact([](auto& v) { return jnp::where(jnp::greater(v[0], 0.0), {.size = 5, .fill_value = -7})[1]; }, {x34()},
             {1, 0, 3, 2, -7}, i64, "where(c) under jit");
  // The three-argument where still wins for numbers.
  check_close(jnp::where(m34(), 1.0, 0.0), {1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0}, f64, "where(c, 1., 0.)");
  // Random inputs against a loop.
  auto xv = uniform(30, -1, 1);
  for (auto& v : xv) v = v > 0.3 ? v : 0;
  Array xr = make(xv, {5, 6}, f64);
  std::vector<int64_t> ref, flat;
  for (int64_t i = 0; i < 30; ++i)
    if (xv[i] != 0) {
      ref.insert(ref.end(), {i / 6, i % 6});
      flat.push_back(i);
    }
  check_exact(jnp::argwhere(xr), ref, i64, "argwhere random");
  check_exact(jnp::flatnonzero(xr), flat, i64, "flatnonzero random");
  // Without size under jit: JAX's ConcretizationTypeError.
  CHECK_THROWS_AS(jit([](Array v) { return jnp::argwhere(v); })(x34()), TracerError);
  CHECK_THROWS_AS(jit([](Array v) { return jnp::flatnonzero(v); })(x34()), TracerError);
  CHECK_THROWS_AS(jit([](Array v) { return jnp::where(v)[0]; })(x34()), TracerError);
  // Bad input: negative size, 0-d nonzero / where (JAX: "Calling nonzero on 0d arrays is not allowed").
  CHECK_THROWS_WITH(jnp::argwhere(x34(), -1), Catch::Contains("argwhere") && Catch::Contains("size"));
  CHECK_THROWS_AS(jnp::flatnonzero(x34(), -2), ShapeError);
  CHECK_THROWS_AS(jnp::nonzero(x34(), -1), ShapeError);
  CHECK_THROWS_AS(jnp::where(x34(), {.size = -1}), ShapeError);
  CHECK_THROWS_WITH(jnp::nonzero(Array(1.0)), Catch::Contains("nonzero") && Catch::Contains("0-d"));
  CHECK_THROWS_AS(jnp::where(Array(1.0)), ShapeError);
}

TEST_CASE("jnp reductions with where= and initial= match JAX", "[numpy_extra]") {
  Array x = x34(), m = m34();
  // jnp.sum(x, axis=1, where=m) -> [-2, 4, 0]; jnp.sum(x, where=m, initial=10.) -> 12
  both_close([](auto& v) { return jnp::sum(v[0], {1}, false, {.where = v[1]}); }, {x, m}, {-2, 4, 0}, f64,
             "sum where");
  both_close([](auto& v) { return jnp::sum(v[0], {}, false, {.where = v[1], .initial = 10.0}); }, {x, m}, {12}, f64,
             "sum where initial");
  // jnp.prod(x + 1, axis=0, where=m, initial=2.) -> [2, 2, 2, -10]
  both_close([](auto& v) { return jnp::prod(jnp::add(v[0], 1.0), {0}, false, {.where = v[1], .initial = 2.0}); },
             {x, m}, {2, 2, 2, -10}, f64, "prod where initial");
  // jnp.max(x, axis=1, where=m, initial=-1.) -> [0, 4, 0]; jnp.min(x, axis=0, where=m, initial=.5) -> [0,0,0,-2]
  both_close([](auto& v) { return jnp::max(v[0], {1}, false, {.where = v[1], .initial = -1.0}); }, {x, m}, {0, 4, 0},
             f64, "max where initial");
  both_close([](auto& v) { return jnp::min(v[0], {0}, false, {.where = v[1], .initial = 0.5}); }, {x, m},
             {0, 0, 0, -2}, f64, "min where initial");
  // jnp.max(x, initial=7.) -> 7; jnp.max(jnp.zeros((0, 3)), axis=0, initial=-3.) -> [-3, -3, -3]
  both_close([](auto& v) { return jnp::max(v[0], {}, false, {.initial = 7.0}); }, {x}, {7}, f64, "max initial");
  both_close([](auto& v) { return jnp::max(v[0], {0}, false, {.initial = -3.0}); }, {zeros({0, 3}, f64)},
             {-3, -3, -3}, f64, "max initial empty axis");
  // jnp.max(x, where=m) -> ValueError: reduction operation max does not have an identity ... specify 'initial'
  CHECK_THROWS_WITH(jnp::max(x, {}, false, {.where = m}), Catch::Contains("max") && Catch::Contains("initial"));
  CHECK_THROWS_AS(jnp::min(x, {0}, false, {.where = m}), TypeError);
  // jnp.mean(x, axis=1, where=m) -> [-2/3, 2, 0]; jnp.mean(x, where=m) -> 2/7; all-False mask -> NaN
  both_close([](auto& v) { return jnp::mean(v[0], {1}, false, {.where = v[1]}); }, {x, m}, {-2.0 / 3, 2, 0}, f64,
             "mean where");
  both_close([](auto& v) { return jnp::mean(v[0], {}, false, {.where = v[1]}); }, {x, m}, {2.0 / 7}, f64,
             "mean where all");
  both_close([](auto& v) { return jnp::mean(v[0], {0}, false, {.where = jnp::logical_not(jnp::equal(v[0], v[0]))}); },
             {x}, {kNaN, kNaN, kNaN, kNaN}, f64, "mean empty where");
  // jnp.var(x, axis=1, where=m) -> [0.888..., 4, 0]; ddof=1 -> [1.333..., 8, 0]
  both_close([](auto& v) { return jnp::var(v[0], {1}, false, 0, {.where = v[1]}); }, {x, m}, {8.0 / 9, 4, 0}, f64,
             "var where");
  both_close([](auto& v) { return jnp::var(v[0], {1}, true, 1, {.where = v[1]}); }, {x, m}, {4.0 / 3, 8, 0}, f64,
             "var where ddof=1");
  // jnp.std(x, axis=0, where=m, ddof=1) -> [0, nan, 0, 4.242640687119285]
  both_close([](auto& v) { return jnp::std(v[0], {0}, false, 1, {.where = v[1]}); }, {x, m},
             {0, kNaN, 0, 4.242640687119285}, f64, "std where ddof=1");
  // jnp.all(x, axis=1, where=m) -> [F, F, F]; jnp.any(x, axis=0, where=m) -> [F, F, F, T]
  both_exact([](auto& v) { return jnp::all(v[0], {1}, false, {.where = v[1]}); }, {x, m}, {0, 0, 0}, DType::bool_,
             "all where");
  both_exact([](auto& v) { return jnp::any(v[0], {0}, false, {.where = v[1]}); }, {x, m}, {0, 0, 0, 1}, DType::bool_,
             "any where");
  // A where that broadcasts: jnp.sum(x, axis=0, where=jnp.array([True, False, True, False])) -> [3, 0, 5, 0]
  Array row = array(std::vector<bool>{true, false, true, false}, {4});
  both_close([](auto& v) { return jnp::sum(v[0], {0}, false, {.where = v[1]}); }, {x, row}, {3, 0, 5, 0}, f64,
             "sum where broadcast");
  // Integers: jnp.max(xi, axis=0, where=mi, initial=-5) -> [1, 5, 6] int32; jnp.mean(xi, where=mi, axis=1) ->
  // [2., 5.5]; jnp.sum(xi, axis=1, where=mi, initial=100) -> [104, 111] int64 (as jitx)
  Array xi = make_int({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int32);
  Array mi = array(std::vector<bool>{true, false, true, false, true, true}, {2, 3});
  both_exact([](auto& v) { return jnp::max(v[0], {0}, false, {.where = v[1], .initial = -5}); }, {xi, mi}, {1, 5, 6},
             DType::int32, "max int where");
  both_exact([](auto& v) { return jnp::sum(v[0], {1}, false, {.where = v[1], .initial = 100}); }, {xi, mi},
             {104, 111}, DType::int64, "sum int where");  // JAX x64: sums of int32 are int64
  both_close([](auto& v) { return jnp::mean(v[0], {1}, false, {.where = v[1]}); }, {xi, mi}, {2, 5.5}, DType::float32,
             "mean int where");
  // Bad input names the function.
  CHECK_THROWS_WITH(jnp::sum(x, {}, false, {.where = make({1, 0, 1, 0}, f64)}), Catch::Contains("sum"));
  CHECK_THROWS_AS(jnp::sum(x, {}, false, {.where = array(std::vector<bool>{true, false, true}, {3})}), ShapeError);
  CHECK_THROWS_AS(jnp::mean(x, {}, false, {.where = array(std::vector<bool>(24, true), {2, 3, 4})}), ShapeError);
  CHECK_THROWS_WITH(jnp::mean(x, {}, false, {.initial = 1.0}), Catch::Contains("mean") && Catch::Contains("initial"));
  CHECK_THROWS_AS(jnp::sum(x, {}, false, {.initial = make({1, 2}, f64)}), ShapeError);
  CHECK_THROWS_AS(jnp::sum(x, {5}, false, {.where = m}), ShapeError);
}

TEST_CASE("masked reductions: random inputs against loops, gradients and vmap", "[numpy_extra]") {
  auto xv = uniform(20, -2, 2);
  std::vector<bool> mv;
  for (int i = 0; i < 20; ++i) mv.push_back(uniform(1, 0, 1)[0] > 0.4);
  mv[0] = true;  // every row selects something
  for (int r = 0; r < 4; ++r) mv[r * 5] = true;
  Array x = make(xv, {4, 5}, f64), m = array(mv, {4, 5});
  std::vector<double> sum_ref(4, 0), max_ref(4, -1.5), mean_ref(4), var_ref(4);
  for (int r = 0; r < 4; ++r) {
    int n = 0;
    for (int c = 0; c < 5; ++c)
      if (mv[r * 5 + c]) {
        sum_ref[r] += xv[r * 5 + c];
        max_ref[r] = std::max(max_ref[r], xv[r * 5 + c]);
        ++n;
      }
    mean_ref[r] = sum_ref[r] / n;
    double ss = 0;
    for (int c = 0; c < 5; ++c)
      if (mv[r * 5 + c]) ss += (xv[r * 5 + c] - mean_ref[r]) * (xv[r * 5 + c] - mean_ref[r]);
    var_ref[r] = ss / n;
  }
  both_close([](auto& v) { return jnp::sum(v[0], {1}, false, {.where = v[1]}); }, {x, m}, sum_ref, f64, "sum");
  both_close([](auto& v) { return jnp::max(v[0], {-1}, false, {.where = v[1], .initial = -1.5}); }, {x, m}, max_ref,
             f64, "max");
  both_close([](auto& v) { return jnp::mean(v[0], {1}, false, {.where = v[1]}); }, {x, m}, mean_ref, f64, "mean");
  both_close([](auto& v) { return jnp::var(v[0], {1}, false, 0, {.where = v[1]}); }, {x, m}, var_ref, f64, "var");
  // float32 against the same double loop with float32 tolerances
  Array x32 = make(xv, {4, 5}, DType::float32);
  both_close([](auto& v) { return jnp::mean(v[0], {1}, false, {.where = v[1]}); }, {x32, m}, mean_ref,
             DType::float32, "mean f32");
  // Gradients by composition: d/dx of masked sums are the mask (finite differences for the rest).
  check_grad_fd([m](const Array& v) { return jnp::sum(v, {1}, false, {.where = m, .initial = 0.5}); }, xv, {4, 5},
                "grad sum where");
  check_grad_fd([m](const Array& v) { return jnp::mean(v, {1}, false, {.where = m}); }, xv, {4, 5}, "grad mean where");
  check_grad_fd([m](const Array& v) { return jnp::var(v, {1}, false, 0, {.where = m}); }, xv, {4, 5},
                "grad var where");
  check_grad_fd([m](const Array& v) { return jnp::prod(v, {1}, false, {.where = m}); }, xv, {4, 5},
                "grad prod where");
  check_grad_fd([m](const Array& v) { return jnp::max(v, {1}, false, {.where = m, .initial = -10.0}); }, xv, {4, 5},
                "grad max where");
  // vmap over rows equals the per-row reduction.
  Array vm = vmap([](const Array& a, const Array& b) { return jnp::mean(a, {}, false, {.where = b}); })(x, m);
  check_close(vm, mean_ref, f64, "vmap mean where");
  auto vmax = [](const Array& a, const Array& b) { return jnp::max(a, {}, false, {.where = b, .initial = -1.5}); };
  Array vs = vmap(vmax)(x, m);
  check_close(vs, max_ref, f64, "vmap max where");
}

TEST_CASE("jnp::einsum with repeated labels (diagonals, traces) matches JAX", "[numpy_extra]") {
  // a = jnp.arange(9.).reshape(3, 3); b = jnp.arange(27.).reshape(3, 3, 3)
  Array a = jnp::reshape(arange(0, 9, 1, f64), {3, 3}), b = jnp::reshape(arange(0, 27, 1, f64), {3, 3, 3});
  auto e1 = [](std::string spec) { return [spec](auto& v) { return jnp::einsum(spec, {v[0]}); }; };
  both_close(e1("ii->i"), {a}, {0, 4, 8}, f64, "ii->i");
  both_close(e1("ii->"), {a}, {12}, f64, "ii->");
  both_close(e1("iij->j"), {b}, {36, 39, 42}, f64, "iij->j");
  both_close(e1("iji->j"), {b}, {30, 39, 48}, f64, "iji->j");
  both_close(e1("iii->i"), {b}, {0, 13, 26}, f64, "iii->i");
  both_close(e1("jii->ij"), {b}, {0, 9, 18, 4, 13, 22, 8, 17, 26}, f64, "jii->ij");
  // jnp.einsum("ii,jj->", a, a + 1) -> 180; "ij,jj->i" -> [20, 56, 92]; "ii,ij->j" -> [60, 72, 84]
  Array a1 = jnp::add(a, 1.0);
  both_close([](auto& v) { return jnp::einsum("ii,jj->", {v[0], v[1]}); }, {a, a1}, {180}, f64, "ii,jj->");
  both_close([](auto& v) { return jnp::einsum("ij,jj->i", {v[0], v[0]}); }, {a}, {20, 56, 92}, f64, "ij,jj->i");
  both_close([](auto& v) { return jnp::einsum("ii,ij->j", {v[0], v[0]}); }, {a}, {60, 72, 84}, f64, "ii,ij->j");
  // Random: "bii->bi" (batched diagonal) and "ijji->" against loops.
  auto cv = uniform(2 * 4 * 4, -1, 1);
  Array c = make(cv, {2, 4, 4}, f64);
  std::vector<double> diag;
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 4; ++i) diag.push_back(cv[bb * 16 + i * 4 + i]);
  both_close(e1("bii->bi"), {c}, diag, f64, "bii->bi");
  auto dv = uniform(3 * 2 * 2 * 3, -1, 1);
  Array d = make(dv, {3, 2, 2, 3}, f64);
  double tr = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) tr += dv[((i * 2 + j) * 2 + j) * 3 + i];
  both_close(e1("ijji->"), {d}, {tr}, f64, "ijji->");
  // Gradient (the diagonal's transpose) and vmap.
  check_grad_fd([](const Array& v) { return jnp::einsum("iij->j", {v}); }, uniform(18, -1, 1), {3, 3, 2},
                "grad iij->j");
  check_grad_fd([](const Array& v) { return jnp::einsum("ii,ij->j", {v, v}); }, uniform(9, -1, 1), {3, 3},
                "grad ii,ij->j");
  Array vd = vmap([](const Array& v) { return jnp::einsum("ii->", {v}); })(c);
  check_close(vd, {diag[0] + diag[1] + diag[2] + diag[3], diag[4] + diag[5] + diag[6] + diag[7]}, f64, "vmap trace");
  // Bad input.
  CHECK_THROWS_WITH(jnp::einsum("ii->i", {zeros({2, 3}, f64)}), Catch::Contains("einsum") && Catch::Contains("'i'"));
  CHECK_THROWS_AS(jnp::einsum("i->ii", {zeros({2}, f64)}), ShapeError);
}

TEST_CASE("jnp::pad mode median matches JAX", "[numpy_extra]") {
  // jnp.pad(jnp.array([[3.,1.,2.],[7.,4.,9.]]), ((1,1),(2,1)), mode="median")
  Array x = make({3, 1, 2, 7, 4, 9}, {2, 3}, f64);
  both_close([](auto& v) { return jnp::pad(v[0], {{1, 1}, {2, 1}}, "median"); }, {x},
             {5, 5, 5, 2.5, 5.5, 5, 2, 2, 3, 1, 2, 2, 7, 7, 7, 4, 9, 7, 5, 5, 5, 2.5, 5.5, 5}, f64, "pad median");
  // jnp.pad(jnp.array([[3,1,2,8],[7,4,9,5]], jnp.int32), 1, mode="median") (int32, rounded half to even)
  both_exact([](auto& v) { return jnp::pad(v[0], 1, "median"); }, {make_int({3, 1, 2, 8, 7, 4, 9, 5}, {2, 4},
                                                                             DType::int32)},
             {6, 5, 2, 6, 6, 6, 2, 3, 1, 2, 8, 2, 6, 7, 4, 9, 5, 6, 6, 5, 2, 6, 6, 6}, DType::int32, "pad median int");
  // jnp.pad(jnp.array([1., nan, 3.]), 1, mode="median") -> [nan, 1, nan, 3, nan]
  both_close([](auto& v) { return jnp::pad(v[0], 1, "median"); }, {make({1, kNaN, 3}, f64)},
             {kNaN, 1, kNaN, 3, kNaN}, f64, "pad median nan");
  // jnp.pad(jnp.array([5., 1., 4., 2.]), (2, 1), mode="median") -> [3, 3, 5, 1, 4, 2, 3]
  both_close([](auto& v) { return jnp::pad(v[0], {{2, 1}}, "median"); }, {make({5, 1, 4, 2}, f64)},
             {3, 3, 5, 1, 4, 2, 3}, f64, "pad median 1d");
  CHECK_THROWS_AS(jnp::pad(zeros({0, 2}, f64), 1, "median"), ShapeError);
}
