// The StableHLO printer's core: value naming as MLIR's printer does it, the pretty and generic op forms, and
// regions; the ops themselves print in stablehlo_ops.cpp (plain), stablehlo_regions.cpp (reductions, control flow)
// and stablehlo_indexed_ops.cpp (dimension numbers, windows, sort).
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"
#include "lowering/lower.h"

namespace jitx::detail {
using hlo::Instruction;
using hlo::Opcode;

// --- regions, numbered as MLIR numbers a nested region: values after the body's, arguments after main's ---
struct RegionNames {
  int64_t value, arg, conflict;
  std::set<std::string> used;  // the names of the enclosing body are visible, so taken
  std::string v() { return fmt::format("%{}", value++); }
  std::string a() { return fmt::format("%arg{}", arg++); }
  /// A named value such as a constant (`%cst_3`).
  std::string named(const std::string& base) {
    std::string n = base;
    while (used.count(n)) n = fmt::format("{}_{}", base, conflict++);
    used.insert(n);
    return "%" + n;
  }
};

class StablehloPrinter {
 public:
  explicit StablehloPrinter(const hlo::Module& m) : m_(m) {}
  /// The whole module.
  std::string print();
  /// The entry parameters' and results' extra attributes, the module's partitions and declarations.
  void set_attrs(StablehloAttrs attrs) { attrs_ = std::move(attrs); }

  // --- for the op printers ---
  const std::string& name(const Instruction* i) { return names_.at(i); }
  /// Names i with another value's name (a tuple element, a constant).
  void set_name(const Instruction& i, std::string n) { names_[&i] = std::move(n); }
  /// A named value (`%cst`, `%c_0`...), uniqued as MLIR's printer does: one conflict counter for all names.
  std::string fresh_named(const std::string& base);
  /// Names the result(s) of i: `%n`, or `%n:k` for a k-result op (used as `%n#j`).
  std::string define(const Instruction& i);
  std::string operand_list(const Instruction& i);
  /// `%n = op <rest>` in the pretty form.
  void pretty(std::string& out, const Instruction& i, std::string_view op, const std::string& rest);
  /// `%n = "op"(operands) <{properties}> (region) : (types) -> result` (the generic form, always valid MLIR).
  void generic(std::string& out, const Instruction& i, std::string_view op, const std::string& attrs,
               const std::string& region = "");
  /// Each region of each op starts from the same counters: those at the end of the function body.
  RegionNames region_names() const {
    return RegionNames{region_value_base_, num_args_, region_conflict_base_, body_names_};
  }
  /// The body of region `rc` (its instructions and `stablehlo.return`), indented one level deeper than the op.
  /// Parameters are named from `param_names`, or `%iterArg...` when it is empty; *arg_names gets the names used.
  std::string print_region(const hlo::Computation& rc, const std::vector<std::string>& param_names,
                           std::vector<std::string>* arg_names = nullptr);
  /// Appends i's line(s) to out.
  void print_inst(std::string& out, const Instruction& i);

 private:
  // --- control-flow regions (while, case, if): MLIR numbers a region's own values first, from the counters
  // at the end of its parent's, and its nested regions after them; sibling regions restart from the same counters.
  struct Counters {
    std::set<std::string> used;
    int64_t next, next_conflict, num_args;
  };
  struct Bases {
    int64_t value, conflict;
    std::set<std::string> names;
  };
  Counters counters() const { return Counters{used_, next_, next_conflict_, num_args_}; }
  void set_counters(const Counters& c);
  Bases bases() const { return Bases{region_value_base_, region_conflict_base_, body_names_}; }
  void set_bases(const Bases& b);
  void reset();
  void print_body(const hlo::Computation& c, std::string& out);
  std::string fresh() { return fmt::format("%{}", next_++); }

  const hlo::Module& m_;
  StablehloAttrs attrs_;
  std::unordered_map<const Instruction*, std::string> names_;
  std::set<std::string> used_;
  int64_t next_ = 0, next_conflict_ = 0;
  int64_t num_args_ = 0;
  int64_t region_value_base_ = 0, region_conflict_base_ = 0;
  std::set<std::string> body_names_;
};

// --- the op printers, by family ---
/// Constants, tuple elements, elementwise and structural ops; the generic form for the rest.
void print_plain_op(StablehloPrinter& p, std::string& out, const Instruction& i, std::string_view op);
/// reduce_window, gather, scatter, sort, top_k, convolution.
void print_indexed_op(StablehloPrinter& p, std::string& out, const Instruction& i, std::string_view op);
void print_reduce(StablehloPrinter& p, std::string& out, const Instruction& i);
/// The collectives (all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute, partition_id) and
/// shard_map's sharding custom-calls, as JAX prints them; false for any other instruction.
bool print_collective_op(StablehloPrinter& p, std::string& out, const Instruction& i);
void print_while(StablehloPrinter& p, std::string& out, const Instruction& i);
void print_conditional(StablehloPrinter& p, std::string& out, const Instruction& i);
/// `({ ^bb0(...): <one binary op> stablehlo.return })` for reduce_window.
std::string binary_region(StablehloPrinter& p, hlo::Reducer r, DType d);
/// The update region of a scatter: "replace" returns the update, the other kinds combine with one binary op.
std::string scatter_region(StablehloPrinter& p, hlo::Reducer r, DType d);
/// The comparator of an ascending sort on the first num_keys operands (see stablehlo_regions.cpp).
std::string sort_region(const std::vector<DType>& types, int64_t num_keys, const std::string& ind);

}  // namespace jitx::detail
