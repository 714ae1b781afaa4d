// The MPI transport under mpirun (CTest: -np 2 and -np 4, 2 local participants per process): every collective, in
// the dtypes the transport handles, over the whole world and over replica-group subsets (within one process and
// across processes), checked against values computed by hand from the ranks. Exits non-zero on any mismatch.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/communicator_mpi.h"
#include "core/literal.h"
#include "jitx/distributed.h"
#include "jitx/error.h"

using namespace jitx;
using detail::ReduceKind;

namespace {

constexpr int64_t kCount = 3;  // elements per chunk
int64_t g_world = 0;
std::vector<std::string> g_failures[64];
int64_t g_checks[64];

/// Rank r's input element i (small integers: exact in every dtype, sums of 8 fit int8).
double value(int64_t r, int64_t i) { return static_cast<double>(r + i + 1); }
/// Rank r's element i of a chunked input (kept small so sums over 8 ranks fit int8 and bfloat16 exactly).
double value2(int64_t r, int64_t i) { return static_cast<double>((r + i) % 5 + 1); }
bool bit(int64_t r, int64_t i) { return (r + i) % 3 != 0; }

detail::Literal make(DType d, int64_t n, const std::function<double(int64_t)>& f) {
  detail::Literal l = detail::Literal::make(d, {n});
  for (int64_t i = 0; i < n; ++i) l.set_f64(i, f(i));
  return l;
}

void expect(int64_t rank, const detail::Literal& got, const std::vector<double>& want, const std::string& what) {
  ++g_checks[rank];
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get_f64(static_cast<int64_t>(i));
    if (g != want[i]) {
      g_failures[rank].push_back(what + ": element " + std::to_string(i) + " is " + std::to_string(g) + ", want " +
                                 std::to_string(want[i]));
      return;
    }
  }
}

/// The groups rank r belongs to: the world, the ranks of r's parity (across processes), and r's pair {2k, 2k+1}
/// (one process when 2 participants per process).
std::vector<std::vector<int64_t>> groups_of(int64_t r) {
  std::vector<int64_t> world, parity, pair = {r - r % 2, r - r % 2 + 1};
  for (int64_t k = 0; k < g_world; ++k) {
    world.push_back(k);
    if (k % 2 == r % 2) parity.push_back(k);
  }
  return {world, parity, pair};
}

void run(detail::Communicator& c) {
  int64_t r = c.rank();
  const DType dtypes[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int8,
                          DType::int32,   DType::int64,   DType::uint8,   DType::uint32};
  for (DType d : dtypes) {
    std::string dn = std::string(dtype_name(d));
    bool small = d == DType::int8 || d == DType::uint8 || d == DType::float16 || d == DType::bfloat16;
    for (const auto& g : groups_of(r)) {
      std::string gn = " over " + std::to_string(g.size()) + " ranks from " + std::to_string(g[0]) + " (" + dn + ")";
      int64_t me = 0, n = static_cast<int64_t>(g.size());
      while (g[static_cast<size_t>(me)] != r) ++me;
      detail::Literal in = make(d, kCount, [&](int64_t i) { return value(r, i); });
      std::vector<ReduceKind> kinds = {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin};
      if (!small) kinds.push_back(ReduceKind::kProduct);
      for (ReduceKind k : kinds) {
        detail::Literal out = detail::Literal::make(d, {kCount});
        c.all_reduce(in.data(), out.data(), kCount, d, k, g);
        std::vector<double> want(kCount);
        for (int64_t i = 0; i < kCount; ++i) {
          double a = value(g[0], i);
          for (size_t m = 1; m < g.size(); ++m) {
            double b = value(g[m], i);
            a = k == ReduceKind::kSum ? a + b : k == ReduceKind::kMax ? std::max(a, b)
                : k == ReduceKind::kMin ? std::min(a, b) : a * b;
          }
          want[static_cast<size_t>(i)] = a;
        }
        expect(r, out, want, "all_reduce kind " + std::to_string(static_cast<int>(k)) + gn);
      }
      {
        detail::Literal out = detail::Literal::make(d, {n * kCount});
        c.all_gather(in.data(), out.data(), kCount, d, g);
        std::vector<double> want;
        for (int64_t m : g)
          for (int64_t i = 0; i < kCount; ++i) want.push_back(value(m, i));
        expect(r, out, want, "all_gather" + gn);
      }
      // Chunked inputs: member m's chunk j element i = value2(m, j * kCount + i).
      detail::Literal big = make(d, n * kCount, [&](int64_t i) { return value2(r, i); });
      {
        detail::Literal out = detail::Literal::make(d, {kCount});
        c.reduce_scatter(big.data(), out.data(), kCount, d, ReduceKind::kSum, g);
        std::vector<double> want(kCount, 0.0);
        for (int64_t m : g)
          for (int64_t i = 0; i < kCount; ++i) want[static_cast<size_t>(i)] += value2(m, me * kCount + i);
        expect(r, out, want, "reduce_scatter" + gn);
      }
      {
        detail::Literal out = detail::Literal::make(d, {n * kCount});
        c.all_to_all(big.data(), out.data(), kCount, d, g);
        std::vector<double> want;
        for (int64_t m : g)
          for (int64_t i = 0; i < kCount; ++i) want.push_back(value2(m, me * kCount + i));
        expect(r, out, want, "all_to_all" + gn);
      }
    }
    // permute: a ring shift by one over the world, with the last rank's target left out (it then receives zeros).
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t k = 0; k + 1 < g_world; ++k) pairs.emplace_back(k, k + 1);
    detail::Literal in = make(d, kCount, [&](int64_t i) { return value(r, i); });
    detail::Literal out = detail::Literal::make(d, {kCount});
    c.permute(in.data(), out.data(), kCount, d, pairs);
    std::vector<double> want(kCount, 0.0);
    if (r > 0)
      for (int64_t i = 0; i < kCount; ++i) want[static_cast<size_t>(i)] = value(r - 1, i);
    expect(r, out, want, "permute (" + dn + ")");
  }
  // bool: and / or.
  for (const auto& g : groups_of(r)) {
    detail::Literal in = make(DType::bool_, kCount, [&](int64_t i) { return bit(r, i) ? 1.0 : 0.0; });
    for (ReduceKind k : {ReduceKind::kAnd, ReduceKind::kOr}) {
      detail::Literal out = detail::Literal::make(DType::bool_, {kCount});
      c.all_reduce(in.data(), out.data(), kCount, DType::bool_, k, g);
      std::vector<double> want(kCount);
      for (int64_t i = 0; i < kCount; ++i) {
        bool a = k == ReduceKind::kAnd;
        for (int64_t m : g) a = k == ReduceKind::kAnd ? (a && bit(m, i)) : (a || bit(m, i));
        want[static_cast<size_t>(i)] = a ? 1.0 : 0.0;
      }
      expect(r, out, want, std::string("all_reduce ") + (k == ReduceKind::kAnd ? "and" : "or") + " (bool)");
    }
  }
}

}  // namespace

int64_t run_program_check(int64_t local_n);  // mpi_program.cpp
int64_t run_api_check(int64_t local_n);      // mpi_api.cpp

int main(int argc, char** argv) {
  int64_t local_n = argc > 1 ? std::stoll(argv[1]) : 2;
  setenv("JITX_CPU_DEVICE_COUNT", std::to_string(local_n).c_str(), 0);  // the local devices
  try {
    distributed::initialize();
    int64_t proc = distributed::process_index(), nproc = distributed::process_count();
    g_world = nproc * local_n;
    auto comms = detail::make_mpi_communicators(local_n);
    std::vector<std::thread> threads;
    std::vector<std::string> errors(static_cast<size_t>(local_n));
    for (int64_t i = 0; i < local_n; ++i)
      threads.emplace_back([&, i] {
        try {
          run(*comms[static_cast<size_t>(i)]);
        } catch (const std::exception& e) {
          errors[static_cast<size_t>(i)] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    int64_t checks = 0, failures = 0;
    for (int64_t i = 0; i < local_n; ++i) {
      int64_t r = proc * local_n + i;
      checks += g_checks[r];
      for (auto& f : g_failures[r]) std::printf("FAIL rank %lld: %s\n", static_cast<long long>(r), f.c_str());
      failures += static_cast<int64_t>(g_failures[r].size());
      if (!errors[static_cast<size_t>(i)].empty()) {
        std::printf("ERROR rank %lld: %s\n", static_cast<long long>(r), errors[static_cast<size_t>(i)].c_str());
        ++failures;
      }
    }
    std::printf("mpi_collectives: process %lld of %lld (%s), ranks %lld..%lld of %lld: %lld checks, %lld failed\n",
                static_cast<long long>(proc), static_cast<long long>(nproc), detail::mpi_thread_level(),
                static_cast<long long>(proc * local_n), static_cast<long long>(proc * local_n + local_n - 1),
                static_cast<long long>(g_world), static_cast<long long>(checks), static_cast<long long>(failures));
    failures += run_program_check(local_n);
    failures += run_api_check(local_n);
    distributed::shutdown();
    return failures ? 1 : 0;
  } catch (const Error& e) {
    std::printf("mpi_collectives: %s\n", e.what());
    return 2;
  }
}
