// jitx::lax's compositions (jitx/lax_extra.h): each is what jax/_src/lax builds from its primitives, so values,
// dtypes and errors follow JAX's, and jit, grad and vmap apply through the primitives.
#include "jitx/lax_extra.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/numpy.h"
#include "ops/convert.h"

namespace jitx::lax {
using detail::ApiScope;
using detail::canonical_axis;
using detail::shape_str;
using detail::throw_error;

namespace {
/// The starts of a *_in_dim dynamic op: zeros in start's dtype on every axis but `axis`.
std::vector<Array> starts_at(const Array& start, int64_t axis, int64_t rank) {
  std::vector<Array> s(static_cast<size_t>(rank), Array::scalar_int(0, start.dtype()));
  s[static_cast<size_t>(axis)] = start;
  return s;
}
Shape without(const Shape& s, int64_t axis) {
  Shape out = s;
  out.erase(out.begin() + axis);
  return out;
}
void refuse_non_number(std::string_view op, const Array& x) {
  if (x.valid() && x.dtype() == DType::bool_)
    throw_error<TypeError>(op, "does not accept dtype bool (numbers only), as jax.lax.{}", op);
}
}  // namespace

Array index_in_dim(const Array& x, int64_t index, int64_t axis, bool keepdims, Loc loc) {
  ApiScope s(loc);
  int64_t a = canonical_axis(axis, x.ndim(), "index_in_dim");
  int64_t n = x.shape()[static_cast<size_t>(a)], i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    throw_error<ShapeError>("index_in_dim", "index {} is out of bounds for axis {} of size {}", index, a, n);
  Array r = slice_in_dim(x, i, i + 1, 1, a);
  return keepdims ? r : reshape(r, without(r.shape(), a));
}

Array dynamic_slice_in_dim(const Array& x, const Array& start_index, int64_t slice_size, int64_t axis, Loc loc) {
  ApiScope s(loc);
  int64_t a = canonical_axis(axis, x.ndim(), "dynamic_slice_in_dim");
  Shape sizes = x.shape();
  sizes[static_cast<size_t>(a)] = slice_size;
  return dynamic_slice(x, starts_at(start_index, a, x.ndim()), sizes);
}

Array dynamic_index_in_dim(const Array& x, const Array& index, int64_t axis, bool keepdims, Loc loc) {
  ApiScope s(loc);
  int64_t a = canonical_axis(axis, x.ndim(), "dynamic_index_in_dim");
  Array r = dynamic_slice_in_dim(x, index, 1, a);
  return keepdims ? r : reshape(r, without(r.shape(), a));
}

Array dynamic_update_slice_in_dim(const Array& x, const Array& update, const Array& start_index, int64_t axis,
                                  Loc loc) {
  ApiScope s(loc);
  int64_t a = canonical_axis(axis, x.ndim(), "dynamic_update_slice_in_dim");
  return dynamic_update_slice(x, update, starts_at(start_index, a, x.ndim()));
}

Array dynamic_update_index_in_dim(const Array& x, const Array& update, const Array& index, int64_t axis, Loc loc) {
  ApiScope s(loc);
  int64_t a = canonical_axis(axis, x.ndim(), "dynamic_update_index_in_dim");
  Array u = update.ndim() != x.ndim() ? expand_dims(update, {a}) : update;
  return dynamic_update_slice_in_dim(x, u, index, a);
}

Array squeeze(const Array& x, std::vector<int64_t> dimensions, Loc loc) {
  ApiScope s(loc);
  for (auto& d : dimensions) d = canonical_axis(d, x.ndim(), "squeeze");
  std::vector<int64_t> sorted = dimensions;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw_error<ShapeError>("squeeze", "dimensions are not unique: {}", shape_str(dimensions));
  Shape out;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    bool drop = std::binary_search(sorted.begin(), sorted.end(), d);
    if (drop && x.shape()[static_cast<size_t>(d)] != 1)
      throw_error<ShapeError>("squeeze", "cannot squeeze out axis {} of size {} (only axes of size 1), shape {}", d,
                              x.shape()[static_cast<size_t>(d)], shape_str(x.shape()));
    if (!drop) out.push_back(x.shape()[static_cast<size_t>(d)]);
  }
  return reshape(x, out);
}

Array expand_dims(const Array& x, std::vector<int64_t> dimensions, Loc loc) {
  ApiScope s(loc);
  int64_t rank = x.ndim() + static_cast<int64_t>(dimensions.size());
  for (auto& d : dimensions) d = canonical_axis(d, rank, "expand_dims");
  std::vector<int64_t> sorted = dimensions;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw_error<ShapeError>("expand_dims", "repeated axis in lax.expand_dims: {}", shape_str(dimensions));
  Shape out;
  size_t k = 0;
  for (int64_t d = 0; d < rank; ++d)
    out.push_back(std::binary_search(sorted.begin(), sorted.end(), d) ? 1 : x.shape()[k++]);
  return reshape(x, out);
}

Array collapse(const Array& x, int64_t start_dimension, std::optional<int64_t> stop_dimension, Loc loc) {
  ApiScope s(loc);
  // Python's slice(start, stop).indices(rank): negative positions count from the end, then clamp.
  int64_t r = x.ndim();
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t lo = clamp(start_dimension), hi = stop_dimension ? clamp(*stop_dimension) : r;
  if (hi < lo)
    throw_error<ShapeError>("collapse", "invalid dimension range passed to collapse: {}[{}:{}]", shape_str(x.shape()),
                            start_dimension, stop_dimension ? std::to_string(*stop_dimension) : "None");
  int64_t size = 1;
  for (int64_t d = lo; d < hi; ++d) size *= x.shape()[static_cast<size_t>(d)];
  Shape out(x.shape().begin(), x.shape().begin() + lo);
  out.push_back(size);
  out.insert(out.end(), x.shape().begin() + hi, x.shape().end());
  return reshape(x, out);
}

std::vector<Array> split(const Array& x, const std::vector<int64_t>& sizes, int64_t axis, Loc loc) {
  ApiScope s(loc);
  int64_t a = canonical_axis(axis, x.ndim(), "split");
  int64_t total = 0;
  for (int64_t v : sizes) {
    if (v < 0) throw_error<ShapeError>("split", "sizes must be nonnegative, got {}", shape_str(sizes));
    total += v;
  }
  if (total != x.shape()[static_cast<size_t>(a)])
    throw_error<ShapeError>("split", "sum of sizes {} must be equal to dimension {} of the operand shape {}",
                            shape_str(sizes), a, shape_str(x.shape()));
  std::vector<Array> out;
  int64_t at = 0;
  for (int64_t v : sizes) {
    out.push_back(slice_in_dim(x, at, at + v, 1, a));
    at += v;
  }
  return out;
}

Array integer_pow(const Array& x, int64_t y, Loc loc) {
  ApiScope s(loc);
  refuse_non_number("integer_pow", x);
  if (y < 0 && !is_floating(x.dtype()))
    throw_error<TypeError>("integer_pow", "integers cannot be raised to negative powers, got integer_pow({}, {})",
                           dtype_name(x.dtype()), y);
  if (y == 0) return full_like(x, Array(1));
  // jax/_src/lax/lax.py's _integer_pow: the multiplies in this order give JAX's roundings.
  uint64_t e = y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y);
  std::optional<Array> acc;
  Array b = x;
  while (e > 0) {
    if (e & 1) acc = acc ? mul(*acc, b) : b;
    e >>= 1;
    if (e > 0) b = mul(b, b);
  }
  return y < 0 ? div(full_like(*acc, Array(1)), *acc) : *acc;
}

Array square(const Array& x, Loc loc) {
  ApiScope s(loc);
  refuse_non_number("square", x);
  return mul(x, x);
}

Array clz(const Array& x, Loc loc) {
  ApiScope s(loc);
  if (!x.valid() || !is_integer(x.dtype()))
    throw_error<TypeError>("clz", "needs an integer operand, got {}", x.valid() ? dtype_name(x.dtype()) : "none");
  // Every bit below the highest set one is set by the smear; the rest are the leading zeros.
  int64_t bits = static_cast<int64_t>(dtype_bits(x.dtype()));
  Array y = x;
  for (int64_t k = 1; k < bits; k *= 2) y = bitwise_or(y, shift_right_logical(y, full_like(x, Array(k))));
  return sub(full_like(x, Array(bits)), population_count(y));
}

Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype, std::optional<Shape> shape,
                Loc loc) {
  ApiScope s(loc);
  DType d = dtype.value_or(x.dtype());
  bool weak = !dtype && x.weak_type();
  return full(shape.value_or(x.shape()), detail::convert_weak(fill_value, d, weak));
}

std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int64_t dimension, bool is_stable,
                                     Loc loc) {
  ApiScope s(loc);
  auto out = sort(std::vector<Array>{keys, values}, dimension, is_stable, 1);
  return {out[0], out[1]};
}

Array batch_matmul(const Array& lhs, const Array& rhs, Loc loc) {
  ApiScope s(loc);
  if (lhs.ndim() < 2 || lhs.ndim() != rhs.ndim())
    throw_error<ShapeError>("batch_matmul", "needs arrays of the same rank >= 2, got shapes {} and {}",
                            shape_str(lhs.shape()), shape_str(rhs.shape()));
  if (!std::equal(lhs.shape().begin(), lhs.shape().end() - 2, rhs.shape().begin()))
    throw_error<ShapeError>("batch_matmul", "needs equal batch dimensions, got shapes {} and {}",
                            shape_str(lhs.shape()), shape_str(rhs.shape()));
  std::vector<int64_t> batch(static_cast<size_t>(lhs.ndim() - 2));
  std::iota(batch.begin(), batch.end(), 0);
  return dot_general(lhs, rhs, DotDimensionNumbers{{lhs.ndim() - 1}, {rhs.ndim() - 2}, batch, batch});
}

std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(const std::vector<int64_t>& in_shape,
                                                         const std::vector<int64_t>& window_shape,
                                                         const std::vector<int64_t>& window_strides,
                                                         std::string_view padding, Loc loc) {
  ApiScope s(loc);
  std::string p(padding);
  for (auto& c : p) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (p != "VALID" && p != "SAME" && p != "SAME_LOWER")
    throw_error<TypeError>("padtype_to_pads",
                           "unrecognized padding type: expected 'VALID', 'SAME', or "
                           "'SAME_LOWER', got {}",
                           padding);
  if (in_shape.size() != window_shape.size() || in_shape.size() != window_strides.size())
    throw_error<ShapeError>("padtype_to_pads",
                            "input {}, window {} and strides {} must have one entry per spatial "
                            "axis",
                            shape_str(in_shape), shape_str(window_shape), shape_str(window_strides));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < in_shape.size(); ++i) {
    if (p == "VALID") {
      out.emplace_back(0, 0);
      continue;
    }
    if (window_strides[i] <= 0)
      throw_error<ShapeError>("padtype_to_pads", "strides must be positive, got {}", shape_str(window_strides));
    int64_t o = (in_shape[i] + window_strides[i] - 1) / window_strides[i];
    int64_t total = std::max<int64_t>((o - 1) * window_strides[i] + window_shape[i] - in_shape[i], 0);
    int64_t lo = p == "SAME" ? total / 2 : (total + 1) / 2;
    out.emplace_back(lo, total - lo);
  }
  return out;
}

namespace {
/// The dimension numbers with JAX's default (NCHW, OIHW, NCHW) filled in for the array's rank.
ConvDimensionNumbers filled(const ConvDimensionNumbers& dn, int64_t rank) {
  if (!dn.lhs_spec.empty()) return dn;
  std::vector<int64_t> iota(static_cast<size_t>(rank));
  std::iota(iota.begin(), iota.end(), 0);
  return {iota, iota, iota};
}
std::vector<int64_t> spatial(const Shape& s, const std::vector<int64_t>& spec) {
  std::vector<int64_t> out;
  for (size_t k = 2; k < spec.size(); ++k) out.push_back(s[static_cast<size_t>(spec[k])]);
  return out;
}
std::vector<int64_t> ones_if_empty(std::vector<int64_t> v, size_t n) {
  return v.empty() ? std::vector<int64_t>(n, 1) : v;
}
}  // namespace

Array conv_general_dilated(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides,
                           const PaddingMode& padding, std::vector<int64_t> lhs_dilation,
                           std::vector<int64_t> rhs_dilation, const ConvDimensionNumbers& dimension_numbers,
                           int64_t feature_group_count, int64_t batch_group_count, Loc loc) {
  ApiScope s(loc);
  if (lhs.ndim() < 2 || lhs.ndim() != rhs.ndim())
    throw_error<ShapeError>("conv_general_dilated", "lhs and rhs must have the same rank (>= 2), got {} and {}",
                            shape_str(lhs.shape()), shape_str(rhs.shape()));
  size_t n = static_cast<size_t>(lhs.ndim() - 2);
  for (int64_t d : lhs_dilation)
    if (d != 1)
      throw_error<ShapeError>("conv_general_dilated",
                              "string padding is not implemented for transposed "
                              "convolution (lhs_dilation {}): give the padding explicitly or use conv_transpose",
                              shape_str(lhs_dilation));
  ConvDimensionNumbers dn = filled(dimension_numbers, lhs.ndim());
  std::vector<int64_t> rd = ones_if_empty(rhs_dilation, n), window = spatial(rhs.shape(), dn.rhs_spec);
  for (size_t k = 0; k < window.size() && k < rd.size(); ++k)
    window[k] = window[k] == 0 ? 0 : (window[k] - 1) * rd[k] + 1;
  auto pads =
      padtype_to_pads(spatial(lhs.shape(), dn.lhs_spec), window, ones_if_empty(window_strides, n), padding.name);
  return conv_general_dilated(lhs, rhs, window_strides, pads, lhs_dilation, rhs_dilation, dimension_numbers,
                              feature_group_count, batch_group_count);
}

Array conv(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides, const PaddingMode& padding,
           Loc loc) {
  ApiScope s(loc);
  return conv_general_dilated(lhs, rhs, std::move(window_strides), padding);
}

Array conv_with_general_padding(const Array& lhs, const Array& rhs, std::vector<int64_t> window_strides,
                                std::vector<std::pair<int64_t, int64_t>> padding, std::vector<int64_t> lhs_dilation,
                                std::vector<int64_t> rhs_dilation, Loc loc) {
  ApiScope s(loc);
  return conv_general_dilated(lhs, rhs, std::move(window_strides), std::move(padding), std::move(lhs_dilation),
                              std::move(rhs_dilation));
}

namespace {
/// JAX's _conv_transpose_padding for one spatial axis: kernel k (dilated), stride s, the forward padding mode.
std::pair<int64_t, int64_t> transpose_padding(int64_t k, int64_t st, const std::string& mode) {
  int64_t len, a;
  if (mode == "SAME") {
    len = k + st - 2;
    a = st > k - 1 ? k - 1 : (len + 1) / 2;
  } else if (mode == "VALID") {
    len = k + st - 2 + std::max<int64_t>(k - st, 0);
    a = k - 1;
  } else {
    throw_error<TypeError>("conv_transpose", "padding mode must be 'SAME' or 'VALID', got '{}'", mode);
  }
  return {a, len - a};
}

Array conv_transpose_impl(const Array& lhs, const Array& rhs, std::vector<int64_t> strides, const std::string* mode,
                          std::vector<std::pair<int64_t, int64_t>> pads, std::vector<int64_t> rhs_dilation,
                          const std::optional<std::vector<std::string>>& dimension_numbers, bool transpose_kernel) {
  int64_t r = lhs.ndim();
  if (r < 2 || r != rhs.ndim())
    throw_error<ShapeError>("conv_transpose", "lhs and rhs must have the same rank (>= 2), got {} and {}",
                            shape_str(lhs.shape()), shape_str(rhs.shape()));
  std::vector<std::string> names;
  if (dimension_numbers) {
    names = *dimension_numbers;
  } else {
    static const char* kDefaults[][3] = {
        {"NC", "IO", "NC"}, {"NHC", "HIO", "NHC"}, {"NHWC", "HWIO", "NHWC"}, {"NHWDC", "HWDIO", "NHWDC"}};
    if (r > 5) throw_error<ShapeError>("conv_transpose", "no default dimension numbers for rank {} (2 to 5)", r);
    names.assign(kDefaults[r - 2], kDefaults[r - 2] + 3);
  }
  if (names.size() != 3)
    throw_error<ShapeError>("conv_transpose", "dimension_numbers needs three layout strings, got {}", names.size());
  ConvDimensionNumbers dn = conv_dimension_numbers(names[0], names[1], names[2]);
  size_t n = static_cast<size_t>(r - 2);
  std::vector<int64_t> rd = ones_if_empty(rhs_dilation, n);
  if (strides.size() != n || rd.size() != n)
    throw_error<ShapeError>("conv_transpose", "strides {} and rhs_dilation {} need one entry per spatial axis ({})",
                            shape_str(strides), shape_str(rd), n);
  if (mode) {
    pads.clear();
    std::vector<int64_t> k = spatial(rhs.shape(), dn.rhs_spec);
    for (size_t i = 0; i < n; ++i)
      pads.push_back(transpose_padding(k[i] == 0 ? 0 : (k[i] - 1) * rd[i] + 1, strides[i], *mode));
  }
  Array w = rhs;
  if (transpose_kernel) {
    w = rev(w, std::vector<int64_t>(dn.rhs_spec.begin() + 2, dn.rhs_spec.end()));
    w = numpy::swapaxes(w, dn.rhs_spec[0], dn.rhs_spec[1]);
  }
  return conv_general_dilated(lhs, w, std::vector<int64_t>(n, 1), pads, strides, rd, dn);
}
}  // namespace

Array conv_transpose(const Array& lhs, const Array& rhs, std::vector<int64_t> strides, const PaddingMode& padding,
                     std::vector<int64_t> rhs_dilation, std::optional<std::vector<std::string>> dimension_numbers,
                     bool transpose_kernel, Loc loc) {
  ApiScope s(loc);
  std::string mode = padding.name;
  return conv_transpose_impl(lhs, rhs, std::move(strides), &mode, {}, std::move(rhs_dilation), dimension_numbers,
                             transpose_kernel);
}

Array conv_transpose(const Array& lhs, const Array& rhs, std::vector<int64_t> strides,
                     std::vector<std::pair<int64_t, int64_t>> padding, std::vector<int64_t> rhs_dilation,
                     std::optional<std::vector<std::string>> dimension_numbers, bool transpose_kernel, Loc loc) {
  ApiScope s(loc);
  return conv_transpose_impl(lhs, rhs, std::move(strides), nullptr, std::move(padding), std::move(rhs_dilation),
                             dimension_numbers, transpose_kernel);
}

}  // namespace jitx::lax

namespace jitx::detail {
namespace api_names {
// Named as the public function: the name an ApiScope reports ("..., in map").
std::source_location map() { return std::source_location::current(); }
}  // namespace api_names

std::shared_ptr<void> lax_map_scope(const Loc& loc) { return std::make_shared<ApiScope>(loc, api_names::map()); }
}  // namespace jitx::detail
