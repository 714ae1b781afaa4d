// More of tools/conformance's C++ side: shape, indexing, conversion, scan, window, control-flow, nn and linalg
// cases with fixed parameters (their JAX counterparts: tools/conformance/jax_extra.py, under the same names).
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "jitx/jitx.h"

using namespace jitx;
using Args = std::vector<Array>;
using Op = std::function<Array(const Args&)>;

namespace {

/// The scalar v in x's dtype (a strong type, as lax wants).
Array lit(const Array& x, double v) { return lax::convert_element_type(Array(v), x.dtype()); }
Array ilit(const Array& x, int64_t v) { return lax::convert_element_type(Array(v), x.dtype()); }
/// The unsigned dtype of x's width (bitcast target).
DType uint_of(const Array& x) {
  int b = dtype_bits(x.dtype());
  return b == 8 ? DType::uint8 : b == 16 ? DType::uint16 : b == 32 ? DType::uint32 : DType::uint64;
}
std::vector<int64_t> range(int64_t lo, int64_t hi) {
  std::vector<int64_t> r;
  for (int64_t i = lo; i < hi; ++i) r.push_back(i);
  return r;
}
Array stack_all(const std::vector<Array>& xs) { return jnp::stack(xs, 0); }
/// A symmetric positive definite matrix from x (3 x 4): x x^T + 4 I (finite inputs give a well-conditioned one).
Array spd(const Array& x) { return jnp::matmul(x, jnp::transpose(x)) + 4.0 * eye(x.shape().at(0), -1, 0, x.dtype()); }
/// A square matrix from x (3 x 4): its first three columns.
Array square(const Array& x) { return lax::slice(x, {0, 0}, {x.shape().at(0), x.shape().at(0)}); }
std::vector<std::array<int64_t, 3>> pads(const Array& x, std::array<int64_t, 3> p) {
  return std::vector<std::array<int64_t, 3>>(static_cast<size_t>(x.ndim()), p);
}
lax::WindowConfig window2(const Array& x, int64_t pad) {
  lax::WindowConfig w;
  w.window_dimensions.assign(static_cast<size_t>(x.ndim()), 2);
  w.window_strides.assign(static_cast<size_t>(x.ndim()), 1);
  w.padding.assign(static_cast<size_t>(x.ndim()), {pad, pad});
  return w;
}

}  // namespace

void register_extra_ops(std::map<std::string, Op>& t) {
  // jnp: conversions and shapes
  for (auto [n, d] : std::vector<std::pair<std::string, DType>>{{"float32", DType::float32},
                                                                 {"float16", DType::float16},
                                                                 {"int32", DType::int32},
                                                                 {"uint8", DType::uint8},
                                                                 {"bool", DType::bool_}}) {
    t["jnp.astype[" + n + "]"] = [d](const Args& a) { return jnp::astype(a[0], d); };
    t["lax.convert_element_type[" + n + "]"] = [d](const Args& a) { return lax::convert_element_type(a[0], d); };
  }
  t["lax.bitcast_convert_type[uint]"] = [](const Args& a) { return lax::bitcast_convert_type(a[0], uint_of(a[0])); };
  t["jnp.broadcast_to[2+]"] = [](const Args& a) {
    Shape s{2};
    for (auto d : a[0].shape()) s.push_back(d);
    return jnp::broadcast_to(a[0], s);
  };
  t["jnp.reshape[-1,2]"] = [](const Args& a) { return jnp::reshape(a[0], {-1, 2}); };
  t["jnp.squeeze[expand]"] = [](const Args& a) { return jnp::squeeze(jnp::expand_dims(a[0], {0}), {0}); };
  t["jnp.swapaxes[0,-1]"] = [](const Args& a) { return jnp::swapaxes(a[0], 0, -1); };
  t["jnp.slice_axis[::-2]"] = [](const Args& a) { return jnp::slice_axis(a[0], 0, std::nullopt, std::nullopt, -2); };
  t["jnp.slice_axis[5:0:-2]"] = [](const Args& a) { return jnp::slice_axis(a[0], 0, 5, 0, -2); };
  t["jnp.slice_axis[-1:1:1]"] = [](const Args& a) { return jnp::slice_axis(a[0], -1, 1, std::nullopt, 1); };
  t["jnp.repeat[2]"] = [](const Args& a) { return jnp::repeat(a[0], 2); };
  t["jnp.repeat[2,axis=0]"] = [](const Args& a) { return jnp::repeat(a[0], 2, 0); };
  t["jnp.tril[0]"] = [](const Args& a) { return jnp::tril(a[0]); };
  t["jnp.triu[1]"] = [](const Args& a) { return jnp::triu(a[0], 1); };
  t["jnp.tril[-1]"] = [](const Args& a) { return jnp::tril(a[0], -1); };
  t["jnp.roll[-3,axis=0]"] = [](const Args& a) { return jnp::roll(a[0], -3, 0); };
  t["jnp.tile[2,1]"] = [](const Args& a) { return jnp::tile(a[0], {2, 1}); };
  for (std::string m : {"constant", "edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean",
                        "linear_ramp", "median"})
    t["jnp.pad[2," + m + "]"] = [m](const Args& a) { return jnp::pad(a[0], 2, m); };
  // indexing and searching
  for (std::string m : {"fill", "clip", "wrap"})
    t["jnp.take[" + m + "]"] = [m](const Args& a) {
      return jnp::take(a[0], array<int64_t>({0, -1, 3, 100, -100, 2}), std::nullopt, m);
    };
  t["jnp.take[axis=0,clip]"] = [](const Args& a) {
    return jnp::take(a[0], array<int64_t>({0, -1, 5, -7}), 0, "clip");
  };
  t["jnp.searchsorted[left]"] = [](const Args& a) { return jnp::searchsorted(jnp::sort(a[0]), a[0], "left"); };
  t["jnp.searchsorted[right]"] = [](const Args& a) { return jnp::searchsorted(jnp::sort(a[0]), a[0], "right"); };
  t["jnp.nonzero[size=5]"] = [](const Args& a) { return stack_all(jnp::nonzero(a[0], 5, -1)); };
  t["jnp.argwhere[size=5]"] = [](const Args& a) { return jnp::argwhere(a[0], 5); };
  t["jnp.flatnonzero[size=5]"] = [](const Args& a) { return jnp::flatnonzero(a[0], 5, 7); };
  // contractions (binary: the driver's edge*roll and matrix*scalar pairs, and x with itself)
  t["jnp.dot"] = [](const Args& a) { return jnp::dot(a[0], a[1]); };
  t["jnp.matmul"] = [](const Args& a) { return jnp::matmul(a[0], a[1]); };
  t["jnp.outer"] = [](const Args& a) { return jnp::outer(a[0], a[1]); };
  t["jnp.isclose"] = [](const Args& a) { return jnp::isclose(a[0], a[1]); };
  t["jnp.allclose"] = [](const Args& a) { return jnp::allclose(a[0], a[1]); };
  t["jnp.isclose[equal_nan]"] = [](const Args& a) { return jnp::isclose(a[0], a[1], 1e-5, 1e-8, true); };
  t["jnp.matmul[x@xT]"] = [](const Args& a) { return jnp::matmul(a[0], jnp::transpose(a[0])); };
  t["jnp.einsum[ij,kj->ik]"] = [](const Args& a) { return jnp::einsum("ij,kj->ik", {a[0], a[0]}); };
  t["jnp.einsum[ii->i]"] = [](const Args& a) { return jnp::einsum("ii->i", {square(a[0])}); };
  t["jnp.einsum[i->]"] = [](const Args& a) { return jnp::einsum("i->", {a[0]}); };
  t["lax.dot[x,x]"] = [](const Args& a) { return lax::dot(a[0], a[0]); };
  t["lax.dot_general[x,xT]"] = [](const Args& a) {
    lax::DotDimensionNumbers d;
    d.lhs_contracting = {a[0].ndim() - 1};
    d.rhs_contracting = {a[0].ndim() - 1};
    return lax::dot_general(a[0], a[0], d);
  };
  // reductions with where= and initial=
  t["jnp.sum[initial=1]"] = [](const Args& a) { return jnp::sum(a[0], {}, false, {.initial = Array(1)}); };
  t["jnp.max[where,initial]"] = [](const Args& a) {
    return jnp::max(a[0], {}, false, {.where = jnp::not_equal(a[0], Array(0)), .initial = Array(-5)});
  };
  t["jnp.mean[where]"] = [](const Args& a) {
    return jnp::mean(a[0], {}, false, {.where = jnp::not_equal(a[0], Array(1))});
  };
  // lax: shapes and slices
  t["lax.broadcast[2]"] = [](const Args& a) { return lax::broadcast(a[0], {2}); };
  t["lax.broadcast_in_dim[2+]"] = [](const Args& a) {
    Shape s{2};
    for (auto d : a[0].shape()) s.push_back(d);
    return lax::broadcast_in_dim(a[0], s, range(1, a[0].ndim() + 1));
  };
  t["lax.reshape[-1]"] = [](const Args& a) { return lax::reshape(a[0], {a[0].size()}); };
  t["lax.transpose[rev]"] = [](const Args& a) {
    auto p = range(0, a[0].ndim());
    std::reverse(p.begin(), p.end());
    return lax::transpose(a[0], p);
  };
  t["lax.rev[0]"] = [](const Args& a) { return lax::rev(a[0], {0}); };
  t["lax.slice[1::2]"] = [](const Args& a) {
    std::vector<int64_t> s(static_cast<size_t>(a[0].ndim()), 1), st(s.size(), 2);
    return lax::slice(a[0], s, std::vector<int64_t>(a[0].shape().begin(), a[0].shape().end()), st);
  };
  t["lax.slice_in_dim[1,3]"] = [](const Args& a) { return lax::slice_in_dim(a[0], 1, 3); };
  t["lax.concatenate[self,0]"] = [](const Args& a) { return lax::concatenate({a[0], a[0]}, 0); };
  t["lax.pad[1,2,1]"] = [](const Args& a) {
    return lax::pad(a[0], lit(a[0], 0), pads(a[0], {1, 2, 1}));
  };
  t["lax.pad[-1,1,0]"] = [](const Args& a) {
    return lax::pad(a[0], lit(a[0], 1), pads(a[0], {-1, 1, 0}));
  };
  t["lax.dynamic_slice[1,2]"] = [](const Args& a) {
    std::vector<Array> st(static_cast<size_t>(a[0].ndim()), Array(1));
    return lax::dynamic_slice(a[0], st, std::vector<int64_t>(st.size(), 2));
  };
  t["lax.dynamic_slice[100,2]"] = [](const Args& a) {
    std::vector<Array> st(static_cast<size_t>(a[0].ndim()), Array(100));
    return lax::dynamic_slice(a[0], st, std::vector<int64_t>(st.size(), 2));
  };
  t["lax.dynamic_update_slice[-1]"] = [](const Args& a) {
    std::vector<Array> st(static_cast<size_t>(a[0].ndim()), Array(-1));
    // x[:1, :1, ...] as JAX slices it: empty where an axis is
    std::vector<int64_t> lo(st.size(), 0), hi;
    for (auto d : a[0].shape()) hi.push_back(std::min<int64_t>(d, 1));
    return lax::dynamic_update_slice(a[0], lax::rev(lax::slice(a[0], lo, hi), range(0, a[0].ndim())), st);
  };
  t["lax.iota[5]"] = [](const Args& a) { return lax::iota(a[0].dtype(), 5); };
  t["lax.broadcasted_iota[shape,0]"] = [](const Args& a) {
    return lax::broadcasted_iota(a[0].dtype(), a[0].shape(), 0);
  };
  t["lax.full[2,3]"] = [](const Args& a) {
    return lax::full({2, 3}, lax::reshape(lax::slice_in_dim(jnp::ravel(a[0]), 0, 1), {}));
  };
  t["lax.clamp[0,2]"] = [](const Args& a) { return lax::clamp(ilit(a[0], 0), a[0], ilit(a[0], 2)); };
  t["lax.select[x!=0,x,flip]"] = [](const Args& a) {
    return lax::select(lax::ne(a[0], ilit(a[0], 0)), a[0], jnp::flip(a[0]));
  };
  t["lax.select_n[x!=0,flip,x]"] = [](const Args& a) {
    return lax::select_n(lax::ne(a[0], ilit(a[0], 0)), jnp::flip(a[0]), a[0]);
  };
  t["lax.gather[rows]"] = [](const Args& a) {
    lax::GatherDimensionNumbers g;
    g.offset_dims = range(1, a[0].ndim());
    g.collapsed_slice_dims = {0};
    g.start_index_map = {0};
    std::vector<int64_t> sizes{1};
    for (int64_t i = 1; i < a[0].ndim(); ++i) sizes.push_back(a[0].shape()[static_cast<size_t>(i)]);
    return lax::gather(a[0], array<int32_t>({2, 0, 5, -1}, {4, 1}), g, sizes);
  };
  for (std::string k : {"scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"})
    t["lax." + k + "[rows]"] = [k](const Args& a) {
      lax::ScatterDimensionNumbers s;
      s.update_window_dims = range(1, a[0].ndim());
      s.inserted_window_dims = {0};
      s.scatter_dims_to_operand_dims = {0};
      Array idx = array<int32_t>(k == "scatter" ? std::vector<int32_t>{2, 0, 7} : std::vector<int32_t>{1, 0, 1},
                                 {3, 1});
      Array upd = lax::slice_in_dim(jnp::flip(a[0], {0}), 0, 3);
      auto f = k == "scatter" ? lax::scatter : k == "scatter_add" ? lax::scatter_add
               : k == "scatter_mul" ? lax::scatter_mul : k == "scatter_min" ? lax::scatter_min : lax::scatter_max;
      return f(a[0], idx, upd, s, false, false, Loc::current());
    };
  // lax: reductions, scans, windows, sorting
  t["lax.reduce_sum[0]"] = [](const Args& a) { return lax::reduce_sum(a[0], {0}); };
  t["lax.reduce_prod[0]"] = [](const Args& a) { return lax::reduce_prod(a[0], {0}); };
  t["lax.reduce_max[0]"] = [](const Args& a) { return lax::reduce_max(a[0], {0}); };
  t["lax.reduce_min[0]"] = [](const Args& a) { return lax::reduce_min(a[0], {0}); };
  t["lax.reduce_and[0]"] = [](const Args& a) { return lax::reduce_and(a[0], {0}); };
  t["lax.reduce_or[0]"] = [](const Args& a) { return lax::reduce_or(a[0], {0}); };
  t["lax.argmax[0]"] = [](const Args& a) { return lax::argmax(a[0], 0, DType::int32); };
  t["lax.argmin[0]"] = [](const Args& a) { return lax::argmin(a[0], 0, DType::int32); };
  t["lax.cumsum[0]"] = [](const Args& a) { return lax::cumsum(a[0], 0); };
  t["lax.cumprod[0]"] = [](const Args& a) { return lax::cumprod(a[0], 0); };
  t["lax.cummax[0]"] = [](const Args& a) { return lax::cummax(a[0], 0); };
  t["lax.cummin[0,reverse]"] = [](const Args& a) { return lax::cummin(a[0], 0, true); };
  t["lax.cumlogsumexp[0]"] = [](const Args& a) { return lax::cumlogsumexp(a[0], 0); };
  t["lax.reduce_window_sum[2,pad1]"] = [](const Args& a) { return lax::reduce_window_sum(a[0], window2(a[0], 1)); };
  t["lax.reduce_window_max[2]"] = [](const Args& a) { return lax::reduce_window_max(a[0], window2(a[0], 0)); };
  t["lax.reduce_window_min[2,pad1]"] = [](const Args& a) { return lax::reduce_window_min(a[0], window2(a[0], 1)); };
  t["lax.sort[0]"] = [](const Args& a) { return lax::sort(a[0], 0); };
  t["lax.sort[argsort]"] = [](const Args& a) {
    return lax::sort({a[0], lax::broadcasted_iota(DType::int32, a[0].shape(), a[0].ndim() - 1)}, -1, true, 1)[1];
  };
  t["lax.top_k[2,values]"] = [](const Args& a) { return lax::top_k(a[0], 2).first; };
  t["lax.top_k[2,indices]"] = [](const Args& a) { return lax::top_k(a[0], 2).second; };
  t["lax.conv_general_dilated[2x2]"] = [](const Args& a) {
    const Shape& s = a[0].shape();
    Array lhs = lax::reshape(a[0], {1, 1, s.at(0), s.at(1)});
    Array rhs = lax::reshape(lax::slice(a[0], {0, 0}, {2, 2}), {1, 1, 2, 2});
    return lax::conv_general_dilated(lhs, rhs, {1, 1}, {{0, 1}, {1, 0}});
  };
  t["lax.nextafter"] = [](const Args& a) { return lax::nextafter(a[0], a[1]); };
  t["lax.reduce_precision[5,10]"] = [](const Args& a) { return lax::reduce_precision(a[0], 5, 10); };
  t["lax.reduce_precision[8,7]"] = [](const Args& a) { return lax::reduce_precision(a[0], 8, 7); };
  // lax: control flow (the functions are fixed; the values are the edge set)
  t["lax.cond[any>0,flip,x]"] = [](const Args& a) {
    return lax::cond(jnp::any(jnp::greater(a[0], ilit(a[0], 0))), [](Array x) { return jnp::flip(x); },
                     [](Array x) { return x; }, a[0]);
  };
  t["lax.switch_[7,(flip,x,neg)]"] = [](const Args& a) {
    return lax::switch_(Array(7), std::tuple{[](Array x) { return jnp::flip(x); }, [](Array x) { return x; },
                                             [](Array x) { return jnp::negative(x); }},
                        a[0]);
  };
  t["lax.while_loop[3x,x+x]"] = [](const Args& a) {
    auto r = lax::while_loop([](const std::pair<Array, Array>& c) { return lax::lt(c.first, Array(3)); },
                             [](const std::pair<Array, Array>& c) {
                               return std::pair<Array, Array>{lax::add(c.first, Array(1)),
                                                              jnp::add(c.second, c.second)};
                             },
                             std::pair<Array, Array>{Array(0), a[0]});
    return r.second;
  };
  t["lax.fori_loop[0,3,x*x]"] = [](const Args& a) {
    return lax::fori_loop(Array(0), Array(3), [](const Array&, const Array& x) { return jnp::multiply(x, x); }, a[0]);
  };
  t["lax.scan[cumsum]"] = [](const Args& a) {
    auto r = lax::scan([](const Array& c, const Array& x) {
      Array s = jnp::add(c, x);
      return std::pair<Array, Array>{s, s};
    }, jnp::zeros(a[0].ndim() ? Shape(a[0].shape().begin() + 1, a[0].shape().end()) : Shape{}, a[0].dtype()), a[0]);
    return r.second;
  };
  t["lax.associative_scan[add]"] = [](const Args& a) {
    return lax::associative_scan([](const Array& x, const Array& y) { return jnp::add(x, y); }, a[0]);
  };
  // creation from x's shape and dtype (jnp.empty gives zeros in JAX and jitx)
  t["jnp.zeros_like"] = [](const Args& a) { return jnp::zeros_like(a[0], a[0].dtype()); };
  t["jnp.ones_like"] = [](const Args& a) { return jnp::ones_like(a[0], a[0].dtype()); };
  t["jnp.full_like[2.5]"] = [](const Args& a) { return jnp::full_like(a[0], 2.5, a[0].dtype()); };
  t["jnp.empty_like"] = [](const Args& a) { return jnp::empty_like(a[0]); };
  t["jnp.empty[shape]"] = [](const Args& a) { return jnp::empty(a[0].shape(), a[0].dtype()); };
  t["jnp.identity[size]"] = [](const Args& a) {
    return jnp::identity(a[0].ndim() ? a[0].shape()[0] : 1, a[0].dtype());
  };
  t["lax.with_sharding_constraint[device]"] = [](const Args& a) {
    return lax::with_sharding_constraint(a[0], SingleDeviceSharding(default_device()));
  };
  // nn
  t["nn.glu"] = [](const Args& a) { return nn::glu(a[0]); };
  t["nn.standardize"] = [](const Args& a) { return nn::standardize(a[0]); };
  t["nn.layer_norm"] = [](const Args& a) { return nn::layer_norm(a[0]); };
  t["nn.one_hot[5,float32]"] = [](const Args& a) { return nn::one_hot(a[0], 5, DType::float32); };
  // linalg on 3 x 4 matrices (square(x): its 3 x 3 part; spd(x): x x^T + 4 I)
  t["linalg.norm"] = [](const Args& a) { return jnp::linalg::norm(a[0]); };
  t["linalg.norm[1]"] = [](const Args& a) { return jnp::linalg::norm(a[0], 1.0); };
  t["linalg.norm[fro]"] = [](const Args& a) { return jnp::linalg::norm(a[0], "fro"); };
  t["linalg.det"] = [](const Args& a) { return jnp::linalg::det(square(a[0])); };
  t["linalg.slogdet[sign]"] = [](const Args& a) { return jnp::linalg::slogdet(square(a[0])).sign; };
  t["linalg.slogdet[logabsdet]"] = [](const Args& a) { return jnp::linalg::slogdet(square(a[0])).logabsdet; };
  t["linalg.inv[spd]"] = [](const Args& a) { return jnp::linalg::inv(spd(a[0])); };
  t["linalg.solve[spd,x]"] = [](const Args& a) { return jnp::linalg::solve(spd(a[0]), a[0]); };
  t["linalg.cholesky[spd]"] = [](const Args& a) { return jnp::linalg::cholesky(spd(a[0])); };
  t["linalg.eigvalsh[spd]"] = [](const Args& a) { return jnp::linalg::eigvalsh(spd(a[0])); };
  t["linalg.eigh[spd,values]"] = [](const Args& a) { return jnp::linalg::eigh(spd(a[0])).eigenvalues; };
  t["linalg.svdvals"] = [](const Args& a) { return jnp::linalg::svdvals(a[0]); };
  t["linalg.svd[s]"] = [](const Args& a) { return jnp::linalg::svd(a[0], false).S; };
  t["linalg.qr[r,abs]"] = [](const Args& a) { return jnp::abs(jnp::linalg::qr(spd(a[0])).R); };
  t["linalg.lstsq[spd,x]"] = [](const Args& a) { return jnp::linalg::lstsq(spd(a[0]), a[0]).x; };
  t["linalg.pinv[spd]"] = [](const Args& a) { return jnp::linalg::pinv(spd(a[0])); };
  t["linalg.matrix_power[3]"] = [](const Args& a) { return jnp::linalg::matrix_power(square(a[0]), 3); };
  t["linalg.triangular_solve[spd,x]"] = [](const Args& a) {
    return lax::linalg::triangular_solve(spd(a[0]), a[0], true, true);
  };
  t["linalg.lax_cholesky[spd]"] = [](const Args& a) { return lax::linalg::cholesky(spd(a[0])); };
  t["lax.qr[spd,r,abs]"] = [](const Args& a) { return jnp::abs(lax::linalg::qr(spd(a[0])).r); };
  t["lax.eigh[spd,w]"] = [](const Args& a) { return lax::linalg::eigh(spd(a[0])).w; };
  t["lax.svd[s]"] = [](const Args& a) { return lax::linalg::svd(a[0], false, false).s; };
  t["linalg.triangular_solve[spd,x[:,0]]"] = [](const Args& a) {
    return lax::linalg::triangular_solve(spd(a[0]), jnp::take(a[0], Array(0), 1), true, true);
  };
  t["linalg.lu[spd,lu]"] = [](const Args& a) { return lax::linalg::lu(spd(a[0])).lu; };
}
