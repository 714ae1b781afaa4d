// Jaxpr printing in JAX's syntax.
#include "core/jaxpr.h"

#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "core/primitive.h"

namespace jitx::detail {

std::string aval_str(const ShapedArray& a) {
  return fmt::format("{}[{}]", dtype_name(a.dtype), fmt::join(a.shape, ","));
}

std::string LiteralValue::str() const {
  std::string v;
  if (aval.dtype == DType::bool_) v = i ? "True" : "False";
  else if (is_floating(aval.dtype)) {
    v = fmt::format("{}", f);
    if (v.find_first_of(".enai") == std::string::npos) v += ".0";
  } else if (aval.dtype == DType::uint64) v = std::to_string(u);
  else v = std::to_string(i);
  return v + ":" + aval_str(aval);
}

std::vector<ShapedArray> ClosedJaxpr::in_avals() const {
  std::vector<ShapedArray> r;
  for (auto& v : jaxpr.invars) r.push_back(v.aval);
  return r;
}
std::vector<ShapedArray> ClosedJaxpr::out_avals() const {
  std::vector<ShapedArray> r;
  for (auto& a : jaxpr.outvars) r.push_back(a.aval());
  return r;
}

namespace {
std::string var_name(int64_t n) {
  // a..z, ba..bz, ca.. as JAX names them.
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n > 0);
  return s;
}

struct Namer {
  std::unordered_map<int64_t, std::string> names;
  int64_t next = 0;
  const std::string& name(const Var& v) {
    auto it = names.find(v.id);
    if (it != names.end()) return it->second;
    return names[v.id] = var_name(next++);
  }
  std::string atom(const Atom& a) { return a.is_literal ? a.lit.str() : name(a.var); }
};
}  // namespace

namespace {
bool has_jaxpr_param(const Eqn& e) {
  for (auto& [k, v] : e.params.items())
    if (std::holds_alternative<std::shared_ptr<const ClosedJaxpr>>(v) || std::holds_alternative<JaxprList>(v))
      return true;
  return false;
}

/// Every var some equation or output reads, in j and the jaxprs nested in its equations' params.
void collect_used(const Jaxpr& j, std::unordered_set<int64_t>& used) {
  for (auto& e : j.eqns) {
    for (auto& a : e.inputs)
      if (!a.is_literal) used.insert(a.var.id);
    for (auto& [k, v] : e.params.items()) {
      if (auto* cj = std::get_if<std::shared_ptr<const ClosedJaxpr>>(&v); cj && *cj) collect_used((*cj)->jaxpr, used);
      if (auto* l = std::get_if<JaxprList>(&v))
        for (auto& cj : *l)
          if (cj) collect_used(cj->jaxpr, used);
    }
  }
  for (auto& a : j.outvars)
    if (!a.is_literal) used.insert(a.var.id);
}

/// JAX's pretty printer for jaxprs: one Namer across nested jaxprs (so names continue into sub-jaxprs), unused
/// equation outputs as `_`, and equations with jaxpr params broken over lines, one param per line.
class JaxprPrinter {
 public:
  JaxprPrinter(const Jaxpr& top, bool source_info) : source_info_(source_info) { collect_used(top, used_); }

  /// j with `{` at column `col`; its equations are indented base + 4, its `in` base + 2.
  std::string jaxpr(const Jaxpr& j, int base, int col, int width) {
    std::string consts = binders(j.constvars, false);  // named first, as JAX does
    std::string in_binders = binders(j.invars, false);
    std::string head = fmt::format("{{ lambda {}; {}. let", consts, in_binders);
    std::vector<std::string> lines;
    for (auto& e : j.eqns) lines.push_back(eqn(e, base + 4));
    std::vector<std::string> outs;
    for (auto& o : j.outvars) outs.push_back(n_.atom(o));
    std::string tail = fmt::format("in ({}{}) }}", fmt::join(outs, ", "), outs.size() == 1 ? "," : "");
    std::string one_line = head + " " + fmt::format("{}", fmt::join(lines, "; ")) + " " + tail;
    bool multiline =
        source_info_ || static_cast<int>(one_line.size()) + col > width || one_line.find('\n') != std::string::npos;
    if (!multiline) return one_line;
    std::string s = head + "\n";
    for (auto& l : lines) s += std::string(base + 4, ' ') + l + "\n";
    s += std::string(base + 2, ' ') + tail;
    return s;
  }

 private:
  std::string binders(const std::vector<Var>& vs, bool drop_unused) {
    std::vector<std::string> s;
    for (auto& v : vs) s.push_back((drop_unused && !used_.count(v.id) ? "_" : n_.name(v)) + ":" + aval_str(v.aval));
    return fmt::format("{}", fmt::join(s, " "));
  }

  std::string eqn(const Eqn& e, int pad) {
    std::string lhs = binders(e.outputs, true);
    std::string params;
    if (!has_jaxpr_param(e)) {
      params = e.params.str();
    } else {
      // One param per line at pad + 2; a jaxpr starts after `key=` (or on its own line inside a tuple).
      std::string p = std::string(pad + 2, ' ');
      params = "[\n";
      for (auto& [k, v] : e.params.items()) {
        if (auto* cj = std::get_if<std::shared_ptr<const ClosedJaxpr>>(&v); cj && *cj) {
          params += p + k + "=" + jaxpr((*cj)->jaxpr, pad + 2, pad + 3 + static_cast<int>(k.size()), 80) + "\n";
        } else if (auto* l = std::get_if<JaxprList>(&v)) {
          params += p + k + "=(\n";
          for (auto& x : *l) params += p + "  " + (x ? jaxpr(x->jaxpr, pad + 4, pad + 4, 80) : "None") + "\n";
          params += p + ")\n";
        } else {
          params += p + k + "=" + param_value_str(v) + "\n";
        }
      }
      params += std::string(pad, ' ') + "]";
    }
    std::vector<std::string> ins;
    for (auto& a : e.inputs) ins.push_back(n_.atom(a));
    std::string line = fmt::format("{} = {}{} {}", lhs, e.prim->name, params, fmt::join(ins, " "));
    if (source_info_ && e.loc.line() > 0) line += fmt::format("  # {}", format_location(e.loc));
    return line;
  }

  bool source_info_ = false;
  Namer n_;
  std::unordered_set<int64_t> used_;
};
}  // namespace

std::string print_jaxpr(const Jaxpr& j, int indent, bool source_info) {
  JaxprPrinter p(j, source_info);
  // The top level keeps jitx's historical width rule; nested jaxprs break at JAX's 80 columns.
  return p.jaxpr(j, indent, indent, 100);
}

}  // namespace jitx::detail
