// Jaxpr printing in JAX's syntax.
#include "core/jaxpr.h"

#include <unordered_map>

#include "primitives/primitive.h"

namespace jitx::detail {

std::string aval_str(const ShapedArray& a) { return fmt::format("{}[{}]", dtype_name(a.dtype), fmt::join(a.shape, ",")); }

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

std::string print_jaxpr(const Jaxpr& j, int indent, bool source_info) {
  Namer n;
  auto binders = [&](const std::vector<Var>& vs) {
    std::vector<std::string> s;
    for (auto& v : vs) s.push_back(n.name(v) + ":" + aval_str(v.aval));
    return fmt::format("{}", fmt::join(s, " "));
  };
  std::string consts = binders(j.constvars);  // named first, as JAX does
  std::string in_binders = binders(j.invars);
  std::string head = fmt::format("{{ lambda {}; {}. let", consts, in_binders);
  std::vector<std::string> lines;
  for (auto& e : j.eqns) {
    std::vector<std::string> ins;
    for (auto& a : e.inputs) ins.push_back(n.atom(a));
    std::string params = e.params.str();
    std::string line = fmt::format("{} = {}{} {}", binders(e.outputs), e.prim->name, params, fmt::join(ins, " "));
    if (source_info && e.loc.line() > 0) line += fmt::format("  # {}", format_location(e.loc));
    lines.push_back(line);
  }
  std::vector<std::string> outs;
  for (auto& o : j.outvars) outs.push_back(n.atom(o));
  std::string tail = fmt::format("in ({}{}) }}", fmt::join(outs, ", "), outs.size() == 1 ? "," : "");
  std::string one_line = head + " " + fmt::format("{}", fmt::join(lines, "; ")) + " " + tail;
  bool multiline = source_info || one_line.size() + indent > 100 || one_line.find('\n') != std::string::npos;
  if (!multiline) return one_line;
  std::string pad(indent, ' ');
  std::string s = head + "\n";
  for (auto& l : lines) s += pad + "    " + l + "\n";
  s += pad + "  " + tail;
  return s;
}

}  // namespace jitx::detail
