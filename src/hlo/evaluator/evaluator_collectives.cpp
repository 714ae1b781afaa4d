// The evaluator's collectives: each partition's evaluation exchanges values through the current thread's
// communicator; evaluate_spmd runs one evaluation per partition, each on its own thread.
#include "hlo/evaluator/evaluator_collectives.h"

#include <cstring>
#include <thread>

#include "core/collective_queue.h"
#include "core/communicator.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"

namespace jitx::evaluator {

using detail::Literal;
using hlo::Instruction;
using hlo::Opcode;

namespace {

/// Rows (the product of the dims before d), the slab bytes per row per unit of dim d.
struct SlabGeometry {
  int64_t rows = 1, inner_bytes = 0;
};
SlabGeometry geometry(const std::vector<int64_t>& dims, int64_t d, DType dt) {
  SlabGeometry g;
  for (int64_t k = 0; k < d; ++k) g.rows *= dims[static_cast<size_t>(k)];
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(d) + 1; k < dims.size(); ++k) inner *= dims[k];
  g.inner_bytes = inner * static_cast<int64_t>(dtype_size(dt));
  return g;
}

/// x's part [lo, lo + n) along d, contiguous.
void copy_slab_out(const Literal& x, int64_t d, int64_t lo, int64_t n, char* out) {
  auto g = geometry(x.dims, d, x.dtype);
  int64_t len = x.dims[static_cast<size_t>(d)];
  const char* src = static_cast<const char*>(x.data());
  for (int64_t r = 0; r < g.rows; ++r)
    if (n * g.inner_bytes != 0)
      std::memcpy(out + r * n * g.inner_bytes, src + (r * len + lo) * g.inner_bytes,
                  static_cast<size_t>(n * g.inner_bytes));
}

/// Writes a contiguous slab of n along d into out at lo.
void copy_slab_in(Literal& out, int64_t d, int64_t lo, int64_t n, const char* in) {
  auto g = geometry(out.dims, d, out.dtype);
  int64_t len = out.dims[static_cast<size_t>(d)];
  char* dst = static_cast<char*>(out.data());
  for (int64_t r = 0; r < g.rows; ++r)
    if (n * g.inner_bytes != 0)
      std::memcpy(dst + (r * len + lo) * g.inner_bytes, in + r * n * g.inner_bytes,
                  static_cast<size_t>(n * g.inner_bytes));
}

detail::ReduceKind kind_of(const Instruction& inst) {
  switch (hlo::reducer_of(inst)) {
    case hlo::Reducer::kAdd:
      return detail::ReduceKind::kSum;
    case hlo::Reducer::kMul:
      return detail::ReduceKind::kProduct;
    case hlo::Reducer::kMax:
      return detail::ReduceKind::kMax;
    case hlo::Reducer::kMin:
      return detail::ReduceKind::kMin;
    case hlo::Reducer::kAnd:
      return detail::ReduceKind::kAnd;
    case hlo::Reducer::kOr:
      return detail::ReduceKind::kOr;
    default:
      JITX_ASSERT(false, "reducer of %{}", inst.name);
  }
  return detail::ReduceKind::kSum;
}

Literal eval_collective_with(detail::Communicator* comm, const Instruction& inst, const Literal& x) {
  auto cfg = hlo::CollectiveConfig::of(inst);
  int64_t n = comm ? comm->size() : 1;
  int64_t me = comm ? comm->rank() : 0;
  auto [group, pos] = cfg.group_of(me, n);
  if (!comm && (group.size() > 1 || !cfg.source_target_pairs.empty()))
    detail::throw_error<RuntimeError>(inst.name,
                                      "{} exchanges values between partitions, but this evaluation runs "
                                      "one partition alone (run the module with evaluate_spmd or as an SPMD "
                                      "executable)",
                                      hlo::opcode_name(inst.opcode));
  int64_t g = static_cast<int64_t>(group.size());
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  if (!comm) {  // a group of one: every collective is the identity
    if (x.nbytes()) std::memcpy(out.data(), x.data(), x.nbytes());
    return out;
  }
  detail::CollectiveTimer timer(static_cast<int64_t>(x.nbytes()));  // profiler::collective_stats
  DType dt = x.dtype;
  int64_t d = cfg.dimension;
  switch (hlo::sync_collective_of(inst.opcode)) {
    case Opcode::kAllReduce:
      comm->all_reduce(x.data(), out.data(), x.size(), dt, kind_of(inst), group);
      break;
    case Opcode::kAllGather: {
      std::vector<char> buf(static_cast<size_t>(g) * x.nbytes());
      comm->all_gather(x.data(), buf.data(), x.size(), dt, group);
      int64_t len = x.dims[static_cast<size_t>(d)];
      for (int64_t k = 0; k < g; ++k) copy_slab_in(out, d, k * len, len, buf.data() + k * x.nbytes());
      break;
    }
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll: {
      int64_t len = x.dims[static_cast<size_t>(d)];
      JITX_ASSERT(len % g == 0, "%{}: dimension {} of {} is not divisible by the group size {}", inst.name, d, len, g);
      int64_t m = len / g;
      std::vector<char> packed(x.nbytes());
      size_t chunk = x.nbytes() / static_cast<size_t>(g);
      for (int64_t k = 0; k < g; ++k) copy_slab_out(x, d, k * m, m, packed.data() + k * chunk);
      int64_t count = x.size() / g;
      if (inst.opcode == Opcode::kReduceScatter) {
        comm->reduce_scatter(packed.data(), out.data(), count, dt, kind_of(inst), group);
      } else {
        std::vector<char> recv(x.nbytes());
        comm->all_to_all(packed.data(), recv.data(), count, dt, group);
        for (int64_t k = 0; k < g; ++k) copy_slab_in(out, d, k * m, m, recv.data() + k * chunk);
      }
      break;
    }
    case Opcode::kCollectivePermute:
      comm->permute(x.data(), out.data(), x.size(), dt, cfg.source_target_pairs);
      break;
    default:
      JITX_ASSERT(false, "%{} is not a collective", inst.name);
  }
  (void)pos;
  return out;
}

}  // namespace

Literal eval_collective(const Instruction& inst, const Literal& x) {
  detail::Communicator* comm = detail::current_communicator();
  auto& queue = detail::CollectiveQueue::this_thread();
  if (!queue.in_flight()) return eval_collective_with(comm, inst, x);
  Literal out;
  queue.run_in_order([&] { out = eval_collective_with(comm, inst, x); });
  return out;
}

bool collective_runs_in_place(const Instruction& inst) {
  return inst.opcode == Opcode::kPartitionId || hlo::collective_runs_on_buffers(inst);
}

namespace {
/// run_collective's work, through `comm` (null: this partition runs alone).
void run_collective_with(detail::Communicator* comm, const Instruction& inst, const void* in, void* out) {
  const hlo::Shape& xs = inst.operand(0)->shape;
  DType dt = xs.dtype;
  int64_t count = xs.num_elements();
  size_t bytes = static_cast<size_t>(count) * dtype_size(dt);
  auto cfg = hlo::CollectiveConfig::of(inst);
  int64_t n = comm ? comm->size() : 1;
  auto [group, pos] = cfg.group_of(comm ? comm->rank() : 0, n);
  (void)pos;
  if (!comm) {
    if (group.size() > 1 || !cfg.source_target_pairs.empty())
      detail::throw_error<RuntimeError>(inst.name,
                                        "{} exchanges values between partitions, but this program runs one "
                                        "partition alone (run it as an SPMD executable)",
                                        hlo::opcode_name(inst.opcode));
    if (bytes) std::memcpy(out, in, bytes);
    return;
  }
  detail::CollectiveTimer timer(static_cast<int64_t>(bytes));  // profiler::collective_stats
  int64_t g = static_cast<int64_t>(group.size());
  switch (hlo::sync_collective_of(inst.opcode)) {
    case Opcode::kAllReduce:
      comm->all_reduce(in, out, count, dt, kind_of(inst), group);
      break;
    case Opcode::kAllGather:
      comm->all_gather(in, out, count, dt, group);
      break;
    case Opcode::kReduceScatter:
      comm->reduce_scatter(in, out, count / g, dt, kind_of(inst), group);
      break;
    case Opcode::kAllToAll:
      comm->all_to_all(in, out, count / g, dt, group);
      break;
    case Opcode::kCollectivePermute:
      comm->permute(in, out, count, dt, cfg.source_target_pairs);
      break;
    default:
      JITX_ASSERT(false, "%{} is not a collective", inst.name);
  }
}
}  // namespace

void run_collective(const Instruction& inst, const void* in, void* out) {
  detail::Communicator* comm = detail::current_communicator();
  if (inst.opcode == Opcode::kPartitionId) {
    uint32_t id = comm ? static_cast<uint32_t>(comm->rank()) : 0;
    std::memcpy(out, &id, sizeof(id));
    return;
  }
  auto& queue = detail::CollectiveQueue::this_thread();
  if (!queue.in_flight()) return run_collective_with(comm, inst, in, out);
  queue.run_in_order([&] { run_collective_with(comm, inst, in, out); });
}

void start_collective(const Instruction& start, const void* in, void* out) {
  detail::Communicator* comm = detail::current_communicator();
  if (!comm) return run_collective_with(nullptr, start, in, out);  // alone: the identity, or the error, at once
  detail::CollectiveQueue::this_thread().start(&start,
                                               [comm, &start, in, out] { run_collective_with(comm, start, in, out); });
}

void finish_collective(const Instruction& start) { detail::CollectiveQueue::this_thread().finish(&start); }

Literal eval_partition_id() {
  Literal out = Literal::make(DType::uint32, {});
  detail::Communicator* comm = detail::current_communicator();
  out.set_u64(0, comm ? static_cast<uint64_t>(comm->rank()) : 0);
  return out;
}

std::vector<Value> evaluate_spmd(const hlo::Module& m, const std::vector<std::vector<Literal>>& args) {
  int64_t n = static_cast<int64_t>(args.size());
  auto comms = detail::make_local_communicators(n);
  std::vector<Value> results(static_cast<size_t>(n));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int64_t p = 0; p < n; ++p)
    threads.emplace_back([&, p] {
      detail::CommunicatorScope scope(comms[static_cast<size_t>(p)].get());
      try {
        results[static_cast<size_t>(p)] = evaluate(m, args[static_cast<size_t>(p)]);
      } catch (...) {
        errors[static_cast<size_t>(p)] = std::current_exception();
        comms[static_cast<size_t>(p)]->abort(errors[static_cast<size_t>(p)]);
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace jitx::evaluator
