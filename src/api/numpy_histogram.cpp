// jnp's histograms and spaced ranges (numpy_stats.h): histogram_bin_edges, histogram, histogramdd, histogram2d,
// logspace and geomspace, over bin edges computed as JAX's jitted linspace computes them (linspace_traced).
#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "api/numpy_stats_internal.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "jitx/numpy_shape.h"
#include "jitx/numpy_stats.h"
#include "ops/convert.h"
#include "ops/linspace.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
using stats_util::stats_check_valid;
using stats_util::stats_inexact;
using stats_util::stats_inexact_of;
using stats_util::stats_lit;
using namespace stats_internal;

namespace {
/// JAX's linspace from 0-d start to stop of the float dtype d, as XLA compiles JAX's jitted _linspace on the CPU:
/// concrete bounds take jnp::linspace's values (detail::linspace_values, which models XLA); traced ones (under jit)
/// the same formulas computed in float64 with every rounding to d explicit (a convert there and back, which no
/// contraction or excess precision skips): element i is fma(i, stop r, start (1 - i r)) with r = 1/div (the fma an
/// exact float64 product and sum, rounded to d; element 1 of up to 34 fma(start, 1 - r, stop r), as
/// detail::linspace_values says), for float16 with the products rounded too, for bfloat16
/// start (1 - step) + stop step with step = i r, every op rounded. A float64 d has no fma: an ULP from JAX's at
/// times.
Array linspace_traced(const Array& start, const Array& stop, int64_t num, bool endpoint, DType d, std::string_view op) {
  detail::checked_num_elements(std::vector<int64_t>{num}, d, op);
  if (!start.is_tracer() && !stop.is_tracer()) {
    std::vector<double> v = detail::linspace_values(start.item<double>(), stop.item<double>(), num, endpoint, d);
    return array(v, {num}, d);
  }
  if (num == 0) return zeros({0}, d);
  if (num == 1) return lax::reshape(start, {1});
  int64_t div = endpoint ? num - 1 : num;
  constexpr DType f64 = DType::float64;
  auto R = [d](const Array& v) { return d == f64 ? v : astype(astype(v, d), f64); };
  auto lit = [](double v) { return stats_lit(v, f64); };
  Array a = astype(start, f64), b = astype(stop, f64), gen, one;
  Array fi = R(lax::iota(f64, div));  // JAX's iota in d (i > 256 rounds in bfloat16)
  if (d == DType::bfloat16) {
    double r = static_cast<float>(1.0 / detail::round_to_float(static_cast<double>(div), d));
    Array step = R(astype(astype(multiply(fi, lit(r)), DType::float32), f64));
    gen = R(add(R(multiply(a, R(subtract(lit(1), step)))), R(multiply(b, step))));
  } else {
    double r = detail::round_to_float(1.0 / detail::round_to_float(static_cast<double>(div), d), d);
    Array br = R(multiply(b, lit(r)));
    Array sub = R(subtract(lit(1), R(multiply(fi, lit(r)))));
    Array a_sub = R(multiply(a, sub));
    Array i_br = multiply(fi, br);
    gen = R(add(d == DType::float16 ? R(i_br) : i_br, a_sub));
    if (d != DType::float16 && div <= 33) one = R(add(multiply(a, sub), br));
  }
  Array i = lax::iota(DType::int32, div);
  Array out = one.valid() ? where(equal(i, Array(1)), one, gen) : gen;  // element 0 from the formula too (0 * inf)
  if (endpoint) out = concatenate({out, lax::reshape(b, {1})});
  return astype(out, d);
}

Array bin_edges_count(const Array& a, int64_t bins, std::optional<std::pair<double, double>> range,
                      std::string_view op) {
  // bins = -1 gives no edges, as JAX's linspace of 0 points (histogram refuses that, as JAX's indexing does).
  if (bins < -1) throw_error<ShapeError>(op, "bins must be >= 0, got {}", bins);
  if (bins == INT64_MAX) throw_error<ShapeError>(op, "bins {} leaves no room for the last edge", bins);
  DType d = stats_inexact_of(a.dtype());
  Array lo, hi;
  if (range) {
    lo = stats_lit(range->first, d);
    hi = stats_lit(range->second, d);
  } else {
    if (a.size() == 0) throw_error<ShapeError>(op, "an empty a has no range: pass range (JAX's min has no identity)");
    lo = astype(min(a), d);
    hi = astype(max(a), d);
  }
  // An empty range is widened by 0.5 each way (JAX's where(ptp(range) == 0, ...)).
  Array flat = equal(subtract(maximum(lo, hi), minimum(lo, hi)), stats_lit(0, d));
  lo = where(flat, subtract(lo, stats_lit(0.5, d)), lo);
  hi = where(flat, add(hi, stats_lit(0.5, d)), hi);
  return linspace_traced(lo, hi, bins + 1, true, d, op);
}

Array bin_edges_given(const Array& a, const Array& bins, std::string_view op) {
  stats_check_valid(op, bins, "bins that are an");
  if (bins.ndim() != 1)
    throw_error<ShapeError>(op, "bins must be a count or 1-D bin edges, got shape {}", shape_str(bins.shape()));
  return astype(bins, stats_inexact_of(a.dtype()));
}

std::pair<Array, Array> histogram_impl(const Array& a, const std::function<Array(const Array&)>& edges_of,
                                       const std::optional<Array>& weights, bool density) {
  stats_check_valid("histogram", a);
  Array x, w;
  if (!weights) {
    x = stats_inexact(a);
    w = ones(x.shape(), x.dtype());
  } else {
    stats_check_valid("histogram", *weights, "weights that are an");
    if (weights->shape() != a.shape())
      throw_error<ShapeError>("histogram", "weights must have a's shape {}, got {}", shape_str(a.shape()),
                              shape_str(weights->shape()));
    std::tie(x, w) = promote_inexact(a, *weights, "histogram", false);
  }
  Array edges = edges_of(x);
  int64_t n = edges.shape()[0];
  if (n == 0) throw_error<ShapeError>("histogram", "bins must be >= 0, got -1 (no bin edges)");
  x = ravel(x);
  w = ravel(w);
  // Bin i + 1 holds edges[i] <= x < edges[i + 1]; x equal to the last edge goes to the last bin; bin 0 (below the
  // first edge) is dropped, and positions past the end (above the last edge, NaN) are dropped by the update.
  Array idx = searchsorted(edges, x, "right");
  idx = where(equal(x, elem(edges, -1)), Array(static_cast<int32_t>(n - 1)), idx);
  Array counts = slice_along(at(zeros({n}, w.dtype()), idx).add(w), 0, 1, n);
  if (density) counts = divide(divide(counts, diff_along(edges, 0)), sum(counts));
  return {counts, edges};
}
}  // namespace

Array histogram_bin_edges(const Array& a, int64_t bins, std::optional<std::pair<double, double>> range, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("histogram_bin_edges", a);
  return bin_edges_count(a, bins, range, "histogram_bin_edges");
}
Array histogram_bin_edges(const Array& a, const Array& bins, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("histogram_bin_edges", a);
  return bin_edges_given(a, bins, "histogram_bin_edges");
}
std::pair<Array, Array> histogram(const Array& a, int64_t bins, std::optional<std::pair<double, double>> range,
                                  const std::optional<Array>& weights, bool density, Loc loc) {
  ApiScope s(loc);
  return histogram_impl(
      a, [&](const Array& x) { return bin_edges_count(x, bins, range, "histogram"); }, weights, density);
}
std::pair<Array, Array> histogram(const Array& a, const Array& bins, const std::optional<Array>& weights, bool density,
                                  Loc loc) {
  ApiScope s(loc);
  return histogram_impl(
      a, [&](const Array& x) { return bin_edges_given(x, bins, "histogram"); }, weights, density);
}

namespace {
// jnp.histogramdd's body: per dimension, its edges and each point's bin (searchsorted right; a point on the last
// edge joins the last bin), the bins raveled (ravel_multi_index, clip) and counted by bincount (integer counts
// without weights, as JAX's), the under/overflow bins sliced off.
std::pair<Array, std::vector<Array>> histogramdd_impl(const Array& sample, const std::vector<HistogramBins>& bins,
                                                      const std::vector<std::pair<double, double>>& range,
                                                      const std::optional<Array>& weights, bool density) {
  constexpr std::string_view op = "histogramdd";
  stats_check_valid(op, sample);
  Array x;
  std::optional<Array> w;
  if (!weights) {
    x = stats_inexact(sample);
  } else {
    stats_check_valid(op, *weights, "weights that are an");
    if (weights->ndim() != 1 || sample.ndim() < 1 || weights->shape()[0] != sample.shape()[0])
      throw_error<ShapeError>(op, "should have one weight for each sample: sample has shape {}, weights {}",
                              shape_str(sample.shape()), shape_str(weights->shape()));
    std::tie(x, w) = promote_inexact(sample, *weights, op, false);
  }
  if (x.ndim() != 2)
    throw_error<ShapeError>(op, "sample must be 2-D (N points, D dimensions), got shape {}", shape_str(x.shape()));
  const int64_t D = x.shape()[1];
  if (!range.empty() && static_cast<int64_t>(range.size()) != D)
    throw_error<ShapeError>(op, "for sample.shape={}, range must be a sequence of {} pairs, got {} pairs",
                            shape_str(x.shape()), D, range.size());
  if (static_cast<int64_t>(bins.size()) != D)
    throw_error<ShapeError>(op, "should be a bin for each dimension: {} dimensions, {} bins", D, bins.size());
  std::vector<Array> idx, edges;
  Shape nbins;
  for (int64_t i = 0; i < D; ++i) {
    Array col = index_along(x, 1, i);
    Array e;
    if (const auto* n = std::get_if<int64_t>(&bins[static_cast<size_t>(i)])) {
      std::optional<std::pair<double, double>> r;
      if (!range.empty()) r = range[static_cast<size_t>(i)];
      e = bin_edges_count(col, *n, r, op);
    } else {
      e = bin_edges_given(col, std::get<Array>(bins[static_cast<size_t>(i)]), op);
    }
    int64_t ne = e.shape()[0];
    if (ne == 0) throw_error<ShapeError>(op, "bins must be >= 0, got -1 (no bin edges) for dimension {}", i);
    Array b = searchsorted(e, col, "right");
    b = where(equal(col, elem(e, -1)), subtract(b, Array(1)), b);
    idx.push_back(b);
    edges.push_back(e);
    nbins.push_back(ne + 1);
  }
  int64_t total = 1;
  for (int64_t n : nbins) total *= n;
  Array xy = ravel_multi_index(idx, nbins, "clip");
  Array hist = lax::reshape(bincount(xy, w, 0, total), nbins);
  for (int64_t i = 0; i < D; ++i) hist = slice_along(hist, i, 1, nbins[static_cast<size_t>(i)] - 1);
  if (density) {
    hist = astype(hist, x.dtype());
    hist = divide(hist, sum(hist));
    for (int64_t i = 0; i < D; ++i) {
      Shape sh(static_cast<size_t>(D), 1);
      sh[static_cast<size_t>(i)] = nbins[static_cast<size_t>(i)] - 2;
      hist = divide(hist, lax::reshape(diff_along(edges[static_cast<size_t>(i)], 0), sh));
    }
  }
  return {hist, edges};
}

/// jnp.histogram2d's bins given as one array: 1-D edges of another length than 1 or 2 are both dimensions'
/// edges; a 0-d array is one count for both; a length-1 or length-2 array is read as counts (JAX's len(bins)).
std::vector<HistogramBins> bins_2d(const Array& bins) {
  stats_check_valid("histogram2d", bins, "bins that are an");
  if (bins.ndim() == 1 && bins.shape()[0] != 1 && bins.shape()[0] != 2) return {bins, bins};
  if (bins.ndim() > 1)
    throw_error<ShapeError>("histogram2d", "bins must be a count or 1-D bin edges, got shape {}",
                            shape_str(bins.shape()));
  if (bins.is_tracer() || !is_integer(bins.dtype()))
    throw_error<TypeError>("histogram2d",
                           "bins given as {} must be concrete integer counts (JAX reads a 0-d, 1- "
                           "or 2-element bins as counts), got {}",
                           bins.ndim() == 0 ? "a scalar" : "1 or 2 values", bins.aval().str());
  std::vector<int64_t> n = astype(ravel(bins), DType::int64).to_vector<int64_t>();
  if (n.size() == 1) return {n[0], n[0]};
  return {n[0], n[1]};
}

std::tuple<Array, Array, Array> histogram2d_impl(const Array& x, const Array& y, const std::vector<HistogramBins>& bins,
                                                 const std::vector<std::pair<double, double>>& range,
                                                 const std::optional<Array>& weights, bool density) {
  stats_check_valid("histogram2d", x);
  stats_check_valid("histogram2d", y);
  if (x.ndim() != 1 || y.shape() != x.shape())
    throw_error<ShapeError>("histogram2d", "x and y must be 1-D of one length, got shapes {} and {}",
                            shape_str(x.shape()), shape_str(y.shape()));
  if (bins.size() != 2)
    throw_error<ShapeError>("histogram2d", "bins must be one count or 2 entries, got {}", bins.size());
  auto [hist, edges] = histogramdd_impl(lax::transpose(stack({x, y}), {1, 0}), bins, range, weights, density);
  return {hist, edges[0], edges[1]};
}
}  // namespace

std::pair<Array, std::vector<Array>> histogramdd(const Array& sample, int64_t bins,
                                                 const std::vector<std::pair<double, double>>& range,
                                                 const std::optional<Array>& weights, bool density, Loc loc) {
  ApiScope s(loc);
  stats_check_valid("histogramdd", sample);
  int64_t d = sample.ndim() == 2 ? sample.shape()[1] : 0;
  return histogramdd_impl(sample, std::vector<HistogramBins>(static_cast<size_t>(d), bins), range, weights, density);
}
std::pair<Array, std::vector<Array>> histogramdd(const Array& sample, const std::vector<HistogramBins>& bins,
                                                 const std::vector<std::pair<double, double>>& range,
                                                 const std::optional<Array>& weights, bool density, Loc loc) {
  ApiScope s(loc);
  return histogramdd_impl(sample, bins, range, weights, density);
}
std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y, int64_t bins,
                                            const std::vector<std::pair<double, double>>& range,
                                            const std::optional<Array>& weights, bool density, Loc loc) {
  ApiScope s(loc);
  return histogram2d_impl(x, y, {bins, bins}, range, weights, density);
}
std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y, const Array& bins,
                                            const std::vector<std::pair<double, double>>& range,
                                            const std::optional<Array>& weights, bool density, Loc loc) {
  ApiScope s(loc);
  return histogram2d_impl(x, y, bins_2d(bins), range, weights, density);
}
std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y, const std::vector<HistogramBins>& bins,
                                            const std::vector<std::pair<double, double>>& range,
                                            const std::optional<Array>& weights, bool density, Loc loc) {
  ApiScope s(loc);
  return histogram2d_impl(x, y, bins, range, weights, density);
}

namespace {
Array logspace_impl(const Array& start, const Array& stop, int64_t num, bool endpoint, double base, DType comp,
                    std::string_view op) {
  return power(Array(base), linspace_traced(start, stop, num, endpoint, comp, op));
}

DType check_space_args(int64_t num, DType dtype, int64_t axis, std::string_view op) {
  if (num < 0) throw_error<ShapeError>(op, "num must be >= 0, got {}", num);
  if (!is_valid_dtype(dtype)) throw_error<TypeError>(op, "got DType({}), which is not a jitx dtype", int(dtype));
  detail::canonical_axis(axis, 1, op);  // start and stop are scalars: the result is 1-D
  return stats_inexact_of(dtype);
}
}  // namespace

Array logspace(double start, double stop, int64_t num, bool endpoint, double base, DType dtype, int64_t axis, Loc loc) {
  ApiScope s(loc);
  DType comp = check_space_args(num, dtype, axis, "logspace");
  return astype(logspace_impl(stats_lit(start, comp), stats_lit(stop, comp), num, endpoint, base, comp, "logspace"),
                dtype);
}

Array geomspace(double start, double stop, int64_t num, bool endpoint, DType dtype, int64_t axis, Loc loc) {
  ApiScope s(loc);
  DType comp = check_space_args(num, dtype, axis, "geomspace");
  Array a = stats_lit(start, comp), b = stats_lit(stop, comp);
  // sign * 10 ** linspace(log10(start / sign), log10(stop / sign)): NaN when the signs differ or start is 0.
  Array sign_a = sign(a);
  Array r = logspace_impl(log10(divide(a, sign_a)), log10(divide(b, sign_a)), num, endpoint, 10.0, comp, "geomspace");
  return astype(multiply(sign_a, r), dtype);
}

}  // namespace jitx::numpy
