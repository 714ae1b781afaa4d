// The CPU backend's program builder: the executable's programs, one per computation, each instruction made a
// step (an emitted kernel, a dot, a library op, an in-place update, a loop or branch running other programs, or an
// interpreter fallback with the reason), and every native kernel of the module collected for one compile.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_executable.h"

namespace jitx::runtime::cpu_backend {

/// Builds the executable's programs, one per computation (a loop body is built once), collecting every native
/// kernel of the module for one compile.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(CpuExecutable& exe) : exe_(exe) {
    exe_.fallbacks = std::make_unique<hlo::Module>(exe.module->name + ".fallbacks");
  }
  std::vector<const hlo::Instruction*> kernel_insts;

  size_t build(const hlo::Computation& c, const hlo::BufferOptions& options);

 private:
  void build_into(Program& prog, const hlo::Computation& c, const hlo::BufferOptions& options);
  static void check_layouts(const Step& st);
  static std::string control_flow_problem(const hlo::Instruction& i);
  int64_t plan_while(Step& st, const hlo::BufferAssignment& ba);
  void make_fallback(Step& st, const std::string& why);

  CpuExecutable& exe_;
  std::map<std::pair<const hlo::Computation*, bool>, size_t> built_;
};

/// Whether a tuple shape has a tuple among its elements (the runtime lays out flat tuples of arrays only).
bool has_nested_tuple(const hlo::Shape& s);

/// Some tens of microseconds of work at most: one program without loops, branches or interpreter fallbacks,
/// touching few elements. Such an executable may run inline on the calling thread (Stream::try_run_inline).
bool is_small(const CpuExecutable& exe);

}  // namespace jitx::runtime::cpu_backend
