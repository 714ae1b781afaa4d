// Helpers for the tests that run HLO modules on the CPU backend and on the interpreter (the oracle) directly, below
// jit: one test device, the two backends, and running a module on Literals.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/literal.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "runtime/runtime.h"

namespace jitx::testing {

inline runtime::Device& test_device() {
  static runtime::Device* d = new runtime::Device(0, "backend-test");  // lives until exit
  return *d;
}
inline runtime::Backend& native() {
  static auto b = runtime::make_cpu_backend();
  return *b;
}
inline runtime::Backend& interp() {
  static auto b = runtime::make_interpreter_backend();
  return *b;
}

/// Compiles m on b and runs it on args (one Literal per entry parameter), returning the result leaves.
inline std::vector<detail::Literal> run(runtime::Backend& b, std::shared_ptr<const hlo::Module> m,
                                        const std::vector<detail::Literal>& args) {
  auto exe = b.compile(m);
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;
  for (auto& a : args) bufs.push_back(runtime::Buffer::from_literal(a, &test_device()));
  auto outs = exe->execute(bufs, &test_device());
  std::vector<detail::Literal> r;
  for (auto& o : outs) r.push_back(o->literal());
  return r;
}
/// The same for HLO text (parsed and verified first).
inline std::vector<detail::Literal> run(runtime::Backend& b, const std::string& text,
                                        const std::vector<detail::Literal>& args) {
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  return run(b, m, args);
}

/// "f32[2,3]"-style shape text.
inline std::string shape_text(DType d, const std::vector<int64_t>& dims) {
  std::string s = std::string(hlo::hlo_dtype_name(d)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace jitx::testing
