// jnp's unique rows (unique with an axis) and set operations (setdiff1d, setxor1d, intersect1d) against JAX 0.10.2
// (x64, CPU) on fixed inputs (the values below are JAX's outputs), and against std::set / std::map references on
// random inputs, eagerly and under jit (with size). Inputs of the fixed cases:
//   i2 = int32 [[1,2],[3,4],[1,2],[0,9],[3,4]];  f2 = float32 [[1,nan],[0,2],[1,nan],[-0,2],[1,0]]
//   a = int32 [5,1,3,1,7,3,9];  b = int32 [[3,4],[9,9]];  fa = float32 [2,nan,1,5,nan,-0];  fb = float64 [nan,0,5,8]
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "jitx/numpy_set.h"
#include "exact_check.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
using Catch::Matchers::Contains;

namespace {
const double kNaN = NAN;
Array i2() { return array<int32_t>({1, 2, 3, 4, 1, 2, 0, 9, 3, 4}, {5, 2}); }
Array f2() { return array<float>({1, NAN, 0, 2, 1, NAN, -0.0f, 2, 1, 0}, {5, 2}); }
Array a7() { return array<int32_t>({5, 1, 3, 1, 7, 3, 9}); }
Array b4() { return array<int32_t>({3, 4, 9, 9}, {2, 2}); }
Array fa() { return array<float>({2, NAN, 1, 5, NAN, -0.0f}); }
Array fb() { return array<double>({kNaN, 0, 5, 8}); }

// unique_all(x, size, fill, equal_nan, axis), eagerly or under jit (which needs a size).
jnp::UniqueResult unique_rows(const Array& x, std::optional<int64_t> size, std::optional<Array> fill, bool equal_nan,
                              int64_t axis, bool jitted) {
  if (!jitted) return jnp::unique_all(x, size, fill, equal_nan, axis);
  auto f = jit([=](Array v) {
    auto r = jnp::unique_all(v, size, fill, equal_nan, axis);
    return std::make_tuple(r.values, r.indices, r.inverse, r.counts);
  });
  auto [v, i, inv, c] = f(x);
  return jnp::UniqueResult{v, i, inv, c};
}
}  // namespace

TEST_CASE("jnp::unique with an axis gives JAX's unique slices, indices, inverse and counts", "[jnp][unique]") {
  auto r = unique_rows(i2(), std::nullopt, std::nullopt, true, 0, false);
  check_exact(r.values, DType::int32, {3, 2}, {0, 9, 1, 2, 3, 4});
  check_exact(r.indices, DType::int64, {3}, {3, 0, 1});
  check_exact(r.inverse, DType::int64, {5}, {1, 2, 1, 0, 2});
  check_exact(r.counts, DType::int64, {3}, {1, 2, 2});
  auto c = unique_rows(i2(), std::nullopt, std::nullopt, true, 1, false);  // the two columns differ
  check_exact(c.values, DType::int32, {5, 2}, {1, 2, 3, 4, 1, 2, 0, 9, 3, 4});
  check_exact(c.counts, DType::int64, {2}, {1, 1});
  // Rows with NaNs: equal_nan makes [1, nan] twice one row; -0 == 0.
  auto f = unique_rows(f2(), std::nullopt, std::nullopt, true, 0, false);
  check_exact(f.values, DType::float32, {3, 2}, {0, 2, 1, 0, 1, kNaN});
  check_exact(f.indices, DType::int64, {3}, {1, 4, 0});
  check_exact(f.inverse, DType::int64, {5}, {2, 0, 2, 0, 1});
  check_exact(f.counts, DType::int64, {3}, {2, 1, 2});
  auto fn = unique_rows(f2(), std::nullopt, std::nullopt, false, 0, false);
  check_exact(fn.values, DType::float32, {4, 2}, {0, 2, 1, 0, 1, kNaN, 1, kNaN});
  check_exact(fn.counts, DType::int64, {4}, {2, 1, 1, 1});
  check_exact(jnp::unique(f2(), std::nullopt, std::nullopt, true, -1), DType::float32, {5, 2},
             {1, kNaN, 0, 2, 1, kNaN, -0.0, 2, 1, 0});
  // 3-D, the axis in the middle and last: x3[i, j, k] = (12 i + 4 j + k) % 3.
  std::vector<int32_t> x3v;
  for (int i = 0; i < 24; ++i) x3v.push_back(i % 3);
  Array x3 = array<int32_t>(x3v, {2, 3, 4});
  auto m = jnp::unique_all(x3, std::nullopt, std::nullopt, true, 1);
  check_exact(m.values, DType::int32, {2, 3, 4}, x3.astype(DType::float64).to_vector<double>());
  check_exact(m.counts, DType::int64, {3}, {1, 1, 1});
  check_exact(jnp::unique(x3, std::nullopt, std::nullopt, true, 2), DType::int32, {2, 3, 3},
             {0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2, 1, 2, 0, 2, 0, 1});
  // 1-D with axis 0: the inverse stays 1-D.
  auto one = jnp::unique_all(array<int64_t>({3, 1, 3}), std::nullopt, std::nullopt, true, 0);
  check_exact(one.inverse, DType::int64, {3}, {1, 0, 1});
  for (bool jitted : {false, true}) {
    INFO((jitted ? "under jit" : "eagerly"));
    auto s6 = unique_rows(i2(), 6, std::nullopt, true, 0, jitted);  // padded with the first (smallest) row
    check_exact(s6.values, DType::int32, {6, 2}, {0, 9, 1, 2, 3, 4, 0, 9, 0, 9, 0, 9});
    check_exact(s6.indices, DType::int64, {6}, {3, 0, 1, 3, 3, 3});
    check_exact(s6.inverse, DType::int64, {5}, {1, 2, 1, 0, 2});
    check_exact(s6.counts, DType::int64, {6}, {1, 2, 2, 0, 0, 0});
    auto fill = unique_rows(i2(), 6, Array(-1), true, 0, jitted);
    check_exact(fill.values, DType::int32, {6, 2}, {0, 9, 1, 2, 3, 4, -1, -1, -1, -1, -1, -1});
    auto s2 = unique_rows(i2(), 2, std::nullopt, true, 0, jitted);
    check_exact(s2.values, DType::int32, {2, 2}, {0, 9, 1, 2});
    check_exact(s2.counts, DType::int64, {2}, {1, 2});
  }
}

TEST_CASE("jnp::unique with an axis: zero-sized slices and bad axes", "[jnp][unique]") {
  // Rows without elements are all one (empty) row, as in JAX: values (1, 0), count 3.
  auto z = jnp::unique_all(zeros({3, 0}, DType::float64), std::nullopt, std::nullopt, true, 0);
  check_exact(z.values, DType::float64, {1, 0}, {});
  check_exact(z.indices, DType::int64, {1}, {0});
  check_exact(z.inverse, DType::int64, {3}, {0, 0, 0});
  check_exact(z.counts, DType::int64, {1}, {3});
  check_exact(jnp::unique(zeros({3, 0}, DType::float64), 2, Array(1.0), true, 0), DType::float64, {2, 0}, {});
  auto none = jnp::unique_all(zeros({0, 3}, DType::float64), std::nullopt, std::nullopt, true, 0);
  check_exact(none.values, DType::float64, {0, 3}, {});
  check_exact(none.counts, DType::int64, {0}, {});
  check_exact(jnp::unique(zeros({0, 3}, DType::float64), 2, Array(4.0), true, 0), DType::float64, {2, 3},
             {4, 4, 4, 4, 4, 4});
  CHECK_THROWS_WITH(jnp::unique(zeros({0, 3}), 2, std::nullopt, true, 0), Contains("fill_value"));
  CHECK_THROWS_AS(jnp::unique(i2(), std::nullopt, std::nullopt, true, 2), ShapeError);
  CHECK_THROWS_WITH(jnp::unique(i2(), std::nullopt, std::nullopt, true, -3), Contains("[unique]") && Contains("-3"));
  CHECK_THROWS_WITH(jnp::unique(Array(3.0f), std::nullopt, std::nullopt, true, 0), Contains("0-d"));
  CHECK_THROWS_AS(jit([](Array v) { return jnp::unique(v, std::nullopt, std::nullopt, true, 0); })(i2()), TracerError);
}

TEST_CASE("jnp::setdiff1d, setxor1d and intersect1d give JAX's values, dtypes and padding", "[jnp][setops]") {
  // Without size (concrete inputs only).
  check_exact(jnp::setdiff1d(a7(), b4()), DType::int32, {3}, {1, 5, 7});
  check_exact(jnp::setxor1d(a7(), b4()), DType::int32, {4}, {1, 4, 5, 7});
  check_exact(jnp::intersect1d(a7(), b4()), DType::int32, {2}, {3, 9});
  auto ii = jnp::intersect1d_with_indices(a7(), b4());
  check_exact(ii.indices1, DType::int64, {2}, {2, 6});
  check_exact(ii.indices2, DType::int64, {2}, {0, 2});
  // Floats: NaNs are one value per input and never in the other; setdiff1d keeps ar1's dtype, the others promote.
  check_exact(jnp::setdiff1d(fa(), fb()), DType::float32, {3}, {1, 2, kNaN});
  check_exact(jnp::setxor1d(fa(), fb()), DType::float64, {5}, {1, 2, 8, kNaN, kNaN});
  auto ff = jnp::intersect1d_with_indices(fa(), fb());
  check_exact(ff.values, DType::float64, {2}, {-0.0, 5});
  check_exact(ff.indices1, DType::int64, {2}, {5, 3});
  check_exact(ff.indices2, DType::int64, {2}, {1, 2});
  check_exact(jnp::setdiff1d(a7(), fb()), DType::int32, {4}, {1, 3, 7, 9});
  check_exact(jnp::setxor1d(a7(), fb()), DType::float64, {7}, {0, 1, 3, 7, 8, 9, kNaN});
  check_exact(jnp::setxor1d(fa(), a7()), DType::float32, {6}, {-0.0, 2, 3, 7, 9, kNaN});
  check_exact(jnp::setdiff1d(array<bool>({true, false}), array<bool>({true})), DType::bool_, {1}, {0});
  // Empty inputs.
  Array e = zeros({0}, DType::int32);
  check_exact(jnp::setdiff1d(a7(), e), DType::int32, {5}, {1, 3, 5, 7, 9});
  check_exact(jnp::setdiff1d(e, a7()), DType::int32, {0}, {});
  check_exact(jnp::setxor1d(e, a7()), DType::int32, {5}, {1, 3, 5, 7, 9});
  check_exact(jnp::intersect1d(a7(), e), DType::int32, {0}, {});
  // assume_unique: no deduplication; intersect1d's indices are then int32 (JAX's narrowest index type).
  Array ua = array<int32_t>({5, 1, 3, 7}), ub = array<int32_t>({3, 9, 5, 0, 2});
  check_exact(jnp::setdiff1d(ua, ub, true), DType::int32, {2}, {1, 7});
  check_exact(jnp::setxor1d(ua, ub, true), DType::int32, {5}, {0, 1, 2, 7, 9});
  auto ui = jnp::intersect1d_with_indices(ua, ub, true);
  check_exact(ui.values, DType::int32, {2}, {3, 5});
  check_exact(ui.indices1, DType::int32, {2}, {2, 0});
  check_exact(ui.indices2, DType::int32, {2}, {0, 2});
  for (bool jitted : {false, true}) {
    INFO((jitted ? "under jit" : "eagerly"));
    auto run = [&](auto f, const Array& p, const Array& q) {
      return jitted ? jit([f](Array x, Array y) { return f(x, y); })(p, q) : f(p, q);
    };
    auto sd = [](int64_t size, std::optional<Array> fill = std::nullopt) {
      return [=](const Array& x, const Array& y) { return jnp::setdiff1d(x, y, false, size, fill); };
    };
    auto sx = [](int64_t size, std::optional<Array> fill = std::nullopt) {
      return [=](const Array& x, const Array& y) { return jnp::setxor1d(x, y, false, size, fill); };
    };
    auto in = [](int64_t size, std::optional<Array> fill = std::nullopt) {
      return [=](const Array& x, const Array& y) { return jnp::intersect1d(x, y, false, size, fill); };
    };
    // size pads: setdiff1d with 0, setxor1d and intersect1d with the smallest result; or with fill_value.
    check_exact(run(sd(8), a7(), b4()), DType::int32, {8}, {1, 5, 7, 0, 0, 0, 0, 0});
    check_exact(run(sx(8), a7(), b4()), DType::int32, {8}, {1, 4, 5, 7, 1, 1, 1, 1});
    check_exact(run(in(8), a7(), b4()), DType::int32, {8}, {3, 9, 3, 3, 3, 3, 3, 3});
    check_exact(run(sd(8, Array(-3)), a7(), b4()), DType::int32, {8}, {1, 5, 7, -3, -3, -3, -3, -3});
    check_exact(run(sx(8, Array(-3)), a7(), b4()), DType::int32, {8}, {1, 4, 5, 7, -3, -3, -3, -3});
    check_exact(run(in(8, Array(-3)), a7(), b4()), DType::int32, {8}, {3, 9, -3, -3, -3, -3, -3, -3});
    check_exact(run(sd(2), a7(), b4()), DType::int32, {2}, {1, 5});
    check_exact(run(sx(2), a7(), b4()), DType::int32, {2}, {1, 4});
    // NaN results pad with NaN (the largest first, as JAX); -0 keeps its sign.
    check_exact(run(sd(8), fa(), fb()), DType::float32, {8}, {1, 2, kNaN, 0, 0, 0, 0, 0});
    check_exact(run(sx(8), fa(), fb()), DType::float64, {8}, {1, 2, 8, kNaN, kNaN, kNaN, kNaN, kNaN});
    check_exact(run(in(8), fa(), fb()), DType::float64, {8}, {-0.0, 5, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0});
    check_exact(run(sx(8, Array(-3)), fa(), fb()), DType::float64, {8}, {1, 2, 8, kNaN, kNaN, -3, -3, -3});
    check_exact(run(sx(2), a7(), fb()), DType::float64, {2}, {0, 1});
    check_exact(run(in(2), a7(), fb()), DType::float64, {2}, {5, 5});
    // setdiff1d converts its fill_value to ar1's dtype; the others promote with it.
    check_exact(run(sd(6, Array(2.5)), a7(), b4()), DType::int32, {6}, {1, 5, 7, 2, 2, 2});
    check_exact(run(sx(9, Array(2.5).astype(DType::float64)), a7(), b4()), DType::float64, {9},
               {1, 4, 5, 7, 2.5, 2.5, 2.5, 2.5, 2.5});
    // Empty inputs with size: setdiff1d gives fill_value, setxor1d the other's values.
    Array e = zeros({0}, DType::int32);
    check_exact(run(sd(8), a7(), e), DType::int32, {8}, {1, 3, 5, 7, 9, 0, 0, 0});
    check_exact(run(sd(2), e, a7()), DType::int32, {2}, {0, 0});
    check_exact(run(sx(8), e, a7()), DType::int32, {8}, {1, 3, 5, 7, 9, 1, 1, 1});
    check_exact(run(in(8, Array(-3)), e, a7()), DType::int32, {8}, {-3, -3, -3, -3, -3, -3, -3, -3});
    // Indices with size: padding entries hold the out-of-range index (ar1.size, ar2.size).
    auto idx = [&](const Array& p, const Array& q, int64_t size, bool unique) {
      if (!jitted) return jnp::intersect1d_with_indices(p, q, unique, size);
      auto [v, i1, i2] = jit([=](Array x, Array y) {
        auto r = jnp::intersect1d_with_indices(x, y, unique, size);
        return std::make_tuple(r.values, r.indices1, r.indices2);
      })(p, q);
      return jnp::Intersect1dResult{v, i1, i2};
    };
    auto s8 = idx(a7(), b4(), 8, false);
    check_exact(s8.indices1, DType::int64, {8}, {2, 6, 7, 7, 7, 7, 7, 7});
    check_exact(s8.indices2, DType::int64, {8}, {0, 2, 4, 4, 4, 4, 4, 4});
    auto f8 = idx(fa(), a7(), 8, false);
    check_exact(f8.values, DType::float32, {8}, {1, 5, 1, 1, 1, 1, 1, 1});
    check_exact(f8.indices1, DType::int64, {8}, {2, 3, 6, 6, 6, 6, 6, 6});
    check_exact(f8.indices2, DType::int64, {8}, {1, 0, 7, 7, 7, 7, 7, 7});
    auto u6 = idx(ua, ub, 6, true);
    check_exact(u6.values, DType::int32, {6}, {3, 5, 3, 3, 3, 3});
    check_exact(u6.indices1, DType::int64, {6}, {2, 0, 4, 4, 4, 4});
    check_exact(u6.indices2, DType::int64, {6}, {0, 2, 5, 5, 5, 5});
    check_exact(run([](const Array& x, const Array& y) { return jnp::setdiff1d(x, y, true, 6); }, ua, ub), DType::int32,
               {6}, {1, 7, 0, 0, 0, 0});
    check_exact(run([](const Array& x, const Array& y) { return jnp::setxor1d(x, y, true, 6); }, ua, ub), DType::int32,
               {6}, {0, 1, 2, 7, 9, 0});
  }
}

TEST_CASE("jnp set operations and unique rows agree with std::set on random inputs", "[jnp][setops]") {
  std::mt19937& g = rng();
  std::uniform_int_distribution<int> len(0, 24), val(-6, 9);
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<int32_t> va(static_cast<size_t>(len(g))), vb(static_cast<size_t>(len(g)));
    for (auto& v : va) v = val(g);
    for (auto& v : vb) v = val(g);
    std::set<int32_t> sa(va.begin(), va.end()), sb(vb.begin(), vb.end());
    std::vector<double> diff, sym, both;
    std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(diff));
    std::set_symmetric_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(sym));
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(both));
    Array A = array<int32_t>(va), B = array<int32_t>(vb);
    INFO("trial " << trial << ": " << va.size() << " and " << vb.size() << " values");
    auto n = [](const std::vector<double>& v) { return Shape{static_cast<int64_t>(v.size())}; };
    check_exact(jnp::setdiff1d(A, B), DType::int32, n(diff), diff);
    check_exact(jnp::setxor1d(A, B), DType::int32, n(sym), sym);
    check_exact(jnp::intersect1d(A, B), DType::int32, n(both), both);
    // Indices: the first occurrence of each common value in each input.
    auto r = jnp::intersect1d_with_indices(A, B);
    std::vector<double> first_a, first_b;
    for (double v : both) {
      first_a.push_back(static_cast<double>(std::find(va.begin(), va.end(), v) - va.begin()));
      first_b.push_back(static_cast<double>(std::find(vb.begin(), vb.end(), v) - vb.begin()));
    }
    check_exact(r.indices1, DType::int64, n(both), first_a);
    check_exact(r.indices2, DType::int64, n(both), first_b);
    // Under jit with a size of 10: the first 10 results, then fill_value 99.
    auto pad = [](std::vector<double> v) {
      v.resize(10, 99);
      return v;
    };
    auto f = jit([](Array x, Array y) {
      return std::make_tuple(jnp::setdiff1d(x, y, false, 10, Array(99)), jnp::setxor1d(x, y, false, 10, Array(99)),
                             jnp::intersect1d(x, y, false, 10, Array(99)));
    });
    auto [d10, x10, i10] = f(A, B);
    check_exact(d10, DType::int32, {10}, pad(diff));
    check_exact(x10, DType::int32, {10}, pad(sym));
    check_exact(i10, DType::int32, {10}, pad(both));
  }
  // Unique rows of random small-integer matrices against a std::map of rows (lexicographic order).
  std::uniform_int_distribution<int> rows_d(1, 12), small(0, 2);
  for (int trial = 0; trial < 8; ++trial) {
    int64_t rows = rows_d(g), cols = 1 + trial % 3;
    std::vector<int32_t> v(static_cast<size_t>(rows * cols));
    for (auto& x : v) x = small(g);
    std::map<std::vector<int32_t>, std::pair<int64_t, int64_t>> seen;  // row -> (first index, count)
    for (int64_t i = 0; i < rows; ++i) {
      std::vector<int32_t> row(v.begin() + i * cols, v.begin() + (i + 1) * cols);
      auto it = seen.find(row);
      if (it == seen.end())
        seen[row] = {i, 1};
      else
        ++it->second.second;
    }
    std::vector<double> want_vals, want_first, want_counts, want_inverse;
    for (auto& [row, fc] : seen) {
      want_vals.insert(want_vals.end(), row.begin(), row.end());
      want_first.push_back(static_cast<double>(fc.first));
      want_counts.push_back(static_cast<double>(fc.second));
    }
    for (int64_t i = 0; i < rows; ++i) {
      std::vector<int32_t> row(v.begin() + i * cols, v.begin() + (i + 1) * cols);
      want_inverse.push_back(static_cast<double>(std::distance(seen.begin(), seen.find(row))));
    }
    INFO("unique rows, trial " << trial << ": " << rows << "x" << cols);
    int64_t u = static_cast<int64_t>(seen.size());
    auto r = jnp::unique_all(array<int32_t>(v, {rows, cols}), std::nullopt, std::nullopt, true, 0);
    check_exact(r.values, DType::int32, {u, cols}, want_vals);
    check_exact(r.indices, DType::int64, {u}, want_first);
    check_exact(r.inverse, DType::int64, {rows}, want_inverse);
    check_exact(r.counts, DType::int64, {u}, want_counts);
    // The same along axis 1 of the transpose.
    auto t = jnp::unique_all(jnp::transpose(array<int32_t>(v, {rows, cols})), std::nullopt, std::nullopt, true, 1);
    check_exact(jnp::transpose(t.values), DType::int32, {u, cols}, want_vals);
    check_exact(t.counts, DType::int64, {u}, want_counts);
  }
}

TEST_CASE("jnp set operations: what needs a size under jit, and bad arguments", "[jnp][setops]") {
  auto sd = [](Array x, Array y) { return jnp::setdiff1d(x, y); };
  CHECK_THROWS_AS(jit(sd)(a7(), b4()), TracerError);
  CHECK_THROWS_WITH(jit(sd)(a7(), b4()), Contains("[setdiff1d]") && Contains("size="));
  CHECK_THROWS_WITH(jit([](Array x, Array y) { return jnp::setxor1d(x, y); })(a7(), b4()),
                    Contains("[setxor1d]") && Contains("size="));
  CHECK_THROWS_WITH(jit([](Array x, Array y) { return jnp::intersect1d(x, y); })(a7(), b4()),
                    Contains("[intersect1d]") && Contains("size="));
  CHECK_THROWS_WITH(jnp::setdiff1d(a7(), b4(), false, -1), Contains("[setdiff1d]") && Contains("size must be >= 0"));
  CHECK_THROWS_WITH(jnp::setxor1d(a7(), b4(), false, -2), Contains("-2"));
  CHECK_THROWS_WITH(jnp::setdiff1d(a7(), b4(), false, 3, array<int32_t>({1, 2})),
                    Contains("fill_value must be a scalar"));
  CHECK_THROWS_AS(jnp::intersect1d(Array(), b4()), TypeError);
  // size=0: empty results (a documented difference: JAX raises an internal error).
  check_exact(jnp::setxor1d(a7(), b4(), false, 0), DType::int32, {0}, {});
  check_exact(jnp::intersect1d_with_indices(a7(), b4(), false, 0).indices1, DType::int64, {0}, {});
}
