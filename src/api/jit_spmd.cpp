// jit's SPMD path: annotate the lowered module with the arguments' shardings, partition, optimise, compile, run.
#include "api/jit_spmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "api/jit_key.h"
#include "core/communicator_mpi.h"
#include "core/errors.h"
#include "core/log.h"
#include "dispatch/spmd.h"
#include "hlo/ir/collectives.h"
#include "hlo/passes/pipeline.h"
#include "hlo/passes/spmd_partitioner.h"
#include "jitx/config.h"
#include "jitx/jit.h"
#include "ops/convert.h"
#include "runtime/sharded.h"

namespace jitx::detail {

namespace {

/// `s` with device ids replaced by their positions in `devices` (partition ids), or nullopt if one is not there.
std::optional<hlo::HloSharding> to_partitions(hlo::HloSharding s, const std::vector<runtime::Device*>& devices) {
  for (auto& d : s.devices) {
    int64_t p = -1;
    for (size_t k = 0; k < devices.size(); ++k)
      if (devices[k]->id == d) p = static_cast<int64_t>(k);
    if (p < 0) return std::nullopt;
    d = p;
  }
  return s;
}

/// A PartitionSpec on `mesh` whose tiling is `want` (device ids), found by trying each dimension's choices (no axis,
/// one axis, two axes in either order); nullopt if none has it.
std::optional<PartitionSpec> spec_for(const Mesh& mesh, const hlo::HloSharding& want, int64_t rank) {
  std::vector<std::vector<std::string>> options{{}};
  const auto& names = mesh.axis_names();
  for (auto& a : names) options.push_back({a});
  for (auto& a : names)
    for (auto& b : names)
      if (a != b) options.push_back({a, b});
  std::vector<PartitionSpec::Entry> entries;
  std::optional<PartitionSpec> found;
  auto rec = [&](auto& self, int64_t d, std::vector<std::string>& used) -> void {
    if (found) return;
    if (d == rank) {
      auto spec = PartitionSpec::from_entries(entries);
      if (tiling_of(NamedSharding(mesh, spec), rank) == want) found = spec;
      return;
    }
    for (auto& o : options) {
      bool clash = false;
      for (auto& a : o) clash = clash || std::find(used.begin(), used.end(), a) != used.end();
      if (clash) continue;
      entries.push_back(o.empty() ? PartitionSpec::Entry(nullptr) : PartitionSpec::Entry(o));
      used.insert(used.end(), o.begin(), o.end());
      self(self, d + 1, used);
      used.resize(used.size() - o.size());
      entries.pop_back();
    }
  };
  std::vector<std::string> used;
  rec(rec, 0, used);
  return found;
}

}  // namespace

bool any_sharded_leaf(std::span<const Array> leaves) {
  for (auto& a : leaves)
    if (as_sharded(a)) return true;
  return false;
}

bool log_sharding() {
  static const bool on = [] {
    const char* v = std::getenv("JITX_LOG_SHARDING");
    return v && *v && std::string_view(v) != "0";
  }();
  return on;
}

// --- JitCore's sharding checks (here to keep jit.cpp small) ---

std::vector<Array> JitCore::reshard_outputs(std::vector<Array> result, const Loc& loc) const {
  const auto& outs = options_.out_shardings;
  if (outs.size() > result.size())
    throw_error<TypeError>(name_, "out_shardings has {} entries, but the function returns {} array leaves",
                           outs.size(), result.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k]) continue;
    Sharding have = result[k].sharding(loc);
    // The same placement under another spelling (P('x', None) and P('x')) needs no copy.
    bool same = have == *outs[k] || (have.named() && outs[k]->named() &&
                                     have.named()->mesh() == outs[k]->named()->mesh() &&
                                     tiling_of(have, result[k].ndim()) == tiling_of(*outs[k], result[k].ndim()));
    if (!same) result[k] = device_put(result[k], *outs[k], loc);
  }
  return result;
}

namespace {
bool is_static_arg(const JitOptions& options, int a) {
  return std::find(options.static_argnums.begin(), options.static_argnums.end(), a) != options.static_argnums.end();
}
// JAX's in_shardings: one entry per positional argument that is not static, in order (a static argument before
// an array shifts the array's entry). nullptr: no entry (the count is checked first, in place_in_shardings).
const std::optional<Sharding>* in_sharding_entry(const JitOptions& options, int a) {
  if (a < 0 || is_static_arg(options, a)) return nullptr;
  size_t k = 0;
  for (int i = 0; i < a; ++i) k += is_static_arg(options, i) ? 0 : 1;
  return k < options.in_shardings.size() ? &options.in_shardings[k] : nullptr;
}
}  // namespace

void place_in_shardings(const JitOptions& options, const CallSignature& sig) {
  const auto& ins = options.in_shardings;
  if (ins.empty()) return;
  // The flattener's current argument is the last one after a call's arguments are flattened.
  int nargs = sig.flat.current_arg + 1;
  size_t dynamic = 0;
  for (int i = 0; i < nargs; ++i) dynamic += is_static_arg(options, i) ? 0 : 1;
  if (ins.size() != dynamic)
    throw_error<TypeError>(options.name.empty() ? "jit" : options.name,
                           "in_shardings has {} entr{}, but the function was called with {} non-static positional "
                           "argument{} (one entry per argument that is not in static_argnums, as JAX's jit)",
                           ins.size(), ins.size() == 1 ? "y" : "ies", dynamic, dynamic == 1 ? "" : "s");
  // The signature is the call's own (built for this call from its arguments): placing its leaves here is what
  // JAX's jit does with in_shardings, before the cache key (which includes shardings) is taken.
  auto& leaves = const_cast<CallSignature&>(sig).flat.leaves;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const auto* entry = in_sharding_entry(options, sig.flat.leaf_args[i]);
    if (!entry || !*entry) continue;
    const Sharding& want = **entry;
    const Array& leaf = leaves[i];
    if (!leaf.valid() || leaf.is_tracer() || as_sharded(leaf)) continue;  // sharded leaves: check_in_shardings
    if (const auto* one = want.single(); one && device_of(leaf) == one->device()) continue;
    leaves[i] = device_put(leaf, want);
  }
}

void conform_to_compiled(const Key& key, const std::vector<std::shared_ptr<const Sharding>>& placement,
                         const CallSignature& sig) {
  auto& leaves = const_cast<CallSignature&>(sig).flat.leaves;  // the call's own signature, as above
  if (leaves.size() != key.avals.size()) return;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Array& leaf = leaves[i];
    if (!leaf.valid() || leaf.is_tracer()) continue;
    const ShapedArray& want = key.avals[i];
    if (leaf.shape() != want.shape || leaf.dtype() != want.dtype) continue;
    if (i < placement.size() && placement[i] && !as_sharded(leaf)) leaves[i] = device_put(leaf, *placement[i]);
    if (leaves[i].weak_type() != want.weak_type && !as_sharded(leaves[i]))
      leaves[i] = convert_weak(leaves[i], want.dtype, want.weak_type);
  }
}

void JitCore::check_in_shardings(const CallSignature& sig, const std::string& name) const {
  if (options_.in_shardings.empty()) return;
  for (size_t i = 0; i < sig.flat.leaves.size(); ++i) {
    const auto* entry = in_sharding_entry(options_, sig.flat.leaf_args[i]);
    if (!entry || !*entry) continue;
    const Sharding& want = **entry;
    const Array& leaf = sig.flat.leaves[i];
    if (auto* sh = as_sharded(leaf)) {
      if (!(*sh->sharding == want))
        throw_error<TypeError>(name, "{} is sharded as {}, but in_shardings says {} (device_put it to that "
                               "sharding, or leave its in_shardings entry empty)",
                               sig.flat.paths[i], sh->sharding->str(), want.str());
    } else if (want.named()) {
      device_put(leaf, want);  // checks that the sharding fits (rank, divisibility), as JAX does for arguments
    }
  }
}

std::shared_ptr<SpmdProgram> make_spmd_program(const hlo::Module& lowered, std::span<const Array> leaves,
                                               std::span<const std::optional<Sharding>> out_shardings,
                                               std::vector<int64_t> donated, std::string* why,
                                               const Mesh* region_mesh) {
  const ShardedArray* first = nullptr;
  for (auto& l : leaves)
    if (auto* s = as_sharded(l)) {
      if (!first) first = s;
      else if (s->devices != first->devices) {
        *why = "the sharded arguments are on different device lists";
        return nullptr;
      }
    }
  if ((!first || !first->sharding->named()) && !region_mesh) {
    *why = "no argument has a NamedSharding";
    return nullptr;
  }
  const Mesh& mesh = first && first->sharding->named() ? first->sharding->named()->mesh() : *region_mesh;
  auto prog = std::make_shared<SpmdProgram>();
  for (auto& d : mesh.devices()) prog->devices.push_back(d.get());
  if (region_mesh && !(*region_mesh == mesh)) {
    *why = fmt::format("a shard_map over {} in a program whose arguments are on {}", region_mesh->str(), mesh.str());
    return nullptr;
  }
  auto m = lowered.clone();
  const auto& params = m->entry->parameters;
  if (params.size() != leaves.size()) {
    *why = "the module's parameters are not the call's leaves";
    return nullptr;
  }
  for (size_t k = 0; k < leaves.size(); ++k) {
    auto* s = as_sharded(leaves[k]);
    auto t = s ? to_partitions(s->tiling, prog->devices) : hlo::HloSharding::replicate();
    if (!t) {
      *why = "an argument's devices are not the mesh's";
      return nullptr;
    }
    hlo::set_sharding(*params[k], *t);
  }
  // Shardings inside the module (with_sharding_constraint, a shard_map's region) name devices: make them partition
  // ids.
  for (auto& inst : m->entry->instructions) {
    if (inst->opcode == hlo::Opcode::kParameter) continue;
    if (inst->opcode == hlo::Opcode::kCustomCall && inst->attrs.has("mhlo.sharding") &&
        inst->attrs.get_str("mhlo.sharding") != "{manual}") {
      auto t = to_partitions(hlo::HloSharding::parse(inst->attrs.get_str("mhlo.sharding")), prog->devices);
      if (!t) {
        *why = "a shard_map's mesh is not the arguments' mesh";
        return nullptr;
      }
      inst->attrs.set("mhlo.sharding", t->to_string());
    }
    auto s = hlo::sharding_of(*inst);
    if (!s) continue;
    auto t = to_partitions(*s, prog->devices);
    if (!t) {
      *why = fmt::format("the sharding constraint {} on %{} names devices outside the arguments' mesh", s->to_string(),
                         inst->name);
      return nullptr;
    }
    hlo::set_sharding(*inst, *t);
  }
  // out_shardings on the mesh: constraints on the results (a result that is an argument, or twice a result, is
  // resharded after the call instead).
  {
    hlo::Instruction* root = m->entry->root;
    std::vector<hlo::Instruction*> outs;
    if (root->opcode == hlo::Opcode::kTuple)
      outs = root->operands;
    else
      outs.push_back(root);
    for (size_t k = 0; k < outs.size() && k < out_shardings.size(); ++k) {
      const auto& want = out_shardings[k];
      if (!want || !want->named() || want->named()->mesh() != mesh) continue;
      hlo::Instruction* o = outs[k];
      if (o->opcode == hlo::Opcode::kParameter || std::count(outs.begin(), outs.end(), o) > 1) continue;
      if (auto t = to_partitions(tiling_of(*want, o->shape.rank()), prog->devices)) hlo::set_sharding(*o, *t);
    }
  }
  int64_t n = static_cast<int64_t>(prog->devices.size());
  try {
    hlo::SpmdPartitioner(n).run(*m);
  } catch (const CompileError& e) {
    *why = e.what();
    return nullptr;
  }
  // The results' shardings, read before the optimiser rewrites the instructions that carry them.
  const hlo::Instruction* root = m->entry->root;
  std::vector<const hlo::Instruction*> outs;
  if (root->opcode == hlo::Opcode::kTuple)
    for (auto* o : root->operands) outs.push_back(o);
  else
    outs.push_back(root);
  for (auto* o : outs) {
    auto s = hlo::sharding_of(*o).value_or(hlo::HloSharding::replicate());
    for (auto& d : s.devices) d = prog->devices[static_cast<size_t>(d)]->id;
    auto spec = spec_for(mesh, s, o->shape.rank());
    if (!spec) {
      *why = fmt::format("the partitioner's sharding {} of %{} is no PartitionSpec of {}", s.to_string(), o->name,
                         mesh.str());
      return nullptr;
    }
    prog->out_shardings.push_back(std::make_shared<const Sharding>(NamedSharding(mesh, *spec)));
  }
  hlo::PipelineOptions po;
  po.verify = config().verify_passes;
  hlo::optimize(*m, po);
  hlo::verify(*m);
  prog->module = std::move(m);
  runtime::CompileOptions co;
  co.donated_parameters = donated;
  prog->donated = std::move(donated);
  prog->exe = runtime::Client::get().backend().compile(prog->module, co);
  return prog;
}

namespace {
/// The MPI communicators of this process's partitions of a launch over `devices` (a mesh spanning processes): the
/// MPI transport numbers participant i of process p as p * k + i, k being the partitions each process runs.
std::vector<std::shared_ptr<Communicator>> mpi_partition_comms(const std::vector<runtime::Device*>& devices,
                                                               const std::vector<size_t>& local) {
  std::map<int, int64_t> per_process;
  std::vector<int64_t> rank_of;
  for (auto* d : devices) rank_of.push_back(per_process[d->process_index]++);
  int64_t k = static_cast<int64_t>(local.size());
  for (auto [proc, count] : per_process)
    if (count != k)
      throw_error<RuntimeError>("jit",
                                "the mesh has {} devices of process {} but {} of this process {}: a mesh spanning "
                                "processes needs the same number of devices from each of them",
                                count, proc, k, devices[local[0]]->process_index);
  for (size_t q = 0; q < devices.size(); ++q) rank_of[q] += devices[q]->process_index * k;
  auto mpi = make_mpi_communicators(k);
  std::vector<std::shared_ptr<Communicator>> out;
  for (size_t i = 0; i < local.size(); ++i)
    out.push_back(renumber_communicator(mpi[i], rank_of, static_cast<int64_t>(local[i])));
  return out;
}
}  // namespace

std::vector<Array> run_spmd(const SpmdProgram& p, std::span<const Array> leaves,
                            std::span<const ShapedArray> out_avals) {
  size_t n = p.devices.size();
  std::vector<size_t> local;  // the partitions this process runs (all of them in a one-process run)
  for (size_t q = 0; q < n; ++q)
    if (p.devices[q]->local) local.push_back(q);
  if (local.empty())
    throw_error<RuntimeError>("jit", "none of the mesh's {} devices belongs to this process", n);
  std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> args(local.size());
  std::vector<runtime::Device*> devs;
  for (size_t q : local) devs.push_back(p.devices[q]);
  std::vector<std::shared_ptr<runtime::Buffer>> given;  // the donated shards, deleted once the launch is enqueued
  for (size_t k = 0; k < leaves.size(); ++k) {
    const Array& l = leaves[k];
    if (auto* s = as_sharded(l)) {
      bool donate = std::find(p.donated.begin(), p.donated.end(), static_cast<int64_t>(k)) != p.donated.end();
      for (size_t i = 0; i < local.size(); ++i) {
        const auto& b = s->shards[local[i]];
        if (b->deleted)
          throw_error<RuntimeError>("jit",
                                    "this Array's buffer was donated to a jitted call (donate_argnums) and is no "
                                    "longer valid; use the call's output instead");
        if (donate) {  // written in place on its device: reads queued elsewhere go first
          b->wait_for_readers_except(devs[i]);
          given.push_back(b);
        }
        args[i].push_back(b);
      }
      continue;
    }
    // An unsharded argument is replicated: a copy on every device (in a multi-process job, each process's own value).
    Literal lit = l.impl()->host_literal("jit");
    for (size_t i = 0; i < local.size(); ++i) args[i].push_back(runtime::Buffer::from_literal(lit, devs[i]));
  }
  auto outs = local.size() == n ? execute_spmd(*p.exe, devs, args)
                                : execute_spmd(*p.exe, devs, args, mpi_partition_comms(p.devices, local));
  for (auto& b : given) b->deleted = true;
  std::vector<Array> result;
  for (size_t k = 0; k < out_avals.size(); ++k) {
    std::vector<std::shared_ptr<runtime::Buffer>> shards(n);
    for (size_t i = 0; i < local.size(); ++i) {
      outs[i][k]->committed = true;
      shards[local[i]] = outs[i][k];
    }
    result.push_back(make_sharded(p.out_shardings[k], std::move(shards), out_avals[k]));
  }
  return result;
}

}  // namespace jitx::detail
