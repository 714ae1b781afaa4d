// The `shard_map` primitive (JAX's shard_map_p): what jit/make_jaxpr record for a shard_map call. Its params hold
// the body's jaxpr (per-device avals, with the collective equations), the mesh and the specs; the mesh and specs
// themselves live in a process-wide table keyed by their text, as sharding_constraint's shardings do.
//
// Its rules go through the expansion over the stacked blocks (shard_map_expand running the body's jaxpr):
// lowering lowers the expanded jaxpr (a jitted shard_map runs on one device, every device's block stacked), JVP and
// batching transform the expansion. Two other forms: for the StableHLO text (Lowered::as_text) the manual region
// with HLO collectives (lower_manual_region), and, when a jitted program is exactly one shard_map on arguments
// sharded as its in_specs, the body's per-device program run on the mesh's devices (spmd_program_for).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <mutex>
#include <unordered_map>

#include "api/jit_spmd.h"
#include "api/shard_map_internal.h"
#include "core/errors.h"
#include "core/literal.h"
#include "core/log.h"
#include "core/primitive.h"
#include "core/trace.h"
#include "hlo/passes/pipeline.h"
#include "jitx/config.h"
#include "lowering/lower.h"
#include "lowering/lower_ctx.h"
#include "primitives/collectives.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"
#include "runtime/sharded.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {

namespace {

struct Info {
  Mesh mesh;
  std::vector<PartitionSpec> in_specs, out_specs;
};

std::mutex& table_mu() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<const Info>>& table() {
  static std::map<std::string, std::shared_ptr<const Info>> t;
  return t;
}

std::string specs_text(const std::vector<PartitionSpec>& specs) {
  std::vector<std::string> v;
  for (auto& s : specs) v.push_back(s.str());
  return v.size() == 1 ? "(" + v[0] + ",)" : fmt::format("({})", fmt::join(v, ", "));
}
std::string devices_text(const Mesh& m) {
  std::vector<std::string> v;
  for (auto& d : m.devices()) v.push_back(d.str());
  return fmt::format("({})", fmt::join(v, ", "));
}
std::string key_of(const Params& ps) {
  return ps.get_str("mesh") + "|" + ps.get_str("devices") + "|" + ps.get_str("in_specs") + "|" +
         ps.get_str("out_specs");
}
const Info& info_of(const Params& ps) {
  std::lock_guard<std::mutex> l(table_mu());
  auto it = table().find(key_of(ps));
  JITX_ASSERT(it != table().end(), "shard_map names an unknown mesh/specs {}", key_of(ps));
  return *it->second;
}

/// Evaluates the body's jaxpr on per-device tracers: collectives (axis_index has no operand) go to the active
/// shard_map's trace, everything else is bound as eval_jaxpr does.
std::vector<Array> eval_body(const ClosedJaxpr& cj, const std::vector<Array>& args) {
  const Jaxpr& j = cj.jaxpr;
  std::unordered_map<int64_t, Array> env;
  for (size_t i = 0; i < j.constvars.size(); ++i) env[j.constvars[i].id] = cj.consts[i];
  for (size_t i = 0; i < j.invars.size(); ++i) env[j.invars[i].id] = args[i];
  auto read = [&](const Atom& a) { return a.is_literal ? literal_array(a.lit) : env.at(a.var.id); };
  for (auto& e : j.eqns) {
    std::vector<Array> ins;
    for (auto& a : e.inputs) ins.push_back(read(a));
    std::vector<Array> outs = is_collective(*e.prim) ? bind_collective(e.prim->name, std::move(ins), e.params)
                                                     : detail::bind(*e.prim, ins, e.params);
    for (size_t i = 0; i < outs.size(); ++i) env[e.outputs[i].id] = outs[i];
  }
  std::vector<Array> result;
  for (auto& a : j.outvars) result.push_back(read(a));
  return result;
}

/// The expansion of one shard_map equation, as a function of its operands.
LeafFn expansion(const Params& ps) {
  const Info& info = info_of(ps);
  auto body = ps.get_jaxpr("jaxpr");
  return [&info, body](const std::vector<Array>& args) {
    return shard_map_expand(
        info.mesh, info.in_specs, info.out_specs,
        [body](const std::vector<Array>& ins) { return eval_body(*body, ins); }, args);
  };
}

ShapedArray global_aval(const Mesh& mesh, const PartitionSpec& spec, const ShapedArray& block, size_t i) {
  Dims d = check_spec(mesh, spec, block, i, false);
  ShapedArray g = block;
  for (size_t k = 0; k < d.axes.size(); ++k)
    for (int64_t a : d.axes[k]) g.shape[k] *= mesh.shape()[static_cast<size_t>(a)];
  return g;
}

hlo::Instruction* custom_call(hlo::Computation* comp, const char* target, hlo::Instruction* x, ShapedArray to,
                              const std::string& sharding) {
  return comp->add(hlo::Opcode::kCustomCall, hlo::Shape(to.dtype, to.shape), {x},
                   Params{{"custom_call_target", std::string(target)}, {"mhlo.sharding", sharding}});
}

/// The SPMD form (for the StableHLO text), as JAX wrote it before Shardy: each operand annotated with its sharding
/// and cut to its per-device shape (SPMDFullToShardShape, a manual sharding), the body with HLO collectives over
/// the mesh's partitions, each result put back together (SPMDShardToFullShape).
std::vector<hlo::Instruction*> lower_manual_region(LowerCtx& c, std::span<hlo::Instruction* const> a) {
  const Info& info = info_of(c.params);
  const ClosedJaxpr& body = *c.params.get_jaxpr("jaxpr");
  auto blocks_in = body.in_avals();
  std::vector<hlo::Instruction*> ins;
  for (size_t i = 0; i < a.size(); ++i) {
    std::string sh = tiling_of(NamedSharding(info.mesh, info.in_specs[i]), c.in_avals[i].ndim()).to_string();
    auto* s = custom_call(c.comp, "Sharding", a[i], c.in_avals[i], sh);
    ins.push_back(custom_call(c.comp, "SPMDFullToShardShape", s, blocks_in[i], "{manual}"));
  }
  ManualMesh mm{info.mesh.shape(), info.mesh.axis_names()};
  std::vector<hlo::Instruction*> outs;
  {
    ManualMeshScope scope(&mm);
    outs = c.lower_into(c.comp, body, ins);
  }
  auto blocks_out = body.out_avals();
  std::vector<hlo::Instruction*> res;
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string sh = tiling_of(NamedSharding(info.mesh, info.out_specs[i]), c.out_avals[i].ndim()).to_string();
    auto* s = custom_call(c.comp, "Sharding", outs[i], blocks_out[i], "{manual}");
    res.push_back(custom_call(c.comp, "SPMDShardToFullShape", s, c.out_avals[i], sh));
  }
  return res;
}

const Primitive& shard_map_p() {
  static const Primitive& p = []() -> const Primitive& {
    Primitive q;
    q.name = "shard_map";
    q.abstract_eval = [](std::span<const ShapedArray>, const Params& ps) {
      const Info& info = info_of(ps);
      std::vector<ShapedArray> outs;
      auto blocks = ps.get_jaxpr("jaxpr")->out_avals();
      for (size_t i = 0; i < blocks.size(); ++i)
        outs.push_back(global_aval(info.mesh, info.out_specs[i], blocks[i], i));
      return outs;
    };
    q.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      if (spmd_text_lowering()) return lower_manual_region(c, a);
      std::vector<ShapedArray> in(c.in_avals.begin(), c.in_avals.end());
      ClosedJaxpr expanded = trace_to_jaxpr("shard_map", in, expansion(c.params));
      return c.lower_into(c.comp, expanded, std::vector<hlo::Instruction*>(a.begin(), a.end()));
    };
    q.jvp = [](std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
      auto [outs, ts] =
          jvp_flat("shard_map", expansion(ps), {primals.begin(), primals.end()}, {tangents.begin(), tangents.end()});
      return JvpResult{outs, ts};
    };
    q.batch = [](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
      return batch_call(batch_size(args, dims), expansion(ps), args, dims);
    };
    return register_primitive(std::move(q));
  }();
  return p;
}
const bool kShardMapPrimRegistered = (shard_map_p(), true);

}  // namespace

int64_t shard_map_partitions(const ClosedJaxpr& cj) {
  for (auto& e : cj.jaxpr.eqns)
    if (e.prim == &shard_map_p()) return info_of(e.params).mesh.size();
  return 0;
}

bool has_shard_map(const ClosedJaxpr& jaxpr) { return shard_map_partitions(jaxpr) > 0; }

namespace {
/// The partitioned program of a jaxpr with shard_maps among other ops: lowered again with each shard_map as its
/// manual region (the partitioner reshards the operands to the in_specs, clones the per-device body, and gives
/// the results the out_specs' tiles), over the shard_maps' mesh. Without shard_maps, or when they cannot be
/// lowered so: the lowered module (their one-device expansions).
std::shared_ptr<SpmdProgram> partitioned(const ClosedJaxpr& jaxpr, const hlo::Module& lowered,
                                         std::span<const Array> leaves,
                                         std::span<const std::optional<Sharding>> out_shardings,
                                         const std::vector<int64_t>& donated, std::string* why) {
  const Mesh* mesh = nullptr;
  for (auto& e : jaxpr.jaxpr.eqns)
    if (e.prim == &shard_map_p()) {
      const Mesh& m = info_of(e.params).mesh;
      if (mesh && !(*mesh == m)) return make_spmd_program(lowered, leaves, out_shardings, donated, why);
      mesh = &m;
    }
  if (!mesh) return make_spmd_program(lowered, leaves, out_shardings, donated, why);
  bool& on = spmd_text_lowering();
  on = true;
  std::shared_ptr<hlo::Module> m;
  try {
    m = lower_jaxpr(jaxpr, lowered.name);
  } catch (const Error& e) {
    on = false;
    if (log_sharding()) log_line(fmt::format("[sharding] shard_map runs its one-device expansion: {}", e.what()));
    return make_spmd_program(lowered, leaves, out_shardings, donated, why);
  }
  on = false;
  auto prog = make_spmd_program(*m, leaves, out_shardings, donated, why, mesh);
  if (prog && log_sharding())
    log_line(fmt::format("[sharding] shard_map regions partitioned with the rest of the program on {} devices",
                         mesh->size()));
  return prog;
}
}  // namespace

std::shared_ptr<SpmdProgram> spmd_program_for(const ClosedJaxpr& jaxpr, const hlo::Module& lowered,
                                              std::span<const Array> leaves,
                                              std::span<const std::optional<Sharding>> out_shardings,
                                              std::vector<int64_t> donated, std::string* why) {
  auto fallback = [&](const std::string& reason) {
    if (log_sharding()) log_line(fmt::format("[sharding] shard_map not run as its own SPMD program: {}", reason));
    return partitioned(jaxpr, lowered, leaves, out_shardings, donated, why);
  };
  const Jaxpr& j = jaxpr.jaxpr;
  if (j.eqns.size() != 1 || j.eqns[0].prim != &shard_map_p() || !j.constvars.empty())
    return partitioned(jaxpr, lowered, leaves, out_shardings, donated, why);
  const Eqn& e = j.eqns[0];
  if (e.inputs.size() != j.invars.size() || e.outputs.size() != j.outvars.size())
    return fallback("the jaxpr is more than the shard_map on the arguments");
  for (size_t i = 0; i < e.inputs.size(); ++i)
    if (e.inputs[i].is_literal || e.inputs[i].var.id != j.invars[i].id)
      return fallback("the shard_map's operands are not the arguments in order");
  for (size_t i = 0; i < e.outputs.size(); ++i)
    if (j.outvars[i].is_literal || j.outvars[i].var.id != e.outputs[i].id)
      return fallback("the results are not the shard_map's in order");
  const Info& info = info_of(e.params);
  std::vector<runtime::Device*> devices;
  for (size_t i = 0; i < leaves.size(); ++i) {
    auto* s = as_sharded(leaves[i]);
    const PartitionSpec& want = info.in_specs[i];
    if (!s) {
      if (want.size() != 0 && std::any_of(want.entries().begin(), want.entries().end(),
                                          [](const PartitionSpec::Entry& en) { return !en.axes.empty(); }))
        return fallback(fmt::format("args[{}] is not sharded as in_specs[{}] = {}", i, i, want.str()));
      continue;
    }
    const NamedSharding* n = s->sharding->named();
    auto padded = [&](const PartitionSpec& p) {
      auto en = p.entries();
      while (en.size() < static_cast<size_t>(leaves[i].ndim())) en.emplace_back(nullptr);
      return en;
    };
    if (!n || !(n->mesh() == info.mesh) || padded(n->spec()) != padded(want))
      return fallback(fmt::format("args[{}] is sharded as {}, not as in_specs[{}] = {} on {}", i, s->sharding->str(), i,
                                  want.str(), info.mesh.str()));
    devices = s->devices;
  }
  if (devices.empty()) return fallback("no argument is sharded on the mesh");
  auto prog = std::make_shared<SpmdProgram>();
  prog->devices = devices;
  ManualMesh mm{info.mesh.shape(), info.mesh.axis_names()};
  {
    ManualMeshScope scope(&mm);
    prog->module = lower_jaxpr(*e.params.get_jaxpr("jaxpr"), lowered.name + ".shard_map");
  }
  for (auto& spec : info.out_specs)
    prog->out_shardings.push_back(std::make_shared<const Sharding>(NamedSharding(info.mesh, spec)));
  hlo::PipelineOptions po;
  po.verify = config().verify_passes;
  hlo::optimize(*prog->module, po);
  hlo::verify(*prog->module);
  runtime::CompileOptions co;
  co.donated_parameters = donated;
  prog->donated = std::move(donated);
  prog->exe = runtime::Client::get().backend().compile(prog->module, co);
  if (log_sharding())
    log_line(fmt::format("[sharding] shard_map runs as its own SPMD program on {} partitions", devices.size()));
  return prog;
}

std::string stablehlo_text_of(const ClosedJaxpr& jaxpr, const hlo::Module& lowered, StablehloAttrs attrs) {
  int64_t n = shard_map_partitions(jaxpr);
  if (n == 0) return print_stablehlo(lowered, attrs);
  bool& on = spmd_text_lowering();
  on = true;
  std::shared_ptr<hlo::Module> m;
  try {
    m = lower_jaxpr(jaxpr, lowered.name);
  } catch (...) {
    on = false;
    throw;
  }
  on = false;
  attrs.num_partitions = n;
  return print_stablehlo(*m, attrs);
}

namespace {
ClosedJaxpr trace_body(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                       const std::vector<PartitionSpec>& out_specs, const ShardMapFn& f,
                       const std::vector<Array>& args) {
  std::vector<ShapedArray> blocks;
  for (size_t i = 0; i < args.size(); ++i) {
    ShapedArray a = args[i].aval();
    Dims d = check_spec(mesh, in_specs[i], a, i, true);
    for (size_t k = 0; k < d.axes.size(); ++k)
      for (int64_t m : d.axes[k]) a.shape[k] /= mesh.shape()[static_cast<size_t>(m)];
    blocks.push_back(a);
  }
  CollectiveScope scope{mesh.shape(), mesh.axis_names(), nullptr};
  ClosedJaxpr body;
  {
    CollectiveScopeGuard g(&scope);
    body = trace_to_jaxpr("shard_map", blocks, [&](const std::vector<Array>& ins) {
      std::vector<Array> outs = f(ins);
      for (auto& o : outs)
        if (!o.valid()) throw_error<TypeError>("shard_map", "the function returned an empty Array");
      return outs;
    });
  }
  if (body.jaxpr.outvars.size() != out_specs.size())
    throw_error<TypeError>("shard_map", "out_specs has {} entries, but the function returned {} results",
                           out_specs.size(), body.jaxpr.outvars.size());
  return body;
}

/// The specs of the body's inputs: its consts (replicated) first.
std::vector<PartitionSpec> with_consts(const ClosedJaxpr& body, const std::vector<PartitionSpec>& in_specs) {
  std::vector<PartitionSpec> ins(body.consts.size(), PartitionSpec());
  ins.insert(ins.end(), in_specs.begin(), in_specs.end());
  return ins;
}
}  // namespace

void check_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                     const std::vector<PartitionSpec>& out_specs, const ShardMapFn& f, const std::vector<Array>& args) {
  ClosedJaxpr body = trace_body(mesh, in_specs, out_specs, f, args);
  ClosedJaxpr flat = body;
  flat.jaxpr.invars.insert(flat.jaxpr.invars.begin(), body.jaxpr.constvars.begin(), body.jaxpr.constvars.end());
  check_replication(mesh, with_consts(body, in_specs), out_specs, flat);
}

std::vector<Array> bind_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                  const std::vector<PartitionSpec>& out_specs, const ShardMapFn& f,
                                  const std::vector<Array>& args, bool check_rep) {
  ClosedJaxpr body = trace_body(mesh, in_specs, out_specs, f, args);
  // Values the body closed over become leading operands, replicated (P()) on every device.
  std::vector<Array> operands = body.consts;
  std::vector<PartitionSpec> ins = with_consts(body, in_specs);
  operands.insert(operands.end(), args.begin(), args.end());
  auto closed = std::make_shared<ClosedJaxpr>();
  closed->jaxpr = body.jaxpr;
  closed->jaxpr.invars.insert(closed->jaxpr.invars.begin(), body.jaxpr.constvars.begin(), body.jaxpr.constvars.end());
  closed->jaxpr.constvars.clear();
  Params ps{{"jaxpr", std::shared_ptr<const ClosedJaxpr>(closed)},
            {"mesh", mesh.str()},
            {"devices", devices_text(mesh)},
            {"in_specs", specs_text(ins)},
            {"out_specs", specs_text(out_specs)},
            {"check_rep", check_rep}};
  if (check_rep) check_replication(mesh, ins, out_specs, *closed);
  {
    std::lock_guard<std::mutex> l(table_mu());
    table().emplace(key_of(ps), std::make_shared<const Info>(Info{mesh, ins, out_specs}));
  }
  return detail::bind(shard_map_p(), operands, ps);
}

}  // namespace jitx::detail
