// shard_map's check_rep (JAX's check_rep / check_vma): which mesh axes each value of the body may vary over, and
// an error when an out_spec claims a result replicated over an axis it may vary over.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <unordered_map>

#include "api/shard_map_internal.h"
#include "core/errors.h"
#include "primitives/collectives.h"

namespace jitx::detail {

namespace {

using Axes = std::set<std::string>;

bool has_collective(const Jaxpr& j);

/// Whether an equation's params hold a jaxpr (a loop body, cond branches) with a collective.
bool holds_collective(const Params& ps) {
  for (auto& [k, v] : ps.items()) {
    if (auto* sub = std::get_if<std::shared_ptr<const ClosedJaxpr>>(&v); sub && *sub && has_collective((*sub)->jaxpr))
      return true;
    if (auto* list = std::get_if<JaxprList>(&v))
      for (auto& one : *list)
        if (one && has_collective(one->jaxpr)) return true;
  }
  return false;
}

/// Whether a jaxpr (or one it holds) has a collective: its outputs' variation is then not inferred here.
bool has_collective(const Jaxpr& j) {
  for (auto& e : j.eqns)
    if (is_collective(*e.prim) || holds_collective(e.params)) return true;
  return false;
}

}  // namespace

void check_replication(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                       const std::vector<PartitionSpec>& out_specs, const ClosedJaxpr& body) {
  const Jaxpr& j = body.jaxpr;
  // vary[v]: the mesh axes a value may differ over; `unknown` values (from control flow holding collectives) are
  // not checked.
  std::unordered_map<int64_t, Axes> vary;
  std::set<int64_t> unknown;
  for (size_t i = 0; i < j.invars.size() && i < in_specs.size(); ++i)
    for (auto& e : in_specs[i].entries()) vary[j.invars[i].id].insert(e.axes.begin(), e.axes.end());
  auto of = [&](const Atom& a) -> Axes { return a.is_literal ? Axes{} : vary[a.var.id]; };
  for (auto& e : j.eqns) {
    Axes out;
    bool unk = false;
    for (auto& a : e.inputs) {
      Axes s = of(a);
      out.insert(s.begin(), s.end());
      unk = unk || (!a.is_literal && unknown.count(a.var.id));
    }
    const std::string& n = e.prim->name;
    if (is_collective(*e.prim)) {
      auto axes = collective_axes(e.params);
      if (n == "psum" || n == "pmax" || n == "pmin" || n == "all_gather")
        for (auto& a : axes) out.erase(a);  // every device along them gets the same value
      else
        out.insert(axes.begin(), axes.end());  // axis_index, ppermute, reduce_scatter, all_to_all
    } else {
      unk = unk || holds_collective(e.params);
    }
    for (auto& o : e.outputs) {
      vary[o.id] = out;
      if (unk) unknown.insert(o.id);
    }
  }
  for (size_t i = 0; i < j.outvars.size() && i < out_specs.size(); ++i) {
    const Atom& a = j.outvars[i];
    if (!a.is_literal && unknown.count(a.var.id)) continue;
    Axes named;
    for (auto& e : out_specs[i].entries()) named.insert(e.axes.begin(), e.axes.end());
    std::vector<std::string> bad;
    for (auto& ax : of(a))
      if (!named.count(ax)) bad.push_back("'" + ax + "'");
    if (bad.empty()) continue;
    std::vector<std::string> names;
    for (auto& nm : mesh.axis_names()) names.push_back("'" + nm + "'");
    throw_error<TypeError>(
        "shard_map",
        "was given out_specs which require replication which can't be statically inferred given the mesh. The "
        "mesh given has shape {} with corresponding axis names ({}). out_specs[{}] is {} which implies that the "
        "corresponding output value is replicated across mesh axis {}, but the value may vary over {}. Check if "
        "this output is meant to be replicated over those mesh axes; if not, revise its out_specs entry (name the "
        "axis); if so, disable the check with check_rep=false",
        shape_str(mesh.shape()), fmt::join(names, ", "), i, out_specs[i].str(), fmt::join(bad, ", "),
        fmt::join(bad, ", "));
  }
}

}  // namespace jitx::detail
