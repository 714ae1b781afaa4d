// The attributes of collective instructions (all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute) and the `sharding` attribute of any instruction.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/params.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/sharding.h"

namespace jitx::hlo {

/// The synchronous collectives and their asynchronous starts (whose attributes and operands are the same).
bool is_collective(Opcode op);
bool is_async_collective_start(Opcode op);
bool is_async_collective_done(Opcode op);
/// all-reduce-start and all-reduce-done -> all-reduce (and so on); any other opcode is returned as it is.
Opcode sync_collective_of(Opcode op);
/// all-reduce -> all-reduce-start / all-reduce-done (op must be a synchronous collective).
Opcode async_start_of(Opcode op);
Opcode async_done_of(Opcode op);
/// Whether a collective (or its start) runs on its operand's and result's buffers directly: one array operand, and
/// the chunks it exchanges contiguous (every dimension before the exchanged one has size 1). Others go through
/// the interpreter's copies.
bool collective_runs_on_buffers(const Instruction& inst);

/// Attributes whose values are XLA's braced text (`sharding={devices=[2,1]0,1}`, `replica_groups={{0,1},{2,3}}`,
/// `source_target_pairs={{0,1},{1,0}}`): stored as strings, printed and parsed without quotes.
bool is_braced_text_attribute(std::string_view key);

/// A collective's attributes: its groups of partition ids (empty: one group of every partition; a group's order is
/// the order of its members' chunks), the dimension gathered, scattered or exchanged (all-gather, reduce-scatter,
/// all-to-all), the (source, target) pairs of a collective-permute, and channel_id (XLA's; printed, not used).
struct CollectiveConfig {
  std::vector<std::vector<int64_t>> replica_groups;
  int64_t dimension = -1;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  int64_t channel_id = 1;

  /// Reads and validates (CompileError naming the instruction: a partition twice, groups of different sizes, a
  /// dimension out of range).
  static CollectiveConfig of(const Instruction& inst);
  void set_on(detail::Params& attrs) const;
  /// The group holding `partition` with `partition`'s position in it, over `num_partitions` partitions.
  std::pair<std::vector<int64_t>, int64_t> group_of(int64_t partition, int64_t num_partitions) const;
};

/// "{{0,1},{2,3}}" and back.
std::string groups_str(const std::vector<std::vector<int64_t>>& groups);
std::vector<std::vector<int64_t>> parse_groups(std::string_view text);

/// An instruction's `sharding` attribute, if it has one.
std::optional<HloSharding> sharding_of(const Instruction& inst);
void set_sharding(Instruction& inst, const HloSharding& s);

}  // namespace jitx::hlo
