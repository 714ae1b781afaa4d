// gather, scatter, sort, top_k and conv_general_dilated against double-precision loop references, eager and jitted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "jitx/jitx.h"
#include "tolerances.h"

using namespace jitx;

namespace {
using Ints = std::vector<int64_t>;
using Vec = std::vector<double>;

int64_t numel(const Ints& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

Ints row_strides(const Ints& s) {
  Ints st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

/// The multi-index of flat position l in shape s.
Ints unflatten(int64_t l, const Ints& s) {
  Ints idx(s.size());
  for (int64_t i = static_cast<int64_t>(s.size()) - 1; i >= 0; --i) {
    idx[i] = s[i] == 0 ? 0 : l % s[i];
    l = s[i] == 0 ? 0 : l / s[i];
  }
  return idx;
}

int64_t flatten(const Ints& idx, const Ints& s) {
  auto st = row_strides(s);
  int64_t l = 0;
  for (size_t i = 0; i < idx.size(); ++i) l += idx[i] * st[i];
  return l;
}

bool has(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

/// Random values of dtype d (never only zeros and ones): floats in [-4, 4), integers in [lo, hi].
Vec random_values(std::mt19937& g, int64_t n, DType d, int lo = -20, int hi = 20) {
  Vec v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> uf(-4, 4);
  std::uniform_int_distribution<int> ui(lo, hi);
  for (auto& x : v) x = is_floating(d) ? uf(g) : ui(g);
  return v;
}

Array make(const Vec& v, const Ints& shape, DType d) { return array<double>(v, shape, d); }
Array make_idx(const Ints& v, const Ints& shape) {
  std::vector<int32_t> w(v.begin(), v.end());
  return array<int32_t>(w, shape);
}

/// The values x really holds (bf16 and f32 round the random doubles).
Vec held(const Array& x) { return x.to_vector<double>(); }

/// got against a double-precision reference within the table's sum bound (scatter-add combines duplicates, the
/// convolution reference sums its windows in another order).
void require_close(const Array& got, const Vec& want, const Ints& shape, DType d) {
  REQUIRE(got.shape() == shape);
  REQUIRE(got.dtype() == d);
  Vec g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  testing::Tol t = testing::tol(d, testing::Bound::kSum);
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i])) REQUIRE(std::isnan(g[i]));
    else REQUIRE(std::abs(g[i] - want[i]) <= t.atol + t.rtol * std::abs(want[i]));
  }
}

// --- gather reference: walk the index array's batch positions, then the slice offsets (the StableHLO spec). ---
struct GatherCase {
  Ints x_shape, idx_shape;
  lax::GatherDimensionNumbers dn;
  Ints slice_sizes;
};

Vec ref_gather(const Vec& x, const Ints& idx, const GatherCase& c, Ints& out_shape) {
  const auto& dn = c.dn;
  int64_t ivd = dn.index_vector_dim, ir = static_cast<int64_t>(c.idx_shape.size());
  Ints batch_axes, batch_shape, offset_axes, offset_shape;
  for (int64_t d = 0; d < ir; ++d)
    if (d != ivd) {
      batch_axes.push_back(d);
      batch_shape.push_back(c.idx_shape[d]);
    }
  for (int64_t d = 0; d < static_cast<int64_t>(c.x_shape.size()); ++d)
    if (!has(dn.collapsed_slice_dims, d) && !has(dn.operand_batching_dims, d)) {
      offset_axes.push_back(d);
      offset_shape.push_back(c.slice_sizes[d]);
    }
  int64_t rank = static_cast<int64_t>(batch_shape.size() + offset_shape.size());
  out_shape.clear();
  for (int64_t d = 0, b = 0, o = 0; d < rank; ++d)
    out_shape.push_back(has(dn.offset_dims, d) ? offset_shape[o++] : batch_shape[b++]);
  Vec out(static_cast<size_t>(numel(out_shape)));
  for (int64_t bl = 0; bl < numel(batch_shape); ++bl) {
    Ints bp = unflatten(bl, batch_shape);
    Ints ipos(c.idx_shape.size(), 0);
    for (size_t k = 0; k < batch_axes.size(); ++k) ipos[batch_axes[k]] = bp[k];
    Ints start(c.x_shape.size(), 0);
    for (size_t j = 0; j < dn.start_index_map.size(); ++j) {
      if (ivd < ir) ipos[ivd] = static_cast<int64_t>(j);
      int64_t d = dn.start_index_map[j];
      int64_t v = idx[flatten(ipos, c.idx_shape)];
      start[d] = std::min(std::max<int64_t>(v, 0), c.x_shape[d] - c.slice_sizes[d]);  // clamped
    }
    for (size_t k = 0; k < dn.operand_batching_dims.size(); ++k)
      start[dn.operand_batching_dims[k]] = ipos[dn.start_indices_batching_dims[k]];
    for (int64_t ol = 0; ol < numel(offset_shape); ++ol) {
      Ints op = unflatten(ol, offset_shape);
      Ints xi = start;
      for (size_t k = 0; k < offset_axes.size(); ++k) xi[offset_axes[k]] += op[k];
      Ints oi;
      for (int64_t d = 0, b = 0, o = 0; d < rank; ++d) oi.push_back(has(dn.offset_dims, d) ? op[o++] : bp[b++]);
      out[flatten(oi, out_shape)] = x[flatten(xi, c.x_shape)];
    }
  }
  return out;
}

std::vector<GatherCase> gather_cases() {
  std::vector<GatherCase> cs;
  {  // rows of a matrix (jnp.take along axis 0)
    GatherCase c{{5, 4}, {3, 1}, {}, {1, 4}};
    c.dn.offset_dims = {1};
    c.dn.collapsed_slice_dims = {0};
    c.dn.start_index_map = {0};
    c.dn.index_vector_dim = 1;
    cs.push_back(c);
  }
  {  // 2-D starts into a 3-D operand, partial slices, offset axes last
    GatherCase c{{6, 5, 4}, {2, 3, 2}, {}, {1, 3, 2}};
    c.dn.offset_dims = {2, 3};
    c.dn.collapsed_slice_dims = {0};
    c.dn.start_index_map = {0, 2};
    c.dn.index_vector_dim = 2;
    cs.push_back(c);
  }
  {  // offset axis in front of the batch axes, start_index_map reversed
    GatherCase c{{4, 7}, {3, 2}, {}, {2, 3}};
    c.dn.offset_dims = {0, 2};
    c.dn.start_index_map = {1, 0};
    c.dn.index_vector_dim = 1;
    cs.push_back(c);
  }
  {  // operand and start-index batching axes (per-example take)
    GatherCase c{{3, 5, 4}, {3, 2, 1}, {}, {1, 1, 4}};
    c.dn.offset_dims = {2};
    c.dn.collapsed_slice_dims = {1};
    c.dn.operand_batching_dims = {0};
    c.dn.start_indices_batching_dims = {0};
    c.dn.start_index_map = {1};
    c.dn.index_vector_dim = 2;
    cs.push_back(c);
  }
  {  // index_vector_dim in front, batching axis after it
    GatherCase c{{3, 7}, {1, 3}, {}, {1, 1}};
    c.dn.collapsed_slice_dims = {1};
    c.dn.operand_batching_dims = {0};
    c.dn.start_indices_batching_dims = {1};
    c.dn.start_index_map = {1};
    c.dn.index_vector_dim = 0;
    cs.push_back(c);
  }
  {  // implicit trailing index vector (index_vector_dim == rank of the indices)
    GatherCase c{{6, 3}, {2, 2}, {}, {1, 3}};
    c.dn.offset_dims = {2};
    c.dn.collapsed_slice_dims = {0};
    c.dn.start_index_map = {0};
    c.dn.index_vector_dim = 2;
    cs.push_back(c);
  }
  return cs;
}

// --- scatter reference ---------------------------------------------------------------------------------------
struct ScatterCase {
  Ints x_shape, idx_shape, upd_shape;
  lax::ScatterDimensionNumbers dn;
};

double combine(const std::string& kind, double a, double b) {
  if (kind == "set") return b;
  if (kind == "add") return a + b;
  if (kind == "mul") return a * b;
  if (kind == "min") return std::min(a, b);
  return std::max(a, b);
}

Vec ref_scatter(const Vec& x, const Ints& idx, const Vec& upd, const ScatterCase& c, const std::string& kind) {
  const auto& dn = c.dn;
  Vec out = x;
  int64_t ivd = dn.index_vector_dim, ir = static_cast<int64_t>(c.idx_shape.size());
  Ints scatter_axes, scatter_shape, window_shape, window_operand;
  for (int64_t d = 0; d < ir; ++d)
    if (d != ivd) scatter_axes.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(c.upd_shape.size()); ++d) {
    if (has(dn.update_window_dims, d)) window_shape.push_back(c.upd_shape[d]);
    else scatter_shape.push_back(c.upd_shape[d]);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(c.x_shape.size()); ++d)
    if (!has(dn.inserted_window_dims, d) && !has(dn.input_batching_dims, d)) window_operand.push_back(d);
  for (int64_t sl = 0; sl < numel(scatter_shape); ++sl) {
    Ints sp = unflatten(sl, scatter_shape);
    Ints ipos(c.idx_shape.size(), 0);
    for (size_t k = 0; k < scatter_axes.size(); ++k) ipos[scatter_axes[k]] = sp[k];
    Ints start(c.x_shape.size(), 0);
    for (size_t j = 0; j < dn.scatter_dims_to_operand_dims.size(); ++j) {
      if (ivd < ir) ipos[ivd] = static_cast<int64_t>(j);
      start[dn.scatter_dims_to_operand_dims[j]] = idx[flatten(ipos, c.idx_shape)];
    }
    for (size_t k = 0; k < dn.input_batching_dims.size(); ++k)
      start[dn.input_batching_dims[k]] = ipos[dn.scatter_indices_batching_dims[k]];
    // The whole window is dropped unless it fits inside the operand.
    bool fits = true;
    for (size_t d = 0; d < c.x_shape.size(); ++d) {
      int64_t extent = 1;
      for (size_t k = 0; k < window_operand.size(); ++k)
        if (window_operand[k] == static_cast<int64_t>(d)) extent = window_shape[k];
      fits = fits && start[d] >= 0 && start[d] + extent <= c.x_shape[d];
    }
    if (!fits) continue;
    for (int64_t wl = 0; wl < numel(window_shape); ++wl) {
      Ints wp = unflatten(wl, window_shape);
      Ints xi = start;
      for (size_t k = 0; k < window_operand.size(); ++k) xi[window_operand[k]] += wp[k];
      Ints ui;
      for (int64_t d = 0, s = 0, w = 0; d < static_cast<int64_t>(c.upd_shape.size()); ++d)
        ui.push_back(has(dn.update_window_dims, d) ? wp[w++] : sp[s++]);
      double& o = out[flatten(xi, c.x_shape)];
      o = combine(kind, o, upd[flatten(ui, c.upd_shape)]);
    }
  }
  return out;
}

std::vector<ScatterCase> scatter_cases() {
  std::vector<ScatterCase> cs;
  {  // rows (x.at[i].op(v))
    ScatterCase c{{6, 4}, {5, 1}, {5, 4}, {}};
    c.dn.update_window_dims = {1};
    c.dn.inserted_window_dims = {0};
    c.dn.scatter_dims_to_operand_dims = {0};
    c.dn.index_vector_dim = 1;
    cs.push_back(c);
  }
  {  // 2x3 windows at 2-D starts, some out of range (dropped)
    ScatterCase c{{6, 5}, {4, 2}, {4, 2, 3}, {}};
    c.dn.update_window_dims = {1, 2};
    c.dn.scatter_dims_to_operand_dims = {0, 1};
    c.dn.index_vector_dim = 1;
    cs.push_back(c);
  }
  {  // batching axes: per-row element updates
    ScatterCase c{{3, 6}, {3, 2, 1}, {3, 2}, {}};
    c.dn.inserted_window_dims = {1};
    c.dn.input_batching_dims = {0};
    c.dn.scatter_indices_batching_dims = {0};
    c.dn.scatter_dims_to_operand_dims = {1};
    c.dn.index_vector_dim = 2;
    cs.push_back(c);
  }
  {  // window axis before the scatter axis, index_vector_dim 0
    ScatterCase c{{4, 7}, {1, 3}, {4, 3}, {}};
    c.dn.update_window_dims = {0};
    c.dn.inserted_window_dims = {1};
    c.dn.scatter_dims_to_operand_dims = {1};
    c.dn.index_vector_dim = 0;
    cs.push_back(c);
  }
  return cs;
}

Array run_scatter(const std::string& kind, const Array& x, const Array& i, const Array& u,
                  const lax::ScatterDimensionNumbers& dn) {
  if (kind == "set") return lax::scatter(x, i, u, dn);
  if (kind == "add") return lax::scatter_add(x, i, u, dn);
  if (kind == "mul") return lax::scatter_mul(x, i, u, dn);
  if (kind == "min") return lax::scatter_min(x, i, u, dn);
  return lax::scatter_max(x, i, u, dn);
}

/// Sort order of jnp.sort: -0.0 == 0.0, NaNs last.
int key_cmp(double a, double b) {
  bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  return a < b ? -1 : a > b ? 1 : 0;
}
}  // namespace

TEST_CASE("gather matches the StableHLO reference for every dimension-number variant", "[indexing][gather]") {
  std::mt19937 g(20240501);
  for (DType d : {DType::float32, DType::float64, DType::int32, DType::bfloat16}) {
    int n = 0;
    for (const auto& c : gather_cases()) {
      INFO("dtype " << dtype_name(d) << ", case " << n++);
      Array x = make(random_values(g, numel(c.x_shape), d), c.x_shape, d);
      // Indices include negative and too-large starts: they are clamped.
      Vec iv = random_values(g, numel(c.idx_shape), DType::int32, -3, 8);
      Ints idx(iv.begin(), iv.end());
      Array i = make_idx(idx, c.idx_shape);
      Ints out_shape;
      Vec want = ref_gather(held(x), idx, c, out_shape);
      auto f = [&](Array a, Array b) { return lax::gather(a, b, c.dn, c.slice_sizes); };
      require_close(f(x, i), want, out_shape, d);
      require_close(jit(f)(x, i), want, out_shape, d);
    }
  }
}

TEST_CASE("scatter kinds match the reference: duplicates combine, out-of-range windows drop", "[indexing][scatter]") {
  std::mt19937 g(777);
  for (DType d : {DType::float32, DType::float64, DType::int32}) {
    for (std::string kind : {"set", "add", "mul", "min", "max"}) {
      int n = 0;
      for (const auto& c : scatter_cases()) {
        int ci = n++;
        INFO("dtype " << dtype_name(d) << ", kind " << kind << ", case " << ci);
        bool small = kind == "mul";  // keep integer products from overflowing
        Array x = make(random_values(g, numel(c.x_shape), d, small ? -3 : -20, small ? 3 : 20), c.x_shape, d);
        Array u = make(random_values(g, numel(c.upd_shape), d, small ? -3 : -20, small ? 3 : 20), c.upd_shape, d);
        Ints idx;
        if (kind == "set") {
          // replace with duplicate targets is implementation-defined: draw distinct in-range rows instead,
          // plus one out-of-range start that must be dropped.
          Vec iv = random_values(g, numel(c.idx_shape), DType::int32, 0, 3);
          idx.assign(iv.begin(), iv.end());
          if (ci == 1) idx = {0, 0, 2, 2, 4, 9, 5, 0};  // 2x3 windows at (0,0), (2,2), (4,9)->dropped, (5,0)->dropped
          else if (ci == 3) idx = {0, 3, 6};
          else if (ci == 2) idx = {0, 5, 1, 2, 7, 3};  // per row distinct; (1, 7) is out of range
          else idx = {4, 0, 2, 9, 1};
        } else {
          Vec iv = random_values(g, numel(c.idx_shape), DType::int32, -1, 6);
          idx.assign(iv.begin(), iv.end());
        }
        Array i = make_idx(idx, c.idx_shape);
        Vec want = ref_scatter(held(x), idx, held(u), c, kind);
        auto f = [&](Array a, Array b, Array v) { return run_scatter(kind, a, b, v, c.dn); };
        require_close(f(x, i, u), want, c.x_shape, d);
        require_close(jit(f)(x, i, u), want, c.x_shape, d);
      }
    }
  }
}

TEST_CASE("scatter-add sums every duplicate index", "[indexing][scatter]") {
  Array x = zeros({4}, DType::float32);
  Array i = make_idx({1, 3, 1, 1, 0}, {5, 1});
  Array u = array<float>({0.5f, 2.0f, 1.25f, -3.0f, 7.0f});
  lax::ScatterDimensionNumbers dn;
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  auto r = lax::scatter_add(x, i, u, dn).to_vector<float>();
  REQUIRE(r == std::vector<float>{7.0f, -1.25f, 0.0f, 2.0f});
  auto at = jnp::at(array<float>({1, 2, 3, 4}), make_idx({1, 1, -1, 7}, {4})).add(array<float>({10, 20, 30, 40}));
  REQUIRE(at.to_vector<float>() == std::vector<float>{1, 32, 3, 34});  // -1 wraps to 3, 7 is dropped
}

TEST_CASE("jnp.take, x.at[...] and jnp.argsort agree with direct loops", "[indexing][numpy]") {
  std::mt19937 g(99);
  Ints shape{4, 5, 3};
  Array x = make(random_values(g, numel(shape), DType::float32), shape, DType::float32);
  Vec xv = held(x);
  Ints idx{4, -1, 0, 2, 9, -7};  // -1: the last ("fill", "wrap") or the first ("clip"); 9 and -7 out of range
  Array i = make_idx(idx, {2, 3});
  for (std::string mode : {"fill", "clip", "wrap"})
    for (int64_t axis : {0, 1, 2}) {
      INFO("axis " << axis << " mode " << mode);
      int64_t n = shape[axis];
      auto take = [&](Array a, Array b) { return jnp::take(a, b, axis, mode); };
      Ints out_shape;
      for (int64_t d = 0; d < axis; ++d) out_shape.push_back(shape[d]);
      out_shape.push_back(2);
      out_shape.push_back(3);
      for (int64_t d = axis + 1; d < 3; ++d) out_shape.push_back(shape[d]);
      Vec want(static_cast<size_t>(numel(out_shape)));
      for (int64_t l = 0; l < numel(out_shape); ++l) {
        Ints o = unflatten(l, out_shape);
        int64_t k = idx[o[axis] * 3 + o[axis + 1]];
        if (mode == "wrap") {
          k = ((k % n) + n) % n;
        } else {
          // "clip" clamps the index as it is (NumPy's and JAX's: -1 reads the first element).
          if (k < 0 && mode == "fill") k += n;
          if (mode == "fill" && (k < 0 || k >= n)) {
            want[l] = std::nan("");
            continue;
          }
          k = std::clamp<int64_t>(k, 0, n - 1);
        }
        Ints xi;
        for (int64_t d = 0; d < axis; ++d) xi.push_back(o[d]);
        xi.push_back(k);
        for (int64_t d = axis + 1; d < 3; ++d) xi.push_back(o[d + 1]);
        want[l] = xv[flatten(xi, shape)];
      }
      require_close(take(x, i), want, out_shape, DType::float32);
      require_close(jit(take)(x, i), want, out_shape, DType::float32);
    }
  // The default mode is "fill", with JAX's fill values for integer and bool arrays.
  Array xi32 = make({5, -6, 7}, {3}, DType::int32), xu8 = make({1, 2, 3}, {3}, DType::uint8);
  REQUIRE(jnp::take(xi32, make_idx({0, 3, -4}, {3})).to_vector<int64_t>() ==
          std::vector<int64_t>{5, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::min()});
  REQUIRE(jnp::take(xu8, make_idx({2, 5}, {2})).to_vector<int64_t>() == std::vector<int64_t>{3, 255});
  REQUIRE(std::isnan(jnp::take(x, make_idx({60}, {1})).to_vector<double>()[0]));
  REQUIRE_THROWS_WITH(jnp::take(x, i, 0, "raise"), Catch::Contains("take") && Catch::Contains("\"raise\""));
  // take without an axis flattens.
  auto flat = jnp::take(x, make_idx({0, 59, 17}, {3})).to_vector<double>();
  REQUIRE(flat == Vec{xv[0], xv[59], xv[17]});

  // x.at[i, j].set/get with broadcasting index arrays.
  Array ii = make_idx({0, 3}, {2, 1}), jj = make_idx({1, -1, 2}, {3});
  Vec vals = random_values(g, 2 * 3 * 3, DType::float32);
  Array v = make(vals, {2, 3, 3}, DType::float32);
  auto set = [&](Array a, Array b, Array c, Array w) { return jnp::at(a, {b, c}).set(w); };
  Vec want = xv;
  Vec vh = held(v);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) {
        int64_t row = r == 0 ? 0 : 3, col = c == 0 ? 1 : c == 1 ? 4 : 2;
        want[flatten({row, col, k}, shape)] = vh[(r * 3 + c) * 3 + k];
      }
  require_close(set(x, ii, jj, v), want, shape, DType::float32);
  require_close(jit(set)(x, ii, jj, v), want, shape, DType::float32);
  Vec got = jnp::at(x, {ii, jj}).get().to_vector<double>();
  REQUIRE(got.size() == 18);
  REQUIRE(got[3 * 3 + 2] == xv[flatten({3, 1, 2}, shape)]);
  // Scalar updates broadcast, and every kind exists.
  Array y = array<int32_t>({5, -2, 7, 0});
  Array j = make_idx({2, 0}, {2});
  REQUIRE(jnp::at(y, j).set(1).to_vector<int32_t>() == std::vector<int32_t>{1, -2, 1, 0});
  REQUIRE(jnp::at(y, j).mul(3).to_vector<int32_t>() == std::vector<int32_t>{15, -2, 21, 0});
  REQUIRE(jnp::at(y, j).min(6).to_vector<int32_t>() == std::vector<int32_t>{5, -2, 6, 0});
  REQUIRE(jnp::at(y, j).max(6).to_vector<int32_t>() == std::vector<int32_t>{6, -2, 7, 0});

  // argsort is stable and puts NaNs last.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Array s = array<double>({3.0, nan, -1.0, 3.0, -0.0, 0.0, nan, -5.5});
  REQUIRE(jnp::argsort(s).dtype() == int64);  // JAX x64
  REQUIRE(jnp::argsort(s).to_vector<int64_t>() == std::vector<int64_t>{7, 2, 4, 5, 0, 3, 1, 6});
  auto sorted = jnp::sort(s).to_vector<double>();
  REQUIRE(sorted[0] == -5.5);
  REQUIRE((std::isnan(sorted[6]) && std::isnan(sorted[7])));
}

TEST_CASE("sort: several operands, num_keys, NaNs last, stable, along any axis", "[indexing][sort]") {
  std::mt19937 g(4242);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType d : {DType::float32, DType::float64, DType::int32, DType::bfloat16}) {
    for (int64_t dim : {0, 1}) {
      for (int64_t num_keys : {1, 2}) {
        INFO("dtype " << dtype_name(d) << ", dimension " << dim << ", num_keys " << num_keys);
        Ints shape{7, 9};
        Vec kv = random_values(g, numel(shape), d, -3, 3);
        for (auto& v : kv) v = std::round(v);  // many ties
        if (is_floating(d)) {
          kv[3] = nan;
          kv[10] = nan;
          kv[20] = -0.0;
          kv[30] = -nan;
        }
        Array keys = make(kv, shape, d);
        Vec sv = random_values(g, numel(shape), DType::int32, -4, 4);
        Array second = make(sv, shape, DType::int32);
        Array third = make(random_values(g, numel(shape), DType::float32), shape, DType::float32);
        Vec k0 = held(keys), k1 = held(second), k2 = held(third);
        auto f = [&](Array a, Array b, Array c) { return lax::sort({a, b, c}, dim, true, num_keys); };
        // Reference: stable sort of each line.
        int64_t n = shape[dim], lines = numel(shape) / n;
        Vec w0(k0.size()), w1(k1.size()), w2(k2.size());
        for (int64_t l = 0; l < lines; ++l) {
          auto at = [&](int64_t t) { return dim == 0 ? flatten({t, l}, shape) : flatten({l, t}, shape); };
          Ints perm(n);
          std::iota(perm.begin(), perm.end(), 0);
          std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
            int c = key_cmp(k0[at(a)], k0[at(b)]);
            if (c == 0 && num_keys == 2) c = key_cmp(k1[at(a)], k1[at(b)]);
            return c < 0;
          });
          for (int64_t t = 0; t < n; ++t) {
            w0[at(t)] = k0[at(perm[t])];
            w1[at(t)] = k1[at(perm[t])];
            w2[at(t)] = k2[at(perm[t])];
          }
        }
        for (bool jitted : {false, true}) {
          auto outs = jitted ? jit(f)(keys, second, third) : f(keys, second, third);
          REQUIRE(outs.size() == 3);
          require_close(outs[0], w0, shape, d);
          require_close(outs[1], w1, shape, DType::int32);
          require_close(outs[2], w2, shape, DType::float32);  // stability: payload order is exact
        }
      }
    }
  }
}

TEST_CASE("top_k picks the largest values, ties to the lower index", "[indexing][top_k]") {
  std::mt19937 g(5);
  for (DType d : {DType::float32, DType::float64, DType::int32, DType::bfloat16}) {
    INFO("dtype " << dtype_name(d));
    Ints shape{3, 4, 10};
    Vec xv = random_values(g, numel(shape), d, -3, 3);
    for (auto& v : xv) v = std::round(v);  // ties
    Array x = make(xv, shape, d);
    Vec h = held(x);
    int64_t k = 4;
    Vec wv, wi;
    for (int64_t r = 0; r < 12; ++r) {
      Ints perm(10);
      std::iota(perm.begin(), perm.end(), 0);
      // XLA's TopK order (IEEE total order): the rounding makes -0.0s, which rank below 0.0.
      auto above = [](double a, double b) { return a > b || (a == b && !std::signbit(a) && std::signbit(b)); };
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t b) { return above(h[r * 10 + a], h[r * 10 + b]); });
      for (int64_t t = 0; t < k; ++t) {
        wv.push_back(h[r * 10 + perm[t]]);
        wi.push_back(static_cast<double>(perm[t]));
      }
    }
    auto f = [&](Array a) { return lax::top_k(a, k); };
    for (bool jitted : {false, true}) {
      auto [vals, inds] = jitted ? jit(f)(x) : f(x);
      require_close(vals, wv, {3, 4, k}, d);
      require_close(inds, wi, {3, 4, k}, DType::int32);
    }
  }
  auto [v, i] = lax::top_k(array<float>({1.0f, 5.0f, 5.0f, -2.0f, 5.0f}), 2);
  REQUIRE(i.to_vector<int32_t>() == std::vector<int32_t>{1, 2});
  REQUIRE(v.to_vector<float>() == std::vector<float>{5.0f, 5.0f});
}

namespace {
// --- conv reference: NCHW / OIHW / NCHW in 2-D, with the lhs dilated and padded explicitly first ---------------
struct ConvCase {
  Ints lhs_shape, rhs_shape;  // NCHW, OIHW
  Ints strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  Ints lhs_dil, rhs_dil;
  int64_t groups = 1, batch_groups = 1;
};

Vec ref_conv(const Vec& lhs, const Vec& rhs, const ConvCase& c, Ints& out_shape) {
  int64_t n = c.lhs_shape[0], ch = c.lhs_shape[1], o = c.rhs_shape[0], ci = c.rhs_shape[1];
  // Dilate and pad the input into a dense buffer (negative padding crops).
  Ints ds(2), ps(2);
  for (int a = 0; a < 2; ++a) {
    ds[a] = (c.lhs_shape[2 + a] - 1) * c.lhs_dil[a] + 1;
    ps[a] = ds[a] + c.padding[a].first + c.padding[a].second;
  }
  Vec padded(static_cast<size_t>(n * ch * ps[0] * ps[1]), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t f = 0; f < ch; ++f)
      for (int64_t y = 0; y < c.lhs_shape[2]; ++y)
        for (int64_t x = 0; x < c.lhs_shape[3]; ++x) {
          int64_t py = y * c.lhs_dil[0] + c.padding[0].first, px = x * c.lhs_dil[1] + c.padding[1].first;
          if (py < 0 || px < 0 || py >= ps[0] || px >= ps[1]) continue;
          padded[((b * ch + f) * ps[0] + py) * ps[1] + px] = lhs[flatten({b, f, y, x}, c.lhs_shape)];
        }
  Ints win(2), os(2);
  for (int a = 0; a < 2; ++a) {
    win[a] = (c.rhs_shape[2 + a] - 1) * c.rhs_dil[a] + 1;
    os[a] = ps[a] < win[a] ? 0 : (ps[a] - win[a]) / c.strides[a] + 1;
  }
  int64_t nb = n / c.batch_groups;
  out_shape = {nb, o, os[0], os[1]};
  Vec out(static_cast<size_t>(numel(out_shape)), 0.0);
  int64_t per_fg = o / c.groups, per_bg = o / c.batch_groups;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t f = 0; f < o; ++f)
      for (int64_t y = 0; y < os[0]; ++y)
        for (int64_t x = 0; x < os[1]; ++x) {
          double acc = 0;
          int64_t src_b = (f / per_bg) * nb + b;
          for (int64_t k = 0; k < ci; ++k) {
            int64_t src_f = (f / per_fg) * ci + k;
            for (int64_t ky = 0; ky < c.rhs_shape[2]; ++ky)
              for (int64_t kx = 0; kx < c.rhs_shape[3]; ++kx) {
                int64_t py = y * c.strides[0] + ky * c.rhs_dil[0], px = x * c.strides[1] + kx * c.rhs_dil[1];
                acc += padded[((src_b * ch + src_f) * ps[0] + py) * ps[1] + px] *
                       rhs[flatten({f, k, ky, kx}, c.rhs_shape)];
              }
          }
          out[flatten({b, f, y, x}, out_shape)] = acc;
        }
  return out;
}

Ints permuted(const Ints& s, const Ints& perm) {
  Ints o;
  for (auto p : perm) o.push_back(s[p]);
  return o;
}
}  // namespace

TEST_CASE("conv_general_dilated matches a dilate-pad-correlate reference", "[indexing][conv]") {
  std::vector<ConvCase> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 2}, {1, 1}, {{0, 0}, {0, 0}}, {1, 1}, {1, 1}},
      {{2, 3, 9, 8}, {2, 3, 3, 3}, {2, 3}, {{1, 2}, {2, 0}}, {1, 1}, {1, 1}},
      {{1, 2, 5, 6}, {3, 2, 2, 3}, {1, 2}, {{1, 1}, {0, 2}}, {2, 1}, {1, 2}},
      {{2, 4, 6, 6}, {6, 2, 3, 2}, {1, 1}, {{1, -1}, {0, 1}}, {1, 1}, {2, 1}, 2, 1},
      {{4, 3, 5, 5}, {4, 3, 2, 2}, {2, 1}, {{0, 1}, {1, 0}}, {1, 1}, {1, 1}, 1, 2},
      {{1, 2, 3, 4}, {3, 2, 2, 2}, {1, 1}, {{2, 2}, {1, 1}}, {3, 2}, {2, 1}},
  };
  std::mt19937 g(31337);
  for (DType d : {DType::float32, DType::float64, DType::int32}) {
    int idx = 0;
    for (const auto& c : cases) {
      INFO("dtype " << dtype_name(d) << ", case " << idx++);
      Array lhs = make(random_values(g, numel(c.lhs_shape), d, -5, 5), c.lhs_shape, d);
      Array rhs = make(random_values(g, numel(c.rhs_shape), d, -5, 5), c.rhs_shape, d);
      Ints out_shape;
      Vec want = ref_conv(held(lhs), held(rhs), c, out_shape);
      auto f = [&](Array a, Array b) {
        return lax::conv_general_dilated(a, b, c.strides, c.padding, c.lhs_dil, c.rhs_dil, {}, c.groups,
                                         c.batch_groups);
      };
      require_close(f(lhs, rhs), want, out_shape, d);
      require_close(jit(f)(lhs, rhs), want, out_shape, d);
      // The same convolution in NHWC / HWIO / NHWC layouts gives the transposed result.
      auto dn = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
      Array lt = jnp::transpose(lhs, {0, 2, 3, 1}), rt = jnp::transpose(rhs, {2, 3, 1, 0});
      auto h = [&](Array a, Array b) {
        return lax::conv_general_dilated(a, b, c.strides, c.padding, c.lhs_dil, c.rhs_dil, dn, c.groups,
                                         c.batch_groups);
      };
      Array r = jit(h)(lt, rt);
      require_close(jnp::transpose(r, {0, 3, 1, 2}), want, out_shape, d);
      REQUIRE(r.shape() == permuted(out_shape, {0, 2, 3, 1}));
    }
  }
  // 1-D convolution with the default (NCH, OIH) layout.
  Array x = array<float>({1, 2, 3, 4, 5}, Shape{1, 1, 5});
  Array k = array<float>({1, -1}, Shape{1, 1, 2});
  REQUIRE(lax::conv_general_dilated(x, k, {1}, {}).to_vector<float>() == std::vector<float>{-1, -1, -1, -1});
}

TEST_CASE("indexing ops reject bad input with the op's name", "[indexing][errors]") {
  Array x = zeros({4, 3});
  Array fi = zeros({2, 1});
  Array ii = make_idx({0, 1}, {2, 1});
  lax::GatherDimensionNumbers gd;
  gd.offset_dims = {1};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0};
  REQUIRE_THROWS_AS(lax::gather(x, fi, gd, {1, 3}), TypeError);
  REQUIRE_THROWS_WITH(lax::gather(x, fi, gd, {1, 3}), Catch::Contains("[gather]") && Catch::Contains("integer"));
  REQUIRE_THROWS_AS(lax::gather(x, ii, gd, {2, 3}), ShapeError);  // collapsed axis with slice size 2
  REQUIRE_THROWS_WITH(lax::gather(x, ii, gd, {1, 5}), Catch::Contains("[gather]") && Catch::Contains("slice_sizes"));
  auto bad_map = gd;
  bad_map.start_index_map = {0, 1};
  REQUIRE_THROWS_WITH(lax::gather(x, ii, bad_map, {1, 3}), Catch::Contains("start_index_map"));
  auto bad_batch = gd;
  bad_batch.operand_batching_dims = {1};
  bad_batch.start_indices_batching_dims = {0};
  bad_batch.offset_dims = {};
  REQUIRE_THROWS_AS(lax::gather(x, ii, bad_batch, {1, 1}), ShapeError);  // sizes 3 vs 2 differ

  lax::ScatterDimensionNumbers sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  REQUIRE_THROWS_AS(lax::scatter_add(x, ii, zeros({2, 3}, DType::int32), sd), TypeError);
  REQUIRE_THROWS_WITH(lax::scatter_add(x, ii, zeros({2, 3}, DType::int32), sd), Catch::Contains("[scatter-add]"));
  REQUIRE_THROWS_AS(lax::scatter(x, ii, zeros({3, 3}), sd), ShapeError);
  REQUIRE_THROWS_WITH(lax::scatter(x, ii, zeros({2, 5}), sd), Catch::Contains("[scatter]"));
  REQUIRE_THROWS_AS(jnp::at(x, array<float>({1.0f})).set(1.0f), TypeError);

  REQUIRE_THROWS_AS(lax::sort({x, zeros({3, 4})}), ShapeError);
  REQUIRE_THROWS_WITH(lax::sort({x, zeros({3, 4})}), Catch::Contains("[sort]"));
  REQUIRE_THROWS_WITH(lax::sort({x}, 0, true, 2), Catch::Contains("[sort]") && Catch::Contains("num_keys"));
  REQUIRE_THROWS_AS(lax::sort(x, 5), ShapeError);
  REQUIRE_THROWS_AS(lax::top_k(x, 4), ShapeError);
  REQUIRE_THROWS_WITH(lax::top_k(x, 4), Catch::Contains("[top_k]"));

  Array lhs = zeros({1, 4, 5, 5}), rhs = zeros({2, 3, 2, 2});
  REQUIRE_THROWS_AS(lax::conv_general_dilated(lhs, rhs, {1, 1}, {}), ShapeError);  // 4 features vs 3
  REQUIRE_THROWS_WITH(lax::conv_general_dilated(lhs, rhs, {1, 1}, {}), Catch::Contains("[conv_general_dilated]"));
  REQUIRE_THROWS_AS(lax::conv_general_dilated(lhs, zeros({2, 4, 2, 2}, DType::float64), {1, 1}, {}), TypeError);
  REQUIRE_THROWS_AS(lax::conv_general_dilated(lhs, zeros({2, 4, 2, 2}), {1}, {}), ShapeError);
  REQUIRE_THROWS_AS(lax::conv_general_dilated(lhs, zeros({3, 2, 2, 2}), {1, 1}, {}, {}, {}, {}, 2), ShapeError);
  REQUIRE_THROWS_AS(lax::conv_dimension_numbers("NHWC", "HWI", "NHWC"), ShapeError);
}

TEST_CASE("StableHLO text of gather, scatter, sort, top_k and convolution", "[indexing][stablehlo]") {
  Array x = zeros({5, 4});
  Array i = make_idx({1, 3}, {2, 1});
  lax::GatherDimensionNumbers gd;
  gd.offset_dims = {1};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0};
  auto gt = jit([&](Array a, Array b) { return lax::gather(a, b, gd, {1, 4}); }).lower(x, i).as_text();
  CHECK_THAT(gt, Catch::Contains("\"stablehlo.gather\""));
  CHECK_THAT(gt, Catch::Contains("dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                                 "start_index_map = [0], index_vector_dim = 1>"));
  CHECK_THAT(gt, Catch::Contains("slice_sizes = array<i64: 1, 4>"));
  CHECK_THAT(gt, Catch::Contains("indices_are_sorted = false"));

  lax::ScatterDimensionNumbers sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  auto st = jit([&](Array a, Array b, Array u) { return lax::scatter_add(a, b, u, sd); }).lower(x, i, zeros({2, 4}))
                .as_text();
  CHECK_THAT(st, Catch::Contains("\"stablehlo.scatter\""));
  CHECK_THAT(st,
             Catch::Contains("scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
                             "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>"));
  CHECK_THAT(st, Catch::Contains("stablehlo.add %arg3, %arg4 : tensor<f32>"));
  auto rt =
      jit([&](Array a, Array b, Array u) { return lax::scatter(a, b, u, sd); }).lower(x, i, zeros({2, 4})).as_text();
  CHECK_THAT(rt, Catch::Contains("stablehlo.return %arg4 : tensor<f32>"));
  lax::ScatterDimensionNumbers bd;
  bd.inserted_window_dims = {1};
  bd.input_batching_dims = {0};
  bd.scatter_indices_batching_dims = {0};
  bd.scatter_dims_to_operand_dims = {1};
  auto bt = jit([&](Array a, Array b, Array u) { return lax::scatter_max(a, b, u, bd); })
                .lower(zeros({2, 6}), make_idx({1, 2, 3, 4}, {2, 2, 1}), zeros({2, 2}))
                .as_text();
  CHECK_THAT(bt, Catch::Contains("input_batching_dims = [0], scatter_indices_batching_dims = [0]"));
  CHECK_THAT(bt, Catch::Contains("stablehlo.maximum"));

  auto so = jit([](Array a, Array b) { return lax::sort({a, b}, 1, true, 1); }).lower(x, zeros({5, 4}, DType::int32))
                .as_text();
  CHECK_THAT(so, Catch::Contains("\"stablehlo.sort\""));
  CHECK_THAT(so, Catch::Contains("dimension = 1 : i64, is_stable = true"));
  CHECK_THAT(so, Catch::Contains("comparison_type TOTALORDER"));
  CHECK_THAT(so, Catch::Contains("dense<0x7FC00000> : tensor<f32>"));
  CHECK_THAT(so, Catch::Contains("-> (tensor<5x4xf32>, tensor<5x4xi32>)"));

  auto tk = jit([](Array a) { return lax::top_k(a, 2); }).lower(x).as_text();
  CHECK_THAT(tk, Catch::Contains("\"chlo.top_k\""));
  CHECK_THAT(tk, Catch::Contains("k = 2 : i64"));
  CHECK_THAT(tk, Catch::Contains("-> (tensor<5x2xf32>, tensor<5x2xi32>)"));

  auto dn = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  auto cv = jit([&](Array a, Array b) {
              return lax::conv_general_dilated(a, b, {2, 1}, {{1, 0}, {0, 2}}, {1, 1}, {1, 2}, dn);
            }).lower(zeros({1, 6, 6, 3}), zeros({3, 2, 3, 4})).as_text();
  CHECK_THAT(cv, Catch::Contains("\"stablehlo.convolution\""));
  CHECK_THAT(cv, Catch::Contains("dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>"));
  CHECK_THAT(cv, Catch::Contains("window_strides = array<i64: 2, 1>"));
  CHECK_THAT(cv, Catch::Contains("padding = dense<[[1, 0], [0, 2]]> : tensor<2x2xi64>"));
  CHECK_THAT(cv, Catch::Contains("rhs_dilation = array<i64: 1, 2>"));
  CHECK_THAT(cv, Catch::Contains("feature_group_count = 1 : i64"));
  CHECK_THAT(cv, Catch::Contains("batch_group_count = 1 : i64"));
}
