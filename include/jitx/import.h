// Running programs exported from JAX: import_stablehlo reads StableHLO MLIR text (jax.jit(f).lower(...).as_text())
// into a module that compiles and runs like a jitted function.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jitx/array.h"
#include "jitx/jit.h"
#include "jitx/parse_error.h"

namespace jitx::hlo {
class Module;
}

namespace jitx {

namespace detail {
const std::vector<ShapedArray>& entry_in_avals(const CompiledEntry& e);
const std::vector<ShapedArray>& entry_out_avals(const CompiledEntry& e);
std::shared_ptr<CompiledEntry> make_module_entry(std::shared_ptr<hlo::Module> m, std::vector<ShapedArray> in_avals,
                                                 std::vector<ShapedArray> out_avals);
void compile_module_entry(CompiledEntry& e);
const hlo::Module& entry_module(const CompiledEntry& e);
std::vector<Array> execute_module_entry(const CompiledEntry& e, const std::vector<Array>& args);
}  // namespace detail

/// An imported module compiled for its one signature (the module's); calling it checks each argument's dtype and
/// shape against that signature (TypeError / ShapeError naming the argument).
class ImportedCompiled {
 public:
  explicit ImportedCompiled(std::shared_ptr<detail::CompiledEntry> e) : e_(std::move(e)) {}
  /// The optimised HLO module as text.
  std::string as_text() const { return detail::entry_hlo_text(*e_); }
  std::map<std::string, double> cost_analysis() const { return detail::entry_cost_analysis(*e_); }
  std::string cost_analysis_text() const { return detail::entry_cost_analysis_text(*e_); }
  CompiledMemoryStats memory_analysis() const { return detail::entry_memory_analysis(*e_, {}); }
  std::map<std::string, int64_t> executable_stats() const { return detail::entry_executable_stats(*e_); }
  std::vector<CompilePhase> compile_phases() const { return detail::entry_compile_phases(*e_); }
  const std::vector<ShapedArray>& in_avals() const;
  const std::vector<ShapedArray>& out_avals() const;
  /// Runs the module; returns its results in order.
  std::vector<Array> operator()(const std::vector<Array>& args) const;
  template <class... A>
  std::vector<Array> operator()(const Array& a, const A&... rest) const {
    return (*this)(std::vector<Array>{a, rest...});
  }

 private:
  std::shared_ptr<detail::CompiledEntry> e_;
};

/// A StableHLO module read from text: its signature, its text, and compile().
class ImportedModule {
 public:
  explicit ImportedModule(std::shared_ptr<detail::CompiledEntry> e) : e_(std::move(e)) {}
  /// The module as StableHLO text, as jitx prints it.
  std::string as_text() const;
  /// The module as HLO text (before optimisation).
  std::string as_hlo_text() const;
  const std::vector<ShapedArray>& in_avals() const;
  const std::vector<ShapedArray>& out_avals() const;
  ImportedCompiled compile() const;

 private:
  std::shared_ptr<detail::CompiledEntry> e_;
};

/// Parses StableHLO MLIR text. Malformed text throws ParseError (line, column, what was expected); an op or
/// form jitx does not support throws CompileError naming it.
ImportedModule import_stablehlo(std::string_view text);
/// The same, reading the text from a file (RuntimeError when it cannot be read).
ImportedModule import_stablehlo_file(const std::string& path);

}  // namespace jitx
