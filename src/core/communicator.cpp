// The shared-memory collective transport: a rendezvous per collective call, inputs read in place by every member.
#include "core/communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "core/literal.h"

namespace jitx::detail {

namespace {

thread_local Communicator* t_current = nullptr;

/// The state every participant of one launch shares.
struct Hub {
  explicit Hub(int64_t n) : n(n) {}
  int64_t n;
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  /// One rendezvous: keyed by (the members' call number, the group's first rank).
  struct Slot {
    std::vector<const void*> ins;  // by position in the group (permute: by rank)
    int64_t arrived = 0, done = 0, expected = 0;
  };
  std::map<std::pair<int64_t, int64_t>, Slot> slots;
};

double load(const void* p, DType d, int64_t i) {
  double v = 0;
  switch (d) {
    case DType::float32:
      v = static_cast<const float*>(p)[i];
      break;
    case DType::float64:
      v = static_cast<const double*>(p)[i];
      break;
    default: {
      Literal s = Literal::make(DType::float64, {});
      Literal::convert(static_cast<const char*>(p) + i * static_cast<int64_t>(dtype_size(d)), d, s.data(),
                       DType::float64, 1);
      v = *static_cast<const double*>(s.data());
    }
  }
  return v;
}

}  // namespace

namespace {
/// The f32 / f64 reductions, in the dtype, member by member over whole arrays (vectorised; the generic path below
/// goes element by element through double).
template <class T>
void reduce_typed(std::span<const void* const> ins, int64_t offset, void* out, int64_t count, ReduceKind kind) {
  std::vector<T> acc(static_cast<const T*>(ins[0]) + offset, static_cast<const T*>(ins[0]) + offset + count);
  T* a = acc.data();
  for (size_t k = 1; k < ins.size(); ++k) {
    const T* b = static_cast<const T*>(ins[k]) + offset;
    switch (kind) {
      case ReduceKind::kSum:
        for (int64_t i = 0; i < count; ++i) a[i] += b[i];
        break;
      case ReduceKind::kProduct:
        for (int64_t i = 0; i < count; ++i) a[i] *= b[i];
        break;
      case ReduceKind::kMax:
        for (int64_t i = 0; i < count; ++i) a[i] = (a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : std::max(a[i], b[i]);
        break;
      case ReduceKind::kMin:
        for (int64_t i = 0; i < count; ++i) a[i] = (a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : std::min(a[i], b[i]);
        break;
      default:
        JITX_ASSERT(false, "a logical reduction of floats");
    }
  }
  if (count) std::memcpy(out, a, static_cast<size_t>(count) * sizeof(T));
}
}  // namespace

/// out[i] = reduce over k of ins[k][offset + i], in member order (the same result on every member).
void reduce_into(std::span<const void* const> ins, int64_t offset, void* out, int64_t count, DType d, ReduceKind kind) {
  if (d == DType::float32) return reduce_typed<float>(ins, offset, out, count, kind);
  if (d == DType::float64) return reduce_typed<double>(ins, offset, out, count, kind);
  size_t es = dtype_size(d);
  bool floating = is_floating(d);
  Literal acc = Literal::make(d, {count});
  for (int64_t i = 0; i < count; ++i) {
    if (floating) {
      double a = load(ins[0], d, offset + i);
      for (size_t k = 1; k < ins.size(); ++k) {
        double b = load(ins[k], d, offset + i);
        switch (kind) {
          case ReduceKind::kSum:
            a += b;
            break;
          case ReduceKind::kProduct:
            a *= b;
            break;
          case ReduceKind::kMax:
            a = (a != a || b != b) ? a + b : std::max(a, b);
            break;
          case ReduceKind::kMin:
            a = (a != a || b != b) ? a + b : std::min(a, b);
            break;
          default:
            JITX_ASSERT(false, "a logical reduction of floats");
        }
      }
      acc.set_f64(i, a);
    } else {
      // Integers (and bool) through int64/uint64 with wrap-around.
      bool u = is_unsigned_integer(d);
      Literal one = Literal::make(d, {});
      auto get = [&](size_t k) {
        std::memcpy(one.data(), static_cast<const char*>(ins[k]) + (offset + i) * static_cast<int64_t>(es), es);
        return u ? static_cast<int64_t>(one.get_u64(0)) : one.get_i64(0);
      };
      int64_t a = get(0);
      for (size_t k = 1; k < ins.size(); ++k) {
        int64_t b = get(k);
        switch (kind) {
          case ReduceKind::kSum:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
            break;
          case ReduceKind::kProduct:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
            break;
          case ReduceKind::kMax:
            a = u ? int64_t(std::max(uint64_t(a), uint64_t(b))) : std::max(a, b);
            break;
          case ReduceKind::kMin:
            a = u ? int64_t(std::min(uint64_t(a), uint64_t(b))) : std::min(a, b);
            break;
          case ReduceKind::kAnd:
            a = d == DType::bool_ ? (a && b) : (a & b);
            break;
          case ReduceKind::kOr:
            a = d == DType::bool_ ? (a || b) : (a | b);
            break;
        }
      }
      if (u)
        acc.set_u64(i, static_cast<uint64_t>(a));
      else
        acc.set_i64(i, a);
    }
  }
  if (count) std::memcpy(out, acc.data(), static_cast<size_t>(count) * es);
}

namespace {

class LocalCommunicator : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<Hub> hub, int64_t rank) : hub_(std::move(hub)), rank_(rank) {}
  int64_t rank() const override { return rank_; }
  int64_t size() const override { return hub_->n; }

  void all_reduce(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                  std::span<const int64_t> group) override {
    rendezvous(in, group,
               [&](std::span<const void* const> ins, int64_t) { reduce_into(ins, 0, out, count, dtype, kind); });
  }
  void all_gather(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) override {
    size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
    rendezvous(in, group, [&](std::span<const void* const> ins, int64_t) {
      for (size_t k = 0; k < ins.size(); ++k)
        if (bytes) std::memcpy(static_cast<char*>(out) + k * bytes, ins[k], bytes);
    });
  }
  void reduce_scatter(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                      std::span<const int64_t> group) override {
    rendezvous(in, group, [&](std::span<const void* const> ins, int64_t me) {
      reduce_into(ins, me * count, out, count, dtype, kind);
    });
  }
  void all_to_all(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) override {
    size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
    rendezvous(in, group, [&](std::span<const void* const> ins, int64_t me) {
      for (size_t k = 0; k < ins.size(); ++k)
        if (bytes)
          std::memcpy(static_cast<char*>(out) + k * bytes, static_cast<const char*>(ins[k]) + me * bytes, bytes);
    });
  }
  void permute(const void* in, void* out, int64_t count, DType dtype,
               std::span<const std::pair<int64_t, int64_t>> pairs) override {
    std::vector<int64_t> all(static_cast<size_t>(hub_->n));
    for (int64_t r = 0; r < hub_->n; ++r) all[static_cast<size_t>(r)] = r;
    size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
    rendezvous(in, all, [&](std::span<const void* const> ins, int64_t) {
      int64_t src = -1;
      for (auto& [s, t] : pairs)
        if (t == rank_) src = s;
      if (!bytes) return;
      if (src < 0)
        std::memset(out, 0, bytes);
      else
        std::memcpy(out, ins[static_cast<size_t>(src)], bytes);
    });
  }
  void abort(std::exception_ptr error) override {
    std::lock_guard<std::mutex> l(hub_->mu);
    if (!hub_->error) hub_->error = error;
    hub_->cv.notify_all();
  }

 private:
  /// Posts `in`, waits for the whole group, runs `work(inputs by group position, my position)`, then waits until
  /// every member has finished reading (inputs stay valid until then).
  template <class F>
  void rendezvous(const void* in, std::span<const int64_t> group, F&& work) {
    int64_t me = -1;
    for (size_t k = 0; k < group.size(); ++k)
      if (group[k] == rank_) me = static_cast<int64_t>(k);
    JITX_ASSERT(me >= 0, "rank {} calls a collective of a group without it", rank_);
    auto key = std::make_pair(calls_++, group.empty() ? 0 : group[0]);
    std::unique_lock<std::mutex> l(hub_->mu);
    auto& slot = hub_->slots[key];
    if (slot.ins.empty()) {
      slot.ins.assign(group.size(), nullptr);
      slot.expected = static_cast<int64_t>(group.size());
    }
    slot.ins[static_cast<size_t>(me)] = in;
    ++slot.arrived;
    hub_->cv.notify_all();
    hub_->cv.wait(l, [&] { return hub_->error || slot.arrived == slot.expected; });
    if (hub_->error) std::rethrow_exception(hub_->error);
    std::vector<const void*> ins = slot.ins;
    l.unlock();
    work(std::span<const void* const>(ins), me);
    l.lock();
    ++slot.done;
    hub_->cv.notify_all();
    hub_->cv.wait(l, [&] { return hub_->error || slot.done == slot.expected; });
    if (hub_->error) std::rethrow_exception(hub_->error);
    // The last member to leave frees the slot.
    if (++slot.arrived == 2 * slot.expected) hub_->slots.erase(key);
  }

  std::shared_ptr<Hub> hub_;
  int64_t rank_;
  int64_t calls_ = 0;
};

}  // namespace

namespace {
/// A partition's view of a transport whose ranks number the participants differently: groups and pairs of partition
/// ids are translated to the transport's ranks (keeping their order), and rank() is the partition id.
class RenumberedCommunicator : public Communicator {
 public:
  RenumberedCommunicator(std::shared_ptr<Communicator> inner, std::vector<int64_t> rank_of, int64_t partition)
      : inner_(std::move(inner)), rank_of_(std::move(rank_of)), partition_(partition) {}
  int64_t rank() const override { return partition_; }
  int64_t size() const override { return static_cast<int64_t>(rank_of_.size()); }
  void all_reduce(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                  std::span<const int64_t> group) override {
    inner_->all_reduce(in, out, count, dtype, kind, map(group));
  }
  void all_gather(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) override {
    inner_->all_gather(in, out, count, dtype, map(group));
  }
  void reduce_scatter(const void* in, void* out, int64_t count, DType dtype, ReduceKind kind,
                      std::span<const int64_t> group) override {
    inner_->reduce_scatter(in, out, count, dtype, kind, map(group));
  }
  void all_to_all(const void* in, void* out, int64_t count, DType dtype, std::span<const int64_t> group) override {
    inner_->all_to_all(in, out, count, dtype, map(group));
  }
  void permute(const void* in, void* out, int64_t count, DType dtype,
               std::span<const std::pair<int64_t, int64_t>> pairs) override {
    std::vector<std::pair<int64_t, int64_t>> p;
    for (auto [s, t] : pairs) p.emplace_back(at(s), at(t));
    inner_->permute(in, out, count, dtype, p);
  }
  void abort(std::exception_ptr error) override { inner_->abort(error); }

 private:
  int64_t at(int64_t partition) const {
    JITX_ASSERT(partition >= 0 && partition < size(), "partition {} outside the {} partitions", partition, size());
    return rank_of_[static_cast<size_t>(partition)];
  }
  std::vector<int64_t> map(std::span<const int64_t> group) const {
    std::vector<int64_t> g;
    for (auto p : group) g.push_back(at(p));
    return g;
  }
  std::shared_ptr<Communicator> inner_;
  std::vector<int64_t> rank_of_;
  int64_t partition_;
};
}  // namespace

std::shared_ptr<Communicator> renumber_communicator(std::shared_ptr<Communicator> inner,
                                                   std::vector<int64_t> rank_of_partition, int64_t partition) {
  return std::make_shared<RenumberedCommunicator>(std::move(inner), std::move(rank_of_partition), partition);
}

std::vector<std::shared_ptr<Communicator>> make_local_communicators(int64_t n) {
  auto hub = std::make_shared<Hub>(n);
  std::vector<std::shared_ptr<Communicator>> out;
  for (int64_t r = 0; r < n; ++r) out.push_back(std::make_shared<LocalCommunicator>(hub, r));
  return out;
}

Communicator* current_communicator() { return t_current; }

CollectiveTotals& collective_totals() {
  static CollectiveTotals t;
  return t;
}
CollectiveTimer::CollectiveTimer(int64_t bytes) : bytes_(bytes), start_(std::chrono::steady_clock::now()) {}
CollectiveTimer::~CollectiveTimer() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
  auto& t = collective_totals();
  t.calls.fetch_add(1, std::memory_order_relaxed);
  t.nanoseconds.fetch_add(ns, std::memory_order_relaxed);
  t.bytes.fetch_add(bytes_, std::memory_order_relaxed);
}
CommunicatorScope::CommunicatorScope(Communicator* c) : saved_(t_current) { t_current = c; }
CommunicatorScope::~CommunicatorScope() { t_current = saved_; }

}  // namespace jitx::detail
