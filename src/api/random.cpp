// jitx::random: Threefry-2x32 keys and samplers as jax.random
// (jax/_src/random/{threefry2x32,core}.py), in jitx ops.
#include "jitx/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>

#include "api/random_internal.h"
#include "api/random_xla_math.h"
#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/primitive.h"
#include "core/shape_util.h"
#include "jitx/autodiff.h"
#include "jitx/config.h"
#include "jitx/jit.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"

namespace jitx::random {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;

namespace internal {

Array u32(uint32_t v) { return Array::scalar_int(v, DType::uint32); }

/// The key's two words as uint32 scalars; throws unless key is a uint32[2] array.
std::pair<Array, Array> key_words(const Array& key, std::string_view op) {
  if (!key.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) key Array");
  if (key.dtype() != DType::uint32 || key.shape() != Shape{2})
    throw_error<TypeError>(op, "expects a uint32[2] PRNG key (from PRNGKey, split or fold_in), got {}",
                           key.aval().str());
  return {lax::reshape(lax::slice(key, {0}, {1}), {}), lax::reshape(lax::slice(key, {1}, {2}), {})};
}

/// A negative dimension, or an element count or byte size that does not fit in int64 (the samplers
/// draw uint32 words per element, and 64-bit dtypes draw two), is a ShapeError naming op.
void check_shape(const Shape& shape, std::string_view op, DType d) { detail::checked_num_elements(shape, d, op); }

/// A DType value outside the enum is a TypeError naming op (before any dtype rule looks at it).
void check_dtype_value(DType d, std::string_view op) {
  if (!is_valid_dtype(d)) throw_error<TypeError>(op, "got DType({}), which is not a jitx dtype", static_cast<int>(d));
}

/// The element count of a shape check_shape accepted.
int64_t numel(const Shape& s) { return detail::checked_num_elements(s, DType::uint64, "random"); }

Array rotate_left(const Array& x, uint32_t r) {
  return lax::bitwise_or(lax::shift_left(x, u32(r)), lax::shift_right_logical(x, u32(32 - r)));
}

/// The Threefry-2x32 block cipher (20 rounds) on counter pairs (x0, x1) under key (k0, k1),
/// elementwise: JAX's threefry2x32_p, unrolled as its default lowering.
std::pair<Array, Array> threefry2x32(const Array& k0, const Array& k1, Array x0, Array x1) {
  static constexpr uint32_t kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const Array ks[3] = {k0, k1, lax::bitwise_xor(lax::bitwise_xor(k0, k1), u32(0x1BD11BDA))};
  x0 = lax::add(x0, ks[0]);
  x1 = lax::add(x1, ks[1]);
  for (uint32_t i = 0; i < 5; ++i) {
    for (uint32_t r : kRot[i % 2]) {
      x0 = lax::add(x0, x1);
      x1 = lax::bitwise_xor(x0, rotate_left(x1, r));
    }
    // Key injection: x += (ks[i+1], ks[i+2] + i + 1), indices mod 3.
    x0 = lax::add(x0, ks[(i + 1) % 3]);
    x1 = lax::add(lax::add(x1, ks[(i + 2) % 3]), u32(i + 1));
  }
  return {x0, x1};
}

/// The row-major index of each element of shape as a uint64 split into (hi, lo) uint32 words
/// (JAX's iota_2x32_shape).
std::pair<Array, Array> iota_2x32_shape(const Shape& shape) {
  if (shape.empty()) return {u32(0), u32(0)};
  int64_t n = numel(shape);
  if (n <= (int64_t{1} << 32)) {
    return {lax::full(shape, u32(0)), lax::reshape(lax::iota(DType::uint32, n), shape)};
  }
  Array c = lax::reshape(lax::iota(DType::uint64, n), shape);
  Array hi = lax::shift_right_logical(c, Array::scalar_int(32, DType::uint64));
  return {lax::convert_element_type(hi, DType::uint32), lax::convert_element_type(c, DType::uint32)};
}

/// JAX's _threefry_random_bits_partitionable: one cipher call per element, counters from its index.
Array random_bits(const Array& key, int bit_width, const Shape& shape, std::string_view op) {
  auto [k0, k1] = key_words(key, op);
  check_shape(shape, op);
  return random_bits_words(k0, k1, bit_width, shape, op);
}

Array random_bits_words(const Array& k0, const Array& k1, int bit_width, const Shape& shape, std::string_view op) {
  auto [c0, c1] = iota_2x32_shape(shape);
  if (!shape.empty() && k0.ndim() != 0) {  // a batch of keys: every key sees the same counters
    Shape full = k0.shape();
    full.insert(full.end(), shape.begin(), shape.end());
    std::vector<int64_t> kd(static_cast<size_t>(k0.ndim())), cd(shape.size());
    std::iota(kd.begin(), kd.end(), 0);
    std::iota(cd.begin(), cd.end(), k0.ndim());
    auto [b0, b1] = threefry2x32(lax::broadcast_in_dim(k0, full, kd), lax::broadcast_in_dim(k1, full, kd),
                                 lax::broadcast_in_dim(c0, full, cd), lax::broadcast_in_dim(c1, full, cd));
    return combine_bits(b0, b1, bit_width, op);
  }
  if (shape.empty() && k0.ndim() != 0) c0 = lax::full(k0.shape(), c0), c1 = lax::full(k0.shape(), c1);
  auto [b0, b1] = threefry2x32(k0, k1, c0, c1);
  return combine_bits(b0, b1, bit_width, op);
}

Array combine_bits(const Array& b0, const Array& b1, int bit_width, std::string_view op) {
  switch (bit_width) {
    case 64: {
      Array hi = lax::convert_element_type(b0, DType::uint64), lo = lax::convert_element_type(b1, DType::uint64);
      return lax::bitwise_or(lax::shift_left(hi, Array::scalar_int(32, DType::uint64)), lo);
    }
    case 32:
      return lax::bitwise_xor(b0, b1);
    case 16:
      return lax::convert_element_type(lax::bitwise_xor(b0, b1), DType::uint16);
    case 8:
      return lax::convert_element_type(lax::bitwise_xor(b0, b1), DType::uint8);
    default:
      throw_error<TypeError>(op, "bit width must be 8, 16, 32 or 64, got {}", bit_width);
  }
}

DType uint_of_width(int bits) {
  switch (bits) {
    case 8:
      return DType::uint8;
    case 16:
      return DType::uint16;
    case 32:
      return DType::uint32;
    default:
      return DType::uint64;
  }
}

/// Mantissa bits of a float dtype (numpy's finfo.nmant).
int nmant(DType d) {
  switch (d) {
    case DType::float16:
      return 10;
    case DType::bfloat16:
      return 7;
    case DType::float32:
      return 23;
    default:
      return 52;
  }
}

/// Smallest normal number of a float dtype (finfo.tiny).
double tiny(DType d) {
  switch (d) {
    case DType::float16:
      return std::ldexp(1.0, -14);
    case DType::bfloat16:
    case DType::float32:
      return std::ldexp(1.0, -126);
    default:
      return std::numeric_limits<double>::min();
  }
}

void check_float(DType d, std::string_view op) {
  if (!is_floating(d)) throw_error<TypeError>(op, "dtype must be a float dtype, got {}", dtype_name(d));
}

/// The common head of every sampler: api scope, key check, canonical float dtype, shape check.
DType begin_float(const Array& key, DType dtype, const Shape& shape, std::string_view op) {
  key_words(key, op);
  check_dtype_value(dtype, op);
  dtype = canonicalize_dtype(dtype);
  check_float(dtype, op);
  check_shape(shape, op);
  return dtype;
}

/// x broadcast to shape, or a ShapeError naming op when x's shape does not broadcast to exactly
/// shape.
Array broadcast_param(const Array& x, const Shape& shape, std::string_view op, std::string_view what) {
  Shape b = jnp::broadcast_shapes({shape, x.shape()}, op);
  if (b != shape)
    throw_error<ShapeError>(op, "{} of shape {} does not broadcast to the shape argument {}", what,
                            shape_str(x.shape()), shape_str(shape));
  return jnp::broadcast_to(x, shape);
}

/// JAX's _uniform: random mantissa bits under the exponent of 1.0 give [1, 2), minus 1, scaled to
/// the range.
Array uniform_impl(const Array& key, const Shape& shape, DType dtype, const Array& minval_in, const Array& maxval_in,
                   std::string_view op, bool differentiable) {
  check_float(dtype, op);
  check_shape(shape, op);
  Array minval = broadcast_param(lax::convert_element_type(minval_in, dtype), shape, op, "minval");
  Array maxval = broadcast_param(lax::convert_element_type(maxval_in, dtype), shape, op, "maxval");
  int nbits = dtype_bits(dtype), m = nmant(dtype);
  int rng_bits = m < 8 ? 8 : nbits;  // bfloat16 draws 8 bits, as JAX
  return uniform_from_bits(random_bits(key, rng_bits, shape, op), dtype, minval, maxval, differentiable);
}

Array with_derivative_of(const Array& exact, const Array& smooth) {
  Array s = lax::convert_element_type(smooth, exact.dtype());
  Array delta = lax::sub(s, stop_gradient(s));  // zero, with s's derivative
  // (inf - inf would be NaN: no derivative through a non-finite smooth value)
  return lax::add(stop_gradient(exact), jnp::where(jnp::isfinite(s), delta, jnp::zeros_like(delta)));
}

/// uniform_impl after the bits: b holds uniform_bits_width(dtype) random bits per element; minval/maxval have b's
/// shape.
Array uniform_from_bits(Array b, DType dtype, const Array& minval, const Array& maxval, bool differentiable) {
  int nbits = dtype_bits(dtype), m = nmant(dtype);
  int rng_bits = m < 8 ? 8 : nbits;
  DType udt = uint_of_width(nbits);
  if (rng_bits != nbits) b = lax::convert_element_type(b, udt);
  Array one_bits = lax::bitcast_convert_type(Array::scalar(1.0, dtype), udt);
  Array float_bits = lax::bitwise_or(lax::shift_right_logical(b, Array::scalar_int(rng_bits - m, udt)), one_bits);
  Array floats = lax::sub(lax::bitcast_convert_type(float_bits, dtype), Array::scalar(1.0, dtype));
  if (dtype == DType::float64) return lax::max(minval, xla_math::fma64(floats, lax::sub(maxval, minval), minval));
  // XLA:CPU fuses floats * span + minval into one fused multiply-add in f32, and in f16 too (LLVM narrows its f16
  // arithmetic and contracts it: the f32 FMA rounded once to f16, checked on 200,000 draws of three ranges on an
  // Intel Xeon without avx512fp16); bf16 ops round one by one (its float normalization keeps the round trips).
  // xla_math does each exactly on every backend.
  namespace xm = xla_math;
  Array f = xm::widen(floats), lo = xm::widen(minval), span = xm::sub(xm::widen(maxval), lo, dtype);
  Array scaled = dtype == DType::float32   ? xm::fma32(f, span, lo)
                 : dtype == DType::float16 ? xm::round_to(xm::fma32(f, span, lo), dtype)
                                           : xm::add(xm::mul(f, span, dtype), lo, dtype);
  Array exact = lax::max(minval, xm::narrow(scaled, dtype));
  // Differentiable in minval and maxval as JAX's (the exact rounding above has a zero derivative), where asked.
  if (!differentiable) return exact;
  Array smooth = lax::max(minval, lax::add(lax::mul(floats, lax::sub(maxval, minval)), minval));
  return with_derivative_of(exact, smooth);
}

/// The next representable float after x toward +inf (up) or -inf (!up), for finite and infinite x;
/// NaN stays NaN (lax.nextafter(x, +-inf)). jitx has no nextafter primitive, so this steps the bit
/// pattern.
Array nextafter_inf(const Array& x, bool up) {
  DType d = x.dtype(), udt = uint_of_width(dtype_bits(d));
  Array bits = lax::bitcast_convert_type(x, udt);
  Array one = Array::scalar_int(1, udt);
  Array zero_f = Array::scalar(0.0, d);
  Array away = up ? lax::gt(x, zero_f) : lax::lt(x, zero_f);  // the magnitude grows: bits + 1
  Array stepped = lax::select(away, lax::add(bits, one), lax::sub(bits, one));
  // +-0 steps to the smallest subnormal of the direction's sign.
  uint64_t sign = uint64_t{1} << (dtype_bits(d) - 1);
  Array from_zero = up ? one : lax::bitwise_or(Array::scalar_int(static_cast<int64_t>(sign), udt), one);
  stepped = lax::select(lax::eq(x, zero_f), lax::full(x.shape(), from_zero), stepped);
  Array out = lax::bitcast_convert_type(stepped, d);
  // NaN and the infinity we move toward stay put.
  Array inf = Array::scalar(up ? INFINITY : -INFINITY, d);
  Array keep = lax::bitwise_or(lax::ne(x, x), lax::eq(x, inf));
  return lax::select(keep, x, out);
}

/// The dtype's most negative/positive value as an int64 (uint64 max saturates: callers clip with
/// it).
/// (int64's own bounds are spelled out: -(1 << 63) and (1 << 63) - 1 overflow int64, which UBSan reported.)
int64_t int_min(DType d) {
  if (is_unsigned_integer(d)) return 0;
  if (dtype_bits(d) == 64) return std::numeric_limits<int64_t>::min();
  return -(int64_t{1} << (dtype_bits(d) - 1));
}
int64_t int_max(DType d) {
  if (d == DType::uint64 || d == DType::int64) return std::numeric_limits<int64_t>::max();
  return is_unsigned_integer(d) ? (int64_t{1} << dtype_bits(d)) - 1 : (int64_t{1} << (dtype_bits(d) - 1)) - 1;
}

/// JAX's _convert_and_clip_integer: val converted to dtype, clipped to dtype's range instead of
/// wrapping.
Array convert_and_clip(const Array& val, DType dtype) {
  DType vd = val.dtype();
  int64_t lo = std::max(int_min(dtype), int_min(vd)), hi = std::min(int_max(dtype), int_max(vd));
  Array c = jnp::clip(val, Array::scalar_int(lo, vd), Array::scalar_int(hi, vd));
  return lax::convert_element_type(c, dtype);
}

/// split without the eager wrapper (used inside other samplers).
Array split_impl(const Array& key, const Shape& shape) {
  auto [k0, k1] = key_words(key, "split");
  auto [c0, c1] = iota_2x32_shape(shape);
  auto [b0, b1] = threefry2x32(k0, k1, c0, c1);
  Shape s1 = shape;
  s1.push_back(1);
  return lax::concatenate({lax::reshape(b0, s1), lax::reshape(b1, s1)}, static_cast<int64_t>(shape.size()));
}

/// JAX's _shuffle: rounds of stable sorts by fresh 32-bit keys (enough rounds that key collisions
/// are unlikely to bias the result: ceil(3 ln n / ln(2^32 - 1))).
Array shuffle(Array key, Array x, int64_t axis) {
  double n = std::max<double>(1.0, static_cast<double>(x.size()));
  int rounds = static_cast<int>(std::ceil(3.0 * std::log(n) / std::log(4294967295.0)));
  for (int i = 0; i < rounds; ++i) {
    Array keys = split_impl(key, {2});
    key = keys[0];
    Array sort_keys = random_bits(keys[1], 32, x.shape(), "permutation");
    x = lax::sort({sort_keys, x}, axis, /*is_stable=*/true, /*num_keys=*/1)[1];
  }
  return x;
}

/// sqrt(2) * erf_inv(u) as XLA:CPU computes it, bit for bit: f32, f16 and bf16 with erf_inv in f32,
/// rounded to u's dtype, then the multiply rounded; f64 with XLA's ErfInv64 in fused multiply-adds.
Array sqrt2_erf_inv(const Array& u, bool differentiable) {
  DType d = u.dtype();
  Array sqrt2 = Array::scalar(std::sqrt(2.0), d);
  if (d == DType::float64) return lax::mul(xla_math::erf_inv64(u), sqrt2);
  namespace xm = xla_math;
  Array e = xm::round_to(xm::erf_inv32(xm::widen(u)), d);
  Array out = xm::narrow(xm::mul(xm::widen(sqrt2), e, d), d);
  // With erf_inv's derivative where u carries one (truncated_normal's bounds, differentiable as in JAX).
  return differentiable ? with_derivative_of(out, lax::mul(lax::erf_inv(u), sqrt2)) : out;
}

Array normal_impl(const Array& key, const Shape& shape, DType dtype) {
  // u in [nextafter(-1, 0), 1): erf_inv(-1) = -inf is never drawn.
  double lo = -(1.0 - std::ldexp(1.0, -(nmant(dtype) + 1)));
  Array u = uniform_impl(key, shape, dtype, Array::scalar(lo, dtype), Array::scalar(1.0, dtype), "normal");
  return sqrt2_erf_inv(u);
}

Array truncated_normal_impl(const Array& key, const Array& lower_in, const Array& upper_in, const Shape& shape,
                            DType dtype) {
  Array sqrt2 = Array::scalar(std::sqrt(2.0), dtype);
  Array lower = lax::convert_element_type(lower_in, dtype), upper = lax::convert_element_type(upper_in, dtype);
  Array a, b;
  if (dtype == DType::float64) {
    // XLA rewrites x / sqrt2 into x * (1 / sqrt2); its f64 erf is libm's, as jitx's lax::erf.
    Array inv_sqrt2 = Array::scalar(1.0 / std::sqrt(2.0), dtype);
    a = lax::erf(lax::mul(lower, inv_sqrt2)), b = lax::erf(lax::mul(upper, inv_sqrt2));
  } else {  // erf(bound / sqrt2) as XLA:CPU computes it (f32 erf, each op rounded to dtype)
    namespace xm = xla_math;
    // XLA rewrites x / sqrt2 into x * (1 / sqrt2), the reciprocal rounded to dtype.
    Array inv_sqrt2 = xm::round_to(xm::div(Array::scalar(1.0, DType::float64), xm::widen(sqrt2), dtype), dtype);
    auto erf = [&](const Array& x) {
      Array q = xm::mul(xm::widen(x), inv_sqrt2, dtype);
      return with_derivative_of(xm::narrow(xm::round_to(xm::erf32(q), dtype), dtype), lax::erf(lax::div(x, sqrt2)));
    };
    a = erf(lower), b = erf(upper);
  }
  Array u = uniform_impl(key, shape, dtype, a, b, "truncated_normal", /*differentiable=*/true);
  Array out = sqrt2_erf_inv(u, /*differentiable=*/true);
  // Rounding (or drawing exactly a) could land on a bound: clamp into the open interval.
  return jnp::clip(out, nextafter_inf(lower, true), nextafter_inf(upper, false));
}

Array gumbel_impl(const Array& key, const Shape& shape, DType dtype) {
  // JAX draws uniform(tiny, 1); XLA folds floats * (1 - tiny) + tiny into max(tiny, floats) (1 - tiny
  // rounds to 1, then (bits - 1) + tiny reassociates to bits + (tiny - 1) = bits - 1).
  Array u = lax::max(Array::scalar(tiny(dtype), dtype),
                     uniform_impl(key, shape, dtype, Array::scalar(0.0, dtype), Array::scalar(1.0, dtype), "gumbel"));
  if (dtype == DType::float64) return lax::neg(lax::log(lax::neg(lax::log(u))));
  // -log(-log(u)) with XLA:CPU's f32 log, each log rounded to dtype (f16/bf16).
  namespace xm = xla_math;
  Array l1 = xm::round_to(xm::log32(xm::widen(u)), dtype);
  Array l2 = xm::round_to(xm::log32(lax::neg(l1)), dtype);
  return xm::narrow(lax::neg(l2), dtype);
}

/// Gumbel-max: noise of shape (*prefix, *batch with the category axis put back) plus the logits,
/// argmax over the category axis (the same axis counted from the end, as JAX).
Array categorical_impl(const Array& key, const Array& logits, int64_t ax, const Shape& out_shape) {
  int64_t n_prefix = static_cast<int64_t>(out_shape.size()) - (logits.ndim() - 1);
  Shape noise_shape = out_shape;
  noise_shape.insert(noise_shape.begin() + n_prefix + ax, logits.dim(ax));
  Array noise = gumbel_impl(key, noise_shape, logits.dtype());
  Shape lshape(static_cast<size_t>(n_prefix), 1);
  lshape.insert(lshape.end(), logits.shape().begin(), logits.shape().end());
  return jnp::argmax(jnp::add(noise, lax::reshape(logits, lshape)), n_prefix + ax);
}

Array randint_impl(const Array& key, const Shape& shape, const Array& minval_in, const Array& maxval_in, DType dtype) {
  // Bounds given as floats are truncated to integers first (int64: jitx keeps 64-bit integers).
  auto as_int = [](const Array& v) { return is_integer(v.dtype()) ? v : lax::convert_element_type(v, DType::int64); };
  Array minval = as_int(minval_in), maxval = as_int(maxval_in);
  DType sample = dtype;
  if (dtype_bits(dtype) < 32) {
    // Narrow dtypes sample in int32 (less modulus bias), then convert.
    sample = DType::int32;
    minval = jnp::clip(lax::convert_element_type(minval, DType::int32), Array::scalar_int(int_min(dtype), DType::int32),
                       Array::scalar_int(int_max(dtype), DType::int32));
    maxval = jnp::clip(lax::convert_element_type(maxval, DType::int32), Array::scalar_int(int_min(dtype), DType::int32),
                       Array::scalar_int(int_max(dtype) + 1, DType::int32));
  }
  // maxval beyond the dtype's max (randint(k, s, 0, 256, uint8)) widens the span by one.
  Array max_in_maxval_dtype = convert_and_clip(Array::scalar_int(int_max(sample), sample), maxval.dtype());
  Array out_of_range = broadcast_param(jnp::greater(maxval, max_in_maxval_dtype), shape, "randint", "maxval");
  Array lo = broadcast_param(convert_and_clip(minval, sample), shape, "randint", "minval");
  Array hi = broadcast_param(convert_and_clip(maxval, sample), shape, "randint", "maxval");
  int nbits = dtype_bits(sample);
  DType udt = uint_of_width(nbits);
  Array keys = split_impl(key, {2});
  Array higher_bits = random_bits(keys[0], nbits, shape, "randint");
  Array lower_bits = random_bits(keys[1], nbits, shape, "randint");

  Array one = lax::full(shape, Array::scalar_int(1, udt));
  Array span = lax::convert_element_type(lax::sub(hi, lo), udt);
  span = lax::select(lax::le(hi, lo), one, span);  // empty range: always minval
  span = lax::select(lax::bitwise_and(out_of_range, lax::gt(hi, lo)), lax::add(span, one), span);
  // (hi * 2^nbits + lo) mod span without overflow: multiplier = 2^nbits mod span = (2^(nbits/2) mod
  // span)^2 mod span.
  Array multiplier = lax::rem(lax::full(shape, Array::scalar_int(int64_t{1} << (nbits / 2), udt)), span);
  multiplier = lax::rem(lax::mul(multiplier, multiplier), span);
  Array offset = lax::add(lax::mul(lax::rem(higher_bits, span), multiplier), lax::rem(lower_bits, span));
  offset = lax::rem(offset, span);
  Array out = lax::add(lo, lax::convert_element_type(offset, sample));
  return sample == dtype ? out : lax::convert_element_type(out, dtype);
}

/// Runs f(args) as one compiled program per signature when called eagerly, as JAX jits its
/// samplers: eager jitx compiles every op for every new shape, and a sampler is ~100 ops. Under a
/// trace f is traced inline. `signature` names the op and every static parameter f bakes in (the
/// args' types are keyed by jit).

Array compiled(const std::string& signature, const std::vector<Array>& args, Body f) {
  bool traced = detail::tracing_active();
  for (auto& a : args) traced = traced || a.is_tracer();
  if (traced) return f(args);
  using J = Jitted<std::function<Array(std::vector<Array>)>>;
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<J>> cache;
  std::shared_ptr<J> j;
  {
    std::lock_guard<std::mutex> l(mu);
    auto& slot = cache[signature];
    if (!slot) {
      JitOptions o;
      o.name = "random_" + signature.substr(0, signature.find(' '));
      slot = std::make_shared<J>(
          std::function<Array(std::vector<Array>)>([f = std::move(f)](std::vector<Array> a) { return f(a); }), o);
    }
    j = slot;
  }
  return (*j)(args);
}

std::string sig(std::string_view op, const Shape& shape, DType d, std::string_view extra) {
  return fmt::format("{} {} {} {}", op, shape_str(shape), dtype_name(d), extra);
}

// fold_in's data as JAX takes it: a scalar of any real dtype, converted to uint32 (jnp.uint32(data): floats
// truncated); a weak float (a Python float's analog) must hold a value in [0, 2^32) after truncation, as numpy's
// conversion demands (JAX raises OverflowError for -1.5 or 1e10, ValueError for NaN). Weak ints (C++ literals)
// wrap as a C++ conversion does (README: JAX raises for a Python int out of range).
void check_fold_in_data(const Array& x, std::string_view op, std::string_view what) {
  if (!x.valid() || x.ndim() != 0 || !(is_integer(x.dtype()) || is_bool(x.dtype()) || is_floating(x.dtype())))
    throw_error<TypeError>(op, "{} must be a scalar (integer, float or bool), got {}", what,
                           x.valid() ? x.aval().str() : "an empty Array");
  if (!x.weak_type() || x.is_tracer() || !is_floating(x.dtype())) return;
  double v = std::trunc(x.astype(DType::float64).item<double>());
  if (!(v >= 0 && v <= 4294967295.0))
    throw_error<TypeError>(op, "{} {} is out of bounds for uint32 (a Python-like scalar must lie in [0, 2^32))", what,
                           x.astype(DType::float64).item<double>());
}

}  // namespace internal
using namespace internal;

Array PRNGKey(const Array& seed, Loc loc) {
  ApiScope s(loc);
  if (!seed.valid() || seed.ndim() != 0 || !is_integer(seed.dtype()))
    throw_error<TypeError>("PRNGKey", "expects an integer scalar seed, got {}",
                           seed.valid() ? seed.aval().str() : "an empty Array");
  // JAX's threefry_seed: hi = seed >> 32 (logical; 0 for seeds of 32 bits or fewer), lo = seed &
  // 0xFFFFFFFF.
  Array hi = u32(0), lo;
  if (dtype_bits(seed.dtype()) == 64) {
    DType d = seed.dtype();
    hi = lax::convert_element_type(lax::shift_right_logical(seed, Array::scalar_int(32, d)), DType::uint32);
    lo = lax::convert_element_type(lax::bitwise_and(seed, Array::scalar_int(0xFFFFFFFF, d)), DType::uint32);
  } else {
    lo = lax::convert_element_type(seed, DType::uint32);  // sign-extends then wraps, as seed & 0xFFFFFFFF in int64
  }
  return lax::concatenate({lax::reshape(hi, {1}), lax::reshape(lo, {1})}, 0);
}

Array PRNGKey(int64_t seed, Loc loc) {
  ApiScope s(loc);
  return PRNGKey(Array::scalar_int(seed, DType::int64), loc);
}

Array key(int64_t seed, Loc loc) {
  ApiScope s(loc);
  return PRNGKey(seed, loc);
}

Array split(const Array& key, const Shape& shape, Loc loc) {
  ApiScope s(loc);
  key_words(key, "split");
  check_shape(shape, "split");
  return compiled(sig("split", shape, DType::uint32), {key}, [shape](auto& a) { return split_impl(a[0], shape); });
}

Array split(const Array& key, int64_t num, Loc loc) {
  ApiScope s(loc);
  return split(key, Shape{num}, loc);
}

Array fold_in(const Array& key, const Array& data, Loc loc) {
  ApiScope s(loc);
  key_words(key, "fold_in");
  check_fold_in_data(data, "fold_in", "data");
  return compiled("fold_in", {key, data}, [](auto& a) {
    auto [k0, k1] = key_words(a[0], "fold_in");
    // JAX: threefry_2x32(key, threefry_seed(uint32(data))), i.e. the cipher on the counter pair (0,
    // data).
    auto [b0, b1] = threefry2x32(k0, k1, u32(0), lax::convert_element_type(a[1], DType::uint32));
    return lax::concatenate({lax::reshape(b0, {1}), lax::reshape(b1, {1})}, 0);
  });
}

Array bits(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "bits");
  check_dtype_value(dtype, "bits");
  dtype = canonicalize_dtype(dtype);  // config().enable_x64 off: f64 -> f32, i64 -> i32
  detail::ScopedX64 internals_x64;    // the internals (XLA's math emulated in f64/u64) keep 64-bit dtypes
  check_shape(shape, "bits");
  if (!is_unsigned_integer(dtype))
    throw_error<TypeError>("bits", "dtype must be an unsigned integer dtype, got {}", dtype_name(dtype));
  return compiled(sig("bits", shape, dtype), {key},
                  [=](auto& a) { return random_bits(a[0], dtype_bits(dtype), shape, "bits"); });
}

Array uniform(const Array& key, const Shape& shape, DType dtype, const Array& minval, const Array& maxval, Loc loc) {
  ApiScope s(loc);
  key_words(key, "uniform");
  check_dtype_value(dtype, "uniform");
  dtype = canonicalize_dtype(dtype);  // config().enable_x64 off: f64 -> f32, i64 -> i32
  detail::ScopedX64 internals_x64;    // the internals (XLA's math emulated in f64/u64) keep 64-bit dtypes
  check_float(dtype, "uniform");
  check_shape(shape, "uniform");
  broadcast_param(minval, shape, "uniform", "minval");
  broadcast_param(maxval, shape, "uniform", "maxval");
  return compiled(sig("uniform", shape, dtype), {key, minval, maxval},
                  [=](auto& a) { return uniform_impl(a[0], shape, dtype, a[1], a[2], "uniform", true); });
}

Array normal(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "normal");
  check_dtype_value(dtype, "normal");
  dtype = canonicalize_dtype(dtype);  // config().enable_x64 off: f64 -> f32, i64 -> i32
  detail::ScopedX64 internals_x64;    // the internals (XLA's math emulated in f64/u64) keep 64-bit dtypes
  check_float(dtype, "normal");
  check_shape(shape, "normal");
  return compiled(sig("normal", shape, dtype), {key}, [=](auto& a) { return normal_impl(a[0], shape, dtype); });
}

Array truncated_normal(const Array& key, const Array& lower, const Array& upper, std::optional<Shape> shape,
                       DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "truncated_normal");
  check_dtype_value(dtype, "truncated_normal");
  dtype = canonicalize_dtype(dtype);  // config().enable_x64 off: f64 -> f32, i64 -> i32
  detail::ScopedX64 internals_x64;    // the internals (XLA's math emulated in f64/u64) keep 64-bit dtypes
  check_float(dtype, "truncated_normal");
  Shape out_shape = shape ? *shape : jnp::broadcast_shapes({lower.shape(), upper.shape()}, "truncated_normal");
  check_shape(out_shape, "truncated_normal");
  broadcast_param(lower, out_shape, "truncated_normal", "lower");
  broadcast_param(upper, out_shape, "truncated_normal", "upper");
  return compiled(sig("truncated_normal", out_shape, dtype), {key, lower, upper},
                  [=](auto& a) { return truncated_normal_impl(a[0], a[1], a[2], out_shape, dtype); });
}

Array bernoulli(const Array& key, const Array& p, std::optional<Shape> shape, Loc loc) {
  ApiScope s(loc);
  key_words(key, "bernoulli");
  if (!p.valid() || !is_floating(p.dtype()))
    throw_error<TypeError>("bernoulli", "probability p must have a float dtype, got {}",
                           p.valid() ? p.aval().str() : "an empty Array");
  Shape out_shape = shape ? *shape : p.shape();
  check_shape(out_shape, "bernoulli");
  broadcast_param(p, out_shape, "bernoulli", "p");
  return compiled(sig("bernoulli", out_shape, p.dtype()), {key, p}, [out_shape](auto& a) {
    // A C++ double is a weak f64 and samples in float64, as a Python float with x64 does (a C++ float in f32).
    DType d = a[1].dtype();
    Array pd = lax::convert_element_type(a[1], d);
    Array u = uniform_impl(a[0], out_shape, d, Array::scalar(0.0, d), Array::scalar(1.0, d), "bernoulli");
    return lax::lt(u, broadcast_param(pd, out_shape, "bernoulli", "p"));
  });
}

Array gumbel(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "gumbel");
  check_dtype_value(dtype, "gumbel");
  dtype = canonicalize_dtype(dtype);  // config().enable_x64 off: f64 -> f32, i64 -> i32
  detail::ScopedX64 internals_x64;    // the internals (XLA's math emulated in f64/u64) keep 64-bit dtypes
  check_float(dtype, "gumbel");
  check_shape(shape, "gumbel");
  return compiled(sig("gumbel", shape, dtype), {key}, [=](auto& a) { return gumbel_impl(a[0], shape, dtype); });
}

Array categorical(const Array& key, const Array& logits, int64_t axis, std::optional<Shape> shape, Loc loc) {
  ApiScope s(loc);
  key_words(key, "categorical");
  check_float(logits.dtype(), "categorical");
  int64_t ax = detail::canonical_axis(axis, logits.ndim(), "categorical");
  Shape batch_shape = logits.shape();
  batch_shape.erase(batch_shape.begin() + ax);
  Shape out_shape = shape ? *shape : batch_shape;
  check_shape(out_shape, "categorical");
  if (out_shape.size() < batch_shape.size() ||
      jnp::broadcast_shapes({out_shape, batch_shape}, "categorical") != out_shape)
    throw_error<ShapeError>("categorical", "shape {} must end with a shape that logits' batch shape {} broadcasts to",
                            shape_str(out_shape), shape_str(batch_shape));
  return compiled(sig("categorical", out_shape, DType::int32, fmt::format("axis={}", ax)), {key, logits},
                  [=](auto& a) { return categorical_impl(a[0], a[1], ax, out_shape); });
}

Array permutation(const Array& key, int64_t n, Loc loc) {
  ApiScope s(loc);
  key_words(key, "permutation");
  if (n < 0) throw_error<ShapeError>("permutation", "n must be non-negative, got {}", n);
  return compiled(sig("permutation", {n}, DType::int32), {key},
                  [n](auto& a) { return shuffle(a[0], lax::iota(DType::int32, n), 0); });
}

Array permutation(const Array& key, const Array& x, int64_t axis, bool independent, Loc loc) {
  ApiScope s(loc);
  key_words(key, "permutation");
  if (x.ndim() == 0) {
    if (!is_integer(x.dtype()) || x.is_tracer())
      throw_error<TypeError>("permutation", "x must be a concrete integer or an array of rank >= 1, got {}",
                             x.aval().str());
    detail::canonical_axis(axis, 1, "permutation");  // as JAX: the axis of arange(x), a rank-1 array
    return permutation(key, x.item<int64_t>(), loc);
  }
  int64_t ax = detail::canonical_axis(axis, x.ndim(), "permutation");
  return compiled(sig("permutation_of", x.shape(), x.dtype(), fmt::format("axis={} independent={}", ax, independent)),
                  {key, x}, [=](auto& a) {
                    if (independent || a[1].ndim() == 1) return shuffle(a[0], a[1], ax);
                    Array ind = shuffle(a[0], lax::iota(DType::int32, a[1].dim(ax)), 0);
                    return jnp::take(a[1], ind, ax);
                  });
}

Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "randint");
  check_dtype_value(dtype, "randint");
  dtype = canonicalize_dtype(dtype);  // config().enable_x64 off: f64 -> f32, i64 -> i32
  detail::ScopedX64 internals_x64;    // the internals (XLA's math emulated in f64/u64) keep 64-bit dtypes
  check_shape(shape, "randint");
  if (!is_integer(dtype))
    throw_error<TypeError>("randint", "dtype must be an integer dtype, got {}", dtype_name(dtype));
  if (!is_integer(minval.dtype()) && !is_floating(minval.dtype()))
    throw_error<TypeError>("randint", "minval must be a number, got {}", minval.aval().str());
  if (!is_integer(maxval.dtype()) && !is_floating(maxval.dtype()))
    throw_error<TypeError>("randint", "maxval must be a number, got {}", maxval.aval().str());
  broadcast_param(minval, shape, "randint", "minval");
  broadcast_param(maxval, shape, "randint", "maxval");
  return compiled(sig("randint", shape, dtype), {key, minval, maxval},
                  [=](auto& a) { return randint_impl(a[0], shape, a[1], a[2], dtype); });
}

}  // namespace jitx::random
