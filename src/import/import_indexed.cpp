// The StableHLO importer's ops with dimension numbers, windows or sizes: gather, convolution (pretty
// `dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {...}` and generic `#stablehlo.conv<...>`), pad,
// dynamic_slice, dynamic_update_slice, top_k, and the ops jitx has no counterpart for (clear errors).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "import/stablehlo_import.h"

namespace jitx::import {
using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

namespace {

bool flag_attr(const OpSyntax& op, const char* key) {
  auto* a = op_attr(op, {key});
  return a && a->find("true") != std::string::npos;
}

std::vector<Instruction*> build_gather(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 2 || op.result_types.size() != 1) op_bad(op, "expected (operand, indices) -> one result");
  const std::string* dn = op_attr(op, {"dimension_numbers"});
  if (!dn) op_bad(op, "expected dimension_numbers");
  hlo::GatherDimensionNumbers g;
  g.offset_dims = attr_field(*dn, "offset_dims");
  g.collapsed_slice_dims = attr_field(*dn, "collapsed_slice_dims");
  g.operand_batching_dims = attr_field(*dn, "operand_batching_dims");
  g.start_indices_batching_dims = attr_field(*dn, "start_indices_batching_dims");
  g.start_index_map = attr_field(*dn, "start_index_map");
  auto ivd = attr_field(*dn, "index_vector_dim");  // absent: 0 (MLIR leaves the default out)
  g.index_vector_dim = ivd.empty() ? 0 : ivd[0];
  const std::string* ss = op_attr(op, {"slice_sizes"});
  if (!ss) op_bad(op, "expected slice_sizes");
  g.slice_sizes = ints_of(*ss);
  g.indices_are_sorted = flag_attr(op, "indices_are_sorted");
  return {comp.add(Opcode::kGather, shape_of(op.result_types[0]), op.operands, hlo::to_params(g))};
}

/// "[b, 0, 1, f]" -> the axes of (first label, second label, spatial 0, 1, ...).
std::vector<int64_t> conv_spec(const OpSyntax& op, std::string_view raw, char first, char second) {
  std::vector<std::string> labels;
  std::string cur;
  for (char ch : raw) {
    if (ch == '[' || ch == ' ') continue;
    if (ch == ',' || ch == ']') {
      labels.push_back(cur);
      cur.clear();
      continue;
    }
    cur += ch;
  }
  size_t rank = labels.size();
  std::vector<int64_t> spec(rank, -1);
  for (size_t k = 0; k < rank; ++k) {
    const std::string& l = labels[k];
    int64_t slot = -1;
    if (l.size() == 1 && l[0] == first)
      slot = 0;
    else if (l.size() == 1 && l[0] == second)
      slot = 1;
    else if (!l.empty() && l.size() < 4 &&
             std::all_of(l.begin(), l.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
      slot = 2 + std::stoll(l);
    if (slot < 0 || slot >= static_cast<int64_t>(rank) || spec[slot] != -1)
      op_bad(op, fmt::format("a dimension label `{}` in {} (expected {}, {} and spatial axes 0..{})", l, raw, first,
                             second, static_cast<int64_t>(rank) - 3));
    spec[slot] = static_cast<int64_t>(k);
  }
  return spec;
}

/// The raw value of `key = ...` (a bracket group or a word) inside a `{...}` or `#x<...>` attribute.
std::string sub_value(const std::string& raw, std::string_view key) {
  size_t p = 0;
  while ((p = raw.find(key, p)) != std::string::npos) {
    bool start = p == 0 || !(std::isalnum(static_cast<unsigned char>(raw[p - 1])) || raw[p - 1] == '_');
    size_t e = p + key.size();
    while (e < raw.size() && raw[e] == ' ') ++e;
    if (start && e < raw.size() && raw[e] == '=') {
      size_t b = raw.find_first_not_of(' ', e + 1);
      if (b == std::string::npos) return "";
      int depth = 0;
      size_t k = b;
      for (; k < raw.size(); ++k) {
        char ch = raw[k];
        if (ch == '[' || ch == '(' || ch == '<') ++depth;
        if (ch == ']' || ch == ')' || ch == '>') {
          if (depth == 0) break;
          --depth;
        }
        if ((ch == ',' || ch == '}') && depth == 0) break;
      }
      return raw.substr(b, k - b);
    }
    p = e;
  }
  return "";
}

std::vector<Instruction*> build_convolution(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 2 || op.result_types.size() != 1) op_bad(op, "expected (lhs, rhs) -> one result");
  std::string dn;
  if (auto* a = op_attr(op, {"dim_numbers"}))
    dn = *a;
  else if (auto* g = op_attr(op, {"dimension_numbers"}))
    dn = *g;
  else
    op_bad(op, "expected dim_numbers or dimension_numbers");
  // [..]x[..]->[..], possibly inside #stablehlo.conv<raw ...> or #stablehlo.conv<...>.
  size_t a0 = dn.find('['), x = dn.find("]x["), arrow = dn.find("]->[");
  if (a0 == std::string::npos || x == std::string::npos || arrow == std::string::npos || x > arrow)
    op_bad(op, fmt::format("expected dimension numbers `[b, 0, f]x[0, i, o]->[b, 0, f]`, got `{}`", dn));
  size_t end = dn.find(']', arrow + 3);
  if (end == std::string::npos) op_bad(op, "an unclosed dimension-number list");
  hlo::ConvConfig c;
  auto ls = conv_spec(op, std::string_view(dn).substr(a0, x + 1 - a0), 'b', 'f');
  auto rs = conv_spec(op, std::string_view(dn).substr(x + 2, arrow + 1 - x - 2), 'o', 'i');
  auto os = conv_spec(op, std::string_view(dn).substr(arrow + 3, end + 1 - arrow - 3), 'b', 'f');
  size_t rank = op.operands[0]->shape.dims.size();
  if (ls.size() != rank || rs.size() != rank || os.size() != rank || rank < 2 ||
      op.operands[1]->shape.dims.size() != rank || shape_of(op.result_types[0]).dims.size() != rank)
    op_bad(op, fmt::format("dimension numbers `{}` for operands of rank {}", dn, rank));
  auto& d = c.dnums;
  d.input_batch_dimension = ls[0], d.input_feature_dimension = ls[1];
  d.input_spatial_dimensions.assign(ls.begin() + 2, ls.end());
  d.kernel_output_feature_dimension = rs[0], d.kernel_input_feature_dimension = rs[1];
  d.kernel_spatial_dimensions.assign(rs.begin() + 2, rs.end());
  d.output_batch_dimension = os[0], d.output_feature_dimension = os[1];
  d.output_spatial_dimensions.assign(os.begin() + 2, os.end());
  size_t ns = rank - 2;
  auto list = [&](std::string raw, const char* what, int64_t dflt) {
    auto v = raw.empty() ? std::vector<int64_t>(ns, dflt) : ints_of(raw);
    if (v.size() != ns) op_bad(op, fmt::format("expected {} values for {}, got `{}`", ns, what, raw));
    return v;
  };
  std::string strides, pad, lhs_d, rhs_d, reverse;
  if (auto* w = op_attr(op, {"window"})) {  // pretty: window = {stride = [..], pad = [[..]], lhs_dilate = ..}
    strides = sub_value(*w, "stride");
    pad = sub_value(*w, "pad");
    lhs_d = sub_value(*w, "lhs_dilate");
    rhs_d = sub_value(*w, "rhs_dilate");
    reverse = sub_value(*w, "reverse");
  } else {
    auto get = [&](const char* k) {
      auto* a = op_attr(op, {k});
      return a ? *a : std::string();
    };
    strides = get("window_strides");
    pad = get("padding");
    lhs_d = get("lhs_dilation");
    rhs_d = get("rhs_dilation");
    reverse = get("window_reversal");
  }
  if (reverse.find("true") != std::string::npos) op_unsupported(op, "with window reversal is not supported");
  c.window.strides = list(strides, "the strides", 1);
  c.window.base_dilations = list(lhs_d, "the lhs dilation", 1);
  c.window.window_dilations = list(rhs_d, "the rhs dilation", 1);
  std::vector<int64_t> pv = pad.empty() ? std::vector<int64_t>(2 * ns, 0) : ints_of(pad);
  if (pv.size() == 1) pv.assign(2 * ns, pv[0]);
  if (pv.size() != 2 * ns) op_bad(op, fmt::format("expected {} padding pairs, got `{}`", ns, pad));
  for (size_t k = 0; k < ns; ++k) {
    c.window.padding.push_back({pv[2 * k], pv[2 * k + 1]});
    c.window.dimensions.push_back(op.operands[1]->shape.dims.at(d.kernel_spatial_dimensions[k]));
  }
  auto count = [&](const char* k) {
    auto* a = op_attr(op, {k});
    if (!a) return int64_t{1};
    auto v = ints_of(*a);
    if (v.size() != 1) op_bad(op, fmt::format("expected one integer for {}", k));
    return v[0];
  };
  c.feature_group_count = count("feature_group_count");
  c.batch_group_count = count("batch_group_count");
  return {comp.add(Opcode::kConvolution, shape_of(op.result_types[0]), op.operands, hlo::to_params(c))};
}

std::vector<Instruction*> build_pad(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 2 || op.result_types.size() != 1) op_bad(op, "expected (operand, padding value)");
  size_t rank = op.operands[0]->shape.dims.size();
  auto list = [&](std::initializer_list<std::string_view> keys) {
    auto* a = op_attr(op, keys);
    if (!a) op_bad(op, fmt::format("expected {}", *keys.begin()));
    auto v = ints_of(*a);
    if (v.size() != rank) op_bad(op, fmt::format("expected {} values for {}", rank, *keys.begin()));
    return v;
  };
  hlo::PaddingConfig p;
  p.low = list({"low", "edge_padding_low"});
  p.high = list({"high", "edge_padding_high"});
  p.interior = list({"interior", "interior_padding"});
  return {comp.add(Opcode::kPad, shape_of(op.result_types[0]), op.operands, hlo::to_params(p))};
}

void check_indices(const OpSyntax& op, size_t first, size_t rank) {
  if (op.operands.size() != first + rank)
    op_bad(op, fmt::format("expected {} scalar start indices, got {}", rank,
                           op.operands.size() < first ? 0 : op.operands.size() - first));
  for (size_t k = first; k < op.operands.size(); ++k) {
    const auto& s = op.operands[k]->shape;
    if (!s.dims.empty() || s.is_tuple || !(is_signed_integer(s.dtype) || is_unsigned_integer(s.dtype)))
      op_bad(op, fmt::format("start index {} is {}, expected an integer scalar", k - first, s.str()));
  }
}

std::vector<Instruction*> build_dynamic_slice(Computation& comp, OpSyntax& op) {
  if (op.operands.empty() || op.result_types.size() != 1) op_bad(op, "expected an operand and start indices");
  size_t rank = op.operands[0]->shape.dims.size();
  check_indices(op, 1, rank);
  auto sizes = ints_of(*[&] {
    auto* a = op_attr(op, {"sizes", "slice_sizes"});
    if (!a) op_bad(op, "expected sizes");
    return a;
  }());
  hlo::Shape r = shape_of(op.result_types[0]);
  if (sizes != r.dims) op_bad(op, "the sizes differ from the result's shape");
  for (size_t k = 0; k < rank; ++k)
    if (sizes[k] < 0 || sizes[k] > op.operands[0]->shape.dims[k])
      op_bad(op, fmt::format("slice size {} exceeds the operand's extent {}", sizes[k], op.operands[0]->shape.dims[k]));
  return {comp.add(Opcode::kDynamicSlice, r, op.operands)};
}

std::vector<Instruction*> build_dynamic_update_slice(Computation& comp, OpSyntax& op) {
  if (op.operands.size() < 2 || op.result_types.size() != 1) op_bad(op, "expected an operand, an update, indices");
  size_t rank = op.operands[0]->shape.dims.size();
  check_indices(op, 2, rank);
  if (op.operands[1]->shape.dims.size() != rank) op_bad(op, "the update's rank differs from the operand's");
  for (size_t k = 0; k < rank; ++k)
    if (op.operands[1]->shape.dims[k] > op.operands[0]->shape.dims[k]) op_bad(op, "the update exceeds the operand");
  return {comp.add(Opcode::kDynamicUpdateSlice, shape_of(op.result_types[0]), op.operands)};
}

std::vector<Instruction*> build_top_k(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 1 || op.result_types.size() != 2) op_bad(op, "expected one operand and two results");
  auto* k = op_attr(op, {"k"});
  if (!k) op_bad(op, "expected k");
  auto kv = ints_of(*k);
  if (kv.size() != 1) op_bad(op, "expected one integer for k");
  std::vector<hlo::Shape> shapes = {shape_of(op.result_types[0]), shape_of(op.result_types[1])};
  Instruction* t = comp.add(Opcode::kTopK, hlo::Shape::tuple(shapes), op.operands, {{"k", kv[0]}});
  return results_of(comp, t, 2);
}

// --- bit arithmetic on a float's unsigned integer image (as XLA's emitters and jitx's lax functions do) ---

DType bits_type(DType d) {
  size_t n = dtype_size(d);
  return n == 2 ? DType::uint16 : n == 4 ? DType::uint32 : DType::uint64;
}

/// The unsigned constant v (exact for any 64-bit pattern) broadcast to dims.
Instruction* ucst(Computation& comp, DType u, uint64_t v, const std::vector<int64_t>& dims) {
  auto lit = detail::Literal::make(u, {});
  lit.set_u64(0, v);
  Instruction* c = comp.add_constant(std::move(lit));
  if (dims.empty()) return c;
  return comp.add(Opcode::kBroadcastInDim, hlo::Shape(u, dims), {c},
                  {{"broadcast_dimensions", std::vector<int64_t>{}}});
}

struct Bits {
  Computation& comp;
  hlo::Shape shape;  // the float shape
  DType u;
  hlo::Shape us() const { return hlo::Shape(u, shape.dims); }
  hlo::Shape ps() const { return hlo::Shape(DType::bool_, shape.dims); }
  Instruction* k(uint64_t v) { return ucst(comp, u, v, shape.dims); }
  Instruction* op(Opcode o, Instruction* a, Instruction* b) { return comp.add(o, us(), {a, b}); }
  Instruction* cmp(hlo::ComparisonDirection d, Instruction* a, Instruction* b) {
    hlo::ComparisonType t = is_floating(a->shape.dtype) ? hlo::ComparisonType::kFloat : hlo::ComparisonType::kUnsigned;
    return comp.add(Opcode::kCompare, ps(), {a, b}, hlo::to_params(hlo::Comparison{d, t}));
  }
  Instruction* sel(Instruction* p, Instruction* a, Instruction* b) {
    return comp.add(Opcode::kSelect, a->shape, {p, a, b});
  }
  Instruction* to_u(Instruction* x) { return comp.add(Opcode::kBitcastConvert, us(), {x}); }
  Instruction* to_f(Instruction* x) { return comp.add(Opcode::kBitcastConvert, shape, {x}); }
  Instruction* isnan(Instruction* x) { return cmp(hlo::ComparisonDirection::kNe, x, x); }
};

/// chlo.next_after(x, y): the float after x in y's direction (lax.nextafter's bit arithmetic).
std::vector<Instruction*> build_next_after(Computation& comp, OpSyntax& op) {
  using D = hlo::ComparisonDirection;
  if (op.operands.size() != 2 || op.result_types.size() != 1) op_bad(op, "expected two operands and one result");
  Instruction *x = op.operands[0], *y = op.operands[1];
  if (!is_floating(x->shape.dtype) || !x->shape.same_type(y->shape))
    op_bad(op, fmt::format("expected two float operands of one type, got {} and {}", x->shape.str(), y->shape.str()));
  Bits b{comp, x->shape, bits_type(x->shape.dtype)};
  int nbits = static_cast<int>(dtype_size(x->shape.dtype)) * 8;
  Instruction *xi = b.to_u(x), *yi = b.to_u(y);
  Instruction* zero = comp.add(Opcode::kBroadcastInDim, x->shape, {comp.add_scalar_constant(x->shape.dtype, 0)},
                               {{"broadcast_dimensions", std::vector<int64_t>{}}});
  Instruction* away = comp.add(Opcode::kCompare, b.ps(), {b.cmp(D::kLt, x, y), b.cmp(D::kGt, x, zero)},
                               hlo::to_params(hlo::Comparison{D::kEq, hlo::ComparisonType::kUnsigned}));
  Instruction* stepped = b.sel(away, b.op(Opcode::kAdd, xi, b.k(1)), b.op(Opcode::kSubtract, xi, b.k(1)));
  Instruction* tiny = b.op(Opcode::kOr, b.op(Opcode::kAnd, yi, b.k(uint64_t{1} << (nbits - 1))), b.k(1));
  Instruction* r = b.sel(b.cmp(D::kEq, x, zero), tiny, stepped);
  r = b.sel(b.cmp(D::kEq, x, y), yi, r);
  Instruction* nan = comp.add(Opcode::kOr, b.ps(), {b.isnan(x), b.isnan(y)});
  r = b.sel(nan, b.to_u(comp.add(Opcode::kAdd, x->shape, {x, y})), r);
  return {b.to_f(r)};
}

/// stablehlo.reduce_precision (`format = e5m10` or exponent_bits/mantissa_bits): round to nearest even at the last
/// kept mantissa bit, out-of-range exponents to signed infinities or zeros, NaNs stay NaN.
std::vector<Instruction*> build_reduce_precision(Computation& comp, OpSyntax& op) {
  using D = hlo::ComparisonDirection;
  if (op.operands.size() != 1 || op.result_types.size() != 1) op_bad(op, "expected one operand");
  Instruction* x = op.operands[0];
  if (!is_floating(x->shape.dtype)) op_bad(op, "expected a float operand");
  int64_t ebits = -1, mbits = -1;
  if (auto* f = op_attr(op, {"format"})) {
    auto v = ints_of(*f);
    if (v.size() == 2) ebits = v[0], mbits = v[1];
    // `e5m10`: ints_of skips the letters-glued digits, so read them by hand
    if (v.size() != 2 && f->size() >= 4 && (*f)[0] == 'e' && f->find('m') != std::string::npos) {
      ebits = std::atoll(f->c_str() + 1);
      mbits = std::atoll(f->c_str() + f->find('m') + 1);
    }
  } else {
    if (auto* e = op_attr(op, {"exponent_bits"})) ebits = ints_of(*e).empty() ? -1 : ints_of(*e)[0];
    if (auto* m = op_attr(op, {"mantissa_bits"})) mbits = ints_of(*m).empty() ? -1 : ints_of(*m)[0];
  }
  DType d = x->shape.dtype;
  int src_exp = d == DType::float64 ? 11 : d == DType::float32 ? 8 : d == DType::bfloat16 ? 8 : 5;
  int src_mant = d == DType::float64 ? 52 : d == DType::float32 ? 23 : d == DType::bfloat16 ? 7 : 10;
  if (ebits < 1 || mbits < 0 || ebits > 60 || mbits > 60)
    op_bad(op, "expected exponent_bits >= 1 and mantissa_bits >= 0");
  int nbits = static_cast<int>(dtype_size(d)) * 8;
  Bits b{comp, x->shape, bits_type(d)};
  Instruction* xi = b.to_u(x);
  if (mbits < src_mant) {
    int shift = src_mant - static_cast<int>(mbits);
    uint64_t last = uint64_t{1} << shift;
    Instruction* last_bit = b.op(Opcode::kShiftRightLogical, b.op(Opcode::kAnd, xi, b.k(last)), b.k(shift));
    Instruction* bias = b.op(Opcode::kAdd, last_bit, b.k((last >> 1) - 1));
    xi = b.op(Opcode::kAnd, b.op(Opcode::kAdd, xi, bias), b.k(~(last - 1)));
  }
  if (ebits < src_exp) {
    uint64_t sign_mask = uint64_t{1} << (nbits - 1);
    uint64_t exp_mask = ((uint64_t{1} << src_exp) - 1) << src_mant;
    uint64_t bias = (uint64_t{1} << (src_exp - 1)) - 1, reduced = (uint64_t{1} << (ebits - 1)) - 1;
    Instruction* e = b.op(Opcode::kAnd, xi, b.k(exp_mask));
    Instruction* over = b.cmp(D::kGt, e, b.k((bias + reduced) << src_mant));
    Instruction* under = b.cmp(D::kLe, e, b.k((bias - reduced) << src_mant));
    Instruction* signed_zero = b.op(Opcode::kAnd, xi, b.k(sign_mask));
    Instruction* signed_inf = b.op(Opcode::kOr, signed_zero, b.k(exp_mask));
    xi = b.sel(over, signed_inf, b.sel(under, signed_zero, xi));
  }
  Instruction* r = b.to_f(xi);
  return {b.sel(b.isnan(x), x, r)};
}
}  // namespace

std::vector<Instruction*> build_indexed_op(Computation& comp, OpSyntax& op, bool* handled) {
  *handled = true;
  const std::string& n = op.name;
  if (n == "stablehlo.gather") return build_gather(comp, op);
  if (n == "stablehlo.convolution") return build_convolution(comp, op);
  if (n == "stablehlo.pad") return build_pad(comp, op);
  if (n == "stablehlo.dynamic_slice") return build_dynamic_slice(comp, op);
  if (n == "stablehlo.dynamic_update_slice") return build_dynamic_update_slice(comp, op);
  if (n == "chlo.top_k") return build_top_k(comp, op);
  if (n == "chlo.square") {
    if (op.operands.size() != 1 || op.result_types.size() != 1) op_bad(op, "expected one operand");
    return {comp.add(Opcode::kMultiply, shape_of(op.result_types[0]), {op.operands[0], op.operands[0]})};
  }
  if (n == "stablehlo.rng_bit_generator") return build_rng_bit_generator(comp, op);
  if (n == "stablehlo.rng")
    op_unsupported(op, "is not supported (a stateful RNG with no defined bits; JAX emits rng_bit_generator)");
  if (n == "chlo.next_after") return build_next_after(comp, op);
  if (n == "stablehlo.reduce_precision") return build_reduce_precision(comp, op);
  if (n == "stablehlo.fft" || n == "stablehlo.triangular_solve" || n == "stablehlo.cholesky" ||
      n == "stablehlo.all_reduce" || n == "stablehlo.all_gather" || n == "stablehlo.reduce_scatter" ||
      n == "stablehlo.collective_permute" || n == "stablehlo.all_to_all" || n == "stablehlo.batch_norm_inference" ||
      n == "stablehlo.batch_norm_training")
    op_unsupported(op, "is not supported by import_stablehlo (jitx has no such op)");
  *handled = false;
  return {};
}

}  // namespace jitx::import
