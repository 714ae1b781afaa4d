// jnp::linalg's shared helpers (linalg_util.h) and jax.lax.linalg's entry points: triangular_solve, cholesky, lu.
#include "ops/linalg_util.h"

#include "core/errors.h"
#include "core/params.h"
#include "core/primitive.h"
#include "jitx/lax.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"

namespace jitx::detail::linalg_util {

DType inexact_dtype(DType d) {
  if (is_floating(d)) return d;
  return d == DType::int64 || d == DType::uint64 ? DType::float64 : DType::float32;
}

Array inexact(std::string_view op, const Array& x, bool low_precision_ok) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  DType d = x.dtype();
  if (d == DType::float32 || d == DType::float64) return x;
  if (is_floating(d)) {
    if (low_precision_ok) return x;
    throw_error<TypeError>(op, "{} is not supported (float32 and float64 are; JAX on CPU has no LAPACK for it)",
                           dtype_name(d));
  }
  return numpy::astype(x, inexact_dtype(d));
}

Array inexact_or_empty_half(std::string_view op, const Array& x) {
  bool half = x.valid() && (x.dtype() == DType::float16 || x.dtype() == DType::bfloat16);
  return half && x.size() == 0 ? x : inexact(op, x);
}

DType common_float(const Array& a, const Array& b) {
  // JAX's promote_dtypes_inexact: the operands' joint dtype, then inexact (f32 with int64 is f32, not f64).
  DType d = inexact_dtype(promote_types(a.dtype(), a.weak_type(), b.dtype(), b.weak_type()));
  return d == DType::float64 ? DType::float64 : DType::float32;
}

void check_matrix(std::string_view op, const Array& x) {
  if (x.ndim() < 2)
    throw_error<ShapeError>(op, "needs an array of shape [..., m, n] (rank at least 2), got {}",
                            shape_str(x.shape()));
}

void check_square(std::string_view op, const Array& x) {
  if (x.ndim() < 2 || x.shape()[x.ndim() - 1] != x.shape()[x.ndim() - 2])
    throw_error<ShapeError>(op, "needs an array of shape [..., n, n] (square matrices), got {}",
                            shape_str(x.shape()));
}

Array symmetrize(const Array& x) { return (x + numpy::swapaxes(x, -1, -2)) * 0.5; }

namespace {
void check_float(std::string_view op, const Array& x, bool low_precision_ok = false) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (low_precision_ok && is_floating(x.dtype())) return;
  if (x.dtype() != DType::float32 && x.dtype() != DType::float64)
    throw_error<TypeError>(op, "needs a float32 or float64 operand, got {}", dtype_name(x.dtype()));
}
}  // namespace

Array lax_symmetric_input(std::string_view op, const Array& x, bool symmetrize_input) {
  if (!x.valid()) throw_error<TypeError>(op, "got an empty (default-constructed) Array");
  if (!symmetrize_input || is_floating(x.dtype())) check_float(op, x);
  check_square(op, x);
  if (!symmetrize_input) return x;
  if (is_floating(x.dtype())) return symmetrize(x);
  Array s = numpy::true_divide(x + numpy::swapaxes(x, -1, -2), Array(int64_t{2}));  // Python's 2: weak int64
  check_float(op, s);
  return s;
}

Array diagonal(const Array& x) {
  int64_t n = x.shape().back(), r = x.ndim();
  Shape flat(x.shape().begin(), x.shape().end() - 2);
  flat.push_back(n * n);
  Array f = numpy::reshape(x, flat);
  std::vector<int64_t> start(static_cast<size_t>(r - 1), 0), limit = flat, strides(static_cast<size_t>(r - 1), 1);
  strides.back() = n + 1;
  if (n == 0) return numpy::reshape(f, Shape(flat.begin(), flat.end()));
  return lax::slice(f, start, limit, strides);
}

Array permutation_matrix(const Array& perm, DType dtype) {
  Shape sq = perm.shape();
  sq.push_back(sq.back());
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < perm.ndim(); ++k) dims.push_back(k);
  Array p = lax::broadcast_in_dim(perm, sq, dims);
  return numpy::astype(p == lax::broadcasted_iota(perm.dtype(), sq, perm.ndim()), dtype);
}

Array pivot_sign(const Array& pivots, DType dtype) {
  Array swaps = pivots != lax::broadcasted_iota(DType::int32, pivots.shape(), pivots.ndim() - 1);
  Array count = numpy::sum(numpy::astype(swaps, DType::int32), {pivots.ndim() - 1});
  return 1.0 - 2.0 * numpy::astype(count % 2, dtype);
}

std::pair<Array, Array> broadcast_batch(std::string_view op, const Array& a, const Array& b) {
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = numpy::broadcast_shapes({ab, bb}, op);
  Shape as = batch, bs = batch;
  as.insert(as.end(), a.shape().end() - 2, a.shape().end());
  bs.insert(bs.end(), b.shape().end() - 2, b.shape().end());
  return {a.shape() == as ? a : numpy::broadcast_to(a, as), b.shape() == bs ? b : numpy::broadcast_to(b, bs)};
}

}  // namespace jitx::detail::linalg_util

namespace jitx::lax::linalg {
using namespace jitx::detail::linalg_util;
using detail::throw_error;

Array triangular_solve(const Array& a, const Array& b0, bool left_side, bool lower, bool transpose_a,
                       bool conjugate_a, bool unit_diagonal, Loc loc) {
  detail::ApiScope scope(loc);
  constexpr const char* op = "lax.linalg.triangular_solve";
  check_float(op, a, true);
  check_float(op, b0, true);
  check_square(op, a);
  // JAX: a b with one axis fewer than a is a vector (a column for left_side, a row otherwise).
  bool vector = b0.ndim() == a.ndim() - 1;
  Array b = vector ? numpy::expand_dims(b0, {left_side ? b0.ndim() : b0.ndim() - 1}) : b0;
  check_matrix(op, b);
  if (a.dtype() != b.dtype())
    throw_error<TypeError>(op, "a and b must have the same dtype, got {} and {}", dtype_name(a.dtype()),
                           dtype_name(b.dtype()));
  int64_t m = a.shape().back(), k = left_side ? b.shape()[b.ndim() - 2] : b.shape().back();
  if (k != m || a.ndim() != b.ndim() || !std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin()))
    throw_error<ShapeError>(op, "a {} and b {} do not fit: b must be [..., {}, n] (left_side) or [..., n, {}], "
                            "with a's batch axes", detail::shape_str(a.shape()), detail::shape_str(b0.shape()), m, m);
  DType d = a.dtype();
  if (d != DType::float32 && d != DType::float64) {
    // float16/bfloat16 (JAX runs XLA's expander): solved in float32, rounded once to d.
    Array x = triangular_solve(numpy::astype(a, DType::float32), numpy::astype(b0, DType::float32), left_side, lower,
                               transpose_a, conjugate_a, unit_diagonal, loc);
    return numpy::astype(x, d);
  }
  Array x = detail::bind1(detail::primitive("triangular_solve"), {a, b},
                          detail::Params{{"left_side", left_side}, {"lower", lower}, {"transpose_a", transpose_a},
                                         {"unit_diagonal", unit_diagonal}});
  return vector ? numpy::squeeze(x, {left_side ? x.ndim() - 1 : x.ndim() - 2}) : x;
}

Array cholesky(const Array& x, bool symmetrize_input, Loc loc) {
  detail::ApiScope scope(loc);
  Array a = lax_symmetric_input("lax.linalg.cholesky", x, symmetrize_input);
  return detail::bind1(detail::primitive("cholesky"), {a});
}

LuResult lu(const Array& x, Loc loc) {
  detail::ApiScope scope(loc);
  constexpr const char* op = "lax.linalg.lu";
  check_float(op, x);
  check_matrix(op, x);
  auto outs = detail::bind(detail::primitive("lu"), {x});
  return {outs[0], outs[1], outs[2]};
}

}  // namespace jitx::lax::linalg
