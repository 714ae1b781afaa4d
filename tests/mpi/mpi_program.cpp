// The second half of the MPI test: a partitioned HLO program (all-reduce, all-gather, reduce-scatter,
// collective-permute, partition-id) over every process's devices, each process running its local partitions on its
// CPU devices' streams through execute_spmd with MPI communicators; each partition's outputs must equal the
// evaluator's SPMD run of all partitions in this one process (shared-memory transport).
#include <cmath>
#include <cstdio>
#include <string>

#include "core/communicator_mpi.h"
#include "dispatch/spmd.h"
#include "hlo/evaluator/evaluator_collectives.h"
#include "hlo/ir/hlo_parser.h"
#include "runtime/runtime.h"

using namespace jitx;
using detail::Literal;

namespace {

std::string program(int64_t n) {
  std::string g, pairs;
  for (int64_t p = 0; p < n; ++p) {
    g += (p ? "," : "") + std::to_string(p);
    pairs += (p ? ",{" : "{") + std::to_string(p) + "," + std::to_string((p + 1) % n) + "}";
  }
  return fmt::format(R"(HloModule spmd_mpi

ENTRY %e (x: f32[2,{0}]) -> (f32[2,{0}], f32[{1},{0}], f32[2,1], f32[2,{0}], u32[]) {{
  %x = f32[2,{0}] parameter(0)
  %ex = f32[2,{0}] exponential(%x)
  %ar = f32[2,{0}] all-reduce(%ex), channel_id=1, reducer=add, replica_groups={{{{{2}}}}}
  %ag = f32[{1},{0}] all-gather(%x), channel_id=2, dimensions={{0}}, replica_groups={{{{{2}}}}}
  %rs = f32[2,1] reduce-scatter(%x), channel_id=3, dimensions={{1}}, reducer=add, replica_groups={{{{{2}}}}}
  %cp = f32[2,{0}] collective-permute(%x), channel_id=4, source_target_pairs={{{3}}}
  %id = u32[] partition-id()
  ROOT %t = (f32[2,{0}], f32[{1},{0}], f32[2,1], f32[2,{0}], u32[]) tuple(%ar, %ag, %rs, %cp, %id)
}}
)",
                     n, 2 * n, g, pairs);
}

Literal input(int64_t p, int64_t n) {
  Literal l = Literal::make(DType::float32, {2, n});
  for (int64_t k = 0; k < 2 * n; ++k) l.set_f64(k, 0.01 * double(p * 7 + k) - 0.3);
  return l;
}

}  // namespace

/// Returns the number of mismatching elements (printing each partition's check).
int64_t run_program_check(int64_t local_n) {
  int64_t proc = detail::mpi_process_index(), n = detail::mpi_process_count() * local_n;
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(program(n));
  hlo::verify(*m);
  std::vector<std::vector<Literal>> all_args;
  for (int64_t p = 0; p < n; ++p) all_args.push_back({input(p, n)});
  auto want = evaluator::evaluate_spmd(*m, all_args);

  auto& client = runtime::Client::get();
  auto exe = client.backend().compile(m);
  auto devs = client.devices();
  std::vector<runtime::Device*> mine(devs.begin(), devs.begin() + local_n);
  std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> args;
  for (int64_t i = 0; i < local_n; ++i)
    args.push_back({runtime::Buffer::from_literal(input(proc * local_n + i, n), mine[size_t(i)])});
  auto outs = detail::execute_spmd(*exe, mine, args, detail::make_mpi_communicators(local_n));
  int64_t bad = 0, checked = 0;
  for (int64_t i = 0; i < local_n; ++i) {
    int64_t p = proc * local_n + i;
    for (size_t k = 0; k < 5; ++k) {
      Literal got = outs[size_t(i)][k]->literal();
      const Literal& ref = want[size_t(p)].tuple[k].array;
      for (int64_t e = 0; e < ref.size(); ++e, ++checked)
        if (std::abs(got.get_f64(e) - ref.get_f64(e)) > 1e-5 * (1 + std::abs(ref.get_f64(e)))) {
          if (bad++ < 5)
            std::printf("FAIL partition %lld output %zu element %lld: %g, want %g\n", static_cast<long long>(p), k,
                        static_cast<long long>(e), got.get_f64(e), ref.get_f64(e));
        }
    }
  }
  std::printf("mpi_program: process %lld, partitions %lld..%lld of %lld on the CPU backend: %lld elements, %lld "
              "differ from the evaluator\n",
              static_cast<long long>(proc), static_cast<long long>(proc * local_n),
              static_cast<long long>(proc * local_n + local_n - 1), static_cast<long long>(n),
              static_cast<long long>(checked), static_cast<long long>(bad));
  return bad;
}
