// Named attributes: comparison directions and types, reducers, fusion kinds, and the one-value attributes.
#include <string>

#include "hlo/ir/attribute_util.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"

namespace jitx::hlo {
using detail::Params;
namespace {
using Ints = std::vector<int64_t>;
using namespace attribute_util;

const std::string& reducer_text(const Instruction& i) { return required<std::string>(i, "reducer", "a name"); }

constexpr std::string_view kReducerNames[] = {"add", "mul", "max", "min", "and", "or", "argmax", "argmin", "replace"};
constexpr std::string_view kDirectionNames[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
constexpr std::string_view kTypeNames[] = {"FLOAT", "SIGNED", "UNSIGNED"};
constexpr std::string_view kFusionKindNames[] = {"kLoop", "kInput", "kOutput", "kRow"};

/// The index of `name` in `names`, or -1.
template <size_t N>
int index_in(const std::string_view (&names)[N], std::string_view name) {
  for (size_t k = 0; k < N; ++k)
    if (names[k] == name) return static_cast<int>(k);
  return -1;
}
}  // namespace

// --- compare ------------------------------------------------------------------------------------------

std::string_view comparison_direction_name(ComparisonDirection d) { return kDirectionNames[static_cast<int>(d)]; }
std::string_view comparison_type_name(ComparisonType t) { return kTypeNames[static_cast<int>(t)]; }

Comparison Comparison::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kCompare});
  Comparison c;
  const std::string& dir = required<std::string>(i, "direction", "a direction");
  int d = index_in(kDirectionNames, dir);
  if (d < 0) bad(i, fmt::format("direction={} is not one of EQ, NE, GE, GT, LE, LT", dir));
  c.direction = static_cast<ComparisonDirection>(d);
  DType in = i.operand(0)->shape.dtype;
  c.type = is_floating(in) ? ComparisonType::kFloat : is_signed_integer(in) ? ComparisonType::kSigned
                                                                            : ComparisonType::kUnsigned;
  if (const std::string* t = find_attr<std::string>(i, "compare_type", "a comparison type")) {
    int k = index_in(kTypeNames, *t);
    if (k < 0) bad(i, fmt::format("compare_type={} is not one of FLOAT, SIGNED, UNSIGNED", *t));
    if (static_cast<ComparisonType>(k) != c.type)
      bad(i, fmt::format("compare_type={} does not suit {} operands", *t, hlo_dtype_name(in)));
  }
  return c;
}

void Comparison::set_on(Params& attrs) const {
  attrs.set("direction", std::string(comparison_direction_name(direction)));
  attrs.set("compare_type", std::string(comparison_type_name(type)));
}

std::string Comparison::str() const {
  return fmt::format("direction={}, type={}", comparison_direction_name(direction), comparison_type_name(type));
}

Comparison Comparison::parse(std::string_view text) {
  TextFields f(text);
  std::string_view dir = f.need("direction"), type = f.need("type");
  f.finish();
  int d = index_in(kDirectionNames, dir), t = index_in(kTypeNames, type);
  if (d < 0) bad_text(text, fmt::format("direction {} is not one of EQ, NE, GE, GT, LE, LT", dir));
  if (t < 0) bad_text(text, fmt::format("type {} is not one of FLOAT, SIGNED, UNSIGNED", type));
  return Comparison{static_cast<ComparisonDirection>(d), static_cast<ComparisonType>(t)};
}

bool Comparison::holds(int order, bool unordered) const {
  if (unordered) return direction == ComparisonDirection::kNe;
  switch (direction) {
    case ComparisonDirection::kEq: return order == 0;
    case ComparisonDirection::kNe: return order != 0;
    case ComparisonDirection::kGe: return order >= 0;
    case ComparisonDirection::kGt: return order > 0;
    case ComparisonDirection::kLe: return order <= 0;
    case ComparisonDirection::kLt: return order < 0;
  }
  return false;
}

// --- reducers and fusions ---------------------------------------------------------------------------------

std::string_view reducer_name(Reducer r) { return kReducerNames[static_cast<int>(r)]; }

Reducer reducer_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kReduce, Opcode::kReduceWindow, Opcode::kScatter, Opcode::kAllReduce,
                    Opcode::kReduceScatter, Opcode::kAllReduceStart, Opcode::kReduceScatterStart});
  const std::string& name = reducer_text(i);
  int k = index_in(kReducerNames, name);
  auto r = static_cast<Reducer>(std::max(k, 0));
  bool ok = k >= 0;
  if (i.opcode == Opcode::kScatter) ok = ok && (r == Reducer::kReplace || r <= Reducer::kMin);
  else if (i.opcode != Opcode::kReduce)  // reduce-window and the collectives
    ok = ok && r <= Reducer::kOr;
  else ok = ok && r != Reducer::kReplace;
  if (!ok)
    bad(i, fmt::format("reducer={} is not one {} takes ({})", name, opcode_name(i.opcode),
                       i.opcode == Opcode::kScatter        ? "add, mul, max, min, replace"
                       : i.opcode != Opcode::kReduce       ? "add, mul, max, min, and, or"
                                                           : "add, mul, max, min, and, or, argmax, argmin"));
  return r;
}

std::string_view fusion_kind_name(FusionKind k) { return kFusionKindNames[static_cast<int>(k)]; }

FusionKind fusion_kind_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kFusion});
  const std::string* kind = find_attr<std::string>(i, "kind", "a fusion kind");
  if (!kind) return FusionKind::kLoop;
  int k = index_in(kFusionKindNames, *kind);
  if (k < 0) bad(i, fmt::format("unknown fusion kind '{}'", *kind));
  return static_cast<FusionKind>(k);
}

int64_t in_place_parameter_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kFusion});
  int64_t p = int_attr(i, "in_place_parameter", -1);
  if (p < -1 || p >= static_cast<int64_t>(i.operands.size()))
    bad(i, fmt::format("in_place_parameter={} is not one of the {} operands", p, i.operands.size()));
  return p;
}

// --- one-value attributes ---------------------------------------------------------------------------------

const Ints& broadcast_dimensions_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kBroadcastInDim});
  const Ints& bd = list_attr(i, "broadcast_dimensions");
  check_size(i, "broadcast_dimensions", bd, rank_of(i, 0), "one per operand axis");
  check_axes(i, "broadcast_dimensions", bd, i.shape.rank(), "result");
  return bd;
}

const Ints& permutation_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kTranspose});
  const Ints& p = list_attr(i, "permutation");
  check_size(i, "permutation", p, rank_of(i, 0), "one per operand axis");
  check_axes(i, "permutation", p, rank_of(i, 0), "operand");
  return p;
}

const Ints& dimensions_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kReduce, Opcode::kReverse});
  const Ints& d = list_attr(i, "dimensions");
  check_axes(i, "dimensions", d, rank_of(i, 0), "operand");
  return d;
}

int64_t iota_dimension_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kIota});
  int64_t d = int_attr(i, "iota_dimension");
  if (d < 0 || d >= i.shape.rank())
    bad(i, fmt::format("iota_dimension={} is not an axis of the rank-{} result", d, i.shape.rank()));
  return d;
}

int64_t concatenate_dimension_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kConcatenate});
  int64_t d = int_attr(i, "dimension");
  if (d < 0 || d >= i.shape.rank())
    bad(i, fmt::format("dimension={} is not an axis of the rank-{} result", d, i.shape.rank()));
  return d;
}

int64_t tuple_index_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kGetTupleElement});
  int64_t k = int_attr(i, "index");
  const Shape& t = i.operand(0)->shape;
  if (!t.is_tuple || k < 0 || k >= static_cast<int64_t>(t.tuple_shapes.size()))
    bad(i, fmt::format("index={} is not an element of {}", k, t.str()));
  return k;
}

int64_t top_k_of(const Instruction& i) {
  expect_opcode(i, {Opcode::kTopK});
  int64_t k = int_attr(i, "k");
  const Shape& x = i.operand(0)->shape;
  if (x.rank() < 1 || k < 0 || k > x.dims.back())
    bad(i, fmt::format("k={} is not in 0..{} (the last axis of {})", k, x.rank() ? x.dims.back() : 0, x.str()));
  return k;
}

}  // namespace jitx::hlo
