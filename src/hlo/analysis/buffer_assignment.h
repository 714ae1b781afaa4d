// Liveness, scheduling and buffer assignment for the computations of an HLO module (the entry, loop bodies,
// conditions and branches).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
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
  const Computation* computation = nullptr;
  std::vector<BufferValue> values;
  std::vector<Allocation> allocations;
  /// (allocation index, offset) of each value.
  std::vector<std::pair<int64_t, int64_t>> slice_of;
  std::unordered_map<const Instruction*, int64_t> value_of;  // array-shaped results -> value id
  int64_t argument_size = 0, output_size = 0, alias_size = 0, constant_size = 0;
  int64_t temp_size = 0;             // the temp arena after sharing
  int64_t temp_values_total = 0;     // the sum of all temporaries, as if none shared memory
  int64_t reused_in_place = 0;       // elementwise results written over a dying operand
  /// The value of each leaf of the root (one leaf for an array-shaped root), in order.
  std::vector<int64_t> root_values;
  /// Per root leaf: the parameter whose buffer holds it (donation, a loop carry updated in place, or the
  /// parameter returned as it is), or -1.
  std::vector<int64_t> output_aliases;
  std::string str() const;
};

struct BufferOptions {
  /// Parameters whose buffers a root leaf of the same type may be written over (donation).
  std::vector<int64_t> donated_parameters;
  /// For while bodies: root leaf k may be written over parameter k's buffer (the loop carry updated in place).
  bool carry_in_place = false;
  /// [first, last] schedule positions: every value (but parameters) live somewhere in a span stays live, its
  /// memory unshared, until the span's last position (the CPU backend's row groups run a span's kernels at once).
  std::vector<std::pair<int64_t, int64_t>> keep_live_spans;
};

/// Assigns buffers to the values of m's entry computation in its current instruction order
/// (the schedule). Temporaries whose lifetimes do not overlap share memory; an elementwise result may
/// take a dying operand's buffer; an output may alias a donated parameter of the same type.
BufferAssignment assign_buffers(const Module& m, const std::vector<int64_t>& donated_parameters = {});
/// The same for any computation of a module. A root leaf takes a parameter's buffer (donation, carry_in_place) only
/// when nothing reads the parameter after the leaf is written, or the instruction writing it reads the
/// parameter in place (elementwise, dynamic-update-slice); the dying temporaries feeding it in place follow it there.
BufferAssignment assign_buffers(const Computation& c, const BufferOptions& options = {});

/// The entry's assignment (with donation) followed by those of the computations loops and branches run, as the
/// CPU backend makes them (a while body with carry_in_place): the JITX_DUMP_TO buffer assignment file.
std::string buffer_assignment_report(const Module& m, const std::vector<int64_t>& donated_parameters = {});

/// Peak bytes of live temporaries over the schedule (no packing), for comparing schedules.
int64_t peak_live_bytes(const Computation& c);

/// Reorders the entry computation with a list scheduler that prefers instructions freeing the most
/// memory; keeps the new order only if its peak live bytes are lower. Returns (before, after) peaks.
std::pair<int64_t, int64_t> schedule_for_memory(Module& m);

/// True if inst may write its result (its tuple leaf `leaf`, for a multi-output loop fusion) over operand `k`'s
/// buffer when that operand dies at inst.
bool can_share_operand_buffer(const Instruction& inst, size_t k, int64_t leaf = -1);

}  // namespace jitx::hlo
