// The StableHLO printer's collectives (shard_map's SPMD form), in the generic forms JAX 0.10 prints:
// `"stablehlo.all_reduce"(%x) <{channel_handle = ..., replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
// use_global_device_ids}> ({reducer}) : (T) -> T`, and the `@Sharding` / `@SPMDFullToShardShape` /
// `@SPMDShardToFullShape` custom-calls of a manual region.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"
#include "hlo/ir/custom_call.h"
#include "lowering/stablehlo_format.h"
#include "lowering/stablehlo_printer.h"

namespace jitx::detail {

namespace {

std::string dense_pairs(const std::vector<std::vector<int64_t>>& rows) {
  std::vector<std::string> r;
  size_t width = rows.empty() ? 0 : rows[0].size();
  for (auto& row : rows) r.push_back(fmt::format("[{}]", fmt::join(row, ", ")));
  return fmt::format("dense<[{}]> : tensor<{}x{}xi64>", fmt::join(r, ", "), rows.size(), width);
}

std::string groups_attr(const hlo::CollectiveConfig& c) { return "replica_groups = " + dense_pairs(c.replica_groups); }

const char* const kChannel = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>";

}  // namespace

bool print_collective_op(StablehloPrinter& p, std::string& out, const Instruction& i) {
  using hlo::Opcode;
  switch (i.opcode) {
    case Opcode::kAllReduce: {
      auto c = hlo::CollectiveConfig::of(i);
      p.generic(out, i, "stablehlo.all_reduce", fmt::format("{}, {}, use_global_device_ids", kChannel, groups_attr(c)),
                binary_region(p, hlo::reducer_of(i), i.shape.dtype));
      return true;
    }
    case Opcode::kAllGather: {
      auto c = hlo::CollectiveConfig::of(i);
      p.generic(out, i, "stablehlo.all_gather",
                fmt::format("all_gather_dim = {} : i64, {}, {}, use_global_device_ids", c.dimension, kChannel,
                            groups_attr(c)));
      return true;
    }
    case Opcode::kReduceScatter: {
      auto c = hlo::CollectiveConfig::of(i);
      p.generic(out, i, "stablehlo.reduce_scatter",
                fmt::format("{}, {}, scatter_dimension = {} : i64, use_global_device_ids", kChannel, groups_attr(c),
                            c.dimension),
                binary_region(p, hlo::reducer_of(i), i.shape.dtype));
      return true;
    }
    case Opcode::kAllToAll: {
      auto c = hlo::CollectiveConfig::of(i);
      size_t n = c.replica_groups.empty() ? 0 : c.replica_groups[0].size();
      p.generic(out, i, "stablehlo.all_to_all",
                fmt::format("{}, concat_dimension = {} : i64, {}, split_count = {} : i64, split_dimension = {} : i64",
                            kChannel, c.dimension, groups_attr(c), n, c.dimension));
      return true;
    }
    case Opcode::kCollectivePermute: {
      auto c = hlo::CollectiveConfig::of(i);
      std::vector<std::vector<int64_t>> pairs;
      for (auto [s, t] : c.source_target_pairs) pairs.push_back({s, t});
      p.generic(out, i, "stablehlo.collective_permute",
                fmt::format("{}, source_target_pairs = {}", kChannel, dense_pairs(pairs)));
      return true;
    }
    case Opcode::kPartitionId:
      p.pretty(out, i, "stablehlo.partition_id", ": " + i.shape.mlir());
      return true;
    case Opcode::kCustomCall: {
      std::string t = hlo::custom_call_target(i);
      if (t != "Sharding" && t != "SPMDFullToShardShape" && t != "SPMDShardToFullShape") return false;
      p.pretty(out, i, "stablehlo.custom_call",
               fmt::format("@{}({}) {{mhlo.sharding = \"{}\"}} : ({}) -> {}", t, p.operand_list(i),
                           i.attrs.get_str("mhlo.sharding"), i.operand(0)->shape.mlir(), i.shape.mlir()));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace jitx::detail
