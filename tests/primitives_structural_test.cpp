// Reductions, argmax/argmin, cumulative ops, reduce_window, dot_general and shape primitives vs plain loops.
#include <algorithm>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {


// Reduces x (shape s) over `axes` with `op`, starting from `init`; also returns sum |x| per output (for tolerances).
std::pair<std::vector<double>, std::vector<double>> ref_reduce(const std::vector<double>& x, const Shape& s,
                                                               const std::vector<int64_t>& axes, double init,
                                                               const std::function<double(double, double)>& op) {
  Shape os;
  for (int64_t a = 0; a < (int64_t)s.size(); ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) os.push_back(s[a]);
  std::vector<double> out(numel(os), init), mag(numel(os), 0);
  auto ost = strides_of(os);
  for (int64_t i = 0; i < numel(s); ++i) {
    auto idx = unravel(i, s);
    int64_t o = 0, k = 0;
    for (int64_t a = 0; a < (int64_t)s.size(); ++a)
      if (std::find(axes.begin(), axes.end(), a) == axes.end()) o += idx[a] * ost[k++];
    out[o] = op(out[o], x[i]);
    mag[o] = mag[o] == 0 ? std::fabs(x[i]) : mag[o] * std::max(1.0, std::fabs(x[i]));
  }
  return {out, mag};
}
}  // namespace

TEST_CASE("reduce_sum/prod/max/min over several axis sets", "[primitives]") {
  const Shape s{2, 3, 4};
  const std::vector<std::vector<int64_t>> axis_sets{{}, {0}, {1}, {2}, {0, 2}, {0, 1, 2}};
  for (DType d : float_dtypes()) {
    auto x = rounded(uniform(24, -2, 2), d);
    for (auto& ax : axis_sets) {
      INFO("axes size " << ax.size());
      auto [sum, sabs] = ref_reduce(x, s, ax, 0, [](double a, double b) { return a + b; });
      // Sums are compared against sum |x|: a sum of n rounded terms has an error of that order.
      std::vector<double> mag;
      {
        auto [m, unused] = ref_reduce(x, s, ax, 0, [](double a, double b) { return a + std::fabs(b); });
        mag = m;
      }
      both_close([ax](auto& a) { return lax::reduce_sum(a[0], ax); }, {make(x, s, d)}, sum, d, "reduce_sum", mag);
      auto [prod, pm] = ref_reduce(x, s, ax, 1, [](double a, double b) { return a * b; });
      std::vector<double> pmag;
      for (double p : prod) pmag.push_back(std::fabs(p) * 4);  // up to 24 roundings of a product
      both_close([ax](auto& a) { return lax::reduce_prod(a[0], ax); }, {make(x, s, d)}, prod, d, "reduce_prod", pmag);
      auto [mx, m1] = ref_reduce(x, s, ax, -INFINITY, [](double a, double b) { return std::max(a, b); });
      both_close([ax](auto& a) { return lax::reduce_max(a[0], ax); }, {make(x, s, d)}, mx, d, "reduce_max");
      auto [mn, m2] = ref_reduce(x, s, ax, INFINITY, [](double a, double b) { return std::min(a, b); });
      both_close([ax](auto& a) { return lax::reduce_min(a[0], ax); }, {make(x, s, d)}, mn, d, "reduce_min");
    }
  }
  for (DType d : int_dtypes()) {
    auto xi = random_ints(24, d);
    for (auto& ax : axis_sets) {
      bool u = is_unsigned_integer(d);
      Shape os;
      for (int64_t a = 0; a < 3; ++a)
        if (std::find(ax.begin(), ax.end(), a) == ax.end()) os.push_back(s[a]);
      int64_t on = numel(os);
      std::vector<uint64_t> sum(on, 0), prod(on, 1), band(on, ~0ull), bor(on, 0);
      std::vector<int64_t> mx(on), mn(on);
      std::vector<bool> seen(on, false);
      auto ost = strides_of(os);
      for (int64_t i = 0; i < 24; ++i) {
        auto idx = unravel(i, s);
        int64_t o = 0, k = 0;
        for (int64_t a = 0; a < 3; ++a)
          if (std::find(ax.begin(), ax.end(), a) == ax.end()) o += idx[a] * ost[k++];
        uint64_t v = uint64_t(xi[i]);
        sum[o] += v, prod[o] *= v, band[o] &= v, bor[o] |= v;
        auto less = [u](int64_t a, int64_t b) { return u ? uint64_t(a) < uint64_t(b) : a < b; };
        if (!seen[o] || less(mx[o], xi[i])) mx[o] = xi[i];
        if (!seen[o] || less(xi[i], mn[o])) mn[o] = xi[i];
        seen[o] = true;
      }
      auto w = [d](const std::vector<uint64_t>& v) {
        std::vector<int64_t> r;
        for (auto x : v) r.push_back(wrap(x, d));
        return r;
      };
      Array a = make_int(xi, s, d);
      both_exact([ax](auto& v) { return lax::reduce_sum(v[0], ax); }, {a}, w(sum), d, "int reduce_sum wraps");
      both_exact([ax](auto& v) { return lax::reduce_prod(v[0], ax); }, {a}, w(prod), d, "int reduce_prod wraps");
      both_exact([ax](auto& v) { return lax::reduce_max(v[0], ax); }, {a}, mx, d, "int reduce_max");
      both_exact([ax](auto& v) { return lax::reduce_min(v[0], ax); }, {a}, mn, d, "int reduce_min");
      both_exact([ax](auto& v) { return lax::reduce_and(v[0], ax); }, {a}, w(band), d, "int reduce_and");
      both_exact([ax](auto& v) { return lax::reduce_or(v[0], ax); }, {a}, w(bor), d, "int reduce_or");
    }
  }
  // bool and/or, and empty axes giving the identity.
  Array b = make_int({1, 1, 0, 1, 1, 1}, {2, 3}, bool_);
  both_exact([](auto& v) { return lax::reduce_and(v[0], {1}); }, {b}, {0, 1}, bool_, "bool reduce_and");
  both_exact([](auto& v) { return lax::reduce_or(v[0], {0}); }, {b}, {1, 1, 1}, bool_, "bool reduce_or");
  Array e = make({}, {3, 0}, float32);
  both_close([](auto& v) { return lax::reduce_sum(v[0], {1}); }, {e}, {0, 0, 0}, float32, "empty sum");
  both_close([](auto& v) { return lax::reduce_prod(v[0], {1}); }, {e}, {1, 1, 1}, float32, "empty prod");
  both_close([](auto& v) { return lax::reduce_max(v[0], {1}); }, {e}, {-INFINITY, -INFINITY, -INFINITY}, float32,
             "empty max");
  both_exact([](auto& v) { return lax::reduce_min(v[0], {1}); }, {make_int({}, {2, 0}, int8)}, {127, 127}, int8,
             "empty int8 min");
  both_exact([](auto& v) { return lax::reduce_min(v[0], {1}); }, {make_int({}, {1, 0}, uint64)}, {-1}, uint64,
             "empty u64 min is all ones");
}

TEST_CASE("argmax/argmin: ties pick the first index, NaN wins", "[primitives]") {
  for (DType d : float_dtypes()) {
    // rows: ties; a NaN (first NaN wins over a later NaN and over larger numbers); -inf only.
    std::vector<double> x{1, 3, 3, 0, 2, NAN, 5, NAN, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -1, -1, -2, -2};
    both_exact([](auto& a) { return lax::argmax(a[0], 1); }, {make(x, {4, 4}, d)}, {1, 1, 0, 0}, int32, "argmax rows");
    both_exact([](auto& a) { return lax::argmin(a[0], 1); }, {make(x, {4, 4}, d)}, {3, 1, 0, 2}, int32, "argmin rows");
    both_exact([](auto& a) { return lax::argmax(a[0], 0, int64); }, {make(x, {4, 4}, d)}, {1, 1, 1, 1}, int64,
               "argmax cols");
    auto r = rounded(uniform(15, -5, 5), d);
    std::vector<int64_t> am, an;
    for (int i = 0; i < 3; ++i) {
      auto b = r.begin() + 5 * i;
      am.push_back(std::max_element(b, b + 5) - b);
      an.push_back(std::min_element(b, b + 5) - b);
    }
    both_exact([](auto& a) { return lax::argmax(a[0], 1, uint8); }, {make(r, {3, 5}, d)}, am, uint8, "argmax random");
    both_exact([](auto& a) { return lax::argmin(a[0], 1); }, {make(r, {3, 5}, d)}, an, int32, "argmin random");
  }
  for (DType d : int_dtypes()) {
    auto x = random_ints(12, d);
    bool u = is_unsigned_integer(d);
    std::vector<int64_t> am, an;
    for (int i = 0; i < 3; ++i) {
      int64_t bi = 0, si = 0;
      for (int j = 1; j < 4; ++j) {
        int64_t v = x[4 * i + j];
        if (u ? uint64_t(v) > uint64_t(x[4 * i + bi]) : v > x[4 * i + bi]) bi = j;
        if (u ? uint64_t(v) < uint64_t(x[4 * i + si]) : v < x[4 * i + si]) si = j;
      }
      am.push_back(bi), an.push_back(si);
    }
    both_exact([](auto& a) { return lax::argmax(a[0], 1); }, {make_int(x, {3, 4}, d)}, am, int32, "int argmax");
    both_exact([](auto& a) { return lax::argmin(a[0], 1); }, {make_int(x, {3, 4}, d)}, an, int32, "int argmin");
  }
  // 64-bit values that a double cannot tell apart.
  const int64_t big = int64_t{1} << 60;
  both_exact([](auto& a) { return lax::argmax(a[0], 0); }, {make_int({big, big + 1, big - 1}, int64)}, {1}, int32,
             "argmax of nearby 64-bit ints");
  both_exact([](auto& a) { return lax::argmin(a[0], 0); }, {make_int({-1, -2, -3}, uint64)}, {2}, int32,
             "argmin of large u64");
}

TEST_CASE("cumulative ops, forward and reverse", "[primitives]") {
  const Shape s{3, 4};
  for (DType d : {float32, float64, bfloat16, float16, int32, uint8, int64}) {
    std::vector<double> x;
    if (is_floating(d)) x = rounded(uniform(12, 0.5, 1.5), d);
    else
      for (int i = 0; i < 12; ++i) x.push_back(double(int(rng()() % 7) - (d == uint8 ? 0 : 3)));
    for (int64_t axis : {0, 1}) {
      for (bool reverse : {false, true}) {
        std::vector<double> cs(12), cp(12), cmx(12), cmn(12), mag(12);
        for (int64_t i = 0; i < 12; ++i) {
          auto idx = unravel(i, s);
          double a = 0, p = 1, mx = -INFINITY, mn = INFINITY, m = 0;
          for (int64_t k = 0; k < s[axis]; ++k) {
            bool in = reverse ? k >= idx[axis] : k <= idx[axis];
            if (!in) continue;
            auto j = idx;
            j[axis] = k;
            double v = x[j[0] * 4 + j[1]];
            a += v, p *= v, mx = std::max(mx, v), mn = std::min(mn, v), m += std::fabs(v);
          }
          cs[i] = a, cp[i] = p, cmx[i] = mx, cmn[i] = mn, mag[i] = m;
        }
        std::string what = std::string(" axis ") + std::to_string(axis) + (reverse ? " reverse" : "");
        Array a = make(x, s, d);
        if (is_floating(d)) {
          std::vector<double> pmag;
          for (double v : cp) pmag.push_back(std::fabs(v) * 4);
          both_close([=](auto& v) { return lax::cumsum(v[0], axis, reverse); }, {a}, cs, d, "cumsum" + what, mag);
          both_close([=](auto& v) { return lax::cumprod(v[0], axis, reverse); }, {a}, cp, d, "cumprod" + what, pmag);
          both_close([=](auto& v) { return lax::cummax(v[0], axis, reverse); }, {a}, cmx, d, "cummax" + what);
          both_close([=](auto& v) { return lax::cummin(v[0], axis, reverse); }, {a}, cmn, d, "cummin" + what);
        } else {
          auto ints = [d](const std::vector<double>& v) {
            std::vector<int64_t> r;
            for (double x : v) r.push_back(wrap(uint64_t(int64_t(x)), d));
            return r;
          };
          both_exact([=](auto& v) { return lax::cumsum(v[0], axis, reverse); }, {a}, ints(cs), d, "cumsum" + what);
          both_exact([=](auto& v) { return lax::cumprod(v[0], axis, reverse); }, {a}, ints(cp), d, "cumprod" + what);
          both_exact([=](auto& v) { return lax::cummax(v[0], axis, reverse); }, {a}, ints(cmx), d, "cummax" + what);
          both_exact([=](auto& v) { return lax::cummin(v[0], axis, reverse); }, {a}, ints(cmn), d, "cummin" + what);
        }
      }
    }
  }
  // Negative axes count from the end in jnp; lax refuses them, as JAX's lax.cumsum.
  both_close([](auto& v) { return jnp::cumsum(v[0], -1); }, {make({1, 2, 3, 4}, {2, 2}, float32)}, {1, 3, 3, 7},
             float32, "cumsum axis -1");
  CHECK_THROWS_AS(lax::cumsum(make({1, 2, 3, 4}, {2, 2}, float32), -1), ShapeError);
}

namespace {
// Plain reduce_window: windows over the (base-dilated, padded) input; positions outside contribute `init`.
std::vector<double> ref_window(const std::vector<double>& x, const Shape& s, const lax::WindowConfig& w, double init,
                               const std::function<double(double, double)>& op, Shape& out_shape) {
  size_t r = s.size();
  out_shape.clear();
  for (size_t a = 0; a < r; ++a) {
    int64_t bd = w.base_dilation.empty() ? 1 : w.base_dilation[a],
            wd = w.window_dilation.empty() ? 1 : w.window_dilation[a];
    int64_t padded = (s[a] - 1) * bd + 1 + w.padding[a].first + w.padding[a].second;
    int64_t span = (w.window_dimensions[a] - 1) * wd + 1;
    out_shape.push_back(padded < span ? 0 : (padded - span) / w.window_strides[a] + 1);
  }
  std::vector<double> out;
  for (int64_t o = 0; o < numel(out_shape); ++o) {
    auto oi = unravel(o, out_shape);
    double acc = init;
    for (int64_t k = 0; k < numel(w.window_dimensions); ++k) {
      auto wi = unravel(k, w.window_dimensions);
      int64_t lin = 0;
      bool in = true;
      for (size_t a = 0; a < r; ++a) {
        int64_t bd = w.base_dilation.empty() ? 1 : w.base_dilation[a],
                wd = w.window_dilation.empty() ? 1 : w.window_dilation[a];
        int64_t pos = oi[a] * w.window_strides[a] + wi[a] * wd - w.padding[a].first;
        if (pos < 0 || pos % bd != 0 || pos / bd >= s[a]) in = false;
        lin = lin * s[a] + (in ? pos / bd : 0);
      }
      if (in) acc = op(acc, x[lin]);
    }
    out.push_back(acc);
  }
  return out;
}
}  // namespace

TEST_CASE("reduce_window: pooling with strides, padding and dilation", "[primitives]") {
  const Shape s{5, 6};
  std::vector<lax::WindowConfig> configs{
      {{2, 2}, {2, 2}, {{0, 0}, {0, 0}}, {}, {}},          // 2x2 max-pool style
      {{3, 3}, {2, 1}, {{1, 1}, {0, 2}}, {}, {}},          // padded, strided
      {{2, 3}, {1, 2}, {{0, 1}, {1, 0}}, {2, 1}, {1, 2}},  // base and window dilation
      {{1, 6}, {1, 1}, {{0, 0}, {5, 0}}, {}, {}},          // a prefix window (what cumsum uses)
  };
  for (DType d : {float32, bfloat16, int32, uint8}) {
    std::vector<double> x = is_floating(d) ? rounded(uniform(30, -4, 4), d) : std::vector<double>{};
    if (!is_floating(d))
      for (int i = 0; i < 30; ++i) x.push_back(double(rng()() % 9) + (d == int32 ? -4 : 0));
    for (size_t c = 0; c < configs.size(); ++c) {
      auto w = configs[c];
      Shape os;
      double lo = d == uint8 ? 0 : d == int32 ? double(INT32_MIN) : -INFINITY;
      double hi = d == uint8 ? 255 : d == int32 ? double(INT32_MAX) : INFINITY;
      auto sum = ref_window(x, s, w, 0, [](double a, double b) { return a + b; }, os);
      auto mx = ref_window(x, s, w, lo, [](double a, double b) { return std::max(a, b); }, os);
      auto mn = ref_window(x, s, w, hi, [](double a, double b) { return std::min(a, b); }, os);
      auto mag = ref_window(x, s, w, 0, [](double a, double b) { return a + std::fabs(b); }, os);
      std::string what = "config " + std::to_string(c);
      Array a = make(x, s, d);
      auto f_sum = [w](auto& v) { return lax::reduce_window_sum(v[0], w); };
      auto f_max = [w](auto& v) { return lax::reduce_window_max(v[0], w); };
      auto f_min = [w](auto& v) { return lax::reduce_window_min(v[0], w); };
      auto shape_of = [&](const Fn& f) { return f({a}).shape(); };
      REQUIRE(shape_of(f_sum) == os);
      if (is_floating(d)) {
        both_close(f_sum, {a}, sum, d, "window sum " + what, mag);
        both_close(f_max, {a}, mx, d, "window max " + what);
        both_close(f_min, {a}, mn, d, "window min " + what);
      } else {
        auto ints = [](const std::vector<double>& v) { return std::vector<int64_t>(v.begin(), v.end()); };
        both_exact(f_sum, {a}, ints(sum), d, "window sum " + what);
        both_exact(f_max, {a}, ints(mx), d, "window max " + what);
        both_exact(f_min, {a}, ints(mn), d, "window min " + what);
      }
    }
  }
}

TEST_CASE("dot_general with batch and contracting dimensions", "[primitives]") {
  struct Case {
    Shape ls, rs;
    lax::DotDimensionNumbers dn;
  };
  // out[b..., lfree..., rfree...] = sum_c l * r
  const std::vector<Case> cases{
      {{3, 4}, {4, 5}, {{1}, {0}, {}, {}}},               // matmul
      {{4, 3}, {5, 4}, {{0}, {1}, {}, {}}},               // transposed operands
      {{2, 3, 4}, {2, 4, 5}, {{2}, {1}, {0}, {0}}},       // batched matmul
      {{3, 2, 4}, {4, 5, 2}, {{2}, {0}, {1}, {2}}},       // batch dims in other places
      {{2, 3, 4}, {3, 4, 2}, {{1, 2}, {0, 1}, {}, {}}},   // two contracting dims
      {{4}, {4}, {{0}, {0}, {}, {}}},                     // inner product
      {{3}, {2}, {{}, {}, {}, {}}},                       // outer product
  };
  for (DType d : {float32, float64, bfloat16, float16, int32, int8, uint32}) {
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      const auto& c = cases[ci];
      std::vector<double> l, r;
      if (is_floating(d)) l = rounded(uniform(numel(c.ls), -2, 2), d), r = rounded(uniform(numel(c.rs), -2, 2), d);
      else
        for (auto* v : {&l, &r})
          for (int64_t i = 0, n = numel(v == &l ? c.ls : c.rs); i < n; ++i) v->push_back(double(rng()() % 23));
      // Reference: enumerate every (l, r) element pair whose batch and contracting coordinates agree.
      auto free_axes = [](const Shape& s, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
        std::vector<int64_t> f;
        for (int64_t i = 0; i < (int64_t)s.size(); ++i)
          if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end())
            f.push_back(i);
        return f;
      };
      auto lf = free_axes(c.ls, c.dn.lhs_contracting, c.dn.lhs_batch);
      auto rf = free_axes(c.rs, c.dn.rhs_contracting, c.dn.rhs_batch);
      Shape os;
      for (auto b : c.dn.lhs_batch) os.push_back(c.ls[b]);
      for (auto f : lf) os.push_back(c.ls[f]);
      for (auto f : rf) os.push_back(c.rs[f]);
      std::vector<double> out(numel(os), 0), mag(numel(os), 0);
      auto ost = strides_of(os);
      for (int64_t i = 0; i < numel(c.ls); ++i) {
        auto li = unravel(i, c.ls);
        for (int64_t j = 0; j < numel(c.rs); ++j) {
          auto ri = unravel(j, c.rs);
          bool ok = true;
          for (size_t k = 0; k < c.dn.lhs_batch.size(); ++k) ok &= li[c.dn.lhs_batch[k]] == ri[c.dn.rhs_batch[k]];
          for (size_t k = 0; k < c.dn.lhs_contracting.size(); ++k)
            ok &= li[c.dn.lhs_contracting[k]] == ri[c.dn.rhs_contracting[k]];
          if (!ok) continue;
          int64_t o = 0, k = 0;
          for (auto b : c.dn.lhs_batch) o += li[b] * ost[k++];
          for (auto f : lf) o += li[f] * ost[k++];
          for (auto f : rf) o += ri[f] * ost[k++];
          out[o] += l[i] * r[j];
          mag[o] += std::fabs(l[i] * r[j]);
        }
      }
      std::string what = "dot case " + std::to_string(ci);
      auto dn = c.dn;
      Fn f = [dn](auto& v) { return lax::dot_general(v[0], v[1], dn); };
      std::vector<Array> in{make(l, c.ls, d), make(r, c.rs, d)};
      REQUIRE(f(in).shape() == os);
      if (is_floating(d)) {
        both_close(f, in, out, d, what, mag);
      } else {
        std::vector<int64_t> ref;
        for (double v : out) ref.push_back(wrap(uint64_t(int64_t(v)), d));  // i8 wraps
        both_exact(f, in, ref, d, what);
      }
    }
  }
  // preferred_element_type accumulates into a wider type.
  Fn wide = [](auto& v) { return lax::dot_general(v[0], v[1], {{0}, {0}, {}, {}}, int32); };
  both_exact(wide, {make_int({100, 100, 100}, int8), make_int({100, 100, -100}, int8)}, {10000}, int32,
             "i8 x i8 -> i32");
  Fn widef = [](auto& v) { return lax::dot_general(v[0], v[1], {{0}, {0}, {}, {}}, float32); };
  both_close(widef, {make({256, 1, 1}, bfloat16), make({1, 1, 1}, bfloat16)}, {258}, float32, "bf16 x bf16 -> f32");
}

TEST_CASE("broadcast_in_dim, reshape, transpose, rev", "[primitives]") {
  auto x = uniform(6, -5, 5);
  Array a = make(x, {2, 3}, float64);
  // broadcast (2,3) -> (4,2,3) and (2,1)->(2,5) via a size-1 axis, and to (3,2,4) along dims 1,2 of a (2,1)?
  std::vector<double> ref;
  for (int i = 0; i < 4; ++i) ref.insert(ref.end(), x.begin(), x.end());
  both_close([](auto& v) { return lax::broadcast_in_dim(v[0], {4, 2, 3}, {1, 2}); }, {a}, ref, float64, "bcast lead");
  ref.clear();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) ref.push_back(x[i * 3 + k]);
  both_close([](auto& v) { return lax::broadcast_in_dim(v[0], {2, 4, 3}, {0, 2}); }, {a}, ref, float64, "bcast mid");
  both_close([](auto& v) { return lax::broadcast_in_dim(v[0], {2, 3}, {0, 1}); },
             {make({1, 2}, {2, 1}, float64)}, {1, 1, 1, 2, 2, 2}, float64, "bcast size-1 axis");
  both_exact([](auto& v) { return lax::broadcast_in_dim(v[0], {2, 2}, {}); }, {make_int({7}, {}, uint8)},
             {7, 7, 7, 7}, uint8, "bcast scalar");
  both_close([](auto& v) { return lax::reshape(v[0], {3, 1, 2}); }, {a}, x, float64, "reshape");
  // transpose (2,3,4) by (2,0,1)
  auto y = uniform(24, -1, 1);
  ref.clear();
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) ref.push_back(y[i * 12 + j * 4 + k]);
  both_close([](auto& v) { return lax::transpose(v[0], {2, 0, 1}); }, {make(y, {2, 3, 4}, float64)}, ref, float64,
             "transpose");
  ref.clear();
  for (int i = 1; i >= 0; --i)
    for (int j = 0; j < 3; ++j)
      for (int k = 3; k >= 0; --k) ref.push_back(y[i * 12 + j * 4 + k]);
  both_close([](auto& v) { return lax::rev(v[0], {0, 2}); }, {make(y, {2, 3, 4}, float64)}, ref, float64, "rev");
  both_exact([](auto& v) { return lax::rev(v[0], {0}); }, {make_int({1, 0, 0}, bool_)}, {0, 0, 1}, bool_, "rev bool");
}

TEST_CASE("slice with strides, dynamic_slice clamping, dynamic_update_slice", "[primitives]") {
  std::vector<int64_t> x(35);
  for (int i = 0; i < 35; ++i) x[i] = i * 3 - 50;
  Array a = make_int(x, {5, 7}, int32);
  std::vector<int64_t> ref;
  for (int i = 1; i < 5; i += 2)
    for (int j = 0; j < 6; j += 3) ref.push_back(x[i * 7 + j]);
  both_exact([](auto& v) { return lax::slice(v[0], {1, 0}, {5, 6}, {2, 3}); }, {a}, ref, int32, "strided slice");
  both_exact([](auto& v) { return lax::slice(v[0], {2, 3}, {2, 5}); }, {a}, {}, int32, "empty slice");
  ref.clear();
  for (int j = 2; j < 7; j += 2) ref.push_back(x[3 * 7 + j]);
  both_exact([](auto& v) { return lax::slice_in_dim(lax::slice_in_dim(v[0], 3, 4, 1, 0), 2, 7, 2, -1); }, {a}, ref,
             int32, "slice_in_dim");
  // dynamic_slice: a negative start counts from the end once (as JAX's lax.dynamic_slice), then starts
  // are clamped so the window stays inside (start 4 of size 3 in 5 -> 2; -3 -> 2; 9 -> 5).
  auto wrap = [](int64_t v, int64_t n) { return v < 0 ? v + n : v; };
  auto ds = [&](int64_t r0, int64_t c0) {
    int64_t r = std::clamp<int64_t>(wrap(r0, 5), 0, 2), c = std::clamp<int64_t>(wrap(c0, 7), 0, 5);
    std::vector<int64_t> out;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) out.push_back(x[(r + i) * 7 + c + j]);
    return out;
  };
  for (auto [r0, c0] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {4, 6}, {-3, 9}, {2, -1}}) {
    INFO("starts " << r0 << "," << c0);
    for (DType idt : {int32, int64, uint8}) {
      if (idt == uint8 && (r0 < 0 || c0 < 0)) continue;
      Fn f = [](auto& v) { return lax::dynamic_slice(v[0], {v[1], v[2]}, {3, 2}); };
      both_exact(f, {a, make_int({r0}, {}, idt), make_int({c0}, {}, idt)}, ds(r0, c0), int32, "dynamic_slice");
    }
    // dynamic_update_slice wraps and clamps the same way.
    std::vector<int64_t> upd{1000, 1001, 1002, 1003, 1004, 1005};
    auto out = x;
    int64_t r = std::clamp<int64_t>(wrap(r0, 5), 0, 2), c = std::clamp<int64_t>(wrap(c0, 7), 0, 5);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) out[(r + i) * 7 + c + j] = upd[i * 2 + j];
    Fn f = [](auto& v) { return lax::dynamic_update_slice(v[0], v[1], {v[2], v[3]}); };
    both_exact(f, {a, make_int(upd, {3, 2}, int32), make_int({r0}, {}, int32), make_int({c0}, {}, int32)}, out, int32,
               "dynamic_update_slice");
  }
}

TEST_CASE("concatenate, pad (negative and interior), iota", "[primitives]") {
  Array a = make({1, 2, 3, 4}, {2, 2}, float32), b = make({5, 6}, {2, 1}, float32), c = make({}, {2, 0}, float32);
  both_close([](auto& v) { return lax::concatenate({v[0], v[1], v[2], v[0]}, 1); }, {a, b, c},
             {1, 2, 5, 1, 2, 3, 4, 6, 3, 4}, float32, "concatenate axis 1 (with an empty operand)");
  both_close([](auto& v) { return lax::concatenate({v[0], v[1]}, 0); }, {a, make({7, 8}, {1, 2}, float32)},
             {1, 2, 3, 4, 7, 8}, float32, "concatenate axis 0");
  // pad [1,2,3] with low 2, high -1, interior 1: [p p 1 p 2 p 3] minus the last -> [p p 1 p 2 p]... then high -1
  Array v = make_int({1, 2, 3}, int32);
  Fn p1 = [](auto& x) { return lax::pad(x[0], x[1], {{2, -1, 1}}); };
  both_exact(p1, {v, make_int({9}, {}, int32)}, {9, 9, 1, 9, 2, 9}, int32, "pad low/negative high/interior");
  Fn p2 = [](auto& x) { return lax::pad(x[0], x[1], {{-2, 1, 0}}); };
  both_exact(p2, {v, make_int({0}, {}, int32)}, {3, 0}, int32, "pad negative low");
  Fn p3 = [](auto& x) { return lax::pad(x[0], x[1], {{-1, -1, 2}}); };  // [1 p p 2 p p 3] -> [p p 2 p p]
  both_exact(p3, {v, make_int({-4}, {}, int32)}, {-4, -4, 2, -4, -4}, int32, "pad negative both with interior");
  // 2-D: rows interior 1, cols low 1 high 0
  Fn p4 = [](auto& x) { return lax::pad(x[0], x[1], {{0, 0, 1}, {1, 0, 0}}); };
  both_close(p4, {a, make({-1}, {}, float32)}, {-1, 1, 2, -1, -1, -1, -1, 3, 4}, float32, "pad 2-D");
  both_exact([](auto&) { return lax::iota(int8, 5); }, {}, {0, 1, 2, 3, 4}, int8, "iota");
  both_close([](auto&) { return lax::broadcasted_iota(bfloat16, {2, 3}, 1); }, {}, {0, 1, 2, 0, 1, 2}, bfloat16,
             "broadcasted_iota dim 1");
  both_exact([](auto&) { return lax::broadcasted_iota(uint64, {3, 2}, 0); }, {}, {0, 0, 1, 1, 2, 2}, uint64,
             "broadcasted_iota dim 0");
}
