// Asynchronous collectives: the <op>-start / <op>-done instructions, the async-collectives pass that places them,
// and the runtime that runs a partition's collectives on its worker while the program computes on.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <random>

#include "core/host_callback.h"
#include "dispatch/spmd.h"
#include "hlo/evaluator/evaluator_collectives.h"
#include "hlo/analysis/cost_analysis.h"
#include "hlo/ir/collectives.h"
#include "hlo/ir/hlo_parser.h"
#include "hlo/passes/async_collectives.h"
#include "jitx/config.h"
#include "jitx/jitx.h"
#include "jitx/profiler.h"
#include "jitx/random.h"
#include "jitx/sharding.h"
#include "runtime/runtime.h"
#include "spmd_test_util.h"
#include "test_util.h"

using namespace jitx;
using detail::Literal;
using hlo::Opcode;

namespace {

using testing::have;

std::string group_of(int64_t n) {
  std::string g;
  for (int64_t p = 0; p < n; ++p) g += (p ? "," : "") + std::to_string(p);
  return g;
}

/// x, y -> (negate(all-reduce(all-reduce(x.x) + y.y)), y.y): the first all-reduce can overlap the second dot; the
/// second has nothing left to overlap.
std::string overlap_program(int64_t n) {
  return fmt::format(R"(HloModule overlap

ENTRY %e (x: f32[16,16], y: f32[16,16]) -> (f32[16,16], f32[16,16]) {{
  %x = f32[16,16] parameter(0)
  %y = f32[16,16] parameter(1)
  %d = f32[16,16] dot(%x, %x), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{1}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
  %ar = f32[16,16] all-reduce(%d), channel_id=1, reducer=add, replica_groups={{{{{0}}}}}
  %e = f32[16,16] dot(%y, %y), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{1}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
  %s = f32[16,16] add(%ar, %e)
  %ar2 = f32[16,16] all-reduce(%s), channel_id=2, reducer=max, replica_groups={{{{{0}}}}}
  %n = f32[16,16] negate(%ar2)
  ROOT %t = (f32[16,16], f32[16,16]) tuple(%n, %e)
}}
)",
                     group_of(n));
}

using testing::random_f32;

size_t position(const hlo::Computation& c, Opcode op, size_t nth = 0) {
  for (size_t k = 0; k < c.instructions.size(); ++k)
    if (c.instructions[k]->opcode == op && nth-- == 0) return k;
  return SIZE_MAX;
}

/// Runs `m` on the first n devices with per-partition arguments; returns each partition's outputs as literals.
std::vector<std::vector<Literal>> run_on_devices(std::shared_ptr<const hlo::Module> m,
                                                 const std::vector<std::vector<Literal>>& args) {
  auto& client = runtime::Client::get();
  auto exe = client.backend().compile(m);
  auto all = client.devices();
  std::vector<runtime::Device*> devs(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(args.size()));
  std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> bufs;
  for (size_t p = 0; p < args.size(); ++p) {
    bufs.emplace_back();
    for (auto& a : args[p]) bufs.back().push_back(runtime::Buffer::from_literal(a, devs[p]));
  }
  auto outs = detail::execute_spmd(*exe, devs, bufs);
  std::vector<std::vector<Literal>> got;
  for (auto& o : outs) {
    got.emplace_back();
    for (auto& b : o) got.back().push_back(b->literal());
  }
  return got;
}

void check_close(const Literal& got, const Literal& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (int64_t i = 0; i < got.size(); ++i) CHECK(got.get_f64(i) == Approx(want.get_f64(i)).epsilon(tol).margin(tol));
}

}  // namespace

TEST_CASE("async collectives: start/done text round-trips and the verifier checks their pairing", "[spmd][async]") {
  const char* text = R"(HloModule m

ENTRY %e (x: f32[4,2]) -> f32[8,2] {
  %x = f32[4,2] parameter(0)
  %s = f32[8,2] all-gather-start(%x), channel_id=1, dimensions={0}, replica_groups={{0,1}}
  %n = f32[4,2] negate(%x)
  ROOT %d = f32[8,2] all-gather-done(%s)
}
)";
  auto m = hlo::parse_hlo(text);
  hlo::verify(*m);
  std::string printed = hlo::print_hlo(*m);
  CHECK(hlo::print_hlo(*hlo::parse_hlo(printed)) == printed);
  CHECK(printed.find("all-gather-start(") != std::string::npos);
  CHECK(hlo::CollectiveConfig::of(*m->entry->find("s")).dimension == 0);
  CHECK(hlo::sync_collective_of(Opcode::kAllGatherDone) == Opcode::kAllGather);
  CHECK(hlo::is_collective(Opcode::kReduceScatterStart));
  CHECK_FALSE(hlo::is_collective(Opcode::kReduceScatterDone));
  // Cost analysis counts the start's bytes once (an all-gather: its result, 8 x 2 floats), not the done's.
  CHECK(hlo::analyze_cost(*m).collective_bytes == 64);

  auto bad = [](const std::string& body, const std::string& want) {
    auto mm = hlo::parse_hlo("HloModule m\n\nENTRY %e (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0)\n" + body +
                             "}\n");
    testing::require_error<CompileError>([&] { hlo::verify(*mm); }, want);
  };
  bad("  ROOT %d = f32[4] all-reduce-done(%x)\n", "the operand of all-reduce-done must be an all-reduce-start");
  bad("  ROOT %s = f32[4] all-reduce-start(%x), reducer=add\n",
      "all-reduce-start must have exactly one user, its all-reduce-done");
  bad("  %s = f32[4] all-reduce-start(%x), reducer=add\n  %a = f32[4] all-reduce-done(%s)\n"
      "  %b = f32[4] all-reduce-done(%s)\n  ROOT %t = f32[4] add(%a, %b)\n",
      "exactly one user");
  bad("  %s = f32[4] all-reduce-start(%x), reducer=add\n  ROOT %a = f32[4] collective-permute-done(%s)\n",
      "must have exactly one user, its all-reduce-done");
}

TEST_CASE("async collectives: the pass overlaps a collective with independent work, keeps the rest synchronous",
          "[spmd][async]") {
  auto m = hlo::parse_hlo(overlap_program(2));
  auto original = m->clone();
  hlo::AsyncCollectives pass;
  CHECK(pass.run(*m));
  hlo::verify(*m);
  INFO(hlo::print_hlo(*m));
  CHECK(pass.converted == 1);
  CHECK(pass.kept == 1);
  const auto& c = *m->entry;
  size_t start = position(c, Opcode::kAllReduceStart), done = position(c, Opcode::kAllReduceDone);
  size_t other_dot = SIZE_MAX;
  for (size_t k = 0; k < c.instructions.size(); ++k)
    if (c.instructions[k]->name == "e") other_dot = k;
  // The start follows its dot at once, the independent dot runs before the done, the sum after it.
  CHECK(start == position(c, Opcode::kDot, 0) + 1);
  CHECK(start < other_dot);
  CHECK(other_dot < done);
  CHECK(done < position(c, Opcode::kAdd));
  CHECK(position(c, Opcode::kAllReduce) != SIZE_MAX);  // %ar2: read by the next instruction, nothing to hide
  CHECK(c.find("ar") == nullptr);

  // Both forms compute the same, in the evaluator and on devices.
  for (int64_t n : {2, 4}) {
    if (!have(size_t(n))) return;
    INFO("partitions: " << n);
    auto mn = hlo::parse_hlo(overlap_program(n));
    std::shared_ptr<hlo::Module> async = mn->clone();
    hlo::AsyncCollectives().run(*async);
    std::vector<std::vector<Literal>> args;
    for (int64_t p = 0; p < n; ++p)
      args.push_back({random_f32({16, 16}, 10u + uint32_t(p)), random_f32({16, 16}, 50u + uint32_t(p))});
    auto want = evaluator::evaluate_spmd(*mn, args);
    auto evaluated = evaluator::evaluate_spmd(*async, args);
    auto ran = run_on_devices(async, args);
    for (int64_t p = 0; p < n; ++p)
      for (size_t k = 0; k < 2; ++k) {
        check_close(evaluated[size_t(p)].tuple[k].array, want[size_t(p)].tuple[k].array, 0);
        check_close(ran[size_t(p)][k], want[size_t(p)].tuple[k].array, 1e-5);
      }
  }
  (void)original;
}

TEST_CASE("async collectives: collectives issued while one is in flight run after it, in program order",
          "[spmd][async]") {
  // While %a is in flight: a synchronous all-reduce (the runtime's buffer path), an all-gather along a minor
  // dimension (the interpreter's path), and a second start whose done comes first in the text's data flow.
  for (int64_t n : {2, 4, 8}) {
    if (!have(size_t(n))) return;
    INFO("partitions: " << n);
    std::string g = group_of(n);
    std::string text = fmt::format(R"(HloModule order

ENTRY %e (x: f32[4,3]) -> (f32[4,3], f32[4,3], f32[4,{1}], f32[4,3]) {{
  %x = f32[4,3] parameter(0)
  %a = f32[4,3] all-reduce-start(%x), channel_id=1, reducer=add, replica_groups={{{{{0}}}}}
  %ex = f32[4,3] exponential(%x)
  %b = f32[4,3] all-reduce(%ex), channel_id=2, reducer=max, replica_groups={{{{{0}}}}}
  %c = f32[4,{1}] all-gather(%ex), channel_id=3, dimensions={{1}}, replica_groups={{{{{0}}}}}
  %s = f32[4,3] collective-permute-start(%ex), channel_id=4, source_target_pairs={{{2}}}
  %sd = f32[4,3] collective-permute-done(%s)
  %ad = f32[4,3] all-reduce-done(%a)
  ROOT %t = (f32[4,3], f32[4,3], f32[4,{1}], f32[4,3]) tuple(%ad, %b, %c, %sd)
}}
)",
                                   g, 3 * n, [&] {
                                     std::string pairs;
                                     for (int64_t p = 0; p < n; ++p)
                                       pairs += fmt::format("{}{{{},{}}}", p ? "," : "", p, (p + 1) % n);
                                     return pairs;
                                   }());
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
    hlo::verify(*m);
    std::vector<std::vector<Literal>> args;
    for (int64_t p = 0; p < n; ++p) args.push_back({random_f32({4, 3}, 7u + uint32_t(p))});
    auto want = evaluator::evaluate_spmd(*m, args);
    // Hand-checked pieces of the reference: %a is the sum over partitions, %sd partition p-1's exp(x).
    for (int64_t i = 0; i < 12; ++i) {
      double sum = 0;
      for (int64_t p = 0; p < n; ++p) sum += args[size_t(p)][0].get_f64(i);
      CHECK(want[0].tuple[0].array.get_f64(i) == Approx(sum).epsilon(1e-5));
      CHECK(want[1].tuple[3].array.get_f64(i) == Approx(std::exp(args[0][0].get_f64(i))).epsilon(1e-5));
    }
    for (int rep = 0; rep < 3; ++rep) {
      auto got = run_on_devices(m, args);
      for (int64_t p = 0; p < n; ++p)
        for (size_t k = 0; k < 4; ++k) check_close(got[size_t(p)][k], want[size_t(p)].tuple[k].array, 1e-5);
    }
  }
}

TEST_CASE("async collectives: a partition failing while a collective is in flight fails every partition, no hang",
          "[spmd][async]") {
  if (!have(4)) return;
  // Partition 2's callback throws between the first collective's start and done; the others then wait in the
  // second collective for a partition that will never reach it, until its failure aborts the communicator.
  detail::HostCallback cb;
  cb.name = "pure_callback";
  cb.has_side_effect = false;
  cb.result_avals = {ShapedArray{{4}, DType::float32}};
  cb.fn = [](std::vector<Literal> args) {
    if (std::abs(args[0].get_f64(0) - 1.8) < 1e-3) throw RuntimeError("[test] partition 2's callback failed");
    return args;
  };
  int64_t id = detail::register_host_callback(cb);
  std::string text = fmt::format(R"(HloModule fail

ENTRY %e (x: f32[4]) -> (f32[4], f32[4]) {{
  %x = f32[4] parameter(0)
  %a = f32[4] all-reduce-start(%x), channel_id=1, reducer=add, replica_groups={{{{0,1,2,3}}}}
  %cb = f32[4] custom-call(%x), custom_call_target="jitx.host_callback", callback_id={}, has_side_effect=false
  %ad = f32[4] all-reduce-done(%a)
  %b = f32[4] all-reduce(%cb), channel_id=2, reducer=add, replica_groups={{{{0,1,2,3}}}}
  ROOT %t = (f32[4], f32[4]) tuple(%ad, %b)
}}
)",
                                 id);
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  std::vector<std::vector<Literal>> args;
  for (int64_t p = 0; p < 4; ++p) {
    Literal l = Literal::make(DType::float32, {4});
    for (int64_t i = 0; i < 4; ++i) l.set_f64(i, double(p) * 0.9 - 0.1 * double(i));  // only p = 2 has x[0] = 1.8
    args.push_back({l});
  }
  auto& client = runtime::Client::get();
  auto exe = client.backend().compile(m);
  auto all = client.devices();
  std::vector<runtime::Device*> devs(all.begin(), all.begin() + 4);
  auto put = [&] {
    std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> bufs;
    for (size_t p = 0; p < 4; ++p) bufs.push_back({runtime::Buffer::from_literal(args[p][0], devs[p])});
    return bufs;
  };
  for (int rep = 0; rep < 2; ++rep) {
    auto outs = detail::execute_spmd(*exe, devs, put());
    for (size_t p = 0; p < 4; ++p) {
      INFO("partition " << p);
      testing::require_error<Error>([&] { outs[p][1]->literal(); }, "partition 2's callback failed");
    }
  }
  // The devices run the next launch normally (a program without the failing partition's input).
  args[2][0].set_f64(0, 0.0);
  auto outs = detail::execute_spmd(*exe, devs, put());
  for (size_t p = 0; p < 4; ++p) CHECK_NOTHROW(outs[p][1]->literal());
}

TEST_CASE("async collectives: a data-parallel step overlaps its gradient all-reduces and gives one device's values",
          "[spmd][async]") {
  auto loss = [](const std::vector<Array>& p, const Array& x) {
    Array h = jnp::tanh(jnp::matmul(x, p[0]));
    h = jnp::tanh(jnp::matmul(h, p[1]));
    return jnp::mean(jnp::square(jnp::matmul(h, p[2])));
  };
  auto step_fn = [&](const std::vector<Array>& p, const Array& x) {
    auto g = grad(loss)(p, x);
    std::vector<Array> out;
    for (size_t k = 0; k < p.size(); ++k) out.push_back(p[k] - 0.1 * g[k]);
    return out;
  };
  auto k = random::split(random::PRNGKey(11), 4);
  const int64_t d = 288, b = 32;  // 324 KiB gradients: over the combiner's limit, one all-reduce each
  std::vector<Array> p{random::normal(k[0], {d, d}) * 0.1, random::normal(k[1], {d, d}) * 0.1,
                       random::normal(k[2], {d, d}) * 0.1};
  Array x = random::normal(k[3], {b, d});
  auto want = jit(step_fn)(p, x);
  for (int64_t n : {2, 4}) {
    if (!have(size_t(n))) return;
    INFO("devices: " << n);
    auto mesh = make_mesh({n}, {"data"});
    Array xs = device_put(x, NamedSharding(mesh, PartitionSpec("data", nullptr)));
    for (bool async : {true, false}) {
      INFO("async collectives: " << async);
      bool saved = config().async_collectives;
      config().async_collectives = async;
      auto step = jit(step_fn);
      std::string text = step.lower(p, xs).compile().as_text();
      profiler::reset_collective_stats();
      auto got = step(p, xs);
      for (auto& g : got) g.block_until_ready();
      auto stats = profiler::collective_stats();
      config().async_collectives = saved;
      INFO(text);
      size_t ars = testing::collective_count(text, "all-reduce");
      CHECK(ars == 3);
      CHECK((text.find("all-reduce-start(") != std::string::npos) == async);
      // The cpu backend runs them on the partitions' collective workers; the interpreter at their start.
      if (default_platform() == "cpu") CHECK((stats.async_calls > 0) == async);
      CHECK(stats.calls == static_cast<int64_t>(ars) * n);
      for (size_t j = 0; j < 3; ++j) {
        auto gv = got[j].to_vector<float>(), wv = want[j].to_vector<float>();
        REQUIRE(gv.size() == wv.size());
        double worst = 0;
        for (size_t i = 0; i < gv.size(); ++i) worst = std::max(worst, double(std::abs(gv[i] - wv[i])));
        CHECK(worst < 1e-5);  // f32: the batch summed in per-device parts
      }
    }
  }
}
