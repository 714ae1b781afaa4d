// Elementwise primitives: unary math, binary arithmetic/logic/comparison, select_n, clamp, conversions.
#include "core/trace.h"
#include "primitives/primitive.h"

namespace jitx::detail {
namespace {
using hlo::Opcode;

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

void register_unary(std::string name, Opcode op, Kinds k, bool to_bool = false) {
  Primitive p;
  p.name = name;
  p.abstract_eval = [name, k, to_bool](std::span<const ShapedArray> in, const Params&) {
    JITX_ASSERT(in.size() == 1, "{} takes one operand", name);
    check_dtype(name, in[0], k);
    ShapedArray out = in[0];
    if (to_bool) out = ShapedArray{in[0].shape, DType::bool_, false};
    return std::vector<ShapedArray>{out};
  };
  p.lower = [op](LowerCtx& c, std::span<hlo::Instruction* const> args) {
    return std::vector<hlo::Instruction*>{c.comp->add(op, hlo_shape(c.out_avals[0]), {args[0]})};
  };
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
    throw_error<TypeError>(op, "operands must have the same dtype, got {} and {} (jnp functions promote; lax ones do not)",
                           dtype_name(a.dtype), dtype_name(b.dtype));
  Shape s;
  if (a.shape == b.shape || b.shape.empty()) s = a.shape;
  else if (a.shape.empty()) s = b.shape;
  else
    throw_error<ShapeError>(op, "operands must have equal shapes (or one must be a scalar), got {} and {}",
                            shape_str(a.shape), shape_str(b.shape));
  return ShapedArray{s, a.dtype, a.weak_type && b.weak_type};
}

void register_binary(std::string name, Opcode op, Kinds k, std::string direction = "") {
  Primitive p;
  p.name = name;
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
  register_primitive(std::move(p));
}

const bool registered = [] {
  // unary
  register_unary("neg", Opcode::kNegate, Kinds::kNumeric);
  register_unary("abs", Opcode::kAbs, Kinds::kNumeric);
  register_unary("sign", Opcode::kSign, Kinds::kNumeric);
  register_unary("floor", Opcode::kFloor, Kinds::kFloat);
  register_unary("ceil", Opcode::kCeil, Kinds::kFloat);
  register_unary("exp", Opcode::kExp, Kinds::kFloat);
  register_unary("expm1", Opcode::kExpm1, Kinds::kFloat);
  register_unary("log", Opcode::kLog, Kinds::kFloat);
  register_unary("log1p", Opcode::kLog1p, Kinds::kFloat);
  register_unary("sqrt", Opcode::kSqrt, Kinds::kFloat);
  register_unary("rsqrt", Opcode::kRsqrt, Kinds::kFloat);
  register_unary("cbrt", Opcode::kCbrt, Kinds::kFloat);
  register_unary("tanh", Opcode::kTanh, Kinds::kFloat);
  register_unary("logistic", Opcode::kLogistic, Kinds::kFloat);
  register_unary("sin", Opcode::kSin, Kinds::kFloat);
  register_unary("cos", Opcode::kCos, Kinds::kFloat);
  register_unary("tan", Opcode::kTan, Kinds::kFloat);
  register_unary("asin", Opcode::kAsin, Kinds::kFloat);
  register_unary("acos", Opcode::kAcos, Kinds::kFloat);
  register_unary("atan", Opcode::kAtan, Kinds::kFloat);
  register_unary("sinh", Opcode::kSinh, Kinds::kFloat);
  register_unary("cosh", Opcode::kCosh, Kinds::kFloat);
  register_unary("asinh", Opcode::kAsinh, Kinds::kFloat);
  register_unary("acosh", Opcode::kAcosh, Kinds::kFloat);
  register_unary("atanh", Opcode::kAtanh, Kinds::kFloat);
  register_unary("erf", Opcode::kErf, Kinds::kFloat);
  register_unary("erfc", Opcode::kErfc, Kinds::kFloat);
  register_unary("erf_inv", Opcode::kErfInv, Kinds::kFloat);
  register_unary("lgamma", Opcode::kLgamma, Kinds::kFloat);
  register_unary("digamma", Opcode::kDigamma, Kinds::kFloat);
  register_unary("is_finite", Opcode::kIsFinite, Kinds::kFloat, /*to_bool=*/true);
  register_unary("not", Opcode::kNot, Kinds::kIntOrBool);
  register_unary("population_count", Opcode::kPopcnt, Kinds::kInt);

  // exp2 x = exp(x * ln 2), as JAX lowers it.
  {
    Primitive p;
    p.name = "exp2";
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
    register_primitive(std::move(p));
  }
  // round[rounding_method=0 (away from zero) | 1 (to nearest even)]
  {
    Primitive p;
    p.name = "round";
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      check_dtype("round", in[0], Kinds::kFloat);
      return std::vector<ShapedArray>{in[0]};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      Opcode op = c.params.get_int("rounding_method", 0) == 1 ? Opcode::kRoundNearestEven : Opcode::kRoundNearestAfz;
      return std::vector<hlo::Instruction*>{c.comp->add(op, hlo_shape(c.out_avals[0]), {args[0]})};
    };
    register_primitive(std::move(p));
  }

  // binary
  register_binary("add", Opcode::kAdd, Kinds::kAny);
  register_binary("sub", Opcode::kSubtract, Kinds::kNumeric);
  register_binary("mul", Opcode::kMultiply, Kinds::kAny);
  register_binary("div", Opcode::kDivide, Kinds::kNumeric);
  register_binary("rem", Opcode::kRemainder, Kinds::kNumeric);
  register_binary("pow", Opcode::kPower, Kinds::kNumeric);
  register_binary("max", Opcode::kMaximum, Kinds::kAny);
  register_binary("min", Opcode::kMinimum, Kinds::kAny);
  register_binary("atan2", Opcode::kAtan2, Kinds::kFloat);
  register_binary("and", Opcode::kAnd, Kinds::kIntOrBool);
  register_binary("or", Opcode::kOr, Kinds::kIntOrBool);
  register_binary("xor", Opcode::kXor, Kinds::kIntOrBool);
  register_binary("shift_left", Opcode::kShiftLeft, Kinds::kInt);
  register_binary("shift_right_arithmetic", Opcode::kShiftRightArithmetic, Kinds::kInt);
  register_binary("shift_right_logical", Opcode::kShiftRightLogical, Kinds::kInt);
  register_binary("eq", Opcode::kCompare, Kinds::kAny, "EQ");
  register_binary("ne", Opcode::kCompare, Kinds::kAny, "NE");
  register_binary("lt", Opcode::kCompare, Kinds::kAny, "LT");
  register_binary("le", Opcode::kCompare, Kinds::kAny, "LE");
  register_binary("gt", Opcode::kCompare, Kinds::kAny, "GT");
  register_binary("ge", Opcode::kCompare, Kinds::kAny, "GE");

  // select_n(which, case0, case1): case1 where `which` is true.
  {
    Primitive p;
    p.name = "select_n";
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      if (in.size() != 3)
        throw_error<TypeError>("select_n", "takes a predicate and two cases, got {} operands", in.size());
      if (in[0].dtype != DType::bool_)
        throw_error<TypeError>("select_n", "the predicate must be bool, got {}", dtype_name(in[0].dtype));
      if (in[1].dtype != in[2].dtype || in[1].shape != in[2].shape)
        throw_error<TypeError>("select_n", "both cases must have the same type, got {} and {}", in[1].str(), in[2].str());
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
    register_primitive(std::move(p));
  }
  // clamp(lo, x, hi)
  {
    Primitive p;
    p.name = "clamp";
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
    register_primitive(std::move(p));
  }
  // convert_element_type[new_dtype weak_type]
  {
    Primitive p;
    p.name = "convert_element_type";
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      return std::vector<ShapedArray>{ShapedArray{in[0].shape, ps.get_dtype("new_dtype"), ps.get_bool("weak_type")}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      if (c.in_avals[0].dtype == c.out_avals[0].dtype) return std::vector<hlo::Instruction*>{args[0]};
      return std::vector<hlo::Instruction*>{c.comp->add(Opcode::kConvert, hlo_shape(c.out_avals[0]), {args[0]})};
    };
    register_primitive(std::move(p));
  }
  // bitcast_convert_type[new_dtype]: same bit width only.
  {
    Primitive p;
    p.name = "bitcast_convert_type";
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      DType nd = ps.get_dtype("new_dtype");
      if (dtype_size(nd) != dtype_size(in[0].dtype) || is_bool(nd) || is_bool(in[0].dtype))
        throw_error<TypeError>("bitcast_convert_type",
                               "can only reinterpret between non-bool dtypes of the same width, got {} -> {}",
                               dtype_name(in[0].dtype), dtype_name(nd));
      return std::vector<ShapedArray>{ShapedArray{in[0].shape, nd, false}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> args) {
      return std::vector<hlo::Instruction*>{c.comp->add(Opcode::kBitcastConvert, hlo_shape(c.out_avals[0]), {args[0]})};
    };
    register_primitive(std::move(p));
  }
  return true;
}();
}  // namespace
}  // namespace jitx::detail
