// Elementwise primitives: unary math, binary arithmetic/logic/comparison, select_n, clamp, conversions. All batch
// with the one elementwise rule (elementwise_batch).
#include <cmath>

#include "core/trace.h"
#include "core/primitive.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using hlo::Opcode;
using A = const Array&;
/// The tangent of a unary primitive's output from the input tangent t, the output and the input.
using UnaryJvp = std::function<Array(A t, A ans, A x)>;
/// The tangent term of one input of a binary primitive: from its tangent, the output and both inputs.
using BinaryJvp = std::function<Array(A t, A ans, A x, A y)>;

/// polygamma(1, x), digamma's derivative, from lax ops (so it differentiates again): for r >= 1/2 the sum
/// of 1/(r+k)^2 for k < 10, then the asymptotic series at z = r + 10, whose first omitted term
/// (5/66 z^-11) is below 1e-11 relative; x < 1/2 by reflection, psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x).
/// At the poles (x = 0, -1, ...) it is inf or nan, as the function is.
Array trigamma(A x) {
  Array reflect = x < 0.5;
  Array r = jnp::where(reflect, 1.0 - x, x);
  Array sum = 1.0 / (r * r);
  for (int k = 1; k < 10; ++k) sum = sum + 1.0 / ((r + double(k)) * (r + double(k)));
  Array z = r + 10.0, iz = 1.0 / z, iz2 = iz * iz;
  // 1/z + 1/(2z^2) + 1/(6z^3) - 1/(30z^5) + 1/(42z^7) - 1/(30z^9)
  Array series = iz + iz2 * (0.5 + iz * (1.0 / 6 + iz2 * (-1.0 / 30 + iz2 * (1.0 / 42 + iz2 * (-1.0 / 30)))));
  Array direct = sum + series;
  Array s = lax::sin(x * M_PI);
  return jnp::where(reflect, (M_PI * M_PI) / (s * s) - direct, direct);
}

/// JAX's _balanced_eq: 1 where x is the result alone, 1/2 where y ties with it, 0 elsewhere (max/min).
Array balanced_eq(A x, A z, A y) {
  return jnp::where(x == z, jnp::where(y == z, Array(0.5), Array(1.0)), Array(0.0));
}
/// add/sub: each linear operand gets the cotangent (times the sign), summed back to a scalar operand.
TransposeFn transpose_add(double sign) {
  return [sign](std::span<const Array> ct, std::span<const LinearArg> args, const Params&) {
    std::vector<Array> out(2);
    for (int i = 0; i < 2; ++i)
      if (args[i].is_linear()) out[i] = unbroadcast(i == 1 && sign < 0 ? -ct[0] : ct[0], args[i].aval);
    return out;
  };
}
/// mul: linear in one operand; its cotangent is ct times the other (known) operand.
std::vector<Array> transpose_mul(std::span<const Array> ct, std::span<const LinearArg> args, const Params&) {
  if (args[0].is_linear() && args[1].is_linear()) not_differentiable("mul", "transposing it needs one known operand");
  std::vector<Array> out(2);
  int lin = args[0].is_linear() ? 0 : 1;
  out[lin] = unbroadcast(lax::mul(ct[0], args[1 - lin].value), args[lin].aval);
  return out;
}
/// div: linear in the numerator only.
std::vector<Array> transpose_div(std::span<const Array> ct, std::span<const LinearArg> args, const Params&) {
  if (args[1].is_linear()) not_differentiable("div", "it is not linear in its divisor, so it cannot be transposed");
  return {unbroadcast(lax::div(ct[0], args[1].value), args[0].aval), Array()};
}
/// x with zeros replaced by ones: pow's derivative in y reads log(0) as 0 (JAX's _replace_zero).
Array replace_zero(A x) { return jnp::where(x == 0, Array(1.0), x); }

enum class Kinds { kFloat, kNumeric, kIntOrBool, kInt, kAny, kSigned };

bool dtype_ok(DType d, Kinds k) {
  switch (k) {
    case Kinds::kFloat: return is_floating(d);
    case Kinds::kNumeric: return !is_bool(d);
    case Kinds::kIntOrBool: return !is_floating(d);
    case Kinds::kInt: return is_integer(d);
    case Kinds::kSigned: return is_floating(d) || is_signed_integer(d);
    case Kinds::kAny: return true;
  }
  return false;
}
std::string_view kinds_str(Kinds k) {
  switch (k) {
    case Kinds::kFloat: return "a floating dtype (f16, bf16, f32, f64)";
    case Kinds::kNumeric: return "a numeric dtype (not bool)";
    case Kinds::kIntOrBool: return "an integer or bool dtype";
    case Kinds::kInt: return "an integer dtype";
    case Kinds::kSigned: return "a signed integer or floating dtype";
    case Kinds::kAny: return "any dtype";
  }
  return "";
}

void check_dtype(std::string_view op, const ShapedArray& a, Kinds k) {
  if (!dtype_ok(a.dtype, k))
    throw_error<TypeError>(op, "got an operand of dtype {}, expected {}", dtype_name(a.dtype), kinds_str(k));
}

/// logistic of f16/bf16 as XLA:CPU computes it: its logistic expander writes 1 / (1 + exp(-x)) in the operand's
/// type, and each of the four ops rounds to it (`jax.jit(jax.nn.sigmoid).lower(x).compile().as_text()` of bf16 x
/// shows the round trips); f32/f64 keep the one logistic op (the same formula, without the roundings).
hlo::Instruction* lower_half_logistic(hlo::Computation* comp, hlo::Instruction* x, const hlo::Shape& shape) {
  hlo::Instruction* one = comp->add(Opcode::kBroadcastInDim, shape, {comp->add_scalar_constant(shape.dtype, 1.0)},
                                    Params{{"broadcast_dimensions", std::vector<int64_t>{}}});
  hlo::Instruction* e = comp->add(Opcode::kExp, shape, {comp->add(Opcode::kNegate, shape, {x})});
  return comp->add(Opcode::kDivide, shape, {one, comp->add(Opcode::kAdd, shape, {e, one})});
}

/// A null rule means the output has no tangent (integer/bool results, piecewise-constant functions).
void register_unary(std::string name, Opcode op, Kinds k, UnaryJvp jvp, bool to_bool = false,
                    TransposeFn transpose = nullptr) {
  Primitive p;
  p.name = name;
  p.num_operands = 1;
  p.transpose = std::move(transpose);
  if (!jvp) p.jvp = zero_jvp(name);
  else
    p.jvp = defjvp(name, {[jvp](A t, A ans, std::span<const Array> xs, const Params&) { return jvp(t, ans, xs[0]); }});
  p.abstract_eval = [name, k, to_bool](std::span<const ShapedArray> in, const Params&) {
    JITX_ASSERT(in.size() == 1, "{} takes one operand", name);
    check_dtype(name, in[0], k);
    ShapedArray out = in[0];
    if (to_bool) out = ShapedArray{in[0].shape, DType::bool_, false};
    return std::vector<ShapedArray>{out};
  };
  p.lower = [op](LowerCtx& c, std::span<hlo::Instruction* const> args) {
    hlo::Shape shape = hlo_shape(c.out_avals[0]);
    bool half = shape.dtype == DType::float16 || shape.dtype == DType::bfloat16;
    if (op == Opcode::kLogistic && half) return std::vector<hlo::Instruction*>{
        lower_half_logistic(c.comp, args[0], shape)};
    return std::vector<hlo::Instruction*>{c.comp->add(op, shape, {args[0]})};
  };
  p.batch = elementwise_batch(p.name);
  register_primitive(std::move(p));
}

/// Broadcasts a rank-0 operand to `shape` (lax binary ops accept scalars next to arrays, as JAX's do).
hlo::Instruction* broadcast_scalar(hlo::Computation* comp, hlo::Instruction* x, const std::vector<int64_t>& dims) {
  if (x->shape.dims == dims) return x;
  return comp->add(Opcode::kBroadcastInDim, hlo::Shape(x->shape.dtype, dims), {x},
                   Params{{"broadcast_dimensions", std::vector<int64_t>{}}});
}

ShapedArray binary_shape(std::string_view op, std::span<const ShapedArray> in) {
  JITX_ASSERT(in.size() == 2, "{} takes two operands", op);
  const auto &a = in[0], &b = in[1];
  if (a.dtype != b.dtype)
    throw_error<TypeError>(op,
                           "operands must have the same dtype, got {} and {} (jnp functions promote; lax ones do not)",
                           dtype_name(a.dtype), dtype_name(b.dtype));
  Shape s;
  if (a.shape == b.shape || b.shape.empty()) s = a.shape;
  else if (a.shape.empty()) s = b.shape;
  else
    throw_error<ShapeError>(op, "operands must have equal shapes (or one must be a scalar), got {} and {}",
                            shape_str(a.shape), shape_str(b.shape));
  return ShapedArray{s, a.dtype, a.weak_type && b.weak_type};
}

/// Null rules: the output has no tangent (integer, bool and comparison results).
void register_binary(std::string name, Opcode op, Kinds k, BinaryJvp jx, BinaryJvp jy, TransposeFn transpose = nullptr,
                     std::string direction = "") {
  Primitive p;
  p.name = name;
  p.num_operands = 2;
  auto wrap = [](BinaryJvp j) -> TangentFn {
    return [j](A t, A ans, std::span<const Array> xs, const Params&) { return j(t, ans, xs[0], xs[1]); };
  };
  p.jvp = jx ? defjvp(name, {wrap(jx), wrap(jy)}) : zero_jvp(name);
  p.transpose = std::move(transpose);
  p.abstract_eval = [name, k, direction](std::span<const ShapedArray> in, const Params&) {
    ShapedArray out = binary_shape(name, in);
    check_dtype(name, in[0], k);
    if (!direction.empty()) out = ShapedArray{out.shape, DType::bool_, false};
    return std::vector<ShapedArray>{out};
  };
  p.lower = [op, direction](LowerCtx& c, std::span<hlo::Instruction* const> args) {
    const auto& dims = c.out_avals[0].shape;
    auto* x = broadcast_scalar(c.comp, args[0], dims);
    auto* y = broadcast_scalar(c.comp, args[1], dims);
    Params attrs;
    if (!direction.empty()) {
      DType d = c.in_avals[0].dtype;
      attrs.set("direction", direction);
      attrs.set("compare_type", std::string(is_floating(d)          ? "FLOAT"
                                            : is_signed_integer(d) ? "SIGNED"
                                                                   : "UNSIGNED"));
    }
    return std::vector<hlo::Instruction*>{c.comp->add(op, hlo_shape(c.out_avals[0]), {x, y}, attrs)};
  };
  p.batch = elementwise_batch(p.name);
  register_primitive(std::move(p));
}

const bool kElementwiseRegistered = [] {
  // unary
  register_unary("neg", Opcode::kNegate, Kinds::kNumeric, [](A t, A, A) { return -t; }, false,
                 [](std::span<const Array> ct, std::span<const LinearArg>, const Params&) {
                   return std::vector<Array>{-ct[0]};
                 });
  register_unary("abs", Opcode::kAbs, Kinds::kNumeric, [](A t, A, A x) { return lax::select(x >= 0, t, -t); });
  register_unary("sign", Opcode::kSign, Kinds::kNumeric, nullptr);
  register_unary("floor", Opcode::kFloor, Kinds::kFloat, nullptr);
  register_unary("ceil", Opcode::kCeil, Kinds::kFloat, nullptr);
  register_unary("exp", Opcode::kExp, Kinds::kFloat, [](A t, A ans, A) { return t * ans; });
  register_unary("expm1", Opcode::kExpm1, Kinds::kFloat, [](A t, A ans, A) { return t * (ans + 1.0); });
  register_unary("log", Opcode::kLog, Kinds::kFloat, [](A t, A, A x) { return t / x; });
  register_unary("log1p", Opcode::kLog1p, Kinds::kFloat, [](A t, A, A x) { return t / (x + 1.0); });
  register_unary("sqrt", Opcode::kSqrt, Kinds::kFloat, [](A t, A ans, A) { return t * (0.5 / ans); });
  register_unary("rsqrt", Opcode::kRsqrt, Kinds::kFloat, [](A t, A ans, A x) { return t * (ans / x * -0.5); });
  register_unary("cbrt", Opcode::kCbrt, Kinds::kFloat, [](A t, A ans, A) { return t / (ans * ans * 3.0); });
  register_unary("tanh", Opcode::kTanh, Kinds::kFloat, [](A t, A ans, A) { return t * ((ans + 1.0) * (1.0 - ans)); });
  register_unary("logistic", Opcode::kLogistic, Kinds::kFloat, [](A t, A ans, A) { return t * (ans * (1.0 - ans)); });
  register_unary("sin", Opcode::kSin, Kinds::kFloat, [](A t, A, A x) { return t * lax::cos(x); });
  register_unary("cos", Opcode::kCos, Kinds::kFloat, [](A t, A, A x) { return t * -lax::sin(x); });
  register_unary("tan", Opcode::kTan, Kinds::kFloat, [](A t, A ans, A) { return t * (ans * ans + 1.0); });
  register_unary("asin", Opcode::kAsin, Kinds::kFloat, [](A t, A, A x) { return t * lax::rsqrt(1.0 - x * x); });
  register_unary("acos", Opcode::kAcos, Kinds::kFloat, [](A t, A, A x) { return t * -lax::rsqrt(1.0 - x * x); });
  register_unary("atan", Opcode::kAtan, Kinds::kFloat, [](A t, A, A x) { return t / (x * x + 1.0); });
  register_unary("sinh", Opcode::kSinh, Kinds::kFloat, [](A t, A, A x) { return t * lax::cosh(x); });
  register_unary("cosh", Opcode::kCosh, Kinds::kFloat, [](A t, A, A x) { return t * lax::sinh(x); });
  register_unary("asinh", Opcode::kAsinh, Kinds::kFloat, [](A t, A, A x) { return t * lax::rsqrt(x * x + 1.0); });
  register_unary("acosh", Opcode::kAcosh, Kinds::kFloat,
                 [](A t, A, A x) { return t * lax::rsqrt((x - 1.0) * (x + 1.0)); });
  register_unary("atanh", Opcode::kAtanh, Kinds::kFloat, [](A t, A, A x) { return t / ((x + 1.0) * (1.0 - x)); });
  register_unary("erf", Opcode::kErf, Kinds::kFloat, [](A t, A, A x) { return t * (lax::exp(-(x * x)) * M_2_SQRTPI); });
  register_unary("erfc", Opcode::kErfc, Kinds::kFloat,
                 [](A t, A, A x) { return t * (lax::exp(-(x * x)) * -M_2_SQRTPI); });
  register_unary("erf_inv", Opcode::kErfInv, Kinds::kFloat,
                 [](A t, A ans, A) { return t * (lax::exp(ans * ans) * (1.0 / M_2_SQRTPI)) /* sqrt(pi)/2 e^(y^2) */; });
  register_unary("lgamma", Opcode::kLgamma, Kinds::kFloat, [](A t, A, A x) { return t * lax::digamma(x); });
  register_unary("digamma", Opcode::kDigamma, Kinds::kFloat, [](A t, A, A x) { return t * trigamma(x); });
  register_unary("is_finite", Opcode::kIsFinite, Kinds::kFloat, nullptr, /*to_bool=*/true);
  register_unary("not", Opcode::kNot, Kinds::kIntOrBool, nullptr);
  register_unary("population_count", Opcode::kPopcnt, Kinds::kInt, nullptr);

  // exp2 x = exp(x * ln 2), as JAX lowers it.
  {
    Primitive p;
    p.name = "exp2";
    p.num_operands = 1;
    p.jvp = defjvp("exp2", {[](A t, A ans, std::span<const Array>, const Params&) { return t * (ans * M_LN2); }});
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      check_dtype("exp2", in[0], Kinds::kFloat);
      return std::vector<ShapedArray>{in[0]};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      auto s = hlo_shape(c.out_avals[0]);
      auto* ln2 = broadcast_scalar(c.comp, c.comp->add_scalar_constant(s.dtype, 0.69314718055994530942), s.dims);
      auto* m = c.comp->add(Opcode::kMultiply, s, {args[0], ln2});
      return std::vector<hlo::Instruction*>{c.comp->add(Opcode::kExp, s, {m})};
    };
    p.batch = elementwise_batch(p.name);
    register_primitive(std::move(p));
  }
  // round[rounding_method=0 (away from zero) | 1 (to nearest even)]
  {
    Primitive p;
    p.name = "round";
    p.num_operands = 1;
    p.jvp = zero_jvp("round");
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      check_dtype("round", in[0], Kinds::kFloat);
      return std::vector<ShapedArray>{in[0]};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      Opcode op = c.params.get_int("rounding_method", 0) == 1 ? Opcode::kRoundNearestEven : Opcode::kRoundNearestAfz;
      return std::vector<hlo::Instruction*>{c.comp->add(op, hlo_shape(c.out_avals[0]), {args[0]})};
    };
    p.batch = elementwise_batch(p.name);
    register_primitive(std::move(p));
  }

  // binary
  register_binary("add", Opcode::kAdd, Kinds::kAny,
                  [](A t, A, A, A) { return t; },
                  [](A t, A, A, A) { return t; }, transpose_add(1.0));
  register_binary("sub", Opcode::kSubtract, Kinds::kNumeric,
                  [](A t, A, A, A) { return t; },
                  [](A t, A, A, A) { return -t; }, transpose_add(-1.0));
  register_binary("mul", Opcode::kMultiply, Kinds::kAny,
                  [](A t, A, A, A y) { return t * y; },
                  [](A t, A, A x, A) { return x * t; }, transpose_mul);
  register_binary("div", Opcode::kDivide, Kinds::kNumeric,
                  [](A t, A, A, A y) { return t / y; },
                  [](A t, A, A x, A y) { return -t * x / (y * y); }, transpose_div);
  register_binary("rem", Opcode::kRemainder, Kinds::kNumeric,
                  [](A t, A, A, A) { return t; },
                  [](A t, A, A x, A y) { return -t * (lax::sign(x / y) * lax::floor(lax::abs(x / y))); });
  // JAX's rules for a float exponent: y x^(y-1), so NaN (0 * inf) at x = y = 0 and -inf at x = 0, y = -1; and
  // log(x) x^y with log(0) read as 0, so 0 at x = 0 where x^y is finite (NaN where it is inf). jnp::power gives
  // an integer exponent JAX's integer rule (0 where y = 0).
  register_binary("pow", Opcode::kPower, Kinds::kNumeric,
                  [](A t, A, A x, A y) { return t * (y * lax::pow(x, y - 1.0)); },
                  [](A t, A ans, A x, A) { return t * (lax::log(replace_zero(x)) * ans); });
  register_binary("max", Opcode::kMaximum, Kinds::kAny,
                  [](A t, A ans, A x, A y) { return t * balanced_eq(x, ans, y); },
                  [](A t, A ans, A x, A y) { return t * balanced_eq(y, ans, x); });
  register_binary("min", Opcode::kMinimum, Kinds::kAny,
                  [](A t, A ans, A x, A y) { return t * balanced_eq(x, ans, y); },
                  [](A t, A ans, A x, A y) { return t * balanced_eq(y, ans, x); });
  register_binary("atan2", Opcode::kAtan2, Kinds::kFloat,
                  [](A t, A, A x, A y) { return t * (y / (x * x + y * y)); },
                  [](A t, A, A x, A y) { return t * (-x / (x * x + y * y)); });
  register_binary("and", Opcode::kAnd, Kinds::kIntOrBool, nullptr, nullptr);
  register_binary("or", Opcode::kOr, Kinds::kIntOrBool, nullptr, nullptr);
  register_binary("xor", Opcode::kXor, Kinds::kIntOrBool, nullptr, nullptr);
  register_binary("shift_left", Opcode::kShiftLeft, Kinds::kInt, nullptr, nullptr);
  register_binary("shift_right_arithmetic", Opcode::kShiftRightArithmetic, Kinds::kInt, nullptr, nullptr);
  register_binary("shift_right_logical", Opcode::kShiftRightLogical, Kinds::kInt, nullptr, nullptr);
  register_binary("eq", Opcode::kCompare, Kinds::kAny, nullptr, nullptr, nullptr, "EQ");
  register_binary("ne", Opcode::kCompare, Kinds::kAny, nullptr, nullptr, nullptr, "NE");
  register_binary("lt", Opcode::kCompare, Kinds::kAny, nullptr, nullptr, nullptr, "LT");
  register_binary("le", Opcode::kCompare, Kinds::kAny, nullptr, nullptr, nullptr, "LE");
  register_binary("gt", Opcode::kCompare, Kinds::kAny, nullptr, nullptr, nullptr, "GT");
  register_binary("ge", Opcode::kCompare, Kinds::kAny, nullptr, nullptr, nullptr, "GE");

  // select_n(which, case0, case1): case1 where `which` is true.
  {
    Primitive p;
    p.name = "select_n";
    // JVP: the same selection of the cases' tangents. Transpose (predicate known): each case gets ct where chosen.
    p.jvp = [](std::span<const Array> x, std::span<const Array> t, const Params&) {
      Array out = lax::select_n(x[0], x[1], x[2]);
      if (!t[1].valid() && !t[2].valid()) return JvpResult{{out}, {Array()}};
      return JvpResult{{out}, {lax::select_n(x[0], instantiate(t[1], x[1].aval()), instantiate(t[2], x[2].aval()))}};
    };
    p.transpose = [](std::span<const Array> ct, std::span<const LinearArg> args, const Params&) {
      if (args[0].is_linear()) not_differentiable("select_n", "its predicate must be known to transpose it");
      Array z = zeros_like_aval(ct[0].aval());
      return std::vector<Array>{Array(), args[1].is_linear() ? lax::select_n(args[0].value, ct[0], z) : Array(),
                                args[2].is_linear() ? lax::select_n(args[0].value, z, ct[0]) : Array()};
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      if (in.size() != 3)
        throw_error<TypeError>("select_n", "takes a predicate and two cases, got {} operands", in.size());
      if (in[0].dtype != DType::bool_)
        throw_error<TypeError>("select_n", "the predicate must be bool or an integer, got {}", dtype_name(in[0].dtype));
      if (in[1].dtype != in[2].dtype || in[1].shape != in[2].shape)
        throw_error<TypeError>("select_n", "both cases must have the same type, got {} and {}", in[1].str(),
                               in[2].str());
      if (!in[0].shape.empty() && in[0].shape != in[1].shape)
        throw_error<ShapeError>("select_n", "the predicate must be a scalar or have the cases' shape {}, got {}",
                                shape_str(in[1].shape), shape_str(in[0].shape));
      ShapedArray out = in[1];
      out.weak_type = in[1].weak_type && in[2].weak_type;
      return std::vector<ShapedArray>{out};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      auto s = hlo_shape(c.out_avals[0]);
      auto* pred = broadcast_scalar(c.comp, args[0], s.dims);
      return std::vector<hlo::Instruction*>{c.comp->add(Opcode::kSelect, s, {pred, args[2], args[1]})};
    };
    p.batch = elementwise_batch(p.name);
    register_primitive(std::move(p));
  }
  // clamp(lo, x, hi)
  {
    Primitive p;
    p.name = "clamp";
    p.num_operands = 3;
    // JAX's rules: each bound's tangent flows where that bound is active, x's where it lies strictly inside.
    p.jvp = defjvp("clamp", {
        [](A t, A, std::span<const Array> v, const Params&) {
          return jnp::where(jnp::logical_and(v[0] > v[1], v[0] < v[2]), t, Array(0.0));
        },
        [](A t, A, std::span<const Array> v, const Params&) {
          return jnp::where(jnp::logical_and(v[1] > v[0], v[1] < v[2]), t, Array(0.0));
        },
        [](A t, A, std::span<const Array> v, const Params&) { return jnp::where(v[2] < v[1], t, Array(0.0)); }});
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      const auto &lo = in[0], &x = in[1], &hi = in[2];
      if (lo.dtype != x.dtype || hi.dtype != x.dtype)
        throw_error<TypeError>("clamp", "operands must share a dtype, got {}, {}, {}", dtype_name(lo.dtype),
                               dtype_name(x.dtype), dtype_name(hi.dtype));
      for (auto* b : {&lo, &hi})
        if (!b->shape.empty() && b->shape != x.shape)
          throw_error<ShapeError>("clamp", "bounds must be scalars or have the operand's shape {}, got {}",
                                  shape_str(x.shape), shape_str(b->shape));
      check_dtype("clamp", x, Kinds::kNumeric);
      return std::vector<ShapedArray>{x};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      return std::vector<hlo::Instruction*>{
          c.comp->add(Opcode::kClamp, hlo_shape(c.out_avals[0]), {args[0], args[1], args[2]})};
    };
    p.batch = elementwise_batch(p.name);
    register_primitive(std::move(p));
  }
  // convert_element_type[new_dtype weak_type]
  {
    Primitive p;
    p.name = "convert_element_type";
    p.num_operands = 1;
    // Float -> float carries the tangent across (integer sides have none); the transpose converts back.
    p.jvp = [](std::span<const Array> x, std::span<const Array> t, const Params& ps) {
      static const auto& self = *find_primitive("convert_element_type");
      Array out = bind1(self, {x[0]}, ps);
      if (!is_floating(out.dtype()) || !t[0].valid()) return JvpResult{{out}, {Array()}};
      return JvpResult{{out}, {bind1(self, {t[0]}, Params{{"new_dtype", out.dtype()}, {"weak_type", false}})}};
    };
    p.transpose = [](std::span<const Array> ct, std::span<const LinearArg> args, const Params&) {
      static const auto& self = *find_primitive("convert_element_type");
      const auto& av = args[0].aval;
      return std::vector<Array>{bind1(self, {ct[0]}, Params{{"new_dtype", av.dtype}, {"weak_type", av.weak_type}})};
    };
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      return std::vector<ShapedArray>{ShapedArray{in[0].shape, ps.get_dtype("new_dtype"), ps.get_bool("weak_type")}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      if (c.in_avals[0].dtype == c.out_avals[0].dtype) return std::vector<hlo::Instruction*>{args[0]};
      return std::vector<hlo::Instruction*>{c.comp->add(Opcode::kConvert, hlo_shape(c.out_avals[0]), {args[0]})};
    };
    p.batch = elementwise_batch(p.name);
    register_primitive(std::move(p));
  }
  // bitcast_convert_type[new_dtype]: same bit width only (lax::bitcast_convert_type builds other widths of it).
  {
    Primitive p;
    p.name = "bitcast_convert_type";
    p.num_operands = 1;
    p.jvp = zero_jvp("bitcast_convert_type");
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      DType nd = ps.get_dtype("new_dtype");
      if (!is_valid_dtype(nd))
        throw_error<TypeError>("bitcast_convert_type", "got DType({}), which is not a jitx dtype",
                               static_cast<int>(nd));
      if (dtype_size(nd) != dtype_size(in[0].dtype) || is_bool(nd) || is_bool(in[0].dtype))
        throw_error<TypeError>("bitcast_convert_type",
                               "can only reinterpret between non-bool dtypes of the same width, got {} -> {}",
                               dtype_name(in[0].dtype), dtype_name(nd));
      return std::vector<ShapedArray>{ShapedArray{in[0].shape, nd, false}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      return std::vector<hlo::Instruction*>{c.comp->add(Opcode::kBitcastConvert, hlo_shape(c.out_avals[0]), {args[0]})};
    };
    p.batch = elementwise_batch(p.name);
    register_primitive(std::move(p));
  }
  // stop_gradient: the identity, with a zero tangent (a primitive, so jaxprs that are differentiated later keep it).
  {
    Primitive p;
    p.name = "stop_gradient";
    p.num_operands = 1;
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) { return std::vector<ShapedArray>{in[0]}; };
    p.lower = [](LowerCtx&, std::span<hlo::Instruction* const> args) {
      return std::vector<hlo::Instruction*>{args[0]};
    };
    p.jvp = zero_jvp("stop_gradient");
    p.batch = elementwise_batch(p.name);
    register_primitive(std::move(p));
  }
  return true;
}();
}  // namespace
}  // namespace jitx::detail
