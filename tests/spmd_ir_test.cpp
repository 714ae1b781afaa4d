// SPMD in the HLO IR: sharding attributes and collectives printed, parsed, verified and evaluated over partitions
// (the evaluator's collectives against hand-computed results), and the shared-memory communicator.
#include <catch2/catch.hpp>
#include <thread>

#include "core/communicator.h"
#include "hlo/analysis/cost_analysis.h"
#include "hlo/evaluator/evaluator_collectives.h"
#include "hlo/ir/collectives.h"
#include "hlo/passes/fusion.h"
#include "hlo_test_util.h"
#include "spmd_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using detail::Literal;

namespace {

Literal f32(const std::vector<float>& v, const std::vector<int64_t>& dims) {
  return jitx::testing::f32_literal(v, dims);
}
std::vector<float> values(const Literal& l) { return jitx::testing::f32_values(l); }
/// Partition p's argument: a [rows, cols] block whose element (r, c) is 100 p + 10 r + c.
Literal block(int64_t p, int64_t rows, int64_t cols) {
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) v.push_back(static_cast<float>(100 * p + 10 * r + c));
  return f32(v, {rows, cols});
}
std::vector<Literal> run1(const std::string& text, int64_t n, int64_t rows, int64_t cols) {
  auto m = hlo::testing::parse(text);
  std::vector<std::vector<Literal>> args;
  for (int64_t p = 0; p < n; ++p) args.push_back({block(p, rows, cols)});
  std::vector<Literal> out;
  for (auto& v : evaluator::evaluate_spmd(*m, args)) out.push_back(v.array);
  return out;
}
std::string module1(const std::string& result, const std::string& op, const std::string& attrs) {
  return "HloModule m\n\nENTRY %e (x: f32[2,4]) -> " + result +
         " {\n  %x = f32[2,4] parameter(0)\n  ROOT %r = " + result + " " + op + "(%x)" + attrs + "\n}\n";
}

}  // namespace

TEST_CASE("hlo: sharding attributes print and parse as XLA's", "[spmd]") {
  for (std::string s : {"{replicated}", "{devices=[2,1]0,1}", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
                        "{devices=[4]3,2,1,0}"}) {
    CHECK(HloSharding::parse(s).to_string() == s);
  }
  CHECK(HloSharding::parse("{devices=[1,1]0}").replicated);  // one tile: replicated
  CHECK(HloSharding::parse("{devices=[2,1,1]0,1 last_tile_dim_replicate}").to_string() == "{devices=[2,1]0,1}");
  CHECK_THROWS_WITH(HloSharding::parse("{devices=[2,2]0,1,2}"), Catch::Contains("cover 4 devices but 3 are listed"));
  CHECK_THROWS_WITH(HloSharding::parse("{devices=[2]0,0}"), Catch::Contains("device 0 is listed twice"));
  CHECK_THROWS_WITH(HloSharding::parse("{maximal device=0}"), Catch::Contains("expected 'replicated'"));
  // Huge numbers are parse errors (no std::stoll overflow, no tile-count overflow).
  CHECK_THROWS_WITH(HloSharding::parse("{devices=[99999999999999999999]0}"), Catch::Contains("too large"));
  CHECK_THROWS_WITH(HloSharding::parse("{devices=[999999999,999999999,999999999]0}"),
                    Catch::Contains("too many tiles"));
  CHECK_THROWS_WITH(parse_groups("{{0,123456789012345678901}}"), Catch::Contains("too large"));
  auto t = HloSharding::parse("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  CHECK(t.rank() == 2);
  CHECK(t.tile_index(3) == std::vector<int64_t>{1, 0});
  CHECK(t.shard_shape({5, 3}) == std::vector<int64_t>{3, 3});
  CHECK(t.shard_range({5, 3}, 2) == std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {0, 3}});

  const char* text = R"(HloModule m

ENTRY %e (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %n = f32[8,4] negate(%x), sharding={devices=[2,2]0,1,2,3}
  ROOT %r = f32[8,4] all-reduce(%n), channel_id=1, reducer=add, replica_groups={{0,1},{2,3}}, sharding={replicated}
}
)";
  auto m = hlo::testing::parse(text);
  std::string printed = print_hlo(*m);
  CHECK(printed.find("sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}") != std::string::npos);
  CHECK(printed.find("replica_groups={{0,1},{2,3}}") != std::string::npos);
  CHECK(printed.find("sharding={replicated}") != std::string::npos);
  CHECK(print_hlo(*hlo::testing::parse(printed)) == printed);  // round trip
  CHECK(sharding_of(*m->entry->find("n"))->to_string() == "{devices=[2,2]0,1,2,3}");
  CHECK_FALSE(sharding_of(*m->entry->find("x"))->replicated);
  // Bad shardings are parse errors naming the line; a sharding of the wrong rank is a verifier error.
  std::string bad = text;
  bad.replace(bad.find("{devices=[2,2]0,1,2,3}"), 22, "{devices=[2,2]0,1,2}");
  CHECK_THROWS_WITH(parse_hlo(bad), Catch::Contains("cover 4 devices but 3 are listed"));
  std::string rank = text;
  rank.replace(rank.find("{devices=[2,2]0,1,2,3}"), 22, "{devices=[4]0,1,2,3}");
  CHECK_THROWS_WITH(hlo::testing::parse(rank), Catch::Contains("tiles 1 dimensions, the shape has 2"));
}

TEST_CASE("hlo: collectives print, parse and verify", "[spmd]") {
  const char* text = R"(HloModule m

ENTRY %e (x: f32[2,4]) -> (f32[2,4], f32[4,4], f32[2,2], f32[2,4], f32[2,4]) {
  %x = f32[2,4] parameter(0)
  %ar = f32[2,4] all-reduce(%x), channel_id=1, reducer=add, replica_groups={{0,1}}
  %ag = f32[4,4] all-gather(%x), channel_id=2, dimensions={0}, replica_groups={{0,1}}
  %rs = f32[2,2] reduce-scatter(%x), channel_id=3, dimensions={1}, reducer=max, replica_groups={{0,1}}
  %a2a = f32[2,4] all-to-all(%x), channel_id=4, dimensions={1}, replica_groups={{0,1}}
  %cp = f32[2,4] collective-permute(%x), channel_id=5, source_target_pairs={{0,1},{1,0}}
  ROOT %t = (f32[2,4], f32[4,4], f32[2,2], f32[2,4], f32[2,4]) tuple(%ar, %ag, %rs, %a2a, %cp)
}
)";
  auto m = hlo::testing::parse(text);
  std::string printed = print_hlo(*m);
  CHECK(print_hlo(*hlo::testing::parse(printed)) == printed);
  for (const char* op : {"all-reduce(", "all-gather(", "reduce-scatter(", "all-to-all(", "collective-permute("})
    CHECK(printed.find(op) != std::string::npos);
  auto cfg = CollectiveConfig::of(*m->entry->find("ag"));
  CHECK(cfg.dimension == 0);
  CHECK(cfg.replica_groups == std::vector<std::vector<int64_t>>{{0, 1}});
  CHECK(CollectiveConfig::of(*m->entry->find("cp")).source_target_pairs ==
        std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}});
  // Cost analysis counts the bytes each partition sends.
  auto cost = analyze_cost(*m);
  CHECK(cost.collective_bytes == 32 + 64 + 32 + 32 + 32);
  CHECK(cost.as_map().at("bytes transferred") == cost.collective_bytes);

  auto bad = [&](const std::string& from, const std::string& to, const std::string& msg) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    INFO(to);
    CHECK_THROWS_WITH(hlo::testing::parse(t), Catch::Contains(msg));
  };
  bad("%ag = f32[4,4]", "%ag = f32[6,4]", "dimension 0 of the result (6) does not fit the operand's (2)");
  bad("%rs = f32[2,2]", "%rs = f32[2,3]", "dimension 1 of the result (3)");
  bad("reducer=max, replica_groups", "reducer=argmax, replica_groups",
      "reducer=argmax is not one reduce-scatter takes");
  bad("dimensions={0}, replica_groups={{0,1}}", "replica_groups={{0,1}}", "needs dimensions={d}");
  bad("reducer=add, replica_groups={{0,1}}", "reducer=add, replica_groups={{0,1},{1,2}}", "partition 1 is in two");
  bad("source_target_pairs={{0,1},{1,0}}", "source_target_pairs={{0,1},{0,0}}", "a source or target twice");
  bad("replica_groups={{0,1}}\n  %ag", "replica_groups={{0,1}\n  %ag", "missing");
}

TEST_CASE("evaluator: collectives over N partitions, as XLA defines them", "[spmd]") {
  for (int64_t n : {2, 4, 8}) {
    INFO("partitions: " << n);
    std::string all;  // the group of every partition
    for (int64_t p = 0; p < n; ++p) all += (p ? "," : "") + std::to_string(p);
    // all-reduce (sum): every partition gets the sum over partitions.
    auto ar = run1(module1("f32[2,4]", "all-reduce", ", reducer=add, replica_groups={{" + all + "}}"), n, 2, 4);
    for (int64_t p = 0; p < n; ++p)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 4; ++c)
          CHECK(values(ar[p])[size_t(r * 4 + c)] == float(100 * n * (n - 1) / 2 + n * (10 * r + c)));
    // all-reduce (max) in groups of two: the odd partner's block.
    if (n >= 4) {
      std::string pairs;
      for (int64_t p = 0; p < n; p += 2) pairs += fmt::format("{}{{{},{}}}", p ? "," : "", p, p + 1);
      auto mx = run1(module1("f32[2,4]", "all-reduce", ", reducer=max, replica_groups={" + pairs + "}"), n, 2, 4);
      for (int64_t p = 0; p < n; ++p) CHECK(values(mx[p]) == values(block(p | 1, 2, 4)));
    }
    // all-gather along dimension 1: the blocks side by side, in group order.
    auto ag =
        run1(module1(fmt::format("f32[2,{}]", 4 * n), "all-gather", ", dimensions={1}, replica_groups={{" + all + "}}"),
             n, 2, 4);
    for (int64_t p = 0; p < n; ++p)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 4 * n; ++c)
          CHECK(values(ag[p])[size_t(r * 4 * n + c)] == float(100 * (c / 4) + 10 * r + c % 4));
  }
  // reduce-scatter along dimension 1 over 2 and 4 partitions: partition p gets columns [p m, (p + 1) m) summed.
  for (int64_t n : {2, 4}) {
    std::string all;
    for (int64_t p = 0; p < n; ++p) all += (p ? "," : "") + std::to_string(p);
    int64_t m = 4 / n;
    auto rs = run1(module1(fmt::format("f32[2,{}]", m), "reduce-scatter",
                           ", dimensions={1}, reducer=add, replica_groups={{" + all + "}}"),
                   n, 2, 4);
    for (int64_t p = 0; p < n; ++p)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < m; ++c)
          CHECK(values(rs[p])[size_t(r * m + c)] == float(100 * n * (n - 1) / 2 + n * (10 * r + p * m + c)));
    // all-to-all along dimension 1: chunk j of partition i lands as chunk i of partition j.
    auto a2a = run1(module1("f32[2,4]", "all-to-all", ", dimensions={1}, replica_groups={{" + all + "}}"), n, 2, 4);
    for (int64_t p = 0; p < n; ++p)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 4; ++c) {
          int64_t src = c / m, col = p * m + c % m;
          CHECK(values(a2a[p])[size_t(r * 4 + c)] == float(100 * src + 10 * r + col));
        }
  }
  // collective-permute: a ring shift; partition 0 has no source in a half ring and gets zeros.
  auto cp = run1(module1("f32[2,4]", "collective-permute", ", source_target_pairs={{0,1},{1,2},{2,3}}"), 4, 2, 4);
  CHECK(values(cp[0]) == std::vector<float>(8, 0.0f));
  for (int64_t p = 1; p < 4; ++p) CHECK(values(cp[p]) == values(block(p - 1, 2, 4)));
  // Alone (plain evaluate), a collective over more than one partition is an error, not a silent identity.
  auto m = hlo::testing::parse(module1("f32[2,4]", "all-reduce", ", reducer=add, replica_groups={{0,1}}"));
  CHECK_THROWS_WITH(evaluator::evaluate(*m, {block(0, 2, 4)}), Catch::Contains("runs one partition alone"));
}

TEST_CASE("evaluator: an error in one partition reaches every partition", "[spmd]") {
  // Partition 1's argument has the wrong size, so its evaluation fails before the all-reduce; the others wait in
  // the all-reduce and must be released with the error instead of hanging.
  auto m = hlo::testing::parse(module1("f32[2,4]", "all-reduce", ", reducer=add, replica_groups={{0,1,2,3}}"));
  std::vector<std::vector<Literal>> args;
  for (int64_t p = 0; p < 4; ++p) args.push_back({block(p, 2, 4)});
  args[1].clear();  // a missing argument: an internal error in partition 1
  CHECK_THROWS(evaluator::evaluate_spmd(*m, args));
}

TEST_CASE("communicator: shared-memory collectives from many threads, many times", "[spmd]") {
  const int64_t n = 4, rounds = 200;
  auto comms = detail::make_local_communicators(n);
  std::vector<std::thread> ts;
  std::vector<int> bad(n, 0);
  for (int64_t r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      auto& c = *comms[size_t(r)];
      std::vector<int64_t> all{0, 1, 2, 3}, mine = r < 2 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{2, 3};
      for (int64_t k = 0; k < rounds; ++k) {
        int32_t x = static_cast<int32_t>(r + k), s = 0;
        c.all_reduce(&x, &s, 1, DType::int32, detail::ReduceKind::kSum, all);
        if (s != 6 + 4 * k) ++bad[size_t(r)];
        double g[2] = {0, 0}, y = double(r * k);
        c.all_gather(&y, g, 1, DType::float64, mine);
        if (g[0] != double(mine[0] * k) || g[1] != double(mine[1] * k)) ++bad[size_t(r)];
      }
    });
  for (auto& t : ts) t.join();
  CHECK(bad == std::vector<int>(n, 0));
}

TEST_CASE("fusion does not fuse a collective", "[spmd]") {
  auto m = hlo::testing::parse(R"(HloModule m

ENTRY %e (x: f32[64]) -> f32[64] {
  %x = f32[64] parameter(0)
  %a = f32[64] exponential(%x)
  %r = f32[64] all-reduce(%a), reducer=add, replica_groups={{0,1}}
  ROOT %b = f32[64] negate(%r)
}
)");
  Fusion().run(*m);
  verify(*m);
  const Instruction* ar = nullptr;
  for (auto& i : m->entry->instructions)
    if (i->opcode == Opcode::kAllReduce) ar = i.get();
  REQUIRE(ar);  // still in the entry computation, not inside a fusion
  CHECK(ar->operand(0)->opcode != Opcode::kAllReduce);
  for (auto& c : m->computations)
    if (c.get() != m->entry)
      for (auto& i : c->instructions) CHECK_FALSE(is_collective(i->opcode));
}
