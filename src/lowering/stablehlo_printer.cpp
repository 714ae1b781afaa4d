// Printing an hlo::Module as StableHLO MLIR text, in the pretty forms `jax.jit(f).lower(...).as_text()` uses
// (JAX 0.10), with the generic form only where StableHLO has no pretty form (reduce_window). This file is the
// printer's core (see stablehlo_printer.h).
#include "lowering/stablehlo_printer.h"

#include "core/errors.h"
#include "lowering/lower.h"
#include "lowering/stablehlo_format.h"

namespace jitx::detail {
namespace {
std::string indent(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size() - 1;
    out += "  " + text.substr(at, nl - at + 1);
    at = nl + 1;
  }
  return out;
}
}  // namespace

std::string StablehloPrinter::print() {
  std::string out =
      fmt::format("module {} attributes {{mhlo.num_partitions = {} : i32, mhlo.num_replicas = 1 : i32}} {{\n",
                  symbol_name(m_.name), attrs_.num_partitions);
  out += attrs_.declarations;
  const hlo::Computation& c = *m_.entry;
  const Instruction* root = c.root;
  std::vector<const Instruction*> results;
  if (root->opcode == Opcode::kTuple) results.assign(root->operands.begin(), root->operands.end());
  else results.push_back(root);
  std::vector<std::string> rtypes, rdecls;
  for (size_t k = 0; k < results.size(); ++k) {
    rtypes.push_back(results[k]->shape.mlir());
    // JAX names each result by its pytree path; jitx's entry is a flat list of results.
    std::string info = results.size() == 1 ? "result" : fmt::format("result[{}]", k);
    std::string extra = k < attrs_.results.size() && !attrs_.results[k].empty() ? ", " + attrs_.results[k] : "";
    rdecls.push_back(fmt::format("{} {{jax.result_info = \"{}\"{}}}", rtypes.back(), info, extra));
  }
  // MLIR numbers the values of nested regions after all of the function body's: a first pass counts those.
  std::string body;
  print_body(c, body);
  region_value_base_ = next_;
  region_conflict_base_ = next_conflict_;
  body_names_ = used_;
  reset();
  body.clear();
  print_body(c, body);

  std::vector<std::string> params;
  for (auto* p : c.parameters) {
    auto k = static_cast<size_t>(p->parameter_number);
    bool attrs = k < attrs_.args.size() && !attrs_.args[k].empty();
    params.push_back(fmt::format("{}: {}{}", name(p), p->shape.mlir(), attrs ? " {" + attrs_.args[k] + "}" : ""));
  }
  out += fmt::format("  func.func public @main({}) -> ({}) {{\n", fmt::join(params, ", "), fmt::join(rdecls, ", "));
  out += body;
  std::vector<std::string> rnames;
  for (auto* r : results) rnames.push_back(names_.at(r));
  out += fmt::format("    return {} : {}\n", fmt::join(rnames, ", "), fmt::join(rtypes, ", "));
  out += "  }\n}\n";
  return out;
}

void StablehloPrinter::reset() {
  names_.clear();
  used_.clear();
  next_ = 0;
  next_conflict_ = 0;
}

void StablehloPrinter::print_body(const hlo::Computation& c, std::string& out) {
  num_args_ = 0;
  for (auto* p : c.parameters) {
    names_[p] = fmt::format("%arg{}", p->parameter_number);
    num_args_ = std::max<int64_t>(num_args_, p->parameter_number + 1);
  }
  for (auto& up : c.instructions) {
    if (up.get() == c.root && c.root->opcode == Opcode::kTuple) continue;
    print_inst(out, *up);
  }
}

/// A named value (`%cst`, `%c_0`...), uniqued as MLIR's printer does: one conflict counter for all names.
std::string StablehloPrinter::fresh_named(const std::string& base) {
  std::string n = base;
  while (used_.count(n)) n = fmt::format("{}_{}", base, next_conflict_++);
  used_.insert(n);
  return "%" + n;
}

std::string StablehloPrinter::operand_list(const Instruction& i) {
  std::vector<std::string> v;
  for (auto* o : i.operands) v.push_back(name(o));
  return fmt::format("{}", fmt::join(v, ", "));
}

/// Names the result(s) of i: `%n`, or `%n:k` for a k-result op (used as `%n#j`).
std::string StablehloPrinter::define(const Instruction& i) {
  std::string n = fresh();
  names_[&i] = n;
  return multi_result(i) ? fmt::format("{}:{}", n, i.shape.tuple_shapes.size()) : n;
}

/// `%n = op <rest>` in the pretty form.
void StablehloPrinter::pretty(std::string& out, const Instruction& i, std::string_view op, const std::string& rest) {
  std::string lhs = define(i);
  out += fmt::format("    {} = {}{}{}\n", lhs, op, rest.starts_with("(") ? "" : " ", rest);
}

/// `%n = "op"(operands) <{properties}> (region) : (types) -> result` (the generic form, always valid MLIR).
void StablehloPrinter::generic(std::string& out, const Instruction& i, std::string_view op, const std::string& attrs,
                               const std::string& region) {
  std::string lhs = define(i);
  out += fmt::format("    {} = \"{}\"({}){}{} : {}\n", lhs, op, operand_list(i),
                     attrs.empty() ? "" : " <{" + attrs + "}>", region.empty() ? "" : " " + region, functional_type(i));
}

void StablehloPrinter::set_counters(const Counters& c) {
  used_ = c.used;
  next_ = c.next;
  next_conflict_ = c.next_conflict;
  num_args_ = c.num_args;
}
void StablehloPrinter::set_bases(const Bases& b) {
  region_value_base_ = b.value;
  region_conflict_base_ = b.conflict;
  body_names_ = b.names;
}

/// The body of region `rc` (its instructions and `stablehlo.return`), indented one level deeper than the op.
/// Parameters are named from `param_names`, or `%iterArg...` when it is empty; *arg_names gets the names used.
std::string StablehloPrinter::print_region(const hlo::Computation& rc, const std::vector<std::string>& param_names,
                         std::vector<std::string>* arg_names) {
  Counters saved = counters();
  Bases saved_bases = bases();
  Counters start{saved_bases.names, saved_bases.value, saved_bases.conflict, saved.num_args};
  auto run = [&] {
    set_counters(start);
    std::vector<std::string> args;
    for (size_t k = 0; k < rc.parameters.size(); ++k) {
      std::string n = param_names.empty() ? fresh_named("iterArg") : param_names.at(k);
      names_[rc.parameters[k]] = n;
      args.push_back(n);
    }
    if (arg_names) *arg_names = args;
    std::string body;
    for (auto& up : rc.instructions) {
      if (up.get() == rc.root && rc.root->opcode == Opcode::kTuple) continue;
      print_inst(body, *up);
    }
    std::vector<const Instruction*> rets;
    if (rc.root->opcode == Opcode::kTuple) rets.assign(rc.root->operands.begin(), rc.root->operands.end());
    else rets.push_back(rc.root);
    std::vector<std::string> rn, rt;
    for (auto* r : rets) {
      rn.push_back(name(r));
      rt.push_back(r->shape.mlir());
    }
    body += rets.empty() ? "    stablehlo.return\n"
                         : fmt::format("    stablehlo.return {} : {}\n", fmt::join(rn, ", "), fmt::join(rt, ", "));
    return body;
  };
  run();  // numbers this region's own values; its nested regions start after them
  Counters end = counters();
  set_bases(Bases{end.next, end.next_conflict, end.used});
  std::string text = run();
  set_counters(saved);
  set_bases(saved_bases);
  return indent(text);
}

void StablehloPrinter::print_inst(std::string& out, const Instruction& i) {
  auto op = hlo::opcode_mlir_name(i.opcode);
  switch (i.opcode) {
    case Opcode::kParameter: return;
    case Opcode::kReduce: return print_reduce(*this, out, i);
    case Opcode::kReduceWindow: case Opcode::kGather: case Opcode::kScatter: case Opcode::kSort: case Opcode::kTopK:
    case Opcode::kConvolution:
      return print_indexed_op(*this, out, i, op);
    case Opcode::kWhile: return print_while(*this, out, i);
    case Opcode::kConditional: return print_conditional(*this, out, i);
    case Opcode::kTuple:
      throw_error<CompileError>("stablehlo", "tuples are only supported as the entry's result");
    default:
      return print_plain_op(*this, out, i, op);
  }
}

std::string print_stablehlo(const hlo::Module& m, const StablehloAttrs& attrs) {
  StablehloPrinter p(m);
  p.set_attrs(attrs);
  return p.print();
}

}  // namespace jitx::detail
