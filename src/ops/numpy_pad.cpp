// jitx::numpy::pad: every mode is lax.pad (constant) or a static gather/concatenation along each axis.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/shape_util.h"
#include "core/trace.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "jitx/numpy_extra.h"
#include "ops/convert.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;

namespace {
int64_t pad_pmod(int64_t a, int64_t n) { return ((a % n) + n) % n; }

/// Source index of output position p (p < 0: before the array, p >= n: after it) for the index modes.
int64_t source_index(std::string_view mode, int64_t p, int64_t n) {
  if (mode == "edge") return std::clamp<int64_t>(p, 0, n - 1);
  if (mode == "wrap") return pad_pmod(p, n);
  if (mode == "symmetric") {
    int64_t q = pad_pmod(p, 2 * n);
    return q < n ? q : 2 * n - 1 - q;
  }
  if (n == 1) return 0;  // reflect
  int64_t q = pad_pmod(p, 2 * n - 2);
  return q < n ? q : 2 * n - 2 - q;
}

/// jnp.median along axis a (keepdims): the middle of the sorted axis, the mean of the two middle values for an
/// even length, NaN where the axis holds a NaN; integers give float32 (rounded back by the caller).
Array median_keepdims(const Array& x, int64_t a) {
  Array f = is_floating(x.dtype()) ? x : astype(x, DType::float32);
  Array srt = sort(f, a);
  int64_t n = x.shape()[a];
  Array lo = slice_axis(srt, a, (n - 1) / 2, (n - 1) / 2 + 1), hi = slice_axis(srt, a, n / 2, n / 2 + 1);
  Array med = n % 2 ? lo : mean(concatenate({lo, hi}, a), {a}, true);
  if (!is_floating(x.dtype())) return med;
  return where(any(isnan(f), {a}, true), full_like(med, NAN), med);
}

Array pad_axis_stat(const Array& x, int64_t a, int64_t before, int64_t after, std::string_view mode) {
  Array st = mode == "maximum"   ? max(x, {a}, true)
             : mode == "minimum" ? min(x, {a}, true)
             : mode == "median"  ? median_keepdims(x, a)
                                 : mean(x, {a}, true);
  // JAX rounds the statistic (half to even) for integers only; a bool's is nonzero -> true, as astype.
  if ((mode == "mean" || mode == "median") && is_integer(x.dtype())) st = round(st);
  st = astype(st, x.dtype());
  auto block = [&](int64_t w) {
    Shape s = x.shape();
    s[a] = w;
    return broadcast_to(st, s);
  };
  return concatenate({block(before), x, block(after)}, a);
}

/// JAX's linear_ramp: before the array jnp.linspace(end, edge, w, endpoint=False, dtype=x's), after it the same
/// from the last edge, flipped. linspace computes end * (1 - i/w) + edge * (i/w) in x's inexact dtype (int64/uint64:
/// float64, other ints and bool: float32) and floors it for integers.
Array pad_axis_ramp(const Array& x, int64_t a, int64_t before, int64_t after, const Array& end) {
  int64_t n = x.shape()[a];
  DType d = x.dtype();
  DType fd = is_floating(d) ? d : d == DType::int64 || d == DType::uint64 ? DType::float64 : DType::float32;
  Array endv = astype(end, fd);
  auto ramp = [&](int64_t w, bool left) {
    Shape s = x.shape();
    s[a] = w;
    Array edge = astype(slice_axis(x, a, left ? 0 : n - 1, left ? 1 : n), fd);
    Array step = divide(lax::broadcasted_iota(fd, s, a), astype(Array(static_cast<double>(w)), fd));
    // one element: linspace gives the start itself (no 0 * edge, which is NaN for an infinite edge)
    Array r = w == 1 ? broadcast_to(endv, s)
                     : add(multiply(endv, subtract(astype(Array(1.0), fd), step)), multiply(edge, step));
    if (is_integer(d)) r = floor(r);
    r = astype(r, d);
    return left ? r : flip(r, {a});
  };
  std::vector<Array> parts;
  if (before > 0) parts.push_back(ramp(before, true));
  parts.push_back(x);
  if (after > 0) parts.push_back(ramp(after, false));
  return concatenate(parts, a);
}
}  // namespace

Array pad(const Array& x, PadWidth pw, std::string_view mode, const Array& constant_values, const Array& end_values,
          Loc loc) {
  ApiScope s(loc);
  // "empty" leaves the padding unspecified (NumPy); JAX fills it with zeros, as "constant" does.
  if (mode == "empty") return pad(x, std::move(pw), "constant", Array(0), end_values, loc);
  static const std::vector<std::string_view> modes = {"constant", "edge",    "wrap",        "reflect", "symmetric",
                                                      "maximum",  "minimum", "mean",        "linear_ramp",
                                                      "median"};
  if (std::find(modes.begin(), modes.end(), mode) == modes.end())
    throw_error<TypeError>("pad", "unknown mode '{}' (expected constant, edge, wrap, reflect, symmetric, maximum, "
                                  "minimum, mean, median, linear_ramp or empty)",
                           mode);
  if (pw.size() == 1 && x.ndim() != 1) pw.resize(x.ndim(), pw[0]);
  if (static_cast<int64_t>(pw.size()) != x.ndim())
    throw_error<ShapeError>("pad", "got {} (before, after) pairs for an array of shape {}", pw.size(),
                            shape_str(x.shape()));
  for (auto [b, e] : pw)
    if (b < 0 || e < 0) throw_error<ShapeError>("pad", "pad widths must be >= 0, got ({}, {})", b, e);
  if (mode == "constant") {
    // As JAX's _pad_constant: the values in x's dtype and weak type; a scalar (or one value) pads every side,
    // otherwise they broadcast to (before, after) per axis and the axes are padded one after another (so a corner
    // takes the later axis' value).
    Array cv = detail::convert_weak(constant_values, x.dtype(), x.weak_type());
    const Shape& cs = cv.shape();
    if (cv.ndim() > 2 || (cv.ndim() >= 1 && cs.back() != 1 && cs.back() != 2))
      throw_error<ShapeError>("pad", "constant_values has unsupported shape {}: it must be a scalar, or 1-D or 2-D "
                              "with a last dimension of size 1 or 2", shape_str(cs));
    if (cv.ndim() == 0 || (cv.ndim() == 1 && cs[0] == 1)) {
      std::vector<std::array<int64_t, 3>> cfg;
      for (auto [b, e] : pw) cfg.push_back({b, e, 0});
      return lax::pad(x, lax::reshape(cv, {}), cfg);
    }
    Array pairs = broadcast_to(cv, {x.ndim(), 2});
    Array out = x;
    for (int64_t a = 0; a < x.ndim(); ++a)
      for (int side = 0; side < 2; ++side) {
        int64_t w = side == 0 ? pw[a].first : pw[a].second;
        if (w == 0) continue;
        std::vector<std::array<int64_t, 3>> cfg(x.ndim(), {0, 0, 0});
        cfg[a] = side == 0 ? std::array<int64_t, 3>{w, 0, 0} : std::array<int64_t, 3>{0, w, 0};
        Array v = lax::reshape(lax::slice(pairs, {a, side}, {a + 1, side + 1}), {});
        out = lax::pad(out, v, cfg);
      }
    return out;
  }
  if (mode == "linear_ramp" && end_values.ndim() != 0)
    throw_error<ShapeError>("pad", "end_values must be a scalar, got shape {}", shape_str(end_values.shape()));
  Array out = x;
  for (int64_t a = 0; a < x.ndim(); ++a) {
    auto [b, e] = pw[a];
    if (b == 0 && e == 0) continue;
    int64_t n = x.shape()[a];
    if (n == 0 && mode == "mean") {  // JAX: the mean of nothing, NaN (0 once converted to an integer)
      out = pad_axis_stat(out, a, b, e, mode);
      continue;
    }
    if (n == 0)
      throw_error<ShapeError>("pad", "cannot pad the empty axis {} of shape {} in mode '{}'", a,
                              shape_str(x.shape()), mode);
    if (mode == "maximum" || mode == "minimum" || mode == "mean" || mode == "median") {
      out = pad_axis_stat(out, a, b, e, mode);
    } else if (mode == "linear_ramp") {
      out = pad_axis_ramp(out, a, b, e, end_values);
    } else {
      std::vector<int64_t> idx;
      if (b > INT64_MAX / 4 - n || e > INT64_MAX / 4 - n - b)
        throw_error<ShapeError>("pad", "pad widths ({}, {}) on axis {} of size {} are too large", b, e, a, n);
      try {
        idx.reserve(static_cast<size_t>(n + b + e));  // the gather's index, one entry per output position
      } catch (const std::exception&) {
        throw_error<RuntimeError>("pad", "cannot allocate the index of {} positions for axis {} (pad widths ({}, {}))",
                                  n + b + e, a, b, e);
      }
      for (int64_t p = -b; p < n + e; ++p) idx.push_back(source_index(mode, p, n));
      out = take(out, array(idx, Shape{static_cast<int64_t>(idx.size())}, DType::int64), a, "clip");
    }
  }
  return out;
}

Array pad(const Array& x, int64_t pad_width, std::string_view mode, const Array& constant_values,
          const Array& end_values, Loc loc) {
  return pad(x, PadWidth(x.ndim(), {pad_width, pad_width}), mode, constant_values,
             end_values, loc);
}

}  // namespace jitx::numpy
