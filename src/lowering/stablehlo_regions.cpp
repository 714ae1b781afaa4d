// The StableHLO printer's ops with regions: reductions (arg-reductions with their comparator body), while and
// case/if, and the small regions of reduce_window, scatter and sort.
#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "lowering/stablehlo_format.h"
#include "lowering/stablehlo_printer.h"

namespace jitx::detail {


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
      line(
          fmt::format("%nan{} = \"stablehlo.constant\"() {{value = dense<{}> : {}}} : () -> {}", k, nan_elem(d), t, t));
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


std::string binary_region(StablehloPrinter& p, hlo::Reducer r, DType d) {
  RegionNames n = p.region_names();
  std::string t = scalar_type(d), a = n.a(), b = n.a(), v = n.v();
  std::string s = "({\n";
  s += fmt::format("    ^bb0({}: {}, {}: {}):\n", a, t, b, t);
  s += fmt::format("      {} = {} {}, {} : {}\n", v, reducer_op(r), a, b, t);
  s += fmt::format("      stablehlo.return {} : {}\n", v, t);
  return s + "    })";
}

std::string scatter_region(StablehloPrinter& p, hlo::Reducer r, DType d) {
  if (r != hlo::Reducer::kReplace) return binary_region(p, r, d);
  RegionNames n = p.region_names();
  std::string t = scalar_type(d), a = n.a(), b = n.a();
  return fmt::format("({{\n    ^bb0({}: {}, {}: {}):\n      stablehlo.return {} : {}\n    }})", a, t, b, t, b, t);
}

void print_while(StablehloPrinter& p, std::string& out, const Instruction& i) {
  std::string lhs = p.define(i);
  std::vector<std::string> args;
  std::string cond = p.print_region(*i.called.at(0), {}, &args);
  std::string body = p.print_region(*i.called.at(1), {});
  std::vector<std::string> inits, types;
  for (size_t k = 0; k < i.operands.size(); ++k) {
    inits.push_back(fmt::format("{} = {}", args.at(k), p.name(i.operand(k))));
    types.push_back(i.operand(k)->shape.mlir());
  }
  out += fmt::format("    {} = stablehlo.while({}) : {}\n", lhs, fmt::join(inits, ", "), fmt::join(types, ", "));
  out += "    cond {\n" + cond + "    } do {\n" + body + "    }\n";
}

/// `stablehlo.case` on an s32 index; `stablehlo.if` on a pred (true branch first, as XLA orders them). The
/// branch computations' parameters are the conditional's operands, which regions read from the enclosing scope.
void print_conditional(StablehloPrinter& p, std::string& out, const Instruction& i) {
  std::vector<std::string> operands;
  for (size_t k = 1; k < i.operands.size(); ++k) operands.push_back(p.name(i.operand(k)));
  std::string lhs = p.define(i);
  bool is_if = i.operand(0)->shape.dtype == DType::bool_;
  std::vector<std::string> regions;
  for (auto* c : i.called) regions.push_back("{\n" + p.print_region(*c, operands) + "    }");
  out += fmt::format("    {} = \"stablehlo.{}\"({}) ({}) : ({}) -> {}\n", lhs, is_if ? "if" : "case",
                     p.name(i.operand(0)), fmt::join(regions, ", "), i.operand(0)->shape.mlir(), results_type(i));
}

void print_reduce(StablehloPrinter& p, std::string& out, const Instruction& i) {
  hlo::Reducer r = hlo::reducer_of(i);
  std::string dims = dims_list(hlo::dimensions_of(i));
  size_t n = i.operands.size() / 2;
  if (r != hlo::Reducer::kArgmax && r != hlo::Reducer::kArgmin) {
    JITX_ASSERT(n == 1, "a {} reduce has one operand", hlo::reducer_name(r));
    return p.pretty(out, i, "stablehlo.reduce",
                    fmt::format("({} init: {}) applies {} across dimensions = {} : {}", p.name(i.operand(0)),
                                p.name(i.operand(1)), reducer_op(r), dims, functional_type(i)));
  }
  // (values, indices): the body picks the larger (smaller) value, NaN above all, ties to the lower index.
  JITX_ASSERT(n == 2, "an arg-reduction reduces (values, indices)");
  DType vd = i.operand(0)->shape.dtype, kd = i.operand(1)->shape.dtype;
  std::string tv = scalar_type(vd), tk = scalar_type(kd), pred = "tensor<i1>";
  std::string lhs = p.define(i);
  out += fmt::format("    {} = stablehlo.reduce({} init: {}), ({} init: {}) across dimensions = {} : {}\n", lhs,
                     p.name(i.operand(0)), p.name(i.operand(2)), p.name(i.operand(1)), p.name(i.operand(3)), dims,
                     functional_type(i));
  RegionNames rn = p.region_names();
  std::string av = rn.a(), ai = rn.a(), bv = rn.a(), bi = rn.a();
  out += fmt::format("     reducer({}: {}, {}: {}) ({}: {}, {}: {})  {{\n", av, tv, bv, tv, ai, tk, bi, tk);
  auto cmp = [&](std::string dir, const std::string& x, const std::string& y, DType d) {
    std::string v = rn.v(), t = scalar_type(d);
    out += fmt::format("      {} = stablehlo.compare {}, {}, {}, {} : ({}, {}) -> {}\n", v, dir, x, y, compare_type(d),
                       t, t, pred);
    return v;
  };
  auto logic = [&](std::string_view op, const std::string& x, const std::string& y) {
    std::string v = rn.v();
    out += fmt::format("      {} = stablehlo.{} {}, {} : {}\n", v, op, x, y, pred);
    return v;
  };
  std::string better = cmp(r == hlo::Reducer::kArgmax ? "GT" : "LT", av, bv, vd);
  std::string eq = cmp("EQ", av, bv, vd);
  if (is_floating(vd)) {
    // better' = (better or a is NaN) and b is not NaN; eq' = eq or both are NaN.
    std::string anan = cmp("NE", av, av, vd), bnan = cmp("NE", bv, bv, vd);
    std::string nb = rn.v();
    out += fmt::format("      {} = stablehlo.not {} : {}\n", nb, bnan, pred);
    better = logic("and", logic("or", better, anan), nb);
    eq = logic("or", eq, logic("and", anan, bnan));
  }
  std::string first = cmp("LT", ai, bi, kd);
  std::string pick = logic("or", better, logic("and", eq, first));
  std::string sv = rn.v(), si = rn.v();
  out += fmt::format("      {} = stablehlo.select {}, {}, {} : {}, {}\n", sv, pick, av, bv, pred, tv);
  out += fmt::format("      {} = stablehlo.select {}, {}, {} : {}, {}\n", si, pick, ai, bi, pred, tk);
  out += fmt::format("      stablehlo.return {}, {} : {}, {}\n", sv, si, tv, tk);
  out += "    }\n";
}

}  // namespace jitx::detail
