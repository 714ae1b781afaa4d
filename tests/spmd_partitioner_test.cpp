// The SPMD partitioner, rule by rule: the partitioned module evaluated over N partitions (evaluate_spmd, each
// partition's arguments sliced from the global ones by their shardings) equals the unpartitioned module, and the
// collectives in the partitioned HLO are the expected ones.
#include "hlo/passes/spmd_partitioner.h"

#include <catch2/catch.hpp>
#include <random>

#include "hlo/evaluator/evaluator_collectives.h"
#include "hlo/ir/collectives.h"
#include "hlo_test_util.h"
#include "spmd_test_util.h"
#include "runtime/sharded.h"

using namespace jitx;
using namespace jitx::hlo;
using detail::Literal;

namespace {

using jitx::testing::random_f32;

/// One element of a result: the partitioned value assembled from each partition's piece by its sharding.
Literal assemble(const Instruction& root_elem, const std::vector<const Literal*>& pieces, const hlo::Shape& global) {
  auto s = sharding_of(root_elem);
  REQUIRE(s);
  Literal out = Literal::make(global.dtype, global.dims);
  for (size_t p = 0; p < pieces.size(); ++p) {
    auto range = s->shard_range(global.dims, s->replicated ? 0 : s->position_of(static_cast<int64_t>(p)));
    detail::paste_literal(out, *pieces[p], range);
  }
  return out;
}

struct Result {
  std::string text;  // the partitioned module
  size_t count(const std::string& op) const {
    size_t n = 0;
    for (size_t at = 0; (at = text.find(" " + op + "(", at)) != std::string::npos; ++at) ++n;
    return n;
  }
};

/// Partitions `text` over n partitions and checks it against the unpartitioned module on random arguments.
Result check(const std::string& text, int64_t n) {
  INFO(text << "\npartitions: " << n);
  auto m = hlo::testing::parse(text);
  std::vector<Literal> args;
  for (auto* p : m->entry->parameters)
    args.push_back(random_f32(p->shape.dims, 1234u + static_cast<uint32_t>(p->parameter_number)));
  auto want = evaluator::evaluate(*m, args);
  auto pm = m->clone();
  SpmdPartitioner(n).run(*pm);
  std::string ptext = print_hlo(*pm);
  INFO(ptext);
  verify(*pm);
  std::vector<std::vector<Literal>> per(static_cast<size_t>(n));
  for (auto* p : m->entry->parameters) {
    auto s = sharding_of(*p).value_or(HloSharding::replicate());
    for (int64_t q = 0; q < n; ++q) {
      auto range = s.shard_range(p->shape.dims, s.replicated ? 0 : s.position_of(q));
      per[static_cast<size_t>(q)].push_back(
          detail::slice_literal(args[static_cast<size_t>(p->parameter_number)], range));
    }
  }
  auto got = evaluator::evaluate_spmd(*pm, per);
  const Instruction* root = pm->entry->root;
  std::vector<const Instruction*> elems;
  std::vector<hlo::Shape> globals;
  std::vector<const evaluator::Value*> wants;
  if (root->opcode == Opcode::kTuple) {
    for (size_t k = 0; k < root->operands.size(); ++k) {
      elems.push_back(root->operand(k));
      globals.push_back(m->entry->root->operand(k)->shape);
      wants.push_back(&want.tuple[k]);
    }
  } else {
    elems.push_back(root);
    globals.push_back(m->entry->root->shape);
    wants.push_back(&want);
  }
  for (size_t k = 0; k < elems.size(); ++k) {
    std::vector<const Literal*> pieces;
    for (auto& g : got) pieces.push_back(root->opcode == Opcode::kTuple ? &g.tuple[k].array : &g.array);
    Literal a = assemble(*elems[k], pieces, globals[k]);
    const Literal& w = wants[k]->array;
    REQUIRE(a.size() == w.size());
    for (int64_t i = 0; i < a.size(); ++i) CHECK(a.get_f64(i) == Approx(w.get_f64(i)).epsilon(1e-5).margin(1e-6));
  }
  return Result{ptext};
}

std::string ids(int64_t n) {
  std::string s;
  for (int64_t p = 0; p < n; ++p) s += (p ? "," : "") + std::to_string(p);
  return s;
}

}  // namespace

TEST_CASE("partitioner: elementwise ops follow the split operand, replicated ones are sliced locally", "[spmd]") {
  for (int64_t n : {2, 4, 8}) {
    for (std::string sh :
         {fmt::format("{{devices=[{},1]{}}}", n, ids(n)), fmt::format("{{devices=[1,{}]{}}}", n, ids(n))}) {
      auto r = check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[16,8], y: f32[16,8]) -> f32[16,8] {{
  %x = f32[16,8] parameter(0), sharding={}
  %y = f32[16,8] parameter(1)
  %a = f32[16,8] exponential(%x)
  %b = f32[16,8] multiply(%a, %y)
  ROOT %c = f32[16,8] add(%b, %x)
}}
)",
                                 sh),
                     n);
      CHECK(r.count("all-gather") == 0);
      CHECK(r.count("all-reduce") == 0);
      CHECK(r.count("dynamic-slice") == 2);  // y's piece at this partition's offset, and the offset's lookup
      CHECK(r.text.find("ROOT %") != std::string::npos);
    }
  }
  // A 2-D mesh: split on both dimensions, and split on one with the rest replicated.
  for (std::string sh : {"{devices=[2,4]0,1,2,3,4,5,6,7}", "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}",
                         "{devices=[4,2]0,4,1,5,2,6,3,7}"}) {
    auto r = check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[8,8], y: f32[8,8]) -> f32[8,8] {{
  %x = f32[8,8] parameter(0), sharding={}
  %y = f32[8,8] parameter(1), sharding={{devices=[2,4]0,1,2,3,4,5,6,7}}
  ROOT %c = f32[8,8] subtract(%x, %y)
}}
)",
                               sh),
                   8);
    CHECK(r.count("all-reduce") == 0);
  }
}

TEST_CASE("partitioner: dot split by batch, non-contracting and contracting dimensions", "[spmd]") {
  for (int64_t n : {2, 4, 8}) {
    auto dot = [&](std::string xs, std::string ws) {
      return check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[16,8], w: f32[8,16]) -> f32[16,16] {{
  %x = f32[16,8] parameter(0){}
  %w = f32[8,16] parameter(1){}
  ROOT %d = f32[16,16] dot(%x, %w), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{1}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
}}
)",
                               xs, ws),
                   n);
    };
    std::string rows = fmt::format(", sharding={{devices=[{},1]{}}}", n, ids(n));
    std::string cols = fmt::format(", sharding={{devices=[1,{}]{}}}", n, ids(n));
    // Data parallel: x split on its rows (a non-contracting dimension), w replicated: no communication.
    auto dp = dot(rows, "");
    CHECK(dp.count("all-reduce") + dp.count("all-gather") == 0);
    CHECK(dp.text.find(fmt::format("ROOT %dot")) != std::string::npos);
    // Column parallel: w split on its columns: no communication, the output split on columns.
    auto cp = dot("", cols);
    CHECK(cp.count("all-reduce") + cp.count("all-gather") == 0);
    // Row parallel: both split on the contracting dimension: partial products and one all-reduce.
    auto rp = dot(cols, rows);
    CHECK(rp.count("all-reduce") == 1);
    CHECK(rp.count("all-gather") == 0);
    CHECK(rp.text.find("replica_groups={{" + ids(n) + "}}") != std::string::npos);
    // Only x split on the contracting dimension: w is sliced locally, then one all-reduce.
    auto one = dot(cols, "");
    CHECK(one.count("all-reduce") == 1);
    CHECK(one.count("all-gather") == 0);
    // Row parallel with the output annotated split on its rows: the partial products are reduce-scattered.
    auto rsc = check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[16,8], w: f32[8,16]) -> f32[16,16] {{
  %x = f32[16,8] parameter(0), sharding={{devices=[1,{0}]{1}}}
  %w = f32[8,16] parameter(1), sharding={{devices=[{0},1]{1}}}
  ROOT %d = f32[16,16] dot(%x, %w), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{1}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}, sharding={{devices=[{0},1]{1}}}
}}
)",
                                 n, ids(n)),
                     n);
    CHECK(rsc.count("reduce-scatter") == 1);
    CHECK(rsc.count("all-reduce") == 0);
    CHECK(rsc.count("all-gather") == 0);
    // x split on the contracting dimension, w on its columns: w moves to its rows (one all-to-all).
    auto mixed = dot(cols, cols);
    CHECK(mixed.count("all-reduce") == 1);
    CHECK(mixed.count("all-to-all") == 1);
    CHECK(mixed.count("all-gather") == 0);
  }
  // Batch dimensions split on both operands: no communication.
  for (int64_t n : {2, 4}) {
    auto r = check(fmt::format(R"(HloModule m

ENTRY %e (a: f32[4,6,8], b: f32[4,8,2]) -> f32[4,6,2] {{
  %a = f32[4,6,8] parameter(0), sharding={{devices=[{0},1,1]{1}}}
  %b = f32[4,8,2] parameter(1), sharding={{devices=[{0},1,1]{1}}}
  ROOT %d = f32[4,6,2] dot(%a, %b), lhs_batch_dimensions={{0}}, lhs_contracting_dimensions={{2}}, rhs_batch_dimensions={{0}}, rhs_contracting_dimensions={{1}}
}}
)",
                               n, ids(n)),
                   n);
    CHECK(r.count("all-reduce") + r.count("all-gather") == 0);
  }
  // A 2-D mesh: x split on rows over one axis and replicated over the other; w split on the contracting dimension
  // over the second axis. The all-reduce groups are the partitions that hold pieces of one contraction.
  auto r2 = check(R"(HloModule m

ENTRY %e (x: f32[8,8], w: f32[8,4]) -> f32[8,4] {
  %x = f32[8,8] parameter(0), sharding={devices=[2,4]0,1,2,3,4,5,6,7}
  %w = f32[8,4] parameter(1)
  ROOT %d = f32[8,4] dot(%x, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)",
                  8);
  CHECK(r2.count("all-reduce") == 1);
  CHECK(r2.text.find("replica_groups={{0,1,2,3},{4,5,6,7}}") != std::string::npos);
}

TEST_CASE("partitioner: reductions over a split dimension end in an all-reduce", "[spmd]") {
  for (int64_t n : {2, 4, 8}) {
    auto red = [&](std::string dims, std::string out, std::string reducer, std::string init) {
      return check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[16,8]) -> {1} {{
  %x = f32[16,8] parameter(0), sharding={{devices=[{3},1]{4}}}
  %z = f32[] constant({2})
  ROOT %r = {1} reduce(%x, %z), dimensions={{{0}}}, reducer={5}
}}
)",
                               dims, out, init, n, ids(n), reducer),
                   n);
    };
    auto across = red("0", "f32[8]", "add", "0");
    CHECK(across.count("all-reduce") == 1);
    auto mx = red("0,1", "f32[]", "max", "-inf");
    CHECK(mx.count("all-reduce") == 1);
    CHECK(mx.text.find("reducer=max, replica_groups") != std::string::npos);
    auto kept = red("1", "f32[16]", "add", "0");
    CHECK(kept.count("all-reduce") == 0);
    // An init that is not the identity cannot be reduced in pieces: the operand is all-gathered instead.
    auto init = red("0", "f32[8]", "add", "1.5");
    CHECK(init.count("all-gather") == 1);
    CHECK(init.count("all-reduce") == 0);
  }
}

TEST_CASE("partitioner: broadcast and transpose carry tiles, other ops all-gather, annotations reshard", "[spmd]") {
  for (int64_t n : {2, 4}) {
    auto r = check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[8], y: f32[4,8]) -> (f32[8,4], f32[32]) {{
  %x = f32[8] parameter(0), sharding={{devices=[{0}]{1}}}
  %y = f32[4,8] parameter(1)
  %b = f32[4,8] broadcast(%x), broadcast_dimensions={{1}}
  %s = f32[4,8] add(%b, %y)
  %t = f32[8,4] transpose(%s), permutation={{1,0}}
  %rs = f32[32] reshape(%s)
  ROOT %o = (f32[8,4], f32[32]) tuple(%t, %rs)
}}
)",
                               n, ids(n)),
                   n);
    CHECK(r.text.find(fmt::format("transpose(%")) != std::string::npos);
    CHECK(r.count("all-gather") == 1);  // the reshape's operand, only
    CHECK(r.text.find(fmt::format("sharding={{devices=[{},1]", n)) != std::string::npos);  // the transposed tiles
  }
  // An annotation on the root (out_shardings) that differs from propagation's choice: one all-gather.
  auto r = check(R"(HloModule m

ENTRY %e (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4] parameter(0), sharding={devices=[4,1]0,1,2,3}
  ROOT %n = f32[8,4] negate(%x), sharding={replicated}
}
)",
                 4);
  CHECK(r.count("all-gather") == 1);
}

TEST_CASE("partitioner: a data-parallel MLP gradient has one all-reduce per weight gradient", "[spmd]") {
  // loss = sum(relu(x w1) w2)^2 / 2 with x split on the batch; the gradients of w1 and w2 contract over the batch.
  for (int64_t n : {2, 4, 8}) {
    auto r = check(fmt::format(R"(HloModule mlp

ENTRY %e (x: f32[16,6], w1: f32[6,8], w2: f32[8,3]) -> (f32[6,8], f32[8,3]) {{
  %x = f32[16,6] parameter(0), sharding={{devices=[{0},1]{1}}}
  %w1 = f32[6,8] parameter(1), sharding={{replicated}}
  %w2 = f32[8,3] parameter(2), sharding={{replicated}}
  %h0 = f32[16,8] dot(%x, %w1), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{1}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
  %zero = f32[] constant(0)
  %zb = f32[16,8] broadcast(%zero), broadcast_dimensions={{}}
  %h = f32[16,8] maximum(%h0, %zb)
  %y = f32[16,3] dot(%h, %w2), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{1}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
  %gw2 = f32[8,3] dot(%h, %y), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{0}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
  %dh = f32[16,8] dot(%y, %w2), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{1}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{1}}
  %pos = pred[16,8] compare(%h0, %zb), compare_type=FLOAT, direction=GT
  %dh0 = f32[16,8] select(%pos, %dh, %zb)
  %gw1 = f32[6,8] dot(%x, %dh0), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{0}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
  ROOT %g = (f32[6,8], f32[8,3]) tuple(%gw1, %gw2)
}}
)",
                               n, ids(n)),
                   n);
    CHECK(r.count("all-reduce") == 2);
    CHECK(r.count("all-gather") == 0);
  }
}

TEST_CASE("partitioner: uneven splits pad their last tiles and mask the padding where it would count", "[spmd]") {
  // 6 rows over 4 (tiles of 2: the last holds none) or 8 partitions (tiles of 1: two empty), 5 over 2 and 3 over 2
  // (a half-empty last tile). exp() of the resharded slices puts ones in the padding: a sum, a max and a contraction
  // over the split dimension (both operands padded) must not see them; the uneven result is gathered.
  for (auto [n, rows] : std::vector<std::pair<int64_t, int64_t>>{{4, 6}, {8, 6}, {2, 5}, {2, 3}}) {
    auto r = check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[8,4], w: f32[8,3]) -> (f32[], f32[4,3], f32[{2},4], f32[4], f32[{2},4]) {{
  %x = f32[8,4] parameter(0), sharding={{devices=[{0},1]{1}}}
  %w0 = f32[8,3] parameter(1)
  %ws = f32[{2},3] slice(%w0), start_indices={{0,0}}, limit_indices={{{2},3}}, strides={{1,1}}, sharding={{devices=[{0},1]{1}}}
  %w = f32[{2},3] exponential(%ws)
  %s = f32[{2},4] slice(%x), start_indices={{0,0}}, limit_indices={{{2},4}}, strides={{1,1}}, sharding={{devices=[{0},1]{1}}}
  %ex = f32[{2},4] exponential(%s)
  %neg = f32[{2},4] negate(%ex)
  %zero = f32[] constant(0)
  %ninf = f32[] constant(-inf)
  %sum = f32[] reduce(%neg, %zero), dimensions={{0,1}}, reducer=add
  %d = f32[4,3] dot(%neg, %w), lhs_batch_dimensions={{}}, lhs_contracting_dimensions={{0}}, rhs_batch_dimensions={{}}, rhs_contracting_dimensions={{0}}
  %m = f32[4] reduce(%neg, %ninf), dimensions={{0}}, reducer=max
  %two = f32[] constant(2)
  %tb = f32[{2},4] broadcast(%two), broadcast_dimensions={{}}
  %scaled = f32[{2},4] multiply(%neg, %tb)
  ROOT %o = (f32[], f32[4,3], f32[{2},4], f32[4], f32[{2},4]) tuple(%sum, %d, %neg, %m, %scaled)
}}
)",
                               n, ids(n), rows),
                   n);
    CHECK(r.count("all-reduce") == 3);  // the sum, the contraction, the max: over the split rows
    CHECK(r.text.find("select(") != std::string::npos);  // the masks
    CHECK(r.text.find(" pad(") != std::string::npos);    // the slice resharded to uneven tiles
  }
}

TEST_CASE("partitioner: a shifted slice of a split dimension takes a halo from the next partition", "[spmd]") {
  // x[1:] - x[:-1] over rows split n ways: 15 rows keep the tile size, each partition receives the next one's
  // first row (one collective-permute; x[:-1] is local); the sum over rows masks the last tile's padding.
  for (int64_t n : {2, 4, 8}) {
    auto r = check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[16,4]) -> (f32[15,4], f32[4]) {{
  %x = f32[16,4] parameter(0), sharding={{devices=[{0},1]{1}}}
  %a = f32[15,4] slice(%x), start_indices={{1,0}}, limit_indices={{16,4}}, strides={{1,1}}
  %b = f32[15,4] slice(%x), start_indices={{0,0}}, limit_indices={{15,4}}, strides={{1,1}}
  %d = f32[15,4] subtract(%a, %b)
  %ex = f32[15,4] exponential(%d)
  %zero = f32[] constant(0)
  %s = f32[4] reduce(%ex, %zero), dimensions={{0}}, reducer=add
  ROOT %o = (f32[15,4], f32[4]) tuple(%d, %s)
}}
)",
                               n, ids(n)),
                   n);
    CHECK(r.count("collective-permute") == 1);
    CHECK(r.count("all-reduce") == 1);
    CHECK(r.count("all-gather") == 1);  // the uneven result, gathered at the end
  }
  // Both dimensions of a 2x2 tiling shifted by one: a halo along each.
  auto r = check(R"(HloModule m

ENTRY %e (x: f32[8,8]) -> f32[] {
  %x = f32[8,8] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %a = f32[7,7] slice(%x), start_indices={1,1}, limit_indices={8,8}, strides={1,1}
  %ex = f32[7,7] exponential(%a)
  %zero = f32[] constant(0)
  ROOT %s = f32[] reduce(%ex, %zero), dimensions={0,1}, reducer=add
}
)",
                 4);
  CHECK(r.count("collective-permute") == 2);
  CHECK(r.count("all-gather") == 0);
}

TEST_CASE("partitioner: a convolution over split rows exchanges halos with both neighbours", "[spmd]") {
  // NHWC input, HWIO kernel; `pad` is the padding of H then W (low, high each), `sh` the input's sharding.
  auto conv = [](int64_t kh, const std::string& pad, const std::string& strides, const std::string& sh) {
    int64_t out_h = strides == "1,1" ? 8 : 4;
    return fmt::format(R"(HloModule m

ENTRY %e (x: f32[4,8,6,3], k: f32[{0},3,3,5]) -> f32[4,{3},6,5] {{
  %x = f32[4,8,6,3] parameter(0), sharding={4}
  %k = f32[{0},3,3,5] parameter(1)
  %c = f32[4,{3},6,5] convolution(%x, %k), lhs_spec={{0,3,1,2}}, rhs_spec={{3,2,0,1}}, out_spec={{0,3,1,2}}, window_strides={{{2}}}, padding={{{1}}}, lhs_dilation={{1,1}}, rhs_dilation={{1,1}}, feature_group_count=1, batch_group_count=1
  ROOT %t = f32[4,{3},6,5] tanh(%c)
}}
)",
                       kh, pad, strides, out_h, sh);
  };
  for (int64_t n : {2, 4, 8}) {
    INFO("rows split " << n << " ways");
    auto rows = fmt::format("{{devices=[1,{},1,1]{}}}", n, ids(n));
    // A 3x3 "SAME" convolution: one row from the partition above, one from the one below.
    auto r = check(conv(3, "1,1,1,1", "1,1", rows), n);
    CHECK(r.count("collective-permute") == 2);
    CHECK(r.count("all-gather") == 0);
    CHECK(r.count("all-reduce") == 0);
    // A causal 3-row window (two rows above, none below): one halo.
    auto causal = check(conv(3, "2,0,1,1", "1,1", rows), n);
    CHECK(causal.count("collective-permute") == (n <= 4 ? 1u : 0u));  // tiles of one row cannot lend two
  }
  // 5x5 windows on 2 partitions (tiles of 4 rows lend 2), and batch and rows split on a 2 x 2 mesh.
  auto five = check(conv(5, "2,2,1,1", "1,1", "{devices=[1,2,1,1]0,1}"), 2);
  CHECK(five.count("collective-permute") == 2);
  CHECK(five.count("all-gather") == 0);
  auto mesh = check(conv(3, "1,1,1,1", "1,1", "{devices=[2,2,1,1]0,1,2,3}"), 4);
  CHECK(mesh.count("collective-permute") == 2);
  CHECK(mesh.count("all-gather") == 0);
  // A strided convolution changes the rows' size: the input is all-gathered, and the values are still right.
  auto strided = check(conv(3, "1,1,1,1", "2,1", "{devices=[1,2,1,1]0,1}"), 2);
  CHECK(strided.count("all-gather") >= 1);
  CHECK(strided.count("collective-permute") == 0);
}

TEST_CASE("partitioner: a convolution contracting a split batch sums partial kernels", "[spmd]") {
  // A kernel gradient: x's batch is the contracted feature (lhs_spec f01b), dy's batch the kernel's input feature.
  for (int64_t n : {2, 4, 8}) {
    INFO("batch split " << n << " ways");
    auto r = check(fmt::format(R"(HloModule m

ENTRY %e (x: f32[8,6,6,3], dy: f32[8,6,6,5]) -> f32[3,3,3,5] {{
  %x = f32[8,6,6,3] parameter(0), sharding={{devices=[{0},1,1,1]{1}}}
  %dy = f32[8,6,6,5] parameter(1), sharding={{devices=[{0},1,1,1]{1}}}
  ROOT %c = f32[3,3,3,5] convolution(%x, %dy), lhs_spec={{3,0,1,2}}, rhs_spec={{3,0,1,2}}, out_spec={{2,3,0,1}}, window_strides={{1,1}}, padding={{1,1,1,1}}, lhs_dilation={{1,1}}, rhs_dilation={{1,1}}, feature_group_count=1, batch_group_count=1
}}
)",
                               n, ids(n)),
                   n);
    CHECK(r.count("all-reduce") == 1);
    CHECK(r.count("all-gather") == 0);
  }
}

TEST_CASE("partitioner: what it does not do yet is a CompileError", "[spmd]") {
  auto m = hlo::testing::parse(R"(HloModule m

ENTRY %e (x: f32[6]) -> f32[6] {
  %x = f32[6] parameter(0), sharding={devices=[4]0,1,2,3}
  ROOT %n = f32[6] negate(%x)
}
)");
  CHECK_THROWS_WITH(SpmdPartitioner(4).run(*m), Catch::Contains("does not divide evenly"));
  auto w = hlo::testing::parse(R"(HloModule m

ENTRY %e (x: f32[8]) -> f32[8] {
  %x = f32[8] parameter(0), sharding={devices=[2]0,5}
  ROOT %n = f32[8] negate(%x)
}
)");
  CHECK_THROWS_WITH(SpmdPartitioner(2).run(*w), Catch::Contains("is not over partitions 0..1"));
}
