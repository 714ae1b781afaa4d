// The StableHLO importer's ops: each OpSyntax becomes hlo instructions (the inverse of lowering/stablehlo_*.cpp),
// with constants in every dense<...> form.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "import/stablehlo_import.h"
#include "jitx/parse_error.h"

namespace jitx::import {
using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

hlo::Shape shape_of(const TensorType& t) { return hlo::Shape(t.dtype, t.dims); }

std::vector<int64_t> ints_of(std::string_view raw) {
  // Drop a trailing `: type` and an `array<i64:` prefix; then every integer in order.
  if (auto p = raw.find("array<"); p != std::string_view::npos) {
    auto colon = raw.find(':', p);
    raw = colon == std::string_view::npos ? std::string_view() : raw.substr(colon + 1);
  } else if (auto q = raw.rfind(" : "); q != std::string_view::npos) {
    raw = raw.substr(0, q);
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < raw.size();) {
    char ch = raw[k];
    bool neg = ch == '-' && k + 1 < raw.size() && std::isdigit(static_cast<unsigned char>(raw[k + 1]));
    if ((std::isdigit(static_cast<unsigned char>(ch)) || neg) &&
        (k == 0 || !std::isalnum(static_cast<unsigned char>(raw[k - 1])))) {
      size_t b = k++;
      while (k < raw.size() && std::isdigit(static_cast<unsigned char>(raw[k]))) ++k;
      if (k - b > 18) throw ParseError("import_stablehlo: an integer attribute out of range: " +
                                       std::string(raw.substr(b, k - b)), 0, 0);
      out.push_back(std::stoll(std::string(raw.substr(b, k - b))));
    } else {
      while (k < raw.size() && std::isalnum(static_cast<unsigned char>(raw[k]))) ++k;
      if (k < raw.size() && !std::isalnum(static_cast<unsigned char>(raw[k]))) ++k;
    }
  }
  return out;
}

[[noreturn]] void op_unsupported(const OpSyntax& op, std::string_view what) {
  detail::throw_error<CompileError>("import_stablehlo", "line {}: {} {}", op.at.first, op.name, what);
}
[[noreturn]] void op_bad(const OpSyntax& op, std::string_view what) {
  throw ParseError(fmt::format("import_stablehlo: line {}, column {}: {}: {}", op.at.first, op.at.second, op.name,
                               what), op.at.first, op.at.second);
}
const std::string* op_attr(const OpSyntax& op, std::initializer_list<std::string_view> keys) {
  for (auto k : keys) {
    auto it = op.attrs.find(std::string(k));
    if (it != op.attrs.end()) return &it->second;
  }
  return nullptr;
}

std::vector<Instruction*> results_of(Computation& comp, Instruction* i, size_t n) {
  if (!i->shape.is_tuple) return {i};
  std::vector<Instruction*> outs;
  for (size_t k = 0; k < n; ++k)
    outs.push_back(comp.add(Opcode::kGetTupleElement, i->shape.tuple_shapes.at(k), {i},
                            {{"index", static_cast<int64_t>(k)}}));
  return outs;
}

namespace {

[[noreturn]] void unsupported(const OpSyntax& op, std::string_view what) {
  detail::throw_error<CompileError>("import_stablehlo", "line {}: {} {}", op.at.first, op.name, what);
}
[[noreturn]] void bad(const OpSyntax& op, std::string_view what) {
  throw ParseError(fmt::format("import_stablehlo: line {}, column {}: {}: {}", op.at.first, op.at.second, op.name,
                               what), op.at.first, op.at.second);
}

const std::string* attr(const OpSyntax& op, std::initializer_list<std::string_view> keys) {
  for (auto k : keys) {
    auto it = op.attrs.find(std::string(k));
    if (it != op.attrs.end()) return &it->second;
  }
  return nullptr;
}
std::vector<int64_t> ints_attr(const OpSyntax& op, std::initializer_list<std::string_view> keys) {
  const std::string* a = attr(op, keys);
  if (!a) bad(op, fmt::format("expected the attribute {}", *keys.begin()));
  return ints_of(*a);
}
int64_t int_attr(const OpSyntax& op, std::initializer_list<std::string_view> keys) {
  auto v = ints_attr(op, keys);
  if (v.size() != 1) bad(op, fmt::format("expected one integer for {}", *keys.begin()));
  return v[0];
}

Opcode mlir_opcode(std::string_view name, bool* found) {
  *found = true;
  for (int k = 0; k < static_cast<int>(Opcode::kNumOpcodes); ++k) {
    auto op = static_cast<Opcode>(k);
    if (!hlo::opcode_mlir_name(op).empty() && hlo::opcode_mlir_name(op) == name) return op;
  }
  *found = false;
  return Opcode::kAdd;
}

void check_counts(const OpSyntax& op, size_t operands) {
  if (op.operands.size() != operands)
    bad(op, fmt::format("expected {} operand(s), got {}", operands, op.operands.size()));
  if (op.result_types.size() != 1) bad(op, fmt::format("expected one result type, got {}", op.result_types.size()));
}

/// `direction` from the pretty words (`LT`) or `#stablehlo<comparison_direction LT>`.
hlo::Comparison comparison_of(const OpSyntax& op, DType operand_dtype) {
  std::string dir, type;
  static const char* kDirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static const char* kTypes[] = {"FLOAT", "SIGNED", "UNSIGNED", "TOTALORDER", "NOTYPE"};
  auto last_word = [](const std::string& raw) {
    std::string w;
    for (size_t k = 0; k < raw.size(); ++k) {
      if (std::isalpha(static_cast<unsigned char>(raw[k]))) {
        size_t b = k;
        while (k < raw.size() && std::isalnum(static_cast<unsigned char>(raw[k]))) ++k;
        w = raw.substr(b, k - b);
      }
    }
    return w;
  };
  if (auto* a = attr(op, {"comparison_direction"})) dir = last_word(*a);
  if (auto* a = attr(op, {"compare_type"})) type = last_word(*a);
  for (auto& w : op.words) {
    for (auto* d : kDirs)
      if (w == d) dir = w;
    for (auto* t : kTypes)
      if (w == t) type = w;
  }
  hlo::Comparison c;
  bool ok = false;
  for (int k = 0; k < 6; ++k)
    if (dir == kDirs[k]) {
      c.direction = static_cast<hlo::ComparisonDirection>(k);
      ok = true;
    }
  if (!ok) bad(op, "expected a comparison direction (EQ, NE, GE, GT, LE, LT)");
  if (type == "FLOAT" || type == "TOTALORDER") c.type = hlo::ComparisonType::kFloat;
  else if (type == "SIGNED") c.type = hlo::ComparisonType::kSigned;
  else if (type == "UNSIGNED") c.type = hlo::ComparisonType::kUnsigned;
  else c.type = is_floating(operand_dtype) ? hlo::ComparisonType::kFloat
                : (is_unsigned_integer(operand_dtype) || operand_dtype == DType::bool_) ? hlo::ComparisonType::kUnsigned
                                                                                  : hlo::ComparisonType::kSigned;
  return c;
}

/// `[1] x [0]` -> ({1}, {0}).
std::pair<std::vector<int64_t>, std::vector<int64_t>> pair_lists(const OpSyntax& op, const std::string& raw) {
  auto x = raw.find("] x [");
  if (x == std::string::npos) bad(op, "expected `[...] x [...]`");
  return {ints_of(raw.substr(0, x + 1)), ints_of(raw.substr(x + 4))};
}

}  // namespace

/// The value of `key = [..]` inside a `#stablehlo.dot<...>` style attribute.
std::vector<int64_t> attr_field(const std::string& raw, std::string_view key) {
  size_t p = 0;
  while ((p = raw.find(key, p)) != std::string::npos) {
    bool start = p == 0 || !(std::isalnum(static_cast<unsigned char>(raw[p - 1])) || raw[p - 1] == '_');
    size_t e = p + key.size();
    while (e < raw.size() && raw[e] == ' ') ++e;
    if (start && e < raw.size() && raw[e] == '=') {
      size_t b = raw.find_first_not_of(' ', e + 1);
      if (b == std::string::npos) return {};
      if (raw[b] == '[') return ints_of(raw.substr(b, raw.find(']', b) - b + 1));
      size_t end = b;
      while (end < raw.size() && (std::isdigit(static_cast<unsigned char>(raw[end])) || raw[end] == '-')) ++end;
      return ints_of(raw.substr(b, end - b));
    }
    p = e;
  }
  return {};
}

hlo::Reducer reducer_of_region(const OpSyntax& op, const Computation& rc) {
  const Instruction* r = rc.root;
  if (r && r->operands.size() == 2 && r->operands[0]->opcode == Opcode::kParameter &&
      r->operands[1]->opcode == Opcode::kParameter && r->operands[0] != r->operands[1] &&
      rc.instructions.size() == 3) {
    switch (r->opcode) {
      case Opcode::kAdd: return hlo::Reducer::kAdd;
      case Opcode::kMultiply: return hlo::Reducer::kMul;
      case Opcode::kMaximum: return hlo::Reducer::kMax;
      case Opcode::kMinimum: return hlo::Reducer::kMin;
      case Opcode::kAnd: return hlo::Reducer::kAnd;
      case Opcode::kOr: return hlo::Reducer::kOr;
      default: break;
    }
  }
  if (op.name == "stablehlo.scatter" && r && r->opcode == Opcode::kParameter && r->parameter_number == 1)
    return hlo::Reducer::kReplace;
  unsupported(op, "with a region other than one add, multiply, maximum, minimum, and or or of its two arguments "
                  "is not supported yet");
}

namespace {

hlo::Reducer reducer_named(const OpSyntax& op, const std::string& name) {
  if (name == "stablehlo.add") return hlo::Reducer::kAdd;
  if (name == "stablehlo.multiply") return hlo::Reducer::kMul;
  if (name == "stablehlo.maximum") return hlo::Reducer::kMax;
  if (name == "stablehlo.minimum") return hlo::Reducer::kMin;
  if (name == "stablehlo.and") return hlo::Reducer::kAnd;
  if (name == "stablehlo.or") return hlo::Reducer::kOr;
  unsupported(op, fmt::format("applying {} is not supported yet", name));
}

Instruction* splat(Computation& comp, DType d, double v, const std::vector<int64_t>& dims) {
  Instruction* c = comp.add_scalar_constant(d, v);
  if (dims.empty()) return c;
  return comp.add(Opcode::kBroadcastInDim, hlo::Shape(d, dims), {c},
                  {{"broadcast_dimensions", std::vector<int64_t>{}}});
}

/// compare_type TOTALORDER on floats (-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN) as a signed compare of
/// the bits with the magnitude bits of negative values flipped.
Instruction* total_order_key(Computation& comp, Instruction* x) {
  int bits = static_cast<int>(dtype_size(x->shape.dtype)) * 8;
  DType it = bits == 16 ? DType::int16 : bits == 32 ? DType::int32 : DType::int64;
  const auto& dims = x->shape.dims;
  Instruction* b = comp.add(Opcode::kBitcastConvert, hlo::Shape(it, dims), {x});
  Instruction* sign = comp.add(Opcode::kShiftRightArithmetic, b->shape, {b, splat(comp, it, bits - 1, dims)});
  Instruction* mag = comp.add(Opcode::kShiftRightLogical, b->shape, {sign, splat(comp, it, 1, dims)});
  return comp.add(Opcode::kXor, b->shape, {b, mag});
}

std::vector<Instruction*> build_reduce(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 2)
    unsupported(op, "of several operands (a variadic reduce such as argmax's) is not supported yet");
  hlo::Reducer r;
  if (auto* a = attr(op, {"applies"})) r = reducer_named(op, *a);
  else if (op.regions.size() == 1) r = reducer_of_region(op, *op.regions[0]);
  else bad(op, "expected a reducer region");
  op.regions.clear();
  detail::Params p;
  p.set("dimensions", ints_attr(op, {"dimensions"}));
  p.set("reducer", std::string(hlo::reducer_name(r)));
  return {comp.add(Opcode::kReduce, shape_of(op.result_types.at(0)), op.operands, p)};
}

std::vector<Instruction*> build_dot(Computation& comp, OpSyntax& op) {
  check_counts(op, 2);
  hlo::DotDimensionNumbers dn;
  if (auto* a = attr(op, {"dot_dimension_numbers"})) {
    dn.lhs_batch_dims = attr_field(*a, "lhs_batching_dimensions");
    dn.rhs_batch_dims = attr_field(*a, "rhs_batching_dimensions");
    dn.lhs_contracting_dims = attr_field(*a, "lhs_contracting_dimensions");
    dn.rhs_contracting_dims = attr_field(*a, "rhs_contracting_dimensions");
  } else {
    if (auto* c = attr(op, {"contracting_dims"})) std::tie(dn.lhs_contracting_dims, dn.rhs_contracting_dims) =
        pair_lists(op, *c);
    if (auto* b = attr(op, {"batching_dims"})) std::tie(dn.lhs_batch_dims, dn.rhs_batch_dims) = pair_lists(op, *b);
  }
  if (attr(op, {"algorithm"})) unsupported(op, "with a dot algorithm is not supported yet");
  return {comp.add(Opcode::kDot, shape_of(op.result_types.at(0)), op.operands, hlo::to_params(dn))};
}

std::vector<Instruction*> build_slice(Computation& comp, OpSyntax& op) {
  check_counts(op, 1);
  hlo::SliceConfig s;
  if (!op.brackets.empty()) {
    // [a:b, c:d:e]
    std::string raw = op.brackets[0].substr(1, op.brackets[0].size() - 2);
    size_t b = 0;
    while (b <= raw.size() && !raw.empty()) {
      size_t e = raw.find(',', b);
      auto v = ints_of(std::string(raw.substr(b, e == std::string::npos ? std::string::npos : e - b)));
      if (v.size() < 2 || v.size() > 3) bad(op, "expected `start:limit` or `start:limit:stride` per axis");
      s.start_indices.push_back(v[0]);
      s.limit_indices.push_back(v[1]);
      s.strides.push_back(v.size() == 3 ? v[2] : 1);
      if (e == std::string::npos) break;
      b = e + 1;
    }
  } else {
    s.start_indices = ints_attr(op, {"start_indices"});
    s.limit_indices = ints_attr(op, {"limit_indices"});
    s.strides = attr(op, {"strides"}) ? ints_attr(op, {"strides"}) : std::vector<int64_t>(s.start_indices.size(), 1);
  }
  return {comp.add(Opcode::kSlice, shape_of(op.result_types.at(0)), op.operands, hlo::to_params(s))};
}

}  // namespace

std::vector<Instruction*> build_op(Computation& comp, OpSyntax& op) {
  const std::string& n = op.name;
  auto result = [&]() { return shape_of(op.result_types.at(0)); };
  for (auto& t : op.result_types)
    if (t.is_token) unsupported(op, "with a token result is not supported");
  if (n == "stablehlo.constant") {
    if (op.result_types.size() != 1) bad(op, "expected one result type");
    std::string raw = op.raw_value;
    if (raw.empty()) {
      auto* v = attr(op, {"value"});
      if (!v) bad(op, "expected a value attribute");
      raw = *v;
      if (auto q = raw.rfind(" : "); q != std::string::npos) raw = raw.substr(0, q);
    }
    Cursor c(raw, op.at.first, op.at.second);
    auto lit = dense_literal_of(c, raw, op.result_types[0]);
    return {comp.add_constant(std::move(lit))};
  }
  bool handled = false;
  auto outs = build_region_op(comp, op, &handled);
  if (handled) return outs;
  outs = build_indexed_op(comp, op, &handled);
  if (handled) return outs;
  if (n == "stablehlo.reduce") return build_reduce(comp, op);
  if (n == "stablehlo.dot_general") return build_dot(comp, op);
  if (n == "stablehlo.slice") return build_slice(comp, op);
  if (n == "stablehlo.compare") {
    check_counts(op, 2);
    auto c = comparison_of(op, op.operands[0]->shape.dtype);
    std::vector<Instruction*> operands = op.operands;
    if (auto* t = attr(op, {"compare_type"}); ((t && t->find("TOTALORDER") != std::string::npos) ||
        std::find(op.words.begin(), op.words.end(), "TOTALORDER") != op.words.end()) &&
        is_floating(operands[0]->shape.dtype)) {
      for (auto*& o : operands) o = total_order_key(comp, o);
      c.type = hlo::ComparisonType::kSigned;
    }
    return {comp.add(Opcode::kCompare, result(), operands, hlo::to_params(c))};
  }
  if (n == "stablehlo.broadcast_in_dim") {
    check_counts(op, 1);
    return {comp.add(Opcode::kBroadcastInDim, result(), op.operands,
                     {{"broadcast_dimensions", ints_attr(op, {"dims", "broadcast_dimensions"})}})};
  }
  if (n == "stablehlo.transpose") {
    check_counts(op, 1);
    return {comp.add(Opcode::kTranspose, result(), op.operands,
                     {{"permutation", ints_attr(op, {"dims", "permutation"})}})};
  }
  if (n == "stablehlo.reverse") {
    check_counts(op, 1);
    return {comp.add(Opcode::kReverse, result(), op.operands,
                     {{"dimensions", ints_attr(op, {"dims", "dimensions"})}})};
  }
  if (n == "stablehlo.iota") {
    check_counts(op, 0);
    return {comp.add(Opcode::kIota, result(), {}, {{"iota_dimension", int_attr(op, {"dim", "iota_dimension"})}})};
  }
  if (n == "stablehlo.concatenate") {
    if (op.result_types.size() != 1) bad(op, "expected one result type");
    return {comp.add(Opcode::kConcatenate, result(), op.operands,
                     {{"dimension", int_attr(op, {"dim", "dimension"})}})};
  }
  if (n == "stablehlo.reshape" || n == "stablehlo.convert" || n == "stablehlo.bitcast_convert") {
    check_counts(op, 1);
    Opcode oc = n == "stablehlo.reshape" ? Opcode::kReshape
                : n == "stablehlo.convert" ? Opcode::kConvert : Opcode::kBitcastConvert;
    return {comp.add(oc, result(), op.operands)};
  }
  if (n == "sdy.sharding_constraint" || n == "sdy.reshard") {
    check_counts(op, 1);
    return op.operands;  // one device: a sharding annotation is the identity
  }
  if (n == "stablehlo.optimization_barrier" || (n == "stablehlo.custom_call" && attr(op, {"call_target_name"}) &&
      attr(op, {"call_target_name"})->find("Sharding") != std::string::npos)) {
    // Shardings and barriers pass their operands through (values only).
    return op.operands;
  }
  if (n == "stablehlo.clamp") {
    // min and max may be scalars bounding a tensor (StableHLO allows it; jitx's clamp is elementwise).
    check_counts(op, 3);
    hlo::Shape r = result();
    for (size_t k : {size_t{0}, size_t{2}})
      if (op.operands[k]->shape.dims.empty() && !r.dims.empty())
        op.operands[k] = comp.add(Opcode::kBroadcastInDim, hlo::Shape(op.operands[k]->shape.dtype, r.dims),
                                  {op.operands[k]}, {{"broadcast_dimensions", std::vector<int64_t>{}}});
    return {comp.add(Opcode::kClamp, r, op.operands)};
  }
  if (n == "stablehlo.dot") {
    // The legacy dot: contracts the lhs's last axis with the rhs's first (vector or matrix operands).
    check_counts(op, 2);
    int64_t r0 = op.operands[0]->shape.rank(), r1 = op.operands[1]->shape.rank();
    if (r0 < 1 || r0 > 2 || r1 < 1 || r1 > 2) bad(op, "expected vector or matrix operands");
    hlo::DotDimensionNumbers dn;
    dn.lhs_contracting_dims = {r0 - 1};
    dn.rhs_contracting_dims = {0};
    return {comp.add(Opcode::kDot, result(), op.operands, hlo::to_params(dn))};
  }
  bool found = false;
  Opcode oc = mlir_opcode(n, &found);
  if (found && hlo::is_elementwise(oc) && oc != Opcode::kCompare) {
    check_counts(op, static_cast<size_t>(hlo::opcode_arity(oc)));
    return {comp.add(oc, result(), op.operands)};
  }
  if (n == "stablehlo.custom_call")
    unsupported(op, fmt::format("target {} is not one jitx knows", attr(op, {"call_target_name"})
                                                                       ? *attr(op, {"call_target_name"}) : "?"));
  unsupported(op, "is not supported by import_stablehlo yet");
}

}  // namespace jitx::import
