// Printing an hlo::Module as StableHLO MLIR text (pretty forms where JAX uses them, generic forms elsewhere).
#include <bit>
#include <cmath>
#include <functional>
#include <unordered_map>

#include "core/errors.h"
#include "lowering/lower.h"

namespace jitx::detail {
namespace {
using hlo::Instruction;
using hlo::Opcode;

std::string i64_array(const std::vector<int64_t>& v) {
  if (v.empty()) return "array<i64>";
  return fmt::format("array<i64: {}>", fmt::join(v, ", "));
}

std::string scalar_type(DType d) { return fmt::format("tensor<{}>", dtype_mlir_name(d)); }

/// One element of a dense literal, in a form MLIR's parser reads back exactly.
std::string dense_elem(const Literal& l, int64_t i) {
  DType d = l.dtype;
  if (d == DType::bool_) return l.get_i64(i) ? "true" : "false";
  if (is_floating(d)) {
    double v = l.get_f64(i);
    if (!std::isfinite(v)) {
      // Non-finite floats are written as their bit patterns.
      switch (d) {
        case DType::float16: return fmt::format("0x{:04X}", float_to_half(static_cast<float>(v)));
        case DType::bfloat16: return fmt::format("0x{:04X}", float_to_bfloat16(static_cast<float>(v)));
        case DType::float32: return fmt::format("0x{:08X}", std::bit_cast<uint32_t>(static_cast<float>(v)));
        default: return fmt::format("0x{:016X}", std::bit_cast<uint64_t>(v));
      }
    }
    return d == DType::float64 ? fmt::format("{:.17e}", v) : fmt::format("{:.9e}", v);
  }
  if (d == DType::uint64) return std::to_string(l.get_u64(i));
  return std::to_string(l.get_i64(i));
}

std::string dense_literal(const Literal& l) {
  int64_t n = l.size();
  bool splat = n > 0;
  for (int64_t i = 1; i < n && splat; ++i) splat = dense_elem(l, i) == dense_elem(l, 0);
  if (splat || l.dims.empty()) return fmt::format("dense<{}>", n == 0 ? "" : dense_elem(l, 0));
  if (n == 0) return "dense<[]>";
  std::string s;
  auto strides = row_major_strides(l.dims);
  std::function<void(size_t, int64_t)> rec = [&](size_t axis, int64_t base) {
    s += "[";
    for (int64_t i = 0; i < l.dims[axis]; ++i) {
      if (i) s += ", ";
      if (axis + 1 == l.dims.size()) s += dense_elem(l, base + i);
      else rec(axis + 1, base + i * strides[axis]);
    }
    s += "]";
  };
  rec(0, 0);
  return fmt::format("dense<{}>", s);
}

std::string_view reducer_op(const std::string& r) {
  if (r == "add") return "stablehlo.add";
  if (r == "mul") return "stablehlo.multiply";
  if (r == "max") return "stablehlo.maximum";
  if (r == "min") return "stablehlo.minimum";
  if (r == "and") return "stablehlo.and";
  if (r == "or") return "stablehlo.or";
  JITX_ASSERT(false, "no StableHLO op for reducer {}", r);
  return "";
}

std::string compare_type(DType d) {
  return is_floating(d) ? "FLOAT" : is_signed_integer(d) ? "SIGNED" : "UNSIGNED";
}

/// The region of a reduce / reduce_window / scatter whose body is one binary op or an arg-reduction.
std::string reducer_region(const std::string& r, const std::vector<DType>& types, const std::string& ind) {
  std::string s = "({\n";
  if (r == "argmax" || r == "argmin") {
    DType v = types[0], k = types[1];
    std::string tv = scalar_type(v), tk = scalar_type(k), ct = compare_type(v);
    std::string dir = r == "argmax" ? "GT" : "LT";
    s += fmt::format("{}  ^bb0(%a: {}, %ai: {}, %b: {}, %bi: {}):\n", ind, tv, tk, tv, tk);
    auto cmp = [&](std::string name, std::string d, std::string x, std::string y, std::string t, std::string ty) {
      s += fmt::format("{}    %{} = \"stablehlo.compare\"(%{}, %{}) {{comparison_direction = #stablehlo<comparison_direction {}>, "
                       "compare_type = #stablehlo<comparison_type {}>}} : ({}, {}) -> tensor<i1>\n",
                       ind, name, x, y, d, t, ty, ty);
    };
    auto bin = [&](std::string name, std::string op, std::string x, std::string y) {
      s += fmt::format("{}    %{} = \"stablehlo.{}\"(%{}, %{}) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n", ind, name, op, x, y);
    };
    cmp("better", dir, "a", "b", ct, tv);
    cmp("eq", "EQ", "a", "b", ct, tv);
    cmp("first", "LT", "ai", "bi", compare_type(k), tk);
    bin("tie", "and", "eq", "first");
    bin("pick0", "or", "better", "tie");
    if (is_floating(v)) {
      // NaN wins (and the first NaN among NaNs), as jnp.argmax does.
      cmp("anan", "NE", "a", "a", ct, tv);
      cmp("bnan", "NE", "b", "b", ct, tv);
      s += fmt::format("{}    %nb = \"stablehlo.not\"(%bnan) : (tensor<i1>) -> tensor<i1>\n", ind);
      bin("a_only_nan", "and", "anan", "nb");
      bin("both_nan", "and", "anan", "bnan");
      bin("both_nan_first", "and", "both_nan", "first");
      s += fmt::format("{}    %nbo = \"stablehlo.not\"(%bnan) : (tensor<i1>) -> tensor<i1>\n", ind);
      bin("pick1", "and", "pick0", "nbo");
      bin("pick2", "or", "pick1", "a_only_nan");
      bin("pick", "or", "pick2", "both_nan_first");
    } else {
      s += fmt::format("{}    %pick = \"stablehlo.and\"(%pick0, %pick0) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n", ind);
    }
    s += fmt::format("{}    %v = \"stablehlo.select\"(%pick, %a, %b) : (tensor<i1>, {}, {}) -> {}\n", ind, tv, tv, tv);
    s += fmt::format("{}    %i = \"stablehlo.select\"(%pick, %ai, %bi) : (tensor<i1>, {}, {}) -> {}\n", ind, tk, tk, tk);
    s += fmt::format("{}    \"stablehlo.return\"(%v, %i) : ({}, {}) -> ()\n", ind, tv, tk);
  } else {
    std::string t = scalar_type(types[0]);
    s += fmt::format("{}  ^bb0(%a: {}, %b: {}):\n", ind, t, t);
    s += fmt::format("{}    %r = \"{}\"(%a, %b) : ({}, {}) -> {}\n", ind, reducer_op(r), t, t, t);
    s += fmt::format("{}    \"stablehlo.return\"(%r) : ({}) -> ()\n", ind, t);
  }
  s += ind + "})";
  return s;
}

/// The update region of a scatter: "replace" returns the update, the other kinds are reducer regions.
std::string scatter_region(const std::string& r, DType d, const std::string& ind) {
  if (r != "replace") return reducer_region(r, {d}, ind);
  std::string t = scalar_type(d);
  return fmt::format("({{\n{}  ^bb0(%a: {}, %b: {}):\n{}    \"stablehlo.return\"(%b) : ({}) -> ()\n{}}})", ind, t, t, ind, t,
                     ind);
}

/// A float NaN as an MLIR dense element (its bit pattern).
std::string nan_elem(DType d) {
  switch (d) {
    case DType::float16: return "0x7E00";
    case DType::bfloat16: return "0x7FC0";
    case DType::float32: return "0x7FC00000";
    default: return "0x7FF8000000000000";
  }
}

/// The comparator of an ascending sort on the first num_keys operands, as JAX writes it: lexicographic `lt`,
/// floats compared in TOTALORDER after mapping -0.0 to 0.0 and every NaN to one positive NaN (so NaNs sort last).
std::string sort_region(const std::vector<DType>& types, int64_t num_keys, const std::string& ind) {
  std::string s = "({\n";
  std::vector<std::string> args;
  for (size_t k = 0; k < types.size(); ++k) {
    args.push_back(fmt::format("%lhs{}: {}", k, scalar_type(types[k])));
    args.push_back(fmt::format("%rhs{}: {}", k, scalar_type(types[k])));
  }
  s += fmt::format("{}  ^bb0({}):\n", ind, fmt::join(args, ", "));
  auto line = [&](const std::string& text) { s += ind + "    " + text + "\n"; };
  auto cmp = [&](const std::string& name, const std::string& dir, const std::string& x, const std::string& y,
                 const std::string& ct, const std::string& t) {
    line(fmt::format("%{} = \"stablehlo.compare\"(%{}, %{}) {{comparison_direction = #stablehlo<comparison_direction "
                     "{}>, compare_type = #stablehlo<comparison_type {}>}} : ({}, {}) -> tensor<i1>",
                     name, x, y, dir, ct, t, t));
  };
  auto sel = [&](const std::string& name, const std::string& p, const std::string& x, const std::string& y,
                 const std::string& t) {
    line(fmt::format("%{} = \"stablehlo.select\"(%{}, %{}, %{}) : (tensor<i1>, {}, {}) -> {}", name, p, x, y, t, t, t));
  };
  for (int64_t k = 0; k < num_keys; ++k) {
    DType d = types[k];
    std::string t = scalar_type(d), ct = compare_type(d), lk = fmt::format("lhs{}", k), rk = fmt::format("rhs{}", k);
    if (is_floating(d)) {
      ct = "TOTALORDER";
      line(fmt::format("%zero{} = \"stablehlo.constant\"() {{value = dense<0.000000e+00> : {}}} : () -> {}", k, t, t));
      line(fmt::format("%nan{} = \"stablehlo.constant\"() {{value = dense<{}> : {}}} : () -> {}", k, nan_elem(d), t, t));
      for (std::string side : {"lhs", "rhs"}) {
        std::string v = fmt::format("{}{}", side, k);
        cmp(v + "_z", "EQ", v, fmt::format("zero{}", k), "FLOAT", t);
        sel(v + "_nz", v + "_z", fmt::format("zero{}", k), v, t);
        cmp(v + "_n", "NE", v, v, "FLOAT", t);
        sel(v + "_key", v + "_n", fmt::format("nan{}", k), v + "_nz", t);
      }
      lk += "_key";
      rk += "_key";
    }
    cmp(fmt::format("lt{}", k), "LT", lk, rk, ct, t);
    if (k + 1 < num_keys) cmp(fmt::format("eq{}", k), "EQ", lk, rk, ct, t);
  }
  // p = lt[n-1]; p = lt[k] | (eq[k] & p) for k = n-2 .. 0
  std::string p = fmt::format("lt{}", num_keys - 1);
  for (int64_t k = num_keys - 2; k >= 0; --k) {
    line(fmt::format("%tie{} = \"stablehlo.and\"(%eq{}, %{}) : (tensor<i1>, tensor<i1>) -> tensor<i1>", k, k, p));
    line(fmt::format("%p{} = \"stablehlo.or\"(%lt{}, %tie{}) : (tensor<i1>, tensor<i1>) -> tensor<i1>", k, k, k));
    p = fmt::format("p{}", k);
  }
  line(fmt::format("\"stablehlo.return\"(%{}) : (tensor<i1>) -> ()", p));
  s += ind + "})";
  return s;
}

/// "[b, 0, 1, f]" style labels of a convolution operand: first/second are the labels of spec[0] and spec[1].
std::string conv_labels(const std::vector<int64_t>& spec, const char* first, const char* second) {
  std::vector<std::string> l(spec.size());
  l[spec[0]] = first;
  l[spec[1]] = second;
  for (size_t k = 2; k < spec.size(); ++k) l[spec[k]] = std::to_string(k - 2);
  return fmt::format("[{}]", fmt::join(l, ", "));
}

class Printer {
 public:
  explicit Printer(const hlo::Module& m) : m_(m) {}

  std::string print() {
    std::string out = fmt::format("module @{} attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{\n",
                                  m_.name);
    const hlo::Computation& c = *m_.entry;
    std::vector<std::string> params;
    for (auto* p : c.parameters) {
      names_[p] = fmt::format("%arg{}", p->parameter_number);
      params.push_back(fmt::format("{}: {}", names_[p], p->shape.mlir()));
    }
    const Instruction* root = c.root;
    std::vector<const Instruction*> results;
    if (root->opcode == Opcode::kTuple) results.assign(root->operands.begin(), root->operands.end());
    else results.push_back(root);
    std::vector<std::string> rtypes;
    for (auto* r : results) rtypes.push_back(r->shape.mlir());
    out += fmt::format("  func.func public @main({}) -> ({}) {{\n", fmt::join(params, ", "), fmt::join(rtypes, ", "));
    for (auto& up : c.instructions) {
      if (up.get() == root && root->opcode == Opcode::kTuple) continue;
      print_inst(out, *up);
    }
    std::vector<std::string> rnames;
    for (auto* r : results) rnames.push_back(names_.at(r));
    out += fmt::format("    return {} : {}\n", fmt::join(rnames, ", "), fmt::join(rtypes, ", "));
    out += "  }\n}\n";
    return out;
  }

 private:
  std::string fresh() { return fmt::format("%{}", next_++); }
  const std::string& name(const Instruction* i) { return names_.at(i); }
  std::string operand_list(const Instruction& i) {
    std::vector<std::string> v;
    for (auto* o : i.operands) v.push_back(name(o));
    return fmt::format("{}", fmt::join(v, ", "));
  }
  std::string operand_types(const Instruction& i) {
    std::vector<std::string> v;
    for (auto* o : i.operands) v.push_back(o->shape.mlir());
    return fmt::format("{}", fmt::join(v, ", "));
  }
  std::string result_types(const Instruction& i) {
    if (!i.shape.is_tuple) return i.shape.mlir();
    std::vector<std::string> v;
    for (auto& t : i.shape.tuple_shapes) v.push_back(t.mlir());
    return fmt::format("({})", fmt::join(v, ", "));
  }
  /// `%n = "op"(operands) {attrs} : (types) -> result` (the generic form, always valid MLIR).
  void generic(std::string& out, const Instruction& i, std::string_view op, const std::string& attrs,
               const std::string& region = "") {
    std::string n = fresh();
    std::string lhs = n;
    if (i.shape.is_tuple) lhs += fmt::format(":{}", i.shape.tuple_shapes.size());
    names_[&i] = n;
    out += fmt::format("    {} = \"{}\"({}){}{} : ({}) -> {}\n", lhs, op, operand_list(i), region.empty() ? "" : " " + region,
                       attrs.empty() ? "" : " {" + attrs + "}", operand_types(i), result_types(i));
  }

  void print_inst(std::string& out, const Instruction& i) {
    auto op = hlo::opcode_mlir_name(i.opcode);
    const auto& a = i.attrs;
    switch (i.opcode) {
      case Opcode::kParameter: return;
      case Opcode::kConstant: {
        std::string n = fresh();
        names_[&i] = n;
        out += fmt::format("    {} = stablehlo.constant {} : {}\n", n, dense_literal(*i.literal), i.shape.mlir());
        return;
      }
      case Opcode::kGetTupleElement:
        if (i.operand(0)->opcode != Opcode::kTuple) {
          names_[&i] = fmt::format("{}#{}", name(i.operand(0)), a.get_int("index"));
          return;
        }
        names_[&i] = name(i.operand(0)->operand(a.get_int("index")));
        return;
      case Opcode::kCompare:
        return generic(out, i, op,
                       fmt::format("comparison_direction = #stablehlo<comparison_direction {}>, compare_type = "
                                   "#stablehlo<comparison_type {}>",
                                   a.get_str("direction"), a.get_str("compare_type")));
      case Opcode::kBroadcastInDim:
        return generic(out, i, op, "broadcast_dimensions = " + i64_array(a.get_ints("broadcast_dimensions")));
      case Opcode::kTranspose: return generic(out, i, op, "permutation = " + i64_array(a.get_ints("permutation")));
      case Opcode::kReverse: return generic(out, i, op, "dimensions = " + i64_array(a.get_ints("dimensions")));
      case Opcode::kIota: return generic(out, i, op, fmt::format("iota_dimension = {} : i64", a.get_int("iota_dimension")));
      case Opcode::kConcatenate: return generic(out, i, op, fmt::format("dimension = {} : i64", a.get_int("dimension")));
      case Opcode::kSlice:
        return generic(out, i, op,
                       fmt::format("start_indices = {}, limit_indices = {}, strides = {}", i64_array(a.get_ints("start_indices")),
                                   i64_array(a.get_ints("limit_indices")), i64_array(a.get_ints("strides"))));
      case Opcode::kDynamicSlice: return generic(out, i, op, "slice_sizes = " + i64_array(a.get_ints("slice_sizes")));
      case Opcode::kPad:
        return generic(out, i, op,
                       fmt::format("edge_padding_low = {}, edge_padding_high = {}, interior_padding = {}",
                                   i64_array(a.get_ints("edge_padding_low")), i64_array(a.get_ints("edge_padding_high")),
                                   i64_array(a.get_ints("interior_padding"))));
      case Opcode::kDot:
        return generic(out, i, op,
                       fmt::format("dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [{}], "
                                   "rhs_batching_dimensions = [{}], lhs_contracting_dimensions = [{}], "
                                   "rhs_contracting_dimensions = [{}]>",
                                   fmt::join(a.get_ints("lhs_batch_dimensions"), ", "),
                                   fmt::join(a.get_ints("rhs_batch_dimensions"), ", "),
                                   fmt::join(a.get_ints("lhs_contracting_dimensions"), ", "),
                                   fmt::join(a.get_ints("rhs_contracting_dimensions"), ", ")));
      case Opcode::kReduce: {
        std::vector<DType> types;
        for (size_t k = 0; k < i.operands.size() / 2; ++k) types.push_back(i.operand(k)->shape.dtype);
        return generic(out, i, op, "dimensions = " + i64_array(a.get_ints("dimensions")),
                       reducer_region(a.get_str("reducer"), types, "    "));
      }
      case Opcode::kReduceWindow: {
        auto pad = a.get_ints("padding");
        std::vector<std::string> pairs;
        for (size_t k = 0; k < pad.size(); k += 2) pairs.push_back(fmt::format("[{}, {}]", pad[k], pad[k + 1]));
        std::string attrs = fmt::format(
            "window_dimensions = {}, window_strides = {}, base_dilations = {}, window_dilations = {}, padding = "
            "dense<{}> : tensor<{}x2xi64>",
            i64_array(a.get_ints("window_dimensions")), i64_array(a.get_ints("window_strides")),
            i64_array(a.get_ints("base_dilations")), i64_array(a.get_ints("window_dilations")),
            pairs.empty() ? "" : fmt::format("[{}]", fmt::join(pairs, ", ")), pad.size() / 2);
        return generic(out, i, op, attrs, reducer_region(a.get_str("reducer"), {i.operand(0)->shape.dtype}, "    "));
      }
      case Opcode::kGather: {
        std::vector<std::string> dn;
        auto dims = [&](const char* key) {
          const auto& v = a.get_ints(key);
          if (!v.empty()) dn.push_back(fmt::format("{} = [{}]", key, fmt::join(v, ", ")));
        };
        for (auto* key : {"offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
                          "start_index_map"})
          dims(key);
        dn.push_back(fmt::format("index_vector_dim = {}", a.get_int("index_vector_dim")));
        return generic(out, i, op,
                       fmt::format("dimension_numbers = #stablehlo.gather<{}>, indices_are_sorted = {}, slice_sizes = {}",
                                   fmt::join(dn, ", "), a.get_bool("indices_are_sorted") ? "true" : "false",
                                   i64_array(a.get_ints("slice_sizes"))));
      }
      case Opcode::kScatter: {
        std::vector<std::string> dn;
        for (auto* key : {"update_window_dims", "inserted_window_dims", "input_batching_dims",
                          "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"}) {
          const auto& v = a.get_ints(key);
          if (!v.empty()) dn.push_back(fmt::format("{} = [{}]", key, fmt::join(v, ", ")));
        }
        dn.push_back(fmt::format("index_vector_dim = {}", a.get_int("index_vector_dim")));
        return generic(out, i, op,
                       fmt::format("indices_are_sorted = {}, scatter_dimension_numbers = #stablehlo.scatter<{}>, "
                                   "unique_indices = {}",
                                   a.get_bool("indices_are_sorted") ? "true" : "false", fmt::join(dn, ", "),
                                   a.get_bool("unique_indices") ? "true" : "false"),
                       scatter_region(a.get_str("reducer"), i.operand(0)->shape.dtype, "    "));
      }
      case Opcode::kSort: {
        std::vector<DType> types;
        for (auto* o : i.operands) types.push_back(o->shape.dtype);
        return generic(out, i, op,
                       fmt::format("dimension = {} : i64, is_stable = {}", a.get_int("dimension"),
                                   a.get_bool("is_stable") ? "true" : "false"),
                       sort_region(types, a.get_int("num_keys"), "    "));
      }
      case Opcode::kTopK: return generic(out, i, op, fmt::format("k = {} : i64", a.get_int("k")));
      case Opcode::kConvolution: {
        const auto& pad = a.get_ints("padding");
        std::string attrs = fmt::format(
            "batch_group_count = {} : i64, dimension_numbers = #stablehlo.conv<{}x{}->{}>, feature_group_count = {} : i64",
            a.get_int("batch_group_count"), conv_labels(a.get_ints("lhs_spec"), "b", "f"),
            conv_labels(a.get_ints("rhs_spec"), "o", "i"), conv_labels(a.get_ints("out_spec"), "b", "f"),
            a.get_int("feature_group_count"));
        if (!pad.empty()) {  // no spatial axes: the window attributes are left out (their defaults)
          std::vector<std::string> pairs;
          for (size_t k = 0; k < pad.size(); k += 2) pairs.push_back(fmt::format("[{}, {}]", pad[k], pad[k + 1]));
          attrs += fmt::format(", lhs_dilation = {}, padding = dense<[{}]> : tensor<{}x2xi64>, rhs_dilation = {}, "
                               "window_strides = {}",
                               i64_array(a.get_ints("lhs_dilation")), fmt::join(pairs, ", "), pad.size() / 2,
                               i64_array(a.get_ints("rhs_dilation")), i64_array(a.get_ints("window_strides")));
        }
        return generic(out, i, op, attrs);
      }
      case Opcode::kTuple:
        throw_error<CompileError>("stablehlo", "tuples are only supported as the entry's result");
      default:
        break;
    }
    if (op.empty() || op == "stablehlo.custom_call" || op == "func.call" || op == "stablehlo.while" ||
        op == "stablehlo.case")
      throw_error<CompileError>("stablehlo", "printing {} as StableHLO is not supported yet", hlo::opcode_name(i.opcode));
    // Elementwise ops and the attribute-free rest (reshape, convert, select, clamp, dynamic_update_slice...).
    generic(out, i, op, "");
  }

  const hlo::Module& m_;
  std::unordered_map<const Instruction*, std::string> names_;
  int64_t next_ = 0;
};
}  // namespace

std::string print_stablehlo(const hlo::Module& m) { return Printer(m).print(); }

}  // namespace jitx::detail
