// jax.scipy.signal (convolve, correlate, convolve2d, correlate2d, detrend), jax.scipy.integrate.trapezoid,
// jax.scipy.ndimage.map_coordinates and jax.scipy.cluster.vq.vq (scipy_signal.h), composed as JAX composes them.
#include "jitx/scipy_signal.h"

#include <algorithm>
#include <functional>
#include <set>

#include "api/scipy_util.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/numpy_shape.h"
#include "jitx/numpy_stats.h"
#include "jitx/vmap.h"

namespace jitx::scipy::signal {
namespace jnp = jitx::numpy;
using jitx::detail::ApiScope;
using jitx::detail::shape_str;
using jitx::detail::throw_error;

namespace {

// JAX's _convolve_nd: lax's convolution of in1 (the larger) with the flipped in2, padded per mode.
Array convolve_nd(const Array& a, const Array& b, std::string_view mode, std::string_view op) {
  if (mode != "full" && mode != "same" && mode != "valid")
    throw_error<TypeError>(op, "mode must be one of ['full', 'same', 'valid'], got '{}'", mode);
  if (a.ndim() != b.ndim())
    throw_error<ShapeError>(op, "in1 and in2 must have the same number of dimensions, got shapes {} and {}",
                            shape_str(a.shape()), shape_str(b.shape()));
  if (a.size() == 0 || b.size() == 0)
    throw_error<ShapeError>(op, "zero-size arrays not supported in convolutions, got shapes {} and {}",
                            shape_str(a.shape()), shape_str(b.shape()));
  // The promoted operands keep each input's shape (scipy_promote broadcasts, so promote 0-d stand-ins).
  DType d = scipy_util::inexact_common(a, b, op);
  Array in1 = jnp::astype(a, d), in2 = jnp::astype(b, d);
  bool no_swap = true, swap = true;
  for (int64_t i = 0; i < a.ndim(); ++i) {
    no_swap = no_swap && a.dim(i) >= b.dim(i);
    swap = swap && a.dim(i) <= b.dim(i);
  }
  if (!no_swap && !swap)
    throw_error<ShapeError>(op, "one input must be smaller than the other in every dimension, got shapes {} and {}",
                            shape_str(a.shape()), shape_str(b.shape()));
  Shape shape_o = in2.shape();
  if (swap) std::swap(in1, in2);
  Shape shape = in2.shape();
  in2 = jnp::flip(in2);
  std::vector<std::pair<int64_t, int64_t>> padding;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[i], so = shape_o[i];
    if (mode == "valid")
      padding.emplace_back(0, 0);
    else if (mode == "same")
      padding.emplace_back(s - 1 - (so - 1) / 2, s - so + (so - 1) / 2);
    else
      padding.emplace_back(s - 1, s - 1);
  }
  Shape l1 = {1, 1}, l2 = {1, 1};
  l1.insert(l1.end(), in1.shape().begin(), in1.shape().end());
  l2.insert(l2.end(), in2.shape().begin(), in2.shape().end());
  Array r = lax::conv_general_dilated(lax::reshape(in1, l1), lax::reshape(in2, l2),
                                      std::vector<int64_t>(shape.size(), 1), padding);
  Shape out(r.shape().begin() + 2, r.shape().end());
  return lax::reshape(r, out);
}

void check_valid(const Array& a, const Array& b, std::string_view op) {
  if (!a.valid() || !b.valid())
    throw_error<TypeError>(op, "got an empty (default-constructed) Array for in{}", a.valid() ? 2 : 1);
}

void check_method(std::string_view method, std::string_view op) {
  if (method == "fft")
    throw_error<TypeError>(op, "method='fft' is not built (jitx has no FFT: no complex dtypes); use 'direct'");
  if (method != "auto" && method != "direct")
    throw_error<TypeError>(op, "got method='{}'; expected 'auto', 'fft', or 'direct'", method);
}

void check_2d(const Array& a, const Array& b, std::string_view boundary, double fillvalue, std::string_view op) {
  if (boundary != "fill" || fillvalue != 0)
    throw_error<TypeError>(op,
                           "only boundary='fill', fillvalue=0 are supported (as JAX's), got boundary='{}', "
                           "fillvalue={}",
                           boundary, fillvalue);
  if (!a.valid() || !b.valid())
    throw_error<TypeError>(op, "got an empty (default-constructed) Array for in{}", a.valid() ? 2 : 1);
  if (a.ndim() != 2 || b.ndim() != 2)
    throw_error<ShapeError>(op, "only supports 2-dimensional inputs, got shapes {} and {}", shape_str(a.shape()),
                            shape_str(b.shape()));
}

}  // namespace

Array convolve(const Array& in1, const Array& in2, std::string_view mode, std::string_view method, Loc loc) {
  ApiScope s(loc);
  check_method(method, "convolve");
  check_valid(in1, in2, "convolve");
  return convolve_nd(in1, in2, mode, "convolve");
}

Array correlate(const Array& in1, const Array& in2, std::string_view mode, std::string_view method, Loc loc) {
  ApiScope s(loc);
  check_method(method, "correlate");
  check_valid(in1, in2, "correlate");
  return convolve_nd(in1, jnp::flip(in2), mode, "correlate");
}

Array convolve2d(const Array& in1, const Array& in2, std::string_view mode, std::string_view boundary, double fillvalue,
                 Loc loc) {
  ApiScope s(loc);
  check_2d(in1, in2, boundary, fillvalue, "convolve2d");
  return convolve_nd(in1, in2, mode, "convolve2d");
}

Array correlate2d(const Array& in1, const Array& in2, std::string_view mode, std::string_view boundary,
                  double fillvalue, Loc loc) {
  ApiScope s(loc);
  constexpr std::string_view op = "correlate2d";
  check_2d(in1, in2, boundary, fillvalue, op);
  bool swap = true, same = true;
  for (int64_t i = 0; i < 2; ++i) {
    swap = swap && in1.dim(i) <= in2.dim(i);
    same = same && in1.dim(i) == in2.dim(i);
  }
  // JAX's case analysis (its orientation of "same" for even sizes follows from it).
  if (mode == "same") return jnp::flip(convolve_nd(jnp::flip(in1), in2, mode, op));
  if (mode == "valid") {
    if (swap && !same) return convolve_nd(jnp::flip(in2), in1, mode, op);
    return jnp::flip(convolve_nd(jnp::flip(in1), in2, mode, op));
  }
  if (swap) return convolve_nd(jnp::flip(in2), in1, mode, op);
  return jnp::flip(convolve_nd(jnp::flip(in1), in2, mode, op));
}

Array detrend(const Array& data, int64_t axis, std::string_view type, const std::vector<int64_t>& bp, Loc loc) {
  ApiScope s(loc);
  constexpr std::string_view op = "detrend";
  if (type != "constant" && type != "linear")
    throw_error<TypeError>(op, "trend type must be 'linear' or 'constant', got '{}'", type);
  if (!data.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  Array x = scipy_util::scipy_promote(op, {data}).v[0];
  int64_t ax = jitx::detail::canonical_axis(axis, x.ndim(), op);
  if (type == "constant") return jnp::subtract(x, jnp::mean(x, {ax}, true));
  const int64_t n = x.dim(ax);
  std::set<int64_t> pts(bp.begin(), bp.end());
  pts.insert(0);
  pts.insert(n);
  std::vector<int64_t> bps(pts.begin(), pts.end());
  if (bps.front() < 0 || bps.back() > n)
    throw_error<ShapeError>(op,
                            "breakpoints must be non-negative and less than length of data along given axis "
                            "({}), got {}",
                            n, bps.front() < 0 ? bps.front() : bps.back());
  Array d = jnp::moveaxis(x, ax, 0);
  Shape shape = d.shape();
  d = jnp::reshape(d, {n, -1});
  for (size_t m = 0; m + 1 < bps.size(); ++m) {
    int64_t npts = bps[m + 1] - bps[m];
    Array ramp = jnp::divide(jnp::arange(1.0, static_cast<double>(npts) + 1, 1.0, d.dtype()),
                             jnp::astype(Array(static_cast<double>(npts)), d.dtype()));
    Array a = jnp::transpose(jnp::vstack({jnp::ones({npts}, d.dtype()), ramp}));
    Array seg = lax::slice_in_dim(d, bps[m], bps[m + 1], 1, 0);
    Array coef = jnp::linalg::lstsq(a, seg).x;
    Array fit = jnp::matmul(a, coef);
    d = jnp::at(d, jnp::arange(static_cast<double>(bps[m]), static_cast<double>(bps[m + 1]), 1.0, DType::int32))
            .add(jnp::negative(fit));
  }
  return jnp::moveaxis(jnp::reshape(d, shape), 0, ax);
}

}  // namespace jitx::scipy::signal

namespace jitx::scipy::integrate {
Array trapezoid(const Array& y, const std::optional<Array>& x, const Array& dx, int64_t axis, Loc loc) {
  return numpy::trapezoid(y, x, dx, axis, loc);
}
}  // namespace jitx::scipy::integrate

namespace jitx::scipy::ndimage {
namespace jnp = jitx::numpy;
using jitx::detail::ApiScope;
using jitx::detail::shape_str;
using jitx::detail::throw_error;

namespace {
struct Node {
  Array index, valid, weight;  // valid: empty when every index is valid
};

Array mirror_fix(const Array& index, int64_t size) {
  int64_t s = size - 1;
  if (s == 0) return jnp::zeros_like(index);  // JAX's % 0 gives 0 here too (integer remainder by zero)
  Array is = jnp::astype(Array(s), index.dtype());
  return jnp::abs(
      jnp::subtract(jnp::remainder(jnp::add(index, is), jnp::multiply(is, jnp::astype(Array(2), index.dtype()))), is));
}
Array fix_index(const Array& index, int64_t size, std::string_view mode) {
  auto c = [&](int64_t v) { return jnp::astype(Array(v), index.dtype()); };
  if (mode == "constant" || mode == "nearest") return jnp::clip(index, c(0), c(size - 1));
  if (mode == "wrap") return jnp::remainder(index, c(size));
  if (mode == "mirror") return mirror_fix(index, size);
  // reflect: floor_divide(mirror(2 i + 1, 2 size + 1) - 1, 2)
  Array m = mirror_fix(jnp::add(jnp::multiply(c(2), index), c(1)), 2 * size + 1);
  return jnp::floor_divide(jnp::subtract(m, c(1)), c(2));
}
}  // namespace

Array map_coordinates(const Array& input, const std::vector<Array>& coordinates, int order, std::string_view mode,
                      double cval, Loc loc) {
  ApiScope s(loc);
  constexpr std::string_view op = "map_coordinates";
  if (!input.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array for input");
  if (static_cast<int64_t>(coordinates.size()) != input.ndim())
    throw_error<ShapeError>(op, "coordinates must be a sequence of length input.ndim, but {} != {}", coordinates.size(),
                            input.ndim());
  for (size_t i = 0; i < coordinates.size(); ++i)
    if (!coordinates[i].valid()) throw_error<TypeError>(op, "coordinates[{}] is an empty Array", i);
  if (mode != "constant" && mode != "nearest" && mode != "wrap" && mode != "mirror" && mode != "reflect")
    throw_error<TypeError>(op,
                           "does not yet support mode '{}' (as JAX's); supported: constant, nearest, wrap, "
                           "mirror, reflect",
                           mode);
  if (order != 0 && order != 1)
    throw_error<TypeError>(op, "currently requires order <= 1 (as JAX's), got order {}", order);
  // Mode 'constant' clips the index (JAX indexes out of range with clamping) and masks it invalid; cval is input's.
  Array cv = jnp::astype(Array(cval), input.dtype());
  std::vector<std::vector<Node>> per_dim;
  for (size_t d = 0; d < coordinates.size(); ++d) {
    const Array& c = coordinates[d];
    int64_t size = input.dim(static_cast<int64_t>(d));
    std::vector<std::pair<Array, Array>> nodes;  // (index, weight)
    if (order == 0) {
      Array idx = is_integer(c.dtype()) ? c : lax::round(c);
      nodes.emplace_back(jnp::astype(idx, DType::int32), jnp::astype(Array(1), c.dtype()));  // a strong 1 of c's dtype
    } else {
      Array lower = jnp::floor(c);
      Array upper_w = jnp::subtract(c, lower);
      Array lower_w = jnp::subtract(Array(1), upper_w);
      Array index = jnp::astype(lower, DType::int32);
      nodes.emplace_back(index, lower_w);
      nodes.emplace_back(jnp::add(index, Array(int32_t{1})), upper_w);
    }
    std::vector<Node> fixed;
    for (auto& [index, weight] : nodes) {
      Node n{fix_index(index, size, mode), Array(), weight};
      if (mode == "constant")
        n.valid = jnp::logical_and(jnp::greater_equal(index, Array(int32_t{0})),
                                   jnp::less(index, jnp::astype(Array(size), DType::int32)));
      fixed.push_back(std::move(n));
    }
    per_dim.push_back(std::move(fixed));
  }
  // Every combination of one node per dimension: its weights' product times the input there.
  Array result;
  std::vector<size_t> pick(per_dim.size(), 0);
  while (true) {
    std::vector<Array> idx;
    Array weight, valid;
    for (size_t d = 0; d < per_dim.size(); ++d) {
      const Node& n = per_dim[d][pick[d]];
      idx.push_back(n.index);
      weight = weight.valid() ? jnp::multiply(weight, n.weight) : n.weight;
      if (n.valid.valid()) valid = valid.valid() ? jnp::logical_and(valid, n.valid) : n.valid;
    }
    Array contribution = idx.empty() ? input : jnp::at(input, idx).get();
    if (valid.valid()) contribution = jnp::where(valid, contribution, cv);
    Array term = jnp::multiply(weight, contribution);
    result = result.valid() ? jnp::add(result, term) : term;
    // The next combination in itertools.product's order (the last dimension fastest), so the sum adds as JAX's.
    size_t d = pick.size();
    while (d > 0 && ++pick[d - 1] == per_dim[d - 1].size()) pick[--d] = 0;
    if (d == 0) break;
  }
  if (!result.valid()) return input;  // a 0-d input: no coordinates
  if (is_integer(input.dtype())) result = lax::round(result);
  return jnp::astype(result, input.dtype());
}
}  // namespace jitx::scipy::ndimage

namespace jitx::scipy::cluster::vq {
namespace jnp = jitx::numpy;
using jitx::detail::ApiScope;
using jitx::detail::shape_str;
using jitx::detail::throw_error;

std::pair<Array, Array> vq(const Array& obs, const Array& code_book, bool /*check_finite*/, Loc loc) {
  ApiScope s(loc);
  constexpr std::string_view op = "vq";
  if (!obs.valid() || !code_book.valid())
    throw_error<TypeError>(op, "got an empty (default-constructed) Array for {}", obs.valid() ? "code_book" : "obs");
  DType d = scipy_util::inexact_common(obs, code_book, op);
  Array o = jnp::astype(obs, d), cb = jnp::astype(code_book, d);
  if (o.ndim() != cb.ndim())
    throw_error<ShapeError>(op, "observation and code_book should have the same rank, got shapes {} and {}",
                            shape_str(obs.shape()), shape_str(code_book.shape()));
  if (o.ndim() == 1) {
    o = jnp::expand_dims(o, -1);
    cb = jnp::expand_dims(cb, -1);
  }
  if (o.ndim() != 2)
    throw_error<ShapeError>(op, "ndim different than 1 or 2 are not supported, got shapes {} and {}",
                            shape_str(obs.shape()), shape_str(code_book.shape()));
  if (o.dim(1) != cb.dim(1))
    throw_error<ShapeError>(op, "obs and code_book must have the same number of features, got shapes {} and {}",
                            shape_str(obs.shape()), shape_str(code_book.shape()));
  Array dist = vmap([cb](const Array& ob) {
    return jnp::linalg::norm(jnp::subtract(jnp::expand_dims(ob, 0), cb), std::nullopt, std::vector<int64_t>{-1});
  })(o);
  Array code = jnp::argmin(dist, -1);
  Array dmin = jnp::squeeze(jnp::take_along_axis(dist, jnp::expand_dims(code, -1), -1), -1);
  return {code, dmin};
}
}  // namespace jitx::scipy::cluster::vq
