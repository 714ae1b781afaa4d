// The program builder (see program_builder.h): buffer assignment, each instruction's step and its operands'
// slices, the scratch that loops and branches need, interpreter fallbacks.
#include "backends/cpu/program_builder.h"

#include <algorithm>
#include <unordered_map>

#include "backends/cpu/kernels.h"
#include "backends/cpu/library.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/row_groups.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"
#include "jitx/config.h"

namespace jitx::runtime::cpu_backend {
using hlo::Instruction;
using hlo::Opcode;

namespace {
int64_t align64(int64_t n) { return (n + 63) / 64 * 64; }

/// Why a computation's values cannot be laid out as flat arrays ("" when they can).
std::string layout_problem(const hlo::Computation& c) {
  for (auto* p : c.parameters)
    if (p->shape.is_tuple) return fmt::format("%{} has a tuple-shaped parameter", c.name);
  for (auto& i : c.instructions)
    if (has_nested_tuple(i->shape)) return fmt::format("%{} in %{} has a nested tuple shape", i->name, c.name);
  return "";
}
}  // namespace

bool has_nested_tuple(const hlo::Shape& s) {
  for (auto& t : s.tuple_shapes)
    if (t.is_tuple) return true;
  return false;
}

size_t ProgramBuilder::build(const hlo::Computation& c, const hlo::BufferOptions& options) {
  auto key = std::make_pair(&c, options.carry_in_place);
  auto it = built_.find(key);
  if (it != built_.end()) return it->second;
  size_t index = exe_.programs.size();
  exe_.programs.push_back(std::make_unique<Program>());
  built_[key] = index;
  build_into(*exe_.programs[index], c, options);  // the Program stays put while its callees are appended
  return index;
}

void ProgramBuilder::build_into(Program& prog, const hlo::Computation& c, const hlo::BufferOptions& options) {
  prog.comp = &c;
  hlo::BufferOptions opts = options;
  if (config().cpu_row_groups)
    opts.keep_live_spans = row_group_spans(c, [](const Instruction& i) {
      // The kernel steps of the chain below.
      if (i.opcode == Opcode::kWhile || i.opcode == Opcode::kConditional) return false;
      if ((i.opcode == Opcode::kDot && cpu::dot_supported(i)) || is_native_update_slice(i)) return false;
      return !cpu::make_library_op(i) && cpu::unsupported_reason(i).empty();
    });
  prog.ba = hlo::assign_buffers(c, opts);
  const auto& ba = prog.ba;
  prog.constant_data.assign(ba.allocations.size(), nullptr);
  prog.output_leaf.assign(ba.allocations.size(), -1);
  for (auto& a : ba.allocations)
    if (a.kind == hlo::Allocation::Kind::kConstant)
      prog.constant_data[a.index] = ba.values[a.values.at(0).first].defining->literal->data();
  for (size_t k = 0; k < ba.root_values.size(); ++k) {
    int64_t a = ba.slice_of[ba.root_values[k]].first;
    if (ba.allocations[a].kind == hlo::Allocation::Kind::kOutput && prog.output_leaf[a] < 0)
      prog.output_leaf[a] = static_cast<int64_t>(k);
  }
  auto slice = [&](int64_t v) {
    auto [alloc, off] = ba.slice_of.at(v);
    return Slice{alloc, off, ba.values[v].size};
  };
  std::unordered_map<const Instruction*, std::vector<Slice>> leaves;
  int64_t scratch = 0;
  for (auto& up : c.instructions) {
    const Instruction& i = *up;
    std::vector<Slice> mine;
    if (i.opcode == Opcode::kTuple || i.opcode == Opcode::kOptimizationBarrier) {
      for (auto* o : i.operands) mine.insert(mine.end(), leaves.at(o).begin(), leaves.at(o).end());
    } else if (i.opcode == Opcode::kGetTupleElement) {
      mine.push_back(leaves.at(i.operand(0)).at(hlo::tuple_index_of(i)));
    } else if (hlo::is_async_collective_done(i.opcode)) {
      mine = leaves.at(i.operand(0));  // the buffer its start fills; the done's step only waits
    } else if (!i.shape.is_tuple) {
      mine.push_back(slice(ba.value_of.at(&i)));
    } else {
      mine.resize(i.shape.tuple_shapes.size());
      for (size_t v = 0; v < ba.values.size(); ++v)
        if (ba.values[v].defining == &i) mine.at(ba.values[v].tuple_index) = slice(static_cast<int64_t>(v));
    }
    leaves[&i] = mine;
    bool alias = i.opcode == Opcode::kReshape || hlo::is_layout_bitcast(i) ||
                 (i.opcode == Opcode::kBitcastConvert && i.shape.byte_size() == i.operand(0)->shape.byte_size());
    if (i.opcode == Opcode::kParameter || i.opcode == Opcode::kConstant || i.opcode == Opcode::kTuple ||
        i.opcode == Opcode::kOptimizationBarrier || i.opcode == Opcode::kGetTupleElement || alias)
      continue;
    Step st;
    st.inst = &i;
    st.outs = mine;
    for (auto* o : i.operands) st.ins.push_back(leaves.at(o));
    std::string why;
    if (i.opcode == Opcode::kWhile && (why = control_flow_problem(i)).empty()) {
      scratch = std::max(scratch, plan_while(st, ba));
      exe_.counts.whiles++;
    } else if (i.opcode == Opcode::kConditional && (why = control_flow_problem(i)).empty()) {
      st.kind = Step::Kind::kConditional;
      int64_t need = 0;
      for (auto* b : i.called) {
        st.programs.push_back(build(*b, {}));
        need = std::max(need, exe_.programs[st.programs.back()]->frame_size);
      }
      scratch = std::max(scratch, need);
      exe_.counts.conditionals++;
    } else if (i.opcode == Opcode::kWhile || i.opcode == Opcode::kConditional) {
      make_fallback(st, why);
    } else if (i.opcode == Opcode::kDot && cpu::dot_supported(i)) {
      st.kind = Step::Kind::kDot;
      st.dot_plan = cpu::plan_run_dot(i);
      exe_.counts.dots++;
    } else if (is_native_update_slice(i)) {
      st.kind = Step::Kind::kUpdateSlice;
      exe_.counts.update_slices++;
    } else if ((st.library = cpu::make_library_op(i))) {
      st.kind = Step::Kind::kLibrary;
      st.kernel = kernel_insts.size();
      for (auto* k : st.library->kernels()) kernel_insts.push_back(k);
      exe_.counts.library++;
    } else if ((why = cpu::unsupported_reason(i)).empty()) {
      st.kind = Step::Kind::kKernel;
      st.kernel = kernel_insts.size();
      st.space = cpu::loop_space(i);
      kernel_insts.push_back(&i);
      exe_.counts.kernels++;
    } else {
      make_fallback(st, why);
    }
    check_layouts(st);
    prog.steps.push_back(std::move(st));
  }
  prog.results = leaves.at(c.root);
  if (config().cpu_row_groups) {
    exe_.counts.row_groups += form_row_groups(prog);
    for (auto& st : prog.steps)
      if (st.kind == Step::Kind::kRowGroup) exe_.counts.row_group_kernels += static_cast<int64_t>(st.group.size());
  }
  prog.scratch_offset = align64(ba.temp_size);
  prog.frame_size = prog.scratch_offset + scratch;
}

/// What LayoutLegalizer guarantees: only kernels write non-row-major results, and only kernels, dots and output
/// fusions read non-row-major operands.
void ProgramBuilder::check_layouts(const Step& st) {
  const Instruction& i = *st.inst;
  if (st.kind == Step::Kind::kKernel) return;
  bool reads_any = st.kind == Step::Kind::kDot || (st.kind == Step::Kind::kLibrary && i.opcode == Opcode::kFusion);
  bool ok = all_row_major(i.shape);
  for (auto* o : i.operands) ok = ok && (reads_any || all_row_major(o->shape));
  JITX_ASSERT(ok, "cpu backend: %{} ({}) would read or write memory in another order than its layout", i.name,
              hlo::opcode_name(i.opcode));
}

std::string ProgramBuilder::control_flow_problem(const Instruction& i) {
  size_t first = i.opcode == Opcode::kConditional ? 1 : 0;
  for (size_t k = first; k < i.operands.size(); ++k)
    if (i.operand(k)->shape.is_tuple) return "a tuple-shaped operand";
  if (has_nested_tuple(i.shape)) return "a nested tuple result";
  for (auto* c : i.called)
    if (auto p = layout_problem(*c); !p.empty()) return p;
  return "";
}

/// The while's programs and its scratch: the condition's and body's frames (they take turns), the predicate,
/// then a second buffer for each carry the body cannot update in place. Returns the scratch size.
int64_t ProgramBuilder::plan_while(Step& st, const hlo::BufferAssignment& ba) {
  const Instruction& i = *st.inst;
  st.kind = Step::Kind::kWhile;
  hlo::BufferOptions body_options;
  body_options.carry_in_place = true;
  st.programs = {build(*i.called[0], {}), build(*i.called[1], body_options)};
  const Program& cond = *exe_.programs[st.programs[0]];
  const Program& body = *exe_.programs[st.programs[1]];
  int64_t off = align64(std::max(cond.frame_size, body.frame_size));
  st.pred_offset = off;
  off += 64;
  size_t n = i.operands.size();
  st.other.assign(n, -1);
  st.invariant.assign(n, 0);
  st.used.assign(n, 0);
  for (size_t k = 0; k < n; ++k) {
    int64_t rv = body.ba.root_values[k];
    st.invariant[k] = body.ba.values[rv].defining == body.comp->parameters[k];
    if (body.ba.output_aliases[k] != static_cast<int64_t>(k)) {
      st.other[k] = off;
      off += align64(st.outs[k].size);
    }
  }
  for (size_t v = 0; v < ba.values.size(); ++v)
    if (ba.values[v].defining == &i)
      st.used[ba.values[v].tuple_index] = ba.values[v].live_out || ba.values[v].end > ba.values[v].start;
  return off;
}

void ProgramBuilder::make_fallback(Step& st, const std::string& why) {
  const Instruction& inst = *st.inst;
  st.kind = Step::Kind::kFallback;
  st.fallback = hlo::add_single_instruction_computation(*exe_.fallbacks, inst);  // for the interpreter
  exe_.counts.fallbacks.push_back(fmt::format("%{} ({}): {}", inst.name, hlo::opcode_name(inst.opcode), why));
}

bool is_small(const CpuExecutable& exe) {
  // Element operations: up to about two milliseconds (a 512^3 GEMM and its epilogue on 2 cores). An enqueued
  // call costs two wake-ups (about 7 us on a 2-core VM, measured with a layer norm and a column sum of 256 x 256),
  // and more when the pool's and the stream's spinning threads hold the cores as the caller is woken: a 512^3
  // product waited for took 1.10 ms enqueued against 0.95 ms inline, 256^3 0.148 against 0.114 ms; and a stream
  // thread woken onto the core where the pool's worker spins shares it until the kernel migrates one (up to about
  // a millisecond: the 512^3 MLP block after an inline call, median 1.41 ms and p90 2.26 ms enqueued, 1.10 and 1.18
  // inline). JAX's CPU client likewise runs computations it does not judge expensive synchronously. Programs with
  // loops are always enqueued.
  constexpr int64_t kMaxWork = 1 << 24;
  if (exe.programs.size() != 1) return false;
  int64_t work = 0;
  for (auto& st : exe.programs[0]->steps) {
    switch (st.kind) {
      case Step::Kind::kKernel:
        work += st.space.work();
        break;
      case Step::Kind::kRowGroup:
        work += row_group_work(st);
        break;
      case Step::Kind::kDot: {
        int64_t k = 1;
        for (auto d : hlo::DotDimensionNumbers::of(*st.inst).lhs_contracting_dims)
          k *= st.inst->operand(0)->shape.dims.at(d);
        // One unit of work is an element operation of a few instructions; a GEMM does 16 multiply-adds per
        // instruction (8 with AVX2), so a 128^3 product (about 20 us on 2 cores) counts as 2^17.
        work += st.inst->shape.num_elements() * k / 16;
        break;
      }
      case Step::Kind::kUpdateSlice:
        work += st.inst->operand(1)->shape.num_elements();
        break;
      case Step::Kind::kLibrary: {
        // A copy (contiguous slice) or a small output fusion (a dot and its epilogue).
        int64_t w = st.library->inline_work();
        if (w < 0) return false;
        work += st.library->is_copy() ? st.inst->shape.num_elements() : w;
        break;
      }
      default:
        return false;
    }
  }
  return work <= kMaxWork;
}

}  // namespace jitx::runtime::cpu_backend
