// The pieces of src/api/random.cpp that the other samplers (src/api/random_samplers*.cpp) build on:
// the Threefry cipher, bits, uniform from bits, normal, the eager-compile wrapper and the checks.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jitx/array.h"

namespace jitx::random::internal {

/// The key's two words as uint32 scalars; throws unless key is a uint32[2] array.
std::pair<Array, Array> key_words(const Array& key, std::string_view op);
void check_shape(const Shape& shape, std::string_view op, DType d = DType::uint64);
void check_dtype_value(DType d, std::string_view op);
void check_float(DType d, std::string_view op);
/// The common head of every sampler: key check, canonical float dtype, shape check; returns the dtype.
DType begin_float(const Array& key, DType dtype, const Shape& shape, std::string_view op);
/// x broadcast to shape, or a ShapeError when x's shape does not broadcast to exactly shape.
Array broadcast_param(const Array& x, const Shape& shape, std::string_view op, std::string_view what);
int nmant(DType d);
double tiny(DType d);
/// Threefry-2x32 on counter pairs under key words, elementwise.
std::pair<Array, Array> threefry2x32(const Array& k0, const Array& k1, Array x0, Array x1);
/// Bits of shape under one key.
Array random_bits(const Array& key, int bit_width, const Shape& shape, std::string_view op);
/// Bits of shape under key words k0/k1 of a batch shape B (scalars: one key): shape B + shape, each key's bits
/// those random_bits gives for it.
Array random_bits_words(const Array& k0, const Array& k1, int bit_width, const Shape& shape, std::string_view op);
Array combine_bits(const Array& b0, const Array& b1, int bit_width, std::string_view op);
/// Bits (8 for bf16, else the dtype's width) -> uniform floats in [minval, maxval) as JAX's _uniform.
/// differentiable: minval/maxval may carry a tangent (the public uniform's and truncated_normal's bounds), so the
/// f32/f16/bf16 path adds the plain ops' derivative; constant bounds skip that work.
Array uniform_from_bits(Array b, DType dtype, const Array& minval, const Array& maxval, bool differentiable = false);
Array uniform_impl(const Array& key, const Shape& shape, DType dtype, const Array& minval_in,
                   const Array& maxval_in, std::string_view op, bool differentiable = false);
Array split_impl(const Array& key, const Shape& shape);
/// sqrt(2) * erf_inv(u) as XLA:CPU computes it (u in u's dtype); differentiable in u if asked (else only f64 is).
Array sqrt2_erf_inv(const Array& u, bool differentiable = false);
Array normal_impl(const Array& key, const Shape& shape, DType dtype);
Array gumbel_impl(const Array& key, const Shape& shape, DType dtype);
/// exact's value with smooth's derivative (smooth: the same sample computed with differentiable ops, where exact
/// reproduces XLA's rounding with integer arithmetic, whose derivative is zero): exact held + (smooth - smooth held).
Array with_derivative_of(const Array& exact, const Array& smooth);
using Body = std::function<Array(const std::vector<Array>&)>;
/// f(args) compiled once per signature when called eagerly; traced inline under a trace.
Array compiled(const std::string& signature, const std::vector<Array>& args, Body f);
std::string sig(std::string_view op, const Shape& shape, DType d, std::string_view extra = "");

}  // namespace jitx::random::internal
