// The MPI transport: a shared-memory rendezvous of the process's participants, then one MPI exchange per group that
// spans processes (MPI_Allgatherv of the members' inputs over a communicator of the group's processes, cached), after
// which every member computes its result from all inputs in member order, exactly as the shared-memory transport
// does (so one process with 4 devices and two processes with 2 get the same bits).
#include "core/communicator_mpi.h"

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "core/errors.h"
#include "jitx/error.h"

#if JITX_HAVE_MPI
#include <mpi.h>
#endif

namespace jitx::detail {

#if JITX_HAVE_MPI

namespace {

std::mutex g_state_mu;       // initialise / finalise
std::mutex g_mpi_mu;         // every MPI call of a collective: one thread at a time (MPI_THREAD_SERIALIZED)
bool g_we_initialized = false;
int g_level = -1;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, buf, &len);
  throw_error<RuntimeError>("distributed", "{} failed: {}", what, std::string(buf, static_cast<size_t>(len)));
}

/// The communicator of a set of processes (ranks of MPI_COMM_WORLD), created once with MPI_Comm_create_group
/// (collective over those processes only). Called under g_mpi_mu.
MPI_Comm comm_of(const std::vector<int>& procs) {
  static std::map<std::vector<int>, MPI_Comm> cache;
  auto it = cache.find(procs);
  if (it != cache.end()) return it->second;
  MPI_Group world, sub;
  check(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  check(MPI_Group_incl(world, static_cast<int>(procs.size()), procs.data(), &sub), "MPI_Group_incl");
  MPI_Comm comm;
  check(MPI_Comm_create_group(MPI_COMM_WORLD, sub, 0x6a78, &comm), "MPI_Comm_create_group");
  MPI_Group_free(&sub);
  MPI_Group_free(&world);
  cache.emplace(procs, comm);
  return comm;
}

// The reduction of the MPI_Allreduce in flight (set under g_mpi_mu): MPI calls it with invec from the lower rank.
DType g_op_dtype = DType::float32;
ReduceKind g_op_kind = ReduceKind::kSum;
void reduce_op(void* invec, void* inoutvec, int* len, MPI_Datatype*) {
  const void* ins[2] = {invec, inoutvec};
  reduce_into(std::span<const void* const>(ins, 2), 0, inoutvec, *len, g_op_dtype, g_op_kind);
}
MPI_Op reduce_mpi_op() {
  static MPI_Op op = [] {
    MPI_Op o;
    check(MPI_Op_create(&reduce_op, /*commute=*/0, &o), "MPI_Op_create");
    return o;
  }();
  return op;
}
MPI_Datatype element_type(size_t bytes) {
  static std::map<size_t, MPI_Datatype> cache;
  auto it = cache.find(bytes);
  if (it != cache.end()) return it->second;
  MPI_Datatype t;
  check(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &t), "MPI_Type_contiguous");
  check(MPI_Type_commit(&t), "MPI_Type_commit");
  cache.emplace(bytes, t);
  return t;
}

struct MpiHub {
  MpiHub(int64_t local_n, int64_t proc, int64_t nproc) : local_n(local_n), proc(proc), nproc(nproc) {}
  int64_t local_n, proc, nproc;
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  struct Member {
    const void* in = nullptr;
    int64_t in_bytes = 0;
    std::vector<int64_t> group;
    bool reduce = false;  // an all-reduce: the process's partial reduction, then one MPI_Allreduce
    DType dtype = DType::float32;
    ReduceKind kind = ReduceKind::kSum;
    const std::vector<std::pair<int64_t, int64_t>>* pairs = nullptr;  // a permute's (source, target) pairs
    bool all_to_all = false;
    bool scatter = false;  // a reduce-scatter: the process's partial reduction, then one MPI_Reduce_scatter
  };
  /// The k-th collective of every local participant.
  struct Slot {
    std::vector<Member> members;
    int64_t arrived = 0, done = 0;
    bool ready = false;
    std::map<std::vector<int64_t>, std::vector<const void*>> ins;  // by group: every member's input, in group order
    std::vector<std::vector<char>> buffers;                          // what MPI received
  };
  std::map<int64_t, Slot> slots;

  /// An all-reduce over processes: this process's members reduced in group order, then MPI_Allreduce (processes in
  /// rank order, jitx's own reduction as a non-commutative MPI_Op, so every dtype and kind works). Returns the result.
  const void* all_reduce(Slot& slot, const std::vector<int64_t>& g, const Member& lead, const std::vector<int>& procs) {
    std::vector<const void*> local;
    for (int64_t r : g)
      if (r / local_n == proc) local.push_back(slot.members[static_cast<size_t>(r % local_n)].in);
    size_t es = dtype_size(lead.dtype);
    int64_t count = lead.in_bytes / static_cast<int64_t>(es);
    if (count > INT_MAX)
      throw_error<RuntimeError>("distributed", "an all-reduce of {} elements is over MPI's int count", count);
    std::vector<char> partial(static_cast<size_t>(std::max<int64_t>(lead.in_bytes, 1)));
    reduce_into(local, 0, partial.data(), count, lead.dtype, lead.kind);
    auto& out = slot.buffers.emplace_back(partial.size());
    g_op_dtype = lead.dtype;
    g_op_kind = lead.kind;
    check(MPI_Allreduce(partial.data(), out.data(), static_cast<int>(count), element_type(es), reduce_mpi_op(),
                        comm_of(procs)),
          "MPI_Allreduce");
    return out.data();
  }

  /// A reduce-scatter over processes: this process's members reduced in group order, then MPI_Reduce_scatter of
  /// the chunks, laid out process by process (each process receives its members' chunks, reduced over every
  /// process). Returns a whole-size buffer holding this process's members' chunks at their places in the group.
  const void* reduce_scatter(Slot& slot, const std::vector<int64_t>& g, const Member& lead,
                             const std::vector<int>& procs) {
    std::vector<const void*> local;
    for (int64_t r : g)
      if (r / local_n == proc) local.push_back(slot.members[static_cast<size_t>(r % local_n)].in);
    size_t es = dtype_size(lead.dtype);
    int64_t total = lead.in_bytes / static_cast<int64_t>(es), n = static_cast<int64_t>(g.size()),
            chunk = total / n;
    if (total > INT_MAX)
      throw_error<RuntimeError>("distributed", "a reduce-scatter of {} elements is over MPI's int count", total);
    std::vector<char> partial(static_cast<size_t>(std::max<int64_t>(lead.in_bytes, 1)));
    reduce_into(local, 0, partial.data(), total, lead.dtype, lead.kind);
    std::vector<char> send;
    std::vector<int> counts;
    size_t cb = static_cast<size_t>(chunk) * es;
    for (int q : procs) {
      int members = 0;
      for (int64_t k = 0; k < n; ++k)
        if (g[static_cast<size_t>(k)] / local_n == q) {
          send.insert(send.end(), partial.data() + k * static_cast<int64_t>(cb),
                      partial.data() + (k + 1) * static_cast<int64_t>(cb));
          ++members;
        }
      counts.push_back(members * static_cast<int>(chunk));
    }
    int mine = counts[static_cast<size_t>(std::find(procs.begin(), procs.end(), static_cast<int>(proc)) -
                                          procs.begin())];
    std::vector<char> recv(std::max<size_t>(static_cast<size_t>(mine) * es, 1));
    send.resize(std::max<size_t>(send.size(), 1));
    g_op_dtype = lead.dtype;
    g_op_kind = lead.kind;
    check(MPI_Reduce_scatter(send.data(), recv.data(), counts.data(), element_type(es), reduce_mpi_op(),
                             comm_of(procs)),
          "MPI_Reduce_scatter");
    auto& out = slot.buffers.emplace_back(partial.size());
    size_t at = 0;
    for (int64_t k = 0; k < n; ++k)
      if (g[static_cast<size_t>(k)] / local_n == proc) {
        std::memcpy(out.data() + k * static_cast<int64_t>(cb), recv.data() + at, cb);
        at += cb;
      }
    return out.data();
  }

  /// A permute over processes: each pair whose source is here and target elsewhere is an MPI_Isend, each whose target
  /// is here and source elsewhere an MPI_Irecv (tagged by the target rank: a rank receives from one source at most).
  void permute(Slot& slot, const Member& lead, std::vector<const void*>& ins) {
    std::vector<int> everyone(static_cast<size_t>(nproc));
    for (int p = 0; p < static_cast<int>(nproc); ++p) everyone[static_cast<size_t>(p)] = p;
    MPI_Comm comm = comm_of(everyone);  // jitx's own, so no message of the user's on MPI_COMM_WORLD can match
    std::vector<MPI_Request> reqs;
    for (auto [src, dst] : *lead.pairs) {
      int64_t ps = src / local_n, pd = dst / local_n;
      if (ps == proc) ins[static_cast<size_t>(src)] = slot.members[static_cast<size_t>(src % local_n)].in;
      if (ps == pd || (ps != proc && pd != proc)) continue;
      if (lead.in_bytes > INT_MAX)
        throw_error<RuntimeError>("distributed", "a permute of {} bytes is over MPI's int count", lead.in_bytes);
      MPI_Request rq;
      if (ps == proc) {
        check(MPI_Isend(ins[static_cast<size_t>(src)], static_cast<int>(lead.in_bytes), MPI_BYTE, static_cast<int>(pd),
                        static_cast<int>(dst), comm, &rq),
              "MPI_Isend");
      } else {
        auto& buf = slot.buffers.emplace_back(static_cast<size_t>(std::max<int64_t>(lead.in_bytes, 1)));
        ins[static_cast<size_t>(src)] = buf.data();
        check(MPI_Irecv(buf.data(), static_cast<int>(lead.in_bytes), MPI_BYTE, static_cast<int>(ps),
                        static_cast<int>(dst), comm, &rq),
              "MPI_Irecv");
      }
      reqs.push_back(rq);
    }
    check(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

  /// An all-to-all over processes (MPI_Alltoallv): to process q goes, for each of q's members j (group order), chunk j
  /// of each local member's input. A remote member k's input is rebuilt with only the local members' chunks at their
  /// offsets, so ins[k] + j * chunk is chunk j of member k for every local j, as the in-process transport reads it.
  void all_to_all(Slot& slot, const std::vector<int64_t>& g, const Member& lead, const std::vector<int>& procs,
                  std::vector<const void*>& ins) {
    size_t n = g.size();
    int64_t b = lead.in_bytes / static_cast<int64_t>(n);
    auto on = [&](int q) {
      std::vector<size_t> pos;
      for (size_t k = 0; k < n; ++k)
        if (g[k] / local_n == q) pos.push_back(k);
      return pos;
    };
    std::vector<size_t> mine = on(static_cast<int>(proc));
    std::vector<char> send;
    std::vector<int> sc(procs.size()), sd(procs.size()), rc(procs.size()), rd(procs.size());
    int64_t so = 0, ro = 0;
    for (size_t qi = 0; qi < procs.size(); ++qi) {
      std::vector<size_t> theirs = on(procs[qi]);
      for (size_t j : theirs)
        for (size_t k : mine) {
          auto* p = static_cast<const char*>(slot.members[static_cast<size_t>(g[k] % local_n)].in) + j * b;
          send.insert(send.end(), p, p + b);
        }
      int64_t c = static_cast<int64_t>(theirs.size() * mine.size()) * b;
      if (so + c > INT_MAX || ro + c > INT_MAX)
        throw_error<RuntimeError>("distributed", "an all-to-all of {} bytes is over MPI's int count", so + c);
      sc[qi] = rc[qi] = static_cast<int>(c);
      sd[qi] = static_cast<int>(so);
      rd[qi] = static_cast<int>(ro);
      so += c;
      ro += c;
    }
    std::vector<char> recv(static_cast<size_t>(std::max<int64_t>(ro, 1)));
    send.resize(std::max<size_t>(send.size(), 1));
    check(MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(), MPI_BYTE,
                        comm_of(procs)),
          "MPI_Alltoallv");
    for (size_t k : mine) ins[k] = slot.members[static_cast<size_t>(g[k] % local_n)].in;
    for (size_t qi = 0; qi < procs.size(); ++qi) {
      if (procs[qi] == proc) continue;
      std::vector<size_t> theirs = on(procs[qi]);
      const char* at = recv.data() + rd[qi];
      for (size_t k : theirs) ins[k] = slot.buffers.emplace_back(static_cast<size_t>(lead.in_bytes)).data();
      for (size_t j : mine)  // the sender's order: for each of our members j, for each of its members k
        for (size_t k : theirs) {
          std::memcpy(const_cast<char*>(static_cast<const char*>(ins[k])) + j * b, at, static_cast<size_t>(b));
          at += b;
        }
    }
  }

  /// Run by the last local participant to arrive: fills slot.ins for every group of the call.
  void exchange(Slot& slot) {
    std::set<std::vector<int64_t>> groups;
    for (auto& m : slot.members) groups.insert(m.group);
    std::lock_guard<std::mutex> l(g_mpi_mu);
    for (const auto& g : groups) {  // the same (sorted) order in every process: no cycle between processes
      std::vector<int> procs;
      std::vector<int64_t> count_of(static_cast<size_t>(nproc), 0);
      int64_t in_bytes = -1;
      for (int64_t r : g) {
        JITX_ASSERT(r >= 0 && r < local_n * nproc, "collective group member {} outside the {} ranks", r,
                    local_n * nproc);
        int64_t p = r / local_n;
        if (count_of[static_cast<size_t>(p)]++ == 0) procs.push_back(static_cast<int>(p));
        if (p == proc) {
          const Member& m = slot.members[static_cast<size_t>(r % local_n)];
          JITX_ASSERT(in_bytes < 0 || in_bytes == m.in_bytes, "collective members disagree on the size");
          in_bytes = m.in_bytes;
        }
      }
      std::sort(procs.begin(), procs.end());
      std::vector<const void*>& ins = slot.ins[g];
      ins.assign(g.size(), nullptr);
      if (procs.size() == 1) {  // only this process: no MPI
        for (size_t k = 0; k < g.size(); ++k) ins[k] = slot.members[static_cast<size_t>(g[k] % local_n)].in;
        continue;
      }
      auto first_local = std::find_if(g.begin(), g.end(), [&](int64_t r) { return r / local_n == proc; });
      const Member& lead = slot.members[static_cast<size_t>(*first_local % local_n)];
      if (lead.reduce && lead.scatter) {
        ins = {reduce_scatter(slot, g, lead, procs)};
        continue;
      }
      if (lead.reduce) {
        ins = {all_reduce(slot, g, lead, procs)};
        continue;
      }
      if (lead.pairs) {
        permute(slot, lead, ins);
        continue;
      }
      if (lead.all_to_all) {
        all_to_all(slot, g, lead, procs, ins);
        continue;
      }
      std::vector<char> pack;
      for (int64_t r : g)
        if (r / local_n == proc) {
          auto* p = static_cast<const char*>(slot.members[static_cast<size_t>(r % local_n)].in);
          pack.insert(pack.end(), p, p + in_bytes);
        }
      std::vector<int> counts(procs.size()), displs(procs.size());
      int64_t total = 0;
      for (size_t i = 0; i < procs.size(); ++i) {
        int64_t c = count_of[static_cast<size_t>(procs[i])] * in_bytes;
        if (total + c > INT_MAX)
          throw_error<RuntimeError>("distributed", "a collective of {} bytes is over MPI's int count", total + c);
        counts[i] = static_cast<int>(c);
        displs[i] = static_cast<int>(total);
        total += c;
      }
      auto& recv = slot.buffers.emplace_back(static_cast<size_t>(std::max<int64_t>(total, 1)));
      check(MPI_Allgatherv(pack.data(), static_cast<int>(pack.size()), MPI_BYTE, recv.data(), counts.data(),
                           displs.data(), MPI_BYTE, comm_of(procs)),
            "MPI_Allgatherv");
      std::vector<int64_t> seen(static_cast<size_t>(nproc), 0);
      for (size_t k = 0; k < g.size(); ++k) {
        int64_t p = g[k] / local_n;
        size_t i = static_cast<size_t>(std::find(procs.begin(), procs.end(), static_cast<int>(p)) - procs.begin());
        ins[k] = recv.data() + displs[i] + seen[static_cast<size_t>(p)]++ * in_bytes;
      }
    }
  }
};

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(std::shared_ptr<MpiHub> hub, int64_t local) : hub_(std::move(hub)), local_(local) {}
  int64_t rank() const override { return hub_->proc * hub_->local_n + local_; }
  int64_t size() const override { return hub_->nproc * hub_->local_n; }

  void all_reduce(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                  std::span<const int64_t> group) override {
    // ins: every member's input (a group within this process) or the reduction already made over MPI (one entry).
    rendezvous(
        in, bytes(count, dtype), group,
        [&](std::span<const void* const> ins, int64_t) { reduce_into(ins, 0, out, count, dtype, kind); }, true, dtype,
        kind);
  }
  void all_gather(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) override {
    int64_t b = bytes(count, dtype);
    rendezvous(in, b, group, [&](std::span<const void* const> ins, int64_t) {
      for (size_t k = 0; k < ins.size(); ++k)
        if (b) std::memcpy(static_cast<char*>(out) + k * b, ins[k], static_cast<size_t>(b));
    });
  }
  void reduce_scatter(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                      std::span<const int64_t> group) override {
    // Across processes: MPI_Reduce_scatter of the processes' partial reductions; each member keeps its chunk.
    rendezvous(
        in, bytes(count, dtype) * static_cast<int64_t>(group.size()), group,
        [&](std::span<const void* const> ins, int64_t me) { reduce_into(ins, me * count, out, count, dtype, kind); },
        true, dtype, kind, nullptr, false, true);
  }
  void all_to_all(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) override {
    int64_t b = bytes(count, dtype);
    rendezvous(
        in, b * static_cast<int64_t>(group.size()), group,
        [&](std::span<const void* const> ins, int64_t me) {
          for (size_t k = 0; k < ins.size(); ++k)
            if (b)
              std::memcpy(static_cast<char*>(out) + k * b, static_cast<const char*>(ins[k]) + me * b,
                          static_cast<size_t>(b));
        },
        false, dtype, ReduceKind::kSum, nullptr, true);
  }
  void permute(const void* in, void* out, int64_t count, DType dtype,
               std::span<const std::pair<int64_t, int64_t>> pairs) override {
    std::vector<int64_t> all(static_cast<size_t>(size()));
    for (int64_t r = 0; r < size(); ++r) all[static_cast<size_t>(r)] = r;
    int64_t b = bytes(count, dtype);
    std::vector<std::pair<int64_t, int64_t>> ps(pairs.begin(), pairs.end());
    rendezvous(
        in, b, all,
        [&](std::span<const void* const> ins, int64_t) {
          int64_t src = -1;
          for (auto& [s, t] : pairs)
            if (t == rank()) src = s;
          if (!b) return;
          if (src < 0)
            std::memset(out, 0, static_cast<size_t>(b));
          else
            std::memcpy(out, ins[static_cast<size_t>(src)], static_cast<size_t>(b));
        },
        false, dtype, ReduceKind::kSum, &ps);
  }
  void abort(std::exception_ptr error) override {
    {
      std::lock_guard<std::mutex> l(hub_->mu);
      if (!hub_->error) hub_->error = error;
      hub_->cv.notify_all();
    }
    if (hub_->nproc > 1) {
      // The other processes would wait for this one's collectives forever: end the job, saying why.
      std::string what = "an unknown error";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      std::fprintf(stderr, "jitx: a partition failed in process %lld of %lld: %s; aborting the MPI job\n",
                   static_cast<long long>(hub_->proc), static_cast<long long>(hub_->nproc), what.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }

 private:
  static int64_t bytes(int64_t count, DType d) { return count * static_cast<int64_t>(dtype_size(d)); }

  template <class F>
  void rendezvous(const void* in, int64_t in_bytes, std::span<const int64_t> group, F&& work, bool reduce = false,
                  DType dtype = DType::float32, ReduceKind kind = ReduceKind::kSum,
                  const std::vector<std::pair<int64_t, int64_t>>* pairs = nullptr, bool all_to_all = false,
                  bool scatter = false) {
    int64_t me = -1;
    for (size_t k = 0; k < group.size(); ++k)
      if (group[k] == rank()) me = static_cast<int64_t>(k);
    JITX_ASSERT(me >= 0, "rank {} calls a collective of a group without it", rank());
    std::vector<int64_t> g(group.begin(), group.end());
    int64_t call = calls_++;
    std::unique_lock<std::mutex> l(hub_->mu);
    auto& slot = hub_->slots[call];
    if (slot.members.empty()) slot.members.resize(static_cast<size_t>(hub_->local_n));
    slot.members[static_cast<size_t>(local_)] = {in, in_bytes, g, reduce, dtype, kind, pairs, all_to_all, scatter};
    if (++slot.arrived == hub_->local_n) {
      l.unlock();
      try {
        if (!hub_->error) hub_->exchange(slot);
      } catch (...) {
        l.lock();
        if (!hub_->error) hub_->error = std::current_exception();
        hub_->cv.notify_all();
        throw;
      }
      l.lock();
      slot.ready = true;
      hub_->cv.notify_all();
    }
    hub_->cv.wait(l, [&] { return hub_->error || slot.ready; });
    if (hub_->error) std::rethrow_exception(hub_->error);
    std::vector<const void*> ins = slot.ins.at(g);
    l.unlock();
    work(std::span<const void* const>(ins), me);
    l.lock();
    ++slot.done;
    hub_->cv.notify_all();
    hub_->cv.wait(l, [&] { return hub_->error || slot.done >= hub_->local_n; });
    if (hub_->error) std::rethrow_exception(hub_->error);
    if (++slot.done == 2 * hub_->local_n) hub_->slots.erase(call);  // the last to leave frees the slot
  }

  std::shared_ptr<MpiHub> hub_;
  int64_t local_;
  int64_t calls_ = 0;
};

}  // namespace

bool mpi_built() { return true; }

void mpi_initialize() {
  std::lock_guard<std::mutex> l(g_state_mu);
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (finalized)
    throw_error<Error>("distributed.initialize",
                       "MPI was finalised already (distributed::shutdown); MPI cannot be initialised twice in one "
                       "process");
  if (!inited) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    g_we_initialized = true;
    g_level = provided;
  } else {
    MPI_Query_thread(&g_level);
  }
  if (g_level < MPI_THREAD_SERIALIZED)
    throw_error<Error>("distributed.initialize",
                       "MPI gives thread level {} (MPI_THREAD_FUNNELED or less); jitx needs MPI_THREAD_SERIALIZED",
                       g_level);
}

void mpi_finalize() {
  std::lock_guard<std::mutex> l(g_state_mu);
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (inited && !finalized && g_we_initialized) MPI_Finalize();
}

bool mpi_active() {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  return inited && !finalized;
}

int64_t mpi_process_index() {
  if (!mpi_active()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int64_t mpi_process_count() {
  if (!mpi_active()) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

std::vector<int64_t> mpi_allgather(int64_t value) {
  if (!mpi_active()) return {value};
  std::vector<long long> all(static_cast<size_t>(mpi_process_count()));
  long long v = value;
  {
    std::lock_guard<std::mutex> l(g_mpi_mu);
    check(MPI_Allgather(&v, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD), "MPI_Allgather");
  }
  return std::vector<int64_t>(all.begin(), all.end());
}

std::vector<std::vector<char>> mpi_allgather_bytes(const std::vector<char>& mine) {
  if (!mpi_active()) return {mine};
  size_t n = static_cast<size_t>(mpi_process_count());
  if (mine.size() > INT_MAX)
    throw_error<RuntimeError>("distributed", "an all-gather of {} bytes is over MPI's int count", mine.size());
  std::vector<int> sizes(n), displs(n);
  int size = static_cast<int>(mine.size());
  std::lock_guard<std::mutex> l(g_mpi_mu);
  check(MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  int64_t total = 0;
  for (size_t p = 0; p < n; ++p) {
    displs[p] = static_cast<int>(total);
    total += sizes[p];
    if (total > INT_MAX)
      throw_error<RuntimeError>("distributed", "an all-gather of {} bytes is over MPI's int count", total);
  }
  std::vector<char> all(static_cast<size_t>(std::max<int64_t>(total, 1)));
  std::vector<char> send = mine;
  send.resize(std::max<size_t>(send.size(), 1));
  check(MPI_Allgatherv(send.data(), size, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE,
                       MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::vector<char>> out;
  for (size_t p = 0; p < n; ++p) out.emplace_back(all.begin() + displs[p], all.begin() + displs[p] + sizes[p]);
  return out;
}

const char* mpi_thread_level() {
  switch (g_level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "not initialised";
  }
}

std::vector<std::shared_ptr<Communicator>> make_mpi_communicators(int64_t local_n) {
  if (!mpi_active())
    throw_error<Error>("distributed", "MPI is not initialised: call jitx::distributed::initialize() first");
  auto hub = std::make_shared<MpiHub>(local_n, mpi_process_index(), mpi_process_count());
  std::vector<std::shared_ptr<Communicator>> out;
  for (int64_t i = 0; i < local_n; ++i) out.push_back(std::make_shared<MpiCommunicator>(hub, i));
  return out;
}

#else  // built without MPI

namespace {
[[noreturn]] void no_mpi(const char* op) {
  throw_error<Error>(op,
                     "jitx was built without MPI, so multi-process runs are unavailable (install Open MPI: "
                     "libopenmpi-dev and openmpi-bin, e.g. with tools/setup.sh, and configure with "
                     "-DJITX_ENABLE_MPI=ON)");
}
}  // namespace

bool mpi_built() { return false; }
void mpi_initialize() { no_mpi("distributed.initialize"); }
void mpi_finalize() {}
bool mpi_active() { return false; }
int64_t mpi_process_index() { return 0; }
int64_t mpi_process_count() { return 1; }
const char* mpi_thread_level() { return "not built"; }
std::vector<int64_t> mpi_allgather(int64_t value) { return {value}; }
std::vector<std::vector<char>> mpi_allgather_bytes(const std::vector<char>& mine) { return {mine}; }
std::vector<std::shared_ptr<Communicator>> make_mpi_communicators(int64_t) { no_mpi("distributed"); }

#endif

}  // namespace jitx::detail
