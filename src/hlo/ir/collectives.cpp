// Collective attributes: replica groups, dimensions, source-target pairs, and instruction shardings.
#include "hlo/ir/collectives.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <set>

#include "core/errors.h"

namespace jitx::hlo {

namespace {
struct AsyncForms {
  Opcode sync, start, done;
};
constexpr AsyncForms kAsyncForms[] = {
    {Opcode::kAllReduce, Opcode::kAllReduceStart, Opcode::kAllReduceDone},
    {Opcode::kAllGather, Opcode::kAllGatherStart, Opcode::kAllGatherDone},
    {Opcode::kReduceScatter, Opcode::kReduceScatterStart, Opcode::kReduceScatterDone},
    {Opcode::kAllToAll, Opcode::kAllToAllStart, Opcode::kAllToAllDone},
    {Opcode::kCollectivePermute, Opcode::kCollectivePermuteStart, Opcode::kCollectivePermuteDone},
};
const AsyncForms* forms_of(Opcode op) {
  for (auto& f : kAsyncForms)
    if (f.sync == op || f.start == op || f.done == op) return &f;
  return nullptr;
}
}  // namespace

bool is_collective(Opcode op) {
  auto* f = forms_of(op);
  return f && op != f->done;
}
bool is_async_collective_start(Opcode op) {
  auto* f = forms_of(op);
  return f && op == f->start;
}
bool is_async_collective_done(Opcode op) {
  auto* f = forms_of(op);
  return f && op == f->done;
}
Opcode sync_collective_of(Opcode op) {
  auto* f = forms_of(op);
  return f ? f->sync : op;
}
Opcode async_start_of(Opcode op) {
  auto* f = forms_of(op);
  JITX_ASSERT(f && f->sync == op, "{} is not a synchronous collective", opcode_name(op));
  return f->start;
}
Opcode async_done_of(Opcode op) {
  auto* f = forms_of(op);
  JITX_ASSERT(f && f->sync == op, "{} is not a synchronous collective", opcode_name(op));
  return f->done;
}

bool collective_runs_on_buffers(const Instruction& inst) {
  if (!is_collective(inst.opcode) || inst.shape.is_tuple || inst.operands.size() != 1 ||
      inst.operand(0)->shape.is_tuple)
    return false;
  Opcode op = sync_collective_of(inst.opcode);
  if (op == Opcode::kAllReduce || op == Opcode::kCollectivePermute) return true;
  auto cfg = CollectiveConfig::of(inst);
  const auto& dims = inst.operand(0)->shape.dims;
  for (int64_t k = 0; k < cfg.dimension; ++k)
    if (dims[static_cast<size_t>(k)] != 1) return false;
  return cfg.dimension >= 0;
}

bool is_braced_text_attribute(std::string_view key) {
  return key == "sharding" || key == "replica_groups" || key == "source_target_pairs";
}

std::string groups_str(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<std::string> parts;
  for (auto& g : groups) parts.push_back(fmt::format("{{{}}}", fmt::join(g, ",")));
  return fmt::format("{{{}}}", fmt::join(parts, ","));
}

std::vector<std::vector<int64_t>> parse_groups(std::string_view text) {
  auto bad = [&](std::string_view why) -> void {
    detail::throw_error<CompileError>("hlo", "cannot parse the groups '{}': {}", text, why);
  };
  std::vector<std::vector<int64_t>> out;
  size_t i = 0;
  auto ws = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  ws();
  if (i >= text.size() || text[i] != '{') bad("expected '{'");
  ++i;
  ws();
  while (i < text.size() && text[i] == '{') {
    ++i;
    std::vector<int64_t> g;
    ws();
    while (i < text.size() && text[i] != '}') {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      if (j == i) bad("expected a number");
      if (j - i > 9) bad("a number too large for a partition id");
      g.push_back(std::stoll(std::string(text.substr(i, j - i))));
      i = j;
      ws();
      if (i < text.size() && text[i] == ',') {
        ++i;
        ws();
      }
    }
    if (i >= text.size()) bad("missing '}'");
    ++i;
    out.push_back(std::move(g));
    ws();
    if (i < text.size() && text[i] == ',') {
      ++i;
      ws();
    }
  }
  if (i >= text.size() || text[i] != '}') bad("missing the closing '}'");
  ++i;
  ws();
  if (i != text.size()) bad("text after the closing '}'");
  return out;
}

namespace {
[[noreturn]] void verify_fail(const Instruction& i, std::string_view msg) {
  throw CompileError(fmt::format("[hlo verifier] %{} ({}): {}", i.name, opcode_name(i.opcode), msg));
}
}  // namespace

CollectiveConfig CollectiveConfig::of(const Instruction& inst) {
  if (!is_collective(inst.opcode)) verify_fail(inst, "not a collective");
  CollectiveConfig c;
  const auto& a = inst.attrs;
  try {
    if (a.has("replica_groups")) c.replica_groups = parse_groups(a.get_str("replica_groups"));
    if (a.has("source_target_pairs"))
      for (auto& p : parse_groups(a.get_str("source_target_pairs"))) {
        if (p.size() != 2) verify_fail(inst, "a source_target_pairs entry is not a pair");
        c.source_target_pairs.emplace_back(p[0], p[1]);
      }
    c.channel_id = a.get_int("channel_id", 1);
    if (a.has("dimensions")) {
      const auto& d = a.get_ints("dimensions");
      if (d.size() != 1) verify_fail(inst, "dimensions must name one dimension");
      c.dimension = d[0];
    }
  } catch (const std::bad_variant_access&) {
    verify_fail(inst, "an attribute has the wrong type");
  }
  std::set<int64_t> seen;
  size_t size = c.replica_groups.empty() ? 0 : c.replica_groups[0].size();
  for (auto& g : c.replica_groups) {
    if (g.size() != size) verify_fail(inst, "replica groups of different sizes");
    for (auto p : g)
      if (!seen.insert(p).second) verify_fail(inst, fmt::format("partition {} is in two replica groups", p));
  }
  Opcode op = sync_collective_of(inst.opcode);
  bool needs_dim = op == Opcode::kAllGather || op == Opcode::kReduceScatter || op == Opcode::kAllToAll;
  if (needs_dim) {
    if (inst.operands.empty() || c.dimension < 0 || c.dimension >= inst.operands[0]->shape.rank())
      verify_fail(inst, "needs dimensions={d} naming a dimension of its operand");
  }
  if (op == Opcode::kCollectivePermute) {
    std::set<int64_t> src, dst;
    for (auto& [s, t] : c.source_target_pairs)
      if (!src.insert(s).second || !dst.insert(t).second) verify_fail(inst, "a partition is a source or target twice");
  }
  return c;
}

void CollectiveConfig::set_on(detail::Params& attrs) const {
  attrs.set("channel_id", channel_id);
  if (!replica_groups.empty()) attrs.set("replica_groups", groups_str(replica_groups));
  if (dimension >= 0) attrs.set("dimensions", std::vector<int64_t>{dimension});
  if (!source_target_pairs.empty()) {
    std::vector<std::vector<int64_t>> p;
    for (auto& [s, t] : source_target_pairs) p.push_back({s, t});
    attrs.set("source_target_pairs", groups_str(p));
  }
}

std::pair<std::vector<int64_t>, int64_t> CollectiveConfig::group_of(int64_t partition, int64_t num_partitions) const {
  if (replica_groups.empty()) {
    std::vector<int64_t> all;
    for (int64_t p = 0; p < num_partitions; ++p) all.push_back(p);
    return {all, partition};
  }
  for (auto& g : replica_groups)
    for (size_t k = 0; k < g.size(); ++k)
      if (g[k] == partition) return {g, static_cast<int64_t>(k)};
  return {{partition}, 0};  // a partition in no group reduces with itself alone
}

std::optional<HloSharding> sharding_of(const Instruction& inst) {
  if (!inst.attrs.has("sharding")) return std::nullopt;
  return HloSharding::parse(inst.attrs.get_str("sharding"));
}

void set_sharding(Instruction& inst, const HloSharding& s) { inst.attrs.set("sharding", s.to_string()); }

}  // namespace jitx::hlo
