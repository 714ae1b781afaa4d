// The StableHLO importer's syntax: module, functions, bodies and regions, and each op in its generic or pretty
// form read into an OpSyntax that import_ops.cpp turns into instructions.
#include "import/stablehlo_import.h"

#include <fmt/format.h>

#include <set>
#include <unordered_map>

#include "core/errors.h"
#include "jitx/parse_error.h"

namespace jitx::import {
using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

namespace {

// The values visible in a function or region. A region's lookup of a value of an enclosing scope makes it a
// parameter of the region's computation (a capture), which the op builder passes as an operand.
struct Scope {
  std::unordered_map<std::string, Instruction*> values;
  Scope* parent = nullptr;
  Computation* comp = nullptr;
  Region* region = nullptr;
};

class Importer {
 public:
  explicit Importer(std::string_view text) : c_(text), m_(std::make_unique<hlo::Module>("module")) {}

  std::unique_ptr<hlo::Module> run() {
    skip_aliases();
    bool wrapped = false, generic = false;
    if (c_.accept("module")) {
      wrapped = true;
      if (c_.peek() == '@') m_->name = c_.symbol();
      if (c_.accept("attributes")) c_.balanced();
      c_.expect("{");
    } else if (c_.peek_str("\"builtin.module\"")) {
      // The generic form: "builtin.module"() <{sym_name = "m"}> ({ funcs }) : () -> ()
      c_.string_lit();
      c_.expect("(");
      c_.expect(")");
      if (c_.peek_str("<{")) {
        OpSyntax props;
        read_attr_dict(c_.balanced(), props);
        if (auto it = props.attrs.find("sym_name"); it != props.attrs.end()) m_->name = unquote(it->second);
      }
      if (c_.peek() == '{') c_.balanced();
      c_.expect("(");
      c_.expect("{");
      wrapped = generic = true;
    }
    while (true) {
      skip_aliases();
      if (wrapped && c_.accept("}")) break;
      if (!wrapped && c_.eof()) break;
      if (c_.eof()) c_.fail("'}' closing the module");
      if (skip_mesh()) continue;
      if (c_.peek() == '"') parse_generic_func();
      else parse_func();
    }
    if (generic) {
      c_.expect(")");
      if (c_.peek() == '{') c_.balanced();  // the module's attributes
      c_.expect(":");
      c_.expect("(");
      c_.expect(")");
      c_.expect("->");
      c_.expect("(");
      c_.expect(")");
    }
    c_.skip_loc();
    skip_aliases();
    if (c_.peek_str("{-#")) {  // the resources section (read before parsing, in parse_stablehlo)
      auto rest = c_.rest();
      size_t e = rest.find("#-}");
      if (e == std::string_view::npos) c_.fail("'#-}' closing the resources section");
      c_.set_pos(c_.pos() + e + 3);
    }
    if (!c_.eof()) c_.fail("end of input after the module");
    for (auto& [name, comp] : funcs_)
      if (!defined_.count(name)) detail::throw_error<CompileError>("import_stablehlo", "function @{} is called but never "
                                                           "defined", name);
    if (!m_->entry) detail::throw_error<CompileError>("import_stablehlo", "the module has no public function (main)");
    return std::move(m_);
  }

 private:
  // `#loc1 = loc(...)` and other attribute aliases at top level.
  void skip_aliases() {
    while (c_.peek() == '#') {
      c_.until_top("=");
      c_.expect("=");
      c_.skip_ws();
      if (c_.peek_str("loc(")) {
        c_.skip_loc();
      } else {
        c_.until_top("\n");
      }
    }
  }

  Computation* func_comp(const std::string& name) {
    auto it = funcs_.find(name);
    if (it != funcs_.end()) return it->second;
    Computation* comp = m_->add_computation(name);
    funcs_[name] = comp;
    return comp;
  }

  void parse_func();

  bool skip_mesh();

  static std::string unquote(const std::string& v) {
    size_t b = v.find('"'), e = v.rfind('"');
    return b == std::string::npos || e <= b ? v : v.substr(b + 1, e - b - 1);
  }

  void parse_generic_func();

  void finish_func(const std::string& name, bool is_public, Computation* comp, const std::vector<Instruction*>& rets,
                   const std::vector<TensorType>& results) {
    if (rets.size() != results.size())
      detail::throw_error<CompileError>("import_stablehlo", "function @{} declares {} results but returns {}", name,
                                results.size(), rets.size());
    bool entry = is_public && (!m_->entry || name == "main");
    if (entry || rets.size() != 1) {
      std::vector<hlo::Shape> shapes;
      for (auto* r : rets) shapes.push_back(r->shape);
      comp->add(Opcode::kTuple, hlo::Shape::tuple(shapes), rets);
    } else {
      comp->root = rets[0];
    }
    if (entry) m_->entry = comp;
  }

  Instruction* lookup(Scope& s, Computation& comp, const std::string& name) {
    (void)comp;
    return lookup_in(s, name);
  }

  Instruction* lookup_in(Scope& s, const std::string& name);

  /// Ops up to the closing `close` (consumed); returns the operands of the return op.
  std::vector<Instruction*> parse_body(Computation& comp, Scope& scope, std::string_view close) {
    std::vector<Instruction*> rets;
    bool returned = false;
    while (!c_.accept(close)) {
      if (c_.eof()) c_.fail(fmt::format("'{}' closing the body", close));
      if (returned) c_.fail(fmt::format("'{}' after the return op", close));
      std::vector<std::string> names;
      std::vector<int64_t> counts;
      auto at = c_.where();
      if (c_.peek() == '%') {
        do {
          names.push_back(c_.value_name());
          int64_t n = 1;
          if (c_.accept(":")) n = c_.integer();
          if (n < 1 || n > 100000) c_.fail("a result count >= 1");
          counts.push_back(n);
        } while (c_.accept(","));
        c_.expect("=");
      }
      OpSyntax op;
      op.at = at;
      parse_op(comp, scope, op);
      c_.skip_loc();
      if (op.name == "func.return" || op.name == "stablehlo.return" || op.name == "return") {
        if (!names.empty()) c_.fail("no results on a return op");
        rets = op.operands;
        returned = true;
        continue;
      }
      std::vector<Instruction*> outs;
      if (op.name == "func.call" || op.name == "call" || op.name == "stablehlo.composite")
        outs = build_call(comp, op);
      else outs = build_op(comp, op);
      assign_results(comp, scope, names, counts, outs);
    }
    if (!returned) c_.fail("a return op before the end of the body");
    return rets;
  }

  void assign_results(Computation& comp, Scope& scope, const std::vector<std::string>& names,
                      const std::vector<int64_t>& counts, const std::vector<Instruction*>& outs) {
    int64_t total = 0;
    for (auto n : counts) total += n;
    if (total != static_cast<int64_t>(outs.size()))
      c_.fail(fmt::format("{} result name(s) for an op with {} result(s)", outs.size(), total));
    size_t k = 0;
    for (size_t j = 0; j < names.size(); ++j) {
      if (counts[j] == 1) {
        scope.values[names[j]] = outs[k++];
        continue;
      }
      for (int64_t r = 0; r < counts[j]; ++r) scope.values[fmt::format("{}#{}", names[j], r)] = outs[k++];
    }
    (void)comp;
  }

  std::vector<Instruction*> build_call(Computation& comp, OpSyntax& op) {
    bool composite = op.name == "stablehlo.composite";
    auto cit = op.attrs.find(composite ? "decomposition" : "callee");
    if (cit == op.attrs.end())
      c_.fail(composite ? "the decomposition of stablehlo.composite" : "the callee of func.call");
    std::string callee_name = cit->second;  // `@f` in the generic form's properties
    while (!callee_name.empty() && (callee_name[0] == '@' || callee_name[0] == ' ')) callee_name.erase(0, 1);
    callee_name = unquote(callee_name);
    if (callee_name.empty()) c_.fail("a callee name");
    Computation* callee = func_comp(callee_name);
    std::vector<hlo::Shape> shapes;
    for (auto& t : op.result_types) shapes.push_back(shape_of(t));
    hlo::Shape s = shapes.size() == 1 ? shapes[0] : hlo::Shape::tuple(shapes);
    Instruction* call = comp.add(Opcode::kCall, s, op.operands);
    call->called = {callee};
    if (shapes.size() == 1) return {call};
    std::vector<Instruction*> outs;
    for (size_t k = 0; k < shapes.size(); ++k)
      outs.push_back(comp.add(Opcode::kGetTupleElement, shapes[k], {call}, {{"index", static_cast<int64_t>(k)}}));
    return outs;
  }

  std::vector<Instruction*> operand_list(Computation& comp, Scope& scope, std::string_view close) {
    std::vector<Instruction*> out;
    if (c_.accept(close)) return out;
    do out.push_back(lookup(scope, comp, c_.value_name()));
    while (c_.accept(","));
    c_.expect(close);
    return out;
  }

  void read_attr_dict(std::string_view raw, OpSyntax& op) {
    // raw is "{k = v, k2 = v2}" or "<{...}>"
    size_t b = raw.find('{');
    Cursor d(raw.substr(b + 1, raw.rfind('}') - b - 1));
    while (!d.eof()) {
      std::string key = d.peek() == '"' ? d.string_lit() : d.ident();
      std::string val = "true";
      if (d.accept("=")) val = std::string(d.until_top(","));
      op.attrs[key] = val;
      if (!d.accept(",")) break;
    }
    if (!d.eof()) d.fail("',' or the end of the attribute dictionary");
  }

  /// `: (T1, T2) -> R` or `: T` (all operands and the result share T) or `: T1, T2` (select's pred and type).
  void read_signature(OpSyntax& op) {
    c_.expect(":");
    std::vector<TensorType> first = parse_type_list(c_);
    if (c_.accept("->")) {
      op.operand_types = first;
      op.result_types = parse_type_list(c_);
      return;
    }
    while (c_.accept(",")) first.push_back(parse_type(c_));
    if (first.empty()) c_.fail("a type after ':'");
    op.operand_types = first;
    if (c_.accept("->")) {  // chlo's `T1, T2 -> R`
      op.result_types = parse_type_list(c_);
      return;
    }
    op.result_types = {first.back()};
  }

  void regions(Computation& comp, Scope& scope, OpSyntax& op) {
    c_.expect("(");
    do add_region(op, parse_region(comp, scope, nullptr, nullptr));
    while (c_.accept(","));
    c_.expect(")");
  }
  static void add_region(OpSyntax& op, Region r) {
    op.regions.push_back(r.comp);
    op.region_info.push_back(std::move(r));
  }

  /// `{ ^bb0(%a: T, ...): ops }`, or `{ ops }` with the block arguments `names` of types `types` (while's pretty
  /// form names them in its head).
  Region parse_region(Computation& outer, Scope& scope, const std::vector<std::string>* names,
                      const std::vector<TensorType>* types);

  static void set_root(Computation& rc, const std::vector<Instruction*>& rets) {
    if (rets.size() == 1) {
      rc.root = rets[0];
    } else {
      std::vector<hlo::Shape> shapes;
      for (auto* r : rets) shapes.push_back(r->shape);
      rc.add(Opcode::kTuple, hlo::Shape::tuple(shapes), rets);
    }
  }

  void parse_op(Computation& comp, Scope& scope, OpSyntax& op);
  void parse_pretty_head(Computation& comp, Scope& scope, OpSyntax& op);
  void parse_pretty_reduce(Computation& comp, Scope& scope, OpSyntax& op);
  void parse_pretty_while(Computation& comp, Scope& scope, OpSyntax& op);

  Cursor c_;
  std::unique_ptr<hlo::Module> m_;
  std::unordered_map<std::string, Computation*> funcs_;
  std::set<std::string> defined_;
};

void Importer::parse_func() {
  if (!c_.accept("func.func")) c_.fail("'func.func'");
  bool is_public = true;
  if (c_.accept("public")) is_public = true;
  else if (c_.accept("private") || c_.accept("nested")) is_public = false;
  std::string name = c_.symbol();
  if (defined_.count(name)) c_.fail(fmt::format("a new function name (@{} is defined twice)", name));
  defined_.insert(name);
  Computation* comp = func_comp(name);
  Scope scope;
  scope.comp = comp;
  c_.expect("(");
  int64_t k = 0;
  if (!c_.accept(")")) {
    do {
      std::string v = c_.value_name();
      c_.expect(":");
      TensorType t = parse_type(c_);
      if (t.is_token) detail::throw_error<CompileError>("import_stablehlo", "token arguments are not supported");
      if (c_.peek() == '{') c_.balanced();
      c_.skip_loc();
      scope.values[v] = comp->add_parameter(k, shape_of(t), "Arg_" + std::to_string(k));
      ++k;
    } while (c_.accept(","));
    c_.expect(")");
  }
  std::vector<TensorType> results;
  if (c_.accept("->")) results = parse_type_list(c_);
  if (c_.accept("attributes")) c_.balanced();
  c_.expect("{");
  std::vector<Instruction*> rets = parse_body(*comp, scope, "}");
  c_.skip_loc();
  finish_func(name, is_public, comp, rets, results);
}

/// "func.func"() <{function_type = (T, ..) -> R, sym_name = "main", sym_visibility = "private"}> ({
///   ^bb0(%a: T, ...): body }) : () -> ()
void Importer::parse_generic_func() {
  if (c_.string_lit() != "func.func") c_.fail("\"func.func\"");
  c_.expect("(");
  c_.expect(")");
  OpSyntax props;
  if (!c_.peek_str("<{")) c_.fail("the properties <{...}> of func.func");
  read_attr_dict(c_.balanced(), props);
  if (c_.peek() == '{') read_attr_dict(c_.balanced(), props);
  auto get = [&](const char* k) -> const std::string& {
    auto it = props.attrs.find(k);
    if (it == props.attrs.end()) c_.fail(fmt::format("func.func's {}", k));
    return it->second;
  };
  std::string name = unquote(get("sym_name"));
  bool is_public = props.attrs.count("sym_visibility") == 0 || unquote(props.attrs["sym_visibility"]) == "public";
  std::string fty = get("function_type");
  Cursor fc(fty, c_.where().first, c_.where().second);
  std::vector<TensorType> params = parse_type_list(fc), results;
  fc.expect("->");
  results = parse_type_list(fc);
  if (!fc.eof()) fc.fail("the end of function_type");
  if (name.empty() || defined_.count(name)) c_.fail(fmt::format("a new function name (@{})", name));
  defined_.insert(name);
  Computation* comp = func_comp(name);
  Scope scope;
  scope.comp = comp;
  c_.expect("(");
  c_.expect("{");
  size_t k = 0;
  if (c_.accept("^")) {
    c_.ident();
    c_.expect("(");
    if (!c_.accept(")")) {
      do {
        std::string v = c_.value_name();
        c_.expect(":");
        TensorType t = parse_type(c_);
        c_.skip_loc();
        if (t.is_token) detail::throw_error<CompileError>("import_stablehlo", "token arguments are not supported");
        if (k >= params.size() || shape_of(t).str() != shape_of(params[k]).str())
          c_.fail(fmt::format("block argument {} of the type function_type gives", k));
        scope.values[v] = comp->add_parameter(static_cast<int64_t>(k), shape_of(t), "Arg_" + std::to_string(k));
        ++k;
      } while (c_.accept(","));
      c_.expect(")");
    }
    c_.expect(":");
  }
  if (k != params.size()) c_.fail(fmt::format("{} block arguments (function_type has {})", k, params.size()));
  std::vector<Instruction*> rets = parse_body(*comp, scope, "}");
  c_.expect(")");
  if (c_.peek() == '{') c_.balanced();  // discardable attributes
  c_.expect(":");
  c_.expect("(");
  c_.expect(")");
  c_.expect("->");
  c_.expect("(");
  c_.expect(")");
  c_.skip_loc();
  finish_func(name, is_public, comp, rets, results);
}

/// Skips a module-level `sdy.mesh @mesh = <["x"=2]> {...}` (or its generic form): shardings name a mesh, and a
/// module runs on one device here, so sharding annotations pass their values through.
bool Importer::skip_mesh() {
  if (c_.accept("sdy.mesh")) {
    c_.symbol();
    c_.expect("=");
    c_.balanced();
    if (c_.peek() == '{') c_.balanced();
    c_.skip_loc();
    return true;
  }
  if (!c_.peek_str("\"sdy.mesh\"")) return false;
  c_.string_lit();
  c_.expect("(");
  c_.expect(")");
  if (c_.peek_str("<{")) c_.balanced();
  if (c_.peek() == '{') c_.balanced();
  c_.expect(":");
  parse_type_list(c_);
  c_.expect("->");
  parse_type_list(c_);
  c_.skip_loc();
  return true;
}

/// `{ ^bb0(%a: T, ...): ops }`, or `{ ops }` with the block arguments `names` of types `types` (while's pretty
/// form names them in its head).
Region Importer::parse_region(Computation& outer, Scope& scope, const std::vector<std::string>* names,
                               const std::vector<TensorType>* types) {
  c_.expect("{");
  Region r;
  r.comp = m_->add_computation(m_->unique_name(outer.name + ".region"));
  Scope inner;
  inner.parent = &scope;
  inner.comp = r.comp;
  inner.region = &r;
  int64_t k = 0;
  if (names) {
    for (size_t j = 0; j < names->size(); ++j) inner.values[(*names)[j]] = r.comp->add_parameter(k++,
                                                                               shape_of(types->at(j)));
  } else if (c_.peek() == '^') {
    c_.expect("^");
    c_.ident();
    c_.expect("(");
    if (!c_.accept(")")) {
      do {
        std::string v = c_.value_name();
        c_.expect(":");
        TensorType t = parse_type(c_);
        c_.skip_loc();
        inner.values[v] = r.comp->add_parameter(k++, shape_of(t));
      } while (c_.accept(","));
      c_.expect(")");
    }
    c_.expect(":");
  }
  r.rets = parse_body(*r.comp, inner, "}");
  set_root(*r.comp, r.rets);
  return r;
}

/// A value by name: this scope's, a result of a multi-result op (`%x#1`), or an enclosing scope's (a region
/// captures it as a parameter; a constant is copied in instead).
Instruction* Importer::lookup_in(Scope& s, const std::string& name) {
  if (auto it = s.values.find(name); it != s.values.end()) return it->second;
  if (auto h = name.find('#'); h != std::string::npos) {
    std::string base = name.substr(0, h), idx = name.substr(h + 1);
    if (auto b = s.values.find(base); b != s.values.end()) {
      Instruction* t = b->second;
      if (idx.empty() || idx.size() > 9 || idx.find_first_not_of("0123456789") != std::string::npos)
        c_.fail("a result index (%name#<n>)");
      int64_t i = std::stoll(idx);
      if (!t->shape.is_tuple || i < 0 || i >= static_cast<int64_t>(t->shape.tuple_shapes.size()))
        c_.fail(fmt::format("a result index of %{} below its number of results", base));
      Instruction* g = s.comp->add(Opcode::kGetTupleElement, t->shape.tuple_shapes[i], {t}, {{"index", i}});
      s.values[name] = g;
      return g;
    }
  }
  if (!s.parent || !s.region) c_.fail(fmt::format("a defined value (%{} is not defined here)", name));
  Instruction* outer = lookup_in(*s.parent, name);
  if (outer->opcode == Opcode::kConstant) {  // jax.export's comparators read constants of the function: copy them
    Instruction* k = s.comp->add(Opcode::kConstant, outer->shape, {});
    k->literal = outer->literal;
    s.values[name] = k;
    return k;
  }
  Instruction* p = s.comp->add_parameter(static_cast<int64_t>(s.comp->parameters.size()), outer->shape,
                                         m_->unique_name("capture"));
  s.region->captured.push_back(outer);
  s.values[name] = p;
  return p;
}

void Importer::parse_op(Computation& comp, Scope& scope, OpSyntax& op) {
  if (c_.peek() == '"') {
    op.name = c_.string_lit();
    c_.expect("(");
    op.operands = operand_list(comp, scope, ")");
    if (c_.peek_str("<{")) read_attr_dict(c_.balanced(), op);
    if (c_.peek_str("({")) regions(comp, scope, op);
    if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
    read_signature(op);
    return;
  }
  op.name = c_.ident();
  if (op.name == "return" || op.name == "func.return" || op.name == "stablehlo.return") {
    if (c_.peek() == '%') {
      do op.operands.push_back(lookup(scope, comp, c_.value_name()));
      while (c_.accept(","));
      read_signature(op);
    }
    return;
  }
  if (op.name == "func.call" || op.name == "call") {
    op.attrs["callee"] = c_.symbol();
    c_.expect("(");
    op.operands = operand_list(comp, scope, ")");
    if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
    read_signature(op);
    return;
  }
  if (op.name == "stablehlo.composite" && c_.peek() == '"') {
    // stablehlo.composite "chlo.top_k" %x {composite_attributes = {k = 3 : i64}, decomposition = @impl} : T -> U
    // (jax.export wraps chlo ops so): a call of its decomposition, which holds the op's meaning.
    op.attrs["name"] = "\"" + c_.string_lit() + "\"";
    if (c_.peek() == '%') {
      do op.operands.push_back(lookup(scope, comp, c_.value_name()));
      while (c_.accept(","));
    }
    if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
    read_signature(op);
    return;
  }
  if (op.name == "stablehlo.constant") {
    if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
    op.raw_value = std::string(c_.until_top(":"));
    read_signature(op);
    return;
  }
  if (op.name == "stablehlo.custom_call" && c_.peek() == '@') {
    // stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"} : (T) -> T
    op.attrs["call_target_name"] = "\"" + c_.symbol() + "\"";
    c_.expect("(");
    op.operands = operand_list(comp, scope, ")");
    if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
    read_signature(op);
    return;
  }
  if (op.name == "sdy.sharding_constraint" || op.name == "sdy.reshard") {
    // sdy.sharding_constraint %x <@mesh, [{"x"}, {}]> : T
    op.operands.push_back(lookup(scope, comp, c_.value_name()));
    if (c_.peek() == '<') op.attrs["sharding"] = std::string(c_.balanced());
    if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
    read_signature(op);
    return;
  }
  if (op.name == "stablehlo.reduce") return parse_pretty_reduce(comp, scope, op);
  if (op.name == "stablehlo.while") return parse_pretty_while(comp, scope, op);
  if (op.name == "chlo.top_k") {
    // chlo.top_k(%x, k = 3) : T -> (values, indices)
    c_.expect("(");
    op.operands.push_back(lookup(scope, comp, c_.value_name()));
    c_.expect(",");
    c_.expect("k");
    c_.expect("=");
    op.attrs["k"] = std::to_string(c_.integer());
    c_.expect(")");
    read_signature(op);
    return;
  }
  if (op.name == "stablehlo.if" || op.name == "stablehlo.case" ||
      op.name == "stablehlo.sort" || op.name == "stablehlo.scatter" || op.name == "stablehlo.reduce_window" ||
      op.name == "stablehlo.select_and_scatter" || op.name == "stablehlo.all_reduce")
    detail::throw_error<CompileError>("import_stablehlo", "line {}: the pretty form of {} is not supported yet (its "
                              "generic form is)", op.at.first, op.name);
  parse_pretty_head(comp, scope, op);
  read_signature(op);
}

/// The pretty form's words, operands, `key = value` pairs and bracket groups up to the signature's `:`.
void Importer::parse_pretty_head(Computation& comp, Scope& scope, OpSyntax& op) {
  while (true) {
    char ch = c_.peek();
    if (ch == ':' || ch == '\0' || ch == '}') break;
    if (ch == ',') {
      c_.expect(",");
      continue;
    }
    if (ch == '%') {
      op.operands.push_back(lookup(scope, comp, c_.value_name()));
    } else if (ch == '(' && op.operands.empty()) {  // convolution(%lhs, %rhs)
      c_.expect("(");
      op.operands = operand_list(comp, scope, ")");
    } else if (ch == '[') {
      op.brackets.emplace_back(c_.balanced());
    } else if (ch == '{') {
      read_attr_dict(c_.balanced(), op);
    } else if (c_.peek_ident()) {
      std::string w = c_.ident();
      if (c_.accept("=")) op.attrs[w] = std::string(c_.peek() == '{' ? c_.balanced() : c_.until_top(",:"));
      else op.words.push_back(w);
    } else {
      c_.fail("an operand, attribute or ':' in the op");
    }
  }
}

// `(%x init: %y) applies stablehlo.add across dimensions = [1] : (...) -> ...` or the region form
// `(%x init: %y) across dimensions = [1] : ... reducer(%a: T, %b: T) { ... }`.
void Importer::parse_pretty_reduce(Computation& comp, Scope& scope, OpSyntax& op) {
  std::vector<Instruction*> inits;
  do {
    c_.expect("(");
    op.operands.push_back(lookup(scope, comp, c_.value_name()));
    c_.expect("init");
    c_.expect(":");
    inits.push_back(lookup(scope, comp, c_.value_name()));
    c_.expect(")");
  } while (c_.accept(","));
  op.operands.insert(op.operands.end(), inits.begin(), inits.end());  // inputs, then inits (the generic order)
  if (c_.accept("applies")) op.attrs["applies"] = c_.ident();
  c_.expect("across");
  c_.expect("dimensions");
  c_.expect("=");
  op.attrs["dimensions"] = std::string(c_.balanced());
  if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
  read_signature(op);
  if (op.attrs.count("applies")) return;
  c_.skip_loc();
  c_.expect("reducer");
  Region r;
  r.comp = m_->add_computation(m_->unique_name(comp.name + ".reducer"));
  Computation* rc = r.comp;
  Scope inner;
  inner.parent = &scope;
  inner.comp = rc;
  inner.region = &r;
  int64_t k = 0;
  std::vector<std::pair<std::string, TensorType>> args;
  while (c_.accept("(")) {
    do {
      std::string v = c_.value_name();
      c_.expect(":");
      args.emplace_back(v, parse_type(c_));
      c_.skip_loc();
    } while (c_.accept(","));
    c_.expect(")");
  }
  // The pairs are listed (a_i, b_i) per operand; the region's parameters are all a's then all b's.
  if (args.size() % 2) c_.fail("reducer arguments in (accumulator, element) pairs");
  size_t n = args.size() / 2;
  for (size_t j = 0; j < n; ++j) inner.values[args[2 * j].first] = rc->add_parameter(k++, shape_of(args[2 * j].second));
  for (size_t j = 0; j < n; ++j)
    inner.values[args[2 * j + 1].first] = rc->add_parameter(k++, shape_of(args[2 * j + 1].second));
  c_.expect("{");
  r.rets = parse_body(*rc, inner, "}");
  set_root(*rc, r.rets);
  add_region(op, std::move(r));
}

// `stablehlo.while(%a = %x, %b = %y) : T1, T2 cond { ... } do { ... }`: the regions' arguments are named in the
// head.
void Importer::parse_pretty_while(Computation& comp, Scope& scope, OpSyntax& op) {
  c_.expect("(");
  std::vector<std::string> names;
  if (!c_.accept(")")) {
    do {
      names.push_back(c_.value_name());
      c_.expect("=");
      op.operands.push_back(lookup(scope, comp, c_.value_name()));
    } while (c_.accept(","));
    c_.expect(")");
  }
  if (c_.peek() == '{') read_attr_dict(c_.balanced(), op);
  std::vector<TensorType> types;
  if (!names.empty()) {
    c_.expect(":");
    do types.push_back(parse_type(c_));
    while (c_.accept(","));
  }
  if (types.size() != names.size()) c_.fail(fmt::format("one type per loop value ({} values)", names.size()));
  op.operand_types = op.result_types = types;
  c_.skip_loc();
  c_.expect("cond");
  add_region(op, parse_region(comp, scope, &names, &types));
  c_.expect("do");
  add_region(op, parse_region(comp, scope, &names, &types));
}


}  // namespace

std::unique_ptr<hlo::Module> parse_stablehlo(std::string_view text) {
  auto blobs = read_resources(text);
  ResourceScope resources(&blobs);
  Importer imp(text);
  auto m = imp.run();
  // Region computations that became attributes (reducers) are no longer needed.
  std::vector<std::unique_ptr<Computation>> keep;
  std::set<const Computation*> used;
  std::vector<const Computation*> work = {m->entry};
  while (!work.empty()) {
    const Computation* c = work.back();
    work.pop_back();
    if (!used.insert(c).second) continue;
    for (auto& i : c->instructions)
      for (auto* cc : i->called) work.push_back(cc);
  }
  for (auto& c : m->computations)
    if (used.count(c.get())) keep.push_back(std::move(c));
  m->computations = std::move(keep);
  hlo::verify(*m);
  return m;
}

}  // namespace jitx::import
