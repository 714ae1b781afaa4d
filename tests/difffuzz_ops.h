// The differential fuzzer's op families (see difffuzz_gen.h for the rules they follow).
#pragma once
#include <algorithm>
#include <numeric>
#include <set>

namespace jitx::difffuzz {

/// A positive, well-conditioned domain for log/sqrt/lgamma...: |x| + 0.5 (x^2 + 0.5 in smooth mode).
inline Array positive(Gen& g, const Array& x) {
  Array h = g.scalar(0.5, x.dtype());
  return g.smooth() ? lax::add(lax::mul(x, x), h) : lax::add(lax::abs(x), h);
}
inline Array clampv(Gen& g, const Array& x, double lo, double hi) {
  return lax::clamp(g.scalar(lo, x.dtype()), x, g.scalar(hi, x.dtype()));
}

inline void Gen::unary_float() {
  Val v = some(is_float_dt);
  const Array& x = v.a;
  using F = std::function<Array()>;
  std::vector<std::pair<F, bool>> ops = {
      // (op, smooth)
      {[&] { return lax::exp(clampv(*this, x, -4, 4)); }, true},
      {[&] { return lax::exp2(clampv(*this, x, -4, 4)); }, true},
      {[&] { return lax::expm1(clampv(*this, x, -4, 4)); }, true},
      {[&] { return lax::log(positive(*this, x)); }, true},
      {[&] { return lax::log1p(positive(*this, x)); }, true},
      {[&] { return lax::sqrt(positive(*this, x)); }, true},
      {[&] { return lax::rsqrt(positive(*this, x)); }, true},
      {[&] { return lax::cbrt(smooth() ? positive(*this, x) : x); }, true},
      {[&] { return lax::tanh(x); }, true},
      {[&] { return lax::logistic(x); }, true},
      {[&] { return lax::sin(clampv(*this, x, -6, 6)); }, true},
      {[&] { return lax::cos(clampv(*this, x, -6, 6)); }, true},
      {[&] { return lax::tan(clampv(*this, x, -1.2, 1.2)); }, true},
      {[&] { return lax::asin(clampv(*this, x, -0.9, 0.9)); }, true},
      {[&] { return lax::acos(clampv(*this, x, -0.9, 0.9)); }, true},
      {[&] { return lax::atanh(clampv(*this, x, -0.9, 0.9)); }, true},
      {[&] { return lax::atan(x); }, true},
      {[&] { return lax::sinh(clampv(*this, x, -4, 4)); }, true},
      {[&] { return lax::cosh(clampv(*this, x, -4, 4)); }, true},
      {[&] { return lax::asinh(x); }, true},
      {[&] { return lax::acosh(lax::add(positive(*this, x), scalar(1, x.dtype()))); }, true},
      {[&] { return lax::erf(x); }, true},
      {[&] { return lax::erfc(clampv(*this, x, -3, 3)); }, true},
      {[&] { return lax::erf_inv(clampv(*this, x, -0.9, 0.9)); }, true},
      {[&] { return lax::lgamma(positive(*this, x)); }, true},
      {[&] { return lax::digamma(positive(*this, x)); }, true},
  };
  auto& [op, is_smooth] = pick(ops);
  if (smooth() && !is_smooth) return;
  add(op(), {v.depth}, true);
}

inline void Gen::unary_other() {
  if (coin(0.4)) {  // exact float ops
    Val v = some(is_float_dt, !smooth() && coin(0.5));
    const Array& x = v.a;
    int k = static_cast<int>(uni(0, smooth() ? 1 : 7));
    bool need_exact = k >= 3;
    if (need_exact && v.depth) return;
    Array r = k == 0   ? lax::neg(x)
              : k == 1 ? lax::mul(x, x)
              : k == 2 ? lax::abs(x)
              : k == 3 ? lax::sign(x)
              : k == 4 ? lax::floor(x)
              : k == 5 ? lax::ceil(x)
              : k == 6
                  ? lax::round(x, coin() ? lax::RoundingMethod::AWAY_FROM_ZERO : lax::RoundingMethod::TO_NEAREST_EVEN)
                  : lax::is_finite(x);
    add(r, {v.depth}, arith_inexact(x.dtype()) && k == 1);
    return;
  }
  if (smooth()) return;
  Val v = some([](DType d) { return !is_floating(d); });
  const Array& x = v.a;
  DType d = x.dtype();
  int k = static_cast<int>(uni(0, 4));
  if (is_bool(d)) return add(lax::bitwise_not(x), {0}, false);
  Array r = k == 0                           ? lax::neg(x)
            : k == 1                         ? lax::bitwise_not(x)
            : k == 2                         ? lax::population_count(x)
            : k == 3 && is_signed_integer(d) ? lax::abs(x)
                                             : lax::sign(x);
  add(r, {0}, false);
}

inline void Gen::binary() {
  Val a = some(smooth() ? is_float_dt : is_numeric);
  DType d = a.a.dtype();
  bool scalar_b = coin(0.2);
  Shape bs = scalar_b ? Shape{} : a.a.shape();
  Val b = like(d, bs);
  const Array &x = a.a, &y = b.a;
  Array r;
  bool inexact = arith_inexact(d);
  if (is_floating(d)) {
    int k = static_cast<int>(uni(0, smooth() ? 4 : 9));
    switch (k) {
      case 0:
        r = lax::add(x, y);
        break;
      case 1:
        r = lax::sub(x, y);
        break;
      case 2:
        r = lax::mul(x, y);
        break;
      case 3:
        // Inexact: the simplifier rewrites a division by a broadcast value as XLA's does, A * broadcast(1 / B)
        // (one rounding more), and y may reach the divide as a broadcast (a scalar, or a broadcast_in_dim).
        r = lax::div(x, positive(*this, y)), inexact = true;
        break;
      case 4:
        r = lax::pow(positive(*this, x), clampv(*this, y, -3, 3)), inexact = true;
        break;
      case 5:
        r = lax::max(x, y);
        break;
      case 6:
        r = lax::min(x, y);
        break;
      case 7:
        r = lax::atan2(x, y), inexact = true;
        break;
      case 8:
        if (a.depth || b.depth) return;
        r = lax::rem(x, positive(*this, y));
        break;
      default:
        r = lax::nextafter(x, y);
        if (a.depth || b.depth) return;
        break;
    }
  } else if (is_bool(d)) {
    int k = static_cast<int>(uni(0, 2));
    r = k == 0 ? lax::bitwise_and(x, y) : k == 1 ? lax::bitwise_or(x, y) : lax::bitwise_xor(x, y);
  } else {
    int k = static_cast<int>(uni(0, 10));
    switch (k) {
      case 0:
        r = lax::add(x, y);
        break;
      case 1:
        r = lax::sub(x, y);
        break;
      case 2:
        r = lax::mul(x, y);
        break;
      case 3:
        r = lax::div(x, y);
        break;  // division by zero and INT_MIN / -1 follow XLA on both platforms
      case 4:
        r = lax::rem(x, y);
        break;
      case 5:
        r = lax::max(x, y);
        break;
      case 6:
        r = lax::min(x, y);
        break;
      case 7:
        r = lax::bitwise_and(x, y);
        break;
      case 8:
        r = lax::bitwise_xor(x, y);
        break;
      case 9:
        r = lax::shift_left(x, y);
        break;
      default:
        r = coin() ? lax::shift_right_arithmetic(x, y) : lax::shift_right_logical(x, y);
        break;
    }
  }
  if (scalar_b && coin()) r = lax::broadcast_in_dim(r, x.shape(), {});
  add(r, {a.depth, b.depth}, inexact);
}

inline void Gen::compare_select() {
  if (smooth() && coin(0.5)) {  // select on a predicate of exact values (ties are measure-zero for the FD check)
    Val x = some(is_float_dt);
    Val p = like(x.a.dtype(), x.a.shape(), true), c = like(x.a.dtype(), x.a.shape(), true);
    Val y = like(x.a.dtype(), x.a.shape());
    if (p.depth || c.depth) return;
    return add(lax::select(lax::lt(p.a, c.a), x.a, y.a), {x.depth, y.depth}, false);
  }
  Val x = some(any_dt, true);
  if (x.depth) return;
  Val y = like(x.a.dtype(), x.a.shape(), true);
  if (y.depth) return;
  int k = static_cast<int>(uni(0, 5));
  Array p = k == 0   ? lax::eq(x.a, y.a)
            : k == 1 ? lax::ne(x.a, y.a)
            : k == 2 ? lax::lt(x.a, y.a)
            : k == 3 ? lax::le(x.a, y.a)
            : k == 4 ? lax::gt(x.a, y.a)
                     : lax::ge(x.a, y.a);
  add(p, {0}, false);
  if (coin(0.6)) {
    Val t = some(smooth() ? is_float_dt : any_dt);
    Val f = like(t.a.dtype(), t.a.shape());
    Val pp = like(DType::bool_, coin(0.2) ? Shape{} : t.a.shape(), true);
    if (pp.depth) return;
    add(lax::select(pp.a, t.a, f.a), {t.depth, f.depth}, false);
  }
  if (coin(0.3)) {
    Val c = some(smooth() ? is_float_dt : is_numeric);
    // Smooth mode: constant bounds (with traced ones lo may pass hi, where JAX's clamp JVP, which jitx follows,
    // is not the derivative of min(max(x, lo), hi)).
    Val lo = smooth() ? Val{scalar(-1, c.a.dtype()), 0} : like(c.a.dtype(), {});
    Val hi = smooth() ? Val{scalar(1, c.a.dtype()), 0} : like(c.a.dtype(), {});
    add(lax::clamp(lo.a, c.a, hi.a), {c.depth, lo.depth, hi.depth}, false);
  }
}

inline void Gen::convert() {
  DType to = random_dtype();
  Val v = some(smooth() ? is_float_dt : any_dt);
  DType from = v.a.dtype();
  if (is_floating(from) && !is_floating(to) && v.depth) return;  // float->int/bool jumps: exact inputs only
  if (!smooth() && coin(0.15) && dtype_size(from) == dtype_size(to) && !is_bool(from) && !is_bool(to)) {
    // bitcasts: from ints (any bits, NaNs included), or from exact floats that no arithmetic made (inputs)
    if (is_floating(from) && v.depth) return;
    return add(lax::bitcast_convert_type(v.a, to), {v.depth}, false);
  }
  // Under excess precision a convert into f16/bf16 may be deferred or removed (XLA's simplifier may drop a
  // convert to a narrower float and back), so the value may keep its wider form: inexact.
  add(lax::convert_element_type(v.a, to), {v.depth}, excess() && is_floating(to) && dtype_size(to) == 2);
}

/// A random shape with the same element count as s (zero-size shapes keep a 0).
inline Shape reshaped(Gen& g, const Shape& s) {
  int64_t n = numel(s);
  Shape out;
  if (n == 0) {
    out = g.random_shape(2);
    out.insert(out.begin() + g.uni(0, static_cast<int64_t>(out.size())), 0);
    return out;
  }
  while (n > 1) {
    std::vector<int64_t> divs;
    for (int64_t k = 2; k <= n; ++k)
      if (n % k == 0) divs.push_back(k);
    int64_t k = g.coin(0.3) ? n : g.pick(divs);
    out.push_back(k);
    n /= k;
    if (g.coin(0.2)) out.push_back(1);
  }
  std::shuffle(out.begin(), out.end(), std::mt19937(g.uni(0, 1 << 30)));
  return out;
}

inline void Gen::structural() {
  Val v = some(smooth() ? is_float_dt : any_dt);
  const Array& x = v.a;
  Shape s = x.shape();
  int64_t r = static_cast<int64_t>(s.size());
  int k = static_cast<int>(uni(0, 6));
  Array out;
  if (k == 0) {  // broadcast_in_dim: new axes and size-1 axes expanded
    Shape os;
    std::vector<int64_t> bdims;
    for (int64_t i = 0; i < r; ++i) {
      while (coin(0.25) && os.size() < 4) os.push_back(uni(1, 3));
      bdims.push_back(static_cast<int64_t>(os.size()));
      os.push_back(s[i] == 1 && coin(0.5) ? uni(0, 3) : s[i]);
    }
    while (coin(0.3) && os.size() < 4) os.push_back(uni(1, 3));
    out = lax::broadcast_in_dim(x, os, bdims);
  } else if (k == 1) {
    out = lax::reshape(x, reshaped(*this, s));
  } else if (k == 2) {
    std::vector<int64_t> p(static_cast<size_t>(r));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), std::mt19937(uni(0, 1 << 30)));
    out = lax::transpose(x, p);
  } else if (k == 3) {
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < r; ++i)
      if (coin()) dims.push_back(i);
    out = lax::rev(x, dims);
  } else if (k == 4) {
    std::vector<int64_t> st, li, sd;
    for (int64_t i = 0; i < r; ++i) {
      int64_t a = uni(0, s[i]), b = uni(a, s[i]);
      st.push_back(a), li.push_back(b), sd.push_back(uni(1, 3));
    }
    out = lax::slice(x, st, li, sd);
  } else if (k == 5) {
    DType d = smooth() ? DType::float64 : pick(kAllDTypes);
    if (is_bool(d)) d = DType::int32;
    Shape os = random_shape();
    if (os.empty()) os.push_back(uni(0, 5));
    out = lax::broadcasted_iota(d, os, uni(0, static_cast<int64_t>(os.size()) - 1));
    return add(out, {0}, false);
  } else {
    out = lax::reshape(x, Shape(s.begin(), s.end()));  // a no-op reshape the simplifier removes
    if (r > 0 && s[0] == 1) out = lax::reshape(x, Shape(s.begin() + 1, s.end()));
  }
  add(out, {v.depth}, false);
}

inline void Gen::concat_pad() {
  Val v = some(smooth() ? is_float_dt : any_dt);
  const Array& x = v.a;
  Shape s = x.shape();
  int64_t r = static_cast<int64_t>(s.size());
  if (coin() && r > 0) {
    int64_t axis = uni(0, r - 1);
    std::vector<Array> xs{x};
    int depth = v.depth;
    for (int64_t i = uni(1, 2); i > 0; --i) {
      Shape t = s;
      t[axis] = uni(0, 3);
      Val o = like(x.dtype(), t);
      xs.push_back(o.a);
      depth = std::max(depth, o.depth);
    }
    std::shuffle(xs.begin(), xs.end(), std::mt19937(uni(0, 1 << 30)));
    return add(lax::concatenate(xs, axis), {depth}, false);
  }
  std::vector<std::array<int64_t, 3>> cfg;
  for (int64_t i = 0; i < r; ++i) {
    int64_t in = s[i] > 1 ? uni(0, 2) : 0;
    int64_t full = s[i] + (s[i] > 0 ? (s[i] - 1) * in : 0);
    int64_t lo = uni(-std::min<int64_t>(full, 2), 2);
    int64_t hi = uni(-std::min<int64_t>(full + lo, 2), 2);
    cfg.push_back({lo, hi, in});
  }
  Val pv = like(x.dtype(), {});
  add(lax::pad(x, pv.a, cfg), {v.depth, pv.depth}, false);
}

inline std::vector<int64_t> random_axes(Gen& g, int64_t r) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < r; ++i)
    if (g.coin()) axes.push_back(i);
  return axes;
}

inline void Gen::reduction() {
  int k = static_cast<int>(uni(0, smooth() ? 1 : 8));
  Val v = some(k >= 4 && k <= 5 ? any_dt : smooth() ? is_float_dt : is_numeric, k >= 6);
  const Array& x = v.a;
  int64_t r = x.ndim();
  bool fl = is_floating(x.dtype());
  if (k == 4 || k == 5) {  // and/or on bools
    Array b = is_bool(x.dtype()) ? x : v.depth ? Array() : lax::ne(x, scalar(0, x.dtype()));
    if (!b.impl()) return;
    return add(k == 4 ? lax::reduce_and(b, random_axes(*this, r)) : lax::reduce_or(b, random_axes(*this, r)), {0},
               false);
  }
  if (is_bool(x.dtype())) return;
  if (k >= 6) {  // argmax/argmin/cum ops
    if (v.depth) return;
    if (r == 0) return;
    int64_t axis = uni(0, r - 1);
    if (k == 6 && x.shape()[static_cast<size_t>(axis)] > 0)
      return add(coin() ? lax::argmax(x, axis, coin() ? DType::int32 : DType::int64) : lax::argmin(x, axis), {0},
                 false);
    return add(coin() ? lax::cummax(x, axis, coin()) : lax::cummin(x, axis, coin()), {0}, false);
  }
  auto axes = random_axes(*this, r);
  Array in = fl && k == 1 ? clampv(*this, x, -1.25, 1.25) : x;
  if (r > 0 && coin(0.3)) {
    int64_t axis = uni(0, r - 1);
    return add(k == 1 ? lax::cumprod(in, axis, coin()) : lax::cumsum(in, axis, coin()), {v.depth}, true);
  }
  Array out = k == 0   ? lax::reduce_sum(in, axes)
              : k == 1 ? lax::reduce_prod(in, axes)
              : k == 2 ? lax::reduce_max(in, axes)
                       : lax::reduce_min(in, axes);
  add(out, {v.depth}, k <= 1);
}

inline void Gen::window() {
  Val v = some(smooth() ? is_float_dt : is_numeric);
  const Array& x = v.a;
  int64_t r = x.ndim();
  lax::WindowConfig w;
  bool dil = coin(0.3);
  for (int64_t i = 0; i < r; ++i) {
    int64_t n = x.shape()[static_cast<size_t>(i)];
    int64_t bd = dil ? uni(1, 2) : 1, wd = dil ? uni(1, 2) : 1;
    int64_t lo = uni(0, 1), hi = uni(0, 1);
    int64_t padded = (n > 0 ? (n - 1) * bd + 1 : 0) + lo + hi;
    int64_t wsize = uni(1, 3);
    while (wsize > 1 && (wsize - 1) * wd + 1 > padded) --wsize;
    if ((wsize - 1) * wd + 1 > padded) wd = 1;
    w.window_dimensions.push_back(wsize), w.window_strides.push_back(uni(1, 2));
    w.padding.push_back({lo, hi}), w.base_dilation.push_back(bd), w.window_dilation.push_back(wd);
  }
  int k = static_cast<int>(uni(0, smooth() ? 0 : 2));
  Array out = k == 0   ? lax::reduce_window_sum(x, w)
              : k == 1 ? lax::reduce_window_max(x, w)
                       : lax::reduce_window_min(x, w);
  add(out, {v.depth}, k == 0);
}

inline void Gen::dot() {
  Val a = some(smooth() ? is_float_dt : is_numeric);
  const Array& x = a.a;
  int64_t r = x.ndim();
  lax::DotDimensionNumbers dn;
  Shape bshape;
  std::vector<int64_t> dims(static_cast<size_t>(r));
  std::iota(dims.begin(), dims.end(), 0);
  std::shuffle(dims.begin(), dims.end(), std::mt19937(uni(0, 1 << 30)));
  size_t nb = static_cast<size_t>(uni(0, std::min<int64_t>(r, 1)));
  size_t nc = static_cast<size_t>(uni(0, std::min<int64_t>(r - static_cast<int64_t>(nb), 2)));
  for (size_t i = 0; i < nb; ++i) dn.lhs_batch.push_back(dims[i]), dn.rhs_batch.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < nb; ++i) bshape.push_back(x.shape()[static_cast<size_t>(dims[i])]);
  for (size_t i = 0; i < nc; ++i) {
    dn.lhs_contracting.push_back(dims[nb + i]);
    dn.rhs_contracting.push_back(static_cast<int64_t>(nb + i));
    bshape.push_back(x.shape()[static_cast<size_t>(dims[nb + i])]);
  }
  if (coin(0.8)) bshape.push_back(uni(0, 4) == 0 ? 0 : uni(1, 4));
  Val b = like(x.dtype(), bshape);
  add(lax::dot_general(x, b.a, dn), {a.depth, b.depth}, true);
}

inline void Gen::conv() {
  DType d = smooth() ? DType::float64
                     : pick(std::vector<DType>{DType::float32, DType::float64, DType::float16, DType::bfloat16});
  int64_t sp = uni(1, 2), n = uni(1, 2), g = coin(0.3) ? 2 : 1, c = g * uni(1, 2), o = g * uni(1, 2);
  Shape ls{n, c}, rs{o, c / g};
  std::vector<int64_t> strides, ld, rd;
  std::vector<std::pair<int64_t, int64_t>> pad;
  for (int64_t i = 0; i < sp; ++i) {
    int64_t in = uni(1, 5), w = uni(1, 3), l = uni(1, 2), rr = uni(1, 2), lo = uni(0, 1), hi = uni(0, 1);
    while ((w - 1) * rr + 1 > (in - 1) * l + 1 + lo + hi && w > 1) --w;
    if ((w - 1) * rr + 1 > (in - 1) * l + 1 + lo + hi) rr = 1;
    ls.push_back(in), rs.push_back(w), strides.push_back(uni(1, 2)), ld.push_back(l), rd.push_back(rr);
    pad.push_back({lo, hi});
  }
  // Finite operands: the interpreter skips padding and dilation holes where the cpu backend multiplies zeros, so
  // an infinite weight gives NaN on cpu only (as XLA's evaluator and XLA:CPU differ); both are right.
  Val a = like(d, ls), b = like(d, rs);
  a.a = clampv(*this, a.a, -4, 4), b.a = clampv(*this, b.a, -4, 4);
  add(lax::conv_general_dilated(a.a, b.a, strides, pad, ld, rd, {}, g), {a.depth, b.depth}, true);
}

/// Index arrays: batch shape + [k], values in [-1, size] (out of range on purpose: gathers clamp, scatters drop).
inline Array index_array(Gen& g, const Shape& batch, const std::vector<int64_t>& sizes, bool distinct) {
  Shape s = batch;
  s.push_back(static_cast<int64_t>(sizes.size()));
  int64_t n = numel(batch);
  std::vector<int64_t> v;
  std::set<std::vector<int64_t>> used;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> t;
    for (int64_t sz : sizes) t.push_back(g.uni(distinct ? 0 : -1, sz));
    bool in_range = true;
    for (size_t j = 0; j < t.size(); ++j) in_range = in_range && t[j] < sizes[j];
    if (distinct && in_range && !used.insert(t).second) t[0] = sizes[0];  // a repeat becomes a dropped window
    v.insert(v.end(), t.begin(), t.end());
  }
  DType d = g.pick(std::vector<DType>{DType::int32, DType::int64, DType::uint32, DType::int8});
  return array_from_data(v.data(), DType::int64, s, d);
}

inline void Gen::gather() {
  Val v = some(smooth() ? is_float_dt : any_dt);
  const Array& x = v.a;
  int64_t r = x.ndim();
  if (r == 0) return;
  lax::GatherDimensionNumbers dn;
  std::vector<int64_t> slice(static_cast<size_t>(r)), sizes;
  for (int64_t i = 0; i < r; ++i) {
    int64_t n = x.shape()[static_cast<size_t>(i)];
    bool indexed = coin(0.6) || (i == r - 1 && dn.start_index_map.empty());
    slice[static_cast<size_t>(i)] = uni(0, n);
    if (indexed) {
      dn.start_index_map.push_back(i), sizes.push_back(n);
      if (n >= 1 && coin()) dn.collapsed_slice_dims.push_back(i), slice[static_cast<size_t>(i)] = 1;
    }
  }
  std::shuffle(dn.start_index_map.begin(), dn.start_index_map.end(), std::mt19937(uni(0, 1 << 30)));
  sizes.clear();
  for (int64_t i : dn.start_index_map) sizes.push_back(x.shape()[static_cast<size_t>(i)]);
  Shape batch = random_shape(2);
  int64_t out_rank = static_cast<int64_t>(batch.size()) + r - static_cast<int64_t>(dn.collapsed_slice_dims.size());
  std::vector<int64_t> pos(static_cast<size_t>(out_rank));
  std::iota(pos.begin(), pos.end(), 0);
  std::shuffle(pos.begin(), pos.end(), std::mt19937(uni(0, 1 << 30)));
  pos.resize(static_cast<size_t>(r) - dn.collapsed_slice_dims.size());
  std::sort(pos.begin(), pos.end());
  dn.offset_dims = pos;
  Array idx = index_array(*this, batch, sizes, false);
  if (smooth()) {
    // Grad-checked programs read windows in bounds: out of range, gather clamps the read but its transpose drops
    // the cotangent (JAX's semantics), which finite differences of the clamped read cannot agree with.
    std::vector<int64_t> hi;
    for (int64_t i : dn.start_index_map)
      hi.push_back(x.shape()[static_cast<size_t>(i)] - slice[static_cast<size_t>(i)]);
    auto k = static_cast<int64_t>(hi.size());
    Array bound = lax::broadcast_in_dim(array(hi, Shape{k}, idx.dtype()), idx.shape(), {idx.ndim() - 1});
    idx = lax::clamp(Array::scalar_int(0, idx.dtype()), idx, bound);
  }
  add(lax::gather(x, idx, dn, slice), {v.depth}, false);
}

inline void Gen::scatter() {
  int kind = static_cast<int>(uni(0, smooth() ? 1 : 4));  // scatter, add, mul, min, max
  Val v = some(smooth() ? is_float_dt : kind == 0 ? any_dt : is_numeric);
  const Array& x = v.a;
  int64_t r = x.ndim();
  if (r == 0) return;
  lax::ScatterDimensionNumbers dn;
  std::vector<int64_t> window, sizes;
  for (int64_t i = 0; i < r; ++i) {
    int64_t n = x.shape()[static_cast<size_t>(i)];
    if ((coin(0.5) || (i == r - 1 && dn.scatter_dims_to_operand_dims.empty())) && n > 0) {
      dn.scatter_dims_to_operand_dims.push_back(i), dn.inserted_window_dims.push_back(i), sizes.push_back(n);
    } else {
      window.push_back(uni(0, n));
    }
  }
  if (dn.scatter_dims_to_operand_dims.empty()) return;
  Shape batch = random_shape(2);
  int64_t urank = static_cast<int64_t>(batch.size() + window.size());
  std::vector<int64_t> pos(static_cast<size_t>(urank));
  std::iota(pos.begin(), pos.end(), 0);
  std::shuffle(pos.begin(), pos.end(), std::mt19937(uni(0, 1 << 30)));
  pos.resize(window.size());
  std::sort(pos.begin(), pos.end());
  dn.update_window_dims = pos;
  Shape us;
  size_t bi = 0, wi = 0;
  for (int64_t i = 0; i < urank; ++i)
    us.push_back(std::binary_search(pos.begin(), pos.end(), i) ? window[wi++] : batch[bi++]);
  // Plain scatter takes distinct in-range indices: with repeats the winner is unspecified (XLA), so both answers
  // would be right. Float add/mul with repeats sum in an unspecified order: inexact.
  Array idx = index_array(*this, batch, sizes, kind == 0);
  Val u = like(x.dtype(), us);
  Array out = kind == 0   ? lax::scatter(x, idx, u.a, dn)
              : kind == 1 ? lax::scatter_add(x, idx, u.a, dn)
              : kind == 2 ? lax::scatter_mul(x, idx, clampv(*this, u.a, -2, 2), dn)
              : kind == 3 ? lax::scatter_min(x, idx, u.a, dn)
                          : lax::scatter_max(x, idx, u.a, dn);
  add(out, {v.depth, u.depth}, kind == 1 || kind == 2);
}

inline void Gen::dynamic() {
  Val v = some(smooth() ? is_float_dt : any_dt);
  const Array& x = v.a;
  int64_t r = x.ndim();
  std::vector<Array> starts;
  Shape sizes;
  for (int64_t i = 0; i < r; ++i) {
    int64_t n = x.shape()[static_cast<size_t>(i)];
    sizes.push_back(uni(0, n));
    Val s = coin(0.5) || smooth() ? Val{scalar(static_cast<double>(uni(-2, n + 2)), DType::int32), 0}
                                  : like(pick(std::vector<DType>{DType::int32, DType::int64, DType::uint8}), {}, true);
    if (s.depth) return;
    starts.push_back(s.a);
  }
  if (coin()) return add(lax::dynamic_slice(x, starts, sizes), {v.depth}, false);
  Val u = like(x.dtype(), sizes);
  add(lax::dynamic_update_slice(x, u.a, starts), {v.depth, u.depth}, false);
}

inline void Gen::sort() {
  Val v = some(any_dt, true);
  if (v.depth || v.a.ndim() == 0) return;
  const Array& x = v.a;
  int64_t r = x.ndim();
  if (coin(0.3) && x.shape().back() > 0) {
    auto [vals, idx] = lax::top_k(x, uni(0, x.shape().back()));
    add(vals, {0}, false);
    if (!smooth()) add(idx, {0}, false);
    return;
  }
  int64_t dim = uni(0, r - 1);
  if (coin() || smooth()) return add(lax::sort(x, dim), {0}, false);  // smooth: ties would reorder a 2nd operand
  Val other = some(any_dt);
  Val o = like(other.a.dtype(), x.shape());
  auto outs = lax::sort({x, o.a}, dim, true, 1);
  add(outs[0], {0}, false);
  add(outs[1], {o.depth}, false);
}

}  // namespace jitx::difffuzz

#include "difffuzz_control.h"
