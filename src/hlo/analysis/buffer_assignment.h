// Liveness, scheduling and buffer assignment for an HLO module's entry computation.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hlo/ir/hlo.h"

namespace jitx::hlo {

/// One array value: an instruction's result, or one element of a tuple-shaped result.
struct BufferValue {
  const Instruction* defining = nullptr;
  int64_t tuple_index = -1;  // -1 for array-shaped results
  int64_t size = 0;
  int64_t start = 0;  // schedule position where it is defined (-1 for parameters)
  int64_t end = 0;    // last position where it is used (INT64_MAX when live out)
  bool live_out = false;
};

struct Allocation {
  enum class Kind { kParameter, kConstant, kOutput, kTemp };
  int64_t index = 0;
  Kind kind = Kind::kTemp;
  int64_t size = 0;
  int64_t parameter_number = -1;  // for parameter allocations (and outputs aliasing a donated one)
  std::vector<std::pair<int64_t, int64_t>> values;  // (value id, offset)
};

struct BufferAssignment {
  std::vector<BufferValue> values;
  std::vector<Allocation> allocations;
  /// (allocation index, offset) of each value.
  std::vector<std::pair<int64_t, int64_t>> slice_of;
  std::unordered_map<const Instruction*, int64_t> value_of;  // array-shaped results -> value id
  int64_t argument_size = 0, output_size = 0, alias_size = 0, constant_size = 0;
  int64_t temp_size = 0;             // the temp arena after sharing
  int64_t temp_values_total = 0;     // the sum of all temporaries, as if none shared memory
  int64_t reused_in_place = 0;       // elementwise results written over a dying operand
  std::string str() const;
};

/// Assigns buffers to the values of m's entry computation in its current instruction order
/// (the schedule). Temporaries whose lifetimes do not overlap share memory; an elementwise result may
/// take a dying operand's buffer; an output may alias a donated parameter of the same type.
BufferAssignment assign_buffers(const Module& m, const std::vector<int64_t>& donated_parameters = {});

/// Peak bytes of live temporaries over the schedule (no packing), for comparing schedules.
int64_t peak_live_bytes(const Computation& c);

/// Reorders the entry computation with a list scheduler that prefers instructions freeing the most
/// memory; keeps the new order only if its peak live bytes are lower. Returns (before, after) peaks.
std::pair<int64_t, int64_t> schedule_for_memory(Module& m);

/// True if inst may write its result over operand `k`'s buffer when that operand dies at inst.
bool can_share_operand_buffer(const Instruction& inst, size_t k);

}  // namespace jitx::hlo
